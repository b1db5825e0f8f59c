"""How the hook is reached: the Claude Code settings, the CLI, and what importing it costs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def _post_tool_use_hooks() -> list[tuple[str, dict]]:
    settings = json.loads((REPO_ROOT / ".claude" / "settings.json").read_text())
    return [
        (group["matcher"], hook)
        for group in settings["hooks"]["PostToolUse"]
        for hook in group["hooks"]
    ]


def test_settings_wire_every_editing_tool_with_a_timeout() -> None:
    wired = _post_tool_use_hooks()
    assert len(wired) == 1
    matcher, hook = wired[0]
    # Claude Code matches tool names against the matcher as a regex.
    for tool in ("Edit", "Write", "MultiEdit", "NotebookEdit"):
        assert re.fullmatch(matcher, tool), tool
    for tool in ("Read", "Bash", "Grep"):
        assert not re.fullmatch(matcher, tool), tool
    assert hook["type"] == "command"
    argv = hook["command"].split()
    assert argv[:3] == ["atom-contracts", "hook", "post-tool-use"]
    # The hook's own deadline must fall inside Claude Code's, so it is the
    # hook that reports the timeout (exit 0, one line), not Claude Code.
    own_timeout_s = float(argv[argv.index("--timeout") + 1])
    assert 0 < own_timeout_s < hook["timeout"]


def test_cli_dispatches_to_the_hook(tmp_path: Path) -> None:
    target = tmp_path / "mod.py"
    target.write_text("import os\n")
    payload = {"tool_name": "Write", "tool_input": {"file_path": str(target)}, "cwd": str(tmp_path)}
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from checkers.cli import main; sys.exit(main())",
            "hook",
            "post-tool-use",
            "--no-contracts",
        ],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PATH": sys.exec_prefix + "/bin:/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(tmp_path)},
        timeout=60,
    )
    # ruff's default rules include F401, whose fix is safe: the file is left empty and clean,
    # and the agent is told it was rewritten.
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("mod.py: ruff rewrote the file (fixed F401)"), run.stderr
    assert target.read_text() == ""


def test_cli_lists_only_hooks_not_their_parts() -> None:
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from checkers.cli import main; sys.exit(main())",
            "hook",
        ],
        capture_output=True,
        text=True,
    )
    listed = run.stdout.strip().rsplit("hooks:", 1)[1]
    assert [name.strip() for name in listed.split(",")] == ["post-tool-use"]


def test_import_loads_no_engine_torch_or_libcst() -> None:
    probe = textwrap.dedent(
        """
        import sys
        import hooks, hooks.post_tool_use
        heavy = sorted(m for m in sys.modules
                       if m.split(".")[0] in {"torch", "atom", "libcst", "pathspec"}
                       or m.startswith("checkers"))
        print(",".join(heavy))
        """
    )
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_checking_a_file_loads_no_torch_or_atom(tmp_path: Path) -> None:
    # The hook imports the checker once it has a file; even then, never the engine.
    (tmp_path / "pyproject.toml").write_text(
        '[tool.atom-contracts]\n\n[[tool.atom-contracts.contracts]]\nid = "k"\n'
        'kind = "keyword-only"\nfunctions = ["f"]\nparameters = ["blocks"]\n'
    )
    target = tmp_path / "mod.py"
    target.write_text("def f(blocks):\n    return blocks\n")
    probe = textwrap.dedent(
        f"""
        import io, json, sys
        from hooks import post_tool_use
        sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps(
            {{"tool_name": "Write", "tool_input": {{"file_path": {str(target)!r}}},
              "cwd": {str(tmp_path)!r}}}).encode()))
        status = post_tool_use.main(["--no-ruff"])
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in {{"torch", "atom"}})
        print(status, ",".join(heavy))
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert run.stdout.split() == ["2"], run.stdout + run.stderr
    assert "AC101" in run.stderr
