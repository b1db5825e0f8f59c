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

from ..scaffold import write_tree

CONTRACT = """\
[[tool.atom-contracts.contracts]]
id = "allocate-takes-blocks"
kind = "keyword-only"
functions = ["allocate_kv_cache_tensors"]
parameters = ["blocks"]
"""
GOOD = "class B:\n    def allocate_kv_cache_tensors(self, *, blocks):\n        pass\n"


def _project(tmp_path, monkeypatch, pyproject: str, files: dict[str, str] | None = None):
    write_tree(tmp_path, {"pyproject.toml": pyproject, "pkg/__init__.py": "", "pkg/good.py": GOOD})
    write_tree(tmp_path, files or {})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _error(capsys) -> str:
    captured = capsys.readouterr()
    assert "All contracts hold" not in captured.out
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("atom-contracts: error: "), lines[0]
    return lines[0]


def test_a_healthy_declaration_still_passes(tmp_path, monkeypatch, capsys):
    _project(tmp_path, monkeypatch, "[tool.atom-contracts]\n" + CONTRACT)
    assert main(["check", "--no-cache"]) == 0
    assert main(["check", "--no-cache", "pkg/good.py"]) == 0
    assert capsys.readouterr().out.endswith("All contracts hold.\n")


@pytest.mark.parametrize("spelling", ["atom_contracts", "atomcontracts", "atom-contract"])
def test_a_misspelled_table_is_named_with_the_right_spelling(
    tmp_path, monkeypatch, capsys, spelling
):
    _project(tmp_path, monkeypatch, CONTRACT.replace("atom-contracts", spelling))
    assert main(["check", "--no-cache"]) == 2
    err = _error(capsys)
    assert "[tool.atom-contracts]" in err
    assert f"[tool.{spelling}]" in err
    assert str(tmp_path / "pyproject.toml") in err


def test_no_table_anywhere_says_where_it_looked(tmp_path, monkeypatch, capsys):
    _project(tmp_path, monkeypatch, '[project]\nname = "x"\n')
    assert main(["check", "--no-cache", "pkg/good.py"]) == 2
    err = _error(capsys)
    assert "no [tool.atom-contracts] table" in err
    assert str(tmp_path / "pyproject.toml") in err


def test_a_config_file_without_the_table(tmp_path, monkeypatch, capsys):
    _project(tmp_path, monkeypatch, "[tool.atom-contracts]\n" + CONTRACT)
    (tmp_path / "other.toml").write_text("[tool.ruff]\nline-length = 100\n")
    assert main(["check", "--no-cache", "--config", "other.toml"]) == 2
    err = _error(capsys)
    assert "other.toml" in err and "[tool.atom-contracts]" in err


def test_an_empty_contract_list(tmp_path, monkeypatch, capsys):
    _project(tmp_path, monkeypatch, '[tool.atom-contracts]\nexclude = ["build/**"]\n')
    assert main(["check", "--no-cache"]) == 2
    assert "declares no contracts" in _error(capsys)


@pytest.mark.parametrize(
    ("where", "args"),
    [
        ('select = ["AC999"]\n', []),
        ('ignore = ["AC77"]\n', []),
        ('per-file-ignores = { "tests/**" = ["AC108"] }\n', []),
        ("", ["--select", "AC999"]),
        ("", ["--ignore", "AC101,AC555"]),
        ('select = ["E501"]\n', []),
    ],
)
def test_an_unknown_code_is_named(tmp_path, monkeypatch, capsys, where, args):
    _project(tmp_path, monkeypatch, "[tool.atom-contracts]\n" + where + CONTRACT)
    assert main(["check", "--no-cache", *args]) == 2
    err = _error(capsys)
    code = next(c for c in ("AC999", "AC77", "AC108", "AC555", "E501") if c in where + str(args))
    assert repr(code) in err, err
    assert "no rule" in err


def test_known_codes_and_prefixes_of_undeclared_kinds_are_accepted(tmp_path, monkeypatch):
    # AC3 (input-assert) is a real prefix though no contract of that kind is declared here.
    _project(tmp_path, monkeypatch, '[tool.atom-contracts]\nignore = ["AC3", "AC902"]\n' + CONTRACT)
    assert main(["check", "--no-cache", "--select", "AC1,AC9,AC001", "-q"]) == 0
    assert main(["check", "--no-cache", "--select", "ALL", "-q"]) == 0


def test_an_unknown_code_in_noqa_is_a_finding_naming_it(tmp_path, monkeypatch, capsys):
    # In a file, not in the declaration: reported where it is written, as ruff's RUF102 is.
    _project(
        tmp_path,
        monkeypatch,
        "[tool.atom-contracts]\n" + CONTRACT,
        {"pkg/x.py": "x = 1  # noqa: AC999 -- never a rule\n"},
    )
    assert main(["check", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "pkg/x.py:1:8: AC902" in out and "`# noqa: AC999` names no rule" in out


@pytest.mark.parametrize(
    ("contract", "named"),
    [
        (
            'id = "leaf"\nkind = "leaf-package"\npackage = "pkg.nowhere"\n',
            ["`leaf`", "'pkg.nowhere'"],
        ),
        (
            CONTRACT.split("\n", 1)[1] + 'paths = ["atom/**"]\n',
            ["allocate-takes-blocks", "'atom/**'"],
        ),
        (
            'id = "skip"\nkind = "importorskip"\nmodule = "triton"\ntests = ["tests/**"]\n',
            ["`skip`", "`tests`", "'tests/**'"],
        ),
    ],
    ids=["no-such-package", "paths-glob-matches-nothing", "tests-glob-matches-nothing"],
)
def test_a_contract_that_covers_no_file_is_named(tmp_path, monkeypatch, capsys, contract, named):
    pyproject = (
        "[tool.atom-contracts]\n" + CONTRACT + "\n[[tool.atom-contracts.contracts]]\n" + contract
    )
    if "allocate-takes-blocks" in contract:
        pyproject = "[tool.atom-contracts]\n\n[[tool.atom-contracts.contracts]]\n" + contract
    _project(tmp_path, monkeypatch, pyproject)
    assert main(["check", "--no-cache"]) == 2
    err = _error(capsys)
    assert "covers no file" in err
    for name in named:
        assert name in err, err
    # Judged against the project's files, not the ones named: pre-commit names a few.
    assert main(["check", "--no-cache", "pkg/good.py"]) == 2
    assert "covers no file" in _error(capsys)


def test_coverage_is_judged_on_the_project_not_the_named_files(tmp_path, monkeypatch, capsys):
    # A pre-commit run that touches only pkg/good.py must not fail a contract on atom/**.
    pyproject = (
        "[tool.atom-contracts]\n" + CONTRACT + 'paths = ["atom/**"]\n'
        '\n[[tool.atom-contracts.contracts]]\nid = "leaf"\nkind = "leaf-package"\n'
        'package = "atom.pool"\n'
    )
    _project(
        tmp_path, monkeypatch, pyproject, {"atom/__init__.py": "", "atom/pool/__init__.py": ""}
    )
    assert main(["check", "--no-cache", "pkg/good.py"]) == 0, capsys.readouterr()
    assert main(["check", "--no-cache"]) == 0


def test_a_negated_glob_is_not_asked_to_match(tmp_path, monkeypatch, capsys):
    pyproject = "[tool.atom-contracts]\n" + CONTRACT + 'paths = ["pkg/**", "!pkg/generated/**"]\n'
    _project(tmp_path, monkeypatch, pyproject)
    assert main(["check", "--no-cache", "-q"]) == 0, capsys.readouterr()


def test_the_subprocess_exit_status_is_2(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": CONTRACT.replace("atom-contracts", "atom_contracts")})
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
            "pyproject.toml": '[tool.atom-contracts]\nexclude = ["gen/**"]\n' + CONTRACT,
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
