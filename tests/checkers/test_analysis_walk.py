"""The walks of ``checkers.analysis.walk`` meet what a full ``ast.walk`` meets.

They skip the fields nothing can sit under (names, contexts, operators,
aliases); a field skipped wrongly would lose the string constants below it
(and could flip a file's preferred quote) or the calls below it (and lose an
AC701 finding), and a wrong order would rank call sites differently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checkers.analysis.walk import nodes_of_types
from checkers.literals import _string_constants, preferred_quote
from checkers.rules.required_keyword import _enclosing
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


KINDS = (ast.Call, ast.Import, ast.ImportFrom, ast.Return, ast.Lambda, ast.Name, ast.Constant)


def _walk_reference(tree: ast.AST, kinds) -> list[int]:
    return [id(n) for n in ast.walk(tree) if type(n) in kinds]


def _parents_reference(tree: ast.AST) -> dict[int, ast.stmt]:
    out = {}

    def visit(node, stmt):
        for child in ast.iter_child_nodes(node):
            here = child if isinstance(child, ast.stmt) else stmt
            if isinstance(child, ast.Call) and here is not None:
                out[id(child)] = here
            visit(child, here)

    visit(tree, None)
    return out


def test_nodes_of_types_meets_them_in_ast_walk_s_order():
    tree = ast.parse(EVERYWHERE)
    found = [id(n) for n in nodes_of_types(tree, KINDS)]
    assert found == _walk_reference(tree, KINDS)
    assert len(found) > 10


@pytest.mark.parametrize("folder", ["checkers", "contracts", "atom"])
def test_calls_and_their_statements_as_the_full_walk_finds_them(folder):
    for path in sorted((REPO / folder).rglob("*.py")):
        tree = ast.parse(path.read_bytes())
        assert [id(n) for n in nodes_of_types(tree, KINDS)] == _walk_reference(tree, KINDS), path
        reference = _parents_reference(tree)
        calls = [n for n in nodes_of_types(tree, (ast.Call,))]
        assert {id(c): _enclosing(tree, c) for c in calls} == reference, path


def test_a_call_s_statement_is_found_among_statements_sharing_its_line():
    tree = ast.parse("a(1); b(2)\nc = [d(3) for x in y]; e(4)\n")
    calls = {n.func.id: n for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert _enclosing(tree, calls["a"]) is tree.body[0]
    assert _enclosing(tree, calls["b"]) is tree.body[1]
    assert _enclosing(tree, calls["d"]) is tree.body[2]
    assert _enclosing(tree, calls["e"]) is tree.body[3]
