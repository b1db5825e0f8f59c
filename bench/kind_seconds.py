"""CPU seconds each contract kind spends on vLLM with the bug-class kinds, in one process.

    python bench/kind_seconds.py [--repeat N]
    PYTHONPATH=/path/to/other/checkout python bench/kind_seconds.py   # the same, of other code

The project is ``bench/cold_path.py --bug-classes``'s B: vLLM 0.33.0's package whole, as
``bench/cold_path.py`` declares it (input-assert, required-keyword) with
``bench/bug_classes/vllm.toml``'s three kinds added. Each run is a fresh interpreter doing
``atom-contracts check --no-cache --jobs 1`` in-process, and prints per kind the CPU seconds
its contracts' checks took (``Linter._run_one``: a kind's own walk and the questions it asks
of other files, not the parse of the file checked, which the linter makes once for every
kind) and the files it checked, then the run's CPU: the median of ``--repeat`` runs. A
kind's seconds hold what it asks first of the program's shared summaries, so one kind's cut
may move cost to another's: the run's CPU says whether it did.

Timed in CPU, not wall, because the machines here are shared: CPU varies less with what
else runs. To compare two commits, run this once at each (``PYTHONPATH`` at the other's
checkout), alternately, and compare the medians; nothing here is asserted in a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child(where: str) -> None:
    """One run, in this interpreter: the kinds' CPU seconds and files, as JSON on stdout."""
    import contextlib
    import io
    import os

    from checkers import linter
    from checkers.cli import console_main

    seconds: Counter[str] = Counter()
    files: Counter[str] = Counter()
    run_one = linter.Linter._run_one

    def timed(self, contract, source):
        start = time.process_time()
        try:
            return run_one(self, contract, source)
        finally:
            seconds[contract.KIND] += time.process_time() - start
            files[contract.KIND] += 1

    linter.Linter._run_one = timed
    os.chdir(where)
    sys.argv = ["atom-contracts", "check", "--no-cache", "--exit-zero", "-q", "--jobs", "1"]
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        console_main()
    total = time.process_time() - start
    print(json.dumps({"kinds": {k: [seconds[k], files[k]] for k in seconds}, "total": total}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs, each a fresh interpreter")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return 0
    sys.path.insert(0, str(REPO / "bench"))
    import cold_path

    found = cold_path.vllm_tree()
    if isinstance(found, str):
        print(f"vllm: skipped: {found}")
        return 0
    tree, excluded = found
    with tempfile.TemporaryDirectory(prefix="atom-contracts-kinds-") as tmp:
        scratch = Path(tmp)
        base, *_ = cold_path.build_project("vllm", "whole", tree, excluded, scratch)
        project = scratch / "vllm-with-kinds"
        cold_path.link_tree(tree, cold_path.python_files(tree, excluded), project / "tree")
        declared = (REPO / "bench" / "bug_classes" / "vllm.toml").read_text()
        tables = declared[declared.index("[[tool.atom-contracts.contracts]]") :]
        (project / "pyproject.toml").write_text(
            (base / "pyproject.toml").read_text() + "\n" + tables
        )
        runs = []
        for _ in range(args.repeat):
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(project)],
                capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    import checkers

    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, checkers from "
        f"{Path(checkers.__file__).parent}, median of {args.repeat} runs (CPU seconds)"
    )
    kinds = sorted({k for r in runs for k in r["kinds"]})
    for kind in sorted(kinds, key=lambda k: -statistics.median(r["kinds"][k][0] for r in runs)):
        each = [r["kinds"][kind][0] for r in runs]
        print(
            f"  {kind:18s} {statistics.median(each):6.2f} s  ({' '.join(f'{s:.2f}' for s in each)})"
            f"  {runs[0]['kinds'][kind][1]} files"
        )
    each = [r["total"] for r in runs]
    print(
        f"  {'the run':18s} {statistics.median(each):6.2f} s  ({' '.join(f'{s:.2f}' for s in each)})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
