"""A model's paged fields in the other layouts an arena can give them: what a transfer costs
from each.

The engine carves every paged pool layer-major (a row's region is one dense range, which is what
kernels read), so a block is one range per field per row. The same fields carved entry-major --
``EntryMajorArena``, one range a block -- or in planes of fixed widths -- ``SplitEntryMajorArena``,
one range per plane, DeepSeek-V4's layout -- hold the same bytes a block. These twins are built
from the pools' own field declarations, so a transfer over them moves a block of exactly that
model, and both the block-transfer tests and ``bench/gpu_transfer.py`` read the layouts from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch

from atom.pool_layout import EntryField, EntryMajorArena, SplitEntryMajorArena, plane_fields
from atom.pool_layout.transfer import TransferRegion

#: Plane widths of the split twin: a scale plane, a row plane and a wide plane.
PLANE_WIDTHS = (64, 512, 4096)
LAYOUTS = ("layer-major", "entry-major", "split-planes")


def paged_fields(runner: Any) -> list[EntryField]:
    """Every PAGE field of every builder's pools (target first, then a draft's), each named for
    its builder and pool so two pools' ``k`` stay two fields. A builder that allocates its own
    (DeepSeek-V4) declares no paged pool; its PAGE entry is what its transfer regions hold, one
    field of bytes a region (a plane's envelopes, a CSA layer's indexer block), which needs the
    runner built (``initialize``, on any device: ``meta`` allocates nothing)."""
    fields = []
    for builder in runner.builders():
        if not builder.paged_pools and runner.kv_transfer is not None:
            for r in builder.transfer_regions():
                fields.append(EntryField(r.semantic_role, 1, (r.unit_data_bytes,), torch.uint8))
        for pool_name, pool in builder.paged_pools.items():
            for group in pool.field_groups:
                for f in group:
                    fields.append(
                        dataclasses.replace(f, name=f"{builder.name}.{pool_name}.{f.name}")
                    )
    if not fields:
        raise ValueError(f"{runner.hf_config.source}: this model declares no paged field")
    return fields


def entry_major_twin(
    fields: Sequence[EntryField], blocks: int, *, device: torch.device | str = "cpu"
) -> tuple[EntryMajorArena, list[TransferRegion]]:
    """The fields carved entry-major: block ``u`` is one range, the arena's one region."""
    arena = EntryMajorArena(fields, blocks, device=device)
    return arena, arena.region_tensors()


def split_twin(
    fields: Sequence[EntryField],
    blocks: int,
    *,
    device: torch.device | str = "cpu",
    plane_widths: Sequence[int] = PLANE_WIDTHS,
) -> tuple[SplitEntryMajorArena, list[TransferRegion]]:
    """The fields carved into planes of ``plane_widths``: block ``u`` is one range a plane."""
    arena = SplitEntryMajorArena(plane_fields(fields, plane_widths), blocks, device=device)
    return arena, arena.region_tensors()
