"""Which payload shapes name an edited file, read in-process (no ruff, no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hooks._payload import Skip, parse


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("x = 1\n")
    return tmp_path.resolve()


def _parse(payload: dict, env: dict | None = None):
    return parse(json.dumps(payload).encode(), env or {})


@pytest.mark.parametrize(
    "payload",
    [
        # Claude Code Write / Edit / MultiEdit
        {"tool_name": "Write", "tool_input": {"file_path": "{f}"}},
        # Claude Code NotebookEdit names notebook_path; only the tool response has filePath
        {"tool_name": "Edit", "tool_input": {}, "tool_response": {"filePath": "{f}"}},
        # Gemini CLI AfterTool
        {
            "hook_event_name": "AfterTool",
            "tool_name": "replace",
            "tool_input": {"file_path": "{f}"},
        },
        # Cursor afterFileEdit: no tool name, the path at the top level
        {"hook_event_name": "afterFileEdit", "file_path": "{f}", "edits": []},
    ],
)
def test_shapes_that_name_the_file(tree: Path, payload: dict) -> None:
    target = tree / "pkg" / "mod.py"
    raw = json.loads(json.dumps(payload).replace("{f}", str(target)))
    raw["cwd"] = str(tree)
    edited = _parse(raw)
    assert edited.path == target
    assert edited.project == tree
    assert edited.relpath == "pkg/mod.py"


def test_claude_project_dir_wins_over_cwd(tree: Path) -> None:
    target = tree / "pkg" / "mod.py"
    edited = _parse(
        {"tool_name": "Write", "tool_input": {"file_path": str(target)}, "cwd": str(tree / "pkg")},
        {"CLAUDE_PROJECT_DIR": str(tree)},
    )
    assert edited.project == tree and edited.relpath == "pkg/mod.py"


def test_file_above_cwd_is_outside_when_cwd_is_the_project(tree: Path) -> None:
    target = tree / "pkg" / "mod.py"
    with pytest.raises(Skip, match="outside the project") as caught:
        _parse(
            {
                "tool_name": "Write",
                "tool_input": {"file_path": str(target)},
                "cwd": str(tree / "sub"),
            }
        )
    assert not caught.value.quiet


@pytest.mark.parametrize("tool", ["Read", "Bash", "Glob", "NotebookRead", "WebFetch"])
def test_tools_that_do_not_edit_are_skipped_quietly(tree: Path, tool: str) -> None:
    with pytest.raises(Skip) as caught:
        _parse({"tool_name": tool, "tool_input": {"file_path": str(tree / "pkg" / "mod.py")}})
    assert caught.value.quiet


def test_directory_named_like_a_module_is_refused(tree: Path) -> None:
    (tree / "odd.py").mkdir()
    with pytest.raises(Skip, match="not a regular file"):
        _parse(
            {
                "tool_name": "Write",
                "tool_input": {"file_path": str(tree / "odd.py")},
                "cwd": str(tree),
            }
        )


def test_pre_tool_use_wiring_is_refused(tree: Path) -> None:
    # Fixing before the edit would change the text the edit must match.
    target = tree / "pkg" / "mod.py"
    with pytest.raises(Skip, match="PreToolUse") as caught:
        _parse(
            {
                "hook_event_name": "PreToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(target)},
            }
        )
    assert not caught.value.quiet


DEEP = 100_000  # the depth the reliability sweep sent: far past Python's recursion limit


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * DEEP + b"]" * DEEP,
        b'{"a":' * DEEP + b"1" + b"}" * DEEP,
        # a payload that names its file, with one deep value beside it
        b'{"tool_name": "Write", "tool_input": {"file_path": "pkg/mod.py", "content": '
        + b"[" * DEEP
        + b"]" * DEEP
        + b"}}",
    ],
    ids=["list", "object", "deep-value-in-a-good-payload"],
)
def test_a_payload_nested_too_deeply_is_refused_by_name(tree: Path, raw: bytes) -> None:
    with pytest.raises(Skip, match="nested too deeply") as caught:
        parse(raw, {"CLAUDE_PROJECT_DIR": str(tree)})
    assert not caught.value.quiet
