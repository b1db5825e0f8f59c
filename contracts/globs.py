"""Gitignore-style globs compiled to one regular expression, without pathspec.

Every check matches the ``paths`` of each contract, the ``exclude`` list and
``per-file-ignores`` against the files it reads, so matching is on the hot
path of a one-file pre-commit run. pathspec gives the same semantics but
costs about 30 ms to import where ``typing_extensions`` is installed (it
pulls in asyncio), which is more than the whole one-file check; this module
is the subset of gitignore a declaration uses, translated to ``re`` once.
pathspec remains the reference: the tests compare both on a corpus, and
discovery outside a git work tree still uses it for ``.gitignore`` files.

Semantics (git's): a glob without a slash matches a name at any depth; one
with a slash is anchored at the root; ``**`` spans directories; a trailing
slash matches directories only; a matched directory matches everything
beneath it; ``!`` re-includes, and the last glob that matches decides.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import groupby
from operator import itemgetter


class GlobError(ValueError):
    """A glob that cannot be translated; its message names the glob."""


def _translate_segment(segment: str, glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = segment.find("]", i + 2 if segment[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end < 0:
                raise GlobError(f"unclosed '[' in {glob!r}")
            body = segment[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end
        elif ch == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def translate(glob: str) -> tuple[str, bool]:
    """(regex, negated) for one gitignore glob matched against a posix relative path."""
    if not isinstance(glob, str) or not glob.strip():
        raise GlobError(f"empty glob {glob!r}")
    negated = glob.startswith("!")
    body = glob[1:] if negated else glob
    if body.startswith("\\!") or body.startswith("\\#"):
        body = body[1:]
    elif body.startswith("#"):
        raise GlobError(f"{glob!r} is a gitignore comment, not a glob")
    body = body.rstrip(" ")
    dir_only = body.endswith("/")
    body = body.rstrip("/")
    if not body:
        raise GlobError(f"glob {glob!r} names no path")
    anchored = "/" in body
    body = body.lstrip("/")
    segments = body.split("/")
    parts: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            if last:
                # `dir/**` matches everything inside dir (not dir itself); a bare `**` everything.
                parts.append(".*" if index == 0 else "/.+")
            else:
                parts.append("(?:.*/)?" if index == 0 else "/(?:.*/)?")
            continue
        if "**" in segment:
            # git treats a `**` glued to other characters as two `*`.
            segment = re.sub(r"\*{2,}", "*", segment)
        sep = "" if index == 0 or parts[-1].endswith("(?:.*/)?") else "/"
        parts.append(sep + _translate_segment(segment, glob))
    regex = "".join(parts)
    prefix = "" if anchored or segments[0] == "**" else "(?:.*/)?"
    suffix = "/.*" if dir_only else "(?:/.*)?"
    return f"{prefix}{regex}{suffix}", negated


class GlobSet:
    """Compiled globs with pathspec's ``match_file`` interface."""

    __slots__ = ("_ordered", "globs")

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(globs)
        # The last glob that matches decides; within a run of globs of one polarity any match
        # decides alike, so each run is one pattern, tried from the last run back (without a
        # negation, the whole list is one run).
        runs = [
            (neg, [rx for rx, _ in run])
            for neg, run in groupby((translate(g) for g in self.globs), key=itemgetter(1))
        ]
        self._ordered = [
            (re.compile("|".join(f"(?:{rx})" for rx in rxs)), neg) for neg, rxs in reversed(runs)
        ]

    def match_file(self, path: str) -> bool:
        for rx, negated in self._ordered:
            if rx.fullmatch(path):
                return not negated
        return False

    def __repr__(self) -> str:
        return f"GlobSet({list(self.globs)!r})"
