"""The Triton block-transfer kernels: one launch moves every region of every block.

Optional, GPU only, imported only by :meth:`atom.kernels.block_transfer.RegionSet.gather` and
``scatter`` when they run on a CUDA device: this module runs ``@triton.jit`` at import, so a test
importing it must ``pytest.importorskip("triton")`` first. The specification is the torch
reference in ``block_transfer`` (``impl="torch"``); this is checked against it bit for bit.

One program moves one *piece*: at most ``PIECE_BYTES`` of one region's span of one block. The
region set's table (built once per set, ``RegionSet.table``) lists every piece of a block --
source offset, the region's stride, offset in the staged block, length, all in words -- so
program ``pid`` is piece ``pid % pieces`` of block ``ids[pid // pieces]``, and a launch covers
every region and block however the pool is laid out: 64 ranges a block (a layer-major pool of 32
layers) cost what one range a block does (an entry-major pool), a piece each.

Bandwidth comes from width: the words are the widest every address in the table is a multiple
of, and when every address is also 16-byte aligned the compiler is told so (``VEC``), so each
thread moves 16 bytes an access, the width a plain device copy uses.
"""

from __future__ import annotations

import warnings

import torch
import triton
import triton.language as tl

#: Warps per program: 4 x 32 threads x 16 B x 8 accesses = a 16 KiB piece in flight at once.
NUM_WARPS = 4
#: Options of the kernel a caller (the bench) may vary; these are what every call uses.
#: ``full_fast``: a whole piece (all but each region's last) moves unmasked, so nothing about
#: the mask can narrow its accesses; ``streaming``: loads evict first and stores bypass L1/L2
#: retention (``.cs``), the bytes of a transfer being read and written once.
DEFAULT_OPTIONS = {"full_fast": True, "streaming": False}


@triton.jit
def _move_kernel(
    pool_ptr,
    staging_ptr,
    ids_ptr,
    table_ptr,
    pieces,
    block_words,
    PIECE: tl.constexpr,
    VEC: tl.constexpr,
    GATHER: tl.constexpr,
    FULL_FAST: tl.constexpr,
    STREAMING: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    i = pid // pieces
    p = pid - i * pieces
    unit = tl.load(ids_ptr + i)
    row = table_ptr + p * 4
    pool_off = tl.load(row) + unit * tl.load(row + 1)
    staging_off = i * block_words + tl.load(row + 2)
    length = tl.load(row + 3)
    if VEC > 1:
        pool_off = tl.multiple_of(pool_off, VEC)
        staging_off = tl.multiple_of(staging_off, VEC)
        length = tl.multiple_of(length, VEC)
    cols = tl.arange(0, PIECE)
    if GATHER:
        src = pool_ptr + pool_off + cols
        dst = staging_ptr + staging_off + cols
    else:
        src = staging_ptr + staging_off + cols
        dst = pool_ptr + pool_off + cols
    if FULL_FAST and length == PIECE:
        if STREAMING:
            words = tl.load(src, eviction_policy="evict_first")
            tl.store(dst, words, cache_modifier=".cs")
        else:
            words = tl.load(src)
            tl.store(dst, words)
    else:
        mask = cols < length
        if STREAMING:
            words = tl.load(src, mask=mask, eviction_policy="evict_first")
            tl.store(dst, words, mask=mask, cache_modifier=".cs")
        else:
            words = tl.load(src, mask=mask)
            tl.store(dst, words, mask=mask)


#: (word, vec) pairs whose hinted compile failed: moved unhinted from then on, and said once.
_UNHINTED: set[tuple[int, int]] = set()


def launch(
    region_set,
    direction: str,
    staging: torch.Tensor,
    ids: torch.Tensor,
    *,
    piece_bytes: int,
    num_warps: int = NUM_WARPS,
    **options,
):
    """Move ``ids``' blocks between ``region_set``'s storage and ``staging`` (``(n,
    block_bytes)`` uint8, contiguous, on the set's device) in one launch; returns triton's
    compiled kernel (its ``asm`` is what the bench inspects)."""
    if direction not in ("gather", "scatter"):
        raise ValueError(f"direction {direction!r} is not 'gather' or 'scatter'")
    if staging.device != region_set.device or not staging.is_contiguous():
        raise ValueError(
            f"staging must be contiguous on {region_set.device}, got {staging.device} "
            f"stride {staging.stride()}"
        )
    unknown = set(options) - set(DEFAULT_OPTIONS)
    if unknown:
        raise ValueError(
            f"unknown kernel options {sorted(unknown)}; known: {sorted(DEFAULT_OPTIONS)}"
        )
    opts = {**DEFAULT_OPTIONS, **options}
    word = region_set.word_bytes_for(staging)
    vec = 16 // word if region_set.alignment % 16 == 0 and staging.data_ptr() % 16 == 0 else 1
    if (word, vec) in _UNHINTED:
        vec = 1
    pool, table, pieces = region_set.plan(word, piece_bytes)
    if pieces == 0:
        return None
    staged = staging.view(pool.dtype)
    grid = (ids.numel() * pieces,)
    args = (pool, staged, ids, table, pieces, region_set.layout.block_bytes // word)
    consts = dict(
        PIECE=piece_bytes // word,
        GATHER=direction == "gather",
        FULL_FAST=opts["full_fast"],
        STREAMING=opts["streaming"],
        num_warps=num_warps,
    )
    try:
        return _move_kernel[grid](*args, VEC=vec, **consts)
    except triton.CompilationError as exc:  # pragma: no cover - depends on the triton build
        if vec == 1:
            raise
        _UNHINTED.add((word, vec))
        warnings.warn(
            f"block transfer: the {word}-byte-word kernel did not compile with its 16-byte "
            f"alignment hint ({exc.__class__.__name__}); moving unhinted",
            RuntimeWarning,
            stacklevel=3,
        )
        return _move_kernel[grid](*args, VEC=1, **consts)
