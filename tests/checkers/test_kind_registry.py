"""The kind registry (checkers/rules/__init__.py): a code prefix that no rule's code starts with.

``matching_no_rule`` is what turns ``--select AC9X`` or a config's ``select`` into "no rule has
that code"; it must find a kind's codes whether or not the kind was loaded, and import the other
kinds only when the loaded ones and the linter's own codes leave a prefix unmatched.
"""

from __future__ import annotations

import pytest

import checkers.rules as rules
from checkers.rules import KIND_PATHS, kind_class, matching_no_rule


@pytest.fixture
def imported(monkeypatch):
    """The kinds matching_no_rule asks the registry for, in order."""
    asked: list[str] = []

    def spy(kind: str):
        asked.append(kind)
        return kind_class(kind)

    monkeypatch.setattr(rules, "kind_class", spy)
    return asked


def test_a_prefix_is_unmatched_only_when_no_code_of_any_kind_starts_with_it(imported):
    # AC4 is retired-name's AC401, AC0 the linter's AC000-AC002, "" (ALL) every code; nothing
    # is numbered AC88x or BX.
    assert matching_no_rule(["AC4", "AC88", "AC0", "", "BX"]) == ["AC88", "BX"]
    # AC4 and AC88 match no built-in code, so every kind was looked at.
    assert imported == list(KIND_PATHS)


def test_a_loaded_kinds_codes_need_no_other_kind(imported):
    retired = kind_class("retired-name")
    # AC401 is the loaded kind's and AC000 the linter's: neither sends it to the registry.
    assert matching_no_rule(["AC401", "AC000"], {retired}) == []
    assert imported == []


def test_every_prefix_matched_returns_an_empty_list_not_none(imported):
    assert matching_no_rule(["AC0"]) == []
    assert matching_no_rule([]) == []
    assert imported == []


def test_an_unknown_kind_names_itself_and_the_known_ones():
    with pytest.raises(KeyError, match=r"'no-such-kind'.*keyword-only, leaf-package"):
        kind_class("no-such-kind")
