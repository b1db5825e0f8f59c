"""ruff, run on the one edited file: safe fixes applied, what survives read back.

ruff is found as ``ruff`` on PATH (the one the user runs by hand), else
``python -m ruff`` from the interpreter running the hook (the ruff installed
beside atom-contracts). ``ATOM_CONTRACTS_RUFF`` names an executable to use
instead, for a repository that pins ruff somewhere else.

One run, ``ruff check --fix``, does the work of "fix, then check again": ruff
applies fixes until the file stops changing and then reports the diagnostics
of the final pass, positions and all, against the fixed text. A second run
would print the same list and cost another process start on every edit; the
test suite checks that the two agree.

What the first version of this hook got wrong (ROCm/ATOM's KV-pool refactor
records it, pull request #2147) was
not the fixing but throwing the report away: rules ``--fix`` cannot fix
(RUF012 only advises) vanished from the agent's view and reappeared as red CI
once the edit landed. So the output is read as JSON, which also tells a
finding (exit 1, a JSON list) from a ruff that could not run (exit 1 with
"No module named ruff", exit 2 with a config error, no JSON either way).

``--no-unsafe-fixes`` because a project's ``unsafe-fixes = true`` is a
choice for a person reviewing a diff, not for a rewrite nobody looks at.
``--no-cache`` because the edited file has just changed, so a cache entry for
it is worthless, and writing ``.ruff_cache`` would touch files the agent did
not edit. ``--force-exclude`` so the project's own ``exclude`` holds for a
path named explicitly. ``--`` before the path so no file name is ever read as
an option, and an argument list, never a shell.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from hooks._report import Problem

#: Seconds an interrupted hook waits for a running ``ruff check --fix`` to
#: finish writing before it is killed (``RuffFix.cancel``); ruff takes tens of
#: milliseconds on one file. Interrupted inside ``communicate``, CPython has
#: already waited up to 0.25 s for it (``Popen._sigint_wait_secs``), so the
#: hook still ends within a second.
WRITE_GRACE_S = 0.4


class RuffUnavailable(Exception):
    """ruff could not be run or did not answer; ``str()`` says why, in one line."""


class RuffTimeout(RuffUnavailable):
    """ruff outlived the hook's time; ``outcome`` is what ``RuffFix.stop`` left of the file."""

    def __init__(self, message: str, outcome: str) -> None:
        super().__init__(message)
        self.outcome = outcome


#: What ``RuffFix.stop`` left of the file (any other outcome is why the edit
#: could not be put back).
UNTOUCHED = "untouched"  # it holds the edit: ruff had not begun a rewrite
REWRITTEN = "rewritten"  # ruff ended by itself within the grace: its rewrite is whole
RESTORED = "restored"  # ruff was killed after changing it: the edit is back


def find_ruff(environ: Mapping[str, str]) -> list[str]:
    override = environ.get("ATOM_CONTRACTS_RUFF")
    if override:
        return [override]
    on_path = shutil.which("ruff", path=environ.get("PATH", os.defpath))
    if on_path:
        return [on_path]
    return [sys.executable, "-m", "ruff"]


class RuffFix:
    """One ``ruff check --fix`` on one file, started now and collected later.

    Split in two so the hook can import the contract linter while ruff runs:
    the two costs overlap instead of adding up.
    """

    def __init__(
        self, path: Path, *, cwd: Path, environ: Mapping[str, str], edit: bytes | None = None
    ) -> None:
        self.path = path
        # The file's bytes as ruff starts: what ``stop`` puts back when it has
        # to kill a ruff that may be mid-rewrite.
        self.edit = edit
        self.ruff = find_ruff(environ)
        self.command = (
            *self.ruff,
            "check",
            "--fix",
            "--no-unsafe-fixes",
            "--no-cache",
            "--force-exclude",
            "--output-format=json",
            "--",
            str(path),
        )
        self.cwd = cwd
        self.env = dict(environ)
        try:
            self.process = subprocess.Popen(
                self.command,
                cwd=cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                # Its own process group, so a timeout can kill whatever the
                # command started (a wrapper's child holds the pipes open).
                start_new_session=True,
            )
        except OSError as exc:
            raise RuffUnavailable(f"cannot run {self.ruff[0]}: {exc.strerror or exc}") from None

    def problems(self, timeout_s: float) -> list[Problem]:
        """What ruff still reports after its fixes; RuffUnavailable if it could not say."""
        try:
            stdout, stderr = self.process.communicate(timeout=max(timeout_s, 0.001))
        except subprocess.TimeoutExpired:
            # At the timeout ruff may be between its truncate and its write,
            # as on a Ctrl-C (see ``cancel``): the same grace, then the edit back.
            outcome = self.stop()
            raise RuffTimeout(f"ruff did not finish in time ({outcome})", outcome) from None
        except BaseException:
            self.stop()
            raise
        return _parse(stdout, stderr, self.process.returncode, self.ruff)

    def start_fixed_codes(self, before: bytes) -> FixedCodes:
        """Start reading what ruff's rewrite fixed; ``FixedCodes.collect`` answers.

        ``--fix`` reports only what is left, so what it fixed is read from a
        second, non-fixing run over the file as it was (``--stdin-filename``:
        the same configuration and exclusions, no write): its safely fixable
        findings, less those still reported after the fix. Started only when
        the file did change, and while the contract check runs, so the
        common edit pays for one ruff and a rewrite for little more.
        """
        return FixedCodes(
            (
                *self.ruff,
                "check",
                "--no-fix",
                "--no-cache",
                "--force-exclude",
                "--output-format=json",
                "--stdin-filename",
                self.command[-1],
                "-",
            ),
            before,
            cwd=self.cwd,
            env=self.env,
        )

    def cancel(self, grace_s: float = 0.0) -> bool:
        """End this ruff, after up to ``grace_s`` seconds for it to end on its own.

        True when it had to be killed, False when it had already ended.

        ``ruff check --fix`` writes a fixed file in place (``File::create``,
        which truncates, then the text: crates/ruff/src/diagnostics.rs), so a
        kill mid-write leaves the file empty or short. On a Ctrl-C the hook
        gives it ``WRITE_GRACE_S`` to finish, a bound far above its run on one
        file; it writes before it prints, so one still running after that is
        blocked on output or stuck, not writing.
        """
        if self.process.returncode is not None:
            return False
        killed = False
        try:
            if grace_s > 0:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=grace_s)
        finally:  # a second Ctrl-C during the grace must not leave it running
            if self.process.returncode is None:
                killed = True
                _kill_group(self.process)
        return killed

    def stop(self, grace_s: float = WRITE_GRACE_S) -> str:
        """End this ruff (timed out or interrupted) and leave the file whole.

        ``grace_s`` for a rewrite it has begun to finish; one still running
        after it is killed, and then whatever is on disk -- nothing, part or all
        of its fix -- is not known to be a file anyone meant, while the edit is:
        the edit goes back. Returns UNTOUCHED, REWRITTEN, RESTORED, or why the
        edit could not be put back.
        """
        killed = self.cancel(grace_s=grace_s)
        try:
            now = self.path.read_bytes()
        except OSError as exc:
            now, unreadable = None, exc.strerror or str(exc)
        if self.edit is None or now == self.edit:
            return UNTOUCHED
        if not killed:
            return REWRITTEN
        if now is None:
            return f"cannot be read back: {unreadable}"
        try:
            # In place, as ruff writes: the file keeps its inode, links, owner and mode.
            with open(self.path, "r+b") as fh:
                fh.write(self.edit)
                fh.truncate()
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            return f"cannot be written: {exc.strerror or exc}"
        return RESTORED


class FixedCodes:
    """One ``ruff check --no-fix`` over the pre-fix text, fed on stdin."""

    def __init__(self, command: tuple[str, ...], before: bytes, *, cwd: Path, env: dict) -> None:
        self.before = before
        try:
            self.process: subprocess.Popen | None = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self.process = None

    def cancel(self) -> None:
        if self.process is not None and self.process.returncode is None:
            _kill_group(self.process)

    def collect(self, after: list[Problem], timeout_s: float) -> list[str]:
        """The codes fixed, ``F401 x2`` style, in first-seen order; [] when ruff cannot say."""
        if self.process is None:
            return []
        try:
            stdout, _ = self.process.communicate(self.before, timeout=max(timeout_s, 0.001))
            diagnostics = json.loads(stdout)
        except (OSError, ValueError, RecursionError, MemoryError, subprocess.TimeoutExpired):
            if self.process.returncode is None:
                _kill_group(self.process)
            return []
        if not isinstance(diagnostics, list):
            return []
        left: dict[str, int] = {}
        for p in after:
            left[p.code] = left.get(p.code, 0) + 1
        counts: dict[str, int] = {}
        for d in diagnostics:
            if not isinstance(d, dict) or (d.get("fix") or {}).get("applicability") != "safe":
                continue
            code = str(d.get("code") or "")
            if left.get(code):
                left[code] -= 1
            elif code:
                counts[code] = counts.get(code, 0) + 1
        return [code if n == 1 else f"{code} x{n}" for code, n in counts.items()]


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.communicate()


def _summary(data: bytes, limit_chars: int = 300) -> str:
    """ruff's error output as one line: ``ruff failed`` alone says nothing, its
    ``Cause:`` lines say what to fix."""
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    if lines and lines[0].startswith("Traceback"):
        lines = lines[-1:]  # a Python wrapper that crashed: its last line is the error
    text = " ".join(lines)
    if not text:
        return "no output"
    return text if len(text) <= limit_chars else text[: limit_chars - 3] + "..."


def _parse(stdout: bytes, stderr: bytes, returncode: int, ruff: list[str]) -> list[Problem]:
    if returncode not in (0, 1):
        raise RuffUnavailable(f"{' '.join(ruff)} exited {returncode}: {_summary(stderr)}")
    # ruff's JSON output is a list even when empty (`[]`), so no list at all
    # means something else answered: `python -m ruff` without ruff installed
    # exits 1 too, with nothing on stdout.
    try:
        diagnostics = json.loads(stdout)
    except ValueError:
        diagnostics = None
    except (RecursionError, MemoryError):
        # json recurses per level of nesting; no ruff nests its report this
        # deep, so whatever answered is not one (ATOM_CONTRACTS_RUFF names it).
        raise RuffUnavailable(
            f"{' '.join(ruff)} exited {returncode}: its JSON output is nested too deeply to read"
        ) from None
    if not isinstance(diagnostics, list):
        raise RuffUnavailable(f"{' '.join(ruff)} exited {returncode}: {_summary(stderr or stdout)}")
    problems = []
    for d in diagnostics:
        location = d.get("location") or {}
        fix = d.get("fix") or {}
        note = ""
        if fix.get("applicability") == "unsafe":
            note = "ruff has only an unsafe fix for it"
        problems.append(
            Problem(
                path=str(d.get("filename") or ""),
                line=int(location.get("row") or 1),
                column=int(location.get("column") or 1),
                code=str(d.get("code") or "ruff"),
                message=str(d.get("message") or ""),
                cell=d.get("cell"),
                note=note,
            )
        )
    return problems
