"""A scripted edit session: after every keystroke, the server's findings are a fresh check's.

The server does not check a keystroke's buffer from scratch: its tree is
spliced from the last one (``checkers.incremental.splice``), or parsed from
the statement before the edit on (``tail``), which is also how a buffer that
does not parse gets its one AC001. Whatever the path, what the editor is
shown must be what a fresh ``check_text`` of the same text finds -- never a
finding left over from an earlier buffer, never one missing, and exactly
one AC001, at the place a full parse names, while the buffer does not parse.

The session types into a real module of ``atom/`` opened as a new file
there (so this repository's own contracts govern it, ``required-keyword``
among them): a statement into a function body character by character and
erased again, as an editor that closes brackets and as one that does not;
a call opened at the top level and left open; a ``\"\"\"`` opened and
closed; Enter inside a line and the backspace that joins it back; a
keystroke above the first statement. ``test_the_server_process_publishes_
what_a_fresh_check_finds`` replays part of it through the real server
process over LSP, so the document store's incremental edits are in the
loop too. Timing is not asserted here: ``bench/server_latency.py``
measures it.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
TYPED = "kv = torch.repeat_interleave(positions, counts, dim=0)"  # AC701 once complete
AS = "atom/models/_typed_in_the_editor.py"  # never written: the buffer is checked


def buffer() -> str:
    """A real module of the engine that imports torch and has functions to type into."""
    return (REPO / "atom" / "backends" / "mha.py").read_text(encoding="utf-8")


class Session:
    """Keystrokes over a list of lines: each one an edit at (line, column), as an editor sends."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        # Each keystroke's LSP range (0-based start line and column, end line and
        # column) and the text put there; the buffer after it.
        self.edits: list[tuple[int, int, int, int, str]] = []
        self.texts: list[str] = []

    def text(self) -> str:
        return "".join(self.lines)

    def replace(self, line: int, column: int, end_line: int, end_column: int, new: str) -> None:
        before = self.lines[line][:column]
        after = self.lines[end_line][end_column:] if end_line < len(self.lines) else ""
        self.lines[line : end_line + 1] = (before + new + after).splitlines(keepends=True)
        self.edits.append((line, column, end_line, end_column, new))
        self.texts.append(self.text())

    def edit(self, line: int, start: int, end: int, new: str) -> None:
        """Replace columns ``start..end`` of ``line`` with ``new`` (which may hold newlines)."""
        self.replace(line, start, line, end, new)

    def type(self, line: int, column: int, statement: str, *, autopair: bool, erase=True) -> None:
        """``statement`` typed at (line, column), then (``erase``) erased by backspaces."""
        cursor = column
        for char in statement:
            here = self.lines[line]
            if autopair and char in ")]" and here[cursor : cursor + 1] == char:
                cursor += 1  # typed over the bracket the editor put there: nothing is sent
                continue
            new = {"(": "()", "[": "[]"}.get(char, char) if autopair else char
            self.edit(line, cursor, cursor, new)
            cursor += 1
        while erase and cursor > column:
            here = self.lines[line]
            pair = autopair and here[cursor - 1 : cursor + 1] in ("()", "[]")
            self.edit(line, cursor - 1, cursor + 1 if pair else cursor, "")
            cursor -= 1


def function_body_line(text: str) -> tuple[int, str]:
    """(0-based line, indentation) of the first statement of the file's longest function."""
    functions = [
        n
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    longest = max(functions, key=lambda f: f.end_lineno - f.lineno)
    first = longest.body[0]
    return first.lineno - 1, " " * first.col_offset


def scripted(text: str) -> Session:
    session = Session(text)
    at, indent = function_body_line(text)
    session.edit(at, 0, 0, indent + "\n")  # a line to type on (Enter: the line count moves)
    session.type(at, len(indent), TYPED, autopair=False)
    session.type(at, len(indent), TYPED, autopair=True)
    session.type(at, len(indent), 'doc = """held open', autopair=False)
    # Enter inside the line below, then the backspace that joins the two again.
    below = at + 1
    middle = len(session.lines[below].rstrip("\n")) // 2
    session.edit(below, middle, middle, "\n")
    session.replace(below, len(session.lines[below].rstrip("\n")), below + 1, 0, "")
    session.replace(at, 0, at + 1, 0, "")  # the typing line deleted
    # A call opened at the top level, after the last statement, and left open.
    last = len(session.lines) - 1
    session.edit(last, len(session.lines[last]) - 1, len(session.lines[last]) - 1, "\n")
    session.type(last + 1, 0, "value = sizes(1, ", autopair=False, erase=False)
    # Keystrokes above the first statement: nothing to start a partial parse from.
    session.edit(0, 0, 0, "(")
    session.edit(0, 0, 1, "")
    session.edit(0, 0, 0, "#")
    return session


def test_the_scripted_session_types_through_every_path():
    # The session below is only a test of the server if it reaches every path:
    # a finding of a contract, a buffer that does not parse, and the way back.
    from checkers.api import check_text
    from hooks.lsp.folders import Declaration

    config = Declaration(REPO / "pyproject.toml").config
    session = scripted(buffer())
    seen = set()
    for text in session.texts[::5]:
        seen |= {f.code for f in check_text(REPO / AS, text, config)}
    assert {"AC001", "AC701"} <= seen


def test_after_every_keystroke_the_findings_are_a_fresh_checks(monkeypatch):
    from checkers.analysis.memo import StatementMemo
    from checkers.api import check_text
    from hooks.lsp.folders import Declaration

    declaration = Declaration(REPO / "pyproject.toml")
    path = str(REPO / AS)
    session = scripted(buffer())
    declaration.check(path, buffer(), buffer=True)
    # The whole session typed first, then checked fresh: what the analyses keep from
    # one keystroke's tree for the next (per top-level statement) is used as in the
    # server, not evicted by a fresh tree in between.
    typed = [declaration.check(path, text, buffer=True) for text in session.texts]
    assert any(f.code == "AC701" for findings in typed for f in findings)
    # The fresh checks keep nothing from one tree for the next.
    monkeypatch.setattr(
        StatementMemo, "each", lambda self, tree, compute: [*map(compute, tree.body)]
    )
    unparsable = 0
    for step, text in enumerate(session.texts):
        fresh = check_text(path, text, declaration.config)  # its own linter, parsed whole
        assert typed[step] == fresh, (step, session.edits[step])
        syntax = [f for f in fresh if f.code == "AC001"]
        try:
            ast.parse(text)
        except SyntaxError as exc:
            unparsable += 1
            (one,) = syntax
            assert (one.line, one.column) == (exc.lineno, max(exc.offset or 1, 1))
        else:
            assert syntax == []
    assert unparsable > 20


@pytest.mark.asyncio
async def test_the_server_process_publishes_what_a_fresh_check_finds():
    pytest.importorskip("pygls")
    pytest.importorskip("pytest_lsp")
    from lsprotocol import types
    from pygls.workspace import PositionCodec

    from checkers.api import check_text
    from hooks.lsp import convert
    from hooks.lsp.folders import Declaration

    from .test_server import PUBLISH, open_doc, session

    text = buffer()
    assert text.isascii()  # the edits' columns are UTF-16 units and characters alike
    config = Declaration(REPO / "pyproject.toml").config
    codec = PositionCodec(types.PositionEncodingKind.Utf16)
    path = REPO / AS
    script = scripted(text)
    # Every keystroke is checked (no debounce) and waited for before the next is sent.
    async with session([REPO], debounce_ms=0) as client:
        uri = open_doc(client, path, text)
        await asyncio.wait_for(client.wait_for_notification(PUBLISH), 60)
        for version, ((line, column, end_line, end_column, new), typed) in enumerate(
            zip(script.edits, script.texts, strict=True), start=2
        ):
            published = client.wait_for_notification(PUBLISH)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(
                                start=types.Position(line=line, character=column),
                                end=types.Position(line=end_line, character=end_column),
                            ),
                            text=new,
                        )
                    ],
                )
            )
            await asyncio.wait_for(published, 60)
            fresh = convert.diagnostics(check_text(path, typed, config), typed, codec)
            shown = client.diagnostics[uri]
            assert [(d.code, d.range, d.message) for d in shown] == [
                (d.code, d.range, d.message) for d in fresh
            ], (version, new)
