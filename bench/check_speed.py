"""Whole-tree and one-file wall time of `atom-contracts check` against ruff, in one run.

    python bench/check_speed.py [--tree DIR ...] [--with-torch] [--repeat N]

The target: a cold whole-tree check with a contract of
every kind within 1.5x of ``ruff check --no-cache --select S101,TID251`` on
the same tree; a warm-cache run no slower than ruff's warm run; one file
under 80 ms for the whole process. Both tools run on the same files in the
same invocation, alternating, and each figure is the best of ``--repeat``
runs, so machine noise that favours one tool favours the other as much.

The tree is the CPython standard library (``sysconfig.get_paths()["stdlib"]``)
unless ``--tree`` says otherwise; ``--with-torch`` adds torch's Python
sources when torch is installed. The contracts live in a temporary project
whose ``src`` is the tree, so ``leaf-package`` and ``importorskip`` resolve
the tree's own modules the way they would in a user's repository.

``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment: an
installed checker has its bytecode cached, and timing the compiler of our own
modules on every run would measure this sandbox, not the tool.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUFF_SELECT = "S101,TID251"


def contracts_toml(src_roots: list[Path]) -> str:
    """A contract of every kind, with parameters a real adopter would declare."""
    src = ", ".join(f'"{p}"' for p in src_roots)
    return f"""\
[tool.atom-contracts]
src = [{src}]
# As an adopter scopes it (and as docs/adoption.md does): an assert in
# a test is the test, not input validation, so test folders are not parsed
# for input-assert. ruff's S101 is run over the same files, tests included.
per-file-ignores = {{ "**/test/**" = ["AC301"], "**/tests/**" = ["AC301"], "**/test_*.py" = ["AC301"] }}

[[tool.atom-contracts.contracts]]
id = "allocate-takes-blocks"
kind = "keyword-only"
functions = ["allocate_kv_cache_tensors"]
parameters = ["blocks"]

[[tool.atom-contracts.contracts]]
id = "json-is-a-leaf"
kind = "leaf-package"
package = "json"

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"

[[tool.atom-contracts.contracts]]
id = "retired-names"
kind = "retired-name"
names = ["StateField", "StateArena", "SplitStateArena", "Eagle3DraftBuilder", "take_slot", "is_qwen_next"]

[[tool.atom-contracts.contracts]]
id = "plain-triton-imports"
kind = "banned-import"
modules = {{ "vllm.triton_utils" = "import triton directly" }}

[[tool.atom-contracts.contracts]]
id = "triton-tests-importorskip"
kind = "importorskip"
module = "triton"
tests = ["**/test_*.py"]

[[tool.atom-contracts.contracts]]
id = "repeat-interleave-output-size"
kind = "required-keyword"
calls = ["torch.repeat_interleave"]
keyword = "output_size"
"""


RUFF_TOML = """\
[lint.flake8-tidy-imports.banned-api]
"vllm.triton_utils".msg = "import triton directly"
"""


def timed(cmd: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}"
        )
    return elapsed, proc.returncode


def best(cmd: list[str], *, cwd: Path, env: dict[str, str], repeat: int, before=None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        times.append(timed(cmd, cwd=cwd, env=env)[0])
    return min(times)


def tree_figures(
    trees: list[Path], ruff: str, checker: list[str], env: dict[str, str], repeat: int
) -> bool:
    tree_args = [str(t) for t in trees]
    files = sum(1 for t in trees for p in t.rglob("*.py") if "site-packages" not in p.parts)
    with tempfile.TemporaryDirectory(prefix="atom-contracts-bench-") as tmp:
        project = Path(tmp)
        (project / "pyproject.toml").write_text(contracts_toml(trees))
        (project / "ruff.toml").write_text(RUFF_TOML)
        ruff_cmd = [
            ruff,
            "check",
            "--config",
            str(project / "ruff.toml"),
            "--select",
            RUFF_SELECT,
            "--exit-zero",
            "--cache-dir",
            str(project / ".ruff_cache"),
            *tree_args,
        ]
        ours_cmd = [*checker, "check", "--exit-zero", "-q", *tree_args]
        # Warm both tools' bytecode and the OS page cache before any figure counts.
        timed([*ruff_cmd, "--no-cache"], cwd=project, env=env)
        timed([*ours_cmd, "--no-cache"], cwd=project, env=env)
        cold_ruff = best([*ruff_cmd, "--no-cache"], cwd=project, env=env, repeat=repeat)
        cold_ours = best([*ours_cmd, "--no-cache"], cwd=project, env=env, repeat=repeat)
        timed(ruff_cmd, cwd=project, env=env)  # fill ruff's cache
        shutil.rmtree(project / ".atom-contracts-cache", ignore_errors=True)
        first_ours = best(ours_cmd, cwd=project, env=env, repeat=1)  # fills ours
        warm_ruff = best(ruff_cmd, cwd=project, env=env, repeat=repeat)
        warm_ours = best(ours_cmd, cwd=project, env=env, repeat=repeat)
        # Each kind alone, cold: which kind the whole-tree time goes to.
        from checkers.rules import KIND_PATHS, kind_class

        floor = best([*ours_cmd, "--no-cache", "--select", "AC0"], cwd=project, env=env, repeat=1)
        per_kind = []
        for kind in KIND_PATHS:
            codes = ",".join(kind_class(kind).codes())
            seconds = best(
                [*ours_cmd, "--no-cache", "--select", codes], cwd=project, env=env, repeat=1
            )
            per_kind.append((kind, codes, seconds))

    print(
        f"tree: {', '.join(tree_args)} ({files} .py files); cores: {os.cpu_count()}; best of {repeat}"
    )
    print(f"{'':34s} {'atom-contracts':>15s} {'ruff':>10s} {'ratio':>7s}")
    for label, ours, theirs in (
        ("whole tree, cold (--no-cache)", cold_ours, cold_ruff),
        ("whole tree, warm cache", warm_ours, warm_ruff),
    ):
        print(f"{label:34s} {ours * 1000:13.0f} ms {theirs * 1000:7.0f} ms {ours / theirs:6.2f}x")
    print(f"{'whole tree, filling our cache':34s} {first_ours * 1000:13.0f} ms")
    print("whole tree, cold, one kind at a time (--select its codes):")
    print(f"  {'no contract (discovery + read + noqa)':40s} {floor * 1000:8.0f} ms")
    for kind, codes, seconds in per_kind:
        print(f"  {kind + ' (' + codes + ')':40s} {seconds * 1000:8.0f} ms")
    return cold_ours <= 1.5 * cold_ruff and warm_ours <= warm_ruff


def cpu_and_wall(
    cmd: list[str], *, cwd: Path, env: dict[str, str], repeat: int
) -> tuple[float, float]:
    """Least wall and least CPU (user + system, from wait4) over ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        proc = subprocess.Popen(
            cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}")
    return min(walls), min(cpus)


def one_file_figures(
    one: Path, ruff: str, checker: list[str], env: dict[str, str], repeat: int
) -> bool:
    """The pre-commit and hook path: one file of this repository, with its declared contracts."""
    rows = [
        (
            "atom-contracts check FILE (warm cache)",
            [*checker, "check", "--exit-zero", "-q", str(one)],
        ),
        (
            "atom-contracts check FILE --no-cache",
            [*checker, "check", "--no-cache", "--exit-zero", "-q", str(one)],
        ),
        # Without site: what the check costs on its own, imports included (cwd is the checkout).
        (
            "python -S -m checkers check FILE",
            [sys.executable, "-S", "-m", "checkers", "check", "--exit-zero", "-q", str(one)],
        ),
        ('python -c "import checkers.cli"', [sys.executable, "-c", "import checkers.cli"]),
        ("python -c pass (the floor)", [sys.executable, "-c", "pass"]),
        ("python -S -c pass (no site)", [sys.executable, "-S", "-c", "pass"]),
        ("ruff check --no-cache FILE", [ruff, "check", "--no-cache", "--exit-zero", str(one)]),
    ]
    timed(rows[0][1], cwd=REPO, env=env)  # bytecode and our cache, once
    print(
        f"one file: {one.relative_to(REPO) if one.is_relative_to(REPO) else one}; least of {repeat}"
    )
    print(f"{'':40s} {'wall ms':>8s} {'CPU ms':>8s}")
    figures = {}
    for label, cmd in rows:
        wall, cpu = cpu_and_wall(cmd, cwd=REPO, env=env, repeat=repeat)
        figures[label] = wall
        print(f"{label:40s} {wall * 1000:8.1f} {cpu * 1000:8.1f}")
    return figures[rows[1][0]] < 0.080


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tree", action="append", type=Path, help="tree to check (default: the stdlib)"
    )
    parser.add_argument("--with-torch", action="store_true", help="add torch's Python sources")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure; the best is kept")
    parser.add_argument(
        "--one-file", type=Path, default=REPO / "atom" / "runner" / "model_runner.py"
    )
    parser.add_argument("--one-file-only", action="store_true", help="skip the whole-tree runs")
    parser.add_argument(
        "--module",
        action="store_true",
        help="without an installed console script, run `python -m checkers`",
    )
    args = parser.parse_args(argv)

    trees = [p.resolve() for p in (args.tree or [Path(sysconfig.get_paths()["stdlib"])])]
    if args.with_torch:
        import importlib.util

        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("--with-torch: torch is not installed")
        # torch's own package directory: its top-level name must resolve as `torch`.
        trees.append(Path(next(iter(spec.submodule_search_locations))).parent)
    ruff = shutil.which("ruff")
    checker = [shutil.which("atom-contracts")] if shutil.which("atom-contracts") else None
    if checker is None and args.module:
        # Not installed (a bare machine with this checkout): run the package from the tree.
        checker = [sys.executable, "-m", "checkers"]
        os.environ["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(REPO), os.environ.get("PYTHONPATH")])
        )
    if ruff is None or checker is None:
        raise SystemExit("needs `ruff` and `atom-contracts` on PATH (pip install -e '.[test]')")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

    ok = True
    if not args.one_file_only:
        ok = tree_figures(trees, ruff, checker, env, args.repeat) and ok
    ok = one_file_figures(args.one_file.resolve(), ruff, checker, env, args.repeat * 5) and ok
    print(
        "targets met"
        if ok
        else "targets NOT met (cold <= 1.5x ruff, warm <= ruff, one file < 80 ms)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
