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

import functools
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
#: ``persistent``: 0 launches one program a piece; ``k`` launches ``k`` programs a multiprocessor
#: that loop over the pieces (a grid-stride loop), so no program starts, looks up its id and row
#: and exits per 16 KiB. ``prefetch`` (persistent only): a program issues the loads of its next
#: piece before the stores of the current one, so its own bytes are in flight while it looks up
#: the next piece's id and row. ``one_region``: a set of one region (an entry-major arena, a state
#: pool) computes its pieces' offsets from three scalars instead of loading a table row.
DEFAULT_OPTIONS = {
    "full_fast": True,
    "streaming": False,
    "persistent": 0,
    "prefetch": False,
    "one_region": True,
}


@triton.jit
def _piece_ends(
    t,
    pool_ptr,
    staging_ptr,
    ids_ptr,
    table_ptr,
    pieces,
    block_words,
    base,
    stride,
    span,
    PIECE: tl.constexpr,
    VEC: tl.constexpr,
    GATHER: tl.constexpr,
    ONE: tl.constexpr,
):
    """Piece ``t`` of the launch: its source, its destination and its length in words."""
    i = t // pieces
    p = t - i * pieces
    unit = tl.load(ids_ptr + i)
    if ONE:
        start = p * PIECE
        pool_off = base + unit * stride + start
        staging_off = i * block_words + start
        length = tl.minimum(span - start, PIECE)
    else:
        row = table_ptr + p * 4
        pool_off = tl.load(row) + unit * tl.load(row + 1)
        staging_off = i * block_words + tl.load(row + 2)
        length = tl.load(row + 3)
    if VEC > 1:
        pool_off = tl.multiple_of(pool_off, VEC)
        staging_off = tl.multiple_of(staging_off, VEC)
        length = tl.multiple_of(length, VEC)
    if GATHER:
        return pool_ptr + pool_off, staging_ptr + staging_off, length
    else:
        return staging_ptr + staging_off, pool_ptr + pool_off, length


@triton.jit
def _load(src, cols, length, MASKED: tl.constexpr, STREAMING: tl.constexpr):
    if MASKED:
        if STREAMING:
            return tl.load(src + cols, mask=cols < length, eviction_policy="evict_first")
        else:
            return tl.load(src + cols, mask=cols < length)
    else:
        if STREAMING:
            return tl.load(src + cols, eviction_policy="evict_first")
        else:
            return tl.load(src + cols)


@triton.jit
def _store(dst, cols, words, length, MASKED: tl.constexpr, STREAMING: tl.constexpr):
    if MASKED:
        if STREAMING:
            tl.store(dst + cols, words, mask=cols < length, cache_modifier=".cs")
        else:
            tl.store(dst + cols, words, mask=cols < length)
    else:
        if STREAMING:
            tl.store(dst + cols, words, cache_modifier=".cs")
        else:
            tl.store(dst + cols, words)


@triton.jit
def _move_piece(src, dst, cols, length, PIECE: tl.constexpr, FULL_FAST: tl.constexpr,
                STREAMING: tl.constexpr):  # fmt: skip
    if FULL_FAST and length == PIECE:
        _store(dst, cols, _load(src, cols, length, False, STREAMING), length, False, STREAMING)
    else:
        _store(dst, cols, _load(src, cols, length, True, STREAMING), length, True, STREAMING)


@triton.jit
def _move_kernel(
    pool_ptr,
    staging_ptr,
    ids_ptr,
    table_ptr,
    pieces,
    block_words,
    total,
    base,
    stride,
    span,
    PIECE: tl.constexpr,
    VEC: tl.constexpr,
    GATHER: tl.constexpr,
    FULL_FAST: tl.constexpr,
    STREAMING: tl.constexpr,
    ONE: tl.constexpr,
    PERSISTENT: tl.constexpr,
    PREFETCH: tl.constexpr,
):
    cols = tl.arange(0, PIECE)
    pid = tl.program_id(0).to(tl.int64)
    if not PERSISTENT:
        src, dst, length = _piece_ends(
            pid, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base, stride,
            span, PIECE, VEC, GATHER, ONE,
        )  # fmt: skip
        _move_piece(src, dst, cols, length, PIECE, FULL_FAST, STREAMING)
    elif not PREFETCH:
        nprog = tl.num_programs(0).to(tl.int64)
        for t in range(pid, total, nprog):
            src, dst, length = _piece_ends(
                t, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base,
                stride, span, PIECE, VEC, GATHER, ONE,
            )  # fmt: skip
            _move_piece(src, dst, cols, length, PIECE, FULL_FAST, STREAMING)
    else:
        # Two pieces deep: piece t's loads are issued before piece t - nprog's stores wait on
        # theirs. The grid never exceeds ``total``, so every program has a first piece.
        nprog = tl.num_programs(0).to(tl.int64)
        src, dst, length = _piece_ends(
            pid, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base, stride,
            span, PIECE, VEC, GATHER, ONE,
        )  # fmt: skip
        words = _load(src, cols, length, True, STREAMING)
        for t in range(pid + nprog, total, nprog):
            nsrc, ndst, nlength = _piece_ends(
                t, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base,
                stride, span, PIECE, VEC, GATHER, ONE,
            )  # fmt: skip
            nwords = _load(nsrc, cols, nlength, True, STREAMING)
            _store(dst, cols, words, length, True, STREAMING)
            words, dst, length = nwords, ndst, nlength
        _store(dst, cols, words, length, True, STREAMING)


#: (word, vec) pairs whose hinted compile failed: moved unhinted from then on, and said once.
_UNHINTED: set[tuple[int, int]] = set()


@functools.cache
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def _programs(device: torch.device, total: int, per_sm: int) -> int:
    """A persistent grid: ``per_sm`` programs a multiprocessor, never more than the pieces (the
    prefetching loop starts every program on a piece of its own)."""
    sms = _multiprocessors(device.index or 0) if device.type == "cuda" else 4
    return max(1, min(total, per_sm * sms))


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
    persistent = opts["persistent"]
    if isinstance(persistent, bool) or not isinstance(persistent, int) or persistent < 0:
        raise ValueError(
            f"persistent must be 0 (a program a piece) or programs a multiprocessor, "
            f"got {persistent!r}"
        )
    if opts["prefetch"] and not persistent:
        raise ValueError("prefetch needs a persistent grid (persistent > 0)")
    word = region_set.word_bytes_for(staging)
    vec = 16 // word if region_set.alignment % 16 == 0 and staging.data_ptr() % 16 == 0 else 1
    if (word, vec) in _UNHINTED:
        vec = 1
    pool, table, pieces = region_set.plan(word, piece_bytes)
    if pieces == 0:
        return None
    one = region_set.one_range() if opts["one_region"] else None
    base, stride, span = (v // word for v in one) if one else (0, 0, 0)
    staged = staging.view(pool.dtype)
    total = ids.numel() * pieces
    grid = (_programs(region_set.device, total, persistent) if persistent else total,)
    args = (pool, staged, ids, table, pieces, region_set.layout.block_bytes // word, total,
            base, stride, span)  # fmt: skip
    consts = dict(
        PIECE=piece_bytes // word,
        GATHER=direction == "gather",
        FULL_FAST=opts["full_fast"],
        STREAMING=opts["streaming"],
        ONE=one is not None,
        PERSISTENT=persistent > 0,
        PREFETCH=bool(opts["prefetch"]),
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
