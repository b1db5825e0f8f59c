"""Where one process's cold check spends its CPU, stage by stage (a script, not a test).

    python bench/cold_stages.py [--tree vllm|stdlib] [--repo PATH]

Builds the tree's scratch project as ``bench/cold_path.py`` does, then checks
every file in this one process (no pool, no cache, the collector off per file
as the linter runs it) with ``time.process_time`` accumulated around each
stage: the parse, each contract's pre-filter and its ``check`` (everything a
rule does with the tree), and, inside those, input-assert's index
(``InputOrigins.__init__``) and its questions (``reads_input``, which
includes the functions it indexes on demand), required-keyword's inference
index, the fixes' quote count. ``--repo`` points at another checkout (``git
archive`` of an older commit) so two versions can be run alternately in one
sitting. What is left of the total is reading, hashing, decoding, the
suppression directives, the findings' conversions and the trees'
deallocation (about 0.36 s of CPU on vLLM's 1,460 parsed files, by ``del``
timed after each ``ast.parse``).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", choices=("vllm", "stdlib"), default="vllm")
    parser.add_argument("--repo", type=Path, default=HERE.parent, help="checkout to measure")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    import cold_path

    tree = cold_path.vllm_tree() if args.tree == "vllm" else cold_path.stdlib_tree()
    if isinstance(tree, str):
        print(f"skipped: {tree}")
        return 0
    scratch = Path(tempfile.mkdtemp(prefix="cold-stages-"))
    try:
        project, *_ = cold_path.build_project(args.tree, "whole", *tree, scratch)
        sys.path.insert(0, str(args.repo.resolve()))
        for name in [m for m in sys.modules if m == "checkers" or m.startswith("checkers.")]:
            del sys.modules[name]
        return stages(project)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def stages(project: Path) -> int:
    from checkers import api, literals
    from checkers.analysis import int_kinds, origins
    from checkers.discovery import discover
    from checkers.source import SourceFile

    try:
        from checkers.linter import Linter
    except ImportError:  # a checkout from before the rename
        from checkers.engine import Engine as Linter

    spent: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*a, **k):
            started = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - started

        return wrapper

    literals.preferred_quote = timed("fix quotes", literals.preferred_quote)
    origins.InputOrigins.__init__ = timed("input-assert index", origins.InputOrigins.__init__)
    origins.InputOrigins.reads_input = timed(
        "input-assert questions", origins.InputOrigins.reads_input
    )
    int_kinds.IntInference.__init__ = timed(
        "required-keyword index", int_kinds.IntInference.__init__
    )
    SourceFile.tree.func = timed("ast.parse", SourceFile.tree.func)
    config = api.load_config(project, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    for contract in linter.contracts:
        kind = type(contract)
        kind.wants = timed(f"{contract.KIND} pre-filter", kind.wants)
        kind.check = _timed_generator(spent, f"{contract.KIND} check", kind.check)
    files = list(discover([], config))
    started = time.process_time()
    findings = sum(len(linter.check_file(rel, path, None).findings) for rel, path in files)
    total = time.process_time() - started
    print(f"{len(files)} files, {findings} findings, {total:.2f} s CPU in one process")
    nested = {"input-assert index", "input-assert questions", "fix quotes"}
    nested.add("required-keyword index")
    for name, cpu in sorted(spent.items(), key=lambda kv: -kv[1]):
        label = f"  of which {name}" if name in nested else name
        print(f"  {label:38s} {cpu:6.2f} s  {cpu / total:4.0%}")
    rest = total - sum(cpu for name, cpu in spent.items() if name not in nested)
    print(f"  {'the rest':38s} {rest:6.2f} s  {rest / total:4.0%}")
    return 0


def _timed_generator(spent: dict[str, float], name: str, check):
    """A contract's ``check`` (a generator) with the CPU of each step added to ``name``."""

    def wrapper(*a, **k):
        started = time.process_time()
        try:
            steps = iter(check(*a, **k))  # a list's work is done here, a generator's below
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - started
        while True:
            started = time.process_time()
            try:
                item = next(steps)
            except StopIteration:
                return
            finally:
                spent[name] = spent.get(name, 0.0) + time.process_time() - started
            yield item

    return wrapper


if __name__ == "__main__":
    sys.exit(main())
