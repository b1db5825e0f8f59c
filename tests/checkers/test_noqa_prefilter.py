"""The text search before tokenizing for ``# noqa`` never hides a directive.

``parse_directives`` skips the tokenizer when no ``noqa`` comment in the text
could name an AC code. The reference here is the same function with that
search made to match everything, so the tokenizer always runs: any text on
which the two disagree is a suppression the pre-filter lost.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers import suppression
from checkers.suppression import parse_directives


def tokenized(text: str) -> tuple:
    saved = suppression._NAMES_OURS
    suppression._NAMES_OURS = ""  # matches everywhere: always tokenize
    try:
        return parse_directives(text)
    finally:
        suppression._NAMES_OURS = saved


CORPUS = [
    "x = 1  # noqa: AC301 -- checked above\n",
    "x = 1  # noqa: E501, AC301\n",
    "x = 1  # NOQA:ac301\n",
    "x = 1  # noqa: E501 AC301 W291 -- why\n",
    "x = 1  # noqa: E501\n",
    "x = 1  # noqa\n",
    "s = '# noqa: AC301'\n",  # inside a string: not a comment
    "x = 1  # noqa:\n# AC301\n",  # the code on the next line is not this comment's
    "x = 1  # noqa: ACX12\n",
    "x = 1  # noqa: E501AC301\n",
    "def f(\n    a,  # noqa: AC101 -- positional by design\n):\n    pass\n",
    "x = (1,  # noqa: AC301\n",  # untokenizable after the comment
]


@pytest.mark.parametrize("text", CORPUS)
def test_same_directives_as_always_tokenizing(text):
    assert parse_directives(text) == tokenized(text)


def test_the_corpus_holds_directives_the_filter_must_keep():
    # Without texts that do carry a directive the comparison above could pass
    # with a filter that rejects everything.
    kept = [t for t in CORPUS if tokenized(t)]
    assert len(kept) >= 6
    assert all(parse_directives(t) for t in kept)


_PIECES = st.sampled_from(
    ["#", " ", "noqa", "NOQA", ":", ",", "AC", "ac", "E", "301", "5", "--", "x", "\n", "'", "="]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=14))
def test_same_directives_on_generated_comments(pieces):
    text = "x = 1  " + "".join(pieces) + "\n"
    assert parse_directives(text) == tokenized(text)
