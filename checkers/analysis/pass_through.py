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

A reader of the module goes one step further: ``_read_until_stop(index, text,
stops)`` searches its ``text`` for the stops and returns where it stopped, the
piece ``text[index:pos]`` and the stop it met. It binds names and loops, but it
reads nothing but what it is handed -- no global, no attribute of an object it
was not handed, no function but a few builtins that only measure and count --
and hands back a piece of one of its parameters. What it hands back is that
argument read, cut where the argument itself says: ``content = text[index:pos]``
written in place would be the caller's text, and so is the helper's. A piece
the caller cuts by its own bound stays the caller's business; the reader's
bounds come from the text it reads.
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


# Builtins a reader may call: they measure, count and order what they are handed.
_READING_BUILTINS = frozenset(
    {"len", "min", "max", "range", "enumerate", "reversed", "zip", "abs", "isinstance"}
)
# What reaches outside the function, defines another one, holds a resource or yields.
_NOT_READING = (
    ast.Global,
    ast.Nonlocal,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.With,
    ast.Import,
    ast.ImportFrom,
    ast.Yield,
    ast.YieldFrom,
)


def pieces_handed_back(node: ast.FunctionDef, skip_first: bool) -> set[str]:
    """The parameters of ``node`` (a method when ``skip_first``: its instance is not
    read) whose pieces it hands back, when it reads nothing but what it is handed
    (``_read_until_stop(index, text, stops)`` returning ``text[index:pos]``); empty
    when it reads anything else, or hands back no piece."""
    if not isinstance(node, ast.FunctionDef):
        return set()  # a coroutine hands back a coroutine
    args = node.args
    ordered = [*args.posonlyargs, *args.args]
    if skip_first:
        ordered = ordered[1:]
    params = {a.arg for a in [*ordered, *args.kwonlyargs]}
    own = set()  # the names the body binds
    sliced: dict[str, str] = {}  # a local bound to a piece of a parameter -> the parameter
    for stmt in node.body:
        for n in ast.walk(stmt):
            if isinstance(n, _NOT_READING):
                return set()
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                own.add(n.id)
            elif isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
                return set()  # `x[0] = 1`, `x.n = 1`: it fills what it was handed
            if isinstance(n, ast.Assign) and len(n.targets) == 1:
                target = n.targets[0]
                root = _sliced_parameter(n.value, params)
                if isinstance(target, ast.Name) and root is not None:
                    sliced[target.id] = root
    known = params | own | _READING_BUILTINS
    for stmt in node.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in known:
                return set()  # a global, the instance, a function it calls
            if (
                isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id not in _READING_BUILTINS
            ):
                return set()  # a callback it was handed does what it likes
    pieces = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Return) and n.value is not None:
            values = n.value.elts if isinstance(n.value, ast.Tuple) else [n.value]
            for value in values:
                root = _sliced_parameter(value, params)
                if root is None and isinstance(value, ast.Name):
                    root = sliced.get(value.id)
                if root is not None:
                    pieces.add(root)
    return pieces - own  # a parameter bound again is no longer what the caller passed


def _sliced_parameter(expr: ast.AST | None, params: set[str]) -> str | None:
    """``text[index:pos]``, ``x[0]``: the parameter an item or slice is cut from."""
    if (
        isinstance(expr, ast.Subscript)
        and isinstance(expr.value, ast.Name)
        and expr.value.id in params
    ):
        return expr.value.id
    return None
