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
    mask = cols < length
    if GATHER:
        words = tl.load(pool_ptr + pool_off + cols, mask=mask)
        tl.store(staging_ptr + staging_off + cols, words, mask=mask)
    else:
        words = tl.load(staging_ptr + staging_off + cols, mask=mask)
        tl.store(pool_ptr + pool_off + cols, words, mask=mask)


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
) -> None:
    """Move ``ids``' blocks between ``region_set``'s storage and ``staging`` (``(n,
    block_bytes)`` uint8, contiguous, on the set's device) in one launch."""
    if direction not in ("gather", "scatter"):
        raise ValueError(f"direction {direction!r} is not 'gather' or 'scatter'")
    if staging.device != region_set.device or not staging.is_contiguous():
        raise ValueError(
            f"staging must be contiguous on {region_set.device}, got {staging.device} "
            f"stride {staging.stride()}"
        )
    word = region_set.word_bytes_for(staging)
    aligned16 = (region_set.alignment % 16 == 0) and (staging.data_ptr() % 16 == 0)
    vec = 16 // word if aligned16 else 1
    table, pieces = region_set.table(word, piece_bytes)
    if pieces == 0:
        return
    block_words = region_set.layout.block_bytes // word
    pool = region_set.storage_words(word)
    staged = staging.view(-1).view(pool.dtype)
    grid = (ids.numel() * pieces,)
    piece = piece_bytes // word
    if (word, vec) in _UNHINTED:
        vec = 1
    args = (pool, staged, ids, table, pieces, block_words)
    try:
        _move_kernel[grid](
            *args, PIECE=piece, VEC=vec, GATHER=direction == "gather", num_warps=num_warps
        )
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
        _move_kernel[grid](
            *args, PIECE=piece, VEC=1, GATHER=direction == "gather", num_warps=num_warps
        )
