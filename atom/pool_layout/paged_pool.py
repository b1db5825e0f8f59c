"""What every paged (PAGE-class) pool shares: price, then carve, then bind.

A paged pool is a handful of numbers turned into `field_groups`, the one list
that both its price and its carve walk:

  price  `entry_bytes` is the sum of each group's walk, per *scheduler* block
         (one entry = `blocks_per_entry` backend blocks); `pool_bytes(entries)`
         is where `carve_layer_major` puts the groups, which is exactly
         `entries x entry_bytes`.
  carve  `allocate(entries, buf=...)` hands the same groups to
         `carve_layer_major`, over a fresh buffer or over the region the
         runner carved (or a P/D peer exported) -- the same walk either way,
         so the two ends cannot disagree about where a region starts.
  bind   the returned views answer each consumer in the one layout it takes.

A pool never sees a model runner or a config. That is what made a second one
askable for: an EAGLE3 draft gets its own pool without building a second
attention builder that would overwrite the target's per-step buffers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property

import torch

from .entry_class import EntryClass, PoolSpec
from .entry_field import DEFAULT_ALIGN, EntryField, walk
from .layer_major import LayerMajorArena, carve_layer_major, plan_layer_major
from .refusals import require_count
from .transfer import TransferRegion, dtype_name

_FP8 = tuple(
    getattr(torch, n)
    for n in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz")
    if hasattr(torch, n)
)


def is_fp8(dtype: torch.dtype) -> bool:
    """Whether KV of `dtype` needs dequantization scales beside it.

    One question, asked once: a pool's scale group, its views' `k_scale`, and
    a backend's "does this build have scales" all read this, so the answer
    cannot differ between the price and the bind.
    """
    return dtype in _FP8


class PagedPool:
    """Base of `MhaKvPool` / `MlaKvPool`: a row count, a block, and field groups.

    `block_size` is the backend block (tokens a kernel's page holds) and
    `blocks_per_entry` a count of them per scheduler block. They are kept as
    two numbers and never folded into one token count, because `entry_bytes`
    is what the page pool charges per scheduler block: pricing per backend
    block instead would multiply every field's 256 B alignment by
    `blocks_per_entry` (9% of a pool at 8 blocks an entry, almost all of it
    padding on 64 B scale planes).
    """

    kind: str = "paged"

    def __init__(self, rows: int, *, block_size: int, blocks_per_entry: int) -> None:
        self.rows = require_count(f"{type(self).__name__} rows", rows, minimum=1)
        self.block_size = require_count(f"{type(self).__name__} block_size", block_size, minimum=1)
        self.blocks_per_entry = require_count(
            f"{type(self).__name__} blocks_per_entry", blocks_per_entry, minimum=1
        )
        self.align = DEFAULT_ALIGN

    @property
    def entry_tokens(self) -> int:
        """Tokens one entry (one scheduler block) holds: block_size x blocks_per_entry."""
        return self.block_size * self.blocks_per_entry

    @property
    def field_groups(self) -> tuple[tuple[EntryField, ...], ...]:
        raise NotImplementedError

    def _check_groups(self, groups: Sequence[Sequence[EntryField]]) -> None:
        names: set[str] = set()
        for group in groups:
            for f in group:
                if f.name in names:
                    raise ValueError(f"{type(self).__name__} declares field {f.name!r} twice")
                names.add(f.name)
                if f.align > self.align:
                    # A wider field would open a gap between groups that grows
                    # with nothing the entry is priced at, and pool_bytes would
                    # stop being entries x entry_bytes.
                    raise ValueError(
                        f"{type(self).__name__} field {f.name!r} asks for align {f.align}; "
                        f"a paged pool's groups are placed on {self.align}"
                    )

    @cached_property
    def entry_bytes(self) -> int:
        """Bytes one entry (scheduler block) of this pool costs: what PAGE charges."""
        return sum(walk(g, align=self.align).entry_bytes for g in self.field_groups if g)

    @cached_property
    def padding_bytes(self) -> int:
        """Bytes of `entry_bytes` that are alignment rather than data."""
        return sum(walk(g, align=self.align).padding_bytes for g in self.field_groups if g)

    def pool_bytes(self, entries: int) -> int:
        """Bytes `allocate(entries)` takes; equals `entries x entry_bytes`."""
        return plan_layer_major(self.field_groups, entries, align=self.align).total_bytes

    def spec(self, name: str) -> PoolSpec:
        return PoolSpec(name, EntryClass.PAGE, self.entry_bytes)

    def num_blocks(self, entries: int) -> int:
        """Backend blocks in `entries` entries: entries x blocks_per_entry."""
        return require_count("entries", entries, minimum=1) * self.blocks_per_entry

    def _carve(
        self, entries: int, device: torch.device | str, buf: torch.Tensor | None
    ) -> list[LayerMajorArena | None]:
        return carve_layer_major(self.field_groups, entries, buf, device=device, align=self.align)

    def row_bytes(self) -> int | None:
        """Data one row holds a scheduler block: the per-layer page. None when a field spans a
        row space of its own (an indexer owned by some layers), so rows differ in what they hold."""
        fields = [f for g in self.field_groups for f in g]
        if any(f.rows != self.rows for f in fields):
            return None
        return sum(f.row_bytes for f in fields)

    def with_rows(self, rows: int) -> PagedPool:
        """This declaration over `rows` of its rows: the share of one reach class.

        Every field keeps its shape and dtype and takes `rows` rows, so the subset prices and
        carves by the same walk. A field over a row space of its own (an indexer owned by some
        layers) says nothing about which of those rows belong to which share, and is refused.
        """
        require_count(f"{type(self).__name__} subset rows", rows, minimum=1)
        groups = []
        for group in self.field_groups:
            new = []
            for f in group:
                if f.rows != self.rows:
                    raise ValueError(
                        f"{type(self).__name__} field {f.name!r} spans {f.rows} rows of its own, "
                        f"not the pool's {self.rows}: it cannot be split among the pool's rows"
                    )
                new.append(replace(f, rows=rows))
            groups.append(tuple(new))
        return RowSubsetPool(self, rows, tuple(groups))

    def role_prefix(self) -> str:
        return self.kind

    def region_role(self, field_name: str, row: int) -> str:
        """The `semantic_role` of field `field_name`'s region at `row` (`h2d256/k/3`): spelled
        here alone, so the regions exported and the role a module's view is looked up by agree."""
        return f"{self.role_prefix()}/{field_name}/{row}"


class RowSubsetPool(PagedPool):
    """`rows` rows of a paged pool's declaration, priced and carved by the same walk."""

    def __init__(
        self, parent: PagedPool, rows: int, groups: tuple[tuple[EntryField, ...], ...]
    ) -> None:
        super().__init__(
            rows, block_size=parent.block_size, blocks_per_entry=parent.blocks_per_entry
        )
        self.parent = parent
        self.align = parent.align
        self._groups = groups
        self._check_groups(groups)

    @property
    def field_groups(self) -> tuple[tuple[EntryField, ...], ...]:
        return self._groups

    def role_prefix(self) -> str:
        return self.parent.role_prefix()

    def allocate(
        self, entries: int, *, device: torch.device | str = "cpu", buf: torch.Tensor | None = None
    ) -> PagedPoolViews:
        return PagedPoolViews(self, entries, self._carve(entries, device, buf))

    def __repr__(self) -> str:
        return f"{self.rows} of {self.parent!r}"


class PagedPoolViews:
    """The bound side of a paged pool: arenas over one buffer, read per row."""

    def __init__(self, pool: PagedPool, entries: int, arenas: list[LayerMajorArena | None]) -> None:
        self.pool = pool
        self.entries = entries
        self.arenas = arenas
        self._arena_of = {
            f.name: arena for arena in arenas if arena is not None for f in arena.fields
        }

    @property
    def num_blocks(self) -> int:
        """Backend blocks: entries x blocks_per_entry (what kernels index)."""
        return self.entries * self.pool.blocks_per_entry

    def release(self) -> None:
        """Drop the arenas, and with them the buffer, if nothing else holds it.

        The views are the pool memory's only owner (no runner attribute
        mirrors it), so a rollout sleep frees the pool by releasing them; a
        view asked for afterwards is refused rather than read from freed bytes.
        """
        self.arenas = []
        self._arena_of = {}
        self.released = True

    released = False

    def _arena(self, name: str) -> LayerMajorArena:
        if self.released:
            raise ValueError(f"field {name!r} was asked of a released {type(self.pool).__name__}")
        try:
            return self._arena_of[name]
        except KeyError:
            raise KeyError(
                f"{type(self.pool).__name__} has no field {name!r}; it holds {list(self._arena_of)}"
            ) from None

    def field_view(self, name: str) -> torch.Tensor:
        """Field `name`, all rows: `(rows, entries, *shape)` as declared."""
        return self._arena(name).view(name)

    def field_row(self, name: str, row: int) -> torch.Tensor:
        """Row `row` of field `name`: `(entries, *shape)` as declared."""
        return self._arena(name).row(name, row)

    def _blocks(self, name: str, row: int, block_shape: tuple[int, ...]) -> torch.Tensor:
        return self.field_row(name, row).view(self.num_blocks, *block_shape)

    def region_tensors(self) -> list[TransferRegion]:
        """Every (field, row) region as uint8 `(entries, bytes an entry owns)`, with the field's
        dtype.

        `stride(0)` is the bytes one scheduler block owns in that region, so a
        transfer addressing `req.block_ids` needs no `* blocks_per_entry`.
        Each carries a `semantic_role` (`h2d256/k/3`): folding the fields
        changed the order from K0,V0,K1,V1 to all of K then all of V at the
        same count and bytes, and position alone could transfer K into V.
        """
        out: list[TransferRegion] = []
        for arena in self.arenas:
            if arena is None:
                continue
            for f in arena.fields:
                for r in range(f.rows):
                    role = self.pool.region_role(f.name, r)
                    out.append(
                        TransferRegion(role, arena.row_region(f.name, r), dtype_name(f.dtype))
                    )
        return out

    @property
    def buffers(self) -> list[torch.Tensor]:
        return [arena.buf for arena in self.arenas if arena is not None]
