"""One very large file: ``--fix`` with thousands of fixes, and the language server's check.

    python bench/large_file.py [--part fix|server|both] [--rounds 3] [--lines 100000]

Targets: 12,500 fixes in one file under 10 s; a 100,000-line buffer's
diagnostics from the language server under 1 s, and what the buffer held
given back when it is closed. Measured, never asserted in a test: these
machines are shared.

``fix``: a module of N functions, each with one assert on its parameters
(``assert x > y, '...'``: input-assert's unsafe fix rewrites it to an ``if``
raising ValueError), N = 1,250 / 2,500 / 5,000 / 12,500 (4 lines a function:
12,500 fixes in a 50,000-line file); ``check --fix --unsafe-fixes --no-cache``
on a fresh copy each round, wall and CPU (``os.wait4``), with the plain check of
the largest file beside it. No peer offers this fix.

``server``: vLLM 0.33.0's modules (``bench/cold_path.py``'s tree), joined in
path order (less their future imports and file-wide ``# ruff: noqa`` lines)
until the buffer holds ``--lines`` lines, opened as
``pkg/big.py`` of a scratch project declaring input-assert and
required-keyword (ruff.toml: S101, TID251 for ``ruff server``). Each server
gets the buffer as one full-text ``didChange`` after a one-line ``didOpen``:
*in the server* is ours from its ``-v`` log (change -> diagnostics written),
*round trip* the client's clock, the one figure ruff's server is measured by
too. Resident memory (VmRSS, /proc) before the open, after the diagnostics
and after ``didClose`` (its empty diagnostics read back); the servers
alternate, ``--rounds`` sessions each.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import cold_path  # noqa: E402  (the vLLM tree, its declaration, ruff.toml)
from server_latency import Client, in_server, ruff_server_argv  # noqa: E402

FIX_COUNTS = (1250, 2500, 5000, 12500)


def fix_module(n: int) -> str:
    return "import os\n\n" + "".join(
        f"def f{i}(x, y):\n    assert x > y, 'x must exceed y'\n    return x - y\n\n"
        for i in range(n)
    )


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {code}: {err[-1000:]}")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, err


def bench_fix(rounds: int) -> None:
    print("== --fix: N fixes in one file (one assert a function, 4 lines each)")
    print(f"{'fixes':>7} {'lines':>7} | wall s  CPU s  (median of {rounds})")
    with tempfile.TemporaryDirectory(prefix="large-fix-") as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(
            '[tool.atom-contracts]\n[[tool.atom-contracts.contracts]]\nid = "a"\n'
            'kind = "input-assert"\n'
        )
        check = [sys.executable, "-m", "checkers", "check", "--no-cache", "-q"]
        for n in FIX_COUNTS:
            text = fix_module(n)
            walls, cpus = [], []
            for _ in range(rounds):
                (root / "m.py").write_text(text)
                wall, cpu, err = timed([*check, "--fix", "--unsafe-fixes", "m.py"], root)
                walls.append(wall)
                cpus.append(cpu)
            left = (root / "m.py").read_text().count("assert")
            if left:
                raise SystemExit(f"{left} asserts left unfixed; the run said: {err[-2000:]}")
            print(
                f"{n:7d} {text.count(chr(10)):7d} | {statistics.median(walls):6.2f} "
                f"{statistics.median(cpus):6.2f}"
            )
        (root / "m.py").write_text(fix_module(FIX_COUNTS[-1]))
        wall, cpu, _ = timed([*check, "--exit-zero", "m.py"], root)
        print(
            f"  plain check of the {FIX_COUNTS[-1]:,}-assert file: {wall:.2f} s wall, {cpu:.2f} s CPU"
        )
        target = "met" if statistics.median(walls) < 10 else "MISSED"
        print(f"  {FIX_COUNTS[-1]:,} fixes under 10 s: {target} ({statistics.median(walls):.2f} s)")


def big_buffer(lines: int) -> str:
    found = cold_path.vllm_tree()
    if isinstance(found, str):
        raise SystemExit(f"vLLM's tree: {found}")
    tree, excluded = found
    import ast

    parts, count = [], 0
    for rel in cold_path.python_files(tree, excluded):
        text = (tree / rel).read_text(encoding="utf-8")
        # A future import is only legal at a module's top, and a file-wide `# ruff: noqa`
        # (some modules carry one) would silence ruff on the whole joined buffer.
        text = "\n".join(
            line
            for line in text.splitlines()
            if not line.startswith("from __future__") and "ruff: noqa" not in line
        )
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        parts.append(text + "\n")
        count += text.count("\n") + 1
        if count >= lines:
            break
    return "".join(parts)


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def session(name: str, argv: list[str], root: Path, text: str, log: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    client = Client(argv, root, env)
    uri = (root / "pkg" / "big.py").as_uri()
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
                "initializationOptions": {"debounceMs": 0},
            },
        )
        client.notify("initialized", {})

        def pushed(version):
            def want(m):
                p = m.get("params") or {}
                return (
                    m.get("method") == "textDocument/publishDiagnostics"
                    and p.get("uri") == uri
                    and p.get("version", version) in (version, None)
                )

            return want

        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 1\n"}},
        )
        client.wait(pushed(1))
        time.sleep(0.5)
        before = vm_rss_mb(client.process.pid)
        sent = client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]},
        )
        stamp, message = client.wait(pushed(2), timeout=300)
        round_trip = stamp - sent
        held = vm_rss_mb(client.process.pid)
        findings = len(message["params"]["diagnostics"])
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        client.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and not m["params"]["diagnostics"]
            ),
            timeout=60,
        )
        time.sleep(0.5)
        closed = vm_rss_mb(client.process.pid)
        cpu, _ = client.usage()
    finally:
        client.close()
    out = {
        "round_trip": round_trip,
        "before": before,
        "held": held,
        "closed": closed,
        "findings": findings,
        "cpu": cpu,
    }
    if log is not None:
        out["in_server"] = in_server(log, uri).get(2, float("nan")) / 1000
    return out


def bench_server(rounds: int, lines: int) -> None:
    text = big_buffer(lines)
    n = text.count("\n")
    print(
        f"\n== the language server: a {n:,}-line buffer ({len(text) / 1e6:.1f} MB) of vLLM's modules"
    )
    peer = ruff_server_argv()
    with tempfile.TemporaryDirectory(prefix="large-server-") as tmp:
        root = Path(tmp)
        (root / "pkg").mkdir()
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pyproject.toml").write_text(cold_path.VLLM_CONTRACTS.format(src='"."'))
        (root / "ruff.toml").write_text(
            cold_path.RUFF_TOML + '\n[lint]\nselect = ["S101", "TID251"]\n'
        )
        ours: list[dict] = []
        theirs: list[dict] = []
        for index in range(rounds):
            log = root / f"server-{index}.log"
            argv = [sys.executable, "-m", "checkers", "server", "-v", "--log-file", str(log)]
            pair = [("ours", argv, log), ("ruff", peer, None)]
            for who, cmd, log_path in pair if index % 2 == 0 else reversed(pair):
                if cmd is None:
                    continue
                result = session(who, cmd, root, text, log_path)
                (ours if who == "ours" else theirs).append(result)

        def med(runs, key):
            return statistics.median(r[key] for r in runs)

        print(f"atom-contracts server ({len(ours)} sessions, {ours[0]['findings']} diagnostics):")
        print(f"  in the server, change -> diagnostics  {med(ours, 'in_server'):6.2f} s")
        print(f"  round trip, change -> diagnostics     {med(ours, 'round_trip'):6.2f} s")
        print(
            f"  resident memory: before {med(ours, 'before'):.0f} MB, with the buffer "
            f"{med(ours, 'held'):.0f} MB, after its close {med(ours, 'closed'):.0f} MB"
        )
        print(f"  CPU per session {med(ours, 'cpu'):.2f} s")
        if theirs:
            print(f"ruff server ({len(theirs)} sessions, {theirs[0]['findings']} diagnostics):")
            print(f"  round trip, change -> diagnostics     {med(theirs, 'round_trip'):6.2f} s")
            print(
                f"  resident memory: before {med(theirs, 'before'):.0f} MB, with the buffer "
                f"{med(theirs, 'held'):.0f} MB, after its close {med(theirs, 'closed'):.0f} MB"
            )
            print(f"  CPU per session {med(theirs, 'cpu'):.2f} s")
            print(
                f"ours / ruff: round trip {med(ours, 'round_trip') / med(theirs, 'round_trip'):.2f}x"
            )
        target = "met" if med(ours, "in_server") < 1.0 else "MISSED"
        print(f"target: under 1 s in the server ({med(ours, 'in_server'):.2f} s): {target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=("fix", "server", "both"), default="both")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args(argv)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, Python {sys.version.split()[0]}, "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    if args.part in ("fix", "both"):
        bench_fix(args.rounds)
    if args.part in ("server", "both"):
        if shutil.which("ruff") is None:
            print("(ruff is not on PATH: ruff server is not run)")
        bench_server(args.rounds, args.lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
