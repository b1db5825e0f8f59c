"""A keystroke's diagnostics from the language server, against ``ruff server`` on the same session.

Target: a keystroke's diagnostics for a 3,000-line file within 50 ms at p95,
at the server's default settings (its default debounce included). Measured,
never asserted in a test: these machines are shared and timing is noisy.

Each session starts the real server process (``python -m checkers server``)
and speaks LSP to it over stdio, as an editor does: initialize, open a
buffer (``--lines``, 2,000 by default), then type -- one keystroke-sized
incremental ``didChange`` at a time, each waited for until its
``publishDiagnostics`` (for that document version) comes back: a keystroke
followed by a pause, the latency a user sees when they stop typing. The
debounce is the server's default unless ``--debounce`` names others (a
comma-separated list, each run as its own session, alternately; ``default``
sends none, so the server's own applies).

The typing is a statement written into a function body in the middle of the
file, character by character, then erased by backspaces, over and over: most
intermediate buffers do not parse, as while really typing, so the figures
are also given over the keystrokes whose buffer parses (the expensive ones,
where every contract runs).

Two clocks per keystroke, over the same keystrokes:
- *in the server*: from the change reaching the server (before pygls applies
  it to its copy of the buffer) to the diagnostics ready to send, read from
  the server's own ``-v`` log (``pushed ... ms after its change``);
- *round trip*: from the client writing the change to reading the
  diagnostics, JSON-RPC both ways included -- the one figure ``ruff server``
  can be measured by too, so the ratio is read from it.
The first interval lies inside the second (the server stamps after the
change was sent and before the diagnostics are written), so per keystroke
in-server <= round trip; the report says how many keystrokes broke that (a
measurement fault) and the median of the difference (the transport).

ruff runs the same session alternately with ours, in the same run (``ruff
server``, its default rules plus the repository's ``[tool.ruff]``; skipped
with ``--no-peer`` or when ``ruff server`` cannot start). Each server's CPU
time and peak resident memory are read from /proc just before shutdown.

    python bench/server_latency.py [--keystrokes 200] [--rounds 3] [--lines 2000]
        [--debounce default,0,25] [--file PATH] [--as REL] [--root DIR]
        [--no-peer] [--autopair] [--baseline CHECKOUT]

``--table`` prints the table the default debounce was chosen from
(docs/editors.md, *The debounce*): for each of ``--sizes`` (200 and 3,000
lines) and each debounce (0, 5, 10, 25, 50, 100 and 150 ms, each its own
server, alternately, ruff beside them), keystrokes each waited for, then
bursts sent ``--paces`` apart (80, 30 and 10 ms) whatever came back, each
burst's last keystroke waited for and the checks it cost counted; with the
load average before and after and how far a cell moved between rounds::

    python bench/server_latency.py --table [--rounds 2] [--sizes 200,3000]
        [--debounce 0,10] [--paces 80,30,10] [--burst 8] [--bursts 6]

``--file`` is the text typed into (default: whole modules of ``atom/``,
joined until they make ``--lines`` lines); ``--as`` the path it is opened as,
under ``--root`` (default this repository, so its declared contracts govern
it; the file is never written: servers check the buffer).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
TARGET_LINES = 2000
TARGET_MS = 50.0  # p95, on a 3,000-line buffer, at the default settings
STATEMENT = "kv = torch.repeat_interleave(positions, counts, dim=0)"
TIMEOUT_S = 60.0


# -- the buffer and the typing ------------------------------------------------


def default_text(root: Path, target: int = TARGET_LINES) -> str:
    """Whole modules of atom/, in path order, cut to ``target`` lines at a statement's end.

    The last module keeps the top-level statements that fit, so the buffer
    parses; comment lines make up the rest.
    """
    lines: list[str] = ["from __future__ import annotations", ""]
    for path in sorted((root / "atom").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        body = source.splitlines()
        room = target - len(lines)
        if len(body) > room:
            ends = [n.end_lineno for n in ast.parse(source).body if n.end_lineno <= room]
            body = body[: max(ends, default=0)]
        lines += [line for line in body if line.strip() != "from __future__ import annotations"]
        if len(lines) >= target - 1:
            break
        lines.append("")
    lines += ["# (padding to the benchmark's line count)"] * (target - len(lines))
    return "\n".join(lines) + "\n"


def typing_point(text: str) -> tuple[int, str]:
    """(0-based line, indentation) of a function body statement nearest the middle of ``text``."""
    tree = ast.parse(text)
    middle = len(text.splitlines()) // 2
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            distance = abs(first.lineno - middle)
            if best is None or distance < best[0]:
                best = (distance, first.lineno - 1, first.col_offset)
    if best is None:
        raise ValueError("the text has no function to type into")
    return best[1], " " * best[2]


class Typist:
    """Keystroke-sized incremental edits and the buffer after each (the client's mirror).

    ``autopair``: as an editor that closes brackets as they are typed (VS Code, Zed and
    Helix by default): ``(`` inserts ``()``, typing ``)`` over the inserted one only moves
    the cursor (no change is sent), and a backspace between ``(`` and ``)`` deletes both.
    """

    def __init__(self, text: str, *, autopair: bool = False) -> None:
        self.lines = text.splitlines(keepends=True)
        at, indent = typing_point(text)
        # A fresh line above the statement, where the typing happens.
        self.lines.insert(at, indent + "\n")
        self.line = at
        self.prefix = len(indent)
        self.cursor = self.prefix
        self.autopair = autopair

    def text(self) -> str:
        return "".join(self.lines)

    def keystrokes(self, count: int):
        """``count`` changes: type STATEMENT, erase it, again; yields (range, new_text)."""
        # The blank line itself is inserted as the first change.
        yield _range(self.line, 0, 0), self.lines[self.line]
        typed = 0
        typing = True
        sent = 1
        while sent < count:
            line = self.lines[self.line]
            at = self.cursor
            if typing:
                char = STATEMENT[typed]
                typed += 1
                typing = typed < len(STATEMENT)
                if self.autopair and char == ")" and line[at : at + 1] == ")":
                    self.cursor += 1  # typed over the closing bracket: nothing changes
                    continue
                new = "()" if self.autopair and char == "(" else char
                self._splice(at, at, new)
                self.cursor += 1
                yield _range(self.line, at, at), new
            else:
                end = at
                if self.autopair and line[at - 1 : at + 1] == "()":
                    end = at + 1
                self._splice(at - 1, end, "")
                self.cursor -= 1
                typing = self.cursor == self.prefix
                if typing:
                    typed = 0
                yield _range(self.line, at - 1, end), ""
            sent += 1

    def _splice(self, start: int, end: int, new: str) -> None:
        line = self.lines[self.line]
        self.lines[self.line] = line[:start] + new + line[end:]


def _range(line: int, start: int, end: int) -> dict:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": line, "character": end},
    }


# -- a minimal LSP client over stdio -------------------------------------------


class Client:
    """JSON-RPC over a child's stdio, read on a thread; each message stamped on arrival."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.inbox: queue.Queue = queue.Queue()
        self.next_id = 0
        self.errors: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    self.inbox.put((time.perf_counter(), None))
                    return
                if header in (b"\r\n", b"\n"):
                    break
                name, _, value = header.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            body = stream.read(length)
            self.inbox.put((time.perf_counter(), json.loads(body)))

    def send(self, message: dict) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stamp = time.perf_counter()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return stamp

    def notify(self, method: str, params) -> float:
        return self.send({"method": method, "params": params})

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)[1]

    def wait(self, want, timeout: float = TIMEOUT_S) -> tuple[float, dict]:
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError("the server did not answer in time")
            try:
                stamp, message = self.inbox.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError("the server did not answer in time") from None
            if message is None:
                raise RuntimeError("the server exited")
            if "error" in message:
                self.errors.append(message)
            if "method" in message and "id" in message:  # a request to the client
                self.send({"id": message["id"], "result": None})
                continue
            if want(message):
                return stamp, message

    def drain(self, until: float) -> list[tuple[float, dict]]:
        """Every message that arrives before ``until`` (a perf_counter time), stamped."""
        out: list[tuple[float, dict]] = []
        while True:
            remaining = until - time.perf_counter()
            try:
                stamp, message = (
                    self.inbox.get(timeout=remaining) if remaining > 0 else self.inbox.get_nowait()
                )
            except queue.Empty:
                return out
            if message is None:
                raise RuntimeError("the server exited")
            if "error" in message:
                self.errors.append(message)
            if "method" in message and "id" in message:
                self.send({"id": message["id"], "result": None})
                continue
            out.append((stamp, message))

    def usage(self) -> tuple[float, int]:
        """(CPU seconds, peak resident KiB) of the server process so far, from /proc."""
        pid = self.process.pid
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks = os.sysconf("SC_CLK_TCK")
            cpu = (int(fields[11]) + int(fields[12])) / ticks
            status = Path(f"/proc/{pid}/status").read_text()
            peak = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
        except (OSError, AttributeError, IndexError):
            return float("nan"), 0
        return cpu, peak

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except (OSError, TimeoutError, RuntimeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


# -- one session -----------------------------------------------------------------


def typed(text: str, keystrokes: int, *, autopair: bool) -> list[tuple[dict, str, bool]]:
    """The session's keystrokes: (range, new text, whether the buffer after it parses)."""
    typist = Typist(text, autopair=autopair)
    out = []
    for where, new in typist.keystrokes(keystrokes):
        try:
            ast.parse(typist.text())
            parses = True
        except SyntaxError:
            parses = False
        out.append((where, new, parses))
    return out


def session(
    name: str,
    argv: list[str],
    root: Path,
    rel: str,
    text: str,
    keys: list[tuple[dict, str, bool]],
    options,
    *,
    pace_ms: float = 0.0,
    bursts: tuple[tuple[float, list[list[tuple[dict, str, bool]]]], ...] = (),
) -> dict:
    """One server, one buffer, ``keys`` typed.

    ``pace_ms`` 0: each keystroke waited for until its own diagnostics come
    back (a keystroke, then a pause). Otherwise a keystroke every ``pace_ms``
    whatever came back: each keystroke's latency is then the wait for the
    first diagnostics of its version or a later one, and ``pushes`` says how
    many checks the debounce let through.

    ``bursts``, typed after ``keys`` (which go on from them): (pace ms, the
    bursts) each, a burst's keystrokes sent ``pace_ms`` apart whatever came
    back, then its last keystroke waited for: ``burst_waits`` holds, per
    pace, the wait from each burst's last change to its diagnostics, and
    ``burst_checks`` the diagnostics pushed for that pace's bursts in all.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if name == "baseline":
        env["PYTHONPATH"] = str(root)  # that checkout's checker, not the installed one
    client = Client(argv, root, env)
    uri = (root / rel).as_uri()
    pushes = 0
    try:
        client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                "capabilities": {
                    "general": {"positionEncodings": ["utf-16"]},
                    "textDocument": {
                        "synchronization": {"didSave": True},
                        "publishDiagnostics": {"versionSupport": True},
                    },
                },
                "initializationOptions": options,
            },
        )
        client.notify("initialized", {})
        started = client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}},
        )
        stamp, message = client.wait(_diagnostics_for(uri, 1))
        opened_ms = (stamp - started) * 1000
        round_trips: list[float] = []
        sent_at: list[float] = []
        arrived: list[tuple[float, int]] = []  # (stamp, version) of each push, paced
        begin = time.perf_counter()
        for index, (where, new, _parses) in enumerate(keys):
            version = index + 2
            if pace_ms:
                for stamp, got in client.drain(begin + index * pace_ms / 1000):
                    if _is_push(got, uri):
                        arrived.append((stamp, got["params"].get("version") or 0))
                        message = got
            sent = client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{"range": where, "text": new}],
                },
            )
            sent_at.append(sent)
            if not pace_ms:
                stamp, message = client.wait(_diagnostics_for(uri, version))
                round_trips.append((stamp - sent) * 1000)
        if pace_ms:
            last = len(keys) + 1
            while not arrived or arrived[-1][1] < last:
                stamp, got = client.wait(lambda m: _is_push(m, uri))
                arrived.append((stamp, got["params"].get("version") or 0))
                message = got
            pushes = len(arrived)
            for index, sent in enumerate(sent_at):
                version = index + 2
                stamp = next(s for s, v in arrived if v >= version and s >= sent)
                round_trips.append((stamp - sent) * 1000)
        burst_waits: dict[float, list[float]] = {}
        burst_checks: dict[float, int] = {}
        version = len(keys) + 1
        for pace, groups in bursts:
            waits = burst_waits.setdefault(pace, [])
            checks = 0
            for group in groups:
                first = time.perf_counter()
                for index, (where, new, _parses) in enumerate(group):
                    for _stamp, got in client.drain(first + index * pace / 1000):
                        checks += _is_push(got, uri)
                    version += 1
                    sent = client.notify(
                        "textDocument/didChange",
                        {
                            "textDocument": {"uri": uri, "version": version},
                            "contentChanges": [{"range": where, "text": new}],
                        },
                    )
                while True:
                    stamp, message = client.wait(lambda m: _is_push(m, uri))
                    checks += 1
                    if message["params"].get("version") in (version, None):
                        break
                waits.append((stamp - sent) * 1000)
            burst_checks[pace] = burst_checks.get(pace, 0) + checks
        cpu, peak = client.usage()
        findings = len(message["params"]["diagnostics"])
    finally:
        client.close()
    return {
        "name": name,
        "open_ms": opened_ms,
        "round_trip": round_trips,
        "parses": [parses for _w, _n, parses in keys],
        "pushes": pushes,
        "burst_waits": burst_waits,
        "burst_checks": burst_checks,
        "cpu_s": cpu,
        "peak_kib": peak,
        "errors": client.errors,
        "last_findings": findings,
    }


def _is_push(message: dict, uri: str) -> bool:
    return (
        message.get("method") == "textDocument/publishDiagnostics"
        and message["params"]["uri"] == uri
    )


def _diagnostics_for(uri: str, version: int):
    def want(message: dict) -> bool:
        if message.get("method") != "textDocument/publishDiagnostics":
            return False
        params = message["params"]
        # A server that leaves the version out: the first push after the change is its answer.
        return params["uri"] == uri and params.get("version", version) in (version, None)

    return want


_PUSHED = re.compile(r"pushed (\S+) v(\d+): \d+ diagnostics ([\d.]+) ms after its change")


def in_server(log_path: Path, uri: str) -> dict[int, float]:
    """version -> ms from the change to its diagnostics, from our server's -v log."""
    found: dict[int, float] = {}
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        m = _PUSHED.search(line)
        if m and m.group(1) == uri:
            found[int(m.group(2))] = float(m.group(3))
    return found


def error_lines(log_path: Path) -> list[str]:
    return [
        line
        for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines()
        if " ERROR " in line
    ]


# -- reporting -------------------------------------------------------------------


def percentile(ordered: list[float], fraction: float) -> float:
    """The sample at ``fraction`` of the way through ``ordered`` (nearest rank)."""
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def quantiles(samples: list[float]) -> tuple[float, float, float]:
    """(median, p90, p95) of ``samples``."""
    if not samples:
        return float("nan"), float("nan"), float("nan")
    ordered = sorted(samples)
    return statistics.median(ordered), percentile(ordered, 0.9), percentile(ordered, 0.95)


def row(label: str, samples: list[float]) -> str:
    median, p90, p95 = quantiles(samples)
    return (
        f"  {label:<44} median {median:7.2f} ms   p90 {p90:7.2f} ms   p95 {p95:7.2f} ms"
        f"   (n={len(samples)})"
    )


def ruff_server_argv() -> list[str] | None:
    ruff = shutil.which("ruff")
    if ruff is None:
        return None
    try:
        done = subprocess.run(
            [ruff, "server", "--help"], capture_output=True, timeout=20, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [ruff, "server"] if done.returncode == 0 else None


def parse_floor(
    text: str, keystrokes: int, *, autopair: bool = False
) -> tuple[list[float], list[float]]:
    """ms of one ``ast.parse`` of each keystroke's whole buffer: (those that parse, those that do not).

    What the server would pay without checkers/incremental.py: it splices a
    buffer that parses, and parses one that does not from the statement before
    the edit on (``tail``), so neither is bounded by these any more.
    """
    typist = Typist(text, autopair=autopair)
    parsed, failed = [], []
    for _ in typist.keystrokes(keystrokes):
        buffer = typist.text()
        started = time.perf_counter()
        try:
            ast.parse(buffer)
            parsed.append((time.perf_counter() - started) * 1000)
        except SyntaxError:
            failed.append((time.perf_counter() - started) * 1000)
    return parsed, failed


def debounces(value: str) -> list[int | None]:
    """``--debounce``: comma-separated milliseconds, ``default`` for the server's own (None)."""
    out: list[int | None] = []
    for part in value.split(","):
        part = part.strip()
        if part == "default":
            out.append(None)
            continue
        try:
            ms = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"--debounce takes milliseconds or `default`, comma-separated, not {part!r}"
            ) from None
        if not 0 <= ms <= 10_000:
            raise argparse.ArgumentTypeError(f"--debounce {ms}: must be 0-10000 ms")
        out.append(ms)
    return out


def _numbers(flag: str, kind: type, what: str, bad):
    """An argparse type for ``flag``: comma-separated ``kind`` values, each refused by name
    where ``bad(value)`` says why."""

    def parse(value: str) -> tuple:
        try:
            numbers = tuple(kind(part) for part in value.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{flag} takes {what}, comma-separated, not {value!r}"
            ) from None
        for number in numbers:
            why = bad(number)
            if why:
                raise argparse.ArgumentTypeError(f"{flag} {number:g}: {why}")
        return numbers

    return parse


_sizes = _numbers("--sizes", int, "line counts", lambda n: n < 100 and "at least 100 lines")
_paces = _numbers(
    "--paces", float, "milliseconds", lambda ms: not 1 <= ms <= 10_000 and "must be 1-10000 ms"
)


def label(debounce: int | None) -> str:
    return "the default debounce" if debounce is None else f"debounce {debounce} ms"


def options_for(debounce: int | None) -> dict:
    options: dict = {"diagnosticMode": "push"}
    if debounce is not None:
        options["debounceMs"] = debounce
    return options


class Ours:
    """One debounce's keystrokes over every round: the two clocks, over the same keystrokes."""

    def __init__(self) -> None:
        self.inside: list[float] = []
        self.inside_parsed: list[float] = []
        self.round: list[float] = []  # the round trips of the keystrokes in ``inside``
        self.round_parsed: list[float] = []
        self.unlogged = 0  # keystrokes with no log line (a measurement fault)
        self.usage: list[tuple[float, int]] = []
        self.opens: list[float] = []
        self.pushes = 0
        self.keystrokes = 0
        self.paced: list[float] = []  # paced: each keystroke's wait for diagnostics of it or later

    def add(self, result: dict, inside: dict[int, float]) -> None:
        self.usage.append((result["cpu_s"], result["peak_kib"]))
        self.opens.append(result["open_ms"])
        if result["pushes"]:
            self.pushes += result["pushes"]
            self.keystrokes += len(result["round_trip"])
            self.paced += result["round_trip"]
            return
        for version, (rt, parsed) in enumerate(
            zip(result["round_trip"], result["parses"], strict=True), start=2
        ):
            if version not in inside:
                self.unlogged += 1
                continue
            self.inside.append(inside[version])
            self.round.append(rt)
            if parsed:
                self.inside_parsed.append(inside[version])
                self.round_parsed.append(rt)

    def report(self, name: str) -> None:
        print(f"atom-contracts server, {name}:")
        cpu = statistics.median(c for c, _ in self.usage)
        peak = max(m for _, m in self.usage) / 1024
        if self.keystrokes:
            print(row("keystroke -> diagnostics of it or later", self.paced))
            print(
                f"  checks pushed: {self.pushes} for {self.keystrokes} keystrokes "
                f"({self.pushes / self.keystrokes:.2f} a keystroke)"
            )
            print(f"  CPU time per session {cpu:.2f} s, peak resident {peak:.0f} MiB")
            return
        print(row("in the server, change -> diagnostics ready", self.inside))
        print(row("  of which the buffer parses", self.inside_parsed))
        print(row("round trip, change -> diagnostics read", self.round))
        print(row("  of which the buffer parses", self.round_parsed))
        print(row("open -> first diagnostics", self.opens))
        gaps = [rt - inside for inside, rt in zip(self.inside, self.round, strict=True)]
        broken = sum(gap < 0 for gap in gaps)
        print(
            f"  round trip - in the server, per keystroke: median {quantiles(gaps)[0]:.2f} ms, "
            f"least {min(gaps, default=float('nan')):.2f} ms; in the server above its round "
            f"trip: {broken} of {len(gaps)}"
            + (f"; no log line: {self.unlogged}" if self.unlogged else "")
        )
        cpu = statistics.median(c for c, _ in self.usage)
        print(
            f"  CPU time per session {cpu:.2f} s, peak resident {max(m for _, m in self.usage) / 1024:.0f} MiB"
        )


# -- the debounce table -------------------------------------------------------------

TABLE_SIZES = (200, 3000)
TABLE_DEBOUNCES = (0, 5, 10, 25, 50, 100, 150)
# ms between a burst's keystrokes: a fast typist's word; a held key's repeat (30 a second);
# changes faster than any check (a macro, an editor's multi-cursor or completion edits).
TABLE_PACES = (80.0, 30.0, 10.0)


def server_default_debounce_ms() -> int:
    from hooks.lsp.server import DEBOUNCE_S

    return round(DEBOUNCE_S * 1000)


def table(args, peer: list[str] | None) -> int:
    """Every size x debounce: one keystroke waited for, and bursts at each pace; one table."""
    default = server_default_debounce_ms()
    sweep = list(dict.fromkeys(d for d in args.debounce if d is not None)) or list(TABLE_DEBOUNCES)
    if default not in sweep:
        sweep.append(default)
    sweep.sort()
    waited = args.keystrokes or 80
    per_burst, count = args.burst, args.bursts
    paces = args.paces
    root = args.root.resolve()
    load_before = os.getloadavg()
    print(
        f"the debounce table: per session {waited} keystrokes each waited for, then "
        f"{count} bursts of {per_burst} keystrokes at each of "
        f"{', '.join(f'{p:g}' for p in paces)} ms apart; {args.rounds} rounds, every "
        f"debounce alternately; ruff server: {'the same keystrokes' if peer else 'none'}; "
        f"the server's default debounce: {default} ms (*)"
    )
    # (lines, debounce) -> per round: waited round trips, {pace: (waits, checks)}
    cells: dict[tuple[int, int | str], list[tuple[list[float], dict]]] = {}
    failures: list[str] = []
    opens: dict[int, list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(args.rounds):
            for lines in args.sizes:
                text = default_text(REPO_ROOT, lines)
                keys = typed(text, waited + len(paces) * count * per_burst, autopair=args.autopair)
                head, rest = keys[:waited], keys[waited:]
                bursts = []
                for p, pace in enumerate(paces):
                    mine = rest[p * count * per_burst : (p + 1) * count * per_burst]
                    groups = [mine[b * per_burst : (b + 1) * per_burst] for b in range(count)]
                    bursts.append((pace, groups))
                for debounce in sweep:
                    log_path = Path(scratch) / f"server-{index}-{lines}-{debounce}.log"
                    result = session(
                        "ours",
                        [
                            sys.executable,
                            "-m",
                            "checkers",
                            "server",
                            "-v",
                            "--log-file",
                            str(log_path),
                        ],
                        root,
                        args.rel,
                        text,
                        head,
                        options_for(None if debounce == default else debounce),
                        bursts=tuple(bursts),
                    )
                    failures += [json.dumps(e) for e in result["errors"]] + error_lines(log_path)
                    per_pace = {
                        pace: (result["burst_waits"][pace], result["burst_checks"][pace])
                        for pace in paces
                    }
                    cells.setdefault((lines, debounce), []).append((result["round_trip"], per_pace))
                    opens.setdefault(lines, []).append(result["open_ms"])
                if peer:
                    their = session(
                        "ruff", peer, root, args.rel, text, head, {}, bursts=tuple(bursts)
                    )
                    per_pace = {
                        pace: (their["burst_waits"][pace], their["burst_checks"][pace])
                        for pace in paces
                    }
                    cells.setdefault((lines, "ruff"), []).append((their["round_trip"], per_pace))
    load_after = os.getloadavg()
    print(
        f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' '.join(f'{x:.2f}' for x in load_after)} after, on {os.cpu_count()} CPUs"
    )
    head_line = f"{'':>14}  {'one keystroke, waited for':<25}"
    sub_line = f"{'lines':>5} {'debounce':>8}  {'median':>7} {'p95':>7}  {'p95 by round':<9}"
    for pace in paces:
        head_line += f"   {f'a burst {pace:g} ms apart: last -> diagnostics':<41}"
        sub_line += f"   {'median':>7} {'p95':>7} {'checks a burst':>15}      "
    print(head_line)
    print(sub_line)
    spreads: list[tuple[float, tuple]] = []
    for (lines, debounce), rounds in cells.items():
        waited_all = [x for rt, _ in rounds for x in rt]
        by_round = [quantiles(rt)[2] for rt, _ in rounds]
        median, _p90, p95 = quantiles(waited_all)
        if len(by_round) > 1:
            spreads.append(((max(by_round) - min(by_round)) / p95, (lines, debounce)))
        name = (
            "ruff" if debounce == "ruff" else f"{debounce} ms{'*' if debounce == default else ' '}"
        )
        out = (
            f"{lines:>5} {name:>9} {median:>7.1f} {p95:>7.1f}  "
            f"{'-'.join(f'{x:.0f}' for x in (min(by_round), max(by_round))):<9}"
        )
        for pace in paces:
            waits = [w for _, per in rounds for w in per[pace][0]]
            checks = sum(per[pace][1] for _, per in rounds)
            bursts_run = len(waits)
            b_median, _b90, b_p95 = quantiles(waits)
            out += (
                f"   {b_median:>7.1f} {b_p95:>7.1f} "
                f"{checks / bursts_run:>8.1f} of {per_burst:<2}     "
            )
        print(out)
    for lines in args.sizes:
        print(
            f"open -> first diagnostics, {lines} lines: median {quantiles(opens[lines])[0]:.1f} ms"
        )
    if spreads:
        spreads.sort()
        worst, where = spreads[-1]
        print(
            f"noise: a cell's p95 moved between its rounds by {spreads[len(spreads) // 2][0]:.0%} "
            f"of its p95 (median cell), by {worst:.0%} at worst ({where[0]} lines, "
            f"{where[1]}{'' if where[1] == 'ruff' else ' ms'})"
        )
    if 3000 in args.sizes:
        target = quantiles([x for rt, _ in cells[(3000, default)] for x in rt])[2]
        verdict = "met" if target <= TARGET_MS else "MISSED"
        print(
            f"target: p95 per keystroke, 3,000 lines, the default debounce ({default} ms): "
            f"{target:.1f} ms {'<=' if target <= TARGET_MS else '>'} {TARGET_MS:.0f} ms: {verdict}"
        )
    if failures:
        print(f"errors from the server ({len(failures)}):")
        for line in failures[:10]:
            print(f"  {line}")
        return 1
    print("errors from the server: none (no error response, no ERROR line in its log)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--keystrokes",
        type=int,
        help="changes per session (200; with --table, those waited for one by one: 80)",
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="sessions per server, alternating (3)"
    )
    parser.add_argument(
        "--lines",
        type=int,
        default=TARGET_LINES,
        help=f"lines of the default buffer (atom/ modules; {TARGET_LINES})",
    )
    parser.add_argument(
        "--debounce",
        type=debounces,
        default=[None],
        help="milliseconds, comma-separated, each a session of its own per round; `default` "
        "sends none, so the server's own applies (default: `default`)",
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.0,
        help="ms between keystrokes, sent whatever came back (default 0: each keystroke waits "
        "for its own diagnostics); the report then counts the checks the debounce let through",
    )
    parser.add_argument("--file", type=Path, help="the text to type into (default: atom/ modules)")
    parser.add_argument(
        "--as",
        dest="rel",
        default="atom/models/_typed_in_the_editor.py",
        help="the path the buffer is opened as, relative to --root",
    )
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the workspace folder")
    parser.add_argument("--no-peer", action="store_true", help="do not run ruff server")
    parser.add_argument(
        "--autopair",
        action="store_true",
        help="type as an editor that closes brackets itself (VS Code, Zed, Helix by default)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of this repository (e.g. `git worktree add /tmp/base REV`): its "
        "server runs the same session alternately (at the first --debounce), as the before "
        "of a change",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="the debounce table: every --sizes x --debounce (default 0,25,50,100,150 and the "
        "server's own; 0,5,10,25,50,100,150), each keystroke waited for and bursts at each of --paces, one table",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        default=TABLE_SIZES,
        help="with --table: buffer lines, comma-separated (200,3000)",
    )
    parser.add_argument(
        "--paces",
        type=_paces,
        default=TABLE_PACES,
        help="with --table: ms between a burst's keystrokes, comma-separated (80,30,10: a fast "
        "typist's word, a held key's repeat, changes faster than any check)",
    )
    parser.add_argument("--burst", type=int, default=8, help="with --table: keystrokes a burst (8)")
    parser.add_argument(
        "--bursts", type=int, default=6, help="with --table: bursts per pace a session (6)"
    )
    args = parser.parse_args(argv)
    if args.table:
        if args.keystrokes is not None and args.keystrokes < 2:
            parser.error(f"--keystrokes must be at least 2, not {args.keystrokes}")
        if args.rounds < 1:
            parser.error(f"--rounds must be at least 1, not {args.rounds}")
        if args.burst < 1 or args.bursts < 1:
            parser.error(
                f"--burst and --bursts must be at least 1, not {args.burst}, {args.bursts}"
            )
        if args.file or args.pace or args.baseline:
            parser.error(
                "--table types into atom/ modules of --sizes lines: no --file, --pace, --baseline"
            )
        return table(args, None if args.no_peer else ruff_server_argv())
    if args.keystrokes is None:
        args.keystrokes = 200
    if args.keystrokes < 2:
        parser.error(f"--keystrokes must be at least 2, not {args.keystrokes}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.lines < 100:
        parser.error(f"--lines must be at least 100, not {args.lines}")
    if not 0 <= args.pace <= 10_000:
        parser.error(f"--pace must be 0-10000 ms, not {args.pace}")
    root = args.root.resolve()
    text = (
        args.file.read_text(encoding="utf-8") if args.file else default_text(REPO_ROOT, args.lines)
    )
    uri = (root / args.rel).as_uri()
    peer = None if args.no_peer else ruff_server_argv()
    lines = len(text.splitlines())
    print(
        f"buffer: {lines} lines ({args.file or 'atom/ modules'}) opened as "
        f"{args.rel} under {root}; {args.keystrokes} keystrokes x {args.rounds} rounds; "
        f"{', '.join(label(d) for d in args.debounce)}; "
        f"peer: {'ruff server' if peer else 'none'}; "
        f"{'brackets closed by the editor' if args.autopair else 'every character typed'}; "
        + (
            f"a keystroke every {args.pace:g} ms"
            if args.pace
            else "each keystroke waited for until its diagnostics"
        )
    )
    keys = typed(text, args.keystrokes, autopair=args.autopair)
    ours = {d: Ours() for d in args.debounce}
    theirs_round, theirs_parsed = [], []
    usage = {"ruff": [], "baseline": []}
    baseline_round: list[float] = []
    baseline_parsed: list[float] = []
    ruff_opens: list[float] = []
    failures: list[str] = []
    floor_parsed: list[float] = []
    floor_failed: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(args.rounds):
            parsed, failed = parse_floor(text, args.keystrokes, autopair=args.autopair)
            floor_parsed += parsed
            floor_failed += failed
            for debounce in args.debounce:
                log_path = Path(scratch) / f"server-{index}-{debounce}.log"
                result = session(
                    "ours",
                    [sys.executable, "-m", "checkers", "server", "-v", "--log-file", str(log_path)],
                    root,
                    args.rel,
                    text,
                    keys,
                    options_for(debounce),
                    pace_ms=args.pace,
                )
                failures += [json.dumps(e) for e in result["errors"]] + error_lines(log_path)
                ours[debounce].add(result, in_server(log_path, uri))
            if args.baseline:
                base = session(
                    "baseline",
                    [sys.executable, "-m", "checkers", "server"],
                    args.baseline.resolve(),
                    args.rel,
                    text,
                    keys,
                    options_for(args.debounce[0]),
                    pace_ms=args.pace,
                )
                failures += [json.dumps(e) for e in base["errors"]]
                baseline_round += base["round_trip"]
                usage["baseline"].append((base["cpu_s"], base["peak_kib"]))
                baseline_parsed += [
                    rt for rt, ok in zip(base["round_trip"], base["parses"], strict=True) if ok
                ]
            if peer:
                their = session("ruff", peer, root, args.rel, text, keys, {}, pace_ms=args.pace)
                theirs_round += their["round_trip"]
                theirs_parsed += [
                    rt
                    for rt, parsed in zip(their["round_trip"], their["parses"], strict=True)
                    if parsed
                ]
                usage["ruff"].append((their["cpu_s"], their["peak_kib"]))
                ruff_opens.append(their["open_ms"])
    print(f"keystrokes whose buffer parses: {sum(p for _w, _n, p in keys) / len(keys):.0%}")
    for debounce, measured in ours.items():
        measured.report(label(debounce))
    first = ours[args.debounce[0]]
    if args.baseline:
        print(f"baseline server ({args.baseline}), {label(args.debounce[0])}:")
        print(row("round trip, change -> diagnostics read", baseline_round))
        print(row("  of which the buffer parses", baseline_parsed))
        print(
            f"  this / baseline, round trip median: "
            f"{quantiles(first.round)[0] / quantiles(baseline_round)[0]:.2f}x "
            f"(parses: {quantiles(first.round_parsed)[0] / quantiles(baseline_parsed)[0]:.2f}x)"
        )
        cpu_this = statistics.median(c for c, _ in first.usage)
        cpu_base = statistics.median(c for c, _ in usage["baseline"])
        print(
            f"  this / baseline, CPU time per session: {cpu_this / cpu_base:.2f}x "
            f"({cpu_this:.2f} s / {cpu_base:.2f} s)"
        )
    print("the parse floor (one ast.parse of the whole buffer, in this process, alternately):")
    print(row("buffers that parse", floor_parsed))
    print(row("buffers that do not", floor_failed))
    if peer:
        print("ruff server:")
        print(row("round trip, change -> diagnostics read", theirs_round))
        print(row("  of which the buffer parses", theirs_parsed))
        print(row("open -> first diagnostics", ruff_opens))
        ours_med, ruff_med = quantiles(first.round or first.paced)[0], quantiles(theirs_round)[0]
        ours_pmed, ruff_pmed = quantiles(first.round_parsed)[0], quantiles(theirs_parsed)[0]
        cpu_ours = statistics.median(c for c, _ in first.usage)
        cpu_ruff = statistics.median(c for c, _ in usage["ruff"])
        mem_ours = max(m for _, m in first.usage)
        mem_ruff = max(m for _, m in usage["ruff"])
        print(f"ours ({label(args.debounce[0])}) / ruff:")
        print(f"  round trip median           {ours_med / ruff_med:6.2f}x")
        if not args.pace:
            print(f"  round trip median, parses   {ours_pmed / ruff_pmed:6.2f}x")
        print(
            f"  CPU time per session        {cpu_ours / cpu_ruff:6.2f}x "
            f"({cpu_ours:.2f} s / {cpu_ruff:.2f} s)"
        )
        print(
            f"  peak resident memory        {mem_ours / mem_ruff:6.2f}x "
            f"({mem_ours / 1024:.0f} MiB / {mem_ruff / 1024:.0f} MiB)"
        )
    if None in ours and not args.pace:
        p95 = quantiles(ours[None].round)[2]
        verdict = "met" if p95 <= TARGET_MS else "MISSED"
        print(
            f"target: p95 round trip at the default settings, {lines} lines: {p95:.2f} ms "
            f"{'<=' if p95 <= TARGET_MS else '>'} {TARGET_MS:.0f} ms: {verdict}"
            + ("" if lines >= 3000 else " (the target is for a 3,000-line buffer: --lines 3000)")
        )
    if failures:
        print(f"errors from the server ({len(failures)}):")
        for line in failures[:10]:
            print(f"  {line}")
        return 1
    print("errors from the server: none (no error response, no ERROR line in its log)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
