"""A burst of changes already sent is one check, on its latest text.

The server reads the editor's messages one loop turn at a time; a check due
at once used to run before the next change, already sent, was read, so a
burst that came during a check was checked change by change. The server now
reads stdin ahead (``hooks.lsp.reading.Input``) and a due check waits while
sent messages are unread.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from hooks.lsp import diagnostics as lsp_diagnostics
from hooks.lsp import server as lsp_server
from hooks.lsp.reading import Input

REPO = Path(__file__).resolve().parents[3]
AS = "atom/models/_typed_in_the_editor.py"  # never written: the buffer is checked


def frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        time.sleep(0.005)


def test_input_serves_lines_and_bodies_and_says_what_is_unread():
    read_end, write_end = os.pipe()
    with os.fdopen(read_end, "rb", buffering=0) as stream:
        source = Input(stream)
        assert not source.pending()
        os.write(write_end, frame({"method": "a"}) + frame({"method": "b"}))
        until(source.pending)
        header = source.readline()
        assert header.startswith(b"Content-Length: ")
        assert source.readline() == b"\r\n"
        body = source.read(int(header.split(b":")[1]))
        assert json.loads(body)["method"] == "a"
        assert source.pending()  # the second message is unread
        source.readline(), source.readline()
        os.close(write_end)
        second = source.read(1_000)  # asked for more than there is: what came, once it ends
        assert json.loads(second)["method"] == "b"
        assert not source.pending()
        assert source.readline() == b""  # the editor closed the pipe


class Unread:
    """``Input.pending`` for a test: true for the first ``times`` questions."""

    def __init__(self, times: int) -> None:
        self.times = times
        self.asked = 0

    def pending(self) -> bool:
        self.asked += 1
        return self.asked <= self.times


def scheduled_pushes(monkeypatch, unread: Unread) -> tuple[list[str], float]:
    server = lsp_server.ContractsServer()
    server.input = unread
    server.debounce_s = 0.0
    pushed: list[str] = []
    monkeypatch.setattr(server, "push", pushed.append)

    async def change_then_wait() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        server.schedule("file:///a.py")
        while not pushed and loop.time() - started < 5:
            await asyncio.sleep(0.001)
        return loop.time() - started

    return pushed, asyncio.run(change_then_wait())


def test_a_due_check_waits_while_sent_messages_are_unread(monkeypatch):
    unread = Unread(times=5)
    pushed, _ = scheduled_pushes(monkeypatch, unread)
    assert pushed == ["file:///a.py"]
    assert unread.asked == 6  # asked again after each hold, checked once nothing was unread


def test_a_stream_of_other_messages_holds_a_check_back_only_so_long(monkeypatch):
    monkeypatch.setattr(lsp_diagnostics, "MAX_HOLD_S", 0.02)
    pushed, waited = scheduled_pushes(monkeypatch, Unread(times=10**9))
    assert pushed == ["file:///a.py"]
    assert waited < 2  # held MAX_HOLD_S, then checked: never starved


def test_changes_sent_at_once_are_one_check_on_the_last(tmp_path):
    """Eight keystrokes in one write, at the default settings: one push, for the last."""
    text = (REPO / "atom" / "backends" / "mha.py").read_text(encoding="utf-8")
    uri = (REPO / AS).as_uri()
    server = subprocess.Popen(
        [sys.executable, "-m", "checkers", "server"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def receive() -> dict:
        length = None
        while True:
            line = server.stdout.readline()
            assert line, "the server exited"
            if line == b"\r\n":
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(server.stdout.read(length))

    def pushes_until(version: int) -> list[int]:
        seen = []
        while not seen or seen[-1] != version:
            message = receive()
            if message.get("id") is not None and "method" in message:  # asked of the client
                server.stdin.write(frame({"id": message["id"], "result": None}))
                server.stdin.flush()
            elif (
                message.get("method") == "textDocument/publishDiagnostics"
                and message["params"]["uri"] == uri
            ):
                seen.append(message["params"]["version"])
        return seen

    try:
        server.stdin.write(
            frame(
                {
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": None,
                        "rootUri": REPO.as_uri(),
                        "capabilities": {
                            "textDocument": {"publishDiagnostics": {"versionSupport": True}}
                        },
                    },
                }
            )
        )
        server.stdin.flush()
        while receive().get("id") != 1:
            pass
        opened = {"uri": uri, "languageId": "python", "version": 1, "text": text}
        server.stdin.write(
            frame({"method": "initialized", "params": {}})
            + frame({"method": "textDocument/didOpen", "params": {"textDocument": opened}})
        )
        server.stdin.flush()
        assert pushes_until(1) == [1]
        burst = b"".join(
            frame(
                {
                    "method": "textDocument/didChange",
                    "params": {
                        "textDocument": {"uri": uri, "version": version},
                        "contentChanges": [
                            {
                                "range": {
                                    "start": {"line": 0, "character": 0},
                                    "end": {"line": 0, "character": 0},
                                },
                                "text": "#",
                            }
                        ],
                    },
                }
            )
            for version in range(2, 10)
        )
        server.stdin.write(burst)
        server.stdin.flush()
        assert pushes_until(9) == [9]
    finally:
        server.stdin.close()
        server.kill()
        server.wait()


def test_the_documented_debounce_is_the_servers():
    """docs/editors.md states the default and why (the debounce table); the server uses it."""
    import re

    docs = (REPO / "docs" / "editors.md").read_text(encoding="utf-8")
    [row] = re.findall(r"\| `debounceMs` \| 0-10000 \(default (\d+)\) \|", docs)
    [heading] = re.findall(r"^### The debounce: (\d+) ms", docs, flags=re.MULTILINE)
    [push] = re.findall(r"`debounceMs` of quiet has passed \(default (\d+) ms\)", docs)
    assert int(row) == int(heading) == int(push) == round(lsp_server.DEBOUNCE_S * 1000)
    assert lsp_server.ContractsServer().debounce_s == lsp_server.DEBOUNCE_S
