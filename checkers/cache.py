"""Per-file results keyed by the file's bytes, the declaration and the checker.

One file per cache key under ``.atom-contracts-cache/`` at the project root,
mapping each path to ``(size, mtime_ns, digest, findings, directives,
tree_findings)``. A
warm run trusts ``(size, mtime_ns)`` and reads nothing; a changed stat falls
back to the content digest, so touching a file (a checkout, a formatter that
changed nothing) costs a read and a hash but not a check. A file modified in
the same second it was cached is stored without its stat, so an edit inside
one mtime tick that keeps the size cannot be served stale (git's "racy"
index problem).

A contract that is not ``CACHEABLE`` has findings that depend on other
files (an import chain), so one file's bytes cannot vouch for them. They are
stored too, with a *tree stamp*: a digest of every checked file's path, size
and mtime, taken only when the run covered every src root. The next run
reuses them only if its own stamp is identical -- nothing anywhere in the
tree changed -- which is the warm CI and benchmark case; any edit, and any
run over part of the tree (pre-commit's handful of files), recomputes them.
Suppressions are applied after the cache, so the stored findings never
depend on which codes a run selected beyond the key.

Beside the findings, each file's import summary (``checkers.project.
summarise``: its imports, relative names resolved, as plain tuples) is kept
under the same ``(size, mtime_ns, digest)`` proof. A chain through an
unchanged file then reads the summary instead of parsing the file, which is
what lets ``check FILE`` re-check the tests an edit can fail elsewhere
(``checkers.dependents``) without parsing the tree.

The checker's part of the key digests its modules' bytes, not their stats:
a fresh clone (CI restoring the folder with actions/cache) gives every file a
new mtime, and a stat key would miss there every time.

marshal rather than pickle or json: the entries are tuples of str and int,
and marshal loads them several times faster than either, which is most of
what a warm whole-tree run does.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

from contracts.finding import Edit, Finding, Fix

CACHE_DIR = ".atom-contracts-cache"
_KEEP_FILES = 8  # other keys' files kept: a couple of selections and configs in rotation
_RACY_SECONDS = 2
_FINGERPRINT_FILE = "checker.fingerprint"  # not *.marshal: _prune keeps those to _KEEP_FILES


def finding_to_tuple(f: Finding) -> tuple:
    fix = None
    if f.fix is not None:
        fix = (
            f.fix.message,
            f.fix.applicability,
            tuple((e.line, e.column, e.end_line, e.end_column, e.content) for e in f.fix.edits),
        )
    return (
        f.code,
        f.contract,
        f.kind,
        f.path,
        f.line,
        f.column,
        f.end_line,
        f.end_column,
        f.message,
        fix,
        f.span_lines,
    )


def finding_from_tuple(t: tuple) -> Finding:
    code, contract, kind, path, line, column, end_line, end_column, message, fix, span = t
    if fix is not None:
        fix = Fix(message=fix[0], applicability=fix[1], edits=tuple(Edit(*e) for e in fix[2]))
    return Finding(
        code, contract, kind, path, line, column, end_line, end_column, message, fix, tuple(span)
    )


def checker_fingerprint(directory: Path | None = None) -> str:
    """A digest of the checker's own modules' bytes: a new version or an edited rule misses.

    Their bytes, not their stats, so a fresh clone in CI -- every mtime new --
    computes the same key as the run that saved the cache it restored. Reading
    the ~35 modules costs ~2 ms, so the digest is remembered in ``directory``
    (the cache folder) under their (name, size, mtime): a warm local run
    stats them, as before, and reads one line.
    """
    from contracts.config import blake2b

    here = Path(__file__).resolve().parent
    modules: list[tuple[str, str, os.stat_result]] = []
    for folder in (here, here / "rules", here.parent / "contracts"):
        try:
            with os.scandir(folder) as it:
                for entry in sorted(it, key=lambda e: e.name):
                    if entry.name.endswith(".py"):
                        modules.append((f"{folder.name}/{entry.name}", entry.path, entry.stat()))
        except FileNotFoundError:
            continue
    stats = [sys.version] + [f"{name}:{st.st_size}:{st.st_mtime_ns}" for name, _, st in modules]
    stat_key = blake2b("\n".join(stats).encode(), digest_size=16).hexdigest()
    memo = directory / _FINGERPRINT_FILE if directory is not None else None
    if memo is not None:
        try:
            known, _, digest = memo.read_text().strip().partition(" ")
        except (OSError, UnicodeDecodeError):
            known = digest = ""
        if known == stat_key and len(digest) == 32:
            return digest
    h = blake2b(sys.version.encode(), digest_size=16)
    for name, path, _ in modules:
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        h.update(f"\0{name}\0{len(data)}\0".encode())
        h.update(data)
    digest = h.hexdigest()
    if memo is not None and directory.is_dir():
        tmp = directory / f".tmp-{os.getpid()}-{_FINGERPRINT_FILE}"
        try:
            tmp.write_text(f"{stat_key} {digest}\n")
            os.replace(tmp, memo)
        except OSError:
            tmp.unlink(missing_ok=True)  # read-only: the next run reads the modules again
    return digest


def tree_stamp(files: list[tuple[str, str]]) -> str | None:
    """Digest of (path, size, mtime) of every file; None when one changed too recently to tell."""
    from contracts.config import blake2b

    now = time.time()
    parts = []
    for rel, abspath in files:
        try:
            st = os.stat(abspath)
        except OSError:
            continue
        if now - st.st_mtime < _RACY_SECONDS:
            return None
        parts.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}")
    return blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()


def _well_formed(stored: object) -> bool:
    """Whether a loaded cache has the shape this version writes.

    ``(stamp, {path: 6-tuple}, {path: 4-tuple})``: findings, then import
    summaries; a file without the summaries (an older version's) still serves
    its findings.

    A file of another shape (an older version's, a foreign one that happens to
    unmarshal) is a miss, never an error. Only the outer shape is checked here,
    a microsecond per entry; an entry whose inside is wrong fails when the
    engine reads it, and the engine then checks that file from its bytes.
    """
    if not (isinstance(stored, tuple) and len(stored) in (2, 3)):
        return False
    stamp, entries = stored[:2]
    if not (stamp is None or isinstance(stamp, str)) or not isinstance(entries, dict):
        return False
    if len(stored) == 3 and not (
        isinstance(stored[2], dict)
        and all(
            type(key) is str and type(value) is tuple and len(value) == 4
            for key, value in stored[2].items()
        )
    ):
        return False
    return all(
        type(key) is str and type(value) is tuple and len(value) == 6
        for key, value in entries.items()
    )


class Cache:
    def __init__(self, root: Path, key: str) -> None:
        self.directory = root / CACHE_DIR
        self.path = self.directory / f"{key}.marshal"
        self.entries: dict[str, tuple] = {}
        # The tree stamp the stored non-CACHEABLE findings were computed under.
        self.stamp: str | None = None
        # relpath -> (size, mtime_ns, digest, imports): per-file import
        # summaries (checkers.project.summarise), which a chain through an
        # unchanged file reads instead of parsing it.
        self.summaries: dict[str, tuple] = {}
        self.dirty = False
        self._load()

    def _load(self) -> None:
        import marshal

        try:
            data = self.path.read_bytes()
        except OSError:
            return
        try:
            stored = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return  # a truncated or foreign file is a miss, never an error
        if _well_formed(stored):
            self.stamp, self.entries = stored[:2]
            self.summaries = stored[2] if len(stored) == 3 else {}

    def get(self, path: str) -> tuple | None:
        return self.entries.get(path)

    def put(
        self,
        path: str,
        size: int,
        mtime_ns: int,
        digest: bytes,
        findings: tuple,
        directives: tuple,
        tree_findings: tuple | None = None,
    ) -> None:
        if time.time() - mtime_ns / 1e9 < _RACY_SECONDS:
            mtime_ns = -1  # modified too recently for its stat to prove anything next time
        self.entries[path] = (size, mtime_ns, digest, findings, directives, tree_findings)
        self.dirty = True

    def put_summaries(self, summaries: dict[str, tuple]) -> None:
        self.summaries.update(summaries)
        self.dirty = True

    def set_stamp(self, stamp: str | None) -> None:
        if stamp != self.stamp:
            self.stamp = stamp
            self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        import marshal

        # A per-process name rather than tempfile: tempfile imports shutil, random
        # and the compression modules, ~5 ms of a one-file check, for a name.
        tmp = self.directory / f".tmp-{os.getpid()}-{self.path.name}"
        try:
            self.directory.mkdir(exist_ok=True)
            marker = self.directory / ".gitignore"
            if not marker.exists():
                marker.write_text("# written by atom-contracts\n*\n")
            try:
                tmp.write_bytes(marshal.dumps((self.stamp, self.entries, self.summaries)))
                os.replace(tmp, self.path)
            except BaseException:
                # Ctrl-C mid-save included: the old file stays whole, no temporary is left.
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
                raise
            self._prune()
        except OSError:
            # A read-only checkout, or CACHE_DIR taken by a plain file: the run
            # still checks; it just does not get faster.
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return
        self.dirty = False

    def _prune(self) -> None:
        others = sorted(
            (p for p in self.directory.glob("*.marshal") if p != self.path),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for stale in others[_KEEP_FILES:]:
            stale.unlink(missing_ok=True)
