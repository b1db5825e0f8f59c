"""Which codes are on: ``select`` / ``ignore`` prefixes, the most specific wins.

ruff's rule, because its users already expect it: ``select = ["AC"]`` with
``ignore = ["AC3"]`` turns off the AC3xx codes, and ``--select AC301`` on top
of ``ignore = ["AC3"]`` turns AC301 back on, since the longer prefix is the
more deliberate statement. A tie goes to ``ignore``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .codes import CHECKER_FAILED, UNCHECKABLE

# Findings the linter itself raises; not a contract kind's.
ALWAYS_ON = frozenset({UNCHECKABLE, CHECKER_FAILED})


def _longest(code: str, prefixes: Iterable[str]) -> int:
    return max((len(p) for p in prefixes if code.startswith(p)), default=-1)


class Selection:
    __slots__ = ("_memo", "ignore", "select")

    def __init__(self, select: Iterable[str] | None, ignore: Iterable[str] = ()) -> None:
        self.select = tuple(select) if select is not None else ("",)
        self.ignore = tuple(ignore)
        self._memo: dict[str, bool] = {}

    def enabled(self, code: str, extra_ignore: tuple[str, ...] = ()) -> bool:
        """Whether ``code`` is on; ``extra_ignore`` are a file's per-file-ignores."""
        if code in ALWAYS_ON:
            # Not turned off by select/ignore, only by naming the files it may skip.
            return _longest(code, extra_ignore) < 0
        if not extra_ignore:
            hit = self._memo.get(code)
            if hit is None:
                hit = self._memo[code] = _longest(code, self.select) > _longest(code, self.ignore)
            return hit
        return _longest(code, self.select) > max(
            _longest(code, self.ignore), _longest(code, extra_ignore)
        )

    def key(self) -> str:
        return f"select={','.join(self.select)};ignore={','.join(self.ignore)}"
