"""Who calls a private or nested helper, and with what: a helper's parameter is input
only when some caller in the module hands it input.

A public function's parameter is the caller's. A private helper (``_ratio``)
or a nested function is called from the module itself, so its parameter is
what its callers pass: input when one passes a parameter or a config
unchanged, the function's own when every caller passes a value it computed
or one it already tested (``if isinstance(x, T): _emit(x)``, or past ``if tp ==
1: return`` -- the caller handled that value and left, so what the helper asserts
of it restates the caller's test; past ``assert tp > 1``, the same test spelled
for ``-O`` to strip, which is where the finding belongs; or under ``if 0 < k <=
2048: _topk(k)``); a type test settles only an assert that asks for a type,
not one of what the value holds. Nothing in the
module calling it means its callers are elsewhere: input. A private method
whose every call sits under an ``if`` on ``self.<attr>`` was chosen for that
value, so asserting it restates the branch. A mixin of
``origins.InputOrigins``.
"""

from __future__ import annotations

import ast

from .names import dotted
from .scopes import Scope, before, within
from .shapes import argument_for, is_private, is_step_record
from .verdicts import Origin


class HelperCallers:
    """The caller questions of ``InputOrigins``, memoised per function and parameter."""

    def _callers_tested(self, func: Scope, attr: str) -> bool:
        """Is ``func`` a private method every call of which (``self.<func>()``) sits
        under an ``if`` that tests ``self.<attr>`` -- the branch chose the method
        for the value the assert restates?"""
        name = func.name
        if not is_private(name) or func.self_name is None:
            return False
        sites = self.calls_of(name)
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

    def made_from_input(self, value: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        """Does ``value``, which this module reads as the function's own, reach input through
        what it was computed from -- a size, an operand, a local bound to either, however
        many steps back? The question a callee's assert asks of more than a value's form.

        Each step goes to a binding strictly before the last, so the walk ends; a binding
        already walked is not walked again."""
        pending = [(value, at)]
        walked: set[int] = set()
        while pending:
            expr, where = pending.pop()
            for name in _names_read(expr):
                if self.view(name, func, where) is not None:
                    return True
                if func is None or name.id not in func.bindings:
                    continue
                binding = self.dominating_binding(name.id, func, where)
                if binding is None or binding[1] is None or id(binding[0]) in walked:
                    continue
                walked.add(id(binding[0]))
                pending.append((binding[1], binding[0]))
        return False

    def _caller_checked(self, bound: ast.AST, call: ast.Call, caller: Scope | None) -> bool:
        """Is ``call`` inside ``if isinstance(arg, T):`` or ``if arg.kind == K:`` for its arg,
        or inside an ``if`` (or its ``else``) that tests the arg's value (``if 0 < k <=
        2048: _topk(k)``), or past an ``if`` that tests it and leaves (``if tp == 1:
        return``, ``if not 1 <= month <= 12: raise ...``) or an ``assert`` that tests it
        (``assert k > 0`` before ``_groups(n, k)``) with the arg not bound again since?

        Only a test of what the value *is* counts; ``if arg is not None`` or a
        truth test leaves everything else about it unchecked, and a comparison with
        another input (``assert w.shape[1] == k``) says how two inputs agree, not
        what either is.
        """
        if not isinstance(bound, ast.Name):
            return False
        if caller is not None and isinstance(caller.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            chain = self.blocks.get(call, ())
            held = [  # (test, whether it holds where it fails) on the way to the call
                (stmt.test, isinstance(stmt, ast.Assert))  # `assert T`: `if not T: raise`
                for stmt in self._exits_before(caller.node, call, chain, asserts=True)
            ]
            for block in chain:
                if block in self.guards:
                    held.append((self.guards[block], True))  # inside `if T:`, T holds
                elif block in self.else_guards:
                    held.append((self.else_guards[block], False))
            for test, negated in held:
                if any(
                    (against or self.asks_type)  # a type test settles type asserts alone
                    and all(self.reads_input(side, caller, test) is None for side in against)
                    for against in _tests_value(test, bound.id, negated)
                ) and not any(
                    before(test, rebound) and before(rebound, call)
                    for rebound, _, _ in caller.bindings.get(bound.id, ())
                ):
                    return True
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
                    self.asks_type
                    and isinstance(t, ast.Call)
                    and dotted(t.func, through_calls=True) in ("isinstance", "issubclass")
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

    def param_origin(self, func: Scope, name: str) -> Origin | None:
        levels = 0 if self.package is None else self.package.levels
        key = (id(func.node), name, self.asks_type, self.asks_form, levels)
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

    def _passed(self, func: Scope, name: str) -> list[tuple[ast.Call, Scope, ast.AST | None]]:
        """What each call in the module passes for ``func``'s parameter ``name``, when
        ``func`` is a private or nested helper: ``(call, caller, argument)``, the argument
        None where the call does not pass it. Empty for a public function (its callers
        are anyone's) and for a helper nothing in the module calls."""
        fname = func.name
        private = fname.startswith("_") and not fname.endswith("__")
        nested = func.parent is not None and func.klass is None  # a method is not "nested"
        if not (private or nested) or isinstance(func.node, ast.Lambda):
            return []
        arg = func.params[name]
        node_args = func.node.args
        positional = [a.arg for a in [*node_args.posonlyargs, *node_args.args]]
        if func.self_name is not None:
            positional = positional[1:]
        return [
            (call, caller, argument_for(call, arg, positional, node_args, func))
            for call, caller in self.calls_of(fname)
            if (not nested or within(caller, func.parent)) and not within(caller, func)
        ]  # a recursive call passes on what the function already had

    def fed_by_step_record(self, func: Scope, name: str) -> bool:
        """Is ``func``'s parameter ``name`` one every call in the module fills from a
        per-step record (``_trim(q, metadata.seq_lens.shape[0])``)? Then it is the
        engine's plan for the step, as the record it was read off is."""
        key = (id(func.node), name, "step")
        if key in self._busy:
            # Helpers handing it round among themselves: no source on this path
            # but the ones the other calls bring in.
            return True
        self._busy.add(key)
        try:
            sites = self._passed(func, name)
            return bool(sites) and all(
                bound is not None and self._reads_step_record(bound, caller, call)
                for call, caller, bound in sites
            )
        finally:
            self._busy.discard(key)

    def _param_origin(self, func: Scope, name: str) -> Origin | None:
        if is_step_record(func.params[name]):
            # `attn_metadata.decode is not None`: what the engine's own builder
            # planned for this step, not what a user handed in.
            return None
        plain = Origin(f"parameter `{name}` of `{func.name}`")
        sites = self._passed(func, name)
        fname = func.name
        if not sites:
            # A public function, or one called from elsewhere: its callers are the
            # package's, when it is asked to find them and every one is found.
            if self.package is None:
                return plain
            return self._package_origin(func, name, plain)
        for call, caller, bound in sites:
            if bound is None or self._caller_checked(bound, call, caller):
                continue  # the caller tested what it passes: the helper restates it
            if self.view(bound, caller, call) is not None:
                return Origin(
                    f"parameter `{name}` of `{fname}`, which a caller passes input unchanged"
                )
        return None

    def _package_origin(self, func: Scope, name: str, plain: Origin) -> Origin | None:
        """``func``'s parameter read from the package's calls of it (``package_callers``):
        None when every call passes a value its caller built or tested, or leaves the
        default; the plain origin when some call passes input, or not every call is found."""
        package = self.package
        sites = package.sites(self, func, name)
        if not sites:
            return plain
        # A caller's own parameters are asked of its callers in turn, one level less each
        # time (``package.above``); this module's own calls are read without its package,
        # or a caller here would ask the question being answered again.
        self.package = None
        try:
            for origins, call, caller, bound, summary in sites:
                if bound is None:
                    continue  # the function's own default
                # What the assert asks travels with it: a caller further up settles a
                # form with an allocation as this one does.
                asked, origins.asks_type = origins.asks_type, self.asks_type
                form, origins.asks_form = origins.asks_form, self.asks_form
                further, origins.package = origins.package, package.above(summary)
                try:
                    if origins._caller_checked(bound, call, caller):
                        continue
                    if origins.view(bound, caller, call) is not None:
                        return plain
                    if not self.asks_form and origins.made_from_input(bound, caller, call):
                        # `torch.empty((g, m, n))` fixes a rank and a layout, not whether
                        # `n` -- the caller's width -- is even.
                        return plain
                finally:
                    origins.asks_type, origins.asks_form = asked, form
                    origins.package = further
        finally:
            self.package = package
        return None


def _names_read(expr: ast.AST) -> list[ast.Name]:
    """The names an expression reads its value from: a call's arguments and the object
    a method is called on (``x.float()`` has ``x``'s sizes), not a function's name."""
    out: list[ast.Name] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Name):
            out.append(node)
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                stack.append(node.func.value)  # `torch` of `torch.empty`: a module, own
            stack.extend(node.args)
            stack.extend(k.value for k in node.keywords)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return out


def _tests_value(test: ast.expr, name: str, negated: bool) -> list[list[ast.expr]]:
    """Past ``if test: return``, each test of what ``name`` is, as what it is compared
    with: one list of the other sides per comparison with something other than None
    (``tp == 1``, ``not 1 <= month <= 12``), an empty one for ``not isinstance(name,
    T)`` -- past ``if isinstance(x, T): return`` only what ``x`` is not is known.
    ``negated``: the statement leaves when ``test`` fails (``assert isinstance(x,
    T)``), not when it holds."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, negated = test.operand, not negated
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And if negated else ast.Or):
        # Past `assert a and b` (or `if a or b: return`) each part holds on its own.
        return [found for part in test.values for found in _tests_value(part, name, negated)]
    if isinstance(test, ast.Call):
        if (
            negated
            and dotted(test.func) in ("isinstance", "issubclass")
            and bool(test.args)
            and isinstance(test.args[0], ast.Name)
            and test.args[0].id == name
        ):
            return [[]]
        return []
    if not isinstance(test, ast.Compare) or any(
        isinstance(c, ast.Constant) and c.value is None for c in test.comparators
    ):
        return []
    sides = [test.left, *test.comparators]
    if not any(isinstance(s, ast.Name) and s.id == name for s in sides):
        return []
    return [[s for s in sides if not (isinstance(s, ast.Name) and s.id == name)]]
