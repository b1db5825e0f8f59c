"""``atom-contracts``: check, rules, explain, and the engine's own commands.

This module is imported on every pre-commit run and every agent edit, so it
imports nothing it does not need for the command at hand: ``layout`` and
``models`` load the engine (and torch) only when invoked, ``hook`` loads only
its hook -- both through entry points, never by package name -- and a plain
check never loads json, libcst or pathspec. Exit
codes are ruff's: 0 clean, 1 findings, 2 a configuration or internal error,
reported as one line on stderr (a traceback only with ``--verbose``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

PROG = "atom-contracts"

# Subcommands whose arguments belong to someone else, dispatched before argparse
# sees them. They are entry points of the distribution (pyproject.toml's
# [project.entry-points."atom_contracts.commands"] and ".hooks"), loaded only
# when invoked: this module names neither `atom` nor `hooks`, so the static
# path never imports the engine, and a repository with its own top-level
# `hooks/` or `atom/` package cannot shadow what runs.
COMMANDS_GROUP = "atom_contracts.commands"
HOOKS_GROUP = "atom_contracts.hooks"
_DISTRIBUTION = "atom_contracts"  # the dist-info name: "atom-contracts", normalised

_COMMAND_HELP = {
    "layout": "print a model's KV pool layout (needs the engine extra)",
    "models": "list the model configs the engine prices (needs the engine extra)",
    # hooks.lsp:main loads without pygls and says which extra to install.
    "server": "run the language server over stdio (needs the server extra)",
}
# What a missing optional dependency means, by its top-level module name.
_EXTRAS = {"torch": "engine"}


# `check`'s options, declared once: argparse is built from the table for
# --help and for errors, and `_fast_check_args` parses the common case from
# it directly -- argparse with its help formatter (which imports shutil) is
# ~8 ms, a tenth of the one-file budget, to read `check FILE`.
def check_options() -> tuple[tuple[tuple[str, ...], str, object, str], ...]:
    """(flags, dest, bool | str | int | choices, help) of each ``check`` option."""
    from .reporters import FORMATS

    return (
        (("--output-format",), "output_format", FORMATS, "how findings are printed"),
        (
            ("--select",),
            "select",
            str,
            "comma-separated codes or prefixes to run (replaces `select`)",
        ),
        (
            ("--ignore",),
            "ignore",
            str,
            "comma-separated codes or prefixes to skip (adds to `ignore`)",
        ),
        (
            ("--diff-base",),
            "diff_base",
            str,
            "keep findings on lines inside `git diff -U3 $(git merge-base REV HEAD)` hunks "
            "(reviewdog's diff_context)",
        ),
        (("--fix",), "fix", bool, "apply safe fixes"),
        (("--unsafe-fixes",), "unsafe_fixes", bool, "with --fix or --diff, unsafe fixes too"),
        (
            ("--diff",),
            "diff",
            bool,
            "print the unified diff of every fix --fix would apply; write nothing "
            "(exit 1 when there is one)",
        ),
        (("--show-fixes",), "show_fixes", bool, "with --fix, list the fixes applied per file"),
        (("--statistics",), "statistics", bool, "print counts per code instead of findings"),
        (("--exit-zero",), "exit_zero", bool, "exit 0 even when there are findings"),
        (("--no-cache",), "no_cache", bool, "neither read nor write .atom-contracts-cache/"),
        (("--config",), "config", str, "the pyproject.toml to use (its directory is the root)"),
        (
            ("--stdin-filename",),
            "stdin_filename",
            str,
            "with PATH `-`: the file stdin stands for (its declaration, scope and name)",
        ),
        (("--jobs",), "jobs", worker_count, "worker processes (default: all cores)"),
        (("-q", "--quiet"), "quiet", bool, "print findings only, no summary"),
        (("-v", "--verbose"), "verbose", bool, "tracebacks on internal errors; timing"),
    )


def worker_count(raw: str) -> int:
    """``--jobs``: at least one worker. The linter reads anything below 2 as "check here,
    serially", so a 0 or a negative count would otherwise be accepted and mean 1 silently."""
    value = int(raw)
    if value < 1:
        raise ValueError(f"--jobs must be at least 1, got {value}")
    return value


def _fast_check_args(args: list[str]):
    """``check``'s arguments parsed from ``check_options()``, or None to let argparse speak."""
    from types import SimpleNamespace

    options = check_options()
    by_flag = {flag: (dest, value) for flags, dest, value, _ in options for flag in flags}
    ns = SimpleNamespace(command="check", paths=[], version=False)
    for _, dest, value, _ in options:
        setattr(
            ns, dest, False if value is bool else value[0] if isinstance(value, tuple) else None
        )
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            ns.paths.extend(rest)
            break
        if not arg.startswith("-") or arg == "-":
            ns.paths.append(arg)
            continue
        flag, eq, inline = arg.partition("=")
        if flag not in by_flag:
            return None  # -h, a typo, a bundled short flag: argparse explains
        dest, value = by_flag[flag]
        if value is bool:
            if eq:
                return None
            setattr(ns, dest, True)
            continue
        raw = inline if eq else next(rest, None)
        if raw is None:
            return None
        if isinstance(value, tuple):
            if raw not in value:
                return None
            setattr(ns, dest, raw)
        else:
            try:
                setattr(ns, dest, value(raw))
            except ValueError:
                return None
    return ns


def _parser():
    import argparse

    # allow_abbrev=False everywhere: argparse would otherwise read `--diff` as
    # `--diff-base` (a unique prefix), silently, and any future option likewise.
    parser = argparse.ArgumentParser(
        prog=PROG,
        allow_abbrev=False,
        description="Static layout contracts for LLM inference engines, declared in pyproject.toml.",
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser(
        "check",
        allow_abbrev=False,
        help="check files against the declared contracts",
        description="Check PATHS (default: the project root) against [tool.atom-contracts].",
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to check")
    for flags, dest, value, help_text in check_options():
        if value is bool:
            check.add_argument(*flags, dest=dest, action="store_true", help=help_text)
        elif isinstance(value, tuple):
            check.add_argument(*flags, dest=dest, choices=value, default=value[0], help=help_text)
        else:
            check.add_argument(*flags, dest=dest, type=value, metavar=dest.upper(), help=help_text)

    rules = sub.add_parser(
        "rules", help="list every rule", description="Print the documentation of every rule."
    )
    rules.add_argument("--output-format", choices=("text", "json", "markdown"), default="text")

    explain = sub.add_parser(
        "explain", help="explain one rule", description="Print one rule's documentation."
    )
    explain.add_argument("code", metavar="CODE", help="a code, e.g. AC301")
    explain.add_argument("--output-format", choices=("text", "json"), default="text")

    for name, help_text in _COMMAND_HELP.items():
        sub.add_parser(name, help=help_text, add_help=False)
    sub.add_parser("hook", help="run a hook (e.g. `hook post-tool-use`)", add_help=False)
    return parser


def console_main() -> None:
    """The ``atom-contracts`` command: ``main``, then leave without waiting on abandoned threads.

    SIGINT is answered through ``checkers.interrupt``, so a Ctrl-C that lands
    in a weakref callback (and that Python would drop) still ends the run.

    After a Ctrl-C in the parallel phase the pool has been killed and let go
    (``linter._end_pool``), and every ``finally`` on the way out has run (an
    interrupted cache save has removed its temporary). What is left for a normal
    exit is joining the pool's threads, with no time limit; a run that had once
    to be killed after 10 s was waiting there. So such a run flushes its output
    and ends with ``os._exit``: exit 130 however those threads stand. A run
    that abandoned nothing exits normally.

    Either way, once ``main`` has returned the run is over (its verdict
    printed, its cache saved) and a Ctrl-C is ignored: it could only land in
    the interpreter's teardown, where it printed "Exception ignored ...
    KeyboardInterrupt" with a traceback, or, after the teardown puts Python's
    handlers back to the default action, killed the process by the signal.
    ``SIG_IGN`` is the one disposition the teardown leaves in place, and
    what is left to run -- atexit's joins of finished threads, the flushes --
    does not wait on anything a Ctrl-C would need to break.
    """
    try:
        from . import interrupt

        interrupt.install()
        rc = main()
    except KeyboardInterrupt:  # before main's own handler (or after it): still 130, quietly
        rc = 130
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from . import linter

    if linter.POOL_ABANDONED:
        from contextlib import suppress

        for stream in (sys.stdout, sys.stderr):
            with suppress(OSError, ValueError):  # a closed or broken pipe must not stop the exit
                stream.flush()
        os._exit(rc)
    sys.exit(rc)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in args or "--verbose" in args
    from . import interrupt

    try:
        rc = _main(args)
        interrupt.check()  # a Ctrl-C dropped after the last file, where no file loop raised it
        return rc
    except KeyboardInterrupt:
        interrupt.forget()  # answered: an in-process caller's next run must not inherit it
        return 130
    except Exception as exc:
        from contracts.fields import ConfigError

        from .diff_filter import DiffError
        from .discovery import PathError

        if verbose:
            import traceback

            traceback.print_exc()
        elif isinstance(exc, ConfigError | PathError | DiffError):
            print(f"{PROG}: error: {exc}", file=sys.stderr)
        else:
            print(f"{PROG}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


def _main(args: list[str]) -> int:
    if args and args[0] in _COMMAND_HELP:
        return _delegate(COMMANDS_GROUP, args[0], args[1:], f"{PROG} {args[0]}")
    if args and args[0] == "hook":
        return _hook(args[1:])
    if args and args[0] == "check":
        fast = _fast_check_args(args[1:])
        if fast is not None:
            return _check(fast)
    if args[:1] in (["--version"], ["-V"]):
        print(f"{PROG} {version()}")
        return 0
    parser = _parser()
    ns = parser.parse_args(args)
    if ns.version:
        print(f"{PROG} {version()}")
        return 0
    if ns.command is None:
        parser.print_help()
        return 2
    if ns.command == "check":
        return _check(ns)
    if ns.command == "rules":
        return _rules(ns.output_format)
    return _explain(ns.code, ns.output_format)


def _own_dist_info() -> str | None:
    """This distribution's ``.dist-info`` directory, found on ``sys.path`` as importlib does."""
    import os

    for directory in sys.path:
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            if name.startswith(_DISTRIBUTION + "-") and name.endswith(".dist-info"):
                return os.path.join(directory or ".", name)
    return None


def version() -> str:
    """The installed version (``atom_contracts-0.1.0.dist-info`` -> ``0.1.0``)."""
    import os

    found = _own_dist_info()
    if found is None:
        return "(not installed)"
    return os.path.basename(found)[len(_DISTRIBUTION) + 1 : -len(".dist-info")]


def entry_points(group: str) -> dict[str, str]:
    """``name -> "module:attr"`` of one entry-point group, ours read first and cheaply.

    ``importlib.metadata`` costs ~10 ms to import (email, zipfile, csv) and
    scans every distribution; the agent hook runs through here on every edit.
    So the group is read from this distribution's own ``entry_points.txt``,
    found on ``sys.path`` the way ``importlib.metadata`` finds it, and the
    full scan (another distribution adding a command) runs only when ours
    does not name what was asked for.
    """
    import os

    found = _own_dist_info()
    if found is None:
        return {}
    try:
        with open(os.path.join(found, "entry_points.txt"), encoding="utf-8") as fh:
            return _parse_entry_points(fh.read()).get(group, {})
    except OSError:
        return {}


def _parse_entry_points(text: str) -> dict[str, dict[str, str]]:
    """The INI of an ``entry_points.txt``: ``[group]`` then ``name = module:attr`` lines."""
    groups: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1].strip(), {})
        elif current is not None and "=" in line:
            name, _, value = line.partition("=")
            current[name.strip()] = value.strip()
    return groups


def _find_entry_point(group: str, name: str) -> str | None:
    target = entry_points(group).get(name)
    if target is None:
        from importlib.metadata import entry_points as all_entry_points

        found = [ep.value for ep in all_entry_points(group=group) if ep.name == name]
        target = found[0] if found else None
    return target


def _delegate(group: str, name: str, argv: list[str], what: str) -> int:
    """Load entry point ``name`` of ``group`` and call it with ``argv``.

    A missing optional dependency (torch for the engine's commands) is one
    line naming the extra that provides it, exit 2 -- not an internal error.
    """
    from importlib import import_module

    target = _find_entry_point(group, name)
    if target is None:
        print(
            f"{PROG}: error: `{what}` is not installed ({group} has no {name!r}; "
            "reinstall atom-contracts)",
            file=sys.stderr,
        )
        return 2
    module, _, attr = target.partition(":")
    try:
        func = import_module(module.strip())
        for part in attr.strip().split("."):
            func = getattr(func, part)
        return int(func(argv) or 0)
    except ModuleNotFoundError as exc:
        top = (exc.name or "").partition(".")[0]
        extra = _EXTRAS.get(top)
        if extra is None:
            raise
        print(
            f"{PROG}: error: `{what}` needs {top}, which is not installed: install the "
            f'`{extra}` extra, e.g. pip install "atom-contracts[{extra}] @ '
            f'git+https://github.com/atom-contracts/atom-contracts@COMMIT" '
            f'(or pip install -e ".[{extra}]" in a checkout), with torch==2.13.0 pinned',
            file=sys.stderr,
        )
        return 2


def _hook(args: list[str]) -> int:
    if not args or args[0] in ("-h", "--help"):
        names = sorted(entry_points(HOOKS_GROUP))
        print(
            f"usage: {PROG} hook NAME [ARGS...]\n\nhooks: {', '.join(names) or '(none installed)'}"
        )
        return 0 if args else 2
    if _find_entry_point(HOOKS_GROUP, args[0]) is None:
        from contracts.fields import did_you_mean

        hint = did_you_mean(args[0], entry_points(HOOKS_GROUP))
        print(f"{PROG}: error: no hook named {args[0]!r}{hint}", file=sys.stderr)
        return 2
    try:
        return _delegate(HOOKS_GROUP, args[0], args[1:], f"{PROG} hook {args[0]}")
    except KeyboardInterrupt:
        # Interrupted before the hook's own handler (while it loads): answered
        # as the hook answers one, exit 0 -- an agent shows the user any other
        # status as a hook error (docs/hooks.md).
        print(f"{PROG} hook: interrupted; nothing reported", file=sys.stderr)
        return 0


def _check(ns) -> int:
    import os
    import time

    from .api import check
    from .reporters import render, statistics, statistics_json

    started = time.perf_counter()
    stdin = None
    paths = ns.paths
    if paths == ["-"] or ns.stdin_filename is not None:
        if paths not in (["-"], []) or ns.stdin_filename is None:
            print(
                f"{PROG}: error: stdin is checked as `check - --stdin-filename PATH` "
                "(PATH: the file it stands for, whose declaration and scope apply)",
                file=sys.stderr,
            )
            return 2
        # Bytes: decoded as the file would be (cookie, BOM), not in the terminal's encoding.
        stdin = sys.stdin.buffer.read()
        paths = [ns.stdin_filename]
    result = check(
        paths,
        select=ns.select,
        ignore=ns.ignore,
        fix=ns.fix,
        unsafe_fixes=ns.unsafe_fixes,
        diff=ns.diff,
        diff_base=ns.diff_base,
        use_cache=not ns.no_cache,
        jobs=ns.jobs,
        config_file=ns.config,
        stdin=stdin,
    )
    for warning in result.warnings:
        print(f"{PROG}: warning: {warning}", file=sys.stderr)
    findings = result.findings
    verdict = 0 if not findings or ns.exit_zero else 1
    try:
        return _report(ns, result, stdin, verdict, started, render, statistics, statistics_json)
    except BrokenPipeError:
        # `| head` closed the pipe: stop writing, quietly, with the run's own verdict (ruff
        # exits quietly too; a clean run stays 0 and findings stay 1 for `set -o pipefail`).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1 if result.diffs and ns.diff else verdict


def _wants_color(stream) -> bool:
    """ANSI colour on a terminal; ``NO_COLOR`` (no-color.org) off, ``FORCE_COLOR`` on."""
    import os

    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


def _report(ns, result, stdin, verdict, started, render, statistics, statistics_json) -> int:
    import time
    from pathlib import Path

    out = sys.stdout
    findings = result.findings
    if stdin is not None and (ns.fix or ns.diff):
        # ruff's stdin fix: the fixed source on stdout (the findings left go to stderr).
        if ns.diff:
            import difflib

            name = ns.stdin_filename
            before, after = result.stdin_text or "", result.fixed_text or ""
            out.write(
                "".join(
                    difflib.unified_diff(
                        before.splitlines(keepends=True),
                        after.splitlines(keepends=True),
                        fromfile=name,
                        tofile=name,
                    )
                )
            )
            return 1 if after != before and not ns.exit_zero else 0
        if result.fixed_bytes is not None:  # the input's own codec: no byte re-encoded
            out.flush()
            out.buffer.write(result.fixed_bytes)
            out.buffer.flush()
        else:
            out.write(result.fixed_text)
        out = sys.stderr
    if ns.diff:
        # ruff's --diff: the diffs alone on stdout, a count on stderr, 1 when any.
        out.write("".join(result.diffs))
        if result.fixed and not ns.quiet:
            s = "s" if result.fixed != 1 else ""
            print(f"Would fix {result.fixed} finding{s}.", file=sys.stderr)
        return 1 if result.diffs and not ns.exit_zero else 0
    if ns.statistics:
        out.write(statistics_json(findings) if ns.output_format == "json" else statistics(findings))
    else:
        out.write(
            render(
                findings,
                ns.output_format,
                root=result.root,
                cwd=Path.cwd(),
                color=_wants_color(out),
            )
        )
    if ns.output_format in ("concise", "full") and not ns.quiet and not _in_pre_commit_batch():
        out.write(_summary(result, show_fixes=ns.show_fixes))
    out.flush()
    if ns.verbose:
        elapsed_ms = (time.perf_counter() - started) * 1000
        print(f"{PROG}: {result.files_checked} files in {elapsed_ms:.0f} ms", file=sys.stderr)
    return verdict


def _in_pre_commit_batch() -> bool:
    """Whether pre-commit runs this process (it sets ``PRE_COMMIT=1`` for every hook).

    pre-commit splits the files into batches (``require_serial: false``) and
    prints each batch's output one after another under one Passed/Failed
    line: a summary per batch would put "All contracts hold." from one
    batch beside another's findings. pre-commit's own line is the summary.
    """
    import os

    return os.environ.get("PRE_COMMIT") == "1"


def _summary(result, *, show_fixes: bool = False) -> str:
    fixed = (
        f"Fixed {result.fixed} finding{'s' if result.fixed != 1 else ''}.\n" if result.fixed else ""
    )
    if fixed and show_fixes:
        fixed = fixed[:-2] + ":\n" + _fixes_by_file(result.fixes)
    n = len(result.findings)
    if not n and result.diff_scope is not None:
        # A diff run read only what changed: a bare "All contracts hold." read as
        # a verdict on the tree, and a base equal to HEAD makes every run clean.
        rev, changed = result.diff_scope
        if not changed:
            return fixed + f"No Python file changed since {rev}: nothing to check.\n"
        s = "s" if changed != 1 else ""
        return (
            fixed
            + f"All contracts hold on the lines of {changed} Python file{s} changed since {rev}.\n"
        )
    if not n:
        return fixed + "All contracts hold.\n"
    fixable = sum(1 for f in result.findings if f.fix is not None and f.fix.applicability == "safe")
    unsafe = sum(
        1 for f in result.findings if f.fix is not None and f.fix.applicability == "unsafe"
    )
    line = f"Found {n} finding{'s' if n != 1 else ''}."
    if fixable:
        line += f"\n[*] {fixable} fixable with `--fix`."
    if unsafe:
        line += f"\n{unsafe} more fixable with `--fix --unsafe-fixes`."
    return fixed + line + "\n"


def _fixes_by_file(fixes: dict[str, list[str]]) -> str:
    """ruff's ``--show-fixes`` block: per file, ``N \u00d7 CODE (name)`` (a multiplication sign)."""
    from .rule_docs import rule_index

    index = rule_index()
    out = []
    for path, codes in sorted(fixes.items()):
        out.append(f"- {path}:\n")
        counts: dict[str, int] = {}
        for code in codes:
            counts[code] = counts.get(code, 0) + 1
        for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            entry = index.get(code)
            name = f" ({entry.rule.name})" if entry else ""
            out.append(f"    {n} \u00d7 {code}{name}\n")
    return "".join(out)


def _rules(fmt: str) -> int:
    from .rule_docs import all_entries, entry_json, render_markdown, render_text

    entries = all_entries()
    if fmt == "json":
        import json

        print(json.dumps([entry_json(e) for e in entries], indent=2))
    elif fmt == "markdown":
        sys.stdout.write(render_markdown(entries))
    else:
        sys.stdout.write("\n".join(render_text(e) for e in entries))
    return 0


def _explain(code: str, fmt: str) -> int:
    from .rule_docs import all_entries, entry_json, render_text

    wanted = code.upper()
    for entry in all_entries(strict=False):
        if entry.rule.code == wanted or entry.rule.name == code:
            if fmt == "json":
                import json

                print(json.dumps(entry_json(entry), indent=2))
            else:
                sys.stdout.write(render_text(entry))
            return 0
    from contracts.fields import did_you_mean

    names = [
        name for entry in all_entries(strict=False) for name in (entry.rule.code, entry.rule.name)
    ]
    hint = did_you_mean(wanted, names) or did_you_mean(code, names)
    print(f"{PROG}: error: no rule {code!r} (see `{PROG} rules`){hint}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
