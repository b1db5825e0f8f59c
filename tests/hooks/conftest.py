"""A throwaway project the hook is pointed at, and a way to run the hook on it.

The project is the suite's scaffold (``tests/scaffold.py``) with a ruff
configuration added; the sources it is given travel on the fixture.

The project declares one contract (``blocks`` keyword-only on
``allocate_kv_cache_tensors``, AC101) and a ruff configuration, so a single
edited file can carry a ruff finding with a safe fix, one with only an unsafe
fix, and a contract finding. The hook is run as its own process, fed a real
payload on stdin, exactly as Claude Code runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..scaffold import ProjectDir

RUFF = """\
[tool.ruff]
line-length = 100

[tool.ruff.lint]
select = ["E", "F", "W", "B"]
external = ["AC"]
"""

# F401 (unused import) has a safe fix; F841 (unused variable) only an unsafe
# one; `blocks` taken positionally is the contract's AC101.
VIOLATING = """\
import os
import sys


class GdnBuilder:
    def allocate_kv_cache_tensors(self, blocks):
        unused = 1
        return sys.argv, blocks
"""

CLEAN = """\
import sys


class GdnBuilder:
    def allocate_kv_cache_tensors(self, *, blocks):
        return sys.argv, blocks
"""

# A neighbour with a safe-fixable finding: the hook must never touch it.
OTHER = "import os\nimport json\n\nprint(json)\n"


# The console script, as .claude/settings.json runs it: never `python -m hooks...`,
# which would import whichever `hooks` package comes first on sys.path.
_CONSOLE = shutil.which("atom-contracts", path=str(Path(sys.executable).parent))
_CLI = "import sys; from checkers.cli import main; sys.exit(main())"
HOOK_COMMAND = [
    *([_CONSOLE] if _CONSOLE else [sys.executable, "-c", _CLI]),
    "hook",
    "post-tool-use",
]


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str


class Project(ProjectDir):
    """The scaffold project, and the hook run in it; the sources the tests
    write travel on it as attributes."""

    VIOLATING = VIOLATING
    CLEAN = CLEAN
    OTHER = OTHER

    def env(self, **overrides: str) -> dict[str, str]:
        env = dict(os.environ)
        env["CLAUDE_PROJECT_DIR"] = str(self.root)
        env.pop("ATOM_CONTRACTS_RUFF", None)
        env.update(overrides)
        return env

    def run_hook(
        self,
        stdin: bytes | str | dict,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> HookRun:
        if isinstance(stdin, dict):
            stdin = json.dumps(stdin)
        if isinstance(stdin, str):
            stdin = stdin.encode()
        done = subprocess.run(
            [*HOOK_COMMAND, *args],
            input=stdin,
            capture_output=True,
            env=env if env is not None else self.env(),
            cwd=cwd or self.root,
            timeout=120,
        )
        return HookRun(done.returncode, done.stdout.decode(), done.stderr.decode())

    def payload(self, tool: str, path: Path, **tool_input) -> dict:
        key = "notebook_path" if tool == "NotebookEdit" else "file_path"
        return {
            "session_id": "test-session",
            "transcript_path": str(self.root / "transcript.jsonl"),
            "cwd": str(self.root),
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {key: str(path), **tool_input},
            "tool_response": {"filePath": str(path), "success": True},
        }


@pytest.fixture
def project(make_project) -> Project:
    files = {"pkg/__init__.py": "", "pkg/other.py": OTHER, "README.md": "# consumer\n"}
    laid = make_project(
        "blocks-keyword-only", at="consumer", name="consumer", before=RUFF, files=files
    )
    return Project(laid.root)
