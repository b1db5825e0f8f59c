"""A run that checked nothing never exits 0.

Each case here printed ``All contracts hold.`` and exited 0 before: a
misspelled table, a ``--config`` without the table, an unknown code, a
contract that covers no file. Each is now exit 2 with one line naming what
was looked for, where, and what it matched -- the CLI's configuration error.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from checkers.cli import main

from ..scaffold import contract, pyproject, write_tree

KEYWORD = "blocks-keyword-only"
GOOD = "class B:\n    def allocate_kv_cache_tensors(self, *, blocks):\n        pass\n"


@pytest.fixture
def project(make_project):
    """``project(*contracts, files=..., **settings)``: a package with one good file, declaring
    ``contracts`` (ids or tables, tests/scaffold.py's) and the table's other ``settings``."""

    def make(*contracts, files: dict[str, str] | None = None, settings=None):
        files = {"pkg/__init__.py": "", "pkg/good.py": GOOD, **(files or {})}
        return make_project(*contracts, files=files, src=None, settings=settings, chdir=True).root

    return make


def _error(capsys) -> str:
    captured = capsys.readouterr()
    assert "All contracts hold" not in captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("atom-contracts: error: "), lines[0]
    return lines[0]


def test_a_healthy_declaration_still_passes(project, capsys):
    project(KEYWORD)
    assert main(["check", "--no-cache"]) == 0
    assert main(["check", "--no-cache", "pkg/good.py"]) == 0
    assert capsys.readouterr().out.endswith("All contracts hold.\n")


@pytest.mark.parametrize("spelling", ["atom_contracts", "atomcontracts", "atom-contract"])
def test_a_misspelled_table_is_named_with_the_right_spelling(project, capsys, spelling):
    root = project(KEYWORD)
    toml = root / "pyproject.toml"
    toml.write_text(toml.read_text().replace("atom-contracts", spelling))
    assert main(["check", "--no-cache"]) == 2
    err = _error(capsys)
    assert "[tool.atom-contracts]" in err
    assert f"[tool.{spelling}]" in err
    assert str(root / "pyproject.toml") in err


def test_no_table_anywhere_says_where_it_looked(project, capsys):
    root = project()
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert main(["check", "--no-cache", "pkg/good.py"]) == 2
    err = _error(capsys)
    assert "no [tool.atom-contracts] table" in err
    assert str(root / "pyproject.toml") in err


def test_a_config_file_without_the_table(project, capsys):
    root = project(KEYWORD)
    (root / "other.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert main(["check", "--no-cache", "--config", "other.toml"]) == 2
    err = _error(capsys)
    assert "other.toml" in err and "[tool.atom-contracts]" in err


def test_an_empty_contract_list(project, capsys):
    project(settings={"exclude": ["build/**"]})
    assert main(["check", "--no-cache"]) == 2
    assert "declares no contracts" in _error(capsys)


@pytest.mark.parametrize(
    ("where", "args"),
    [
        ({"select": ["AC999"]}, []),
        ({"ignore": ["AC77"]}, []),
        ({"per-file-ignores": {"tests/**": ["AC108"]}}, []),
        ({}, ["--select", "AC999"]),
        ({}, ["--ignore", "AC101,AC555"]),
        ({"select": ["E501"]}, []),
    ],
)
def test_an_unknown_code_is_named(project, capsys, where, args):
    project(KEYWORD, settings=where)
    assert main(["check", "--no-cache", *args]) == 2
    err = _error(capsys)
    said = str(where) + str(args)
    code = next(c for c in ("AC999", "AC77", "AC108", "AC555", "E501") if c in said)
    assert repr(code) in err, err
    assert "no rule" in err


@pytest.mark.parametrize(
    ("declared", "settings", "args", "meant"),
    [
        ((KEYWORD,), {"exlcude": ["build/**"]}, ["check"], "exclude"),
        ((contract(KEYWORD, kind="keyword-onyl"),), None, ["check"], "keyword-only"),
        ((contract(KEYWORD, paramters=["blocks"]),), None, ["check"], "parameters"),
        ((KEYWORD,), {"select": ["AC107"]}, ["check"], "AC101"),
        ((KEYWORD,), None, ["check", "--ignore", "AC310"], "AC301"),
        ((KEYWORD,), None, ["explain", "AC310"], "AC301"),
        ((KEYWORD,), None, ["explain", "keyword-only-paramter"], "keyword-only-parameter"),
        ((KEYWORD,), None, ["hook", "post-tool-us"], "post-tool-use"),
    ],
    ids=["key", "kind", "parameter", "select", "--ignore", "explain", "explain-name", "hook"],
)
def test_a_near_miss_is_named_with_what_was_meant(project, capsys, declared, settings, args, meant):
    project(*declared, settings=settings)
    assert main([*args, "--no-cache"] if args[0] == "check" else args) == 2
    assert _error(capsys).endswith(f"; did you mean `{meant}`?")


def test_explain_names_the_code_meant_on_a_partial_install(project, capsys, monkeypatch):
    # A registered kind whose module is not installed: explain skips it, as `rules` does not.
    from checkers import rules

    monkeypatch.setitem(rules.KIND_PATHS, "not-installed", "not_installed:NotInstalled")
    project(KEYWORD)
    assert main(["explain", "AC310"]) == 2
    assert _error(capsys).endswith("; did you mean `AC301`?")


@pytest.mark.parametrize(
    "args", [["check", "--select", "AC999"], ["explain", "zzz"], ["hook", "lsp-server"]]
)
def test_nothing_is_suggested_where_nothing_is_near(project, capsys, args):
    project(KEYWORD)
    assert main(args) == 2
    assert "did you mean" not in _error(capsys)


@pytest.mark.parametrize(
    ("settings", "args"),
    [
        ({"select": []}, []),
        ({}, ["--select", ""]),
        ({}, ["--select", ","]),
        ({}, ["--ignore", "ALL"]),
        ({"ignore": ["AC"]}, []),
        ({}, ["--select", "AC3"]),  # a real prefix, but no input-assert contract is declared
        ({"select": ["AC1"]}, ["--ignore", "AC101"]),
        ({}, ["--select", "AC000"]),  # a declaration that does not load: judges no file
    ],
    ids=[
        "select-empty",
        "--select-empty",
        "--select-comma",
        "--ignore-ALL",
        "ignore-AC",
        "--select-undeclared-kind",
        "select-then-ignore",
        "--select-AC000",
    ],
)
def test_a_selection_that_turns_every_rule_off_is_refused(project, capsys, settings, args):
    # Each printed "All contracts hold." and exited 0, having checked nothing.
    project(KEYWORD, files={"pkg/bad.py": "def f(blocks):\n    pass\n"}, settings=settings)
    assert main(["check", "--no-cache", *args]) == 2
    err = _error(capsys)
    assert "turns on no rule" in err and "AC101" in err, err
    assert ("ignore: ALL" in err) == ("ALL" in args), err  # ALL spelled as written


def test_a_selection_of_the_linter_s_own_rules_alone_still_runs(project, capsys):
    # Auditing the suppressions (a reason on every `# noqa`) is a check of its own.
    project(KEYWORD, files={"pkg/x.py": "x = 1  # noqa: AC101\n"})
    assert main(["check", "--no-cache", "--select", "AC901"]) == 1
    assert "AC901" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("named", "why"),
    [
        (["empty"], "empty (no Python file"),
        (["README.md"], "README.md (not a Python file)"),
        (["README.md", "empty"], "README.md (not a Python file); "),
    ],
)
def test_paths_that_hold_no_python_file_are_refused(project, capsys, named, why):
    # Each printed "All contracts hold.": a wrong directory, another language's file.
    root = project(KEYWORD, files={"README.md": "# x\n"})
    (root / "empty").mkdir()
    assert main(["check", "--no-cache", *named]) == 2
    err = _error(capsys)
    assert "no Python file to check in the paths given" in err and why in err, err


def test_a_python_script_without_an_extension_is_checked_as_python(project, capsys):
    # pre-commit's `types: [python]` passes `bin/tool` when its #! line runs Python.
    script = "#!/usr/bin/env python3\ndef allocate_kv_cache_tensors(self, blocks):\n    pass\n"
    project(KEYWORD, files={"bin/tool": script, "bin/notes": "#!/bin/sh\necho hi\n"})
    assert main(["check", "--no-cache", "bin/tool"]) == 1
    assert "bin/tool:2:" in capsys.readouterr().out
    assert main(["check", "--no-cache", "bin/notes"]) == 2  # a shell script is not one
    assert "bin/notes (not a Python file)" in _error(capsys)


def test_a_script_that_cannot_be_read_is_not_taken_for_python(project, capsys, monkeypatch):
    from checkers import discovery

    def unreadable(*args, **kwargs):
        raise PermissionError(13, "Permission denied")  # what root's chmod 000 does not give

    project(KEYWORD, files={"bin/tool": "#!/usr/bin/env python3\n"})
    monkeypatch.setattr(discovery, "open", unreadable, raising=False)
    assert main(["check", "--no-cache", "bin/tool"]) == 2
    assert "bin/tool (not a Python file)" in _error(capsys)


def test_paths_whose_files_are_all_excluded_still_pass(project, capsys):
    # `exclude` is deliberate: pre-commit passes excluded files, and they must stay green.
    files = {"gen/out.py": "x = 1\n", "README.md": "# x\n"}
    project(KEYWORD, files=files, settings={"exclude": ["gen/**"]})
    assert main(["check", "--no-cache", "gen/out.py"]) == 0
    assert main(["check", "--no-cache", "gen"]) == 0
    assert main(["check", "--no-cache", "gen", "README.md"]) == 0


@pytest.mark.parametrize("ignored", [{"**": ["ALL"]}, {"*.py": ["AC1"]}, {"pkg/**": ["AC101"]}])
def test_per_file_ignores_that_turn_a_contract_off_everywhere_are_refused(project, capsys, ignored):
    # Each printed "All contracts hold." over a violating file: the contract ran on nothing.
    project(
        KEYWORD,
        files={"pkg/bad.py": "def f(blocks):\n    pass\n"},
        settings={"per-file-ignores": ignored},
    )
    assert main(["check", "--no-cache"]) == 2
    err = _error(capsys)
    # pkg/__init__.py, pkg/good.py and pkg/bad.py: the contract's paths default to every file.
    assert f"`{KEYWORD}`" in err, err
    assert "`per-file-ignores` turns off AC101 on each of the 3 files it covers" in err, err


def test_per_file_ignores_that_leave_a_one_file_contract_no_file_name_that_file_s_count(
    project, capsys
):
    project(
        contract(KEYWORD, paths=["pkg/good.py"]),
        settings={"per-file-ignores": {"pkg/good.py": ["AC101"]}},
    )
    assert main(["check", "--no-cache"]) == 2
    assert "turns off AC101 on each of the 1 file it covers (under " in _error(capsys)


def test_per_file_ignores_that_leave_a_contract_some_file_still_run(project, capsys):
    project(KEYWORD, settings={"per-file-ignores": {"pkg/__init__.py": ["AC101"]}})
    assert main(["check", "--no-cache"]) == 0
    # and --select, more specific than the per-file prefix, turns the code back on
    project(KEYWORD, settings={"per-file-ignores": {"**": ["AC1"]}})
    assert main(["check", "--no-cache", "--select", "AC101"]) == 0


def test_known_codes_and_prefixes_of_undeclared_kinds_are_accepted(project):
    # AC3 (input-assert) is a real prefix though no contract of that kind is declared here.
    project(KEYWORD, settings={"ignore": ["AC3", "AC902"]})
    assert main(["check", "--no-cache", "--select", "AC1,AC9,AC001", "-q"]) == 0
    assert main(["check", "--no-cache", "--select", "ALL", "-q"]) == 0


def test_an_unknown_code_in_noqa_is_a_finding_naming_it(project, capsys):
    # In a file, not in the declaration: reported where it is written, as ruff's RUF102 is.
    project(KEYWORD, files={"pkg/x.py": "x = 1  # noqa: AC999 -- never a rule\n"})
    assert main(["check", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "pkg/x.py:1:8: AC902" in out and "`# noqa: AC999` names no rule" in out
    assert "did you mean" not in out


def test_a_misspelled_code_in_noqa_is_named_with_the_code_meant(project, capsys):
    project(KEYWORD, files={"pkg/x.py": "x = 1  # noqa: AC107 -- a typo of AC101\n"})
    assert main(["check", "--no-cache"]) == 1
    assert "`# noqa: AC107` names no rule" in (out := capsys.readouterr().out)
    assert "did you mean `AC101`?" in out


@pytest.mark.parametrize(
    ("declared", "named"),
    [
        ((KEYWORD, contract("leaf", package="pkg.nowhere")), ["`leaf`", "'pkg.nowhere'"]),
        ((contract(KEYWORD, paths=["atom/**"]),), [f"`{KEYWORD}`", "'atom/**'"]),
        ((KEYWORD, "skip-triton"), ["`skip-triton`", "`tests`", "'tests/**'"]),
    ],
    ids=["no-such-package", "paths-glob-matches-nothing", "tests-glob-matches-nothing"],
)
def test_a_contract_that_covers_no_file_is_named(project, capsys, declared, named):
    project(*declared)
    assert main(["check", "--no-cache"]) == 2
    err = _error(capsys)
    assert "covers no file" in err
    for name in named:
        assert name in err, err
    # Judged against the project's files, not the ones named: pre-commit names a few.
    assert main(["check", "--no-cache", "pkg/good.py"]) == 2
    assert "covers no file" in _error(capsys)


def test_coverage_is_judged_on_the_project_not_the_named_files(project, capsys):
    # A pre-commit run that touches only pkg/good.py must not fail a contract on atom/**.
    project(
        contract(KEYWORD, paths=["atom/**"]),
        contract("leaf", package="atom.pool"),
        files={"atom/__init__.py": "", "atom/pool/__init__.py": ""},
    )
    assert main(["check", "--no-cache", "pkg/good.py"]) == 0, capsys.readouterr()
    assert main(["check", "--no-cache"]) == 0


def test_a_negated_glob_is_not_asked_to_match(project, capsys):
    project(contract(KEYWORD, paths=["pkg/**", "!pkg/generated/**"]))
    assert main(["check", "--no-cache", "-q"]) == 0, capsys.readouterr()


def test_the_subprocess_exit_status_is_2(tmp_path):
    declared = pyproject(KEYWORD, src=None).replace("atom-contracts", "atom_contracts")
    write_tree(tmp_path, {"pyproject.toml": declared})
    proc = subprocess.run(
        [sys.executable, "-m", "checkers", "check", "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""


def test_the_probe_for_named_files_finds_what_the_listing_finds(tmp_path):
    # The probe walks only a glob's literal directory; the exact listing is git's.
    from checkers.api import load_config
    from checkers.coverage import Listed, Probed, _literal_prefix
    from checkers.discovery import discover

    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject(KEYWORD, src=None, settings={"exclude": ["gen/**"]}),
            "src/pkg/deep/mod.py": "",
            "src/pkg/ns/inner/x.py": "",
            "tests/unit/test_a.py": "",
            "gen/out.py": "",
            ".hidden/h.py": "",
            "notes/readme.txt": "",
        },
    )
    config = load_config(tmp_path)
    listed = Listed([rel for rel, _ in discover([], config)])
    probed = Probed(config)
    for glob in (
        "src/**",
        "src/pkg/deep/*.py",
        "tests/**/test_*.py",
        "*.py",
        "mod.py",
        "gen/**",
        ".hidden/**",
        "notes/**",
        "nowhere/**",
        "src/*/ns/**",
        "test_?.py",
    ):
        assert probed.any_match(glob) == listed.any_match(glob), glob
    for stem in (
        "src/pkg",
        "src/pkg/ns",
        "src/pkg/deep/mod",
        "src/pkg/none",
        "gen",
        "notes",
        ".hidden/h",
    ):
        assert probed.any_under(stem) == listed.any_under(stem), stem
    assert (_literal_prefix("a/b/*.py"), _literal_prefix("a/**"), _literal_prefix("*.py")) == (
        "a/b",
        "a",
        "",
    )


def test_a_glob_a_file_the_run_found_matches_needs_no_listing_of_the_project():
    from checkers.coverage import Listed

    asked = []

    def listing():
        asked.append(True)
        return ["src/pkg/a.py", "src/pkg/b/c.py", "tests/test_x.py"]

    listed = Listed(listing, named=["src/pkg/a.py"])
    assert listed.any_match("src/**") and listed.any_under("src/pkg")
    assert asked == []
    # One the run's own files do not match is asked of the project's listing.
    assert listed.any_match("tests/**") and asked == [True]
    assert not listed.any_match("nowhere/**")
    assert listed.any_under("src/pkg/b") and not listed.any_under("src/none")
    # A file under the glob's folder is not yet a match: the glob is still asked.
    assert not listed.any_match("src/pkg/*/test_*.py")
    assert not Listed(lambda: ["src/pkg/b/c.py"], named=["src/pkg/a.py"]).any_match(
        "src/pkg/b/test_*.py"
    )


def test_a_run_over_its_src_root_does_not_list_the_project_to_judge_a_glob(tmp_path, monkeypatch):
    """A glob matching a checked file: the run does not list the project to say so."""
    import checkers.listing as listing_module

    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject(contract(KEYWORD, paths=["pkg/**"])),
            "pkg/__init__.py": "",
            "pkg/mod.py": "def f(*, blocks):\n    return blocks\n",
        },
    )
    listed = []
    real = listing_module.project_files
    monkeypatch.setattr(
        listing_module, "project_files", lambda *a, **k: listed.append(1) or real(*a, **k)
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "-q", "pkg"]) == 0
    assert listed == []
    # A glob no checked file matches is still judged on the whole project: exit 2.
    (tmp_path / "pyproject.toml").write_text(pyproject(contract(KEYWORD, paths=["lib/**"])))
    assert main(["check", "-q", "pkg"]) == 2
    assert listed == [1]


def test_a_directory_symlink_is_followed_only_where_it_is_named(project, capsys, tmp_path_factory):
    # Found while walking, a symlink to a directory is most often a virtual environment or a
    # dependency checked out beside the code; named on the command line, it is what to check.
    outside = tmp_path_factory.mktemp("vendored")
    (outside / "mod.py").write_text(
        "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        pass\n"
    )
    root = project(KEYWORD)
    (root / "pkg" / "vendored").symlink_to(outside, target_is_directory=True)
    assert main(["check", "--no-cache"]) == 0
    assert "All contracts hold" in capsys.readouterr().out
    assert main(["check", "--no-cache", "pkg/vendored"]) == 1
    assert "pkg/vendored/mod.py:2:" in capsys.readouterr().out


def test_a_folder_glob_is_answered_from_the_sorted_listing_without_a_matcher(monkeypatch):
    """`folder/**` matches any file under the folder, and only those: a sibling whose name
    starts the same (`src.py`, `srcx/`) is not under it, and no glob matcher is built."""
    import checkers.coverage as coverage

    def no_matcher(*args, **kwargs):
        raise AssertionError("a folder glob needs no matcher")

    monkeypatch.setattr(coverage, "compile_globs", no_matcher)
    siblings = ["srcx/a.py", "src.py", "a/src/b.py"]
    assert not coverage.Listed(siblings).any_match("src/**")
    assert coverage.Listed([*siblings, "src/deep/er/c.py"]).any_match("src/**")
    assert coverage.Listed(lambda: ["z.py", "src/c.py"], named=siblings).any_match("src/**")
    assert coverage.Listed(siblings).any_match("srcx/**")
    assert not coverage.Listed(siblings).any_match("a/src/b/**")


def test_a_glob_is_matched_only_against_files_under_its_folder():
    from checkers.coverage import Listed

    listing = ["lib/pkg/test_a.py", "src/pkg/a.py", "src/pkg/b/test_c.py", "srcx/pkg/test_d.py"]
    assert Listed(listing).any_match("src/pkg/*/test_*.py")
    assert not Listed(listing).any_match("src/pkg/test_*.py")
    assert Listed(listing).any_match("**/test_a.py")
    assert not Listed(listing[1:]).any_match("lib/**/test_*.py")
