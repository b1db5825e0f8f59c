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
import functools
import hashlib
import logging
import os
import signal
import sys
import time
import traceback
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import from_fs_path, to_fs_path

from checkers.codes import CHECKER_FAILED, CONFIG_ERROR
from contracts.finding import Finding

from . import convert
from .folders import PYPROJECT, Declaration, declaring_pyproject, error_line
from .reading import Input

log = logging.getLogger(__name__)

NAME = "atom-contracts"
DEBOUNCE_S = 0.0  # chosen by bench/server_latency.py --table: docs/editors.md, "The debounce"
HOLD_S = 0.001  # a due check's wait, again and again, while sent messages are unread
MAX_HOLD_S = 0.1
IDLE_COLLECT_S = 1.0  # quiet after the last push before a full collection (collect_when_idle)
FULL_COLLECTIONS_NEVER = 2**31 - 1  # the collector's third threshold, never reached
PLACE_CURSOR = "atom-contracts.placeCursor"
_PYTHON_SUFFIXES = (".py", ".pyi")


MODES = ("auto", "push", "pull")
MAX_DEBOUNCE_MS = 10_000


def settings_problems(table: dict, *, ours: bool) -> tuple[dict, list[str]]:
    """The valid settings of ``table`` and a sentence naming each bad one.

    ``ours``: the table is the server's own (its ``initializationOptions``, its
    section), so a key it does not know is named too; a client's whole
    settings object may hold other servers' sections beside ours.
    """
    good: dict = {}
    problems: list[str] = []
    for key, value in table.items():
        if key == "diagnosticMode":
            if value in MODES:
                good[key] = value
            else:
                problems.append(
                    f"diagnosticMode must be one of {', '.join(map(repr, MODES))}, not {value!r}"
                )
        elif key == "debounceMs":
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if number and 0 <= value <= MAX_DEBOUNCE_MS:
                good[key] = value
            else:
                problems.append(
                    f"debounceMs must be a number of milliseconds from 0 to {MAX_DEBOUNCE_MS}, "
                    f"not {value!r}"
                )
        elif ours:
            problems.append(
                f"unknown setting {key!r} (the settings are diagnosticMode, debounceMs)"
            )
    return good, problems


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("atom-contracts")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def guarded(default=None):
    """Run a handler; an exception becomes a log message and ``default`` (never an
    internal error in the client's face)."""

    def wrap(handler):
        @functools.wraps(handler)
        def run(ls, *params):
            try:
                return handler(ls, *params)
            except Exception as exc:
                ls.log(
                    types.MessageType.Error,
                    f"{handler.__name__} failed: {type(exc).__name__}: {exc}\n"
                    + traceback.format_exc(),
                )
                return default() if callable(default) else default
            finally:
                with contextlib.suppress(Exception):
                    ls.collect_when_idle()  # every message from the editor defers it

        return run

    return wrap


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


class ContractsServer(LanguageServer):
    """The server's state: declarations, last results per document, what was published."""

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

    # -- checking ----------------------------------------------------------

    def text_of(self, uri: str) -> str | None:
        """The buffer's text; for a document the client never opened (a pull, a hover
        before the open), the file's on disk, decoded as Python decodes it (BOM, coding
        cookie); None when there is no such file or Python would refuse its bytes."""
        if uri in self.workspace.text_documents:
            return self.workspace.get_text_document(uri).source
        from checkers.source import DecodeError, decode_source, read_regular

        path = to_fs_path(uri)
        try:
            return decode_source(read_regular(path)) if path else None
        except (OSError, DecodeError):
            return None

    def check_document(self, uri: str) -> list[Finding]:
        """The findings of the buffer as it is now (cached per document version).

        A file whose bytes are not Python source is its AC001, as on the
        command line, whether the client could not send it (Emacs cannot
        put raw bytes into JSON, so it never opens it here and asks about its
        URI alone) or sent its own lossy reading of it (U+FFFD where it could
        not decode: the text the file would be saved as, not the file).
        """
        document = self.workspace.get_text_document(uri)
        cached = self.results.get(uri)
        if cached is not None and cached[0] == document.version and document.version is not None:
            return cached[1]
        path = document.path
        findings: list[Finding] = []
        if path and path.endswith(_PYTHON_SUFFIXES):
            declaration = self.declaration_for(path)
            if declaration is not None and declaration.config is not None:
                opened = uri in self.workspace.text_documents
                text = self.text_of(uri)
                refused = None
                if text is None or (opened and "\ufffd" in text):
                    refused = declaration.undecodable(os.path.abspath(path))
                if refused is not None:
                    findings = [refused]
                elif text is not None:
                    findings = self.logged(declaration.check(path, text, buffer=opened))
        self.results[uri] = (document.version, findings)
        return findings

    def unsent(self, uri: str) -> None:
        """A document the client asks about (a hover, code actions, a save) but never
        opened: the one the client could not send, a file it cannot decode, gets its
        AC001 pushed; once it decodes, that AC001 is cleared."""
        if uri in self.workspace.text_documents or not self.pushing:
            return
        path = to_fs_path(uri) or ""
        declaration = self.declaration_for(path) if path.endswith(_PYTHON_SUFFIXES) else None
        if declaration is None or declaration.config is None:
            return
        refused = declaration.undecodable(os.path.abspath(path))
        findings = [refused] if refused is not None else []
        self.publish(uri, convert.diagnostics(findings, "", self.workspace.position_codec), None)

    def logged(self, findings: list[Finding]) -> list[Finding]:
        """A contract that crashed is the file's AC002 (the linter's doing: the other
        contracts still report); the server's log says so too, where a bug report starts."""
        for f in findings:
            if f.code == CHECKER_FAILED:
                self.log(types.MessageType.Error, f"{f.path}: {f.message}")
        return findings

    def diagnostics_of(self, uri: str) -> list[types.Diagnostic]:
        findings = self.check_document(uri)
        text = self.text_of(uri) or ""
        return convert.diagnostics(findings, text, self.workspace.position_codec)

    @property
    def pushing(self) -> bool:
        if self.mode in ("push", "pull"):
            return self.mode == "push"
        caps = self.client_capabilities.text_document
        return caps is None or caps.diagnostic is None

    def publish(
        self,
        uri: str,
        diagnostics: list[types.Diagnostic],
        version,
        *,
        force: bool = False,
        checked: bool = False,
    ) -> None:
        """Push diagnostics (only to a client that does not pull, unless ``force``:
        a broken pyproject is not a document the client will ask about).

        An empty list goes out only to clear what was pushed before, or when
        ``checked``: an open buffer's version was checked and holds nothing,
        which a client (and bench/server_latency.py) can tell from silence.
        """
        if not (self.pushing or force):
            return
        if not diagnostics and uri not in self.published and not checked:
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )
        if diagnostics:
            self.published.add(uri)
        else:
            self.published.discard(uri)

    def push(self, uri: str) -> None:
        self._pending.pop(uri, None)
        changed_at = self._changed_at.pop(uri, None)
        if uri not in self.workspace.text_documents:
            return
        started = time.perf_counter()
        document = self.workspace.get_text_document(uri)
        from checkers.linter import collector_off

        # The collector waits until the diagnostics are written: what the check
        # allocated would otherwise be walked between its last contract and the write.
        with collector_off():
            diagnostics = self.diagnostics_of(uri)
            # Stamped before the write: the client reads the diagnostics after this, as
            # it sent the change before the change's stamp, so the interval logged lies
            # inside the client's round trip. Stamped after the write, it took in
            # whatever ran before this process was scheduled again -- on a busy machine,
            # longer than the client took to read the message.
            ready = time.perf_counter()
            self.publish(uri, diagnostics, document.version, checked=True)
        self.collect_when_idle()
        if changed_at is not None and log.isEnabledFor(logging.DEBUG):
            log.debug(
                "pushed %s v%s: %d diagnostics %.2f ms after its change (%.2f ms checking)",
                uri,
                document.version,
                len(diagnostics),
                (ready - changed_at) * 1000,
                (ready - started) * 1000,
            )

    def schedule(self, uri: str) -> None:
        """Check after ``debounce_s`` of quiet: a burst of keystrokes costs one check."""
        import asyncio

        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.push(uri)
            return
        self._pending[uri] = loop.call_later(self.debounce_s, self._push_guarded, uri)

    def collect_when_idle(self) -> None:
        """A full collection once the editor has been quiet for ``IDLE_COLLECT_S``.

        ``serve`` leaves the collector's young generations to run as usual but
        never starts a full collection itself: one walks every object the server
        holds -- pygls's and lsprotocol's types, each open buffer's tree, the
        neighbours' summaries -- 20-60 ms on a 3,000-line buffer, and started by
        whichever allocation tipped the count, it landed inside a keystroke's
        check. A pause in typing is where it costs no one. Cycles mostly die
        young and the young generations still collect them; what lives past
        them waits for the pause.
        """
        import asyncio

        if self._idle_collection is not None:
            self._idle_collection.cancel()
            self._idle_collection = None
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # not serving (a test driving the server in-process): nothing to defer
        self._idle_collection = loop.call_later(IDLE_COLLECT_S, self._collect_idle)

    def _collect_idle(self) -> None:
        self._idle_collection = None
        if self._pending:  # a check is due sooner: after it
            return
        import gc

        gc.collect()

    def _push_guarded(self, uri: str, held_since: float | None = None) -> None:
        """The debounced check, once the editor's messages already sent are handled.

        A change read after this one was scheduled cancels it and schedules its
        own; one sent but not read yet (``reading.Input.pending``) would be
        read only after this check, so the check waits for it, ``HOLD_S`` at a
        time, at most ``MAX_HOLD_S`` (a stream of other messages must not
        starve it).
        """
        import asyncio

        if self.input is not None and self.input.pending():
            loop = asyncio.get_running_loop()
            held_since = loop.time() if held_since is None else held_since
            if loop.time() - held_since < MAX_HOLD_S:
                self._pending[uri] = loop.call_later(HOLD_S, self._push_guarded, uri, held_since)
                return
        try:
            self.push(uri)
        except Exception as exc:
            self.log(types.MessageType.Error, f"checking {uri} failed: {exc}")

    # -- settings ---------------------------------------------------------

    def configure(self, settings, *, where: str) -> None:
        """Apply ``diagnosticMode`` and ``debounceMs`` from ``settings``; each bad value is
        named in a warning and the others still apply.

        ``settings`` is the server's own table (``initializationOptions``) or a
        client's settings object, where the server's table is the
        ``atom-contracts`` section (Neovim's ``settings``, eglot's
        ``eglot-workspace-configuration``) or the object itself (Helix sends its
        ``config`` table).
        """
        if settings is None:
            return
        if not isinstance(settings, dict):
            self.warn(f"{where}: expected a table of settings, not {settings!r}")
            return
        section = settings.get(NAME)
        if isinstance(section, dict):
            good, problems = settings_problems(section, ours=True)
        else:
            good, problems = settings_problems(settings, ours=where == "initializationOptions")
        for problem in problems:
            self.warn(f"{where}: {problem}; ignored")
        if "debounceMs" in good:
            self.set_debounce(good["debounceMs"] / 1000)
        if "diagnosticMode" in good:
            self.set_mode(good["diagnosticMode"])

    def warn(self, message: str) -> None:
        self.log(types.MessageType.Warning, f"{NAME}: {message}")

    def set_debounce(self, seconds: float) -> None:
        """The new debounce, for the next keystroke and for the checks already waiting
        (each now due ``seconds`` after its change, or at once if that has passed)."""
        import asyncio

        old, self.debounce_s = self.debounce_s, seconds
        if old == seconds or not self._pending:
            return
        loop = asyncio.get_running_loop()
        for uri, handle in list(self._pending.items()):
            handle.cancel()
            due = max(handle.when() - old + seconds, loop.time())
            self._pending[uri] = loop.call_at(due, self._push_guarded, uri)

    def set_mode(self, mode: str) -> None:
        """Push or pull from now on: moving to pull withdraws what was pushed (a pulling
        client would show it twice) and asks the client to pull; moving to push pushes
        every open buffer and every unopened file holding a cross-file finding."""
        was = self.pushing
        self.mode = mode
        if self.pushing == was:
            return
        if not self.pushing:
            broken = {from_fs_path(str(d.pyproject)) for d in self.declarations.values() if d.error}
            for uri in list(self.published - broken):
                self.publish(uri, [], None, force=True)
            self.refresh()
            return
        self.recheck_open()
        codec = self.workspace.position_codec
        for uri, findings in list(self.swept.items()):
            path = to_fs_path(uri)
            declaration = self.declaration_for(path) if path else None
            text = (declaration.disk_text(path) if declaration else None) or ""
            self.publish(uri, convert.diagnostics(findings, text, codec), None)

    def ask_settings(self) -> None:
        """Ask a client that answers ``workspace/configuration`` for the server's section
        (VS Code's client sends a change with no settings in it, and answers this)."""
        caps = self.client_capabilities.workspace
        if caps is None or not caps.configuration:
            return

        def answered(future) -> None:
            if future.cancelled() or future.exception() is not None:
                return  # the client would not say: the settings stay as they are
            result = future.result()
            if result:
                self.configure(result[0], where="workspace/configuration")

        future = self.workspace_configuration(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=NAME)])
        )
        future.add_done_callback(answered)

    def recheck_open(self) -> None:
        for uri in list(self.workspace.text_documents):
            self.push(uri)

    def affected(self, edited: list[str]) -> list[tuple[Declaration, str]]:
        """The files, open or not, whose findings a change of the ``edited`` paths can change.

        Those ``checkers.dependents`` names (a test whose import chain now runs
        through an edited module to the optional dependency, a leaf member
        importing what was edited: asked of the import summaries, nothing
        parsed), and those holding a cross-file finding now -- the change may
        be what fixes it, and no import chain leads there any more to say so.
        """
        from checkers.dependents import dependent_files

        by_declaration: dict[Path, list[str]] = {}
        for path in edited:
            declaration = self.declaration_for(path)
            if declaration is not None and declaration.linter is not None:
                by_declaration.setdefault(declaration.pyproject, []).append(os.path.abspath(path))
        holding: list[str] = [p for p in (to_fs_path(u) for u, f in self.swept.items() if f) if p]
        holding += [
            document.path
            for uri, document in list(self.workspace.text_documents.items())
            if document.path and self.results.get(uri, (None, []))[1]
        ]
        out: list[tuple[Declaration, str]] = []
        for pyproject, paths in by_declaration.items():
            declaration = self.declarations[pyproject]
            linter = declaration.linter
            pairs = [(declaration.relative(p), p) for p in paths]
            found = dict.fromkeys(abspath for _r, abspath, _a, _p in dependent_files(linter, pairs))
            volatile = {c.id for c in linter.contracts if not c.CACHEABLE}
            for path in holding:
                abspath = os.path.abspath(path)
                if self.declaration_for(abspath) is not declaration or abspath in found:
                    continue
                uri = from_fs_path(abspath)
                held = self.swept.get(uri) or self.results.get(uri, (None, []))[1]
                if any(f.contract in volatile for f in held):
                    found[abspath] = None
            out += [(declaration, a) for a in found if a not in paths]
        return out

    def sweep(self, files: list[tuple[Declaration, str]] | None = None) -> None:
        """Re-check ``files`` (default: every file a cross-file contract applies to), open or not.

        Open buffers are re-checked as typed; unopened files from the
        project index (which reads each once). What changed is pushed to a
        pushing client -- an empty list when a finding went away -- and a
        pulling one is asked to pull again.
        """
        open_paths = {
            os.path.abspath(d.path): uri
            for uri, d in self.workspace.text_documents.items()
            if d.path
        }
        if files is None:
            files = [
                (declaration, abspath)
                for declaration in list(self.declarations.values())
                if declaration.config is not None
                for abspath in declaration.cross_file_paths()
            ]
        changed = False
        for declaration, abspath in files:
            if declaration.config is None:
                continue
            uri = open_paths.get(abspath)
            if uri is not None:
                before = self.results.get(uri, (None, None))[1]
                self.results.pop(uri, None)
                if self.check_document(uri) != before:
                    changed = True
                    self.push(uri)
                continue
            text = declaration.disk_text(abspath)
            uri = from_fs_path(abspath)
            findings = [] if text is None else self.logged(declaration.check(abspath, text))
            if findings != self.swept.get(uri, []):
                changed = True
                if findings:
                    self.swept[uri] = findings
                else:
                    self.swept.pop(uri, None)
                self.publish(
                    uri,
                    convert.diagnostics(findings, text or "", self.workspace.position_codec),
                    None,
                )
        if changed and not self.pushing:
            self.refresh()

    def refresh(self) -> None:
        caps = self.client_capabilities.workspace
        if caps is not None and caps.diagnostics is not None and caps.diagnostics.refresh_support:
            with contextlib.suppress(Exception):
                self.workspace_diagnostic_refresh(None)

    # -- workspace diagnostics --------------------------------------------

    def workspace_reports(self, previous: dict[str, str]) -> list:
        """Every governed file's report: open buffers as typed, the rest from disk."""
        reports: list = []
        seen: set[str] = set()
        codec = self.workspace.position_codec
        for uri, document in list(self.workspace.text_documents.items()):
            if not (document.path or "").endswith(_PYTHON_SUFFIXES):
                continue
            findings = self.check_document(uri)
            seen.add(os.path.abspath(document.path))
            reports.append(
                self._report(
                    uri,
                    findings,
                    document.source,
                    document.version,
                    previous,
                    codec,
                )
            )
        for declaration in self._workspace_declarations():
            if declaration.config is None:
                continue
            for _rel, abspath in declaration.project_files():
                if abspath in seen:
                    continue
                seen.add(abspath)
                checked = declaration.disk_findings(abspath)
                if checked is None:
                    continue
                findings, text = checked
                uri = from_fs_path(abspath)
                reports.append(
                    self._report(uri, self.logged(findings), text, None, previous, codec)
                )
        return reports

    def _workspace_declarations(self) -> list[Declaration]:
        for folder in list(self.workspace.folders.values()):
            path = to_fs_path(folder.uri)
            if path:
                pyproject = Path(path) / PYPROJECT
                if declaring_pyproject(pyproject) == pyproject:
                    self.declaration_for(str(pyproject))
        return list(self.declarations.values())

    @staticmethod
    def _report(uri, findings, text, version, previous, codec):
        result_id = _result_id(findings)
        if previous.get(uri) == result_id:
            return types.WorkspaceUnchangedDocumentDiagnosticReport(
                uri=uri, result_id=result_id, version=version
            )
        return types.WorkspaceFullDocumentDiagnosticReport(
            uri=uri,
            items=convert.diagnostics(findings, text, codec),
            version=version,
            result_id=result_id,
        )


def _result_id(findings: list[Finding]) -> str:
    digest = hashlib.blake2b(digest_size=8)
    for f in findings:
        digest.update(repr((*f.sort_key(), f.end_line, f.end_column)).encode())
    return digest.hexdigest()


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
        declaration = ls.declaration_for(path) if path.endswith(_PYTHON_SUFFIXES) else None
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
        if path and path.endswith(_PYTHON_SUFFIXES):
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
            elif path.endswith(_PYTHON_SUFFIXES) and change.uri not in ls.workspace.text_documents:
                declaration = ls.declaration_for(path)
                if declaration is not None:
                    declaration.forget(path)
                    python_changed.append(path)
        if python_changed:
            ls.sweep(ls.affected(python_changed))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    def settings_changed(ls: ContractsServer, params: types.DidChangeConfigurationParams):
        settings = params.settings
        if settings is None or settings == {}:
            ls.ask_settings()  # the change says only that something changed
        else:
            ls.configure(settings, where="workspace/didChangeConfiguration")

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

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=NAME, inter_file_dependencies=True, workspace_diagnostics=True
        ),
    )
    @guarded(lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    def pull(ls: ContractsServer, params: types.DocumentDiagnosticParams):
        uri = params.text_document.uri
        findings = ls.check_document(uri)
        result_id = _result_id(findings)
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=ls.diagnostics_of(uri), result_id=result_id
        )

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    @guarded(lambda: types.WorkspaceDiagnosticReport(items=[]))
    def pull_workspace(ls: ContractsServer, params: types.WorkspaceDiagnosticParams):
        previous = {p.uri: p.value for p in params.previous_result_ids or ()}
        return types.WorkspaceDiagnosticReport(items=ls.workspace_reports(previous))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[
                types.CodeActionKind.QuickFix,
                convert.FIX_ALL_KIND,
            ]
        ),
    )
    @guarded(list)
    def code_action(ls: ContractsServer, params: types.CodeActionParams):
        from .actions import code_actions

        ls.unsent(params.text_document.uri)
        return code_actions(ls, params)

    @server.command(PLACE_CURSOR)
    @guarded()
    def place_cursor(ls: ContractsServer, *args):
        from .actions import place_cursor as place

        place(ls, args)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def hover(ls: ContractsServer, params: types.HoverParams):
        uri = params.text_document.uri
        ls.unsent(uri)
        findings = ls.check_document(uri)
        positions = convert.Positions(ls.text_of(uri) or "", ls.workspace.position_codec)
        at = positions.from_lsp(params.position)
        hits = [f for f in findings if convert.touches(f, at, at)]
        if not hits:
            return None
        return types.Hover(
            contents=convert.hover(hits, convert.hover_kind(ls.client_capabilities)),
            range=positions.of(hits[0]),
        )

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
