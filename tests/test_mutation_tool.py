"""bench/mutation.py's selection: ``--since REV`` mutates the lines a change added, and nothing else.

A mutation score of a change is worth what its selection is: a mutant of an untouched line
scores old code as the change's, and a changed line left out is a line no one proved. These
run the lister on a one-commit repository built here, edited in its working tree (git only,
no test run: under a second).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import bench_module

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mutation():
    module = bench_module("mutation")
    try:
        yield module
    finally:
        del sys.modules[module.__name__]


BEFORE = """\
def f(x):
    if x > 1:
        return x + 1
    return 0


def g(y):
    print(
        y,
        2,
    )
"""

# Line 3's `+ 1` becomes `- 3`; the middle argument of g's print (line 10) changes; h is new
# (lines 14-15). Lines 2 and 4 are untouched and hold mutants of their own.
AFTER = """\
def f(x):
    if x > 1:
        return x - 3
    return 0


def g(y):
    print(
        y,
        5,
    )


def h(z):
    return z * 7
"""


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.fixture
def repo(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(BEFORE)
    (pkg / "gone.py").write_text("A = 1\nB = 2\n")
    (pkg / "notes.txt").write_text("not python\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "base")
    (pkg / "mod.py").write_text(AFTER)  # changed in the working tree, not committed
    (pkg / "gone.py").write_text("A = 1\n")  # a pure deletion: nothing left to mutate
    (pkg / "notes.txt").write_text("changed, and not python\n")
    (pkg / "new.py").write_text("N = 4\nM = N + 1\n")  # untracked: every line is new
    return tmp_path


def test_changed_lines_are_the_new_side_of_each_hunk_and_untracked_files_whole(mutation, repo):
    assert mutation.changed_lines("HEAD", repo) == {
        "pkg/mod.py": {3, 10, 12, 13, 14, 15},
        "pkg/new.py": {1, 2},
    }


def test_since_mutates_only_what_the_change_touched(mutation, repo):
    since = mutation.changed_lines("HEAD", repo)
    every = mutation.select_mutants("pkg", repo=repo)
    chosen = mutation.select_mutants("pkg", since=since, repo=repo)
    spans = {(m.path, m.line, m.before, m.after) for m in chosen}
    assert spans == {
        ("pkg/mod.py", 3, "return x - 3", "return None"),
        ("pkg/mod.py", 3, "x - 3", "(x + 3)"),
        ("pkg/mod.py", 3, "3", "4"),
        # The print's span covers line 10: deleting the call is among the change's mutants.
        ("pkg/mod.py", 8, "print(\n        y,\n        5,\n    )", "pass"),
        ("pkg/mod.py", 10, "5", "6"),
        ("pkg/mod.py", 15, "return z * 7", "return None"),
        ("pkg/mod.py", 15, "z * 7", "(z // 7)"),
        ("pkg/mod.py", 15, "7", "8"),
        ("pkg/new.py", 1, "4", "5"),
        ("pkg/new.py", 2, "N + 1", "(N - 1)"),
        ("pkg/new.py", 2, "1", "2"),
    }
    # The untouched lines have mutants of their own, which the whole-file listing holds.
    untouched = {(m.path, m.line) for m in every} - {(m.path, m.line) for m in chosen}
    assert {("pkg/mod.py", 2), ("pkg/mod.py", 4), ("pkg/gone.py", 1)} <= untouched
    # A selected mutant keeps the key it has in a whole-file run (EQUIVALENT names keys).
    assert {m.key for m in chosen} <= {m.key for m in every}


def test_since_an_unknown_revision_is_refused_by_name(mutation, repo):
    with pytest.raises(ValueError, match="'no-such-rev'"):
        mutation.changed_lines("no-such-rev", repo)


def test_the_core_target_is_checkers_own_modules_and_not_its_subpackages(mutation):
    files = {f.relative_to(REPO).as_posix() for f in mutation.target_files("checkers/core")}
    assert {"checkers/api.py", "checkers/cli.py", "contracts/fields.py"} <= files
    assert "hooks/lsp/folders.py" in files
    assert not any(f.startswith(("checkers/rules/", "checkers/analysis/")) for f in files)
    # A repository-relative entry wins over the target's default.
    assert mutation._tests_for("checkers/core", "contracts/fields.py")[0] == (
        "tests/checkers/test_never_green.py"
    )


def test_every_test_path_a_target_names_exists(mutation):
    # _tests_for drops a path that does not exist (so a subset may name a test not yet
    # written): a misspelt one would silently narrow the subset.
    named = {
        t.split("::")[0]
        for table in mutation.TARGETS.values()
        for tests in table.values()
        for t in tests
        if t.startswith("tests/")
    }
    assert sorted(t for t in named if not (REPO / t).exists()) == []


def test_lines_mutates_only_spans_touching_the_range(mutation, repo):
    every = mutation.select_mutants("pkg", repo=repo)
    chosen = mutation.select_mutants("pkg", only="mod.py", lines=(9, 13), repo=repo)
    # g's print spans lines 8-11, so its deletion touches 9-13; h's `return` is on line 15.
    assert {(m.line, m.before, m.after) for m in chosen} == {
        (8, "print(\n        y,\n        5,\n    )", "pass"),
        (10, "5", "6"),
    }
    assert {m.key for m in chosen} <= {m.key for m in every}
    ends = mutation.select_mutants("pkg", only="mod.py", lines=(15, 15), repo=repo)
    assert {m.line for m in ends} == {15}


@pytest.mark.parametrize(
    ("text", "span"),
    [("3-9", (3, 9)), ("300-", (300, sys.maxsize)), ("-120", (1, 120)), ("7-7", (7, 7))],
)
def test_a_line_range_is_first_to_last_either_end_open(mutation, text, span):
    assert mutation.parse_lines(text) == span


@pytest.mark.parametrize("text", ["9-3", "0-4", "12", "a-b", ""])
def test_a_line_range_that_is_not_one_is_refused_by_name(mutation, text):
    with pytest.raises(ValueError, match=rf"--lines '{text}' is not FIRST-LAST"):
        mutation.parse_lines(text)
