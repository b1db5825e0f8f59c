"""The fixes' quote count finds every string constant a full ``ast.walk`` finds.

``literals._string_constants`` skips the fields a string cannot sit under
(names, contexts, operators, aliases); a field skipped wrongly would lose the
constants below it and could flip a file's preferred quote.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checkers.literals import _string_constants, preferred_quote
from checkers.source import SourceFile

REPO = Path(__file__).resolve().parents[2]

# A string in every kind of place a node can hold one.
EVERYWHERE = '''
"""doc"""
import os as o
from x import (y as z)
global_ = {**o.environ, "k": b"v", 'q': [f"{o!r:>{'w'}}", "a" "b"]}
@deco("d")
def f(a: "A" = "x", *args: 'B', k=b"k", **kw: "C") -> "R":
    global g
    with open("p") as h, ctx(u"u"):
        pass
    try:
        raise E("e") from F('f')
    except (G, H) as exc:
        lambda q="l": q
    for i in ["i"]:
        while "w":
            del d["d"]
            x += "aug"
            y: "ann" = "val"
    match o:
        case {"m": 1, **rest}:
            pass
        case Point(x="px", y=[*_]) | "lit":
            pass
        case str() as s if s == "guard":
            pass
    assert a, "msg"
    return (yield "y"), [c for c in "comp" if c != 'not'], a if "t" else 'e'
class C(Base, meta="m"):
    attr: "T" = not "u"
    x = -1 < "cmp" <= 'c' in "s"
    print(*"star", sep="")
'''


def _reference(tree: ast.AST) -> list[int]:
    return sorted(
        id(n)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))
    )


def test_every_place_a_string_can_sit_is_counted():
    tree = ast.parse(EVERYWHERE)
    found = sorted(id(n) for n in _string_constants(tree))
    assert found == _reference(tree)
    assert len(found) > 40  # the source really has that many: a walk that found none would differ


@pytest.mark.parametrize("folder", ["checkers", "contracts", "atom"])
def test_this_repository_s_modules_give_the_full_walk_s_constants(folder):
    for path in sorted((REPO / folder).rglob("*.py")):
        tree = ast.parse(path.read_bytes())
        assert sorted(id(n) for n in _string_constants(tree)) == _reference(tree), path


def test_the_majority_quote_counts_strings_under_skipped_looking_fields():
    # Every single-quoted literal sits where a careless skip would miss it: a
    # keyword's value, a default, an annotation, a decorator's argument.
    text = "@d(k='a')\ndef f(x='b', *, y: 'c' = 'd'):\n    return g(z='e')\n\nS = \"only\"\n"
    assert preferred_quote(SourceFile("m.py", text)) == "'"
