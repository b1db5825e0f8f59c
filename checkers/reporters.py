"""Findings rendered for their readers: people, reviewdog, code scanning, Actions.

Findings are data (``contracts.finding``); each format here is an adapter
over that data and nothing else, so adding a format never touches a rule.
Positions are 1-based lines and character columns, end exclusive, except
where a reader counts otherwise: rdjson columns are UTF-8 bytes (reviewdog's
Position says so), converted here from the file's own line; SARIF declares
``columnKind: unicodeCodePoints`` and takes character columns as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from contracts.finding import Finding

TOOL_NAME = "atom-contracts"
TOOL_URL = "https://github.com/atom-contracts/atom-contracts"
DOCS_URL = f"{TOOL_URL}/blob/main/docs/contracts.md"


def rule_url(code: str) -> str:
    """The rule's section of docs/contracts.md (its heading's anchor, code and name)."""
    from .rule_docs import anchor

    return f"{DOCS_URL}#{anchor(code)}"


def render(
    findings: Sequence[Finding],
    fmt: str,
    *,
    root: Path,
    cwd: Path | None = None,
    color: bool = False,
) -> str:
    """The findings in one format; a trailing newline when non-empty.

    ``cwd``: the text formats (concise, full) name files relative to it, as
    ruff does, so a terminal's click-to-open works from a subfolder; the
    machine formats keep root-relative paths, which their readers resolve
    against the repository. ``color``: ANSI colour in the text formats.
    """
    try:
        renderer = _RENDERERS[fmt]
    except KeyError:
        raise ValueError(f"unknown output format {fmt!r} (known: {', '.join(FORMATS)})") from None
    if fmt in _TEXT:
        return renderer(list(findings), root, _Style(root, cwd, color))
    return renderer(list(findings), root)


class _Style:
    """How the text formats spell a path and a code: relative to cwd, coloured or not."""

    def __init__(self, root: Path, cwd: Path | None, color: bool) -> None:
        self.root = str(root)
        self.cwd = str(cwd) if cwd is not None else None
        self.color = color

    def path(self, path: str) -> str:
        if self.cwd is None or self.cwd == self.root:
            shown = path
        else:
            import os

            absolute = path if os.path.isabs(path) else os.path.join(self.root, path)
            shown = os.path.relpath(absolute, self.cwd).replace(os.sep, "/")
        return f"\x1b[1m{shown}\x1b[0m" if self.color else shown

    def code(self, code: str) -> str:
        return f"\x1b[1;31m{code}\x1b[0m" if self.color else code

    def dim(self, text: str) -> str:
        return f"\x1b[36m{text}\x1b[0m" if self.color else text


def _location(f: Finding, style: _Style) -> str:
    colon = style.dim(":")
    return f"{style.path(f.path)}{colon}{f.line}{colon}{f.column}{colon} {style.code(f.code)}"


def _concise(findings: list[Finding], root: Path, style: _Style | None = None) -> str:
    style = style or _Style(root, None, False)
    return "".join(f"{_location(f, style)} {f.message}\n" for f in findings)


class _Lines:
    """A file's lines, read once per render and only for files with findings."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: dict[str, list[str]] = {}

    def get(self, path: str) -> list[str]:
        if path not in self._files:
            import io

            try:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                text = ""
            self._files[path] = io.StringIO(text, newline="").readlines()
        return self._files[path]

    def line(self, path: str, number: int) -> str:
        lines = self.get(path)
        return lines[number - 1].rstrip("\r\n") if 0 < number <= len(lines) else ""


def _full(findings: list[Finding], root: Path, style: _Style | None = None) -> str:
    style = style or _Style(root, None, False)
    lines = _Lines(root)
    out = []
    for f in findings:
        out.append(f"{_location(f, style)} {f.message}\n")
        width = len(str(f.end_line))
        for number in range(max(1, f.line - 1), f.end_line + 2):
            text = lines.line(f.path, number)
            if number > len(lines.get(f.path)):
                break
            out.append(f"  {number:>{width}} | {text}\n")
            if number == f.line:
                stop = f.end_column if f.end_line == f.line else len(text) + 1
                carets = "^" * max(1, stop - f.column)
                out.append(f"  {'':>{width}} | {' ' * (f.column - 1)}{carets} {f.code}\n")
        if f.fix is not None:
            marker = "" if f.fix.applicability == "safe" else " (unsafe: --unsafe-fixes)"
            out.append(f"  = help: {f.fix.message}{marker}\n")
        out.append("\n")
    return "".join(out)


def _fix_json(f: Finding) -> dict | None:
    if f.fix is None:
        return None
    return {
        "message": f.fix.message,
        "applicability": f.fix.applicability,
        "edits": [
            {
                "content": e.content,
                "location": {"row": e.line, "column": e.column},
                "end_location": {"row": e.end_line, "column": e.end_column},
            }
            for e in f.fix.edits
        ],
    }


def finding_json(f: Finding) -> dict:
    return {
        "code": f.code,
        "contract": f.contract,
        "kind": f.kind,
        "path": f.path,
        "line": f.line,
        "column": f.column,
        "end_line": f.end_line,
        "end_column": f.end_column,
        "message": f.message,
        "fix": _fix_json(f),
        "url": rule_url(f.code),
    }


def _json(findings: list[Finding], root: Path) -> str:
    import json

    return json.dumps([finding_json(f) for f in findings], indent=2) + "\n"


def _byte_column(lines: _Lines, path: str, line: int, column: int) -> int:
    text = lines.line(path, line)
    if text.isascii():
        return column
    return len(text[: column - 1].encode("utf-8")) + 1


def _rdjson(findings: list[Finding], root: Path) -> str:
    import json

    lines = _Lines(root)

    def position(path: str, line: int, column: int) -> dict:
        return {"line": line, "column": _byte_column(lines, path, line, column)}

    diagnostics = []
    for f in findings:
        diagnostic = {
            "message": f.message,
            "location": {
                "path": f.path,
                "range": {
                    "start": position(f.path, f.line, f.column),
                    "end": position(f.path, f.end_line, f.end_column),
                },
            },
            "severity": "ERROR",
            "code": {"value": f.code, "url": rule_url(f.code)},
        }
        if f.fix is not None:
            diagnostic["suggestions"] = [
                {
                    "range": {
                        "start": position(f.path, e.line, e.column),
                        "end": position(f.path, e.end_line, e.end_column),
                    },
                    "text": e.content,
                }
                for e in f.fix.edits
            ]
        diagnostics.append(diagnostic)
    result = {
        "source": {"name": TOOL_NAME, "url": TOOL_URL},
        "severity": "ERROR",
        "diagnostics": diagnostics,
    }
    return json.dumps(result, indent=2) + "\n"


def _artifact(path: str) -> dict:
    """The SARIF artifactLocation of ``path``: an RFC 3986 reference, percent-encoded.

    A path is not a URI: ``#`` would start a fragment, ``?`` a query, ``%`` an
    escape, a ``:`` in the first segment a scheme, and a space or ``ü`` is no
    URI character at all. Every byte but the unreserved ones and ``/`` is
    escaped -- the file's own bytes (a name that is not UTF-8 keeps them) --
    as ``Path.as_uri`` does for the absolute path of a file outside the
    project root, which is a ``file:`` URI of its own.
    """
    from urllib.parse import quote_from_bytes

    if path.startswith("/"):
        return {"uri": Path(path).as_uri()}
    return {
        "uri": quote_from_bytes(path.encode("utf-8", "surrogateescape"), safe="/"),
        "uriBaseId": "%SRCROOT%",
    }


def _sarif(findings: list[Finding], root: Path) -> str:
    import json

    from .rule_docs import rule_index

    index = rule_index()
    codes = sorted({f.code for f in findings})
    rules = []
    for code in codes:
        entry = index.get(code)
        rule = {"id": code, "helpUri": rule_url(code)}
        if entry is not None:
            rule["name"] = entry.rule.name
            rule["shortDescription"] = {"text": entry.rule.what}
            rule["fullDescription"] = {"text": entry.rule.why}
        rules.append(rule)
    position = {code: i for i, code in enumerate(codes)}
    results = []
    for f in findings:
        result = {
            "ruleId": f.code,
            "ruleIndex": position[f.code],
            "level": "error",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": _artifact(f.path),
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.column,
                            "endLine": f.end_line,
                            "endColumn": f.end_column,
                        },
                    }
                }
            ],
        }
        if f.contract:
            result["properties"] = {"contract": f.contract, "kind": f.kind}
        if f.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f.fix.message},
                    "artifactChanges": [
                        {
                            "artifactLocation": _artifact(f.path),
                            "replacements": [
                                {
                                    "deletedRegion": {
                                        "startLine": e.line,
                                        "startColumn": e.column,
                                        "endLine": e.end_line,
                                        "endColumn": e.end_column,
                                    },
                                    "insertedContent": {"text": e.content},
                                }
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": TOOL_NAME, "informationUri": TOOL_URL, "rules": rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(findings: list[Finding], root: Path) -> str:
    out = []
    for f in findings:
        props = (
            f"file={_escape_property(f.path)},line={f.line},col={f.column},"
            f"endLine={f.end_line},endColumn={f.end_column},title={_escape_property(f.code)}"
        )
        out.append(f"::error {props}::{_escape_data(f.message)}\n")
    return "".join(out)


_RENDERERS: dict[str, Callable[..., str]] = {
    "concise": _concise,
    "full": _full,
    "json": _json,
    "rdjson": _rdjson,
    "sarif": _sarif,
    "github": _github,
}
_TEXT = ("concise", "full")
#: The ``--output-format`` choices: the renderers' names, so a format cannot be offered without
#: a renderer or rendered without being offered.
FORMATS = tuple(_RENDERERS)


def _statistics_rows(findings: Sequence[Finding]) -> list[tuple[str, str, int, bool]]:
    """(code, name, count, all safely fixable) per code, most frequent first: ruff's order."""
    from .rule_docs import rule_index

    index = rule_index()
    counts: dict[str, list[int]] = {}
    for f in findings:
        row = counts.setdefault(f.code, [0, 0])
        row[0] += 1
        row[1] += f.fix is not None and f.fix.applicability == "safe"
    return [
        (code, index[code].rule.name if code in index else "", n, fixable == n)
        for code, (n, fixable) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ]


def _assumed(findings: Sequence[Finding]) -> dict[str, list[tuple[str, int]]]:
    """Per code of reachable-calls findings, each test their chains run under with the number
    of chains that assume it, most shared first (then in the order first met): on a first
    run, the facts a maintainer checks before reading any chain whole."""
    chains = [f for f in findings if f.kind == "reachable-calls"]
    if not chains:
        return {}
    from .analysis.call_patterns import assumed_tests  # the format its findings print

    tallies: dict[str, dict[str, int]] = {}
    for f in chains:
        tally = tallies.setdefault(f.code, {})
        for test in dict.fromkeys(assumed_tests(f.message)):
            tally[test] = tally.get(test, 0) + 1
    return {code: sorted(tally.items(), key=lambda kv: -kv[1]) for code, tally in tallies.items()}


# How many of a code's assumed tests the text form lists under its row (JSON lists every one).
ASSUMED_SHOWN = 10


def statistics_json(findings: Sequence[Finding]) -> str:
    """ruff's ``--statistics --output-format json``: code, name, count, fixable, by count;
    a reachable-calls code's row also lists the tests its chains assume (``assumes``)."""
    import json

    assumed = _assumed(findings)
    rows = []
    for code, name, n, fixable in _statistics_rows(findings):
        row = {"code": code, "name": name, "count": n, "fixable": fixable}
        if code in assumed:
            row["assumes"] = [{"test": t, "chains": c} for t, c in assumed[code]]
        rows.append(row)
    return json.dumps(rows, indent=2) + "\n"


def statistics(findings: Sequence[Finding]) -> str:
    """ruff's ``--statistics`` shape: count, code, name, and [*] when ``--fix`` fixes them all;
    under a reachable-calls code, the tests most of its chains assume, with how many do."""
    rows = _statistics_rows(findings)
    assumed = _assumed(findings)
    width = max((len(str(n)) for _, _, n, _ in rows), default=1)
    out = []
    for code, name, n, fixable in rows:
        out.append(f"{n:>{width}}\t{code}\t{'[*] ' if fixable else ''}{name}\n")
        tests = assumed.get(code, ())
        out.extend(
            f"{'':>{width}}\t\t{chains:>{width}} where {test}\n"
            for test, chains in tests[:ASSUMED_SHOWN]
        )
        if len(tests) > ASSUMED_SHOWN:
            out.append(f"{'':>{width}}\t\t{'':>{width}} and {len(tests) - ASSUMED_SHOWN} more\n")
    return "".join(out)
