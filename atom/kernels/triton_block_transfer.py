"""The Triton block-transfer kernels: one launch moves every region of every block.

Optional, GPU only, imported only by :meth:`atom.kernels.block_transfer.RegionSet.gather` and
``scatter`` when they run on a CUDA device: this module runs ``@triton.jit`` at import, so a test
importing it must ``pytest.importorskip("triton")`` first. The specification is the torch
reference in ``block_transfer`` (``impl="torch"``); this is checked against it bit for bit.

A launch moves *pieces*: at most ``KernelConfig.piece_bytes`` of one range of one block. The
region set's table (built once per set, ``RegionSet.table``) lists every piece of a block --
source offset, the range's stride, offset in the staged block, length, all in words -- so piece
``t`` of a launch is piece ``t % pieces`` of block ``ids[t // pieces]``, and a launch covers every
region and block however the pool is laid out: 64 ranges a block (a layer-major pool of 32
layers) cost what one range a block does (an entry-major pool), a piece each. A block that is one
range needs no table: its pieces are computed from the range's base, stride and span.

Either program ``t`` moves piece ``t`` (``persistent=0``), or a grid of a few programs a
multiprocessor loops over the pieces, optionally issuing the next piece's loads before the
current one's stores (``prefetch``); and a program may move the same piece of several blocks
(``blocks_per_program``), a launch of that many times fewer programs. ``KernelConfig`` says which,
and the bench which is fastest.

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


@triton.jit
def _piece_ends(
    i,
    p,
    pool_ptr,
    staging_ptr,
    ids_ptr,
    table_ptr,
    block_words,
    base,
    stride,
    span,
    PIECE: tl.constexpr,
    VEC: tl.constexpr,
    GATHER: tl.constexpr,
    ONE: tl.constexpr,
):
    """Piece ``p`` of block ``i`` of the ids: its source, its destination and its length in
    words."""
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
def _move_group(
    t, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base, stride, span, nids,
    cols, PIECE: tl.constexpr, VEC: tl.constexpr, GATHER: tl.constexpr,
    FULL_FAST: tl.constexpr, STREAMING: tl.constexpr, ONE: tl.constexpr, BLOCKS: tl.constexpr,
):  # fmt: skip
    """Task ``t``: piece ``t % pieces`` of the ``BLOCKS`` ids of group ``t // pieces`` -- the same
    range of several blocks, so one program's addresses differ by the blocks' strides only."""
    g = t // pieces
    p = t - g * pieces
    for j in tl.static_range(BLOCKS):
        i = g * BLOCKS + j
        if i < nids:
            src, dst, length = _piece_ends(
                i, p, pool_ptr, staging_ptr, ids_ptr, table_ptr, block_words, base, stride,
                span, PIECE, VEC, GATHER, ONE,
            )  # fmt: skip
            _move_piece(src, dst, cols, length, PIECE, FULL_FAST, STREAMING)


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
    nids,
    PIECE: tl.constexpr,
    VEC: tl.constexpr,
    GATHER: tl.constexpr,
    FULL_FAST: tl.constexpr,
    STREAMING: tl.constexpr,
    ONE: tl.constexpr,
    PERSISTENT: tl.constexpr,
    PREFETCH: tl.constexpr,
    BLOCKS: tl.constexpr,
):
    cols = tl.arange(0, PIECE)
    pid = tl.program_id(0).to(tl.int64)
    if not PERSISTENT:
        _move_group(
            pid, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base, stride,
            span, nids, cols, PIECE, VEC, GATHER, FULL_FAST, STREAMING, ONE, BLOCKS,
        )  # fmt: skip
    elif not PREFETCH:
        nprog = tl.num_programs(0).to(tl.int64)
        for t in range(pid, total, nprog):
            _move_group(
                t, pool_ptr, staging_ptr, ids_ptr, table_ptr, pieces, block_words, base, stride,
                span, nids, cols, PIECE, VEC, GATHER, FULL_FAST, STREAMING, ONE, BLOCKS,
            )  # fmt: skip
    else:
        # Two pieces deep: piece t's loads are issued before piece t - nprog's stores wait on
        # theirs. The grid never exceeds ``total``, so every program has a first piece.
        # (One block a task: ``KernelConfig`` refuses prefetching with several a program.)
        nprog = tl.num_programs(0).to(tl.int64)
        src, dst, length = _piece_ends(
            pid // pieces, pid % pieces, pool_ptr, staging_ptr, ids_ptr, table_ptr, block_words,
            base, stride, span, PIECE, VEC, GATHER, ONE,
        )  # fmt: skip
        words = _load(src, cols, length, True, STREAMING)
        for t in range(pid + nprog, total, nprog):
            nsrc, ndst, nlength = _piece_ends(
                t // pieces, t % pieces, pool_ptr, staging_ptr, ids_ptr, table_ptr, block_words,
                base, stride, span, PIECE, VEC, GATHER, ONE,
            )  # fmt: skip
            nwords = _load(nsrc, cols, nlength, True, STREAMING)
            _store(dst, cols, words, length, True, STREAMING)
            words, dst, length = nwords, ndst, nlength
        _store(dst, cols, words, length, True, STREAMING)


#: (word, vec) pairs whose hinted compile failed: moved unhinted from then on, and said once.
_UNHINTED: set[tuple[int, int]] = set()

#: Compiled kernels by what triton specialized them on (``_key``) and their constexprs: a later
#: call with the same key launches it directly (``KernelConfig.direct``).
_COMPILED: dict[tuple, object] = {}
#: How a compiled kernel is launched directly, found on the first direct launch, the first that
#: works of: "run" (its launcher, with the handles triton's own call passes -- triton 3.3 and
#: later), "all" (``compiled[grid](...)`` with every parameter, constexprs included), "runtime"
#: (the same without the constexprs, older triton), or "off" (none: the JIT path always). A
#: launcher parses an exact argument count, so a wrong guess raises before it launches.
_DIRECT: list[str] = ["unknown"]
_MODES = ("run", "all", "runtime")
#: Calls a region set remembers the prepared launch of (``launch``'s ``memo``).
_MEMO_CALLS = 16
_I32 = range(-(2**31), 2**31)


def _key(pointers: tuple, ints: tuple) -> tuple:
    """What triton specializes a launch on, over-approximated so two calls with one key compile
    to one kernel: per pointer (dtype, address) its dtype and whether it is 16-byte aligned; per
    int whether it is 1, a multiple of 16, and which integer type holds it."""
    return tuple((d, a % 16 == 0) for d, a in pointers) + tuple(
        (v == 1, v % 16 == 0, v in _I32, v >= 2**63) for v in ints
    )


def _hooked(hook) -> bool:
    """Whether a launch hook would do anything: triton 3.6 keeps an empty chain of hooks (a
    ``HookChain`` with no ``calls``) where older versions keep None, and calls it every launch
    -- two Python calls a launch for nothing, so an empty chain is passed as None."""
    return hook is not None and not (
        isinstance(getattr(hook, "calls", None), list) and not hook.calls
    )


def _launch_direct(compiled, grid: tuple, args: tuple, consts: tuple, device: int) -> bool:
    """Launch ``compiled`` through its own launcher, pointers passed as addresses (triton's
    launchers take an int for a pointer); False when no way works here (the caller then takes
    the JIT path)."""
    mode = _DIRECT[0]
    if mode == "off":
        return False
    for m in _MODES if mode == "unknown" else (mode,):
        try:
            if m == "run":
                hooks = triton.knobs.runtime
                if _hooked(hooks.launch_enter_hook) or _hooked(hooks.launch_exit_hook):
                    # A profiler's hooks want the launch metadata triton's own call builds.
                    compiled[grid](*args, *consts)
                else:
                    compiled.run(grid[0], grid[1], grid[2], torch._C._cuda_getCurrentRawStream(device),
                                 compiled.function, compiled.packed_metadata, None, None, None,
                                 *args, *consts)  # fmt: skip
            elif m == "all":
                compiled[grid](*args, *consts)
            else:
                compiled[grid](*args)
        except (TypeError, AttributeError):
            if mode != "unknown":
                raise
            continue
        _DIRECT[0] = m
        return True
    _DIRECT[0] = "off"
    warnings.warn(
        "block transfer: this triton's compiled kernels take no direct launch; launching "
        "through the JIT from now on",
        RuntimeWarning,
        stacklevel=4,
    )
    return False


@functools.cache
def _multiprocessors(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


def _programs(device: torch.device, total: int, per_sm: int) -> int:
    """A persistent grid: ``per_sm`` programs a multiprocessor, never more than the pieces (the
    prefetching loop starts every program on a piece of its own)."""
    sms = _multiprocessors(device.index or 0) if device.type == "cuda" else 4
    return max(1, min(total, per_sm * sms))


def relaunch(prepared: tuple) -> bool:
    """Launch again what a direct launch prepared (``RegionSet._last_prepared``): for a caller
    that knows its buffers are the ones that launch was prepared for. False where no direct
    launch works here."""
    return _launch_direct(*prepared)


def launch(region_set, direction: str, staging: torch.Tensor, ids: torch.Tensor, config):
    """Move ``ids``' blocks between ``region_set``'s storage and ``staging`` (``(n,
    block_bytes)`` uint8, contiguous, on the set's device) in one launch, as ``config`` (a
    ``block_transfer.KernelConfig``, checked when it was made) says; returns triton's compiled
    kernel (its ``asm`` is what the bench inspects)."""
    if direction not in ("gather", "scatter"):
        raise ValueError(f"direction {direction!r} is not 'gather' or 'scatter'")
    if staging.device != region_set.device or not staging.is_contiguous():
        raise ValueError(
            f"staging must be contiguous on {region_set.device}, got {staging.device} "
            f"stride {staging.stride()}"
        )
    # A call like an earlier one (same set, direction, launch, buffers, counts) launches what
    # that one computed: every argument below is a function of exactly these, and the set's
    # plan never changes. The launch loop of a transfer is such calls.
    memo = (direction, config, staging.data_ptr(), staging.numel(), staging.dtype,
            ids.data_ptr(), ids.numel(), ids.dtype)  # fmt: skip
    region_set._last_prepared = None
    prepared = region_set._launches.get(memo) if config.direct else None
    if prepared is not None and _launch_direct(*prepared):
        region_set._last_prepared = prepared
        return prepared[0]
    word = region_set.word_bytes_for(staging)
    vec = 16 // word if region_set.alignment % 16 == 0 and staging.data_ptr() % 16 == 0 else 1
    if (word, vec) in _UNHINTED:
        vec = 1
    pool, table, pieces = region_set.plan(word, config.piece_bytes)
    if pieces == 0:
        return None
    one = region_set.one_range() if config.one_region else None
    base, stride, span = (v // word for v in one) if one else (0, 0, 0)
    nids = ids.numel()
    groups = -(-nids // config.blocks_per_program)
    total = groups * pieces
    persistent = config.persistent
    grid = (_programs(region_set.device, total, persistent) if persistent else total, 1, 1)
    ints = (pieces, region_set.layout.block_bytes // word, total, base, stride, span, nids)
    # In the kernel's parameter order (what a direct launch passes after the other arguments).
    consts = (
        config.piece_bytes // word,  # PIECE
        vec,  # VEC
        direction == "gather",  # GATHER
        config.full_fast,  # FULL_FAST
        config.streaming,  # STREAMING
        one is not None,  # ONE
        persistent > 0,  # PERSISTENT
        config.prefetch,  # PREFETCH
        config.blocks_per_program,  # BLOCKS
    )
    key = None
    if config.direct and staging.device.type == "cuda":
        pointers = (
            (pool.dtype, pool.data_ptr()),
            (pool.dtype, staging.data_ptr()),
            (ids.dtype, ids.data_ptr()),
            (table.dtype, table.data_ptr()),
        )
        key = (staging.device.index, consts, config.num_warps, _key(pointers, ints))
        compiled = _COMPILED.get(key)
        if compiled is not None:
            prepared = (compiled, grid, (*(a for _, a in pointers), *ints), consts,
                        staging.device.index)  # fmt: skip
            if _launch_direct(*prepared):
                if len(region_set._launches) >= _MEMO_CALLS:
                    region_set._launches.clear()  # a caller cycling through many buffers
                region_set._launches[memo] = prepared
                region_set._last_prepared = prepared
                return compiled
    args = (pool, staging.view(pool.dtype), ids, table, *ints)
    names = (
        "PIECE", "VEC", "GATHER", "FULL_FAST", "STREAMING", "ONE", "PERSISTENT", "PREFETCH",
        "BLOCKS",
    )  # fmt: skip
    kwargs = dict(zip(names, consts, strict=True), num_warps=config.num_warps)
    try:
        compiled = _move_kernel[grid](*args, **kwargs)
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
        kwargs["VEC"] = 1
        return _move_kernel[grid](*args, **kwargs)
    if key is not None and hasattr(compiled, "__getitem__"):
        _COMPILED[key] = compiled
    return compiled
