"""The look before published-keys walks a module's bodies: which functions may be producers."""

from __future__ import annotations

import ast

import pytest

from checkers.analysis.dict_producers import (
    dict_producers,
    may_build_a_returned_dict,
    spells_a_call_of,
)
from checkers.analysis.functions import D_DICTS, P_OPEN, summarise_module


def producers(source: str) -> frozenset[str]:
    return dict_producers(ast.parse(source))


def walked(source: str) -> set[str]:
    """The functions the full walk gives a closed return path of a dict (a producer), by name."""
    summary = summarise_module(ast.parse(source), "pkg")
    names = [o[0].rpartition(".")[2] for o in summary[3]]
    return {
        name
        for name, detail in zip(names, summary[4], strict=True)
        if detail[D_DICTS] and not any(p[P_OPEN] for p in detail[D_DICTS])
    }


CASES = {
    "literal": ("def f():\n    return {'a': 1}\n", {"f"}),
    "dict call": ("def f():\n    return dict(a=1)\n", {"f"}),
    "bound name": ("def f():\n    d = {}\n    d['a'] = 1\n    return d\n", {"f"}),
    "annotated name": ("def f():\n    d: dict = {}\n    return d\n", {"f"}),
    "a name through another": ("def f():\n    d = {}\n    e = d\n    return e\n", {"f"}),
    "a bare return opens no path": (
        "def f(x):\n    if x:\n        return\n    return {'a': 1}\n",
        {"f"},
    ),
    "a return after a return is never walked": (
        "def f():\n    return {'a': 1}\n    return g()\n",
        {"f"},
    ),
    "in a branch": ("def f(x):\n    if x:\n        return {'a': 1}\n    return None\n", {"f"}),
    "in try, with, match": (
        "def f(x):\n    try:\n        with x:\n            match x:\n                case 1:\n"
        "                    return {'a': 1}\n    except KeyError:\n        return {}\n",
        {"f"},
    ),
    "a method and a nested function": (
        "class C:\n    def m(self):\n        def inner():\n            return {'a': 1}\n"
        "        return inner()\n",
        {"inner"},
    ),
    "a call's result": ("def f():\n    return g()\n", set()),
    "an attribute": ("def f(self):\n    return self.meta\n", set()),
    "a parameter": ("def f(meta):\n    return meta\n", set()),
    "a name bound to a call": ("def f():\n    d = g()\n    return d\n", set()),
    "a list": ("def f():\n    return [{'a': 1}]\n", set()),
    "a nested function's dict is its own": (
        "def f():\n    def g():\n        d = {}\n        return d\n    return d\n",
        {"g"},
    ),
}


@pytest.mark.parametrize(("source", "want"), list(CASES.values()), ids=list(CASES))
def test_the_functions_that_may_be_producers(source, want):
    assert producers(source) == want
    # Never fewer than the walk's producers: whatever it would judge is looked at.
    assert walked(source) <= producers(source)


def test_a_producer_of_any_path_counts_though_another_path_is_open():
    source = "def f(x):\n    if x:\n        return {'a': 1}\n    return g()\n"
    assert producers(source) == {"f"}
    assert walked(source) == set()  # the walk finds the open path: a superset, as said


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("def build():\n    return {}\n\n\nx = build()\n", True),
        ("def build():\n    return {}\n\n\nx = self.build ()\n", True),
        ("def build():\n    return {}\n\n\nx = build\n", False),
        ("def build():\n    return {}\n", False),
        ("def build():\n    return {}\n\n\ndef build():\n    return {}\n", False),
        ("def build():\n    return {}\n\n\nx = rebuild()\n", False),
        ("def build():\n    return {}\n\n\nx = build_all()\n", False),
        ("def build():\n    return {}\n\n\nx = rebuild()\ny = build (1)\n", True),
        (
            "async def  build ():\n    return {}\n\n\nclass C:\n    def build(self):\n"
            "        return {}\n",
            False,
        ),
        ("def build():\n    return {}\n\n\nx = [build\n     (1)]\n", True),
        ("def build():\n    return {}\n\n\nx = undef_build()\n", False),
    ],
)
def test_a_producer_is_linked_only_through_a_call_of_it(text, want):
    assert spells_a_call_of(text, {"build"}) is want


@pytest.mark.parametrize(
    ("spelled", "want"),
    [
        # `def` ending a longer word is no definition: the spelling is a use (in a string
        # here, which the text scan cannot tell from code: a superset).
        ("'adef build(2)'", True),
        ("'a_def build(2)'", True),
        ("'a9def build(2)'", True),
        # A definition however it is spaced, after any character that ends no word.
        ("(def build(2)", False),
        ("\ndef\t  build (2)", False),
    ],
)
def test_what_comes_before_def_tells_a_definition_from_a_use(spelled, want):
    text = "def build():\n    return {}\n\n\nx = " + spelled + "\n"
    assert spells_a_call_of(text, {"build"}) is want


# -- the text scan before any parse -------------------------------------------------------

SCANNED = {
    **{name: (source, bool(want)) for name, (source, want) in CASES.items()},
    "an annotation over lines": (
        "def f():\n    meta: dict[\n        str, int\n    ] = {}\n    return meta\n",
        True,
    ),
    "chained targets": ("def f():\n    a = b = {}\n    return b\n", True),
    "a backslash continuation": ("def f():\n    d = \\\n        dict(a=1)\n    return d\n", True),
    "a parenthesised return": ("def f():\n    d = {}\n    return (\n        d\n    )\n", True),
    "a comment after the return": ("def f():\n    d = {}\n    return d  # the plan\n", True),
    "through two names": ("def f():\n    d = {}\n    e = d\n    g = e\n    return g\n", True),
    "a comparison binds nothing": ("def f(d):\n    x = d == {}\n    return d\n", False),
    "a set of names": ("def f():\n    return [x for x in y]\n", False),
    "a returned name bound to a call": ("def f():\n    d = build({})\n    return d\n", False),
}


@pytest.mark.parametrize(("source", "want"), list(SCANNED.values()), ids=list(SCANNED))
def test_the_text_scan_says_where_a_producer_may_be(source, want):
    assert may_build_a_returned_dict(source) is want
    if walked(source):
        assert may_build_a_returned_dict(source)


def test_the_text_scan_never_misses_a_module_the_walk_finds_a_producer_in():
    """On real code: a seeded sample of the standard library's modules that read a string key
    (which is all published-keys asks the scan about). Every module with a closed producer
    passes the scan, and the scan passes over some without one, or it would save nothing."""
    import random
    import sysconfig
    import warnings
    from pathlib import Path

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts)
    random.Random(20261206).shuffle(paths)
    looked = passed = with_producer = 0
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in old modules' strings
                ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        if '["' not in text and "['" not in text:
            continue
        looked += 1
        scanned = may_build_a_returned_dict(text)
        passed += scanned
        if walked(text):
            with_producer += 1
            assert scanned, path
        if looked == 150:
            break
    assert looked == 150
    assert with_producer < passed < looked
