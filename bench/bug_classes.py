"""The three bug-class kinds on code nobody here wrote: findings, a labelled sample, precision.

    python bench/bug_classes.py run [TREE ...]      # findings per kind per tree
    python bench/bug_classes.py draw [TREE ...]     # the seeded sample, added to the labels
    python bench/bug_classes.py show TREE KIND [N]  # each sampled finding with its code around it
    python bench/bug_classes.py score               # precision per kind per tree, from the labels
    python bench/bug_classes.py plant               # recall: the record's bugs planted in ATOM
    python bench/bug_classes.py triage [TREE ...]   # what one triage round's declaration kept

The trees (``/work/trees``, or ``$ATOM_CONTRACTS_TREES``): ROCm/ATOM at ffdf3bb5d
(``atom-upstream``), vLLM 0.33.0's package (``vllm``) and SGLang 0.5.23's (``sglang``);
held out, each run once after the rules were narrowed on the others, SGLang 0.4.6's
(``sglang-0.4.6``), LMDeploy 0.18.0's (``lmdeploy``), transformers 5.25.0's
(``transformers``: its continuous batching), LMCache 0.5.6's (``lmcache``) and, after
the narrowings those taught, ExLlamaV2 0.3.2's (``exllamav2``); after the faults those
four showed were fixed, LightLLM at ``fc72ffab`` (``lightllm``), DeepSpeed 0.19.8's
inference v2 (``deepspeed``), vLLM-Ascend at ``182b75ea`` (``vllm-ascend``), Tokasaurus
at ``72689052`` (``tokasaurus``) and mini-SGLang at ``20fcd7f3`` (``mini-sglang``);
after theirs, the text-generation-inference server at ``db931fcf`` (``tgi``); after its,
nano-vllm at ``bb823b3e`` (``nano-vllm``) and Sarathi-Serve at ``96f99117``
(``sarathi-serve``); after per-call findings and the callers' values, SGLang 0.5.3's
package (``sglang-0.5.3``); after an argument not None by its form bound the callee's
test, vLLM 0.11.0's package (``vllm-0.11.0``) and RTP-LLM at ``4b8d39cd``
(``rtp-llm``); after the faults RTP-LLM showed, Aphrodite 0.24.1's package
(``aphrodite``); after the readings Aphrodite's labels showed, vLLM-Omni 0.30.0's
package (``vllm-omni``); after the readings its labels showed, SGLang 0.5.1's package
(``sglang-0.5.1``). A package tree is its wheel unpacked into ``<name>-<version>`` (``pip
download --no-deps lmdeploy==0.18.0``, then ``unzip`` it there); ATOM and the trees
named by a commit are that commit's ``git archive`` (of the GitHub repository:
ROCm/ATOM, ModelTC/lightllm, vllm-project/vllm-ascend, ScalingIntelligence/tokasaurus,
sgl-project/mini-sglang, huggingface/text-generation-inference,
GeeeekExplorer/nano-vllm, microsoft/sarathi-serve), RTP-LLM's ``rtp_llm`` package the
``.py`` blobs of that commit read one at a time from the mirror (its snapshot lacks
large files an archive needs: ``git ls-tree -r HEAD rtp_llm``, then ``git cat-file
blob`` each), DeepSpeed its sdist unpacked (``pip download --no-deps --no-binary :all:
deepspeed==0.19.8``). Each is checked with the
declaration a maintainer of that engine would write, kept beside this script
(``bench/bug_classes/<tree>.toml``), in a scratch project of hard links (the trees are
read-only). ``draw`` samples ``SAMPLE`` findings per kind per tree (all of them when
there are fewer) with ``random.Random(SEED)`` over the findings in path order, and
appends the ones not yet labelled to ``tests/checkers/data/bug_class_labels.jsonl`` with
an empty label; each is then read in its code and labelled ``right`` or ``wrong`` with a
one-line reason. A label names the file, the line, the code and a hash of the line's
text; no source is copied. ``score`` counts a label only while its line still hashes the
same and the finding is still reported there.

``plant`` copies ATOM's own files, plants each of the record's five bugs in its
copy one at a time (the edit the record describes, on the code it describes),
checks the copy with the same declaration plus what the planted shape needs, and
reports whether the planted finding is there -- and that the unplanted copy has
none at that place.

``triage`` measures what a maintainer's first reading of a run is worth. A tree's
declaration after one triage round (``bench/bug_classes/triaged/<tree>.toml``) is its first
declaration with what one reader added after reading the first run's chains -- entry
conditions, boundary contexts, an entry corrected -- each line with its evidence in the
engine's code beside it, written without the labels. The command checks the tree with it
and reports, per kind, how many labelled findings of the first run it keeps, right and
wrong apart, and precision before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "bench" / "bug_classes"
LABELS = REPO / "tests" / "checkers" / "data" / "bug_class_labels.jsonl"
TREES_DIR = Path(os.environ.get("ATOM_CONTRACTS_TREES", "/work/trees"))
TREES = {
    "atom-upstream": ("atom-upstream", ("atom",)),
    "vllm": ("vllm-0.33.0", ("vllm",)),
    "sglang": ("sglang-0.5.23", ("sglang",)),
    # Held out: measured once, after the rules were narrowed on the three trees above.
    "sglang-0.4.6": ("sglang-0.4.6", ("sglang",)),
    # Held out as well: declared and run once, after every narrowing above.
    "lmdeploy": ("lmdeploy-0.18.0", ("lmdeploy",)),
    "transformers": ("transformers-5.25.0", ("transformers",)),
    "lmcache": ("lmcache-0.5.6", ("lmcache",)),
    # Held out after every narrowing the three above taught.
    "exllamav2": ("exllamav2-0.3.2", ("exllamav2",)),
    # Held out after the faults the four above showed were fixed.
    "lightllm": ("lightllm-fc72ffab", ("lightllm",)),
    "deepspeed": ("deepspeed-0.19.8", ("deepspeed",)),
    "vllm-ascend": ("vllm-ascend-182b75ea", ("vllm_ascend",)),
    "tokasaurus": ("tokasaurus-72689052", ("tokasaurus",)),
    "mini-sglang": ("mini-sglang-20fcd7f3", ("python/minisgl",)),
    # Held out after the five above's faults were fixed and entry conditions took values.
    "tgi": ("tgi-db931fcf", ("server/text_generation_server",)),
    # Held out after TGI's refusal was mended (a condition may name a parameter).
    "nano-vllm": ("nano-vllm-bb823b3e", ("nanovllm",)),
    "sarathi-serve": ("sarathi-serve-96f99117", ("sarathi",)),
    # Held out after reachable-calls reported every forbidden call and read more of what a
    # caller's values decide: SGLang between the two above, with 0.4.6's declaration.
    "sglang-0.5.3": ("sglang-0.5.3", ("sglang",)),
    # Held out after an argument not None by its form decided a callee's None test: an
    # older vLLM, with 0.33.0's declaration unchanged.
    "vllm-0.11.0": ("vllm-0.11.0", ("vllm",)),
    # Held out as well, declared by a reader who neither ran the kinds nor saw a finding.
    "rtp-llm": ("rtp-llm-4b8d39cd", ("rtp_llm",)),
    # Held out after the two faults RTP-LLM showed were fixed, declared the same way.
    "aphrodite": ("aphrodite-0.24.1", ("aphrodite",)),
    # Held out after the host tensors, None receivers, asserts and **kwargs Aphrodite's
    # labels showed were read, declared the same way.
    "vllm-omni": ("vllm-omni-0.30.0", ("vllm_omni",)),
    # Held out after the readings vLLM-Omni's labels showed: SGLang between 0.4.6 and 0.5.3,
    # with 0.4.6's declaration unchanged.
    "sglang-0.5.1": ("sglang-0.5.1", ("sglang",)),
}
# A tree's declaration after one triage round: its first declaration with the facts a reader
# blind to the labels stated after reading the first run's chains (each with its evidence).
TRIAGED = CONFIGS / "triaged"
KINDS = {"units": "AC80", "published-keys": "AC81", "reachable-calls": "AC82"}
SAMPLE = 50
SEED = 2147  # the refactor's pull request
SCRATCH = Path(tempfile.gettempdir()) / "atom-contracts-bug-classes"


def tree_root(name: str) -> Path:
    return TREES_DIR / TREES[name][0]


def line_hash(text: str) -> str:
    return hashlib.sha256(text.rstrip("\r\n").encode("utf-8", "surrogateescape")).hexdigest()[:16]


def line_of(name: str, path: str, line: int) -> str | None:
    try:
        with open(tree_root(name) / path, encoding="utf-8", errors="surrogateescape") as fh:
            for i, text in enumerate(fh, 1):
                if i == line:
                    return text
    except OSError:
        return None
    return None


def project(name: str, config: Path | None = None, *, into: Path | None = None) -> Path:
    """A scratch project: the tree's packages hard-linked under ``tree/``, the declaration."""
    where = into or SCRATCH / name
    root = tree_root(name)
    if not root.is_dir():
        raise SystemExit(
            f"{name}: no tree at {root} (unpack {TREES[name][0]} there, or set "
            "ATOM_CONTRACTS_TREES to the folder that holds it)"
        )
    if not (where / "tree").is_dir():
        for package in TREES[name][1]:
            for folder, dirs, files in os.walk(root / package):
                dirs[:] = [d for d in dirs if d != "__pycache__" and not d.startswith(".")]
                rel = Path(folder).relative_to(root)
                (where / "tree" / rel).mkdir(parents=True, exist_ok=True)
                for f in files:
                    if f.endswith(".py"):
                        try:
                            os.link(Path(folder) / f, where / "tree" / rel / f)
                        except OSError:
                            shutil.copy2(Path(folder) / f, where / "tree" / rel / f)
    (where / "pyproject.toml").write_text((config or CONFIGS / f"{name}.toml").read_text())
    return where


def check(where: Path, *args: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, "-m", "checkers", "check", "--no-cache", "--exit-zero", "-q",
         "--output-format", "json", *args, "tree"],
        cwd=where, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"check failed in {where}: {done.stderr[-2000:]}")
    out = []
    for f in json.loads(done.stdout):
        f["path"] = f["path"].removeprefix("tree/")
        out.append(f)
    # A contract that failed on a file checked nothing there: its count would read as fewer
    # findings, not as the fault it is.
    failed = [f"{f['path']}: {f['message']}" for f in out if f["code"] == "AC002"]
    if failed:
        raise SystemExit(f"a contract failed in {where}:\n" + "\n".join(failed[:10]))
    return out


def findings(name: str, *, fresh: bool = False, triaged: bool = False) -> list[dict]:
    """The tree's findings of the three kinds, with its first declaration or, ``triaged``,
    with the one its triage round left (``TRIAGED``); kept in ``SCRATCH`` until the
    declaration or the checker changes."""
    cached = SCRATCH / (f"{name}-triaged.json" if triaged else f"{name}.json")
    config = (TRIAGED if triaged else CONFIGS) / f"{name}.toml"
    if (
        not fresh
        and cached.is_file()
        and cached.stat().st_mtime > max(config.stat().st_mtime, _checker_mtime())
    ):
        return json.loads(cached.read_text())
    where = project(name, config, into=SCRATCH / f"{name}-triaged") if triaged else project(name)
    found = [f for f in check(where) if f["code"].startswith(tuple(KINDS.values()))]
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(found))
    return found


def _checker_mtime() -> float:
    return max(
        p.stat().st_mtime for d in ("checkers", "contracts") for p in (REPO / d).rglob("*.py")
    )


def kind_of(code: str) -> str:
    return next(k for k, prefix in KINDS.items() if code.startswith(prefix))


def load_labels() -> list[dict]:
    if not LABELS.is_file():
        return []
    return [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]


def what(finding: dict) -> str:
    """What tells two findings on one line apart: for an AC821, the forbidden pattern it
    reaches and where the forbidden call is (``*.cpu@sglang/x.py:1215``: an entry reaches
    each such call in a finding of its own); for the others, what the message says first
    (``assigns token``, ``adds token/chunk``), kept only where one line has two findings of
    one code (``whats``)."""
    message = finding["message"]
    if finding["code"].startswith(KINDS["reachable-calls"]) and "reaches `" in message:
        pattern = message.split("reaches `", 1)[1].split("`", 1)[0]
        sites = HOP_SITE.findall(message)
        return f"{pattern}@{sites[-1]}" if sites else pattern
    return ""


# A hop of a chain as the finding prints it, ``(tree/path:line)`` or ``(tree/path:line,
# where ...)``: the last is the forbidden call's place.
HOP_SITE = re.compile(r"\(tree/([^():]+:\d+)[),]")


def whats(found: list[dict]) -> list[str]:
    """``what`` of each finding, told apart by its message's first words where it alone
    would not (a units mix and the assignment of its result on one line): a label's key
    stays as it was for every finding that has its line and code to itself."""
    base = [what(f) for f in found]
    count = Counter((f["code"], f["path"], f["line"], w) for f, w in zip(found, base, strict=True))
    return [
        w + "|" + _told_apart(f) if count[(f["code"], f["path"], f["line"], w)] > 1 else w
        for f, w in zip(found, base, strict=True)
    ]


def _told_apart(finding: dict) -> str:
    """What tells two findings of one line and ``what`` apart: for an AC821, the forbidden
    call as the chain's last hop spells it (two syncs on one line, ``a.tolist()`` and
    ``b.tolist()``); for the others, the message's first words."""
    message = finding["message"]
    if finding["code"].startswith(KINDS["reachable-calls"]) and message.endswith("`"):
        return message.rsplit("`", 2)[1]
    return message.split(" (", 1)[0]


def keyed(found: list[dict]) -> list[tuple[tuple, dict]]:
    """Each finding with the key its label has, less the tree: ``(code, path, line, what)``."""
    return [
        ((f["code"], f["path"], f["line"], w), f) for f, w in zip(found, whats(found), strict=True)
    ]


def key(rec: dict) -> tuple:
    return (rec["tree"], rec["code"], rec["path"], rec["line"], rec.get("what", ""))


# -- commands --------------------------------------------------------------------


def cmd_run(args) -> int:
    for name in args.trees or TREES:
        found = findings(name, fresh=True)
        counts = Counter(kind_of(f["code"]) for f in found)
        print(f"{name}: " + ", ".join(f"{k} {counts.get(k, 0)}" for k in KINDS))
    return 0


def sample(name: str, kind: str, found: list[dict]) -> list[dict]:
    mine = sorted(
        (f for f in found if kind_of(f["code"]) == kind),
        key=lambda f: (f["path"], f["line"], f["column"], f["code"]),
    )
    if len(mine) <= SAMPLE:
        return mine
    return sorted(random.Random(SEED).sample(mine, SAMPLE), key=lambda f: (f["path"], f["line"]))


def cmd_draw(args) -> int:
    labels = load_labels()
    known = {key(r) for r in labels}
    added = 0
    for name in args.trees or TREES:
        found = findings(name)
        told = {id(f): k[3] for k, f in keyed(found)}
        for kind in KINDS:
            for f in sample(name, kind, found):
                rec = {
                    "tree": name,
                    "kind": kind,
                    "code": f["code"],
                    "path": f["path"],
                    "line": f["line"],
                    "what": told[id(f)],
                    "sha": line_hash(line_of(name, f["path"], f["line"]) or ""),
                    "label": "",
                    "reason": "",
                }
                if key(rec) not in known:
                    labels.append(rec)
                    known.add(key(rec))
                    added += 1
    labels.sort(key=lambda r: (r["tree"], r["kind"], r["path"], r["line"], r["code"]))
    LABELS.write_text("".join(json.dumps(r) + "\n" for r in labels))
    print(f"{added} new records in {LABELS.relative_to(REPO)}")
    return 0


def cmd_show(args) -> int:
    found = dict(keyed(findings(args.tree)))
    records = [r for r in load_labels() if r["tree"] == args.tree and r["kind"] == args.kind]
    for index, rec in enumerate(records):
        if args.unlabelled and rec["label"]:
            continue
        if args.index is not None and index != args.index:
            continue
        f = found.get((rec["code"], rec["path"], rec["line"], rec.get("what", "")))
        print(f"=== [{index}] {rec['code']} {rec['path']}:{rec['line']}  label={rec['label']!r}")
        print(f["message"] if f else "(no longer reported)")
        try:
            lines = (tree_root(args.tree) / rec["path"]).read_text(errors="replace").splitlines()
        except OSError:
            continue
        lo, hi = max(0, rec["line"] - 1 - args.context), min(len(lines), rec["line"] + args.context)
        for i in range(lo, hi):
            mark = ">" if i + 1 == rec["line"] else " "
            print(f"{mark}{i + 1:6d} {lines[i]}")
    return 0


def score() -> dict[tuple[str, str], tuple[int, int, int]]:
    """(tree, kind) -> (right, labelled, skipped) over the labels that still apply."""
    current = {name: {k for k, _ in keyed(findings(name))} for name in TREES}
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for rec in load_labels():
        cell = out[(rec["tree"], rec["kind"])]
        text = line_of(rec["tree"], rec["path"], rec["line"])
        if (
            not rec["label"]
            or text is None
            or line_hash(text) != rec["sha"]
            or (rec["code"], rec["path"], rec["line"], rec.get("what", ""))
            not in current[rec["tree"]]
        ):
            cell[2] += 1
            continue
        cell[1] += 1
        cell[0] += rec["label"] == "right"
    return {k: tuple(v) for k, v in out.items()}


def cmd_triage(args) -> int:
    """Per tree with a triaged declaration and per kind: the findings before and after the
    round, the labelled ones each keeps (right and wrong apart), and precision before and
    after. A label counts where it would in ``score``: its line unchanged and its finding
    reported by the first run."""
    names = args.trees or sorted(p.stem for p in TRIAGED.glob("*.toml"))
    unknown = [n for n in names if n not in TREES or not (TRIAGED / f"{n}.toml").is_file()]
    if unknown:
        raise SystemExit(f"no triaged declaration for {', '.join(unknown)} in {TRIAGED}")
    labels = load_labels()
    print(
        "| tree | kind | findings before -> after | right kept | wrong kept "
        "| precision before -> after |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name in names:
        first = {k for k, _ in keyed(findings(name))}
        after_found = findings(name, triaged=True)
        after = {k for k, _ in keyed(after_found)}
        before_counts = Counter(kind_of(f["code"]) for f in findings(name))
        after_counts = Counter(kind_of(f["code"]) for f in after_found)
        for kind in KINDS:
            tally = Counter()
            for rec in labels:
                if rec["tree"] != name or rec["kind"] != kind or not rec["label"]:
                    continue
                text = line_of(name, rec["path"], rec["line"])
                k = (rec["code"], rec["path"], rec["line"], rec.get("what", ""))
                if text is None or line_hash(text) != rec["sha"] or k not in first:
                    continue
                tally[(rec["label"], "before")] += 1
                tally[(rec["label"], "after")] += k in after
            if not before_counts[kind] and not tally:
                continue

            def precision(when: str, tally=tally) -> str:
                right, wrong = tally[("right", when)], tally[("wrong", when)]
                return (
                    f"{right / (right + wrong):.3f} ({right}/{right + wrong})"
                    if right + wrong
                    else "-"
                )

            print(
                f"| {name} | {kind} | {before_counts[kind]} -> {after_counts[kind]} | "
                f"{tally[('right', 'after')]} of {tally[('right', 'before')]} | "
                f"{tally[('wrong', 'after')]} of {tally[('wrong', 'before')]} | "
                f"{precision('before')} -> {precision('after')} |"
            )
    return 0


def cmd_score(args) -> int:
    totals = {name: Counter(kind_of(f["code"]) for f in findings(name)) for name in TREES}
    print("| tree | kind | findings | labelled | right | precision | not counted |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for (name, kind), (right, labelled, skipped) in sorted(score().items()):
        precision = f"{right / labelled:.3f}" if labelled else "-"
        print(
            f"| {name} | {kind} | {totals[name].get(kind, 0)} | {labelled} | {right} | "
            f"{precision} | {skipped} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="findings per kind per tree")
    p.add_argument("trees", nargs="*", choices=[*TREES, []])
    p = sub.add_parser("draw", help="add the seeded sample to the labels")
    p.add_argument("trees", nargs="*")
    p = sub.add_parser("show", help="print sampled findings with their code")
    p.add_argument("tree", choices=list(TREES))
    p.add_argument("kind", choices=list(KINDS))
    p.add_argument("index", nargs="?", type=int)
    p.add_argument("--context", type=int, default=6)
    p.add_argument("--unlabelled", action="store_true")
    sub.add_parser("score", help="precision per kind per tree")
    p = sub.add_parser(
        "triage", help="what one triage round's declaration kept: findings, labels, precision"
    )
    p.add_argument("trees", nargs="*")
    sub.add_parser("plant", help="recall on ATOM's files with the record's bugs planted")
    args = parser.parse_args(argv)
    if args.command == "plant":
        from bug_class_plants import cmd_plant

        return cmd_plant(args)
    commands = {
        "run": cmd_run,
        "draw": cmd_draw,
        "show": cmd_show,
        "score": cmd_score,
        "triage": cmd_triage,
    }
    return commands[args.command](args)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
