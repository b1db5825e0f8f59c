"""Ctrl-C at the other ways in, and at the edges of a run.

    python bench/interrupt_entries.py MODE [--tries N] [--seed S]

``bench/interrupt.py`` measures ``atom-contracts check`` in the middle of a
long run. This measures what it does not, with the same SIGINT to a process
group that has SIGINT's default action, as a terminal's foreground job:

- ``end``: a short check (five stdlib packages) interrupted from 0.5 to 1.3
  times its length, where the run's teardown is. Exit 130, or exit 0 with
  the output byte for byte the uninterrupted run's (the SIGINT came after
  its work); exit 0 with output missing, a death by the signal, or anything
  on stderr is a miss.
- ``start``: the same check interrupted in its first 50 ms, before any of
  this project's code has run: what CPython does there, counted, not judged
  (docs/reliability.md, "Start-up").
- ``pre-commit``: ``pre-commit run --all-files`` with a local
  ``atom-contracts check --no-cache`` hook over ten stdlib packages in a
  scratch repository. pre-commit's own "Interrupted (^C)" exit 130 within a
  second, no process of the run left, no traceback.
- ``hook``: the agent hook (``atom-contracts hook post-tool-use``, the real
  ruff) on a file with a ruff fix and a contract finding. Interrupted: exit 0
  with ``interrupted; nothing reported``, or its report (exit 2) when the
  SIGINT came after its work; within a second, no ruff left, and the file
  either as written or as ruff fixed it -- never cut short.
- ``server``: ``atom-contracts server`` with an ``initialize`` answered and
  stdin held open: exit 130 within a second, no traceback.

Offsets for ``pre-commit``, ``hook`` and ``server`` start at 0.1 s, past
start-up. Exits 1 when a judged try misses. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from interrupt import STDLIB, alive, descendants

PACKAGES = ("json", "email", "asyncio", "unittest", "concurrent")
MORE_PACKAGES = (*PACKAGES, "multiprocessing", "tkinter", "idlelib", "lib2to3", "test")
DECLARATION = """\
[tool.atom-contracts]
src = ["."]

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"
"""
RUFF = '[tool.ruff.lint]\nselect = ["E", "F", "W", "B"]\nexternal = ["AC"]\n\n'
EDITED = "import os\nimport sys\n\n\ndef f(x):\n    assert x\n    return sys.argv, x\n"


def foreground() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def exe() -> str:
    return shutil.which("atom-contracts") or sys.exit("atom-contracts is not on PATH")


def launch(command, cwd: Path, *, env=None, stdin=None, with_stdout: bool = False):
    """``command`` as a terminal's foreground job in a session of its own (so one SIGINT to
    the group reaches it and its children); ``(process, the file its stderr goes to)`` --
    stdout too with ``with_stdout``, else dropped. ``tries()`` reads and closes the file."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 -- read and closed by tries()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=log if with_stdout else subprocess.DEVNULL,
        stderr=subprocess.STDOUT if with_stdout else log,
        start_new_session=True,
        preexec_fn=foreground,
    )
    return proc, log


def interrupt(proc: subprocess.Popen, at_s: float, wait_s: float = 10.0) -> tuple[object, object]:
    """SIGINT to ``proc``'s group ``at_s`` after it started; (status, seconds to exit)."""
    started = time.monotonic()
    while time.monotonic() - started < at_s and proc.poll() is None:
        time.sleep(0.002)
    if proc.poll() is not None:
        return "finished", None
    sent = time.monotonic()
    with contextlib.suppress(ProcessLookupError):  # it may end between the poll and the kill
        os.killpg(proc.pid, signal.SIGINT)
    try:
        return proc.wait(timeout=wait_s), round(time.monotonic() - sent, 3)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return "hung", None


def project(folder: Path, packages: tuple[str, ...]) -> Path:
    for name in packages:
        shutil.copytree(STDLIB / name, folder / name, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "pyproject.toml").write_text(DECLARATION)
    return folder


def edges(args, root: Path, end: bool) -> int:
    work = project(root, PACKAGES)
    command = [exe(), "check", "-q", "--no-cache", "--exit-zero", *PACKAGES]
    lengths, whole = [], b""
    for _ in range(5):
        started = time.monotonic()
        whole = subprocess.run(
            command, cwd=work, stdout=subprocess.PIPE, preexec_fn=foreground
        ).stdout
        lengths.append(time.monotonic() - started)
    run_s = sorted(lengths)[2]
    print(f"{' '.join(command[1:])}: {run_s:.3f} s (median of 5)")
    draw = random.Random(args.seed)
    counts: collections.Counter = collections.Counter()
    bad = 0
    for _ in range(args.tries):
        at = draw.uniform(0.5 * run_s, 1.3 * run_s) if end else draw.uniform(0.0, 0.05)
        with tempfile.TemporaryFile() as out:
            proc = subprocess.Popen(
                command,
                cwd=work,
                stdout=out,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=foreground,
            )
            time.sleep(at)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGINT)
            rc = proc.wait(timeout=30)
            err = proc.stderr.read().decode("utf-8", "replace")
            out.seek(0)
            printed = out.read()
        if rc == 0:
            kind = "exit 0, output whole" if printed == whole else "exit 0, OUTPUT MISSING"
        elif rc < 0:
            kind = f"died by signal {-rc}"
        else:
            kind = f"exit {rc}"
        if "Fatal Python error" in err:
            kind += ", CPython's fatal start-up error"
        elif "Traceback" in err or "Exception ignored" in err:
            kind += ", a traceback"
        counts[kind] += 1
        bad += end and kind not in ("exit 130", "exit 0, output whole")
    for kind, n in sorted(counts.items()):
        print(f"  {kind}: {n}")
    return bad


def pre_commit(args, root: Path) -> int:
    work = project(root, MORE_PACKAGES)
    (work / ".pre-commit-config.yaml").write_text(
        "repos:\n  - repo: local\n    hooks:\n      - id: atom-contracts\n"
        "        name: atom-contracts\n        entry: atom-contracts check --no-cache\n"
        "        language: system\n        types: [python]\n"
    )
    git = ["git", "-c", "user.email=bench@example.invalid", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q", "."], cwd=work, check=True)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "scratch"], cwd=work, check=True)
    env = {**os.environ, "PRE_COMMIT_HOME": str(root.parent / "pre-commit-home")}
    command = ["pre-commit", "run", "--all-files"]
    started = time.monotonic()
    done = subprocess.run(
        command,
        cwd=work,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=foreground,
    )
    run_s = time.monotonic() - started
    whole = done.stdout.decode("utf-8", "replace")
    files = sum(1 for _ in work.rglob("*.py"))
    print(f"pre-commit run --all-files over {files} files: {run_s:.2f} s")

    def run() -> tuple[subprocess.Popen, object]:
        return launch(command, work, env=env, with_stdout=True)

    def judge(rc, took, out: str) -> str:
        if rc == 130 and took < 1.0 and "Traceback" not in out:
            return "interrupted: exit 130 (pre-commit's 'Interrupted (^C)')"
        if out == whole:
            # pre-commit is Python too: a SIGINT in its own teardown, after it
            # printed every hook's result, ends it by the signal.
            return f"pre-commit ended by the SIGINT after its work, its output whole (exit {rc})"
        if "Traceback" in out and "/pre_commit/" in out and "atom-contracts" not in out:
            return f"pre-commit's own start-up: a traceback from its imports (exit {rc})"
        return f"MISS: exit {rc} in {took} s"

    return tries(args, run, 1.2 * run_s, judge)


def tries(args, run, span_s: float, judge, after=None) -> int:
    """Interrupt ``run()`` at ``--tries`` offsets from 0.1 s to ``span_s``; the misses.

    ``judge(status, seconds, output)`` names each interrupted try's outcome;
    a name starting "MISS" is a miss, as is a process of the run left alive
    or ``after()`` false (the edited file not whole).
    """
    draw = random.Random(args.seed)
    counts: collections.Counter = collections.Counter()
    times: list[float] = []
    bad = 0
    for _ in range(args.tries):
        at = draw.uniform(0.1, max(span_s, 0.2))
        proc, out_file = run()
        seen: set[int] = set()
        started = time.monotonic()
        while time.monotonic() - started < at and proc.poll() is None:
            seen |= descendants(proc.pid)
            time.sleep(0.005)
        seen |= descendants(proc.pid)
        rc, took = interrupt(proc, 0.0)
        out_file.seek(0)
        out = out_file.read().decode("utf-8", "replace")
        out_file.close()
        left = [p for p in seen if alive(p)]
        for p in left:
            os.kill(p, signal.SIGKILL)
        if rc == "finished":
            label = f"finished before the SIGINT, exit {proc.returncode}"
        elif not isinstance(took, float):
            label = f"MISS: {rc}"
        else:
            label = judge(rc, took, out)
            times.append(took)
        if left:
            label = f"MISS: {len(left)} of its processes left running"
        elif after is not None and not after():
            label = "MISS: the edited file is neither as written nor as ruff fixed it"
        counts[label] += 1
        if label.startswith("MISS"):
            bad += 1
            print(f"  at {at:.3f} s: {label} (exit {rc}, {took} s)\n{out[-1500:]}")
    for label, n in sorted(counts.items()):
        print(f"  {label}: {n}")
    if times:
        print(f"  time to exit when interrupted: {min(times):.3f}-{max(times):.3f} s")
    return bad


def hook(args, root: Path) -> int:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text(RUFF + DECLARATION)
    mod = root / "pkg" / "mod.py"
    fixed = EDITED.replace("import os\n", "", 1)
    payload = json.dumps(
        {
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "cwd": str(root),
            "tool_input": {"file_path": str(mod)},
            "tool_response": {"filePath": str(mod), "success": True},
        }
    ).encode()
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root)}

    def run() -> tuple[subprocess.Popen, object]:
        mod.write_text(EDITED)
        proc, err = launch([exe(), "hook", "post-tool-use"], root, env=env, stdin=subprocess.PIPE)
        proc.stdin.write(payload)
        proc.stdin.close()
        return proc, err

    lengths = []
    for _ in range(3):
        started = time.monotonic()
        finished, err = run()
        finished.wait()
        err.close()
        lengths.append(time.monotonic() - started)
    run_s = sorted(lengths)[1]
    print(f"atom-contracts hook post-tool-use, real ruff: {run_s:.3f} s (median of 3)")

    def judge(rc, took, err: str) -> str:
        if took >= 1.0 or "Traceback" in err:
            return f"MISS: exit {rc} in {took} s"
        if rc == 0 and "interrupted; nothing reported" in err:
            return "interrupted: exit 0, 'interrupted; nothing reported'"
        if rc == 2 and "AC301" in err:
            return "completed: its report, exit 2 (the SIGINT came after its work)"
        return f"MISS: exit {rc}"

    return tries(args, run, 1.2 * run_s, judge, after=lambda: mod.read_text() in (EDITED, fixed))


def server(args, root: Path) -> int:
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'

    def run() -> tuple[subprocess.Popen, object]:
        proc, err = launch([exe(), "server"], root, stdin=subprocess.PIPE)
        proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        proc.stdin.flush()
        return proc, err

    def judge(rc, took, err: str) -> str:
        if rc == 130 and took < 1.0 and "Traceback" not in err:
            return "interrupted: exit 130"
        return f"MISS: exit {rc} in {took} s"

    return tries(args, run, 2.0, judge)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("end", "start", "pre-commit", "hook", "server"))
    parser.add_argument("--tries", type=int, default=100)
    parser.add_argument("--seed", type=int)
    args = parser.parse_args(argv)
    if args.tries < 1:
        parser.error(f"--tries must be at least 1, not {args.tries}")
    foreground()
    scratch = Path(tempfile.mkdtemp(prefix="interrupt-entries-"))
    root = scratch / "project"
    root.mkdir()
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    try:
        if args.mode in ("end", "start"):
            bad = edges(args, root, end=args.mode == "end")
        elif args.mode == "pre-commit":
            bad = pre_commit(args, root)
        elif args.mode == "hook":
            bad = hook(args, root)
        else:
            bad = server(args, root)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("interrupt: clean" if not bad else f"interrupt: {bad} tries missed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
