"""What an analysis computes from one top-level statement alone, kept while the statement lives.

The language server's next tree is the last one with the edited statements
parsed again (``checkers.incremental``): every other top-level statement is
the same object. An analysis whose result for a statement depends on that
statement's subtree alone keeps it here and computes only the new ones.
"""

from __future__ import annotations

import ast


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
        self._kept = fresh
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
        self._kept = fresh
        return out
