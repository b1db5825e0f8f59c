"""The project's file listing, made once a run and kept between runs while it provably holds.

A run on named files (pre-commit, the agent hook, ``check FILE``) still
needs the whole project's files twice: the coverage check (a contract whose
globs match no file of the project exits 2) and the cross-file re-check (the
tests an edited module can fail). Both now read one listing, the exact one a
whole-tree run makes (``discovery.discover``: git's, with every ignore rule),
so a run on one file judges coverage as CI's run does.

Listing a project costs a ``git ls-files`` process (or, outside a work tree,
a walk); a repeated ``check FILE`` between edits lists the same files. So
the listing is stored in ``.atom-contracts-cache/listing.marshal`` beside
what it was read under, and reused only when every input is as it was:

- the mtime of every directory under the root that discovery could list a
  file from (everything but hidden folders, ``__pycache__``,
  ``node_modules``, ``site-packages``). Creating, deleting or renaming a file
  or a folder changes its parent directory's mtime, so a new or deleted file
  anywhere is a miss. Git-ignored folders are included (a superset: a
  change there costs a re-listing, never a missed file);
- the size and mtime of every ignore file git or the walk reads: each
  ``.gitignore`` under the root and above it up to the work tree's top,
  ``info/exclude``, the user's global excludes (``core.excludesFile``, read
  from git when the listing is made), the git config files that may name
  it, and the index (tracked files are listed even when ignored, and a file
  deleted from disk stays listed until it is removed from the index);
- the root, the declaration's ``exclude`` globs, and the ``GIT_*``,
  ``HOME`` and ``XDG_CONFIG_HOME`` environment.

A directory or file modified within the last two seconds is stored as
unprovable (git's racy-index rule: an mtime tick is coarse, so a change in
the same tick as the listing would keep the stat), and the next run lists
again. Inputs are stat'ed before the listing is made, so a change racing
the listing is seen by the next run. A missing or unreadable store, or one of
another shape, is a miss: the project is listed as if there were no store.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from contracts.config import Config

from .discovery import _SKIP_DIRS, discover

LISTING_FILE = "listing.marshal"
_VERSION = 1
_RACY_SECONDS = 2
_UNPROVABLE = -1


def project_files(
    config: Config, cache_dir: Path | None, *, write: bool = True
) -> list[tuple[str, str]]:
    """``discover([], config)``, from ``cache_dir``'s stored listing when it provably holds.

    ``cache_dir`` None (``--no-cache``) lists the project and stores nothing;
    ``write`` False reads a stored listing but stores none.
    """
    if cache_dir is None:
        return discover([], config)
    root = str(config.root)
    store = cache_dir / LISTING_FILE
    key = _key(config)
    stored = _load(store)
    if stored is not None and stored[0] == key and _holds(*stored[1:4]):
        return [(rel, os.path.join(root, rel)) for rel in stored[4]]
    dirs = _directories(root)
    files = _ignore_files(root, dirs)
    # Stat before listing: a change that races the listing is newer than the stat.
    dir_stats = tuple((d, _mtime(d)) for d in dirs)
    file_stats = tuple((f, *_stat(f)) for f in files)
    # Only whether each exists: a `.git` folder's own mtime moves with every git command.
    entries = tuple((g, os.path.exists(g)) for g in _git_entries(root))
    listed = discover([], config)
    rels = [rel for rel, _ in listed]
    if write and os.path.isdir(cache_dir):
        _save(store, (_VERSION, key, dir_stats, file_stats, entries, rels))
    return listed


def _key(config: Config) -> tuple:
    env = tuple(
        sorted(
            (k, v)
            for k, v in os.environ.items()
            if k.startswith("GIT_") or k in ("HOME", "XDG_CONFIG_HOME")
        )
    )
    return (str(config.root), tuple(config.exclude), env)


def _load(store: Path) -> tuple | None:
    import marshal

    try:
        stored = marshal.loads(store.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(stored, tuple) and len(stored) == 6 and stored[0] == _VERSION):
        return None
    _, key, dir_stats, file_stats, entries, rels = stored
    if not (
        isinstance(dir_stats, tuple)
        and isinstance(file_stats, tuple)
        and isinstance(entries, tuple)
        and isinstance(rels, list)
        and all(type(r) is str for r in rels)
    ):
        return None
    return key, dir_stats, file_stats, entries, rels


def _holds(dir_stats: tuple, file_stats: tuple, entries: tuple) -> bool:
    try:
        for path, mtime in dir_stats:
            if mtime == _UNPROVABLE or _mtime(path) != mtime:
                return False
        for path, size, mtime in file_stats:
            if mtime == _UNPROVABLE or _stat(path) != (size, mtime):
                return False
        for path, exists in entries:
            if os.path.exists(path) != exists:
                return False
    except (TypeError, ValueError):
        return False  # a stored entry of the wrong shape
    return True


def _save(store: Path, value: tuple) -> None:
    import marshal

    tmp = store.with_name(f".tmp-{os.getpid()}-{store.name}")
    try:
        tmp.write_bytes(marshal.dumps(value))
        os.replace(tmp, store)
    except OSError:
        # A read-only checkout: the next run lists again.
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise


def _racy(mtime_ns: int) -> bool:
    return time.time() - mtime_ns / 1e9 < _RACY_SECONDS


def _mtime(path: str) -> int | None:
    """A directory's mtime; None when it is gone; unprovable when too recent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _UNPROVABLE if _racy(st.st_mtime_ns) else st.st_mtime_ns


def _stat(path: str) -> tuple[int | None, int | None]:
    """A file's (size, mtime); (None, None) when it does not exist."""
    try:
        st = os.stat(path)
    except OSError:
        return None, None
    return st.st_size, (_UNPROVABLE if _racy(st.st_mtime_ns) else st.st_mtime_ns)


def _directories(root: str) -> list[str]:
    """Every directory under ``root`` that discovery could list a file from."""
    out = []
    for dirpath, dirnames, _ in os.walk(root):
        out.append(dirpath)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS]
    return out


def _git_entries(root: str) -> list[str]:
    """``.git`` at the root and every level above: whether each exists decides how git lists."""
    out = []
    level = root
    while True:
        out.append(os.path.join(level, ".git"))
        parent = os.path.dirname(level)
        if parent == level:
            return out
        level = parent


def _ignore_files(root: str, dirs: list[str]) -> list[str]:
    """The files whose contents decide what git (or the walk) ignores, present or not."""
    files = [os.path.join(d, ".gitignore") for d in dirs]
    # Up to the work tree's top (the first level holding `.git`): each level's
    # `.gitignore` applies below it.
    git_entry = None
    for entry in _git_entries(root):
        level = os.path.dirname(entry)
        if level != root:
            files.append(os.path.join(level, ".gitignore"))
        if os.path.exists(entry):
            git_entry = entry
            break
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files += [
        os.path.join(xdg, "git", "ignore"),
        os.path.join(xdg, "git", "config"),
        os.path.join(home, ".gitconfig"),
        "/etc/gitconfig",
    ]
    if git_entry is not None:
        git_dir, common = _git_dirs(git_entry)
        files += [
            os.path.join(git_dir, "index"),
            os.path.join(git_dir, "config.worktree"),
            os.path.join(git_dir, "info", "sparse-checkout"),
            os.path.join(common, "info", "exclude"),
            os.path.join(common, "config"),
        ]
        excludes = _configured_excludes(root)
        if excludes:
            files.append(excludes)
    return files


def _git_dirs(git_entry: str) -> tuple[str, str]:
    """(the work tree's git directory, the repository's common one) from its ``.git``."""
    git_dir = git_entry
    if os.path.isfile(git_entry):  # a linked worktree or a submodule: `gitdir: PATH`
        try:
            with open(git_entry, encoding="utf-8") as fh:
                line = fh.readline().strip()
        except (OSError, UnicodeDecodeError):
            line = ""
        if line.startswith("gitdir:"):
            target = line[len("gitdir:") :].strip()
            git_dir = os.path.normpath(os.path.join(os.path.dirname(git_entry), target))
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = os.path.normpath(os.path.join(git_dir, fh.readline().strip()))
    except (OSError, UnicodeDecodeError):
        pass
    return git_dir, common


def _configured_excludes(root: str) -> str | None:
    """``core.excludesFile`` as git reads it (a process, paid only when the listing is made)."""
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "-C", root, "config", "--path", "--get", "core.excludesFile"],
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    value = proc.stdout.decode("utf-8", "surrogateescape").strip()
    return os.path.join(root, value) if value else None


__all__ = ["LISTING_FILE", "project_files"]
