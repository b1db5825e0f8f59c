"""What one function's own text says about a value: an int, a tensor, or nothing.

``required-keyword`` needs to know whether ``repeats`` is a Python int (no
device sync) or a device tensor (a sync to read back the output length). A
static check of one file cannot run the code, so this answers from local
evidence only, in four verdicts:

* ``INT``: provably a host scalar -- a literal, ``len``/``int``/``round``/
  ``min``/``max`` of ints, ``.item()``, ``.numel()``, ``.dim()``,
  ``.size(i)``, ``.shape[i]``, arithmetic over those, a parameter annotated
  ``int`` (or defaulting to an int literal), an item of one annotated as a
  container of ints (``block_size: list[int]``, ``shape: tuple[int, int]``,
  ``list[int] | None``: every member of a union),
  an item of an attribute whose declared type says so
  (``self.window: tuple[int, int] | None``, in ``__init__`` or the class
  body: a declaration holds for every value the attribute is given),
  an item of ``.tolist()``, a loop variable over ``range`` or an
  ``enumerate`` index, a module constant, an attribute every assignment in
  the class sets to an int (a ``None`` placeholder, ``grid = None`` before
  the branch that binds the value, counts for nothing);
* ``HOST``: a tensor the function built on the host -- ``torch.tensor``/
  ``arange``/``zeros``... without ``device=`` (on the default device: the
  host, unless the program moved it with ``torch.set_default_device`` or a
  ``with torch.device(...)`` block, which this reading does not follow --
  vLLM's loader, for one, builds a model under such a block; the per-step
  code that calls ``repeat_interleave`` runs outside it), anything told
  the CPU as
  its device (``device="cpu"``, ``torch.device("cpu")``, ``.to("cpu")``:
  a literal, not a variable that may name one), ``.cpu()``, a name spelled
  ``*_cpu`` (the engines' convention for the host copy of a batch's
  lengths), and what dtype casts and arithmetic make of those, what a torch
  function makes of host operands alone (``torch.minimum(a_cpu, b_cpu)``:
  torch computes on its operands' device) and a twin of one
  (``torch.zeros_like(a_cpu)``, ``a_cpu.new_tensor(data)``). Reading its
  values back costs no device sync;
* ``TENSOR``: evidence of a device tensor -- a ``Tensor`` or other non-int
  annotation (of a container's items too: ``dict[str, Tensor]``), a
  ``torch.*`` call with an operand not on the host, a twin built like one
  (``x.new_tensor(...)``), a tensor method (``.sum()``, ``.to()``,
  ``.long()`` ...), an index with a slice in a tuple (``grid[:, 0]``: lists
  reject it), and a value named as per-row lengths or counts (``seq_lens``,
  ``lengths``, ``counts``) that nothing else decides: ``repeat_interleave``
  takes an int or a tensor, and a collection of lengths is not an int;
* ``UNKNOWN``: no evidence either way -- an unannotated parameter and what
  is read off it, an ``Any`` annotation and an item of a container of
  anything (``opts: dict[str, Any]``, a bare ``list``: the annotation
  describes the container, its items are declared by its type arguments), an
  attribute of another object (a config's ``topk`` and a batch's
  ``seq_lens`` look the same), an unknown function's result, a name
  imported from elsewhere. The rule stays quiet on these rather than guess:
  a rule that flags every ``self.num_draft_tokens`` is a rule users turn off.
"""

from __future__ import annotations

import ast
from functools import partial

from .imports import bound_name
from .int_evidence import (
    DEVICE_PRESERVING,
    HOST,
    HOST_CONSTRUCTORS,
    INT,
    INT_ATTRIBUTES,
    INT_CALLS,
    INT_METHODS,
    LIKE_CONSTRUCTORS,
    NEW_METHODS,
    SIZED_METHODS,
    TENSOR,
    TENSOR_METHODS,
    UNKNOWN,
    annotation_verdict,
    combine,
    has_device,
    is_size_call,
    item_annotation_verdict,
    moves,
    names_host,
    names_lengths,
    on_host,
    worst,
)
from .memo import StatementMemo
from .names import dotted
from .scopes import Element, Part, Scope, function_scope, self_class

# The spellings of torch (and its functional module) a call's dotted name starts with.
_TORCH_ROOTS = frozenset({"torch", "th", "F"})
# The fields that hold statements, an except clause's or a case's included.
_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


class IntInference:
    """Verdicts for expressions of one module, memoised per binding.

    The index is built per top-level statement (``_statement_index``) and each
    statement's share is kept for the next tree that still holds the same
    statement object (``checkers.analysis.memo.StatementMemo``): the language
    server's spliced trees share every statement a keystroke did not touch,
    so a keystroke indexes only the statement it changed.

    Within a statement, lazily: its own code is indexed at once, and a
    function it defines directly (a top-level function, a method of a
    top-level class) -- with all that function nests -- when ``scope_of``
    first meets a node in its lines. A verdict reads the scope chain of the
    function it is asked in (indexed together), the module's bindings (made
    by module-level code alone) and, through ``scope_of``, the methods of a
    class whose attribute it follows: what an unindexed function binds is
    never read. Imports, which a verdict reads module-wide, are collected at
    once from each deferred function's statements. On vLLM a file holding a
    ``repeat_interleave`` holds it in a few functions: the eager index was
    nearly all of AC701's cost in a cold run.
    """

    def __init__(self, tree: ast.Module, *, lazy: bool = True, source=None) -> None:
        self.tree = tree
        self._source = source
        self.imported: set[str] = set()
        self.module = Scope(tree, None, None, {}, None)
        self._busy: set[tuple[int, str]] = set()
        # Per top-level statement: node -> the function scope it is in (a node
        # in none is the module's, the default of scope_of).
        self._tables: list[dict[ast.AST, Scope]] = []
        # Pieces with functions not indexed yet (they index into their table).
        self._pending: list[IntInference] = []
        bindings = self.module.bindings
        index = _statement_index if source is None else partial(_statement_index, source=source)
        for part in _PIECES.each(tree, index):
            for scope in part._roots:
                scope.parent = self.module  # this tree's module, whichever tree indexed it
            for name, entries in part.module.bindings.items():
                bindings.setdefault(name, []).extend(entries)
            self.imported |= part.imported
            if not lazy:
                part._ensure_all()
            if part.scopes or part._deferred:
                self._tables.append(part.scopes)
            if part._deferred:
                self._pending.append(part)

    def _index(self, node: ast.AST, scope: Scope, klass: ast.ClassDef | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                inner = function_scope(child, scope, klass)
                if scope is self.module:
                    self._roots.append(inner)
                self.scopes[child] = inner
                if scope is self.module and not isinstance(child, ast.Lambda):
                    self._deferred[child] = inner  # indexed when first asked about
                    continue
                self._index(child, inner, None)
                continue
            if isinstance(child, ast.ClassDef):
                self._index(child, scope, child)
                continue
            self._collect(child, scope)
            if scope is not self.module:
                self.scopes[child] = scope
            self._index(child, scope, klass)

    def _bind(self, scope: Scope, target: ast.AST, value: ast.AST | None) -> None:
        table = scope.bindings
        if isinstance(target, ast.Name):
            table.setdefault(target.id, []).append((target, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = None
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
                values = value.elts
            for i, t in enumerate(target.elts):
                self._bind(scope, t, values[i] if values is not None else Part(value, i))

    def _collect(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, ast.Assign):
            for t in node.targets:
                self._bind(scope, t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            value = (
                node.value
                if isinstance(node, ast.AnnAssign)
                else ast.BinOp(node.target, node.op, node.value)
            )
            if isinstance(node, ast.AnnAssign) and annotation_verdict(node.annotation) == INT:
                value = ast.Constant(0)
            self._bind(scope, node.target, value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self._bind(scope, node.target, Element(node.iter))
        elif isinstance(node, ast.NamedExpr):
            self._bind(scope, node.target, node.value)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                self.imported.add(bound_name(alias))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind(scope, item.optional_vars, None)

    def scope_of(self, node: ast.AST) -> Scope:
        for table in self._tables:
            found = table.get(node)
            if found is not None:
                return found
        line = getattr(node, "lineno", None)
        if line is not None and self._pending:
            indexed = False
            for part in self._pending:
                indexed = part._ensure_at(line) or indexed
            self._pending = [part for part in self._pending if part._deferred]
            if indexed:
                return self.scope_of(node)
        return self.module

    # -- a piece's deferred functions ----------------------------------

    def _imports_of(self, func: ast.AST) -> None:
        """The names a deferred function imports, from a walk of its statements alone --
        of a function whose text spells ``import`` (``source``, when known): no other holds one."""
        if self._source is not None and not self._source.spells(func, "import"):
            return
        stack = list(func.body)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Import or kind is ast.ImportFrom:
                for alias in node.names:
                    self.imported.add(bound_name(alias))
                continue
            for name in _BLOCK_FIELDS:
                stack.extend(getattr(node, name, ()))

    def _ensure_at(self, line: int) -> bool:
        """Index the deferred functions whose lines hold ``line``; whether any was."""
        found = False
        for func, inner in list(self._deferred.items()):
            first = min([func.lineno, *(d.lineno for d in func.decorator_list)])
            if first <= line <= (func.end_lineno or func.lineno):
                del self._deferred[func]
                self._index(func, inner, None)
                found = True
        return found

    def _ensure_all(self) -> None:
        for func, inner in list(self._deferred.items()):
            del self._deferred[func]
            self._index(func, inner, None)

    # -- verdicts ------------------------------------------------------

    def verdict(self, expr: ast.AST | None, scope: Scope) -> str:
        found = self._verdict(expr, scope)
        if found == UNKNOWN and expr is not None and names_lengths(expr):
            return TENSOR  # `forward_batch.extend_seq_lens`, `lengths`: per-row values
        return found

    def _verdict(self, expr: ast.AST | None, scope: Scope) -> str:
        if expr is None:
            return TENSOR  # bound by something opaque (a `with`, an unpacked call)
        if isinstance(expr, Element):
            return self._element(expr.iterable, scope)
        if isinstance(expr, Part):
            return self._part(expr, scope)
        if isinstance(expr, ast.Constant):
            if expr.value is None:
                # `grid_thw = None` before the branch that binds the real value: a
                # placeholder, which says nothing about what the value will be.
                return INT
            return INT if isinstance(expr.value, (int, float, bool)) else TENSOR
        if isinstance(expr, ast.Name):
            return self.name(expr.id, scope)
        if isinstance(expr, ast.UnaryOp):
            return self.verdict(expr.operand, scope)
        if isinstance(expr, ast.BinOp):
            return combine(self.verdict(expr.left, scope), self.verdict(expr.right, scope))
        if isinstance(expr, ast.IfExp):
            return combine(self.verdict(expr.body, scope), self.verdict(expr.orelse, scope))
        if isinstance(expr, ast.Attribute):
            return self._attribute(expr, scope)
        if isinstance(expr, ast.Subscript):
            return self._subscript(expr, scope)
        if isinstance(expr, ast.Call):
            return self._call(expr, scope)
        if isinstance(expr, ast.BoolOp):
            # `spec.topk or 0`: whichever operand the value is.
            return worst({self.verdict(v, scope) for v in expr.values})
        if isinstance(expr, ast.Compare):
            return INT  # a bool
        return UNKNOWN

    def _call(self, call: ast.Call, scope: Scope) -> str:
        name = dotted(call.func)
        if name in INT_CALLS:
            return INT
        root = name.split(".")[0]  # "" for a call of no dotted name
        method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
        if on_host(call) and (root in _TORCH_ROOTS or method == "to" or method in NEW_METHODS):
            return HOST  # `torch.tensor(data, device="cpu")`, `.to("cpu")`: told the host
        if (
            name.startswith("torch.")
            and name.rpartition(".")[2] in HOST_CONSTRUCTORS
            and not has_device(call)
        ):
            return HOST  # built from host data on the default device
        if isinstance(call.func, ast.Attribute):
            method = call.func.attr
            if method in ("cpu", "numpy"):
                return HOST
            if method in NEW_METHODS:
                return self._twin(call.func.value, call, scope)  # `lens.new_tensor(data)`
            if method == "to" or method in DEVICE_PRESERVING:
                base = self.verdict(call.func.value, scope)
                if base == HOST and not (method == "to" and moves(call)):
                    return HOST
        if name in ("min", "max") and call.args:
            verdicts = {self.verdict(a, scope) for a in call.args}
            if len(call.args) == 1:
                return self._element(call.args[0], scope)
            return INT if INT in verdicts and TENSOR not in verdicts else worst(verdicts)
        if isinstance(call.func, ast.Attribute):
            method = call.func.attr
            if method in INT_METHODS:
                return INT
            if method in SIZED_METHODS and call.args:
                return INT
            if method in TENSOR_METHODS:
                return TENSOR
        if root in _TORCH_ROOTS:
            if name.rpartition(".")[2] in LIKE_CONSTRUCTORS and call.args:
                return self._twin(call.args[0], call, scope)  # `torch.zeros_like(lens)`
            return self._operands_device(call, scope)
        # An unknown function's result: a helper returning a count looks like
        # one returning lengths; the name the caller gives it may decide.
        return UNKNOWN

    def _twin(self, base: ast.AST, call: ast.Call, scope: Scope) -> str:
        """A tensor built like ``base`` (``torch.zeros_like(base)``, ``base.new_tensor(...)``):
        on ``base``'s device unless the call names another -- a host tensor's twin
        is a host tensor, anything else's a tensor."""
        if not has_device(call) and self.verdict(base, scope) == HOST:
            return HOST
        return TENSOR

    def _operands_device(self, call: ast.Call, scope: Scope) -> str:
        """A torch function's result is on its tensor operands' device
        (``torch.minimum(a_cpu, b_cpu)``, ``torch.cat([a_cpu, b_cpu])``): HOST when
        every operand is a host tensor or a number and the call names no device;
        a tensor otherwise."""
        if has_device(call):
            return TENSOR
        operands = [
            *call.args,
            *(k.value for k in call.keywords if k.arg not in (None, "dtype", "out")),
        ]
        verdicts = set()
        for operand in operands:
            if isinstance(operand, (ast.List, ast.Tuple)):
                verdicts |= {self.verdict(e, scope) for e in operand.elts}
            else:
                verdicts.add(self.verdict(operand, scope))
        if HOST in verdicts and verdicts <= {HOST, INT}:
            return HOST
        return TENSOR

    def _attribute(self, expr: ast.Attribute, scope: Scope) -> str:
        if expr.attr in INT_ATTRIBUTES:
            return INT
        if names_host(expr):
            return HOST
        base = expr.value
        if isinstance(base, ast.Name):
            owner = self_class(base.id, scope)
            if owner is not None:
                return self._class_attr(owner, expr.attr)
            if self._is_unannotated_param(base.id, scope) or base.id in self.imported:
                return UNKNOWN
        # An attribute of another object: engines keep per-batch tensors there
        # (`attn_metadata.context_lens`) and configuration too (`server_args.topk`);
        # the attribute's name (see `verdict`) is what tells them apart.
        return UNKNOWN

    def _subscript(self, expr: ast.Subscript, scope: Scope) -> str:
        base = expr.value
        # An item of a shape is an int, and a slice of one is a Size of ints: its
        # items are ints too (`blocksize = t.size()[1:3]; blocksize[0]`).
        if isinstance(base, ast.Attribute) and base.attr == "shape":
            return INT
        if is_size_call(base):
            return INT
        index = expr.slice
        if isinstance(index, ast.Tuple) and any(
            isinstance(e, ast.Slice) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
            for e in index.elts
        ):
            # `grid[:, 0]`: a multi-dimensional index, which lists and tuples reject.
            base_verdict = self.verdict(base, scope)
            return HOST if base_verdict == HOST else TENSOR
        return self._element(base, scope)

    def _element(self, iterable: ast.AST, scope: Scope) -> str:
        """The verdict for an item of ``iterable`` (a loop over it, an index into it)."""
        if isinstance(iterable, ast.Call):
            name = dotted(iterable.func)
            if name == "range":
                return INT
            if isinstance(iterable.func, ast.Attribute) and iterable.func.attr in (
                "size",
                "tolist",
            ):
                return INT  # a Size's items; `.tolist()`'s Python numbers
        if isinstance(iterable, ast.Attribute) and iterable.attr == "shape":
            return INT
        if isinstance(iterable, ast.Subscript) and isinstance(iterable.slice, ast.Slice):
            return self._element(iterable.value, scope)  # a slice's items are the base's
        if isinstance(iterable, (ast.Tuple, ast.List)) and iterable.elts:
            return worst({self.verdict(e, scope) for e in iterable.elts})
        items = self._items(iterable, scope)
        if items is not None:
            # `block_n, block_k = block_size` with `block_size: list[int]`: INT;
            # `opts["n"]` with `opts: dict[str, Any]`: no evidence, whatever a
            # dict itself is.
            return items
        verdict = self.verdict(iterable, scope)
        if verdict == INT:
            return INT  # an item of an int-typed value (a Size held in a name)
        return verdict

    def _part(self, part: Part, scope: Scope) -> str:
        value = part.value
        if isinstance(value, ast.Call) and dotted(value.func) == "enumerate" and part.index == 0:
            return INT
        if isinstance(value, Element):
            inner = value.iterable
            if isinstance(inner, ast.Call) and dotted(inner.func) == "enumerate":
                return INT if part.index == 0 else self._element(inner.args[0], scope)
            if (
                isinstance(inner, ast.Call)
                and dotted(inner.func) == "zip"
                and part.index < len(inner.args)
            ):
                return self._element(inner.args[part.index], scope)
        if is_size_call(value):
            return INT
        if value is None:
            return TENSOR
        return self._element(value, scope)

    def name(self, name: str, scope: Scope) -> str:
        if name.endswith("_cpu"):
            return HOST  # the engines' spelling for the host copy
        while scope is not None:
            if name == scope.self_name:
                return TENSOR
            table = scope.bindings
            values = table.get(name)
            if name in scope.params:
                arg = scope.params[name]
                verdict = annotation_verdict(arg.annotation)
                if verdict == UNKNOWN and name in scope.defaults:
                    default = scope.defaults[name]
                    if isinstance(default, ast.Constant) and isinstance(default.value, int):
                        verdict = INT
                if not values:
                    return verdict
                return worst({verdict, *self._bound(name, scope, values)})
            if values:
                return worst(set(self._bound(name, scope, values)))
            scope = scope.parent
        if name in self.imported:
            return UNKNOWN
        return TENSOR

    def _bound(self, name: str, scope: Scope, values) -> list[str]:
        out = []
        for target, value in values:
            key = (id(target), name)
            if key in self._busy:
                continue  # `n = n + 1`: the other bindings decide
            self._busy.add(key)
            try:
                out.append(self.verdict(value, scope))
            finally:
                self._busy.discard(key)
        return out or [INT]

    def _items(self, expr: ast.AST, scope: Scope) -> str | None:
        """What the items of ``expr`` are by a declaration: a parameter's container
        annotation (``list[int]``: INT, ``dict[str, Any]``: UNKNOWN), an item of
        one, or an attribute the class only ever sets to a container of ints.
        None when nothing declares them."""
        if isinstance(expr, Element):
            return self._items(expr.iterable, scope)
        if isinstance(expr, ast.Name):
            return self._param_items(expr.id, scope)
        if isinstance(expr, ast.Subscript):
            return self._items(expr.value, scope)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            owner = self_class(expr.value.id, scope)
            if owner is None:
                return None
            values = self._class_assignments(owner, expr.attr)
            # `self.window: tuple[int, int] | None = None`: a declared type holds for
            # every value the attribute is given (a type checker holds each assignment
            # to it), so it declares the items whatever the other assignments spell.
            declared = {item_annotation_verdict(ann) for _, ann, _ in values if ann is not None}
            if declared and None not in declared:
                return worst(declared)
            if values and all(
                (ann is not None and item_annotation_verdict(ann) == INT)
                or (value is not None and self._items(value, self.scope_of(node)) == INT)
                for node, ann, value in values
            ):
                return INT
        return None

    def _param_items(self, name: str, scope: Scope) -> str | None:
        """What the items of parameter ``name`` are, by its annotation, if not re-bound."""
        while scope is not None:
            if name in scope.params:
                if name in scope.bindings:
                    return None
                return item_annotation_verdict(scope.params[name].annotation)
            if name in scope.bindings:
                return None
            scope = scope.parent
        return None

    def _is_unannotated_param(self, name: str, scope: Scope) -> bool:
        while scope is not None:
            if name in scope.params:
                return scope.params[name].annotation is None and name not in scope.bindings
            if name in scope.bindings:
                return False
            scope = scope.parent
        return False

    def _class_assignments(self, klass: ast.ClassDef, attr: str):
        """(statement, annotation, value) for every assignment of ``self.<attr>`` in
        ``klass``, and for a class-body field ``attr: T`` (a dataclass's)."""
        out = []
        for stmt in klass.body:
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.target.id == attr
            ):
                out.append((stmt, stmt.annotation, stmt.value))
        for node in ast.walk(klass):
            if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                parts = [(t, node.value)]
                if isinstance(t, (ast.Tuple, ast.List)):
                    # `self.heads, self.kv_heads = partition(...)`: a part of the value.
                    elts = getattr(node.value, "elts", None)
                    parts = [
                        (
                            e,
                            elts[i]
                            if elts is not None and len(elts) == len(t.elts)
                            else Part(node.value, i),
                        )
                        for i, e in enumerate(t.elts)
                    ]
                for target, value in parts:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == attr
                        and isinstance(target.value, ast.Name)
                    ):
                        ann = node.annotation if isinstance(node, ast.AnnAssign) else None
                        if isinstance(node, ast.AugAssign):
                            value = ast.BinOp(target, node.op, node.value)
                        out.append((node, ann, value))
        return out

    def _class_attr(self, klass: ast.ClassDef, attr: str) -> str:
        verdicts = set()
        for node, ann, value in self._class_assignments(klass, attr):
            if ann is not None and annotation_verdict(ann) == INT:
                verdicts.add(INT)
            elif value is not None:
                key = (id(node), attr)
                if key in self._busy:
                    continue  # `self.n += 1`: the other assignments decide
                self._busy.add(key)
                try:
                    verdicts.add(self.verdict(value, self.scope_of(node)))
                finally:
                    self._busy.discard(key)
            elif ann is not None:
                verdicts.add(annotation_verdict(ann))
        # Never assigned here: set by a base class in another module, or the host
        # class of a mixin -- no evidence.
        return worst(verdicts) if verdicts else UNKNOWN


_PIECES = StatementMemo()


def _statement_index(stmt: ast.stmt, source=None):
    """One top-level statement's share of a module's index, from that statement alone:
    a partial IntInference holding node -> function scope (``scopes``), the
    function scopes directly under the module (``_roots``), the module-level
    bindings it makes, the names it imports, and the functions it defines
    that are indexed on demand (``_deferred``). The module scope it
    was indexed under is a stand-in, replaced by each tree's own (``__init__``)."""
    part = IntInference.__new__(IntInference)
    part._source = source
    part.scopes = {}
    part.imported = set()
    part.module = Scope(stmt, None, None, {}, None)
    part._roots = []
    part._deferred = {}
    # Indexed as the one child of a module, as the whole module's index meets it.
    part._index(ast.Module(body=[stmt], type_ignores=[]), part.module, None)
    for func in part._deferred:
        part._imports_of(func)
    return part
