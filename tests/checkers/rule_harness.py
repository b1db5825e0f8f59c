"""A contract run directly on one file, as the linter runs it: the per-rule tests' one harness.

Each kind's own VALID and INVALID examples go through the real linter in
``test_rule_examples.py``; the tests in ``rules/`` pin the cases around them
and call the contract directly, so a failure points at the rule.
"""

from __future__ import annotations

from pathlib import Path

from checkers.project import Project
from checkers.source import SourceFile

from ..scaffold import write_tree


def run_rule(
    kind,
    source: str,
    params=None,
    *,
    path: str = "pkg/module.py",
    root: Path | None = None,
    files=None,
    project: Project | None = None,
):
    """Findings of a contract of ``kind`` with ``params`` on ``source`` at ``path``.

    The pre-filter runs first, as in the linter. Without ``root`` the contract
    sees no project (a one-file kind); with it, ``files`` and the file itself are
    written under ``root`` and a ``Project`` over it answers cross-file questions.
    """
    contract = kind.from_table({"id": "t", **(params or {})}, "contract `t`")
    if root is None:
        src = SourceFile(path, source)
    else:
        write_tree(root, {**(files or {}), path: source})
        project = project or Project(root, (root,))
        src = SourceFile(path, source, abspath=str(root / path))
        project.add_source(src)
    if not contract.wants(src):
        return []
    return list(contract.check(src, project))


def apply_fixes(text: str, findings) -> str:
    """Apply every edit, last first, as the linter does (1-based char columns, end exclusive)."""
    starts = [0]
    for line in SourceFile("x.py", text).lines:
        starts.append(starts[-1] + len(line))
    edits = sorted(
        (e for f in findings if f.fix for e in f.fix.edits),
        key=lambda e: (e.line, e.column),
        reverse=True,
    )
    for e in edits:
        begin = starts[e.line - 1] + e.column - 1
        end = starts[e.end_line - 1] + e.end_column - 1
        text = text[:begin] + e.content + text[end:]
    return text
