"""The flake8 plugin, run by real flake8 on a throwaway project.

flake8 must find the plugin through the installed entry point (``AC =
checkers.flake8_plugin:ContractsPlugin``), read the contracts from the
project's pyproject.toml found upward from each file, report them in its own
format and honour its own ``# noqa``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..scaffold import BUILDER_VIOLATING, pyproject

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

PYPROJECT = pyproject("blocks-keyword-only", src=None)

VIOLATING = BUILDER_VIOLATING


def _flake8(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # flake8 finds the plugin by the installed entry point, but imports it from this checkout:
    # the install is editable at another one, and a worktree's or a mutation copy's code is
    # what is under test.
    return subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )


@pytest.fixture(scope="module", autouse=True)
def _plugin_installed() -> None:
    version = _flake8(Path.cwd(), "--version")
    if "atom-contracts" not in version.stdout:
        pytest.fail(
            "flake8 does not list the atom-contracts plugin; install the package "
            f"(pip install -e . --no-deps): {version.stdout}{version.stderr}"
        )


@pytest.fixture
def project(make_project) -> Path:
    files = {"pkg/__init__.py": "", "pkg/builder.py": VIOLATING}
    return make_project("blocks-keyword-only", at="project", src=None, files=files).root


def test_reports_contract_in_flake8_format(project: Path) -> None:
    run = _flake8(project, "--select", "AC", "pkg/builder.py")
    assert run.returncode == 1, run.stderr
    # flake8 prints 1-based columns: the finding sits on `blocks` at column 41.
    lines = run.stdout.splitlines()
    assert len(lines) == 1, run.stdout
    assert lines[0].startswith("pkg/builder.py:2:41: AC101 "), lines[0]
    assert "Traceback" not in run.stderr


def test_file_in_a_subdirectory_finds_the_pyproject_above(project: Path) -> None:
    # Run from inside the package: the declaration is one directory up.
    run = _flake8(project / "pkg", "--select", "AC", "builder.py")
    assert run.returncode == 1, run.stderr
    assert run.stdout.startswith("builder.py:2:41: AC101 "), run.stdout


def test_flake8_noqa_suppresses(project: Path) -> None:
    source = VIOLATING.replace(
        "(self, blocks):", "(self, blocks):  # noqa: AC101 -- legacy positional caller"
    )
    (project / "pkg" / "builder.py").write_text(source)
    run = _flake8(project, "--select", "AC", "pkg/builder.py")
    assert (run.returncode, run.stdout) == (0, ""), run.stdout + run.stderr


def test_clean_file_and_undeclared_project_report_nothing(project: Path, tmp_path: Path) -> None:
    (project / "pkg" / "builder.py").write_text(
        VIOLATING.replace("(self, blocks)", "(self, *, blocks)")
    )
    assert _flake8(project, "--select", "AC", "pkg").stdout == ""

    bare = tmp_path / "bare"  # beside the project, under no declaration
    bare.mkdir()
    (bare / "builder.py").write_text(VIOLATING)
    run = _flake8(bare, "--select", "AC", "builder.py")
    assert (run.returncode, run.stdout) == (0, ""), run.stdout + run.stderr


def test_broken_declaration_is_one_finding_not_a_crash(project: Path) -> None:
    (project / "pyproject.toml").write_text(PYPROJECT.replace("keyword-only", "no-such-kind"))
    run = _flake8(project, "--select", "AC", "pkg/builder.py")
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pkg/builder.py:1:1: AC000 "), run.stdout
    assert "no-such-kind" in lines[0]


def test_a_selection_that_turns_every_rule_off_is_one_finding(project: Path) -> None:
    # flake8 printed nothing: its own --select AC was on, the declaration's `select = []` off.
    (project / "pyproject.toml").write_text(
        pyproject("blocks-keyword-only", src=None, settings={"select": []})
    )
    run = _flake8(project, "--select", "AC", "pkg/builder.py")
    assert run.returncode == 1, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("pkg/builder.py:1:1: AC000 "), run.stdout
    assert "turns on no rule" in lines[0]


def test_import_is_cheap() -> None:
    # flake8 imports every plugin on every run, AC selected or not.
    probe = textwrap.dedent(
        """
        import sys
        import checkers.flake8_plugin
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in {"torch", "atom", "libcst", "pathspec", "tomllib"}
                       or m in {"checkers.api", "checkers.linter"})
        print(",".join(heavy))
        """
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_declared_exclude_holds_under_flake8(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            "[tool.atom-contracts]\n", '[tool.atom-contracts]\nexclude = ["pkg/generated/"]\n'
        )
    )
    (project / "pkg" / "generated").mkdir()
    (project / "pkg" / "generated" / "builder.py").write_text(VIOLATING)
    run = _flake8(project, "--select", "AC", "pkg")
    # Only the hand-written builder: the generated one is excluded by the declaration.
    assert [line.split(":")[0] for line in run.stdout.splitlines()] == ["pkg/builder.py"]
