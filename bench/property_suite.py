"""What the engine's property suite costs: wall time of pytest over the engine and runtime tests.

The target is under 60 s on two cores with the "ci" hypothesis profile. This
script measures; no test asserts a time. By default it pins the run to two CPUs where the
platform allows (``os.sched_setaffinity``) and sets ``CI=true`` so ``tests/conftest.py`` loads
the "ci" profile.

    python bench/property_suite.py            # two cores, ci profile
    python bench/property_suite.py --cores 0  # no pinning
    python bench/property_suite.py --profile dev
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SUITE = [
    "tests/atom/models",
    "tests/atom/backends",
    "tests/atom/runner",
    "tests/atom/spec_decode",
    "tests/atom/kernels",
    "tests/atom/test_layout_command.py",
    "tests/atom/test_capacity_command.py",
    "tests/contracts/runtime",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/property_suite.py", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--cores", type=int, default=2, help="CPUs to pin to (0: no pinning; default 2)"
    )
    parser.add_argument("--profile", choices=("ci", "dev"), default="ci", help="hypothesis profile")
    parser.add_argument("--durations", type=int, default=10, help="slowest tests to list")
    args = parser.parse_args(argv)
    env = {**os.environ, "HYPOTHESIS_PROFILE": args.profile}
    if args.profile == "ci":
        env["CI"] = "true"
    env.setdefault("OMP_NUM_THREADS", str(max(args.cores, 1)))
    preexec = None
    if args.cores:
        available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if len(available) < args.cores:
            print(f"only {len(available)} CPUs available; running unpinned", file=sys.stderr)
        else:
            cpus = set(available[: args.cores])

            def preexec() -> None:
                os.sched_setaffinity(0, cpus)

    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        f"--durations={args.durations}",
        *SUITE,
    ]
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=REPO, env=env, preexec_fn=preexec, capture_output=True, text=True
    )
    wall_s = time.perf_counter() - start
    tail = proc.stdout.strip().splitlines()
    print("\n".join(tail[-(args.durations + 6) :]))
    if proc.returncode:
        print(proc.stderr[-2000:], file=sys.stderr)
    print(
        f"\nproperty suite: {wall_s:.1f} s wall on {args.cores or 'all'} cores, profile {args.profile!r} "
        f"(target < 60 s on 2 cores); pytest exit {proc.returncode}"
    )
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
