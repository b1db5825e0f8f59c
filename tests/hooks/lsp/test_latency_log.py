"""The ``-v`` log's latency line: what interval it measures, and what else the log holds.

``atom-contracts server -v`` logs, for each keystroke's push, how long after the
change reached the server its diagnostics were ready to send;
``bench/server_latency.py`` reads that line beside the round trip its client
measures. The line is only comparable with the round trip if its interval lies
inside it: it starts after the client sent the change and ends before the
client can have read the diagnostics. That is a matter of where the two stamps
are taken, so it holds on any machine however loaded -- nothing here is a
time limit.
"""

from __future__ import annotations

import asyncio
import re
import time

import pytest

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")

from lsprotocol import types

from ...scaffold import pyproject, write_tree
from .test_server import PUBLISH, change, open_doc, session

PUSHED = re.compile(r"pushed (\S+) v(\d+): \d+ diagnostics ([\d.]+) ms after its change")
TEXT = "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        return blocks\n"


async def published(client, uri: str, version: int) -> None:
    while True:
        params = await asyncio.wait_for(client.wait_for_notification(PUBLISH), 60)
        if params.uri == uri and params.version == version:
            return


@pytest.mark.asyncio
async def test_each_keystrokes_logged_latency_lies_inside_the_clients_round_trip(tmp_path):
    root = tmp_path / "project"
    write_tree(root, {"pyproject.toml": pyproject("blocks-keyword-only"), "mod.py": TEXT})
    log_file = tmp_path / "server.log"
    round_trips: dict[int, float] = {}
    async with session([root], args=("-v", "--log-file", str(log_file)), debounce_ms=0) as client:
        uri = open_doc(client, root / "mod.py", TEXT)
        await published(client, uri, 1)
        text = TEXT
        for version, char in enumerate("x = (1, 2)", start=2):
            text += char
            sent = time.perf_counter()
            change(client, uri, version, text)
            await published(client, uri, version)
            round_trips[version] = (time.perf_counter() - sent) * 1000
    logged = {
        int(m.group(2)): float(m.group(3))
        for m in PUSHED.finditer(log_file.read_text(encoding="utf-8"))
        if m.group(1) == uri
    }
    assert sorted(logged) == sorted(round_trips)  # every keystroke's push, once
    outside = {v: (logged[v], rt) for v, rt in round_trips.items() if logged[v] > rt}
    assert outside == {}


@pytest.mark.asyncio
async def test_the_verbose_log_holds_the_servers_lines_not_pygls_message_trace(tmp_path):
    # pygls logs every message whole at INFO: the buffer of each open, each keystroke's
    # diagnostics, written to the log before they go out. -v is the server's own lines.
    root = tmp_path / "project"
    write_tree(root, {"pyproject.toml": pyproject("blocks-keyword-only"), "mod.py": TEXT})
    log_file = tmp_path / "server.log"
    async with session([root], args=("-v", "--log-file", str(log_file))) as client:
        uri = open_doc(client, root / "mod.py", TEXT)
        await published(client, uri, 1)
        change(client, uri, 2, TEXT + "x = 1\n")
        await published(client, uri, 2)
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        await asyncio.sleep(0.2)
    lines = log_file.read_text(encoding="utf-8").splitlines()
    assert any(PUSHED.search(line) for line in lines)
    chatter = [
        line for line in lines if " pygls." in line and (" INFO " in line or " DEBUG " in line)
    ]
    assert chatter == []
    assert not any("allocate_kv_cache_tensors" in line for line in lines)  # no buffer text
