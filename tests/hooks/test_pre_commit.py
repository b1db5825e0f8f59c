"""pre-commit: the manifest other repositories use, and this repository's own config.

The integration test runs real ``pre-commit try-repo`` against a copy of this
working tree from a throwaway consumer repository that declares a contract
and breaks it: the hook must fail there, naming the finding, and pass once
the violation is fixed. try-repo pip-installs the package into a fresh
environment, so this also proves the distribution installs with its declared
dependencies alone.

The copy is of the working tree (tracked and untracked files git does not
ignore), committed in a temporary repository: try-repo on the live checkout
would test HEAD plus modified tracked files, silently leaving out a new
module that is not committed yet.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..scaffold import BUILDER_VIOLATING, pre_commit, pyproject
from ..scaffold import git as _git

REPO_ROOT = Path(__file__).resolve().parents[2]

CONSUMER_PYPROJECT = pyproject("blocks-keyword-only", src=None, name="consumer")

VIOLATING = BUILDER_VIOLATING

CLI = "import sys; from checkers.cli import main; sys.exit(main())"


def _manifest() -> list[dict]:
    return yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text())


def test_manifest_and_config_validate() -> None:
    for command in (
        ["validate-manifest", ".pre-commit-hooks.yaml"],
        ["validate-config", ".pre-commit-config.yaml"],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "pre_commit", *command],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stdout + run.stderr


def test_manifest_declares_check_and_fix_hooks() -> None:
    hooks = {h["id"]: h for h in _manifest()}
    assert set(hooks) == {"atom-contracts", "atom-contracts-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert hook["types"] == ["python"]
        # One process for all the files: the cross-file re-check must see every file the
        # run was given, or it reports again what another process reported (below).
        assert hook["require_serial"] is True
        assert hook["pass_filenames"] is True
    assert hooks["atom-contracts"]["entry"] == "atom-contracts check"
    assert hooks["atom-contracts-fix"]["entry"] == "atom-contracts check --fix"


def test_own_config_runs_local_tools_only() -> None:
    config = yaml.safe_load((REPO_ROOT / ".pre-commit-config.yaml").read_text())
    assert [r["repo"] for r in config["repos"]] == ["local"]
    hooks = {h["id"]: h for h in config["repos"][0]["hooks"]}
    assert {"ruff", "ruff-format", "atom-contracts"} <= set(hooks)
    for hook in hooks.values():
        executable = hook["entry"].split()[0]
        assert hook["language"] in ("system", "python")
        assert shutil.which(executable), f"{hook['id']}: {executable} is not installed"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working tree, committed in a repository of its own."""
    dest = tmp_path_factory.mktemp("atom-contracts-snapshot")
    listed = _git(REPO_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for rel in filter(None, listed.split("\0")):
        src = REPO_ROOT / rel
        if not src.is_file():  # deleted in the working tree, or a submodule
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    _git(dest, "init", "-q")
    _git(dest, "add", "-A")
    _git(dest, "commit", "-q", "-m", "snapshot of the working tree")
    return dest


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One per module: the second try-repo reuses the environment the first built.
    return tmp_path_factory.mktemp("pre-commit-home")


def _try_repo(consumer: Path, snapshot: Path, home: Path, hook: str) -> subprocess.CompletedProcess:
    return pre_commit(consumer, home, "try-repo", str(snapshot), hook, "--all-files")


@pytest.mark.slow
def test_try_repo_fails_on_violation_and_passes_once_fixed(
    tmp_path: Path, snapshot: Path, pre_commit_home: Path
) -> None:
    consumer = tmp_path / "consumer"
    (consumer / "pkg").mkdir(parents=True)
    (consumer / "pyproject.toml").write_text(CONSUMER_PYPROJECT)
    (consumer / "pkg" / "__init__.py").write_text("")
    builder = consumer / "pkg" / "builder.py"
    builder.write_text(VIOLATING)
    _git(consumer, "init", "-q")
    _git(consumer, "add", "-A")

    failing = _try_repo(consumer, snapshot, pre_commit_home, "atom-contracts")
    output = failing.stdout + failing.stderr
    assert failing.returncode == 1, output
    assert "AC101" in output and "pkg/builder.py" in output, output
    assert "Failed" in output

    builder.write_text(VIOLATING.replace("(self, blocks)", "(self, *, blocks)"))
    _git(consumer, "add", "-A")
    passing = _try_repo(consumer, snapshot, pre_commit_home, "atom-contracts")
    output = passing.stdout + passing.stderr
    assert passing.returncode == 0, output
    assert "Passed" in output and "AC101" not in output


def test_every_manifest_entry_is_a_command_the_cli_accepts(tmp_path: Path) -> None:
    # pre-commit appends the file names to `entry`; run each entry that way.
    (tmp_path / "pyproject.toml").write_text(CONSUMER_PYPROJECT)
    (tmp_path / "builder.py").write_text(VIOLATING)
    for hook in _manifest():
        argv = hook["entry"].split()
        assert argv[0] == "atom-contracts"
        run = subprocess.run(
            [sys.executable, "-c", CLI, *argv[1:], "builder.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        # 1: findings (AC101 has no fix, so --fix leaves it); 2 would be a usage error.
        assert run.returncode == 1, hook["id"] + run.stdout + run.stderr
        assert "AC101" in run.stdout
        assert (tmp_path / "builder.py").read_text() == VIOLATING


def test_pre_commit_prints_each_finding_once(tmp_path: Path) -> None:
    # The manifest's hook as pre-commit runs it, from a local repo so nothing is installed:
    # the same `types`, `pass_filenames` and `require_serial`. A test that imports an edited
    # module reaching triton (AC601) is its own finding and the edit's: checked in one
    # process, the re-check leaves the files it was given to their own check. With
    # `require_serial: false`, pre-commit split the files over one process per core, and
    # each process reported the finding, the second "(reached through ..., edited)".
    [hook] = [h for h in _manifest() if h["id"] == "atom-contracts"]
    consumer = tmp_path / "consumer"
    files = {
        "pyproject.toml": pyproject("skip-triton", "leaf", name="consumer"),
        "pkg/__init__.py": "",
        "pkg/ops.py": "import triton\n",
        "pkg/leaf/__init__.py": "",
        "pkg/leaf/far.py": "from pkg.ops import triton\n",
        "tests/__init__.py": "",
        "tests/test_ops.py": "from pkg.ops import triton\n",
    }
    for rel, text in files.items():
        (consumer / rel).parent.mkdir(parents=True, exist_ok=True)
        (consumer / rel).write_text(text)
    local = {
        "id": "atom-contracts",
        "name": "atom-contracts",
        "entry": f"{sys.executable} -c '{CLI}' {hook['entry'].split(' ', 1)[1]}",
        "language": "system",
        **{key: hook[key] for key in ("types", "require_serial", "pass_filenames")},
    }
    (consumer / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]})
    )
    _git(consumer, "init", "-q")
    _git(consumer, "add", "-A")
    run = pre_commit(consumer, tmp_path / "home", "run", "--all-files")
    findings = [line for line in run.stdout.splitlines() if ": AC" in line]
    assert run.returncode == 1, run.stdout + run.stderr
    assert sorted(line.split(" ", 2)[1] + " " + line.split(":")[0] for line in findings) == [
        "AC201 pkg/leaf/far.py",
        "AC601 tests/test_ops.py",
    ], run.stdout
