"""A facet of a function's details walked alone equals that field of the whole details: what a
question reading one field (a method's carriers, the names a body calls) is answered from."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from checkers.analysis.functions import (
    F_CALLED,
    F_CARRIERS,
    FACETS,
    O_QUAL,
    Outliner,
    body_details,
    facet_of,
)

from ..scaffold import write_tree

REPO = Path(__file__).resolve().parents[2]

# What decides a facet beyond the calls and assignments themselves: the names bound before a
# call (a parameter, an assignment, a `def` even in unreachable code) hide an import of the same
# name; an import inside the body wins over both; unreachable statements make no carrier but
# still spell their calls; a nested body is its own function.
SHAPES = """\
import os
from .pools import make_pool as mk, Pool
from . import sibling as sib


class Holder:
    def __init__(self, n, *rest, **kw):
        self.pool = mk(n)
        self.meta: dict = sib.meta(n)
        self.a = self.b = Pool(n)
        other.x = build()
        self.y = mk
        self.d[n] = sib.make()
        (self).p = sib.make()
        mk = sib.other
        self.z = mk(n)
        from .late import mk
        self.w = mk(n)
        if n:
            self.maybe = os.getcwd()
            return
            self.dead = sib.dead()
            def ahead():
                pass
        self.after = ahead()
        for self.it in Pool.range(n):
            pass
        with sib.opened(n) as self.ctx:
            self.inside = rest(n)
        fn = lambda: os.path.join(kw())
        super()()
        fn()().item()
        [g() for g in sib.gen()]
        self.cast: Pool
        self.cast += sib.more()
        self.last = sib.last()

        def nested(q):
            self.in_nested = sib.make()

    def other(me, build=None):
        me.q = me.build()
        me()
        me.r = build()
        try:
            return sib.tried()
        finally:
            me.cleaned = sib.cleanup()
        me.after_finally = Pool()

    @staticmethod
    def static():
        self.t = mk()


def looping(n):
    global mk
    holder.late = mk()
    match n:
        case 1:
            holder.one = sib.one()
        case _:
            return
    holder.after_match = sib.two()


def spinning(n):
    while True:
        sib.step(n)
    sib.never().go = mk()
"""


def _facets(text: str, package: str | None = "pkg.sub"):
    """(qualified name, facet, from the whole details, walked alone, parsed alone)."""
    outliner = Outliner(ast.parse(text), package, text)
    lines = io.StringIO(text, newline="").readlines()
    for index, outline in enumerate(outliner.outlines):
        whole = outliner.detail(index)
        for facet in FACETS:
            alone = body_details(lines, outline, outliner.aliases, package, facet=facet)
            yield (
                outline[O_QUAL],
                facet,
                facet_of(whole, facet),
                outliner.facet(index, facet),
                alone,
            )


def test_every_shape_walked_alone_equals_the_whole_details():
    found = {}
    for qual, facet, whole, walked, alone in _facets(SHAPES):
        assert walked == whole, (qual, facet)
        assert alone == whole, (qual, facet)
        found[qual, facet] = whole
    # What the shapes are: each carrier and each name as the whole walk makes them.
    assert [c[:2] for c in found["Holder.__init__", F_CARRIERS]] == [
        ("pool", "pkg.sub.pools.make_pool"),
        ("meta", "pkg.sub.sibling.meta"),
        ("a", "pkg.sub.pools.Pool"),
        ("b", "pkg.sub.pools.Pool"),
        ("x", "build"),
        ("y", "pkg.sub.pools.make_pool"),  # a function held, not a call's result
        ("p", "pkg.sub.sibling.make"),
        ("z", "mk"),  # bound by the assignment above it
        ("w", "pkg.sub.late.mk"),  # the import inside the body
        ("maybe", "os.getcwd"),
        ("after", "ahead"),  # the `def` after the `return` binds it still
        ("inside", "rest"),
        ("last", "pkg.sub.sibling.last"),  # an augmented assignment ends no path
    ]
    assert [c[0] for c in found["Holder.__init__", F_CARRIERS] if c[4]] == ["y"]
    assert found["Holder.__init__", F_CALLED] == {
        "make_pool", "meta", "Pool", "build", "make", "mk", "getcwd", "dead", "ahead",
        "range", "opened", "rest", "join", "kw", "super", "super()", "fn", "?", "item", "g",
        "gen", "more", "last",
    }  # fmt: skip
    assert [c[:2] for c in found["Holder.other", F_CARRIERS]] == [
        ("q", "self.build"),
        ("r", "build"),
        ("cleaned", "pkg.sub.sibling.cleanup"),
        ("after_finally", "pkg.sub.pools.Pool"),
    ]
    assert "self" in found["Holder.other", F_CALLED]  # `me()`: its instance, called
    assert [c[:2] for c in found["looping", F_CARRIERS]] == [
        ("late", "mk"),  # `global mk` binds it
        ("one", "pkg.sub.sibling.one"),
        ("after_match", "pkg.sub.sibling.two"),
    ]
    assert found["spinning", F_CARRIERS] == ()  # nothing after `while True:` runs
    assert found["spinning", F_CALLED] == {"step", "never", "make_pool"}
    assert [c[:2] for c in found["Holder.__init__.nested", F_CARRIERS]] == [
        ("in_nested", "pkg.sub.sibling.make")
    ]
    assert "in_nested" not in {c[0] for c in found["Holder.__init__", F_CARRIERS]}


def test_every_function_of_this_package_walked_alone_equals_the_whole_details():
    count = defs = 0
    for path in sorted((REPO / "checkers").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for qual, facet, whole, walked, alone in _facets(text, "checkers"):
            assert walked == whole, (path, qual, facet)
            assert alone == whole, (path, qual, facet)
            count += 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        defs += sum(isinstance(n, kinds) for n in ast.walk(ast.parse(text)))
    # Each facet of every `def` of the package was compared, none skipped by the outline.
    assert count == len(FACETS) * defs


def test_a_facet_named_otherwise_is_refused():
    outliner = Outliner(ast.parse("def f():\n    g()\n"), None, None)
    with pytest.raises(ValueError, match="'calls'"):
        outliner.facet(0, "calls")
    with pytest.raises(ValueError, match="'calls'"):
        facet_of(outliner.detail(0), "calls")


PYPROJECT = "[tool.atom-contracts]\n"
FILES = {
    "pkg/__init__.py": "",
    "pkg/pools.py": (
        "from pkg.make import build\n\n\nclass Pool:\n    def __init__(self, n):\n"
        "        self.meta = build(n)\n\n    def rows(self):\n        return self.meta.item()\n"
    ),
    "pkg/make.py": "def build(n):\n    return {'n': n}\n",
}


def _module(tmp_path):
    from checkers.analysis.program import drop_trees, program_of
    from checkers.project import Project

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    program = program_of(Project(tmp_path, ["."]))
    module = program.module("pkg.pools")
    drop_trees(program.project)
    return module


def test_a_facet_is_walked_alone_once_and_the_details_stay_unmade(tmp_path, record_parses):
    from checkers.analysis import functions

    module = _module(tmp_path)
    walks = []
    facet = functions._Summariser.facet

    def counted(self, entry, name):
        walks.append((entry[1][O_QUAL], name))
        return facet(self, entry, name)

    parsed = record_parses()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(functions._Summariser, "facet", counted)
        carriers = module.facet("Pool.__init__", F_CARRIERS)
        assert module.facet("Pool.__init__", F_CARRIERS) is carriers
    assert [c[:2] for c in carriers] == [("meta", "pkg.make.build")]
    assert walks == [("Pool.__init__", F_CARRIERS)]
    assert parsed == ["pkg/pools.py:Pool.__init__"]  # the body alone, not the module
    assert module.made("Pool.__init__", F_CARRIERS)
    assert not module.made("Pool.__init__")
    assert not module.made("Pool.__init__", F_CALLED)
    # The whole details, asked later, agree with the facet walked alone.
    assert facet_of(module.detail("Pool.__init__"), F_CARRIERS) == carriers


def test_details_already_made_answer_a_facet_without_a_walk(tmp_path, monkeypatch):
    from checkers.analysis import functions

    module = _module(tmp_path)
    whole = module.detail("Pool.rows")

    def refused(self, entry, name):
        raise AssertionError(f"walked {entry[1][O_QUAL]} for {name}")

    monkeypatch.setattr(functions._Summariser, "facet", refused)
    assert module.made("Pool.rows")
    assert module.made("Pool.rows", F_CARRIERS)
    assert not module.made("Pool.__init__", F_CARRIERS)
    assert module.facet("Pool.rows", F_CALLED) == {"item"} == facet_of(whole, F_CALLED)
    assert module.facet("Pool.rows", F_CARRIERS) == ()
    assert module.facet("Pool.absent", F_CALLED) is None


def test_a_facet_walked_alone_is_left_for_the_cache_and_answers_from_it(tmp_path, monkeypatch):
    from checkers.analysis import functions
    from checkers.analysis.functions import S_DETAILS, S_FACETS
    from checkers.analysis.program import SUMMARY_KEY, Module

    module = _module(tmp_path)
    program = module._lazy.program
    new = program.project.new_summaries
    key = "pkg/pools.py" + SUMMARY_KEY
    outline_only = new[key]
    assert len(outline_only[3]) == S_FACETS or outline_only[3][S_FACETS] is None
    program.keep_details()
    assert new[key] is outline_only  # nothing asked of its bodies: nothing new to keep
    carriers = module.facet("Pool.__init__", F_CARRIERS)
    program.keep_details()
    kept = new[key]
    assert kept[:3] == outline_only[:3]
    assert kept[3][S_DETAILS] is None
    assert kept[3][S_FACETS] == ((0, F_CARRIERS, carriers),)
    program.keep_details()
    assert new[key] is kept  # the cache's entry holds every facet walked: left as it is
    module.facet("Pool.rows", F_CALLED)
    program.keep_details()
    assert new[key][3][S_FACETS] == ((0, F_CARRIERS, carriers), (1, F_CALLED, {"item"}))

    def refused(self, entry, name):
        raise AssertionError(f"walked {entry[1][O_QUAL]} for {name}")

    monkeypatch.setattr(functions._Summariser, "facet", refused)
    again = Module("pkg.pools", "pkg/pools.py", new[key][3], lazy=module._lazy)
    assert again.facet("Pool.__init__", F_CARRIERS) == carriers
    assert again.made("Pool.__init__", F_CARRIERS)
    assert not again.made("Pool.__init__", F_CALLED)
    assert Module("pkg.pools", "pkg/pools.py", new[key][3]).facet("Pool.rows", F_CALLED) == {"item"}
    # Once a body's whole details are made, they hold its facets: those are not kept twice.
    whole = module.detail("Pool.__init__")
    program.keep_details()
    assert new[key][3][S_DETAILS][0] == whole
    assert new[key][3][S_FACETS] == ((1, F_CALLED, {"item"}),)
    module.detail("Pool.rows")
    assert module.summary()[S_FACETS] is None
    program.keep_details()
    kept = new[key]
    assert kept[3][S_DETAILS] == (whole, module.detail("Pool.rows"))
    program.keep_details()
    assert new[key] is kept  # every body's details held already: left as it is
