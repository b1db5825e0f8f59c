"""AC301's precision and recall on 500 hand-labelled asserts of torch and the stdlib.

The labels (``tests/checkers/data/assert_labels.jsonl``) point into the
installed sources by path, line and the line's hash; the code itself is
never copied here. They were made by reading the code around each assert,
before the rule was run on that sample (``docs/precision.md`` says which sets
were tuned on afterwards). Recomputed from the installed sources each run,
skipped visibly when torch or Python is not the version labelled, or when a
labelled line no longer hashes the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ...conftest import bench_module

REPO = Path(__file__).resolve().parents[3]
LABELS = REPO / "tests" / "checkers" / "data" / "assert_labels.jsonl"
SETS = ("dev", "holdout", "holdout2", "holdout3")


def _bench():
    return bench_module("precision")


def _records() -> list[dict]:
    return [json.loads(line) for line in LABELS.read_text().splitlines() if line]


def test_labels_are_well_formed_and_carry_no_source():
    records = _records()
    assert len(records) >= 150
    keys = set()
    for rec in records:
        assert rec["root"] in ("torch", "stdlib")
        assert rec["label"] in ("input", "state")
        assert rec["set"] in SETS
        assert re.fullmatch(r"[0-9a-f]{16}", rec["sha"])
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        assert not rec["path"].startswith("/")
        keys.add((rec["root"], rec["path"], rec["line"]))
    assert len(keys) == len(records), "an assert is labelled twice"
    sets = {s: sum(r["set"] == s for r in records) for s in SETS}
    assert sets == {"dev": 200, "holdout": 100, "holdout2": 100, "holdout3": 100}


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


def test_floor_on_all_500(scores):
    rule, _ = scores
    assert rule.total == 500
    # Measured: 226 of 250 flagged are input (0.904), 226 of 245 inputs flagged (0.922).
    # (227 of 245 before a caller's assert counted as its test: lib2to3's `addclosure`
    # restates `make_dfa`'s own `assert isinstance(start, NFAState)`, labelled input.)
    assert rule.precision >= 0.893, rule.misses
    assert rule.recall >= 0.922, rule.misses


def test_beats_s101_and_the_simple_version(scores):
    rule, simple = scores
    s101_precision = (rule.tp + rule.fn) / rule.total  # every assert flagged: the share of inputs
    assert rule.precision > s101_precision + 0.3
    assert rule.precision > simple.precision + 0.1
    assert rule.recall > simple.recall + 0.2


def test_floors_on_the_held_out_samples(scores):
    # Measured on each when it was labelled, before any fix it prompted (docs/precision.md):
    # holdout 0.783 / 0.922, holdout2 0.709 / 0.886, holdout3 0.812 / 0.780. Now:
    floors = {"holdout2": (0.77, 0.93), "holdout3": (0.9, 0.9)}  # 42/54, 42/45; 45/48, 45/50
    for name, (precision, recall) in floors.items():
        held = scores[0].subset((name,))
        assert held.total == 100
        assert held.precision >= precision, (name, held.misses)
        assert held.recall >= recall, (name, held.misses)


ENGINE_LABELS = REPO / "tests" / "checkers" / "data" / "assert_engine_labels.jsonl"


def test_engine_labels_are_well_formed_and_carry_no_source():
    # The figures on them need the engines unpacked (bench/precision.py --engine);
    # what the file itself promises is checked here.
    records = [json.loads(line) for line in ENGINE_LABELS.read_text().splitlines() if line]
    sets = {}
    for rec in records:
        sets[(rec["set"], rec["root"])] = sets.get((rec["set"], rec["root"]), 0) + 1
    assert sets == {
        ("engine1", "sglang"): 160,
        ("engine2", "sglang"): 110,
        ("sglang-dev", "sglang"): 70,
        ("sglang-held", "sglang"): 90,
        ("lmdeploy-dev", "lmdeploy"): 70,
        ("lmdeploy-held", "lmdeploy"): 90,
        ("sglang-held2", "sglang"): 60,
        ("lmdeploy-held2", "lmdeploy"): 60,
        ("sglang-held3", "sglang"): 60,
        ("lmdeploy-held3", "lmdeploy"): 60,
        ("sglang-held4", "sglang"): 60,
        ("lmdeploy-held4", "lmdeploy"): 60,
        ("sglang-held5", "sglang"): 60,
        ("lmdeploy-held5", "lmdeploy"): 60,
        ("sglang-held6", "sglang"): 60,
        ("lmdeploy-held6", "lmdeploy"): 60,
        ("sglang-held7", "sglang"): 60,
        ("lmdeploy-held7", "lmdeploy"): 60,
        ("sglang-held8", "sglang"): 60,
        ("lmdeploy-held8", "lmdeploy"): 60,
        ("sglang-held9", "sglang"): 60,
        ("lmdeploy-held9", "lmdeploy"): 60,
        ("sglang-held10", "sglang"): 60,
        ("lmdeploy-held10", "lmdeploy"): 60,
    }, sets
    keys = set()
    for rec in records:
        assert rec["version"]
        if rec["set"].startswith("engine"):
            assert rec["path"].startswith("srt/")  # the first draws were of the runtime only
        assert rec["label"] in ("input", "state", "unclear")
        assert re.fullmatch(r"[0-9a-f]{16}", rec["sha"])
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        assert not rec["path"].startswith("/")
        keys.add((rec["root"], rec["path"], rec["line"]))
    assert len(keys) == len(records), "an assert is labelled twice"
    for rec in records:
        if rec.get("revised"):
            # A revision keeps what was first written, so the blind figure stays.
            assert rec["first"] in ("input", "state") and rec["first"] != rec["label"], rec
            assert "first labelled" in rec["reason"], rec
    # Only the later draws may say unclear; the first two predate the verdict.
    assert all(r["label"] != "unclear" for r in records if r["set"].startswith("engine"))


def _label_engine():
    return bench_module("label_engine")


def test_stratified_draws_allocate_in_proportion_and_refuse_too_many():
    allocate = _label_engine().allocate
    # 70 of 8116 over sglang's strata: 70 * 4962 / 8116 = 42.8, 70 * 2482 / 8116 = 21.4,
    # 70 * 625 / 8116 = 5.4, 70 * 47 / 8116 = 0.4 -> 42 + 21 + 5 + 0, and the two left
    # go to the largest remainders (0.8 then 0.4, the larger stratum first).
    sizes = {"srt": 4962, "kernels": 2482, "multimodal_gen": 625, "lang": 47}
    assert allocate(sizes, 70) == {"srt": 43, "kernels": 22, "multimodal_gen": 5, "lang": 0}
    assert sum(allocate(sizes, 160).values()) == 160
    with pytest.raises(ValueError, match="cannot draw 9000 of 8116"):
        allocate(sizes, 9000)


def _rec(line: int, label: str, reason: str = "r") -> dict:
    return {"set": "d", "root": "e", "path": "p.py", "line": line, "label": label, "reason": reason}


def test_two_readers_agreement_is_kappa_over_the_decided_pairs(bench):
    first = [_rec(1, "input"), _rec(2, "input"), _rec(3, "state"), _rec(4, "input")]
    first += [_rec(5, "state"), _rec(6, "unclear"), _rec(7, "input")]
    second = [_rec(1, "input"), _rec(2, "state"), _rec(3, "state"), _rec(4, "input")]
    second += [_rec(5, "input"), _rec(6, "input")]  # line 7 has no second verdict
    both = bench.agreement(first, second)
    assert (both.pairs, both.decided, both.agreed) == (6, 5, 3)
    # Over lines 1-5: first says input 3/5, second 3/5; chance = .6 * .6 + .4 * .4 = .52,
    # observed 3/5 = .6, kappa = (.6 - .52) / (1 - .52) = .08 / .48 = 1/6.
    assert both.kappa == pytest.approx(1 / 6)
    assert both.consensus == {("d", "e", "p.py", n) for n in (1, 3, 4)}
    assert len(both.disagreements) == 2
    assert "p.py:2 -- first input: r | second state: r" in both.disagreements[0]


def test_readers_who_always_agree_have_kappa_one_and_opposite_ones_below_zero(bench):
    same = [_rec(1, "input"), _rec(2, "state")]
    assert bench.agreement(same, same).kappa == 1.0
    flipped = [_rec(1, "state"), _rec(2, "input")]
    # chance = .5 * .5 + .5 * .5 = .5, observed 0: kappa = (0 - .5) / .5 = -1.
    assert bench.agreement(same, flipped).kappa == -1.0
    # Both readers saying input throughout: chance agreement is 1, kappa 1 by convention.
    only = [_rec(1, "input")]
    assert bench.agreement(only, only).kappa == 1.0


def test_readers_agreement_reads_a_settled_label_as_first_written(bench):
    settled = {**_rec(1, "state"), "first": "input", "revised": True}
    first = [settled, _rec(2, "state")]
    second = [_rec(1, "state"), _rec(2, "state")]
    # Line 1 was written input and later settled to state, the second reader's verdict:
    # the readers split there, whatever the first file now says.
    both = bench.agreement(first, second)
    assert (both.decided, both.agreed) == (2, 1)
    assert both.consensus == {("d", "e", "p.py", 2)}
    assert "first input" in both.disagreements[0]


SECOND_LABELS = REPO / "tests" / "checkers" / "data" / "assert_engine_second_labels.jsonl"


def test_second_reader_labels_are_whole_draws_of_the_first_file():
    first = [json.loads(line) for line in ENGINE_LABELS.read_text().splitlines() if line]
    second = [json.loads(line) for line in SECOND_LABELS.read_text().splitlines() if line]
    sets = {r["set"] for r in second}
    assert sets == {
        "sglang-held3",
        "lmdeploy-held3",
        "sglang-held9",
        "lmdeploy-held9",
        "sglang-held10",
        "lmdeploy-held10",
    }
    key = lambda r: (r["set"], r["root"], r["path"], r["line"], r["sha"])  # noqa: E731
    # The same asserts, in the same order, hashing the same: each draw relabelled whole.
    assert [key(r) for r in second] == [key(r) for r in first if r["set"] in sets]
    for rec in second:
        assert rec["label"] in ("input", "state", "unclear")
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        assert not rec.get("revised")


THIRD_LABELS = REPO / "tests" / "checkers" / "data" / "assert_engine_third_labels.jsonl"
POLICY_DRAWS = {"sglang-held9", "lmdeploy-held9", "sglang-held10", "lmdeploy-held10"}


def test_third_reading_labels_asserts_of_the_first_file_in_its_samples():
    first = {
        (r["set"], r["root"], r["path"], r["line"]): r
        for r in map(json.loads, ENGINE_LABELS.read_text().splitlines())
    }
    second = {
        (r["set"], r["root"], r["path"], r["line"]): r
        for r in map(json.loads, SECOND_LABELS.read_text().splitlines())
    }
    third = [json.loads(line) for line in THIRD_LABELS.read_text().splitlines() if line]
    keys = [(r["set"], r["root"], r["path"], r["line"]) for r in third]
    assert len(set(keys)) == len(keys)
    samples = {"changed": 0, "changed-second-level": 0, "control": 0, "calibration": 0}
    for key, rec in zip(keys, third, strict=True):
        assert key in first and first[key]["sha"] == rec["sha"]  # the same line, unchanged
        samples[rec["sample"]] += 1
        assert rec["label"] in ("input", "state", "unclear")
        assert rec["reason"].strip() and "\n" not in rec["reason"]
        if rec["sample"] == "calibration":
            # Where both policy readers wrote the same verdict: what the third is measured by.
            assert key[0] in POLICY_DRAWS
            assert second[key]["label"] == first[key]["label"] != "unclear"
        else:
            assert key[0] not in POLICY_DRAWS  # drawn before the policy was written
    # changed: the 56 true findings one level drops and the 6 false alarms it settles (62);
    # second level: the 14 it drops besides; control: 62 drawn beside the first, 16 beside
    # the second (78); calibration: the 40 drawn from the policy draws (docs/precision.md).
    assert samples == {"changed": 62, "changed-second-level": 14, "control": 78, "calibration": 40}
