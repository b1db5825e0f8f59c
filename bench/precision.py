"""Precision and recall of AC301 and AC701 on hand-labelled real code.

The labels (``tests/checkers/data/*_labels.jsonl``) name a line of an installed
source file -- torch's Python sources or the standard library -- with its
text's hash and a verdict made by reading the code around it; the source is
never copied into this repository. This script runs each rule over the files
the labels name, as the engine would (the contract's pre-filter first, then
``check``), and counts a labelled statement as flagged when a finding's span
starts on its line.

    python bench/precision.py            # both rules
    python bench/precision.py --misses   # also list every disagreement

Records whose file is missing or whose line no longer hashes the same are
skipped and counted, so a different torch or Python shows up as "skipped",
never as a silently different number.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "checkers" / "data"

# What the labels were made against; another version may move or change lines.
LABELLED_TORCH = "2.13.0"
LABELLED_PYTHON = (3, 11)


def source_roots() -> dict[str, Path | None]:
    """The installed trees the labels point into, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    torch_root = None
    if spec is not None and spec.submodule_search_locations:
        torch_root = Path(next(iter(spec.submodule_search_locations)))
    return {"torch": torch_root, "stdlib": Path(sysconfig.get_paths()["stdlib"])}


def versions_match() -> tuple[bool, str]:
    try:
        torch_version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return False, "torch is not installed"
    if not torch_version.startswith(LABELLED_TORCH):
        return False, f"labels are for torch {LABELLED_TORCH}, found {torch_version}"
    if sys.version_info[:2] != LABELLED_PYTHON:
        return False, f"labels are for Python {LABELLED_PYTHON}, found {sys.version_info[:2]}"
    return True, ""


def line_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def read_lines(path: Path) -> list[str]:
    # Split only where the tokenizer does, so line numbers agree with ast's.
    return io.StringIO(path.read_text(encoding="utf-8"), newline="").readlines()


@dataclass
class Score:
    positive: str  # the label that the rule should flag
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    skipped: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def flag_all_precision(self) -> float:
        """What a rule flagging every labelled statement (S101 for asserts) reaches."""
        return (self.tp + self.fn) / self.total if self.total else 0.0


def score(labels_file: str, kind: str, params: dict, positive: str) -> Score:
    """Run contract ``kind`` over every file the labels name and compare."""
    sys.path.insert(0, str(REPO))
    from checkers.rules import kind_class
    from checkers.source import SourceFile

    contract = kind_class(kind).from_table({"id": "precision", **params}, "bench")
    roots = source_roots()
    records = [json.loads(line) for line in (DATA / labels_file).read_text().splitlines() if line]
    result = Score(positive)
    # AC701 records name the repeats argument's position: two calls can share a line.
    anchored = all("anchor" in rec for rec in records)
    flagged_by_file: dict[tuple[str, str], set[int] | None] = {}
    for rec in records:
        key = (rec["root"], rec["path"])
        if key not in flagged_by_file:
            root = roots.get(rec["root"])
            path = root / rec["path"] if root is not None else None
            if path is None or not path.is_file():
                flagged_by_file[key] = None
            else:
                text = path.read_text(encoding="utf-8")
                source = SourceFile(rec["path"], text, abspath=str(path))
                found: set[int] = set()
                if contract.wants(source):
                    found = {
                        (f.line, f.column) if anchored else f.span_lines[0]
                        for f in contract.check(source, None)
                    }
                flagged_by_file[key] = found
        flagged = flagged_by_file[key]
        if flagged is None:
            result.skipped += 1
            continue
        lines = read_lines(roots[rec["root"]] / rec["path"])
        if (
            rec["line"] > len(lines)
            or line_sha(lines[rec["line"] - 1].rstrip("\r\n")) != rec["sha"]
        ):
            result.skipped += 1
            continue
        hit = (tuple(rec["anchor"]) if anchored else rec["line"]) in flagged
        want = rec["label"] == positive
        if hit and want:
            result.tp += 1
        elif hit:
            result.fp += 1
            result.misses.append(f"FP {rec['root']}:{rec['path']}:{rec['line']} -- {rec['reason']}")
        elif want:
            result.fn += 1
            result.misses.append(f"FN {rec['root']}:{rec['path']}:{rec['line']} -- {rec['reason']}")
        else:
            result.tn += 1
    return result


def input_assert_score() -> Score:
    return score("assert_labels.jsonl", "input-assert", {}, "input")


def required_keyword_score() -> Score:
    params = {"calls": ["torch.repeat_interleave"], "keyword": "output_size"}
    return score("repeat_interleave_labels.jsonl", "required-keyword", params, "needs-output-size")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list every disagreement")
    opts = parser.parse_args(argv)
    ok, why = versions_match()
    if not ok:
        print(f"warning: {why}; mismatched lines are skipped", file=sys.stderr)
    for name, fn, baseline in (
        ("AC301 input-assert", input_assert_score, "S101 (every assert)"),
        ("AC701 required-keyword", required_keyword_score, "every call"),
    ):
        if not (
            DATA / ("assert_labels.jsonl" if "301" in name else "repeat_interleave_labels.jsonl")
        ).exists():
            continue
        s = fn()
        print(
            f"{name}: precision {s.precision:.3f} ({s.tp}/{s.tp + s.fp}), "
            f"recall {s.recall:.3f} ({s.tp}/{s.tp + s.fn}) on {s.total} labelled "
            f"({s.skipped} skipped); {baseline}: precision {s.flag_all_precision:.3f}, recall 1.000"
        )
        if opts.misses:
            for line in s.misses:
                print("   ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
