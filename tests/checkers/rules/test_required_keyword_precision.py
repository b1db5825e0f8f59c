"""AC701 on every repeat_interleave call in torch's Python sources, labelled by hand.

Each call in torch 2.13.0 is labelled in
``tests/checkers/data/repeat_interleave_labels.jsonl`` as needing
``output_size`` (tensor repeats) or not (int repeats, or not the tensor op),
by its repeats argument's position and its line's hash. Skipped visibly when
the installed torch is another version or a labelled line changed.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from ...conftest import bench_module

REPO = Path(__file__).resolve().parents[3]
LABELS = REPO / "tests" / "checkers" / "data" / "repeat_interleave_labels.jsonl"


@pytest.fixture(scope="module")
def bench():
    module = bench_module("precision")
    ok, why = module.versions_match()
    if not ok:
        pytest.skip(f"labels do not apply here: {why}")
    return module


def test_every_call_in_torch_is_labelled(bench):
    root = bench.source_roots()["torch"]
    records = [json.loads(line) for line in LABELS.read_text().splitlines() if line]
    labelled = {(r["path"], r["line"]) for r in records}
    calls = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "repeat_interleave" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                name = getattr(node.func, "attr", None) or getattr(node.func, "id", None)
                if name == "repeat_interleave":
                    calls.append((path.relative_to(root).as_posix(), node.lineno))
    assert len(calls) == len(records) == 31
    assert set(calls) == labelled


def test_floor(bench):
    s = bench.required_keyword_score()
    if s.skipped:
        pytest.skip(f"{s.skipped} labelled lines changed")
    # torch has one call that needs output_size (the numpy shim's array repeats) and
    # 30 that do not; the rule flags exactly that one. One positive is a thin sample:
    # the kind's examples and unit tests carry the engine-shaped cases.
    assert (s.tp, s.fp, s.fn) == (1, 0, 0), s.misses
    simple = bench.score(
        "repeat_interleave_labels.jsonl", bench.simple_required_keyword, "needs-output-size"
    )
    assert simple.fp == 30  # flagging every non-literal repeats: 1 of 31 right


ENGINE_LABELS = REPO / "tests" / "checkers" / "data" / "repeat_interleave_engine_labels.jsonl"


def test_engine_labels_are_well_formed_and_carry_no_source():
    # Every call of sglang, lmdeploy and vLLM's packages and transformers' models;
    # the figures need the wheels unpacked (bench/precision.py --engine), the
    # file's shape does not.
    records = [json.loads(line) for line in ENGINE_LABELS.read_text().splitlines() if line]
    per_root = {}
    for rec in records:
        per_root[rec["root"]] = per_root.get(rec["root"], 0) + 1
        assert rec["version"]
        assert rec["label"] in (
            "needs-output-size",
            "host-tensor",
            "int-or-has-output-size",
            "unclear",
        )
        assert re.fullmatch(r"[0-9a-f]{16}", rec["sha"])
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        assert rec["anchor"][0] >= rec["line"]
    # vLLM 0.33.0: 8 needs-output-size + 24 host-tensor + 96 int-or-has-output-size.
    assert per_root == {"sglang": 285, "transformers": 385, "lmdeploy": 37, "vllm": 128}
    vllm = [r["label"] for r in records if r["root"] == "vllm"]
    assert [vllm.count(x) for x in ("needs-output-size", "host-tensor")] == [8, 24]
    anchors = {(r["root"], r["path"], tuple(r["anchor"])) for r in records}
    assert len(anchors) == len(records), "a call is labelled twice"
