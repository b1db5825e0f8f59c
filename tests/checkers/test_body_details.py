"""A function's details made from its own lines alone equal those made from its module's tree:
what a question about one body of a module known by its summary parses."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from checkers.analysis.functions import (
    D_CARRIERS,
    O_QUAL,
    O_SELF,
    Outliner,
    body_details,
    self_assigned,
)

REPO = Path(__file__).resolve().parents[2]

SHAPES = """\
import os
from . import sibling as sib
from .hosts import staging as me


@decorate(os.sep)
def top(a, b=os.sep, *args, key=None, **kw):
    x = {"a": a}
    if key:
        x["b"] = sib.make(b)
    return x


class Pool:
    \\f
    def carve(self, blocks, *, per_block):
        def inner(n):
            return self.rows(n) * per_block

        async def later():
            await self.sync()

        class Local:
            def run(me):
                return me.go()

        def keyed(n, *, self=None, me=None):
            return self.stage(n) + me.go()

        return inner(blocks)

    @staticmethod
    def helper(n): return n.item()


class Tabbed:
\tdef tabbed(self):
\t\treturn self.x.cpu()


if os.name:
    def guarded(q):
        return sib.q(q)
"""


def _pairs(text: str, package: str | None = "pkg.sub"):
    tree = ast.parse(text)
    outliner = Outliner(tree, package, text)
    lines = io.StringIO(text, newline="").readlines()
    for index, outline in enumerate(outliner.outlines):
        yield (
            outline,
            outliner.detail(index),
            body_details(lines, outline, outliner.aliases, package),
        )


def test_every_shape_of_definition_is_read_alone_the_same():
    text = SHAPES.replace("\\f", "\f")
    seen = []
    for outline, whole, alone in _pairs(text):
        assert alone == whole, outline[O_QUAL]
        seen.append(outline[O_QUAL])
    assert seen == [
        "top",
        "Pool.carve",
        "Pool.carve.inner",
        "Pool.carve.later",
        "Pool.carve.Local.run",
        "Pool.carve.keyed",
        "Pool.helper",
        "Tabbed.tabbed",
        "guarded",
    ]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_lines_ending_otherwise_are_read_alone_the_same(newline):
    text = SHAPES.replace("\\f", "").replace("\n", newline)
    for outline, whole, alone in _pairs(text):
        assert alone == whole, outline[O_QUAL]


def test_every_function_of_this_package_is_read_alone_the_same():
    count = defs = 0
    for path in sorted((REPO / "checkers").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for outline, whole, alone in _pairs(text, "checkers"):
            assert alone == whole, (path, outline[O_QUAL])
            count += 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        defs += sum(isinstance(n, kinds) for n in ast.walk(ast.parse(text)))
    # Every `def` of the package was compared, none skipped by the outline.
    assert count == defs


@pytest.mark.parametrize(
    "edit",
    [
        lambda lines: lines[:20],  # the file ends inside the body the outline spans
        lambda lines: ["\n", *lines],  # every line one further down
        lambda lines: [line.replace("def carve", "def carved") for line in lines],
        lambda lines: lines[:15] + ["    # gone\n"] * 15 + lines[30:],  # comments only
        lambda lines: [*lines[:15], "x = 1; " + lines[15].lstrip(), *lines[16:]],
    ],
)
def test_lines_that_are_not_the_outlines_give_no_details(edit):
    text = SHAPES.replace("\\f", "")
    tree = ast.parse(text)
    outliner = Outliner(tree, "pkg", text)
    lines = edit(io.StringIO(text, newline="").readlines())
    index = [o[O_QUAL] for o in outliner.outlines].index("Pool.carve")
    assert body_details(lines, outliner.outlines[index], outliner.aliases, "pkg") is None


def test_a_top_level_body_turned_to_comments_gives_no_details():
    text = SHAPES.replace("\\f", "")
    outliner = Outliner(ast.parse(text), "pkg", text)
    lines = io.StringIO(text, newline="").readlines()
    top = outliner.outlines[0]
    assert top[O_QUAL] == "top"
    lines[top[1] - 1 : top[3]] = ["# gone\n"] * (top[3] - top[1] + 1)
    assert body_details(lines, top, outliner.aliases, "pkg") is None


def _self_carriers(text: str, package: str | None = "pkg.sub"):
    """The attributes the walk finds a method assigning a call's result to on ``self``."""
    outliner = Outliner(ast.parse(text), package, text)
    for index, outline in enumerate(outliner.outlines):
        if outline[O_SELF] == "self":
            for attr, _spelling, _line, on_self, _held in outliner.detail(index)[D_CARRIERS]:
                if on_self:
                    yield attr


# Every way an assignment may spell `self.norm`, and reads of it the scan may keep besides.
SELF_TARGETS = [
    "self.norm = f()",
    "self.norm: Norm = f()",
    "both = self.norm = f()",
    "(self).norm = f()",
    "(self.norm) = f()",
    "( ( self ) ) . norm = f()",
    "self . norm = f()",
    "self \\\n            .norm = f()",
    "self.\\\n            norm = f()",
    "(\n            self.norm  # the layer's own\n        ) = f()",
    "(\n            self\n            .norm\n        ) = f()",
    "self.\uff4eorm = f()",  # a fullwidth n: Python reads the name `norm`
    "self.norm\t=\tf()",
]


@pytest.mark.parametrize("target", SELF_TARGETS)
def test_the_module_scan_names_every_self_attribute_the_walk_assigns(target):
    text = f"class Layer:\n    def __init__(self):\n        {target}\n"
    assert list(_self_carriers(text)) == ["norm"]
    assert "norm" in self_assigned(text)


@pytest.mark.parametrize(
    "text",
    [
        "class L:\n    def f(self):\n        return self.norm == f()\n",
        "class L:\n    def f(self):\n        myself.norm = f()\n",
        "class L:\n    def f(self):\n        self.norm += f()\n",
        "class L:\n    def f(self):\n        self.normal = f()\n",
    ],
)
def test_the_module_scan_leaves_what_assigns_no_self_norm(text):
    assert "norm" not in self_assigned(text)


def test_the_module_scan_names_every_self_attribute_this_package_assigns():
    # What a skip on the scan relies on: no attribute the walk would find a method assigning
    # on `self` is missing from the scan of its module's text.
    attrs = 0
    for path in sorted((REPO / "checkers").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        scanned = set(self_assigned(text))
        for attr in _self_carriers(text, "checkers"):
            assert attr in scanned, (path, attr)
            attrs += 1
    assert attrs, "no attribute was compared"


def test_a_summary_keeps_the_scan_only_where_its_text_was_read():
    text = "class Layer:\n    def __init__(self):\n        (self).norm = f()\n"
    assert Outliner(ast.parse(text), "pkg", text).self_set == ("norm",)
    # Without the text there is no scan, and None skips nothing (every method is walked).
    assert Outliner(ast.parse(text), "pkg").self_set is None
