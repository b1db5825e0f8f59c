"""The server's full collections wait for a pause in typing.

One walks every object the server holds and landed inside a keystroke's
check when an allocation tipped the collector's count; the server starts it
itself once the editor has been quiet, and never while a check is due.
"""

from __future__ import annotations

import asyncio
import gc

import pytest

pytest.importorskip("pygls")

from hooks.lsp import diagnostics as lsp_diagnostics
from hooks.lsp import server as lsp_server


@pytest.fixture
def full_collections():
    seen: list[int] = []

    def note(phase, info):
        if phase == "start" and info["generation"] == 2:
            seen.append(2)

    # As the server sets it: no full collection of the test's own by count, to be seen here.
    threshold = gc.get_threshold()
    gc.set_threshold(*threshold[:2], lsp_server.FULL_COLLECTIONS_NEVER)
    gc.callbacks.append(note)
    yield seen
    gc.callbacks.remove(note)
    gc.set_threshold(*threshold)


def test_a_full_collection_runs_once_the_editor_is_quiet(monkeypatch, full_collections):
    monkeypatch.setattr(lsp_diagnostics, "IDLE_COLLECT_S", 0.05)
    server = lsp_server.ContractsServer()

    async def typing_then_pause():
        for _ in range(5):  # each message defers it
            server.collect_when_idle()
            await asyncio.sleep(0.01)
        assert full_collections == []
        await asyncio.sleep(0.2)

    asyncio.run(typing_then_pause())
    assert full_collections == [2]


def test_no_full_collection_while_a_check_is_due(monkeypatch, full_collections):
    monkeypatch.setattr(lsp_diagnostics, "IDLE_COLLECT_S", 0.01)
    server = lsp_server.ContractsServer()

    async def pending_check():
        server._pending["file:///a.py"] = asyncio.get_running_loop().call_later(60, print)
        server.collect_when_idle()
        await asyncio.sleep(0.1)
        server._pending.pop("file:///a.py").cancel()

    asyncio.run(pending_check())
    assert full_collections == []


def test_serving_starts_no_full_collection_by_count(monkeypatch):
    """``serve`` raises the collector's last threshold out of reach, and keeps the young ones."""
    set_to: list[tuple] = []
    monkeypatch.setattr(gc, "set_threshold", lambda *t: set_to.append(t))
    monkeypatch.setattr(lsp_server.LanguageServer, "start_io", lambda self, **streams: None)
    monkeypatch.setattr(lsp_server, "Input", lambda stream: None)
    monkeypatch.setattr(lsp_server.signal, "signal", lambda *a: None)
    young, middle, _ = gc.get_threshold()
    assert lsp_server.serve() == 0
    assert set_to == [(young, middle, lsp_server.FULL_COLLECTIONS_NEVER)]
