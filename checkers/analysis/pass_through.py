"""A helper of the module that hands back its arguments worked out.

``pad_vocab_size(vocab_size, pad_to)`` returning ``((vocab_size + pad_to - 1)
// pad_to) * pad_to``, a method ``_tensor(self, indices)`` returning
``torch.as_tensor(indices, device=self.device).view(-1)``: whatever the call
site passes comes back rounded, cast or reshaped, and nothing else goes into
it. Read at the call site, ``pad_vocab_size(self.vocab_size, 64)`` is the
caller's vocabulary size seen another way, as ``(n + 63) // 64 * 64`` written
in place would be -- not a value the function computed from its own state.

Only the helper's text is read. Its body is nothing but ``return``s (under
``if``s, beside a ``raise``): a statement that binds a name, fills a
container or calls for its effect works something out. Every ``return``
gives an expression of its parameters (not ``self``), literals, arithmetic,
attributes and items, and the casts, moves, reshapes and reductions
``shapes`` names, and reads at least one parameter: ``return None`` where a
lookup fails is a value the helper chose. A coroutine is a computation.
Where to put the result (``dtype=``, ``device=``) changes no value, so those
keywords may be anything.
"""

from __future__ import annotations

import ast

from .names import dotted
from .shapes import (
    CONVERSIONS,
    REDUCING_BUILTINS,
    REDUCING_METHODS,
    VIEW_BUILTINS,
    VIEW_METHODS,
)

# Calls that make a tensor of what they are given, as it is.
_TENSOR_OF = frozenset({"torch.as_tensor", "torch.tensor", "math.ceil", "math.floor"})
# Keywords that say where a result goes, not what it holds.
_PLACEMENT = frozenset({"dtype", "device", "non_blocking"})
# Methods of an argument, and functions, that hand back what they are given worked out.
_PASSING_METHODS = VIEW_METHODS | REDUCING_METHODS | CONVERSIONS
_PASSING_FUNCTIONS = VIEW_BUILTINS | REDUCING_BUILTINS | _TENSOR_OF


def returns_its_arguments(node: ast.FunctionDef, skip_first: bool) -> bool:
    """Does ``node`` (a method when ``skip_first``: its first parameter is the
    instance) return nothing but its parameters worked out?"""
    if not isinstance(node, ast.FunctionDef):
        return False  # an `async def` (an `AsyncFunctionDef`) hands back a coroutine
    args = node.args
    ordered = [*args.posonlyargs, *args.args]
    if skip_first:
        ordered = ordered[1:]
    params = {a.arg for a in [*ordered, *args.kwonlyargs]}
    returns: list[ast.Return] = []
    if not _only_returns(node.body, returns):
        return False
    return bool(returns) and all(
        r.value is not None
        and _of_params(r.value, params)
        # `return None` where a lookup fails: a value the helper chose, not one handed back.
        and any(isinstance(n, ast.Name) for n in ast.walk(r.value))
        for r in returns
    )


def _only_returns(body: list[ast.stmt], returns: list[ast.Return]) -> bool:
    """Is ``body`` nothing but ``return``s, ``raise``s and ``if``s of them (a docstring
    aside)? A statement that binds, fills or calls for its effect works something out."""
    for stmt in body:
        if isinstance(stmt, ast.Return):
            returns.append(stmt)
        elif isinstance(stmt, ast.If):
            if not (_only_returns(stmt.body, returns) and _only_returns(stmt.orelse, returns)):
                return False
        elif not (
            isinstance(stmt, ast.Raise)
            or (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
        ):
            return False
    return True


def _of_params(expr: ast.AST | None, params: set[str]) -> bool:
    if expr is None or isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in params
    if isinstance(expr, ast.BinOp):
        return _of_params(expr.left, params) and _of_params(expr.right, params)
    if isinstance(expr, ast.UnaryOp):
        return _of_params(expr.operand, params)
    if isinstance(expr, ast.Attribute):
        return _of_params(expr.value, params)  # `x.shape`, `x.dtype`
    if isinstance(expr, ast.Subscript):
        return _of_params(expr.value, params) and _of_params(expr.slice, params)
    if isinstance(expr, ast.Slice):
        return all(_of_params(p, params) for p in (expr.lower, expr.upper, expr.step))
    if isinstance(expr, ast.Tuple):
        return all(_of_params(e, params) for e in expr.elts)
    if not isinstance(expr, ast.Call):
        return False
    callee = expr.func
    if isinstance(callee, ast.Attribute) and callee.attr in _PASSING_METHODS:
        if not _of_params(callee.value, params):
            return False
    elif dotted(callee) not in _PASSING_FUNCTIONS:
        return False
    return all(_of_params(a, params) for a in expr.args) and all(
        k.arg in _PLACEMENT or _of_params(k.value, params) for k in expr.keywords
    )
