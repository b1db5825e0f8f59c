"""AC301's precision and recall on 400 hand-labelled asserts of torch and the stdlib.

The labels (``tests/checkers/data/assert_labels.jsonl``) point into the
installed sources by path, line and the line's hash; the code itself is
never copied here. They were made by reading the code around each assert,
before the rule was run on that sample (``docs/precision.md`` says which sets
were tuned on afterwards). Recomputed from the installed sources each run,
skipped visibly when torch or Python is not the version labelled, or when a
labelled line no longer hashes the same.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
LABELS = REPO / "tests" / "checkers" / "data" / "assert_labels.jsonl"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_precision", REPO / "bench" / "precision.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _records() -> list[dict]:
    return [json.loads(line) for line in LABELS.read_text().splitlines() if line]


def test_labels_are_well_formed_and_carry_no_source():
    records = _records()
    assert len(records) >= 150
    keys = set()
    for rec in records:
        assert rec["root"] in ("torch", "stdlib")
        assert rec["label"] in ("input", "state")
        assert rec["set"] in ("dev", "holdout", "holdout2")
        assert re.fullmatch(r"[0-9a-f]{16}", rec["sha"])
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        assert not rec["path"].startswith("/")
        keys.add((rec["root"], rec["path"], rec["line"]))
    assert len(keys) == len(records), "an assert is labelled twice"
    sets = {s: sum(r["set"] == s for r in records) for s in ("dev", "holdout", "holdout2")}
    assert sets == {"dev": 200, "holdout": 100, "holdout2": 100}


@pytest.fixture(scope="module")
def bench():
    module = _bench()
    ok, why = module.versions_match()
    if not ok:
        pytest.skip(f"labels do not apply here: {why}")
    return module


@pytest.fixture(scope="module")
def scores(bench):
    rule = bench.score("assert_labels.jsonl", bench.rule("input-assert", {}), "input")
    if rule.skipped:
        pytest.skip(
            f"{rule.skipped} labelled lines are missing or changed in the installed sources"
        )
    simple = bench.score("assert_labels.jsonl", bench.simple_input_assert, "input")
    return rule, simple


def test_floor_on_all_400(scores):
    rule, _ = scores
    assert rule.total == 400
    # Measured: 175 of 197 flagged are input (0.888), 175 of 195 inputs flagged (0.897).
    assert rule.precision >= 0.88, rule.misses
    assert rule.recall >= 0.89, rule.misses


def test_beats_s101_and_the_simple_version(scores):
    rule, simple = scores
    s101_precision = (rule.tp + rule.fn) / rule.total  # every assert flagged: the share of inputs
    assert rule.precision > s101_precision + 0.3
    assert rule.precision > simple.precision + 0.1
    assert rule.recall > simple.recall + 0.2


def test_floor_on_the_sample_measured_last(scores):
    held = scores[0].subset(("holdout2",))
    # Measured: 41 of 52 (0.788), 41 of 45 (0.911); 0.709 / 0.886 before its own fixes.
    assert held.total == 100
    assert held.precision >= 0.78, held.misses
    assert held.recall >= 0.9, held.misses
