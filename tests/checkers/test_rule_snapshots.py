"""Every INVALID example's whole output, as a user reads it, against a reviewed snapshot.

test_rule_examples.py holds each finding's code, line and column, a substring of its message
where the example names one, and the fixed text exactly. What it does not hold is the rest of
what a user sees: the whole message, the span the carets (and an editor's underline) cover,
the fix's title and whether it is marked unsafe, and the diff ``--diff`` prints. ruff keeps
each fixture's rendered output as a snapshot for the same reason; here it is one file a kind,
``tests/checkers/snapshots/<kind>.txt``: per example, ``check --output-format full`` and
``check --diff`` (with ``--unsafe-fixes`` where the example's fix needs it).

A change of wording or span is then a change to a file a reviewer reads, never a silent one.
After such a change, rewrite the snapshots on purpose and review the diff:

    ATOM_CONTRACTS_UPDATE_SNAPSHOTS=1 python -m pytest tests/checkers/test_rule_snapshots.py

Without the variable a missing or different snapshot fails, naming the command.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checkers import api
from checkers.reporters import render
from checkers.rules import KIND_PATHS, kind_class

from .example_project import example_config, run_example

SNAPSHOTS = Path(__file__).with_name("snapshots")
UPDATE = os.environ.get("ATOM_CONTRACTS_UPDATE_SNAPSHOTS") == "1"


def rendered(kind, tmp_path: Path) -> str:
    """The kind's INVALID examples, each as ``full`` output and ``--diff`` output."""
    parts = [f"# {kind.KIND}: each INVALID example's output (see test_rule_snapshots.py)\n"]
    for index, ex in enumerate(kind.INVALID):
        root = tmp_path / f"invalid-{index}"
        result = run_example(kind, ex, root)
        parts.append(f"\n## invalid-{index}: {ex.path}\n\n")
        parts.append(render(result.findings, "full", root=root))
        if ex.fixed is not None:
            diff = api.check(
                [root / ex.path],
                config=example_config(kind, ex, root),
                use_cache=False,
                jobs=1,
                diff=True,
                unsafe_fixes=ex.unsafe,
            )
            flag = " --unsafe-fixes" if ex.unsafe else ""
            parts.append(f"### --diff{flag}\n\n" + "".join(diff.diffs))
    return "".join(parts)


@pytest.mark.parametrize("kind_name", sorted(KIND_PATHS))
def test_each_kinds_examples_render_as_their_snapshot(kind_name, tmp_path):
    kind = kind_class(kind_name)
    got = rendered(kind, tmp_path)
    snapshot = SNAPSHOTS / f"{kind_name}.txt"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        snapshot.write_text(got, encoding="utf-8")
        return
    assert snapshot.is_file(), (
        f"no snapshot for {kind_name}: write it with ATOM_CONTRACTS_UPDATE_SNAPSHOTS=1 and review it"
    )
    want = snapshot.read_text(encoding="utf-8")
    assert got == want, (
        f"{snapshot.name} differs from what the examples render: if the change is meant, rerun "
        "with ATOM_CONTRACTS_UPDATE_SNAPSHOTS=1 and review `git diff tests/checkers/snapshots`"
    )


def test_every_snapshot_belongs_to_a_kind():
    # A kind renamed or removed leaves its snapshot behind, which then holds nothing.
    stale = sorted(p.stem for p in SNAPSHOTS.glob("*.txt") if p.stem not in KIND_PATHS)
    assert stale == [], f"snapshots of no kind: {stale}"
