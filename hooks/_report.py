"""What the hook tells the agent: one line per problem, in a form it can act on.

Every line reads ``path:line:col: CODE message``, ruff's concise shape, which
models have seen a great deal of and editors can jump to. A contract finding
names its contract, since the fix is often "this is what the contract was
declared for", and the suppression syntax is spelled out once, with the
reason the contracts require, so the agent does not invent a bare ``noqa``
that then becomes a finding of its own.

Findings that predate the edit are listed like any other, and the header says
why: CI filters to the diff's context, so a finding beside an edited line is
a red check once the edit lands, whoever wrote it.

The list is capped: a file with hundreds of old findings would otherwise fill
the agent's context on every edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MAX_LISTED = 40


@dataclass(frozen=True)
class Problem:
    path: str  # as given by the tool; made project-relative for display
    line: int  # 1-based (within ``cell`` for a notebook)
    column: int  # 1-based
    code: str
    message: str
    cell: int | None = None
    note: str = ""

    def sort_key(self) -> tuple:
        return (self.cell or 0, self.line, self.column, self.code)


def render(
    problems: Sequence[Problem],
    *,
    relpath: str,
    project: str,
    ruff_changed_file: bool,
    ruff_ran: bool = True,
    notes: Sequence[str] = (),
    fixed_codes: Sequence[str] = (),
) -> str:
    ordered = sorted(problems, key=Problem.sort_key)
    count = len(ordered)
    rewrote = ""
    if ruff_changed_file:
        what = f" (fixed {', '.join(fixed_codes)})" if fixed_codes else ""
        rewrote = f"ruff rewrote the file{what}: read it again before the next edit"
    if not count:
        # Nothing left, but the agent's view of the file is stale: say so, and only that.
        return "\n".join([f"{relpath}: {rewrote}; no problems left.", *notes]) + "\n"
    # The checker's own spelling of a path, so the hook and `atom-contracts check` name a file
    # alike; imported here, since a clean file never renders.
    from checkers.discovery import relative

    noun = "problem" if count == 1 else "problems"
    header = f"{relpath}: {count} {noun}"
    header += " left after ruff's safe fixes" if ruff_ran else " found"
    elsewhere = sum(1 for p in ordered if p.path and relative(p.path, Path(project)) != relpath)
    if elsewhere:
        header += f", {elsewhere} of them in other files this edit breaks"
    if rewrote:
        header += f" ({rewrote})"
    lines = [
        header + ".",
        "Problems already in the file before this edit are listed too: CI reports them once an "
        "edit lands beside them.",
    ]

    for p in ordered[:MAX_LISTED]:
        where = relative(p.path, Path(project)) if p.path else relpath
        if p.cell is not None:
            where = f"{where}:cell {p.cell}"
        text = f"{where}:{p.line}:{p.column}: {p.code} {p.message}"
        if p.note:
            text += f" ({p.note})"
        lines.append(text)
    if count > MAX_LISTED:
        lines.append(
            f"... and {count - MAX_LISTED} more: run `ruff check {relpath}` and "
            f"`atom-contracts check {relpath}` for all of them."
        )
    lines.extend(notes)
    lines.append(
        "Fix them; where a finding is intended, suppress it on its line with "
        "`# noqa: CODE -- reason` (contract suppressions need the reason)."
    )
    return "\n".join(lines) + "\n"
