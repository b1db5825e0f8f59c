"""bench/bug_history.py's verdicts and its cases file: what counts as a fixed bug caught."""

from __future__ import annotations

import re
import tomllib

import pytest

from .conftest import bench_module


@pytest.fixture(scope="module")
def history():
    return bench_module("bug_history")


def _finding(line, message="adds token (`a`) to block (`b`)", path="tree/pkg/m.py", kind="units"):
    return {"code": "AC801", "kind": kind, "path": path, "line": line, "message": message}


CHANGED = {"pkg/m.py": {10, 11}}


def test_a_finding_on_a_changed_line_that_the_fix_no_longer_has_is_caught(history):
    got, gone, new = history.verdict([_finding(10)], [], CHANGED)
    assert (got, [f["line"] for f in gone], new) == ("caught", [10], [])


def test_a_finding_the_fix_still_has_is_no_catch_though_its_line_moved(history):
    before = [_finding(10, "compares block (`x`) at 10")]
    after = [_finding(12, "compares block (`x`) at 12")]  # numbers aside, the same finding
    assert history.verdict(before, after, CHANGED)[0] == "missed"


def test_a_finding_off_the_changed_lines_catches_nothing(history):
    assert history.verdict([_finding(30)], [], CHANGED)[0] == "missed"
    assert history.verdict([_finding(10, path="tree/pkg/other.py")], [], CHANGED)[0] == "missed"


def test_a_catch_whose_fix_is_flagged_on_its_own_changed_lines_is_noisy(history):
    got, _, new = history.verdict(
        [_finding(10)], [_finding(11, "adds page (`c`) to block (`b`)")], CHANGED
    )
    assert (got, [f["line"] for f in new]) == ("noisy", [11])


def test_a_chain_is_placed_at_its_last_hop_the_forbidden_call(history):
    message = (
        "`E.f` is an entry and reaches `*.item` (a host sync): E.f (tree/pkg/a.py:3) -> "
        "g (tree/pkg/m.py:11, where mode == 'decode') -> `x.item()`"
    )
    chain = _finding(3, message, path="tree/pkg/a.py", kind="reachable-calls")
    assert history.spots(chain) == [("pkg/m.py", 11)]
    assert history.verdict([chain], [], CHANGED)[0] == "caught"
    assert history.spots(_finding(7)) == [("pkg/m.py", 7)]


def test_every_case_names_a_fix_a_declared_contract_and_why_it_was_missed(history):
    data = history.load()
    assert data["case"]
    for case in data["case"]:
        assert case["repo"] in data["repos"], case
        assert re.fullmatch(r"[0-9a-f]{40}", case["fix"]), case
        assert case["recorded"] in ("caught", "noisy", "missed"), case
        assert case["bug"].strip() and (case["recorded"] != "missed" or case["why"].strip())
        declared = tomllib.loads(
            history.contract_toml(case["repo"], case["contract"], case.get("entries"))
        )
        (table,) = declared["tool"]["atom-contracts"]["contracts"]
        assert table["id"] == case["contract"]
        if "entries" in case:
            assert table["entries"] == case["entries"]


def test_the_changed_lines_are_the_parents_by_path_in_the_checked_tree(history, tmp_path):
    import subprocess

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(tmp_path), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    module = tmp_path / "python" / "pkg" / "m.py"
    module.parent.mkdir(parents=True)
    module.write_text("".join(f"line{i}\n" for i in range(1, 11)))
    git("add", ".")
    git("commit", "-qm", "parent")
    parent = git("rev-parse", "HEAD")
    lines = module.read_text().splitlines(keepends=True)
    lines[2] = "changed3\n"  # line 3 changed
    lines.insert(7, "inserted\n")  # a line inserted after line 7
    module.write_text("".join(lines))
    (tmp_path / "python" / "pkg" / "new.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-qm", "fix")
    repo = {"package": "pkg", "package-dir": "python"}
    changed = history.changed_lines(tmp_path / ".git", parent, git("rev-parse", "HEAD"), repo)
    assert changed == {"pkg/m.py": {3, 7, 8}}
