"""One declaration's run, as named stages: plan the files, check, fix, re-check dependents, filter.

``checkers.api.check`` finds the declarations (``checkers.resolver``) and
hands each one's paths here with the run's options (``RunOptions``, frozen:
a nested declaration's run gets the very same options, not a dict fed back
into ``check``). Each stage is a function of what the stages before it
produced:

1. ``plan_files``: the files to check -- discovered, split from a nested
   declaration's, narrowed to a diff's -- and what the run can prove about
   them (a contract that covers nothing is refused here), the cache and the
   tree stamp;
2. ``Linter.check_files``: every file's findings (the cache, a pool);
3. ``fix_files``: ``--fix`` / ``--diff``, file by file;
4. ``recheck_dependents``: what a run on some files breaks in files it was
   not given (the cross-file kinds);
5. the filter: ``--diff-base``'s hunks, then the order findings print in.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contracts.config import Config
from contracts.finding import Finding

CACHE_DIR = ".atom-contracts-cache"  # checkers.cache.CACHE_DIR, without importing it


@dataclass
class CheckResult:
    root: Path
    findings: list[Finding] = field(default_factory=list)  # sorted, after every filter
    files_checked: int = 0
    fixed: int = 0  # fixes applied (with fix=True)
    # Files left alone, and why: a fix that could not be written without
    # losing something (the CLI prints each on stderr; the run goes on).
    warnings: list[str] = field(default_factory=list)
    # path -> the codes of the fixes applied there, in order (``--show-fixes``).
    fixes: dict[str, list[str]] = field(default_factory=dict)
    # With diff=True: a unified diff per file that --fix would rewrite; nothing written.
    diffs: list[str] = field(default_factory=list)
    fixed_text: str | None = None  # with stdin: the text after fixes (the input when none)
    # With stdin as bytes: the input decoded (None when it cannot be), and the fixed text in
    # the input's own codec, BOM and all (the input itself when nothing was fixed).
    stdin_text: str | None = None
    fixed_bytes: bytes | None = None
    # With diff_base: the revision, and how many Python files the diff touches. A
    # clean result then speaks of what changed, not of the tree it did not read.
    diff_scope: tuple[str, int] | None = None


@dataclass(frozen=True)
class RunOptions:
    """What a run was asked to do, the same for every declaration it meets."""

    cwd: Path
    select: Sequence[str] | str | None = None
    ignore: Sequence[str] | str | None = None
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    diff_base: str | None = None
    use_cache: bool = True
    write_cache: bool = True
    jobs: int | None = None
    progress: bool | None = None

    def __post_init__(self) -> None:
        for name in ("select", "ignore"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, name, tuple(value))

    def targets(self, paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
        """``paths`` as the run reads them: absolute, or under the working directory."""
        return [Path(p) if os.path.isabs(p) else self.cwd / p for p in paths]


@dataclass
class Plan:
    """What ``plan_files`` settles before a file is checked."""

    files: list[tuple[str, str]]  # (relative, absolute): this declaration's, to check
    deleted: dict[Path, str]  # targets gone from the work tree that git knows: {target: rel}
    nested: list[list[str]]  # files under a nested declaration, one list per declaration
    listing: Callable[[], list[tuple[str, str]]]  # the project's files, read on first use
    hunks: dict | None = None  # with --diff-base: the diff's new-side lines per file
    cache: object | None = None  # checkers.cache.Cache
    stamp: str | None = None  # the tree stamp, when the run lists every src root


def run_declaration(
    config: Config, targets: list[Path], options: RunOptions, *, governed: bool
) -> tuple[CheckResult, list[list[str]]]:
    """Check ``targets`` under ``config``; also returns the files that a declaration nested
    below it governs (``governed``: the run found its own declaration), for runs of their own."""
    from .linter import Linter, wants_progress
    from .resolver import selection_for

    linter = Linter(config, selection_for(config, options.select, options.ignore))
    plan = plan_files(linter, targets, options, governed=governed)
    files = plan.files
    show = wants_progress(len(files)) if options.progress is None else options.progress
    results = linter.check_files(
        files, cache=plan.cache, jobs=options.jobs, progress=show, stamp=plan.stamp
    )
    result = CheckResult(
        root=config.root,
        diff_scope=None if options.diff_base is None else (options.diff_base, len(files)),
    )
    if options.write_cache:
        # What a fix killed mid-write left beside the files (checkers.fixer): removed where
        # it holds nothing the file lacks, named where it does. Not in the agent hook's
        # read-only mode, which leaves every file but the edited one alone.
        from .fixer import sweep_leftovers

        result.warnings += sweep_leftovers({os.path.dirname(abspath) for _, abspath in files})
    if options.fix or options.diff:
        result.fixed = fix_files(
            linter,
            results,
            dict(files),
            unsafe=options.unsafe_fixes,
            hunks=plan.hunks,
            cache=plan.cache,
            warnings=result.warnings,
            fixes=result.fixes,
            diffs=result.diffs if options.diff else None,
        )
    if options.fix and not options.diff and result.fixed:
        if plan.cache is not None:
            plan.cache.set_stamp(None)  # the tree the stamp described has just been rewritten
        if options.diff_base is not None:
            from .diff_filter import changed_lines

            plan.hunks = changed_lines(config.root, options.diff_base)
    findings = [f for r in results for f in r.findings]
    result.files_checked = sum(1 for r in results if not r.missing)
    if plan.hunks is None and targets and not covers_src_roots(targets, config):
        caused, rechecked = recheck_dependents(linter, plan, results)
        findings.extend(caused)
        result.files_checked += rechecked
    if plan.cache is not None and options.write_cache:
        linter.save_summaries(plan.cache)
        plan.cache.save()
    if plan.hunks is not None:
        from .diff_filter import in_diff

        findings = [f for f in findings if in_diff(f, plan.hunks)]
    result.findings = sorted(findings, key=Finding.sort_key)
    return result, plan.nested


def plan_files(linter, targets: list[Path], options: RunOptions, *, governed: bool) -> Plan:
    """The files this declaration checks, and what is settled before the first is read.

    A module deleted from the work tree (``git diff --name-only`` names it) has
    no findings of its own, but its removal can fail the files that import it
    (AC202 asks the file system whether a member exists): those are re-checked
    as for an edit. Any other missing path is discover's PathError. A contract
    covering no file of the project checks nothing: a glob that matches a file the
    run found itself covers one; only a glob none of them matches is judged on the
    project's listing, the whole-tree run's -- a run on some files reads that
    listing only when a question needs it (the cross-file re-check reads the same
    one).
    """
    from . import coverage
    from .discovery import discover
    from .resolver import nested_declarations, owner

    config = linter.config
    deleted = _deleted_modules(targets, config)
    present = [t for t in targets if t not in deleted]
    files = discover(present, config) if present or not targets else []
    nested = nested_declarations(files, config) if governed and files else set()
    theirs: dict[str, list[str]] = {}  # a nested declaration's folder -> its files
    if nested:
        ours = []
        for rel, abspath in files:
            folder = owner(rel, nested)
            if folder is None:
                ours.append((rel, abspath))
            else:
                theirs.setdefault(folder, []).append(abspath)
        files = ours
    listed = [files if lists_whole_project(targets, config) else None]

    def listing() -> list[tuple[str, str]]:
        if listed[0] is None:
            from .listing import project_files

            where = config.root / CACHE_DIR if options.use_cache else None
            listed[0] = project_files(config, where, write=options.write_cache)
        return listed[0]

    plan = Plan(files, deleted, list(theirs.values()), listing)
    coverage.require_coverage(
        config,
        coverage.Listed(lambda: [rel for rel, _ in listing()], named=[rel for rel, _ in files]),
    )
    if listed[0] is not None:
        coverage.require_reach(config, linter.selection, [rel for rel, _ in listed[0]])
    if options.diff_base is not None:
        from .diff_filter import changed_lines

        plan.hunks = changed_lines(config.root, options.diff_base)
        # Files the diff does not touch cannot keep a finding: do not check them.
        plan.files = [(rel, abspath) for rel, abspath in plan.files if rel in plan.hunks]
    if options.use_cache:
        plan.cache = _open_cache(linter, options)
        if plan.hunks is None and covers_src_roots(targets, config):
            from .cache import tree_stamp

            plan.stamp = tree_stamp(plan.files)
    return plan


def _open_cache(linter, options: RunOptions):
    from contracts.config import blake2b

    from .cache import Cache, checker_fingerprint

    config = linter.config
    key = blake2b(
        f"{config.fingerprint}|{linter.selection.key()}|"
        f"{checker_fingerprint(config.root / CACHE_DIR, write=options.write_cache)}".encode(),
        digest_size=12,
    ).hexdigest()
    return Cache(config.root, key)


def recheck_dependents(linter, plan: Plan, results) -> tuple[list[Finding], int]:
    """Some files, not the tree (pre-commit, the agent hook, `check FILE`): what they break
    in files that did not change fails here too (``checkers.dependents``)."""
    from .dependents import recheck

    abspaths = dict(plan.files)
    edited = [(r.path, abspaths[r.path]) for r in results]
    edited += [(rel, os.fspath(abspath)) for abspath, rel in plan.deleted.items()]
    return recheck(linter, edited, plan.listing)


def _deleted_modules(targets: list[Path], config: Config) -> dict[Path, str]:
    """``{target: relpath}`` of the Python files named that are gone from the work tree but
    git still knows (in the index, or in ``HEAD`` after ``git rm``): deleted, not mistyped.

    Outside a git work tree nothing can tell the two apart, so every missing path
    stays an error there.
    """
    from .discovery import PYTHON_SUFFIXES, relative

    missing = {
        t: relative(t, config.root)
        for t in targets
        if not os.path.lexists(t) and str(t).endswith(PYTHON_SUFFIXES)
    }
    missing = {t: rel for t, rel in missing.items() if not os.path.isabs(rel)}
    if not missing:
        return {}
    import subprocess

    names = [rel for rel in missing.values()]
    known: set[str] = set()
    for cmd in (["ls-files", "-z", "--"], ["ls-tree", "-z", "--name-only", "HEAD", "--"]):
        try:
            proc = subprocess.run(
                ["git", "-C", str(config.root), *cmd, *names],
                capture_output=True,
                check=False,
            )
        except OSError:  # no git on PATH
            return {}
        if proc.returncode == 0:
            known.update(n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0"))
    return {t: rel for t, rel in missing.items() if rel in known}


def lists_whole_project(targets: list[Path], config: Config) -> bool:
    root = str(config.root)
    return not targets or any(os.path.abspath(t) == root for t in targets)


def covers_src_roots(targets: list[Path], config: Config) -> bool:
    """Whether the run lists every file a cross-file contract may read: each src root is inside a target."""
    dirs = (
        [os.path.abspath(t) for t in targets if os.path.isdir(t)] if targets else [str(config.root)]
    )
    if targets and len(dirs) != len(targets):
        return False  # single files named: pre-commit's case, never the whole tree
    return all(
        any(str(src) == d or str(src).startswith(d.rstrip(os.sep) + os.sep) for d in dirs)
        for src in config.src_roots
    )


def fix_files(
    linter,
    results,
    abspaths: dict[str, str],
    *,
    unsafe: bool,
    hunks,
    cache,
    warnings: list[str],
    fixes: dict[str, list[str]],
    diffs: list[str] | None = None,
) -> int:
    """Fix each file with something to fix; a file that cannot be fixed safely is named in
    ``warnings`` and left as it was, and the rest are still fixed.

    With ``diffs`` (``--diff``) nothing is written: each file's unified diff is
    appended instead, of exactly the text ``--fix`` would write.
    """
    from . import interrupt
    from .fixer import WriteRefused, applies, encode_like, fix_text, write_fixed
    from .source import DecodeError, decode_source, read_regular

    keep = None
    if hunks is not None:
        from .diff_filter import in_diff

        def keep(f: Finding) -> bool:
            return in_diff(f, hunks)

    fixed = 0
    same_file = _SameFile(results, abspaths)
    for index, result in enumerate(results):
        interrupt.check()  # between files: each one written is whole
        if not any(applies(f, unsafe=unsafe) for f in result.findings):
            continue
        abspath = abspaths[result.path]
        path = result.path
        try:
            original = read_regular(abspath)
            text = decode_source(original)
            encode_like(original, text)  # refuse before fixing what cannot be written back
        except OSError as exc:
            warnings.append(f"{path}: not fixed: cannot be read ({exc.strerror or exc})")
            continue
        except (DecodeError, WriteRefused) as exc:
            warnings.append(f"{path}: not fixed: {exc}")
            continue
        record: list[Finding] = []
        new, applied = fix_text(
            text,
            lambda t, path=path: linter.check_text(path, t),
            unsafe=unsafe,
            keep=keep or (lambda f: True),
            record=record,
        )
        if not applied or new == text:
            continue
        if diffs is not None:
            import difflib

            diffs.append(
                "".join(
                    difflib.unified_diff(
                        text.splitlines(keepends=True),
                        new.splitlines(keepends=True),
                        fromfile=path,
                        tofile=path,
                    )
                )
            )
            fixes[path] = [f.code for f in record]
            fixed += applied
            continue
        try:
            write_fixed(abspath, original, new, root=linter.config.root)
        except WriteRefused as exc:
            warnings.append(f"{path}: not fixed: {exc}")
            continue
        fixed += applied
        fixes[path] = [f.code for f in record]
        # Every path of the file just written -- itself, and a hard link or a symlink to it
        # checked under another name -- now holds the fixed bytes: check each again.
        for other in same_file.paths_of(index):
            results[other] = linter.check_file(
                results[other].path, abspaths[results[other].path], None
            )
            if cache is not None and results[other].cache_entry is not None:
                cache.put(results[other].path, *results[other].cache_entry)
    return fixed


class _SameFile:
    """Which results of a run are one file on disk, by (device, inode) as first stat'ed.

    Stat'ed on the first write (a run that fixes nothing stats nothing), and each result
    keeps the identity it had then: a later atomic write gives its file a new inode, and
    the twins recorded beside the old one are still found.
    """

    def __init__(self, results, abspaths: dict[str, str]) -> None:
        self._results, self._abspaths = results, abspaths
        self._keys: list[tuple[int, int] | None] | None = None

    def paths_of(self, index: int) -> list[int]:
        """The indices of every result that is the file of result ``index`` (``index`` first)."""
        if self._keys is None:
            self._keys = [_identity(self._abspaths[r.path]) for r in self._results]
        key = self._keys[index]
        if key is None:
            return [index]
        return [index, *(i for i, k in enumerate(self._keys) if k == key and i != index)]


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def merged(results: list[CheckResult]) -> CheckResult:
    """Runs under several declarations as one result, every path relative to their common root."""
    import dataclasses

    root = Path(os.path.commonpath([str(r.root) for r in results]))

    def rebased(path: str, own: Path) -> str:
        if os.path.isabs(path):
            return path
        return Path(os.path.relpath(own / path, root)).as_posix()

    findings: list[Finding] = []
    out = CheckResult(root=root)
    scopes = [r.diff_scope for r in results if r.diff_scope is not None]
    for r in results:
        findings += [dataclasses.replace(f, path=rebased(f.path, r.root)) for f in r.findings]
        out.files_checked += r.files_checked
        out.fixed += r.fixed
        out.warnings += r.warnings
        out.fixes.update({rebased(p, r.root): codes for p, codes in r.fixes.items()})
        for text in r.diffs:
            path = text.split("\n", 1)[0].removeprefix("--- ")
            new = rebased(path, r.root)
            out.diffs.append(
                text.replace(f"--- {path}\n+++ {path}\n", f"--- {new}\n+++ {new}\n", 1)
            )
    out.findings = sorted(findings, key=Finding.sort_key)
    if scopes:
        out.diff_scope = (scopes[0][0], sum(n for _, n in scopes))
    return out


__all__ = ["CheckResult", "Plan", "RunOptions", "fix_files", "merged", "run_declaration"]
