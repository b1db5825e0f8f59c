"""input-assert: an ``assert`` that validates input rather than state.

The refactor record found four assertions validating input rather than state:
``max_block`` follows from ``--max-model-len`` and ``--block-size``, and the
two kpool checks read ``--block-size`` against the model's ``index_kpool``.
Under ``python -O`` they vanish, and what each lets through is silent -- a
block id wrapping into the packed top-k's tie-break field, a truncating floor
division, and a layout ``deepgemm_fp8_paged_mqa_logits`` computes wrongly.
They raise ValueError now; in the same change two asserts stayed, because they
state what a draft under PP *is* (built whole on the last stage, split across
none): state the code established itself, where an assert is the right tool.

So the rule cannot be S101's "every assert". It asks where the asserted value
came from, following input where it hides:

* a parameter of the enclosing function (not ``self``/``cls``), or of an
  enclosing function for a closure, and what is read *off* it without
  computing anything new: attributes, items, elements of a loop or a
  comprehension over it, ``len``/``tuple``/``list``/``zip``/``int`` of it,
  getters called on it with no arguments, ``.get``/``.pop`` of a mapping. A
  parameter re-bound to its own normalised form (``dims = map_neg(dims)``)
  is still the caller's; re-bound to another computation (``d, days =
  modf(days)``) on every path to the assert, it is the function's own;
* an attribute a constructor copied from its arguments or a config
  (``self.block_size = config.block_size``, also through a private
  ``self._init_from(node)`` only constructors call, and a dataclass's
  fields), unless another method assigns it again -- then the class
  maintains it;
* the environment and the command line (``os.environ``, ``os.getenv``,
  ``sys.argv``, ``parse_args()``), read at module level or locally;
* the contract's ``inputs`` names (``args``, ``config``, ``hf_config``,
  ``server_args``) and any ``*_config``, wherever they appear -- a
  parameter, a global, an attribute (``self.config``,
  ``layer.quant_config``; not ``.args``, which FX nodes and exceptions
  carry) -- unless the function re-binds one to a value of its own (``args
  = self.codegen_args()``); and what a function makes of configuration
  alone (``use_mla_backend(server_args)``): engines resolve their flags
  through helpers before asserting on them;
* tensors and strings seen another way: a cast, a move or a reshape of an
  input tensor (``.to()``, ``.type()``, ``.unsqueeze()``), a
  ``torch.cat`` of input tensors, ``.rsplit``/``.replace`` of an input
  string; and sizes worked out from parameters by arithmetic alone
  (``expected = batch * topk * steps``), which are not the function's own
  computation;
* a record's fields -- dataclasses, attrs classes, NamedTuples, pydantic
  models, msgspec Structs -- and its properties and no-argument methods,
  worked out from those fields;
* a private or nested helper's parameter, when some call in the module
  passes it such a value -- or when nothing in the module calls it, since its
  callers are then elsewhere. A call under ``if isinstance(x, T):`` or ``if
  x.kind == K:`` passes a value its caller already checked.

What is not input, and stays an assert: what the function computed (a call
that takes the input, arithmetic, a comprehension that builds new values, a
list it fills, a counter it advances) and a comparison of that against what
it was given -- a postcondition; the object's own bookkeeping, a lookup in a
table of an object the constructor stored, a question that object answers
(``self.pool.anchor(name)``), another object's private attribute, a value
tested for membership in the object's private bookkeeping (``kind not in
self._pending``: where its protocol stands), two of its attributes it keeps
identical (``self.pool.table is self.table``); an attribute a private method
asserts when every call of it sits under an ``if`` on that attribute (the
caller chose the method for the value); an ``isinstance`` narrowing of a
parameter the function just normalised, or of a conversion's result
(``n = t.item()``); ``assert False`` markers; and tests (``test*``
functions, ``Test*`` classes, test files: a test's assert is the test).

Measured by hand-labelled samples (``bench/precision.py``,
``docs/precision.md``): on 500 asserts of torch 2.13.0 and the standard
library, 0.89 precision at 0.87 recall, against S101's 0.49; on sglang
0.5.23's engine code, 0.91 at 0.73 before the engine principles above and
0.97 at 0.86 after on the sample they were drawn from, and 0.95 at 0.87 on a
second sample drawn and labelled blind after them. What it still gets wrong is mostly what only
the whole program knows: a helper reached through another module's dispatch
table, a shape a registered pattern guarantees, an attribute a base class in
another module copies from the config, the platform the process runs on.
"""

from __future__ import annotations

import ast
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import StringList

RULES = (
    Rule(
        code="AC301",
        name="input-assert",
        what=(
            "Flags an `assert` whose condition reads input: a parameter of the enclosing "
            "function (directly or through attributes, items and loops over it), an "
            "attribute `__init__` copied from an argument or a config, a value read from "
            "the environment or the command line, a configured `inputs` name or any "
            "`*_config` (and what a function makes of one alone), or a record's fields. "
            "Asserts on values the code computed itself, on the class's own bookkeeping "
            "and protocol, `assert False` markers and tests are left alone."
        ),
        why=(
            "`python -O` strips every assert. An assert on state the code established "
            "documents an invariant and costs nothing when stripped; an assert on input "
            "is the only thing between a bad argument and what it corrupts, and under "
            "`-O` that value goes through silently (the refactor record's case: a block "
            "id wrapping into a packed field, a truncating division). Raise "
            "`ValueError`/`TypeError` naming the value instead."
        ),
        fix_safety=(
            "The fix rewrites `assert cond, msg` to `if not (cond): raise ValueError(msg)` "
            "(`TypeError` for an `isinstance`/`issubclass` condition), keeping the message, "
            "or naming the condition when there is none. It is unsafe: the check now runs "
            "under `python -O` too, where it used to be stripped, and callers that catch "
            "`AssertionError` stop catching it. A message it writes is quoted the way most of "
            "the file's strings are (double quotes in a tie), so `ruff format` leaves the "
            "rewrite alone."
        ),
    ),
)

_DEFAULT_INPUTS = ("args", "config", "hf_config", "server_args")
# A name ending in `_config` is a config too (`quant_config`, `model_config`,
# `runner_config`): engines name every configuration object that way.
_CONFIG_SUFFIX = "_config"

# Builtins whose result is their argument seen another way, not a new value.
_VIEW_BUILTINS = frozenset(
    {
        "len",
        "tuple",
        "list",
        "zip",
        "enumerate",
        "reversed",
        "iter",
        "next",
        "int",
        "float",
        "str",
        "bool",
        "type",
        "vars",
        "getattr",
        "dict",
        "open",
        "itertools.chain",
        "cast",
        "typing.cast",
    }
)
# Methods that read a container or string without computing from other inputs.
_VIEW_METHODS = frozenset(
    {
        "get",
        "pop",
        "setdefault",
        "items",
        "keys",
        "values",
        "split",
        "strip",
        "rstrip",
        "lstrip",
        "splitlines",
        "lower",
        "upper",
        "copy",
        "partition",
        "rpartition",
        "rsplit",
        "replace",
        "removeprefix",
        "removesuffix",
        # A tensor seen another way: a cast, a move, a reshape keeps the caller's
        # values and, but for the reshape, its shape.
        "to",
        "type",
        "contiguous",
        "float",
        "half",
        "bfloat16",
        "long",
        "detach",
        "unsqueeze",
        "squeeze",
        "view",
        "reshape",
        "flatten",
        "narrow",
    }
)
# Calls that lay their arguments' values side by side: a concatenation of input is input.
_JOINING_CALLS = frozenset({"torch.cat", "torch.concat", "torch.stack", "cat", "concat"})
# Conversions whose result's type is what they produce: narrowing it is for the type checker.
_CONVERSIONS = frozenset({"item", "tolist", "int", "float", "str", "bool", "len"})
# Classes whose annotated class-body names are constructor arguments.
_RECORD_BASES = frozenset({"NamedTuple", "BaseModel", "Struct", "TypedDict"})
_RECORD_DECORATORS = frozenset({"dataclass", "define", "frozen", "attrs", "s"})
# Calls that build a local up: after one, the local is the function's own construction.
_BUILDING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "appendleft"})
_TEST_FILE = re.compile(r"(^|/)(tests?/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
# A statement starts after a line break -- `^` (after \n) or a lone \r, which
# Python reads as one too -- or a `;`/`:`, past Python's indentation
# whitespace, form feed included.
_ASSERT_LINE = re.compile(r"(?:^|[\r;:])[ \t\f]*assert\b", re.MULTILINE)

_FuncNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class _Origin:
    """Why a value is input, phrased for the message."""

    what: str
    config: bool = False  # a configuration object: what a function makes of it is input too


@dataclass
class _Func:
    node: _FuncNode
    parent: _Func | None
    klass: ast.ClassDef | None  # set when this is a method
    params: dict[str, ast.arg]
    self_name: str | None
    # name -> [(binding statement or node, value expression or None, block chain)]
    bindings: dict[str, list[tuple[ast.AST, ast.AST | None, tuple[int, ...]]]] = field(
        default_factory=dict
    )

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


@dataclass
class _Class:
    node: ast.ClassDef
    init_attrs: dict[str, str]  # attr -> the argument or config it was copied from
    reassigned: set[str]


class _Module:
    """One parse's worth of facts the rule asks about, computed once per file."""

    def __init__(self, tree: ast.Module, inputs: frozenset[str]) -> None:
        self.tree = tree
        self.inputs = inputs
        self.funcs: dict[ast.AST, _Func] = {}
        self.blocks: dict[ast.AST, tuple[int, ...]] = {}  # node -> chain of enclosing blocks
        self.owner: dict[ast.AST, _Func | None] = {}  # statement/expression -> function
        self.class_names: dict[str, ast.ClassDef] = {}
        self.calls: dict[str, list[tuple[ast.Call, _Func | None]]] = {}
        self._env_globals: dict[str, bool] = {}
        self.module_bindings: dict[str, list[ast.AST | None]] = {}
        # name -> [(the comprehension, what its variable is bound to)]: visible
        # only inside that comprehension.
        self.comprehension_bindings: dict[str, list[tuple[ast.AST, ast.AST]]] = {}
        self._memo: dict[tuple[int, str], _Origin | None] = {}
        self._busy: set[tuple[int, str]] = set()
        self._class_memo: dict[int, _Class | None] = {}
        self.loop_blocks: set[int] = set()  # ids of loop bodies' statement lists
        self.asserts: list[ast.Assert] = []
        self.guards: dict[int, ast.expr] = {}  # id of an `if` body -> its test
        self.else_guards: dict[int, ast.expr] = {}  # id of an `if`'s else -> its test
        self.built: dict[int, set[str]] = {}  # function node id -> locals it builds up
        self._index(tree, None, None, ())
        self._index_classes()

    # -- indexing ------------------------------------------------------

    def _index(self, node: ast.AST, func: _Func | None, klass, chain: tuple[int, ...]) -> None:
        """One pass over the tree: bindings, call sites, blocks, asserts, classes.

        Positions (block chain, owning function) are kept only for the nodes
        questions are asked at -- statements, calls, comprehensions, walrus
        targets -- not for every name and constant: on a 10,000-line module
        that is most of the nodes and most of the time. What to do with a node
        is worked out once per node type (``_plan_for``, ``_field_plan``), not by a chain of
        ``isinstance`` tests at each of its hundreds of thousands of nodes.

        The walk is pre-order over an explicit stack, not recursive: code Python
        compiles can nest deeper than the interpreter's recursion limit allows a
        recursive walk (a 500-term sum, a 2,000-branch ``elif`` chain).
        """
        stack: list[tuple] = []
        self._expand(node, func, klass, chain, stack)
        visit = self._visit
        pop = stack.pop
        while stack:
            visit(*pop(), stack)

    def _expand(self, node: ast.AST, func: _Func | None, klass, chain, stack: list) -> None:
        """Push ``node``'s children to be visited, so that they pop in source order."""
        plan = _FIELD_PLANS.get(type(node)) or _field_plan(type(node))
        # Names and constants are most of a tree's nodes: they are skipped here,
        # without the call to ``_visit`` that would only return.
        skipped = _SKIPPED
        children: list[tuple] = []
        for name, block in plan:
            value = getattr(node, name, None)
            if isinstance(value, list):
                # Each statement list is a block; a binding dominates what follows
                # it in its own block and in the blocks nested inside that.
                if block:
                    sub = (*chain, id(value))
                    if block is _LOOP_BODY:
                        self.loop_blocks.add(id(value))
                    elif block is _IF_BODY:
                        self.guards[id(value)] = node.test
                    elif block is _IF_ELSE:
                        self.else_guards[id(value)] = node.test
                else:
                    sub = chain
                for child in value:
                    if type(child) not in skipped and isinstance(child, ast.AST):
                        children.append((child, func, klass, sub))
            elif type(value) not in skipped and isinstance(value, ast.AST):
                children.append((value, func, klass, chain))
        children.reverse()
        stack.extend(children)

    def _visit(
        self, child: ast.AST, func: _Func | None, klass, sub: tuple[int, ...], stack: list
    ) -> None:
        kind = type(child)
        plan = _PLANS.get(kind) or _plan_for(kind)
        role = plan[0]
        if role is _SKIP:
            return
        if role is _ATTRIBUTE:
            stack.append((child.value, func, klass, sub))
            return
        if plan[1]:
            self.blocks[child] = sub
            self.owner[child] = func
        if role is _ASSERT:
            self.asserts.append(child)
        elif role is _FUNCTION:
            self._bind(func, child, child, None, sub, name=getattr(child, "name", None))
            inner = self._new_func(child, func, klass)
            self._expand(child, inner, None, (), stack)
            return
        elif role is _CLASS:
            self._bind(func, child, child, None, sub, name=child.name)
            self.class_names.setdefault(child.name, child)
            self._expand(child, func, child, sub, stack)
            return
        collect = plan[2]
        if collect is not None:
            collect(self, child, func, sub)
        self._expand(child, func, klass, sub, stack)

    def _new_func(self, node: _FuncNode, parent: _Func | None, klass) -> _Func:
        args = node.args
        ordered = [*args.posonlyargs, *args.args]
        params = {a.arg: a for a in [*ordered, *args.kwonlyargs]}
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                params[extra.arg] = extra
        self_name = None
        if klass is not None and ordered and not _has_decorator(node, "staticmethod"):
            self_name = ordered[0].arg
            params.pop(self_name, None)
        func = _Func(node, parent, klass, params, self_name)
        self.funcs[node] = func
        return func

    def _bind(self, func, stmt, target, value, chain, name=None) -> None:
        """Record that ``target`` (a Name, or a bare name) is bound to ``value``."""
        names: list[tuple[str, ast.AST | None]] = []
        if name is not None:
            names.append((name, value))
        else:
            _unpack(target, value, names)
        for n, v in names:
            if func is None:
                self.module_bindings.setdefault(n, []).append(v)
            else:
                func.bindings.setdefault(n, []).append((stmt, v, chain))

    # -- what each node type binds or records (looked up by type: ``_COLLECTORS``)

    def _collect_assign(self, node: ast.Assign, func: _Func | None, chain) -> None:
        for target in node.targets:
            self._bind(func, node, target, node.value, chain)

    def _collect_ann_assign(self, node: ast.AnnAssign, func: _Func | None, chain) -> None:
        if node.value is not None:
            self._bind(func, node, node.target, node.value, chain)

    def _collect_aug_assign(self, node: ast.AugAssign, func: _Func | None, chain) -> None:
        self._bind(func, node, node.target, None, chain)  # arithmetic: computed

    def _collect_for(self, node: ast.For | ast.AsyncFor, func: _Func | None, chain) -> None:
        self._bind(func, node, node.target, _Element(node.iter), chain)

    def _collect_with(self, node: ast.With | ast.AsyncWith, func: _Func | None, chain) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(func, node, item.optional_vars, None, chain)

    def _collect_named(self, node: ast.NamedExpr, func: _Func | None, chain) -> None:
        self._bind(func, node, node.target, node.value, chain)

    def _collect_comprehension(self, node: ast.AST, func: _Func | None, chain) -> None:
        for gen in node.generators:
            names: list = []
            _unpack(gen.target, _Element(gen.iter), names)
            for n, v in names:
                self.comprehension_bindings.setdefault(n, []).append((node, v))

    def _collect_import(self, node: ast.Import | ast.ImportFrom, func: _Func | None, chain) -> None:
        for alias in node.names:
            self._bind(
                func, node, None, None, chain, name=(alias.asname or alias.name).split(".")[0]
            )

    def _collect_handler(self, node: ast.ExceptHandler, func: _Func | None, chain) -> None:
        if node.name:
            self._bind(func, node, None, None, chain, name=node.name)

    def _collect_call(self, node: ast.Call, func: _Func | None, chain) -> None:
        callee = node.func
        if (
            func is not None
            and isinstance(callee, ast.Attribute)
            and callee.attr in _BUILDING_METHODS
            and isinstance(callee.value, ast.Name)
        ):
            self.built.setdefault(id(func.node), set()).add(callee.value.id)
        key = _call_name(node.func)
        if key:
            self.calls.setdefault(key, []).append((node, func))

    def _init_helpers(self) -> set[str]:
        """Private methods called only as ``self.m(...)`` from constructors.

        ``_init_from_node(node)`` called from every subclass's ``__init__`` is
        part of construction: what it copies from its argument is input.
        """
        helpers: set[str] = set()
        for name, sites in self.calls.items():
            if not name.startswith("_") or name.endswith("__"):
                continue
            if sites and all(
                caller is not None
                and caller.name in _CONSTRUCTORS
                and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == caller.self_name
                for call, caller in sites
            ):
                helpers.add(name)
        return helpers

    def _index_classes(self) -> None:
        self.init_helpers = self._init_helpers()

    def env_global(self, name: str) -> bool:
        """Is the module-level ``name`` bound to something read from the environment?

        Asked per name when a module-level read is resolved, not worked out for
        every module binding up front: that walked each binding's whole value
        (a module's tables, its docstrings) for the handful of names an assert reads.
        """
        found = self._env_globals.get(name)
        if found is None:
            values = self.module_bindings.get(name, ())
            found = any(v is not None and _reads_environment(v) for v in values)
            self._env_globals[name] = found
        return found

    def facts(self, klass: ast.ClassDef) -> _Class | None:
        """What ``klass``'s constructor copies from input; None while being worked out."""
        key = id(klass)
        if key not in self._class_memo:
            self._class_memo[key] = None  # a constructor reading its own attributes
            self._class_memo[key] = self._class_facts(klass)
        return self._class_memo[key]

    def _class_facts(self, node: ast.ClassDef) -> _Class:
        init_attrs: dict[str, str] = {}
        reassigned: set[str] = set()
        record = _is_record(node)
        for stmt in node.body:
            if record and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                init_attrs[stmt.target.id] = "a field of the record, a constructor argument"
            if (
                record
                and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and _has_decorator(stmt, "property")
            ):
                # A record's property is worked out from its fields: what the caller
                # constructed it with, seen another way.
                init_attrs.setdefault(
                    stmt.name, "a property of the record, worked out from its fields"
                )
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            constructor = stmt.name in _CONSTRUCTORS or stmt.name in self.init_helpers
            func = self.funcs.get(stmt)
            for sub in _walk_statements(stmt):
                targets = []
                if isinstance(sub, ast.Assign):
                    targets = [(t, sub.value) for t in sub.targets]
                elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
                    targets = [(sub.target, getattr(sub, "value", None))]
                for target, value in targets:
                    attr = _self_attr(target, func)
                    if attr is None:
                        continue
                    if not constructor:
                        reassigned.add(attr)
                        continue
                    origin = None
                    if (
                        value is not None
                        and func is not None
                        and not isinstance(sub, ast.AugAssign)
                    ):
                        origin = self.view(value, func, sub)
                    if origin is not None:
                        init_attrs.setdefault(attr, f"copied in `{stmt.name}` from {origin.what}")
        return _Class(node, init_attrs, reassigned)

    def class_input_attr(self, klass: ast.ClassDef, attr: str, seen=None) -> str | None:
        """Where ``self.<attr>`` came from, when a constructor copied it from input.

        Base classes defined in the same module are asked too; an attribute any
        method other than the constructor assigns is the class's own state.
        """
        facts = self.facts(klass)
        if facts is None or attr in facts.reassigned:
            return None
        if attr in facts.init_attrs:
            return facts.init_attrs[attr]
        seen = seen if seen is not None else {id(klass)}
        for base in klass.bases:
            node = self.class_names.get(_dotted(base))
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                found = self.class_input_attr(node, attr, seen)
                if found is not None:
                    return found
        return None

    # -- questions -----------------------------------------------------

    def reads_input(self, expr: ast.AST, func: _Func | None, at: ast.AST) -> _Origin | None:
        """Does the assert condition ``expr`` read input anywhere inside it?"""
        if self._narrows_normalised(expr, func, at):
            # A parameter the function normalised (`x = [x]`, `g = guard_int(g)`) and
            # now narrows for the type checker: its own doing.
            return None
        if self._narrows_conversion(expr, func, at):
            return None  # `n = t.item(); assert isinstance(n, int)`: the conversion's type
        if isinstance(expr, ast.Compare) and func is not None:
            sides = [expr.left, *expr.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops) and all(
                self._own_attribute(e, func, at) for e in sides
            ):
                return None  # `self.pool.table is self.table`: the object keeps them one
            if any(self._computed(e, func, at) for e in sides):
                return None  # checks what the function computed against what it was given
            if (
                len(expr.ops) == 1
                and isinstance(expr.ops[0], (ast.In, ast.NotIn))
                and isinstance(expr.comparators[0], ast.Attribute)
                and _private(expr.comparators[0].attr)
                and self._own_attribute(expr.comparators[0], func, at)
            ):
                return None  # `kind not in self._pending`: where the object's protocol stands
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)) or (
            isinstance(expr, ast.Call) and _is_self_call(expr, func, self)
        ):
            origin = self.view(expr, func, at)
            if origin is not None:
                return origin
            if isinstance(expr, ast.Name):
                return None
        if isinstance(expr, ast.Attribute):
            if _private(expr.attr) and not (
                isinstance(expr.value, ast.Name) and self._self_class(expr.value.id, func, at)
            ):
                return None  # another object's bookkeeping, whoever handed us the object
            return self.reads_input(expr.value, func, at)
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and (expr.args or expr.keywords)
            and expr.func.attr not in _VIEW_METHODS
            and self._via_collaborator(expr.func.value, func, at)
        ):
            # `self.buffer.anchor_bytes(name)`: a question the collaborator the
            # constructor stored answers from its own state; only what is passed
            # to it can be input.
            for arg in [*expr.args, *(k.value for k in expr.keywords)]:
                if self._own_attribute(arg, func, at):
                    continue  # the object asking about itself (`size_of(self.name)`)
                origin = self.reads_input(arg, func, at)
                if origin is not None:
                    return origin
            return None
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, (ast.expr, ast.comprehension, ast.keyword)):
                origin = self.reads_input(child, func, at)
                if origin is not None:
                    return origin
        return None

    def _via_collaborator(self, expr: ast.AST, func: _Func | None, at: ast.AST) -> bool:
        """Is ``expr`` read off an attribute the constructor stored (``self.scheduler.x``)?

        A constructor-copied value (``self.block_size``) is input; a lookup in a
        table of a constructor-copied *object* (``self.scheduler.name_to_buf[n]``)
        is that object's state.
        """
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            if (
                isinstance(expr, ast.Attribute)
                and isinstance(expr.value, ast.Name)
                and func is not None
                and self._self_class(expr.value.id, func, at) is not None
            ):
                return True
            expr = expr.value
        return False

    def _narrows_normalised(self, expr: ast.AST, func: _Func | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if _dotted(expr.func) not in ("isinstance", "issubclass"):
            return False
        subject = expr.args[0]
        if not isinstance(subject, ast.Name) or subject.id not in func.params:
            return False
        return any(_before(stmt, at) for stmt, _, _ in func.bindings.get(subject.id, []))

    def _narrows_conversion(self, expr: ast.AST, func: _Func | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if _dotted(expr.func) != "isinstance" or not isinstance(expr.args[0], ast.Name):
            return False
        name = expr.args[0].id
        if name in func.params:
            return False
        binding = self._dominating_binding(name, func, at)
        value = binding[1] if binding is not None else None
        if not isinstance(value, ast.Call):
            return False
        callee = value.func
        called = callee.attr if isinstance(callee, ast.Attribute) else _dotted(callee)
        return called in _CONVERSIONS

    def _own_attribute(self, expr: ast.AST, func: _Func, at: ast.AST) -> bool:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
            if isinstance(expr, ast.Name):
                return self._self_class(expr.id, func, at) is not None
        return False

    def _arithmetic_of_input(self, value: ast.AST, func: _Func, at: ast.AST) -> bool:
        """``batch * topk * steps`` over parameters: input, worked out, not computed."""
        leaves = []

        def collect(node: ast.AST) -> None:
            if isinstance(node, ast.BinOp):
                collect(node.left)
                collect(node.right)
            elif isinstance(node, ast.UnaryOp):
                collect(node.operand)
            else:
                leaves.append(node)

        collect(value)
        inputs = [leaf for leaf in leaves if not isinstance(leaf, ast.Constant)]
        return bool(inputs) and all(self.view(leaf, func, at) is not None for leaf in inputs)

    def _computed(self, expr: ast.AST, func: _Func, at: ast.AST):
        """Is ``expr`` (seen through ``len``, attributes and items) a local the
        function bound to the result of a call that is not a view of input?

        Returns the computation (the bound value) when it can tell, True when the
        local is one the function builds up or advances, and False otherwise.
        """
        while True:
            if isinstance(expr, ast.Call) and _dotted(expr.func) == "len" and expr.args:
                expr = expr.args[0]
            elif isinstance(expr, (ast.Attribute, ast.Subscript)):
                expr = expr.value
            else:
                break
        for _ in range(8):  # a chain of views: `box = out.data; buf = box.data`
            if not isinstance(expr, ast.Name):
                return False
            if expr.id not in func.params and expr.id in self.built.get(id(func.node), ()):
                return True  # a list the function filled in itself
            if expr.id not in func.params and self._advanced(expr.id, func, at):
                return True  # a counter the function's loop moves (`i += 1`)
            binding = self._dominating_binding(expr.id, func, at)
            if binding is None:
                return False
            stmt, value, _ = binding
            while isinstance(value, (ast.Attribute, ast.Subscript)):
                value = value.value
            if isinstance(value, ast.Name):
                expr, at = value, stmt
                continue
            # The result of processing values (`objects = compile(sources)`), not
            # an independent fact queried with no arguments (`device_count()`).
            if isinstance(value, ast.BinOp) and self._arithmetic_of_input(value, func, stmt):
                return False
            if value is None or isinstance(value, ast.BinOp):
                if isinstance(stmt, ast.AugAssign):
                    return True  # `i += 1`
                return value if isinstance(stmt, ast.Assign) else False  # `i = j + 1`
            if (
                isinstance(value, ast.Call)
                and bool(value.args or value.keywords or isinstance(value.func, ast.Name))
                and self._binding_origin(expr.id, func, stmt, value) is None
            ):
                return value
            return False
        return False

    def _advanced(self, name: str, func: _Func, at: ast.AST) -> bool:
        """Does the function move ``name`` by arithmetic on itself (before ``at``, or in
        a loop around it)?"""
        for stmt, value, chain in func.bindings.get(name, ()):
            if not _before(stmt, at) and not self._share_loop(chain, at):
                continue
            if isinstance(stmt, ast.AugAssign):
                return True
            if isinstance(value, ast.BinOp) and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)
            ):
                return True
        return False

    def view(self, expr: ast.AST | None, func: _Func | None, at: ast.AST) -> _Origin | None:
        """Is ``expr``'s value input, or input seen another way (not computed)?"""
        if expr is None:
            return None
        if isinstance(expr, _Element):
            return self.view(expr.iterable, func, at)
        if _is_environment(expr):
            return _Origin("the environment or the command line")
        if isinstance(expr, ast.Name):
            return self.resolve(expr.id, func, at)
        if isinstance(expr, ast.Attribute):
            if expr.attr != "args" and self.is_input_name(expr.attr):
                # `self.config`, `layer.quant_config`: a configuration wherever it is
                # kept. Not `.args`: FX nodes, AST calls and exceptions all have one.
                return _Origin(f"`{expr.attr}`, a configuration", config=True)
            if func is not None and isinstance(expr.value, ast.Name):
                owner = self._self_class(expr.value.id, func, at)
                if owner is not None:
                    source = self.class_input_attr(owner, expr.attr)
                    if source is None or self._callers_tested(func, expr.attr):
                        return None
                    return _Origin(f"`self.{expr.attr}`, {source}")
            if _private(expr.attr):
                return None  # another object's private attribute: its own bookkeeping
            return self.view(expr.value, func, at)
        if isinstance(expr, ast.Subscript):
            if not isinstance(expr.slice, (ast.Constant, ast.Slice)) and self._via_collaborator(
                expr.value, func, at
            ):
                return None  # a lookup in a table the collaborator maintains
            return self.view(expr.value, func, at)
        if isinstance(expr, (ast.Starred, ast.NamedExpr)):
            return self.view(expr.value, func, at)
        if isinstance(expr, ast.IfExp):
            return self.view(expr.body, func, at) or self.view(expr.orelse, func, at)
        if isinstance(expr, ast.BoolOp):
            return next((o for v in expr.values if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return next((o for v in expr.elts if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            if _reads_environment(expr):
                return _Origin("the environment or the command line")
            gens = expr.generators
            # `[n.node for n in nodes]` reads the argument; `[fmt(x) for x in xs]`
            # and a filtered comprehension compute something new.
            if len(gens) == 1 and not gens[0].ifs and _reads_target(expr.elt, gens[0].target):
                return self.view(gens[0].iter, func, at)
            return None
        if isinstance(expr, ast.Call):
            if _is_parse_args(expr):
                return _Origin("the command line (`parse_args()`)")
            callee = expr.func
            if _dotted(callee) in _VIEW_BUILTINS or _dotted(callee) in _JOINING_CALLS:
                return next((o for a in expr.args if (o := self.view(a, func, at))), None)
            # What a function makes of a configuration alone is configuration:
            # `use_mla_backend(server_args)`, `backends_of(resolved(server_args))`.
            # A function of data and a config (`rope_index(ids, hf_config=...)`)
            # computes something new.
            passed = [a for a in [*expr.args, *(k.value for k in expr.keywords)] if not _literal(a)]
            origins = [self.view(a, func, at) for a in passed]
            if origins and all(o is not None and o.config for o in origins):
                return origins[0]
            if isinstance(callee, ast.Attribute) and (
                (not expr.args and not expr.keywords) or callee.attr in _VIEW_METHODS
            ):
                owner = (
                    self._self_class(callee.value.id, func, at)
                    if isinstance(callee.value, ast.Name)
                    else None
                )
                if owner is not None:
                    if not expr.args and not expr.keywords and _is_record(owner):
                        # `self.resolved_head_dim()` of a dataclass: its fields, the
                        # caller's arguments, worked out.
                        return _Origin(
                            f"`self.{callee.attr}()`, worked out from the record's fields"
                        )
                    return None  # the object's own method computes something
                if (
                    expr.args
                    and callee.attr == "get"
                    and self._via_collaborator(callee.value, func, at)
                ):
                    return None
                return self.view(callee.value, func, at)
        return None

    def resolve(self, name: str, func: _Func | None, at: ast.AST) -> _Origin | None:
        if self.is_input_name(name) and not self._shadowed(name, func, at):
            return _Origin(f"`{name}`, a configured input name", config=name != "args")
        if func is None:
            if self.env_global(name):
                return _Origin(f"`{name}`, read from the environment or the command line")
            return None
        if name == func.self_name:
            return None
        for comp, value in self.comprehension_bindings.get(name, ()):
            if _inside(at, comp) and self.owner.get(comp) is func:
                return self._binding_origin(name, func, comp, value)
        binding = self._dominating_binding(name, func, at)
        if (
            binding is not None
            and name not in func.params
            and name in self.built.get(id(func.node), ())
        ):
            return None  # a list or set the function fills in itself
        if binding is not None:
            stmt, value, _ = binding
            if name in func.params and _renormalises(name, value):
                # `dims = cls._map_neg_dims(dims)`: still the caller's value, normalised.
                return self.param_origin(func, name)
            return self._binding_origin(name, func, stmt, value)
        others = func.bindings.get(name, [])
        if name in func.params:
            return self.param_origin(func, name)
        if others:
            if name in self.built.get(id(func.node), ()):
                return None  # a list or set the function fills in itself
            for stmt, value, bchain in others:
                if not _before(stmt, at) and not self._share_loop(bchain, at):
                    continue  # assigned only after the assert, and no loop comes back
                origin = self._binding_origin(name, func, stmt, value)
                if origin is not None:
                    return origin
            return None
        if func.parent is not None:
            return self.resolve(name, func.parent, func.node)  # a closure's free name
        return self.resolve(name, None, at)

    def is_input_name(self, name: str) -> bool:
        return name in self.inputs or (
            name.endswith(_CONFIG_SUFFIX) and len(name) > len(_CONFIG_SUFFIX)
        )

    def _binding_origin(self, name, func, stmt, value) -> _Origin | None:
        key = (id(stmt), name)
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            return self.view(value, func, stmt)
        finally:
            self._busy.discard(key)

    def _dominating_binding(self, name: str, func: _Func, at: ast.AST):
        """The last binding of ``name`` that every path to ``at`` passes through."""
        chain = self.blocks.get(at, ())
        best = None
        for entry in func.bindings.get(name, []):
            stmt, _, bchain = entry
            if not _before(stmt, at) or stmt is at:
                continue
            if chain[: len(bchain)] != bchain:
                continue  # in a branch or loop the assert is not inside
            if isinstance(stmt, ast.NamedExpr):
                continue  # a walrus inside a condition may not run
            if best is None or _before(best[0], stmt):
                best = entry
        return best

    def _callers_tested(self, func: _Func, attr: str) -> bool:
        """Is ``func`` a private method every call of which (``self.<func>()``) sits
        under an ``if`` that tests ``self.<attr>`` -- the branch chose the method
        for the value the assert restates?"""
        name = func.name
        if not _private(name) or func.self_name is None:
            return False
        sites = self.calls.get(name, [])
        if not sites:
            return False
        for call, caller in sites:
            if caller is None or caller.self_name is None or caller is func:
                return False
            if not (
                isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == caller.self_name
            ):
                return False
            tests = [
                test
                for block in self.blocks.get(call, ())
                for test in (self.guards.get(block), self.else_guards.get(block))
                if test is not None
            ]
            if not any(
                isinstance(n, ast.Attribute)
                and n.attr == attr
                and isinstance(n.value, ast.Name)
                and n.value.id == caller.self_name
                for t in tests
                for n in ast.walk(t)
            ):
                return False
        return True

    def _caller_checked(self, bound: ast.AST, call: ast.Call) -> bool:
        """Is ``call`` inside ``if isinstance(arg, T):`` or ``if arg.kind == K:`` for its arg?

        Only a test of what the value *is* counts; ``if arg is not None`` or a
        truth test leaves everything else about it unchecked.
        """
        if not isinstance(bound, ast.Name):
            return False
        for block in self.blocks.get(call, ()):
            test = self.guards.get(block)
            if test is None:
                continue
            tests = (
                test.values
                if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                else [test]
            )
            for t in tests:
                if (
                    isinstance(t, ast.Call)
                    and _dotted(t.func) in ("isinstance", "issubclass")
                    and t.args
                    and isinstance(t.args[0], ast.Name)
                    and t.args[0].id == bound.id
                ):
                    return True
                if (
                    isinstance(t, ast.Compare)
                    and isinstance(t.left, ast.Attribute)
                    and isinstance(t.left.value, ast.Name)
                    and t.left.value.id == bound.id
                    and not any(
                        isinstance(c, ast.Constant) and c.value is None for c in t.comparators
                    )
                ):
                    return True
        return False

    def _shadowed(self, name: str, func: _Func | None, at: ast.AST) -> bool:
        """An `inputs` name the function re-binds to its own value (`args = self.codegen_args()`)."""
        if func is None or name in func.params:
            return False
        binding = self._dominating_binding(name, func, at)
        if binding is None:
            return False
        stmt, value, _ = binding
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return False  # `from torch._inductor import config` is the config
        return self._binding_origin(name, func, stmt, value) is None

    def _share_loop(self, chain: tuple[int, ...], at: ast.AST) -> bool:
        at_chain = self.blocks.get(at, ())
        return any(b in self.loop_blocks and b in at_chain for b in chain)

    def _self_class(self, name: str, func: _Func | None, at) -> ast.ClassDef | None:
        """The class whose instance ``name`` is (``self`` in a method or its closures)."""
        while func is not None:
            if name == func.self_name:
                return func.klass
            if name in func.params or name in func.bindings:
                return None
            func = func.parent
        return None

    def param_origin(self, func: _Func, name: str) -> _Origin | None:
        key = (id(func.node), name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            origin = self._param_origin(func, name)
        finally:
            self._busy.discard(key)
        self._memo[key] = origin
        return origin

    def _param_origin(self, func: _Func, name: str) -> _Origin | None:
        plain = _Origin(f"parameter `{name}` of `{func.name}`")
        fname = func.name
        private = fname.startswith("_") and not fname.endswith("__")
        nested = func.parent is not None and func.klass is None  # a method is not "nested"
        if not (private or nested) or isinstance(func.node, ast.Lambda):
            return plain
        sites = [
            (call, caller)
            for call, caller in self.calls.get(fname, [])
            if (not nested or _within(caller, func.parent)) and not _within(caller, func)
        ]  # a recursive call passes on what the function already had
        if not sites:
            return plain  # called from elsewhere (another module, a callback)
        arg = func.params[name]
        node_args = func.node.args
        positional = [a.arg for a in [*node_args.posonlyargs, *node_args.args]]
        if func.self_name is not None:
            positional = positional[1:]
        for call, caller in sites:
            bound = _argument_for(call, arg, positional, node_args, func)
            if bound is None or self._caller_checked(bound, call):
                continue  # the caller tested what it passes: the helper restates it
            if self.view(bound, caller, call) is not None:
                return _Origin(
                    f"parameter `{name}` of `{fname}`, which a caller passes input unchanged"
                )
        return None


_CONSTRUCTORS = ("__init__", "__post_init__")
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
# Nodes that hold nothing the index records.
_LEAVES = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.Load,
        ast.Store,
        ast.Del,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.alias,
    }
)
# Expressions questions are asked at (a call site, a comprehension's variables).
_POSITIONED = frozenset(
    {
        ast.Call,
        ast.NamedExpr,
        ast.ListComp,
        ast.SetComp,
        ast.GeneratorExp,
        ast.DictComp,
        ast.Lambda,
        ast.ExceptHandler,
    }
)


# What ``_Module._visit`` does with a node, by its type.
_SKIP, _ATTRIBUTE, _ASSERT, _FUNCTION, _CLASS, _PLAIN = (
    "skip",
    "attribute",
    "assert",
    "function",
    "class",
    "plain",
)
_COLLECTORS = {
    ast.Assign: _Module._collect_assign,
    ast.AnnAssign: _Module._collect_ann_assign,
    ast.AugAssign: _Module._collect_aug_assign,
    ast.For: _Module._collect_for,
    ast.AsyncFor: _Module._collect_for,
    ast.With: _Module._collect_with,
    ast.AsyncWith: _Module._collect_with,
    ast.NamedExpr: _Module._collect_named,
    ast.ListComp: _Module._collect_comprehension,
    ast.SetComp: _Module._collect_comprehension,
    ast.GeneratorExp: _Module._collect_comprehension,
    ast.DictComp: _Module._collect_comprehension,
    ast.Import: _Module._collect_import,
    ast.ImportFrom: _Module._collect_import,
    ast.ExceptHandler: _Module._collect_handler,
    ast.Call: _Module._collect_call,
}
_PLANS: dict[type, tuple] = {}
_SKIPPED: set[type] = set(_LEAVES)  # node types ``_visit`` returns on at once
# A statement list's role: a plain block, a loop's body, an `if`'s body or else.
_BLOCK, _LOOP_BODY, _IF_BODY, _IF_ELSE = "block", "loop body", "if body", "if else"
_FIELD_PLANS: dict[type, tuple[tuple[str, str | None], ...]] = {}


def _plan_for(kind: type) -> tuple:
    """(role, positioned, collector) of a node type, worked out on first sight."""
    collect = _COLLECTORS.get(kind)
    if kind in _LEAVES or (not kind._fields and collect is None and not issubclass(kind, ast.stmt)):
        # An operator or context singleton holds nothing and is asked nothing.
        role = _SKIP
    elif kind is ast.Attribute:
        role = _ATTRIBUTE
    elif kind is ast.Assert:
        role = _ASSERT
    elif kind in _FUNCTIONS:
        role = _FUNCTION
    elif kind is ast.ClassDef:
        role = _CLASS
    else:
        role = _PLAIN
    positioned = kind in _POSITIONED or issubclass(kind, ast.stmt)
    plan = _PLANS[kind] = (role, positioned, collect)
    if role is _SKIP:
        _SKIPPED.add(kind)
    return plan


def _field_plan(kind: type) -> tuple[tuple[str, str | None], ...]:
    """Each field of a node type with the role its statement list plays, if it is one."""
    out = []
    for name in kind._fields:
        block = None
        if name in _BLOCK_FIELDS:
            block = _BLOCK
            if name == "body" and issubclass(kind, _LOOPS):
                block = _LOOP_BODY
            elif name == "body" and issubclass(kind, ast.If):
                block = _IF_BODY
            elif name == "orelse" and issubclass(kind, ast.If):
                block = _IF_ELSE
        out.append((name, block))
    plan = _FIELD_PLANS[kind] = tuple(out)
    return plan


def _reads_target(elt: ast.AST, target: ast.AST) -> bool:
    """Is a comprehension's element its loop variable, or read off it?"""
    names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    while True:
        if isinstance(elt, (ast.Attribute, ast.Subscript, ast.Starred)):
            elt = elt.value
        elif isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and not elt.args:
            elt = elt.func.value
        elif isinstance(elt, ast.Call) and _dotted(elt.func) in _VIEW_BUILTINS and elt.args:
            elt = elt.args[0]  # `int(d)`: the same value converted
        elif isinstance(elt, ast.Tuple):
            return all(_reads_target(e, target) for e in elt.elts)
        else:
            return isinstance(elt, ast.Name) and elt.id in names


def _is_self_call(call: ast.Call, func, module) -> bool:
    """``self.m(...)``: the object's own method (a record's worked-out field)."""
    callee = call.func
    return (
        isinstance(callee, ast.Attribute)
        and isinstance(callee.value, ast.Name)
        and module._self_class(callee.value.id, func, call) is not None
    )


def _literal(node: ast.AST) -> bool:
    """A constant, or a tuple/list/set of them (`("num_experts", "n_experts")`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(_literal(e) for e in node.elts)
    return False


def _is_record(node: ast.ClassDef) -> bool:
    """A dataclass, attrs class, NamedTuple, pydantic model or msgspec Struct."""
    return any(_has_decorator(node, d) for d in _RECORD_DECORATORS) or any(
        _dotted(b).rpartition(".")[2] in _RECORD_BASES for b in node.bases
    )


def _private(attr: str) -> bool:
    return attr.startswith("_") and not attr.endswith("__")


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    start = (outer.lineno, outer.col_offset)
    end = (outer.end_lineno, outer.end_col_offset)
    return start <= (node.lineno, node.col_offset) <= end


def _renormalises(name: str, value: ast.AST | None) -> bool:
    """``name = f(name, ...)`` or ``name = name.m(...)``: the same value, normalised."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == name
    ):
        return True
    for arg in [*value.args, *(k.value for k in value.keywords)]:
        while isinstance(arg, ast.Call) and arg.args:  # f(g(name))
            arg = arg.args[0]
        if isinstance(arg, ast.Name) and arg.id == name:
            return True
    return False


class _Element(ast.AST):
    """An element of an iterable: what a ``for`` target is bound to."""

    _fields = ("iterable",)

    def __init__(self, iterable: ast.AST) -> None:
        super().__init__()
        self.iterable = iterable


def _unpack(target, value, out: list) -> None:
    if isinstance(target, ast.Name):
        out.append((target.id, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        elts = None
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            elts = value.elts
        for i, t in enumerate(target.elts):
            if elts is not None:
                _unpack(t, elts[i], out)
            elif value is None:
                _unpack(t, None, out)
            else:
                # An element of an unpacked value is read off it, not computed.
                _unpack(t, _Element(value) if not isinstance(value, _Element) else value, out)
    elif isinstance(target, ast.Starred):
        _unpack(target.value, value, out)


def _argument_for(call: ast.Call, arg: ast.arg, positional, node_args, func) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == arg.arg:
            return kw.value
        if kw.arg is None:
            return kw.value  # **kwargs passes whatever it holds
    if arg.arg in positional:
        index = positional.index(arg.arg)
        # A call through a class (`Cls.method(obj, x)`) passes self positionally.
        if func.self_name is not None and isinstance(call.func, ast.Attribute):
            receiver = call.func.value
            if isinstance(receiver, ast.Name) and receiver.id[:1].isupper():
                index += 1
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                return a.value
            if i == index:
                return a
    if node_args.vararg is not None and arg is node_args.vararg:
        extra = call.args[len(positional) :]
        return extra[0] if extra else None
    return None


def _within(caller: _Func | None, func: _Func | None) -> bool:
    while caller is not None:
        if caller is func:
            return True
        caller = caller.parent
    return False


def _before(a: ast.AST, b: ast.AST) -> bool:
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


def _call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    if isinstance(node, ast.Call):
        return _dotted(node.func)
    return ""


def _has_decorator(node, name: str) -> bool:
    return any(_dotted(d).rpartition(".")[2] == name for d in getattr(node, "decorator_list", ()))


def _self_attr(target: ast.AST, func: _Func | None) -> str | None:
    if (
        func is not None
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == func.self_name
    ):
        return target.attr
    return None


def _is_environment(expr: ast.AST) -> bool:
    dotted = _dotted(expr) if isinstance(expr, (ast.Attribute, ast.Name)) else ""
    if dotted in ("os.environ", "sys.argv", "environ"):
        return True
    if isinstance(expr, ast.Call):
        callee = _dotted(expr.func)
        return callee in ("os.getenv", "getenv", "os.environ.get", "os.environb.get")
    return False


def _is_parse_args(expr: ast.Call) -> bool:
    return isinstance(expr.func, ast.Attribute) and expr.func.attr in (
        "parse_args",
        "parse_known_args",
    )


# What can hold a statement: statements, and the handlers and cases of the statements that have them.
_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _walk_statements(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``'s statements, in its order, without entering expressions.

    No expression holds a statement, so leaving them out of the breadth-first
    queue keeps every statement at its depth and its place among its level:
    the order ``ast.walk`` yields them in, which decides which of two copies
    of one attribute a constructor is said to make. A class's methods are
    mostly expressions, and walking them all was a fifth of the rule's time.
    """
    todo = deque([node])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, _STATEMENT_HOLDERS))
            elif isinstance(value, _STATEMENT_HOLDERS):
                todo.append(value)
        yield node


def _reads_environment(value: ast.AST) -> bool:
    return any(
        _is_environment(n) or (isinstance(n, ast.Call) and _is_parse_args(n))
        for n in ast.walk(value)
    )


def _is_test_function(func: _Func | None) -> bool:
    while func is not None:
        if func.name.startswith("test"):
            return True
        if func.klass is not None and func.klass.name.startswith("Test"):
            return True
        func = func.parent
    return False


class InputAssert(Contract):
    KIND = "input-assert"
    RULES = RULES

    inputs = StringList(
        default=_DEFAULT_INPUTS,
        doc=(
            "Names that are input wherever they appear (a parsed command line, a model "
            "config): an assert reading one is flagged even where it is a global or a "
            "local. Default: `args`, `config`, `hf_config`."
        ),
    )

    VALID = (
        Example(
            source=(
                "def carve(buffer, sizes):\n"
                "    if len(buffer) < sum(sizes):\n"
                "        raise ValueError(f'buffer of {len(buffer)} bytes is too short')\n"
                "    total = sum(sizes)\n"
                "    offsets = [0]\n"
                "    for s in sizes:\n"
                "        offsets.append(offsets[-1] + s)\n"
                "    assert offsets[-1] == total\n"
                "    return offsets\n"
            ),
            note="The assert states what the function computed itself: an invariant.",
        ),
        Example(
            source=(
                "class Pool:\n"
                "    def __init__(self, entries):\n"
                "        if entries <= 0:\n"
                "            raise ValueError(f'entries must be positive, got {entries}')\n"
                "        self.free = list(range(entries))\n"
                "        self.used = 0\n"
                "\n"
                "    def take(self):\n"
                "        self.used += 1\n"
                "        assert self.used <= len(self.free) + self.used\n"
                "        return self.free.pop()\n"
            ),
            note="The class's own bookkeeping, maintained outside `__init__`.",
        ),
        Example(
            source=(
                "def shard(groups):\n"
                "    groups = guard_int(groups)\n"
                "    assert isinstance(groups, int)\n"
                "    return groups\n"
                "\n"
                "def pick(kind):\n"
                "    if kind == 'page':\n"
                "        return 1\n"
                "    assert False, f'unreachable: {kind}'\n"
            ),
            note="Narrowing a name the function re-bound; an `assert False` marker.",
        ),
        Example(
            source=(
                "def _ratio(block, scheduler_block):\n"
                "    assert scheduler_block % block == 0\n"
                "    return scheduler_block // block\n"
                "\n"
                "def blocks_per_entry(layout):\n"
                "    return _ratio(attn_block_size(layout), page_tokens(layout))\n"
            ),
            note="A private helper whose only caller passes values it computed.",
        ),
        Example(
            source=(
                "class Ring:\n"
                "    def __init__(self, table, store, rank):\n"
                "        self.table = table\n"
                "        self.store = store\n"
                "        self.rank = rank\n"
                "        self.name = 'ring'\n"
                "        self._pending = set()\n"
                "\n"
                "    def run(self):\n"
                "        if self.rank == 0:\n"
                "            self._serve()\n"
                "        else:\n"
                "            self._forward()\n"
                "\n"
                "    def _forward(self):\n"
                "        assert self.rank > 0\n"
                "\n"
                "    def advance(self, kind, lens):\n"
                "        assert kind not in self._pending\n"
                "        assert self.store.table is self.table\n"
                "        assert self.store.offset_of(self.name) == 0\n"
                "        n = lens[0].item()\n"
                "        assert isinstance(n, int)\n"
            ),
            note=(
                "What the object keeps: a method its caller chose for the value, a "
                "parameter against its private bookkeeping, two of its attributes kept "
                "one, a collaborator asked about the object itself, a conversion narrowed."
            ),
        ),
        Example(
            source=("def test_carve(pool):\n    assert pool.carve(8) == 8\n"),
            path="tests/test_pool.py",
            note="A test's assert is the test, not input validation.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "def max_block(max_model_len, block_size):\n"
                "    assert max_model_len % block_size == 0, 'block size must divide the length'\n"
                "    return max_model_len // block_size\n"
            ),
            expect=(Expect("AC301", 2, 12, "max_model_len"),),
            fixed=(
                "def max_block(max_model_len, block_size):\n"
                "    if not (max_model_len % block_size == 0):\n"
                "        raise ValueError('block size must divide the length')\n"
                "    return max_model_len // block_size\n"
            ),
            unsafe=True,
            note="The record's case: a parameter's precondition. The fix keeps the message.",
        ),
        Example(
            source=(
                "class KPool:\n"
                "    def __init__(self, config):\n"
                "        self.block_size = config.block_size\n"
                "\n"
                "    def layout(self, index_kpool):\n"
                "        assert isinstance(index_kpool, int)\n"
                "        assert self.block_size % 64 == 0\n"
                "        return index_kpool\n"
            ),
            params={"inputs": ["hf_config"]},
            expect=(
                Expect("AC301", 6, 16, "index_kpool"),
                Expect("AC301", 7, 16, "copied in `__init__`"),
            ),
            fixed=(
                "class KPool:\n"
                "    def __init__(self, config):\n"
                "        self.block_size = config.block_size\n"
                "\n"
                "    def layout(self, index_kpool):\n"
                "        if not (isinstance(index_kpool, int)):\n"
                '            raise TypeError("expected isinstance(index_kpool, int)")\n'
                "        if not (self.block_size % 64 == 0):\n"
                '            raise ValueError("expected self.block_size % 64 == 0")\n'
                "        return index_kpool\n"
            ),
            unsafe=True,
            note=(
                "An attribute copied from the constructor's config, asserted later; an "
                "`isinstance` check raises TypeError. With no message, one names the condition."
            ),
        ),
        Example(
            source=(
                "import os\n"
                "\n"
                "BLOCK = int(os.environ.get('ATOM_BLOCK', '16'))\n"
                "\n"
                "def _check(rows):\n"
                "    assert rows.size(0) % BLOCK == 0\n"
                "\n"
                "def bind(rows):\n"
                "    _check(rows)\n"
            ),
            expect=(Expect("AC301", 6, 12, "rows"),),
            fixed=(
                "import os\n"
                "\n"
                "BLOCK = int(os.environ.get('ATOM_BLOCK', '16'))\n"
                "\n"
                "def _check(rows):\n"
                "    if not (rows.size(0) % BLOCK == 0):\n"
                "        raise ValueError('expected rows.size(0) % BLOCK == 0')\n"
                "\n"
                "def bind(rows):\n"
                "    _check(rows)\n"
            ),
            unsafe=True,
            note="A private helper handed a public function's argument unchanged.",
        ),
        Example(
            source=(
                "import os\n"
                "\n"
                "WORKERS = os.getenv('ATOM_WORKERS')\n"
                "assert WORKERS is None or WORKERS.isdigit(), WORKERS\n"
                "\n"
                "def plan(args):\n"
                "    for size in args.sizes:\n"
                "        if size: assert size > 0\n"
            ),
            expect=(
                Expect("AC301", 4, 8, "environment"),
                Expect("AC301", 8, 25, "args"),
            ),
            fixed=(
                "import os\n"
                "\n"
                "WORKERS = os.getenv('ATOM_WORKERS')\n"
                "if not (WORKERS is None or WORKERS.isdigit()):\n"
                "    raise ValueError(WORKERS)\n"
                "\n"
                "def plan(args):\n"
                "    for size in args.sizes:\n"
                "        if size: assert size > 0\n"
            ),
            unsafe=True,
            note=(
                "A global read from the environment; an element of a loop over `args`. "
                "An assert sharing its line with an `if` gets no fix."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "class Attention:\n"
                "    def __init__(self, layer):\n"
                "        self.block = layer.quant_config.block\n"
                "\n"
                "    def pick(self, server_args):\n"
                "        assert self.block % 64 == 0\n"
                "        assert uses_paged_kv(server_args)\n"
                "\n"
                "def stage(items, rows, heads, steps):\n"
                "    grid = torch.cat([item.grid for item in items])\n"
                "    assert grid.dim() == 2\n"
                "    expected = heads * steps\n"
                "    assert rows.shape[0] == expected\n"
            ),
            expect=(
                Expect("AC301", 8, 16, "quant_config"),
                Expect("AC301", 9, 16, "server_args"),
                Expect("AC301", 13, 12, "items"),
                Expect("AC301", 15, 12, "rows"),
            ),
            fixed=(
                "import torch\n"
                "\n"
                "class Attention:\n"
                "    def __init__(self, layer):\n"
                "        self.block = layer.quant_config.block\n"
                "\n"
                "    def pick(self, server_args):\n"
                "        if not (self.block % 64 == 0):\n"
                '            raise ValueError("expected self.block % 64 == 0")\n'
                "        if not (uses_paged_kv(server_args)):\n"
                '            raise ValueError("expected uses_paged_kv(server_args)")\n'
                "\n"
                "def stage(items, rows, heads, steps):\n"
                "    grid = torch.cat([item.grid for item in items])\n"
                "    if not (grid.dim() == 2):\n"
                '        raise ValueError("expected grid.dim() == 2")\n'
                "    expected = heads * steps\n"
                "    if not (rows.shape[0] == expected):\n"
                '        raise ValueError("expected rows.shape[0] == expected")\n'
            ),
            unsafe=True,
            note=(
                "Input where an engine hides it: a `*_config` copied in `__init__`, what a "
                "function makes of `server_args`, a concatenation of the items' tensors, "
                "a size worked out from parameters by arithmetic."
            ),
        ),
    )

    def wants(self, source) -> bool:
        # A test file first, by its path: its asserts are the test, and the
        # engine parses whatever a contract wants, so deciding this in `check`
        # paid a parse of every test file with an assert for nothing. Then the
        # substring test: three files in four hold no "assert" at all, and it
        # costs a hundredth of the line pattern, whose `[;:]` branch is tried at
        # every colon of the file.
        if _TEST_FILE.search(source.path):
            return False
        text = source.text
        return "assert" in text and _ASSERT_LINE.search(text) is not None

    def check(self, source, project) -> Iterator:
        if _TEST_FILE.search(source.path):
            return
        tree = source.tree
        if tree is None:
            return
        module = _Module(tree, frozenset(self.inputs))
        for node in module.asserts:
            if isinstance(node.test, ast.Constant):
                continue  # `assert False, "unreachable"`: a marker, not a check
            func = module.owner.get(node)
            if _is_test_function(func):
                continue
            origin = module.reads_input(node.test, func, node)
            if origin is None:
                continue
            exc = _exception_for(node.test)
            yield self.finding(
                source,
                node.test,
                f"`assert` validates input ({origin.what}); `python -O` strips it and the "
                f"bad value goes through silently: raise {exc} naming the value instead",
                span_node=node,
                fix=_fix(source, node, exc),
            )


def _exception_for(test: ast.expr) -> str:
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Call) and _dotted(inner.func) in ("isinstance", "issubclass"):
        return "TypeError"
    return "ValueError"


def _fix(source, node: ast.Assert, exc: str):
    """``if not (cond): raise Exc(msg)`` in place of the assert, when it owns its lines."""
    from checkers.finding import Edit, Fix
    from checkers.literals import preferred_quote, string_literal

    line, col, end_line, end_col = source.span(node)
    first = source.lines[line - 1]
    indent = first[: col - 1]
    if indent.strip():
        return None  # shares its line with something before it (`if x: assert y`)
    rest = source.lines[end_line - 1][end_col - 1 :]
    if rest.strip() and not rest.lstrip().startswith("#"):
        return None  # `assert x; other()`
    test = _segment(source, node.test)
    if not test:
        return None
    message = (
        _segment(source, node.msg)
        if node.msg is not None
        else string_literal("expected " + " ".join(test.split()), preferred_quote(source))
    )
    if node.msg is not None and not message:
        return None
    content = f"if not ({test}):\n{indent}    raise {exc}({message})"
    return Fix(
        message=f"Raise {exc} instead of asserting",
        edits=(Edit(line, col, end_line, end_col, content),),
        applicability="unsafe",
    )


def _segment(source, node: ast.AST) -> str:
    """The node's source text, cut from the already-split lines.

    ``ast.get_source_segment`` re-splits the whole file on every call, which
    on a 10,000-line module with a thousand asserts is most of the check.
    """
    line, col, end_line, end_col = source.span(node)
    lines = source.lines[line - 1 : end_line]
    if not lines:
        return ""
    if len(lines) == 1:
        return lines[0][col - 1 : end_col - 1]
    return lines[0][col - 1 :] + "".join(lines[1:-1]) + lines[-1][: end_col - 1]
