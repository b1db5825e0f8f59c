"""The look before published-keys walks a module's bodies: which functions may be producers."""

from __future__ import annotations

import ast

import pytest

from checkers.analysis.dict_producers import dict_producers, spells_a_call_of
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
