"""One file as every contract sees it: its text, parsed at most once.

The tree is parsed lazily on first access, so a file no contract wants past
its text pre-filter is never parsed at all, and a file several contracts want
is parsed once for all of them.
"""

from __future__ import annotations

import ast
import io
from functools import cached_property


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

    @property
    def module_name(self) -> str:
        """Dotted name under the first src root (set by the engine)."""
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
        return ast.get_source_segment(self.text, node) or ""
