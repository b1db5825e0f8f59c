"""``atom-contracts server``: the contracts as a language server, over stdio.

Built on pygls 2 (the protocol, the document store, position encodings) and
lsprotocol (the types). Every check runs on the editor's buffer, never the
file on disk (``checkers.api.check_text``), through one long-lived linter per
declaration (``hooks.lsp.folders``).

Diagnostics are pulled (``textDocument/diagnostic``, ``workspace/diagnostic``)
by a client that says it can, and pushed (``publishDiagnostics`` on open,
on change after ``DEBOUNCE_S`` of quiet, and on save) to one that cannot --
both at once would show every finding twice in an editor that does both.
``initializationOptions.diagnosticMode`` (``"push"``, ``"pull"``, ``"auto"``)
overrides the choice. It and ``debounceMs`` are the settings, read from
``initializationOptions`` and changed at run time by
``workspace/didChangeConfiguration`` (``Settings``).

A save re-checks the files whose findings depend on other files (what the
cross-file kinds, leaf-package and importorskip, apply to), open or not, and
reports those that changed; a ``pyproject.toml`` that changes is reloaded.
A declaration that does not load is one diagnostic on that pyproject plus a
``window/showMessage``; a contract that crashes is a ``window/logMessage``
and the file's other findings still show. No handler lets an exception out:
an editor that gets an internal error back from a linter stops asking it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path, to_fs_path

from checkers.codes import CONFIG_ERROR
from contracts.finding import Finding

from . import actions, convert, diagnostics, settings
from .diagnostics import (
    DEBOUNCE_S,
    FULL_COLLECTIONS_NEVER,
    PYTHON_SUFFIXES,
    Diagnostics,
)
from .folders import PYPROJECT, Declaration, declaring_pyproject, error_line
from .guard import guarded
from .reading import Input
from .settings import NAME, Settings

log = logging.getLogger(__name__)

__all__ = ["DEBOUNCE_S", "ContractsServer", "create_server", "serve"]


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("atom-contracts")
    except metadata.PackageNotFoundError:
        return "0+unknown"


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, stamping each change the moment it reaches the server.

    The server's own latency clock (logged with ``-v``, read by
    bench/server_latency.py) starts here, before pygls applies the edit to its
    copy of the buffer, so that work is counted as the server's.
    """

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        self._server._changed_at[params.text_document.uri] = time.perf_counter()
        yield from super().lsp_text_document__did_change(params)


class ContractsServer(Diagnostics, Settings, LanguageServer):
    """The server's state: declarations, last results per document, what was published.

    Checking and reporting are ``Diagnostics`` (``hooks.lsp.diagnostics``), the settings
    ``Settings`` (``hooks.lsp.settings``); the declarations governing each file are here.
    """

    def __init__(self) -> None:
        super().__init__(NAME, _version(), protocol_cls=_Protocol)
        self.declarations: dict[Path, Declaration] = {}
        self._governing: dict[Path, Path | None] = {}  # directory -> its declaring pyproject
        # uri -> (document version, findings) of the last check of that buffer.
        self.results: dict[str, tuple[int | None, list[Finding]]] = {}
        self.published: set[str] = set()  # uris holding a non-empty push from us
        self.swept: dict[str, list[Finding]] = {}  # unopened files' last project-level check
        self.debounce_s = DEBOUNCE_S
        self.mode = "auto"  # one of MODES
        self._pending: dict[str, object] = {}  # uri -> scheduled debounced check
        # uri -> perf_counter() of its latest change not yet published: with -v each
        # push logs how long after it its diagnostics were ready to send
        # (bench/server_latency.py reads it).
        self._changed_at: dict[str, float] = {}
        self._idle_collection = None  # the full collection waiting for a pause (a TimerHandle)
        self.input: Input | None = None  # stdin read ahead, when serving over stdio (serve)

    # -- logging ---------------------------------------------------------

    def report_server_error(self, error: Exception, source) -> None:
        """pygls's hook for a failure outside any handler (a message it could not read).

        json recurses once per level of nesting, so a message deeper than the
        recursion limit is a RecursionError while reading it: a bad message,
        said so by name, never pygls's "Error in server: maximum recursion
        depth exceeded". The server reads the next message as before.
        """
        if isinstance(error, RecursionError):
            self.log(
                types.MessageType.Error,
                f"{NAME}: ignored a message from the editor: it is nested too deeply to read"
                f" (deeper than about {sys.getrecursionlimit()} levels)",
            )
            return
        super().report_server_error(error, source)

    def log(self, kind: types.MessageType, message: str) -> None:
        log.log(logging.ERROR if kind == types.MessageType.Error else logging.INFO, message)
        with contextlib.suppress(Exception):  # no client to tell (not initialized, or gone)
            self.window_log_message(types.LogMessageParams(type=kind, message=message))

    # -- declarations ----------------------------------------------------

    def declaration_for(self, path: str) -> Declaration | None:
        """The declaration governing a file (or a pyproject), loaded on first use."""
        here = Path(os.path.abspath(path))
        directory = here.parent
        if directory not in self._governing:
            self._governing[directory] = declaring_pyproject(here)
        pyproject = self._governing[directory]
        if pyproject is None:
            return None
        declaration = self.declarations.get(pyproject)
        if declaration is None:
            declaration = self.declarations[pyproject] = Declaration(pyproject)
            self.report_config(declaration, announce=declaration.error is not None)
        return declaration

    def report_config(self, declaration: Declaration, *, announce: bool) -> None:
        """The declaration's error as one diagnostic on its pyproject (or none), and a message."""
        uri = from_fs_path(str(declaration.pyproject))
        if declaration.error is None:
            self.publish(uri, [], None)
            return
        try:
            text = declaration.pyproject.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        line = error_line(declaration.error, text)
        width = len(text.splitlines()[line]) if line < len(text.splitlines()) else 0
        diag = types.Diagnostic(
            range=types.Range(
                start=types.Position(line=line, character=0),
                end=types.Position(line=line, character=width),
            ),
            message=f"[tool.atom-contracts] does not load, so no contract is checked: "
            f"{declaration.error}",
            severity=types.DiagnosticSeverity.Error,
            code=CONFIG_ERROR,
            source=convert.SOURCE,
        )
        if announce:
            with contextlib.suppress(Exception):
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Error,
                        message=f"atom-contracts: {declaration.pyproject} does not load; "
                        f"contracts are not checked until it does: {declaration.error}",
                    )
                )
        self.publish(uri, [diag], None, force=True)

    def reload(self, pyproject: Path) -> None:
        """A pyproject changed: forget which file it governs, reload, re-check open buffers."""
        self._governing.clear()
        declaration = self.declarations.get(pyproject)
        if declaration is None:
            if declaring_pyproject(pyproject) == pyproject:
                declaration = self.declarations[pyproject] = Declaration(pyproject)
                self.report_config(declaration, announce=declaration.error is not None)
        else:
            was_broken = declaration.error is not None
            declaration.load()
            self.report_config(declaration, announce=declaration.error is not None)
            if was_broken and declaration.error is None:
                self.log(types.MessageType.Info, f"{pyproject} loads again")
        self.results.clear()
        self.recheck_open()
        self.sweep()

    def drop(self, pyproject: Path) -> None:
        """A workspace folder went away: its declaration and its pyproject's report too."""
        self.declarations.pop(pyproject, None)
        self.publish(from_fs_path(str(pyproject)), [], None, force=True)


def create_server() -> ContractsServer:
    server = ContractsServer()

    @server.feature(types.INITIALIZE)
    @guarded()
    def initialize(ls: ContractsServer, params: types.InitializeParams):
        ls.configure(params.initialization_options, where="initializationOptions")

    @server.feature(types.INITIALIZED)
    @guarded()
    def initialized(ls: ContractsServer, params: types.InitializedParams):
        caps = ls.client_capabilities.workspace
        registrations = []
        watch = caps.did_change_watched_files if caps is not None else None
        if watch is not None and watch.dynamic_registration:
            registrations.append(
                types.Registration(
                    id="atom-contracts-watch",
                    method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                    register_options=types.DidChangeWatchedFilesRegistrationOptions(
                        watchers=[
                            types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                            types.FileSystemWatcher(glob_pattern="**/*.py"),
                        ]
                    ),
                )
            )
        configuration = caps.did_change_configuration if caps is not None else None
        if configuration is not None and configuration.dynamic_registration:
            # VS Code's client sends configuration changes only to a server that asks.
            registrations.append(
                types.Registration(
                    id="atom-contracts-settings",
                    method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
                    register_options=types.DidChangeConfigurationRegistrationOptions(section=NAME),
                )
            )
        if registrations:
            ls.client_register_capability(types.RegistrationParams(registrations=registrations))
        ls.ask_settings()
        # Load each folder's declaration now, so a broken one is reported at once.
        ls._workspace_declarations()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: ContractsServer, params: types.DidOpenTextDocumentParams):
        ls.results.pop(params.text_document.uri, None)
        ls.swept.pop(params.text_document.uri, None)
        ls.push(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: ContractsServer, params: types.DidChangeTextDocumentParams):
        ls.schedule(params.text_document.uri)  # the change was stamped on arrival (_Protocol)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    @guarded()
    def did_save(ls: ContractsServer, params: types.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        path = to_fs_path(uri) or ""
        if os.path.basename(path) == PYPROJECT:
            ls.reload(Path(os.path.abspath(path)))
            return
        declaration = ls.declaration_for(path) if path.endswith(PYTHON_SUFFIXES) else None
        if declaration is not None:
            declaration.saved(path)  # on disk now: a file created by this save resolves
        ls.push(uri)
        ls.unsent(uri)
        if declaration is not None:
            ls.sweep(ls.affected([path]))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: ContractsServer, params: types.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        handle = ls._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        ls.results.pop(uri, None)
        path = to_fs_path(uri)
        if path and path.endswith(PYTHON_SUFFIXES):
            declaration = ls.declaration_for(path)
            if declaration is not None:
                declaration.forget(path)  # its neighbours now see the file on disk
        ls.publish(uri, [], None)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded()
    def watched(ls: ContractsServer, params: types.DidChangeWatchedFilesParams):
        python_changed: list[str] = []
        for change in params.changes:
            path = to_fs_path(change.uri)
            if not path:
                continue
            if os.path.basename(path) == PYPROJECT:
                ls.reload(Path(os.path.abspath(path)))
            elif path.endswith(PYTHON_SUFFIXES) and change.uri not in ls.workspace.text_documents:
                declaration = ls.declaration_for(path)
                if declaration is not None:
                    declaration.forget(path)
                    python_changed.append(path)
        if python_changed:
            ls.sweep(ls.affected(python_changed))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    @guarded()
    def folders_changed(ls: ContractsServer, params: types.DidChangeWorkspaceFoldersParams):
        for folder in params.event.removed or ():
            path = to_fs_path(folder.uri)
            if path:
                gone = [p for p in ls.declarations if Path(path) in (p.parent, *p.parents)]
                for pyproject in gone:
                    ls.drop(pyproject)
        ls._governing.clear()
        ls._workspace_declarations()

    settings.register(server)
    diagnostics.register(server)
    actions.register(server)
    return server


class _NoTracebackForTooDeep(logging.Filter):
    """pygls logs each message it cannot read with its traceback; one nested too
    deeply is a bad message, not a bug, and ``report_server_error`` names it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], RecursionError))


def _end_on_interrupt(signum, frame) -> None:
    """Ctrl-C: exit 130 now.

    pygls catches the KeyboardInterrupt and then shuts its thread pool down
    waiting, with no time limit, for the thread reading stdin -- which waits
    for the editor's next message, so a server on a terminal never ended (and
    interpreter exit would join that thread too). The server writes no file
    and starts no process (an edit is sent to the editor, which applies it),
    so leaving at once loses nothing: what it logged and sent is flushed first.
    """
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, broken, or mid-write in this thread
            stream.flush()
    with contextlib.suppress(Exception):
        logging.shutdown()  # a --log-file's last lines
    os._exit(130)


def serve() -> int:
    logging.getLogger("pygls.server").addFilter(_NoTracebackForTooDeep())
    import gc

    # No full collection started by the allocation count: the server runs one when the
    # editor pauses (ContractsServer.collect_when_idle). The young generations run as set.
    young, middle, _old = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTIONS_NEVER)
    server = create_server()
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:  # started ignoring it: go on so
        signal.signal(signal.SIGINT, _end_on_interrupt)
    server.input = Input(sys.stdin)
    server.start_io(stdin=server.input)
    return 0
