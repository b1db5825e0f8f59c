"""Apply fixes: safe by default, non-overlapping, only if the result parses.

A pass takes every fixable finding of a file in position order and applies
each fix whose edits do not overlap one already taken (all of a fix's edits
or none). If the combined text does not parse, each fix is tried
alone and the first that leaves the file parsing is kept -- a fix that
breaks the file is dropped, never written. The file is then checked
again, since one fix can expose or resolve another finding, until a pass
changes nothing or ``MAX_PASSES`` is reached. Applying the fixes twice must
change nothing; the rule examples' tests hold every kind to that.

A fix changes the bytes it means to change and no others:

- Line breaks: an edit's content spells them ``\n``; they are written as the
  line the edit starts on ends (``\r\n``, ``\r``), so a CRLF file stays CRLF.
- Comments: one inside the replaced text that the replacement does not carry
  is moved to its own line above the edit, at its indentation; where the edit
  does not start a line there is no such place, and the fix is not applied.
- Encoding: the text is encoded back with the codec it was read with (its
  PEP 263 cookie, its BOM), and it is the *bytes* that must compile -- a
  character the codec cannot spell leaves the file alone.

``write_fixed`` then writes those bytes (see its docstring for links, owner,
mode and what is refused); a refusal is a ``WriteRefused`` naming the reason,
and the caller moves on to the next file.
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import stat
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import replace

from contracts.finding import Finding, Fix

MAX_PASSES = 10


def _line_starts(text: str) -> list[int]:
    import io

    starts = [0]
    for line in io.StringIO(text, newline="").readlines():
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], line: int, column: int) -> int:
    if line > len(starts) - 1:
        return starts[-1]
    return starts[line - 1] + column - 1


def _fix_range(fix: Fix, starts: list[int]) -> tuple[int, int]:
    begin = min(_offset(starts, e.line, e.column) for e in fix.edits)
    end = max(_offset(starts, e.end_line, e.end_column) for e in fix.edits)
    return begin, end


def _line_break(line: str) -> str | None:
    if line.endswith("\r\n"):
        return "\r\n"
    if line.endswith(("\r", "\n")):
        return line[-1]
    return None


def _newline_of(text: str, starts: list[int], line: int) -> str:
    """The line break ending ``line`` (1-based); the file's first one for an unterminated line."""
    if 1 <= line < len(starts):
        found = _line_break(text[starts[line - 1] : starts[line]])
        if found:
            return found
    for i in range(1, len(starts)):
        found = _line_break(text[starts[i - 1] : starts[i]])
        if found:
            return found
    return "\n"


def _with_newline(content: str, newline: str) -> str:
    if newline == "\n" or not any(c in content for c in "\r\n"):
        return content
    import io

    lines = io.StringIO(content, newline="").readlines()
    return "".join(
        line.rstrip("\r\n") + newline if line.endswith(("\r", "\n")) else line for line in lines
    )


def apply_fix_edits(text: str, fixes: list[Fix]) -> str:
    """Apply non-overlapping fixes' edits to ``text`` (positions: 1-based, character columns).

    Each edit's line breaks are written as the line it starts on ends.
    """
    starts = _line_starts(text)
    spans: list[tuple[int, int, str]] = []
    for fix in fixes:
        for e in fix.edits:
            spans.append(
                (
                    _offset(starts, e.line, e.column),
                    _offset(starts, e.end_line, e.end_column),
                    _with_newline(e.content, _newline_of(text, starts, e.line)),
                )
            )
    out = []
    cursor = 0
    for begin, end, content in sorted(spans, key=lambda s: (s[0], s[1])):
        out.append(text[cursor:begin])
        out.append(content)
        cursor = max(cursor, end)
    out.append(text[cursor:])
    return "".join(out)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _comments(text: str) -> list[tuple[int, int, str]] | None:
    """``(line, 1-based column, text)`` of every comment; None when the text cannot be tokenized."""
    import io
    import tokenize

    lines = iter(io.StringIO(text, newline="").readlines())
    try:
        return [
            (tok.start[0], tok.start[1] + 1, tok.string)
            for tok in tokenize.generate_tokens(lambda: next(lines, ""))
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError):
        return None


class _Positions:
    """One text's line starts, and its comments when first asked for: every fix of a pass
    reads them, so they are worked out once a pass, not once a fix (which made a pass over
    12,500 fixes in one file quadratic in the file)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = _line_starts(text)
        self._comments: tuple[list[int], list[str]] | bool | None = False

    def offset(self, line: int, column: int) -> int:
        return _offset(self.starts, line, column)

    def comments_within(self, begin: int, end: int) -> list[str] | None:
        """The comments starting in ``[begin, end)``; None when the text cannot be tokenized."""
        if self._comments is False:
            found = _comments(self.text)
            self._comments = (
                None
                if found is None
                else ([self.offset(line, col) for line, col, _ in found], [c for *_, c in found])
            )
        if self._comments is None:
            return None
        offsets, texts = self._comments
        return texts[bisect_left(offsets, begin) : bisect_left(offsets, end)]


def keeping_comments(text: str, fix: Fix, positions: _Positions | None = None) -> Fix | None:
    """``fix`` with every comment it would delete moved above it; None where there is no room.

    A comment inside the replaced text that the new content does not carry
    (``# why`` in a multi-line assert message, ``# keep me`` in a
    parenthesised import) goes on a line of its own before the edit, at the
    edit's indentation. That needs the edit to start its line; one that
    starts after other code on the line cannot take a comment line, and the
    fix is dropped rather than the comment. ``positions``: the text's, shared
    by the fixes of one pass.
    """
    if fix.rewrites_comment:
        return fix
    if positions is None:
        positions = _Positions(text)
    spans = [
        (e, positions.offset(e.line, e.column), positions.offset(e.end_line, e.end_column))
        for e in fix.edits
    ]
    if not any("#" in text[begin:end] for _, begin, end in spans):
        return fix
    edits = []
    for e, begin, end in spans:
        if "#" not in text[begin:end]:
            edits.append(e)
            continue
        within = positions.comments_within(begin, end)
        if within is None:
            return None  # cannot tell a comment from a `#` in a string: keep the file
        lost = [c for c in within if c not in e.content]
        if not lost:
            edits.append(e)
            continue
        indent = text[positions.starts[e.line - 1] : begin]
        if indent.strip():
            return None
        above = "".join(f"{c}\n{indent}" for c in lost)
        edits.append(replace(e, content=above + e.content))
    return replace(fix, edits=tuple(edits))


def applies(finding: Finding, *, unsafe: bool) -> bool:
    """Whether ``--fix`` (with ``--unsafe-fixes`` when ``unsafe``) would apply this finding's fix:
    the one test both the choice of fixes and the skip of files with nothing to fix ask."""
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (unsafe or fix.applicability == "safe")


def choose_fixes(text: str, findings: list[Finding], *, unsafe: bool) -> list[Finding]:
    """Fixable findings whose fixes do not overlap, in position order."""
    starts = _line_starts(text)
    candidates = [f for f in findings if applies(f, unsafe=unsafe)]
    candidates.sort(key=lambda f: _fix_range(f.fix, starts))
    chosen: list[Finding] = []
    last_end = -1
    for f in candidates:
        begin, end = _fix_range(f.fix, starts)
        if begin < last_end:
            continue
        chosen.append(f)
        last_end = max(end, begin)
    return chosen


def fix_text(
    text: str,
    check: Callable[[str], list[Finding]],
    *,
    unsafe: bool,
    keep: Callable[[Finding], bool] = lambda f: True,
    record: list[Finding] | None = None,
) -> tuple[str, int]:
    """Fix ``text`` until stable; returns the new text and how many fixes were applied.

    ``record``, when given, receives each finding whose fix was applied (``--show-fixes``).
    """
    applied = 0
    for _ in range(MAX_PASSES):
        chosen = []
        positions = _Positions(text)
        for f in choose_fixes(text, [f for f in check(text) if keep(f)], unsafe=unsafe):
            fix = keeping_comments(text, f.fix, positions)
            if fix is not None:
                chosen.append(replace(f, fix=fix))
        if not chosen:
            break
        new = apply_fix_edits(text, [f.fix for f in chosen])
        taken = len(chosen)
        if not _parses(new):
            # Some fix breaks the file. Positions only hold against this text, so
            # take the first fix that parses on its own; the next pass re-checks.
            new, taken = text, 0
            for f in chosen:
                trial = apply_fix_edits(text, [f.fix])
                if _parses(trial):
                    new, taken, chosen = trial, 1, [f]
                    break
        if taken == 0 or new == text:
            break
        text = new
        applied += taken
        if record is not None:
            record.extend(chosen)
    return text, applied


# -- writing ------------------------------------------------------------------


class WriteRefused(Exception):
    """A fixed file left as it was; the message says why (the run goes on to the next file)."""


def encode_like(original: bytes, text: str) -> bytes:
    """``text`` in the codec ``original`` was read with (its cookie, its BOM).

    Raises WriteRefused when a character of the fix has no spelling in that
    codec, or when the original itself would not come back byte for byte (a
    codec whose decoding is not one-to-one): writing it would change bytes no
    fix meant to change.
    """
    from .source import DecodeError, decode_source, source_encoding

    try:
        encoding = source_encoding(original)
        before = decode_source(original)
    except DecodeError as exc:
        raise WriteRefused(f"cannot be decoded: {exc}") from None
    if before.encode(encoding) != original:
        raise WriteRefused(f"its {encoding} bytes do not survive a decode and re-encode")
    try:
        return text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise WriteRefused(
            f"the fix writes {exc.object[exc.start : exc.end]!r}, which {encoding} cannot encode"
        ) from None


def compiles(data: bytes, filename: str = "<fixed>") -> str | None:
    """None when ``data`` compiles as Python would read the file (cookie, BOM); else why not."""
    try:
        compile(data, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return str(exc)
    except (RecursionError, MemoryError):
        return "too deeply nested to compile"
    return None


def write_fixed(path: str, original: bytes, text: str, *, root: str | os.PathLike[str]) -> None:
    """Write the fixed ``text`` of ``path``, read as ``original``, keeping every other byte.

    Refused (WriteRefused, the file untouched) when: the fixed bytes do not
    compile; the codec cannot spell the fix; ``path`` is a symlink whose
    target lies outside ``root``; the file has no write permission (even for
    root: 0444 says "do not edit me"), lies on a read-only mount, or is not
    this user's to write; it was deleted, or its bytes changed, since
    ``original`` was read.

    A symlink is written through to its target. The new bytes go to a
    temporary file in the target's directory, flushed to disk, given the
    file's mode and owner, and renamed over it: atomic, so a crash leaves the
    old file or the new one. Two cases cannot be renamed over without losing
    something, and are written in place instead: a file with more than one
    hard link (a rename would split the links) and one whose owner this
    process cannot give the temporary file. In place is not atomic, so the
    original bytes are first written to a sibling backup, which is removed
    only once the new bytes are on disk; an exception mid-write puts the
    original back.
    """
    data = encode_like(original, text)
    problem = compiles(data, path)
    if problem is not None:
        raise WriteRefused(f"the fixed file would not compile ({problem})")
    target = _target(path, root)
    try:
        st = os.stat(target)
        if not stat.S_ISREG(st.st_mode):
            raise WriteRefused("not a regular file")
        if not st.st_mode & 0o222:
            raise WriteRefused(f"read-only (mode {stat.filemode(st.st_mode)})")
        if not os.access(target, os.W_OK):
            raise WriteRefused(_not_writable(target, st))
        with open(target, "rb") as fh:
            current = fh.read()
    except FileNotFoundError:
        raise WriteRefused("deleted since it was read") from None
    except OSError as exc:
        raise WriteRefused(f"cannot be read back: {exc.strerror or exc}") from None
    if current != original:
        raise WriteRefused("changed on disk since it was read")
    try:
        if st.st_nlink > 1 or not _replace(target, data, st):
            _write_in_place(target, data, original)
    except OSError as exc:
        raise WriteRefused(f"cannot be written: {exc.strerror or exc}") from None


def _not_writable(target: str, st: os.stat_result) -> str:
    """Why a file whose mode has a write bit cannot be written: its mount, or its owner."""
    try:
        mounted_read_only = bool(os.statvfs(target).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): say what is known
        mounted_read_only = False
    if mounted_read_only:
        return "on a read-only file system"
    return (
        f"not writable by this user (mode {stat.filemode(st.st_mode)}, "
        f"owner {st.st_uid}, group {st.st_gid})"
    )


def _target(path: str, root: str | os.PathLike[str]) -> str:
    """The file a write to ``path`` lands in: through symlinks, and inside ``root``."""
    target = os.path.realpath(path)
    if target == os.path.normpath(os.path.abspath(path)):
        return path  # no symlink on the way
    top = os.path.realpath(root)
    if os.path.commonpath([target, top]) != top:
        raise WriteRefused(f"a symlink to {target}, outside the project; not written through")
    return target


# -- the files a write leaves beside its target while it runs --------------------------------
#
# Both kinds are named for the process that made them and held under an exclusive flock while
# it lives, so a later run can tell one abandoned by a killed process (SIGKILL, a power cut)
# from one a concurrent run is still writing: ``sweep_leftovers``.
#
# - ``.atom-contracts-fix-PID-XXXXXXXX.tmp``: the new bytes, about to be renamed over the file.
#   Abandoned, it holds nothing the file lacks (the rename never happened): removed.
# - ``.atom-contracts-fix-PID-DIGEST-XXXXXXXX-NAME.orig``: the original bytes of ``NAME`` while
#   it is written in place; ``DIGEST`` is the first 16 hex digits of blake2b(new bytes).
#   Abandoned, it is removed when ``NAME`` holds the original bytes (the write never began) or
#   exactly the new ones (it finished); anything else is a write cut short, and the backup is
#   kept and named, never removed: it is the only copy of the original.

_LEFTOVER_PREFIX = ".atom-contracts-fix-"
_LEFTOVER = re.compile(
    r"\.atom-contracts-fix-(?P<pid>\d+)-"
    r"(?:(?P<tmp>[a-z0-9_]{8})\.tmp|(?P<digest>[0-9a-f]{16})-[a-z0-9_]{8}-(?P<name>.*)\.orig)"
)
#: Longest file name a backup's own name carries (file systems stop at 255 bytes).
_NAMED_UP_TO = 180


def _new_digest(data: bytes) -> str:
    from contracts.config import blake2b

    return blake2b(data, digest_size=8).hexdigest()


def _temporary(directory: str, suffix: str = ".tmp", infix: str = "") -> tuple[int, str]:
    """A new file of ours beside the target, flocked for as long as this process holds it."""
    import tempfile

    try:
        fd, path = tempfile.mkstemp(
            dir=directory, prefix=f"{_LEFTOVER_PREFIX}{os.getpid()}-{infix}", suffix=suffix
        )
    except OSError as exc:
        raise WriteRefused(
            f"no temporary file can be made beside it ({exc.strerror or exc})"
        ) from None
    _hold(fd)
    return fd, path


def _hold(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the name's PID alone tells a sweep whose it is
        return
    # A file system without locks: the PID still guards it.
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlink_quietly(path: str) -> None:
    # Already gone, or a file system that refuses (a full or a read-only one).
    with contextlib.suppress(OSError):
        os.unlink(path)


def _replace(target: str, data: bytes, st: os.stat_result) -> bool:
    """Temp file + rename, owner and mode kept; False (nothing changed) when the owner cannot be."""
    fd, tmp = _temporary(os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        mine = os.stat(tmp)
        if (mine.st_uid, mine.st_gid) != (st.st_uid, st.st_gid):
            try:
                os.chown(tmp, st.st_uid, st.st_gid)
            except OSError:
                os.unlink(tmp)
                return False  # another user's file: in place keeps its owner
        os.chmod(tmp, stat.S_IMODE(st.st_mode))  # after chown, which clears setuid
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return True


def _write_in_place(target: str, data: bytes, original: bytes) -> None:
    name = os.path.basename(target)
    fd, backup = _temporary(
        os.path.dirname(target),
        suffix=f"-{name}.orig"
        if len(name.encode(errors="surrogateescape")) <= _NAMED_UP_TO
        else "-.orig",
        infix=f"{_new_digest(data)}-",
    )
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(original)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        # A full disk, or a Ctrl-C: the file itself is not touched yet, so the backup is
        # nothing but a half-written copy.
        _unlink_quietly(backup)
        raise
    try:
        with open(target, "r+b") as fh:
            fh.write(data)
            fh.truncate()
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        try:
            with open(target, "r+b") as fh:
                fh.write(original)
                fh.truncate()
        except OSError:
            raise WriteRefused(
                f"the write failed midway; the original bytes are kept in {backup}"
            ) from None
        os.unlink(backup)
        raise
    os.unlink(backup)


def sweep_leftovers(directories) -> list[str]:
    """Remove what killed fixes left in ``directories``; a warning for each backup kept.

    Only files named as ``_temporary`` names them, and only those abandoned: their process
    is gone and nobody holds their lock. A concurrent run's files are left to it.
    """
    warnings = []
    for directory in sorted(set(directories)):
        try:
            with os.scandir(directory) as it:
                names = [e.name for e in it if e.name.startswith(_LEFTOVER_PREFIX)]
        except OSError:
            continue
        for name in names:
            found = _LEFTOVER.fullmatch(name)
            path = os.path.join(directory, name)
            if found is None or not _abandoned(path, int(found["pid"])):
                continue
            if found["tmp"] is not None:
                _unlink_quietly(path)
                continue
            kept = _settle_backup(path, directory, found["name"], found["digest"])
            if kept:
                warnings.append(kept)
    return warnings


def _abandoned(path: str, pid: int) -> bool:
    """Whether the process that made ``path`` is gone: not this one, not alive, no lock held."""
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
        return False  # alive (or another user's, alive: PermissionError below)
    except ProcessLookupError:
        pass
    except (PermissionError, OSError):
        return False
    try:
        import fcntl
    except ImportError:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False  # held: a run in another PID namespace is still writing it
    finally:
        os.close(fd)


def _settle_backup(backup: str, directory: str, name: str, digest: str) -> str | None:
    """Remove an abandoned backup that holds nothing its file lacks; else why it is kept."""
    from .source import read_regular

    try:
        kept = read_regular(backup)
    except OSError:
        return None
    target = os.path.join(directory, name) if name else None
    try:
        current = read_regular(target) if target else None
    except OSError:
        current = None
    if current is not None and (current == kept or _new_digest(current) == digest):
        _unlink_quietly(backup)
        return None
    where = f"{target}" if target else f"a file in {directory}"
    return (
        f"{backup}: a fix of {where} was cut short while it wrote the file in place; these are "
        "its original bytes, kept: compare, restore if need be, then remove it"
    )
