"""String literals a fix writes, in the quotes of the file it writes them into.

A fix that spells a literal with ``repr`` writes ``'...'``; in a file
formatted with ruff's (or black's) default double quotes, ``ruff format``
then rewrites the fix's line again, and the fix shows up twice in review.
The file's own style is read from its string literals (their opening quote,
at the position ``ast`` gives), the majority deciding and double quotes
winning a tie -- the formatters' default. As the formatters do, the
preferred quote gives way where it would need more escapes than the other
(``"it's"`` stays double-quoted in a single-quote file).
"""

from __future__ import annotations

import ast
import contextlib

_PREFIX_CHARS = frozenset("rRbBuUfF")


def preferred_quote(source) -> str:
    """``"`` or ``'``: the quote most of ``source``'s string literals open with (memoised)."""
    cached = getattr(source, "_preferred_quote", None)
    if cached is not None:
        return cached
    counts = {'"': 0, "'": 0}
    tree = source.tree
    if tree is not None:
        lines = source.lines
        for node in _string_constants(tree):
            quote = _opening_quote(lines, node)
            if quote:
                counts[quote] += 1
    quote = "'" if counts["'"] > counts['"'] else '"'
    # A source type with __slots__ cannot keep it: recomputed next time.
    with contextlib.suppress(AttributeError):
        source._preferred_quote = quote
    return quote


def _string_constants(tree: ast.AST) -> list[ast.Constant]:
    """Every ``str``/``bytes`` constant of ``tree`` (in no particular order: they are counted).

    ``analysis.walk`` descends only into the fields that can hold a node:
    ``ast.walk``'s three generators a node made this walk a fifth of a cold
    input-assert run on vLLM, and a stack over every field is 1.6x slower again
    than the table's (names, contexts and operators pushed for nothing).
    """
    from .analysis.walk import string_constants

    return string_constants(tree)


def _opening_quote(lines: list[str], node: ast.AST) -> str:
    lineno = getattr(node, "lineno", None)
    if lineno is None or not 0 < lineno <= len(lines):
        return ""
    line = lines[lineno - 1]
    # col_offset is in UTF-8 bytes; the literal's prefix and quote are ASCII, and the
    # text before it converts exactly.
    if line.isascii():
        start = node.col_offset
    else:
        start = len(line.encode("utf-8")[: node.col_offset].decode("utf-8", "replace"))
    i = start
    while i < len(line) and line[i] in _PREFIX_CHARS and i - start < 2:
        i += 1
    return line[i] if i < len(line) and line[i] in "\"'" else ""


def string_literal(value: str, quote: str = '"') -> str:
    """``value`` as a Python literal in ``quote``, unless the other quote needs fewer escapes."""
    other = "'" if quote == '"' else '"'
    if value.count(quote) > value.count(other):
        quote, other = other, quote
    body = repr(value)[1:-1]  # escapes for backslashes, control and non-printable characters
    # repr chose its own quote; undo its escape of the one we do not use, add ours.
    body = body.replace("\\" + other, other) if repr(value)[0] == other else body
    if repr(value)[0] != quote:
        body = body.replace(quote, "\\" + quote)
    return f"{quote}{body}{quote}"
