"""Ctrl-C at several points of a stdlib run: time to exit, exit status, orphans, the cache.

    python bench/interrupt.py [--at 0.5,0.875,1.25,1.625,2.0 | --tries N [--seed S]]
                              [--jobs 2] [--cache] [--stdlib-only]

For each offset (seconds after the start), in a scratch project declaring
input-assert and retired-name over the standard library and torch's sources
(found without importing torch; together about 3.5 s here, so every offset
lands in the parallel phase: the stdlib alone now takes 0.7 s),
``atom-contracts check --no-cache`` (``--cache``: with the cache, over one
left by a run on ``json/``) is started in its own process group and that group is sent SIGINT,
as a terminal's Ctrl-C reaches the foreground job. Per try it prints: how long
after the SIGINT the process exited (or ``hung`` after ``--wait`` seconds, then
killed), its exit status (must be 130), whether the pool had started (the
parallel phase, where the workers must end too), how many of the run's processes were
alive 0.5 s after it exited (must be 0), whether ``Traceback`` reached stderr,
and whether every file of ``.atom-contracts-cache`` is byte for byte as
before. Exits 1 when a try misses any of those.

``--tries N`` draws N offsets uniformly from 0.05 s to 1.2 times the
uninterrupted run's measured length (``--seed`` for a repeatable draw), so
the interrupts cover the whole run -- start-up, discovery, the pool's
forking, the parallel phase, the cache save -- and some fall after its end.
A try whose run ended before its SIGINT is counted as ``finished`` (it must
have exited 0: ``--exit-zero``), not as a miss; so is one that exited 0 with
its output byte for byte the uninterrupted run's (``completed``: the SIGINT
came once its work was done, and a Ctrl-C is ignored from there on). Any other
status -- 0 with output missing, a death by the signal -- is a miss.

The machine is shared: write the load average beside the figures. Process
trees are read from /proc, so this runs on Linux only.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def torch_sources() -> Path | None:
    spec = importlib.util.find_spec("torch")
    return Path(spec.origin).parent if spec is not None and spec.origin else None


DECLARATION = """\
[tool.atom-contracts]
src = [{src}]

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"

[[tool.atom-contracts.contracts]]
id = "retired"
kind = "retired-name"
names = ["StateField"]
"""


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    return parents


def descendants(pid: int) -> set[int]:
    parents = _parents()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cache_files(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def one_try(
    command: list[str], project: Path, at_s: float, wait_s: float, whole: bytes
) -> dict[str, object]:
    # Its output to a file, not a pipe: nobody reads it while the run writes.
    with tempfile.TemporaryFile() as out:
        return _one_try(command, project, at_s, wait_s, whole, out)


def _one_try(command, project, at_s, wait_s, whole, out) -> dict[str, object]:
    cache_dir = project / ".atom-contracts-cache"
    before = cache_files(cache_dir)
    proc = subprocess.Popen(
        command,
        cwd=project,
        stdout=out,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own group, as a terminal's foreground job
        # ... with SIGINT's default action, as a foreground job has: started
        # from a script's background job this would inherit SIGINT ignored,
        # and a run started so rightly goes on ignoring it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        # A hung run is sent SIGABRT before the kill: with the fault handler
        # on, every thread's Python stack reaches stderr, which says where.
        env={**os.environ, "PYTHONFAULTHANDLER": "1"},
    )
    started = time.monotonic()
    seen: set[int] = set()
    # Record the run's processes up to the interrupt: a worker that outlives
    # its parent is reparented, so it cannot be found from the parent after.
    while time.monotonic() - started < at_s and proc.poll() is None:
        seen |= descendants(proc.pid)
        time.sleep(0.01)
    if proc.poll() is not None:
        return {"at_s": at_s, "result": f"finished before the interrupt (exit {proc.returncode})"}
    seen |= descendants(proc.pid)
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        rc: object = proc.wait(timeout=wait_s)
        took: object = round(time.monotonic() - sent, 3)
    except subprocess.TimeoutExpired:
        rc, took = "hung", f"> {wait_s:g} s"
        os.kill(proc.pid, signal.SIGABRT)  # the parent only: its stacks, not the workers'
        try:
            proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    out.seek(0)
    printed = out.read()
    if rc == "hung":
        print("  the hung run's stacks (SIGABRT, fault handler):")
        print("    " + err.rstrip().replace("\n", "\n    "))
    time.sleep(0.5)
    survivors = sorted(p for p in seen if alive(p))
    for p in survivors:
        os.kill(p, signal.SIGKILL)
    after = cache_files(cache_dir)
    if "Traceback" in err or "Exception ignored" in err:
        print(err.rstrip())
    if rc == 0 and printed == whole:
        # The SIGINT came once the run was over (its verdict printed whole):
        # it is ignored, and the run's own status stands. A completed run
        # with the cache has saved it, so "as before" does not apply.
        return {
            "at_s": at_s,
            "result": "completed, its output whole (the SIGINT came after its work)",
            "survivors": len(survivors),
            "traceback": "Traceback" in err or "Exception ignored" in err,
        }
    return {
        "at_s": at_s,
        "exit": rc,
        "exit_s": took,
        "workers_seen": len(seen),
        "survivors": len(survivors),
        "traceback": "Traceback" in err or "Exception ignored" in err,
        "cache_intact": {k: after.get(k) for k in before} == before
        and not [k for k in after if k.rpartition("/")[2].startswith(".tmp")],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--at", default="0.5,0.875,1.25,1.625,2.0", help="offsets in seconds")
    parser.add_argument(
        "--tries", type=int, help="draw this many offsets across the whole run instead of --at"
    )
    parser.add_argument("--seed", type=int, help="seed for --tries' draw")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cache", action="store_true", help="with the cache, not --no-cache")
    parser.add_argument("--stdlib-only", action="store_true", help="leave torch's sources out")
    parser.add_argument("--wait", type=float, default=10.0, help="seconds before a try is 'hung'")
    args = parser.parse_args(argv)
    exe = shutil.which("atom-contracts") or sys.exit("atom-contracts is not on PATH")
    trees = [STDLIB]
    torch = None if args.stdlib_only else torch_sources()
    if torch is not None:
        trees.append(torch)
    project = Path(tempfile.mkdtemp(prefix="interrupt-"))
    src = ", ".join(f'"{t}"' for t in trees)
    (project / "pyproject.toml").write_text(DECLARATION.format(src=src))
    # A cache left by a smaller run: an interrupted run must leave it as it was.
    subprocess.run(
        [exe, "check", "--exit-zero", "-q", str(STDLIB / "json")],
        cwd=project,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    cache_dir = project / ".atom-contracts-cache"
    baseline = Path(tempfile.mkdtemp(prefix="interrupt-cache-")) / "cache"
    shutil.copytree(cache_dir, baseline)

    def restore() -> None:
        # Each try starts from the small run's cache: a completed run (the
        # timing run) would otherwise warm it, and a warm run ends too soon.
        shutil.rmtree(cache_dir)
        shutil.copytree(baseline, cache_dir)

    command = [exe, "check", "--jobs", str(args.jobs), "--exit-zero", "-q"]
    if not args.cache:
        command.append("--no-cache")
    command.extend(str(t) for t in trees)
    # One run left alone first: how long the run is that the offsets fall into.
    started = time.monotonic()
    whole = subprocess.run(command, cwd=project, stdout=subprocess.PIPE, check=False).stdout
    run_s = time.monotonic() - started
    print(f"uninterrupted run: {run_s:.2f} s")
    restore()
    if args.tries is not None:
        if args.tries < 1:
            parser.error(f"--tries must be at least 1, not {args.tries}")
        draw = random.Random(args.seed)
        offsets = [round(draw.uniform(0.05, 1.2 * run_s), 3) for _ in range(args.tries)]
        print(f"offsets: {args.tries} drawn from 0.05-{1.2 * run_s:.2f} s (seed {args.seed})")
    else:
        offsets = [float(x) for x in args.at.split(",")]
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print(" ".join(command))
    bad = finished = completed = 0
    exit_times: list[float] = []
    for at in offsets:
        row = one_try(command, project, at, args.wait, whole)
        restore()
        print("  " + ", ".join(f"{k} {v}" for k, v in row.items()), flush=True)
        if row.get("result") == "finished before the interrupt (exit 0)":
            finished += 1
            continue
        if str(row.get("result", "")).startswith("completed"):
            completed += 1
            bad += row["survivors"] != 0 or row["traceback"] is not False
            continue
        if isinstance(row.get("exit_s"), float):
            exit_times.append(row["exit_s"])
        ok = (
            row.get("exit") == 130
            and isinstance(row.get("exit_s"), float)
            and row["exit_s"] < 1.0
            and row.get("survivors") == 0
            and row.get("traceback") is False
            and row.get("cache_intact") is True
        )
        bad += not ok
    shutil.rmtree(project, ignore_errors=True)
    shutil.rmtree(baseline.parent, ignore_errors=True)
    interrupted = len(offsets) - finished - completed
    print(
        f"{interrupted} interrupted, {completed} completed with the SIGINT in their exit, "
        f"{finished} finished before their SIGINT"
        + (f"; exit {min(exit_times):.3f}-{max(exit_times):.3f} s" if exit_times else "")
    )
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    print("interrupt: clean" if not bad else f"interrupt: {bad} tries missed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
