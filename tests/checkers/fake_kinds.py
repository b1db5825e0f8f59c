"""Two small kinds that exist only for the linter's tests.

The linter is tested apart from the real kinds so a rule helper's change
cannot make a linter test pass or fail: ``rename`` flags a name and offers
a safe (or, with ``unsafe = true``, unsafe) fix to another; ``counted`` is
not CACHEABLE and counts its calls, so a test can see what the cache saved.
"""

from __future__ import annotations

import ast

from checkers.rules import kind_class
from contracts.config import parse_table
from contracts.contract import Contract, Rule
from contracts.fields import Bool, String
from contracts.finding import Edit, Fix


class Rename(Contract):
    KIND = "rename"
    RULES = (Rule(code="AC991", name="test-rename", what="flags a name", why="tests"),)
    old = String(doc="the name")
    new = String(doc="its replacement")
    unsafe = Bool(default=False, doc="offer the fix as unsafe")
    calls = 0

    def needles(self):
        return (self.old,)

    def check(self, source, project):
        type(self).calls += 1
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Name) and node.id == self.old:
                line, col, end_line, end_col = source.span(node)
                fix = Fix(
                    message=f"rename to {self.new}",
                    edits=(Edit(line, col, end_line, end_col, self.new),),
                    applicability="unsafe" if self.unsafe else "safe",
                )
                stmt = _statement_of(source.tree, node)
                yield self.finding(
                    source, node, f"`{self.old}` is retired", fix=fix, span_node=stmt
                )


class Counted(Contract):
    KIND = "counted"
    RULES = (Rule(code="AC992", name="test-counted", what="flags `marker`", why="tests"),)
    CACHEABLE = False
    calls = 0

    def needles(self):
        return ("marker",)

    def check(self, source, project):
        type(self).calls += 1
        for node in ast.walk(source.tree):
            if isinstance(node, ast.Name) and node.id == "marker":
                yield self.finding(source, node, "marker")


def _statement_of(tree, target):
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.stmt) and not isinstance(
            stmt, ast.FunctionDef | ast.ClassDef | ast.Module
        ):
            for child in ast.walk(stmt):
                if child is target:
                    return stmt
    return target


def registry(kind):
    return {"rename": Rename, "counted": Counted}.get(kind) or kind_class(kind)


def config_for(root, contracts, **table):
    return parse_table({**table, "contracts": contracts}, root=root, registry=registry)
