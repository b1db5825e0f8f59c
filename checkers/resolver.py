"""Which declaration governs which paths, and what a run selects from it.

The first stage of every check (ruff's resolver): find the ``pyproject.toml``
declaring ``[tool.atom-contracts]`` nearest above each path, load it (the
kinds validate their tables before a file is read), and turn ``select`` and
``ignore`` into the run's ``Selection``. Nothing here reads a Python file.

A declaration is refused, naming what is wrong, when it could only check
nothing: a code prefix no rule has, a selection that leaves no rule on, a
table with no contracts, no declaration at all.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from pathlib import Path

from contracts.config import TABLE, Config, missing_declaration, parse_codes
from contracts.fields import ConfigError, did_you_mean

from .selection import Selection


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


def governing(
    targets: list[Path],
    cwd: Path,
    *,
    config_file: str | Path | None = None,
    use_cache: bool = True,
    write_cache: bool = True,
) -> Config:
    """The one declaration a run over ``targets`` checks against, with contracts to check.

    ``config_file`` (``--config``) names it; otherwise it is the nearest above
    the first target, or -- when nothing is declared above the paths (a tree
    outside any project, e.g. a vendored copy) -- the working directory's.
    """
    if config_file is not None and not os.path.isabs(config_file):
        config_file = cwd / config_file
    config = load_config(
        targets[0] if targets else cwd,
        config_file=config_file,
        use_cache=use_cache,
        write_cache=write_cache,
    )
    if config.pyproject is None and targets:
        config = load_config(cwd, use_cache=use_cache, write_cache=write_cache)
    if config.pyproject is None:
        # Checking against no declaration checks nothing: never a pass.
        raise missing_declaration(targets[0] if targets else cwd)
    return config


def require_contracts(config: Config) -> None:
    """ConfigError when the declaration holds no contract: nothing would be checked."""
    if not config.contracts:
        raise ConfigError(
            f"{config.pyproject or config.root}: [{TABLE}] declares no contracts "
            f"(no [[{TABLE}.contracts]] table), so nothing would be checked"
        )


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


def by_declaration(
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


def declared_below(directory: Path) -> tuple[list[Path], list[str]]:
    """The projects declared below a folder that has no declaration of its own, and the
    Python files no declaration governs, both relative to it.

    A monorepo's top often declares nothing while each of its projects does: a run there
    is each project's run, as ``check one two`` and pre-commit over every file are. Found
    in the listing a check of the folder would make (git's, with every ignore rule; a walk
    outside a work tree): each folder holding a listed Python file, and each above it, is
    asked whether its ``pyproject.toml`` declares the table. The projects returned are the
    outermost; one declared inside another is that one's nested declaration.
    """
    from contracts.config import find_pyproject

    from .discovery import _git_listing, _hidden_or_skipped, _walk

    top = os.path.abspath(directory)
    listed = _git_listing(top)
    if listed is None:
        listed = _walk(top)
    files = [rel for rel in listed if not _hidden_or_skipped(rel)]
    folders: set[str] = set()
    for rel in files:
        folder = posixpath.dirname(rel)
        while folder and folder not in folders:
            folders.add(folder)
            folder = posixpath.dirname(folder)
    declared = set()
    for folder in sorted(folders):
        where = Path(top, folder)
        if (where / "pyproject.toml").is_file():
            found = find_pyproject(where, use_cache=False)
            if found is not None and found[0].parent == where.resolve():
                declared.add(folder)
    outermost = sorted(f for f in declared if owner(f, declared) is None)
    ungoverned = [rel for rel in files if owner(rel, declared) is None]
    return [Path(top, f) for f in outermost], ungoverned


def nested_declarations(files: list[tuple[str, str]], config: Config) -> set[str]:
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


def owner(rel: str, nested: set[str]) -> str | None:
    """The folder of the nested declaration governing ``rel`` (the deepest), or None."""
    folder = posixpath.dirname(rel)
    while folder:
        if folder in nested:
            return folder
        folder = posixpath.dirname(folder)
    return None


__all__ = [
    "by_declaration",
    "declared_below",
    "governing",
    "load_config",
    "nested_declarations",
    "owner",
    "require_contracts",
    "selection_for",
]
