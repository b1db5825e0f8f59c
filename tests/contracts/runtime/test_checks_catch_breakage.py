"""Each runtime check fails on the breakage it exists for: a check that cannot fail is a stub.

The runner is built correctly, then one fact is broken by hand the way it once broke in ATOM
(as its KV-pool refactor, pull request #2147, describes), and the check must name the contract.
"""

from __future__ import annotations

import pytest
import torch

from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.pool_layout.transfer import TransferRegion
from atom.runner.model_runner import ModelRunner
from contracts.runtime import (
    ContractViolation,
    check_bind_parity,
    check_disjoint_in_bounds,
    check_price_equals_carve,
    check_rows_from_walk,
    check_transfer_units,
    check_write_readback,
)


def _runner(name="llama-3.1-8b", blocks=2, **engine):
    return ModelRunner(load_model_config(name), EngineConfig(**engine)).initialize(blocks)


def test_disjointness_catches_two_modules_bound_to_one_row():
    runner = _runner()
    first, second = runner.bound_modules()[:2]
    second.bind(dict(first.kv_views))
    with pytest.raises(ContractViolation, match=r"disjoint-in-bounds.*reachable through"):
        check_disjoint_in_bounds(runner)


def test_disjointness_catches_a_view_outside_its_region():
    runner = ModelRunner(
        load_model_config("minimax-m2"),
        EngineConfig(tp_size=4),
        draft_config=load_model_config("eagle3-draft-llama"),
    ).initialize(2)
    # The draft's region follows the target's; a draft view moved to the buffer's front reads
    # the target's first row -- inside the buffer, outside its own region.
    draft = runner.draft_modules[0]
    k = draft.kv_views["k_cache"]
    moved = torch.as_strided(k, k.shape, k.stride(), 0)
    draft.bind({**draft.kv_views, "k_cache": moved})
    with pytest.raises(ContractViolation, match=r"disjoint-in-bounds.*draft.layers.0"):
        check_disjoint_in_bounds(runner)


def test_bind_parity_catches_an_import_side_that_binds_another_row():
    runner = _runner()
    importing = ModelRunner(load_model_config("llama-3.1-8b")).import_paged_pool(
        runner.paged_buf.clone(), 2
    )
    a, b = importing.bound_modules()[:2]
    a.bind(dict(b.kv_views))
    with pytest.raises(ContractViolation, match=r"bind-parity.*k_cache"):
        check_bind_parity(runner, importing)


def test_transfer_check_catches_a_region_registered_per_token():
    """Identical total bytes, blocks_per_entry x the units: only the unit count tells."""
    runner = _runner("deepseek-r1", kv_dtype="fp8")
    region = runner.kv_transfer.regions[0]
    tokens = runner.engine.scheduler_block_size
    per_token = region.tensor.reshape(region.units * tokens, -1)
    runner.kv_transfer.regions[0] = TransferRegion(region.semantic_role, per_token)
    with pytest.raises(
        ContractViolation,
        match=rf"transfer-units\] region '{region.semantic_role}' has {2 * tokens} units, scheduler 2",
    ):
        check_transfer_units(runner)


def test_transfer_check_catches_a_missing_region():
    runner = _runner()
    runner.kv_transfer.regions.pop()
    with pytest.raises(ContractViolation, match=r"transfer-units"):
        check_transfer_units(runner)


def test_price_check_catches_a_pool_whose_arenas_outgrow_its_price():
    runner = _runner()
    pool = next(iter(runner.builder.paged_pools.values()))
    real = pool.spec

    def undercharged(name):
        spec = real(name)
        return type(spec)(spec.name, spec.entry_class, spec.entry_bytes - 256)

    pool.spec = undercharged
    with pytest.raises(ContractViolation, match=r"price-equals-carve"):
        check_price_equals_carve(runner)


def test_rows_check_catches_rows_out_of_walk_order():
    runner = _runner()
    rows = runner.builder.pool_rows
    kind = next(iter(rows))
    mods = list(rows[kind])
    # A counter advanced in another order than the walk's: rows swapped between two modules.
    mods[0], mods[1] = mods[1], mods[0]
    from atom.pool_layout import PoolRows

    runner.builder.pool_rows = PoolRows({kind: mods})
    with pytest.raises(ContractViolation, match=r"rows-from-walk"):
        check_rows_from_walk(runner)


def test_write_readback_catches_a_view_bound_one_block_off():
    runner = _runner(blocks=3)
    module = runner.bound_modules()[0]
    k = module.kv_views["k_cache"]
    # Same shape, stride and dtype, one block further on: block b's tokens land in block b+1.
    rolled = torch.as_strided(k, k.shape, k.stride(), k.storage_offset() + k.stride(0))
    module.bind({**module.kv_views, "k_cache": rolled})
    with pytest.raises(ContractViolation, match=r"write-readback.*outside block"):
        check_write_readback(runner)


def test_write_readback_catches_a_densified_copy():
    """The relayout ATOM's pull request #2147 describes: a consumer handed a copy writes bytes
    no transfer will ever send."""
    runner = _runner(blocks=2)
    module = runner.bound_modules()[0]
    module.bind({**module.kv_views, "v_cache": module.kv_views["v_cache"].clone()})
    with pytest.raises(
        ContractViolation, match=r"write-readback.*v_cache.*not a view of the paged"
    ):
        check_write_readback(runner)


def test_rows_check_catches_a_pool_sized_from_the_configs_layer_count():
    """Regression: `layers=hf_config.num_hidden_layers` -- 64 on Qwen3.5, whose pool caches 16."""
    from atom.backends.mha import mha_pool_for

    runner = _runner("qwen3.5-27b", blocks=1, tp_size=8, kv_dtype="fp8")
    (name,) = runner.builder.paged_pools
    (geometry,) = [k for k in runner.builder.pool_rows if str(k) == name]
    runner.builder.paged_pools[name] = mha_pool_for(
        runner.bound_modules(),
        geometry,
        runner.text_config.require_int("num_hidden_layers"),
        block_size=runner.builder.block_size,
        blocks_per_entry=runner.builder.blocks_per_entry,
        kv_dtype=runner.builder.kv_dtype,
        layout="shuffle",
    )
    with pytest.raises(ContractViolation, match=r"rows-from-walk.*built with \{64\} rows.*\{16\}"):
        check_rows_from_walk(runner)
