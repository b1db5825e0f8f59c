"""A function's scope: its parameters, its ``self``, and what its names are bound to.

Both heuristic rules read a value by walking from where it is read to where it
was bound, through enclosing functions (a closure's free name) up to the module.
A ``Scope`` is one function (or the module); ``bindings`` maps a name to what
the analysis that built it records per binding -- ``bindings.BindingIndex``
keeps ``(statement, value, block chain)``, ``int_kinds`` ``(target, value)``.
A scope is built from its function's node alone, so an analysis may build one
when a question first reaches that function rather than for the whole module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .names import has_decorator

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass
class Scope:
    """One function (or the module, with ``node`` the module) and its names."""

    node: ast.AST
    parent: Scope | None
    klass: ast.ClassDef | None  # set when this is a method
    params: dict[str, ast.arg]  # without the method's own `self`
    self_name: str | None
    defaults: dict[str, ast.expr] = field(default_factory=dict)
    bindings: dict[str, list] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return getattr(self.node, "name", "<lambda>")


def function_scope(node: FunctionNode, parent: Scope | None, klass: ast.ClassDef | None) -> Scope:
    """The scope of a function: every parameter by name, their defaults, and ``self``.

    A function defined in a class body is a method and its first positional
    parameter is the instance (or the class) -- unless it is a staticmethod.
    """
    args = node.args
    ordered = [*args.posonlyargs, *args.args]
    params = {a.arg: a for a in [*ordered, *args.kwonlyargs]}
    for extra in (args.vararg, args.kwarg):
        if extra is not None:
            params[extra.arg] = extra
    defaults = dict(
        zip(
            (a.arg for a in ordered[len(ordered) - len(args.defaults) :]),
            args.defaults,
            strict=True,
        )
    )
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if d is not None:
            defaults[a.arg] = d
    self_name = None
    if klass is not None and ordered and not has_decorator(node, "staticmethod"):
        self_name = ordered[0].arg
        params.pop(self_name, None)
    return Scope(node, parent, klass, params, self_name, defaults)


def self_class(name: str, scope: Scope | None) -> ast.ClassDef | None:
    """The class whose instance ``name`` is: ``self`` in a method or in its closures.

    A parameter or a local binding of the same name in between hides it.
    """
    while scope is not None:
        if name == scope.self_name:
            return scope.klass
        if name in scope.params or name in scope.bindings:
            return None
        scope = scope.parent
    return None


def within(inner: Scope | None, outer: Scope | None) -> bool:
    """Whether ``inner`` is ``outer`` or nested inside it."""
    while inner is not None:
        if inner is outer:
            return True
        inner = inner.parent
    return False


def before(a: ast.AST, b: ast.AST) -> bool:
    """Whether ``a`` starts before ``b`` in the file."""
    return (a.lineno, a.col_offset) < (b.lineno, b.col_offset)


class Element(ast.AST):
    """An element of an iterable: what a ``for`` target (or an unpacked name) is bound to."""

    _fields = ("iterable",)

    def __init__(self, iterable: ast.AST) -> None:
        super().__init__()
        self.iterable = iterable


class Part(ast.AST):
    """Item ``index`` of an unpacked value (``a, b = pair()``)."""

    _fields = ("value",)

    def __init__(self, value: ast.AST | None, index: int) -> None:
        super().__init__()
        self.value = value
        self.index = index
