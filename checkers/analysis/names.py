"""How an expression is spelled: the dotted path of a name, a callee's short name."""

from __future__ import annotations

import ast


def dotted(node: ast.AST, *, through_calls: bool = False) -> str:
    """``a.b.c`` for a name or an attribute chain of names; ``""`` for anything else.

    With ``through_calls`` a call is read as its callee wherever it sits in the
    chain (``torch.device("cuda")`` -> ``torch.device``, ``f().g`` -> ``f.g``):
    the spelling of what is called, for matching decorators and known functions.
    Without it, ``torch.device("cuda")`` names no path, which is what a question
    about a value (a dtype, an annotation) needs.
    """
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value, through_calls=through_calls)
        return f"{inner}.{node.attr}" if inner else ""
    if through_calls and isinstance(node, ast.Call):
        return dotted(node.func, through_calls=True)
    return ""


def call_name(func: ast.AST) -> str | None:
    """The name a call site is known by: ``f`` for ``f(...)`` and ``obj.f(...)``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def has_decorator(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is decorated with ``name`` (``@name``, ``@mod.name``, ``@name(...)``)."""
    return any(
        dotted(d, through_calls=True).rpartition(".")[2] == name
        for d in getattr(node, "decorator_list", ())
    )


def source_segment(source, node: ast.AST, *, first_line: bool = False) -> str:
    """The node's source text, cut from the file's already-split lines.

    ``ast.get_source_segment`` re-splits the whole file on every call, which on
    a 10,000-line module with a thousand asserts is most of a check. With
    ``first_line`` a node spanning several lines gives its first line and
    `` ...``: enough to name it in a message.
    """
    line, col, end_line, end_col = source.span(node)
    lines = source.lines[line - 1 : end_line]
    if not lines:
        return ""
    if len(lines) == 1:
        return lines[0][col - 1 : end_col - 1]
    if first_line:
        return lines[0][col - 1 :].rstrip() + " ..."
    return lines[0][col - 1 :] + "".join(lines[1:-1]) + lines[-1][: end_col - 1]
