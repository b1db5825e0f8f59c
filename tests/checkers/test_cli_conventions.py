"""The command line's small conventions, as ruff keeps them.

Paths relative to the working directory, a closed pipe that is not an
error, statistics as JSON, ``--version``, stdin with ``--stdin-filename``,
colour only on a terminal (NO_COLOR / FORCE_COLOR), ``extend-exclude``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from checkers.cli import main

from ..scaffold import pyproject, write_tree

PYPROJECT = pyproject("blocks-keyword-only", src=None, settings={"extend-exclude": ["gen/**"]})
BAD = "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        pass\n"
GOOD = BAD.replace("(self, blocks)", "(self, *, blocks)")
CLI = "import sys; from checkers.cli import main; sys.exit(main())"


@pytest.fixture
def project(tmp_path, monkeypatch):
    write_tree(
        tmp_path,
        {"pyproject.toml": PYPROJECT, "pkg/sub/bad.py": BAD, "gen/bad.py": BAD, "pkg/ok.py": GOOD},
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    return tmp_path


def _run(args, cwd, env=None, stdin=None):
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_text_paths_are_relative_to_the_working_directory(project, capsys, monkeypatch):
    monkeypatch.chdir(project / "pkg")
    assert main(["check", "--no-cache"]) == 1
    assert capsys.readouterr().out.startswith("sub/bad.py:2:")
    monkeypatch.chdir(project / "pkg" / "sub")
    assert main(["check", "--no-cache", "--output-format", "full"]) == 1
    assert capsys.readouterr().out.startswith("bad.py:2:")
    # Machine formats keep the root-relative path their readers resolve.
    assert main(["check", "--no-cache", "--output-format", "json"]) == 1
    assert json.loads(capsys.readouterr().out)[0]["path"] == "pkg/sub/bad.py"


def test_extend_exclude_adds_to_exclude(project, capsys):
    assert main(["check", "--no-cache"]) == 1
    assert "gen/bad.py" not in capsys.readouterr().out


def test_a_closed_pipe_is_quiet_and_keeps_the_verdict(project):
    for i in range(300):
        (project / "pkg" / f"bad_{i}.py").write_text(BAD)
    proc = subprocess.run(
        f"{sys.executable} -c '{CLI}' check --no-cache --output-format full | head -n 1; exit ${{PIPESTATUS[0]}}",
        shell=True,
        executable="/bin/bash",
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.stderr == "", proc.stderr
    assert proc.returncode == 1
    assert proc.stdout.count("\n") == 1


def test_statistics_as_json(project, capsys):
    assert main(["check", "--no-cache", "--statistics", "--output-format", "json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {"code": "AC101", "name": "keyword-only-parameter", "count": 1, "fixable": False}
    ]


def test_version(capsys):
    from importlib.metadata import version

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"atom-contracts {version('atom-contracts')}\n"


def test_stdin_is_checked_as_the_named_file(project):
    proc = _run(["check", "--no-cache", "-", "--stdin-filename", "pkg/new.py"], project, stdin=BAD)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("pkg/new.py:2:"), proc.stdout
    assert not (project / "pkg" / "new.py").exists()
    clean = _run(
        ["check", "--no-cache", "-", "--stdin-filename", "pkg/new.py"], project, stdin=GOOD
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # Its declaration's scope holds: an excluded name is not checked.
    excluded = _run(["check", "-", "--stdin-filename", "gen/x.py"], project, stdin=BAD)
    assert excluded.returncode == 0, excluded.stdout
    missing = _run(["check", "-"], project, stdin=BAD)
    assert missing.returncode == 2 and "--stdin-filename" in missing.stderr


def test_stdin_with_fix_prints_the_fixed_source(project):
    source = "x = 1  # noqa: AC101 -- stale\n"
    proc = _run(
        ["check", "--no-cache", "--fix", "-", "--stdin-filename", "pkg/m.py"], project, stdin=source
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "x = 1\n"


def test_colour_only_on_a_terminal_or_when_forced(project):
    plain = _run(["check", "--no-cache"], project)
    assert "\x1b[" not in plain.stdout
    forced = _run(["check", "--no-cache"], project, env={"FORCE_COLOR": "1"})
    assert "\x1b[1;31mAC101\x1b[0m" in forced.stdout
    both = _run(["check", "--no-cache"], project, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in both.stdout
    as_json = _run(
        ["check", "--no-cache", "--output-format", "json"], project, {"FORCE_COLOR": "1"}
    )
    assert "\x1b[" not in as_json.stdout
