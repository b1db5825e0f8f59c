"""``--diff-base REV``: keep findings on lines a pull request's diff shows.

reviewdog's ``diff_context`` filter keeps a finding when its line lies in a
hunk's new-side range, context lines included, of the diff it is given. CI
hands reviewdog the pull request's diff, which GitHub computes against the
merge base (``git diff base...head``), so a finding on a line the branch
merely moved, or that sits beside an edit, is a red check. This filter
reproduces that locally: the working tree (committed or not) against
``git merge-base REV HEAD``, with ``-U3`` context as GitHub shows it.
Comparing against REV itself instead would count the target branch's own
new commits as this branch's changes.

Untracked files that git does not ignore are new files in every sense that
matters here and are kept whole; a pull request's diff shows them whole.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from contracts.finding import Finding

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
_WHOLE_FILE = [(1, 1 << 62)]


class DiffError(ValueError):
    """``--diff-base`` could not be resolved; the CLI exits 2 with it."""


def _git(root: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except OSError as exc:
        raise DiffError(f"--diff-base needs git: {exc}") from None
    if proc.returncode != 0:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        command = next(a for a in args if not a.startswith("-") and "=" not in a)
        raise DiffError(f"git {command} failed: {message[-1] if message else proc.returncode}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def parse_hunks(diff: str) -> dict[str, list[tuple[int, int]]]:
    """New-side line ranges (inclusive) per path of a unified diff."""
    out: dict[str, list[tuple[int, int]]] = {}
    current: list[tuple[int, int]] | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            target = line[4:].split("\t", 1)[0]
            if target == "/dev/null":
                current = None
                continue
            if target.startswith('"'):
                target = target[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
            current = out.setdefault(target[2:] if target.startswith("b/") else target, [])
        elif line.startswith("@@") and current is not None:
            match = _HUNK.match(line)
            if match:
                start, count = int(match[1]), int(match[2]) if match[2] is not None else 1
                if count:
                    current.append((start, start + count - 1))
    return out


def changed_lines(root: Path, rev: str) -> dict[str, list[tuple[int, int]]]:
    """Lines of the new side of ``git diff -U3 $(git merge-base REV HEAD)``, per root-relative path."""
    base = _git(root, "merge-base", rev, "HEAD").strip()
    diff = _git(
        root,
        "-c",
        "core.quotePath=false",
        "diff",
        "-U3",
        "--no-color",
        "--no-ext-diff",
        "--relative",
        base,
    )
    hunks = parse_hunks(diff)
    untracked = _git(root, "ls-files", "-z", "-o", "--exclude-standard")
    for name in untracked.split("\0"):
        if name:
            hunks[name] = _WHOLE_FILE
    return hunks


def in_diff(finding: Finding, hunks: dict[str, list[tuple[int, int]]]) -> bool:
    return any(a <= finding.line <= b for a, b in hunks.get(finding.path, ()))
