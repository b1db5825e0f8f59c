"""What the server knows about each declaration: its config, its linter, its last error.

Nothing here speaks LSP, and nothing imports pygls: this is the checker's
side of the server, driven by ``hooks.lsp.server`` and by
``bench/server_latency.py`` directly.

A file is governed by the nearest ``pyproject.toml`` above it that declares
``[tool.atom-contracts]`` -- the CLI's rule, so an editor and CI never
disagree about which contracts hold for a file. Each such declaration is a
``Declaration`` with one long-lived ``Linter``: its project index keeps the
parse and the imports of every neighbour a cross-file contract has read, and
is told when one file changes (``Linter.source_changed``), so a keystroke
re-reads nothing but the buffer typed in. Several workspace folders, or a
monorepo with a declaration per package, are simply several declarations.

A declaration that does not load is kept as its error: the server reports it
on the pyproject and checks nothing under it until it loads again, and is
never taken down by it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from contracts.fields import HINT, ConfigError
from contracts.finding import Finding

PYPROJECT = "pyproject.toml"
# What find_pyproject's own text test looks for before it parses a candidate.
_DECLARES = b"atom-contracts"


def declaring_pyproject(path: str | os.PathLike[str]) -> Path | None:
    """The pyproject governing ``path``: the nearest at or above it that names the tool.

    Found by the same text test ``contracts.config.find_pyproject`` makes
    before parsing, so a pyproject whose TOML is broken is still found -- it
    is the one to report the error on.
    """
    here = Path(os.path.abspath(path))
    if here.name == PYPROJECT or not here.is_dir():
        here = here.parent
    for directory in (here, *here.parents):
        candidate = directory / PYPROJECT
        try:
            data = candidate.read_bytes()
        except OSError:
            continue
        if _DECLARES in data:
            return candidate
    return None


class Declaration:
    """One ``[tool.atom-contracts]`` table and the linter that checks files under it."""

    def __init__(self, pyproject: Path) -> None:
        self.pyproject = pyproject
        self.root = pyproject.parent
        self.config = None
        self.linter = None
        self.error: str | None = None
        # abspath -> the SourceFile of its buffer's last check: the next
        # keystroke's tree is spliced from it (checkers.incremental).
        self._buffers: dict[str, object] = {}
        self._lines: dict[str, int] = {}  # abspath -> lines of its buffer's last check
        self.load()

    def load(self) -> bool:
        """(Re)read the declaration; False, with ``error`` set, when it does not load."""
        from checkers.api import load_config, selection_for
        from checkers.linter import Linter

        try:
            # No cache: the server reads the file once per change, and an editor
            # should not be what writes .atom-contracts-cache/ into a checkout.
            config = load_config(self.pyproject, config_file=self.pyproject, use_cache=False)
            linter = Linter(config, selection_for(config))
        except ConfigError as exc:
            self.config, self.linter, self.error = None, None, str(exc)
            return False
        self.config, self.linter, self.error = config, linter, None
        self._buffers.clear()
        return True

    def relative(self, path: str) -> str:
        from checkers.discovery import relative

        return relative(os.path.abspath(path), self.root)

    def check(self, path: str, text: str, *, buffer: bool = False) -> list[Finding]:
        """``text`` checked as the file at ``path``; nothing when the declaration is broken.

        ``buffer``: an open document's text, typed into: its tree is kept, and
        the next check's is spliced from it where the edit allows.
        """
        if self.config is None:
            return []
        from checkers.analysis.memo import KEEP_LINES
        from checkers.api import check_source
        from checkers.incremental import successor

        abspath = os.path.abspath(path)
        rel = self.relative(abspath)
        previous = self._buffers.pop(abspath, None) if buffer else None
        source = successor(previous, rel, text, os.path.join(self.config.root, rel))
        del previous  # a huge buffer's last tree is let go before this one is parsed
        findings = check_source(source, self.config, linter=self.linter)
        self._keep_summaries()
        if buffer:
            self._lines[abspath] = len(source.lines)
        if buffer and len(source.lines) <= KEEP_LINES:
            # Kept to splice the next keystroke's tree from. A huge buffer is not: its
            # tree (~3 KB a line) would stay for as long as the document is open, and
            # every full collection of the server's heap would walk it.
            self._buffers[abspath] = source
        return findings

    def _keep_summaries(self) -> None:
        """What this check summarised of other files, kept for the next one.

        A change to a buffer drops the index's ``Program`` (its summaries of
        every module it loaded may depend on the changed file), and the server
        writes no cache, so each keystroke re-parsed every neighbour a
        cross-file kind reads -- a dozen modules, most of a keystroke's time on
        a 3,000-line buffer. The summaries go where the CLI's cache puts them,
        ``project.summaries``, each under the size, mtime and digest of the bytes
        it was made from: a neighbour changed on disk no longer matches and is
        parsed again, and an unsaved buffer is never summarised from.
        """
        project = self.linter.project
        from checkers.analysis.program import keep_details

        keep_details(project)
        if project.new_summaries:
            project.summaries.update(project.new_summaries)
            project.new_summaries = {}

    def check_detached(self, path: str, text: str) -> list[Finding]:
        """``text`` checked by a throwaway linter: for trial texts (a fix's passes) that
        must not become what the long-lived index believes the file holds."""
        if self.config is None:
            return []
        from checkers.api import check_text

        return check_text(path, text, self.config)

    def forget(self, path: str) -> None:
        """The buffer of ``path`` closed, or the file changed on disk: read it from disk again,
        and let go of what was worked out from its tree (the analyses' per-statement memos
        hold the last tree checked, which may be this one)."""
        from checkers.analysis.memo import KEEP_LINES, forget_all

        abspath = os.path.abspath(path)
        self._buffers.pop(abspath, None)
        forget_all()
        if self.linter is not None:
            self.linter.source_changed(abspath, None)
        if self._lines.pop(abspath, 0) > KEEP_LINES:
            _return_freed_memory()

    def saved(self, path: str) -> None:
        """The buffer of ``path`` is on disk now: path lookups see it (a file the save
        created resolves from now on); the buffer, and the tree kept for it, stay."""
        if self.linter is not None:
            self.linter.source_changed(os.path.abspath(path), None)

    def project_files(self) -> list[tuple[str, str]]:
        """(relative, absolute) of every file the CLI would check here."""
        if self.config is None:
            return []
        from checkers.discovery import discover

        return discover([], self.config)

    def cross_file_paths(self) -> list[str]:
        """Absolute paths of the files a cross-file contract (not ``CACHEABLE``) applies to.

        Their findings depend on other files, so a save anywhere may change them.
        """
        if self.linter is None:
            return []
        volatile = [c for c in self.linter.contracts if not c.CACHEABLE]
        if not volatile:
            return []
        return [
            abspath
            for rel, abspath in self.project_files()
            if any(c.applies_to(rel) for c in volatile)
        ]

    def undecodable(self, abspath: str) -> Finding | None:
        """The file's AC001 when its bytes on disk are not Python source (a binary, Latin-1
        with no cookie), worded as ``atom-contracts check`` words it; None when they are,
        or when there is no file to read."""
        from checkers.linter import uncheckable
        from checkers.source import DecodeError, decode_source, read_regular

        try:
            decode_source(read_regular(abspath))
        except OSError:
            return None
        except DecodeError as exc:
            return uncheckable(self.relative(abspath), f"cannot be decoded: {exc}")
        return None

    def disk_findings(self, abspath: str) -> tuple[list[Finding], str] | None:
        """(findings, text) of the file on disk as the CLI would check it, its AC001 when it
        does not decode; None when it cannot be read (gone, not a regular file)."""
        text = self.disk_text(abspath)
        if text is not None:
            return self.check(abspath, text), text
        refused = self.undecodable(abspath)
        return ([refused], "") if refused is not None else None

    def disk_text(self, abspath: str) -> str | None:
        """A file's text as the project index holds it (read and decoded once)."""
        if self.linter is None:
            return None
        source = self.linter.project.read_source(abspath)
        return source.text if source is not None else None


def _return_freed_memory() -> None:
    """Give the memory a closed huge buffer held back to the system.

    Its objects are freed when the document closes, but glibc keeps freed heap
    memory for the process to reuse: a 100,000-line buffer's check left the
    server's resident set at 187 MB after its close, 56 MB after ``malloc_trim``
    (from 23 MB before it opened). A collection first, for what its analysis
    left in cycles. Elsewhere than glibc there is nothing to call.
    """
    import ctypes
    import gc
    from contextlib import suppress

    gc.collect()
    with suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


_LINE = re.compile(r"\bline (\d+)")
_NAMED = re.compile(r"`([^`]+)`|'([^']+)'|\"([^\"]+)\"")


def error_line(message: str, text: str) -> int:
    """0-based line of ``text`` (the pyproject) that a ConfigError ``message`` points at.

    TOML errors say ``(at line N, column M)``; table errors name the key or
    value (`` `select` ``, ``'AC9'``): the first line spelling the last name
    mentioned is where the reader has to look. Line 0 when nothing matches.
    """
    found = _LINE.search(message)
    lines = text.splitlines()
    if found:
        return max(min(int(found.group(1)), len(lines)) - 1, 0)
    # The hint after a near miss names what the file does not spell: not a place.
    said = message.partition(HINT)[0]
    names = [next(g for g in m.groups() if g) for m in _NAMED.finditer(said)]
    start = next((i for i, line in enumerate(lines) if "atom-contracts" in line), 0)
    for name in reversed(names):
        for i in range(start, len(lines)):
            if name in lines[i]:
                return i
    return start
