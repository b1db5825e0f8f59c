"""What an analysis computes from one top-level statement alone, kept while the statement lives.

The language server's next tree is the last one with the edited statements
parsed again (``checkers.incremental``): every other top-level statement is
the same object. An analysis whose result for a statement depends on that
statement's subtree alone keeps it here and computes only the new ones.
"""

from __future__ import annotations

import ast
import weakref

#: Trees longer than this are not kept: a memo holds its statements, so the tree
#: itself, until the next tree comes -- for a 100,000-line buffer, ~300 MB that the
#: collector then walks at every full collection. Such a tree is not spliced either
#: (the language server does not keep it), so nothing would reuse what was kept.
KEEP_LINES = 20_000

_MEMOS: weakref.WeakSet[StatementMemo] = weakref.WeakSet()


def forget_all() -> None:
    """Let every memo go of the statements it keeps (a document closed in the server)."""
    for memo in list(_MEMOS):
        memo._kept = {}


def keeps(tree: ast.Module) -> bool:
    """Whether what is worked out from ``tree``'s statements is worth keeping for the next tree."""
    body = tree.body
    return not body or (getattr(body[-1], "end_lineno", 0) or 0) <= KEEP_LINES


class StatementMemo:
    """What an analysis computes from each top-level statement alone, kept for the next tree.

    A spliced tree shares every statement the edit did not touch with the
    last one (the same objects, never mutated), so a result that depends on
    a statement's own subtree and nothing else is still that statement's
    result. ``each`` answers from the last tree's results where the
    statement is the same object and computes the rest; it keeps only the
    current tree's, so memory stays one tree's worth, and a tree that shares
    nothing (another file, a full parse) simply computes everything.
    """

    def __init__(self) -> None:
        self._kept: dict[int, tuple[ast.stmt, object]] = {}
        _MEMOS.add(self)

    def each(self, tree: ast.Module, compute) -> list:
        kept = self._kept
        fresh: dict[int, tuple[ast.stmt, object]] = {}
        out = []
        for stmt in tree.body:
            entry = kept.get(id(stmt))
            if entry is None or entry[0] is not stmt:
                entry = (stmt, compute(stmt))
            fresh[id(stmt)] = entry
            out.append(entry[1])
        self._kept = fresh if keeps(tree) else {}
        return out

    def some(self, tree: ast.Module, compute, wanted) -> list:
        """``each``, computed only for the statements ``wanted(stmt)`` accepts (None for the
        rest): what a statement that cannot hold anything asked about contributes is nothing."""
        kept = self._kept
        fresh: dict[int, tuple[ast.stmt, object]] = {}
        out = []
        for stmt in tree.body:
            entry = kept.get(id(stmt))
            if entry is None or entry[0] is not stmt:
                if not wanted(stmt):
                    out.append(None)
                    continue
                entry = (stmt, compute(stmt))
            fresh[id(stmt)] = entry
            out.append(entry[1])
        self._kept = fresh if keeps(tree) else {}
        return out
