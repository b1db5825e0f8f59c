"""Whether a value comes from input or was computed where it is read.

``input-assert`` flags an ``assert`` that validates input -- what a caller, a
configuration, the environment or the command line hands in -- and leaves
alone one that restates what the function computed itself. This answers the
question for one expression at one place in one function, from what
``bindings.BindingIndex`` recorded: a name is followed to the binding that
dominates the place (or the parameter it is, and on to the private helper's
callers), an attribute of ``self`` to what the constructor copied into it,
and a call is input only when it is a view of input (``len(x)``, ``x.view(...)``)
or what a function makes of configuration alone. Every answer is an
``Origin`` phrased for the message, or None.

The principles, input first, following it where it hides:

* a parameter of the enclosing function (not ``self``/``cls``) or of an
  enclosing one, and what is read *off* it: attributes, items, loop elements,
  ``len``/``tuple``/``int`` of it, no-argument getters, ``.get``/``.pop``; a
  parameter re-bound to its normalised form (``dims = map_neg(dims)``), but not
  one re-bound to another computation on every path (``d, days = modf(days)``);
* an attribute a constructor copied from its arguments or a config (also
  through a private ``self._init_from(node)``, a dataclass's fields), unless
  another method assigns it again -- except to the attribute normalised or to
  a config; an attribute the class never assigns, when its constructor hands
  its arguments to a base class of another module (``super().__init__(
  model_runner)``) or it has no constructor of its own and its first base that
  is no mixin builds it (``class Encoder(codecs.IncrementalEncoder)``);
* the environment and the command line (``os.environ``, ``sys.argv``,
  ``parse_args()``), and process-wide settings another module keeps behind a
  no-argument accessor (``get_parallel().attn_dcp_size``, ``_is_hip =
  is_hip()``) -- not the type of what one returns, nor a class built; and an
  engine's module of environment variables, imported as ``envs`` (``import
  vllm.envs as envs``, ``from lmdeploy.pytorch import envs as _envs``), where
  the name is bound by imports alone;
* the ``inputs`` names (``args``, ``config``, ``hf_config``, ``server_args``)
  and any ``*_config``, wherever kept (``self.config``, ``layer.quant_config``;
  not ``.args``, which FX nodes and exceptions carry), unless the function
  re-binds one to its own value; what a function makes of configuration
  alone (``use_mla_backend(server_args)``), and what a configuration answers
  when asked (``quant_config.get_quant_method(layer, prefix)``: ``get_*``,
  ``is_*``, ``has_*``, ``use_*``, ``supports_*``), whatever the question names;
* an attribute the function itself stored on every path to the assert
  (``self.arch = self.hf_config.architectures[0]`` in a method other than the
  constructor, whose stores are the class's facts): what it stored;
* input seen another way: casts, moves and reshapes (``.to()``,
  ``.unsqueeze()``), ``torch.cat`` of input, ``.rsplit``/``.replace``; the
  facts of a dtype input names (``torch.finfo(getattr(torch, quant_dtype)).bits``,
  ``np.iinfo(x.dtype).max``: a table the library keeps, as ``type(x)`` is); sizes
  worked out by arithmetic alone (``batch * topk * steps``, ``(2 if
  bidirectional else 1) * hidden``); a reduction or reordering
  (``sorted(sizes)``, ``lens.max(dim=0).values``); whether an optional argument
  came (``mask is not None``); what a ``from_*`` factory builds from input
  alone; and input read by a parser with nothing but literals beside it (``mo =
  re.match(r"(\\d+)", line)`` of a line of the file a parameter names,
  ``KVLayout.parse(kv_layout)``); and input compared with a constant the
  function wrote down (``cpu = torch.device("cpu")``: a call with literal
  arguments alone names one value on every call, so no postcondition); and
  what a helper of the module hands back of input alone (``pad_vocab_size(
  self.vocab_size, 64)``, ``self._tensor(index)``: a function, or a method of
  the object's class, whose every ``return`` is its parameters worked out --
  ``pass_through``), including a constructor's copy worked out from an
  attribute it copied before (``self.padded = pad(self.vocab_size)``); and what
  the module's own reader hands back of input (``index, content, stop =
  _read_until_stop(index, text, stops)``: a helper that reads nothing but what
  it is handed and returns pieces of it, ``text[index:pos]``) -- a slice cut
  where the text itself says, not by a bound of the function's own; whether a
  table the module wrote down has an entry for input (``code =
  _SCORING.get(scoring_func.lower())``: a dict display bound once, whose items
  no statement of the module stores, deletes or updates, asked by ``.get`` with
  no default -- None exactly where the caller's key names nothing); and a flag
  bound to comparisons of input with constants or with input, asserted whole
  (``paged = page_size > 1`` ... ``assert paged``, ``assert not shared``: the
  test spelled once), unless an ``if`` on the way tests the flag -- then the
  assert says what the function's own branches left;
* a record's fields -- dataclasses (``pydantic_dataclass`` too), attrs, NamedTuples,
  pydantic models, msgspec Structs -- and its properties and no-argument methods;
  and a field of a record the function built in place (``shape =
  AttentionShape(num_heads=q.shape[1])`` ... ``shape.num_heads``): what the
  constructor, a capitalised name, was handed by that keyword;
* a private or nested helper's parameter, when some call in the module passes
  it input unchanged, or nothing in the module calls it; a call under ``if
  isinstance(x, T):`` or ``if x.kind == K:``, under an ``if`` (or in its ``else``)
  that compares the value (``if 0 < k <= 2048: _topk(k)``), or past an ``if`` that
  compares it and leaves (``if tp == 1: return``, ``if not 1 <= m <= 12: raise``)
  or an ``assert`` that compares it (``assert tp > 1``: the same test, where the
  finding belongs), passes a value already checked -- each part of an ``and`` it
  holds a test of its own, and a comparison with another input (``assert
  w.shape[1] == k``) none; a type test (``isinstance``) settles only an assert
  that asks for a type, of the value or of what it holds, not one of what it
  holds (``'%' not in key`` of the keys of a dict the caller asserted is one).

State, which stays an assert: what the function computed -- a call that takes
the input, a list it fills, a counter it advances, tensor pieces it sized
(``qkv.split([q, kv, kv], dim=-1)``), a product ``x @ w``, a slice cut by its
own bound, a local every branch before the assert binds so (``x_q =
quant_a(x)`` under the ``if``, ``quant_b(x)`` under the ``else``), a local
re-bound under ``if self.flag:`` and read under another ``if self.flag:`` on
the same unchanged attributes, or on a local flag bound once (only that
binding reaches it) -- and a
comparison of that against what it was given (a postcondition); a global the
module's own setter assigns; a record's field it fills itself (in
``__post_init__``); what a collaborator holds after the function called it for
its effect (``self.layers.prepare(x)``); the per-step records an engine builds
-- a ``forward_batch``, a ``forward_context``, an ``*_metadata`` -- and what one
holds against the step's tensors (also through a private helper's parameter every
caller in the module fills from such a record); a table the object fills as it runs, a count
the module advances, a count against a buffer the object allocated; the
object's bookkeeping (a collaborator's table, a question it answers,
``self.pool.anchor(name)``, another object's private attribute, ``kind not in
self._pending``, ``self.pool.table is self.table``); an attribute a private
method asserts when every call of it sits under an ``if`` on it; an
``isinstance`` of a parameter just normalised or of a conversion's result --
not in the other branch of the ``if`` that normalised it (``if isinstance(x,
T): x = x.contiguous()`` ... ``else: assert isinstance(x, Q)``: the caller's
``x``, unless a loop carries the binding round to it); an
assert restating what the function's own tests established where it stands
(``if x is not None and n > 1: assert x is not None``, also through a local
bound to that test; the ``else`` of ``if x is None:``; past ``if sparse:
return``), unless a name tested is bound again on the way -- except, past ``if x
is None: return``, by a function of the module that returns None only for None
(``x = parse_content_hash(x)``: its every ``return None`` under ``if value is
None:``, its other returns not None by their form); ``x is not None`` (``x``)
past ``if x is None:`` (``if not x:``), no ``else``, whose body binds ``x`` at
its top level to the function's own value and does not leave (``x =
self.embed_tokens(ids)``): only the fill can fail it -- not anything else of
``x``, nor a fill with another input (``x = fallback``);
``x is not None`` where ``x`` was bound once to ``A if T else None`` and ``T``
holds where the assert stands (``if shared: assert collapsed is not None``, in
the function or a nested one), ``A`` not the caller's value that may be None; a
product asserted divisible by one of its own factors (``nbytes = prod(shape) *
size`` ... ``assert nbytes % size == 0``: true for any input);
``assert False`` markers -- past a loop, or behind tests of the function's own
values; and tests (``test*`` functions, ``Test*`` classes, test files).

An ``assert False`` is read by the tests that lead to it (``branch_input``):
each ``if`` it sits in or in whose ``else`` it sits, however deep, and each
``if T: return`` before it in its own block. Where one of those reads input
(``else: assert False, f"unsupported role {role}"``), input chooses the
branch, and under ``python -O`` an unsupported value falls through it.
"""

from __future__ import annotations

import ast

from .bindings import BindingIndex
from .callers import HelperCallers
from .class_facts import ClassFacts, ClassFactsOf
from .imports import bound_name
from .names import dotted, has_decorator
from .own_values import OwnValues
from .pass_through import pieces_handed_back, returns_its_arguments
from .protocol import ObjectProtocol
from .scopes import Element, Scope, before, self_class
from .shapes import (
    CONVERSIONS,
    DTYPE_FACTS,
    JOINING_CALLS,
    PARSING_CALLS,
    REDUCING_BUILTINS,
    REDUCING_METHODS,
    VIEW_BUILTINS,
    VIEW_METHODS,
    inside,
    is_environment,
    is_literal,
    is_parse_args,
    is_private,
    is_record,
    is_self_call,
    names_step_record,
    reads_environment,
    reads_target,
    renormalises,
    splits_tensor,
    walk_statements,
)
from .verdicts import Origin
from .walk import statement_lists

# A name ending in `_config` is a config too (`quant_config`, `model_config`,
# `runner_config`): engines name every configuration object that way.
_CONFIG_SUFFIX = "_config"


class InputOrigins(ClassFacts, ObjectProtocol, OwnValues, HelperCallers, BindingIndex):
    """Where the values of one module come from, asked per expression and memoised."""

    def __init__(self, tree: ast.Module, inputs: frozenset[str], source=None) -> None:
        self.inputs = inputs
        self._env_globals: dict[str, bool] = {}
        self._memo: dict[tuple[int, str], Origin | None] = {}
        self._busy: set[tuple[int, str]] = set()
        self._class_memo: dict[int, ClassFactsOf | None] = {}
        self._globals_set: set[str] | None = None  # names some function declares `global`
        self._imports: set[str] | None = None  # names module-level imports bind
        self._filled: dict[int, set[str]] = {}  # class id -> attributes it puts items into
        self._module_counts: set[str] | None = None  # `.attr`s advanced on objects not self
        # function node id -> [(statement, the object it calls a method of for its effect)]
        self._effects: dict[int, list[tuple[ast.stmt, str]]] = {}
        self.asks_type = False  # whether the assert being read asks only for a type
        # whether it asks only a value's form (type, rank, layout, dtype, device)
        self.asks_form = False
        self._changed: set[str] | None = None  # names whose items the module's code changes
        # ``package_callers.PackageCallers``: where a module-level function's callers in
        # the whole package are asked for; None reads one module alone.
        self.package = None
        super().__init__(tree, source)

    def env_global(self, name: str) -> bool:
        """Is the module-level ``name`` bound to something read from the environment?

        Asked per name when a module-level read is resolved, not worked out for
        every module binding up front: that walked each binding's whole value
        (a module's tables, its docstrings) for the handful of names an assert reads.
        """
        found = self._env_globals.get(name)
        if found is None:
            values = self.module_bindings.get(name, ())
            found = any(
                v is not None and (reads_environment(v) or self._accessor_call(v)) for v in values
            )
            self._env_globals[name] = found
        return found

    def _accessor_call(self, value: ast.AST) -> bool:
        """``is_hip()``, ``get_parallel()``: a call with no arguments of a function
        another module defines -- not a class (``BlankLine()`` builds a new object)."""
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and not value.args
            and not value.keywords
            and not value.func.id[:1].isupper()
            and self._imported(value.func.id)
        )

    def reads_input(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> Origin | None:
        """Does the assert condition ``expr`` read input anywhere inside it?"""
        if isinstance(at, ast.Assert) and expr is at.test:
            # What a caller's type test settles depends on what the assert asks: a
            # type (`isinstance(x, T)`) or something the value holds (`"%" not in key`).
            asked, self.asks_type = self.asks_type, _asks_type(expr)
            form, self.asks_form = self.asks_form, _asks_form(expr)
            try:
                return self._reads_input(expr, func, at)
            finally:
                self.asks_type, self.asks_form = asked, form
        return self._reads_input(expr, func, at)

    def _reads_input(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> Origin | None:
        if self._narrows_normalised(expr, func, at):
            # A parameter the function normalised (`x = [x]`, `g = guard_int(g)`) and
            # now narrows for the type checker: its own doing.
            return None
        if self._narrows_conversion(expr, func, at):
            return None  # `n = t.item(); assert isinstance(n, int)`: the conversion's type
        if isinstance(at, ast.Assert) and expr is at.test and self._restates_guard(expr, func, at):
            return None  # `if x is not None and ...: assert x is not None`: for the type checker
        if isinstance(at, ast.Assert) and expr is at.test:
            flag = (
                expr.operand
                if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not)
                else expr
            )
            tested = self._flag_test(flag, func, at)
            if tested is not None:
                return tested  # `paged = page_size > 1` ... `assert paged`: the test, spelled once
        if isinstance(expr, ast.Compare) and func is not None:
            sides = [expr.left, *expr.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops) and all(
                self._own_attribute(e, func, at) for e in sides
            ):
                return None  # `self.pool.table is self.table`: the object keeps them one
            if any(self._computed(e, func, at) for e in sides):
                return None  # checks what the function computed against what it was given
            if self._divides_own_product(expr, func, at):
                return None  # `n * k % k == 0`: true whatever the caller passed
            if self._fits_own_buffer(expr, func, at):
                return None  # `n <= self.buf.shape[0]`: the admission upstream, restated
            if (
                len(expr.ops) == 1
                and isinstance(expr.ops[0], (ast.In, ast.NotIn))
                and isinstance(expr.comparators[0], ast.Attribute)
                and self._own_attribute(expr.comparators[0], func, at)
                and (
                    is_private(expr.comparators[0].attr)
                    or self._filled_by_class(expr.comparators[0], func)
                )
            ):
                # `kind not in self._pending`, `node.id not in self.cache` where the
                # class fills `self.cache` itself: where the object's protocol stands.
                return None
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)) or (
            isinstance(expr, ast.Call) and is_self_call(expr, func)
        ):
            origin = self.view(expr, func, at)
            if origin is not None:
                return origin
            if isinstance(expr, ast.Name):
                return None
        if isinstance(expr, ast.Attribute):
            if is_private(expr.attr) and not (
                isinstance(expr.value, ast.Name) and self_class(expr.value.id, func)
            ):
                return None  # another object's bookkeeping, whoever handed us the object
            if func is not None and self._changed_by_call(expr.value, func, at):
                return None  # what a call the function made left in the object
            if self._counted_by_module(expr):
                return None  # a count the module advances on the object
            if names_step_record(expr.attr):
                return None  # a per-step record, whoever keeps it
            return self._reads_input(expr.value, func, at)
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and (expr.args or expr.keywords)
            and expr.func.attr not in VIEW_METHODS
            and self._via_collaborator(expr.func.value, func, at)
        ):
            # `self.buffer.anchor_bytes(name)`: a question the collaborator the
            # constructor stored answers from its own state; only what is passed
            # to it can be input.
            for arg in [*expr.args, *(k.value for k in expr.keywords)]:
                if self._own_attribute(arg, func, at):
                    continue  # the object asking about itself (`size_of(self.name)`)
                origin = self._reads_input(arg, func, at)
                if origin is not None:
                    return origin
            return None
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, (ast.expr, ast.comprehension, ast.keyword)):
                origin = self._reads_input(child, func, at)
                if origin is not None:
                    return origin
        return None

    def branch_input(self, at: ast.AST, func: Scope | None) -> tuple[Origin, ast.expr, bool] | None:
        """Whether input chooses the branch ``at`` ends (``else: assert False, "unsupported
        role"``): the first test, nearest first, that reads input among those that lead to
        it -- each ``if`` it sits in or in whose ``else`` it sits, however deep, and each
        ``if T: return`` before it in its own block -- with whether the branch is taken when
        that test fails. An ``assert False`` that follows a loop, or that only tests of the
        function's own values lead to, is a marker."""
        chain = self.blocks.get(at, ())
        tests = []
        for block in reversed(chain):
            if block in self.guards:
                tests.append((self.guards[block], False))
            elif block in self.else_guards:
                tests.append((self.else_guards[block], True))
        if func is not None:
            tests.extend(
                (stmt.test, True)
                for stmt in reversed(self._exits_before(func.node, at, chain))
                if self.blocks.get(stmt) == chain
            )
        for test, failed in tests:
            origin = self.reads_input(test, func, at)
            if origin is not None:
                return origin, test, failed
        return None

    def _via_collaborator(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
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
                and self_class(expr.value.id, func) is not None
            ):
                return True
            expr = expr.value
        return False

    def _narrows_normalised(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if dotted(expr.func, through_calls=True) not in ("isinstance", "issubclass"):
            return False
        subject = expr.args[0]
        if not isinstance(subject, ast.Name) or subject.id not in func.params:
            return False
        return any(
            before(stmt, at) and not self.other_branch(bchain, at)
            for stmt, _, bchain in func.bindings.get(subject.id, [])
        )

    def _restates_guard(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        """Is every conjunct of ``expr`` established where the assert stands -- a
        test of an ``if`` it sits in (directly, or through a local bound to that
        test: ``ok = x is not None and n > 1`` ... ``if ok: assert x is not
        None``), the negation of one whose ``else`` it sits in, or of an earlier
        ``if T: return`` (``raise``, ``continue``, ``break``)? Then it cannot fail."""
        if func is None:
            return False
        chain = self.blocks.get(at, ())
        # (block, its test, whether the assert is in its `else:`) for each `if` on the way
        tests = [(b, self.guards[b], False) for b in chain if b in self.guards] + [
            (b, self.else_guards[b], True) for b in chain if b in self.else_guards
        ]
        exits = self._exits_before(func.node, at, chain, fills=True)
        if not tests and not exits:
            return False  # nothing tested on the way: the common case, decided cheaply
        held: set[str] = set()
        for block, test, negated in tests:
            names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
            if any(
                block in bchain and before(stmt, at)
                for name in names
                for stmt, _, bchain in func.bindings.get(name, ())
            ):
                continue  # `else: bias = realize(bias); assert bias is not None`: a new value
            if negated:
                held.update(ast.dump(p) for p in _negated(test))
                continue
            for part in _conjuncts(test):
                if isinstance(part, ast.Name) and part.id not in func.params:
                    binding = self.dominating_binding(part.id, func, at)
                    if binding is not None and isinstance(
                        binding[1], (ast.BoolOp, ast.Compare, ast.UnaryOp)
                    ):
                        held.update(ast.dump(p) for p in _conjuncts(binding[1]))
                held.add(ast.dump(part))
        for stmt in exits:
            if not isinstance(stmt.body[-1], _EXITS):
                # `if x is None: x = self.embed(ids)` above `assert x is not None`: the
                # caller's value is not None or the branch ran; only the fill can fail.
                if self._fills_none(stmt, func, at):
                    held.update(ast.dump(p) for p in _negated(stmt.test))
                continue
            # `if x is None: return` above the assert: past it, `x is not None` holds,
            # unless a name it tests is bound again on the way.
            names = {n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}
            again = [
                (name, bound, value)
                for name in names
                for bound, value, _ in func.bindings.get(name, ())
                if before(stmt, bound) and before(bound, at)
            ]
            if not again:
                held.update(ast.dump(p) for p in _negated(stmt.test))
            elif _is_none_test(stmt.test) and all(
                self._keeps_none(value, name) for name, _, value in again
            ):
                # `x = parse(x)` by a helper that returns None only for None: past `if
                # x is None: return`, still not None.
                held.update(ast.dump(p) for p in _negated(stmt.test))
        return all(
            ast.dump(p) in held or self._set_only_under(p, func, at, held) for p in _conjuncts(expr)
        )

    def _set_only_under(self, part: ast.AST, func: Scope, at: ast.AST, held: set[str]) -> bool:
        """Is ``part`` ``x is not None`` of a local bound once, to ``A if T else None``
        (in the function or one around it), where ``T`` holds (``held``) and none of its
        names is bound again since, and ``A`` is not a value of the caller's that may be
        None itself? The function set ``x`` to None exactly when ``T`` fails: the assert
        narrows its own choice for the type checker."""
        if not _is_none_test(part, ast.IsNot):
            return False
        name = part.left.id
        scope, point = func, at
        scopes = [(scope, point)]  # each scope on the way out, with where the value is read
        while name not in scope.bindings and name not in scope.params and scope.parent:
            scope, point = scope.parent, scope.node
            scopes.append((scope, point))
        bindings = scope.bindings.get(name, ())
        if name in scope.params or len(bindings) != 1:
            return False
        stmt, value, _ = bindings[0]
        if not (
            isinstance(value, ast.IfExp)
            and isinstance(value.orelse, ast.Constant)
            and value.orelse.value is None
            and ast.dump(value.test) in held
        ):
            return False
        tested = {n.id for n in ast.walk(value.test) if isinstance(n, ast.Name)}
        if any(
            self._between(stmt, bound, bchain, read)
            for s, read in scopes
            for t in tested
            for bound, _, bchain in s.bindings.get(t, ())
        ):
            return False  # the flag bound again: it may no longer say what `x` is
        body = value.body
        return (
            isinstance(body, _NOT_NONE)
            or (isinstance(body, ast.Subscript) and _slices(body.slice))
            or self.view(body, scope, stmt) is None
        )

    def _divides_own_product(self, expr: ast.Compare, func: Scope, at: ast.AST) -> bool:
        """Is ``expr`` ``p % k == 0`` where ``p`` is a product one of whose factors is
        ``k`` -- written out, or a local bound to it that alone reaches ``at`` with
        ``k`` not bound again since (``nbytes = prod(shape) * size`` ... ``assert nbytes
        % size == 0``)? Of integers (the sizes and counts such asserts are about) it
        holds for any input: it states the arithmetic, not the caller's value."""
        if not (
            len(expr.ops) == 1
            and isinstance(expr.ops[0], ast.Eq)
            and isinstance(expr.comparators[0], ast.Constant)
            and expr.comparators[0].value == 0
            and isinstance(expr.left, ast.BinOp)
            and isinstance(expr.left.op, ast.Mod)
        ):
            return False
        product, divisor = expr.left.left, expr.left.right
        if not isinstance(divisor, (ast.Name, ast.Constant)):
            return False  # an attribute or a call may read differently each time
        if isinstance(product, ast.Name):
            binding = self.dominating_binding(product.id, func, at)
            if binding is None:
                return False  # a parameter: the caller's value
            since, value, _ = binding
            names = [product.id, divisor.id] if isinstance(divisor, ast.Name) else [product.id]
            if any(
                self._between(since, stmt, bchain, at)
                for name in names
                for stmt, _, bchain in func.bindings.get(name, ())
            ):
                return False  # bound again on some path since: the product may be another
            product = value
        return ast.dump(divisor) in {ast.dump(f) for f in _factors(product)}

    def _between(self, first: ast.AST, stmt: ast.AST, bchain: tuple[int, ...], at: ast.AST) -> bool:
        """May a binding ``stmt`` (in blocks ``bchain``) run after ``first`` and before
        ``at`` -- between them in the file, or in a loop around ``at`` that ``first``
        is outside of, which carries it round to the next pass?"""
        if before(first, stmt) and before(stmt, at):
            return True
        outside = self.blocks.get(first, ())
        return any(
            b in self.loop_blocks and b not in outside
            for b in bchain
            if b in self.blocks.get(at, ())
        )

    def _flag_test(self, flag: ast.AST, func: Scope | None, at: ast.AST) -> Origin | None:
        """Is ``flag`` a local the function bound to a test of its caller's values against
        constants or each other (``paged = page_size > 1``, ``valid = n % batch == 0``,
        ``shared = k.data_ptr() == v.data_ptr()``, ``and``/``or``/``not`` of such), that
        no ``if`` on the way to ``at`` tests? Asserting it (or its negation) asserts that
        test of input, as ``assert page_size > 1`` does. An identity (``a is b``) is no
        test of what a value is; a side the function computed makes it a postcondition;
        and where a branch on the way tests the flag, what the assert says is what the
        branches left -- the function's own case analysis (``if r and w: ... elif r:
        ... else: assert w``)."""
        if func is None or not isinstance(flag, ast.Name) or flag.id in func.params:
            return None
        binding = self.dominating_binding(flag.id, func, at)
        if binding is None:
            return None
        stmt, value, _ = binding
        chain = self.blocks.get(at, ())
        on_the_way = [self.guards.get(b, self.else_guards.get(b)) for b in chain]
        on_the_way += [s.test for s in self._exits_before(func.node, at, chain)]
        if any(
            isinstance(n, ast.Name) and n.id == flag.id
            for t in on_the_way
            if t is not None
            for n in ast.walk(t)
        ):
            return None
        return self._test_of_input(value, func, stmt)

    def _test_of_input(self, test: ast.AST | None, func: Scope, at: ast.AST) -> Origin | None:
        """Is ``test`` comparisons of input with constants or with input (``n > 1``,
        ``mode in ("a", "b")``), or ``and``/``or``/``not`` of them? The first input read."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._test_of_input(test.operand, func, at)
        if isinstance(test, ast.BoolOp):
            found = [self._test_of_input(v, func, at) for v in test.values]
            return found[0] if all(found) else None
        if not isinstance(test, ast.Compare) or any(
            isinstance(op, (ast.Is, ast.IsNot)) for op in test.ops
        ):
            return None
        found = None
        for side in [test.left, *test.comparators]:
            if is_literal(side):
                continue
            origin = self.view(side, func, at)
            if origin is None:
                return None
            found = found or origin
        return found

    def _keeps_none(self, value: ast.AST | None, name: str) -> bool:
        """Is ``value`` a call of a function of this module, handed ``name``, that returns
        None only when that parameter is None (``if value is None: return None``) and
        otherwise a value that is not None by its form (``PREFIX + digest.lower()``)?"""
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return False
        helper = self._module_functions().get(value.func.id)
        if helper is None:
            return False  # not the module's: what it returns is not read here
        return any(
            isinstance(arg, ast.Name) and arg.id == name and _none_only_for_none(helper, param)
            for param, arg in _handed(value, helper).items()
        )

    def _fills_none(self, stmt: ast.If, func: Scope, at: ast.AST) -> bool:
        """Is ``stmt`` ``if x is None:`` (or ``if not x:``) whose body binds ``x`` to the
        function's own value at its top level (``x = self.embed_tokens(ids)``; not
        ``x = fallback``, another input), with ``x`` bound nowhere else between it and
        ``at``? Past it, ``x`` is the caller's value that failed the test, or the fill."""
        name = _none_tested(stmt.test)
        if name is None:
            return False
        filled = False
        for bound, value, bchain in func.bindings.get(name, ()):
            if not (before(stmt, bound) and before(bound, at)):
                continue
            if id(stmt.body) not in bchain:
                return False  # bound again past the fill: what reaches the assert is new
            if value is not None and self.view(value, func, bound) is not None:
                return False  # `x = fallback`: the assert tests another input
            filled = filled or (
                isinstance(bound, (ast.Assign, ast.AnnAssign))
                and value is bound.value  # `x = ...`, not `x, y = ...`
                and any(bound is s for s in stmt.body)
            )
        return filled

    @staticmethod
    def _exits_before(
        func: ast.AST,
        at: ast.AST,
        chain: tuple[int, ...],
        asserts: bool = False,
        fills: bool = False,
    ) -> list[ast.If | ast.Assert]:
        """The ``if T: ... return`` (no ``else``, the body leaving the block) that come
        before ``at`` in each statement list on the way down to it (``chain``); with
        ``asserts``, the ``assert T`` there too -- ``if not T: raise`` spelled for
        ``-O`` to strip; with ``fills``, an ``if x is None:`` or ``if not x:`` (no
        ``else``) whose body does not leave too -- it may fill ``x``."""
        out = []
        body = func.body
        while body is not None:
            inner = None
            for stmt in body:
                if stmt is at:
                    break
                inner = next((b for b in statement_lists(stmt) if id(b) in chain), None)
                if inner is not None:
                    break
                if (at.lineno, at.col_offset) <= (stmt.end_lineno, stmt.end_col_offset):
                    break  # the statement `at` is part of (a call in it), or one past it
                if (
                    isinstance(stmt, ast.If)
                    and not stmt.orelse
                    and (
                        isinstance(stmt.body[-1], _EXITS)
                        or (fills and _none_tested(stmt.test) is not None)
                    )
                ) or (asserts and isinstance(stmt, ast.Assert)):
                    out.append(stmt)
            body = inner
        return out

    def _narrows_conversion(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if dotted(expr.func, through_calls=True) != "isinstance" or not isinstance(
            expr.args[0], ast.Name
        ):
            return False
        name = expr.args[0].id
        if name in func.params:
            return False
        binding = self.dominating_binding(name, func, at)
        value = binding[1] if binding is not None else None
        if not isinstance(value, ast.Call):
            return False
        callee = value.func
        called = (
            callee.attr if isinstance(callee, ast.Attribute) else dotted(callee, through_calls=True)
        )
        if self._accessor_call(value):
            return True  # `backend = get_attn_backend()`: the type the program installed
        return called in CONVERSIONS

    def _own_attribute(self, expr: ast.AST, func: Scope, at: ast.AST) -> bool:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
            if isinstance(expr, ast.Name):
                return self_class(expr.id, func) is not None
        return False

    def view(self, expr: ast.AST | None, func: Scope | None, at: ast.AST) -> Origin | None:
        """Is ``expr``'s value input, or input seen another way (not computed)?"""
        if expr is None:
            return None
        if isinstance(expr, Element):
            return self.view(expr.iterable, func, at)
        if is_environment(expr):
            return Origin("the environment or the command line")
        if isinstance(expr, ast.Name):
            return self.resolve(expr.id, func, at)
        if isinstance(expr, ast.Attribute):
            if func is not None and self._changed_by_call(expr.value, func, at):
                # `self.layers.prepare(x)` on the line above: what the object holds
                # now is what that call left, not what its constructor was given.
                return None
            if self._counted_by_module(expr):
                # `cd.session_ref`, which this module's code advances (`cd.session_ref
                # -= 1`): a count the module keeps on the objects it hands around.
                return None
            if names_step_record(expr.attr):
                # `get_attn_backend().forward_metadata`, `ctx.attn_metadata`: a per-step
                # record wherever it is kept.
                return None
            if expr.attr != "args" and self.is_input_name(expr.attr):
                # `self.config`, `layer.quant_config`: a configuration wherever it is
                # kept. Not `.args`: FX nodes, AST calls and exceptions all have one.
                return Origin(f"`{expr.attr}`, a configuration", config=True)
            if func is not None and isinstance(expr.value, ast.Name):
                owner = self_class(expr.value.id, func)
                if owner is not None:
                    # (A constructor's stores are the class's facts, read as such.)
                    stored = None if func.name == "__init__" else self._stored_here(expr, func, at)
                    if stored is not None:
                        # `self.arch = self.hf_config.architectures[0]` above, in this
                        # function: the value it stored, whatever the class does elsewhere
                        # (read where it was stored: `self.n = self.n + 1` reads the last).
                        found = self.view(stored.value, func, stored)
                        if found is not None:
                            return found
                    source = self.class_input_attr(owner, expr.attr)
                    if source is None or self._callers_tested(func, expr.attr):
                        return None
                    return Origin(f"`self.{expr.attr}`, {source}")
            field = self.built_field(expr, func, at)
            if field is not None:
                # `rec = Pair(x=a, y=b)` ... `rec.x`: the record built in place holds `a`.
                return self.view(field[0], func, field[1])
            if is_private(expr.attr):
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
            found = self.view(expr.body, func, at) or self.view(expr.orelse, func, at)
            if found is None and is_literal(expr.body) and is_literal(expr.orelse):
                # `2 if bidirectional else 1`: the input picks which constant it is.
                return self.view(expr.test, func, at)
            return found
        if (
            isinstance(expr, ast.Compare)
            and all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops)
            and any(isinstance(c, ast.Constant) and c.value is None for c in expr.comparators)
        ):
            # `has_mask = mask is not None`: whether the caller passed one, a fact
            # about the input and not a value of the function's own.
            return self.view(expr.left, func, at)
        if (
            isinstance(expr, ast.BinOp)
            and func is not None
            and self._arithmetic_of_input(expr, func, at)
        ):
            # `width = (2 if bidirectional else 1) * hidden`: sizes worked out from
            # parameters by arithmetic alone.
            return next((o for e in (expr.left, expr.right) if (o := self.view(e, func, at))), None)
        if isinstance(expr, ast.BoolOp):
            return next((o for v in expr.values if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return next((o for v in expr.elts if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            if reads_environment(expr):
                return Origin("the environment or the command line")
            gens = expr.generators
            # `[n.node for n in nodes]` reads the argument; `[fmt(x) for x in xs]`
            # and a filtered comprehension compute something new.
            if len(gens) == 1 and not gens[0].ifs and reads_target(expr.elt, gens[0].target):
                return self.view(gens[0].iter, func, at)
            return None
        if isinstance(expr, ast.Call):
            if is_parse_args(expr):
                return Origin("the command line (`parse_args()`)")
            callee = expr.func
            called = dotted(callee, through_calls=True)
            if (
                called in VIEW_BUILTINS
                or called in JOINING_CALLS
                or called in REDUCING_BUILTINS
                or called in DTYPE_FACTS
            ):
                return next((o for a in expr.args if (o := self.view(a, func, at))), None)
            if splits_tensor(expr):
                return None  # pieces the function sized: their shapes are its own
            if self._accessor_call(expr):
                # `get_parallel()`, `is_hip()`: a process-wide accessor another module
                # defines -- the configuration, the platform, the environment.
                return Origin(f"`{callee.id}()`, process-wide settings another module keeps")
            parsed = self._parsed(expr, func, at)
            if parsed is not None:
                return parsed
            handed = self._handed_back(expr, func, at)
            if handed is not None:
                return handed
            read = self._read_back(expr, func, at)
            if read is not None:
                return read
            if isinstance(callee, ast.Attribute) and callee.attr.startswith("from_"):
                # `Engine.from_engine_args(args)`: an object a factory builds from what
                # it is given alone is that input, built.
                given = [
                    a for a in [*expr.args, *(k.value for k in expr.keywords)] if not is_literal(a)
                ]
                found = [self.view(a, func, at) for a in given]
                if found and all(o is not None for o in found):
                    return Origin(f"`{callee.attr}(...)` of {found[0].what}")
            if isinstance(callee, ast.Attribute) and callee.attr.startswith(_ASKING):
                # `quant_config.get_quant_method(layer, prefix)`: a question the
                # configuration answers, whatever of the caller's it names.
                asked = self.view(callee.value, func, at)
                if asked is not None and asked.config:
                    return Origin(f"`{callee.attr}(...)` of {asked.what}", config=True)
            # What a function makes of a configuration alone is configuration:
            # `use_mla_backend(server_args)`, `backends_of(resolved(server_args))`.
            # A function of data and a config (`rope_index(ids, hf_config=...)`)
            # computes something new.
            passed = [
                a for a in [*expr.args, *(k.value for k in expr.keywords)] if not is_literal(a)
            ]
            origins = [self.view(a, func, at) for a in passed]
            if origins and all(o is not None and o.config for o in origins):
                return origins[0]
            if isinstance(callee, ast.Attribute) and (
                (not expr.args and not expr.keywords)
                or callee.attr in VIEW_METHODS
                or callee.attr in REDUCING_METHODS
            ):
                owner = (
                    self_class(callee.value.id, func)
                    if isinstance(callee.value, ast.Name)
                    else None
                )
                if owner is not None:
                    if not expr.args and not expr.keywords and is_record(owner):
                        # `self.resolved_head_dim()` of a dataclass: its fields, the
                        # caller's arguments, worked out.
                        return Origin(
                            f"`self.{callee.attr}()`, worked out from the record's fields"
                        )
                    return None  # the object's own method computes something
                if (
                    expr.args
                    and callee.attr == "get"
                    and self._via_collaborator(callee.value, func, at)
                ):
                    return None
                if (
                    callee.attr == "get"
                    and len(expr.args) == 1
                    and not expr.keywords
                    and self._written_table(callee.value, func)
                ):
                    # `_SCORING.get(scoring_func.lower())`, None where the key is
                    # missing: whether there is an entry is the caller's key's doing.
                    return self.view(expr.args[0], func, at)
                return self.view(callee.value, func, at)
        return None

    def _handed_back(self, call: ast.Call, func: Scope | None, at: ast.AST) -> Origin | None:
        """``pad_vocab_size(self.vocab_size, self.padding_size)``, ``self._tensor(index)``:
        a helper this module defines (a function, or a method of the object's class)
        that returns nothing but its parameters worked out hands back what it was
        given; when every argument not a literal is input, so is the result."""
        helper, method = self._helper_named(call, func)
        if helper is None:
            return None
        memo = self.__dict__.setdefault("_hands_back", {})
        if id(helper) not in memo:
            memo[id(helper)] = returns_its_arguments(
                helper, skip_first=method and not has_decorator(helper, "staticmethod")
            )
        if not memo[id(helper)]:
            return None
        given = [a for a in [*call.args, *(k.value for k in call.keywords)] if not is_literal(a)]
        found = [self.view(a, func, at) for a in given]
        if found and all(o is not None for o in found):
            return Origin(
                f"{found[0].what}, handed back by `{helper.name}`", config=found[0].config
            )
        return None

    def _read_back(self, call: ast.Call, func: Scope | None, at: ast.AST) -> Origin | None:
        """``index, content, stop = _read_until_stop(index, text, stops)``: a helper this
        module defines that reads nothing but what it is handed and returns pieces of a
        parameter hands back that argument, cut where it says; when the caller passes
        input for such a parameter, what comes back is input read."""
        helper, method = self._helper_named(call, func)
        if helper is None:
            return None
        skip_first = method and not has_decorator(helper, "staticmethod")
        memo = self.__dict__.setdefault("_reads_pieces", {})
        if id(helper) not in memo:
            memo[id(helper)] = pieces_handed_back(helper, skip_first=skip_first)
        handed = _handed(call, helper, skip_first=skip_first)
        for name in sorted(memo[id(helper)]):
            found = self.view(handed.get(name), func, at)
            if found is not None:
                return Origin(f"{found.what}, read by `{helper.name}`", config=found.config)
        return None

    def _written_table(self, expr: ast.AST, func: Scope | None) -> bool:
        """Is ``expr`` a module-level name bound once, to a dict display with entries
        (``_KINDS = {"sigmoid": 0, "softmax": 1}``), and not in the function or those
        around it? A table the module wrote down: what a key finds there is fixed by
        the key. (An empty one is filled as the program runs: a registry.)"""
        if not isinstance(expr, ast.Name):
            return False
        scope = func
        while scope is not None:
            if expr.id in scope.params or expr.id in scope.bindings:
                return False
            scope = scope.parent
        values = self.module_bindings.get(expr.id, ())
        return (
            len(values) == 1
            and isinstance(values[0], ast.Dict)
            and bool(values[0].keys)
            and all(k is not None for k in values[0].keys)
            and expr.id not in self._changed_tables()
        )

    def _changed_tables(self) -> set[str]:
        """The names whose items a statement of the module stores or deletes, or changes
        by a call standing alone (``CHARSETS[name] = ...`` in ``add_charset``,
        ``_REGISTRY.update(...)``): tables the program fills as it runs, whatever the
        display they start from. (A ``pop`` whose result is bound is not seen.) Worked
        out once per module, from its statements, when a table is first asked about."""
        found = self._changed
        if found is None:
            found = set()
            for stmt in walk_statements(self.tree):
                if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                    targets = (
                        stmt.targets
                        if isinstance(stmt, (ast.Assign, ast.Delete))
                        else [stmt.target]
                    )
                    for target in targets:
                        for node in ast.walk(target):
                            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
                                found.add(node.value.id)
                elif (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Attribute)
                    and stmt.value.func.attr in _FILLING_METHODS
                    and isinstance(stmt.value.func.value, ast.Name)
                ):
                    found.add(stmt.value.func.value.id)
            self._changed = found
        return found

    def _helper_named(self, call: ast.Call, func: Scope | None):
        """The function of this module, or the method of the object's class, that
        ``call`` names (defined once), with whether it is a method."""
        callee = call.func
        if isinstance(callee, ast.Name):
            return self._module_functions().get(callee.id), False
        if isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name):
            owner = self_class(callee.value.id, func)
            if owner is not None:
                return _method_of(owner, callee.attr), True
        return None, False

    def built_field(
        self, expr: ast.Attribute, func: Scope | None, at: ast.AST
    ) -> tuple[ast.expr, ast.AST] | None:
        """``shape = AttentionShape(num_heads=q.shape[1], ...)`` ... ``shape.num_heads``:
        a field read off a local the function bound to a class's constructor (a capitalised
        name) that was handed a keyword of that name is what it was handed -- the keyword's
        value, with the statement that bound the local. A field the constructor was not
        handed by name, or the object itself, is the constructor's business."""
        if func is None or not isinstance(expr.value, ast.Name) or expr.value.id in func.params:
            return None
        binding = self.dominating_binding(expr.value.id, func, at)
        if binding is None or not isinstance(binding[1], ast.Call):
            return None
        stmt, call, _ = binding
        callee = call.func
        name = callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
        if not name[:1].isupper():
            return None
        passed = [k.value for k in call.keywords if k.arg == expr.attr]
        return (passed[0], stmt) if passed else None

    def _module_functions(self) -> dict[str, ast.FunctionDef]:
        """The module's own top-level functions, by name (a name defined twice: neither)."""
        found = self.__dict__.get("_top_functions")
        if found is None:
            found = {}
            twice = set()
            for stmt in self.tree.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if stmt.name in found:
                        twice.add(stmt.name)
                    found[stmt.name] = stmt
            for name in twice:
                del found[name]
            self._top_functions = found
        return found

    def _stored_here(self, expr: ast.Attribute, func: Scope, at: ast.AST) -> ast.AST | None:
        """The last ``self.<attr> = value`` statement of ``func`` that every path to ``at``
        passes through (not in a branch or loop ``at`` is outside of), if any."""
        memo = self.__dict__.setdefault("_stores_memo", {})
        stores = memo.get(id(func.node))
        if stores is None:
            stores = memo[id(func.node)] = _attribute_stores(func.node)
        candidates = stores.get((expr.value.id, expr.attr))
        if not candidates:
            return None
        chain = self.blocks.get(at, ())
        best = None
        for stmt in candidates:
            schain = self.blocks.get(stmt, ())
            if before(stmt, at) and chain[: len(schain)] == schain:
                best = stmt  # in source order: the last that dominates wins
        return best

    def _parsed(self, call: ast.Call, func: Scope | None, at: ast.AST) -> Origin | None:
        """``re.match(r"(\\d+)", line)``, ``PAT.search(line)``, ``Layout.parse(kv_layout)``:
        input read by a parser with nothing but literals beside it is that input.

        The receiver of a method (a compiled pattern, a parser) is the reader, not
        what is read; an argument the function computed (``re.match(p, render(x))``)
        makes the result its own.
        """
        callee = call.func
        name = dotted(callee) or getattr(callee, "attr", "")  # `re.compile(p).match`: `match`
        if name.rpartition(".")[2] not in PARSING_CALLS:
            return None
        given = [a for a in [*call.args, *(k.value for k in call.keywords)] if not is_literal(a)]
        found = [self.view(a, func, at) for a in given]
        if found and all(o is not None for o in found):
            return Origin(f"{found[0].what}, parsed by `{name}`")
        return None

    def resolve(self, name: str, func: Scope | None, at: ast.AST) -> Origin | None:
        if self._set_by_module(name, func, at):
            # `_current_vllm_config`, assigned by the module's own setter through
            # `global`: where the module's protocol stands, whatever its name says.
            return None
        if self.is_input_name(name) and not self._shadowed(name, func, at):
            return Origin(f"`{name}`, a configured input name", config=name != "args")
        if name in self._environment_modules() and self._only_imported(name, func):
            # `import vllm.envs as envs`, `from lmdeploy.pytorch import envs`: the
            # engine's module of environment variables, read at import or on each ask.
            return Origin(f"`{name}`, the environment variables the engine reads")
        if func is None:
            if self.env_global(name):
                return Origin(
                    f"`{name}`, read from the environment, the command line or the platform"
                )
            return None
        if name == func.self_name:
            return None
        for comp, value in self.comprehension_bindings.get(name, ()):
            if inside(at, comp) and self.owner.get(comp) is func:
                return self._binding_origin(name, func, comp, value)
        binding = self.dominating_binding(name, func, at)
        if (
            binding is not None
            and name not in func.params
            and name in self.built.get(id(func.node), ())
        ):
            return None  # a list or set the function fills in itself
        if binding is not None:
            stmt, value, _ = binding
            if name in func.params and renormalises(name, value):
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
                if not before(stmt, at) and not self.shares_loop(bchain, at):
                    continue  # assigned only after the assert, and no loop comes back
                origin = self._binding_origin(name, func, stmt, value)
                if origin is not None:
                    return origin
            return None
        if func.parent is not None:
            return self.resolve(name, func.parent, func.node)  # a closure's free name
        return self.resolve(name, None, at)

    def _imported(self, name: str) -> bool:
        """Is ``name`` bound by an import at module level (and nowhere else)?"""
        values = self.module_bindings.get(name)
        return bool(values) and all(v is None for v in values) and name in self._import_names()

    def _environment_modules(self) -> set[str]:
        """The names the module's imports bind to a module called ``envs`` -- where an
        engine keeps its environment variables (``import vllm.envs as envs``, ``from
        sglang.srt.environ import envs``, ``from lmdeploy.pytorch import envs as
        _envs``), at module level or in a function."""
        found = self.__dict__.get("_env_modules")
        if found is None:
            source = self._source
            if source is not None and "envs" not in source.text:
                found = set()  # no import spells the name
            else:
                # Statements only: an import is one, and a module's expressions are most
                # of its nodes (a walk of every node cost the rule half its time again).
                found = {
                    alias.asname or alias.name
                    for node in walk_statements(self.tree)
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    for alias in node.names
                    if alias.name.rpartition(".")[2] == "envs"
                    and (alias.asname is not None or "." not in alias.name)
                }
            self._env_modules = found
        return found

    def _only_imported(self, name: str, func: Scope | None) -> bool:
        """Is ``name``, where ``func`` reads it, bound by imports alone -- in the function
        and those around it, and at module level?"""
        scope = func
        while scope is not None:
            if any(
                not isinstance(stmt, (ast.Import, ast.ImportFrom))
                for stmt, _, _ in scope.bindings.get(name, ())
            ):
                return False
            scope = scope.parent
        return all(v is None for v in self.module_bindings.get(name, ()))

    def _import_names(self) -> set[str]:
        if self._imports is None:
            self._imports = {
                bound_name(alias)
                for stmt in self.tree.body
                if isinstance(stmt, (ast.Import, ast.ImportFrom))
                for alias in stmt.names
            }
        return self._imports

    def is_input_name(self, name: str) -> bool:
        return name in self.inputs or (
            name.endswith(_CONFIG_SUFFIX) and len(name) > len(_CONFIG_SUFFIX)
        )

    def _binding_origin(self, name, func, stmt, value) -> Origin | None:
        key = (id(stmt), name)
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            return self.view(value, func, stmt)
        finally:
            self._busy.discard(key)

    def _shadowed(self, name: str, func: Scope | None, at: ast.AST) -> bool:
        """An `inputs` name the function re-binds to its own value (`args = self.codegen_args()`)."""
        if func is None or name in func.params:
            return False
        binding = self.dominating_binding(name, func, at)
        if binding is None:
            return False
        stmt, value, _ = binding
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return False  # `from torch._inductor import config` is the config
        return self._binding_origin(name, func, stmt, value) is None


def _method_of(klass: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method ``name`` defined in ``klass``'s own body, once."""
    found = [
        s
        for s in klass.body
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == name
    ]
    return found[0] if len(found) == 1 else None


def _attribute_stores(func: ast.AST) -> dict[tuple[str, str], list[ast.AST]]:
    """``(name, attr) -> [statement]`` for each ``name.attr = value`` in ``func``'s own
    statements (not those of a function or class defined inside it), in source order."""
    found: dict[tuple[str, str], list[ast.AST]] = {}
    stack = list(reversed(func.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    found.setdefault((t.value.id, t.attr), []).append(stmt)
        for block in reversed(statement_lists(stmt)):
            stack.extend(reversed(block))
    return found


# The methods by which a dict's items change in place.
_FILLING_METHODS = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})

# The methods by which a caller asks a configuration what it says (`get_num_layers`,
# `is_multimodal`), not those by which it hands the configuration data to work on.
_ASKING = ("get_", "is_", "has_", "use_", "uses_", "supports_")


def _none_tested(test: ast.expr) -> str | None:
    """The name ``x`` of ``x is None`` or ``not x``: what a fill of ``x`` may follow."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    elif _is_none_test(test):
        test = test.left
    return test.id if isinstance(test, ast.Name) else None


def _handed(call: ast.Call, helper: ast.AST, *, skip_first: bool = False) -> dict[str, ast.expr]:
    """Each of ``helper``'s parameters ``call`` hands an argument, by keyword or by place
    (``skip_first``: a method's ``self``); no place is read past a ``*args``, which may fill
    any of them."""
    positional = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
    handed: dict[str, ast.expr] = {}
    if not any(isinstance(a, ast.Starred) for a in call.args):
        handed.update(zip(positional[1:] if skip_first else positional, call.args, strict=False))
    handed.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return handed


def _is_none_test(test: ast.expr, op: type[ast.cmpop] = ast.Is) -> bool:
    """``x is None`` (``op`` ``ast.IsNot``: ``x is not None``), of a name."""
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], op)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    )


# Expressions that are not None by their form.
_NOT_NONE = (ast.BinOp, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Compare)


def _none_only_for_none(helper: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """Does ``helper`` return None only under ``if <param> is None:``, every other
    ``return`` an expression not None by its form, and never fall off its end? (A
    generator or a coroutine is never None at all; read the same way, it is only
    refused more often than it need be.)"""
    body = helper.body
    if not body or not isinstance(body[-1], (ast.Return, ast.Raise)):
        return False
    allowed: set[int] = set()
    for node in ast.walk(helper):
        if isinstance(node, ast.If) and _is_none_test(node.test) and node.test.left.id == param:
            allowed.update(id(s) for s in node.body if isinstance(s, ast.Return))
    for node in ast.walk(helper):  # a nested function's `return None` too: refused
        if not isinstance(node, ast.Return) or id(node) in allowed:
            continue
        value = node.value
        if not (
            isinstance(value, _NOT_NONE)
            or (isinstance(value, ast.Constant) and value.value is not None)
        ):
            return False
    return bool(allowed)


def _factors(expr: ast.AST | None) -> list[ast.AST]:
    """``a * (b * c)`` -> ``[a, b, c]``; anything else is its own one factor."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return [*_factors(expr.left), *_factors(expr.right)]
    return [expr] if expr is not None else []


def _slices(index: ast.AST) -> bool:
    """``x[a:b]``, ``x[:, :1]``: a slice of a sequence or a tensor is never None."""
    if isinstance(index, ast.Tuple):
        return any(isinstance(e, ast.Slice) for e in index.elts)
    return isinstance(index, ast.Slice)


def _asks_type(test: ast.AST) -> bool:
    """Is ``test`` a type test alone -- ``isinstance``/``issubclass``, or ``and``/``or``/
    ``not`` of them?"""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _asks_type(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(_asks_type(v) for v in test.values)
    return isinstance(test, ast.Call) and dotted(test.func) in ("isinstance", "issubclass")


_FORM_ATTRS = frozenset({"ndim", "dtype", "device", "is_cuda", "layout"})
_DTYPE_MODULES = frozenset({"torch", "np", "numpy", "tl"})
_FORM_METHODS = frozenset({"dim", "is_contiguous", "ndimension", "get_device"})


def _asks_form(test: ast.AST) -> bool:
    """Does ``test`` ask only what form its values take -- a type, a rank, a layout, a
    dtype, a device -- and nothing a size or a value decides? A constructor fixes each of
    those whatever sizes it was handed."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _asks_form(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(_asks_form(v) for v in test.values)
    if _asks_type(test):
        return True
    if isinstance(test, ast.Call):
        return isinstance(test.func, ast.Attribute) and test.func.attr in _FORM_METHODS
    if not isinstance(test, ast.Compare):
        return False
    sides = [test.left, *test.comparators]
    return all(_form_side(side) for side in sides) and any(
        not isinstance(side, ast.Constant) for side in sides
    )


def _form_side(side: ast.AST) -> bool:
    """One side of a comparison ``_asks_form`` accepts: a literal, a dotted constant
    (``torch.float8_e4m3fn``), or a form read off a value (``x.dim()``, ``x.dtype``,
    ``len(x.shape)``)."""
    if isinstance(side, ast.Constant):
        return True
    if isinstance(side, (ast.Tuple, ast.List, ast.Set)):
        return all(_form_side(e) for e in side.elts)
    node = side
    while isinstance(node, ast.Attribute):  # `x.dtype`, `x.device.type`
        if node.attr in _FORM_ATTRS:
            return True
        node = node.value
    if isinstance(side, ast.Call):
        if isinstance(side.func, ast.Attribute) and side.func.attr in _FORM_METHODS:
            return True
        return (
            dotted(side.func) == "len"
            and len(side.args) == 1
            and isinstance(side.args[0], ast.Attribute)
            and side.args[0].attr == "shape"
        )
    # `torch.int32`, `torch.bfloat16`: a dtype spelled off the module that names them
    return (
        isinstance(side, ast.Attribute)
        and isinstance(side.value, ast.Name)
        and side.value.id in _DTYPE_MODULES
    )


def _conjuncts(test: ast.AST) -> list[ast.AST]:
    """``a and (b and c)`` -> ``[a, b, c]``."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [p for v in test.values for p in _conjuncts(v)]
    return [test]


_EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_FLIPPED = {
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}


def _negated(test: ast.expr) -> list[ast.expr]:
    """What holds when ``test`` is false, as conjuncts: ``not (a or b)`` is ``not a``
    and ``not b``; ``x is None`` false is ``x is not None``."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _conjuncts(test.operand)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [p for v in test.values for p in _negated(v)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _FLIPPED:
        flipped = ast.Compare(test.left, [_FLIPPED[type(test.ops[0])]()], test.comparators)
        return [flipped]
    return [ast.UnaryOp(ast.Not(), test)]
