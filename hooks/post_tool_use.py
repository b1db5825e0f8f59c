"""The PostToolUse hook: after an agent edits a Python file, show it what is left.

Wired as ``atom-contracts hook post-tool-use`` (the console script, never
``python -m``: see hooks/__init__) on Claude Code's ``Edit|Write|MultiEdit|NotebookEdit``
tools. On the one file the payload names it applies ruff's safe fixes, then
collects what ruff still reports and what the declared contracts find (in
this process, through ``checkers.api``: a second interpreter start would cost
more than the check), and prints all of it to stderr with exit status 2,
which for PostToolUse means "show this to the model; the tool already ran".
A clean file exits 0 and prints nothing.

The previous hook of the engine this project came from ran ``ruff check
--fix`` and discarded its output, so the findings ``--fix`` cannot fix went
unseen until CI, where reviewdog's diff filter reported them against the
edit. Findings that were in the file before the edit are reported for the
same reason: CI picks them up once an edit lands beside them.

The hook must never be the reason an agent stops. Its own failures -- stdin
that is empty or not JSON, a path outside the project, a file deleted before
the hook ran, ruff missing or failing, the deadline passing, a linter that
cannot load its configuration -- each exit 0 with one line on stderr saying
why, never a traceback (a traceback exits 1, which Claude Code shows the
user as a hook error on every edit). Notebooks get ruff only: ruff lints
``.ipynb`` cells, the contracts parse ``.py`` files.

It rewrites no file but the one edited (ruff is given that one path,
``--no-cache``; the contract check reads ``.atom-contracts-cache/`` where a
check has left one -- the other files' import summaries, the project's
listing -- and writes nothing there) and never hands a file name to a shell.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from hooks import _payload as payload
from hooks._report import Problem, render
from hooks._ruff_process import (
    RESTORED,
    REWRITTEN,
    UNTOUCHED,
    FixedCodes,
    RuffFix,
    RuffTimeout,
    RuffUnavailable,
)

PREFIX = "atom-contracts hook: "
# Under Claude Code's own timeout in .claude/settings.json (30 s), so the hook
# reports its deadline itself rather than being killed mid-fix.
DEFAULT_TIMEOUT_S = 20.0

USAGE = """\
usage: atom-contracts hook post-tool-use [--timeout SECONDS] [--no-ruff] [--no-contracts]

Reads a PostToolUse hook payload (JSON) on stdin. On the Python file it names:
ruff's safe fixes, then whatever ruff and the contracts still find, on stderr,
exit 2. A clean file, or a payload it does not act on, exits 0.

  --timeout SECONDS  give up (exit 0, one line) after this long (default 20)
  --no-ruff          contracts only, for a project that does not use ruff
  --no-contracts     ruff only
"""


class _Usage(Exception):
    pass


class _DeadlinePassed(Exception):
    pass


class _Options:
    def __init__(self, argv: Sequence[str]) -> None:
        self.timeout_s = DEFAULT_TIMEOUT_S
        self.ruff = True
        self.contracts = True
        self.help = False
        args = list(argv)
        while args:
            arg = args.pop(0)
            if arg in ("-h", "--help"):
                self.help = True
            elif arg == "--no-ruff":
                self.ruff = False
            elif arg == "--no-contracts":
                self.contracts = False
            elif arg == "--timeout" or arg.startswith("--timeout="):
                value = arg.partition("=")[2] if "=" in arg else (args.pop(0) if args else "")
                try:
                    self.timeout_s = float(value)
                except ValueError:
                    raise _Usage(f"--timeout needs a number of seconds, got {value!r}") from None
                if not self.timeout_s > 0:
                    raise _Usage(f"--timeout must be positive, got {value!r}")
            else:
                raise _Usage(f"unknown argument {arg!r} (see --help)")


def _say(text: str) -> None:
    data = text if text.endswith("\n") else text + "\n"
    stream = sys.stderr
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        stream.flush()
        buffer.write(data.encode("utf-8", "backslashreplace"))
        buffer.flush()
    else:
        stream.write(data)
        stream.flush()


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Interrupt an in-process check that runs past the hook's deadline.

    The contract check runs in this process, so a subprocess timeout cannot
    bound it; SIGALRM can, where there is one and this is the main thread.
    """
    usable = hasattr(signal, "setitimer") and _is_main_thread()
    if not usable:
        yield
        return

    def on_alarm(signum, frame):
        raise _DeadlinePassed

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _is_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _contract_problems(edited: payload.EditedFile) -> list[Problem]:
    from checkers import api

    result = api.check([edited.path], cwd=edited.project, write_cache=False)
    root = Path(result.root)
    problems = []
    for finding in result.findings:
        path = (root / finding.path).resolve()
        # The checker's own codes (an unparsable file, a suppression) belong to no
        # contract: name the code's documentation instead of an empty contract.
        if finding.contract:
            note = f"contract `{finding.contract}`"
        else:
            note = f"see `atom-contracts explain {finding.code}`"
        if path != edited.path:
            # In a file the edit did not touch: the cross-file re-check found that this
            # edit fails it (a test that now imports an optional dependency, AC601; a leaf
            # member whose import the edit removed, AC202), as CI's whole-tree run will.
            note += f"; caused by this edit of {edited.relpath}"
        elif finding.fix is not None:
            flag = "--fix" if finding.fix.applicability == "safe" else "--fix --unsafe-fixes"
            note += f"; fix: atom-contracts check {flag} {edited.relpath}"
        problems.append(
            Problem(
                path=str(path),
                line=finding.line,
                column=finding.column,
                code=finding.code,
                message=finding.message,
                note=note,
            )
        )
    return problems


def _run(options: _Options, edited: payload.EditedFile, deadline: float) -> int:
    # The ruffs this run starts, ended on any way out (a Ctrl-C included): each
    # runs in its own session, which a terminal's Ctrl-C never reaches.
    started: list[RuffFix | FixedCodes] = []
    try:
        return _run_with(options, edited, deadline, started)
    except BaseException:
        for process in started:
            if isinstance(process, RuffFix):
                process.stop()  # it may be writing the file
            else:
                process.cancel()  # reads stdin, writes nothing
        raise


def _left_by_a_timeout(outcome: str) -> str:
    """What a timed-out ruff left of the file, as the end of the timeout's one line."""
    if outcome == UNTOUCHED:
        return ""
    if outcome == REWRITTEN:
        return "; ruff rewrote it: read it again before the next edit"
    if outcome == RESTORED:
        return "; ruff was stopped mid-rewrite, and the file is put back as the edit left it"
    return f"; ruff was stopped mid-rewrite, and the edit could not be put back: the file {outcome}"


def _run_with(
    options: _Options,
    edited: payload.EditedFile,
    deadline: float,
    started: list[RuffFix | FixedCodes],
) -> int:
    before = edited.path.read_bytes()
    problems: list[Problem] = []
    notes: list[str] = []

    ruff = None
    ruff_ran = False
    ruff_found: list[Problem] = []
    if options.ruff:
        try:
            ruff = RuffFix(edited.path, cwd=edited.project, environ=os.environ, edit=before)
            started.append(ruff)
        except RuffUnavailable as exc:
            notes.append(f"{PREFIX}{_one_line(exc)}; {edited.relpath} was not linted by ruff")
    want_contracts = options.contracts and not edited.is_notebook
    if want_contracts and ruff is not None:
        # Import the linter while ruff works; the contract check itself must
        # wait for ruff's fixes, since it has to see the fixed text.
        # An import failure is reported below, where the check fails the same way.
        with suppress(Exception):
            import checkers.api  # noqa: F401
    if ruff is not None:
        try:
            ruff_found = ruff.problems(deadline - time.monotonic())
            problems.extend(ruff_found)
            ruff_ran = True
        except RuffTimeout as exc:
            _say(
                f"{PREFIX}ruff did not finish within {options.timeout_s:g} s; "
                f"{edited.relpath} was not checked{_left_by_a_timeout(exc.outcome)}"
            )
            # Not a reason to stop the agent, unless its copy of the file is stale.
            return 0 if exc.outcome in (UNTOUCHED, RESTORED) else 2
        except RuffUnavailable as exc:
            notes.append(f"{PREFIX}{_one_line(exc)}; {edited.relpath} was not linted by ruff")

    changed = edited.path.read_bytes() != before if edited.path.exists() else True
    # What ruff fixed is read while the contracts are checked (two cores, two processes).
    fixing = ruff.start_fixed_codes(before) if changed and ruff_ran else None
    if fixing is not None:
        started.append(fixing)

    if want_contracts:
        remaining_s = deadline - time.monotonic()
        try:
            if remaining_s <= 0:
                raise _DeadlinePassed
            with _deadline(remaining_s):
                problems.extend(_contract_problems(edited))
        except _DeadlinePassed:
            if fixing is not None:
                fixing.cancel()
            _say(
                f"{PREFIX}the contract check did not finish within {options.timeout_s:g} s; "
                f"{edited.relpath} was not checked"
                + ("; ruff rewrote it: read it again before the next edit" if changed else "")
            )
            # Not a reason to stop the agent, unless its copy of the file is stale.
            return 2 if changed else 0
        except Exception as exc:
            kind = "configuration error" if _is_config_error(exc) else type(exc).__name__
            notes.append(f"{PREFIX}contracts not checked ({kind}: {_one_line(exc)})")

    if not problems and not changed:
        for note in notes:
            _say(note)
        return 0
    fixed = fixing.collect(ruff_found, deadline - time.monotonic()) if fixing else []
    # A rewrite is reported even when nothing is left: the agent's copy of the
    # file is stale, and its next edit would be matched against text that is gone.
    _say(
        render(
            problems,
            relpath=edited.relpath,
            project=str(edited.project),
            ruff_changed_file=changed,
            ruff_ran=ruff_ran,
            notes=notes,
            fixed_codes=fixed,
        )
    )
    return 2


def _is_config_error(exc: BaseException) -> bool:
    from contracts.fields import ConfigError

    return isinstance(exc, ConfigError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the hook; the exit status Claude Code reads (0 quiet, 2 show stderr)."""
    try:
        options = _Options(sys.argv[1:] if argv is None else argv)
    except _Usage as exc:
        _say(f"{PREFIX}{exc}; nothing checked")
        return 0
    if options.help:
        sys.stdout.write(USAGE)
        return 0
    deadline = time.monotonic() + options.timeout_s
    try:
        try:
            raw = sys.stdin.buffer.read()
        except (OSError, ValueError) as exc:
            _say(f"{PREFIX}cannot read stdin ({_one_line(exc)}); nothing checked")
            return 0
        try:
            edited = payload.parse(raw, os.environ)
        except payload.Skip as skip:
            if not skip.quiet:
                _say(f"{PREFIX}{skip}")
            return 0
        return _run(options, edited, deadline)
    except KeyboardInterrupt:
        _say(f"{PREFIX}interrupted; nothing reported")
        return 0
    except Exception as exc:
        # Last resort: a bug here must not become a traceback on every edit.
        _say(f"{PREFIX}internal error ({type(exc).__name__}: {_one_line(exc)}); nothing reported")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
