"""How long an agent waits after each edit, and a pre-commit run per file.

Targets (BRIEF section 7): the PostToolUse hook end to end -- ruff's fixes,
ruff's report, the contracts -- under 200 ms median on one file, and
``atom-contracts check FILE`` under 80 ms for the whole process. Measured,
never asserted in a test: these machines are shared and timing is noisy.

The run copies this working tree (tracked and untracked files git does not
ignore) into a temporary directory, so its declared contracts and ruff
configuration are the ones measured, and no file of the checkout is touched.
Each hook run starts from the same edited text: a real module of the engine
with one unused import added, so ruff has a safe fix to apply every time, as
after a typical edit.

ruff is timed on the same file in the same run, invoked exactly as the hook
invokes it, so "the hook costs X over ruff" is read from one table.

    python bench/hook_speed.py [--runs 30] [--file atom/runner/model_runner.py]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from hooks._ruff_process import find_ruff  # noqa: E402  (after the path fix-up above)


def _copy_tree(dest: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=True,
        text=True,
    ).stdout
    for rel in filter(None, listed.split("\0")):
        src = REPO_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _median_ms(
    runs: int, prepare: Callable[[], None], command: list[str], **kw
) -> tuple[float, int]:
    """Median wall time of ``command`` in ms, and its exit status (the same every run)."""
    samples = []
    statuses = set()
    for i in range(runs + 1):
        prepare()
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, **kw)
        elapsed = time.perf_counter() - started
        statuses.add(done.returncode)
        if i:  # the first run warms the page cache and is dropped
            samples.append(elapsed * 1000)
    if len(statuses) != 1:
        raise RuntimeError(f"{command}: exit status varied between runs: {statuses}")
    return statistics.median(samples), statuses.pop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--file", default="atom/runner/model_runner.py")
    args = parser.parse_args()

    bindir = Path(sys.executable).parent
    console = shutil.which("atom-contracts", path=str(bindir)) or shutil.which("atom-contracts")
    if console is None:
        print("atom-contracts is not installed (pip install -e .)", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory(prefix="hook-speed-") as tmp:
        root = Path(tmp).resolve()
        _copy_tree(root)
        target = root / args.file
        edited_text = "import os\n" + target.read_text()
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root)}
        payload = json.dumps(
            {
                "hook_event_name": "PostToolUse",
                "tool_name": "Edit",
                "tool_input": {"file_path": str(target)},
                "cwd": str(root),
            }
        ).encode()

        def restore() -> None:
            target.write_text(edited_text)

        def untouched() -> None:
            pass

        ruff_cmd = find_ruff(env)
        ruff_real = shutil.which("ruff", path=str(bindir))
        ruff_args = ["check", "--fix", "--no-unsafe-fixes", "--no-cache", "--force-exclude"]
        ruff_args += ["--output-format=json", "--", str(target)]
        rows: list[tuple[str, float, int, str]] = []

        def measure(label: str, prepare, command: list[str], target_ms: str = "", **kw) -> None:
            ms, status = _median_ms(args.runs, prepare, command, cwd=root, env=env, **kw)
            rows.append((label, ms, status, target_ms))

        measure(
            "hook end to end (`atom-contracts hook post-tool-use`)",
            restore,
            [console, "hook", "post-tool-use"],
            "< 200",
            input=payload,
        )
        measure(
            "hook end to end (`python -m hooks.post_tool_use`)",
            restore,
            [sys.executable, "-m", "hooks.post_tool_use"],
            "< 200",
            input=payload,
        )
        measure(
            f"ruff as the hook runs it (`{' '.join(ruff_cmd)}`)", restore, [*ruff_cmd, *ruff_args]
        )
        if ruff_real and [ruff_real] != ruff_cmd:
            measure(f"ruff binary itself (`{ruff_real}`)", restore, [ruff_real, *ruff_args])
        restore()
        measure(
            "`atom-contracts check FILE --no-cache`",
            untouched,
            [console, "check", "--no-cache", str(target)],
            "< 80",
        )
        measure(
            "`atom-contracts check FILE` (warm cache)",
            untouched,
            [console, "check", str(target)],
            "< 80",
        )
        measure("python startup (`python -c pass`)", untouched, [sys.executable, "-c", "pass"])

    lines = [
        f"file: {args.file} (+ one unused import), {args.runs} runs each, median wall ms",
        "",
        "| what | median ms | exit | target ms |",
        "| --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {label} | {ms:.1f} | {status} | {target} |" for label, ms, status, target in rows]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
