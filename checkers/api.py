"""The checker in-process: what the CLI, the hooks and the flake8 plugin call.

``check`` is the whole pipeline -- find the declaration, discover files,
check them (cached, in parallel when there are many), fix, filter to a diff
-- returning findings as data. Nothing here prints; the CLI renders. It is a
composer: ``checkers.resolver`` says which declaration governs which paths,
``checkers.run`` runs one declaration's share in named stages, and
``checkers.check_stdin`` checks a buffer as the file it stands for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from contracts.config import Config
from contracts.fields import ConfigError
from contracts.finding import Finding

from .resolver import load_config, selection_for
from .run import CheckResult, RunOptions


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
    options = RunOptions(
        cwd=Path(cwd) if cwd is not None else Path.cwd(),
        select=select,
        ignore=ignore,
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        diff=diff,
        diff_base=diff_base,
        use_cache=use_cache,
        write_cache=write_cache,
        jobs=jobs,
        progress=progress,
    )
    targets = options.targets(paths)
    return _check(targets, options, config=config, config_file=config_file, stdin=stdin)


def _check(
    targets: list[Path],
    options: RunOptions,
    *,
    config: Config | None = None,
    config_file: str | Path | None = None,
    stdin: str | bytes | None = None,
) -> CheckResult:
    from . import resolver
    from .run import merged, run_declaration

    # A run that found its own declaration also honours those nested below it; a chosen one
    # (config, --config) governs every file, and stdin is one file.
    governed = config is None and config_file is None and stdin is None
    if governed and len(targets) > 1:
        groups = resolver.by_declaration(
            targets, use_cache=options.use_cache, write_cache=options.write_cache
        )
        if len(groups) > 1:
            return merged([_check_group(group, options) for group in groups.values()])
    if config is None:
        from contracts.config import NoDeclaration

        try:
            config = resolver.governing(
                targets,
                options.cwd,
                config_file=config_file,
                use_cache=options.use_cache,
                write_cache=options.write_cache,
            )
        except NoDeclaration:
            below = _projects_below(targets, options) if governed else None
            if below is None:
                raise
            return below
    resolver.require_contracts(config)
    if stdin is not None:
        from .check_stdin import check_stdin

        return check_stdin(config, targets, stdin, options)
    result, nested = run_declaration(config, targets, options, governed=governed)
    if not nested:
        return result
    return merged([result, *(_check(options.targets(group), options) for group in nested)])


def _projects_below(targets: list[Path], options: RunOptions) -> CheckResult | None:
    """A folder with no declaration of its own (a monorepo's top): each project declared
    below it checked under its own contracts, and the Python files none governs named, a
    folder at a time. None when nothing below it is declared either (the run is refused)."""
    from contracts.config import TABLE

    from . import resolver
    from .run import merged

    folders = targets or [options.cwd]
    if not all(os.path.isdir(folder) for folder in folders):
        return None
    projects: list[Path] = []
    warnings: list[str] = []
    for folder in folders:
        found, ungoverned = resolver.declared_below(folder)
        projects += found
        by_top: dict[str, int] = {}
        for rel in ungoverned:
            head, _, rest = rel.partition("/")
            by_top[head + "/" if rest else head] = by_top.get(head + "/" if rest else head, 0) + 1
        base = os.path.relpath(folder, options.cwd)
        for name, count in sorted(by_top.items()):
            shown = os.path.normpath(os.path.join(base, name)) + ("/" if name.endswith("/") else "")
            if name.endswith("/"):
                what = f"{count} Python file{'s' if count > 1 else ''} not checked"
                warnings.append(f"{shown}: {what}: no [{TABLE}] declaration governs them")
            else:
                warnings.append(f"{shown}: not checked: no [{TABLE}] declaration governs it")
    if not projects:
        return None
    # Paths relative to the folders checked, whatever number of projects they hold.
    tops = [CheckResult(root=Path(folder).resolve()) for folder in folders]
    result = merged([*(_check(options.targets([p]), options) for p in projects), *tops])
    result.warnings = warnings + result.warnings
    return result


def _check_group(group: list[Path], options: RunOptions) -> CheckResult:
    """One declaration's share of a run over several: paths that no declaration governs
    (a script beside the declared projects) are named on stderr as not checked -- the
    others were, so the run is not one that checked nothing."""
    from contracts.config import TABLE, NoDeclaration

    try:
        return _check(group, options)
    except NoDeclaration:
        base = options.cwd
        return CheckResult(
            root=Path(base),
            warnings=[
                f"{os.path.relpath(path, base)}: not checked: no [{TABLE}] declaration "
                "governs it (none above it, none in the working directory)"
                for path in group
            ],
        )


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
    from .linter import collector_off

    with collector_off():
        raw = linter.run_contracts(source, contracts)
    findings = linter.finalize(rel, raw, parse_directives(source.text), pfi)
    return sorted(findings, key=Finding.sort_key)


__all__ = [
    "CheckResult",
    "ConfigError",
    "RunOptions",
    "check",
    "check_source",
    "check_text",
    "load_config",
    "selection_for",
]
