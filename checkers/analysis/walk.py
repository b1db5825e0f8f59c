"""Walks of a whole tree that visit only the nodes something can sit under.

``ast.walk`` costs three generators a node (``walk``, ``iter_child_nodes``,
``iter_fields``) and visits every ``Load``, ``Store`` and operator singleton.
A walk that only needs statements, calls or string constants can descend
through a per-type table of the fields that can hold a node instead: a
``Name`` is then a leaf and no context or operator is pushed. Removing
leaves changes nothing about the order the other nodes are met in, so a
breadth-first walk over the table meets them in ``ast.walk``'s order.
"""

from __future__ import annotations

import ast
from collections import deque

# Fields that never hold a node another node could sit under: names and other
# plain values, and the context, operator and comparison singletons (which
# have no children).
NON_NODE_FIELDS = frozenset(
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


def statement_lists(stmt: ast.AST) -> list[list]:
    """The statement lists directly inside a compound statement: its body, ``else`` and
    ``finally``, each handler's and each case's body."""
    lists = [getattr(stmt, name, None) for name in ("body", "orelse", "finalbody")]
    lists += [h.body for h in getattr(stmt, "handlers", ())]
    lists += [c.body for c in getattr(stmt, "cases", ())]
    return [b for b in lists if isinstance(b, list)]


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of ``kind`` that can hold a node with children (memoised per type)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            name for name in getattr(kind, "_fields", ()) if name not in NON_NODE_FIELDS
        )
    return fields


def nodes_of_types(tree: ast.AST, kinds: tuple[type, ...]) -> list[ast.AST]:
    """Every node of ``tree`` whose type is one of ``kinds``, in ``ast.walk``'s order.

    ``kinds`` must not be a type the table makes a leaf of (``Name``,
    ``Constant`` are found; their children are never needed).
    """
    found = []
    table = _CHILD_FIELDS
    wanted = frozenset(kinds)
    queue = deque([tree])
    popleft, append, extend = queue.popleft, queue.append, queue.extend
    while queue:
        node = popleft()
        kind = type(node)
        if kind in wanted:
            found.append(node)
        fields = table.get(kind)
        if fields is None:
            fields = child_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            else:
                append(value)
    return found


def string_constants(tree: ast.AST) -> list[ast.Constant]:
    """Every ``str``/``bytes`` constant of ``tree``, in no particular order (a stack)."""
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
            fields = child_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(value)
            else:
                push(value)
    return found
