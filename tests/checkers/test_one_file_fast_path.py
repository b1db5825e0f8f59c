"""The one-file path's shortcuts never change a verdict.

``check FILE`` reads the project's listing from ``.atom-contracts-cache/``
(``checkers.listing``) for the coverage check and the cross-file re-check,
and its file's findings from one shard of the cache. Each scenario here is
run twice -- warm, the fast path, and with ``--no-cache``, the slow path that
lists and checks everything afresh -- and the exit status, the findings and
the error line must be identical: a new file, a deleted file, a contract
covering nothing, an edited module reaching a test, an ignore rule changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

from checkers import listing
from checkers.cli import main

from ..scaffold import pyproject, write_tree

PYPROJECT = pyproject(
    "skip-triton",
    "leaf",
    {
        "id": "extra-keyword-only",
        "kind": "keyword-only",
        "paths": ["extra/**"],
        "functions": ["build"],
        "parameters": ["size"],
    },
)

TREE = {
    "pyproject.toml": PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/ops.py": "def rope():\n    return 1\n",
    "pkg/wrap.py": "from pkg.ops import rope\n\nwrapped = rope\n",
    "pkg/leaf/__init__.py": "WIDTH = 8\n",
    "pkg/leaf/rows.py": "from . import WIDTH\n\nROWS = WIDTH * 2\n",
    "extra/build.py": "def build(*, size):\n    return size\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": "from pkg.ops import rope\n",
    "tests/test_wrap.py": "import os\n\nfrom pkg.wrap import wrapped\n",
    "tests/test_unrelated.py": "import json\n",
}

ADD_TRITON = "import triton\n\n\ndef rope():\n    return 1\n"
OLD = time.time() - 3600  # outside every racy window


def age(root, when=OLD):
    """Backdate every file and folder, so stored stats can prove something."""
    for folder, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(os.path.join(folder, name), (when, when))
    os.utime(root, (when, when))


@pytest.fixture
def project(tmp_path, monkeypatch):
    write_tree(tmp_path, TREE)
    age(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def verdict(capsys, *args):
    """(exit status, findings as (path, line, code, message), stderr) of one CLI run."""
    rc = main(["check", "--output-format", "json", *args])
    captured = capsys.readouterr()
    found = json.loads(captured.out) if captured.out.strip() else []
    rows = sorted((f["path"], f["line"], f["code"], f["message"]) for f in found)
    return rc, rows, captured.err


def fast_and_slow(capsys, *args):
    fast = verdict(capsys, *args)
    slow = verdict(capsys, "--no-cache", *args)
    assert fast == slow
    return fast


def warm(capsys, root, *args):
    """Fill the cache, then store a listing that can prove itself.

    The first run creates ``.atom-contracts-cache/``, which moves the root's
    mtime into the racy window; aged, the next run stores a listing whose every
    folder is older than that window.
    """
    verdict(capsys, *args)
    age(root)
    verdict(capsys, *args)


def relative(rows):
    return [(path, line, code) for path, line, code, _ in rows]


def count_listings(monkeypatch):
    calls = []
    real = listing.discover

    def counting(paths, config):
        calls.append(list(paths))
        return real(paths, config)

    monkeypatch.setattr(listing, "discover", counting)
    return calls


def test_a_warm_one_file_run_reads_the_stored_listing(project, capsys, monkeypatch):
    warm(capsys, project, "pkg/ops.py")
    assert (project / ".atom-contracts-cache" / listing.LISTING_FILE).is_file()
    calls = count_listings(monkeypatch)
    rc, rows, _ = verdict(capsys, "pkg/ops.py")
    assert (rc, rows, calls) == (0, [], [])


def test_an_edit_reaching_a_test_fails_it_on_both_paths(project, capsys):
    warm(capsys, project, "pkg/ops.py")
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    rc, rows, _ = fast_and_slow(capsys, "pkg/ops.py")
    assert rc == 1
    assert relative(rows) == [
        ("tests/test_ops.py", 1, "AC601"),
        ("tests/test_wrap.py", 3, "AC601"),
    ]


def test_a_new_test_reaching_the_edit_is_never_missed(project, capsys, monkeypatch):
    warm(capsys, project, "pkg/ops.py")
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    age(project)
    verdict(capsys, "pkg/ops.py")  # the listing stored again, provable
    (project / "tests/test_new.py").write_text("from pkg.wrap import wrapped\n")
    # Its folder's mtime moved; make it old but different, so that (not the racy
    # window) is what the stored listing is refused on.
    os.utime(project / "tests", (OLD - 60, OLD - 60))
    calls = count_listings(monkeypatch)
    rc, rows, _ = fast_and_slow(capsys, "pkg/ops.py")
    assert calls, "the stored listing was reused after a file was added"
    assert rc == 1
    assert ("tests/test_new.py", 1, "AC601") in relative(rows)


def test_a_deleted_file_is_never_counted(project, capsys):
    warm(capsys, project, "pkg/ops.py")
    # The only file `extra-keyword-only` covers goes: the contract now checks nothing.
    (project / "extra/build.py").unlink()
    os.utime(project / "extra", (OLD - 60, OLD - 60))
    rc, rows, err = fast_and_slow(capsys, "pkg/ops.py")
    assert (rc, rows) == (2, [])
    assert "contract `extra-keyword-only` (keyword-only) covers no file" in err
    # ... exactly as the whole-tree run says it.
    assert verdict(capsys)[0] == 2


def test_a_contract_covering_nothing_exits_2_on_both_paths(project, capsys):
    warm(capsys, project, "pkg/ops.py")
    text = (project / "pyproject.toml").read_text().replace('"extra/**"', '"nowhere/**"')
    (project / "pyproject.toml").write_text(text)
    rc, rows, err = fast_and_slow(capsys, "pkg/ops.py")
    assert (rc, rows) == (2, [])
    assert "`paths` glob 'nowhere/**' matches no file" in err
    whole = verdict(capsys)
    assert whole[0] == 2 and whole[2] == err


def test_the_one_file_verdict_on_coverage_is_the_whole_tree_run_s(project, capsys):
    """The listing is the whole-tree run's (git's, with its ignore rules), not a probe
    that may find a file git ignores: a one-file run refuses what CI refuses."""
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("extra/\n")
    age(project)
    rc, _, err = fast_and_slow(capsys, "pkg/ops.py")
    assert rc == 2 and "`extra-keyword-only`" in err
    assert verdict(capsys)[2] == err


def test_an_ignore_rule_edited_in_place_is_never_missed(project, capsys):
    if shutil.which("git") is None:
        pytest.skip("needs git")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("*.log\n")
    age(project)
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    os.utime(project / "pkg/ops.py", (OLD, OLD))
    warm(capsys, project, "pkg/ops.py")
    before = fast_and_slow(capsys, "pkg/ops.py")
    assert ("tests/test_wrap.py", 3, "AC601") in relative(before[1])
    # The same size and folder, another rule: only the file's own mtime says so.
    (project / ".gitignore").write_text("test_wra*\n")
    os.utime(project / ".gitignore", (OLD - 60, OLD - 60))
    os.utime(project, (OLD, OLD))
    after = fast_and_slow(capsys, "pkg/ops.py")
    assert relative(after[1]) == [("tests/test_ops.py", 1, "AC601")]


def test_a_stored_listing_of_the_wrong_shape_is_a_miss(project, capsys):
    warm(capsys, project, "pkg/ops.py")
    store = project / ".atom-contracts-cache" / listing.LISTING_FILE
    for junk in (b"", b"not marshal", b"\xe9\x00\x00\x00"):
        store.write_bytes(junk)
        assert fast_and_slow(capsys, "pkg/ops.py")[0] == 0


def _folder_bytes(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_a_read_only_run_reads_the_cache_and_writes_nothing(project, capsys):
    """The agent hook's mode: same verdict, and the cache folder byte for byte as it was."""
    from checkers import api

    cache_dir = project / ".atom-contracts-cache"
    read_only = api.check(["pkg/ops.py"], cwd=project, jobs=1, write_cache=False)
    assert not cache_dir.exists()  # nothing to read, and nothing created
    warm(capsys, project, "pkg/ops.py")
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    before = _folder_bytes(cache_dir)
    read_only = api.check(["pkg/ops.py"], cwd=project, jobs=1, write_cache=False)
    assert _folder_bytes(cache_dir) == before
    uncached = api.check(["pkg/ops.py"], cwd=project, jobs=1, use_cache=False)
    assert read_only.findings == uncached.findings
    assert {f.path for f in read_only.findings} == {"tests/test_ops.py", "tests/test_wrap.py"}


def _git_project(root):
    commit = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base"]
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], commit):
        subprocess.run(cmd, cwd=root, check=True, capture_output=True)


@pytest.mark.parametrize("how", ["rm", "git rm"])
def test_a_deleted_module_re_checks_what_imported_it(project, capsys, how):
    # `git diff --name-only | xargs atom-contracts check` names a deleted module: it has no
    # findings of its own, but the leaf member importing it now fails AC202, as the
    # whole-tree run says, so the one-file run must say it too.
    (project / "pkg/leaf/cols.py").write_text("COLS = 4\n")
    (project / "pkg/leaf/grid.py").write_text("from pkg.leaf import cols\n")
    if shutil.which("git") is None:
        pytest.skip("needs git: a deleted file is told from a mistyped one by git's index")
    _git_project(project)
    warm(capsys, project, "pkg/leaf/cols.py")
    (project / "pkg/leaf/cols.py").unlink()
    if how == "git rm":
        subprocess.run(["git", "rm", "-q", "--cached", "pkg/leaf/cols.py"], cwd=project, check=True)
    rc, rows, err = fast_and_slow(capsys, "pkg/leaf/cols.py")
    assert (rc, relative(rows), err) == (1, [("pkg/leaf/grid.py", 1, "AC202")], "")
    assert "(reached through pkg/leaf/cols.py, edited)" in rows[0][3]
    whole = verdict(capsys)
    assert relative(whole[1]) == relative(rows)


def test_a_mistyped_path_is_an_error_naming_it(project, capsys):
    _git_project(project)
    rc, rows, err = fast_and_slow(capsys, "pkg/opz.py", "pkg/ops.py")
    assert (rc, rows) == (2, [])
    assert (
        err.strip() == f"atom-contracts: error: {project / 'pkg/opz.py'}: no such file or directory"
    )
