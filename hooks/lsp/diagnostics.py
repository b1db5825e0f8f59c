"""Checking documents and reporting what was found: pushed, pulled, and swept across files.

Pushed (``publishDiagnostics`` on open, on change once the changes already
sent are read and ``DEBOUNCE_S`` of quiet has passed, and on save) to a
client that does not pull; pulled (``textDocument/diagnostic``,
``workspace/diagnostic``) by one that can. A save re-checks the files whose
findings depend on other files, open or not (``affected``, ``sweep``).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import time
from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from checkers.codes import CHECKER_FAILED
from contracts.finding import Finding

from . import convert
from .folders import PYPROJECT, Declaration, declaring_pyproject
from .guard import guarded
from .settings import NAME

log = logging.getLogger(__name__)

DEBOUNCE_S = 0.0  # chosen by bench/server_latency.py --table: docs/editors.md, "The debounce"
HOLD_S = 0.001  # a due check's wait, again and again, while sent messages are unread
MAX_HOLD_S = 0.1
IDLE_COLLECT_S = 1.0  # quiet after the last push before a full collection (collect_when_idle)
FULL_COLLECTIONS_NEVER = 2**31 - 1  # the collector's third threshold, never reached
PYTHON_SUFFIXES = (".py", ".pyi")


class Diagnostics:
    """The checking half of ``ContractsServer``: each document's findings, and where they go."""

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
        if path and path.endswith(PYTHON_SUFFIXES):
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
        declaration = self.declaration_for(path) if path.endswith(PYTHON_SUFFIXES) else None
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
            if not (document.path or "").endswith(PYTHON_SUFFIXES):
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


def register(server) -> None:
    """The pulls: one document's report, and every governed file's."""

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=NAME, inter_file_dependencies=True, workspace_diagnostics=True
        ),
    )
    @guarded(lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    def pull(ls, params: types.DocumentDiagnosticParams):
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
    def pull_workspace(ls, params: types.WorkspaceDiagnosticParams):
        previous = {p.uri: p.value for p in params.previous_result_ids or ()}
        return types.WorkspaceDiagnosticReport(items=ls.workspace_reports(previous))
