"""The engine-code label sets: what was drawn, and the view a labeller read.

Two label files point into inference engines unpacked outside the repository
(``pip download --no-deps sglang transformers`` and unzip; nothing is copied
in, the records name a path, a line and the line's hash):

* ``repeat_interleave_engine_labels.jsonl`` -- every ``repeat_interleave``
  call of sglang's library code, and of transformers' model code, labelled by
  reading its ``repeats`` argument: ``needs-output-size`` (a device tensor and
  no ``output_size=``: the call syncs), ``host-tensor`` (a tensor the code
  built on the host: no device to sync), ``int-or-has-output-size``;
* ``assert_engine_labels.jsonl`` -- seeded random draws of sglang's engine
  asserts (``srt/``, tests excluded), each labelled ``input`` or ``state``
  before the rule was run on that draw, with the policy of
  ``bench/label_asserts.py``.

    python bench/label_engine.py --engine sglang=/tmp/engines/sglang calls sglang
    python bench/label_engine.py --engine sglang=/tmp/engines/sglang check
    python bench/label_engine.py --engine sglang=/tmp/engines/sglang show engine1 0 10

``check`` redraws every assert round and re-lists every call, and fails when
the committed labels are not exactly that.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from label_asserts import TEST_PATH, show
from precision import DATA, engine_roots, line_sha, read_lines

ASSERT_LABELS = "assert_engine_labels.jsonl"
CALL_LABELS = "repeat_interleave_engine_labels.jsonl"
# The engines' library code: sglang whole (its runtime, kernels and the
# diffusion runtime), transformers' model code only (the rest is tooling).
CALL_SCOPES = {"sglang": ("",), "transformers": ("models/",)}
# Where the engine's asserts are drawn from: the serving runtime.
ASSERT_SCOPE = {"sglang": "srt/"}
# (name, seed, draws): the first round was scored with the rule as it stood,
# then used with every other labelled set to improve it; the second was drawn
# and scored once afterwards.
ASSERT_ROUNDS = (("engine1", 5150, 160), ("engine2", 90210, 110))


def _library_files(root: Path, prefix: str):
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(prefix) or TEST_PATH.search(rel):
            continue
        try:
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        yield rel, text, tree


def repeat_interleave_calls(name: str, root: Path) -> list[dict]:
    """Every call named repeat_interleave, with where its repeats argument starts.

    The anchor is what AC701 reports: the repeats argument (keyword, second
    positional of ``torch.repeat_interleave``, first of the method), or the
    call itself for the single-argument form.
    """
    from checkers.source import SourceFile

    out = []
    for prefix in CALL_SCOPES[name]:
        for rel, text, tree in _library_files(root, prefix):
            if "repeat_interleave" not in text:
                continue
            source = SourceFile(rel, text)
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                called = getattr(func, "attr", None) or getattr(func, "id", None)
                if called != "repeat_interleave":
                    continue
                function_form = isinstance(func, ast.Name) or (
                    isinstance(func, ast.Attribute)
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "torch"
                )
                anchor = next((k.value for k in node.keywords if k.arg == "repeats"), None)
                index = 1 if function_form else 0
                if anchor is None and len(node.args) > index:
                    anchor = node.args[index]
                if anchor is None:
                    anchor = node
                line, col, _, _ = source.span(anchor)
                out.append({"root": name, "path": rel, "line": node.lineno, "anchor": [line, col]})
    return sorted(out, key=lambda r: (r["path"], r["line"], r["anchor"]))


def engine_asserts(name: str, root: Path) -> list[tuple[str, int]]:
    items = []
    for rel, _, tree in _library_files(root, ASSERT_SCOPE[name]):
        items.extend((rel, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Assert))
    return sorted(items)


def draw_asserts(name: str, root: Path) -> list[dict]:
    pool = engine_asserts(name, root)
    taken: set[tuple[str, int]] = set()
    sample = []
    for set_name, seed, k in ASSERT_ROUNDS:
        rng = random.Random(seed)
        left = [x for x in pool if x not in taken]
        for rel, line in sorted(rng.sample(left, k)):
            sample.append({"set": set_name, "root": name, "path": rel, "line": line})
        taken |= {(r["path"], r["line"]) for r in sample}
    return sample


def _labelled(file: str) -> list[dict]:
    path = DATA / file
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def check(roots: dict[str, Path]) -> int:
    bad = 0
    calls = [r for r in _labelled(CALL_LABELS) if r["root"] in roots]
    for name, root in roots.items():
        if name not in CALL_SCOPES:
            continue
        found = [(r["path"], r["line"], r["anchor"]) for r in repeat_interleave_calls(name, root)]
        have = sorted((r["path"], r["line"], r["anchor"]) for r in calls if r["root"] == name)
        if found != have:
            print(f"{name}: {len(found)} calls, {len(have)} labelled; they differ")
            bad = 1
        else:
            print(f"{name}: every one of {len(found)} repeat_interleave calls is labelled")
    asserts = [r for r in _labelled(ASSERT_LABELS) if r["root"] in roots]
    for name, root in roots.items():
        if name not in ASSERT_SCOPE:
            continue
        drawn = [(r["set"], r["path"], r["line"]) for r in draw_asserts(name, root)]
        have = [(r["set"], r["path"], r["line"]) for r in asserts if r["root"] == name]
        if drawn != have[: len(drawn)] or len(have) != len(drawn):
            print(f"{name}: the labelled asserts are not the seeded draw")
            bad = 1
        else:
            print(f"{name}: {len(have)} labelled asserts are exactly the seeded draw")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", default=[], metavar="NAME=DIR")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("calls", help="list every repeat_interleave call of an engine")
    listing.add_argument("name")
    draw = sub.add_parser("draw", help="print the seeded assert draw of an engine")
    draw.add_argument("name")
    sub.add_parser("check", help="the committed labels are exactly the calls and the draws")
    view = sub.add_parser("show", help="print what a labeller read for records of one draw")
    view.add_argument("set")
    view.add_argument("start", type=int)
    view.add_argument("stop", type=int)
    opts = parser.parse_args(argv)
    roots = engine_roots(opts.engine)
    if opts.command == "calls":
        for rec in repeat_interleave_calls(opts.name, roots[opts.name]):
            print(json.dumps(rec))
    elif opts.command == "draw":
        for rec in draw_asserts(opts.name, roots[opts.name]):
            print(json.dumps(rec))
    elif opts.command == "check":
        return check(roots)
    else:
        records = [r for r in draw_asserts_all(roots) if r["set"] == opts.set]
        for record in records[opts.start : opts.stop]:
            print(show(record, roots[record["root"]]))
            print()
    return 0


def draw_asserts_all(roots: dict[str, Path]) -> list[dict]:
    return [
        r for name, root in roots.items() if name in ASSERT_SCOPE for r in draw_asserts(name, root)
    ]


def sha_of(root: Path, rel: str, line: int) -> str:
    return line_sha(read_lines(root / rel)[line - 1].rstrip("\r\n"))


if __name__ == "__main__":
    raise SystemExit(main())
