"""Which functions of a module may be a producer of a dict: a cheap look at the tree, before
any body is walked.

published-keys judges a read against the key sets of its producer's return paths, and a
producer is judged only when it returns, on some reachable path, a dict it built itself: a
literal, ``dict(...)``, or a name bound to one (``checkers.analysis.functions`` tracks exactly
these), and on no path anything else. So a module none of whose functions has such a return
holds no producer, and no read there can be linked to one: its bodies need not be walked.

What is found is a superset, never a subset, of the producers the full walk finds: a
function counts when one of its returns hands back a literal, ``dict(...)``, or a name it
assigns one of those (or a comprehension, or another name) anywhere in its own body, whether
or not that binding reaches the return, and whatever its other returns are. A class's
``__init__`` may count and is still no producer a call can reach (calling a class returns the
instance).
"""

from __future__ import annotations

import ast
import re

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
# What holds statements: a return inside one of these is the function's own.
_COMPOUND = frozenset(
    getattr(ast, name)
    for name in (
        "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "Match",
        "ExceptHandler", "match_case",
    )
    if hasattr(ast, name)
)  # fmt: skip


def dict_producers(tree: ast.Module) -> frozenset[str]:
    """The names of the functions (methods and nested ones too) that may be producers."""
    found: set[str] = set()
    stack: list = list(tree.body)
    while stack:
        node = stack.pop()
        if type(node) in _DEFS:
            if _may_produce(node, stack):
                found.add(node.name)
            continue
        for field in _BLOCKS:
            stack.extend(getattr(node, field, ()) or ())
    return frozenset(found)


def spells_a_call_of(text: str, names) -> bool:
    """Whether ``text`` calls one of ``names`` somewhere: a ``name(`` that is no ``def name(``.
    A read is linked to a producer of its own module only through a call of it (its result,
    ``self``'s attribute assigned it, a caller's argument)."""
    for name in names:
        if text.count(name) <= 1:
            continue  # its definition alone
        for match in re.finditer(re.escape(name) + r"\s*\(", text):
            start = match.start()
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue  # the end of a longer name
            before = text[max(0, start - 64) : start].rstrip()
            if before.endswith("def") and not (before[-4:-3].isalnum() or before[-4:-3] == "_"):
                continue  # `def name(`
            return True
    return False


def _dict_made(value) -> bool:
    kind = type(value)
    return kind is ast.Dict or (
        kind is ast.Call and type(value.func) is ast.Name and value.func.id == "dict"
    )


def _may_produce(function, outer: list) -> bool:
    """Whether a ``return`` of the function's own body (nested definitions are pushed on
    ``outer``, each judged as its own function) may hand back a dict it built. Its other
    returns are not asked about: one in code after a ``return`` is never walked, so it opens
    no path, and a function with only such returns is rare enough to walk."""
    returned = []
    bound: set[str] = set()
    stack: list = list(function.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _DEFS or kind is ast.ClassDef:
            outer.append(node)
            continue
        if kind is ast.Return:
            if node.value is not None:
                returned.append(node.value)
        elif kind is ast.Assign and _binds_a_dict(node.value):
            bound.update(t.id for t in node.targets if type(t) is ast.Name)
        elif (
            kind is ast.AnnAssign
            and node.value is not None
            and type(node.target) is ast.Name
            and _binds_a_dict(node.value)
        ):
            bound.add(node.target.id)
        if kind in _COMPOUND:
            for field in _BLOCKS:
                stack.extend(getattr(node, field, ()) or ())
    return any(
        _dict_made(value) or (type(value) is ast.Name and value.id in bound) for value in returned
    )


def _binds_a_dict(value) -> bool:
    """A value whose name the walk tracks as a dict: built, comprehended, or another name."""
    return _dict_made(value) or type(value) in (ast.Name, ast.DictComp)


__all__ = ["dict_producers", "spells_a_call_of"]
