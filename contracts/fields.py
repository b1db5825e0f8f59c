"""Parameter types of a contract kind, declared once and validated generically.

A kind declares its parameters as class attributes that are field objects
(import-linter's habit). ``Contract.from_table`` walks them in one loop, so an
unknown key, a missing required parameter or a value of the wrong type is
reported the same way for every kind, naming the table, the key and the value,
before anything is checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    from typing import Any


class ConfigError(ValueError):
    """A declaration that cannot be used; the CLI exits 2 with this message."""


_MISSING: Any = object()


#: How every near-miss hint begins: what ``did_you_mean`` appends, and what a reader of an
#: error message (the language server's locator) cuts off to keep only what the file spells.
HINT = "; did you mean "


def did_you_mean(value: str, known: Iterable[str], *, cutoff: float = 0.75) -> str:
    """``"; did you mean `X`?"`` for the known spelling nearest ``value``, else ``""``.

    difflib's ratio (twice the matching characters over both lengths): 0.75
    names a typo -- a letter dropped, doubled or swapped in a word of five or
    more (``incldue`` -> ``include`` is 0.86, ``input-asert`` -> ``input-assert``
    0.96) -- and not a different word of the same shape (``AC999`` -> ``AC901``
    is 0.6). Only ever on the way to an error, so difflib is imported there.
    """
    from difflib import get_close_matches

    match = get_close_matches(value, list(known), n=1, cutoff=cutoff)
    return f"{HINT}`{match[0]}`?" if match else ""


class Field:
    """One parameter of a contract kind.

    ``doc`` is rendered into the rule documentation, so a parameter is never
    described twice.
    """

    type_name = "value"

    def __init__(self, *, default: Any = _MISSING, doc: str = "") -> None:
        self.default = default
        self.doc = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def required(self) -> bool:
        return self.default is _MISSING

    def parse(self, value: Any, where: str) -> Any:
        raise NotImplementedError

    def _fail(self, value: Any, where: str, expected: str) -> ConfigError:
        return ConfigError(f"{where}: `{self.key}` must be {expected}, got {value!r}")

    @property
    def key(self) -> str:
        """The TOML spelling: parameters are kebab-case in pyproject."""
        return self.name.replace("_", "-")


class String(Field):
    type_name = "string"

    def parse(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value:
            raise self._fail(value, where, "a non-empty string")
        return value


class Bool(Field):
    type_name = "boolean"

    def parse(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self._fail(value, where, "true or false")
        return value


class StringList(Field):
    """A list of non-empty strings; a bare string is refused, not split."""

    type_name = "list of strings"

    def parse(self, value: Any, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self._fail(value, where, "a list of non-empty strings")
        if not value:
            raise self._fail(value, where, "a non-empty list of strings")
        return tuple(value)


class Globs(StringList):
    """Gitignore-style globs, compiled here so a bad glob fails at load time."""

    type_name = "list of globs"

    def parse(self, value: Any, where: str) -> tuple[str, ...]:
        globs = super().parse(value, where)
        compile_globs(globs, where=f"{where}: `{self.key}`")
        return globs


class StringMap(Field):
    """A table of string keys to string values (e.g. module -> hint)."""

    type_name = "table of strings"

    def parse(self, value: Any, where: str) -> dict[str, str]:
        if not isinstance(value, Mapping) or not value:
            raise self._fail(value, where, "a non-empty table of strings")
        for k, v in value.items():
            if not isinstance(v, str):
                raise ConfigError(f"{where}: `{self.key}.{k}` must be a string, got {v!r}")
        return dict(value)


def compile_globs(globs: tuple[str, ...] | list[str], *, where: str):
    """Compile gitignore-style globs, naming the glob that fails.

    ``contracts.globs`` rather than pathspec: pathspec's import alone costs
    more than a whole one-file check (see that module's docstring).
    """
    key = tuple(globs)
    found = _COMPILED.get(key)
    if found is not None:
        return found
    from .globs import GlobError, GlobSet

    try:
        found = _COMPILED[key] = GlobSet(key)
    except GlobError as exc:
        raise ConfigError(f"{where}: bad glob: {exc}") from None
    return found


# Each declared glob list is compiled when the declaration is parsed (so a bad glob fails
# at load time) and again where it is matched (contracts, exclude, coverage): a GlobSet
# holds no state, so the second is the first, not a second translation of every glob.
_COMPILED: dict[tuple[str, ...], object] = {}
