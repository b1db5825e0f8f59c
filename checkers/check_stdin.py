"""``check - --stdin-filename PATH``: one buffer checked, and fixed, as the file it stands for.

The buffer takes the file's declaration, scope, per-file-ignores and name;
nothing is read from or written to disk, and no cache is kept. Given as
bytes it is decoded as the file would be (BOM, cookie; refused bytes are
its AC001), and the fixed text goes back in the input's own encoding.
"""

from __future__ import annotations

from pathlib import Path

from contracts.config import Config
from contracts.fields import ConfigError
from contracts.finding import Finding

from .run import CheckResult, RunOptions


def check_stdin(
    config: Config, targets: list[Path], stdin: str | bytes, options: RunOptions
) -> CheckResult:
    from . import coverage
    from .discovery import relative
    from .linter import Linter
    from .resolver import selection_for

    linter = Linter(config, selection_for(config, options.select, options.ignore))
    if len(targets) != 1:
        raise ConfigError("stdin is one file: give exactly one --stdin-filename")
    fix = options.fix or options.diff
    rel = relative(targets[0], config.root)
    coverage.require_coverage(config, coverage.Probed(config, [rel]))
    exclude = config.exclude_spec()
    raw = stdin if isinstance(stdin, bytes) else None
    result = CheckResult(root=config.root, files_checked=1, fixed_bytes=raw)
    if raw is None:
        text = stdin
    else:
        from .linter import uncheckable
        from .source import DecodeError, decode_source

        try:
            text = decode_source(raw)
        except DecodeError as exc:
            if exclude is None or not exclude.match_file(rel):
                found = [uncheckable(rel, f"cannot be decoded: {exc}")]
                result.findings = linter.finalize(rel, found, (), config.ignored_codes(rel))
            return result  # nothing to fix in what cannot be read: the input goes back as it came
    result.fixed_text = result.stdin_text = text
    if exclude is not None and exclude.match_file(rel):
        return result
    if fix:
        from .fixer import fix_text

        record: list[Finding] = []
        fixed_text, fixed = fix_text(
            text,
            lambda t: linter.check_text(rel, t),
            unsafe=options.unsafe_fixes,
            record=record,
        )
        if fixed and raw is not None:
            from .fixer import WriteRefused, encode_like

            try:
                result.fixed_bytes = encode_like(raw, fixed_text)
            except WriteRefused as exc:  # a fix the input's codec cannot spell: none applied
                result.warnings.append(f"{rel}: not fixed: {exc}")
                fixed_text, fixed, record = text, 0, []
        result.fixed_text, result.fixed = fixed_text, fixed
        if record:
            result.fixes[rel] = [f.code for f in record]
    result.findings = sorted(linter.check_text(rel, result.fixed_text), key=Finding.sort_key)
    return result


__all__ = ["check_stdin"]
