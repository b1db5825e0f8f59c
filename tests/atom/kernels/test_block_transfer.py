"""The block transfer's torch reference, on the CPU: every model's round trip, and the refusals.

The Triton kernel is checked against this reference on a GPU (``test_triton_block_transfer``);
here the reference itself is checked against a second reading of the same bytes -- the byte
ranges ``TransferRegion.byte_range`` computes from each region's shape, stride and offset -- and
the kernel's table is replayed in Python, piece by piece, so the addressing the kernel uses is
proven on every model without a device.
"""

from __future__ import annotations

import pytest
import torch

from atom.kernels.block_transfer import RegionSet, StagedBlocks, StagingLayout
from atom.kernels.transfer_layouts import entry_major_twin, paged_fields, split_twin
from atom.pool_layout.transfer import TransferRegion

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

CASES = [(name, setting) for name in every_case() for setting in settings_of(name)]


@pytest.mark.parametrize(("name", "setting"), CASES, ids=[f"{n}-{s}" for n, s in CASES])
def test_round_trip_reads_back_every_view_bit_for_bit(name, setting):
    compared = round_trip(Case(name, setting), device="cpu", mover=move("torch"))
    assert compared["views"] > 0
    assert compared["paged views"] + compared["state views"] == compared["views"]


def test_the_registry_is_read_not_listed():
    from atom.models.registry import model_names

    assert set(model_names()) <= set(every_case())


@pytest.mark.parametrize("name", ["qwen3.5-27b", "kimi-linear-48b-a3b"])
def test_a_hybrid_moves_whole_state_entries(name):
    compared = round_trip(Case(name, "bf16-shuffle"), device="cpu", mover=move("torch"))
    assert compared["state views"] > 0


def test_a_draft_pool_is_staged_after_the_target():
    runner = Case("minimax-m2+eagle3-draft-llama", "bf16-shuffle").runner().initialize(2)
    roles = [r.role for r in RegionSet(runner.kv_transfer).layout.regions]
    owners = [role.split(".")[0] for role in roles]
    assert owners == sorted(owners, key=["target", "draft"].index) and owners[-1] == "draft"


def test_offload_through_host_memory_round_trips():
    compared = round_trip(
        Case("llama-3.1-8b", "fp8-shuffle"), device="cpu", mover=move("torch", via_host=True)
    )
    assert compared["paged views"] > 0


# -- the reference against a second reading ----------------------------------------------------


def _filled(name, setting, *, blocks, tp_size=None):
    runner = Case(name, setting, tp_size).runner().initialize(blocks)
    pages = page_buffer(runner)
    pages.copy_(random_bytes(pages.shape, torch.Generator().manual_seed(5), "cpu"))
    return runner


@pytest.mark.parametrize("name", every_case())
def test_gather_stages_exactly_the_byte_ranges_each_region_reports(name):
    runner = _filled(name, "fp8-shuffle", blocks=Case(name, "fp8-shuffle").blocks())
    rs = RegionSet(runner.kv_transfer)
    staged = rs.gather(SOURCE_IDS, impl="torch")
    storage = page_buffer(runner)
    base = storage.storage_offset()
    for region, placed in zip(runner.kv_transfer.regions, rs.layout.regions, strict=True):
        for i, unit in enumerate(SOURCE_IDS):
            lo, hi = region.byte_range(unit)
            got = staged.data[i, placed.offset : placed.offset + placed.span]
            assert torch.equal(got, storage[lo - base : hi - base]), (region.semantic_role, unit)


def _replay_table(rs: RegionSet, ids, word: int, piece: int) -> torch.Tensor:
    """What the kernel computes, one piece at a time, from the table alone."""
    table, pieces = rs.table(word, piece)
    pool = rs.storage_words(word)
    out = torch.zeros(len(ids), rs.layout.block_bytes // word, dtype=pool.dtype)
    for i, unit in enumerate(ids):
        for src, stride, dst, length in table[:pieces].tolist():
            out[i, dst : dst + length] = pool[src + unit * stride : src + unit * stride + length]
    return out.view(torch.uint8).view(len(ids), -1)


@pytest.mark.parametrize("name", every_case())
def test_the_kernels_table_addresses_what_the_reference_moves(name):
    runner = _filled(name, "fp8-shuffle", blocks=Case(name, "fp8-shuffle").blocks())
    rs = RegionSet(runner.kv_transfer)
    assert rs.word_bytes == 8, "every engine pool sits on 256 B boundaries: 8-byte words"
    want = rs.gather(SOURCE_IDS, impl="torch").data
    for word, piece in ((8, 16384), (4, 4096), (1, 1024)):
        assert torch.equal(_replay_table(rs, SOURCE_IDS, word, piece), want), (word, piece)


def test_the_table_is_built_once_per_set_and_word():
    rs = RegionSet(_filled("llama-3.1-8b", "bf16-shuffle", blocks=2, tp_size=1).kv_transfer)
    first, pieces = rs.table(8)
    assert rs.table(8)[0] is first
    # 64 regions of 32 KiB a block: two 16 KiB pieces each.
    assert pieces == 64 * (32768 // 16384)


def _fields_of_one_arena(buf, widths, *, units=4, gap=0):
    """Regions ``f0, f1, ...``: the fields of one entry-major arena exported one by one, each
    ``widths[i]`` bytes of every unit, ``gap`` bytes between one field and the next."""
    stride = sum(widths) + gap * (len(widths) - 1)
    units_view = buf[: units * stride].view(units, stride)
    out, at = [], 0
    for i, w in enumerate(widths):
        out.append(TransferRegion(f"f{i}", units_view[:, at : at + w]))
        at += w + gap
    return out


def test_fields_that_follow_one_another_in_every_unit_are_one_range():
    buf = random_bytes((1 << 14,), torch.Generator().manual_seed(6), "cpu")
    rs = RegionSet(_fields_of_one_arena(buf, (256, 64, 1024)))
    assert rs.ranges() == [(0, 1344, 0, 1344)]
    assert rs.one_range() == (0, 1344, 1344)
    want = rs.gather(SOURCE_IDS, impl="torch").data
    for word, piece in ((8, 16384), (8, 512), (1, 16)):
        assert torch.equal(_replay_table(rs, SOURCE_IDS, word, piece), want), (word, piece)
    assert rs.table(8, 512)[1] == 3  # 1,344 B in pieces of 512: the fields' three become three


def test_fields_apart_in_their_unit_or_out_of_staging_order_stay_ranges_of_their_own():
    buf = random_bytes((1 << 14,), torch.Generator().manual_seed(7), "cpu")
    spaced = RegionSet(_fields_of_one_arena(buf, (256, 64), gap=64))
    assert [r[3] for r in spaced.ranges()] == [256, 64] and spaced.one_range() is None
    a, b, c = _fields_of_one_arena(buf, (256, 64, 1024))
    # The same fields staged c, a, b: a and b still follow one another, c is a range alone.
    swapped = RegionSet([c, a, b])
    assert swapped.ranges() == [(320, 1344, 0, 1024), (0, 1344, 1024, 320)]
    assert swapped.one_range() is None
    want = swapped.gather(SOURCE_IDS, impl="torch").data
    assert torch.equal(_replay_table(swapped, SOURCE_IDS, 8, 128), want)
    for rs in (spaced, swapped):
        assert torch.equal(
            _replay_table(rs, SOURCE_IDS, 8, 16384), rs.gather(SOURCE_IDS, impl="torch").data
        )


def test_a_layer_major_pool_is_a_range_per_region_and_an_entry_major_one_a_single_range():
    runner = Case("deepseek-v3.2-exp", "fp8-shuffle").runner().initialize(4)
    layer_major = RegionSet(runner.kv_transfer)
    assert len(layer_major.ranges()) == len(layer_major.regions) > 1
    assert layer_major.one_range() is None
    _, regions = entry_major_twin(paged_fields(runner), 4)
    entry_major = RegionSet(regions)
    (range_,) = entry_major.ranges()
    assert entry_major.one_range() == (range_[0], range_[1], range_[3])
    # An entry holds every field of the block, padded to the arena's alignment.
    assert range_[3] == entry_major.layout.block_bytes >= layer_major.layout.block_bytes


# -- the other layouts: entry-major arenas and split planes ------------------------------------


@pytest.mark.parametrize(
    "twin", [entry_major_twin, split_twin], ids=["entry-major", "split-planes"]
)
@pytest.mark.parametrize(
    "name", ["llama-3.1-8b", "deepseek-v3.2-exp", "minimax-m2+eagle3-draft-llama"]
)
def test_entry_major_layouts_round_trip_every_field(name, twin):
    runner = Case(name, "fp8-shuffle").runner()
    fields = paged_fields(runner)
    gen = torch.Generator().manual_seed(9)
    src, src_regions = twin(fields, 4)
    dst, dst_regions = twin(fields, 4)
    src.buf.copy_(random_bytes(src.buf.shape, gen, "cpu"))
    dst.buf.copy_(random_bytes(dst.buf.shape, gen, "cpu"))
    before = dst.buf.clone()
    move("torch")(RegionSet(src_regions), RegionSet(dst_regions), SOURCE_IDS, [1, 3, 0])
    untouched_outside(dst.buf, before, dst_regions, [1, 3, 0])
    for f in fields:
        for s, d in zip(SOURCE_IDS, [1, 3, 0], strict=True):
            assert torch.equal(
                src.view(f.name)[s].view(torch.uint8), dst.view(f.name)[d].view(torch.uint8)
            ), f.name


def test_an_entry_major_block_is_one_range_and_a_layer_major_one_is_one_per_row():
    runner = Case("llama-3.1-8b", "bf16-shuffle", tp_size=1).runner().initialize(2)
    fields = paged_fields(runner)
    _, regions = entry_major_twin(fields, 2)
    layer_major = RegionSet(runner.kv_transfer)
    entry_major = RegionSet(regions)
    assert len(entry_major.regions) == 1 and len(layer_major.regions) == 2 * 32
    assert entry_major.layout.block_bytes == layer_major.layout.block_bytes == 2 << 20


# -- word width ---------------------------------------------------------------------------------


def _regions(buf, *spans_and_strides, units=4, start=0):
    return regions_at(buf, spans_and_strides, start=start, units=units)


def test_the_word_is_the_widest_every_base_stride_and_span_divides():
    buf = torch.zeros(1 << 16, dtype=torch.uint8)
    assert RegionSet(_regions(buf, (256, 256), (512, 512))).word_bytes == 8
    assert RegionSet(_regions(buf, (256, 256), (12, 12))).word_bytes == 4
    assert RegionSet(_regions(buf, (3, 8))).word_bytes == 1
    assert RegionSet(_regions(buf, (256, 256), start=2)).word_bytes == 2


def test_odd_byte_regions_still_move_exactly_their_bytes():
    buf = random_bytes((1 << 12,), torch.Generator().manual_seed(2), "cpu")
    regions = _regions(buf, (3, 7), (5, 5), (1, 2), start=1)
    rs = RegionSet(regions)
    assert rs.word_bytes == 1 and rs.layout.block_bytes == 9
    dst_buf = torch.zeros_like(buf)
    dst = RegionSet(_regions(dst_buf, (3, 7), (5, 5), (1, 2), start=1))
    dst.scatter(rs.gather([2, 1]), [0, 3])
    for a, b in zip(regions, dst.regions, strict=True):
        assert torch.equal(a.tensor[2], b.tensor[0]) and torch.equal(a.tensor[1], b.tensor[3])
    untouched_outside(dst_buf, torch.zeros_like(buf), list(dst.regions), [0, 3])
    for i in (0, 1, 2, 3):
        assert torch.equal(_replay_table(rs, [i], 1, 16), rs.gather([i]).data)


# -- refusals, before any byte moves -----------------------------------------------------------


def _pair(a="llama-3.1-8b", sa="bf16-shuffle", b="llama-3.1-8b", sb="bf16-shuffle"):
    src = _filled(a, sa, blocks=4, tp_size=1)
    dst = _filled(b, sb, blocks=4, tp_size=1)
    return src, dst, dst.paged_buf.clone()


def test_a_different_staging_layout_is_refused_by_name_before_a_byte_moves():
    src, dst, before = _pair(b="llama-3.1-8b", sb="fp8-shuffle")
    staged = RegionSet(src.kv_transfer).gather([0, 1])
    with pytest.raises(ValueError) as exc:
        RegionSet(dst.kv_transfer).scatter(staged, [0, 1])
    assert str(exc.value) == (
        "the staged blocks were laid out for another region set: region "
        "'target.h8d128/k/0' spans 32768 B a block in the staged blocks and 16384 B here"
    )
    assert torch.equal(dst.paged_buf, before)


def test_a_draft_missing_on_one_end_is_named():
    src = _filled("minimax-m2+eagle3-draft-llama", "bf16-shuffle", blocks=2, tp_size=1)
    dst = _filled("minimax-m2", "bf16-shuffle", blocks=2, tp_size=1)
    before = dst.paged_buf.clone()
    with pytest.raises(ValueError, match=r"staged region 'draft\.h8d128/k/0' has no region here"):
        RegionSet(dst.kv_transfer).scatter(RegionSet(src.kv_transfer).gather([1]), [0])
    with pytest.raises(
        ValueError, match=r"region 'draft\.h8d128/k/0' here is not in the staged blocks"
    ):
        RegionSet(src.kv_transfer).scatter(RegionSet(dst.kv_transfer).gather([1]), [0])
    assert torch.equal(dst.paged_buf, before)


def test_reordered_regions_are_refused_by_position_and_role():
    buf = torch.zeros(1 << 14, dtype=torch.uint8)
    a, b = _regions(buf, (256, 256), (256, 256))
    staged = RegionSet([a, b]).gather([0])
    with pytest.raises(ValueError, match=r"staged region 0 is 'r0', but region 0 here is 'r1'"):
        RegionSet([b, a]).scatter(staged, [0])


@pytest.mark.parametrize(
    ("ids", "error", "needle"),
    [
        ([4], ValueError, "block id 4 is out of range for a region set of 4 blocks"),
        ([-1], ValueError, "block id -1 is out of range"),
        ([True], TypeError, "block ids must be ints, got True"),
        ("01", TypeError, "block ids must be a sequence of ints or a tensor"),
        (torch.tensor([0.0]), ValueError, "1-D integer tensor, got torch.float32"),
        (torch.tensor([[0]]), ValueError, "of shape (1, 1)"),
        (torch.tensor([7]), ValueError, "block id 7 is out of range"),
    ],
)
def test_bad_block_ids_are_refused_by_value(ids, error, needle):
    src, _, _ = _pair()
    with pytest.raises(error) as exc:
        RegionSet(src.kv_transfer).gather(ids)
    assert needle in str(exc.value)


@pytest.mark.parametrize("ids", [[1, 1], torch.tensor([2, 0, 2])])
def test_a_scatter_to_one_block_twice_is_refused(ids):
    src, dst, before = _pair()
    staged = RegionSet(src.kv_transfer).gather([0] * len(ids))
    with pytest.raises(ValueError, match="repeat"):
        RegionSet(dst.kv_transfer).scatter(staged, ids)
    assert torch.equal(dst.paged_buf, before)


def test_a_block_count_other_than_the_ids_is_refused():
    src, dst, before = _pair()
    staged = RegionSet(src.kv_transfer).gather([0, 1])
    with pytest.raises(ValueError, match="2 staged blocks were handed 3 destination block ids"):
        RegionSet(dst.kv_transfer).scatter(staged, [0, 1, 2])
    assert torch.equal(dst.paged_buf, before)


def test_gathering_into_a_wrong_out_buffer_is_refused():
    src, _, _ = _pair()
    rs = RegionSet(src.kv_transfer)
    with pytest.raises(ValueError, match=r"2 blocks of this set are uint8 \(2, 2097152\)"):
        rs.gather([0, 1], out=torch.empty(1, rs.layout.block_bytes, dtype=torch.uint8))


def test_no_ids_move_nothing():
    src, dst, before = _pair()
    staged = RegionSet(src.kv_transfer).gather([])
    assert staged.blocks == 0
    RegionSet(dst.kv_transfer).scatter(staged, [])
    assert torch.equal(dst.paged_buf, before)


def test_a_set_is_one_storage_of_equal_unit_counts():
    a = torch.zeros(4096, dtype=torch.uint8)
    b = torch.zeros(4096, dtype=torch.uint8)
    (ra,) = _regions(a, (256, 256))
    (rb,) = _regions(b, (256, 256))
    with pytest.raises(ValueError, match="region 'r0b' lives in another storage"):
        RegionSet([ra, TransferRegion("r0b", rb.tensor)])
    short = TransferRegion("short", a[2048 : 2048 + 768].view(3, 256))
    with pytest.raises(ValueError, match="region 'short' has 3 units; region 'r0' has 4"):
        RegionSet([ra, short])
    with pytest.raises(ValueError, match="region 'none' has no units"):
        RegionSet([TransferRegion("none", a[:0].view(0, 16))])
    with pytest.raises(ValueError, match="at least one transfer region"):
        RegionSet([])
    with pytest.raises(ValueError, match="semantic_role 'r0' is in the region set twice"):
        RegionSet([ra, TransferRegion("r0", a[2048:3072].view(4, 256))])
    with pytest.raises(TypeError, match="TransferRegion items, got Tensor"):
        RegionSet([a])


def test_overlapping_regions_are_refused_and_interleaved_ones_are_not():
    buf = torch.zeros(4096, dtype=torch.uint8)
    units = buf[:1024].view(4, 256)
    left, right = TransferRegion("left", units[:, :128]), TransferRegion("right", units[:, 128:])
    assert RegionSet([left, right]).layout.block_bytes == 256
    wide = TransferRegion("wide", units[:, 64:192])
    with pytest.raises(ValueError, match="regions 'left' and 'wide' share bytes"):
        RegionSet([left, wide])
    # Interleaved at one stride but running into the next unit of the other region.
    wrap = TransferRegion("wrap", buf[200 : 200 + 4 * 256].as_strided((4, 100), (256, 1)))
    with pytest.raises(ValueError, match="share bytes"):
        RegionSet([TransferRegion("head", units[:, :64]), wrap])
    other_stride = TransferRegion("strided", buf[2048:].as_strided((4, 16), (300, 1)))
    with pytest.raises(ValueError, match="share bytes"):
        RegionSet([TransferRegion("whole", buf[2048:3328].view(4, 320)), other_stride])


def test_a_unit_with_holes_is_refused():
    buf = torch.zeros(4096, dtype=torch.uint8)
    holes = TransferRegion("holes", buf[:1024].view(4, 256)[:, ::2])
    with pytest.raises(
        ValueError, match="region 'holes': a unit's 128 B of data are spread over 255 B"
    ):
        RegionSet([holes])


def test_staged_blocks_refuse_data_that_is_not_their_layout():
    layout = StagingLayout.of([("a", 16), ("b", 48)])
    assert layout.block_bytes == 64 and layout.regions[1].offset == 16
    with pytest.raises(ValueError, match="not contiguous blocks of the layout's 64 B"):
        StagedBlocks(layout, torch.zeros(2, 32, dtype=torch.uint8))
    with pytest.raises(ValueError, match=r"2-D uint8 tensor, got torch\.float32"):
        StagedBlocks(layout, torch.zeros(2, 64))
    with pytest.raises(TypeError, match="scatter takes StagedBlocks, got Tensor"):
        RegionSet(_regions(torch.zeros(4096, dtype=torch.uint8), (16, 16), (48, 48))).scatter(
            torch.zeros(1, 64, dtype=torch.uint8), [0]
        )


def test_triton_is_refused_on_the_cpu_by_name(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    rs = RegionSet(_regions(torch.zeros(4096, dtype=torch.uint8), (16, 16)))
    with pytest.raises(ValueError, match="impl 'triton' needs a CUDA region set"):
        rs.gather([0], impl="triton")
    with pytest.raises(ValueError, match="impl 'cuda' is not one of"):
        rs.gather([0], impl="cuda")
    assert rs.gather([0], impl="auto").blocks == 1


def test_the_cpu_path_runs_where_triton_cannot_be_imported():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['triton'] = None\n"  # `import triton` now raises ImportError
        "import torch\n"
        "from atom.kernels.block_transfer import RegionSet\n"
        "from atom.pool_layout.transfer import TransferRegion\n"
        "buf = torch.arange(64, dtype=torch.uint8)\n"
        "rs = RegionSet([TransferRegion('r', buf.view(4, 16))])\n"
        "assert rs.gather([2], impl='auto').data.tolist() == [list(range(32, 48))]\n"
    )
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# -- the kernel's launch config -----------------------------------------------------------------


def test_a_kernel_config_prints_as_it_parses():
    from atom.kernels.block_transfer import DEFAULT_KERNEL, KernelConfig

    config = KernelConfig(piece_bytes=32768, num_warps=8, persistent=4, prefetch=True)
    assert KernelConfig.parse(str(config)) == config
    assert KernelConfig.parse("persistent=4, prefetch=1 ,piece_bytes=32768,num_warps=8") == config
    assert KernelConfig.parse("") == KernelConfig() == DEFAULT_KERNEL
    assert "prefetch=1" in str(config) and "one_region=1" in str(config)
    several = KernelConfig(blocks_per_program=4)
    assert KernelConfig.parse(str(several)) == several and "blocks_per_program=4" in str(several)


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        ("piece_bytes=1000", ValueError, "power of two >= 16, got 1000"),
        ("piece_bytes=8", ValueError, "got 8"),
        ("num_warps=3", ValueError, "num_warps must be a power of two from 1 to 32, got 3"),
        ("num_warps=64", ValueError, "got 64"),
        ("persistent=-1", ValueError, "persistent must be 0"),
        ("prefetch=1", ValueError, "prefetch needs a persistent grid"),
        ("prefetch=yes", ValueError, "prefetch='yes' is not 0/1"),
        ("persistent=four", ValueError, "persistent='four' is not an int"),
        ("persistant=4", ValueError, "'persistant=4' is not NAME=VALUE"),
        ("persistent", ValueError, "'persistent' is not NAME=VALUE"),
        ("blocks_per_program=0", ValueError, "blocks_per_program must be 1 to 64, got 0"),
        ("blocks_per_program=65", ValueError, "got 65"),
        (
            "persistent=2,prefetch=1,blocks_per_program=2",
            ValueError,
            "prefetch moves one block a task; blocks_per_program must be 1",
        ),
    ],
)
def test_a_bad_kernel_config_is_refused_by_value(text, error, needle):
    from atom.kernels.block_transfer import KernelConfig

    with pytest.raises(error, match=None) as exc:
        KernelConfig.parse(text)
    assert needle in str(exc.value)


def test_a_kernel_config_of_the_wrong_type_is_refused():
    from atom.kernels.block_transfer import KernelConfig

    with pytest.raises(TypeError, match="persistent must be an int, got True"):
        KernelConfig(persistent=True)
    with pytest.raises(TypeError, match="prefetch must be a bool, got 1"):
        KernelConfig(persistent=1, prefetch=1)
    rs = RegionSet(regions_at(torch.zeros(4096, dtype=torch.uint8), [(256, 256)]))
    with pytest.raises(TypeError, match="kernel must be a KernelConfig, got dict"):
        rs.gather([0], kernel={"persistent": 4})
    with pytest.raises(TypeError, match="kernel must be a KernelConfig, got str"):
        rs.scatter(rs.gather([0]), [1], kernel="persistent=4")


def test_a_call_without_a_kernel_takes_its_sets_default():
    from atom.kernels.block_transfer import DEFAULT_KERNEL, ONE_RANGE_KERNEL, WIDE_RANGE_KERNEL

    # llama fp8 at tp 1: 1,056 KiB a block, one range entry-major, 128 ranges layer-major.
    runner = Case("llama-3.1-8b", "fp8-shuffle", tp_size=1).runner().initialize(2)
    _, regions = entry_major_twin(paged_fields(runner), 2)
    assert RegionSet(regions).default_kernel() == WIDE_RANGE_KERNEL
    assert RegionSet(runner.kv_transfer).default_kernel() == DEFAULT_KERNEL
    # One range of 64 KiB (the EAGLE3 head's bf16 block): the 64 KiB launch, not 128 KiB pieces
    # half masked off; 128 KiB exactly takes the wide one.
    for span, want in ((65536, ONE_RANGE_KERNEL), (131072, WIDE_RANGE_KERNEL)):
        one = RegionSet(regions_at(torch.zeros(4 * span, dtype=torch.uint8), [(span, span)]))
        assert one.default_kernel() == want, span
    # One range a block, but shorter than the wide piece: the default, not a masked 64 KiB.
    small = RegionSet(regions_at(torch.zeros(1 << 16, dtype=torch.uint8), [(4096, 4096)]))
    assert small.one_range() is not None and small.default_kernel() == DEFAULT_KERNEL
    assert WIDE_RANGE_KERNEL.piece_bytes > ONE_RANGE_KERNEL.piece_bytes > DEFAULT_KERNEL.piece_bytes


# -- a repeated call --------------------------------------------------------------------------


def _counting_set(monkeypatch):
    """A llama fp8 region set on the CPU whose launches are recorded instead of run (the
    interpreter's switch lets ``impl="triton"`` through): a first launch prepares ("prepared",
    n), a repeat relaunches what was prepared. Its id checks are counted."""
    from atom.kernels import block_transfer as bt

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    launches: list[tuple] = []

    def launch(rs, direction, buf, ids, kernel):
        launches.append(("launch", direction, buf, ids, kernel))
        rs._last_prepared = ("prepared", len(launches))

    monkeypatch.setattr(bt, "_launcher", lambda: launch)
    monkeypatch.setattr(bt, "_relauncher", lambda: lambda p: launches.append(("again", p)) or True)
    runner = Case("llama-3.1-8b", "fp8-shuffle", tp_size=1).runner().initialize(4)
    rs = RegionSet(runner.kv_transfer)
    checks: list[int] = []
    real = rs._ids
    monkeypatch.setattr(rs, "_ids", lambda *a, **k: checks.append(1) or real(*a, **k))
    return rs, launches, checks


def test_a_repeated_unvalidated_gather_relaunches_what_the_first_prepared(monkeypatch):
    rs, launches, checks = _counting_set(monkeypatch)
    ids = torch.tensor([2, 0])
    out = torch.empty((2, rs.layout.block_bytes), dtype=torch.uint8)
    first = rs.gather(ids, out=out, impl="triton", validate=False)
    again = rs.gather(ids, out=out, impl="triton", validate=False)
    assert len(checks) == 1
    assert launches[0][:4] == ("launch", "gather", out, ids)
    assert launches[0][4] == rs.default_kernel() and launches[1] == ("again", ("prepared", 1))
    assert again.data is out and again.layout is first.layout
    # The ids' values may change between calls: the kernel reads them where they are.
    ids.copy_(torch.tensor([3, 1]))
    rs.gather(ids, out=out, impl="triton", validate=False)
    assert len(checks) == 1 and launches[-1] == ("again", ("prepared", 1))
    # Validated, another buffer, another kernel, ids as a list: each checked and launched anew.
    rs.gather(ids, out=out, impl="triton")
    other = torch.empty_like(out)
    rs.gather(ids, out=other, impl="triton", validate=False)
    rs.gather(ids, out=other, impl="triton", validate=False, kernel=rs.default_kernel())
    rs.gather([3, 1], out=other, impl="triton", validate=False)
    assert len(checks) == 5 and [x[0] for x in launches[-4:]] == ["launch"] * 4
    # The last checked call is the one remembered: repeating it relaunches, the earlier one not.
    rs.gather(ids, out=out, impl="triton", validate=False)
    assert len(checks) == 6 and launches[-1][0] == "launch"


def test_a_buffer_refused_once_is_refused_again(monkeypatch):
    rs, launches, checks = _counting_set(monkeypatch)
    ids = torch.tensor([2, 0])
    short = torch.empty((1, rs.layout.block_bytes), dtype=torch.uint8)
    for _ in range(2):
        with pytest.raises(ValueError, match=r"out is torch.uint8 of shape \(1, "):
            rs.gather(ids, out=short, impl="triton", validate=False)
    assert len(checks) == 2 and launches == []


def test_a_repeated_unvalidated_scatter_of_its_own_layout_relaunches(monkeypatch):
    rs, launches, checks = _counting_set(monkeypatch)
    staged = rs.gather([1, 2], impl="torch")
    ids = torch.tensor([0, 3])
    rs.scatter(staged, ids, impl="triton", validate=False)
    rs.scatter(staged, ids, impl="triton", validate=False)
    assert len(checks) == 2 and [x[0] for x in launches] == ["launch", "again"]
    # Another set's layout of the same roles and spans is compared every time, and a count
    # other than the ids' is refused every time.
    twin = StagedBlocks(StagingLayout.of((r.role, r.span) for r in rs.layout.regions), staged.data)
    rs.scatter(twin, ids, impl="triton", validate=False)
    rs.scatter(twin, ids, impl="triton", validate=False)
    assert len(checks) == 4
    with pytest.raises(ValueError, match="2 staged blocks were handed 1 destination block ids"):
        rs.scatter(staged, torch.tensor([0]), impl="triton", validate=False)


def test_a_launch_that_prepared_nothing_is_not_repeated(monkeypatch):
    from atom.kernels import block_transfer as bt

    rs, launches, checks = _counting_set(monkeypatch)
    monkeypatch.setattr(bt, "_launcher", lambda: lambda *a: launches.append(("jit",)))
    ids = torch.tensor([2, 0])
    out = torch.empty((2, rs.layout.block_bytes), dtype=torch.uint8)
    rs.gather(ids, out=out, impl="triton", validate=False)
    rs.gather(ids, out=out, impl="triton", validate=False)
    assert len(checks) == 2 and launches == [("jit",), ("jit",)]
