"""How the AC301 label sample was drawn, and the view a labeller reads.

The labels in ``tests/checkers/data/assert_labels.jsonl`` are a seeded random
sample of the asserts in the library code (test directories and test files
excluded) of torch 2.13.0 and the Python 3.11 standard library. Each round
draws 60 % from torch and 40 % from the stdlib, excluding what earlier rounds
drew; the labeller reads the enclosing function up to the assert (``show``)
and writes a verdict and a one-line reason before the rule is run on that
round.

    python bench/label_asserts.py check              # the committed sample is this draw
    python bench/label_asserts.py show holdout3 0 10 # what a labeller read

Verdicts: ``input`` when a caller, a config or the environment can make the
condition false (a parameter of a function reachable from outside, read off
or unchanged; an attribute the constructor copied from its arguments; a
private helper a caller hands such a value; the contents of a file the caller
names); ``state`` when the code established it (its own computations, its own
bookkeeping, what a caller or a registered pattern already checked,
narrowing, markers).

"The code" is the package the assert is in, not the function alone, so a
label reads the callers. A parameter that every caller in the package
builds, casts, allocates or checks before the call (an only caller handing
its own buffer, a record's one builder) is ``state``, once the labeller has
found every caller -- the package searched for the function's name, and a
method's name through the objects that hold it. A parameter some caller
hands through from its own caller, a config or a file is ``input``, and so
is one no caller in the package reaches. Being public, or importable from
outside the package, does not by itself make a parameter ``input``: the
label records what the program can pass, not what a stranger might.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from precision import DATA, read_lines, source_roots

TEST_PATH = re.compile(
    r"(^|/)(test|tests|testing|idle_test|unittest)(/|$)|(^|/)test_[^/]*\.py$|_test\.py$"
    r"|(^|/)conftest\.py$"
)
# (name, seed, draws from torch, draws from the stdlib)
ROUNDS = (
    ("dev", 20261202, 120, 80),
    ("holdout", 777, 60, 40),
    ("holdout2", 31337, 60, 40),
    ("holdout3", 4242, 60, 40),
)


def all_asserts() -> dict[str, list[tuple[str, int]]]:
    """Every assert of library code, in a stable order: (relative path, line)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name, root in source_roots().items():
        items: list[tuple[str, int]] = []
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if name == "stdlib" and (
                rel.startswith("site-packages/") or rel.startswith("lib2to3/tests/")
            ):
                continue
            if TEST_PATH.search(rel):
                continue
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (SyntaxError, UnicodeDecodeError, ValueError):
                continue
            items.extend((rel, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Assert))
        out[name] = sorted(items)
    return out


def draw() -> list[dict]:
    pools = all_asserts()
    taken: set[tuple[str, str, int]] = set()
    sample: list[dict] = []
    for set_name, seed, from_torch, from_stdlib in ROUNDS:
        rng = random.Random(seed)
        for root, k in (("torch", from_torch), ("stdlib", from_stdlib)):
            pool = [x for x in pools[root] if (root, *x) not in taken]
            for rel, line in sorted(rng.sample(pool, k)):
                sample.append({"set": set_name, "root": root, "path": rel, "line": line})
        taken |= {(r["root"], r["path"], r["line"]) for r in sample}
    return sample


def show(record: dict, root: Path | None = None) -> str:
    """The enclosing function's signature and the lines up to the assert.

    ``root`` defaults to the record's own source root (torch or the stdlib); the engine
    labeller passes an unpacked wheel's.
    """
    root = root if root is not None else source_roots()[record["root"]]
    lines = [x.rstrip("\r\n") for x in read_lines(root / record["path"])]
    tree = ast.parse("\n".join(lines))
    target = record["line"]
    func = None
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.lineno <= target <= node.end_lineno
            and (func is None or node.lineno > func.lineno)
        ):
            func = node
    out = [f"{record['root']}:{record['path']}:{target}"]
    start = max(1, target - 12)
    if func is not None:
        body = func.body[0].lineno
        out += [f"{k:5d}| {lines[k - 1]}" for k in range(func.lineno, min(body, func.lineno + 7))]
        start = max(body, target - 22)
    out += [
        f"{k:5d}{'>' if k == target else '|'} {lines[k - 1]}"
        for k in range(start, min(target + 3, len(lines)) + 1)
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("check", help="redraw the sample and compare it with the committed labels")
    view = sub.add_parser("show", help="print what a labeller read for records of one set")
    view.add_argument("set")
    view.add_argument("start", type=int)
    view.add_argument("stop", type=int)
    opts = parser.parse_args(argv)
    labelled = [json.loads(x) for x in (DATA / "assert_labels.jsonl").read_text().splitlines()]
    if opts.command == "check":
        drawn = [(r["set"], r["root"], r["path"], r["line"]) for r in draw()]
        have = [(r["set"], r["root"], r["path"], r["line"]) for r in labelled]
        if drawn != have:
            print(
                f"the committed labels are not this draw ({len(drawn)} drawn, {len(have)} labelled)"
            )
            return 1
        print(f"{len(have)} labelled asserts are exactly the seeded draw")
        return 0
    records = [r for r in labelled if r["set"] == opts.set][opts.start : opts.stop]
    for record in records:
        print(show(record))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
