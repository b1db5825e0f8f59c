"""Pool rows: a module's position in a pool, assigned by one walk.

A layer's row used to be recovered from `layer_id` by knowing the model's
shape -- `layer_id // full_attention_interval` for a Qwen3-Next attention
layer, `num_full_attn + (layer_id - mtp_start)` past a draft's boundary, a
dict for Kimi's two kinds -- and then by counters the bind walk advanced,
each assuming the bind walk visits in the sizing walk's order. Neither
survived a draft's module being offered to the target builder: a counter hands
it the next row, past the end of a pool sized without it, silently.

`pool_rows[kind][module]` is one walk over the modules that exist. Sizing
reads how many rows each kind has off the same map binding reads rows from, so
no config-derived layer count is needed, and a module the walk did not see
raises `KeyError` naming it.

The walk also records each row's reach (`pool_rows.reaches(kind)`): how far back
the module reads, which bounds what a request holds in that row. It is recorded
here, with the row, because the capacity plan prices rows by it; a second
reading of the config to find which layers slide would be a second answer to
a question the walk already answered.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from .reach import FULL, Reach
from .refusals import require_count


class _KvGeometryFields(NamedTuple):
    num_kv_heads: int
    head_dim: int


class KvGeometry(_KvGeometryFields):
    """The row space of an MHA pool: `(num_kv_heads, head_dim)`.

    `str()` is `h2d256`. The default NamedTuple repr reached a startup log
    (`16 KvGeometry(num_kv_heads=2, head_dim=256) rows`) and a transfer
    region's `semantic_role`, where class and field names do not belong.
    It is the one row space that is not a plain string, and a bad number in
    it would print as a plausible name, so construction checks both counts.
    """

    __slots__ = ()

    def __new__(cls, num_kv_heads: int, head_dim: int) -> KvGeometry:
        require_count("KvGeometry num_kv_heads", num_kv_heads, minimum=1)
        require_count("KvGeometry head_dim", head_dim, minimum=1)
        return super().__new__(cls, num_kv_heads, head_dim)

    def __str__(self) -> str:
        return f"h{self.num_kv_heads}d{self.head_dim}"


def describe_module(module: object) -> str:
    """A short name for a module in a refusal (an nn.Module's repr is its tree)."""
    prefix = getattr(module, "prefix", None)
    if isinstance(prefix, str) and prefix:
        return f"{type(module).__name__} {prefix!r}"
    return reprlib.repr(module)


def module_reach(module: object) -> Reach:
    """What a module declares it reads back over (its `reach` attribute), full if it says nothing.

    A module that caches per-request state rather than per-token KV has no reach to declare and
    is recorded full; nothing prices it per token anyway.
    """
    reach = getattr(module, "reach", None)
    if reach is None:
        return FULL
    if not isinstance(reach, Reach):
        raise TypeError(
            f"{describe_module(module)} declares reach {reach!r} ({type(reach).__name__}); "
            "a reach is a pool_layout.Reach"
        )
    return reach


class KindRows(Mapping[Any, int]):
    """Rows of one kind, keyed by module identity (modules need not hash).

    `reaches` is each row's reach in row order, recorded by the walk beside the row.
    """

    def __init__(
        self, kind: Hashable, modules: list[object], reaches: Iterable[Reach] | None = None
    ) -> None:
        self.kind = kind
        self._modules = modules
        self._rows = {id(m): r for r, m in enumerate(modules)}
        self.reaches: tuple[Reach, ...] = (
            tuple(module_reach(m) for m in modules) if reaches is None else tuple(reaches)
        )
        if len(self.reaches) != len(modules):
            raise ValueError(
                f"rows of {kind!s}: {len(self.reaches)} reaches for {len(modules)} modules"
            )

    def __getitem__(self, module: object) -> int:
        try:
            return self._rows[id(module)]
        except KeyError:
            raise KeyError(
                f"{describe_module(module)} has no {self.kind!s} row: the pool_rows walk "
                "did not visit it, so no pool was sized for it"
            ) from None

    def __contains__(self, module: object) -> bool:
        return id(module) in self._rows

    def __iter__(self) -> Iterator[object]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


class PoolRows(Mapping[Hashable, KindRows]):
    """`pool_rows[kind][module] -> row`; `counts()` is how many rows to buy.

    Built from `{kind: [modules in row order]}`; `from_rows` takes the
    `{kind: {module: row}}` form and checks the rows are exactly `0..n-1`, so
    a merged or reported map cannot hold a hole or a duplicate row.
    """

    def __init__(
        self,
        by_kind: Mapping[Hashable, Iterable[object]],
        reach_of: Callable[[object], Reach] | None = None,
    ) -> None:
        reach_of = module_reach if reach_of is None else reach_of
        self._kinds = {}
        for kind, mods in by_kind.items():
            mods = list(mods)
            self._kinds[kind] = KindRows(kind, mods, [reach_of(m) for m in mods])

    @classmethod
    def from_rows(cls, rows: Mapping[Hashable, Mapping[object, int]]) -> PoolRows:
        by_kind: dict[Hashable, list[object]] = {}
        for kind, mapping in rows.items():
            ordered = sorted(mapping.items(), key=lambda item: item[1])
            found = [row for _, row in ordered]
            if found != list(range(len(found))):
                raise ValueError(
                    f"rows of {kind!s} must be exactly 0..{len(found) - 1}, got {found!r}"
                )
            by_kind[kind] = [module for module, _ in ordered]
        return cls(by_kind)

    def as_dict(self) -> dict[Hashable, dict[object, int]]:
        """`{kind: {module: row}}` (needs hashable modules, as nn.Module is)."""
        return {kind: {m: r for r, m in enumerate(rows)} for kind, rows in self._kinds.items()}

    def __getitem__(self, kind: Hashable) -> KindRows:
        try:
            return self._kinds[kind]
        except KeyError:
            raise KeyError(
                f"no module caches kind {kind!s}; the walk found {[str(k) for k in self._kinds]}"
            ) from None

    def __iter__(self) -> Iterator[Hashable]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)

    def counts(self) -> dict[Hashable, int]:
        """Rows per kind, in the order the walk first met each kind."""
        return {kind: len(rows) for kind, rows in self._kinds.items()}

    def reaches(self, kind: Hashable) -> tuple[Reach, ...]:
        """Each row of `kind`'s reach, in row order."""
        return self[kind].reaches

    def reach_counts(self, kind: Hashable) -> dict[Reach, int]:
        """Rows of `kind` per reach, in the order the walk first met each reach."""
        counts: dict[Reach, int] = {}
        for reach in self[kind].reaches:
            counts[reach] = counts.get(reach, 0) + 1
        return counts

    def rows(self, kind: Hashable) -> int:
        """Rows of `kind`, refusing a kind with none: a pool of no rows binds nothing."""
        count = len(self[kind])
        return require_count(f"rows of {kind!s}", count, minimum=1)

    def __repr__(self) -> str:
        return "PoolRows(" + ", ".join(f"{n} {k!s} rows" for k, n in self.counts().items()) + ")"


def assign_pool_rows(
    modules: Iterable[object],
    kind_of: Callable[[object], Hashable | None],
    *,
    reach_of: Callable[[object], Reach] = module_reach,
) -> PoolRows:
    """One walk: a module's row is its position among the modules of its kind.

    `reach_of(module)` is the reach recorded with each of the module's rows (by default
    what the module declares, `module_reach`); one module has one reach in every kind it
    sits in.

    `kind_of(module)` names the row space a module caches in (a `KvGeometry`,
    `"mla"`, `"linear_state"`), None for a module that caches nothing, or a
    list (or frozenset) of kinds for a module that sits in several -- an MLA
    layer with a sparse indexer has a latent row and an indexer row, counted
    apart. Asking once per row space would be a second walk, which is the
    two-answers split this map exists to close. A tuple is one kind (a
    `KvGeometry` is a tuple). A module visited twice is refused: it would own
    two rows of one kind.
    """
    if not callable(kind_of):
        raise TypeError(f"kind_of must be callable, got {kind_of!r}")
    if not callable(reach_of):
        raise TypeError(f"reach_of must be callable, got {reach_of!r}")
    by_kind: dict[Hashable, list[object]] = {}
    reach_by_id: dict[int, Reach] = {}
    seen: dict[int, object] = {}
    for module in modules:
        answer = kind_of(module)
        if answer is None:
            continue
        if isinstance(answer, list):
            kinds = answer
        elif isinstance(answer, (frozenset, set)):
            # a set has no order; sorting by name keeps counts() deterministic
            kinds = sorted(answer, key=str)
        else:
            kinds = [answer]
        if id(module) in seen:
            raise ValueError(f"{describe_module(module)} is visited twice by the pool_rows walk")
        seen[id(module)] = module
        for kind in kinds:
            if kind is None or not isinstance(kind, Hashable):
                raise TypeError(
                    f"kind_of({describe_module(module)}) returned {answer!r}; a kind must be "
                    "hashable and not None"
                )
        if len(set(kinds)) != len(kinds):
            raise ValueError(
                f"kind_of({describe_module(module)}) returned {answer!r}, naming a kind twice"
            )
        reach = reach_of(module)
        if not isinstance(reach, Reach):
            raise TypeError(
                f"reach_of({describe_module(module)}) returned {reach!r}; a reach is a Reach"
            )
        reach_by_id[id(module)] = reach
        for kind in kinds:
            by_kind.setdefault(kind, []).append(module)
    return PoolRows(by_kind, reach_of=lambda m: reach_by_id[id(m)])


class PoolRowsMixin:
    """`pool_rows` for a builder: the walk runs once, and is dropped with its pool.

    A builder provides `_pooled_modules()` (the modules that exist, in walk
    order) and `_pool_row_kind(module)`. `invalidate_pool_rows()` drops the
    map and calls `_pool_rows_invalidated()`, where a builder drops the pool
    the map sized, so the two cannot part. It lives here, not with the
    builders, because a draft's own pool needs it too and the draft side
    promises to import no attention.
    """

    _pool_rows_cache: PoolRows | None = None

    def _pooled_modules(self) -> Iterable[object]:
        raise NotImplementedError(f"{type(self).__name__} must define _pooled_modules()")

    def _pool_row_kind(self, module: object) -> Hashable | None:
        raise NotImplementedError(f"{type(self).__name__} must define _pool_row_kind()")

    def _pool_rows_invalidated(self) -> None:
        """Hook: drop whatever was sized from the map."""

    @property
    def pool_rows(self) -> PoolRows:
        if self._pool_rows_cache is None:
            self._pool_rows_cache = assign_pool_rows(self._pooled_modules(), self._pool_row_kind)
        return self._pool_rows_cache

    def invalidate_pool_rows(self) -> None:
        self._pool_rows_cache = None
        self._pool_rows_invalidated()
