"""input-assert's pre-filter answers what its line pattern answers, without running it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkers.analysis.asserts import _ASSERT_LINE, has_assert_statement

# Pieces that make and break an assert statement's start: the word, words that
# contain it, what may come before it (blanks, form feed, line breaks, `;`,
# `:`) and what may not, and a non-ASCII word character after it.
PIECES = [
    "assert",
    "asserts",
    "xassert",
    " ",
    "\t",
    "\f",
    "\n",
    "\r",
    ";",
    ":",
    "x",
    "_",
    "é",
    "#",
    "(",
]


@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_the_scan_answers_as_the_pattern_does(text):
    assert has_assert_statement(text) is (_ASSERT_LINE.search(text) is not None)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("assert x", True),
        ("def f():\n    assert x\n", True),
        ("if a: assert b", True),
        ("a = 1; \fassert b", True),
        ("x\rassert y", True),
        ("assert", True),
        ("assert(x)", True),
        ("self.assertEqual(a, b)\n", False),
        ("# assert x\n", False),
        ("x = 'assert'\n", False),
        ("asserté = 1\n", False),
        ("assert_close(a, b)\n", False),
        ("    x.assert_called()\nassertion = 2\n", False),
    ],
)
def test_statement_starts_and_lookalikes(text, expected):
    assert has_assert_statement(text) is expected
