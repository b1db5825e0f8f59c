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


# Fields that never hold a node a string constant can sit under: names and
# other plain values, and the context, operator and comparison singletons.
# Skipping them leaves ``Name`` (most of a tree's nodes) a leaf and pushes no
# ``Load``/``Store``/``Add`` node at all.
_NON_NODE_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "name",
        "names",
        "module",
        "arg",
        "asname",
        "type_comment",
        "conversion",
        "kind",
        "level",
        "is_async",
        "simple",
        "kwd_attrs",
        "rest",
    }
)
# Node type -> the fields to descend into; ``None`` (an absent child, a dict's
# ``**`` key) has none.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {type(None): ()}


def _child_fields(kind: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS[kind] = tuple(
        name for name in getattr(kind, "_fields", ()) if name not in _NON_NODE_FIELDS
    )
    return fields


def _string_constants(tree: ast.AST) -> list[ast.Constant]:
    """Every ``str``/``bytes`` constant of ``tree`` (in no particular order: they are counted).

    An explicit stack over a per-type table of the fields that can hold a
    node, instead of ``ast.walk``, whose three generators a node (``walk``,
    ``iter_child_nodes``, ``iter_fields``) made this walk a fifth of a cold
    input-assert run on vLLM; the table (no ``isinstance`` per field, no
    names, contexts or operators pushed) is 1.6x faster again than a stack
    over every field.
    """
    found = []
    constant, strings = ast.Constant, (str, bytes)
    table = _CHILD_FIELDS
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is constant:
            if isinstance(node.value, strings):
                found.append(node)
            continue
        fields = table.get(kind)
        if fields is None:
            fields = _child_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            else:
                push(value)
    return found


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
