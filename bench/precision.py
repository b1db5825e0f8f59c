"""Precision and recall of AC301 and AC701 on hand-labelled real code.

The labels (``tests/checkers/data/*_labels.jsonl``) name a line of an installed
source file -- torch's Python sources or the standard library -- with its
text's hash and a verdict made by reading the code around it; the source is
never copied into this repository. This script runs each rule over the files
the labels name, as the linter would (the contract's pre-filter first, then
``check``), and counts a labelled statement as flagged when a finding's span
starts on its line.

    python bench/precision.py            # both rules
    python bench/precision.py --misses   # also list every disagreement
    python bench/precision.py --engine sglang=/tmp/engines/sglang \
        --engine transformers=/tmp/engines/transformers   # and the engine labels
    python bench/precision.py --rule-at 84af9d3 --engine ...  # the rules as they were
    python bench/precision.py --blind sglang-held2 --engine ...  # a held-out draw left unscored

Engines are unpacked wheels (``pip download --no-deps sglang``, unzip);
``bench/label_engine.py`` lists what their labels cover. ``--rule-at REV``
runs the three rule modules as they were at git revision REV (``git show``),
against today's labels, so a figure measured before a change can be
measured again.

Records whose file is missing or whose line no longer hashes the same are
skipped and counted, so a different torch or Python shows up as "skipped",
never as a silently different number.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.metadata
import importlib.util
import io
import json
import sys
import sysconfig
from collections import Counter
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


def engine_roots(specs: list[str]) -> dict[str, Path]:
    """``NAME=DIR`` pairs -> the package directory each engine's labels are relative to.

    DIR is where a wheel was unpacked (``/tmp/engines/sglang``, holding
    ``sglang/`` and its ``.dist-info``) or the package directory itself.
    """
    roots: dict[str, Path] = {}
    for spec in specs:
        name, sep, where = spec.partition("=")
        if not sep or not name or not where:
            raise ValueError(f"--engine wants NAME=DIR, got {spec!r}")
        path = Path(where).expanduser()
        roots[name] = path / name if (path / name).is_dir() else path
        if not roots[name].is_dir():
            raise ValueError(f"--engine {spec!r}: {roots[name]} is not a directory")
    return roots


def engine_version(root: Path) -> str | None:
    """The version of an unpacked engine, if it says.

    The wheel's dist-info next to the package says it; a tree unpacked without
    it says it in its folder's name (``/work/trees/sglang-0.5.23/sglang``).
    """
    for meta in sorted(root.parent.glob(f"{root.name}-*.dist-info/METADATA")):
        for line in meta.read_text(encoding="utf-8").splitlines():
            if line.startswith("Version: "):
                return line.split(": ", 1)[1].strip()
    prefix = f"{root.name}-"
    if root.parent.name.startswith(prefix) and root.parent.name[len(prefix) :][:1].isdigit():
        return root.parent.name[len(prefix) :]
    return None


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
    # Records labelled ``unclear``: reading the code could not decide, so they
    # count for neither side; reported so a reader sees how many there were.
    unclear: int = 0
    misses: list[str] = field(default_factory=list)
    # (record, flagged) for every record compared, so a subset is scored without rerunning.
    seen: list[tuple[dict, bool]] = field(default_factory=list)

    def subset(self, sets: tuple[str, ...]) -> Score:
        out = Score(self.positive)
        for rec, hit in self.seen:
            if rec.get("set", "dev") in sets:
                out.count(rec, hit)
        return out

    def count(self, rec: dict, hit: bool) -> None:
        self.seen.append((rec, hit))
        if rec["label"] == "unclear":
            self.unclear += 1
            return
        want = rec["label"] == self.positive
        where = f"{rec['root']}:{rec['path']}:{rec['line']} -- {rec['reason']}"
        if hit and want:
            self.tp += 1
        elif hit:
            self.fp += 1
            self.misses.append(f"FP {where}")
        elif want:
            self.fn += 1
            self.misses.append(f"FN {where}")
        else:
            self.tn += 1

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


def _flagged_lines(contract, source, anchored: bool, project=None) -> set:
    if not contract.wants(source):
        return set()
    return {
        (f.line, f.column) if anchored else f.span_lines[0] for f in contract.check(source, project)
    }


# input-assert's declaration on the engines (`--package-callers` sets that field).
AC301_ENGINE_PARAMS: dict = {}

# With `--first-written`, a revised label counts as first written: a record's
# `first` verdict, or (the earlier binary revisions) the other of input/state.
FIRST_WRITTEN = False
_OTHER = {"input": "state", "state": "input"}


# With `--misses-in SET`, only those draws' disagreements are listed (the rest
# stay blind); AC701's call sets are named `torch-calls`, `<engine>-calls` and
# `<engine>-calls-second`, and where two readers of an assert draw differ, `<draw>-second`;
# the third reading's are `third-calibration` (where it differs from the policy readers),
# `third-changed`, `third-changed-second-level` and `third-control`.
MISSES_IN: frozenset[str] = frozenset()
# With `--blind SET`, those draws are not scored at all: no figure, a draw's or a
# pooled one, depends on them, so a held-out draw stays unseen while the rule is
# worked on.
BLIND: frozenset[str] = frozenset()


def shown(name: str) -> bool:
    return not MISSES_IN or name in MISSES_IN


def as_first_written(record: dict) -> dict:
    if not record.get("revised"):
        return record
    first = record.get("first") or _OTHER.get(record["label"])
    return {**record, "label": first} if first else record


def load_records(labels_file: str, sets: tuple[str, ...] | None = None) -> list[dict]:
    records = [json.loads(line) for line in (DATA / labels_file).read_text().splitlines() if line]
    if FIRST_WRITTEN:
        records = [as_first_written(r) for r in records]
    return [
        r
        for r in records
        if (sets is None or r.get("set", "dev") in sets) and r.get("set") not in BLIND
    ]


def score(
    labels_file: str,
    flag,
    positive: str,
    *,
    sets: tuple[str, ...] | None = None,
    engines: dict[str, Path] | None = None,
) -> Score:
    """Compare ``flag(source, anchored) -> set of lines (or anchors)`` with the labels.

    ``engines`` adds unpacked engine trees to the installed ones; a record of
    an engine that is not given, or of another version of it, is skipped.
    """
    sys.path.insert(0, str(REPO))
    from checkers.source import SourceFile

    roots = {**source_roots(), **(engines or {})}
    records = load_records(labels_file, sets)
    versions = {name: engine_version(root) for name, root in (engines or {}).items()}
    result = Score(positive)
    # AC701 records name the repeats argument's position: two calls can share a line.
    anchored = bool(records) and all("anchor" in rec for rec in records)
    flagged_by_file: dict[tuple[str, str], set | None] = {}
    for rec in records:
        key = (rec["root"], rec["path"])
        if key not in flagged_by_file:
            root = roots.get(rec["root"])
            path = root / rec["path"] if root is not None else None
            if path is None or not path.is_file():
                flagged_by_file[key] = None
            else:
                text = path.read_text(encoding="utf-8")
                flagged_by_file[key] = flag(
                    SourceFile(rec["path"], text, abspath=str(path)), anchored
                )
        flagged = flagged_by_file[key]
        if flagged is None or rec.get("version", versions.get(rec["root"])) != versions.get(
            rec["root"], rec.get("version")
        ):
            result.skipped += 1
            continue
        lines = read_lines(roots[rec["root"]] / rec["path"])
        if (
            rec["line"] > len(lines)
            or line_sha(lines[rec["line"] - 1].rstrip("\r\n")) != rec["sha"]
        ):
            result.skipped += 1
            continue
        result.count(rec, (tuple(rec["anchor"]) if anchored else rec["line"]) in flagged)
    return result


def rule(kind: str, params: dict):
    """A labelled-line flagger running contract ``kind`` as the linter would."""
    sys.path.insert(0, str(REPO))
    from checkers.rules import kind_class

    contract = kind_class(kind).from_table({"id": "precision", **params}, "bench")
    if not params.get("package-callers"):
        return lambda source, anchored: _flagged_lines(contract, source, anchored)
    from checkers.project import Project
    from checkers.source import SourceFile

    projects: dict[Path, Project] = {}

    def in_package(source, anchored: bool) -> set:
        # An engine's labels name paths inside its package folder; the package's
        # callers are asked of a project rooted above it, its files named from there.
        package = Path(source.abspath[: -len(source.path)].rstrip("/"))
        project = projects.get(package)
        if project is None:
            project = projects[package] = Project(package.parent)
        whole = SourceFile(f"{package.name}/{source.path}", source.text, abspath=source.abspath)
        return _flagged_lines(contract, whole, anchored, project)

    return in_package


def simple_input_assert(source, anchored: bool) -> set:
    """The simple version: an assert whose condition names a parameter (not self/cls)
    of its enclosing function, or an `inputs` name (`args`, `config`, `hf_config`)."""
    tree = source.tree
    out: set[int] = set()
    if tree is None:
        return out

    def visit(node, params: frozenset) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = child.args
                names = [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
                names += [x.arg for x in (a.vararg, a.kwarg) if x is not None]
                visit(child, frozenset(n for n in names if n not in ("self", "cls")))
                continue
            if isinstance(child, ast.Assert) and any(
                isinstance(n, ast.Name) and (n.id in params or n.id in INPUT_NAMES)
                for n in ast.walk(child.test)
            ):
                out.add(child.lineno)
            visit(child, params)

    visit(tree, frozenset())
    return out


def simple_required_keyword(source, anchored: bool) -> set:
    """The simple version: every repeat_interleave call whose repeats is not a literal."""
    tree = source.tree
    out: set[tuple[int, int]] = set()
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "repeat_interleave":
            continue
        if any(k.arg == "output_size" for k in node.keywords):
            continue
        function_form = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
        index = 1 if function_form else 0
        repeats = next((k.value for k in node.keywords if k.arg == "repeats"), None)
        if repeats is None:
            repeats = node.args[index] if len(node.args) > index else node
        if not isinstance(repeats, ast.Constant):
            out.add((repeats.lineno, source.char_column(repeats.lineno, repeats.col_offset) + 1))
    return out


INPUT_NAMES = frozenset({"args", "config", "hf_config"})
AC701_PARAMS = {"calls": ["torch.repeat_interleave"], "keyword": "output_size"}
CALL_LABELS = "repeat_interleave_engine_labels.jsonl"


def input_assert_score(sets: tuple[str, ...] | None = None) -> Score:
    return score("assert_labels.jsonl", rule("input-assert", {}), "input", sets=sets)


def required_keyword_score() -> Score:
    return score(
        "repeat_interleave_labels.jsonl",
        rule("required-keyword", AC701_PARAMS),
        "needs-output-size",
    )


def _line(name: str, s: Score, note: str = "") -> str:
    return (
        f"  {name:<34} precision {s.precision:.3f} ({s.tp}/{s.tp + s.fp})  "
        f"recall {s.recall:.3f} ({s.tp}/{s.tp + s.fn})  n={s.total}"
        + (f" skipped={s.skipped}" if s.skipped else "")
        + (f" unclear={s.unclear}" if s.unclear else "")
        + (f"  {note}" if note else "")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--misses", action="store_true", help="list every disagreement")
    parser.add_argument(
        "--misses-in",
        action="append",
        default=[],
        metavar="SET",
        help="list the disagreements of this draw only (repeatable), keeping the others blind",
    )
    parser.add_argument(
        "--blind",
        action="append",
        default=[],
        metavar="SET",
        help="leave this draw out of every figure, pooled ones included (repeatable)",
    )
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="an unpacked engine wheel the engine labels point into "
        "(sglang, lmdeploy, vllm, transformers)",
    )
    parser.add_argument(
        "--rule-at", metavar="REV", help="run the rule modules as they were at git revision REV"
    )
    parser.add_argument(
        "--first-written",
        action="store_true",
        help="score each revised label as it was first written (the blind figures)",
    )
    parser.add_argument(
        "--package-callers",
        action="store_true",
        help="run input-assert on the engines with `package-callers = true`, each engine's "
        "package its project",
    )
    opts = parser.parse_args(argv)
    if opts.package_callers:
        AC301_ENGINE_PARAMS["package-callers"] = True
    global FIRST_WRITTEN, MISSES_IN, BLIND
    MISSES_IN = frozenset(opts.misses_in)
    BLIND = frozenset(opts.blind)
    opts.misses = opts.misses or bool(MISSES_IN)
    FIRST_WRITTEN = opts.first_written
    engines = engine_roots(opts.engine)
    if opts.rule_at:
        load_rules_at(opts.rule_at)
    ok, why = versions_match()
    if not ok:
        print(f"warning: {why}; mismatched lines are skipped", file=sys.stderr)

    print("AC301 input-assert (labels: tests/checkers/data/assert_labels.jsonl)")
    everything = score("assert_labels.jsonl", rule("input-assert", {}), "input")
    simple = score("assert_labels.jsonl", simple_input_assert, "input")
    for sets, title in (
        (("dev",), "dev (200, tuned on)"),
        (("holdout",), "holdout (100)"),
        (("holdout2",), "holdout2 (100)"),
        (("holdout3",), "holdout3 (100)"),
        (None, "all 500"),
    ):
        s = everything if sets is None else everything.subset(sets)
        print(_line(f"AC301, {title}", s))
        print(
            _line("  simple (names a parameter)", simple if sets is None else simple.subset(sets))
        )
        print(_line("  S101 (every assert)", _flag_all(s)))
        if opts.misses and sets is not None and shown(sets[0]):
            for line in s.misses:
                print("     ", line)

    print("AC701 required-keyword (labels: tests/checkers/data/repeat_interleave_labels.jsonl)")
    s = required_keyword_score()
    print(_line("AC701", s))
    if opts.misses and shown("torch-calls"):
        for line in s.misses:
            print("     ", line)
    print(
        _line(
            "simple (non-literal repeats)",
            score("repeat_interleave_labels.jsonl", simple_required_keyword, "needs-output-size"),
        )
    )
    print(_line("every call", _flag_all(s)))
    if engines:
        engine_report(engines, opts.misses)
    return 0


def by_root(s: Score, root: str) -> Score:
    out = Score(s.positive)
    for rec, hit in s.seen:
        if rec["root"] == root:
            out.count(rec, hit)
    return out


def load_rules_at(rev: str) -> None:
    """Make ``import checkers`` load the whole package as it was at git revision ``rev``.

    The package is extracted (``git archive``) into a temporary folder put first
    on ``sys.path`` before anything imports it, so the rules, the analysis they
    share and the core they call are of one revision: a rule cannot be paired
    with a module that moved after it was written. The folder goes when the
    process ends.
    """
    import atexit
    import shutil
    import subprocess
    import tarfile
    import tempfile

    if "checkers" in sys.modules:
        raise RuntimeError("--rule-at must run before anything imports checkers")
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "checkers"],
        capture_output=True,
    )
    if archive.returncode != 0:
        raise ValueError(f"--rule-at {rev}: {archive.stderr.decode(errors='replace').strip()}")
    where = Path(tempfile.mkdtemp(prefix="rule-at-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(where, filter="data")
    sys.path.insert(0, str(where))
    import checkers

    if Path(checkers.__file__).resolve().parent != (where / "checkers").resolve():
        raise RuntimeError(f"checkers was imported from {checkers.__file__}, not {where}")


# The engine assert draws (bench/label_engine.py), in the order they were made.
ENGINE_ASSERT_SETS = (
    ("engine1", "sglang srt/ 160, principles drawn from it"),
    ("engine2", "sglang srt/ 110, drawn after, scored once"),
    ("sglang-dev", "sglang 70, stratified, dev"),
    ("sglang-held", "sglang 90, stratified, held out"),
    ("lmdeploy-dev", "lmdeploy 70, stratified, dev"),
    ("lmdeploy-held", "lmdeploy 90, stratified, held out"),
    ("sglang-held2", "sglang 60, stratified, held out (second)"),
    ("lmdeploy-held2", "lmdeploy 60, stratified, held out (second)"),
    ("sglang-held3", "sglang 60, stratified, held out (third)"),
    ("lmdeploy-held3", "lmdeploy 60, stratified, held out (third)"),
    ("sglang-held4", "sglang 60, stratified, held out (fourth)"),
    ("lmdeploy-held4", "lmdeploy 60, stratified, held out (fourth)"),
    ("sglang-held5", "sglang 60, stratified, held out (fifth)"),
    ("lmdeploy-held5", "lmdeploy 60, stratified, held out (fifth)"),
    ("sglang-held6", "sglang 60, stratified, held out (sixth)"),
    ("lmdeploy-held6", "lmdeploy 60, stratified, held out (sixth)"),
    ("sglang-held7", "sglang 60, stratified, held out (seventh)"),
    ("lmdeploy-held7", "lmdeploy 60, stratified, held out (seventh)"),
    ("sglang-held8", "sglang 60, stratified, held out (eighth)"),
    ("lmdeploy-held8", "lmdeploy 60, stratified, held out (eighth)"),
    ("sglang-held9", "sglang 60, stratified, held out (ninth)"),
    ("lmdeploy-held9", "lmdeploy 60, stratified, held out (ninth)"),
    ("sglang-held10", "sglang 60, stratified, held out (tenth)"),
    ("lmdeploy-held10", "lmdeploy 60, stratified, held out (tenth)"),
)
# A second reader's verdicts on calls the first file also labels.
SECOND_CALL_LABELS = "repeat_interleave_second_labels.jsonl"
# A second reader's verdicts on whole assert draws the first file labels.
SECOND_ASSERT_LABELS = "assert_engine_second_labels.jsonl"
# A third reading under the written caller policy, blind to the rule and to the other
# files. On the draws labelled before the policy was written: the asserts `package-callers`
# changes the verdict of with one level of callers (sample `changed`) and those its second
# level changes besides (`changed-second-level`), with as many others drawn at random among
# those it does not change (`control`; seeds 20261207, 20261209, 20261210), shuffled in
# with them. On the policy draws: 40 asserts both readers labelled alike (seed 20261208,
# `calibration`), to measure the third reader by.
THIRD_ASSERT_LABELS = "assert_engine_third_labels.jsonl"
THIRD_SAMPLES = (
    ("changed", "the asserts one level of `package-callers` changes, drawn before the policy"),
    ("changed-second-level", "those its second level changes besides"),
    ("control", "as many others of the same draws, at random"),
)


@dataclass
class Agreement:
    """Two readers' verdicts on the same records: how often they agree, beyond chance."""

    pairs: int = 0  # records both readers labelled
    decided: int = 0  # of those, ones neither called unclear
    agreed: int = 0  # of those, the same verdict
    kappa: float = 0.0  # Cohen's: 1 agrees always, 0 no better than chance
    disagreements: list[str] = field(default_factory=list)
    consensus: set = field(default_factory=set)  # keys both readers decided the same way


def _key(rec: dict) -> tuple:
    return (rec.get("set"), rec["root"], rec["path"], rec["line"])


def agreement(first: list[dict], second: list[dict], positive: str = "input") -> Agreement:
    """Cohen's kappa of two readers over the records both labelled (``unclear`` left out).

    Chance agreement is what two readers with these rates of ``positive`` would reach
    labelling independently: p1 * p2 + (1 - p1) * (1 - p2). It is of what each reader
    wrote alone: a label later revised (a split settled by the policy) counts as first
    written, or settling a split would read as the readers agreeing.
    """
    first = [as_first_written(r) for r in first]
    theirs = {_key(r): as_first_written(r) for r in second}
    out = Agreement()
    ones = twos = 0
    for rec in first:
        other = theirs.get(_key(rec))
        if other is None:
            continue
        out.pairs += 1
        if "unclear" in (rec["label"], other["label"]):
            continue
        out.decided += 1
        ones += rec["label"] == positive
        twos += other["label"] == positive
        if rec["label"] == other["label"]:
            out.agreed += 1
            out.consensus.add(_key(rec))
        else:
            out.disagreements.append(
                f"{rec['root']}:{rec['path']}:{rec['line']} -- first {rec['label']}: "
                f"{rec['reason']} | second {other['label']}: {other['reason']}"
            )
    if out.decided:
        observed = out.agreed / out.decided
        p1, p2 = ones / out.decided, twos / out.decided
        chance = p1 * p2 + (1 - p1) * (1 - p2)
        out.kappa = 1.0 if chance == 1 else (observed - chance) / (1 - chance)
    return out


def second_reader_report(engines: dict[str, Path], misses: bool) -> None:
    """AC301 against a second reader's labels of whole draws, the two readers' agreement,
    and the rule on the asserts both readers decided alike (what no reading disputes)."""
    second = load_records(SECOND_ASSERT_LABELS)
    if not second:
        return
    file = "assert_engine_labels.jsonl"
    print(
        f"AC301 input-assert, a second reader (labels: tests/checkers/data/{SECOND_ASSERT_LABELS})"
    )
    sets = tuple(dict.fromkeys(r["set"] for r in second))
    versus_second = score(
        SECOND_ASSERT_LABELS,
        rule("input-assert", AC301_ENGINE_PARAMS),
        "input",
        sets=sets,
        engines=engines,
    )
    versus_first = score(
        file, rule("input-assert", AC301_ENGINE_PARAMS), "input", sets=sets, engines=engines
    )
    for name in sets:
        both = agreement(load_records(file, (name,)), load_records(SECOND_ASSERT_LABELS, (name,)))
        print(
            f"  {name}: readers agree on {both.agreed}/{both.decided} decided "
            f"({both.agreed / both.decided if both.decided else 0:.3f}), "
            f"Cohen's kappa {both.kappa:.3f}; {both.pairs - both.decided} unclear to either"
        )
        print(_line(f"AC301, {name}, first reader", versus_first.subset((name,))))
        print(_line(f"AC301, {name}, second reader", versus_second.subset((name,))))
        agreed = Score("input")
        for rec, hit in versus_first.subset((name,)).seen:
            if _key(rec) in both.consensus:
                agreed.count(rec, hit)
        print(_line(f"AC301, {name}, both agree", agreed))
        if misses and shown(f"{name}-second"):
            for line in both.disagreements:
                print("      readers differ:", line)


def third_reader_report(engines: dict[str, Path], misses: bool) -> None:
    """The caller policy read a third time: the reader against the two policy readers
    (calibration), how the earlier draws' labels move under the policy, and AC301 as
    declared against the third reading beside the first on the same asserts."""
    third = load_records(THIRD_ASSERT_LABELS)
    if not third:
        return
    file = "assert_engine_labels.jsonl"
    print(f"AC301 input-assert, the caller policy read a third time ({THIRD_ASSERT_LABELS})")
    first = {_key(r): r for r in load_records(file)}
    second = {_key(r): r for r in load_records(SECOND_ASSERT_LABELS)}
    calibration = [r for r in third if r.get("sample") == "calibration"]
    if calibration:
        # Against the two readers' verdicts as they stand (a split they settled by the
        # policy included), where they are the same: what the policy says of the assert.
        settled = {
            k: r["label"]
            for k, r in first.items()
            if k in second and second[k]["label"] == r["label"] and r["label"] != "unclear"
        }
        pairs = [(settled[_key(r)], r) for r in calibration if _key(r) in settled]
        agreed = sum(want == r["label"] for want, r in pairs)
        moved = Counter((want, r["label"]) for want, r in pairs if want != r["label"])
        print(
            f"  calibration: agrees with the two policy readers on {agreed}/{len(pairs)} "
            f"asserts they labelled alike ({agreed / len(pairs) if pairs else 0:.3f}); "
            + ", ".join(f"{a} -> {b} {n}" for (a, b), n in sorted(moved.items()))
        )
        if misses and shown("third-calibration"):
            for want, r in pairs:
                if want != r["label"]:
                    print(
                        f"      readers differ: {r['root']}:{r['path']}:{r['line']} -- "
                        f"policy {want}: {first[_key(r)]['reason']} | third {r['label']}: "
                        f"{r['reason']}"
                    )
    ours = score(
        THIRD_ASSERT_LABELS,
        rule("input-assert", AC301_ENGINE_PARAMS),
        "input",
        engines=engines,
    )
    for sample, title in THIRD_SAMPLES:
        records = [r for r in third if r.get("sample") == sample]
        moved = Counter((first[_key(r)]["label"], r["label"]) for r in records if _key(r) in first)
        print(
            f"  {sample} ({len(records)}, {title}): first reading -> third: "
            + ", ".join(f"{a} -> {b} {n}" for (a, b), n in sorted(moved.items()))
        )
        by_third, by_first = Score("input"), Score("input")
        for rec, hit in ours.seen:
            if rec.get("sample") == sample:
                by_third.count(rec, hit)
                if _key(rec) in first:
                    by_first.count(first[_key(rec)], hit)
        print(_line(f"AC301, {sample}, third reading", by_third))
        print(_line(f"AC301, {sample}, first reading", by_first))
        if misses and shown(f"third-{sample}"):
            for line in by_third.misses:
                print("     ", line)


def engine_report(engines: dict[str, Path], misses: bool) -> None:
    """AC301 and AC701 on every engine label set, per draw and per tree, S101 beside."""
    file = "assert_engine_labels.jsonl"
    print(f"AC301 input-assert on engines (labels: tests/checkers/data/{file})")
    ours = score(file, rule("input-assert", AC301_ENGINE_PARAMS), "input", engines=engines)
    simple = score(file, simple_input_assert, "input", engines=engines)
    for name, title in ENGINE_ASSERT_SETS:
        s = ours.subset((name,))
        if not s.total:
            continue
        print(_line(f"AC301, {title}", s))
        print(_line("  simple (names a parameter)", simple.subset((name,))))
        print(_line("  S101 (every assert)", _flag_all(s)))
        if misses and shown(name):
            for line in s.misses:
                print("     ", line)
    for root in engines:
        s = by_root(ours, root)
        if s.total:
            print(_line(f"AC301, {root}, every draw", s))
            print(_line("  simple (names a parameter)", by_root(simple, root)))
            print(_line("  S101 (every assert)", _flag_all(s)))
    second_reader_report(engines, misses)
    third_reader_report(engines, misses)
    for file, who in ((CALL_LABELS, ""), (SECOND_CALL_LABELS, ", second labeller")):
        print(f"AC701 required-keyword on engines (labels: tests/checkers/data/{file})")
        ours = score(
            file, rule("required-keyword", AC701_PARAMS), "needs-output-size", engines=engines
        )
        simple = score(file, simple_required_keyword, "needs-output-size", engines=engines)
        for root in engines:
            s = by_root(ours, root)
            if not s.total:
                continue
            print(_line(f"AC701, {root}{who}", s))
            print(_line("  simple (non-literal repeats)", by_root(simple, root)))
            print(_line("  every call", _flag_all(s)))
            if misses and shown(f"{root}-calls{'-second' if who else ''}"):
                for line in s.misses:
                    print("     ", line)


def _flag_all(s: Score) -> Score:
    """What a rule flagging every labelled statement scores on the same records."""
    positives = s.tp + s.fn
    return Score(
        s.positive, tp=positives, fp=s.total - positives, skipped=s.skipped, unclear=s.unclear
    )


if __name__ == "__main__":
    raise SystemExit(main())
