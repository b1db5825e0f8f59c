"""The checker in-process: what the CLI, the hooks and the flake8 plugin call.

``check`` is the whole pipeline -- find the declaration, discover files,
check them (cached, in parallel when there are many), fix, filter to a diff
-- returning findings as data. Nothing here prints; the CLI renders.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contracts.config import TABLE, Config, missing_declaration, parse_codes
from contracts.fields import ConfigError, did_you_mean
from contracts.finding import Finding

from .selection import Selection

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


def load_config(
    start: Path | str,
    *,
    config_file: Path | str | None = None,
    use_cache: bool = True,
    write_cache: bool = True,
) -> Config:
    """The declaration governing ``start``; raises ConfigError naming table, key and value."""
    from contracts.config import load_config as _load

    from .rules import kind_class

    config = _load(
        Path(start),
        kind_class,
        config_file=Path(config_file) if config_file else None,
        use_cache=use_cache,
        write_cache=write_cache,
    )
    where = f"{config.pyproject}: [{TABLE}]"
    _require_rules(config.select or (), f"{where} `select`", config)
    _require_rules(config.ignore, f"{where} `ignore`", config)
    for glob, codes in config.per_file_ignores:
        _require_rules(codes, f"{where} `per-file-ignores` {glob!r}", config)
    return config


def _require_rules(prefixes: Sequence[str], where: str, config: Config) -> None:
    """ConfigError naming the first code prefix that no rule has: it would select nothing."""
    from .rules import all_codes, matching_no_rule

    unknown = matching_no_rule(prefixes, {type(c) for c in config.contracts})
    if unknown:
        raise ConfigError(
            f"{where}: {unknown[0]!r} is no rule's code or prefix, so it selects nothing "
            "(`atom-contracts rules` lists the codes)" + did_you_mean(unknown[0], all_codes())
        )


def _codes(value: Sequence[str] | str | None, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.replace(" ", "").split(",") if v]
    return parse_codes(list(value), where)


def selection_for(config: Config, select=None, ignore=None) -> Selection:
    """A run's selection: ``select`` replaces the declared one; ``ignore`` adds to it."""
    chosen = _codes(select, "--select")
    extra_ignore = _codes(ignore, "--ignore") or ()
    _require_rules(chosen or (), "--select", config)
    _require_rules(extra_ignore, "--ignore", config)
    selection = Selection(
        chosen if chosen is not None else config.select, (*config.ignore, *extra_ignore)
    )
    _require_a_rule_on(selection, config)
    return selection


def _require_a_rule_on(selection: Selection, config: Config) -> None:
    """ConfigError when ``select``/``ignore`` leave no rule on: the run would check nothing.

    Each code prefix is a real one (``_require_rules``), yet together they can
    still turn off every rule this declaration has -- ``select = []``, ``--ignore
    ALL``, ``--select AC3`` where no input-assert contract is declared -- and the
    run printed "All contracts hold." having checked nothing. The linter's own
    AC001/AC002 do not count (they judge files a rule reads), nor AC000 (a
    declaration that does not load); its suppression rules do: auditing the
    ``# noqa`` comments alone is a check.
    """
    from .builtin_rules import BUILTIN_RULES
    from .codes import CONFIG_ERROR
    from .selection import ALWAYS_ON

    declared = sorted({code for c in config.contracts for code in type(c).codes()})
    own = sorted({r.code for r in BUILTIN_RULES} - ALWAYS_ON - {CONFIG_ERROR})
    if any(selection.enabled(code) for code in (*declared, *own)):
        return

    def spelled(codes: tuple[str, ...]) -> str:
        return ", ".join(code or "ALL" for code in codes) or "nothing"

    raise ConfigError(
        f"the selection (select: {spelled(selection.select)}; ignore: {spelled(selection.ignore)}) "
        f"turns on no rule, so nothing would be checked (the declared contracts' codes: "
        f"{', '.join(declared)}; the linter's own: {', '.join(own)})"
    )


def check(
    paths: Sequence[str | Path] = (),
    *,
    cwd: str | Path | None = None,
    select: Sequence[str] | str | None = None,
    ignore: Sequence[str] | str | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    diff: bool = False,
    diff_base: str | None = None,
    use_cache: bool = True,
    write_cache: bool = True,
    jobs: int | None = None,
    config: Config | None = None,
    config_file: str | Path | None = None,
    progress: bool | None = None,
    stdin: str | bytes | None = None,
) -> CheckResult:
    """Check ``paths`` (default: the whole project root) against the declared contracts.

    Each file is checked against the declaration nearest above it, as ruff
    reads its configuration: paths under two declarations (pre-commit at the
    top of a repository holding several projects) are checked as two runs,
    and a project declared inside a tree being checked is checked under its
    own contracts, not the outer ones. ``config`` or ``config_file`` (the
    CLI's ``--config``) chooses one declaration for every file instead.

    ``write_cache`` False (with ``use_cache``) reads ``.atom-contracts-cache/``
    -- findings, import summaries, the stored listing -- and writes nothing
    there: the agent hook's mode, which must leave every file but the edited
    one as it was.

    ``stdin``: the text of the one file ``paths`` names (``--stdin-filename``),
    checked in memory as if it were that file; with ``fix`` the fixed text is
    ``CheckResult.fixed_text`` and nothing is written. Given as bytes it is
    decoded as the file would be (BOM, cookie; refused bytes are its AC001),
    and ``fixed_bytes`` holds the result in the input's own encoding.

    Raises ``ConfigError`` (bad declaration or selection, no declaration, a
    contract covering no file), ``PathError`` (a path that does not exist) and
    ``DiffError`` (``diff_base`` unresolvable): all exit 2 in the CLI. A rule
    that raises on a file is that file's AC002 finding, not an exception: the
    other files' findings still come back.
    """
    from .discovery import discover
    from .linter import Linter, wants_progress

    base = Path(cwd) if cwd is not None else Path.cwd()
    targets = [Path(p) if os.path.isabs(p) else base / p for p in paths]
    options = {
        "cwd": base,
        "select": select,
        "ignore": ignore,
        "fix": fix,
        "unsafe_fixes": unsafe_fixes,
        "diff": diff,
        "diff_base": diff_base,
        "use_cache": use_cache,
        "write_cache": write_cache,
        "jobs": jobs,
        "progress": progress,
    }
    # A run that found its own declaration also honours those nested below it; a chosen one
    # (config, --config) governs every file, and stdin is one file.
    governed = config is None and config_file is None and stdin is None
    if config is None and config_file is None and stdin is None and len(targets) > 1:
        groups = _by_declaration(targets, use_cache=use_cache, write_cache=write_cache)
        if len(groups) > 1:
            return _merged([_check_group(group, options) for group in groups.values()])
    if config is None:
        if config_file is not None and not os.path.isabs(config_file):
            config_file = base / config_file
        config = load_config(
            targets[0] if targets else base,
            config_file=config_file,
            use_cache=use_cache,
            write_cache=write_cache,
        )
        if config.pyproject is None and targets:
            # Nothing declared above the paths (a tree outside any project, e.g.
            # a vendored copy): the working directory's declaration governs.
            config = load_config(base, use_cache=use_cache, write_cache=write_cache)
        if config.pyproject is None:
            # Checking against no declaration checks nothing: never a pass.
            raise missing_declaration(targets[0] if targets else base)
    if not config.contracts:
        raise ConfigError(
            f"{config.pyproject or config.root}: [{TABLE}] declares no contracts "
            f"(no [[{TABLE}.contracts]] table), so nothing would be checked"
        )
    selection = selection_for(config, select, ignore)
    linter = Linter(config, selection)
    if stdin is not None:
        return _check_stdin(linter, targets, stdin, fix=fix or diff, unsafe=unsafe_fixes)
    # A module deleted from the work tree (`git diff --name-only` names it) has no findings
    # of its own, but its removal can fail the files that import it (AC202 asks the file
    # system whether a member exists): they are re-checked below, as for an edit. Any other
    # missing path is discover's PathError.
    deleted = _deleted_modules(targets, config)
    present = [t for t in targets if t not in deleted]
    files = discover(present, config) if present or not targets else []
    nested = _nested_declarations(files, config) if governed and files else set()
    theirs: dict[str, list[str]] = {}  # a nested declaration's folder -> its files, checked below
    if nested:
        ours = []
        for rel, abspath in files:
            owner = _owner(rel, nested)
            if owner is None:
                ours.append((rel, abspath))
            else:
                theirs.setdefault(owner, []).append(abspath)
        files = ours
    # A contract covering no file of the project checks nothing: judged on the
    # project's listing, the whole-tree run's, never on the files named. A run
    # on some files reads the project's listing only when a question needs it,
    # and the cross-file re-check below reads the same one.
    from . import coverage

    listing = files if _lists_whole_project(targets, config) else None

    def project_listing() -> list[tuple[str, str]]:
        nonlocal listing
        if listing is None:
            from .listing import project_files

            listing = project_files(
                config, config.root / CACHE_DIR if use_cache else None, write=write_cache
            )
        return listing

    coverage.require_coverage(
        config, coverage.Listed(lambda: [rel for rel, _ in project_listing()])
    )
    if listing is not None:
        coverage.require_reach(config, selection, [rel for rel, _ in listing])
    hunks = None
    if diff_base is not None:
        from .diff_filter import changed_lines

        hunks = changed_lines(config.root, diff_base)
        # Files the diff does not touch cannot keep a finding: do not check them.
        files = [(rel, abspath) for rel, abspath in files if rel in hunks]
    cache = None
    if use_cache:
        from contracts.config import blake2b

        from .cache import Cache, checker_fingerprint

        key = blake2b(
            f"{config.fingerprint}|{selection.key()}|"
            f"{checker_fingerprint(config.root / CACHE_DIR, write=write_cache)}".encode(),
            digest_size=12,
        ).hexdigest()
        cache = Cache(config.root, key)
    stamp = None
    if cache is not None and hunks is None and _covers_src_roots(targets, config):
        from .cache import tree_stamp

        stamp = tree_stamp(files)
    show = wants_progress(len(files)) if progress is None else progress
    results = linter.check_files(files, cache=cache, jobs=jobs, progress=show, stamp=stamp)
    fixed = 0
    warnings: list[str] = []
    fixes: dict[str, list[str]] = {}
    diffs: list[str] = []
    if fix or diff:
        fixed = _fix(
            linter,
            results,
            dict(files),
            unsafe=unsafe_fixes,
            hunks=hunks,
            cache=cache,
            warnings=warnings,
            fixes=fixes,
            diffs=diffs if diff else None,
        )
    if fix and not diff:
        if fixed and cache is not None:
            cache.set_stamp(None)  # the tree the stamp described has just been rewritten
        if fixed and diff_base is not None:
            from .diff_filter import changed_lines

            hunks = changed_lines(config.root, diff_base)
    findings = [f for r in results for f in r.findings]
    checked = sum(1 for r in results if not r.missing)
    if hunks is None and targets and not _covers_src_roots(targets, config):
        # Some files, not the tree (pre-commit, the agent hook, `check FILE`):
        # what they break in files that did not change fails here too.
        from .dependents import recheck

        edited = [(r.path, dict(files)[r.path]) for r in results]
        edited += [(rel, os.fspath(abspath)) for abspath, rel in deleted.items()]
        caused, rechecked = recheck(linter, edited, project_listing)
        findings.extend(caused)
        checked += rechecked
    if cache is not None and write_cache:
        linter.save_summaries(cache)
        cache.save()
    if hunks is not None:
        from .diff_filter import in_diff

        findings = [f for f in findings if in_diff(f, hunks)]
    findings.sort(key=Finding.sort_key)
    result = CheckResult(
        root=config.root,
        findings=findings,
        files_checked=checked,
        fixed=fixed,
        warnings=warnings,
        fixes=fixes,
        diffs=diffs,
        diff_scope=None if diff_base is None else (diff_base, len(files)),
    )
    if not theirs:
        return result
    return _merged([result, *(check(group, **options) for group in theirs.values())])


def _check_stdin(
    linter, targets: list[Path], stdin: str | bytes, *, fix: bool, unsafe: bool
) -> CheckResult:
    from . import coverage
    from .discovery import relative

    config = linter.config
    if len(targets) != 1:
        raise ConfigError("stdin is one file: give exactly one --stdin-filename")
    rel = relative(targets[0], config.root)
    coverage.require_coverage(config, coverage.Probed(config, [rel]))
    exclude = config.exclude_spec()
    raw = stdin if isinstance(stdin, bytes) else None
    result = CheckResult(root=config.root, files_checked=1, fixed_bytes=raw)
    if raw is None:
        text = stdin
    else:
        from .linter import uncheckable
        from .source import DecodeError, decode_source

        try:
            text = decode_source(raw)
        except DecodeError as exc:
            if exclude is None or not exclude.match_file(rel):
                found = [uncheckable(rel, f"cannot be decoded: {exc}")]
                result.findings = linter.finalize(rel, found, (), config.ignored_codes(rel))
            return result  # nothing to fix in what cannot be read: the input goes back as it came
    result.fixed_text = result.stdin_text = text
    if exclude is not None and exclude.match_file(rel):
        return result
    if fix:
        from .fixer import fix_text

        record: list[Finding] = []
        fixed_text, fixed = fix_text(
            text, lambda t: linter.check_text(rel, t), unsafe=unsafe, record=record
        )
        if fixed and raw is not None:
            from .fixer import WriteRefused, encode_like

            try:
                result.fixed_bytes = encode_like(raw, fixed_text)
            except WriteRefused as exc:  # a fix the input's codec cannot spell: none applied
                result.warnings.append(f"{rel}: not fixed: {exc}")
                fixed_text, fixed, record = text, 0, []
        result.fixed_text, result.fixed = fixed_text, fixed
        if record:
            result.fixes[rel] = [f.code for f in record]
    result.findings = sorted(linter.check_text(rel, result.fixed_text), key=Finding.sort_key)
    return result


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


def _check_group(group: list[Path], options: dict) -> CheckResult:
    """One declaration's share of a run over several: paths that no declaration governs
    (a script beside the declared projects) are named on stderr as not checked -- the
    others were, so the run is not one that checked nothing."""
    from contracts.config import NoDeclaration

    try:
        return check(group, **options)
    except NoDeclaration:
        base = options["cwd"]
        return CheckResult(
            root=Path(base),
            warnings=[
                f"{os.path.relpath(path, base)}: not checked: no [{TABLE}] declaration "
                "governs it (none above it, none in the working directory)"
                for path in group
            ],
        )


def _by_declaration(
    targets: list[Path], *, use_cache: bool, write_cache: bool
) -> dict[Path | None, list[Path]]:
    """``targets`` grouped by the pyproject declaring the table nearest above each, in order.

    ``None`` groups the targets no declaration governs (the working directory's
    then does, as for a single target). One ``find_pyproject`` per directory.
    """
    from contracts.config import find_pyproject

    by_directory: dict[str, Path | None] = {}
    groups: dict[Path | None, list[Path]] = {}
    for target in targets:
        directory = str(target if os.path.isdir(target) else target.parent)
        if directory not in by_directory:
            found = find_pyproject(Path(directory), use_cache=use_cache, write_cache=write_cache)
            by_directory[directory] = found[0] if found else None
        groups.setdefault(by_directory[directory], []).append(target)
    return groups


def _nested_declarations(files: list[tuple[str, str]], config: Config) -> set[str]:
    """The folders holding a declaration below ``config.root`` that governs some of ``files``,
    relative to the root as the files' paths are.

    Each folder holding one of the files, and each folder above it up to the
    root, is asked whether its ``pyproject.toml`` declares the table: a stat a
    folder (a few hundred on vLLM's tree), a read only where one exists and
    spells ``atom-contracts``.
    """
    from contracts.config import find_pyproject

    folders: set[str] = set()
    for rel, _ in files:
        folder = posixpath.dirname(rel)
        while folder and folder not in folders and not posixpath.isabs(folder):
            folders.add(folder)
            folder = posixpath.dirname(folder)
    nested: set[str] = set()
    for folder in folders:
        where = config.root / folder
        if (where / "pyproject.toml").is_file():
            found = find_pyproject(where, use_cache=False)
            if found is not None and found[0].parent == where.resolve():
                nested.add(folder)
    return nested


def _owner(rel: str, nested: set[str]) -> str | None:
    """The folder of the nested declaration governing ``rel`` (the deepest), or None."""
    folder = posixpath.dirname(rel)
    while folder:
        if folder in nested:
            return folder
        folder = posixpath.dirname(folder)
    return None


def _merged(results: list[CheckResult]) -> CheckResult:
    """Runs under several declarations as one result, every path relative to their common root."""
    import dataclasses

    root = Path(os.path.commonpath([str(r.root) for r in results]))

    def rebased(path: str, own: Path) -> str:
        if os.path.isabs(path):
            return path
        return Path(os.path.relpath(own / path, root)).as_posix()

    findings: list[Finding] = []
    merged = CheckResult(root=root)
    scopes = [r.diff_scope for r in results if r.diff_scope is not None]
    for r in results:
        findings += [dataclasses.replace(f, path=rebased(f.path, r.root)) for f in r.findings]
        merged.files_checked += r.files_checked
        merged.fixed += r.fixed
        merged.warnings += r.warnings
        merged.fixes.update({rebased(p, r.root): codes for p, codes in r.fixes.items()})
        for text in r.diffs:
            path = text.split("\n", 1)[0].removeprefix("--- ")
            new = rebased(path, r.root)
            merged.diffs.append(
                text.replace(f"--- {path}\n+++ {path}\n", f"--- {new}\n+++ {new}\n", 1)
            )
    merged.findings = sorted(findings, key=Finding.sort_key)
    if scopes:
        merged.diff_scope = (scopes[0][0], sum(n for _, n in scopes))
    return merged


def _lists_whole_project(targets: list[Path], config: Config) -> bool:
    root = str(config.root)
    return not targets or any(os.path.abspath(t) == root for t in targets)


def _covers_src_roots(targets: list[Path], config: Config) -> bool:
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


def _fix(
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
        results[index] = linter.check_file(path, abspath, None)
        if cache is not None and results[index].cache_entry is not None:
            cache.put(path, *results[index].cache_entry)
    return fixed


def check_text(
    path: str | Path,
    text: str,
    config: Config,
    *,
    linter=None,
) -> list[Finding]:
    """Check ``text`` as if it were the file at ``path``: no discovery, no cache, no disk read
    of the file itself, suppressions applied -- the one place that decides what "check this
    buffer as that file" means, for stdin, the flake8 plugin and the language server.

    ``path`` is absolute or relative to the working directory. A file the
    declaration's ``exclude`` covers gets no findings, as on the command line.
    ``linter`` reuses a long-lived ``Linter`` (and its project index) of this
    ``config``; by default one is built from the declared selection. A
    contract that raises is the file's AC002, beside its other findings.
    """
    from .discovery import relative
    from .source import SourceFile

    rel = relative(os.path.abspath(path), config.root)
    source = SourceFile(rel, text, abspath=os.path.join(config.root, rel))
    return check_source(source, config, linter=linter)


def check_source(source, config: Config, *, linter=None) -> list[Finding]:
    """``check_text`` of a ``SourceFile`` already built (``source.path`` relative to the
    root): the language server's, whose buffer's tree is spliced from its last one
    (``checkers.incremental``) rather than parsed whole on every keystroke."""
    from .linter import Linter
    from .suppression import parse_directives

    rel = source.path
    exclude = config.exclude_spec()
    if exclude is not None and exclude.match_file(rel):
        return []
    if linter is None:
        linter = Linter(config, selection_for(config))
    contracts, pfi = linter.applying(rel)
    # A long-lived linter's project index must see this text as that file
    # from now on, for the cross-file questions other files ask about it.
    linter.source_changed(source.abspath, source)
    raw = linter.run_contracts(source, contracts)
    findings = linter.finalize(rel, raw, parse_directives(source.text), pfi)
    return sorted(findings, key=Finding.sort_key)


__all__ = [
    "CheckResult",
    "ConfigError",
    "check",
    "check_source",
    "check_text",
    "load_config",
    "selection_for",
]
