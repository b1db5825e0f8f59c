"""Adoption as docs/adoption.md documents it, in a repository that is not this one.

A clean clone of this repository's HEAD is the pre-commit repo of a scratch
consumer that has its own top-level ``hooks/`` and ``contracts/`` packages --
the generic names this distribution also installs. The consumer pins the
clone by commit (``pre-commit autoupdate --freeze``, as documented), runs
pre-commit over a dozen files (so pre-commit splits them into batches), and
runs the agent hook through the console script pre-commit installed. Each
must check the consumer's code with *our* checker: the consumer's
``hooks/post_tool_use.py`` announces itself if it is ever what runs.

Slow (pre-commit builds an environment with pip); CI runs it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from ..scaffold import contract, pre_commit, pyproject, write_tree
from ..scaffold import git as _git

REPO_ROOT = Path(__file__).resolve().parents[2]

PYPROJECT = pyproject(contract("blocks-keyword-only", paths=["engine/**"]), name="consumer")

VIOLATING = "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        return blocks\n"
IMPOSTOR = "print('THE CONSUMER HOOK RAN')\n"


@pytest.mark.slow
def test_a_consumer_with_its_own_hooks_and_contracts_packages(tmp_path: Path) -> None:
    head = _git(REPO_ROOT, "rev-parse", "HEAD")
    clone = tmp_path / "atom-contracts"
    _git(tmp_path, "clone", "-q", "--no-local", str(REPO_ROOT), str(clone))
    _git(clone, "checkout", "-q", head)

    consumer = tmp_path / "consumer"
    files = {
        "pyproject.toml": PYPROJECT,
        "hooks/__init__.py": "",
        "hooks/post_tool_use.py": IMPOSTOR,
        "contracts/__init__.py": "RULES = []\n",
        "engine/__init__.py": "",
        "engine/builder.py": VIOLATING,
        **{f"engine/part_{i}.py": f"VALUE_{i} = {i}\n" for i in range(12)},
        ".pre-commit-config.yaml": yaml.safe_dump(
            {
                "repos": [
                    {
                        "repo": str(clone),
                        "rev": "0" * 40,  # what autoupdate --freeze replaces, as documented
                        "hooks": [{"id": "atom-contracts"}],
                    }
                ]
            }
        ),
    }
    write_tree(consumer, files)
    _git(consumer, "init", "-q")
    _git(consumer, "add", "-A")
    home = tmp_path / "pre-commit-home"

    update = pre_commit(consumer, home, "autoupdate", "--freeze")
    assert update.returncode == 0, update.stdout + update.stderr
    pinned = yaml.safe_load((consumer / ".pre-commit-config.yaml").read_text())
    assert pinned["repos"][0]["rev"] == _git(clone, "rev-parse", "HEAD")
    _git(consumer, "add", "-A")

    run = pre_commit(consumer, home, "run", "--all-files")
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    assert "Failed" in output and "engine/builder.py:2:" in output and "AC101" in output
    # Batches print one after another under one Failed: none may say it passed.
    assert "All contracts hold" not in output and "Found" not in output, output

    # The agent hook, through the console script pre-commit installed (no ruff there:
    # the hook says so and still reports the contract).
    (console,) = home.glob("repo*/py_env-*/bin/atom-contracts")
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(consumer / "engine" / "builder.py")},
        "cwd": str(consumer),
    }
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(consumer)}
    hook = subprocess.run(
        [str(console), "hook", "post-tool-use"],
        input=json.dumps(payload),
        cwd=consumer,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert hook.returncode == 2, hook.stdout + hook.stderr
    assert "engine/builder.py:2:" in hook.stderr and "AC101" in hook.stderr
    assert "THE CONSUMER HOOK RAN" not in hook.stdout + hook.stderr

    # What the docs warn against: `python -m hooks.post_tool_use` from the consumer's
    # root runs the consumer's own module.
    python = console.parent / "python"
    impostor = subprocess.run(
        [str(python), "-m", "hooks.post_tool_use"],
        input=json.dumps(payload),
        cwd=consumer,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "THE CONSUMER HOOK RAN" in impostor.stdout
