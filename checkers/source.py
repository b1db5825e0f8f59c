"""One file as every contract sees it: its text, parsed at most once.

The tree is parsed lazily on first access, so a file no contract wants past
its text pre-filter is never parsed at all, and a file several contracts want
is parsed once for all of them.

``decode_source`` turns a file's bytes into text exactly as Python's import
does (``tokenize.detect_encoding``: a UTF-8 BOM, a PEP 263 cookie in the
first two lines, UTF-8 otherwise), and refuses what import refuses: an
unknown codec, a BOM under a cookie naming another codec, bytes the declared
codec cannot decode. Every reader of source (the per-file check, the
project's reads of neighbour modules, the fixer, the flake8 plugin through
the linter) goes through it, so a file is never checked as text Python would
not run, and a refusal is one AC001, never a silent "binds nothing".
"""

from __future__ import annotations

import ast
import io
from functools import cached_property
from itertools import accumulate

_BOM = b"\xef\xbb\xbf"


class DecodeError(ValueError):
    """Bytes Python's import would refuse to decode; the message says why."""


def read_regular(path: str) -> bytes:
    """A file's bytes; OSError, never a wait, when ``path`` is not a regular file.

    ``open(path, "rb").read()`` of a FIFO named ``x.py`` blocks until a writer
    comes, which in a tree being checked is never: the run hung. Opened
    non-blocking and checked before the read; O_NONBLOCK has no effect on a
    regular file (open(2)), so the read itself needs no second syscall to undo it.
    """
    import errno
    import os
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", path)
        with open(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)


def source_encoding(data: bytes) -> str:
    """The codec Python's import reads ``data`` with; ``utf-8-sig`` when it starts with a BOM.

    Raises DecodeError where ``tokenize.detect_encoding`` raises (unknown
    codec, a BOM under a non-UTF-8 cookie, a first line that is not UTF-8
    while looking for a cookie).
    """
    if not data.startswith(_BOM):
        # The cookie can only sit in the first two lines (split at b"\n", as
        # detect_encoding's readline does); without "coding" there it is UTF-8,
        # and the common case costs two finds instead of a tokenize import.
        first = data.find(b"\n")
        second = data.find(b"\n", first + 1) if first >= 0 else -1
        head = data if second < 0 else data[: second + 1]
        if b"coding" not in head:
            return "utf-8"
    import tokenize

    lines = iter(data.splitlines(True)[:2])
    try:
        encoding, _ = tokenize.detect_encoding(lambda: next(lines, b""))
    except SyntaxError as exc:
        if data.startswith(_BOM) and str(exc.msg).startswith("encoding problem"):
            raise DecodeError("a UTF-8 BOM under a coding cookie naming another codec") from None
        raise DecodeError(str(exc.msg)) from None
    return encoding


def decode_source(data: bytes) -> str:
    """Source bytes to text as Python's import reads them (BOM stripped); DecodeError if it would not."""
    encoding = source_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DecodeError(
            f"line {line}: byte {data[exc.start : exc.start + 1]!r} is not valid {encoding} "
            f"({'declared' if encoding not in ('utf-8', 'utf-8-sig') else 'the default'})"
        ) from None
    except LookupError as exc:  # pragma: no cover - detect_encoding has looked the codec up
        raise DecodeError(str(exc)) from None


class SourceFile:
    def __init__(self, path: str, text: str, *, abspath: str | None = None) -> None:
        self.path = path  # posix, relative to the project root
        self.abspath = abspath or path
        self.text = text
        self.parse_error: SyntaxError | None = None

    @cached_property
    def lines(self) -> list[str]:
        # Split where the tokenizer does (\n, \r\n, \r) and nowhere else:
        # str.splitlines also breaks on form feeds and \x1c-\x1e, which the
        # stdlib uses as page breaks, and every line number after one would
        # then disagree with ast's.
        return io.StringIO(self.text, newline="").readlines()

    @cached_property
    def tree(self) -> ast.Module | None:
        """The module's AST, or None when it does not parse (see parse_error)."""
        try:
            return ast.parse(self.text, filename=self.path)
        except (SyntaxError, ValueError) as exc:  # ValueError: NUL bytes
            self.parse_error = exc if isinstance(exc, SyntaxError) else SyntaxError(str(exc))
            return None
        except (RecursionError, MemoryError):
            # An expression too deep for the parser: compile() refuses it the same way.
            self.parse_error = SyntaxError("too deeply nested for Python's parser")
            return None

    @cached_property
    def line_starts(self) -> list[int]:
        """Offset in ``text`` where each line starts (line n at ``[n - 1]``), and the text's end."""
        return list(accumulate(map(len, self.lines), initial=0))

    def spells(self, node: ast.AST, word: str) -> bool:
        """Whether the lines of ``node`` (a statement, its decorators included) may spell
        ``word``: they do, or they are not ASCII (Python reads identifiers NFKC-normalised,
        so ``ﬁll`` is ``fill``). A text question, asked before walking a statement for
        what only a statement spelling the word can hold."""
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        last = getattr(node, "end_lineno", None) or node.lineno
        starts = self.line_starts
        start, end = starts[first - 1], starts[min(last, len(starts) - 1)]
        return self.text.find(word, start, end) >= 0 or not self.text[start:end].isascii()

    @property
    def module_name(self) -> str:
        """Dotted name under the first src root (set by the linter)."""
        return getattr(self, "_module_name", "")

    def char_column(self, line: int, byte_offset: int) -> int:
        """0-based character column of a UTF-8 byte offset on a 1-based line."""
        if line < 1 or line > len(self.lines):
            return byte_offset
        text = self.lines[line - 1]
        if text.isascii():
            return byte_offset
        return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="replace"))

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column) of a node: 1-based, character columns."""
        line = node.lineno
        end_line = getattr(node, "end_lineno", None) or line
        col = self.char_column(line, node.col_offset) + 1
        end_off = getattr(node, "end_col_offset", None)
        end_col = self.char_column(end_line, end_off) + 1 if end_off is not None else col
        return line, col, end_line, end_col

    def segment(self, node: ast.AST) -> str:
        """The node's source text ("" for a node without a position).

        Cut from the already-split lines: ``ast.get_source_segment`` re-splits
        the whole text on every call, 0.1 s a call on a 2,000-line buffer in
        the language server, where a keystroke's check has 50 ms in all.
        """
        from .analysis.names import source_segment

        if getattr(node, "end_lineno", None) is None:
            return ""
        return source_segment(self, node)
