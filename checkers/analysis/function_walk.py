"""One function's body walked once: the calls it makes and what they are handed, for the
details of a module's summary (``checkers.analysis.functions``).

``FunctionWalker`` visits the statements in order, with the dict state of each path
(``dict_paths.DictPaths``) and the unit forms of its returns (``unit_forms.UnitForms``); here
are the statements themselves, the expressions and the calls: each call's spelling, position,
keywords, the origins of its arguments, the ints among them, the ``if`` on a parameter around
it; and the reads pass published-keys asks of the file being checked (``read_only``).
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from .call_patterns import _ROOT, CONTEXT
from .dict_paths import _DEAD, DictPaths, _copy, _join
from .functions import (
    _DEFS,
    _HEADER_FIELDS,
    HOST_COPIES,
    HOST_COPY,
    HOST_TENSOR,
    NOT_NONE,
    UNKNOWN,
    _const_key,
    _header_end_of,
)
from .int_evidence import on_host
from .names import dotted
from .unit_forms import UnitForms, _annotated_int
from .walk import child_fields, statement_lists

if TYPE_CHECKING:
    from .functions import _Summariser

_ORIGIN_TYPES = (ast.Name, ast.Attribute, ast.Call)
# A method that asks a question of its object (`is_decode()`, `has_prefix()`): its answer is
# the object's, however often it is asked.
_ASKS = re.compile(r"_*(?:is|has|can|should|does)_")
# A tensor's methods that may put its data elsewhere, the keywords that say where, and
# torch's functions that make a tensor of no input (on the default device).
_MOVES = frozenset({"to", "cuda", "npu", "xpu", "pin_memory", "new_tensor", "new_empty"})
_MOVES |= frozenset({"new_zeros", "new_ones", "new_full"})
_PLACING = frozenset({"device", "out"})
_CONSTRUCTORS = frozenset({"tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones"})
_CONSTRUCTORS |= frozenset({"full", "arange", "rand", "randn", "randint", "linspace", "eye"})
_UNBOUND = object()
_COPIES_TO_HOST = frozenset(HOST_COPIES)


def _agreed(prior, new):
    """What every binding of a local says, ``new`` its latest's: that, where each earlier one
    (``prior``; ``_UNBOUND`` before the first) said the same; else None."""
    return new if prior in (_UNBOUND, new) else None


def _merged(prior, new):
    """A local's sources over its bindings: every binding's names, or None once one's are
    unknown (``prior`` ``_UNBOUND`` for its first)."""
    if prior is _UNBOUND:
        return new
    if prior is None or new is None:
        return None
    return tuple(dict.fromkeys((*prior, *new)))


# Statements whose every expression runs when they do (`_not_none_past` reads them whole).
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
# What runs only on some evaluations of its expression: a conditional expression's ways, an
# `and`/`or`'s later operands, a lambda's or a comprehension's body.
_LAZY = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp)
_LAZY += (ast.GeneratorExp,)
# The operators `None` raises TypeError under (not `|`: `int | None` is a type).
_NONE_RAISES = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)
_NONE_RAISES += (ast.MatMult, ast.LShift, ast.RShift, ast.BitAnd, ast.BitXor)


class FunctionWalker(UnitForms, DictPaths):
    """One pass over a function's statements: calls, dict paths, fills, carriers, unit forms."""

    def __init__(self, summariser: _Summariser, node, self_name: str, positional) -> None:
        self.s = summariser
        self.node = node
        self.self_name = self_name
        self.params = {name: i for i, name in enumerate(positional)}
        for a in node.args.kwonlyargs:
            self.params[a.arg] = a.arg
        # Names a parameter or an assignment binds here hide an import of the same name.
        self.shadowed: set[str] = set(self.params)
        self.calls: list[tuple] = []
        self.paths: list[tuple] = []
        self.has_dict_return = False
        self.carriers: list[tuple] = []
        self.unit_forms: list[tuple] = []
        # (parameter, name) for each parameter bound unchanged to a name (`self.num_blocks =
        # blocks`): what a units vocabulary infers an undeclared parameter's unit from.
        self.sinks: list[tuple] = []
        self.reads: list[tuple] = []
        self.guards: set[str] = set()
        self._key_guard = 0  # inside a `try` whose handler catches KeyError
        self.local_aliases: dict[str, str] = {}  # imports inside the function
        self._captured_names: frozenset[str] | None = None
        self._int_params: set[str] = set()
        self._host_roots: set[str] = set()  # names past a "return unless on the host" test
        # local -> the names of the data it was computed from (`_computed_from`), merged over
        # every binding; None where one binding's were not known.
        self._sources: dict[str, tuple[str, ...] | None] = {}
        self._guards: list[tuple[str, bool]] = []  # enclosing `if param:` tests
        # The variables of the comprehensions being walked (name -> how many bind it): their
        # own, not the function's locals or parameters of those names.
        self._own: dict[str, int] = {}
        self._past: tuple = ()  # what holds past the last `if` (one of whose ways leaves)
        # Names the statements walked so far bind: a parameter among them may no longer hold
        # what the caller passed.
        self._rebound: set[str] = set()
        self._tail: tuple = ()  # what the last block's early exits left holding at its end
        self._spread_name: str | bool | None = False  # `_spread`'s answer, once asked
        # param -> {key: (line, certain)}; a param handed on or updated from elsewhere is open
        self._fills: dict[object, dict[str, tuple[int, bool]]] = {}
        self._open_params: set = set()
        self._depth = 0  # nesting of conditional blocks, for "every path" of a fill
        self._locals: dict[str, ast.expr] = {}  # the last value bound to each local (unit forms)
        # The reads pass: a local an `if`'s two ways bound apart -> (the test, as dumped; what
        # each way bound; the names the test reads), and the tests a read sits under, each
        # with the value it has there. A read under the test that chose is that way's.
        self._chosen: dict[str, tuple] = {}
        self._conds: list[tuple[ast.expr, bool]] = []
        self._cond_keys: dict[int, tuple] = {}  # id(test) -> (its place, `_eq_of`), once asked
        self._marks: list[int] = []  # the reads pass: `_conds`' length where each block began
        self._stale: set[int] = set()  # ids of guards that tested a local since bound again
        # local -> the parameter whose device it is on, over every binding (`_param_of`)
        self._of_param: dict[str, str | None] = {}
        # local -> the attribute every binding of it was (`n = meta.num_prefills`), for a
        # test of the local to be read as one of the attribute (`_tested`); None otherwise
        self._attr_of: dict[str, str | None] = {}
        self._aliased_by: dict[str, list[str]] = {}  # a name -> locals bound to its attributes
        # local -> (the guards its binding's choice says, whether `is not None` says them)
        # (`_chosen_by`); None where a binding says nothing
        self._given: dict[str, tuple | None] = {}

    def read_only(self, lines: frozenset[int]) -> None:
        """The reads pass: assignments (what a read's name was bound to), ``try`` blocks that
        catch ``KeyError``, and the expressions of the statements spelling a read or a guard."""
        stack = [(stmt, False) for stmt in reversed(self.node.body)]
        while stack:
            stmt, in_try = stack.pop()
            if type(stmt) is _Else:
                stmt.enter(self)
                continue
            if type(stmt) is _Join:
                stmt.join(self)
                continue
            if type(stmt) is _Block:
                stmt.cross(self)
                continue
            kind = type(stmt)
            if kind in _DEFS or kind is ast.ClassDef:
                continue
            end = _header_end_of(stmt)
            if any(line in lines for line in range(stmt.lineno, end + 1)):
                self._key_guard = 1 if in_try else 0
                for field in _HEADER_FIELDS:
                    child = getattr(stmt, field, None)
                    if isinstance(child, ast.expr):
                        self.expr(child)
                    elif type(child) is list:
                        for item in child:
                            if isinstance(item, ast.expr):
                                self.expr(item)
                if kind in (ast.With, ast.AsyncWith):
                    for item in stmt.items:
                        self.expr(item.context_expr)
            # What the statement binds, once its own expressions are read (`x = x["next"]`
            # reads the old `x`): a plain or annotated assignment of a name binds its value;
            # any other target -- a `for`, a `with ... as`, a tuple -- rebinds to something
            # this pass does not follow.
            if kind is ast.Assign:
                for target in stmt.targets:
                    if type(target) is ast.Name:
                        self._bind(target.id, stmt.value)
                    else:
                        self._unbind(target)
            elif kind is ast.AnnAssign:
                if type(stmt.target) is ast.Name and stmt.value is not None:
                    self._bind(stmt.target.id, stmt.value)
            elif kind in (ast.For, ast.AsyncFor):
                self._unbind(stmt.target)
            elif kind in (ast.With, ast.AsyncWith):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        self._unbind(item.optional_vars)
            catches = kind is ast.Try and any(_catches_key_error(h) for h in stmt.handlers)
            blocks = []
            if kind is ast.If:
                # The body runs with the test true, the `else` with it false. The two are
                # exclusive (an `elif` is an `else`): what the body binds cannot reach the
                # `else`, and either may reach what follows.
                # Without an `else`, the way the test is false binds nothing.
                test, holds = _strip_not(stmt.test)
                self._conds.append((test, holds))
                other = _Else(self._locals, test, holds)
                blocks.append((other, in_try))
                blocks.extend(_Block.around(stmt.orelse, in_try))
                blocks.append((_Join(other), in_try))
                past = _past_cond(stmt)
                if past is not None:
                    blocks.append((_Block(past), in_try))  # for the rest of this block
            else:
                blocks.extend(_Block.around(getattr(stmt, "orelse", ()) or (), in_try))
            # In the full walk's order: a `try`'s handlers before its `finally`.
            for handler in getattr(stmt, "handlers", ()) or ():
                blocks.extend(_Block.around(handler.body, in_try))
            blocks.extend(_Block.around(getattr(stmt, "finalbody", ()) or (), in_try))
            for case in getattr(stmt, "cases", ()) or ():
                blocks.extend(_Block.around(case.body, in_try))
            body = getattr(stmt, "body", None)
            if type(body) is list:
                blocks = _Block.around(body, in_try or catches) + blocks
            stack.extend(reversed(blocks))

    def _bind(self, name: str, value) -> None:
        self._locals[name] = value
        self._forget_choices(name)

    def _unbind(self, target) -> None:
        """Forget what the names a binding target spells were bound to (not a subscript's or
        an attribute's object: `d["k"] = v` and `obj.x = v` leave `d` and `obj` bound)."""
        stack = [target]
        while stack:
            node = stack.pop()
            if type(node) is ast.Name:
                self._locals.pop(node.id, None)
                self._forget_choices(node.id)
            elif type(node) in (ast.Tuple, ast.List):
                stack.extend(node.elts)
            elif type(node) is ast.Starred:
                stack.append(node.value)

    def _forget_choices(self, name: str) -> None:
        """``name`` rebound: a choice of its value, or one a test reading it made, no longer
        tells what a later read under that test sees."""
        if self._chosen:
            self._chosen = {
                local: choice
                for local, choice in self._chosen.items()
                if local != name and name not in choice[3]
            }

    def run(self) -> None:
        args = self.node.args
        self._int_params = {
            a.arg
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
            if a.annotation is not None and _annotated_int(a.annotation)
        }
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                self.shadowed.add(extra.arg)
        self.block(self.node.body, {})

    def fills(self) -> tuple:
        out = []
        for param, keys in self._fills.items():
            out.append(
                (
                    param,
                    tuple((k, line, certain) for k, (line, certain) in keys.items()),
                    param in self._open_params,
                )
            )
        for param in self._open_params - self._fills.keys():
            out.append((param, (), True))
        return tuple(out)

    # -- statements ----------------------------------------------------------

    def block(self, stmts, state):
        held = len(self._guards)
        conds = len(self._conds)
        for stmt in stmts:
            if state is _DEAD:
                # Unreachable code still calls what it spells; a chain through it is the
                # code's own claim, so calls are recorded, dicts are not.
                self.exprs_of(stmt)
                continue
            state = self.stmt(stmt, state)
            if type(stmt) is ast.If and state is not _DEAD:
                # Past `if c: return ...`, the rest of the block runs only where `c` is false
                # (and past an `else` that leaves, only where it is true).
                self._guards.extend(self._past)
                past = _past_cond(stmt)
                if past is not None:
                    self._conds.append(past)  # a read's test too, as the reads pass keeps it
            elif type(stmt) in _SIMPLE and state is not _DEAD:
                # Past `n = base + offset`, `offset` was not None: had it been, it raised.
                self._hold(self._not_none_past(stmt))
            elif type(stmt) is ast.Assert and state is not _DEAD:
                # Past `assert p is not None`, as past `if p is None: raise`, the test held;
                # its message runs only where it did not.
                self._hold(self._not_none_past(stmt.test))
                self._hold(self._holding(stmt.test, True))
        # What holds at the block's end from its own early exits, for an `if` around it.
        self._tail = tuple(self._guards[held:])
        del self._guards[held:]
        del self._conds[conds:]
        return state

    def stmt(self, stmt, state):
        kind = type(stmt)
        if kind in _DEFS:
            for dec in stmt.decorator_list:
                self.expr(dec)
            self.shadowed.add(stmt.name)
            return state
        if kind is ast.ClassDef:
            self.shadowed.add(stmt.name)
            return state
        if kind is ast.Return:
            if stmt.value is not None:
                self.expr(stmt.value)
                self.ret(stmt, state)
            return _DEAD
        if kind is ast.Raise:
            self.exprs_of(stmt)
            return _DEAD
        if kind is ast.Assign:
            self.expr(stmt.value)
            targets = stmt.targets
            single = targets[0].id if len(targets) == 1 and type(targets[0]) is ast.Name else None
            prior = self._sources.get(single, _UNBOUND)
            prior_param = self._of_param.get(single, _UNBOUND)
            prior_attr = self._attr_of.get(single, _UNBOUND)
            prior_given = self._given.get(single, _UNBOUND)
            param = self._param_of(stmt.value)
            for target in targets:
                self.target_expr(target)
            if single:
                self._sources[single] = _merged(prior, self._computed_from(stmt.value))
                self._of_param[single] = _agreed(prior_param, param)
                attr = self._attr_of[single] = _agreed(prior_attr, self._alias_of(stmt.value))
                given = self._given[single] = _agreed(prior_given, self._given_of(stmt.value))
                # What the local is read as holds until a name it goes through is bound again.
                for spelled in (attr, *(g for g, _truth in (given[0] if given else ()))):
                    root = _ROOT.match(spelled) if spelled else None
                    if root is not None:
                        self._aliased_by.setdefault(root[0], []).append(single)
            for target in stmt.targets:
                state = self.assign(target, stmt.value, stmt, state)
            return state
        if kind is ast.AnnAssign:
            if stmt.value is not None:
                self.expr(stmt.value)
                self.target_expr(stmt.target)
                return self.assign(stmt.target, stmt.value, stmt, state)
            return state
        if kind is ast.AugAssign:
            self.expr(stmt.value)
            target = stmt.target
            prior = self._sources.get(target.id) if type(target) is ast.Name else None
            self.target_expr(target)
            if prior and all(name == HOST_TENSOR for name in prior):
                # `t += x` adds to a host tensor in place: `t` stays on the host.
                self._sources[target.id] = prior
            return self.augassign(stmt, state)
        if kind is ast.Expr:
            self.expr(stmt.value)
            return self.effect(stmt.value, state)
        if kind is ast.If:
            self.expr(stmt.test)
            self._hold(self._not_none_past(stmt.test))
            self._depth += 1
            held = len(self._guards)
            if_true, if_false = self._holding(stmt.test, True), self._holding(stmt.test, False)
            self._guards.extend(if_true)
            # The locals each way binds, and the test a read sits under, as the reads pass
            # keeps them (`read_only`): a read's producer is the same in both.
            test, holds = _strip_not(stmt.test)
            self._conds.append((test, holds))
            other = _Else(self._locals, test, holds)
            a = self.block(stmt.body, _copy(state))
            body_tail = self._tail
            del self._guards[held:]
            self._guards.extend(if_false)
            other.enter(self)
            b = self.block(stmt.orelse, _copy(state))
            else_tail = self._tail
            _Join(other).join(self)
            del self._guards[held:]
            # Where one way never falls through, what holds past the `if` is the other way's
            # test and what held at that way's end (an `elif`'s own early exit): read by
            # `block` right after.
            if (a is _DEAD) is (b is _DEAD):
                self._past = ()
            elif a is _DEAD:
                self._past = if_false + else_tail
            else:
                self._past = if_true + body_tail
            self._depth -= 1
            host = _leaves_unless_host(stmt)
            if host is not None:
                self._host_roots.add(host)
            return _join(a, b)
        if kind in (ast.For, ast.AsyncFor):
            self.expr(stmt.iter)
            self.target_expr(stmt.target)
            self._untrack_target(stmt.target, state)
            self._depth += 1
            body = self.block(stmt.body, _copy(state))
            after = _join(state, body)
            end = self.block(stmt.orelse, _copy(after)) if after is not _DEAD else _DEAD
            self._depth -= 1
            return _join(after, end) if stmt.orelse else after
        if kind is ast.While:
            self.expr(stmt.test)
            self._depth += 1
            body = self.block(stmt.body, _copy(state))
            after = _join(state, body)
            if stmt.orelse and after is not _DEAD:
                after = _join(after, self.block(stmt.orelse, _copy(after)))
            self._depth -= 1
            if _is_true(stmt.test) and not _breaks(stmt.body):
                return _DEAD  # `while True:` without a break leaves only by return/raise
            return after
        if kind in (ast.With, ast.AsyncWith):
            held = len(self._guards)
            for item in stmt.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.target_expr(item.optional_vars)
                    self._untrack_target(item.optional_vars, state)
                marker = self._context_marker(item.context_expr)
                if marker is not None:
                    self._guards.append(marker)
            state = self.block(stmt.body, state)
            del self._guards[held:]
            return state
        if kind is ast.Try or kind.__name__ == "TryStar":
            self._depth += 1
            catches = any(_catches_key_error(h) for h in stmt.handlers)
            self._key_guard += catches
            body = self.block(stmt.body, _copy(state))
            self._key_guard -= catches
            # A handler runs after any prefix of the body: from the entry state, joined.
            start = _join(state, body)
            ends = [self.block(stmt.orelse, _copy(body)) if body is not _DEAD else _DEAD]
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                if handler.name:
                    self._rebound.add(handler.name)
                ends.append(self.block(handler.body, _copy(start)))
            self._depth -= 1
            out = ends[0]
            for end in ends[1:]:
                out = _join(out, end)
            if stmt.finalbody:
                out = self.block(stmt.finalbody, out if out is not _DEAD else _copy(start))
            return out
        if kind is ast.Match:
            self.expr(stmt.subject)
            self._depth += 1
            out = _DEAD
            exhaustive = False
            for case in stmt.cases:
                if case.guard is not None:
                    self.expr(case.guard)
                out = _join(out, self.block(case.body, _copy(state)))
                if isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None:
                    exhaustive = case.guard is None
            self._depth -= 1
            return out if exhaustive else _join(out, state)
        if kind is ast.Delete:
            for target in stmt.targets:
                self.expr(target)
                if (
                    type(target) is ast.Subscript
                    and type(target.value) is ast.Name
                    and state is not _DEAD
                ):
                    tracked = state.get(target.value.id)
                    key = _const_key(target.slice)
                    if tracked is not None:
                        if key is None:
                            tracked.open = True
                        else:
                            tracked.definite.pop(key, None)
            return state
        if kind is ast.Import or kind is ast.ImportFrom:
            self.s.imported(stmt, self.local_aliases)
            self._rebound.update(a.asname or a.name.partition(".")[0] for a in stmt.names)
            return state
        if kind in (ast.Global, ast.Nonlocal):
            # (Never a parameter's name, which would be a SyntaxError: not `_rebound`.)
            self.shadowed.update(stmt.names)
            return state
        self.exprs_of(stmt)
        return state

    def exprs_of(self, stmt) -> None:
        """Record the calls in every expression under a statement (nested blocks too)."""
        for field in stmt._fields:
            value = getattr(stmt, field, None)
            items = value if type(value) is list else (value,)
            for item in items:
                if isinstance(item, ast.expr):
                    self.expr(item)
                elif isinstance(item, ast.stmt):
                    if type(item) in _DEFS:
                        self.stmt(item, {})
                    else:
                        self.exprs_of(item)
                elif isinstance(item, (ast.excepthandler, ast.match_case, ast.withitem)):
                    for sub in ast.iter_child_nodes(item):
                        if isinstance(sub, ast.expr):
                            self.expr(sub)
                        elif isinstance(sub, ast.stmt):
                            self.exprs_of(sub) if type(sub) not in _DEFS else self.stmt(sub, {})

    # -- expressions: calls --------------------------------------------------

    def expr(self, node) -> None:
        """Record every call under an expression (a lambda's body included)."""
        stack = [node]
        pop, push = stack.pop, stack.append
        call_type, subscript, load, compare = ast.Call, ast.Subscript, ast.Load, ast.Compare
        conds = self._conds
        while stack:
            item = pop()
            kind = type(item)
            if kind is _ExprCond:
                if item.ends:
                    conds.pop()
                    if item.guards:
                        del self._guards[len(self._guards) - len(item.guards) :]
                else:
                    conds.append((item.test, item.holds))
                    self._guards.extend(item.guards)
                continue
            if kind is _Scope:
                own = self._own
                for name in item.names:
                    if item.ends:
                        own[name] -= 1
                        if not own[name]:
                            del own[name]
                    else:
                        own[name] = own.get(name, 0) + 1
                continue
            if kind in _COMPREHENSIONS:
                # Its first iterable runs in the function; the rest in its own scope, where
                # the variables it binds are its own.
                first, *rest = item.generators
                names = {
                    n.id
                    for g in item.generators
                    for n in ast.walk(g.target)
                    if type(n) is ast.Name and type(n.ctx) is ast.Store
                }
                stack.append(_Scope(names, ends=True))
                if kind is ast.DictComp:
                    stack.extend((item.value, item.key))
                else:
                    stack.append(item.elt)
                stack.extend(reversed(rest))
                stack.extend(first.ifs)
                stack.append(first.target)
                stack.append(_Scope(names))
                stack.append(first.iter)
                continue
            if kind is ast.IfExp:
                # `a if t else b`: `a` is read, and called, with `t` true, `b` with it false.
                body_guards, else_guards = (
                    self._holding(item.test, True),
                    self._holding(item.test, False),
                )
                if self._chosen or body_guards or else_guards:
                    test, holds = _strip_not(item.test)
                    stack.extend(
                        (
                            _ExprCond.end(else_guards),
                            item.orelse,
                            _ExprCond(test, not holds, guards=else_guards),
                            _ExprCond.end(body_guards),
                            item.body,
                            _ExprCond(test, holds, guards=body_guards),
                            item.test,
                        )
                    )
                    continue
            if kind is call_type:
                self.call(item)
            elif kind is subscript and type(item.ctx) is load:
                key = _const_key(item.slice)
                if key is not None:
                    origin = self.origin_of(item.value)
                    if origin is not None:
                        self.reads.append(
                            (
                                *origin,
                                key,
                                item.lineno,
                                item.col_offset,
                                item.end_lineno or item.lineno,
                                item.end_col_offset or item.col_offset,
                                self._key_guard > 0,
                                self._read_conds(),
                            )
                        )
            elif kind is compare and type(item.ops[0]) in (ast.In, ast.NotIn):
                # `"k" in d` / `"k" not in d`: the function asks before it reads.
                key = _const_key(item.left)
                if key is not None:
                    self.guards.add(key)
            for name in child_fields(kind):
                value = getattr(item, name, None)
                if type(value) is list:
                    stack.extend(value)
                elif value is not None:
                    push(value)

    def _read_conds(self) -> tuple:
        """The tests a read here runs under (``R_CONDS``), each keyed by its place."""
        if not self._conds:
            return ()
        keys = self._cond_keys
        out = []
        for test, holds in self._conds:
            key = keys.get(id(test))
            if key is None:
                key = keys[id(test)] = ((test.lineno, test.col_offset), _eq_of(test))
            out.append((key[0], holds, key[1]))
        return tuple(out)

    def origin_of(self, node) -> tuple[str, object] | None:
        """Where a dict read here comes from: ``("c", callee)`` a call's result, ``("s", attr)``
        an attribute of ``self``, ``("a", attr)`` another object's, ``("p", position)`` a
        parameter; None for anything else. A local is followed one binding back, and a
        local bound to a parameter is that parameter."""
        kind = type(node)
        if kind is ast.Name:
            name = node.id
            if name in self._own:
                return None  # a comprehension's variable: an item of what it iterates
            bound = self._locals.get(name)
            choice = self._chosen.get(name)
            if choice is not None:
                for test, holds in reversed(self._conds):
                    if _test_key(test) == choice[0]:
                        bound = choice[1] if holds else choice[2]
                        if bound is None:
                            return None  # that way left it unknown
                        break
            if bound is not None:
                kind, node = type(bound), bound
                if kind is ast.Name:
                    # Another name for a parameter the function has not rebound is that
                    # parameter (`meta = values`); for anything else, nothing is known.
                    other = bound.id
                    if other in self.params and not (
                        other in self._locals or other in self._rebound
                    ):
                        return ("p", self.params[other])
                    return None
            elif name in self.params:
                return ("p", self.params[name])
            else:
                return None
        if kind is ast.Attribute:
            owner = node.value
            on_self = type(owner) is ast.Name and owner.id == self.self_name
            return ("s" if on_self else "a", node.attr)
        if kind is ast.Call:
            return ("c", self.callee(node.func))
        return None

    def callee(self, func, *, subscripts: bool = False) -> str:
        spelling = (
            self.s.spell(func, self.shadowed, local=self.local_aliases, subscripts=subscripts)
            or UNKNOWN
        )
        if self.self_name and (
            spelling == self.self_name or spelling.startswith(self.self_name + ".")
        ):
            spelling = "self" + spelling[len(self.self_name) :]
        return spelling

    def target_expr(self, target) -> None:
        """Calls inside an assignment target (``x[f()] = v``) and names it binds."""
        kind = type(target)
        if kind is ast.Name:
            self.shadowed.add(target.id)
            self._rebound.add(target.id)
            self._sources[target.id] = None  # bound here to what is not read
            self._of_param[target.id] = None
            self._unalias(target.id)
            self._stale_facts(target.id)
        elif kind in (ast.Tuple, ast.List):
            for elt in target.elts:
                self.target_expr(elt)
        elif kind is ast.Starred:
            self.target_expr(target.value)
        else:
            self.expr(target)

    def call(self, node: ast.Call) -> None:
        # A call's receiver keeps the name an element was taken of (`lens_cpu[:n].max()`):
        # what that name says of where the data lives holds for its elements too.
        spelling = self.callee(node.func, subscripts=True)
        keywords = tuple(kw.arg or "**" for kw in node.keywords)
        nargs = -1 if any(type(a) is ast.Starred for a in node.args) else len(node.args)
        if spelling.endswith((".get", ".pop", ".setdefault")) and node.args:
            key = _const_key(node.args[0])
            if key is not None:
                self.guards.add(key)  # asked for with a default: the function copes without it
        origins = []
        for i, arg in enumerate(node.args):
            if type(arg) is ast.Starred:
                break
            origin = self.origin_of(arg) if type(arg) in _ORIGIN_TYPES else None
            if origin is not None:
                origins.append((i, origin))
        for kw in node.keywords:
            if kw.arg is not None and type(kw.value) in _ORIGIN_TYPES:
                origin = self.origin_of(kw.value)
                if origin is not None:
                    origins.append((kw.arg, origin))
            elif kw.arg is None and type(kw.value) is ast.Name and kw.value.id == self._spread():
                origins.append(("**", ("p", "**")))  # the function's `**kwargs`, handed on
        if self._guards:
            # What the tests here say of a local handed on unchanged, as of a parameter.
            for where, arg in (*enumerate(node.args), *((k.arg, k.value) for k in node.keywords)):
                if type(arg) is ast.Starred:
                    break  # the positions past it are not known
                # (A comprehension's variable is not the value the tests saw.)
                if type(arg) is ast.Name and where is not None and arg.id not in self._own:
                    facts = self._facts_of(arg.id)
                    if facts:
                        origins.append((where, ("f", facts)))
        ints = [i for i, arg in enumerate(node.args) if self._int_evident(arg, 2)]
        ints += [kw.arg for kw in node.keywords if kw.arg and self._int_evident(kw.value, 2)]
        root = node.func
        while type(root) is ast.Attribute:
            root = root.value
        module_form = (
            type(node.func) is ast.Attribute
            and type(root) is ast.Name
            and self._imported(root.id) is not None
        )
        self.calls.append(
            (
                spelling,
                node.lineno,
                node.col_offset,
                getattr(node, "end_lineno", node.lineno) or node.lineno,
                getattr(node, "end_col_offset", node.col_offset) or node.col_offset,
                keywords,
                nargs,
                tuple(origins),
                tuple(ints),
                module_form,
                self._host_of(node.func),
                tuple(
                    [(i, v) for i, a in enumerate(node.args) if (v := _bound(a)) is not _FREE]
                    + [
                        (kw.arg, v)
                        for kw in node.keywords
                        if kw.arg and (v := _bound(kw.value)) is not _FREE
                    ]
                ),
                self._call_guards(node.func),
            )
        )

    def _context_marker(self, context):
        """What the block of ``with context:`` runs under, as a guard its calls carry:
        ``("with <the context manager's spelling>", True)``, which a reachable-calls
        contract's ``boundary-contexts`` rule out (``with gpu_sync_allowed():``, a sync the
        engine calls deliberate); for ``with a() if c else b():``, one guard of both ways,
        ruled out only where each is. None for a context that is not a call."""
        if type(context) is ast.IfExp:
            ways = (self._context_marker(context.body), self._context_marker(context.orelse))
            if None in ways:
                return None
            return (ways, True)
        if type(context) is not ast.Call:
            return None
        return (CONTEXT + self.callee(context.func), True)

    def _spread(self) -> str | None:
        """The name of the function's ``**kwargs`` where it is only ever handed on whole
        (``f(**kwargs)``), so that it holds what its caller passed; else None -- one it
        reads, fills, rebinds or names otherwise may hold anything by then."""
        spread = self._spread_name
        if spread is False:
            spread = None
            kwarg = self.node.args.kwarg
            if kwarg is not None:
                name = kwarg.arg
                handed = uses = 0  # a nested scope's use of it is a `Name` too
                for item in ast.walk(self.node):
                    kind = type(item)
                    if kind is ast.Name and item.id == name:
                        uses += 1
                    elif kind is ast.keyword and item.arg is None:
                        value = item.value
                        handed += type(value) is ast.Name and value.id == name
                if uses == handed:
                    spread = name
            self._spread_name = spread
        return spread

    def _guards_of(self, name: str) -> list[tuple]:
        """The guards held now that test an attribute of ``name`` (``query.is_cuda``)."""
        prefix = name + "."
        return [i for i in self._guards if type(i[0]) is str and i[0].startswith(prefix)]

    def _facts_of(self, name: str) -> tuple:
        """What the tests a call runs under say of the local ``name`` as it is now: each
        ``(rest, truth)`` of a guard ``name<rest>`` not made before the local was last
        bound (a parameter's too: rebound, it is a local like any other)."""
        stale = self._stale
        return tuple(
            (item[0][len(name) :], item[1])
            for item in self._guards_of(name)
            if id(item) not in stale
        )

    def _stale_facts(self, name: str) -> None:
        """``name`` bound again: what the guards so far said of it is of another value."""
        if self._guards:
            self._stale.update(id(item) for item in self._guards_of(name))

    def _param_of(self, value) -> str | None:
        """The parameter ``value`` is a view or cast of, so on its device: the parameter
        itself (unrebound), an element of it, one of its tensor methods that keep the
        device (``_RESHAPES``, ``_CASTS``) of it, or a local that is one; else None."""
        while True:
            kind = type(value)
            if kind is ast.Subscript:
                value = value.value
            elif (
                kind is ast.Call
                and type(value.func) is ast.Attribute
                and value.func.attr in _KEEPS_DEVICE
            ):
                value = value.func.value
            else:
                break
        if kind is not ast.Name:
            return None
        name = value.id
        return name if self._unrebound_param(name) else self._of_param.get(name)

    def _alias_of(self, value) -> str | None:
        """What a local bound to ``value`` is tested as: an attribute chain as spelled
        (``meta.num_prefills``), a parameter nothing has rebound, or what a local bound so
        is; None for anything else."""
        if type(value) is ast.Attribute:
            return dotted(value) or None  # (`f().x` spells no chain)
        if type(value) is not ast.Name:
            return None
        name = value.id
        return name if self._unrebound_param(name) else self._attr_of.get(name)

    def _unrebound_param(self, name: str) -> bool:
        """Whether ``name`` is a parameter (not the instance) nothing walked so far rebinds:
        it still holds what the caller passed."""
        return name in self.params and name != self.self_name and name not in self._rebound

    def _unalias(self, name: str) -> None:
        """``name`` bound again: it is no longer the attribute it was bound to nor the way
        of a choice, and no local bound to one of its attributes, or chosen by a test of
        it, is one of the object it now holds."""
        self._attr_of[name] = None
        self._given[name] = None
        for local in self._aliased_by.pop(name, ()):
            self._attr_of[local] = None
            self._given[local] = None

    def _call_guards(self, func) -> tuple:
        """The guards a call runs under: those of where it is, and, where its receiver starts
        at a parameter nothing has rebound, that the parameter is not None -- ``p.tolist()``
        and ``p[0].max().item()`` raise on a ``None`` before they are called."""
        guards = tuple(self._guards)
        root = func
        while True:
            kind = type(root)
            if kind is ast.Attribute or kind is ast.Subscript:
                root = root.value
            elif kind is ast.Call:
                root = root.func
            else:
                break
        if kind is ast.Name and root is not func and self._unrebound_param(root.id):
            guard = (f"{root.id} is None", False)
            if guard not in guards:
                guards += (guard,)
        return guards

    def _host_of(self, func) -> bool | tuple[str, ...]:
        """What a call's receiver says of where its data lives (``C_HOST``), read at the name
        it starts from through attributes, elements and methods other than a move: True past
        a test that leaves unless it is on the host; else the names a local was computed
        from, for the contract's host names to judge (``lens_tmp = torch.clamp(lens_cpu,
        max=w)`` makes ``lens_tmp.sum().item()``'s ``("lens_cpu",)``), and so does a
        module's function the receiver starts from (``torch.isnan(lens_cpu).sum().item()``,
        judged as a local bound to it would be); else False."""
        root = func
        while True:
            kind = type(root)
            if kind is ast.Attribute or kind is ast.Subscript:
                root = root.value
            elif kind is ast.Call and type(root.func) is ast.Attribute:
                if root.func.attr in _MOVES:
                    return on_host(root)  # a move told the CPU returned host data
                if self._module_spelled(root.func.value) is not None:
                    return self._computed_from(root) or False
                root = root.func.value
            else:
                break
        if type(root) is ast.Compare:
            return self._computed_from(root) or False  # `(lens_cpu > 0).sum().item()`
        if type(root) is not ast.Name:
            return False
        if root.id in self._host_roots:
            return True
        return self._sources.get(root.id) or False

    def _computed_from(self, node) -> tuple[str, ...] | None:
        """The names of the data ``node`` computes from, where every operation in it keeps
        its inputs' device: a name (or a local's own sources), an attribute's last name, an
        element, arithmetic, a tensor's method other than a move (``.to()``, ``.cuda()``),
        and ``torch.<op>(...)`` of its arguments (``torch.as_tensor`` too); constants add
        nothing. A copy to the host records ``HOST_COPY``, a host tensor ``HOST_TENSOR``:
        ``.cpu()``, a move told the CPU, and a torch constructor told it or told no device
        (the default device). None for anything else -- a call of another function, a
        move, a keyword naming another device -- whose result may live anywhere."""
        found: list[str] = []
        stack = [node]
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind is ast.Name:
                known = self._sources.get(item.id, _UNBOUND)
                if known is None:
                    return None
                found.extend((item.id,) if known is _UNBOUND else known)
            elif kind is ast.Attribute:
                found.append(item.attr)
            elif kind is ast.Subscript:
                stack.append(item.value)
            elif kind is ast.BinOp:
                stack.extend((item.left, item.right))
            elif kind is ast.Compare:
                stack.append(item.left)  # an elementwise test is where its operands are
                stack.extend(item.comparators)
            elif kind is ast.UnaryOp:
                stack.append(item.operand)
            elif kind is ast.Constant:
                continue
            elif kind is ast.Tuple or kind is ast.List:
                stack.extend(item.elts)  # a shape, or the inputs `torch.cat` is given
            elif kind is ast.Call and type(item.func) is ast.Attribute:
                func, name = item.func, item.func.attr
                if name == "cpu":
                    found.append(HOST_TENSOR)  # a copy to the host is a host tensor
                    continue
                if name in _COPIES_TO_HOST:
                    found.append(HOST_COPY)  # what the copy returned is on the host
                    continue
                placing = any(kw.arg in _PLACING for kw in item.keywords)
                # (`on_host` reads only `device=` and `.to`'s first argument.)
                told_cpu = (placing or name == "to") and on_host(item)
                if placing and not told_cpu:
                    return None
                if told_cpu and name in _MOVES:
                    found.append(HOST_TENSOR)
                    continue
                if name in _RESHAPES:
                    stack.append(func.value)  # its arguments are a shape, dims, a size
                    continue
                module = self._module_spelled(func.value)
                if module is not None:
                    # `torch.clamp(x, ...)`: a torch function of its arguments.
                    if module.partition(".")[0] != "torch":
                        return None
                    if name in _CONSTRUCTORS and name != "as_tensor":
                        if not told_cpu and any(kw.arg is None for kw in item.keywords):
                            return None  # `**options` may name a device
                        # Told the CPU, or no device: the default one, the host, as
                        # required-keyword reads it (`torch.set_default_device` and a
                        # `with torch.device(...)` block are not followed).
                        found.append(HOST_TENSOR)
                        continue
                elif name in _MOVES:
                    return None
                else:
                    stack.append(func.value)
                stack.extend(a for a in item.args if type(a) is not ast.Starred)
            else:
                return None
        return tuple(dict.fromkeys(found)) or None

    def _imported(self, name: str) -> str | None:
        """What an imported name stands for here (``F`` -> ``torch.nn.functional``), or None
        where none is imported so, or a parameter or local of that name hides it."""
        head = self.local_aliases.get(name)
        if head is None and name not in self.shadowed:
            head = self.s.aliases.get(name)
        return head

    def _module_spelled(self, node) -> str | None:
        """The module a dotted name spells through the imports (``F.pad``'s ``F`` ->
        ``torch.nn.functional``), or None when its head is no imported name."""
        root = node
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or self._imported(root.id) is None:
            return None
        return self.s.spell(node, self.shadowed, local=self.local_aliases)

    def _hold(self, guards) -> None:
        """Add guards that hold from here to the end of the block, each once."""
        for guard in guards:
            if guard not in self._guards:
                self._guards.append(guard)

    def _not_none_past(self, node) -> tuple[tuple[str, bool], ...]:
        """Guards that hold once ``node`` (a statement, or an ``if`` test) has run: for each
        parameter it uses in a way ``None`` does not support -- an operand of arithmetic, an
        attribute's, a subscript's or a call's object -- ``(f"{p} is None", False)``, as an
        ``if p is None: raise`` would say. Only what always runs counts (not a conditional
        expression's ways, the right of an ``and``/``or``, a lambda or a comprehension),
        and only a parameter nothing walked before rebinds: ``prefix_lens - x`` with
        ``prefix_lens=None`` passed raises before anything after it is called."""
        params = self.params
        used: list[str] = []
        stack = [node]
        pop, push = stack.pop, stack.append
        while stack:
            item = pop()
            kind = type(item)
            if kind is ast.NamedExpr:
                self._rebound.add(item.target.id)
                self._stale_facts(item.target.id)
                self._unalias(item.target.id)
            elif kind in _LAZY:
                if kind is ast.IfExp:
                    push(item.test)
                elif kind is ast.BoolOp:
                    push(item.values[0])
                continue
            if kind is ast.BinOp:
                operands = (item.left, item.right) if type(item.op) in _NONE_RAISES else ()
            elif kind is ast.UnaryOp:
                operands = (item.operand,) if type(item.op) is not ast.Not else ()
            elif kind is ast.Attribute or kind is ast.Subscript:
                operands = (item.value,)
            elif kind is ast.Call:
                operands = (item.func,)
            else:
                operands = ()
            for operand in operands:
                if (
                    type(operand) is ast.Name
                    and operand.id in params
                    and operand.id != self.self_name
                    and operand.id not in used
                ):
                    used.append(operand.id)
            for name in child_fields(kind):
                value = getattr(item, name, None)
                if type(value) is list:
                    stack.extend(value)
                elif value is not None:
                    push(value)
        rebound = self._rebound
        return tuple((f"{p} is None", False) for p in used if p not in rebound)

    def _holding(self, test, value: bool) -> tuple[tuple[str, bool], ...]:
        """What an ``if`` test evaluating to ``value`` says of the names it tests, as guards:
        ``(("p", True),)`` in ``if p:``'s body, ``(("p", False),)`` in its else, ``p`` a
        parameter or an attribute of a name (``meta.is_decoding``, what a reachable-calls
        contract's ``entry-conditions`` match). ``a and b`` is true only where each operand
        is, ``a or b`` false only where each is, so each of those says its own. An ``or``
        that is true (an ``and`` that is false) says that one operand at least is: where
        each operand says one thing, one guard of their ways, ``(((way, truth), ...),
        True)``, ruled out only where each way is."""
        kind = type(test)
        if kind is ast.UnaryOp and type(test.op) is ast.Not:
            return self._holding(test.operand, not value)
        if kind is ast.BoolOp:
            if (type(test.op) is ast.And) is not value:
                ways = []
                for operand in test.values:
                    said = self._holding(operand, value)
                    if len(said) != 1:
                        return ()  # an operand that says nothing, or two things at once
                    ways.append(said[0])
                return ((tuple(ways), True),)
            return tuple(g for operand in test.values for g in self._holding(operand, value))
        chosen = self._chosen_by(test, value)
        if chosen:
            return chosen + self._holding_own(test, value)
        return self._holding_own(test, value)

    def _holding_own(self, test, value: bool) -> tuple[tuple[str, bool], ...]:
        """``_holding``'s reading of a test that is no ``not`` and no ``and``/``or``."""
        kind = type(test)
        if kind is ast.Compare and len(test.ops) == 1:
            # `x is None`, `x == State.DECODE`, `x != "prefill"`: guards named for the test
            # (`meta.kv_size is None`, `meta.state == State.DECODE`), true or false; and an
            # order against a number (`n > 0`; `0 < n` read as it).
            subject = self._tested(test.left)
            op, right = type(test.ops[0]), test.comparators[0]
            if subject is None:
                number = _number(test.left) if op in _ORDERS else None
                subject = self._tested(right) if number is not None else None
                if subject is None:
                    return ()
                return ((f"{subject} {_FLIPPED[_ORDERS[op]]} {number!r}", value),)
            if op in (ast.Is, ast.IsNot) and type(right) is ast.Constant and right.value is None:
                return ((f"{subject} is None", value is (op is ast.Is)),)
            if op in (ast.Eq, ast.NotEq):
                constant = _constant_spelling(right)
                if constant is not None:
                    return ((f"{subject} == {constant}", value is (op is ast.Eq)),)
            number = _number(right) if op in _ORDERS else None
            if number is not None:
                return ((f"{subject} {_ORDERS[op]} {number!r}", value),)
            return ()
        subject = self._tested(test)
        return () if subject is None else ((subject, value),)

    def _chosen_by(self, test, value: bool) -> tuple[tuple[str, bool], ...] | None:
        """What a local bound to one way of a choice says where a test finds it there: past
        ``decode = meta.decode if meta.num_decodes > 0 else None``, ``decode is not None``
        (and ``decode`` true) hold only where ``meta.num_decodes > 0`` did; where the other
        way is a falsy constant other than None (``[]``), only ``decode`` true says so."""
        kind = type(test)
        if kind is ast.Name:
            name, present, none_test = test.id, value, False
        elif (
            kind is ast.Compare
            and len(test.ops) == 1
            and type(test.ops[0]) in (ast.Is, ast.IsNot)
            and type(test.left) is ast.Name
            and type(test.comparators[0]) is ast.Constant
            and test.comparators[0].value is None
        ):
            name, none_test = test.left.id, True
            present = value is (type(test.ops[0]) is ast.IsNot)
        else:
            return None
        given = self._given.get(name) if present and name not in self._own else None
        if given is None or (none_test and not given[1]):
            return None
        return given[0]

    def _given_of(self, value) -> tuple | None:
        """For a local bound to ``value``: ``(guards, also_not_none)`` where it is one way
        of a conditional expression whose other way is a falsy constant -- the guards that
        way's test says, and whether that constant is None (so ``is not None`` says them
        too); None otherwise, or where the test says nothing, or an ``or``'s ways."""
        if type(value) is not ast.IfExp:
            return None
        for nothing, way in ((value.orelse, True), (value.body, False)):
            if _falsy_constant(nothing):
                guards = self._holding(value.test, way)
                if guards and all(type(g) is str for g, _truth in guards):  # no `or`'s ways
                    none = type(nothing) is ast.Constant and nothing.value is None
                    return guards, none
                return None
        return None

    def _tested(self, node) -> str | None:
        """A tested name as a guard names it: a parameter, an attribute of a name, or a
        question asked of one with nothing passed (``mode.is_decode_or_idle()``: what a
        predicate answers of an object, which the object's next holder is asked again). The
        object may be what a call that passes nothing returns (``get_pp_group().is_last_rank``,
        ``get_step_ctx().current_context().enable_microbatch``): engines reach the step's
        state through such accessors, and a fact about the step is stated of what they
        answer."""
        if type(node) is ast.Name and node.id in self.params and node.id != self.self_name:
            return node.id
        if type(node) is ast.Name and node.id not in self._own:
            # `n = meta.num_prefills; if n > 0:` tests the attribute
            return self._attr_of.get(node.id)
        if type(node) is ast.Attribute:
            spelled = dotted(node)
            if not spelled:
                return _accessed(node)
            root, _, rest = spelled.partition(".")
            if rest.partition(".")[0] in _DEVICE_ATTRS:
                # A local that is a parameter's view or cast (`flat = query.reshape(...)`, or
                # `flat = query` on the other way) is on that parameter's device.
                param = self._of_param.get(root)
                if param is not None:
                    return f"{param}.{rest}"
            return spelled
        if (
            type(node) is ast.Call
            and not node.args
            and not node.keywords
            and type(node.func) is ast.Attribute
            and _ASKS.match(node.func.attr)
        ):
            spelled = dotted(node.func) or _accessed(node.func)
            return f"{spelled}()" if spelled else None
        return None


def _accessed(node) -> str | None:
    """An attribute chain through calls that pass nothing, from a name, spelled with its
    calls (``get_pp_group().is_last_rank``); None for a call given an argument, a subscript
    or anything but a name at its root. Asked where ``dotted`` found no chain of names."""
    parts = []
    while True:
        kind = type(node)
        if kind is ast.Attribute:
            parts.append("." + node.attr)
            node = node.value
        elif kind is ast.Call and not node.args and not node.keywords:
            parts.append("()")
            node = node.func
        elif kind is ast.Name:
            parts.append(node.id)
            return "".join(reversed(parts))
        else:
            return None


# An order's operator as a guard spells it, and as it reads with its operands swapped.
_ORDERS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _falsy_constant(node) -> bool:
    """``None``, ``False``, ``0``, ``""``, ``[]``, ``()``, ``{}``: a way of a choice that is
    nothing."""
    kind = type(node)
    if kind is ast.Constant:
        return not node.value
    if kind in (ast.List, ast.Tuple):
        return not node.elts
    return kind is ast.Dict and not node.keys


def _number(node) -> int | float | None:
    """A number literal (``0``, ``-1``, ``0.5``; not a bool), or None."""
    negative = type(node) is ast.UnaryOp and type(node.op) is ast.USub
    if negative:
        node = node.operand
    if type(node) is not ast.Constant or type(node.value) not in (int, float):
        return None
    return -node.value if negative else node.value


def _constant_spelling(node) -> str | None:
    """A constant compared with, as a guard spells it: a literal's ``repr`` (``'decode'``,
    ``1``) or a dotted name (``State.DECODE``); None for anything else (a local's value is
    not known here)."""
    if type(node) is ast.Constant and type(node.value) in (str, int, float, bool):
        return repr(node.value)
    if type(node) is ast.Attribute:
        return dotted(node) or None
    return None


# What an argument binds when its form says no more than that it is not None: arithmetic, a
# comparison, a display or comprehension, an f-string, a lambda; a tensor's copy to the host
# or move (a tensor, a list or a number, never None).
_NOT_NONE_FORMS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.Lambda)
_NOT_NONE_FORMS += (ast.List, ast.Tuple, ast.Dict, ast.Set)
_NOT_NONE_FORMS += (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_TENSOR_RESULTS = _MOVES | frozenset(HOST_COPIES)
_FREE = object()  # an argument that binds nothing


def _bound(node):
    """What an argument binds its parameter to, for a callee's tests to be decided by: a
    literal as itself (``update(lens, False)``, ``plan(..., 1)``, ``mode="decode"``,
    ``scale=0.5``); ``NOT_NONE`` for a value that cannot be None by its form
    (``update(lens, lens.cpu())``); else ``_FREE``. A name, a call of a function and a
    conditional expression may be None."""
    kind = type(node)
    if kind is ast.Constant:
        return node.value  # `...` is NOT_NONE itself, and is not None
    number = _number(node)
    if number is not None:
        return number  # `-1`
    if isinstance(node, _NOT_NONE_FORMS):
        return NOT_NONE
    if kind is ast.Call and type(node.func) is ast.Attribute:
        return NOT_NONE if node.func.attr in _TENSOR_RESULTS else _FREE
    return _FREE


def _leaves_unless_host(stmt: ast.If) -> str | None:
    """``x`` for ``if x.device.type != "cpu": return ...`` (or ``if x.is_cuda:`` / ``if not
    x.is_cpu:``, raising instead): past it, ``x`` is on the host."""
    if stmt.orelse or not stmt.body or type(stmt.body[-1]) not in (ast.Return, ast.Raise):
        return None
    test = stmt.test
    kind = type(test)
    if kind is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.NotEq:
        left, right = test.left, test.comparators[0]
        if type(left) is ast.Attribute and left.attr == "type":
            left = left.value
        cpu = (type(right) is ast.Constant and right.value == "cpu") or (
            type(right) is ast.Call
            and right.args
            and type(right.args[0]) is ast.Constant
            and right.args[0].value == "cpu"
        )
        if cpu and type(left) is ast.Attribute and left.attr == "device":
            target = left.value
            return target.id if type(target) is ast.Name else None
        return None
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        operand = test.operand
        if type(operand) is ast.Attribute and operand.attr == "is_cpu":
            return operand.value.id if type(operand.value) is ast.Name else None
        return None
    if kind is ast.Attribute and test.attr == "is_cuda" and type(test.value) is ast.Name:
        return test.value.id
    return None


_KEY_ERROR_NAMES = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})


def _catches_key_error(handler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
    for t in types:
        name = t.id if type(t) is ast.Name else t.attr if type(t) is ast.Attribute else ""
        if name in _KEY_ERROR_NAMES:
            return True
    return False


def _is_true(test) -> bool:
    return type(test) is ast.Constant and bool(test.value) is True


def _breaks(body) -> bool:
    """Whether a loop body can ``break`` out of its own loop (not a nested one)."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        if kind is ast.Break:
            return True
        if kind in (ast.For, ast.AsyncFor, ast.While, *_DEFS, ast.ClassDef):
            if kind in (ast.For, ast.AsyncFor, ast.While):
                stack.extend(stmt.orelse)
            continue
        for block in statement_lists(stmt):
            stack.extend(block)
    return False


class _OutlineWalker(FunctionWalker):
    """The statements of a body as ``FunctionWalker`` visits them -- which are reached, the
    names each binds, the imports inside -- and nothing of their dicts, unit forms, reads or
    calls: what a facet of the details (``Outliner.facet``) adds to and nothing more. A facet
    so made equals the same field of the details, which this walk's order and ``callee``'s
    spelling of each callee (shadowing and the imports before it) make it."""

    def expr(self, node) -> None:
        return None

    def assign(self, target, value, stmt, state):
        return state

    def augassign(self, stmt, state):
        return state

    def effect(self, value, state):
        return state

    def ret(self, stmt, state) -> None:
        return None

    def _untrack_target(self, target, state) -> None:
        return None


class CarrierWalker(_OutlineWalker):
    """A body's carriers alone (``D_CARRIERS``): attributes assigned a call's result."""

    def assign(self, target, value, stmt, state):
        if type(target) is ast.Attribute:
            self.carry(target, value, stmt)
        return state


class CalledNamesWalker(_OutlineWalker):
    """The last names of a body's calls alone: each ``D_CALLS`` spelling's last part."""

    def __init__(self, summariser, node, self_name: str, positional) -> None:
        super().__init__(summariser, node, self_name, positional)
        self.names: set[str] = set()

    def expr(self, node) -> None:
        stack = [node]
        pop, extend, push = stack.pop, stack.extend, stack.append
        call_type, attribute, names = ast.Call, ast.Attribute, self.names
        while stack:
            item = pop()
            kind = type(item)
            if kind is call_type:
                func = item.func
                # A method's spelling ends in its own name, whatever its receiver spells.
                if type(func) is attribute:
                    names.add(func.attr)
                else:
                    names.add(self.callee(func).rpartition(".")[2])
            for name in child_fields(kind):
                value = getattr(item, name, None)
                if type(value) is list:
                    extend(value)
                elif value is not None:
                    push(value)


def _strip_not(test) -> tuple[ast.expr, bool]:
    """An ``if`` test and the truth it is read with: ``not t`` is ``t`` false."""
    holds = True
    while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        test, holds = test.operand, not holds
    return test, holds


def _eq_of(test) -> tuple | None:
    """``(subject, constant, True)`` for a test ``subject == constant`` (``False`` for ``!=``),
    the subject a name or an attribute as dumped, the constant a literal: two such tests of
    one subject against two constants cannot both hold. None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in _EQ_OPS:
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(right) is not ast.Constant or type(left) not in (ast.Name, ast.Attribute):
        return None
    subject = _test_key(left)
    if subject is None:
        return None
    return (subject, repr(right.value), type(test.ops[0]) is ast.Eq)


_EQ_OPS = (ast.Eq, ast.NotEq)
# A tensor's methods that view or reshape it: what they return is where the tensor is,
# and their arguments are a shape, dims or a size, not data.
_RESHAPES = frozenset(
    {"reshape", "view", "flatten", "unflatten", "permute", "transpose", "squeeze", "unsqueeze"}
    | {"expand", "contiguous", "narrow", "select", "movedim", "view_as", "reshape_as"}
)
# A tensor's methods that keep it where it is: its views and reshapes, and its casts.
_KEEPS_DEVICE = _RESHAPES | frozenset(
    {"float", "half", "bfloat16", "double", "int", "long", "short", "bool", "clone", "detach"}
)
# A tensor's attributes that say where its data lives.
_DEVICE_ATTRS = frozenset({"is_cuda", "is_cpu", "device"})


def _test_key(test) -> str | None:
    """A test as a key a later test is matched with: None for one that calls something (two
    evaluations may differ) or holds more than names, attributes and comparisons of them.
    Asked only where a read's local was chosen by a test, so most tests never are."""
    if all(type(node) in _TEST_NODES for node in ast.walk(test)):
        return ast.dump(test)
    return None


# What a test matched by its text may hold: names, attributes, constants and comparisons.
_TEST_NODES = frozenset(
    {ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.Load, ast.Eq, ast.NotEq, ast.Is}
    | {ast.IsNot, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn}
)


def _names_in(test) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(test) if type(n) is ast.Name)


class _Block:
    """In the reads pass's stack, a block's edges: where one starts, the tests read so far are
    marked, and where it ends they go back to the mark -- a test past an ``if`` that leaves
    holds to the end of the block it is in; or, with a test, such an ``if``'s end, from where
    its other way's truth holds."""

    __slots__ = ("cond", "start")

    def __init__(self, cond: tuple | None = None, *, start: bool = False) -> None:
        self.cond, self.start = cond, start

    @classmethod
    def around(cls, stmts, in_try: bool) -> list[tuple]:
        if not stmts:
            return []
        return [(cls(start=True), in_try), *((s, in_try) for s in stmts), (cls(), in_try)]

    def cross(self, walk) -> None:
        if self.cond is not None:
            walk._conds.append(self.cond)
        elif self.start:
            walk._marks.append(len(walk._conds))
        else:
            del walk._conds[walk._marks.pop() :]


def _past_cond(stmt) -> tuple | None:
    """What holds past an ``if`` one of whose ways leaves (ends in ``return``, ``raise``,
    ``continue`` or ``break``) and the other not, as a read's test: ``(test, truth)``."""
    test, holds = _strip_not(stmt.test)
    body, orelse = _leaves(stmt.body), _leaves(stmt.orelse)
    if body is orelse:
        return None
    return (test, not holds) if body else (test, holds)


def _leaves(stmts) -> bool:
    return bool(stmts) and type(stmts[-1]) in _LEAVING


_LEAVING = (ast.Return, ast.Raise, ast.Continue, ast.Break)


class _Else:
    """In the reads pass's stack, where an ``if``'s ``else`` starts: the locals go back to
    what they were before its body, the body's are kept for the join, and the test is read
    false from here."""

    __slots__ = ("after_body", "before", "holds", "test")

    def __init__(self, before: dict, test: ast.expr, holds: bool) -> None:
        self.before = dict(before)
        self.after_body: dict = {}
        self.test, self.holds = test, holds

    def enter(self, walk) -> None:
        self.after_body = walk._locals
        walk._locals = dict(self.before)
        walk._conds[-1] = (self.test, not self.holds)


class _Join:
    """Where the ``if`` statement ends: a local the ``else`` bound is the ``else``'s, any
    other the body's (or what it was before), as the last binding read in order was; and a
    local the two ways bound apart is remembered with the test that chose between them."""

    __slots__ = ("other",)

    def __init__(self, other: _Else) -> None:
        self.other = other

    def join(self, walk) -> None:
        other = self.other
        before, after_body, after_else = other.before, other.after_body, walk._locals
        walk._conds.pop()
        merged = dict(after_body)
        for name, value in after_else.items():
            if before.get(name) is not value:
                merged[name] = value
        key = names = None
        for name in after_body.keys() | after_else.keys():
            body, orelse = after_body.get(name), after_else.get(name)
            if body is orelse:
                continue
            if key is None:
                key = _test_key(other.test)
                if key is None:
                    break  # no later test can be matched with this one
                names = _names_in(other.test)
            # The way the test, read as written, is true binds `body`.
            chosen = (body, orelse) if other.holds else (orelse, body)
            walk._chosen[name] = (key, *chosen, names)
        walk._locals = merged


_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


class _Scope:
    """In an expression's walk, where a comprehension's own scope starts or ends, with the
    names its ``for`` clauses bind."""

    __slots__ = ("ends", "names")

    def __init__(self, names: set[str], *, ends: bool = False) -> None:
        self.names, self.ends = names, ends


class _ExprCond:
    """In an expression's walk, where ``a if t else b``'s ``a`` or ``b`` starts (its test and
    the truth it is read with, and the guards that truth sets for its calls), or ends."""

    __slots__ = ("ends", "guards", "holds", "test")

    def __init__(
        self, test: ast.expr | None, holds: bool, *, ends: bool = False, guards: tuple = ()
    ) -> None:
        self.test, self.holds, self.ends, self.guards = test, holds, ends, guards

    @classmethod
    def end(cls, guards: tuple) -> _ExprCond:
        """Where a way ends: its test is let go, and the guards it set."""
        return cls(None, True, ends=True, guards=guards)
