"""Does each contract cover a file of the project? Asked of two indexes of its files.

A contract whose glob matches nothing, or whose leaf package does not exist,
checks nothing and passes: the run must say so (exit 2) instead. The
question is about the project, not the files a run names -- pre-commit
names the few a commit touched -- so it needs the project's files.

``Listed`` answers from the exact listing a whole-tree run has already made
(git's, with every ignore rule). ``Probed`` answers a run that named files
without listing the project: for each glob it walks only the directory the
glob's literal prefix names, and stops at the first match. It skips hidden,
cache and virtual-environment directories and honours ``exclude``, but not
``.gitignore``: so a probe can only find more than the listing would, never
less. A run on some files may call a contract covered that a whole-tree run
refuses, never the reverse -- no pre-commit run fails on a declaration the
whole-tree check accepts, and the whole-tree check (CI's) is the exact one.
A probe costs a few directory reads where ``git ls-files`` costs a process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from contracts.config import Config
from contracts.fields import compile_globs

from .discovery import _SKIP_DIRS, PYTHON_SUFFIXES, _hidden_or_skipped

_WILDCARDS = frozenset("*?[")


def _literal_prefix(glob: str) -> str:
    """The directory a glob is confined to (``atom/**`` -> ``atom``); "" when it floats."""
    body = glob.strip().rstrip("/")
    if "/" not in body:
        return ""  # matches at any depth
    parts = []
    for segment in body.lstrip("/").split("/")[:-1]:
        if _WILDCARDS & set(segment) or segment.startswith("\\"):
            break
        parts.append(segment)
    return "/".join(parts)


def _under(files: list[str], prefix: str):
    """The files of a sorted listing that start with ``prefix``, in order."""
    import bisect

    for f in files[bisect.bisect_left(files, prefix) :]:
        if not f.startswith(prefix):
            return
        yield f


class Listed:
    """The exact listing of a whole-tree run (``files``, or a function that lists them, called
    on the first question: a declaration whose contracts name no glob never lists).

    ``named`` are files the run found itself (the folders it was given, discovered): a glob
    matching one of them matches a file of the project, so the listing is made only for a
    glob none of them matches -- a run over a project's src root answers without it.
    """

    def __init__(
        self, files: Sequence[str] | Callable[[], Sequence[str]], named: Sequence[str] = ()
    ) -> None:
        self._files = files
        self.named = named

    @property
    def files(self) -> Sequence[str]:
        if callable(self._files):
            self._files = self._files()
        return self._files

    def __len__(self) -> int:
        return len(self.files)

    def any_match(self, glob: str) -> bool:
        # Only a file under the folder the glob is confined to can match it (as ``Probed``
        # walks only that folder): a sorted copy of each listing gives those files by
        # bisection, and the others are never looked at.
        under = _literal_prefix(glob)
        under = f"{under}/" if under else ""
        if under and glob.strip() == f"{under}**":
            # `folder/**` matches every file under the folder: any one answers, unmatched.
            return any(True for _ in _under(self._sorted("named"), under)) or any(
                True for _ in _under(self._sorted("files"), under)
            )
        spec = compile_globs([glob], where=f"glob {glob!r}")
        if any(spec.match_file(f) for f in _under(self._sorted("named"), under)):
            return True
        return any(spec.match_file(f) for f in _under(self._sorted("files"), under))

    def _sorted(self, which: str) -> list[str]:
        """``named`` or ``files`` in order, sorted once (a warm run asks a glob per
        contract parameter of ~3,000 files)."""
        key = f"_sorted_{which}"
        found = self.__dict__.get(key)
        if found is None:
            found = self.__dict__[key] = sorted(getattr(self, which))
        return found

    def any_under(self, stem: str) -> bool:
        """Whether ``stem.py`` or any Python file under ``stem/`` is listed."""

        def under(f: str) -> bool:
            return f == f"{stem}.py" or f.startswith(f"{stem}/")

        return any(under(f) for f in self.named) or any(under(f) for f in self.files)


class Probed:
    """The project's files found on demand, one directory at a time."""

    def __init__(self, config: Config, named: Sequence[str] = ()) -> None:
        self.root = str(config.root)
        self.exclude = config.exclude_spec()
        self.named = named

    def _walk(self, prefix: str):
        if _hidden_or_skipped(prefix + "/"):
            return  # discovery never lists a file under a hidden or skipped directory
        start = os.path.join(self.root, prefix) if prefix else self.root
        for dirpath, dirnames, filenames in os.walk(start):
            rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
            rel_dir = "" if rel_dir == "." else rel_dir + "/"
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not d.startswith(".")
                and d not in _SKIP_DIRS
                and not os.path.exists(os.path.join(dirpath, d, "pyvenv.cfg"))
                and not (self.exclude and self.exclude.match_file(f"{rel_dir}{d}/"))
            )
            for name in filenames:
                rel = rel_dir + name
                if name.endswith(PYTHON_SUFFIXES) and not (
                    self.exclude and self.exclude.match_file(rel)
                ):
                    yield rel

    def any_match(self, glob: str) -> bool:
        spec = compile_globs([glob], where=f"glob {glob!r}")
        if any(spec.match_file(f) for f in self.named):
            return True
        return any(spec.match_file(f) for f in self._walk(_literal_prefix(glob)))

    def any_under(self, stem: str) -> bool:
        if _hidden_or_skipped(stem + "/") or (self.exclude and self.exclude.match_file(stem)):
            return False
        if os.path.isfile(os.path.join(self.root, f"{stem}.py")):
            return True
        return (
            os.path.isdir(os.path.join(self.root, stem))
            and next(self._walk(stem), None) is not None
        )


def require_coverage(config: Config, index: Listed | Probed) -> None:
    """ConfigError naming the first contract that covers no file of the project."""
    from contracts.fields import ConfigError

    for contract in config.contracts:
        unmatched = contract.unmatched(index, config.src)
        if unmatched:
            counted = f"of the {len(index)} Python files " if isinstance(index, Listed) else ""
            raise ConfigError(
                f"contract `{contract.id}` ({contract.KIND}) covers no file: {unmatched[0]} "
                f"({counted}under {config.root}, `exclude` applied)"
            )


def require_reach(config: Config, selection, files: Sequence[str]) -> None:
    """ConfigError naming the first contract that ``per-file-ignores`` turns off on every
    file it covers: it checks nothing, as a glob matching no file does.

    Asked of a whole-tree run's listing only (the exact one, CI's); a run on a
    few files does not list the project for it. Stops at the first file the
    contract still runs on, which is the first it covers unless the
    declaration is wrong.
    """
    if not config.per_file_ignores:
        return
    from contracts.fields import ConfigError

    for contract in config.contracts:
        # Codes the selection turns off everywhere are the run's choice (`--select AC9`
        # audits the suppressions alone), not a per-file-ignores that leaves no file.
        codes = [code for code in type(contract).codes() if selection.enabled(code)]
        if not codes:
            continue
        covered = 0
        for path in files:
            if not contract.applies_to(path):
                continue
            covered += 1
            if any(selection.enabled(code, config.ignored_codes(path)) for code in codes):
                break
        else:
            if covered:
                s = "s" if covered != 1 else ""
                raise ConfigError(
                    f"contract `{contract.id}` ({contract.KIND}) covers no file: "
                    f"`per-file-ignores` turns off {', '.join(codes)} on each of the "
                    f"{covered} file{s} it covers (under {config.root})"
                )


__all__ = ["Listed", "Probed", "require_coverage", "require_reach"]
