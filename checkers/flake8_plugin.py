"""The contracts as a flake8 plugin, for a repository that already runs flake8.

``flake8 --select AC`` then reports the contracts declared in the nearest
``pyproject.toml`` above each file, with flake8's own ``# noqa`` handling,
formatting and exit status: one linter run, one report, nothing new to wire
into an editor that already speaks flake8.

flake8 imports every installed plugin on every run, including runs that never
select ``AC``, so this module imports nothing beyond the standard library at
import time. The linter (``checkers.api``) is imported on the first file the
plugin actually checks, and each configuration is loaded once per directory
per process: flake8 checks files in worker processes, and a worker sees many
files of one project.

A declaration that cannot be loaded is reported once per file as ``AC000`` on
line 1 rather than raised: a traceback from a plugin aborts the whole flake8
run, which is a worse way to learn that one table in pyproject.toml is wrong.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from .codes import CONFIG_ERROR, UNCHECKABLE


def _version() -> str:
    try:
        return metadata.version("atom-contracts")
    except metadata.PackageNotFoundError:  # running from a checkout that is not installed
        return "0+unknown"


# directory -> its loaded Config, or the _ConfigFailure saying why it did not load
_CONFIGS: dict[str, Any] = {}


def _config_for(directory: str) -> Any:
    """The configuration governing files in ``directory``, loaded once per process."""
    try:
        return _CONFIGS[directory]
    except KeyError:
        pass
    from checkers.api import load_config, selection_for
    from contracts.fields import ConfigError

    try:
        config: Any = load_config(Path(directory))
        selection_for(config)  # a selection that turns every rule off is refused here too
    except ConfigError as exc:
        config = _ConfigFailure(str(exc))
    _CONFIGS[directory] = config
    return config


def _undecodable(abspath: str) -> str | None:
    """Why Python's import would refuse to decode the file on disk; None when it would not."""
    try:
        with open(abspath, "rb") as fh:
            data = fh.read()
    except OSError:
        return None  # stdin under a display name, or gone: flake8's lines are all there is
    from checkers.source import DecodeError, decode_source

    try:
        decode_source(data)
    except DecodeError as exc:
        return str(exc)
    return None


class _ConfigFailure:
    """A declaration that failed to load: reported on every file it governs."""

    def __init__(self, message: str) -> None:
        self.message = message


class ContractsPlugin:
    """flake8 AST plugin: ``run`` yields ``(line, column0, "ACnnn message", type)``."""

    name = "atom-contracts"
    version = _version()

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        # flake8 hands over its own parse; the linter reparses from the text
        # only for the contracts whose text pre-filter the file passes.
        self.tree = tree
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if self.filename in ("stdin", "-", None):
            directory = os.getcwd()
        else:
            directory = os.path.dirname(os.path.abspath(self.filename))
        config = _config_for(directory)
        if isinstance(config, _ConfigFailure):
            yield (
                1,
                0,
                f"{CONFIG_ERROR} atom-contracts configuration: {config.message}",
                type(self),
            )
            return
        if not config.contracts:
            # No declaration above this file: a flake8 run over a tree that
            # is not ours must cost nothing and report nothing.
            return
        # check_text applies the declaration's `exclude` as the CLI does,
        # whatever flake8's own exclude says.
        from checkers.api import check_text

        abspath = os.path.abspath(self.filename)
        undecodable = _undecodable(abspath)
        if undecodable is not None:
            # flake8 falls back to latin-1 for bytes it cannot decode; Python's
            # import does not, so neither does the check (the CLI's AC001).
            yield (1, 0, f"{UNCHECKABLE} cannot be decoded: {undecodable}", type(self))
            return
        text = "".join(self.lines)
        for finding in check_text(abspath, text, config):
            # flake8 columns are 0-based; findings are 1-based characters.
            yield (
                finding.line,
                max(finding.column - 1, 0),
                f"{finding.code} {finding.message}",
                type(self),
            )
