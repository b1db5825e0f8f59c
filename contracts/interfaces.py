"""What a contract's ``check`` is handed, described from this side.

The checker builds the objects (``checkers.source.SourceFile``,
``checkers.project.Project``); a kind only reads them. Describing them here as
Protocols lets ``contracts`` name the types in its signatures while importing
nothing of ``checkers``, so the layering stays one-way: checkers -> contracts.
Each member listed is one some kind reads; the checker's classes may hold more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import ast
    from pathlib import Path


class Source(Protocol):
    """One file as a kind sees it: its text and, parsed at most once, its tree."""

    path: str  # posix, relative to the project root
    abspath: str
    text: str

    @property
    def lines(self) -> list[str]: ...

    @property
    def tree(self) -> ast.Module | None:
        """The module's AST, or None when it does not parse."""
        ...

    @property
    def module_name(self) -> str: ...

    def span(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, column, end_line, end_column): 1-based, character columns."""
        ...

    def segment(self, node: ast.AST) -> str: ...


class ProjectIndex(Protocol):
    """Questions about files other than the one being checked, answered without importing."""

    root: Path

    def mentions(self, needle: str) -> bool: ...

    def module_name(self, relpath: str) -> str | None: ...

    def resolve(self, module: str) -> Path | None: ...

    def exists(self, module: str) -> bool: ...

    def is_first_party(self, module: str) -> bool: ...

    def binds(self, package: str, name: str) -> bool: ...

    def imports_of(self, source: Source) -> tuple: ...

    def module_imports(self, path: str) -> tuple: ...

    def import_chain(self, start: str, target: str) -> tuple[str, ...] | None: ...
