"""How a quantity's unit flows through one function, for the units kind.

Statements in order: each expression's unit from the declared names (``unit_algebra``), the
arithmetic, the project's functions (a callee's parameters and returns, through
``checkers.analysis.program``), and every place two units meet -- an addition, a comparison,
an assignment, an argument -- reported through the rule when they differ with no conversion.
``checkers.rules.units`` holds the kind, its docs and examples; this is its walk.
"""

from __future__ import annotations

import ast
import bisect
from typing import TYPE_CHECKING

from .unit_algebra import SCALAR, _sum, comparable, compatible, fmt, real
from .walk import statement_lists

if TYPE_CHECKING:
    from ..rules.units import Units


class _Deferred:
    """A call whose own name declares no unit: its callee's returns answer, when asked."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


_KEEPS = frozenset({"int", "round", "abs", "float", "math.ceil", "math.floor", "math.trunc"})
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class Walker:
    """One function's statements in order: each expression's unit, and every mix of two."""

    def __init__(self, rule: Units, source, program, module, outline, node) -> None:
        from ..analysis.functions import O_PARAMS, O_QUAL, O_SELF

        self.rule = rule
        self.vocab = rule.vocabulary
        self.source = source
        self.program = program
        self.module = module
        self.outline = outline
        self.node = node
        self.qual = outline[O_QUAL]
        self.self_name = outline[O_SELF]
        self.params = {p.lstrip("*") for p in outline[O_PARAMS]}
        self.env: dict[str, object] = {}
        self.findings: list = []
        self.stmt: ast.stmt | None = None
        # The lines (ascending) spelling a declared name; None reads every statement.
        self.needle_lines: tuple[int, ...] | None = None
        self._flagged: set[int] = set()
        self._returns: dict[str, object] = {}  # callee spelling -> what `known` answered

    def run(self) -> None:
        args = self.node.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self.params.add(a.arg)
        self.block(self.node.body)

    # -- statements ----------------------------------------------------------

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, stmt) -> None:
        kind = type(stmt)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            return  # a function of its own (its outline is walked on its own)
        if not self._worth(stmt, kind):
            # No declared name on its lines and no local of a known unit: nothing in it can
            # mix two units. What it binds forgets its old unit; its blocks are read as usual.
            env = self.env
            if not env:
                # Nothing to forget, and no statement in its blocks is worth reading unless it
                # spells a declared name: a statement read binds locals, one skipped only
                # forgets them, so the locals stay none until a declared name is spelled.
                if not _spells_between(self.needle_lines, stmt.lineno, stmt.end_lineno):
                    return
            else:
                for target in _bound_here(stmt, kind):
                    for name in _names_bound(target):
                        env.pop(name, None)
            if kind is ast.If and stmt.orelse:
                self._branches(stmt)
                return
            for block in statement_lists(stmt):
                self.block(block)
            return
        outer, self.stmt = self.stmt, stmt
        try:
            self._statement(stmt, kind)
        finally:
            self.stmt = outer

    def _worth(self, stmt, kind) -> bool:
        """Whether a statement's own lines (a compound statement's header) can hold a mix:
        they spell a declared name, or a local whose unit is known."""
        if self.needle_lines is None:
            return True
        first = stmt.lineno
        last = _header_end(stmt, kind)
        if _spells_between(self.needle_lines, first, last):
            return True
        text = None
        for name, unit in self.env.items():
            if unit is not None:
                if text is None:
                    text = "".join(self.source.lines[first - 1 : last])
                if name in text:
                    return True
        return False

    def _statement(self, stmt, kind) -> None:
        if kind is ast.Assign:
            value = self.eval(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif kind is ast.AnnAssign:
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value), stmt.value)
        elif kind is ast.AugAssign:
            value = self.eval(stmt.value)
            current = self.eval(stmt.target, load=True)
            op = type(stmt.op)
            if op in (ast.Add, ast.Sub):
                verb = "adds" if op is ast.Add else "subtracts"
                if self.mix(current, value, stmt.target, stmt.value, stmt.value, verb):
                    result = None  # as in `a + b`: a mixed value has no unit past the mix
                else:
                    result = _sum(*self.operands(current, value))
            elif op is ast.Mult:
                result = self.vocab.mul(*self.operands(current, value))
            elif op in (ast.Div, ast.FloorDiv):
                result = self.vocab.mul(*self.operands(current, value), -1)
            else:
                result = None
            if type(stmt.target) is ast.Name and self.vocab.of(stmt.target.id) is None:
                self.env[stmt.target.id] = result
        elif kind is ast.Return:
            if stmt.value is not None:
                value = self.eval(stmt.value)
                declared = self.vocab.of(self.qual.rpartition(".")[2])
                if real(declared):
                    self.check_into(
                        declared, value, stmt.value, "returns", f"`{self.qual}`", code="AC801"
                    )
        elif kind in (ast.For, ast.AsyncFor):
            self.eval(stmt.iter)
            for name in _names_bound(stmt.target):
                self.env.pop(name, None)
            self.block(stmt.body)
            self.block(stmt.orelse)
        elif kind is ast.If and stmt.orelse:
            self.eval(stmt.test)
            self._branches(stmt)
        else:
            for field in ("test", "value", "subject", "exc", "cause", "msg"):
                child = getattr(stmt, field, None)
                if isinstance(child, ast.expr):
                    self.eval(child)
            for item in getattr(stmt, "items", ()):
                self.eval(item.context_expr)
            for field in ("body", "orelse", "finalbody"):
                self.block(getattr(stmt, field, ()))
            for handler in getattr(stmt, "handlers", ()):
                self.block(handler.body)
            for case in getattr(stmt, "cases", ()):
                if case.guard is not None:
                    self.eval(case.guard)
                self.block(case.body)

    def _branches(self, stmt: ast.If) -> None:
        """An ``if`` with an ``else`` (an ``elif`` is one): the two are exclusive, so each
        starts from the locals before the statement. After it, a local either may have
        bound keeps a unit only where both ways agree on it; unknown is silent."""
        before = dict(self.env)
        self.block(stmt.body)
        after_body, self.env = self.env, dict(before)
        self.block(stmt.orelse)
        after_else = self.env
        # Each way started from a copy of ``before``: a local missing from one was forgotten
        # there (bound to something unknown), or never bound.
        self.env = {
            name: unit
            for name in after_body.keys() & after_else.keys()
            if (unit := after_body[name]) == after_else[name]
        }

    def assign(self, target, value, value_node) -> None:
        kind = type(target)
        if kind is ast.Name:
            declared = self.vocab.of(target.id)
            if real(declared):
                self.check_into(declared, value, value_node, "assigns", f"`{target.id}`")
            else:
                self.env[target.id] = value
        elif kind is ast.Attribute:
            self.eval(target.value)
            declared = self.vocab.of(target.attr)
            if real(declared):
                self.check_into(declared, value, value_node, "assigns", f"`{target.attr}`")
        elif kind in (ast.Tuple, ast.List):
            for elt in target.elts:
                for name in _names_bound(elt):
                    self.env.pop(name, None)
        elif kind is ast.Subscript:
            self.eval(target.value)
            self.eval(target.slice)

    # -- expressions -----------------------------------------------------------

    def eval(self, node, *, load: bool = False):
        """The unit of an expression (None unknown, ``SCALAR`` a number), checking inside."""
        kind = type(node)
        vocab = self.vocab
        if kind is ast.Constant:
            value = node.value
            return (
                SCALAR if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            )
        if kind is ast.Name:
            declared = vocab.of(node.id)
            if declared is not None:
                return declared
            return self.env.get(node.id)
        if kind is ast.Attribute:
            inner = node.value
            if type(inner) not in (ast.Name, ast.Attribute):
                self.eval(inner)
            return vocab.of(node.attr)
        if kind is ast.BinOp:
            left, right = self.eval(node.left), self.eval(node.right)
            op = type(node.op)
            if op in (ast.Add, ast.Sub):
                verb = "adds" if op is ast.Add else "subtracts"
                if self.mix(left, right, node.left, node.right, node, verb):
                    return None  # reported here: what is computed from it has no unit
                return _sum(*self.operands(left, right))
            if op is ast.Mult:
                return vocab.mul(*self.operands(left, right))
            if op in (ast.Div, ast.FloorDiv):
                if op is ast.FloorDiv and right is SCALAR and _ceiling(node):
                    return None  # `(n + 255) // 256` counts chunks, as `cdiv` does
                return vocab.mul(*self.operands(left, right), -1)
            if op is ast.Mod:
                return self.known(left)
            return None
        if kind is ast.UnaryOp:
            operand = self.eval(node.operand)
            return operand if type(node.op) in (ast.USub, ast.UAdd) else None
        if kind is ast.Compare:
            units = [self.eval(node.left), *(self.eval(c) for c in node.comparators)]
            nodes = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if type(op) in _COMPARE:
                    self.mix(units[i], units[i + 1], nodes[i], nodes[i + 1], node, "compares")
            return None
        if kind is ast.Call:
            return self.call(node)
        if kind is ast.IfExp:
            self.eval(node.test)
            a, b = self.eval(node.body), self.eval(node.orelse)
            if self.mix(a, b, node.body, node.orelse, node, "chooses between"):
                return None
            a = self.known(a)
            return a if real(a) else self.known(b)
        if kind is ast.Subscript:
            self.eval(node.slice)
            container = self.eval(node.value)
            # A slice of a quantity is the same quantity; one element of a container may be
            # anything (an id, a count, the bytes a buffer named for its pages holds).
            return self.known(container) if type(node.slice) is ast.Slice else None
        if kind is ast.Starred:
            return self.eval(node.value)
        if kind is ast.Lambda:
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child)
            elif isinstance(child, ast.comprehension):
                self.eval(child.iter)
                for cond in child.ifs:
                    self.eval(cond)
        return None

    def call(self, node: ast.Call):
        func = node.func
        if type(func) is ast.Attribute and type(func.value) not in (ast.Name, ast.Attribute):
            self.eval(func.value)
        args = [self.eval(a) for a in node.args]
        keywords = [(kw.arg, self.eval(kw.value), kw.value) for kw in node.keywords]
        spelling = self.spelling(func)
        last = spelling.rpartition(".")[2]
        # keyword arguments name the parameter they fill: no callee needed
        for name, unit, value_node in keywords:
            if name is None:
                continue
            declared = self.vocab.of(name)
            if real(declared):
                self.check_into(
                    declared, unit, value_node, "passes", f"`{name}` of `{last}`", code="AC802"
                )
        if any(real(a) for a in args):
            # Only an argument of known unit asks for the callee's parameters: a call's
            # result of no declared unit would need the callee's callee too.
            self.positional(node, spelling, args)
        if spelling in _KEEPS and len(args) == 1:
            return args[0]
        if spelling in ("max", "min") and len(args) >= 2 and not node.keywords:
            mixed = False
            for i in range(1, len(args)):
                mixed |= self.mix(
                    args[0], args[i], node.args[0], node.args[i], node, f"takes the {spelling} of"
                )
            if mixed:
                return None
            return next((a for a in map(self.known, args) if real(a)), None)
        if last in ("cdiv", "ceil_div", "div_up", "round_up_div") and len(args) == 2:
            divisor = self.known(args[1])
            if divisor is SCALAR or divisor is None:
                return None  # `cdiv(n, 256)` counts 256-wide chunks of n, not n's units
            return self.vocab.mul(self.known(args[0]), divisor, -1)
        # A function's name declares its result only when the vocabulary names it exactly
        # (`entry_bytes()`): a glob reads a function name's object, not its result
        # (`get_block_ids_for_computed_tokens()` returns block ids), so those are inferred.
        declared = self.vocab.exact.get(last)
        if declared is not None:
            return declared
        return _Deferred(node)

    def positional(self, node, spelling, args) -> None:
        from ..analysis.functions import O_QUAL, positional_params, self_bound

        if not self._may_answer(node, args):
            return
        target = self.program.resolve_call(self.module, self.outline, spelling)
        if target is None:
            return
        callee_module = self.program.module(target[0])
        callee = callee_module.outline(target[1]) if callee_module is not None else None
        if callee is None:
            return
        params = positional_params(callee)
        bound = self_bound(callee, spelling, target[1])
        for i, unit in enumerate(args):
            if type(node.args[i]) is ast.Starred:
                return
            index = i + bound
            if index >= len(params) or not real(unit):
                continue
            param = params[index]
            declared = self.vocab.of(param)
            where = f"`{param}` of `{callee[O_QUAL]}`"
            if not real(declared):
                sink = self._sink(target, index, callee_module, callee, param)
                if sink is None:
                    continue
                declared, into = sink
                where = f"`{param}` of `{callee[O_QUAL]}`, which it stores as `{into}`"
            self.check_into(declared, unit, node.args[i], "passes", where, code="AC802")

    def _may_answer(self, node, args) -> bool:
        """Whether an argument of this call may have a unit a parameter can disagree with.

        One of known unit may; a call's result (``_Deferred``) has one only when its own
        callee is a project function (``returns_of``). Asking which function that is costs
        little where it is none (a builtin, a method of a value) -- far less than finding this
        call's callee, its module parsed, and its body for what it binds a parameter to."""
        for i, unit in enumerate(args):
            if type(node.args[i]) is ast.Starred:
                return False  # past it no position is known (nor does `positional` look)
            if not real(unit):
                continue
            if not isinstance(unit, _Deferred):
                return True
            spelling = self.spelling(unit.node.func)
            answered = self._returns.get(spelling, False)
            if answered is not False:
                # Its callee's returns were asked already here: their answer is this
                # argument's unit (``known``), with nothing left to look up.
                if real(answered):
                    return True
                continue
            if self.program.resolve_call(self.module, self.outline, spelling) is not None:
                return True
        return False

    def _sink(self, target, index, module, callee, param_name):
        """The declared unit and name the callee binds its ``index``-th parameter to
        unchanged, or None: once per callee and position in a run (``Units.answers``), as
        every call of one callee asks the same."""
        answers = self.rule.answers(self.program)
        key = ("sink", target, index)
        found = answers.get(key, False)
        if found is False:
            found = answers[key] = self._find_sink(target, index, module, callee, param_name)
        return found

    def _find_sink(self, target, index, module, callee, param_name):
        from ..analysis.functions import D_UNITS

        # Only a callee whose text may bind the parameter to a declared name is walked.
        if not self.rule.may_store(self.program, module, callee, param_name):
            return None
        detail = module.detail(target[1])
        if detail is None:
            return None
        units = {self.vocab.of(name) for param, name in detail[D_UNITS][1] if param == index}
        units.discard(None)
        if len(units) != 1:
            return None
        unit = units.pop()
        name = next(n for p, n in detail[D_UNITS][1] if p == index and self.vocab.of(n) == unit)
        return (unit, name) if real(unit) else None

    def spelling(self, func) -> str:
        outliner = self.module.outliner
        shadowed = self.params | set(self.env)
        spelling = outliner.spell(func, shadowed)
        if self.self_name and (
            spelling == self.self_name or spelling.startswith(self.self_name + ".")
        ):
            spelling = "self" + spelling[len(self.self_name) :]
        return spelling

    def known(self, unit):
        """A deferred call's unit when its callee's returns agree on one; else as it is.

        Asked once per callee spelling in a function: the answer reads only the callee."""
        if not isinstance(unit, _Deferred):
            return unit
        spelling = self.spelling(unit.node.func)
        found = self._returns.get(spelling, False)
        if found is False:
            found = self._returns[spelling] = self.returns_of(spelling)
        return found

    def operands(self, a, b):
        """Two operands' units for a sum, product or quotient, which an unknown operand makes
        unknown whatever the other is: so a deferred call is asked only when the other
        operand may be a unit (``known`` reads a callee's body, often its module parsed)."""
        if a is None or b is None:
            return None, None
        a = self.known(a)
        if a is None:
            return None, None
        return a, self.known(b)

    def returns_of(self, spelling: str, module=None, outline=None, depth: int = 0):
        if depth > 3:
            return None
        module = module or self.module
        outline = outline or self.outline
        target = self.program.resolve_call(module, outline, spelling)
        if target is None:
            return None
        # What a callee's returns agree on reads only the callee (and its callees, to the
        # depth left): answered once per callee and depth in a run, not once per caller.
        answers = self.rule.answers(self.program)
        key = ("returns", target, depth)
        found = answers.get(key, False)
        if found is False:
            found = answers[key] = self._callee_returns(target, depth)
        return found

    def _callee_returns(self, target, depth: int):
        from ..analysis.functions import D_UNITS

        callee_module = self.program.module(target[0])
        if callee_module is None:
            return None
        detail = callee_module.detail(target[1])
        callee = callee_module.outline(target[1])
        if detail is None or not detail[D_UNITS][0]:
            return None
        found = set()
        for _line, form in detail[D_UNITS][0]:
            unit = self.form_unit(form, callee_module, callee, depth)
            if unit is SCALAR:
                continue
            if unit is None:
                return None
            found.add(unit)
        return found.pop() if len(found) == 1 else None

    def form_unit(self, form, module, outline, depth):
        if form == "?":
            return None
        tag = form[0]
        vocab = self.vocab
        if tag == "l":
            return SCALAR
        if tag == "n":
            return vocab.of(form[1])
        if tag == "v":
            declared = vocab.of(form[1])
            return (
                declared
                if declared is not None
                else self.form_unit(form[2], module, outline, depth)
            )
        if tag == "c":
            declared = vocab.exact.get(form[1].rpartition(".")[2])
            if declared is not None:
                return declared
            return self.returns_of(form[1], module, outline, depth + 1)
        a = self.form_unit(form[1], module, outline, depth)
        b = self.form_unit(form[2], module, outline, depth)
        if tag == "*":
            return vocab.mul(a, b)
        if tag == "/":
            return vocab.mul(a, b, -1)
        if tag == "+":
            if real(a) and real(b) and not compatible(a, b):
                return None
            return _sum(a, b)
        return None

    # -- findings ----------------------------------------------------------------

    def mix(self, a, b, node_a, node_b, anchor, verb) -> bool:
        """Report ``a`` and ``b`` mixed at ``anchor``, if they are; whether it did."""
        # A deferred call counts as real here, and its callee is asked only when the other
        # side may be a unit too: two deferred calls are both asked, the second only when
        # the first answered one.
        if not (real(a) and real(b)):
            return False
        if isinstance(a, _Deferred):
            a = self.known(a)
        if isinstance(b, _Deferred) and real(a):
            b = self.known(b)
        if not (real(a) and real(b)) or compatible(a, b):
            return False
        if verb == "compares" and comparable(a, b):
            return False
        seg_a, seg_b = self._segment(node_a), self._segment(node_b)
        if verb == "adds":
            said = f"adds {fmt(b)} (`{seg_b}`) to {fmt(a)} (`{seg_a}`)"
        elif verb == "subtracts":
            said = f"subtracts {fmt(b)} (`{seg_b}`) from {fmt(a)} (`{seg_a}`)"
        else:
            said = f"{verb} {fmt(a)} (`{seg_a}`) and {fmt(b)} (`{seg_b}`)"
        self._report(anchor, "AC801", said, frm=b, to=a)
        return True

    def check_into(self, declared, value, node, verb, where, *, code="AC801") -> None:
        if isinstance(value, _Deferred):
            value = self.known(value)
        if not real(value) or compatible(value, declared):
            return
        literal = _literal_ratio(node)
        if literal is not None:
            inner = self.known(self.eval_quiet(literal[0]))
            if real(inner) and not compatible(inner, declared):
                ratios = self.vocab.conversions(inner, declared)
                if ratios:
                    named = ", ".join(f"`{r}`" for r, _ in ratios)
                    self._report(
                        node,
                        "AC803",
                        f"`{self._segment(node)}` writes the conversion from {fmt(inner)} to "
                        f"{fmt(declared)} as its value `{literal[1]}`: write the declared ratio "
                        f"({named}) even where it is {literal[1]}, so the code is right the day "
                        "it is not",
                        suggest=False,
                    )
                    return
        if verb == "assigns":
            said = (
                f"assigns {fmt(value)} (`{self._segment(node)}`) to {where}, "
                f"declared {fmt(declared)}"
            )
        elif verb == "returns":
            said = (
                f"returns {fmt(value)} (`{self._segment(node)}`) from {where}, "
                f"declared {fmt(declared)}"
            )
        else:
            said = (
                f"passes {fmt(value)} (`{self._segment(node)}`) as {where}, "
                f"declared {fmt(declared)}"
            )
        # Which side is wrong, the name or the value, the units cannot say: a name that holds
        # another unit than it declares is as likely as a missing conversion, and dropping a
        # conversion the author wrote on purpose breaks right code. Where the name is the
        # function's own (an assignment), say both.
        rename = (
            f"; or, if {where} is meant to hold {fmt(value)}, name it for that"
            if verb == "assigns"
            else ""
        )
        self._report(
            node,
            code,
            said,
            frm=value,
            to=declared,
            extra=self._converted_twice(node, declared),
            rename=rename,
        )

    def _converted_twice(self, node, declared) -> str:
        """``x * ratio`` where ``x`` is already in the declared unit: say to drop the ratio."""
        if type(node) is not ast.BinOp or type(node.op) not in (ast.Mult, ast.Div, ast.FloorDiv):
            return ""
        op = "*" if type(node.op) is ast.Mult else "/" if type(node.op) is ast.Div else "//"
        for kept, ratio in ((node.left, node.right), (node.right, node.left)):
            if ratio is node.left and op != "*":
                continue
            if self.known(self.eval_quiet(kept)) == declared:
                return (
                    f"; `{self._segment(kept)}` is already {fmt(declared)}: drop "
                    f"`{op} {self._segment(ratio)}`"
                )
        return ""

    def eval_quiet(self, node):
        """An operand's unit, without reporting what is inside it twice."""
        findings, flagged = self.findings, set(self._flagged)
        self.findings = []
        try:
            return self.eval(node)
        finally:
            self.findings, self._flagged = findings, flagged

    def _report(
        self, anchor, code, said, *, frm=None, to=None, suggest=True, extra="", rename=""
    ) -> None:
        if id(anchor) in self._flagged:
            return
        self._flagged.add(id(anchor))
        hint = extra
        if suggest and not hint and frm is not None and to is not None:
            ratios = self.vocab.conversions(frm, to)
            if ratios:
                hint = "; convert with " + " or ".join(
                    f"`{op} {name}` ({fmt(self.vocab.exact[name])})" for name, op in ratios
                )
            else:
                hint = " (no declared conversion relates the two)"
        hint += rename
        message = said if code == "AC803" else f"{said}: two units mixed without a conversion{hint}"
        self.findings.append(
            self.rule.finding(self.source, anchor, message, code=code, span_node=self.stmt)
        )

    def _segment(self, node) -> str:
        from ..analysis.names import source_segment

        text = source_segment(self.source, node, first_line=True)
        return text if len(text) <= 60 else text[:57] + "..."


def _ceiling(node) -> bool:
    """``(a + b - 1) // b``, ``(a + c) // d`` with literal ``c``: ceiling division."""
    left = node.left
    return type(left) is ast.BinOp and type(left.op) in (ast.Add, ast.Sub)


def _literal_ratio(node):
    """``(x, value)`` for ``x * c``, ``c * x``, ``x / c``, ``x // c`` with ``c`` a number."""
    if type(node) is not ast.BinOp or type(node.op) not in (ast.Mult, ast.Div, ast.FloorDiv):
        return None
    for this, other in ((node.right, node.left), (node.left, node.right)):
        if type(this) is ast.Constant and isinstance(this.value, (int, float)):
            if this is node.left and type(node.op) is not ast.Mult:
                continue
            return other, this.value
    return None


def _header_end(stmt, kind) -> int:
    """The last line of a statement's own expressions: a compound statement's header."""
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and kind is not ast.Lambda:
        return max(stmt.lineno, body[0].lineno - 1)
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _bound_here(stmt, kind) -> list:
    if kind is ast.Assign:
        return list(stmt.targets)
    if kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
        return [stmt.target]
    if kind in (ast.With, ast.AsyncWith):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return []


def _names_bound(target) -> list[str]:
    kind = type(target)
    if kind is ast.Name:
        return [target.id]
    if kind is ast.Attribute and type(target.value) is ast.Name:
        return [target.value.id]  # `self.x = ...`: as the walk below finds it
    return [n.id for n in ast.walk(target) if type(n) is ast.Name]


def _spells_between(lines: tuple[int, ...], first: int, last: int | None) -> bool:
    """Whether one of ``lines`` (ascending) lies in ``first``..``last``."""
    i = bisect.bisect_left(lines, first)
    return i < len(lines) and lines[i] <= (last or first)
