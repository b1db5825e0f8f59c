"""Per-file results keyed by the file's bytes, the declaration and the checker.

One folder per cache key under ``.atom-contracts-cache/`` at the project
root, its paths spread over ``SHARDS`` files (so a one-file run reads one of
them), mapping each path to ``(size, mtime_ns, digest, findings, directives,
tree_findings)``. A warm run trusts ``(size, mtime_ns)`` and reads nothing; a changed stat falls
back to the content digest, so touching a file (a checkout, a formatter that
changed nothing) costs a read and a hash but not a check. A file modified in
the same second it was cached is stored without its stat, so an edit inside
one mtime tick that keeps the size cannot be served stale (git's "racy"
index problem).

A contract that is not ``CACHEABLE`` has findings that depend on other
files (an import chain), so one file's bytes cannot vouch for them. They are
stored too, with a *tree stamp*: a digest of every checked file's path, size
and mtime, taken only when the run covered every src root (each shard holds
the stamp it was written under). The next run
reuses them only if its own stamp is identical -- nothing anywhere in the
tree changed -- which is the warm CI and benchmark case; any edit, and any
run over part of the tree (pre-commit's handful of files), recomputes them.
Suppressions are applied after the cache, so the stored findings never
depend on which codes a run selected beyond the key.

Beside the findings, each file's import summary (``checkers.project.
summarise``: its imports, relative names resolved, as plain tuples) and, for
the kinds that follow calls and dicts, its function summary
(``checkers.analysis.functions``) are kept under the same ``(size, mtime_ns,
digest)`` proof, in a second file per shard that only a question about a
summary reads: a warm whole-tree run answers every file from its entries. A chain through an
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
_KEEP_FILES = 8  # other keys' folders kept: a couple of selections and configs in rotation
SHARDS = 64  # files a key's results are spread over (see Cache)
# Files of the cache folder that are not a key's results: never pruned.
_KEPT_FILES = frozenset({"pyproject.marshal", "listing.marshal"})
_RACY_SECONDS = 2
_FINGERPRINT_FILE = "checker.fingerprint"  # not *.marshal: _prune removes stray ones


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


def checker_fingerprint(directory: Path | None = None, *, write: bool = True) -> str:
    """A digest of the checker's own modules' bytes: a new version or an edited rule misses.

    Their bytes, not their stats, so a fresh clone in CI -- every mtime new --
    computes the same key as the run that saved the cache it restored. Reading
    the ~85 modules costs ~4 ms, so the digest is remembered in ``directory``
    (the cache folder) under their (name, size, mtime): a warm local run
    stats them, as before, and reads one line.
    """
    from contracts.config import blake2b

    here = Path(__file__).resolve().parent
    modules: list[tuple[str, str, os.stat_result]] = []
    # Every package folder of both, nested ones included: an edit to how a kind analyses
    # code (``checkers/analysis``) changes its findings as surely as an edit to the rule.
    folders = [(here, here.name), (here.parent / "contracts", "contracts")]
    while folders:
        folder, name = folders.pop(0)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                modules.append((f"{name}/{entry.name}", entry.path, entry.stat()))
            elif entry.is_dir() and entry.name.isidentifier() and entry.name != "__pycache__":
                folders.append((Path(entry.path), f"{name}/{entry.name}"))
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
    if write and memo is not None and directory.is_dir():
        tmp = directory / f".tmp-{os.getpid()}-{_FINGERPRINT_FILE}"
        try:
            tmp.write_text(f"{stat_key} {digest}\n")
            os.replace(tmp, memo)
        except OSError:
            # Read-only: the next run reads the modules again. On a read-only mount the
            # unlink fails too (EROFS, even for a name that was never made): nothing to undo.
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
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


def _well_formed_summaries(stored: object) -> bool:
    """``{path: (size, mtime_ns, digest, summary)}``."""
    return isinstance(stored, dict) and all(
        type(key) is str and type(value) is tuple and len(value) == 4
        for key, value in stored.items()
    )


def _well_formed(stored: object) -> bool:
    """Whether a loaded cache has the shape this version writes.

    ``(stamp, {path: 6-tuple}, {path: 4-tuple})``: findings, then import
    summaries; a file without the summaries (an older version's) still serves
    its findings.

    A file of another shape (an older version's, a foreign one that happens to
    unmarshal) is a miss, never an error. Only the outer shape is checked here,
    a microsecond per entry; an entry whose inside is wrong fails when the
    linter reads it, and the linter then checks that file from its bytes.
    """
    if not (isinstance(stored, tuple) and len(stored) in (2, 3)):
        return False
    stamp, entries = stored[:2]
    if not (stamp is None or isinstance(stamp, str)) or not isinstance(entries, dict):
        return False
    if len(stored) == 3 and not _well_formed_summaries(stored[2]):
        return False
    return all(
        type(key) is str and type(value) is tuple and len(value) == 6
        for key, value in entries.items()
    )


class _Shard:
    """One bucket of the cache: the paths whose digest falls in it, and its stamp.

    Its findings and its per-file summaries are two files: ``xx.marshal`` (the stamp and
    the entries) and ``xx.summaries.marshal``, read only when a summary is asked for. A
    warm whole-tree run answers every file from the entries and never reads a summary, so
    it does not pay for the cross-file kinds' summaries of every file they parsed.
    """

    __slots__ = ("_summaries", "dirty", "entries", "path", "stamp", "summaries_dirty")

    def __init__(self, path: Path, *, load: bool = True) -> None:
        self.path = path
        self.stamp: str | None = None
        self.entries: dict[str, tuple] = {}
        # None until asked for (then read from the summaries file); {} when nothing on disk.
        self._summaries: dict[str, tuple] | None = None if load else {}
        self.dirty = False
        self.summaries_dirty = False
        if not load:
            return
        stored = _load_marshal(path)
        if _well_formed(stored):
            self.stamp, self.entries = stored[:2]
            if len(stored) == 3:  # an earlier version kept both in one file
                self._summaries = stored[2]

    def stamping_needed(self, stamping: bool, stamp: str | None) -> bool:
        return stamping and self.stamp != stamp and bool(self.entries)

    @property
    def summaries_path(self) -> Path:
        return self.path.with_name(self.path.name.replace(".marshal", ".summaries.marshal"))

    @property
    def summaries(self) -> dict[str, tuple]:
        if self._summaries is None:
            stored = _load_marshal(self.summaries_path)
            self._summaries = stored if _well_formed_summaries(stored) else {}
        return self._summaries


def _load_marshal(path: Path):
    import marshal

    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None  # a truncated or foreign file is a miss, never an error


def shard_of(path: str) -> int:
    """The bucket a relative path's entries live in: stable across runs and machines."""
    from contracts.config import blake2b

    return blake2b(path.encode("utf-8", "surrogateescape"), digest_size=2).digest()[0] % SHARDS


class _Lazy:
    """A read-only view of one field of every shard, each shard loaded on first use.

    ``get`` and ``[]`` load the one shard a path lives in: a one-file run on a
    tree of thousands of files reads 1/``SHARDS`` of the cache. Iterating, or
    ``len``, loads every shard (the whole-tree run reads them all anyway).
    """

    __slots__ = ("_cache", "_field")

    def __init__(self, cache: Cache, field: str) -> None:
        self._cache, self._field = cache, field

    def get(self, path: str, default=None):
        return getattr(self._cache._shard(path), self._field).get(path, default)

    def __getitem__(self, path: str) -> tuple:
        return getattr(self._cache._shard(path), self._field)[path]

    def __contains__(self, path: object) -> bool:
        return isinstance(path, str) and path in getattr(self._cache._shard(path), self._field)

    def _all(self) -> dict[str, tuple]:
        out: dict[str, tuple] = {}
        for shard in self._cache._all_shards():
            out.update(getattr(shard, self._field))
        return out

    def keys(self):
        return self._all().keys()

    def items(self):
        return self._all().items()

    def __iter__(self):
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __bool__(self) -> bool:
        # Maybe: a miss on a path is a None from get, so "there may be entries" is
        # all a caller deciding whether to ask needs, and it costs no shard read.
        return self._cache.directory_exists


class Cache:
    """The results of one cache key, in ``SHARDS`` files under ``.atom-contracts-cache/<key>/``.

    One file per key made a one-file run pay for the whole tree: vLLM's 2,966
    files are a 3 MB marshal, ~50 ms to load, and every warm ``check FILE`` that
    changed one entry rewrote all of it. A path's entries live in the shard
    its digest picks (``shard_of``); a shard is read the first time a path in
    it is asked for and written only when one of its entries changed.

    Each shard carries the tree stamp its non-CACHEABLE findings were computed
    under. ``stamp`` is the stamp every shard on disk agrees on (None when any
    differs), so a shard written by a run on some files -- stamp None -- stops
    a later whole-tree run from trusting findings another shard computed
    under another tree. A whole-tree run stamps every shard it read.
    """

    def __init__(self, root: Path, key: str) -> None:
        self.base = root / CACHE_DIR
        self.directory = self.base / key
        self._shards: dict[int, _Shard] = {}
        self._all_loaded = False
        # The stamp the entries put in this run were computed under (set_stamp).
        self._run_stamp: str | None = None
        self._stamping = False
        self.directory_exists = self.directory.is_dir()
        self.entries = _Lazy(self, "entries")
        # relpath -> (size, mtime_ns, digest, imports): per-file import
        # summaries (checkers.project.summarise), which a chain through an
        # unchanged file reads instead of parsing it.
        self.summaries = _Lazy(self, "summaries")

    def shard_path(self, index: int) -> Path:
        return self.directory / f"{index:02x}.marshal"

    def _shard(self, path: str) -> _Shard:
        index = shard_of(path)
        shard = self._shards.get(index)
        if shard is None:
            shard = self._shards[index] = _Shard(self.shard_path(index), load=self.directory_exists)
        return shard

    def _all_shards(self) -> list[_Shard]:
        if not self._all_loaded:
            for index in range(SHARDS):
                if index not in self._shards:
                    self._shards[index] = _Shard(self.shard_path(index), load=self.directory_exists)
            self._all_loaded = True
        return list(self._shards.values())

    @property
    def stamp(self) -> str | None:
        """The tree stamp every shard on disk was written under; None when they differ."""
        stamps = {s.stamp for s in self._all_shards() if s.entries}
        return stamps.pop() if len(stamps) == 1 else None

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
        entry = (size, mtime_ns, digest, findings, directives, tree_findings)
        shard = self._shard(path)
        if shard.entries.get(path) != entry:
            # An unchanged entry is no write: a warm `check FILE` then saves nothing.
            shard.entries[path] = entry
            shard.dirty = True

    def put_summaries(self, summaries: dict[str, tuple]) -> None:
        for path, summary in summaries.items():
            shard = self._shard(path)
            if shard.summaries.get(path) != summary:
                shard.summaries[path] = summary
                shard.summaries_dirty = True

    def set_stamp(self, stamp: str | None) -> None:
        """The tree stamp of this run's non-CACHEABLE findings (None: a run on some files)."""
        self._run_stamp = stamp
        self._stamping = stamp is not None

    def _to_write(self) -> list[_Shard]:
        out = []
        for shard in self._shards.values():
            if shard.stamping_needed(self._stamping, self._run_stamp):
                shard.dirty = True
            if shard.dirty or shard.summaries_dirty:
                out.append(shard)
        return out

    def save(self) -> None:
        shards = self._to_write()
        if not shards:
            return
        import marshal

        # A per-process name rather than tempfile: tempfile imports shutil, random
        # and the compression modules, ~5 ms of a one-file check, for a name.
        tmp = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            marker = self.base / ".gitignore"
            if not marker.exists():
                marker.write_text("# written by atom-contracts\n*\n")
            for shard in shards:
                writes = []
                if shard.dirty:
                    writes.append((shard.path, (self._run_stamp, shard.entries)))
                if shard.summaries_dirty:
                    writes.append((shard.summaries_path, shard.summaries))
                for target, value in writes:
                    tmp = self.directory / f".tmp-{os.getpid()}-{target.name}"
                    try:
                        tmp.write_bytes(marshal.dumps(value))
                        os.replace(tmp, target)
                    except BaseException:
                        # Ctrl-C mid-save included: the old file stays whole, no temporary
                        # is left.
                        with contextlib.suppress(OSError):
                            tmp.unlink(missing_ok=True)
                        raise
                if shard.dirty:
                    shard.stamp, shard.dirty = self._run_stamp, False
                shard.summaries_dirty = False
            tmp = None
            self.directory_exists = True
            self._prune()
        except OSError:
            # A read-only checkout, or CACHE_DIR taken by a plain file: the run
            # still checks; it just does not get faster.
            if tmp is not None:
                with contextlib.suppress(OSError):
                    tmp.unlink(missing_ok=True)
            return

    def _prune(self) -> None:
        """Keep ``_KEEP_FILES`` other keys' folders (the most recently used); drop the rest,
        and the single-file caches of earlier versions (``<key>.marshal``)."""
        with os.scandir(self.base) as it:
            found = list(it)
        others = []
        for entry in found:
            if entry.is_dir(follow_symlinks=False):
                if entry.path != str(self.directory):
                    others.append(entry)
            elif entry.name.endswith(".marshal") and entry.name not in _KEPT_FILES:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        others.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
        for stale in others[_KEEP_FILES:]:
            _remove_folder(stale.path)


def _remove_folder(path: str) -> None:
    """One stale key's folder: its shards, then the folder (no shutil: ~3 ms to import)."""
    with contextlib.suppress(OSError):
        with os.scandir(path) as it:
            for entry in it:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        os.rmdir(path)
