"""Every runtime check fires, on its own breakage, with its own message.

test_checks_catch_breakage.py breaks what once broke in ATOM before pull request #2147; this file plants one
breakage per individual check of contracts/runtime/checks.py -- the engine built correctly,
then one answer falsified -- and matches that check's message, not just its contract's name,
because sibling checks mask each other: deleting one is invisible to a test that only asks
whether the contract failed.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

import contracts.runtime.checks as checks
from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.pool_layout import EntryClass, EntryField, LayerMajorArena, plan_regions
from atom.runner.kv_transfer import TransferRegion
from atom.runner.model_runner import ModelRunner
from contracts.runtime import ContractViolation


def _make(name="llama-3.1-8b", draft=None, **engine):
    def make():
        return ModelRunner(
            load_model_config(name),
            EngineConfig(**engine),
            draft_config=load_model_config(draft) if draft else None,
        )

    return make


def _runner(name="llama-3.1-8b", blocks=2, **engine):
    return _make(name, **engine)().initialize(blocks)


def _fires(pattern, fn, *args, **kwargs):
    with pytest.raises(ContractViolation, match=pattern):
        fn(*args, **kwargs)


# -- price == carve -----------------------------------------------------------------------------


def test_price_refuses_an_uncarved_runner():
    _fires(r"has not carved its paged pool", checks.check_price_equals_carve, _make()())


def test_price_builder_asking_more_than_its_specs_charge():
    runner = _runner()
    real = runner.builder.paged_pool_bytes
    runner.builder.paged_pool_bytes = lambda b: real(b) + 256
    _fires(
        r"builder 'target' asks \d+ B; its PAGE specs charge",
        checks.check_price_equals_carve,
        runner,
    )


def test_price_region_differing_from_the_charge():
    runner = _runner()
    real = runner.paged_plan(2)
    runner.paged_plan = lambda b: plan_regions([("target", real["target"].nbytes + 256)])
    _fires(r"builder 'target' region is \d+ B, charged", checks.check_price_equals_carve, runner)


def test_price_arenas_holding_more_than_priced():
    runner = _runner()
    views = next(iter(runner.builder.paged_views.values()))
    views.arenas.append(LayerMajorArena([EntryField("x", 1, (256,), torch.uint8)], 1))
    _fires(r"arenas hold \d+ B, priced \d+", checks.check_price_equals_carve, runner)


def test_price_data_plus_padding_not_the_price():
    runner = _runner()
    pool = next(iter(runner.builder.paged_pools.values()))
    pool.__dict__["padding_bytes"] = pool.padding_bytes + 1
    _fires(r"data \d+ B \+ padding != price", checks.check_price_equals_carve, runner)


def test_price_page_entry_bytes_not_the_builders_charges():
    runner = _runner()
    real = runner.entry_bytes()
    runner.entry_bytes = lambda: {EntryClass.PAGE: real[EntryClass.PAGE] + 1}
    _fires(
        r"PAGE entry_bytes \d+ x 2 blocks != builders' charges",
        checks.check_price_equals_carve,
        runner,
    )


def test_price_buffer_longer_than_its_charges():
    runner = _runner()
    runner.paged_buf = torch.zeros(runner.paged_buf.numel() + 4096, dtype=torch.uint8)
    _fires(r"paged buffer is \d+ B for \d+ B of charges", checks.check_price_equals_carve, runner)


def test_price_state_pool_holding_other_than_priced():
    runner = _runner("qwen3.5-27b")
    (views,) = runner.builder.state_views.values()
    views.arena.buf = torch.zeros(views.arena.buf.numel() + 256, dtype=torch.uint8)
    _fires(r"STATE pool \w+ holds \d+ B, priced", checks.check_price_equals_carve, runner)


# -- rows from the walk ---------------------------------------------------------------------------


def test_rows_counts_not_the_module_count():
    runner = _runner()
    real = runner.builder.pool_rows.counts()
    runner.builder.pool_rows.counts = lambda: {k: n + 1 for k, n in real.items()}
    _fires(r"builder 'target' counts .*; its modules number", checks.check_rows_from_walk, runner)


def test_rows_out_of_walk_order():
    from atom.pool_layout import PoolRows

    runner = _runner()
    kind = next(iter(runner.builder.pool_rows))
    mods = list(runner.builder.pool_rows[kind])
    mods[0], mods[1] = mods[1], mods[0]
    runner.builder.pool_rows = PoolRows({kind: mods})
    _fires(r"has h8d128 row 1; it is module 0 of that kind", checks.check_rows_from_walk, runner)


def test_rows_no_module_bound():
    runner = _runner()
    runner.bound_modules = lambda: []
    _fires(r"no module was bound", checks.check_rows_from_walk, runner)


def test_rows_keyerror_that_does_not_name_the_module():
    runner = _runner()

    def bind(module):
        raise KeyError("some other row")

    runner.builder.build_kv_cache_tensor = bind
    _fires(r"KeyError for an unwalked module does not name it", checks.check_rows_from_walk, runner)


def test_rows_an_unwalked_module_bound():
    runner = _runner()
    runner.builder.build_kv_cache_tensor = lambda module: None
    _fires(
        r"bound .*unwalked_twin, which its walk never visited", checks.check_rows_from_walk, runner
    )


# -- bind parity ----------------------------------------------------------------------------------


def _pair():
    runner = _runner()
    importing = _make()().import_paged_pool(runner.paged_buf.clone(), 2)
    return runner, importing


def test_parity_different_module_lists():
    runner, importing = _pair()
    mods = importing.bound_modules()
    importing.bound_modules = lambda: mods[:-1]
    _fires(
        r"the two paths bound different module lists", checks.check_bind_parity, runner, importing
    )


def test_parity_different_view_names():
    runner, importing = _pair()
    b = importing.bound_modules()[0]
    b.bind({"k_cache": b.kv_views["k_cache"]})
    _fires(
        r"views \['k_cache', 'v_cache'\] vs \['k_cache'\]",
        checks.check_bind_parity,
        runner,
        importing,
    )


def test_parity_an_import_view_of_another_buffer_with_the_same_signature():
    runner, importing = _pair()
    b = importing.bound_modules()[0]
    k = b.kv_views["k_cache"]
    elsewhere = torch.tensor([], dtype=k.dtype).set_(
        k.untyped_storage().clone(), k.storage_offset(), k.shape, k.stride()
    )
    b.bind({**b.kv_views, "k_cache": elsewhere})
    _fires(
        r"on the import side is not a view of the imported buffer",
        checks.check_bind_parity,
        runner,
        importing,
    )


# -- disjoint and in bounds -----------------------------------------------------------------------


def test_disjoint_a_view_of_no_known_buffer():
    runner = _runner()
    m = runner.bound_modules()[0]
    m.bind({**m.kv_views, "k_cache": m.kv_views["k_cache"].clone()})
    _fires(
        r"k_cache is a view of neither the paged buffer nor a STATE arena",
        checks.check_disjoint_in_bounds,
        runner,
    )


def test_disjoint_a_view_outside_its_region():
    runner = _make("minimax-m2", "eagle3-draft-llama", tp_size=4)().initialize(2)
    draft = runner.draft_modules[0]
    k = draft.kv_views["k_cache"]
    draft.bind({**draft.kv_views, "k_cache": torch.as_strided(k, k.shape, k.stride(), 0)})
    _fires(
        r"k_cache spans bytes \[0, \d+\); its region is \[\d+, \d+\)",
        checks.check_disjoint_in_bounds,
        runner,
    )


# -- transfer units -------------------------------------------------------------------------------


def test_transfer_num_blocks_not_the_schedulers():
    runner = _runner()
    runner.kv_transfer.num_blocks = 3
    _fires(r"transfer num_blocks is 3, scheduler has 2", checks.check_transfer_units, runner)


def test_transfer_repeated_role():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[1] = TransferRegion(r[0].semantic_role, r[1].tensor)
    _fires(
        r"semantic_role 'target.h8d128/k/0' is empty or repeated",
        checks.check_transfer_units,
        runner,
    )


def test_transfer_stride_not_what_a_block_owns():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[0] = TransferRegion(r[0].semantic_role, r[0].tensor[:, ::2])
    _fires(r"stride\(0\) is \d+ B; a block owns \d+", checks.check_transfer_units, runner)


def test_transfer_region_outside_the_paged_buffer():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[0] = TransferRegion(r[0].semantic_role, r[0].tensor.clone())
    _fires(
        r"region 'target.h8d128/k/0' is part of neither the paged buffer nor a builder's own",
        checks.check_transfer_units,
        runner,
    )


def test_transfer_overlapping_regions():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[1] = TransferRegion(r[1].semantic_role, r[0].tensor)
    _fires(r"regions .* and .* overlap", checks.check_transfer_units, runner)


def test_transfer_regions_missing_data():
    runner = _runner()
    runner.kv_transfer.regions.pop()
    _fires(
        r"regions cover \d+ B; the paged pools hold \d+ B of data",
        checks.check_transfer_units,
        runner,
    )


def test_transfer_a_view_whose_region_is_not_registered():
    runner = _runner()
    r = runner.kv_transfer.regions
    r[0] = TransferRegion(r[0].semantic_role + ".renamed", r[0].tensor)
    _fires(
        r"reads from 'target.h8d128/k/0', which no transfer registers",
        checks.check_transfer_units,
        runner,
    )


# -- write-readback ------------------------------------------------------------------------------


def test_readback_different_bytes(monkeypatch):
    runner = _runner()
    monkeypatch.setattr(
        checks, "load_token", lambda views, layout, slot, names: {n: torch.zeros(1) for n in names}
    )
    _fires(
        r"token \d+ reads back different bytes than were written",
        checks.check_write_readback,
        runner,
    )


def test_readback_a_write_that_changes_nothing(monkeypatch):
    runner = _runner()

    def inert(paged, layout, slot, values):
        return {n: checks.token_at(n, paged[n], layout, slot).clone() for n in values}

    monkeypatch.setattr(checks, "store_token", inert)
    _fires(
        r"writing token \d+ changed no byte of the paged buffer",
        checks.check_write_readback,
        runner,
    )


def test_readback_a_write_that_spills_outside_its_block(monkeypatch):
    runner = _runner()
    real = checks.store_token

    def spill(paged, layout, slot, values):
        out = real(paged, layout, slot, values)
        runner.paged_buf[-1] += 1  # the last row's V: another layer's bytes
        return out

    monkeypatch.setattr(checks, "store_token", spill)
    last = runner.paged_buf.numel() - 1
    _fires(
        rf"writing one token through each of the 32 modules of builder 'target' changed bytes "
        rf"{last} to {last} of the paged buffer, which none of those tokens holds",
        checks.check_write_readback,
        runner,
    )


def test_readback_a_write_that_also_changes_the_next_token_of_its_block(monkeypatch):
    """Inside the token's own block of its own region, which a check of block ranges allows:
    the bytes of the token after it are another token's, and they moved."""
    runner = _runner()
    real = checks.store_token

    def neighbour(paged, layout, slot, values):
        out = real(paged, layout, slot, values)
        other = slot + 1 if slot % 16 < 15 else slot - 1  # the same 16-token block
        checks.token_at("k_cache", paged["k_cache"], layout, other).add_(1)
        return out

    monkeypatch.setattr(checks, "store_token", neighbour)
    _fires(
        r"writing one token through each of the 32 modules of builder 'target' changed bytes "
        r"\d+ to \d+ of the paged buffer, which none of those tokens holds",
        checks.check_write_readback,
        runner,
    )


def test_readback_a_verifier_reading_the_draft_elsewhere(monkeypatch):
    runner = _make("minimax-m2", "eagle3-draft-llama", tp_size=4)().initialize(2)
    monkeypatch.setattr(checks, "reblock", lambda n, v, layout, bs: v.roll(1, 0))
    _fires(
        # The draft builder's layer: an MTP layer of the target's own builder (minimax-m2's
        # layer 62) is read at its own block, which is the target's, and has no verifier to fail.
        r"draft draft\.layers\.0\.self_attn\.k_cache token \d+: read with the target builder's "
        r"16-token block, the verifier sees other bytes",
        checks.check_write_readback,
        runner,
    )


def test_readback_a_state_write_outside_its_entry():
    runner = _runner("qwen3.5-27b", state_entries=2)
    (views,) = runner.builder.state_views.values()
    real = views.entry
    views.entry = lambda i: real(1 - i)
    _fires(
        r"a state write for slot \d changed \[\d+, \d+\), not only entry",
        checks.check_write_readback,
        runner,
    )


def test_element_readback_a_view_with_no_documented_order():
    runner = _runner()
    m = runner.bound_modules()[0]
    m.bind({**m.kv_views, "odd_cache": m.kv_views["k_cache"]})
    _fires(
        r"binds views \['odd_cache'\] with no documented element order",
        checks.check_element_readback,
        runner,
    )


# -- refusal by name ------------------------------------------------------------------------------


def _accepting(make):
    def made():
        runner = make()
        runner.import_paged_pool = lambda buf, blocks: runner
        return runner

    return made


def test_refusals_an_import_that_accepts_a_short_buffer():
    _fires(r"a short imported buffer: accepted", checks.check_refusals, _accepting(_make()), 2)


def test_refusals_a_refusal_that_does_not_name_the_value():
    def made():
        runner = _make()()

        def vague(buf, blocks):
            raise ValueError("bad buffer")

        runner.import_paged_pool = vague
        return runner

    _fires(
        r"a short imported buffer: refused, but the message does not name '\d+': bad buffer",
        checks.check_refusals,
        made,
        2,
    )


def test_refusals_a_state_import_accepted():
    _fires(
        r"a STATE pool on the P/D decode side: accepted",
        checks.check_refusals,
        _accepting(_make("qwen3.5-27b")),
        1,
    )


def test_refusals_a_state_refusal_after_backing_part_of_the_pool():
    def made():
        runner = _make("qwen3.5-27b")()
        real = runner.import_paged_pool

        def late(buf, blocks):
            runner.paged_buf = buf
            real(buf, blocks)

        runner.import_paged_pool = late
        return runner

    _fires(
        r"the STATE refusal came after part of the pool was backed", checks.check_refusals, made, 1
    )


def test_refusals_a_block_count_the_regions_accept(monkeypatch):
    runner = _runner()
    runner.kv_transfer.set_block_count = lambda blocks: None
    _fires(
        r"a transfer at the wrong block count: accepted",
        checks.check_refusals,
        _make(),
        2,
        built=runner,
    )


def test_a_twin_keeps_everything_but_its_name_and_views():
    runner = _runner()
    m = runner.bound_modules()[0]
    twin = checks._twin(m)
    assert twin.prefix == f"{m.prefix}.unwalked_twin" and twin.kv_views == {}
    assert (
        dataclasses.replace(twin, prefix=m.prefix, kv_views=m.kv_views).num_kv_heads
        == m.num_kv_heads
    )


# -- the helpers the checks read through ---------------------------------------------------------


def test_a_violation_names_a_known_contract_and_prints_it():
    with pytest.raises(ValueError, match=r"unknown runtime contract 'bogus'"):
        ContractViolation("bogus", "x")
    assert str(ContractViolation("bind-parity", "x")) == "[bind-parity] x"


def test_a_runner_missing_either_half_of_its_carve_is_refused():
    runner = _runner()
    runner.paged_buf = None
    _fires(r"has not carved its paged pool", checks.check_price_equals_carve, runner)


def test_byte_extent_counts_bytes_not_elements():
    t = torch.zeros(5, dtype=torch.int32)[1:]
    assert checks.byte_extent(t) == (4, 20)
    assert checks.byte_extent(t[:0]) == (4, 4)
    assert checks.byte_extent(torch.zeros(3, 4, dtype=torch.int16)[:, 1:3]) == (2, 22)


def test_a_builder_that_allocates_its_own_is_skipped_not_priced():
    """Answering zero takes the builder out of the paged buffer's pricing: no region is asked
    of it. What it then holds is priced against its own buffers (the tests below); a builder
    that charges nothing and holds nothing is consistent."""
    runner = _runner()
    runner.builder.paged_pool_bytes = lambda b: 0
    runner.builder.paged_entry_bytes = lambda: 0
    runner.entry_bytes = lambda: {EntryClass.PAGE: 0}
    runner.paged_plan = lambda b: plan_regions([])
    runner.paged_buf = torch.zeros(0, dtype=torch.uint8)
    checks.check_price_equals_carve(runner)  # nothing charged, nothing carved: consistent


def test_a_builder_that_allocates_its_own_but_holds_nothing_of_its_charge():
    """The same builder still charging its PAGE price: zero bytes asked of the paged buffer
    and none allocated either is a pool priced and never carved."""
    runner = _runner()
    runner.builder.paged_pool_bytes = lambda b: 0
    _fires(
        r"builder 'target' charges \d+ B of PAGE and holds none",
        checks.check_price_equals_carve,
        runner,
    )


def _v4_runner(**engine):
    engine = {"scheduler_block_size": 256, "tp_size": 2, **engine}
    return _make("deepseek-v4-flash-dspark", **engine)().initialize(2, state_entries=2)


def test_a_builder_that_allocates_its_own_holding_other_than_its_price():
    runner = _v4_runner()
    checks.check_price_equals_carve(runner)
    index_buf, plane_buf = runner.builder.own_buffers()
    runner.builder.own_buffers = lambda: [index_buf, plane_buf[:-256]]
    _fires(
        r"builder 'target' allocates its own and holds \d+ B; PAGE \d+ B \+ STATE \d+ B x 2 "
        r"requests = \d+",
        checks.check_price_equals_carve,
        runner,
    )


def test_disjoint_two_views_of_an_own_buffer_sharing_bytes():
    runner = _v4_runner()
    checks.check_disjoint_in_bounds(runner)  # views of its own buffers are accepted
    first, second = [m for m in runner.bound_modules() if m.compress_ratio == 128][:2]
    second.bind({**second.kv_views, "kv_compressed": first.kv_views["kv_compressed"]})
    _fires(
        r"reachable through .*kv_compressed and .*kv_compressed",
        checks.check_disjoint_in_bounds,
        runner,
    )


def test_disjoint_a_view_outside_the_own_buffer_its_builder_holds():
    """The builder says it holds less of the planes than its views reach (a slice of the
    storage they are cut from): the view past the end is outside its own buffer. The planes
    follow the indexer's blocks in the one buffer, so their range starts past 0."""
    runner = _v4_runner()
    index_buf, plane_buf = runner.builder.own_buffers()
    runner.builder.own_buffers = lambda: [index_buf, plane_buf[: plane_buf.numel() // 2]]
    start = index_buf.numel()
    _fires(
        rf"spans bytes \[\d+, \d+\); its region is \[{start}, \d+\)",
        checks.check_disjoint_in_bounds,
        runner,
    )


def test_byte_extent_of_one_element_is_that_element():
    assert checks.byte_extent(torch.zeros(1, dtype=torch.int32)) == (0, 4)
