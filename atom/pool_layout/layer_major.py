"""`LayerMajorArena`: a field list laid out with the row axis outermost.

A paged KV pool is read by kernels one row (one layer) at a time, each row a
dense `(num_blocks, ...)` tensor, so the row axis must be outermost: field
`f`'s region holds row 0 of every entry, then row 1 of every entry, and so on.

There is deliberately no `entry(i)`. An entry's bytes are `entries` apart
here, so nothing can copy or register one as a unit; a transfer registers a
row's region instead, whose `stride(0)` is the bytes one entry owns. That is
also the deletion condition: turn the pool entry-major and `EntryMajorArena`
serves both.

The carve derives from the same walk the price does. Field `f`'s region is
`entries x spans[f]` bytes starting at `entries x offsets[f]`, so the arena
takes exactly `entries x entry_bytes` -- what the PAGE spec was charged --
and a region sized off a second reading of the layout cannot exist. The cost
is that the per-entry alignment padding is kept `entries` times; pricing per
entry (not per backend block) is what keeps that under 1% of a pool.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .byte_view import contiguous_strides, require_aligned, require_byte_buffer, typed_view
from .entry_field import DEFAULT_ALIGN, EntryField, EntryWalk, walk
from .refusals import (
    INT32_MAX,
    apply_fills,
    back_arena_buffer,
    require_count,
    require_int32_offsets,
)
from .regions import RegionPlan, carve, plan_regions


class LayerMajorArena:
    """Fields of `entries` entries, row axis outermost, over one byte buffer.

    `view(name)` is `(rows, entries, *shape)`; `row(name, r)` is one row,
    `(entries, *shape)`, dense. Handed a `buf`, the arena checks it is exactly
    the priced size and aligned -- which is also the check that an imported
    buffer fits the declaration -- and refuses a field with a non-zero fill,
    because it cannot apply one: the buffer may already hold a peer's KV.
    `zeroed=True` is the caller saying it allocated `buf` itself a moment ago
    (`carve_layer_major` over its own allocation), so the fills are applied.
    An empty field list is refused; `carve_layer_major` turns an empty group
    into None instead, since a layer-major group nobody declared is a region
    the model does not want (unlike an empty plane, which keeps its index).
    """

    def __init__(
        self,
        fields: Sequence[EntryField],
        entries: int,
        *,
        buf: torch.Tensor | None = None,
        device: torch.device | str = "cpu",
        align: int = DEFAULT_ALIGN,
        zeroed: bool = False,
    ) -> None:
        self.walk: EntryWalk = walk(fields, align=align)
        if not self.walk.fields:
            raise ValueError(
                "LayerMajorArena got an empty field list []; an empty group is a region "
                "the model does not want, which carve_layer_major maps to None"
            )
        self.entries = require_count("LayerMajorArena entries", entries, minimum=1)
        self.fields = self.walk.fields
        require_row_offsets(self.fields, self.entries)
        nbytes = self.entries * self.walk.entry_bytes
        buf, fresh = back_arena_buffer(
            buf,
            nbytes,
            arena="LayerMajorArena",
            priced=f"{self.entries} entries x {self.walk.entry_bytes} entry_bytes",
            fields=self.fields,
            align=self.walk.align,
            zeroed=zeroed,
            fill_why="it may already hold a peer's KV",
            device=device,
        )
        self.buf = buf
        self._views = {f.name: self._build_view(f) for f in self.fields}
        if fresh:
            apply_fills(self._views, self.fields)

    @staticmethod
    def nbytes(fields: Sequence[EntryField], entries: int, *, align: int = DEFAULT_ALIGN) -> int:
        """Bytes the carve takes: `entries x entry_bytes` of the same walk.

        Refuses, as the carve would, a row view past 32-bit element offsets (`require_row_offsets`):
        sizing is where a pool's entry count is chosen, so that is where it is said to be too many.
        """
        require_count("LayerMajorArena entries", entries, minimum=1)
        w = walk(fields, align=align)
        require_row_offsets(w.fields, entries)
        return entries * w.entry_bytes

    @property
    def entry_bytes(self) -> int:
        return self.walk.entry_bytes

    def _build_view(self, f: EntryField) -> torch.Tensor:
        size = (f.rows, self.entries, *f.shape)
        return typed_view(
            self.buf,
            self.entries * self.walk.offsets[f.name],
            f.dtype,
            size,
            contiguous_strides(size),
        )

    def _field(self, name: str) -> EntryField:
        try:
            return self.walk.by_name[name]
        except KeyError:
            raise KeyError(
                f"no field named {name!r}; this arena holds {list(self.walk.by_name)}"
            ) from None

    def view(self, name: str) -> torch.Tensor:
        """All rows of field `name`: `(rows, entries, *shape)`."""
        self._field(name)
        return self._views[name]

    def row(self, name: str, r: int) -> torch.Tensor:
        """Row `r` of field `name`, `(entries, *shape)`: what one layer's kernel reads."""
        f = self._field(name)
        require_count(f"row of field {name!r}", r)
        if r >= f.rows:
            raise ValueError(f"row {r} is out of range for field {name!r}, which has {f.rows} rows")
        return self._views[name][r]

    def region(self, name: str) -> torch.Tensor:
        """The uint8 bytes field `name` owns: `entries x span`, data then padding."""
        self._field(name)
        start = self.entries * self.walk.offsets[name]
        return self.buf[start : start + self.entries * self.walk.spans[name]]

    def row_region(self, name: str, r: int) -> torch.Tensor:
        """Row `r` of `name` as uint8 `(entries, row_bytes)`: one transfer region.

        `stride(0)` is the bytes one entry owns in this region, so a transfer
        addressing scheduler block ids needs no conversion factor.
        """
        f = self._field(name)
        self.row(name, r)  # the same range check
        row_bytes_all_entries = self.entries * f.row_bytes
        start = self.entries * self.walk.offsets[name] + r * row_bytes_all_entries
        return self.buf[start : start + row_bytes_all_entries].view(self.entries, f.row_bytes)


def require_row_offsets(fields: Sequence[EntryField], entries: int) -> None:
    """Refuse `entries` entries if a row of any field passes 32-bit element offsets.

    A row is what one layer's kernel is handed: `(entries, *shape)`, dense, so its largest element
    offset is `entries x row_elems - 1`. The refusal names the field and the most entries that fit.
    """
    for f in fields:
        size = (entries, *f.shape)
        stride = (f.row_elems, *_dense(f.shape))
        require_int32_offsets(
            f"a row of field {f.name!r} at {entries} entries",
            size,
            stride,
            f.dtype,
            fewer=f"at most {(INT32_MAX + 1) // f.row_elems} entries",
        )


def _dense(shape: Sequence[int]) -> tuple[int, ...]:
    return contiguous_strides(shape)


def plan_layer_major(
    groups: Sequence[Sequence[EntryField]], entries: int, *, align: int = DEFAULT_ALIGN
) -> RegionPlan:
    """Where each group's arena sits in one buffer; an empty group takes no room.

    A pool's `field_groups` is the one list both its price and its carve walk,
    so a group added to one cannot be missed by the other.
    """
    require_count("carve_layer_major entries", entries, minimum=1)
    sizes = [
        (f"group{i}", LayerMajorArena.nbytes(g, entries, align=align) if len(g) else 0)
        for i, g in enumerate(groups)
    ]
    # A group starts where its widest field may: a field declared wider than
    # `align` raises the boundary for every group, never lowers it.
    widest = max([align, *(walk(g, align=align).align for g in groups if len(g))])
    return plan_regions(sizes, align=widest)


def carve_layer_major(
    groups: Sequence[Sequence[EntryField]],
    entries: int,
    buf: torch.Tensor | None = None,
    *,
    device: torch.device | str = "cpu",
    align: int = DEFAULT_ALIGN,
) -> list[LayerMajorArena | None]:
    """One `LayerMajorArena` per group over one buffer; None for an empty group.

    Handed `buf`, it must be exactly the planned size: a pool owns its region
    whole, and a longer buffer would mean the region was sized off another
    reading of the layout.
    """
    plan = plan_layer_major(groups, entries, align=align)
    if buf is None:
        buf = torch.zeros(plan.total_bytes, dtype=torch.uint8, device=device)
        zeroed = True
    else:
        require_byte_buffer(buf, "carve_layer_major buf")
        if buf.numel() != plan.total_bytes:
            raise ValueError(
                f"carve_layer_major buf holds {buf.numel()} bytes; the groups are priced at "
                f"{plan.total_bytes}"
            )
        require_aligned(buf, plan.align, "carve_layer_major buf")
        zeroed = False
    pieces = carve(buf, plan)
    return [
        LayerMajorArena(g, entries, buf=pieces[f"group{i}"], align=align, zeroed=zeroed)
        if len(g)
        else None
        for i, g in enumerate(groups)
    ]
