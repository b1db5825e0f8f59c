"""The Triton block-transfer kernel against the torch reference, on a GPU.

Every model's round trip through device staging and through pinned host memory (an offload and
back), read back through every view bit for bit; the kernel and the reference interchangeable at
either end; every word width and both alignment paths. Skipped visibly without triton, and
without CUDA unless ``TRITON_INTERPRET=1`` (triton's interpreter runs the same kernel on CPU
tensors -- slowly, but on any machine with triton installed). ``ATOM_TEST_KERNEL`` (a
``KernelConfig.parse`` string) runs the round trips under another launch than the default, which
is how a launch a benchmark picked is checked before it becomes the default.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("triton")

import torch

from atom.kernels.block_transfer import KernelConfig, RegionSet, triton_interpreted
from atom.kernels.transfer_layouts import entry_major_twin, paged_fields, split_twin

from .transfer_support import (
    SOURCE_IDS,
    Case,
    every_case,
    move,
    page_buffer,
    random_bytes,
    regions_at,
    round_trip,
    settings_of,
    untouched_outside,
)

DEVICE = "cuda" if torch.cuda.is_available() else ("cpu" if triton_interpreted() else None)
pytestmark = pytest.mark.skipif(
    DEVICE is None, reason="the Triton kernel needs a GPU (or TRITON_INTERPRET=1)"
)

#: The launch every round trip here uses.
_FORCED = os.environ.get("ATOM_TEST_KERNEL")
KERNEL = KernelConfig.parse(_FORCED) if _FORCED else None  # None: each set's default

CASES = [(name, setting) for name in every_case() for setting in settings_of(name)]
IDS = [f"{n}-{s}" for n, s in CASES]


@pytest.mark.parametrize(("name", "setting"), CASES, ids=IDS)
def test_kernel_round_trip_reads_back_every_view_bit_for_bit(name, setting):
    compared = round_trip(Case(name, setting), device=DEVICE, mover=move("triton", kernel=KERNEL))
    assert compared["views"] > 0
    assert compared["paged views"] + compared["state views"] == compared["views"]


@pytest.mark.parametrize(("name", "setting"), CASES, ids=IDS)
def test_offload_to_pinned_host_memory_and_back_is_bit_exact(name, setting):
    compared = round_trip(
        Case(name, setting), device=DEVICE, mover=move("triton", via_host=True, kernel=KERNEL)
    )
    assert compared["paged views"] + compared["state views"] == compared["views"] > 0


def _filled_set(name, setting="fp8-shuffle", blocks=4, seed=0):
    runner = Case(name, setting).runner().initialize(blocks, device=DEVICE)
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    pages = page_buffer(runner)  # the paged buffer, or DeepSeek-V4's own
    pages.copy_(random_bytes(pages.shape, gen, DEVICE))
    return runner, RegionSet(runner.kv_transfer)


@pytest.mark.parametrize("name", every_case())
def test_kernel_and_reference_are_interchangeable_at_either_end(name):
    _, src_set = _filled_set(name, seed=1)
    dst, dst_set = _filled_set(name, seed=2)
    kernel = src_set.gather(SOURCE_IDS, impl="triton", kernel=KERNEL)
    reference = src_set.gather(SOURCE_IDS, impl="torch")
    assert torch.equal(kernel.data, reference.data)
    pages = page_buffer(dst)
    twin = pages.clone()
    dst_set.scatter(kernel, [1, 3, 0], impl="torch")
    expected = pages.clone()
    pages.copy_(twin)
    dst_set.scatter(reference, [1, 3, 0], impl="triton", kernel=KERNEL)
    assert torch.equal(pages, expected)


def test_many_blocks_and_repeated_gather_ids():
    runner, rs = _filled_set("llama-3.1-8b", "bf16-shuffle", blocks=64)
    gen = torch.Generator(device=DEVICE).manual_seed(3)
    ids = torch.randint(0, 64, (200,), generator=gen, device=DEVICE)  # repeats on purpose
    assert torch.equal(
        rs.gather(ids, impl="triton", kernel=KERNEL).data, rs.gather(ids, impl="torch").data
    )
    perm = torch.randperm(64, generator=gen, device=DEVICE)[:48]
    staged = rs.gather(perm, impl="triton", kernel=KERNEL)
    before = runner.paged_buf.clone()
    runner.paged_buf.zero_()
    rs.scatter(staged, perm, impl="triton", kernel=KERNEL)
    kept = [b for b in range(64) if b not in set(perm.tolist())]
    back = rs.gather(perm, impl="torch")
    assert torch.equal(back.data, staged.data)
    assert bool((rs.gather(kept, impl="torch").data == 0).all())
    del before


@pytest.mark.parametrize("misalign", [0, 8, 4, 2, 1])
def test_a_staging_buffer_at_any_address_narrows_the_word(misalign):
    _, rs = _filled_set("deepseek-v3.2-exp", "fp8-shuffle", blocks=4)
    n, bb = len(SOURCE_IDS), rs.layout.block_bytes
    backing = torch.empty(n * bb + 16, dtype=torch.uint8, device=DEVICE)
    out = backing[misalign : misalign + n * bb].view(n, bb)
    assert rs.word_bytes_for(out) == (8 if misalign in (0, 8) else misalign)
    rs.gather(SOURCE_IDS, out=out, impl="triton", kernel=KERNEL)
    assert torch.equal(out, rs.gather(SOURCE_IDS, impl="torch").data)


def _odd_regions(buf, start, spans_and_strides):
    return regions_at(buf, spans_and_strides, start=start)


@pytest.mark.parametrize(
    ("start", "layout", "word"),
    [
        (0, [(4096, 4096), (48, 64)], 8),
        (4, [(100, 100), (12, 12)], 4),
        (2, [(6, 6), (40002, 40002)], 2),  # a span longer than one piece, in 2-byte words
        (1, [(3, 7), (5, 5), (1, 2)], 1),
    ],
)
def test_every_word_width_moves_exactly_the_regions_bytes(start, layout, word):
    gen = torch.Generator(device=DEVICE).manual_seed(4)
    buf = random_bytes((1 << 18,), gen, DEVICE)
    rs = RegionSet(_odd_regions(buf, start, layout))
    assert rs.word_bytes == word
    want = rs.gather([3, 1, 2], impl="torch").data
    assert torch.equal(rs.gather([3, 1, 2], impl="triton", kernel=KERNEL).data, want)
    dst_buf = random_bytes((1 << 18,), gen, DEVICE)
    before = dst_buf.clone()
    dst = RegionSet(_odd_regions(dst_buf, start, layout))
    dst.scatter(
        rs.gather([3, 1, 2], impl="triton", kernel=KERNEL), [0, 2, 3], impl="triton", kernel=KERNEL
    )
    untouched_outside(dst_buf, before, list(dst.regions), [0, 2, 3])
    assert torch.equal(dst.gather([0, 2, 3], impl="torch").data, want)


@pytest.mark.parametrize(
    "twin", [entry_major_twin, split_twin], ids=["entry-major", "split-planes"]
)
@pytest.mark.parametrize("name", every_case())
def test_entry_major_layouts_through_the_kernel(name, twin):
    fields = paged_fields(Case(name, "fp8-shuffle").runner().initialize(1, device="meta"))
    gen = torch.Generator(device=DEVICE).manual_seed(5)
    src, src_regions = twin(fields, 4, device=DEVICE)
    dst, dst_regions = twin(fields, 4, device=DEVICE)
    src.buf.copy_(random_bytes(src.buf.shape, gen, DEVICE))
    dst.buf.copy_(random_bytes(dst.buf.shape, gen, DEVICE))
    before = dst.buf.clone()
    move("triton", via_host=True, kernel=KERNEL)(
        RegionSet(src_regions), RegionSet(dst_regions), SOURCE_IDS, [1, 3, 0]
    )
    untouched_outside(dst.buf, before, dst_regions, [1, 3, 0])
    for f in fields:
        for s, d in zip(SOURCE_IDS, [1, 3, 0], strict=True):
            assert torch.equal(
                src.view(f.name)[s].view(torch.uint8), dst.view(f.name)[d].view(torch.uint8)
            ), f.name


#: Every way the kernel can be launched (``DEFAULT_KERNEL`` is one): each must move exactly the
#: reference's bytes, whichever the bench finds fastest. Small pieces, so a region is several
#: pieces with a partial last one, and a launch more pieces than a persistent grid has programs.
VARIANTS = {
    "per-piece": KernelConfig(piece_bytes=1024),
    "per-piece-table": KernelConfig(piece_bytes=1024, one_region=False),
    "per-piece-masked": KernelConfig(piece_bytes=1024, full_fast=False, streaming=True),
    "per-piece-jit": KernelConfig(piece_bytes=1024, direct=False),
    "thirty-two-warps": KernelConfig(piece_bytes=8192, num_warps=32),
    "persistent": KernelConfig(piece_bytes=1024, persistent=1),
    "persistent-table": KernelConfig(piece_bytes=1024, persistent=2, one_region=False),
    "prefetch": KernelConfig(piece_bytes=1024, num_warps=2, persistent=1, prefetch=True),
    "several-blocks": KernelConfig(piece_bytes=1024, blocks_per_program=3),
    "several-blocks-table": KernelConfig(piece_bytes=2048, blocks_per_program=4, one_region=False),
    "persistent-several-blocks": KernelConfig(piece_bytes=1024, persistent=1, blocks_per_program=2),
    "prefetch-table-streaming": KernelConfig(
        piece_bytes=2048,
        num_warps=8,
        persistent=3,
        prefetch=True,
        one_region=False,
        streaming=True,
    ),
}


def _variant_sets():
    """Region sets that reach every branch: one range a block in pieces and a partial piece
    (entry-major), many regions of a block with small spans (fp8 layer-major MLA with indexer
    keys), 2-byte words and a span past several pieces."""
    gen = torch.Generator(device=DEVICE).manual_seed(6)
    runner = Case("deepseek-v3.2-exp", "fp8-shuffle").runner().initialize(4, device=DEVICE)
    runner.paged_buf.copy_(random_bytes(runner.paged_buf.shape, gen, DEVICE))
    arena, regions = entry_major_twin(paged_fields(runner), 4, device=DEVICE)
    arena.buf.copy_(random_bytes(arena.buf.shape, gen, DEVICE))
    odd = random_bytes((1 << 18,), gen, DEVICE)
    return {
        "layer-major": (runner.paged_buf, list(runner.kv_transfer.regions)),
        "entry-major": (arena.buf, regions),
        "2-byte words": (odd, _odd_regions(odd, 2, [(6, 6), (40002, 40002)])),
    }


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_launch_variant_moves_exactly_the_references_bytes(variant):
    kernel = VARIANTS[variant]
    for what, (buf, regions) in _variant_sets().items():
        rs = RegionSet(regions)
        assert rs.table(rs.word_bytes, kernel.piece_bytes)[1] * 3 > 4, what
        want = rs.gather(SOURCE_IDS, impl="torch")
        got = torch.full_like(want.data, 0xA5)
        rs.gather(SOURCE_IDS, out=got, impl="triton", kernel=kernel)
        assert torch.equal(got, want.data), (variant, what)
        buf.copy_(random_bytes(buf.shape, torch.Generator(device=DEVICE).manual_seed(8), DEVICE))
        scrambled = buf.clone()
        rs.scatter(want, [1, 3, 0], impl="triton", kernel=kernel)
        untouched_outside(buf, scrambled, regions, [1, 3, 0])
        assert torch.equal(rs.gather([1, 3, 0], impl="torch").data, want.data), (variant, what)


def test_a_repeated_launch_goes_straight_to_its_compiled_kernel():
    """The second call of a launch skips triton's binding; calls that triton would specialize
    otherwise -- other block counts (the piece total), a staging buffer at another alignment --
    must each get their own compiled kernel, so every one still moves the reference's bytes."""
    if DEVICE != "cuda":
        pytest.skip("the interpreter binds every call through the JIT")
    from atom.kernels import triton_block_transfer as tbt

    for what, (_, regions) in _variant_sets().items():
        rs = RegionSet(regions)
        for ids in ([3, 0, 2], [3, 0, 2], [1], [1], [0, 1, 2, 3] * 4, [0, 1, 2, 3] * 4 + [2]):
            want = rs.gather(ids, impl="torch").data
            for shift in (0, 0, 8, 8):
                raw = torch.full((want.numel() + 16,), 0xA5, dtype=torch.uint8, device=DEVICE)
                got = raw[shift : shift + want.numel()].view(want.shape)
                rs.gather(ids, out=got, impl="triton")
                assert torch.equal(got, want), (what, ids, shift)
        assert rs._launches, what  # the repeats were launched from the remembered launch
    assert tbt._DIRECT[0] in tbt._MODES, tbt._DIRECT
    assert tbt._COMPILED


def test_strided_block_ids_move_the_blocks_they_name():
    """A view of ids (every other one) is the ids it shows, not the memory between them."""
    runner = Case("llama-3.1-8b", "fp8-shuffle").runner().initialize(8, device=DEVICE)
    runner.paged_buf.copy_(
        random_bytes(runner.paged_buf.shape, torch.Generator(device=DEVICE).manual_seed(9), DEVICE)
    )
    rs = RegionSet(runner.kv_transfer)
    ids = torch.tensor([7, 0, 5, 1, 2, 3, 6, 4], device=DEVICE)[::2]
    want = rs.gather(ids.tolist(), impl="torch").data
    for _ in range(2):  # the JIT call, then the direct one
        assert torch.equal(rs.gather(ids, impl="triton").data, want)


def test_a_repeated_gather_moves_the_blocks_its_ids_hold_now():
    """The second call into the same buffers skips its checks; the kernel still reads the ids
    where they are, so changing their values between calls moves the new blocks."""
    runner, rs = _filled_set("llama-3.1-8b", "fp8-shuffle", blocks=8, seed=11)
    ids = torch.tensor([5, 1, 6], device=DEVICE)
    out = torch.empty((3, rs.layout.block_bytes), dtype=torch.uint8, device=DEVICE)
    for values in ([5, 1, 6], [0, 7, 2], [4, 4, 3]):
        ids.copy_(torch.tensor(values, device=DEVICE))
        rs.gather(ids, out=out, impl="triton", validate=False, kernel=KERNEL)
        assert torch.equal(out, rs.gather(values, impl="torch").data), values
    staged = rs.gather([2, 3], impl="torch")
    dst = torch.tensor([0, 1], device=DEVICE)
    before = page_buffer(runner).clone()
    for values in ([0, 1], [6, 7]):
        dst.copy_(torch.tensor(values, device=DEVICE))
        rs.scatter(staged, dst, impl="triton", validate=False, kernel=KERNEL)
        assert torch.equal(rs.gather(values, impl="torch").data, staged.data), values
    untouched_outside(page_buffer(runner), before, list(rs.regions), [0, 1, 6, 7])
