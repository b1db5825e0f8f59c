"""Regions: named byte ranges of one buffer, placed on a 256 B boundary.

The target's KV, its dequantization scales, an indexer's keys and a draft's
sibling pool were once five `torch.zeros` under five runner attributes while
the budget treated them as one entry class: sizing said one pool, memory was
five. They are one buffer now, and `plan_regions` / `carve` is the placement
rule the runner's pool, a pool's field groups and a builder's several pools
share, so the P/D decode side carves an imported buffer with the same walk
instead of being told the offsets, and the two ends cannot disagree about
where a region starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .byte_view import require_byte_buffer
from .entry_field import DEFAULT_ALIGN, round_up
from .refusals import require_align, require_count


@dataclass(frozen=True)
class Region:
    """`nbytes` bytes of a buffer starting `offset` bytes from its front."""

    name: str
    offset: int
    nbytes: int

    @property
    def stop(self) -> int:
        return self.offset + self.nbytes


@dataclass(frozen=True)
class RegionPlan:
    """Where each region sits, and how long a buffer must be to hold them all.

    `total_bytes` is the end of the last region measured from the buffer's
    front, so it includes `base` and every alignment gap.
    """

    regions: tuple[Region, ...]
    total_bytes: int
    align: int
    base: int

    def __getitem__(self, name: str) -> Region:
        for region in self.regions:
            if region.name == name:
                return region
        raise KeyError(f"no region named {name!r}; the plan holds {[r.name for r in self.regions]}")

    @property
    def padding_bytes(self) -> int:
        """Bytes of the plan, after `base`, that belong to no region."""
        return self.total_bytes - self.base - sum(r.nbytes for r in self.regions)


def plan_regions(
    sizes: Sequence[tuple[str, int]], *, align: int = DEFAULT_ALIGN, base: int = 0
) -> RegionPlan:
    """Place `(name, nbytes)` regions in order, each starting on `align`.

    `base` is where the first region may start (a buffer whose front is
    already taken); regions are packed after it with only the gaps alignment
    asks for. A zero-byte region is legal and takes no room.
    """
    require_align("plan_regions align", align)
    require_count("plan_regions base", base)
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence):
        raise TypeError(f"plan_regions takes a sequence of (name, nbytes), got {sizes!r}")
    regions: list[Region] = []
    seen: set[str] = set()
    cursor = base
    for item in sizes:
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError(f"plan_regions takes (name, nbytes) pairs, got {item!r}")
        name, nbytes = item
        if not isinstance(name, str):
            raise TypeError(f"region name must be a str, got {name!r}")
        if name in seen:
            raise ValueError(f"region name {name!r} is planned twice")
        seen.add(name)
        require_count(f"region {name!r} nbytes", nbytes)
        offset = round_up(cursor, align)
        regions.append(Region(name, offset, nbytes))
        cursor = offset + nbytes
    return RegionPlan(tuple(regions), cursor, align, base)


def carve(buf: torch.Tensor, plan: RegionPlan) -> dict[str, torch.Tensor]:
    """Slice `buf` into the plan's regions, refusing a buffer that is too short.

    Slicing past the end truncates, so without the length check a short buffer
    came back as a short last region and surfaced later as an arena
    complaining about bytes the caller never chose, in a place it did not
    slice. A longer buffer is accepted: its tail belongs to no region.

    Each region is a view of `buf`: it shares its storage, and its
    `storage_offset()` is the region's absolute position in that storage.
    """
    require_byte_buffer(buf, "carve buffer")
    if not isinstance(plan, RegionPlan):
        raise TypeError(f"carve takes a RegionPlan, got {type(plan).__name__}")
    if buf.numel() < plan.total_bytes:
        raise ValueError(
            f"carve buffer holds {buf.numel()} bytes; the plan needs {plan.total_bytes}"
        )
    return {r.name: buf[r.offset : r.stop] for r in plan.regions}
