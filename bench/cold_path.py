"""The cold whole-tree check against ruff: wall, CPU and peak memory, and how they grow.

    python bench/cold_path.py [--tree stdlib|vllm ...] [--repeat N] [--sizes half,whole,double]
                              [--record] [--no-findings]
    python bench/cold_path.py --bug-classes [--repeat N]   # vLLM with and without them:
                                                            # the cold and warm B/A, one line

The cold path's targets (docs/performance.md), measured on two real trees:

* the CPython standard library, with a contract of every kind (the declaration
  ``bench/check_speed.py`` uses, test folders per-file-ignored for input-assert);
* vLLM 0.33.0's package (``pip download --no-deps vllm==0.33.0``, its ``.py``
  files unzipped into ``/work/trees/vllm-0.33.0``; ``vllm/third_party`` and
  ``vllm/vllm_flash_attn`` excluded), with input-assert and required-keyword.
  Downloaded when absent; skipped with a message where it cannot be.

Each tree is checked whole, halved (every other file, every ``__init__.py``
kept so packages still resolve) and doubled (two copies side by side, both
src roots), so a figure that grows with the tree shows as growth. The copies
are hard links into a scratch project, whose ``pyproject.toml`` and
``ruff.toml`` say the same thing to both tools.

Per run, from ``os.wait4``: wall, CPU (user + system of the process and every
child it waited for) and ``ru_maxrss`` (the largest single process of the
tree: ours is a parent and a pool of workers, ruff one process with threads).
A sampler thread also sums the resident set of the whole process tree every
20 ms: ``tree MB`` is what the run held at once. The two tools run
alternately, ``--repeat`` times each, and each figure is the median; ratios
are ours over ruff's from the same sitting.

The findings of ours over the whole tree are compared with the run recorded
in ``bench/baselines/`` (made with ``--record`` at the commit named in the
file): a speedup that loses or moves a finding exits 1, naming what changed.

Nothing here is asserted in a test: the machines are shared, and a timed test
fails on someone else's load.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_speed import contracts_toml  # noqa: E402  (the stdlib declaration, one copy)

BASELINES = REPO / "bench" / "baselines"
RUFF_SELECT = "S101,TID251"
VLLM_VERSION = "0.33.0"
TREES_DIR = Path(os.environ.get("ATOM_CONTRACTS_TREES", "/work/trees"))
VLLM_EXCLUDED = ("vllm/third_party", "vllm/vllm_flash_attn")
_SKIP_DIRS = frozenset({"__pycache__", "site-packages"})

RUFF_TOML = """\
[lint.flake8-tidy-imports.banned-api]
"vllm.triton_utils".msg = "import triton directly"
"""

VLLM_CONTRACTS = """\
[tool.atom-contracts]
src = [{src}]

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"

[[tool.atom-contracts.contracts]]
id = "repeat-interleave-output-size"
kind = "required-keyword"
calls = ["torch.repeat_interleave"]
keyword = "output_size"
"""


# Semgrep rules for the same checks a maintainer would otherwise write: an assert on a
# parameter of the enclosing function (input-assert's core case; semgrep follows no
# value further), `repeat_interleave` without `output_size`, the banned import.
SEMGREP_RULES = """\
rules:
  - id: input-assert
    languages: [python]
    severity: WARNING
    message: assert on a parameter; raise ValueError instead
    patterns:
      - pattern-either:
          - pattern-inside: |
              def $F(..., $P, ...):
                ...
          - pattern-inside: |
              def $F(..., $P=$D, ...):
                ...
      - pattern: assert <... $P ...>
  - id: repeat-interleave-output-size
    languages: [python]
    severity: WARNING
    message: repeat_interleave without output_size syncs the device
    patterns:
      - pattern-either:
          - pattern: torch.repeat_interleave(...)
          - pattern: $X.repeat_interleave(...)
      - pattern-not: torch.repeat_interleave(..., output_size=$S, ...)
      - pattern-not: $X.repeat_interleave(..., output_size=$S, ...)
  - id: banned-import
    languages: [python]
    severity: WARNING
    message: import triton directly
    pattern-either:
      - pattern: import vllm.triton_utils
      - pattern: from vllm.triton_utils import $X
"""

# The leaf contract, measured alone on vLLM against import-linter's `forbidden` contract
# (direct imports only, as leaf-package reads them): vllm.logging_utils imports nothing of
# vLLM but itself.
LEAF_PACKAGE = "vllm.logging_utils"
LEAF_CONTRACTS = """\
[tool.atom-contracts]
src = ["tree"]

[[tool.atom-contracts.contracts]]
id = "logging-utils-is-a-leaf"
kind = "leaf-package"
package = "{package}"
"""


def importlinter_config(tree: Path) -> str:
    """`forbidden`: the leaf may import no other top-level part of vllm (direct imports)."""
    leaf = LEAF_PACKAGE.split(".")[1]
    others = sorted(
        f"vllm.{p.stem if p.suffix == '.py' else p.name}"
        for p in (tree / "vllm").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
        if p.name != leaf and f"vllm/{p.name}" not in VLLM_EXCLUDED
    )
    forbidden = "".join(f"    {m}\n" for m in others)
    return (
        "[importlinter]\nroot_package = vllm\n\n"
        "[importlinter:contract:leaf]\n"
        f"name = {LEAF_PACKAGE} is a leaf\ntype = forbidden\n"
        f"source_modules =\n    {LEAF_PACKAGE}\nforbidden_modules =\n{forbidden}"
        "allow_indirect_imports = True\n"
    )


# -- trees -----------------------------------------------------------------


def stdlib_tree() -> tuple[Path, tuple[str, ...]]:
    return Path(sysconfig.get_paths()["stdlib"]), ()


def vllm_tree() -> tuple[Path, tuple[str, ...]] | str:
    """vLLM's package (the folder holding ``vllm/``), downloading it when absent."""
    root = TREES_DIR / f"vllm-{VLLM_VERSION}"
    if (root / "vllm" / "__init__.py").is_file():
        return root, VLLM_EXCLUDED
    try:
        TREES_DIR.mkdir(parents=True, exist_ok=True)
        wheels = list(TREES_DIR.glob(f"vllm-{VLLM_VERSION}-*.whl"))
        if not wheels:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "-q",
                    f"vllm=={VLLM_VERSION}",
                    "-d",
                    str(TREES_DIR),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if proc.returncode != 0:
                return f"pip download vllm=={VLLM_VERSION} failed: {proc.stderr.strip()[-300:]}"
            wheels = list(TREES_DIR.glob(f"vllm-{VLLM_VERSION}-*.whl"))
        import zipfile

        staging = Path(tempfile.mkdtemp(prefix=".vllm-", dir=TREES_DIR))
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(
                staging,
                [n for n in z.namelist() if n.startswith("vllm/") and n.endswith((".py", ".pyi"))],
            )
        os.replace(staging, root)  # another process may have won: then theirs stands
    except OSError as exc:
        return f"cannot unpack vLLM under {TREES_DIR}: {exc}"
    return root, VLLM_EXCLUDED


def python_files(tree: Path, excluded: tuple[str, ...]) -> list[str]:
    """The tree's ``.py`` files, relative and sorted, as both tools would find them."""
    out = []
    for folder, dirs, files in os.walk(tree):
        rel_folder = os.path.relpath(folder, tree)
        dirs[:] = sorted(
            d
            for d in dirs
            if d not in _SKIP_DIRS
            and not d.startswith(".")
            and os.path.normpath(os.path.join(rel_folder, d)) not in excluded
            and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
        )
        out.extend(
            os.path.normpath(os.path.join(rel_folder, name))
            for name in files
            if name.endswith(".py")
        )
    return sorted(out)


def link_tree(tree: Path, files: list[str], into: Path) -> None:
    for rel in files:
        dest = into / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(tree / rel, dest)
        except OSError:
            shutil.copy2(tree / rel, dest)


def build_project(
    name: str, size: str, tree: Path, excluded, scratch: Path
) -> tuple[Path, list[str], int, int]:
    """A scratch project holding ``size`` of the tree; returns it, its targets, files, bytes."""
    project = scratch / f"{name}-{size}"
    files = python_files(tree, excluded)
    if size == "half":
        files = [f for i, f in enumerate(files) if i % 2 == 0 or f.endswith("__init__.py")]
    copies = ["copy-a", "copy-b"] if size == "double" else ["tree"]
    for copy in copies:
        link_tree(tree, files, project / copy)
    src = ", ".join(f'"{c}"' for c in copies)
    if name == "vllm":
        declaration = VLLM_CONTRACTS.format(src=src)
    else:
        declaration = contracts_toml([Path(c) for c in copies])
    (project / "pyproject.toml").write_text(declaration)
    (project / "ruff.toml").write_text(RUFF_TOML)
    (project / "semgrep.yml").write_text(SEMGREP_RULES)
    count = len(files) * len(copies)
    size_bytes = sum((tree / f).stat().st_size for f in files) * len(copies)
    return project, copies, count, size_bytes


# -- one run ---------------------------------------------------------------


def _tree_rss_kb(pid: int) -> int:
    """Resident set of ``pid`` and its descendants, in KiB (Linux /proc)."""
    total = 0
    stack = [pid]
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * page_kb
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as fh:
                    stack.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return total


class Run:
    def __init__(self, wall: float, cpu: float, maxrss_mb: float, tree_mb: float, out: bytes):
        self.wall, self.cpu, self.maxrss_mb, self.tree_mb, self.out = (
            wall,
            cpu,
            maxrss_mb,
            tree_mb,
            out,
        )


def run(cmd: list[str], cwd: Path, env: dict[str, str], *, capture: bool = False) -> Run:
    peak = [0]
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read() if capture else b""
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    done.set()
    sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err.decode()[-2000:]}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, peak[0] / 1024, out)


def median_of(runs: list[Run]) -> dict[str, float]:
    return {
        "wall": statistics.median(r.wall for r in runs),
        "cpu": statistics.median(r.cpu for r in runs),
        "maxrss": statistics.median(r.maxrss_mb for r in runs),
        "tree": statistics.median(r.tree_mb for r in runs),
    }


# -- findings --------------------------------------------------------------


def normalised(json_out: bytes, copies: list[str]) -> list[str]:
    """One line per finding, its path relative to the tree (the copy's folder taken off)."""
    lines = []
    for f in json.loads(json_out):
        path = f["path"]
        for copy in copies:
            if path.startswith(copy + "/"):
                path = path[len(copy) + 1 :]
        lines.append(
            f"{path}:{f['line']}:{f['column']}:{f['end_line']}:{f['end_column']}:"
            f"{f['code']}:{f['contract']}:{f['message']}"
        )
    return sorted(lines)


def baseline_path(name: str) -> Path:
    tag = (
        f"py{sys.version_info.major}{sys.version_info.minor}" if name == "stdlib" else VLLM_VERSION
    )
    return BASELINES / f"cold_path-{name}-{tag}.txt.gz"


def commit() -> str:
    proc = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip() or "unknown"


def compare(name: str, found: list[str], record: bool) -> bool:
    path = baseline_path(name)
    if record:
        path.parent.mkdir(parents=True, exist_ok=True)
        header = f"# recorded at {commit()} by bench/cold_path.py --record: {len(found)} findings\n"
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(header + "".join(line + "\n" for line in found))
        print(f"  findings: {len(found)} recorded in {path.relative_to(REPO)}")
        return True
    if not path.exists():
        print(f"  findings: {len(found)}; no baseline at {path.relative_to(REPO)} (run --record)")
        return True
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        header = fh.readline().strip()
        expected = [line.rstrip("\n") for line in fh]
    if found == expected:
        print(f"  findings: {len(found)}, identical to the baseline ({header[2:]})")
        return True
    lost = sorted(set(expected) - set(found))
    new = sorted(set(found) - set(expected))
    print(
        f"  FINDINGS CHANGED against {path.relative_to(REPO)} ({header[2:]}): "
        f"{len(lost)} lost, {len(new)} new"
    )
    for line in lost[:20]:
        print(f"    - {line}")
    for line in new[:20]:
        print(f"    + {line}")
    return False


# -- the sitting -----------------------------------------------------------


def parse_floor(project: Path, ruff_cpu: float, finding_paths: set[str]) -> None:
    """CPU of ``ast.parse`` alone, on one core, over the files the declared contracts parse.

    What the linter cannot go below while it parses each such file whole: the
    files whose path, scope and text pre-filter (``wants``) let a contract ask
    for the tree, read and parsed in this process with the collector off. And a
    floor under any design at all that reports today's findings from CPython's
    AST: the parse of just the files that hold a finding (``finding_paths``,
    relative to the project), which no pre-filter, however sharp, may skip.
    """
    import ast
    import contextlib
    import gc

    sys.path.insert(0, str(REPO))
    from checkers import api
    from checkers.discovery import discover
    from checkers.linter import Linter, decode
    from checkers.source import DecodeError, SourceFile

    config = api.load_config(project, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    wanted = []
    holding = []  # the texts of the files that hold a finding
    for rel, abspath in discover([], config):
        contracts, _ = linter.applying(rel)
        if not contracts:
            continue
        with open(abspath, "rb") as fh:
            try:
                text = decode(fh.read())
            except (DecodeError, UnicodeDecodeError, LookupError, SyntaxError):
                continue  # AC001, never parsed
        source = SourceFile(rel, text, abspath=abspath)
        if any(c.NEEDS_TREE and c.wants(source) and linter.project_wants(c) for c in contracts):
            wanted.append(text)
            if rel in finding_paths:
                holding.append(text)
    import itertools
    import re
    import symtable

    def cpu_of(parse, texts=wanted) -> float:
        gc.disable()
        started = time.process_time()
        for text in texts:
            with contextlib.suppress(SyntaxError, ValueError, RecursionError):
                parse(text)
        spent = time.process_time() - started
        gc.enable()
        return spent

    cpu = cpu_of(ast.parse)
    cpu_holding = cpu_of(ast.parse, holding)
    # CPython's parser with a symbol table and no Python AST objects: the
    # cheapest exact answer to "does this file parse" (AC001) Python offers.
    syntax = cpu_of(lambda text: symtable.symtable(text, "<floor>", "exec"))
    # What a slicing design would parse: the column-0 blocks (a top-level def,
    # class or statement, up to the next line starting in column 0) holding an
    # assert -- an over-count of nothing, since a real block boundary is always one.
    starts = re.compile(r"^(?=[^\s#])", re.MULTILINE)
    assert_line = re.compile(r"(?:^|[\r;:])[ \t\f]*assert\b", re.MULTILINE)
    kept = 0
    for text in wanted:
        cuts = [m.start() for m in starts.finditer(text)] + [len(text)]
        kept += sum(b - a for a, b in itertools.pairwise(cuts) if assert_line.search(text, a, b))
    size = sum(len(t) for t in wanted) / 1e6
    print(
        f"  floor: {len(wanted)} files ({size:.1f} MB) pass a contract's pre-filter; ast.parse "
        f"of them alone is {cpu:.2f} s CPU on one core = {cpu / ruff_cpu:.2f}x ruff's whole "
        f"cold run ({ruff_cpu:.2f} s CPU)"
    )
    print(
        f"  slicing: the top-level blocks holding an assert are {kept / 1e6 / size:.0%} of "
        f"those bytes; the whole-file syntax verdict alone (symtable: parser, no AST "
        f"objects) is {syntax:.2f} s CPU = {syntax / cpu:.0%} of ast.parse = "
        f"{syntax / ruff_cpu:.2f}x ruff's run"
    )
    print(
        f"  findings: {len(holding)} of those files hold a finding "
        f"({sum(len(t) for t in holding) / 1e6:.1f} MB); ast.parse of them alone is "
        f"{cpu_holding:.2f} s CPU = {cpu_holding / ruff_cpu:.2f}x ruff's run"
    )


def fmt(ours: dict, ruff: dict) -> str:
    return (
        f"{ours['wall']:6.2f} s {ours['cpu']:6.2f} s {ours['maxrss']:6.0f} MB {ours['tree']:6.0f} MB | "
        f"{ruff['wall']:6.2f} s {ruff['cpu']:6.2f} s {ruff['maxrss']:6.0f} MB {ruff['tree']:6.0f} MB | "
        f"{ours['wall'] / ruff['wall']:5.2f}x {ours['cpu'] / ruff['cpu']:5.2f}x "
        f"{ours['tree'] / max(ruff['tree'], 1):5.2f}x"
    )


def bench_tree(name: str, tree: Path, excluded, args, ruff: str, env, scratch: Path) -> bool:
    ok = True
    print(f"\n== {name}: {tree}" + (f" (excluding {', '.join(excluded)})" if excluded else ""))
    print(
        f"{'size':>6} {'files':>6} {'MB':>5} {'mode':>5} | ours: wall, CPU, max process, tree"
        f" | ruff: wall, CPU, max process, tree | ratio wall, CPU, tree memory"
    )
    for size in args.sizes:
        project, copies, count, nbytes = build_project(name, size, tree, excluded, scratch)
        ours = [sys.executable, "-m", "checkers", "check", "--exit-zero", "-q", *copies]
        ruff_cmd = [
            ruff,
            "check",
            "--config",
            "ruff.toml",
            "--select",
            RUFF_SELECT,
            "--exit-zero",
            "-q",
            "--cache-dir",
            ".ruff_cache",
            *copies,
        ]
        semgrep_cmd = None
        if args.peers and shutil.which("semgrep"):
            semgrep_cmd = [
                shutil.which("semgrep"),
                "scan",
                "--config",
                "semgrep.yml",
                "--metrics=off",
                "--disable-version-check",
                "--no-git-ignore",
                "--quiet",
                "--jobs",
                str(_cpus()),
                *copies,
            ]
            run(semgrep_cmd, project, env)  # its rule cache and the page cache warm
        # Bytecode and page cache warm before any figure counts.
        run([*ruff_cmd, "--no-cache"], project, env)
        first = run([*ours, "--no-cache", "--output-format", "json"], project, env, capture=True)
        if size == "whole" and not args.no_findings:
            ok = compare(name, normalised(first.out, copies), args.record) and ok
        cold_o, cold_r, cold_s = [], [], []
        for i in range(args.repeat):
            pair = [("o", [*ours, "--no-cache"]), ("r", [*ruff_cmd, "--no-cache"])]
            if semgrep_cmd is not None:
                pair.append(("s", semgrep_cmd))
            for who, cmd in pair if i % 2 == 0 else reversed(pair):
                {"o": cold_o, "r": cold_r, "s": cold_s}[who].append(run(cmd, project, env))
        print(
            f"{size:>6} {count:6d} {nbytes / 1e6:5.1f}  cold | {fmt(median_of(cold_o), median_of(cold_r))}"
        )
        if cold_s:
            peer = median_of(cold_s)
            print(
                f"{'':>6} {'':>6} {'':>5} semgrep {peer['wall']:6.2f} s {peer['cpu']:6.2f} s "
                f"{peer['maxrss']:6.0f} MB {peer['tree']:6.0f} MB | ours / semgrep: "
                f"{median_of(cold_o)['wall'] / peer['wall']:5.2f}x wall "
                f"{median_of(cold_o)['cpu'] / peer['cpu']:5.2f}x CPU "
                f"{median_of(cold_o)['tree'] / max(peer['tree'], 1):5.2f}x memory"
            )
        if size == "whole" and args.floor:
            holding = {f["path"] for f in json.loads(first.out)}
            parse_floor(project, median_of(cold_r)["cpu"], holding)
        if size == "whole" or args.warm_all:
            shutil.rmtree(project / ".atom-contracts-cache", ignore_errors=True)
            run(ours, project, env)  # fills our cache
            run(ruff_cmd, project, env)  # fills ruff's
            warm_o, warm_r = [], []
            for i in range(args.repeat):
                pair = [("o", ours), ("r", ruff_cmd)]
                for who, cmd in pair if i % 2 == 0 else reversed(pair):
                    (warm_o if who == "o" else warm_r).append(run(cmd, project, env))
            print(
                f"{size:>6} {count:6d} {nbytes / 1e6:5.1f}  warm | {fmt(median_of(warm_o), median_of(warm_r))}"
            )
        if name == "vllm" and size == "whole" and args.peers and shutil.which("lint-imports"):
            leaf_vs_import_linter(project, tree, env, args.repeat)
        shutil.rmtree(project, ignore_errors=True)
    return ok


def bench_bug_classes(tree: Path, excluded, args, env, scratch: Path) -> bool:
    """vLLM whole, as declared above, against the same with the three bug-class kinds added
    (``bench/bug_classes/vllm.toml``'s contracts): both ours, alternately, cold then warm.

    Prints each mode's medians and per-round ratios, then one line with the cold and the warm
    B/A the target is stated in; B's findings are compared with the baseline in
    ``bench/baselines/`` (``--record`` stores them), so a speedup that loses one exits 1."""
    base, copies, count, nbytes = build_project("vllm", "whole", tree, excluded, scratch)
    kinds = scratch / "vllm-with-kinds"
    link_tree(tree, python_files(tree, excluded), kinds / "tree")
    declared = (REPO / "bench" / "bug_classes" / "vllm.toml").read_text()
    tables = declared[declared.index("[[tool.atom-contracts.contracts]]") :]
    (kinds / "pyproject.toml").write_text((base / "pyproject.toml").read_text() + "\n" + tables)
    ours = [sys.executable, "-m", "checkers", "check", "--exit-zero", "-q", *copies]
    print(
        f"\n== vllm, {count} files, {nbytes / 1e6:.1f} MB: the declaration above alone (A) and with"
        " units, published-keys and reachable-calls (B), alternately"
    )
    first = run([*ours, "--no-cache", "--output-format", "json"], kinds, env, capture=True)
    added = [f for f in json.loads(first.out) if f["code"].startswith(("AC80", "AC81", "AC82"))]
    print(f"  B reports {len(added)} bug-class findings")
    ok = True
    if not args.no_findings:
        ok = compare("vllm-bug-classes", normalised(first.out, copies), args.record)
    run([*ours, "--no-cache"], base, env)  # bytecode and page cache warm
    summary = []
    for mode in ("cold", "warm"):
        extra = ["--no-cache"] if mode == "cold" else []
        if mode == "warm":
            for where in (base, kinds):
                shutil.rmtree(where / ".atom-contracts-cache", ignore_errors=True)
                run(ours, where, env)  # fills the cache
                run(ours, where, env)  # and once more: what the first warm run of each does
        a, b = [], []
        for i in range(args.repeat):
            pair = [("a", base), ("b", kinds)]
            for who, where in pair if i % 2 == 0 else reversed(pair):
                (a if who == "a" else b).append(run([*ours, *extra], where, env))
        ma, mb = median_of(a), median_of(b)
        ratios = [rb.wall / ra.wall for ra, rb in zip(a, b, strict=True)]
        cpu_ratios = [rb.cpu / ra.cpu for ra, rb in zip(a, b, strict=True)]
        print(
            f"  {mode}: A {ma['wall']:.2f} s wall {ma['cpu']:.2f} s CPU | B {mb['wall']:.2f} s "
            f"wall {mb['cpu']:.2f} s CPU | B/A median wall {mb['wall'] / ma['wall']:.3f}, CPU "
            f"{mb['cpu'] / ma['cpu']:.3f}; per-round wall ratios "
            + " ".join(f"{r:.3f}" for r in ratios)
        )
        summary.append(
            (
                mode,
                statistics.median(ratios),
                statistics.median(cpu_ratios),
                1.15 if mode == "cold" else 1.05,
            )
        )
    # The figures the target is stated in, one line: the median over the rounds of each
    # round's B/A (a round runs both back to back, so a load that comes and goes between
    # rounds cancels within one), wall and CPU.
    print(
        "  bug-class cost (B/A, median of the per-round ratios): "
        + "; ".join(
            f"{mode} {wall:.3f} wall {cpu:.3f} CPU (target <= {target:.2f}: "
            f"{'met' if wall <= target else 'missed'})"
            for mode, wall, cpu, target in summary
        )
    )
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(kinds, ignore_errors=True)
    return ok


def leaf_vs_import_linter(project: Path, tree: Path, env, repeat: int) -> None:
    """Our leaf-package contract alone against import-linter's `forbidden`, same tree."""
    leaf = project.parent / "vllm-leaf"
    leaf.mkdir(exist_ok=True)
    (leaf / "tree").symlink_to(project / "tree")
    (leaf / "pyproject.toml").write_text(LEAF_CONTRACTS.format(package=LEAF_PACKAGE))
    (leaf / ".importlinter").write_text(importlinter_config(tree))
    ours = [sys.executable, "-m", "checkers", "check", "--exit-zero", "-q", "--no-cache", "tree/"]
    theirs = [shutil.which("lint-imports"), "--no-cache"]
    peer_env = dict(env, PYTHONPATH=f"{leaf / 'tree'}{os.pathsep}{env.get('PYTHONPATH', '')}")
    run(theirs, leaf, peer_env)
    o, t = [], []
    for i in range(repeat):
        pair = [("o", ours, env), ("t", theirs, peer_env)]
        for who, cmd, e in pair if i % 2 == 0 else reversed(pair):
            (o if who == "o" else t).append(run(cmd, leaf, e))
    mo, mt = median_of(o), median_of(t)
    print(
        f"  leaf contract ({LEAF_PACKAGE}) | ours {mo['wall']:.2f} s {mo['cpu']:.2f} s "
        f"{mo['tree']:.0f} MB | import-linter {mt['wall']:.2f} s {mt['cpu']:.2f} s "
        f"{mt['tree']:.0f} MB | {mo['wall'] / mt['wall']:.2f}x wall {mo['cpu'] / mt['cpu']:.2f}x CPU "
        f"{mo['tree'] / max(mt['tree'], 1):.2f}x memory"
    )
    shutil.rmtree(leaf, ignore_errors=True)


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree",
        action="append",
        choices=("stdlib", "vllm"),
        help="trees to measure (default: both)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="alternating runs per figure")
    parser.add_argument(
        "--sizes", default="half,whole,double", help="comma-separated subset of half,whole,double"
    )
    parser.add_argument(
        "--record",
        action="store_true",
        help="store today's findings as the baseline instead of comparing",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time ast.parse alone over the files a contract parses (whole tree)",
    )
    parser.add_argument("--no-findings", action="store_true", help="skip the findings diff")
    parser.add_argument(
        "--bug-classes",
        action="store_true",
        help="instead: vLLM whole with and without the three bug-class kinds, alternately",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="also semgrep (same checks) and, on vLLM, import-linter against the leaf contract",
    )
    parser.add_argument(
        "--warm-all", action="store_true", help="warm runs on every size, not only whole"
    )
    args = parser.parse_args(argv)
    args.sizes = [s for s in args.sizes.split(",") if s]
    if not set(args.sizes) <= {"half", "whole", "double"} or args.repeat < 1:
        parser.error(
            f"--sizes {args.sizes!r} / --repeat {args.repeat}: sizes are half, whole, double"
        )
    ruff = shutil.which("ruff")
    if ruff is None:
        print("ruff is not on PATH (pip install ruff)", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    version = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.strip()
    if args.peers:
        for tool, flag in (("semgrep", "--version"), ("lint-imports", "--version")):
            found = shutil.which(tool)
            said = (
                subprocess.run([found, flag], capture_output=True, text=True).stdout.strip()
                if found
                else "not installed"
            )
            version += f", {tool} {said.splitlines()[-1] if said else '?'}"
    load = os.getloadavg()
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit {commit()}, "
        f"Python {sys.version.split()[0]}, {version}, {_cpus()} CPUs usable, "
        f"load average {load[0]:.2f} {load[1]:.2f}; median of {args.repeat} alternating runs"
    )
    ok = True
    if args.bug_classes:
        found = vllm_tree()
        if isinstance(found, str):
            print(f"vllm: skipped: {found}")
            return 0
        with tempfile.TemporaryDirectory(prefix="atom-contracts-cold-") as tmp:
            ok = bench_bug_classes(*found, args, env, Path(tmp))
        print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
        return 0 if ok else 1
    with tempfile.TemporaryDirectory(prefix="atom-contracts-cold-") as tmp:
        for name in args.tree or ["stdlib", "vllm"]:
            found = stdlib_tree() if name == "stdlib" else vllm_tree()
            if isinstance(found, str):
                print(f"\n== {name}: skipped: {found}")
                continue
            ok = bench_tree(name, *found, args, ruff, env, Path(tmp)) and ok
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
