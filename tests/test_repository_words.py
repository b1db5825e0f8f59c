"""Words in the code speak of the code: no comment cites an issue, a work session or a find.

A reader of the repository has the code, its docs and its history, but not the tracker the
work was filed in, nor the sittings it was done in. A tracker's number and item, or "the
third session's sweep", sends them to something they cannot open; the same comment saying *why*
tells them what they need. Test files are named for what they test, never for how their
cases were found (``test_pinned_by_mutation.py`` says which tool found the gap, not what is
held).

Comments and docstrings are read with ``tokenize`` (nothing is imported). "session" in its
POSIX sense (``start_new_session``, a process's own session) and the language server's
session are the code's own words and stay.
"""

from __future__ import annotations

import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: The shipped code, where the target holds without exception, and the tests and benchmarks,
#: read by the same people.
FOLDERS = ("atom", "checkers", "contracts", "hooks", "tests", "bench")

ISSUE = re.compile(r"\bissues?\s*#?\s*\d+|\bissue's\b|\bthe issue\b", re.IGNORECASE)
#: A sitting of work: "the third session", "this session's figures", "found here, 2026-12-04".
SITTING = re.compile(
    r"\b(first|second|third|fourth|earlier|later|last|this|device|previous)\s+session\b"
    r"|\bsession's\s+(sweep|figure|run|work|tests?)\b"
    r"|\bfound here\b",
    re.IGNORECASE,
)
#: How a test's cases were found, in a test file's name.
FOUND_HOW = re.compile(r"pinned_by|found_by|by_mutation|survivors?|regressions?|issue_?\d")


def _sources() -> list[Path]:
    this = Path(__file__).resolve()  # its examples of what is refused are strings
    return sorted(
        p for folder in FOLDERS for p in (REPO / folder).rglob("*.py") if p.resolve() != this
    )


def _words(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and string token: docstrings are strings."""
    out = []
    with path.open("rb") as handle:
        for tok in tokenize.tokenize(handle.readline):
            if tok.type in (tokenize.COMMENT, tokenize.STRING):
                out.extend(
                    (tok.start[0] + i, line) for i, line in enumerate(tok.string.splitlines())
                )
    return out


def cited(path: Path) -> list[str]:
    """``path:line: text`` of each comment or string line that cites an issue or a sitting."""
    return [
        f"{path.relative_to(REPO)}:{line}: {text.strip()}"
        for line, text in _words(path)
        if ISSUE.search(text) or SITTING.search(text)
    ]


def test_no_comment_or_docstring_cites_an_issue_or_a_session():
    found = [hit for path in _sources() for hit in cited(path)]
    assert not found, "\n".join(found)


def test_test_files_are_named_for_what_they_test():
    named = [str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py")]
    assert named  # the walk found the suite
    assert not [n for n in named if FOUND_HOW.search(Path(n).stem)]


#: The tracker's word for a filed piece of work, kept apart from the numbers it cites.
TRACKER = "issue"


@pytest.mark.parametrize(
    "text",
    [
        # A citation spelled out whole would be one in this file too: the word joins its number here.
        f"# the fix of {TRACKER} 11, item 3",
        '"""What held in the issue\'s sweep, kept."""',
        "#: 0.3 points over in the third session's sweep",
        '"""never ended on Ctrl-C (found here, 2026-12-04)."""',
        f"# see {TRACKER.title()} #12",
    ],
)
def test_a_citation_is_found_in_a_comment_and_a_docstring(tmp_path, text):
    path = tmp_path / "m.py"
    path.write_text(f"x = 1\n{text}\n", encoding="utf-8")
    assert [line for line, _ in _words(path) if ISSUE.search(_) or SITTING.search(_)] == [2]


@pytest.mark.parametrize(
    "text",
    [
        "# runs in its own session, which a terminal's Ctrl-C never reaches",
        "# start_new_session=True: its own process group",
        '"""the session\'s PositionCodec converts columns"""',
        "# a program issues the loads of its next piece",
    ],
)
def test_the_codes_own_words_are_not_citations(tmp_path, text):
    path = tmp_path / "m.py"
    path.write_text(f"{text}\n", encoding="utf-8")
    assert not [t for _, t in _words(path) if ISSUE.search(t) or SITTING.search(t)]


def test_a_name_for_how_cases_were_found_is_refused():
    assert FOUND_HOW.search("test_pinned_by_mutation")
    assert FOUND_HOW.search("test_checks_pinned_by_mutation")
    assert not FOUND_HOW.search("test_mutation_tool")  # names the tool it tests
