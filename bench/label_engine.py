"""The engine-code label sets: what was drawn, and the view a labeller read.

Two label files point into inference engines unpacked outside the repository
(``pip download --no-deps sglang lmdeploy vllm transformers`` and unzip; nothing
is copied in, the records name a path, a line and the line's hash):

* ``repeat_interleave_engine_labels.jsonl`` -- every ``repeat_interleave``
  call of sglang's, lmdeploy's and vLLM's library code, and of transformers'
  model code, labelled by reading its ``repeats`` argument: ``needs-output-size``
  (a device tensor and no ``output_size=``: the call syncs), ``host-tensor``
  (a tensor the code built on the host: no device to sync),
  ``int-or-has-output-size``;
* ``assert_engine_labels.jsonl`` -- seeded random draws of the engines'
  asserts (``ASSERT_ROUNDS``), each labelled ``input``, ``state`` or
  ``unclear`` before the rule was run on that draw, with the policy of
  ``bench/label_asserts.py``.

    E="--engine sglang=/work/trees/sglang-0.5.23 --engine lmdeploy=/work/trees/lmdeploy-0.18.0"
    E="$E --engine vllm=/work/trees/vllm-0.33.0"
    python bench/label_engine.py $E calls sglang
    python bench/label_engine.py $E check
    python bench/label_engine.py $E show sglang-dev 0 10      # what the labeller read
    python bench/label_engine.py $E show-calls vllm 0 10
    python bench/label_engine.py $E record sglang-held VERDICTS.tsv   # write one draw's labels
    python bench/label_engine.py $E record-calls vllm VERDICTS.tsv    # every call of an engine

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
from precision import DATA, engine_roots, engine_version, line_sha, read_lines

ASSERT_LABELS = "assert_engine_labels.jsonl"
# A second reader's verdicts on draws the first file labels, written without its labels
# or the rule's verdicts in sight: how often two readers agree bounds any rule's score.
SECOND_ASSERT_LABELS = "assert_engine_second_labels.jsonl"
CALL_LABELS = "repeat_interleave_engine_labels.jsonl"
# The engines' library code: sglang, lmdeploy and vLLM whole (runtime, kernels,
# models and, for sglang, the diffusion runtime), transformers' model code only
# (the rest is tooling). Tests are left out of every one (``_library_files``).
CALL_SCOPES = {
    "sglang": ("",),
    "transformers": ("models/",),
    "lmdeploy": ("",),
    "vllm": ("",),
}
# The engines' asserts are drawn in rounds, each excluding what earlier rounds
# of that engine drew: (set, engine, seed, draws, scope, stratified).
#
# sglang's first two rounds are plain draws from its serving runtime (srt/):
# engine1 was scored with the rule as it stood, then used with every other
# labelled set to improve it; engine2 was drawn and scored once afterwards.
#
# The later rounds draw from the whole package (tests excluded), stratified by
# its top-level subpackage with proportional allocation, so kernels and the
# multimodal runtime are seen in their share and a pooled figure needs no
# weights. Each engine has a dev round (the rule may be changed by what it
# shows) and a held-out round, labelled with the dev round and scored once,
# after every change was committed. A second held-out round of each engine
# (``*-held2``) was drawn and labelled once the first had been scored, before
# any further change to the rule. A third held-out round of each engine
# (``*-held3``) was drawn and labelled before the next change to the rule,
# a fourth (``*-held4``) likewise before the change after that, and a fifth
# (``*-held5``) once the fourth had been scored. A sixth (``*-held6``) was
# drawn once the fifth had been scored, and a seventh (``*-held7``) once the
# sixth had been scored. An eighth (``*-held8``) was drawn once the seventh
# had been scored, and a ninth (``*-held9``) once the eighth had been scored;
# a tenth (``*-held10``) once the ninth had been scored, the first labelled
# under the written caller policy.
# Verdicts: ``input`` / ``state`` as in ``bench/label_asserts.py``,
# ``unclear`` when reading the code could not decide (counted, never scored).
ASSERT_ROUNDS = (
    ("engine1", "sglang", 5150, 160, "srt/", False),
    ("engine2", "sglang", 90210, 110, "srt/", False),
    ("sglang-dev", "sglang", 20280, 70, "", True),
    ("sglang-held", "sglang", 20281, 90, "", True),
    ("lmdeploy-dev", "lmdeploy", 20282, 70, "", True),
    ("lmdeploy-held", "lmdeploy", 20283, 90, "", True),
    ("sglang-held2", "sglang", 20284, 60, "", True),
    ("lmdeploy-held2", "lmdeploy", 20285, 60, "", True),
    ("sglang-held3", "sglang", 20286, 60, "", True),
    ("lmdeploy-held3", "lmdeploy", 20287, 60, "", True),
    ("sglang-held4", "sglang", 20288, 60, "", True),
    ("lmdeploy-held4", "lmdeploy", 20289, 60, "", True),
    ("sglang-held5", "sglang", 20290, 60, "", True),
    ("lmdeploy-held5", "lmdeploy", 20291, 60, "", True),
    ("sglang-held6", "sglang", 20292, 60, "", True),
    ("lmdeploy-held6", "lmdeploy", 20293, 60, "", True),
    ("sglang-held7", "sglang", 20294, 60, "", True),
    ("lmdeploy-held7", "lmdeploy", 20295, 60, "", True),
    ("sglang-held8", "sglang", 20296, 60, "", True),
    ("lmdeploy-held8", "lmdeploy", 20297, 60, "", True),
    ("sglang-held9", "sglang", 20298, 60, "", True),
    ("lmdeploy-held9", "lmdeploy", 20299, 60, "", True),
    ("sglang-held10", "sglang", 20300, 60, "", True),
    ("lmdeploy-held10", "lmdeploy", 20301, 60, "", True),
)
ASSERT_ENGINES = tuple(dict.fromkeys(r[1] for r in ASSERT_ROUNDS))


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


def engine_asserts(name: str, root: Path, scope: str = "") -> list[tuple[str, int]]:
    items = []
    for rel, _, tree in _library_files(root, scope):
        items.extend((rel, n.lineno) for n in ast.walk(tree) if isinstance(n, ast.Assert))
    return sorted(items)


def stratum(rel: str) -> str:
    """The top-level subpackage a file belongs to; top-level modules form one stratum."""
    head, sep, _ = rel.partition("/")
    return head if sep else "."


def allocate(sizes: dict[str, int], k: int) -> dict[str, int]:
    """Proportional allocation of ``k`` draws over strata, largest remainder first.

    Ties in the remainder go to the larger stratum, then the name, so the
    allocation is a function of the sizes alone.
    """
    total = sum(sizes.values())
    if not 0 <= k <= total:
        raise ValueError(f"cannot draw {k} of {total}")
    exact = {s: k * n / total for s, n in sizes.items()}
    out = {s: int(x) for s, x in exact.items()}
    short = k - sum(out.values())
    for s in sorted(sizes, key=lambda s: (out[s] - exact[s], -sizes[s], s))[:short]:
        out[s] += 1
    return out


def draw_asserts(name: str, root: Path) -> list[dict]:
    pools: dict[str, list[tuple[str, int]]] = {}
    taken: set[tuple[str, int]] = set()
    sample = []
    for set_name, engine, seed, k, scope, stratified in ASSERT_ROUNDS:
        if engine != name:
            continue
        if scope not in pools:
            pools[scope] = engine_asserts(name, root, scope)
        rng = random.Random(seed)
        left = [x for x in pools[scope] if x not in taken]
        if stratified:
            strata: dict[str, list[tuple[str, int]]] = {}
            for item in left:
                strata.setdefault(stratum(item[0]), []).append(item)
            shares = allocate({s: len(v) for s, v in strata.items()}, k)
            drawn = [x for s in sorted(strata) for x in rng.sample(strata[s], shares[s])]
        else:
            drawn = rng.sample(left, k)
        for rel, line in sorted(drawn):
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
        if name not in ASSERT_ENGINES:
            continue
        drawn = [(r["set"], r["path"], r["line"]) for r in draw_asserts(name, root)]
        have = [(r["set"], r["path"], r["line"]) for r in asserts if r["root"] == name]
        if drawn != have[: len(drawn)] or len(have) != len(drawn):
            print(f"{name}: the labelled asserts are not the seeded draw")
            bad = 1
        else:
            print(f"{name}: {len(have)} labelled asserts are exactly the seeded draw")
        first = {(r["set"], r["path"], r["line"]): r["sha"] for r in asserts if r["root"] == name}
        second = [r for r in _labelled(SECOND_ASSERT_LABELS) if r["root"] == name]
        sets = set(r["set"] for r in second)
        wanted = [key for key in first if key[0] in sets]
        got = [(r["set"], r["path"], r["line"]) for r in second]
        if got != wanted or any(first[k] != r["sha"] for k, r in zip(got, second, strict=True)):
            print(f"{name}: the second reader's labels are not whole draws of the first file")
            bad = 1
        elif second:
            print(f"{name}: {len(second)} second-reader labels, whole draws: {sorted(sets)}")
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
    calls_view = sub.add_parser(
        "show-calls", help="print what a labeller read for an engine's repeat_interleave calls"
    )
    calls_view.add_argument("name")
    calls_view.add_argument("start", type=int)
    calls_view.add_argument("stop", type=int)
    write_calls = sub.add_parser(
        "record-calls",
        help="write verdicts for every repeat_interleave call of an engine",
        description="VERDICTS holds one line per call: its index in `show-calls`, a tab, "
        "needs-output-size / host-tensor / int-or-has-output-size / unclear, a tab, "
        "the one-line reason.",
    )
    write_calls.add_argument("name")
    write_calls.add_argument("verdicts", type=Path)
    write_calls.add_argument(
        "--file",
        default=CALL_LABELS,
        help=f"label file under tests/checkers/data (default {CALL_LABELS}); a second "
        f"labelling of calls already in it goes to its own file",
    )
    write = sub.add_parser(
        "record",
        help="append verdicts for one assert draw to the label file",
        description="VERDICTS holds one line per drawn assert: its index in `show`, "
        "a tab, input / state / unclear, a tab, the one-line reason.",
    )
    write.add_argument("set")
    write.add_argument("verdicts", type=Path)
    write.add_argument(
        "--file",
        default=ASSERT_LABELS,
        help=f"label file under tests/checkers/data (default {ASSERT_LABELS}); a second "
        f"reader's verdicts on a draw already labelled go to {SECOND_ASSERT_LABELS}",
    )
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
    elif opts.command == "record":
        return record(opts.set, opts.verdicts, roots, opts.file)
    elif opts.command == "show-calls":
        calls = repeat_interleave_calls(opts.name, roots[opts.name])
        for index in range(opts.start, min(opts.stop, len(calls))):
            print(
                f"[{index}] anchor {calls[index]['anchor']} " + show(calls[index], roots[opts.name])
            )
            print()
    elif opts.command == "record-calls":
        return record_calls(opts.name, opts.verdicts, roots, opts.file)
    else:
        records = [r for r in draw_asserts_all(roots) if r["set"] == opts.set]
        for index in range(opts.start, min(opts.stop, len(records))):
            print(f"[{index}] " + show(records[index], roots[records[index]["root"]]))
            print()
    return 0


VERDICTS = ("input", "state", "unclear")


def record(set_name: str, verdicts: Path, roots: dict[str, Path], file: str = ASSERT_LABELS) -> int:
    """Append one draw's verdicts to a label file, each with its line's hash.

    Refuses a draw already labelled there, a verdict file that skips or repeats an
    index, and an unknown verdict, so the file stays exactly the draws in order; a
    second reader's file takes only draws the first file has labelled.
    """
    records = [r for r in draw_asserts_all(roots) if r["set"] == set_name]
    if not records:
        raise ValueError(f"no draw named {set_name!r} among the engines given")
    if any(r["set"] == set_name for r in _labelled(file)):
        raise ValueError(f"{set_name!r} is already labelled in {file}")
    if file != ASSERT_LABELS and not any(r["set"] == set_name for r in _labelled(ASSERT_LABELS)):
        raise ValueError(f"{set_name!r} has no first labels in {ASSERT_LABELS} to compare with")
    rows = _verdict_rows(verdicts, VERDICTS, len(records))
    root = roots[records[0]["root"]]
    version = engine_version(root)
    with (DATA / file).open("a", encoding="utf-8") as out:
        for index, rec in enumerate(records):
            label, reason = rows[index]
            full = {
                "set": set_name,
                "root": rec["root"],
                "version": version,
                "path": rec["path"],
                "line": rec["line"],
                "sha": sha_of(root, rec["path"], rec["line"]),
                "label": label,
                "reason": reason,
            }
            out.write(json.dumps(full) + "\n")
    print(f"{set_name}: {len(records)} verdicts recorded in {file}")
    return 0


CALL_VERDICTS = ("needs-output-size", "host-tensor", "int-or-has-output-size", "unclear")


def _verdict_rows(verdicts: Path, allowed: tuple[str, ...], count: int) -> dict[int, tuple]:
    rows: dict[int, tuple[str, str]] = {}
    for number, line in enumerate(verdicts.read_text(encoding="utf-8").splitlines(), 1):
        index, label, reason = line.split("\t")
        if label not in allowed or not reason.strip() or int(index) in rows:
            raise ValueError(f"{verdicts}:{number}: bad verdict line {line!r}")
        rows[int(index)] = (label, reason.strip())
    if sorted(rows) != list(range(count)):
        raise ValueError(f"{verdicts}: want indices 0..{count - 1}, got {sorted(rows)}")
    return rows


def record_calls(name: str, verdicts: Path, roots: dict[str, Path], file: str) -> int:
    """Append verdicts for every repeat_interleave call of one engine, in call order."""
    if any(r["root"] == name for r in _labelled(file)):
        raise ValueError(f"{name}'s calls are already labelled in {file}")
    root = roots[name]
    calls = repeat_interleave_calls(name, root)
    rows = _verdict_rows(verdicts, CALL_VERDICTS, len(calls))
    version = engine_version(root)
    with (DATA / file).open("a", encoding="utf-8") as out:
        for index, call in enumerate(calls):
            label, reason = rows[index]
            full = {
                "root": name,
                "version": version,
                "path": call["path"],
                "line": call["line"],
                "sha": sha_of(root, call["path"], call["line"]),
                "label": label,
                "reason": reason,
                "anchor": call["anchor"],
            }
            out.write(json.dumps(full) + "\n")
    print(f"{name}: {len(calls)} call verdicts recorded in {file}")
    return 0


def draw_asserts_all(roots: dict[str, Path]) -> list[dict]:
    return [
        r
        for name, root in roots.items()
        if name in ASSERT_ENGINES
        for r in draw_asserts(name, root)
    ]


def sha_of(root: Path, rel: str, line: int) -> str:
    return line_sha(read_lines(root / rel)[line - 1].rstrip("\r\n"))


if __name__ == "__main__":
    raise SystemExit(main())
