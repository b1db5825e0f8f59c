"""The runtime checks at their boundaries: each passes what is correct and fires one step past it.

A check that fires on everything is as useless as one that fires on nothing, so each test here
shows a check passing a correct engine it could have refused, refusing a breakage that sits on a
boundary (one element, one byte, one block over), or a helper's arithmetic written out
independently. ``bench/mutation.py --target contracts/runtime`` runs these; docs/testing.md
argues the mutants no test can kill.
"""

from __future__ import annotations

import pytest
import torch

import contracts.runtime.checks as checks
from atom.pool_layout import EntryClass, PoolSpec
from atom.runner.kv_transfer import TransferRegion
from atom.runner.model_runner import ModelRunner
from contracts.runtime import ContractViolation

from .test_checks_fire import _make
from .test_element_readback import bind_square_transposed_v


def _runner(name="llama-3.1-8b", blocks=2, draft=None, **engine):
    return _make(name, draft, **engine)().initialize(blocks)


def _fires(pattern, fn, *args, **kwargs):
    with pytest.raises(ContractViolation, match=pattern):
        fn(*args, **kwargs)


def _draft_runner():
    return _runner("minimax-m2", draft="eagle3-draft-llama", tp_size=4)


# -- price == carve -----------------------------------------------------------------------------


def test_price_one_region_gets_no_alignment_slack():
    # One region: the buffer is exactly its charge. 256 B more (one alignment unit, which two
    # regions could owe between them) is already too long.
    runner = _runner()
    runner.paged_buf = torch.zeros(runner.paged_buf.numel() + 256, dtype=torch.uint8)
    _fires(r"paged buffer is \d+ B for \d+ B of charges \(\+0 alignment\)",
           checks.check_price_equals_carve, runner)  # fmt: skip


def test_price_two_regions_may_owe_one_alignment_gap_and_no_more():
    runner = _draft_runner()
    checks.check_price_equals_carve(runner)  # the buffer is its charges exactly: consistent
    exact = runner.paged_buf.numel()
    runner.paged_buf = torch.zeros(exact + 256, dtype=torch.uint8)
    checks.check_price_equals_carve(runner)  # one gap between two regions: allowed
    runner.paged_buf = torch.zeros(exact + 512, dtype=torch.uint8)
    _fires(r"paged buffer is \d+ B for \d+ B of charges \(\+256 alignment\)",
           checks.check_price_equals_carve, runner)  # fmt: skip


def test_price_a_state_pool_of_several_entries_is_priced_per_entry():
    runner = _runner("qwen3.5-27b", state_entries=3)
    (views,) = runner.builder.state_views.values()
    assert views.entries == 3
    checks.check_price_equals_carve(runner)


# -- rows from the walk ---------------------------------------------------------------------------


def test_rows_a_draft_builder_is_counted_over_the_draft_modules():
    checks.check_rows_from_walk(_draft_runner())


# -- bind parity ----------------------------------------------------------------------------------


def test_parity_holds_for_a_correct_import():
    runner = _runner()
    checks.check_bind_parity(runner, _make()().import_paged_pool(runner.paged_buf.clone(), 2))


def test_parity_offsets_are_relative_to_each_buffer():
    # The import side's buffer starts 4096 B into a larger allocation: the same views, the
    # same offsets within their buffers.
    runner = _runner()
    outer = torch.zeros(runner.paged_buf.numel() + 4096, dtype=torch.uint8)
    importing = _make()().import_paged_pool(outer[4096:], 2)
    checks.check_bind_parity(runner, importing)


def test_parity_an_import_view_one_element_over():
    runner = _runner()
    importing = _make()().import_paged_pool(runner.paged_buf.clone(), 2)
    b = importing.bound_modules()[0]
    k = b.kv_views["k_cache"]
    shifted = torch.as_strided(k, k.shape, k.stride(), k.storage_offset() + 1)
    b.bind({**b.kv_views, "k_cache": shifted})
    _fires(r"k_cache: allocating \(shape, stride, dtype, offset\) .* vs import",
           checks.check_bind_parity, runner, importing)  # fmt: skip


@pytest.mark.parametrize("side", ["allocating", "importing"])
def test_parity_refuses_either_side_uncarved(side):
    runner = _runner()
    importing = _make()().import_paged_pool(runner.paged_buf.clone(), 2)
    bare = _make()()
    pair = (bare, importing) if side == "allocating" else (runner, bare)
    _fires(r"has not carved its paged pool", checks.check_bind_parity, *pair)


# -- disjoint and in bounds -----------------------------------------------------------------------


def test_disjoint_an_empty_view_at_its_regions_end_is_in_bounds():
    runner = _runner()
    m = runner.bound_modules()[-1]
    v = m.kv_views["v_cache"]
    stop = checks.byte_extent(v)[1] // v.element_size()
    m.bind({**m.kv_views, "v_cache": torch.as_strided(v, (0,), (1,), stop)})
    checks.check_disjoint_in_bounds(runner)


def test_disjoint_an_overlap_names_the_view_that_reached_furthest():
    runner = _runner()
    first, second = runner.bound_modules()[:2]
    k = first.kv_views["k_cache"]
    stop = checks.byte_extent(k)[1]
    # An empty view exactly where the first K ends, then the second module's K moved onto the
    # first's last element: the overlap is the first K's, not the empty view's.
    empty = torch.as_strided(k, (0,), (1,), stop // k.element_size())
    onto = torch.as_strided(k, (1,), (1,), stop // k.element_size() - 1)
    first.bind({**first.kv_views, "k_scale_empty": empty})
    second.bind({**second.kv_views, "k_cache": onto})
    _fires(rf"reachable through {first.prefix}\S*\.k_cache and {second.prefix}\S*\.k_cache",
           checks.check_disjoint_in_bounds, runner)  # fmt: skip


@pytest.mark.parametrize(
    ("tensor", "runs"),
    [
        # Dense: one run of every byte.
        (torch.zeros(4, dtype=torch.int16), [(0, 8)]),
        (torch.zeros(2, 3, dtype=torch.int16), [(0, 12)]),
        # A size-1 dim is dense whatever its stride says.
        (torch.zeros(3, 1, dtype=torch.int16), [(0, 6)]),
        (torch.zeros(1, dtype=torch.int32), [(0, 4)]),
        # One column of a 4 x 8 int16 matrix: four 2-byte runs, 16 B apart.
        (torch.zeros(4, 8, dtype=torch.int16)[:, :1], [(0, 2), (16, 18), (32, 34), (48, 50)]),
        # Two columns, starting one element in: runs of 4 B from byte 2.
        (torch.zeros(2, 8, dtype=torch.int16)[:, 1:3], [(2, 6), (18, 22)]),
        # A dense row of a strided leading dim, with a size-1 dim between.
        (
            torch.zeros(16, dtype=torch.uint8).as_strided((2, 1, 4), (8, 99, 1)),
            [(0, 4), (8, 12)],
        ),
    ],
)
def test_byte_runs_are_the_contiguous_runs(tensor, runs):
    assert checks.byte_runs(tensor) == runs


def test_byte_runs_refuses_more_runs_than_its_limit_and_no_fewer():
    at_limit = torch.zeros(1 << 16, 2, dtype=torch.uint8)[:, :1]
    assert len(checks.byte_runs(at_limit)) == 1 << 16
    over = torch.zeros((1 << 16) + 1, 2, dtype=torch.uint8)[:, :1]
    with pytest.raises(ValueError, match=r"has 65537 runs; too many to list"):
        checks.byte_runs(over)
    with pytest.raises(ValueError, match=r"has 3 runs"):
        checks.byte_runs(torch.zeros(3, 2)[:, :1], limit=2)


# -- transfer units -------------------------------------------------------------------------------


def test_transfer_a_region_of_wider_elements_is_measured_in_bytes():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[0] = TransferRegion(r[0].semantic_role, r[0].tensor.view(torch.int16))
    checks.check_transfer_units(runner)  # the same bytes, two to an element


def test_transfer_a_region_whose_blocks_are_not_contiguous_units():
    runner = _runner()
    r = runner.kv_transfer.regions
    t = r[0].tensor
    # stride(0) is still the bytes a block owns; inside a block the bytes are out of order.
    r[0] = TransferRegion(r[0].semantic_role, t.view(t.shape[0], 2, -1).transpose(1, 2))
    _fires(r"stride\(0\) is \d+ B; a block owns \d+", checks.check_transfer_units, runner)


def test_transfer_regions_registered_in_any_order():
    runner = _runner()
    runner.kv_transfer.regions.reverse()
    checks.check_transfer_units(runner)


# -- write-readback -------------------------------------------------------------------------------


@pytest.mark.parametrize("which", [-1, 17])
def test_readback_writes_every_module(which):
    # One layer's K bound to the first layer's bytes: only a write through that module shows
    # it, so a readback that sampled modules would pass whenever the sample skipped it.
    runner = _runner()
    first, other = runner.bound_modules()[0], runner.bound_modules()[which]
    other.bind({**other.kv_views, "k_cache": first.kv_views["k_cache"]})
    _fires(rf"{other.prefix}\.k_cache token \d+ at bytes \[\d+, \d+\) is outside block \d+ of region",
           checks.check_write_readback, runner)  # fmt: skip


def test_readback_uses_a_shuffled_block_table():
    # A slot mapping that ignores the block table (block i is unit i) is only caught by a table
    # that is not the identity.
    runner = _runner(blocks=4)
    real = runner.builder.slot_mapping
    runner.builder.slot_mapping = lambda block_ids, ts: real(sorted(block_ids), ts)
    _fires(r"builder 'target' maps token (\d+) to slot \1; block \d+ of the scheduler's block "
           r"table puts it at slot \d+", checks.check_write_readback, runner)  # fmt: skip


def test_readback_a_slot_one_token_over_inside_its_block():
    # The right block, another token: every byte range agrees (the token lies in its block of
    # its region), and a kernel would read the neighbour's K/V. The slot itself is the check.
    runner = _runner(blocks=2)
    real = runner.builder.slot_mapping
    runner.builder.slot_mapping = lambda block_ids, ts: [s ^ 1 for s in real(block_ids, ts)]
    _fires(r"builder 'target' maps token \d+ to slot \d+; block \d+ of the scheduler's block "
           r"table puts it at slot \d+", checks.check_write_readback, runner)  # fmt: skip


def test_readback_twice_over_one_runner_is_the_same_check():
    # The same seed writes the same values to the same tokens: the second run must not read
    # "changed no byte" into a write of what was already there (it did, before writes cleared
    # their bytes first). A STATE slot likewise.
    for name in ("llama-3.1-8b", "qwen3.5-27b"):
        runner = _runner(name)
        checks.check_write_readback(runner)
        checks.check_write_readback(runner)


def test_readback_a_later_write_that_reaches_an_earlier_token(monkeypatch):
    runner = _runner()
    real = checks.store_token
    firsts = []

    def reaching(paged, layout, slot, values):
        out = real(paged, layout, slot, values)
        if not firsts:
            firsts.append(checks.token_at("k_cache", paged["k_cache"], layout, slot))
        else:
            firsts[0].add_(1)  # every later write also bumps the first module's token
        return out

    monkeypatch.setattr(checks, "store_token", reaching)
    first = runner.bound_modules()[0].prefix
    _fires(rf"{first}\.k_cache token \d+ reads back other bytes once every module of builder "
           r"'target' has written a token: another write reached it",
           checks.check_write_readback, runner)  # fmt: skip


def test_readback_and_element_order_hold_on_an_indexer_model():
    # MLA with an indexer: one-token MLA blocks and an indexer paged at the scheduler block, so
    # the indexer's slot is not the MLA view's.
    runner = _runner("deepseek-v3.2-exp", blocks=3)
    assert any(n in checks.INDEX_VIEWS for m in runner.bound_modules() for n in m.kv_views)
    for seed in range(4):
        checks.check_write_readback(runner, seed=seed)
    checks.check_element_readback(runner)


def test_random_values_survive_every_kv_dtype_and_keep_scales_positive():
    gen = torch.Generator().manual_seed(0)
    token = torch.zeros(4096)
    for name in ("k_cache", "v_cache", "kv_cache", "index_cache"):
        v = checks._random_value(name, token, gen)
        # 0.25 = 2**-2 is a normal number of every KV dtype: no element rounds to the zero
        # the buffer started at, so a write always changes every byte it should.
        assert v.abs().min() >= 0.25
        assert (v > 0).any() and (v < 0).any()
    scale = checks._random_value("index_scale", token, gen)
    assert scale.min() >= 0.75


# -- element order: the documented table, written out independently ------------------------------


def _at(name, layout, t, h, d, *, block=32, heads=2, dim=64, itemsize=2):
    offsets = checks.documented_offsets(
        name, layout, block=block, heads=heads, dim=dim, itemsize=itemsize
    )
    assert offsets.shape == (block, heads, dim)
    return int(offsets[t, h, d])


def test_documented_offsets_of_every_layout():
    # block 32, heads 2, dim 64; bf16: x = 16 // 2 = 8 elements a vector.
    # NHD (block, heads, dim): (t * heads + h) * dim + d.
    assert _at("k_cache", "nhd", 5, 1, 7) == (5 * 2 + 1) * 64 + 7 == 711
    assert _at("v_cache", "nhd", 5, 1, 7) == 711
    # MLA kv and the indexer are NHD-ordered in either backend layout.
    assert _at("kv_cache", "shuffle", 5, 1, 7) == 711
    assert _at("index_cache", "shuffle", 5, 1, 7) == 711
    # SHUFFLE K (heads, dim // x, block, x): ((h * 8 + d // 8) * 32 + t) * 8 + d % 8.
    assert _at("k_cache", "shuffle", 5, 1, 7) == ((1 * 8 + 0) * 32 + 5) * 8 + 7 == 2095
    # SHUFFLE V (heads, block // x, dim, x): ((h * 4 + t // 8) * 64 + d) * 8 + t % 8.
    assert _at("v_cache", "shuffle", 13, 1, 7) == ((1 * 4 + 1) * 64 + 7) * 8 + 5 == 2621
    # fp8: x = 16 // 1 = 16 elements a vector.
    k8 = _at("k_cache", "shuffle", 5, 1, 20, itemsize=1)
    assert k8 == ((1 * 4 + 1) * 32 + 5) * 16 + 4 == 2644
    # Scales (heads, block): the same offset for every d (a scale has no dim axis).
    assert {_at("k_scale", "shuffle", 5, 1, d) for d in (0, 7, 63)} == {1 * 32 + 5}
    assert {_at("v_scale", "nhd", 5, 1, d) for d in (0, 63)} == {37}


def test_documented_offsets_refuse_a_view_without_an_order():
    with pytest.raises(ValueError, match=r"view 'conv_state' has no documented element order"):
        checks.documented_offsets("conv_state", "nhd", block=1, heads=1, dim=1, itemsize=2)


@pytest.mark.parametrize(
    ("name", "layout", "itemsize", "shape"),
    [
        ("k_scale", "shuffle", 4, (8,)),
        ("v_scale", "nhd", 4, (8,)),
        ("index_scale", "nhd", 4, ()),
        ("kv_cache", "shuffle", 2, (576,)),
        ("index_cache", "nhd", 1, (576,)),
        ("k_cache", "shuffle", 2, (8, 576 // 8, 8)),
        ("k_cache", "shuffle", 1, (8, 576 // 16, 16)),
        ("k_cache", "nhd", 2, (8, 576)),
        ("v_cache", "shuffle", 2, (8, 576)),
    ],
)
def test_documented_token_shape(name, layout, itemsize, shape):
    got = checks.documented_token_shape(name, layout, heads=8, dim=576, itemsize=itemsize)
    assert got == shape


@pytest.mark.parametrize("mha_backend", ["aiter", "triton"])
def test_element_readback_holds_on_fp8_with_scales(mha_backend):
    runner = _runner(kv_dtype="fp8", mha_backend=mha_backend)
    assert "k_scale" in runner.bound_modules()[0].kv_views
    checks.check_element_readback(runner)


def test_changed_outside_names_the_first_changed_gap_from_byte_zero():
    buf = torch.zeros(64, dtype=torch.uint8)
    snapshot = buf.clone()
    buf[0] = 1
    buf[12] = 1
    assert checks._changed_outside(buf, snapshot, [(10, 20)]) == "[0, 10)"
    buf[0] = 0
    assert checks._changed_outside(buf, snapshot, [(10, 20)]) is None
    buf[63] = 1
    assert checks._changed_outside(buf, snapshot, [(10, 20)]) == "[20, 64)"
    assert checks._changed_outside(snapshot, snapshot, [(10, 20)]) == "nothing"


def test_readback_a_state_slot_that_does_not_read_back(monkeypatch):
    import random

    runner = _runner("qwen3.5-27b", state_entries=2)
    module = next(m for m in runner.bound_modules() if "conv_state" in m.kv_views)
    monkeypatch.setattr(checks, "_same_bytes", lambda a, b: False)
    _fires(r"conv_state request slot \d reads back different bytes",
           checks._write_state, runner.builder, [module], random.Random(0), "write-readback")  # fmt: skip


def test_readback_a_token_with_no_bytes():
    runner = _runner()
    m = runner.bound_modules()[0]
    m.bind({**m.kv_views, "k_cache": m.kv_views["k_cache"][:, :0]})
    _fires(r"k_cache token \d+ at bytes \[(\d+), \1\) is outside block",
           checks.check_write_readback, runner)  # fmt: skip


def test_readback_on_an_import_from_a_slice():
    # The importing runner's buffer starts 4096 B into its storage: the allowed byte ranges
    # are taken relative to the buffer, so a correct write stays inside them.
    runner = _runner()
    outer = torch.zeros(runner.paged_buf.numel() + 4096, dtype=torch.uint8)
    importing = _make()().import_paged_pool(outer[4096:], 2)
    checks.check_write_readback(importing)


# -- element order: who is written, and who reads ------------------------------------------------


def test_sample_is_every_token_up_to_32_then_both_ends_and_every_8th():
    assert checks._sample(32).tolist() == list(range(32))
    assert checks._sample(33).tolist() == list(range(33))  # 0..15, 16, then 17..32
    got = checks._sample(256).tolist()
    assert got == [*range(16), *range(16, 240, 8), *range(240, 256)]
    assert len(got) == 16 + 28 + 16


def test_element_readback_holds_on_a_draft_and_reads_it_through_the_verifier(monkeypatch):
    runner = _draft_runner()
    checks.check_element_readback(runner)  # the draft's one layer, its own builder
    monkeypatch.setattr(checks, "reblock", lambda n, v, layout, bs: v.roll(1, 0))
    # The draft builder's layer, not the target's own MTP layer (read at the target's block).
    _fires(r"^\[write-readback\] draft\.layers\.0\.self_attn\.k_cache: element \(block 0, token 0, "
           r"head 0, dim 0\) written through the bound view reads "
           r"back through the verifier's reblocked view as element \(block 1, token 0, head 0, "
           r"dim 0\) of k_cache",
           checks.check_element_readback, runner)  # fmt: skip


def test_element_readback_reads_the_indexer_views():
    runner = _runner("deepseek-v3.2-exp", blocks=2)
    first, second = runner.bound_modules()[:2]
    assert "index_cache" in first.kv_views
    # The first layer's indexer bound to the second layer's bytes: same shape, other region.
    first.bind({**first.kv_views, "index_cache": second.kv_views["index_cache"]})
    _fires(r"index_cache: element .* is not where the \w+ layout puts it",
           checks.check_element_readback, runner)  # fmt: skip


def test_element_readback_a_declared_geometry_beyond_the_region(monkeypatch):
    runner = _runner()
    real = checks._view_geometry

    def wider(builder, module, name, view):
        block, heads, dim, blocks = real(builder, module, name, view)
        return block, heads, dim, 2 * blocks  # twice the blocks the region holds

    monkeypatch.setattr(checks, "_view_geometry", wider)
    _fires(r"its documented layout reaches byte \d+ of a \d+ B transfer region",
           checks.check_element_readback, runner)  # fmt: skip


# -- price, own allocations, the twin, check_all, refusals ----------------------------------------


def test_price_a_padded_pool_is_its_data_plus_its_padding():
    # DeepSeek-V3.2's MLA pool at fp8 pads between its fields: price = data + padding, so a
    # check that subtracted the padding would refuse this correct engine.
    runner = _runner("deepseek-v3.2-exp", kv_dtype="fp8")
    assert any(p.padding_bytes for p in runner.builder.paged_pools.values())
    checks.check_price_equals_carve(runner)


def _v4_runner():
    from .test_checks_fire import _v4_runner as make

    return make()


def test_own_allocation_is_counted_in_bytes_not_elements():
    # The same bytes held as int32: four bytes an element, still exactly the price.
    runner = _v4_runner()
    held = runner.builder.own_buffers()
    assert all(b.numel() % 4 == 0 for b in held)
    runner.builder.own_buffers = lambda: [b.view(torch.int32) for b in held]
    checks.check_price_equals_carve(runner)


class _OwnBuilder:
    """A builder that allocates its own: 1024 B of PAGE, a 256 B STATE entry per request."""

    name = "own"

    def __init__(self, held, entries):
        self.held, self.entries = held, entries

    def own_buffers(self):
        return [torch.zeros(self.held, dtype=torch.uint8)]

    def sub_pool_specs(self):
        return [PoolSpec("own.page", EntryClass.PAGE, 512), PoolSpec("own.state", EntryClass.STATE, 256)]  # fmt: skip


@pytest.mark.parametrize("entries", [None, 0])
def test_own_allocation_before_any_request_holds_its_page_charge_only(entries):
    # No request slots allocated yet: 1024 B of PAGE + 256 B x 0 requests.
    checks._check_own_allocation(_OwnBuilder(1024, entries), 1024, "price-equals-carve")
    _fires(r"holds 1280 B; PAGE 1024 B \+ STATE 256 B x 0 requests = 1024",
           checks._check_own_allocation, _OwnBuilder(1024 + 256, entries), 1024, "price-equals-carve")  # fmt: skip


def test_allocates_own_is_a_builder_that_takes_no_region():
    v4, llama = _v4_runner(), _runner()
    assert checks._allocates_own(v4, v4.builder) is True
    assert checks._allocates_own(llama, llama.builder) is False
    fresh = _make("deepseek-v4-flash-dspark", scheduler_block_size=256, tp_size=2)()
    assert checks._allocates_own(fresh, fresh.builder) is False  # not carved yet


def test_rows_the_unwalked_twin_of_a_stage_that_binds_one_module():
    # A pipeline stage may hold a single layer: the twin is of that one module.
    runner = _runner()
    only = runner.bound_modules()[:1]
    runner.bound_modules = lambda: only
    checks.check_rows_from_walk(runner)


def test_check_all_runs_every_check_once_and_returns_the_runner(monkeypatch):
    calls = []
    for name in ("price_equals_carve", "rows_from_walk", "disjoint_in_bounds", "transfer_units",
                 "bind_parity", "write_readback", "element_readback", "refusals"):  # fmt: skip
        monkeypatch.setattr(checks, f"check_{name}", lambda *a, _n=name, **k: calls.append((_n, a, k)))  # fmt: skip
    released = []
    real_release = ModelRunner.release
    monkeypatch.setattr(ModelRunner, "release", lambda self: (released.append(self), real_release(self)))  # fmt: skip
    runner = checks.check_all(_make(), 2, seed=5)
    assert isinstance(runner, ModelRunner) and runner.blocks == 2
    names = [n for n, _, _ in calls]
    assert names == ["price_equals_carve", "rows_from_walk", "disjoint_in_bounds", "transfer_units",
                     "bind_parity", "write_readback", "element_readback", "refusals"]  # fmt: skip
    by = {n: (a, k) for n, a, k in calls}
    importing = by["bind_parity"][0][1]
    assert released == [importing] and importing is not runner
    assert by["write_readback"][1] == {"seed": 5}
    shared = by["element_readback"][1]["importing"]
    assert shared.paged_buf.data_ptr() == runner.paged_buf.data_ptr()  # no copy: the same bytes
    assert by["refusals"][1] == {"built": runner}
    # A model with a STATE pool has no import side: no parity, no shared reader.
    calls.clear()
    checks.check_all(_make("qwen3.5-27b"), 1)
    assert [n for n, _, _ in calls] == ["price_equals_carve", "rows_from_walk", "disjoint_in_bounds",
                                        "transfer_units", "write_readback", "element_readback", "refusals"]  # fmt: skip
    assert {n: k for n, _, k in calls}["element_readback"]["importing"] is None
    calls.clear()
    checks.check_all(_make(), 2)
    assert {n: k for n, _, k in calls}["write_readback"] == {"seed": 0}  # the default seed


def _refusing_short_only(make):
    """An import that refuses a short buffer by its size but takes a misaligned one."""

    def made():
        runner = make()
        real = runner.import_paged_pool
        runner.import_paged_pool = lambda buf, blocks: (
            runner if buf.storage_offset() % 256 else real(buf, blocks)
        )
        return runner

    return made


def test_refusals_a_misaligned_import_accepted():
    _fires(r"a misaligned imported buffer: accepted", checks.check_refusals,
           _refusing_short_only(_make()), 2)  # fmt: skip


def test_refusals_a_fill_on_an_imported_buffer_accepted(monkeypatch):
    import atom.pool_layout

    monkeypatch.setattr(atom.pool_layout, "LayerMajorArena", lambda fields, n, buf=None: None)
    _fires(r"a fill on an imported buffer: accepted", checks.check_refusals, _make(), 2)


def test_refusals_an_empty_layer_major_group_accepted(monkeypatch):
    import atom.pool_layout

    real = atom.pool_layout.LayerMajorArena
    monkeypatch.setattr(atom.pool_layout, "LayerMajorArena",
                        lambda fields, n, buf=None: real(fields, n, buf=buf) if fields else None)  # fmt: skip
    _fires(r"an empty layer-major group: accepted", checks.check_refusals, _make(), 2)


def test_refusals_a_draft_with_no_rows_accepted(monkeypatch):
    from atom.spec_decode.draft_kv_builder import DraftKvBuilder

    monkeypatch.setattr(DraftKvBuilder, "kv_pool", property(lambda self: None))
    _fires(r"a draft with no rows: accepted", checks.check_refusals, _make(), 2)


def test_refusals_a_pool_in_the_paged_buffer_with_no_transfer_region():
    runner = _runner()
    runner.kv_transfer.regions = []
    _fires(r"no transfer region was registered for a pool in the paged buffer",
           checks.check_refusals, _make(), 2, built=runner)  # fmt: skip


def test_refusals_hold_for_a_builder_that_allocates_its_own():
    # V4 registers no region of the paged buffer: nothing to refuse a block count for.
    from .test_checks_fire import _make as make

    runner = _v4_runner()
    assert not runner.kv_transfer.regions
    made = make("deepseek-v4-flash-dspark", scheduler_block_size=256, tp_size=2)
    checks.check_refusals(made, 2, built=runner)


@pytest.mark.parametrize(
    ("name", "engine"),
    [
        ("deepseek-v3.2-exp", {"kv_dtype": "fp8"}),
        ("minimax-m3", {"scheduler_block_size": 128}),
        ("minimax-m3", {"scheduler_block_size": 256}),  # two backend blocks an entry
    ],
)
def test_indexer_geometry_covers_every_element_of_its_view(name, engine):
    # tokens x heads x dim x blocks, read from the declarations, is every element the bound
    # view holds: MiniMax-M3's indexer pages several backend blocks per entry, and V3.2's fp8
    # indexer has a scale per token.
    runner = _runner(name, **engine)
    seen = set()
    for m in runner.bound_modules():
        builder = runner.builder_of(m)
        for n in checks.INDEX_VIEWS:
            if n in m.kv_views:
                block, heads, dim, nblocks = checks._view_geometry(builder, m, n, m.kv_views[n])
                assert block * heads * dim * nblocks == m.kv_views[n].numel(), (m, n)
                seen.add(n)
    assert seen == (
        {"index_cache", "index_scale"} if name == "deepseek-v3.2-exp" else {"index_cache"}
    )
    checks.check_element_readback(runner)


def test_readback_on_an_import_from_a_slice_a_write_one_byte_past_its_block(monkeypatch):
    # The buffer starts 4096 B into its storage; a store that also bumps the first byte after
    # its token's block is caught there too: the allowed ranges are the block's, moved by the
    # buffer's offset and not widened by it.
    runner = _runner(blocks=4)
    outer = torch.zeros(runner.paged_buf.numel() + 4096, dtype=torch.uint8)
    importing = _make()().import_paged_pool(outer[4096:], 4)
    buf, base = importing.paged_buf, importing.paged_buf.storage_offset()
    blocks = [r.byte_range(u) for r in importing.kv_transfer.regions for u in range(4)]
    real = checks.store_token

    def spills(paged, layout, slot, values):
        before = buf.clone()
        out = real(paged, layout, slot, values)
        last = int((buf != before).nonzero().max()) + base
        _, hi = next((lo, hi) for lo, hi in blocks if lo <= last < hi)
        if hi - base < buf.numel():
            buf[hi - base] += 1
        return out

    monkeypatch.setattr(checks, "store_token", spills)
    _fires(r"changed bytes \d+ to \d+ of the paged buffer, which none of those tokens holds",
           checks.check_write_readback, importing)  # fmt: skip


def test_element_readback_a_region_one_byte_short_of_the_layout(monkeypatch):
    # The layout's last byte is the region's last: a region one byte shorter is refused by
    # name, not read out of range.
    from types import SimpleNamespace

    runner = _runner()
    real = checks._region_by_role

    def short(r):
        return {k: SimpleNamespace(tensor=v.tensor.reshape(-1)[:-1]) for k, v in real(r).items()}

    monkeypatch.setattr(checks, "_region_by_role", short)
    _fires(r"k_cache: its documented layout reaches byte (\d+) of a \1 B transfer region",
           checks.check_element_readback, runner)  # fmt: skip


@pytest.mark.parametrize(
    ("itemsize", "int_dtype", "top", "passes"),
    [
        (1, torch.uint8, 256, 2),  # 256 = 256**1: the first code that needs a second digit
        (1, torch.uint8, 70000, 3),  # 256**2 = 65536 <= 70000 < 256**3
        (2, torch.int16, 65535, 1),  # 65535 < 65536**1
        (2, torch.int16, 65536, 2),
        (4, torch.int32, 70000, 1),
    ],
)
def test_digits_are_the_codes_in_base_256_to_the_itemsize(itemsize, int_dtype, top, passes):
    codes = torch.arange(top + 1)
    digits = list(checks._digits(codes, itemsize, int_dtype))
    assert len(digits) == passes and all(d.dtype == int_dtype for d in digits)
    base = 2 ** (8 * itemsize)
    # Each digit's bits, read unsigned, rebuild the code: no code is lost, none collides.
    rebuilt = sum((d.to(torch.int64) % base) * base**k for k, d in enumerate(digits))
    assert torch.equal(rebuilt, codes)


# -- every module walked, found elements named, inputs --------------------------------------------


def test_byte_positions_are_every_byte_a_view_reaches():
    # int16 elements 2 B each; a (2, 3) view with strides (5, 2) from element 1 of its storage:
    # element (i, j) is storage element 1 + 5i + 2j, bytes 2x and 2x + 1.
    t = torch.as_strided(torch.zeros(16, dtype=torch.int16), (2, 3), (5, 2), 1)
    elements = [1 + 5 * i + 2 * j for i in range(2) for j in range(3)]
    assert checks.byte_positions(t).tolist() == [b for e in elements for b in (2 * e, 2 * e + 1)]
    assert checks.byte_positions(torch.zeros(3, dtype=torch.uint8)[2:]).tolist() == [2]


def test_element_codes_name_the_element_they_were_written_as():
    # block 4 tokens, 2 heads, 3 dims, 3 fields: slot 9 is block 2, token 1.
    slots = torch.tensor([0, 9])
    codes = checks.element_codes(slots, heads=2, dim=3, fields=3, field=1)
    assert codes.shape == (2, 2, 3)
    # 1 + ((slot x heads + head) x dim + dim index) x fields + field, written out:
    assert int(codes[1, 1, 2]) == 1 + ((9 * 2 + 1) * 3 + 2) * 3 + 1 == 179
    names = ["k_cache", "v_cache", "k_scale"]
    named = [checks.element_named(int(c), block=4, heads=2, dim=3, names=names) for c in codes.reshape(-1)]  # fmt: skip
    assert named == [
        f"element (block {s // 4}, token {s % 4}, head {h}, dim {d}) of v_cache"
        for s in (0, 9)
        for h in range(2)
        for d in range(3)
    ]
    every = torch.cat([checks.element_codes(torch.arange(8), heads=2, dim=3, fields=3, field=f).reshape(-1) for f in range(3)])  # fmt: skip
    assert every.unique().numel() == every.numel() and int(every.min()) == 1
    assert checks.element_named(0, block=4, heads=2, dim=3, names=names) == (
        "0, which no element was written as"
    )


def test_declared_codes_name_the_element_they_were_written_as():
    shape, axes, names = (2, 3, 4), ("block", "row", "dim"), ["a", "b"]
    index = torch.meshgrid(*[torch.arange(s) for s in shape], indexing="ij")
    codes = checks.declared_codes(index, shape, fields=2, field=1)
    # 1 + ((block x 3 + row) x 4 + dim) x 2 + 1: element (1, 2, 3) is flat 23.
    assert int(codes[1, 2, 3]) == 1 + 23 * 2 + 1 == 48
    assert sorted(codes.reshape(-1).tolist()) == list(range(2, 50, 2))
    assert checks.declared_named(48, shape=shape, axes=axes, names=names) == (
        "element (block 1, row 2, dim 3) of b"
    )
    assert checks.declared_named(1, shape=shape, axes=axes, names=names) == (
        "element (block 0, row 0, dim 0) of a"
    )
    assert checks.declared_named(0, shape=shape, axes=axes, names=names) == (
        "0, which no element was written as"
    )


def test_element_readback_walks_every_module_the_first_of_each_kind_in_full(monkeypatch):
    real = checks._element_readback
    calls = []
    monkeypatch.setattr(
        checks,
        "_element_readback",
        lambda *a, **k: (calls.append((a[3], k["full"])), real(*a, **k)),
    )
    runner = _draft_runner()
    checks.check_element_readback(runner)
    walked = [m for b in runner.builders() for m in runner.bound_modules() if runner.builder_of(m) is b]  # fmt: skip
    assert [m for m, _ in calls] == walked  # every module once, builder by builder
    kinds = {}  # the first module of each set of view names, builder by builder
    for m in walked:
        kinds.setdefault((runner.builder_of(m).name, tuple(sorted(m.kv_views))), m)
    assert [m for m, full in calls if full] == list(kinds.values())
    assert len(kinds) == 2 < len(walked)  # the target's first layer and the draft's


def test_a_transposition_confined_to_one_middle_layer_is_caught():
    # Read at the ends only (the first and last token of the first and last block): a view
    # with heads and dims transposed shows at token 0.
    runner = _runner(mha_backend="triton")
    module = runner.bound_modules()[17]
    bind_square_transposed_v(module)
    _fires(rf"{module.prefix}\.v_cache: element \(block 0, token 0, head 0, dim 1\) written "
           r"through the bound view is not where the nhd layout puts it in its transfer region; "
           r"element \(block 0, token 0, head 1, dim 0\) of v_cache is there",
           checks.check_element_readback, runner)  # fmt: skip


def test_element_readback_of_a_builder_binding_only_state_views_walks_nothing():
    # Qwen3.5 with its attention layers' paged views gone: the linear layers' conv and
    # recurrent state have no element order to read, so nothing would be walked.
    runner = _runner("qwen3.5-27b")
    for m in runner.bound_modules():
        m.bind({n: v for n, v in m.kv_views.items() if n in checks.STATE_VIEWS})
    assert any(m.kv_views for m in runner.bound_modules())
    _fires(r"builder 'target' binds \d+ modules and none has a view with a documented element "
           r"order: the element readback would walk nothing", checks.check_element_readback, runner)  # fmt: skip


@pytest.mark.parametrize(("name", "lead"), [("index_cache", (64, 128)), ("index_scale", (64,))])
def test_view_geometry_counts_every_leading_axis_as_blocks(name, lead):
    # An indexer field of 2 backend blocks an entry (MiniMax-M3's at twice its block), 3
    # entries: 3 x 2 = 6 blocks of 64 tokens.
    from types import SimpleNamespace as NS

    field = NS(name=name, shape=(2, *lead))
    builder = NS(
        view_home=lambda m, n: ("kind", "pool", n),
        paged_pools={"pool": NS(field_groups=[[field]])},
        blocks=3,
    )
    dim = lead[1] if len(lead) == 2 else 1
    assert checks._view_geometry(builder, None, name, None) == (64, 1, dim, 6)


def test_the_default_seed_is_0(monkeypatch):
    # A failure reproduces by running the check again: with no seed, it is seed 0, as check_all's.
    import random

    seeds = []
    real = random.Random
    monkeypatch.setattr(checks.random, "Random", lambda seed: (seeds.append(seed), real(seed))[1])
    checks.check_write_readback(_runner())
    assert seeds == [0]


def _recording(make, imports):
    def made():
        runner = make()
        real = runner.import_paged_pool

        def record(buf, blocks):
            imports.append((buf.numel(), buf.storage_offset(), blocks))
            return real(buf, blocks)

        runner.import_paged_pool = record
        return runner

    return made


def test_refusals_hand_the_engine_exactly_the_documented_inputs(monkeypatch):
    import atom.pool_layout

    imports, arenas, counts = [], [], []
    real_arena = atom.pool_layout.LayerMajorArena

    def arena(fields, entries, buf=None):
        arenas.append(([(f.name, f.rows, f.shape, f.dtype, f.fill) for f in fields], entries,
                       None if buf is None else buf.numel()))  # fmt: skip
        return real_arena(fields, entries, buf=buf)

    monkeypatch.setattr(atom.pool_layout, "LayerMajorArena", arena)
    built = _runner(blocks=2)
    total = built.paged_pool_bytes(2)
    real_count = built.kv_transfer.set_block_count
    built.kv_transfer.set_block_count = lambda b: (counts.append(b), real_count(b))
    checks.check_refusals(_recording(_make(), imports), 2, built=built)
    # One byte short; exactly the price at storage offset 1.
    assert imports == [(total - 1, 0, 2), (total, 1, 2)]
    assert arenas == [
        ([("index_scores", 1, (16,), torch.float32, float("-inf"))], 1, 256),
        ([], 1, None),
    ]
    assert counts == [3]


def test_refusals_name_the_first_region_of_a_wrong_block_count():
    built = _runner(blocks=2)
    first, second = (r.semantic_role for r in built.kv_transfer.regions[:2])

    def refuse(blocks):
        raise ValueError(f"transfer region {first!r} has 2 units; the scheduler has {blocks}")

    built.kv_transfer.set_block_count = refuse
    checks.check_refusals(_make(), 2, built=built)  # the first region named: a refusal by name
    assert second not in f"{first!r}"


def test_an_inert_store_is_caught_over_bytes_an_earlier_run_wrote(monkeypatch):
    # The tokens already hold values (a first run wrote them): a store that writes nothing and
    # reports what is there would read back "right". The bytes are cleared before each write.
    runner = _runner()
    checks.check_write_readback(runner)

    def inert(paged, layout, slot, values):
        return {n: checks.token_at(n, paged[n], layout, slot).clone() for n in values}

    monkeypatch.setattr(checks, "store_token", inert)
    _fires(r"writing token \d+ changed no byte of the paged buffer",
           checks.check_write_readback, runner)  # fmt: skip


def test_a_state_write_that_lands_in_no_byte_of_its_arena():
    # Every STATE view bound to a copy: each reads back what was written, and the arena the
    # request slot lives in never moved.
    runner = _runner("qwen3.5-27b")
    for m in runner.bound_modules():
        m.bind({n: (v.clone() if n in checks.STATE_VIEWS else v) for n, v in m.kv_views.items()})
    _fires(r"writing request slot \d through 96 STATE views changed no byte of its arena",
           checks.check_write_readback, runner)  # fmt: skip


def test_ends_are_the_first_and_the_last():
    assert checks._ends(1).tolist() == [0]
    assert checks._ends(2).tolist() == [0, 1]
    assert checks._ends(5).tolist() == [0, 4]


def test_a_layer_past_the_first_of_its_kind_is_read_at_the_ends_of_each_block(monkeypatch):
    # llama at 2 blocks of 16: the first and the last token of the first and the last block,
    # slots 0, 15, 16 and 31, all heads and dims; the first layer every token of both blocks.
    written = {}
    real = checks.store_tokens

    def spy(name, cache, layout, slots, values):
        written.setdefault((cache.data_ptr(), name), set()).update(slots.tolist())
        return real(name, cache, layout, slots, values)

    monkeypatch.setattr(checks, "store_tokens", spy)
    runner = _runner()
    checks.check_element_readback(runner)
    first, fifth = runner.bound_modules()[0], runner.bound_modules()[4]
    k = lambda m: written[(m.kv_views["k_cache"].data_ptr(), "k_cache")]  # noqa: E731
    assert k(first) == set(range(32))
    assert k(fifth) == {0, 15, 16, 31}
    assert len(written) == 2 * len(runner.bound_modules())  # K and V of every layer


def test_codes_are_rebuilt_from_the_digits_of_every_pass():
    codes = torch.tensor([1, 255, 256, 70000, 16777215])
    for itemsize, int_dtype in ((1, torch.uint8), (2, torch.int16)):
        passes = [(d, [d]) for d in checks._digits(codes, itemsize, int_dtype)]
        assert torch.equal(checks._rebuilt(passes, 0), codes)
    assert checks.element_named(1, block=4, heads=2, dim=3, names=["k_cache", "v_cache"]) == (
        "element (block 0, token 0, head 0, dim 0) of k_cache"
    )


def test_an_fp8_transposition_names_the_element_found_across_every_pass():
    # fp8 codes take three one-byte passes (K, V and their scales: 4 fields): the element named
    # is rebuilt from all three.
    runner = _runner(kv_dtype="fp8", mha_backend="triton")
    bind_square_transposed_v(runner.bound_modules()[0])
    _fires(r"v_cache: element \(block 0, token 0, head 0, dim 1\) written through the bound view "
           r"is not where the nhd layout puts it in its transfer region; element \(block 0, token "
           r"0, head 1, dim 0\) of v_cache is there", checks.check_element_readback, runner)  # fmt: skip


def test_readback_a_view_read_at_another_block_size_is_named_not_a_traceback(monkeypatch):
    # NHD V declared (heads, block, dim): a kernel reads a 4-token block off it (tp 2: 4 KV
    # heads), and token 20's slot is past its blocks. A violation naming the block, before any
    # slot is computed from it.
    import atom.pool_layout.mha_pool as mha_pool

    real = mha_pool.v_block_shape

    def swapped(layout, **kw):
        shape = real(layout, **kw)
        return (shape[1], shape[0], shape[2]) if layout.value == "nhd" else shape

    monkeypatch.setattr(mha_pool, "v_block_shape", swapped)
    runner = _runner(tp_size=2, mha_backend="triton")
    _fires(r"model\.layers\.0\.self_attn\.v_cache: a kernel reads a 4-token block off the bound "
           r"view's shape \(2, 4, 16, 128\); the builder pages at 16",
           checks.check_write_readback, runner)  # fmt: skip


def test_readback_a_view_holding_no_block_is_named_not_a_traceback():
    runner = _runner()
    m = runner.bound_modules()[3]
    m.bind({**m.kv_views, "k_cache": m.kv_views["k_cache"][:0]})
    _fires(rf"{m.prefix}\.k_cache: token \d+ \(slot \d+\) is not in the bound view: slot \d+ is "
           r"block \d; view 'k_cache' has 0 blocks", checks.check_write_readback, runner)  # fmt: skip
