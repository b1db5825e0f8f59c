"""Each file is checked against the declaration nearest above it, as ruff reads its configuration.

Before: the first path's declaration governed every path of the run, so
``check a/x.py b/y.py`` passed where ``check b/y.py a/x.py`` failed (pre-commit
at the top of a repository holding two projects), and a project declared
inside a tree was checked under the outer contracts, never its own.
"""

from __future__ import annotations

import pytest

from checkers import api
from checkers.cli import main

from ..scaffold import git, pyproject, write_tree

ASSERTS = {"id": "asserts", "kind": "input-assert"}
RETIRED = {"id": "retired", "kind": "retired-name", "names": ["Old"]}
BOTH = "def f(x):\n    assert x\n    return Old\n"  # AC301 under one, AC401 under the other


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A repository with no declaration at its top and two projects, each declaring its own."""
    write_tree(
        tmp_path,
        {
            "one/pyproject.toml": pyproject(ASSERTS),
            "one/m.py": BOTH,
            "two/pyproject.toml": pyproject(RETIRED),
            "two/m.py": BOTH,
        },
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _found(result):
    return sorted((f.path, f.code) for f in result.findings)


@pytest.mark.parametrize("order", [["one/m.py", "two/m.py"], ["two/m.py", "one/m.py"]])
def test_files_under_two_declarations_are_each_checked_under_their_own(repo, order):
    result = api.check(order, use_cache=False, jobs=1)
    assert _found(result) == [("one/m.py", "AC301"), ("two/m.py", "AC401")]
    assert result.files_checked == 2


def test_the_cli_prints_them_relative_to_where_it_runs(repo, capsys):
    assert main(["check", "--no-cache", "two/m.py", "one/m.py"]) == 1
    out = capsys.readouterr().out
    assert "one/m.py:2:12: AC301" in out and "two/m.py:3:12: AC401" in out
    assert "Found 2 findings." in out


def test_a_project_declared_inside_the_tree_is_checked_under_its_own_contracts(repo):
    (repo / "pyproject.toml").write_text(pyproject(RETIRED))
    (repo / "top.py").write_text(BOTH)
    result = api.check(use_cache=False, jobs=1)
    # one/ declares input-assert only: the outer retired-name does not reach into it.
    assert _found(result) == [("one/m.py", "AC301"), ("top.py", "AC401"), ("two/m.py", "AC401")]
    assert result.root == repo.resolve()


def test_config_names_one_declaration_for_every_file(repo, capsys):
    assert main(["check", "--no-cache", "--config", "two/pyproject.toml", "one/m.py"]) == 1
    out = capsys.readouterr().out
    assert "AC401" in out and "AC301" not in out


def test_fixes_and_diffs_under_two_declarations_name_each_file_from_the_common_root(repo):
    (repo / "two" / "pyproject.toml").write_text(pyproject(ASSERTS, RETIRED))  # both fixable
    both = ["one/m.py", "two/m.py"]
    shown = api.check(both, use_cache=False, jobs=1, diff=True, unsafe_fixes=True)
    headers = sorted(line for text in shown.diffs for line in text.splitlines()[:2])
    assert headers == ["+++ one/m.py", "+++ two/m.py", "--- one/m.py", "--- two/m.py"]
    fixed = api.check(both, use_cache=False, jobs=1, fix=True, unsafe_fixes=True)
    assert fixed.fixed == 2 and sorted(fixed.fixes) == both
    for path in both:
        assert "assert x" not in (repo / path).read_text()


def test_a_file_no_declaration_governs_is_named_and_the_others_checked(repo, capsys):
    (repo / "scripts").mkdir()
    (repo / "scripts" / "tool.py").write_text(BOTH)
    for order in (["scripts/tool.py", "one/m.py"], ["one/m.py", "scripts/tool.py"]):
        assert main(["check", "--no-cache", *order]) == 1
        captured = capsys.readouterr()
        assert "one/m.py:2:12: AC301" in captured.out and "scripts/tool.py:" not in captured.out
        assert "scripts/tool.py: not checked: no [tool.atom-contracts] declaration" in captured.err
    # Alone, it is a run that checks nothing: refused, as before.
    assert main(["check", "--no-cache", "scripts/tool.py"]) == 2


def test_config_governs_a_nested_declaration_s_files_too(repo, capsys):
    # --config chooses one declaration for every file: one/'s own does not split it off.
    (repo / "pyproject.toml").write_text(pyproject(RETIRED))
    assert main(["check", "--no-cache", "--config", "pyproject.toml"]) == 1
    out = capsys.readouterr().out
    assert "one/m.py:3:12: AC401" in out and "AC301" not in out, out


def test_config_governs_files_named_under_two_declarations(repo, capsys):
    args = ["--config", "two/pyproject.toml", "one/m.py", "two/m.py"]
    assert main(["check", "--no-cache", *args]) == 1
    out = capsys.readouterr().out
    assert "one/m.py:3:12: AC401" in out and "two/m.py:3:12: AC401" in out, out
    assert "AC301" not in out, out


def test_folders_named_are_each_checked_under_the_declaration_they_hold(repo):
    result = api.check(["one", "two"], use_cache=False, jobs=1)
    assert _found(result) == [("one/m.py", "AC301"), ("two/m.py", "AC401")]


def test_a_pyproject_without_the_table_declares_nothing_nested(repo):
    (repo / "pyproject.toml").write_text(pyproject(RETIRED))
    write_tree(repo, {"three/pyproject.toml": '[project]\nname = "three"\n', "three/m.py": BOTH})
    result = api.check(use_cache=False, jobs=1)
    assert ("three/m.py", "AC401") in _found(result)


def test_a_run_without_the_cache_writes_nothing_in_a_nested_project_s_cache(repo):
    # one/ has been checked on its own before (its cache folder exists); --no-cache from the
    # top must leave it as it was.
    (repo / "pyproject.toml").write_text(pyproject(RETIRED))
    (repo / "one" / ".atom-contracts-cache").mkdir()
    api.check(use_cache=False, jobs=1)
    assert list((repo / "one" / ".atom-contracts-cache").iterdir()) == []
    assert not (repo / ".atom-contracts-cache").exists()


def test_a_file_outside_every_root_keeps_its_absolute_path_among_two_declarations(
    repo, tmp_path_factory
):
    # Under no declaration, the working directory's governs it; it lies outside that root.
    (repo / "pyproject.toml").write_text(pyproject(RETIRED))
    outside = tmp_path_factory.mktemp("elsewhere") / "x.py"
    outside.write_text(BOTH)
    result = api.check(["one/m.py", str(outside)], use_cache=False, jobs=1)
    assert _found(result) == sorted([("one/m.py", "AC301"), (str(outside), "AC401")])


def test_a_diff_run_over_two_declarations_names_every_file_it_read(repo):
    (repo / "scripts").mkdir()
    (repo / "scripts" / "tool.py").write_text(BOTH)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    for rel in ("one/m.py", "two/m.py"):
        (repo / rel).write_text(BOTH + "x = 1\n")
    # scripts/tool.py is under no declaration: named as not checked, no scope of its own.
    one = api.check(["one/m.py", "scripts/tool.py"], use_cache=False, jobs=1, diff_base="HEAD")
    assert one.diff_scope == ("HEAD", 1)
    both = ["one/m.py", "two/m.py", "scripts/tool.py"]
    assert api.check(both, use_cache=False, jobs=1, diff_base="HEAD").diff_scope == ("HEAD", 2)


def test_a_root_with_no_declaration_of_its_own_checks_each_project_below_it(repo, capsys):
    # A monorepo's top holds no declaration; its projects each hold one. `check` there is
    # what `check one two` and pre-commit --all-files already were: every project under its
    # own contracts.
    for args in ([], ["."], [str(repo)]):
        result = api.check(args, use_cache=False, jobs=1)
        assert _found(result) == [("one/m.py", "AC301"), ("two/m.py", "AC401")], args
        assert result.root == repo.resolve()
    assert main(["check", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "one/m.py:2:12: AC301" in out and "two/m.py:3:12: AC401" in out


def test_files_below_a_root_that_no_declaration_governs_are_named_by_folder(repo, capsys):
    write_tree(repo, {"scripts/a.py": BOTH, "scripts/b.py": BOTH, "top.py": BOTH})
    assert main(["check", "--no-cache"]) == 1
    captured = capsys.readouterr()
    assert "one/m.py:2:12: AC301" in captured.out and "scripts/" not in captured.out
    warned = [line for line in captured.err.splitlines() if "not checked" in line]
    assert warned == [
        "atom-contracts: warning: scripts/: 2 Python files not checked: no "
        "[tool.atom-contracts] declaration governs them",
        "atom-contracts: warning: top.py: not checked: no [tool.atom-contracts] declaration "
        "governs it",
    ]


def test_a_root_with_no_declaration_anywhere_below_is_still_refused(tmp_path, monkeypatch, capsys):
    write_tree(tmp_path, {"a/m.py": BOTH, "a/pyproject.toml": '[project]\nname = "a"\n'})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--no-cache"]) == 2
    assert "nothing would be checked" in capsys.readouterr().err


def test_a_git_root_lists_its_projects_as_git_does(repo, capsys):
    # Inside a work tree the projects are found in git's listing: an ignored one is not.
    write_tree(repo, {".gitignore": "two/\n"})
    git(repo, "init", "-q")
    result = api.check(use_cache=False, jobs=1)
    assert _found(result) == [("one/m.py", "AC301")]
