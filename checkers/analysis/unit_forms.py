"""What a function returns, as a units vocabulary can read it, and which values are evidently
host ints: the part of a function's walk that units and reachable-calls read.

A *unit form* is a small tree of names, calls and arithmetic (``("*", ("n", "blocks"), ("n",
"block_ratio"))``), kept in the summary without knowing any vocabulary: a ``units`` contract
evaluates it under its own (``checkers.analysis.unit_flow``). An *evident int* is a value that
cannot be a tensor (a literal, ``len()``, ``.numel()``, a parameter annotated ``int``): a
``repeat_interleave`` whose repeats is one reads no device.
"""

from __future__ import annotations

import ast
import re

from .functions import _MAX_FORM_NODES, UNKNOWN

_COUNT_NAME = re.compile(r"(?:num|n)_[a-z0-9_]*$|[a-z0-9_]*_num_[a-z0-9_]*$|[a-z0-9_]*_size$")
_INT_METHODS = frozenset({"numel", "item", "size", "bit_length", "dim", "element_size"})

# Calls whose result has the unit of their one argument.
_UNIT_PRESERVING = frozenset({"int", "round", "abs", "math.ceil", "math.floor", "float"})


def _annotated_int(annotation) -> bool:
    """``int``, ``Optional[int]``, ``int | None``."""
    kind = type(annotation)
    if kind is ast.Name:
        return annotation.id == "int"
    if kind is ast.Constant:
        return annotation.value == "int"
    if kind is ast.Subscript:
        return (
            type(annotation.value) is ast.Name
            and annotation.value.id == "Optional"
            and (_annotated_int(annotation.slice))
        )
    if kind is ast.BinOp and type(annotation.op) is ast.BitOr:
        parts = (annotation.left, annotation.right)
        return any(_annotated_int(p) for p in parts) and all(
            _annotated_int(p) or (type(p) is ast.Constant and p.value is None) for p in parts
        )
    return False


class UnitForms:
    """The unit-form and evident-int half of ``FunctionWalker``."""

    def _int_evident(self, node, depth: int) -> bool:
        """Whether a value is evidently a host int: a literal, ``int()``/``len()``/``round()``,
        ``.numel()``/``.item()``/``.size(i)``, ``.shape[i]``, a parameter annotated ``int``, a
        name or attribute spelled as a count (``num_*``, ``*_num_*``, ``n_*``, ``*_size``),
        arithmetic of those, or a local last bound to one."""
        kind = type(node)
        if kind is ast.Constant:
            return type(node.value) is int
        if kind is ast.Name or kind is ast.Attribute:
            name = node.id if kind is ast.Name else node.attr
            if name in self._int_params and kind is ast.Name:
                return True
            if _COUNT_NAME.match(name):
                return True  # spelled as a count: `num_draft_tokens`, `block_size`
            if kind is ast.Attribute:
                return False
            bound = self._locals.get(node.id)
            return depth > 0 and bound is not None and self._int_evident(bound, depth - 1)
        if kind is ast.Call:
            func = node.func
            if type(func) is ast.Name:
                return func.id in ("int", "len", "round")
            return type(func) is ast.Attribute and func.attr in _INT_METHODS
        if kind is ast.Subscript:
            value = node.value
            return type(value) is ast.Attribute and value.attr == "shape"
        if kind is ast.BinOp and depth > 0:
            return self._int_evident(node.left, depth - 1) and self._int_evident(
                node.right, depth - 1
            )
        return False

    def form(self, node, budget=None) -> object:
        """A small tree a units vocabulary can evaluate: names, calls, arithmetic.

        ``("n", name)`` a name, attribute or parameter by its last component;
        ``("v", name, form)`` a local and the value last bound to it;
        ``("c", spelling)`` a call's result; ``("*", a, b)``, ``("/", a, b)``,
        ``("+", a, b)`` arithmetic; ``("l",)`` a number; ``"?"`` unknown.
        Locals are replaced by the last value bound to them before the point
        of use (one binding back, no further).
        """
        if budget is None:
            budget = [_MAX_FORM_NODES]
        budget[0] -= 1
        if budget[0] < 0:
            return UNKNOWN
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return ("l", value)
            return UNKNOWN
        if kind is ast.Name:
            if node.id == self.self_name:
                return UNKNOWN
            bound = self._locals.get(node.id)
            if bound is not None and bound is not node:
                inner = self._locals.pop(node.id)  # no cycle through `x = x * 2`
                try:
                    value = self.form(inner, budget)
                finally:
                    self._locals[node.id] = inner
                # The local's own name first (a declared name is the declaration), else
                # what it was bound to.
                return ("v", node.id, value)
            return ("n", node.id)
        if kind is ast.Attribute:
            return ("n", node.attr)
        if kind is ast.Call:
            spelling = self.callee(node.func)
            if spelling in _UNIT_PRESERVING and len(node.args) == 1 and not node.keywords:
                return self.form(node.args[0], budget)
            if spelling in ("max", "min") and len(node.args) >= 2 and not node.keywords:
                return ("+", *(self.form(a, budget) for a in node.args[:2]))
            if spelling.rpartition(".")[2] == "cdiv" and len(node.args) == 2:
                return ("/", self.form(node.args[0], budget), self.form(node.args[1], budget))
            return ("c", spelling)
        if kind is ast.BinOp:
            op = type(node.op)
            left = self.form(node.left, budget)
            right = self.form(node.right, budget)
            if op is ast.Mult:
                return ("*", left, right)
            if op in (ast.Div, ast.FloorDiv):
                return ("/", left, right)
            if op in (ast.Add, ast.Sub):
                return ("+", left, right)
            if op is ast.Mod:
                return left
            return UNKNOWN
        if kind is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
            return self.form(node.operand, budget)
        if kind is ast.IfExp:
            return ("+", self.form(node.body, budget), self.form(node.orelse, budget))
        return UNKNOWN
