"""Whether a file that does not parse is written for a newer Python than the checker runs on.

The checker reads code with the grammar of its own interpreter (``ast``; it never runs the
code's Python). A 3.12 file under a 3.11 checker fails to parse with the old grammar's message
-- "expected '('" under ``def first[T](...)`` -- which names no Python at all, and its reader
looks for a typo that is not there. Two things are known without a newer parser:

- the constructs each newer grammar added, recognised on the line the old parser stopped at
  (each pattern below is the construct's own opening, so a plain typo does not match);
- the project's ``requires-python``: a project that requires a newer Python than the checker's
  is checked with the wrong grammar whatever the file holds.

Only read once a parse has failed: a file that parses never pays for any of this.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

#: (the Python that reads it, what it is, a test on the failing line and the parser's message).
_NAME = r"[^\W\d]\w*"
_CONSTRUCTS: list[tuple[tuple[int, int], str, re.Pattern[str], re.Pattern[str] | None]] = [
    (
        (3, 12),
        "type parameters, PEP 695",
        re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{_NAME}\s*\["),
        None,
    ),
    ((3, 12), "a `type` statement, PEP 695", re.compile(rf"^\s*type\s+{_NAME}\s*[\[=]"), None),
    (
        (3, 12),
        "an f-string as PEP 701 reads it",
        re.compile(r".*"),
        # The old tokenizer's own refusals of what PEP 701 allows: a backslash or a comment
        # inside the braces.
        re.compile(r"^f-string expression part cannot include (a backslash|'#')"),
    ),
    (
        (3, 12),
        "an f-string as PEP 701 reads it",
        # The f-string's own quote reused inside its braces, as a whole string there:
        # f"{d["k"]}". The old tokenizer ends the f-string at the inner quote.
        re.compile(
            r"""(?<![\w.])[rR]?[fF][rR]?(?P<q>['"])[^'"]*?\{[^{}]*?(?P=q)[^'"\n]*(?P=q)[^{}]*\}"""
        ),
        re.compile(r"^f-string: (unmatched|expecting|single '\}')"),
    ),
    (
        (3, 14),
        "exception types without parentheses, PEP 758",
        re.compile(r"^\s*except\*?\s+[^:()]+,[^:()]+:(?!.*\bas\b)"),
        re.compile(r"^multiple exception types must be parenthesized"),
    ),
    (
        (3, 14),
        "a template string, PEP 750",
        re.compile(r"""(?<![\w.])(?:[tT][rR]?|[rR][tT])['"]"""),
        None,
    ),
]


def newer_python_note(error: SyntaxError | None, config_pyproject: Path | None) -> str:
    """Words to add to a parse failure's AC001 ("" when there is nothing to say).

    Names the construct on the failing line that a newer grammar reads and the Python it
    needs, and the project's ``requires-python`` when it asks for a newer Python than this
    one; each with the Python this checker runs on.
    """
    running = sys.version_info[:2]
    notes = []
    wanted = running
    line = (error.text or "") if error is not None else ""
    message = (error.msg or "") if error is not None else ""
    for needs, what, on_line, said in _CONSTRUCTS:
        if running >= needs:
            continue
        if on_line.search(line) and (said is None or said.search(message)):
            notes.append(f"Python {needs[0]}.{needs[1]} syntax ({what})")
            wanted = max(wanted, needs)
            break
    required = _required_python(config_pyproject)
    if required is not None and running < required[0]:
        notes.append(f"the project requires Python {required[1]}")
        wanted = max(wanted, required[0])
    if not notes:
        return ""
    return (
        f" -- {'; '.join(notes)}; this checker runs on Python {running[0]}.{running[1]}: "
        f"run it on Python {wanted[0]}.{wanted[1]} or newer"
    )


def _required_python(pyproject: Path | None) -> tuple[tuple[int, int], str] | None:
    """The lowest (major, minor) ``[project] requires-python`` admits, and its text; None if
    the project says nothing readable (a bound this reading does not know is no bound)."""
    if pyproject is None:
        return None
    try:
        stat = os.stat(pyproject)
    except OSError:
        return None
    # Read once per version of the file: the language server asks on every keystroke
    # that leaves the buffer unparsable, and a TOML parse costs more than that check.
    version = (stat.st_mtime_ns, stat.st_size)
    kept = _REQUIRED.get(os.fspath(pyproject))
    if kept is None or kept[0] != version:
        kept = _REQUIRED[os.fspath(pyproject)] = (version, _read_required_python(pyproject))
    return kept[1]


# pyproject path -> ((mtime ns, size) read at, what it requires)
_REQUIRED: dict[str, tuple[tuple[int, int], tuple[tuple[int, int], str] | None]] = {}


def _read_required_python(pyproject: Path) -> tuple[tuple[int, int], str] | None:
    import tomllib

    try:
        spec = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["requires-python"]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return None
    if not isinstance(spec, str):
        return None
    lowest = None
    for clause in spec.split(","):
        # >=3.12, ~=3.12, ==3.12.*, ==3.12.1: each admits nothing below 3.12.
        found = re.fullmatch(r"\s*(>=|~=|==)\s*(\d+)\.(\d+)(?:\.[\d*]+)*\s*", clause)
        if found:
            bound = (int(found.group(2)), int(found.group(3)))
            lowest = bound if lowest is None else max(lowest, bound)
    return (lowest, spec.strip()) if lowest is not None else None
