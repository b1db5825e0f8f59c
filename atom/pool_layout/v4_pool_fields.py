"""What a DeepSeek-V4 row is: the planes, the compressor state, the indexer block.

Four hand-written byte formulas in the V4 backend each described a layout
that was also described somewhere else (in ATOM before pull request #2147): how many planes
a build has was answered five ways, an indexer block's cost two, where its two
regions sit four. Each is one declaration here; the backend keeps the policy
(fp8 or bf16 KV, an fp4 or fp8 indexer) and the shapes follow from the answer
with no branch of their own. `v4_pool_geometry` says where rows go.

  planes      `plane_row_widths`: two planes on fp8 (packed NoPE, bf16 RoPE),
              ONE on bf16, which keeps RoPE inline in the NoPE row -- a bf16
              build declares one plane instead of two with one set to zero.
  state       `compressor_state_fields`: a `[kv, score]` fp32 pair per
              compressor (CSA main, CSA indexer, HCA main); scores start at
              -inf so an unwritten ring position loses the softmax.
  split       `plan_shared_row_planes`: which plane each state field lives in.
              Every plane materializes the SAME rows, so a slot that reserves
              `r` rows offers `r x width_p` bytes in plane `p`; the plan
              minimises the rows the state takes, `max_p ceil(bytes_p /
              width_p)`. That is not `field_planes.plan_field_planes`' question
              (planes with rows of their own, where fields price apart and the
              minimum decomposes per field): here the planes share one row
              count and the fields compete for it, so the minimum does not
              decompose and is found by enumeration, bounded.
  indexer     `indexer_block_regions`: one CSA layer's indexer block, regions
              packed with NOTHING between them. Every consumer recomputes a
              region's start from `rows` and the head dim rather than reading
              one, so borrowing `entry_field.walk`'s aligned placement would
              introduce exactly the gap that goes unnoticed. Both shipped
              layouts happen to land on 256 B, which is why the tests scan head
              dims and pin one case that does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from .entry_field import DEFAULT_ALIGN, EntryField, walk
from .refusals import require_align, require_count

#: fp4 indexer geometry: 128-wide K tiles, 4 sub-tiles, 16 packed bytes a group of 32.
FP4_K_TILE = 128
FP4_SUBTILES = 4
FP4_GROUP_BYTES = 16
#: fp8 indexer keys carry one fp32 dequantization scale per row.
FP8_INDEX_SCALE_BYTES = 4
#: Assignments `plan_shared_row_planes` will enumerate before refusing (V4 has 6 fields, 2 planes).
MAX_ASSIGNMENTS = 1 << 16


def plane_row_widths(*, kv_fp8: bool, head_dim: int, rope_head_dim: int) -> tuple[int, ...]:
    """Bytes one row costs in each plane: `(head_dim x 1, rope x 2)` on fp8, `(head_dim x 2,)`
    on bf16 -- the single answer to how many planes a build has."""
    require_count("V4 head_dim", head_dim, minimum=1)
    require_count("V4 rope_head_dim", rope_head_dim, minimum=1)
    if rope_head_dim > head_dim:
        raise ValueError(
            f"V4 rope_head_dim {rope_head_dim} exceeds the head_dim {head_dim} it sits inside"
        )
    if kv_fp8:
        return (head_dim * torch.float8_e4m3fn.itemsize, rope_head_dim * torch.bfloat16.itemsize)
    return (head_dim * torch.bfloat16.itemsize,)


def compressor_state_fields(
    *, csa_layers: int, hca_layers: int, head_dim: int, index_head_dim: int, ring_extra: int
) -> list[EntryField]:
    """One request's compressor state, in the wire order of a slot.

    CSA (ratio 4, overlapping) keeps `2 x 4 + ring_extra` ring positions of `2 x head_dim`
    (main) and `2 x index_head_dim` (indexer); HCA (ratio 128, no overlap) keeps
    `128 + ring_extra` of `head_dim`. `ring_extra` is the speculative lookahead: a rejected
    draft's writes must fall outside the next round's read window. A class with no layers
    declares no field (a field of zero rows is not a field).
    """
    require_count("csa_layers", csa_layers)
    require_count("hca_layers", hca_layers)
    require_count("ring_extra", ring_extra)
    f32 = torch.float32
    neg_inf = float("-inf")
    fields: list[EntryField] = []
    if csa_layers:
        main = (2 * CSA_RING + ring_extra, 2 * head_dim)
        idx = (2 * CSA_RING + ring_extra, 2 * index_head_dim)
        fields += [
            EntryField("csa_main_kv", csa_layers, main, f32),
            EntryField("csa_main_score", csa_layers, main, f32, fill=neg_inf),
            EntryField("csa_idx_kv", csa_layers, idx, f32),
            EntryField("csa_idx_score", csa_layers, idx, f32, fill=neg_inf),
        ]
    if hca_layers:
        main = (HCA_RING + ring_extra, head_dim)
        fields += [
            EntryField("hca_main_kv", hca_layers, main, f32),
            EntryField("hca_main_score", hca_layers, main, f32, fill=neg_inf),
        ]
    return fields


#: Ring positions a compressor commits: CSA pools 4 tokens with overlap (2 x 4), HCA 128.
CSA_RING = 4
HCA_RING = 128


def plane_state_bytes(fields: Sequence[EntryField]) -> int:
    """Bytes a plane's share of the state takes a slot: its arena's walk (0 B for no fields)."""
    return walk(fields, align=DEFAULT_ALIGN).entry_bytes


def plan_shared_row_planes(
    fields: Sequence[EntryField], plane_widths: Sequence[int]
) -> tuple[list[list[EntryField]], int]:
    """`(fields per plane, rows)`: the split of `fields` over planes sharing one row count that
    takes the fewest rows, `max_p ceil(plane_state_bytes(plane p) / width_p)`.

    Exact: every assignment is tried, field 0 the least significant digit, and the first with
    the fewest rows wins, so one field list maps to one layout every run (and to the engine's).
    Field order inside a plane stays the declared order -- the order a checkpoint and a transfer
    see the bytes in. Past `MAX_ASSIGNMENTS` the question is refused rather than answered
    approximately.
    """
    if isinstance(plane_widths, (str, bytes)) or not isinstance(plane_widths, Sequence):
        raise TypeError(f"plane_widths must be a sequence of ints, got {plane_widths!r}")
    if not plane_widths:
        raise ValueError("a row space needs at least one plane")
    for p, w in enumerate(plane_widths):
        require_align(f"plane_widths[{p}]", w)
    fields = list(fields)
    for f in fields:
        if not isinstance(f, EntryField):
            raise TypeError(f"plan_shared_row_planes takes EntryField items, got {f!r}")
    planes = len(plane_widths)
    assignments = planes ** len(fields)
    if assignments > MAX_ASSIGNMENTS:
        raise ValueError(
            f"{len(fields)} fields over {planes} planes is {assignments} assignments; "
            f"refusing more than {MAX_ASSIGNMENTS}"
        )

    def split(code: int) -> list[list[EntryField]]:
        groups: list[list[EntryField]] = [[] for _ in plane_widths]
        for f in fields:
            groups[code % planes].append(f)
            code //= planes
        return groups

    def rows(code: int) -> int:
        return max(
            -(-plane_state_bytes(g) // w) for g, w in zip(split(code), plane_widths, strict=True)
        )

    best = min(range(assignments), key=lambda code: (rows(code), code))
    return split(best), rows(best)


@dataclass(frozen=True)
class IndexerRegion:
    """One region of a CSA layer's indexer block: `[offset, offset + nbytes)`, with the shape
    and dtype consumers read it as."""

    name: str
    offset: int
    nbytes: int
    shape: tuple[int, ...]
    dtype: torch.dtype


def indexer_block_regions(
    rows: int, index_head_dim: int, *, fp4: bool
) -> tuple[IndexerRegion, ...]:
    """The regions of one CSA layer's indexer block of `rows` compressed rows, back to back.

    fp8: `[rows x index_head_dim fp8 keys][rows x 4 B fp32 scales]` -- two regions, not
    interleaved per row (written by `indexer_k_quant_and_cache`, read by
    `cp_gather_indexer_k_quant_cache` and `deepgemm_fp8_paged_mqa_logits`).
    fp4: the `pa_mqa_logits_fp4` preshuffle, `[k_tiles, 4, rows, 16]` packed E2M1 bytes then
    `[k_tiles, 4, rows]` e8m0 scale bytes, `k_tiles = index_head_dim / 128`.
    """
    require_count("indexer rows", rows, minimum=1)
    require_count("index_head_dim", index_head_dim, minimum=1)
    if fp4:
        if index_head_dim % FP4_K_TILE:
            raise ValueError(
                f"an fp4 indexer needs index_head_dim a multiple of {FP4_K_TILE}, "
                f"got {index_head_dim}"
            )
        k_tiles = index_head_dim // FP4_K_TILE
        data_shape = (k_tiles, FP4_SUBTILES, rows, FP4_GROUP_BYTES)
        scale_shape = (k_tiles, FP4_SUBTILES, rows)
        u8 = torch.uint8
        data = k_tiles * FP4_SUBTILES * rows * FP4_GROUP_BYTES
        return (
            IndexerRegion("index_kv", 0, data, data_shape, u8),
            IndexerRegion("index_scale", data, k_tiles * FP4_SUBTILES * rows, scale_shape, u8),
        )
    data = rows * index_head_dim * torch.float8_e4m3fn.itemsize
    return (
        IndexerRegion("index_kv", 0, data, (rows, index_head_dim), torch.float8_e4m3fn),
        IndexerRegion("index_scale", data, rows * FP8_INDEX_SCALE_BYTES, (rows,), torch.float32),
    )


def indexer_block_bytes(rows: int, index_head_dim: int, *, fp4: bool) -> int:
    """Bytes one CSA layer's indexer block costs: the regions' sum, nothing between them."""
    regions = indexer_block_regions(rows, index_head_dim, fp4=fp4)
    return regions[-1].offset + regions[-1].nbytes
