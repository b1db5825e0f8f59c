"""Which payload shapes name an edited file, read in-process (no ruff, no linter)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_a_file_name_too_long_to_look_at_is_refused_by_name(tree: Path) -> None:
    # os.stat raises ENAMETOOLONG, which Path.exists lets out: it was the
    # hook's last-resort "internal error".
    with pytest.raises(Skip, match="cannot be looked at") as caught:
        _parse(
            {"tool_name": "Write", "tool_input": {"file_path": "x" * 300 + ".py"}},
            {"CLAUDE_PROJECT_DIR": str(tree)},
        )
    assert not caught.value.quiet


_KEYS = st.sampled_from(
    [
        "tool_name",
        "tool_input",
        "tool_response",
        "file_path",
        "notebook_path",
        "path",
        "filePath",
        "cwd",
        "hook_event_name",
    ]
)
_TEXTS = st.one_of(
    st.sampled_from(["Write", "Edit", "PostToolUse", "pkg/mod.py", "x" * 300 + ".py", ".", "/"]),
    st.text(max_size=20),
)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXTS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_KEYS | st.text(max_size=5), inner, max_size=5)
    ),
    max_leaves=20,
)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_JSON)
def test_any_json_document_is_a_file_or_a_skip(tree: Path, document) -> None:
    try:
        edited = parse(json.dumps(document).encode(), {"CLAUDE_PROJECT_DIR": str(tree)})
    except Skip as skip:
        assert str(skip)
    else:
        assert edited.path.is_file() and edited.path.is_relative_to(tree)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200))
def test_any_bytes_are_a_file_or_a_skip(tree: Path, raw: bytes) -> None:
    with contextlib.suppress(Skip):
        parse(raw, {"CLAUDE_PROJECT_DIR": str(tree)})
