"""Whole-block transfer bandwidth per model and layout: the Triton kernel against a plain copy of
the same bytes and against the per-region ``index_select``, on a GPU.

For each model in the registry (and each draft pair), each layout -- the pools as the engine
carves them (layer-major: one range per field per row a block), the same fields entry-major (one
range a block) and in planes (one range per plane) -- and 256 and 2,048 blocks, it times, launched
round-robin so drift hits all alike (CUDA events, median of the repetitions):

- ``kernel``: ``RegionSet.gather`` with the Triton kernel, random block ids of a pool half as
  large again, into one staging buffer; ``scatter``: the same blocks back;
- ``index_select``: the reference's reading, one ``index_select`` per region into its own
  output (the torch path the kernel replaces);
- ``copy``: ``Tensor.copy_`` of the same number of bytes, contiguous to contiguous.

Bandwidth counts bytes read plus bytes written (2 x blocks x block bytes), as the device's copy
bandwidth is counted. Targets: the kernel at >= 85% of the device's copy bandwidth from every
layout, and within 5% of a plain copy from entry-major pools. Before timing, every staged byte is
compared with the reference's (a wrong kernel is not a fast one).

Usage (GPU machine): ``python bench/gpu_transfer.py [--models a,b] [--kv-dtypes bf16,fp8]
[--blocks 256,2048] [--reps 20] [--sweep]``; ``--sweep`` adds a table of piece sizes and warps
on the layer-major pools.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import statistics
import sys
import time

import torch


def _time_round_robin(
    fns: dict[str, object], reps: int, *, inner: int = 1, steady: bool = True
) -> dict[str, float]:
    """Median ms a call of each, launched in turn so clock and thermal drift hit all alike.

    A sample is ``inner`` calls back to back between two events: the host's work for one call
    (argument checks, the launch) then overlaps the device's work for the one before, which is
    how a transfer loop runs. ``steady``: one more call is issued before the first event, so the
    sample starts with the device already busy, as in a loop, instead of idle while the host
    issues its first call (which charged every sample one call's host time -- 40 us of a 4 ms
    sample for the kernel, a few for ``copy_``). ``steady=False, inner=1`` is a call alone, host
    work included.
    """
    for fn in fns.values():  # warm-up: compile, cache, allocator
        fn()
        fn()
    torch.cuda.synchronize()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if steady:
                fn()
            start.record()
            for _ in range(inner):
                fn()
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) / inner)
    return {k: statistics.median(v) for k, v in times.items()}


def _inner_for(nbytes: int, copy_gbps: float, *, sample_ms: float = 4.0) -> int:
    """Calls a sample takes so it lasts ``sample_ms`` at copy speed (at least 1, at most 50)."""
    per_call_ms = 2 * nbytes / (copy_gbps * 1e9) * 1e3
    return max(1, min(50, round(sample_ms / per_call_ms)))


def _gbps(nbytes: int, ms: float) -> float:
    return 2 * nbytes / (ms * 1e-3) / 1e9


def device_copy_gbps(nbytes: int = 4 << 30, reps: int = 20) -> float:
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    ms = _time_round_robin({"copy": lambda: dst.copy_(src)}, reps)["copy"]
    return _gbps(nbytes, ms)


class DoesNotFit(ValueError):
    """A row the device's free memory cannot hold, named with both numbers."""


#: Of the device's free memory, what a row may plan to take: the rest is the allocator's
#: fragmentation and triton's and the CUDA context's own.
FREE_SHARE = 0.85
HEADROOM_BYTES = 1 << 30


def free_bytes() -> int:
    """The device's free memory now, with this process's cached blocks given back first (the
    caching allocator counts them as used)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.mem_get_info()[0]


def runner_bytes(runner, blocks: int, state_entries: int = 1) -> int:
    """What ``runner.initialize(blocks)`` allocates: the paged buffer, and what a builder that
    allocates its own holds (DeepSeek-V4: PAGE per block and STATE per request)."""
    from atom.pool_layout import EntryClass

    prices = runner.entry_bytes()
    own = sum(
        b.paged_entry_bytes() * blocks for b in runner.builders() if b.paged_pool_bytes(1) == 0
    )
    state = prices.get(EntryClass.STATE, 0) * state_entries
    return runner.paged_pool_bytes(blocks) + own + state


def require_fit(what: str, need: dict[str, int]) -> None:
    """Refuse, by name and with every part's size, a row whose buffers would not fit."""
    total = sum(need.values())
    free = free_bytes()
    room = int(FREE_SHARE * free) - HEADROOM_BYTES
    if total > room:
        parts = ", ".join(f"{k} {v / 2**30:.1f}" for k, v in need.items())
        raise DoesNotFit(
            f"{what} needs {total / 2**30:.1f} GiB ({parts}); {free / 2**30:.1f} GiB free, "
            f"{max(room, 0) / 2**30:.1f} GiB usable"
        )


def page_storage(runner) -> torch.Tensor:
    """The storage the PAGE regions live in, flat: the paged buffer, or a builder's own."""
    from atom.runner.pd_transfer import storages

    return storages(runner)[runner.kv_transfer.regions[0].tensor.untyped_storage().data_ptr()]


def _layouts(runner, pool_blocks: int):
    from atom.kernels.transfer_layouts import entry_major_twin, paged_fields, split_twin

    # The engine's own layout: layer-major for every pool that takes a region of the paged
    # buffer; DeepSeek-V4's planes and indexer blocks, from the buffer it allocates itself.
    engine = "layer-major" if runner.paged_buf.numel() else "v4 planes"
    yield engine, runner.kv_transfer.regions, page_storage(runner)
    fields = paged_fields(runner)
    arena, regions = entry_major_twin(fields, pool_blocks, device="cuda")
    yield "entry-major", regions, arena.buf
    del arena, regions
    split, regions = split_twin(fields, pool_blocks, device="cuda")
    yield "split-planes", regions, split.buf


def _contenders(rs, ids, staged, views, nbytes: int, kernel) -> dict[str, object]:
    """The four ways of moving the same blocks' bytes, each a callable launching one of them."""
    outs = [torch.empty((ids.numel(), v.shape[1]), dtype=torch.uint8, device="cuda") for v in views]
    copy_src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    copy_dst = torch.empty_like(copy_src)

    def index_select():
        for v, o in zip(views, outs, strict=True):
            torch.index_select(v, 0, ids, out=o)

    return {
        "kernel": lambda: rs.gather(
            ids, out=staged.data, impl="triton", validate=False, kernel=kernel
        ),
        "scatter": lambda: rs.scatter(staged, ids, impl="triton", validate=False, kernel=kernel),
        "index_select": index_select,
        "copy": lambda: copy_dst.copy_(copy_src),
    }


def case_runner(case_name: str, kv_dtype: str):
    """A case's runner, unbacked: the model (and its draft) at the engine's defaults, the smallest
    scheduler block it accepts, and an fp8 indexer for DeepSeek-V4 (an FP4 one refuses transfer)."""
    from atom.engine_config import EngineConfig
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner
    from contracts.runtime.strategies import DRAFT_PAIRS, default_case

    target, draft = DRAFT_PAIRS.get(case_name, (case_name, None))
    block = default_case(case_name).engine.scheduler_block_size  # 16, or what the model accepts
    return ModelRunner(
        load_model_config(target),
        EngineConfig(kv_dtype=kv_dtype, scheduler_block_size=block, index_cache_dtype="fp8"),
        draft_config=load_model_config(draft) if draft else None,
    )


#: A transfer of at most this many bytes is "small": the 8-32 MiB of an EAGLE3 head or
#: kimi-linear at 256 blocks, where a call's host work and a launch's ramp are most of its time.
SMALL_BYTES = 32 << 20


def measure(
    case_name: str,
    kv_dtype: str,
    blocks: int,
    reps: int,
    gen: torch.Generator,
    copy_gbps: float,
    kernel,
    small_kernel=None,
):
    """Rows of (layout, regions, block bytes, kernel ms, scatter ms, index_select ms, copy ms);
    ``small_kernel``, when given, is the launch of a transfer of at most ``SMALL_BYTES``."""
    from atom.kernels.block_transfer import RegionSet
    from atom.pool_layout import EntryClass

    pool_blocks = blocks + blocks // 2
    runner = case_runner(case_name, kv_dtype)
    # At once: the pool, one twin of it (entry-major, then the planes), and four staged
    # transfers' worth -- the kernel's staging, index_select's outputs, the copy's two buffers
    # (the reference's staging is freed before those are made). Sized before anything is made.
    staged = blocks * runner.entry_bytes()[EntryClass.PAGE]
    require_fit(
        f"{case_name} {kv_dtype} at {blocks} blocks",
        {
            "pool": runner_bytes(runner, pool_blocks),
            "twin": pool_blocks * runner.entry_bytes()[EntryClass.PAGE],
            "4 staged": 4 * staged,
        },
    )
    runner.initialize(pool_blocks, device="cuda")
    rows = []
    for layout, regions, buf in _layouts(runner, pool_blocks):
        buf.random_()  # never time on zeros
        rs = RegionSet(regions)
        ids = torch.randperm(pool_blocks, generator=gen, device="cuda")[:blocks]
        launch = kernel
        if small_kernel is not None and blocks * rs.layout.block_bytes <= SMALL_BYTES:
            launch = small_kernel
        staged = rs.gather(ids, impl="triton", kernel=launch)
        reference = rs.gather(ids, impl="torch")
        if not torch.equal(staged.data, reference.data):
            raise SystemExit(
                f"FAIL {case_name} {layout}: the kernel staged other bytes than the reference"
            )
        del reference
        nbytes = staged.data.numel()
        views = [v for v in rs.byte_views() if v is not None]
        contenders = _contenders(rs, ids, staged, views, nbytes, launch)
        t = _time_round_robin(contenders, reps, inner=_inner_for(nbytes, copy_gbps))
        t["kernel alone"] = _time_round_robin({"k": contenders["kernel"]}, reps, steady=False)["k"]
        rows.append((layout, len(rs.regions), rs.layout.block_bytes, nbytes, t))
        # Freed before the next layout's twin and staging are made: held over, they are four
        # more staged transfers than the row was sized for.
        del staged, contenders, views, rs, ids
        torch.cuda.empty_cache()
    runner.release()
    torch.cuda.empty_cache()
    return rows


def sweep(reps: int, gen: torch.Generator) -> list[tuple]:
    """Piece size and warps on llama's layer-major pool (bf16, fp8), 2,048 blocks."""
    from atom.engine_config import EngineConfig
    from atom.kernels import triton_block_transfer as tbt
    from atom.kernels.block_transfer import KernelConfig, RegionSet
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    out = []
    for kv_dtype in ("bf16", "fp8"):
        runner = ModelRunner(
            load_model_config("llama-3.1-8b"), EngineConfig(kv_dtype=kv_dtype)
        ).initialize(3072, device="cuda")
        runner.paged_buf.random_()
        rs = RegionSet(runner.kv_transfer)
        ids = torch.randperm(3072, generator=gen, device="cuda")[:2048]
        staged = rs.gather(ids, impl="torch")
        fns = {
            (piece, warps): functools.partial(
                tbt.launch, rs, "gather", staged.data, ids, KernelConfig(piece, warps)
            )
            for piece in (8192, 16384, 32768, 65536)
            for warps in (4, 8, 16)
        }
        t = _time_round_robin(fns, reps)
        for (piece, warps), ms in t.items():
            out.append((kv_dtype, piece, warps, _gbps(staged.data.numel(), ms)))
        runner.release()
        torch.cuda.empty_cache()
    return out


def _ptx_accesses(compiled) -> str:
    """How wide the compiled kernel's global loads and stores are, read off its PTX."""
    import re

    try:
        ptx = compiled.asm["ptx"]
    except (AttributeError, KeyError, TypeError):
        return "no PTX"
    found = sorted(set(re.findall(r"(?:ld|st)\.global[.\w]*", ptx)))
    return ", ".join(found) or "no PTX"


def diagnose(reps: int, gen: torch.Generator, copy_gbps: float) -> None:
    """Kernel options against each other where the first run fell short, and the PTX widths."""
    from atom.engine_config import EngineConfig
    from atom.kernels import triton_block_transfer as tbt
    from atom.kernels.block_transfer import KernelConfig, RegionSet
    from atom.kernels.transfer_layouts import entry_major_twin, paged_fields
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    print(
        f"\n{'case':40} {'full_fast':>9} {'streaming':>9} {'GB/s':>6} {'1 call':>6} {'copy':>6}  accesses"
    )
    for model, kv, layout, blocks in (
        ("llama-3.1-8b", "bf16", "entry-major", 2048),
        ("llama-3.1-8b", "fp8", "layer-major", 2048),
        ("kimi-k3", "bf16", "layer-major", 256),
        ("kimi-k3", "bf16", "layer-major", 2048),
    ):
        runner = ModelRunner(load_model_config(model), EngineConfig(kv_dtype=kv)).initialize(
            blocks + blocks // 2, device="cuda"
        )
        regions, buf = runner.kv_transfer.regions, runner.paged_buf
        if layout == "entry-major":
            arena, regions = entry_major_twin(
                paged_fields(runner), blocks + blocks // 2, device="cuda"
            )
            buf = arena.buf
        buf.random_()
        rs = RegionSet(regions)
        ids = torch.randperm(blocks + blocks // 2, generator=gen, device="cuda")[:blocks]
        staged = rs.gather(ids, impl="torch")
        nbytes = staged.data.numel()
        copy_src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
        copy_dst = torch.empty_like(copy_src)
        fns = {"copy": lambda d=copy_dst, s=copy_src: d.copy_(s)}
        for full_fast in (False, True):
            for streaming in (False, True):
                fns[(full_fast, streaming)] = functools.partial(
                    tbt.launch, rs, "gather", staged.data, ids,
                    KernelConfig(full_fast=full_fast, streaming=streaming),
                )  # fmt: skip
        inner = _inner_for(nbytes, copy_gbps)
        t = _time_round_robin(fns, reps, inner=inner)
        alone = _time_round_robin({k: v for k, v in fns.items() if k != "copy"}, reps)
        for key, fn in fns.items():
            if key == "copy":
                continue
            compiled = fn()
            torch.cuda.synchronize()
            reference = rs.gather(ids, impl="torch").data
            if not torch.equal(staged.data, reference):
                raise SystemExit(f"FAIL {model} {layout} options {key}: staged other bytes")
            print(
                f"{model + ' ' + kv + ' ' + layout + ' x' + str(blocks):40} {key[0]!s:>9} "
                f"{key[1]!s:>9} {_gbps(nbytes, t[key]):6.0f} {_gbps(nbytes, alone[key]):6.0f} "
                f"{_gbps(nbytes, t['copy']):6.0f}  {_ptx_accesses(compiled)}"
            )
        runner.release()
        torch.cuda.empty_cache()


#: Launch variants the sweep times, by name (``jit``: triton binds every call's arguments, the
#: launch as a plain ``kernel[grid](...)`` call makes it; the rest launch the compiled kernel directly).
#: ``16K/4w`` is ``DEFAULT_KERNEL``, ``64K/16w`` ``ONE_RANGE_KERNEL``, ``128K/32w``
#: ``WIDE_RANGE_KERNEL``.
VARIANTS = [
    ("16K/4w jit", "direct=0"),
    ("16K/4w", ""),
    ("16K/8w", "num_warps=8"),
    ("8K/2w", "piece_bytes=8192,num_warps=2"),
    ("64K/16w jit", "piece_bytes=65536,num_warps=16,direct=0"),
    ("64K/16w", "piece_bytes=65536,num_warps=16"),
    ("64K/16w stream", "piece_bytes=65536,num_warps=16,streaming=1"),
    ("128K/16w", "piece_bytes=131072,num_warps=16"),
    ("128K/32w", "piece_bytes=131072,num_warps=32"),
]
#: Cases of the sweep: (model, kv, layout, blocks); the entry-major rows the 5% target is about,
#: and the layer-major ones: the fp8 EAGLE3 head alone (4 regions, two of 512 B; the one row
#: under 85% of the device) and its bf16 twin, and two many-region pools.
VARIANT_CASES = [
    ("llama-3.1-8b", "bf16", "entry-major", 2048),
    ("llama-3.1-8b", "fp8", "entry-major", 2048),
    ("deepseek-v3.2-exp", "bf16", "entry-major", 2048),
    ("minimax-m2", "bf16", "entry-major", 2048),
    ("kimi-k3", "fp8", "entry-major", 2048),
    ("eagle3-draft-llama", "bf16", "entry-major", 2048),
    ("eagle3-draft-llama", "fp8", "layer-major", 2048),
    ("eagle3-draft-llama", "bf16", "layer-major", 2048),
    ("llama-3.1-8b", "fp8", "layer-major", 2048),
    ("deepseek-v3.2-exp", "fp8", "layer-major", 2048),
]


@functools.cache
def _plain_copy_kernel():
    """A Triton copy with no indirection (contiguous to contiguous, 16-byte words): how close
    Triton's own code comes to the driver's copy, the bound on what the indirection could cost."""
    import triton
    import triton.language as tl

    @triton.jit
    def plain_copy(src, dst, n, PIECE: tl.constexpr):
        pid = tl.program_id(0).to(tl.int64)
        cols = pid * PIECE + tl.arange(0, PIECE)
        tl.store(dst + cols, tl.load(src + cols, mask=cols < n), mask=cols < n)

    return plain_copy


def _graphed(fn):
    """``fn`` captured once in a CUDA graph: its replay costs the device's time and one graph
    launch, not the call's host work -- the bound a call's host work is measured against."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def _host_us(fn, calls: int = 200) -> tuple[float, float]:
    """(host us a call, wall us a call) over ``calls`` back-to-back calls: the host's time to
    issue them, and the time until the device finished them. Host >= wall/calls means the loop
    waits on the host, not on the bytes."""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / calls * 1e6, (t2 - t0) / calls * 1e6


def _variant_case(
    model, kv, layout, blocks, reps, gen, copy_gbps, variants=None
) -> dict[str, float]:
    """One sweep case: GB/s of every variant and of the copies, after checking every variant's
    staged bytes against the reference's. The block count is lowered, and says so, until the
    pool, its twin and the seven staged-sized buffers fit the device's free memory."""
    from atom.kernels import triton_block_transfer as tbt
    from atom.kernels.block_transfer import KernelConfig, RegionSet
    from atom.kernels.transfer_layouts import entry_major_twin, paged_fields
    from atom.pool_layout import EntryClass

    runner = case_runner(model, kv)
    page = runner.entry_bytes()[EntryClass.PAGE]
    wanted = blocks
    while True:
        pool_blocks = blocks + blocks // 2
        try:
            require_fit(
                f"sweep {model} {kv} at {blocks} blocks",
                {"pool": runner_bytes(runner, pool_blocks), "twin": pool_blocks * page,
                 "7 staged": 7 * blocks * page},
            )  # fmt: skip
            break
        except DoesNotFit:
            if blocks <= 16:
                raise
            blocks //= 2
    if blocks != wanted:
        print(f"  ({model} {kv}: {wanted} blocks do not fit; {blocks})")
    runner.initialize(pool_blocks, device="cuda")
    regions, buf = runner.kv_transfer.regions, page_storage(runner)
    if layout == "entry-major":
        arena, regions = entry_major_twin(paged_fields(runner), pool_blocks, device="cuda")
        buf = arena.buf
    buf.random_()
    rs = RegionSet(regions)
    ids = torch.randperm(pool_blocks, generator=gen, device="cuda")[:blocks]
    want = rs.gather(ids, impl="torch").data
    staged = torch.empty_like(want)
    nbytes = want.numel()
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    src2, dst2 = torch.empty_like(src).random_(), torch.empty_like(src)
    plain, words = _plain_copy_kernel(), nbytes // 8
    s64, d64 = src.view(torch.int64), dst.view(torch.int64)
    fns = {
        "copy": lambda: dst.copy_(src),
        "copy again": lambda: dst2.copy_(src2),
        "triton plain copy": lambda: plain[(-(-words // 2048),)](
            s64, d64, words, PIECE=2048, num_warps=4
        ),
        "triton plain 64K/16w": lambda: plain[(-(-words // 8192),)](
            s64, d64, words, PIECE=8192, num_warps=16
        ),
    }
    for name, config in variants or VARIANTS:
        fn = functools.partial(tbt.launch, rs, "gather", staged, ids, KernelConfig.parse(config))
        staged.fill_(0xA5)
        try:
            fn()
            torch.cuda.synchronize()
        except Exception as exc:  # a variant that does not compile here is reported, not fatal
            print(f"  {name}: {type(exc).__name__}: {str(exc)[:300]}")
            continue
        if not torch.equal(staged, want):
            raise SystemExit(f"FAIL {model} {kv} {layout} variant {name}: other bytes staged")
        fns[name] = fn
    default = rs.default_kernel()
    out = torch.empty_like(want)

    def gather_call(config):
        return lambda: rs.gather(ids, out=out, impl="triton", validate=False, kernel=config)

    calls = {
        "gather()": gather_call(default),
        "gather() jit": gather_call(dataclasses.replace(default, direct=False)),
    }
    try:
        fns["graph of the default"] = _graphed(
            functools.partial(tbt.launch, rs, "gather", staged, ids, default)
        )
    except Exception as exc:  # reported, not fatal: the bound is then unmeasured
        print(f"  graph capture: {type(exc).__name__}: {str(exc)[:300]}")
    fns.update(calls)
    t = _time_round_robin(fns, reps, inner=_inner_for(nbytes, copy_gbps))
    if not torch.equal(out, want):
        raise SystemExit(f"FAIL {model} {kv} {layout}: gather() staged other bytes")
    print(
        f"\n{model} {kv} {layout} x{blocks}: {len(rs.regions)} regions, "
        f"{len(rs.ranges())} ranges, {rs.layout.block_bytes / 1024:.0f} KiB a block, "
        f"{nbytes / 2**30:.3f} GiB; default {default}"
    )
    for name, fn in calls.items():
        host, wall = _host_us(fn)
        print(f"  host us a call, {name:14} {host:7.1f} (wall {wall:7.1f})")
    runner.release()
    return {name: _gbps(nbytes, ms) for name, ms in t.items()}


def host_cost(gen: torch.Generator) -> None:
    """Host us a call with next to nothing for the device to do (16 blocks of the fp8 EAGLE3
    head, ~0.5 MiB), so the queue never fills and the figure is the host's alone: ``gather()``,
    the bare launch, each direct and through triton's JIT, and ``copy_`` of 1 MiB."""
    from atom.engine_config import EngineConfig
    from atom.kernels import triton_block_transfer as tbt
    from atom.kernels.block_transfer import RegionSet
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    runner = ModelRunner(
        load_model_config("eagle3-draft-llama"), EngineConfig(kv_dtype="fp8")
    ).initialize(64, device="cuda")
    rs = RegionSet(runner.kv_transfer)
    ids = torch.randperm(64, generator=gen, device="cuda")[:16]
    out = torch.empty((16, rs.layout.block_bytes), dtype=torch.uint8, device="cuda")
    direct = rs.default_kernel()
    jit = dataclasses.replace(direct, direct=False)
    src = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    fns = {
        "gather() direct": lambda: rs.gather(ids, out=out, impl="triton", validate=False),
        "gather() jit": lambda: rs.gather(ids, out=out, impl="triton", validate=False, kernel=jit),
        "launch direct": lambda: tbt.launch(rs, "gather", out, ids, direct),
        "launch jit": lambda: tbt.launch(rs, "gather", out, ids, jit),
        "copy_ 1 MiB": lambda: dst.copy_(src),
    }
    print(f"\nhost us a call, 16 blocks of the fp8 EAGLE3 head (direct mode {tbt._DIRECT[0]}):")
    for name, fn in fns.items():
        for _ in range(5):
            fn()
        host, wall = _host_us(fn, 2000)
        print(f"  {name:16} {host:6.1f} (wall {wall:6.1f})")
    runner.release()


def variants(reps: int, gen: torch.Generator, copy_gbps: float) -> str:
    """Every launch variant on every sweep case, round-robin with two plain copies (their spread
    is the copy's own noise) and a Triton plain copy; GB/s and the share of the first copy."""
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"\nlaunch variants ({sms} multiprocessors); GB/s, in brackets of the first plain copy")
    summary: dict[str, dict[str, list[float]]] = {}
    for model, kv, layout, blocks in VARIANT_CASES:
        gbps = _variant_case(model, kv, layout, blocks, reps, gen, copy_gbps)
        torch.cuda.empty_cache()
        copy = gbps["copy"]
        for name, g in gbps.items():
            summary.setdefault(name, {}).setdefault(layout, []).append(g / copy)
            print(f"  {name:22} {g:6.0f} ({g / copy:6.1%})  {g / sms:5.1f} GB/s a multiprocessor")
    print("\nshare of the plain copy per variant, median (min) over the cases of each layout:")
    for name, by_layout in summary.items():
        cells = [
            f"{layout} {statistics.median(v):6.1%} ({min(v):6.1%}, {len(v)} cases)"
            for layout, v in by_layout.items()
        ]
        print(f"  {name:22} " + " | ".join(cells))
    return pick(summary)


#: Transfers of 8-32 MiB, the engine's layout and the entry-major twin: where a launch's ramp and
#: a call's host work are most of a call (the EAGLE3 head alone, kimi-linear, at 256 blocks).
SMALL_CASES = [
    ("eagle3-draft-llama", "fp8", "layer-major", 256),
    ("eagle3-draft-llama", "bf16", "layer-major", 256),
    ("kimi-linear-48b-a3b", "fp8", "layer-major", 256),
    ("kimi-linear-48b-a3b", "bf16", "layer-major", 256),
    ("eagle3-draft-llama", "fp8", "entry-major", 256),
    ("kimi-linear-48b-a3b", "fp8", "entry-major", 256),
]
#: Launches tried on them: fewer, longer-lived programs -- several blocks a program (each
#: moving the same piece of ``blocks_per_program`` blocks), or a persistent grid looping over the
#: pieces -- against the one-program-a-piece default, at the default and at smaller pieces.
SMALL_VARIANTS = [
    ("16K/4w", ""),
    ("8K/2w", "piece_bytes=8192,num_warps=2"),
    ("16K/4w x2 blocks", "blocks_per_program=2"),
    ("16K/4w x4 blocks", "blocks_per_program=4"),
    ("16K/4w x8 blocks", "blocks_per_program=8"),
    ("8K/2w x4 blocks", "piece_bytes=8192,num_warps=2,blocks_per_program=4"),
    ("32K/8w x4 blocks", "piece_bytes=32768,num_warps=8,blocks_per_program=4"),
    ("persistent 1", "persistent=1"),
    ("persistent 2", "persistent=2"),
    ("persistent 4", "persistent=4"),
    ("persistent 2 prefetch", "persistent=2,prefetch=1"),
    ("persistent 4 8K/2w", "persistent=4,piece_bytes=8192,num_warps=2"),
]


def small_variants(reps: int, gen: torch.Generator, copy_gbps: float) -> str:
    """``SMALL_VARIANTS`` on ``SMALL_CASES``; prints each case and the median share of the plain
    copy of the same bytes per launch; returns the launch with the highest median (its config)."""
    print("\nlaunches for transfers of 8-32 MiB; GB/s, in brackets of the first plain copy")
    shares: dict[str, list[float]] = {}
    for model, kv, layout, blocks in SMALL_CASES:
        gbps = _variant_case(model, kv, layout, blocks, reps, gen, copy_gbps, SMALL_VARIANTS)
        torch.cuda.empty_cache()
        copy = gbps["copy"]
        for name, g in gbps.items():
            shares.setdefault(name, []).append(g / copy)
            print(f"  {name:22} {g:6.0f} ({g / copy:6.1%})")
    print("\nshare of the plain copy per launch, median (min) over the 8-32 MiB cases:")
    for name, v in shares.items():
        print(f"  {name:22} {statistics.median(v):6.1%} ({min(v):6.1%}, {len(v)} cases)")
    configs = dict(SMALL_VARIANTS)
    best = max((n for n in configs if n in shares), key=lambda n: statistics.median(shares[n]))
    print(f"picked for 8-32 MiB: {best!r} ({configs[best] or 'the default'})")
    return configs[best]


def pick(summary: dict[str, dict[str, list[float]]]) -> str:
    """The variant with the highest median share of the copy from entry-major pools, among those
    whose layer-major median is within a point of the default's (a faster entry-major launch
    must not cost the layout the engine builds); its config string."""
    configs = dict(VARIANTS)
    floor = statistics.median(summary["16K/4w"]["layer-major"]) - 0.01
    ok = [
        n for n in configs if n in summary and statistics.median(summary[n]["layer-major"]) >= floor
    ]
    best = max(ok, key=lambda n: statistics.median(summary[n]["entry-major"]))
    layer = max(configs, key=lambda n: min(summary.get(n, {}).get("layer-major", [0])))
    print(
        f"\nbest layer-major launch by its worst case: {layer!r} ({configs[layer] or 'the default'})"
    )
    print(f"picked: {best!r} ({configs[best] or 'the default'})")
    return configs[best]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="", help="comma-separated cases (default: every one)")
    parser.add_argument("--kv-dtypes", default="bf16,fp8")
    parser.add_argument("--blocks", default="256,2048")
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--diagnose", action="store_true", help="kernel options and PTX widths")
    parser.add_argument("--variants", action="store_true", help="launch variants on a few cases")
    parser.add_argument(
        "--pick", default="", help="with --variants: write the fastest variant's config here"
    )
    parser.add_argument(
        "--pick-small",
        default="",
        help="with --variants: sweep the 8-32 MiB launches too and write the fastest here",
    )
    parser.add_argument(
        "--small-kernel",
        default="",
        help="the table's launch for a transfer of at most 32 MiB (a KernelConfig string or "
        "@FILE); default: each region set's default_kernel()",
    )
    parser.add_argument(
        "--kernel",
        default="",
        help="the table's launch, a KernelConfig string (e.g. persistent=4,prefetch=1), or "
        "@FILE to read it from FILE; default: each region set's default_kernel()",
    )
    parser.add_argument("--no-table", action="store_true", help="skip the per-model table")
    parser.add_argument("--host", action="store_true", help="host us a call, device-light")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("needs a CUDA device", file=sys.stderr)
        return 2
    from contracts.runtime.strategies import case_names

    names = [n for n in args.models.split(",") if n] or case_names()
    gen = torch.Generator(device="cuda").manual_seed(0)
    started = time.monotonic()
    copy_gbps = device_copy_gbps()
    print(
        f"device: {torch.cuda.get_device_name()}; plain copy of 4 GiB: {copy_gbps:.0f} GB/s (read + write)"
    )
    if args.diagnose:
        diagnose(args.reps, gen, copy_gbps)
    if args.host:
        host_cost(gen)
    if args.variants:
        picked = variants(args.reps, gen, copy_gbps)
        if args.pick:
            with open(args.pick, "w") as f:
                f.write(picked + "\n")
        if args.pick_small:
            small = small_variants(args.reps, gen, copy_gbps)
            with open(args.pick_small, "w") as f:
                f.write(small + "\n")
    from atom.kernels.block_transfer import KernelConfig

    def launch_of(text: str):
        if text.startswith("@"):
            with open(text[1:]) as f:
                text = f.read().strip()
        return KernelConfig.parse(text) if text else None  # None: each region set's default

    kernel = launch_of(args.kernel)
    small_kernel = launch_of(args.small_kernel)
    if args.sweep:
        print(f"\n{'kv':5} {'piece B':>8} {'warps':>5} {'GB/s':>7} {'of copy':>8}")
        for kv, piece, warps, gbps in sweep(args.reps, gen):
            print(f"{kv:5} {piece:8d} {warps:5d} {gbps:7.0f} {gbps / copy_gbps:8.1%}")
    header = (
        f"\n{'model':32} {'kv':4} {'layout':12} {'regions':>7} {'block KiB':>9} {'blocks':>6} "
        f"{'kernel GB/s':>11} {'scatter':>8} {'idx_sel':>8} {'copy':>6} "
        f"{'k/copy':>7} {'k/dev':>6} {'k/idx':>6} {'1 call':>6}"
    )
    if not args.no_table:
        print(f"\nthe table's launch: {kernel or 'each region set default_kernel()'}")
        if small_kernel is not None:
            print(f"the table's launch for transfers of at most 32 MiB: {small_kernel}")
        print(header)
    ok = True
    missed = []
    small_rows: list[float] = []
    for name in [] if args.no_table else names:
        for kv_dtype in args.kv_dtypes.split(","):
            for blocks in (int(b) for b in args.blocks.split(",")):
                try:
                    rows = measure(
                        name, kv_dtype, blocks, args.reps, gen, copy_gbps, kernel, small_kernel
                    )
                except (ValueError, TypeError) as exc:  # too large here, or a refused dtype
                    print(f"{name:32} {kv_dtype:4} {blocks:6d} skipped: {exc}")
                    torch.cuda.empty_cache()
                    continue
                for layout, regions, block_bytes, nbytes, t in rows:
                    k, s, i, c, alone = (
                        _gbps(nbytes, t[x])
                        for x in ("kernel", "scatter", "index_select", "copy", "kernel alone")
                    )
                    flags = []
                    if nbytes <= SMALL_BYTES:
                        # A transfer this small cannot reach the device's bandwidth, and nor
                        # can a copy of it: its target is a share of that copy.
                        small_rows.append(k / c)
                        if k < 0.80 * c:
                            flags.append("<80% of plain copy (<= 32 MiB)")
                    else:
                        if k < 0.85 * copy_gbps:
                            flags.append("<85% of device copy")
                        if layout == "entry-major" and k < 0.95 * c:
                            flags.append("<95% of plain copy")
                    if flags:
                        ok = False
                        missed.append((name, kv_dtype, layout, blocks, flags))
                    print(
                        f"{name:32} {kv_dtype:4} {layout:12} {regions:7d} {block_bytes / 1024:9.1f} "
                        f"{blocks:6d} {k:11.0f} {s:8.0f} {i:8.0f} {c:6.0f} {k / c:7.1%} "
                        f"{k / copy_gbps:6.1%} {k / i:6.1f}x {alone:6.0f}"
                        + ("  " + "; ".join(flags) if flags else "")
                    )
    print(f"\n{time.monotonic() - started:.0f} s")
    if small_rows:
        print(
            f"transfers of at most 32 MiB: {sum(r >= 0.80 for r in small_rows)} of "
            f"{len(small_rows)} rows >= 80% of a plain copy (median {statistics.median(small_rows):.1%}, "
            f"min {min(small_rows):.1%})"
        )
    if ok:
        print(
            "every layout >= 85% of the device's copy bandwidth (transfers of at most 32 MiB: "
            ">= 80% of a plain copy); entry-major within 5% of a plain copy"
        )
    else:
        print(f"TARGET MISSED in {len(missed)} rows")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
