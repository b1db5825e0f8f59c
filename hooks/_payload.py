"""What a coding agent's post-edit hook payload says was edited, and whether to look.

Claude Code sends a PostToolUse hook one JSON object on stdin: ``tool_name``,
``tool_input`` (``file_path`` for Write, Edit and MultiEdit, ``notebook_path``
for NotebookEdit), ``tool_response`` and ``cwd``. Gemini CLI's AfterTool
payload has the same shape under other tool names, and Cursor's afterFileEdit
puts ``file_path`` at the top level; reading those too costs three lookups.

The hook runs ``ruff check --fix``, which rewrites the file it is given. So a
payload is acted on only when it names a tool that edits files (a ``Read``
wired to the hook by a ``*`` matcher must not get its file rewritten), a file
that still exists, is a regular file, has a Python suffix, and lies inside the
project once symlinks are resolved (a link inside the project pointing out of
it is outside). Everything else is a ``Skip`` carrying the reason, which the
hook prints as its one line.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# Tools whose payload names a file they wrote. An allowlist, not a denylist of
# readers: a tool added later that only reads must not have its file fixed,
# while a new editing tool that is missed only goes unlinted.
EDITING_TOOLS = frozenset(
    {
        # Claude Code
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
        # Gemini CLI
        "write_file",
        "replace",
        # Cursor, Windsurf and others that name it so
        "edit_file",
    }
)

# Events that fire once the file is written. Fixing a file before the edit
# (a PreToolUse wiring) would change the text the edit's `old_string` must
# match, so any other named event is refused.
AFTER_EDIT_EVENTS = frozenset({"PostToolUse", "AfterTool", "afterFileEdit"})

PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIX = ".ipynb"


class Skip(Exception):
    """The payload is not one the hook acts on; ``str()`` is the reason.

    ``quiet`` marks the ordinary cases (a Markdown file, a tool that does not
    edit) that deserve no line at all, as against a refusal worth explaining.
    """

    def __init__(self, reason: str, *, quiet: bool = False) -> None:
        super().__init__(reason)
        self.quiet = quiet


@dataclass(frozen=True)
class EditedFile:
    path: Path  # absolute, symlinks resolved
    project: Path  # absolute, symlinks resolved
    tool: str

    @property
    def relpath(self) -> str:
        return self.path.relative_to(self.project).as_posix()

    @property
    def is_notebook(self) -> bool:
        return self.path.suffix == NOTEBOOK_SUFFIX


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse(raw: bytes, environ: Mapping[str, str]) -> EditedFile:
    """The edited file a payload names, or raise ``Skip`` saying why not."""
    if not raw.strip():
        raise Skip("empty stdin, expected a PostToolUse JSON payload")
    try:
        payload = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Skip(f"stdin is not JSON ({exc.__class__.__name__}: {exc})") from None
    except (RecursionError, MemoryError):
        # json's decoder recurses once per level of nesting; no agent sends a
        # payload deeper than Python's recursion limit, so this is a bad one.
        raise Skip(
            f"payload is nested too deeply to read (deeper than about {sys.getrecursionlimit()} levels)"
        ) from None
    if not isinstance(payload, dict):
        raise Skip(f"payload is a JSON {type(payload).__name__}, expected an object")

    event = _text(payload.get("hook_event_name"))
    if event is not None and event not in AFTER_EDIT_EVENTS:
        raise Skip(f"event {event!r} is not after an edit; wire this hook to PostToolUse")
    tool = _text(payload.get("tool_name")) or ""
    if tool and tool not in EDITING_TOOLS:
        raise Skip(f"tool {tool!r} does not edit files", quiet=True)

    tool_input = payload.get("tool_input")
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    tool_response = payload.get("tool_response")
    tool_response = tool_response if isinstance(tool_response, dict) else {}
    named = (
        _text(tool_input.get("file_path"))
        or _text(tool_input.get("notebook_path"))
        or _text(tool_input.get("path"))
        or _text(tool_response.get("filePath"))
        or _text(payload.get("file_path"))
    )
    if named is None:
        raise Skip(f"payload of tool {tool or '?'!r} names no file")

    cwd = _text(payload.get("cwd"))
    project_named = _text(environ.get("CLAUDE_PROJECT_DIR")) or cwd or os.getcwd()
    project = Path(project_named).resolve()
    candidate = Path(named)
    if not candidate.is_absolute():
        candidate = Path(cwd or project) / candidate

    if not candidate.name.endswith((*PYTHON_SUFFIXES, NOTEBOOK_SUFFIX)):
        raise Skip(f"{named} is not a Python file", quiet=True)
    try:
        if not candidate.exists():
            raise Skip(f"{named} no longer exists; nothing to check")
        path = candidate.resolve()
        if not path.is_file():
            raise Skip(f"{named} is not a regular file")
    except (OSError, ValueError) as exc:
        # A name too long for the file system, a permission denied on the way:
        # Path.exists lets those out, and they are the payload's, not a bug.
        reason = getattr(exc, "strerror", None) or str(exc)
        raise Skip(f"{named} cannot be looked at ({reason})") from None
    if not path.is_relative_to(project):
        raise Skip(f"{named} is outside the project {project}; not touching it")
    return EditedFile(path=path, project=project, tool=tool)
