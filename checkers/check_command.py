"""``atom-contracts check``: its options, parsed fast, and how its result is reported.

The one command a pre-commit run and every agent edit start, so its common
case is parsed without argparse (``fast_args``), and its report -- findings,
the summary line, ``--diff``, ``--statistics``, the fixed text of stdin -- is
written here from ``checkers.api.check``'s data. Exit codes are ruff's: 0
clean, 1 findings.
"""

from __future__ import annotations

import sys

from .cli import PROG


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
        (
            ("--statistics",),
            "statistics",
            bool,
            "print counts per code instead of findings (under a reachable-calls code, the tests "
            "its chains assume, most shared first)",
        ),
        (("--exit-zero",), "exit_zero", bool, "exit 0 even when there are findings"),
        (("--no-cache",), "no_cache", bool, "neither read nor write .atom-contracts-cache/"),
        (("--config",), "config", str, "the pyproject.toml to use (its directory is the root)"),
        (
            ("--stdin-filename",),
            "stdin_filename",
            str,
            "with PATH `-`: the file stdin stands for (its declaration, scope and name)",
        ),
        (
            ("--jobs",),
            "jobs",
            worker_count,
            "worker processes (default: the CPUs this process may use)",
        ),
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


def fast_args(args: list[str]):
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


def run(ns) -> int:
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
