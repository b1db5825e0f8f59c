"""Apply fixes: safe by default, non-overlapping, only if the result parses.

A pass takes every fixable finding of a file in position order and applies
each fix whose edits do not overlap one already taken (all of a fix's edits
or none). If the combined text does not parse, each fix is tried
alone and the first that leaves the file parsing is kept -- a fix that
breaks the file is dropped, never written. The file is then checked
again, since one fix can expose or resolve another finding, until a pass
changes nothing or ``MAX_PASSES`` is reached. Applying the fixes twice must
change nothing; the rule examples' tests hold every kind to that.

Writes go to a temporary file in the same directory and ``os.replace`` over
the original, so an interrupted run leaves either the old file or the new
one, never half of each; the file's mode is kept.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

from contracts.finding import Finding, Fix

MAX_PASSES = 10


def _line_starts(text: str) -> list[int]:
    import io

    starts = [0]
    for line in io.StringIO(text, newline="").readlines():
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    if line > len(starts) - 1:
        return starts[-1]
    return starts[line - 1] + column - 1


def _fix_range(fix: Fix, starts: list[int]) -> tuple[int, int]:
    begin = min(_offset(starts, e.line, e.column) for e in fix.edits)
    end = max(_offset(starts, e.end_line, e.end_column) for e in fix.edits)
    return begin, end


def apply_fix_edits(text: str, fixes: list[Fix]) -> str:
    """Apply non-overlapping fixes' edits to ``text`` (positions: 1-based, character columns)."""
    starts = _line_starts(text)
    spans: list[tuple[int, int, str]] = []
    for fix in fixes:
        for e in fix.edits:
            spans.append(
                (
                    _offset(starts, e.line, e.column),
                    _offset(starts, e.end_line, e.end_column),
                    e.content,
                )
            )
    out = []
    cursor = 0
    for begin, end, content in sorted(spans, key=lambda s: (s[0], s[1])):
        out.append(text[cursor:begin])
        out.append(content)
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return "".join(out)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def applies(finding: Finding, *, unsafe: bool) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) would apply this finding's fix:
    the one test both the choice of fixes and the skip of files with nothing to fix ask."""
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (unsafe or fix.applicability == "safe")


def choose_fixes(text: str, findings: list[Finding], *, unsafe: bool) -> list[Finding]:
    """Fixable findings whose fixes do not overlap, in position order."""
    starts = _line_starts(text)
    candidates = [f for f in findings if applies(f, unsafe=unsafe)]
    candidates.sort(key=lambda f: _fix_range(f.fix, starts))
    chosen: list[Finding] = []
    last_end = -1
    for f in candidates:
        begin, end = _fix_range(f.fix, starts)
        if begin < last_end:
            continue
        chosen.append(f)
        last_end = max(end, begin)
    return chosen


def fix_text(
    text: str,
    check: Callable[[str], list[Finding]],
    *,
    unsafe: bool,
    keep: Callable[[Finding], bool] = lambda f: True,
) -> tuple[str, int]:
    """Fix ``text`` until stable; returns the new text and how many fixes were applied."""
    applied = 0
    for _ in range(MAX_PASSES):
        chosen = choose_fixes(text, [f for f in check(text) if keep(f)], unsafe=unsafe)
        if not chosen:
            break
        new = apply_fix_edits(text, [f.fix for f in chosen])
        taken = len(chosen)
        if not _parses(new):
            # Some fix breaks the file. Positions only hold against this text, so
            # take the first fix that parses on its own; the next pass re-checks.
            new, taken = text, 0
            for f in chosen:
                trial = apply_fix_edits(text, [f.fix])
                if _parses(trial):
                    new, taken = trial, 1
                    break
        if taken == 0 or new == text:
            break
        text = new
        applied += taken
    return text, applied


def write_atomically(path: str, text: str) -> None:
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    mode = os.stat(path).st_mode & 0o7777
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".atom-contracts-fix-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
