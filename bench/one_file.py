"""One file checked with a warm cache, against ruff on the same file, in one sitting.

What pre-commit, the agent hook and ``atom-contracts check FILE`` cost: one
interpreter start, the declaration, the file's own findings from the cache,
the coverage check and the cross-file re-check over the project's listing.
The target: under 80 ms wall, median. Measured, never asserted in a
test: the machines are shared, and the ratios from alternating runs hold
better than absolute times.

Two projects:

- ``repo``: this working tree (tracked and untracked files git does not
  ignore) copied to a scratch directory and ``git init``-ed, with its own
  declaration (every kind, the cross-file ones included) and ruff's own
  configuration; the file is ``atom/runner/model_runner.py``.
- ``vllm``: vLLM 0.33.0's package hard-linked into a scratch project with
  ``bench/cold_path.py``'s declaration (input-assert + required-keyword) and
  ruff's ``--select S101,TID251``; the file is ``vllm/config/model.py``
  (113 KB).

Each checker's cache is filled by one whole-tree run first, so the one-file
run reads a cache of the tree's size, as a user's would. ``--compare DIR``
runs another checkout's checker (``PYTHONPATH=DIR``) alternately with this
one's on the same project: before and after in one sitting.

Per round each command runs once, alternately; the first round (bytecode,
page cache, our cache's listing) is dropped. Per command: the median wall,
the median CPU (user + system, from ``os.wait4``) and the largest peak RSS
(``ru_maxrss``); then ours over ruff's.

    python bench/one_file.py [--rounds 20] [--tree repo|vllm|both] [--compare DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from cold_path import RUFF_SELECT, build_project, vllm_tree  # noqa: E402  (after the path fix-up)
from hook_speed import _copy_tree  # noqa: E402

TARGET_MS = 80.0
_PACKAGES = ("checkers", "contracts", "hooks")


def _copy_repo(dest: Path) -> None:
    _copy_tree(dest)  # hook_speed's: tracked and untracked files git does not ignore
    # A git work tree, as pre-commit's always is: the listing is git's.
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"]):
        subprocess.run(cmd, cwd=dest, check=True, capture_output=True)


# Peak memory is the command's own resident high-water mark, reported by GNU time,
# which forks it: a child forked from this Python process would start with this
# process's resident set as its peak (Linux keeps the high-water mark across
# exec), and every command would report the bench's own ~16 MB. CPU is from
# wait4 on time, which counts time and the command it reaped (time's own is <1 ms).
_TIME = "/usr/bin/time"


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak RSS MB, exit status) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as report:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [_TIME, "-f", "%M", "-o", report.name, *cmd],
            cwd=cwd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        lines = [line for line in report.read().splitlines() if line.strip().isdigit()]
    peak_mb = int(lines[-1]) / 1024 if lines else float("nan")
    return wall, usage.ru_utime + usage.ru_stime, peak_mb, os.waitstatus_to_exitcode(status)


def measure(
    name: str,
    project: Path,
    target: Path,
    ruff_args: list[str],
    rounds: int,
    env,
    compare: Path | None = None,
) -> list[str]:
    console = shutil.which("atom-contracts", path=str(Path(sys.executable).parent))
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if console is None or ruff is None:
        raise SystemExit("needs `atom-contracts` and `ruff` installed (pip install -e '.[test]')")
    if not os.access(_TIME, os.X_OK):
        raise SystemExit(f"needs GNU time at {_TIME} for each command's own peak memory")
    cases = {
        "atom-contracts check FILE": [console, "check", "-q", "--exit-zero", str(target)],
        "ruff check FILE": [ruff, "check", "-q", "--exit-zero", *ruff_args, str(target)],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    envs = {label: env for label in cases}
    compared = ""
    if compare is not None:
        # Another checkout's checker, first on the path ahead of this editable install.
        label = compared = f"... {compare.name}'s checker"
        cases = {
            "atom-contracts check FILE": cases.pop("atom-contracts check FILE"),
            label: [console, "check", "-q", "--exit-zero", str(target)],
            **cases,
        }
        envs[label] = {**env, "PYTHONPATH": str(compare)}
    # Each checker's cache filled by a whole-tree run first (each has its own key), so
    # the one-file run reads a cache of the tree's size, as a user's would.
    for label in [k for k in cases if "atom-contracts" in k or "checker" in k]:
        started = time.perf_counter()
        _run([console, "check", "-q", "--exit-zero"], project, envs[label])
        print(f"{name}: {label}: cache filled ({time.perf_counter() - started:.0f} s)")
    samples: dict[str, list[tuple[float, float, float]]] = {k: [] for k in cases}
    statuses: dict[str, set[int]] = {k: set() for k in cases}
    for round_index in range(rounds + 1):
        for label, cmd in cases.items():
            wall, cpu, rss, status = _run(cmd, project, envs[label])
            statuses[label].add(status)
            if round_index:
                samples[label].append((wall, cpu, rss))
    for label, seen in statuses.items():
        if seen - {0}:
            raise SystemExit(f"{label}: exited {sorted(seen)} in {project}")
    rows = {}
    for label, got in samples.items():
        rows[label] = (
            statistics.median(w for w, _, _ in got) * 1000,
            statistics.median(c for _, c, _ in got) * 1000,
            max(r for _, _, r in got),
        )
    ours, theirs = rows["atom-contracts check FILE"], rows["ruff check FILE"]
    out = [f"== {name}: {target.relative_to(project)}, {rounds} rounds, medians"]
    out.append(f"  {'':28s} {'wall ms':>8s} {'CPU ms':>8s} {'peak MB':>8s}")
    for label, (wall, cpu, rss) in rows.items():
        out.append(f"  {label:28s} {wall:8.1f} {cpu:8.1f} {rss:8.1f}")
    out.append(
        f"  ratio ours / ruff:           {ours[0] / theirs[0]:7.2f}x {ours[1] / theirs[1]:7.2f}x "
        f"{ours[2] / theirs[2]:7.2f}x"
    )
    verdict = "met" if ours[0] < TARGET_MS else "NOT met"
    if compare is not None:
        before = rows[compared]
        out.append(
            f"  ratio ours / {compare.name}'s:   {ours[0] / before[0]:7.2f}x "
            f"{ours[1] / before[1]:7.2f}x {ours[2] / before[2]:7.2f}x"
        )
    out.append(f"  one file under {TARGET_MS:.0f} ms (median wall {ours[0]:.1f} ms): {verdict}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--tree", choices=("repo", "vllm", "both"), default="both")
    parser.add_argument(
        "--compare",
        type=Path,
        help="another checkout (e.g. `git worktree add /tmp/before main`) whose checker runs "
        "alternately with this one's, on the same project",
    )
    args = parser.parse_args(argv)
    # Bytecode as pip would leave it: with PYTHONDONTWRITEBYTECODE (set on the shared
    # machines) an editable install compiles every module on every run (~100 ms).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", *(str(REPO / p) for p in _PACKAGES)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    load = os.getloadavg()[0]
    print(f"load average {load:.1f} on {os.cpu_count()} cores (a shared machine: read the ratios)")
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="one-file-") as tmp:
        scratch = Path(tmp)
        if args.tree in ("repo", "both"):
            project = scratch / "repo"
            _copy_repo(project)
            lines += measure(
                "this repository",
                project,
                project / "atom" / "runner" / "model_runner.py",
                [],
                args.rounds,
                env,
                args.compare,
            )
        if args.tree in ("vllm", "both"):
            found = vllm_tree()
            if isinstance(found, str):
                lines.append(f"== vllm: skipped ({found})")
            else:
                tree, excluded = found
                project, _, _, _ = build_project("vllm", "whole", tree, excluded, scratch)
                lines += measure(
                    "vLLM 0.33.0",
                    project,
                    project / "tree" / "vllm" / "config" / "model.py",
                    ["--select", RUFF_SELECT],
                    args.rounds,
                    env,
                    args.compare,
                )
    print("\n".join(lines))
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
