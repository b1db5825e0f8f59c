"""``--diff-base``: findings on lines the diff shows (context included), on a real repository."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from checkers import api
from checkers.diff_filter import DiffError, parse_hunks

from ..scaffold import write_tree
from .fake_kinds import config_for

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

RENAME = {"id": "no-old", "kind": "rename", "old": "old_name", "new": "new_name"}


def git(root, *args):
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    # 20 lines, each a finding; the branch edits line 10 only.
    write_tree(
        tmp_path,
        {"a.py": "".join(f"v{i} = old_name\n" for i in range(1, 21)), "b.py": "old_name\n"},
    )
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    return tmp_path


def lines(result, path="a.py"):
    return [f.line for f in result.findings if f.path == path]


def check(root, **kw):
    return api.check([], config=config_for(root, [RENAME]), use_cache=False, jobs=1, **kw)


def test_keeps_the_new_side_of_each_hunk_with_three_lines_of_context(repo):
    text = (repo / "a.py").read_text().replace("v10 = old_name", "v10 = old_name + 1")
    (repo / "a.py").write_text(text)
    result = check(repo, diff_base="main")
    assert lines(result) == [7, 8, 9, 10, 11, 12, 13]  # line 10 and 3 lines either side
    assert lines(result, "b.py") == []  # untouched file


def test_committed_changes_count_against_the_merge_base_not_the_tip(repo):
    text = (repo / "a.py").read_text().replace("v2 = old_name", "v2 = old_name  # edited")
    (repo / "a.py").write_text(text)
    git(repo, "commit", "-q", "-am", "edit line 2")
    # main moves on after the branch point: its change is not this branch's.
    git(repo, "checkout", "-q", "main")
    text = (repo / "a.py").read_text().replace("v19 = old_name", "v19 = old_name  # main")
    (repo / "a.py").write_text(text)
    git(repo, "commit", "-q", "-am", "main edits line 19")
    git(repo, "checkout", "-q", "feature")
    assert lines(check(repo, diff_base="main")) == [1, 2, 3, 4, 5]


def test_inserted_lines_shift_the_range(repo):
    text = (
        (repo / "a.py")
        .read_text()
        .replace("v5 = old_name\n", "v5 = old_name\nnew1 = old_name\nnew2 = old_name\n")
    )
    (repo / "a.py").write_text(text)
    # New side: lines 6 and 7 are added; context 3..5 before and 8..10 after.
    assert lines(check(repo, diff_base="main")) == [3, 4, 5, 6, 7, 8, 9, 10]


def test_untracked_files_are_kept_whole_and_deleted_ones_vanish(repo):
    write_tree(repo, {"new.py": "x = old_name\ny = old_name\n"})
    (repo / "b.py").unlink()
    result = check(repo, diff_base="main")
    assert [(f.path, f.line) for f in result.findings] == [("new.py", 1), ("new.py", 2)]


def test_an_unknown_revision_is_a_diff_error(repo):
    with pytest.raises(DiffError, match="merge-base"):
        check(repo, diff_base="no-such-branch")


def test_parse_hunks_reads_counts_and_pure_deletions():
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n"
        "@@ -1,3 +1,4 @@\n ctx\n+new\n ctx\n ctx\n"
        "@@ -10,2 +11,0 @@\n-gone\n-gone\n"
        "@@ -20 +20 @@\n-a\n+b\n"
        "diff --git a/y.py b/y.py\ndeleted file mode 100644\n--- a/y.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
    )
    assert parse_hunks(diff) == {"x.py": [(1, 4), (20, 20)]}


def test_the_result_names_the_revision_and_the_python_files_the_diff_touches(repo):
    assert check(repo, diff_base="main").diff_scope == ("main", 0)
    (repo / "notes.md").write_text("old_name\n")  # untracked, not Python: not a file checked
    (repo / "c.py").write_text("x = 1\n")  # untracked Python counts whole
    (repo / "b.py").write_text("old_name  # edited\n")
    assert check(repo, diff_base="main").diff_scope == ("main", 2)
    assert check(repo).diff_scope is None


@pytest.mark.parametrize(
    ("scope", "said"),
    [
        (None, "All contracts hold.\n"),
        (("main", 0), "No Python file changed since main: nothing to check.\n"),
        (("main", 1), "All contracts hold on the lines of 1 Python file changed since main.\n"),
        (
            ("HEAD~2", 3),
            "All contracts hold on the lines of 3 Python files changed since HEAD~2.\n",
        ),
    ],
)
def test_a_clean_diff_run_says_what_it_read_not_that_the_tree_holds(tmp_path, scope, said):
    # A base equal to HEAD makes every run clean: "All contracts hold." read as the tree's verdict.
    from checkers.check_command import _summary

    assert _summary(api.CheckResult(root=tmp_path, diff_scope=scope)) == said
