"""The language server, started as its own process and spoken to over LSP.

Each test starts ``serve_with_test_kinds.py`` (the real server, plus two
kinds only these tests declare: one with a safe fix, one that crashes) in a
throwaway project, through pytest-lsp's client, and drives it as an editor
would: initialize, open, edit, save, ask for code actions, apply the edit
they return, change the configuration, shut down. Every test ends by
asserting that no request came back as an error and that the server logged
no handler failure: an editor stops asking a server that answers with
internal errors.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import make_test_lsp_client

from ...scaffold import pyproject, write_tree

LAUNCHER = Path(__file__).with_name("serve_with_test_kinds.py")
REPO = Path(__file__).resolve().parents[3]
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS

PYPROJECT = pyproject(
    "blocks-keyword-only",
    {"id": "old-name", "kind": "rename", "old": "legacy", "new": "current"},
    "plain-triton-imports",
    "skip-triton",
    name="consumer",
)

# AC101 on line 2 (`blocks` positional, the def's parameter at column 36),
# AC991 on line 6 (`legacy`, which has a safe fix).
VIOLATING = """\
class Builder:
    def allocate_kv_cache_tensors(self, blocks):
        return blocks


value = legacy
"""


_BOTH = (types.MarkupKind.Markdown, types.MarkupKind.PlainText)


def capabilities(
    *,
    pull: bool = False,
    snippets: bool = False,
    hover_formats: tuple | None = _BOTH,
    configuration: bool = False,
) -> types.ClientCapabilities:
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind.Utf16]
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
            diagnostic=types.DiagnosticClientCapabilities(related_document_support=True)
            if pull
            else None,
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                code_description_support=True, data_support=True
            ),
            code_action=types.CodeActionClientCapabilities(),
            hover=types.HoverClientCapabilities(
                content_format=None if hover_formats is None else list(hover_formats)
            ),
        ),
        workspace=types.WorkspaceClientCapabilities(
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=True, snippet_edit_support=snippets
            ),
            did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=False
            ),
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
            workspace_folders=True,
            configuration=configuration,
        ),
        window=types.WindowClientCapabilities(
            show_document=types.ShowDocumentClientCapabilities(support=True)
        ),
    )


def _read_code_actions_right(client) -> None:
    """lsprotocol 2025.0.0 reads any code action that carries a ``command`` as a bare
    ``Command`` (it tests for the key, not for a string under it); read it as a
    ``CodeAction`` when its ``command`` is an object, as the specification says."""
    converter = client.protocol._converter

    def hook(obj, _):
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, hook)


@contextlib.asynccontextmanager
async def session(
    folders: list[Path],
    *,
    args: tuple[str, ...] = (),
    debounce_ms=20,
    options: dict | None = None,
    **caps,
):
    client = make_test_lsp_client()
    _read_code_actions_right(client)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    await client.start_io(sys.executable, str(LAUNCHER), *args, env=env)
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities(**caps),
                root_uri=from_fs_path(str(folders[0])),
                workspace_folders=[
                    types.WorkspaceFolder(uri=from_fs_path(str(f)), name=f.name) for f in folders
                ],
                initialization_options={"debounceMs": debounce_ms, **(options or {})},
            )
        )
        yield client
        assert client.error is None
        failures = [m.message for m in client.log_messages if " failed: " in m.message]
        assert failures == []
    finally:
        await client.shutdown_session()
        await client.stop()


async def diagnostics(client, uri: str, until, timeout: float = 15.0):
    """The diagnostics last pushed for ``uri``, once ``until`` holds for them."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        current = client.diagnostics.get(uri)
        if current is not None and until(current):
            return current
        remaining = deadline - loop.time()
        if remaining <= 0:
            logs = [m.message for m in client.log_messages]
            raise AssertionError(
                f"diagnostics for {uri} never matched; last: {current!r}; log: {logs}"
            )
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(client.wait_for_notification(PUBLISH), remaining)


def codes(diags) -> list[str]:
    return sorted(str(d.code) for d in diags)


def open_doc(client, path: Path, text: str, version: int = 1) -> str:
    uri = from_fs_path(str(path))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=version, text=text
            )
        )
    )
    return uri


def change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def save(client, uri: str) -> None:
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


def apply_edits(text: str, edits) -> str:
    """Apply LSP text edits (UTF-16 positions; these texts are ASCII) the way an editor does."""
    lines = text.splitlines(True)

    def offset(pos: types.Position) -> int:
        return sum(len(line) for line in lines[: pos.line]) + pos.character

    out = text
    for edit in sorted(
        edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True
    ):
        new_text = edit.new_text if hasattr(edit, "new_text") else edit.snippet.value
        out = out[: offset(edit.range.start)] + new_text + out[offset(edit.range.end) :]
    return out


def edits_of(action: types.CodeAction, uri: str):
    (change_,) = action.edit.document_changes
    assert change_.text_document.uri == uri
    return change_.edits


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "consumer"
    write_tree(
        root, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", "pkg/builder.py": VIOLATING}
    )
    return root


@pytest.mark.asyncio
async def test_open_edit_fix_suppress_and_save(project):
    path = project / "pkg" / "builder.py"
    async with session([project]) as client:
        # Open: pushed at once, with code, range, severity, contract and docs link.
        uri = open_doc(client, path, VIOLATING)
        found = await diagnostics(client, uri, lambda d: len(d) == 2)
        by_code = {d.code: d for d in found}
        ac101 = by_code["AC101"]
        assert ac101.range.start == types.Position(line=1, character=40)
        assert ac101.severity == types.DiagnosticSeverity.Error
        assert ac101.source == "atom-contracts"
        assert "contract `blocks-keyword-only`" in ac101.message
        assert ac101.code_description.href.endswith(
            "docs/contracts.md#ac101-keyword-only-parameter"
        )
        assert ac101.data["contract"] == "blocks-keyword-only"

        # The buffer, not the disk: an unsaved edit that fixes AC101 clears it.
        edited = VIOLATING.replace("(self, blocks)", "(self, *, blocks)")
        change(client, uri, 2, edited)
        found = await diagnostics(client, uri, lambda d: codes(d) == ["AC991"])
        assert path.read_text() == VIOLATING

        # Hover on the finding: the rule's Why, under the message.
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=5, character=9),
            )
        )
        assert "AC991" in hover.contents.value and "Why is this bad?" in hover.contents.value

        # Code actions at the finding: its safe fix (preferred) and a suppression.
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=found[0].range,
                context=types.CodeActionContext(diagnostics=list(found)),
            )
        )
        titles = {a.title: a for a in actions}
        fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.is_preferred)
        assert fix.title == "rename to current (AC991)"
        suppress = next(a for a in actions if a.title.startswith("Suppress AC991"))
        assert not any(a.kind == "source.fixAll.atom-contracts" for a in actions), titles

        # Apply the suppression: the comment lands, the cursor goes after the dashes
        # (a showDocument, since this client takes no snippets), and the missing
        # reason is AC901 until one is written.
        suppressed = apply_edits(edited, edits_of(suppress, uri))
        assert suppressed.splitlines()[5] == "value = legacy  # noqa: AC991 -- "
        assert suppress.command.command == "atom-contracts.placeCursor"
        assert list(suppress.command.arguments[1:]) == [5, len("value = legacy  # noqa: AC991 -- ")]
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=suppress.command.command, arguments=suppress.command.arguments
            )
        )
        (shown,) = client.shown_documents
        assert shown.selection.start == types.Position(line=5, character=33)
        change(client, uri, 3, suppressed)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC901"])
        change(client, uri, 4, suppressed.replace("-- \n", "-- kept for old callers\n"))
        await diagnostics(client, uri, lambda d: len(d) == 0)

        # Back to the finding; fix all safe, asked for by kind, as on save in an editor.
        change(client, uri, 5, edited)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"])
        (fix_all,) = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=types.Range(
                    start=types.Position(line=0, character=0),
                    end=types.Position(line=0, character=0),
                ),
                context=types.CodeActionContext(
                    diagnostics=[], only=["source.fixAll.atom-contracts"]
                ),
            )
        )
        fixed = apply_edits(edited, edits_of(fix_all, uri))
        assert fixed == edited.replace("= legacy", "= current")
        change(client, uri, 6, fixed)
        await diagnostics(client, uri, lambda d: len(d) == 0)

        # Save: pushed again, and the file on disk is what the editor wrote.
        path.write_text(fixed)
        save(client, uri)
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )


@pytest.mark.asyncio
async def test_an_unsafe_fix_is_labelled_and_not_preferred(project):
    text = "from vllm.triton_utils import triton\n"
    path = project / "pkg" / "kernels.py"
    write_tree(project, {"pkg/kernels.py": text})
    async with session([project], snippets=True) as client:
        uri = open_doc(client, path, text)
        (diag,) = await diagnostics(client, uri, lambda d: codes(d) == ["AC501"])
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag]),
            )
        )
        (unsafe,) = [a for a in actions if a.kind == "quickfix.unsafe"]
        assert unsafe.title.startswith("Unsafe fix: ") and not unsafe.is_preferred
        assert apply_edits(text, edits_of(unsafe, uri)) == "import triton\n"
        # With snippet support the suppression carries its cursor as `$0`.
        suppress = next(a for a in actions if a.title.startswith("Suppress AC501"))
        (snippet,) = edits_of(suppress, uri)
        assert snippet.snippet.value == "  # noqa: AC501 -- $0"
        assert suppress.command is None
        # A fix-all with nothing safe to apply is not offered.
        assert not [a for a in actions if a.kind == "source.fixAll.atom-contracts"]


@pytest.mark.asyncio
async def test_pulled_diagnostics_document_and_workspace(project):
    write_tree(project, {"pkg/other.py": "thing = legacy\n"})
    path = project / "pkg" / "builder.py"
    async with session([project], pull=True) as client:
        uri = open_doc(client, path, VIOLATING)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert codes(report.items) == ["AC101", "AC991"]
        again = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                previous_result_id=report.result_id,
            )
        )
        assert again.kind == "unchanged" and again.result_id == report.result_id
        # A pulling client is not pushed to as well (it would show everything twice).
        assert uri not in client.diagnostics

        workspace = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        by_uri = {r.uri: r for r in workspace.items}
        other = by_uri[from_fs_path(str(project / "pkg" / "other.py"))]
        assert codes(other.items) == ["AC991"] and other.version is None
        assert codes(by_uri[uri].items) == ["AC101", "AC991"]


@pytest.mark.asyncio
async def test_a_save_rechecks_the_files_it_affects_open_or_not(project):
    # tests/test_ops.py imports pkg.ops at module level before importorskip("triton"):
    # fine while pkg.ops does not import triton; AC601 once it does.
    test_text = (
        "import pytest\n\nfrom pkg import ops\n\ntriton = pytest.importorskip('triton')\n\n\n"
        "def test_ops():\n    assert ops\n"
    )
    write_tree(
        project,
        {
            "pkg/ops.py": "def op():\n    pass\n",
            "tests/test_ops.py": test_text,
            "tests/test_closed.py": test_text.replace("test_ops", "test_closed"),
        },
    )
    ops = project / "pkg" / "ops.py"
    async with session([project]) as client:
        test_uri = open_doc(client, project / "tests" / "test_ops.py", test_text)
        ops_uri = open_doc(client, ops, "def op():\n    pass\n")
        await asyncio.sleep(0.3)
        assert len(client.diagnostics.get(test_uri, [])) == 0
        new_ops = "import triton\n\n\ndef op():\n    return triton\n"
        change(client, ops_uri, 2, new_ops)
        ops.write_text(new_ops)
        save(client, ops_uri)
        found = await diagnostics(client, test_uri, lambda d: codes(d) == ["AC601"])
        assert "pkg.ops" in found[0].message
        closed_uri = from_fs_path(str(project / "tests" / "test_closed.py"))
        await diagnostics(client, closed_uri, lambda d: codes(d) == ["AC601"])

        # Fixed (triton imported where it is used, not at module level) and saved:
        # both clear, though no import chain leads from pkg.ops to triton any more.
        fixed_ops = "def op():\n    import triton\n\n    return triton\n"
        change(client, ops_uri, 3, fixed_ops)
        ops.write_text(fixed_ops)
        save(client, ops_uri)
        await diagnostics(client, test_uri, lambda d: len(d) == 0)
        await diagnostics(client, closed_uri, lambda d: len(d) == 0)

        # Broken again by a module the test reaches only through pkg.ops: the save of
        # a file nobody has open still reaches the test (the editor's file watcher says so).
        helper = project / "pkg" / "helper.py"
        helper.write_text("import triton\n")
        via = "from pkg import helper\n\n\ndef op():\n    return helper\n"
        change(client, ops_uri, 4, via)
        ops.write_text(via)
        save(client, ops_uri)
        found = await diagnostics(client, closed_uri, lambda d: codes(d) == ["AC601"])
        helper.write_text("VALUE = 1\n")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=from_fs_path(str(helper)), type=types.FileChangeType.Changed
                    )
                ]
            )
        )
        await diagnostics(client, closed_uri, lambda d: len(d) == 0)
        await diagnostics(client, test_uri, lambda d: len(d) == 0)


@pytest.mark.asyncio
async def test_a_broken_config_is_one_diagnostic_and_a_message_then_reloads(project):
    path = project / "pkg" / "builder.py"
    pyproject = project / "pyproject.toml"
    pyproject.write_text(PYPROJECT.replace('kind = "keyword-only"', 'kind = "keyword-onyl"'))
    async with session([project]) as client:
        py_uri = from_fs_path(str(pyproject))
        (diag,) = await diagnostics(client, py_uri, lambda d: len(d) == 1)
        assert "keyword-onyl" in diag.message
        assert PYPROJECT.splitlines()[diag.range.start.line] == 'kind = "keyword-only"'
        for _ in range(100):  # the message is sent before the diagnostic; read it in
            if any("does not load" in m.message for m in client.messages):
                break
            await asyncio.sleep(0.05)
        assert any("does not load" in m.message for m in client.messages)
        uri = open_doc(client, path, VIOLATING)
        await asyncio.sleep(0.3)
        assert len(client.diagnostics.get(uri, [])) == 0  # nothing checked, and the server lives

        # Fixed on disk; the editor reports the change: reloaded, findings back.
        pyproject.write_text(PYPROJECT)
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=py_uri, type=types.FileChangeType.Changed)]
            )
        )
        await diagnostics(client, py_uri, lambda d: len(d) == 0)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC101", "AC991"])

        # A contract removed and saved from the editor: its findings go.
        trimmed = PYPROJECT.replace('id = "old-name"', 'id = "old-name"\npaths = ["nowhere/**"]')
        pyproject.write_text(trimmed)
        save(client, py_uri)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC101"])


@pytest.mark.asyncio
async def test_a_crashing_rule_is_logged_and_reported_and_the_rest_still_show(project):
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        PYPROJECT + '\n[[tool.atom-contracts.contracts]]\nid = "bad"\nkind = "explode"\n'
    )
    text = VIOLATING + "boom = 1\n"
    async with session([project]) as client:
        uri = open_doc(client, project / "pkg" / "builder.py", text)
        found = await diagnostics(client, uri, lambda d: codes(d) == ["AC002", "AC101", "AC991"])
        crash = next(d for d in found if d.code == "AC002")
        assert "contract `bad` (explode) failed" in crash.message
        assert "ZeroDivisionError" in crash.message
        logged = [m for m in client.log_messages if "contract `bad` (explode) failed" in m.message]
        assert logged and logged[0].type == types.MessageType.Error


@pytest.mark.asyncio
async def test_each_workspace_folder_has_its_own_declaration(project, tmp_path):
    second = tmp_path / "second"
    write_tree(
        second,
        {
            "pyproject.toml": PYPROJECT.replace('old = "legacy"', 'old = "ancient"'),
            "mod.py": "a = legacy\nb = ancient\n",
        },
    )
    write_tree(project, {"mod.py": "a = legacy\nb = ancient\n"})
    async with session([project, second]) as client:
        first_uri = open_doc(client, project / "mod.py", "a = legacy\nb = ancient\n")
        second_uri = open_doc(client, second / "mod.py", "a = legacy\nb = ancient\n")
        (one,) = await diagnostics(client, first_uri, lambda d: len(d) == 1)
        (two,) = await diagnostics(client, second_uri, lambda d: len(d) == 1)
        assert one.range.start.line == 0 and two.range.start.line == 1


@pytest.mark.asyncio
async def test_columns_are_utf16_units(project):
    # "é" is one UTF-16 unit, "😀" two: AC991's `legacy` starts at UTF-16 column 11.
    text = 's = "é😀"; legacy\n'
    async with session([project]) as client:
        uri = open_doc(client, project / "pkg" / "wide.py", text)
        (diag,) = await diagnostics(client, uri, lambda d: len(d) == 1)
        assert diag.range.start == types.Position(line=0, character=11)
        assert diag.range.end == types.Position(line=0, character=17)


def test_without_pygls_the_command_says_which_extra_to_install(tmp_path):
    # A `pygls` that cannot be imported shadows the installed one.
    (tmp_path / "pygls.py").write_text("raise ImportError('hidden', name='pygls')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run(
        [sys.executable, "-m", "checkers", "server"],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode == 2
    assert "pip install 'atom-contracts[server]'" in done.stderr
    assert "Traceback" not in done.stderr


def _frame(message: dict | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _frames(stream: bytes) -> list[dict]:
    messages = []
    while stream:
        header, _, rest = stream.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        stream = rest[length:]
    return messages


def test_a_message_nested_too_deeply_is_refused_by_name_and_the_server_goes_on(tmp_path):
    # json recurses per level: 100,000 levels was pygls's "Unable to handle
    # message" traceback on stderr and "Error in server: maximum recursion
    # depth exceeded ..." in the editor's face.
    deep = b'{"jsonrpc": "2.0", "method": "x", "params": ' + b"[" * 100_000 + b"]" * 100_000
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"processId": None, "rootUri": None, "capabilities": {}},
    }
    shutdown = {"jsonrpc": "2.0", "id": 2, "method": "shutdown"}
    done = subprocess.run(
        [sys.executable, "-m", "checkers", "server"],
        input=_frame(deep + b"}")
        + _frame(initialize)
        + _frame(shutdown)
        + _frame({"jsonrpc": "2.0", "method": "exit"}),
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        cwd=tmp_path,
        timeout=240,  # a loaded 2-core machine starts the server slowly
    )
    messages = _frames(done.stdout)
    assert any(m.get("id") == 1 and "capabilities" in m.get("result", {}) for m in messages)
    told = [m["params"]["message"] for m in messages if m.get("method", "").startswith("window/")]
    assert any("nested too deeply" in t for t in told), told
    assert not any("Error in server" in t for t in told), told
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")[-2000:]


@pytest.mark.asyncio
@pytest.mark.parametrize("pull", [False, True])
async def test_a_whole_session_gets_no_error_response_and_logs_no_error(project, tmp_path, pull):
    """Every request and notification an editor sends, some of them odd but legal
    (a hover where nothing is, a document never opened, a file that is not Python),
    answered without one error response and without one ERROR line in the server's log."""
    log_file = tmp_path / "server.log"
    path = project / "pkg" / "builder.py"
    ident = types.TextDocumentIdentifier
    async with session([project], args=("-v", "--log-file", str(log_file)), pull=pull) as client:
        errors: list = []
        handle = client.protocol.handle_message

        def watch(message):
            if getattr(message, "error", None) is not None:
                errors.append(message)
            return handle(message)

        client.protocol.handle_message = watch
        uri = open_doc(client, path, VIOLATING)
        notes = open_doc(client, project / "notes.txt", "not python\n")
        text = VIOLATING
        for version, char in enumerate("x = (1, 2)", start=2):  # a statement, typed
            text = text + char if version > 2 else text + "\n" + char
            change(client, uri, version, text)
            await asyncio.sleep(0.005)
        everywhere = types.Range(
            start=types.Position(line=0, character=0), end=types.Position(line=99, character=0)
        )
        for target in (uri, notes):
            await client.text_document_hover_async(
                types.HoverParams(text_document=ident(uri=target), position=everywhere.start)
            )
            await client.text_document_code_action_async(
                types.CodeActionParams(
                    text_document=ident(uri=target),
                    range=everywhere,
                    context=types.CodeActionContext(diagnostics=[]),
                )
            )
            await client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(text_document=ident(uri=target))
            )
        never_opened = from_fs_path(str(project / "pkg" / "absent.py"))
        await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=ident(uri=never_opened))
        )
        await client.text_document_hover_async(
            types.HoverParams(text_document=ident(uri=never_opened), position=everywhere.start)
        )
        await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        await asyncio.sleep(0.2)
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=ident(uri=uri),
                range=everywhere,
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
        for action in actions or ():
            if action.command is not None:
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams(
                        command=action.command.command, arguments=action.command.arguments
                    )
                )
        path.write_text(text)
        save(client, uri)
        pyproject = from_fs_path(str(project / "pyproject.toml"))
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(uri=pyproject, type=types.FileChangeType.Changed),
                    types.FileEvent(uri=never_opened, type=types.FileChangeType.Deleted),
                ]
            )
        )
        client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(
                event=types.WorkspaceFoldersChangeEvent(added=[], removed=[])
            )
        )
        for target in (uri, notes):
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=ident(uri=target))
            )
        await asyncio.sleep(0.3)
        assert errors == []
    logged = log_file.read_text(encoding="utf-8")
    assert "pushed " in logged or pull  # the log is the server's, and -v reached it
    assert [line for line in logged.splitlines() if " ERROR " in line] == []


@pytest.mark.asyncio
async def test_a_clean_buffer_is_published_as_checked_with_its_version(project):
    # Nothing to report is still an answer: the client can tell its version was checked.
    async with session([project]) as client:
        uri = open_doc(client, project / "pkg" / "clean.py", "value = 1\n")
        assert len(await diagnostics(client, uri, lambda d: len(d) == 0)) == 0


def hover_at(client, uri: str, line: int, character: int):
    return client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=character),
        )
    )


def actions_at(client, uri: str, start: tuple[int, int], end: tuple[int, int] | None = None):
    """The code actions for a range, asked as an editor asks at its cursor: no
    diagnostics in the context when none overlaps the range."""
    end = end or start
    return client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


PLAIN, MARKDOWN = types.MarkupKind.PlainText, types.MarkupKind.Markdown


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("formats", "kind"),
    [
        ((PLAIN,), PLAIN),  # eglot where markdown-mode is not installed
        ((PLAIN, MARKDOWN), PLAIN),
        ((MARKDOWN, PLAIN), MARKDOWN),
        ((MARKDOWN,), MARKDOWN),
        (None, PLAIN),  # a client that does not say: text every client shows as it is
    ],
)
async def test_hover_is_in_the_markup_kind_the_client_prefers(project, formats, kind):
    async with session([project], hover_formats=formats) as client:
        uri = open_doc(client, project / "pkg" / "builder.py", VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2)
        hover = await hover_at(client, uri, 1, 41)  # on `blocks`: the AC101
        assert hover.contents.kind == kind
        text = hover.contents.value
        assert "AC101" in text and "keyword-only-parameter" in text
        assert "Why is this bad?" in text and "Use instead" in text
        assert "docs/contracts.md#ac101-keyword-only-parameter" in text
        if kind == PLAIN:
            # No markup around the headings, the example or the link (the rule's own
            # words keep their code spans, `**kwargs` among them, as `explain` prints them).
            assert "**AC101**" not in text and "**Why" not in text and "**Use" not in text
            assert "```" not in text and "](" not in text
            assert text.startswith("AC101 keyword-only-parameter -- contract blocks-keyword-only")
            # The example is indented, as `atom-contracts explain` prints it.
            assert "\n        def allocate_kv_cache_tensors(self, *, blocks):\n" in text
        else:
            assert text.startswith("**AC101**") and "```python\n" in text


# AC301 on the condition: line 2, 0-based columns 11 (after `    assert `, 4 + 7) to 42
# (11 + len("max_model_len % block_size == 0"), 31). The statement runs to line 4.
ASSERTING = """\
def max_block(max_model_len, block_size):
    assert max_model_len % block_size == 0, (
        "block size must divide the length"
    )
    return max_model_len // block_size
"""


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("start", "end"),
    [
        ((1, 4), None),  # the cursor on `assert`
        ((1, 4), (1, 10)),  # the word `assert` selected
        ((1, 0), None),  # the start of the line, before the indentation
        ((2, 12), None),  # inside the message, a line below the condition
        ((3, 4), (3, 5)),  # the closing bracket
    ],
)
async def test_code_actions_are_found_anywhere_on_the_flagged_statement(tmp_path, start, end):
    root = tmp_path / "asserting"
    write_tree(root, {"pyproject.toml": pyproject("no-input-asserts"), "pkg/pool.py": ASSERTING})
    async with session([root]) as client:
        uri = open_doc(client, root / "pkg" / "pool.py", ASSERTING)
        (diag,) = await diagnostics(client, uri, lambda d: codes(d) == ["AC301"])
        # What an editor underlines stays the condition, as the CLI's column says.
        assert diag.range == types.Range(
            start=types.Position(line=1, character=11),
            end=types.Position(line=1, character=42),
        )
        actions = await actions_at(client, uri, start, end)
        titles = sorted(a.title for a in actions)
        assert titles == [
            "Suppress AC301 on this line, with a reason",
            "Unsafe fix: Raise ValueError instead of asserting (AC301) -- review the change",
        ]
        assert all(a.diagnostics[0].range == diag.range for a in actions)
        # Not on the statements around it.
        assert not await actions_at(client, uri, (0, 4))
        assert not await actions_at(client, uri, (4, 4))
        # A whole line selected ends at the start of the next: the `def` line alone.
        assert not await actions_at(client, uri, (0, 0), (1, 0))


def cli_message(data: bytes, rel: str, code: str, scratch: Path) -> str:
    """The message `atom-contracts check REL` prints for a file of ``data``'s one ``code``
    finding, in a project of its own (the server's tests declare kinds the CLI lacks)."""
    root = scratch / "cli"
    write_tree(root, {"pyproject.toml": pyproject("blocks-keyword-only")})
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(data)
    done = subprocess.run(
        [sys.executable, "-m", "checkers", "check", rel],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    (line,) = [line for line in done.stdout.splitlines() if line.startswith(f"{rel}:")]
    assert f" {code} " in line, done.stdout
    return line.split(f" {code} ", 1)[1]


# Bytes no Python source decodes to: a 0xff is never UTF-8.
BINARY = b"x = 1\n\xff\xfe\x00binary\x80\n"


@pytest.mark.asyncio
async def test_a_file_the_editor_cannot_send_is_its_ac001_as_on_the_command_line(project, tmp_path):
    # Emacs cannot put a buffer of raw bytes into JSON, so it never sends the didOpen;
    # it asks about the document (hover at point, a save) by its URI alone.
    blob = project / "pkg" / "blob.py"
    blob.write_bytes(BINARY)
    expected = cli_message(BINARY, "pkg/blob.py", "AC001", tmp_path)
    assert expected == "cannot be decoded: line 2: byte b'\\xff' is not valid utf-8 (the default)"
    uri = from_fs_path(str(blob))
    async with session([project]) as client:
        await hover_at(client, uri, 0, 0)
        (diag,) = await diagnostics(client, uri, lambda d: len(d) == 1)
        assert (diag.code, diag.message) == ("AC001", expected)
        assert diag.range.start == types.Position(line=0, character=0)
    async with session([project]) as client:
        save(client, uri)
        (diag,) = await diagnostics(client, uri, lambda d: len(d) == 1)
        assert (diag.code, diag.message) == ("AC001", expected)


@pytest.mark.asyncio
async def test_an_undecodable_file_is_its_ac001_when_pulled_too(project, tmp_path):
    blob = project / "pkg" / "blob.py"
    blob.write_bytes(BINARY)
    expected = cli_message(BINARY, "pkg/blob.py", "AC001", tmp_path)
    uri = from_fs_path(str(blob))
    async with session([project], pull=True) as client:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert [(d.code, d.message) for d in report.items] == [("AC001", expected)]
        workspace = await client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[])
        )
        (blob_report,) = [r for r in workspace.items if r.uri == uri]
        assert [(d.code, d.message) for d in blob_report.items] == [("AC001", expected)]
        assert uri not in client.diagnostics  # pulled, not pushed


@pytest.mark.asyncio
async def test_a_buffer_the_editor_decoded_lossily_is_the_files_ac001(project, tmp_path):
    # Latin-1 bytes with no coding cookie: Python (and the CLI) refuse them; an editor
    # that opens the file anyway sends U+FFFD where it could not decode.
    path = project / "pkg" / "latin.py"
    path.write_bytes(b'name = "caf\xe9"\n')
    expected = cli_message(path.read_bytes(), "pkg/latin.py", "AC001", tmp_path)
    assert expected == "cannot be decoded: line 1: byte b'\\xe9' is not valid utf-8 (the default)"
    async with session([project]) as client:
        uri = open_doc(client, path, 'name = "caf\ufffd"\n')
        (diag,) = await diagnostics(client, uri, lambda d: len(d) == 1)
        assert (diag.code, diag.message) == ("AC001", expected)
        # Typed over until it reads as the file should, the buffer is checked as usual.
        change(client, uri, 2, 'name = "cafe"\nvalue = legacy\n')
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"])


@pytest.mark.asyncio
async def test_a_file_read_from_disk_is_decoded_as_python_decodes_it(project):
    # Not opened: a hover or a pull reads the file, whose cookie says Latin-1.
    path = project / "pkg" / "cookie.py"
    path.write_bytes(b'# -*- coding: latin-1 -*-\nname = "caf\xe9"\nvalue = legacy\n')
    uri = from_fs_path(str(path))
    async with session([project], pull=True) as client:
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert codes(report.items) == ["AC991"]


def configure(client, settings) -> None:
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))


FIXED_BLOCKS = VIOLATING.replace("(self, blocks)", "(self, *, blocks)")


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "settings",
    [
        {"atom-contracts": {"debounceMs": 0}},  # under the server's section: Neovim, eglot
        {"debounceMs": 0},  # the server's own table, as Helix sends its `config`
    ],
)
async def test_the_debounce_changes_at_run_time(project, settings):
    path = project / "pkg" / "builder.py"
    async with session([project], debounce_ms=10_000) as client:
        uri = open_doc(client, path, VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2)  # an open is not debounced
        change(client, uri, 2, FIXED_BLOCKS)
        await asyncio.sleep(1.0)
        assert codes(client.diagnostics[uri]) == ["AC101", "AC991"]  # 9 s of quiet to go
        # The check already waiting is rescheduled under the new debounce.
        configure(client, settings)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"], timeout=5.0)
        change(client, uri, 3, VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2, timeout=5.0)


@pytest.mark.asyncio
async def test_settings_are_asked_for_when_the_change_carries_none(project):
    # VS Code's client sends `settings: null` and answers workspace/configuration.
    path = project / "pkg" / "builder.py"
    async with session([project], debounce_ms=10_000, configuration=True) as client:
        uri = open_doc(client, path, VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2)
        client.set_configuration({"debounceMs": 0}, section="atom-contracts")
        configure(client, None)
        await asyncio.sleep(0.5)
        change(client, uri, 2, FIXED_BLOCKS)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"], timeout=5.0)


@pytest.mark.asyncio
async def test_the_diagnostic_mode_changes_at_run_time(project):
    path = project / "pkg" / "builder.py"
    async with session([project], pull=True, options={"diagnosticMode": "push"}) as client:
        uri = open_doc(client, path, VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2)
        # To pull: what was pushed is withdrawn (it would show twice) and pulls answer.
        configure(client, {"atom-contracts": {"diagnosticMode": "pull"}})
        await diagnostics(client, uri, lambda d: len(d) == 0)
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        assert codes(report.items) == ["AC101", "AC991"]
        change(client, uri, 2, FIXED_BLOCKS)
        await asyncio.sleep(0.5)
        assert len(client.diagnostics[uri]) == 0  # no longer pushed
        # Back to push: every open buffer is pushed at once.
        configure(client, {"atom-contracts": {"diagnosticMode": "push"}})
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"])


@pytest.mark.asyncio
async def test_a_bad_setting_is_named_and_the_others_still_apply(project):
    path = project / "pkg" / "builder.py"
    async with session([project], debounce_ms=10_000) as client:
        uri = open_doc(client, path, VIOLATING)
        await diagnostics(client, uri, lambda d: len(d) == 2)
        configure(
            client,
            {"atom-contracts": {"debounceMs": 0, "diagnosticMode": "sometimes", "colour": 1}},
        )
        change(client, uri, 2, FIXED_BLOCKS)
        await diagnostics(client, uri, lambda d: codes(d) == ["AC991"], timeout=5.0)
        told = [m.message for m in client.log_messages if m.type == types.MessageType.Warning]
        assert any("diagnosticMode" in t and "'sometimes'" in t for t in told), told
        assert any("colour" in t for t in told), told
        configure(client, {"atom-contracts": {"debounceMs": -5}})
        await asyncio.sleep(0.3)
        told = [m.message for m in client.log_messages if m.type == types.MessageType.Warning]
        assert any("debounceMs" in t and "-5" in t for t in told), told
