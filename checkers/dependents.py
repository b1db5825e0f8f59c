"""A run on some files re-checks what those files can break elsewhere.

pre-commit, the agent hook and ``check FILE`` check the files they are given.
A cross-file kind's finding can sit in a file that did not change: a commit
that adds ``import triton`` to a non-test module fails every test whose
import chain runs through it (AC601), and removing a name from a package's
``__init__`` fails the leaf member that imports it (AC202). A run over the
edited files alone would pass, and CI's whole-tree run would then fail on
what every local check passed.

So after the given files are checked, every other file in a cross-file
contract's scope is asked, through the kind's ``dependent_lines`` and from
the project's import summaries (the cache's, so an unchanged file is not
parsed), which of its lines the edited files can reach. Only files with such
lines are parsed and checked, and only the findings on those lines are
reported -- the whole-tree run's findings there, word for word, with the
edited file that reaches each one named after it. A finding elsewhere in
the same file predates the edit and stays the whole-tree run's to report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from contracts.finding import Finding

from .linter import Linter, decode
from .source import SourceFile, read_regular
from .suppression import parse_directives


def dependent_files(
    linter: Linter,
    edited: list[tuple[str, str]],
    listing: Callable[[], list[tuple[str, str]]] | None = None,
):
    """The other files the edited ``(relpath, abspath)`` files can change the findings of.

    Yields ``(relpath, abspath, asked, per_file_ignores)`` for each, ``asked``
    mapping a contract's id to ``(contract, {line: edited paths reaching it})``; every
    answer comes from the import summaries, nothing here parses a candidate.
    ``recheck`` checks those lines; the language server checks the files.

    ``listing`` lists the project (the coverage check's listing, from
    ``checkers.listing.project_files``), called only when a cross-file
    contract can be reached from an edited module; by default the project
    is listed here.
    """
    contracts = [
        c
        for c in linter.contracts
        if not c.CACHEABLE
        and type(c).dependent_lines is not _base_dependent_lines()
        and linter.project_wants(c)
    ]
    if not contracts:
        return
    project = linter.project
    modules: dict[str, str] = {}
    for rel, _ in edited:
        name = project.module_name(rel)
        if name:
            modules[name] = rel
    if not modules:
        return
    done = {rel for rel, _ in edited}
    if listing is None:
        from .discovery import discover

        def listing() -> list[tuple[str, str]]:
            return discover([], linter.config)

    for rel, abspath in listing():
        if rel in done or not any(c.applies_to(rel) for c in contracts):
            continue
        applying, pfi = linter.applying(rel, contracts)
        asked = {}
        for contract in applying:
            lines = contract.dependent_lines(rel, project, modules)
            if lines:
                asked[contract.id] = (contract, lines)
        if asked:
            yield rel, abspath, asked, pfi


def recheck(
    linter: Linter,
    edited: list[tuple[str, str]],
    listing: Callable[[], list[tuple[str, str]]] | None = None,
) -> tuple[list[Finding], int]:
    """Findings the edited ``(relpath, abspath)`` files cause in other files, and how many were
    checked; ``listing`` as ``dependent_files`` reads it."""
    findings: list[Finding] = []
    checked = 0
    for rel, abspath, asked, pfi in dependent_files(linter, edited, listing):
        try:
            text = decode(read_regular(abspath))
        except (OSError, UnicodeDecodeError, LookupError, SyntaxError):
            continue  # the file's own run reports why it cannot be read
        checked += 1
        source = SourceFile(rel, text, abspath=abspath)
        raw = linter.run_contracts(source, [c for c, _ in asked.values()])
        kept = linter.finalize(rel, raw, parse_directives(text), pfi)
        for f in kept:
            entry = asked.get(f.contract)
            if entry is None:
                continue  # AC001/AC9xx: the file's own, not the edit's
            causes = entry[1].get(f.span_lines[0])
            if causes is None:
                continue
            findings.append(
                dataclasses.replace(
                    f, message=f"{f.message} (reached through {', '.join(causes)}, edited)"
                )
            )
    return findings, checked


def _base_dependent_lines():
    from contracts.contract import Contract

    return Contract.dependent_lines


__all__ = ["dependent_files", "recheck"]
