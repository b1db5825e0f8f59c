"""The runner: one walk, one price, one buffer, one bind; the import path; release."""

from __future__ import annotations

import re

import pytest
import torch

from atom.backends.backend import blocks_per_entry
from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.pool_layout import EntryClass, KvGeometry
from atom.pool_layout.transfer import KVTransferTensors, TransferRegion
from atom.runner.model_runner import ModelRunner


def _runner(name, **engine):
    return ModelRunner(load_model_config(name), EngineConfig(**engine))


def test_deepseek_r1_fp8_golden():
    # 62 rows (61 layers + 1 MTP) x 16 tokens x (512 + 64) latent x 1 B (fp8) = 571392.
    runner = _runner("deepseek-r1", kv_dtype="fp8")
    assert (
        runner.entry_bytes()
        == {EntryClass.PAGE: 62 * 16 * (512 + 64) * 1}
        == {EntryClass.PAGE: 571392}
    )
    assert runner.row_counts() == {"mla": 62}


def test_qwen35_tp2_fp8_golden():
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    # K and V: 16 rows x 16 tokens x 2 heads x 256 x 1 B = 131072 each;
    # scales: 16 rows x 16 tokens x 2 heads x 4 B = 2048 each.
    page = 2 * (16 * 16 * 2 * 256 * 1) + 2 * (16 * 16 * 2 * 4)
    # STATE: 48 rows x (conv 3 x 5120 x 2 B + ssm 24 x 128 x 128 x 2 B).
    state = 48 * (3 * 5120 * 2 + 24 * 128 * 128 * 2)
    assert (page, state) == (266240, 39223296)
    assert runner.entry_bytes() == {EntryClass.PAGE: page, EntryClass.STATE: state}
    assert runner.row_counts() == {"linear_state": 48, str(KvGeometry(2, 256)): 16}


def test_rows_come_from_the_walk_not_the_config_layer_count():
    """Regression: `MhaKvPool.from_hf_config` took layers=num_hidden_layers (64 on Qwen3.5);
    the pool caches 16 full-attention rows, and pricing it at 64 is 48 layers paid for and never
    addressed, invisible to a byte check that reads the same inflated entry_bytes."""
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    (pool,) = runner.builder.paged_pools.values()
    assert pool.rows == 16 != runner.text_config.get("num_hidden_layers")
    # And a PP stage prices only the rows its own modules hold.
    stage = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8", pp_size=2, pp_rank=1)
    assert stage.row_counts() == {"linear_state": 24, "h2d256": 8}


def test_mimo_two_geometries_are_two_page_specs_in_one_block_id_space():
    runner = _runner("mimo-v2-flash")
    specs = [s for s in runner.sub_pool_specs() if s.entry_class is EntryClass.PAGE]
    assert [s.name for s in specs] == ["target.h4d192", "target.h8d192"]
    # 16 tokens x heads x (192 K + 128 V) x 2 B, per row: 9 rows of 4 heads + 39 rows of 8.
    full = 9 * 16 * 4 * (192 + 128) * 2
    swa = 39 * 16 * 8 * (192 + 128) * 2
    assert [s.entry_bytes for s in specs] == [full, swa]
    assert runner.entry_bytes()[EntryClass.PAGE] == full + swa


def test_carve_places_each_builder_once_and_checks_its_charge():
    runner = _runner("minimax-m2", tp_size=2)
    runner.initialize(3)
    plan = runner.paged_plan(3)
    assert [r.name for r in plan.regions] == ["target"]
    assert runner.paged_buf.numel() == runner.builder.paged_entry_bytes() * 3


def test_a_builder_taking_more_than_its_charge_is_refused_at_start(monkeypatch):
    runner = _runner("llama-3.1-8b")
    pool = next(iter(runner.builder.paged_pools.values()))
    real = pool.spec
    monkeypatch.setattr(
        pool,
        "spec",
        lambda name: type(real(name))(name, EntryClass.PAGE, real(name).entry_bytes - 256),
    )
    with pytest.raises(ValueError, match=r"builder 'target' took .* its PAGE specs charged"):
        runner.initialize(2)


def test_a_builder_answering_zero_allocates_its_own_and_gets_no_region(monkeypatch):
    runner = _runner("llama-3.1-8b")
    calls = {}

    def own_allocation(*, blocks, buf):
        calls["args"] = (blocks, buf)
        return {}

    monkeypatch.setattr(runner.builder, "paged_pool_bytes", lambda entries: 0)
    monkeypatch.setattr(runner.builder, "allocate_kv_cache_tensors", own_allocation)
    assert runner.paged_plan(4).regions == ()
    runner._back_paged_pools(4, torch.zeros(0, dtype=torch.uint8))
    assert calls["args"] == (4, None)


def test_import_path_refuses_a_state_pool_by_name_before_backing_anything():
    runner = _runner("qwen3.5-27b", tp_size=2)
    with pytest.raises(ValueError, match=r"STATE pools \['target.linear_state'\]"):
        runner.import_paged_pool(torch.zeros(runner.paged_pool_bytes(2), dtype=torch.uint8), 2)
    assert runner.paged_buf is None
    assert runner.builder.paged_views == {}
    assert all(not m.kv_views for m in runner.bound_modules())


def test_import_path_backs_the_same_walk_over_the_peer_buffer():
    prefill = _runner("deepseek-v3.2-exp", kv_dtype="fp8").initialize(2)
    buf, blocks = prefill.export_paged_pool()
    decode = _runner("deepseek-v3.2-exp", kv_dtype="fp8").import_paged_pool(buf, blocks)
    # The decode side's views alias the peer's bytes: a write on one side is read on the other.
    a = prefill.bound_modules()[7].kv_views["kv_cache"]
    b = decode.bound_modules()[7].kv_views["kv_cache"]
    a[3, 0, 5] = 1.5
    assert b[3, 0, 5].float().item() == 1.5
    assert decode.kv_transfer.num_blocks == 2


def test_short_and_misaligned_imports_are_refused_by_their_numbers():
    runner = _runner("llama-3.1-8b")
    total = runner.paged_pool_bytes(2)
    with pytest.raises(ValueError, match=rf"holds {total - 256} bytes; the plan needs {total}"):
        _runner("llama-3.1-8b").import_paged_pool(torch.zeros(total - 256, dtype=torch.uint8), 2)
    with pytest.raises(ValueError, match=r"storage offset 1"):
        _runner("llama-3.1-8b").import_paged_pool(torch.zeros(total + 1, dtype=torch.uint8)[1:], 2)


def test_release_frees_every_pool_and_unbinds_every_module():
    runner = ModelRunner(
        load_model_config("minimax-m2"),
        EngineConfig(tp_size=4),
        draft_config=load_model_config("eagle3-draft-llama"),
    ).initialize(2)
    runner.release()
    assert runner.paged_buf is None and runner.kv_transfer is None
    assert runner.builder.paged_views == {} and runner.draft_builder.paged_views == {}
    assert all(not m.kv_views for m in runner.bound_modules())
    # And the same walk binds again afterwards (a rollout wake): the rows do not move.
    before = runner.row_counts()
    runner.initialize(2)
    assert runner.row_counts() == before


def test_set_block_count_refuses_a_region_registered_per_token():
    """Regression: per token instead of per scheduler block is blocks_per_entry x the units at
    1/blocks_per_entry the stride -- the same total bytes -- so only the unit count tells."""
    runner = _runner("deepseek-r1", kv_dtype="fp8").initialize(2)
    region = runner.kv_transfer.regions[0]
    per_token = region.tensor.reshape(2 * 16, -1)
    assert per_token.numel() == region.tensor.numel()
    transfer = KVTransferTensors(regions=[TransferRegion(region.semantic_role, per_token)])
    with pytest.raises(ValueError, match=rf"'{region.semantic_role}' has 32 units .* 2 blocks"):
        transfer.set_block_count(2)


def test_num_blocks_is_set_once_after_the_draft_appends():
    runner = ModelRunner(
        load_model_config("minimax-m2"),
        EngineConfig(tp_size=8),
        draft_config=load_model_config("eagle3-draft-llama"),
    ).initialize(2)
    roles = [r.semantic_role for r in runner.kv_transfer.regions]
    assert roles[-1].startswith("draft.") and roles[0].startswith("target.")
    with pytest.raises(ValueError, match=r"appended after set_block_count"):
        runner.kv_transfer.append(runner.kv_transfer.regions[0])
    with pytest.raises(TypeError):
        KVTransferTensors(regions=[], num_blocks=3)


def test_regions_carry_their_semantic_role():
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8", state_entries=1).initialize(1)
    roles = [r.semantic_role for r in runner.kv_transfer.regions]
    assert roles[:2] == ["target.h2d256/k/0", "target.h2d256/k/1"]
    assert "target.h2d256/v_scale/15" in roles
    assert len(roles) == 4 * 16


def test_budget_buys_blocks_after_state_is_paid():
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    budget = 4 * 39223296 + 10 * 266240 + 100
    assert runner.blocks_for_budget(budget, state_entries=4) == 10


def test_budget_with_no_state_entries_pays_for_none():
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    # 0 STATE entries cost 0 B, so 10 x 266240 + 100 B buys 10 blocks; the engine's default of
    # 1 entry (39223296 B) would leave nothing for blocks.
    assert runner.blocks_for_budget(10 * 266240 + 100, state_entries=0) == 10


def test_an_mla_draft_offered_to_an_mha_target_is_refused_by_module():
    mla_draft = load_model_config("deepseek-r1").with_overrides(
        num_hidden_layers=1, num_nextn_predict_layers=0
    )
    with pytest.raises(
        ValueError, match=r"draft.layers.0.self_attn .* no row space in builder 'target'"
    ):
        ModelRunner(load_model_config("llama-3.1-8b"), draft_config=mla_draft)


# -- budget sizing refuses what it cannot honour, by name ----------------------------------------


def test_a_budget_that_buys_no_block_is_refused_with_the_prices():
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    # 4 STATE entries (4 x 39223296 B) and 266240 B a block: 100 B short of the first block.
    budget = 4 * 39223296 + 266240 - 100
    with pytest.raises(ValueError, match=r"buys no scheduler block: 4 STATE entries cost "
                       r"156893184 B and one PAGE block costs 266240 B"):  # fmt: skip
        runner.blocks_for_budget(budget, state_entries=4)
    assert runner.blocks_for_budget(budget + 100, state_entries=4) == 1


def test_a_negative_state_entry_count_is_refused_not_credited():
    """-1 entries once made a 0 B budget buy 147 blocks: a STATE price subtracted negatively."""
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    with pytest.raises(
        ValueError, match=r"state_entries must be at least 0 \(request slots\), got -1"
    ):
        runner.blocks_for_budget(0, state_entries=-1)
    with pytest.raises(TypeError, match=r"state_entries must be an int \(request slots\), got 2.0"):
        runner.blocks_for_budget(10**9, state_entries=2.0)
    with pytest.raises(
        TypeError, match=r"state_entries must be an int \(request slots\), got True"
    ):
        runner.blocks_for_budget(10**9, state_entries=True)


@pytest.mark.parametrize(
    ("budget", "error", "needle"),
    [
        (1e9, TypeError, r"budget_bytes must be an int \(bytes\), got 1000000000.0 \(float\)"),
        ("1GiB", TypeError, r"got '1GiB' \(str\)"),
        (True, TypeError, r"got True \(bool\)"),
        (-1, ValueError, r"budget_bytes must be at least 0 \(bytes\), got -1"),
    ],
)
def test_a_budget_of_the_wrong_kind_is_refused_by_name(budget, error, needle):
    runner = _runner("llama-3.1-8b")
    with pytest.raises(error, match=needle):
        runner.blocks_for_budget(budget)


def test_a_state_entry_count_is_validated_where_state_is_allocated_too():
    with pytest.raises(
        ValueError, match=r"state_entries must be at least 0 \(request slots\), got -2"
    ):
        _runner("qwen3.5-27b").initialize(1, state_entries=-2)


def test_full_attention_interval_zero_is_refused_not_priced_as_pure_mha():
    cfg = load_model_config("qwen3.5-27b").with_overrides(full_attention_interval=0)
    with pytest.raises(ValueError, match=r"full_attention_interval.*must be >= 1, got 0"):
        ModelRunner(cfg)


def test_an_absurd_head_dim_is_refused_by_name_and_bound():
    """head_dim 10**12 once priced 14,901 TiB a block without a word; the bound is int32's."""
    cfg = load_model_config("llama-3.1-8b").with_overrides(head_dim=10**12)
    with pytest.raises(ValueError, match=r"head_dim.*is 1000000000000, above 2147483647"):
        ModelRunner(cfg)
    with pytest.raises(ValueError, match=r"head_dim.*must be an integer, got 1000000000000.0"):
        ModelRunner(load_model_config("llama-3.1-8b").with_overrides(head_dim=1e12))


@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        ("fp8", torch.float8_e4m3fn),
        ("fp8_e4m3fnuz", torch.float8_e4m3fnuz),
        ("fp8_e5m2", torch.float8_e5m2),
    ],
)
def test_every_fp8_kv_dtype_keeps_its_scales(name, dtype):
    """ROCm's fp8 is e4m3fnuz: recognising only e4m3fn priced such a pool without its scales."""
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype=name)
    assert runner.engine.is_fp8
    # Same golden as the e4m3fn build (266240): every fp8 is one byte and carries fp32 scales.
    assert runner.entry_bytes()[EntryClass.PAGE] == 2 * 16 * 16 * 2 * 256 * 1 + 2 * 16 * 16 * 2 * 4
    runner.initialize(1)
    views = runner.bound_modules()[3].kv_views
    assert views["k_cache"].dtype == dtype and {"k_scale", "v_scale"} <= set(views)


def _count_takers():
    """Each place past the runner that takes a count, called with the count given."""
    target = _runner("llama-3.1-8b")
    eagle = ModelRunner(
        load_model_config("minimax-m2"), draft_config=load_model_config("eagle3-draft-llama")
    )
    # The planes need the block count first; V4 pages at 256 tokens.
    v4 = _runner("deepseek-v4-flash-dspark", scheduler_block_size=256).initialize(1)
    return {
        "builder 'target': blocks": lambda n: target.builder.allocate_kv_cache_tensors(
            blocks=n, buf=None
        ),
        "draft 'draft': blocks": lambda n: eagle.draft_builder.allocate_kv_cache_tensors(
            blocks=n, buf=None
        ),
        "blocks": lambda n: KVTransferTensors(regions=[]).set_block_count(n),
        "builder 'target': entries": lambda n: v4.builder.allocate_per_req_cache(entries=n),
        "x: backend block size": lambda n: blocks_per_entry(16, n, who="x"),
    }


_UNITS = {"blocks": "scheduler blocks", "entries": "request slots", "block size": "tokens"}


@pytest.mark.parametrize(
    "name",
    [
        "builder 'target': blocks",
        "draft 'draft': blocks",
        "blocks",
        "builder 'target': entries",
        "x: backend block size",
    ],
)
def test_every_count_is_refused_by_type_then_by_value_naming_it(name):
    """A count that is not an int is a TypeError naming the value: 2.0 (a count worked out with
    `/`) and True (an int to isinstance) count nothing. One below 1 is a ValueError naming the
    count, its unit and the value."""
    take = _count_takers()[name]
    unit = next(u for k, u in _UNITS.items() if name.endswith(k))
    label = re.escape(f"{name} must be")
    with pytest.raises(TypeError, match=rf"^{label} an int \({unit}\), got 2\.0 \(float\)$"):
        take(2.0)
    with pytest.raises(TypeError, match=rf"^{label} an int \({unit}\), got True \(bool\)$"):
        take(True)
    with pytest.raises(ValueError, match=rf"^{label} at least 1 \({unit}\), got 0$"):
        take(0)
