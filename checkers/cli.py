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
    from .check_command import check_options

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
    (``pool.end_pool``), and every ``finally`` on the way out has run (an
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
    pool = sys.modules.get(f"{__package__}.pool")  # never imported: no pool to have let go
    if pool is not None and pool.POOL_ABANDONED:
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
        from .check_command import fast_args, run

        fast = fast_args(args[1:])
        if fast is not None:
            return run(fast)
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
        from .check_command import run

        return run(ns)
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
