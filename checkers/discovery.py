"""Which files a check reads: the paths given, minus what the project ignores.

Inside a git work tree the listing is ``git ls-files -co --exclude-standard``:
tracked plus untracked-but-not-ignored files, with every ``.gitignore``,
``.git/info/exclude`` and the user's global excludes applied by git itself,
in one process, faster than walking the tree in Python. Outside one (an
unpacked sdist, the stdlib) the tree is walked and ``.gitignore`` files are
applied with pathspec, imported only then.

On top of either, ``exclude`` globs apply, and hidden directories, caches
and virtual environments are skipped. A symlink to a directory found on the
way is not followed -- it most often points at a virtual environment or a
dependency checked out beside the code, as ruff reasons too -- while one named
on the command line is checked through; a symlink to a file is a file.

A file named on the command line is checked even when git ignores it -- the
user asked for that file -- but never when ``exclude`` matches it. ruff
checks an explicitly given excluded file unless ``--force-exclude`` is set;
every pre-commit hook and editor integration passes files explicitly, so
that default makes ``exclude`` a no-op exactly where it matters, and each
adopter has to discover the flag. Here ``exclude`` means excluded.
"""

from __future__ import annotations

import os
from pathlib import Path

from contracts.config import Config

PYTHON_SUFFIXES = (".py", ".pyi")
_SKIP_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


class PathError(ValueError):
    """A path given to check that does not exist; the CLI exits 2 with it."""


def relative(path: Path | str, root: Path) -> str:
    """Posix path relative to the root, or the absolute posix path outside it."""
    abspath = os.path.abspath(path)
    rootstr = str(root)
    if abspath == rootstr:
        return "."
    rel = abspath[len(rootstr) + 1 :] if abspath.startswith(rootstr + os.sep) else abspath
    return rel.replace(os.sep, "/")


def _hidden_or_skipped(rel: str) -> bool:
    for part in rel.split("/")[:-1]:
        if (part.startswith(".") and part not in (".", "..")) or part in _SKIP_DIRS:
            return True
    return False


def discover(paths: list[Path], config: Config) -> list[tuple[str, str]]:
    """Sorted, de-duplicated ``(relative path, absolute path)`` of the Python files to check."""
    root = config.root
    exclude = config.exclude_spec()
    found: dict[str, str] = {}
    barren: list[str] = []  # paths given that hold no Python file, excluded or not
    excluded = False
    for given in paths or [root]:
        abspath = os.path.abspath(given)
        if os.path.isfile(abspath):
            rel = relative(abspath, root)
            if not rel.endswith(PYTHON_SUFFIXES) and not _python_script(abspath):
                barren.append(f"{given} (not a Python file)")
            elif exclude and exclude.match_file(rel):
                excluded = True
            else:
                found[rel] = abspath
            continue
        if not os.path.isdir(abspath):
            if os.path.exists(abspath):
                raise PathError(f"{given}: not a regular file or a directory")
            raise PathError(f"{given}: no such file or directory")
        listed = _git_listing(abspath)
        if listed is None:
            listed = _walk(abspath)
        before = len(found)
        for name in listed:
            file_abs = os.path.join(abspath, name)
            rel = relative(file_abs, root)
            if _hidden_or_skipped(name):
                continue
            if exclude and exclude.match_file(rel):
                excluded = True
                continue
            found[rel] = file_abs
        if len(found) == before:
            barren.append(f"{given} (no Python file git or the walk lists there)")
    if paths and not found and not excluded:
        # Every path named held nothing to check: a wrong directory, a file of
        # another language. Passing would be green for a check that never ran;
        # files that `exclude` covers are different -- excluded on purpose.
        raise PathError(f"no Python file to check in the paths given: {'; '.join(barren)}")
    return sorted(found.items())


def _git_listing(directory: str) -> list[str] | None:
    """Python files under ``directory`` that git does not ignore, or None outside a work tree."""
    import subprocess

    try:
        proc = subprocess.run(
            [
                "git",
                "-C",
                directory,
                "ls-files",
                "-z",
                "-co",
                "--exclude-standard",
                "--",
                "*.py",
                "*.pyi",
            ],
            capture_output=True,
            check=False,
        )
    except OSError:  # no git on PATH
        return None
    if proc.returncode != 0:
        return None
    names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    if not names and _git_ignores(directory):
        # A directory the user named, inside a work tree that ignores it (a
        # pyenv checkout holding the stdlib, a vendored tree): walk it.
        return None
    return names


def _git_ignores(directory: str) -> bool:
    import subprocess

    proc = subprocess.run(
        ["git", "-C", directory, "check-ignore", "-q", "."], capture_output=True, check=False
    )
    return proc.returncode == 0


def _walk(directory: str) -> list[str]:
    specs: list[tuple[str, object]] = []  # (directory relative to the walk's start, spec)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        rel_dir = os.path.relpath(dirpath, directory).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        if ".gitignore" in filenames:
            specs.append((rel_dir, _read_gitignore(os.path.join(dirpath, ".gitignore"))))
        active = [(base, spec) for base, spec in specs if rel_dir.startswith(base)]
        kept = []
        for d in dirnames:
            if d.startswith(".") or d in _SKIP_DIRS:
                continue
            if os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg")):
                continue
            if any(spec.match_file(f"{rel_dir}{d}/"[len(base) :]) for base, spec in active):
                continue
            kept.append(d)
        dirnames[:] = sorted(kept)
        for name in filenames:
            if not name.endswith(PYTHON_SUFFIXES) or _special(os.path.join(dirpath, name)):
                continue
            rel = rel_dir + name
            if any(spec.match_file(rel[len(base) :]) for base, spec in active):
                continue
            out.append(rel)
    return out


def _python_script(path: str) -> bool:
    """An extensionless script whose ``#!`` line runs Python: pre-commit's ``types: [python]``
    passes one (identify reads the shebang), and a file named is checked as what it is."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _special(path: str) -> bool:
    """A FIFO, socket or device: not source, and git's listing leaves it out too."""
    import stat

    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False  # dangling or gone: listed, as git lists it; the read reports a dangling one


def _read_gitignore(path: str):
    """The folder's ignore rules; none from a ``.gitignore`` that is not a regular file
    (git itself reads no rules from a FIFO there, and a read of one waits forever)."""
    import pathspec

    from .source import read_regular

    try:
        text = read_regular(path).decode("utf-8", errors="replace")
    except OSError:
        text = ""
    return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
