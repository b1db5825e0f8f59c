"""The bug-class kinds' hand labels (``bench/bug_classes.py``): whole, and keyed one to a finding."""

from __future__ import annotations

import json

from ..conftest import REPO_ROOT, bench_module

LABELS = REPO_ROOT / "tests" / "checkers" / "data" / "bug_class_labels.jsonl"


def _bench():
    return bench_module("bug_classes")


def test_every_label_is_a_verdict_with_its_reason_on_a_known_tree_once():
    bench = _bench()
    records = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    assert records
    for rec in records:
        assert rec["tree"] in bench.TREES, rec
        assert rec["kind"] in bench.KINDS and rec["code"].startswith(bench.KINDS[rec["kind"]])
        assert rec["label"] in ("right", "wrong") and rec["reason"].strip(), rec
        assert len(rec["sha"]) == 16
    keys = [bench.key(rec) for rec in records]
    assert len(keys) == len(set(keys))


def _finding(code, line, message):
    return {"code": code, "path": "p.py", "line": line, "message": message}


def test_two_findings_of_one_code_on_one_line_are_told_apart_and_others_keep_their_key():
    bench = _bench()
    found = [
        _finding("AC801", 3, "assigns block (`x`) to `y`, declared token: ..."),
        _finding("AC801", 3, "adds token (`a`) to block (`b`): ..."),
        _finding("AC801", 4, "assigns block (`x`) to `y`, declared token: ..."),
        _finding("AC821", 5, "`E.f` is an entry and reaches `*.item` (a host sync): " + ITEM_AT_9),
        _finding("AC821", 5, "`E.f` is an entry and reaches `*.item` (a host sync): " + ITEM_AT_12),
        _finding("AC821", 5, "`E.f` is an entry and reaches `*.tolist` (a host sync): ..."),
    ]
    assert bench.whats(found) == [
        "|assigns block",
        "|adds token",
        "",  # alone on its line: the key every earlier label has
        # One entry reaches each forbidden call in a finding of its own: its place tells them
        # apart.
        "*.item@q.py:9",
        "*.item@q.py:12",
        "*.tolist",
    ]


ITEM_AT_9 = "E.f (tree/p.py:5) -> g (tree/q.py:9) -> `x.item()`"
# (A hop names the tests its call runs under after its line.)
ITEM_AT_12 = (
    "E.f (tree/p.py:5) -> g (tree/q.py:8, where m) -> h (tree/q.py:12, where not n) -> `y.item()`"
)


# What a reachable-calls contract forbids and where: a triage round leaves it as declared.
FORBIDS = ("forbidden", "unless-keyword", "unless-int-argument", "host-receivers", "paths")


def what_it_forbids(contract) -> str:
    return repr([contract.get(field) for field in FORBIDS])


def test_a_triaged_declaration_only_adds_facts_to_the_first_one():
    """A triage round states facts, corrects entries and corrects the vocabulary; it never
    forbids less, never checks a reachable-calls contract's calls on other paths, and never
    changes a field of a units contract but its vocabulary and paths, or another kind's
    contract: what it removes from a run is what those corrections rule out."""
    import tomllib

    bench = _bench()
    triaged = sorted(bench.TRIAGED.glob("*.toml"))
    assert triaged
    for path in triaged:
        assert path.stem in bench.TREES, path
        first = tomllib.loads((bench.CONFIGS / path.name).read_text())["tool"]["atom-contracts"]
        after = tomllib.loads(path.read_text())["tool"]["atom-contracts"]
        assert {k: v for k, v in first.items() if k != "contracts"} == {
            k: v for k, v in after.items() if k != "contracts"
        }, path
        triaged_kinds = ("reachable-calls", "units")
        others = [c for c in first["contracts"] if c["kind"] not in triaged_kinds]
        assert others == [c for c in after["contracts"] if c["kind"] not in triaged_kinds], path
        declared = {
            what_it_forbids(c) for c in first["contracts"] if c["kind"] == "reachable-calls"
        }
        for contract in after["contracts"]:
            if contract["kind"] == "reachable-calls":
                assert what_it_forbids(contract) in declared, (path, contract["id"])
            elif contract["kind"] == "units":
                assert set(contract) <= {"id", "kind", "names", "counts", "paths"}, path
