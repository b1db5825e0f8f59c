"""Findings are data; reporters are adapters over them.

A contract kind builds them and the checker collects, suppresses, fixes and
reports them, so they live here, below both: ``contracts`` imports nothing of
``checkers``.

Positions are 1-based lines and 1-based *character* columns, end exclusive
(ruff's convention, which reviewdog and SARIF readers also accept). ``ast``
reports UTF-8 byte offsets; ``SourceFile.span`` converts, so no rule has to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# typing.TYPE_CHECKING without importing typing: typing costs 3-8 ms to import, and
# every pre-commit run and agent edit imports this module; nothing on that path
# needs typing at run time (annotations are strings here, PEP 563).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Applicability = Literal["safe", "unsafe"]
else:
    Applicability = str  # "safe" or "unsafe"


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between two positions with ``content``."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"
    # The fix's purpose is a comment (an unused suppression's code removed): the
    # fixer does not move the comment it edits out of the way of its own edit.
    rewrites_comment: bool = False


@dataclass(frozen=True, slots=True)
class Finding:
    code: str
    contract: str
    kind: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = None
    # Lines of the flagged node's whole span: a noqa comment on any of them
    # suppresses it, because formatters move trailing comments to a closing
    # paren. Not part of the output formats.
    span_lines: tuple[int, int] = field(default=(0, 0), compare=False)

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.message)
