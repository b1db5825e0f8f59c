"""The refactor record's measured goldens, reproduced from the shipped public configs.

Each golden is checked at the tp, KV dtype and scheduler block the record measured it at, and
carries its arithmetic written out from the config's own fields, so a golden that comes out
right for the wrong reason (a padded row, a dropped layer, a second reading of a width) fails on
the decomposition rather than hiding in a sum. None of the configs was adjusted to make a number
come out; where a golden needs a fact no public config states, the test says which.
"""

from __future__ import annotations

import pytest

from atom.engine_config import EngineConfig
from atom.models.hf_config import ConfigFieldError
from atom.models.registry import load_model_config
from atom.models.skeleton import build_modules
from atom.pool_layout import EntryClass
from atom.runner.model_runner import ModelRunner


def _runner(name, draft=None, **engine):
    draft_config = load_model_config(draft) if draft else None
    return ModelRunner(load_model_config(name), EngineConfig(**engine), draft_config=draft_config)


# -- Kimi-K3 -----------------------------------------------------------------------------------


def test_kimi_k3_entry_bytes_golden_tp8_fp8_block128():
    """Record: "Kimi-K3 `entry_bytes` is 1769472 on this commit and on HEAD" -- tp 8, fp8 KV,
    --block-size 128 (ROCm/ATOM recipes/Kimi-K3.md)."""
    runner = _runner("kimi-k3", tp_size=8, kv_dtype="fp8", scheduler_block_size=128)
    text = runner.text_config
    full_attn = len(text.require("linear_attn_config")["full_attn_layers"])
    latent = text.require_int("kv_lora_rank") + text.require_int("qk_rope_head_dim")
    # 24 MLA rows x 128 tokens x (512 + 64) x 1 B (fp8); no indexer bytes: the config has none.
    assert (full_attn, latent) == (24, 576)
    assert full_attn * 128 * latent * 1 == 1769472
    assert runner.entry_bytes()[EntryClass.PAGE] == 1769472
    assert runner.row_counts() == {"mla": 24, "linear_state": 69}
    (pool,) = runner.builder.paged_pools.values()
    assert pool.index is None and pool.padding_bytes == 0


def test_kimi_k3_declares_nope_but_no_padded_width_so_the_row_is_the_latent():
    modules = build_modules(load_model_config("kimi-k3")).modules
    mla = [m for m in modules if m.caches().startswith("mla")]
    assert len(mla) == 24
    assert {m.kv_entry_dim for m in mla} == {576}


# -- the padded (NoPE) MLA width, read from a config ---------------------------------------------


def test_a_declared_padded_mla_width_is_what_the_pool_prices_and_binds():
    cfg = load_model_config("deepseek-r1").with_overrides(mla_kv_entry_dim=640)
    runner = ModelRunner(cfg, EngineConfig(kv_dtype="fp8"))
    # 62 rows x 16 tokens x 640 (the declared width, not 512 + 64) x 1 B.
    assert runner.entry_bytes()[EntryClass.PAGE] == 62 * 16 * 640 == 634880
    runner.initialize(2)
    view = runner.skeleton.modules[0].kv_views["kv_cache"]
    # 2 scheduler blocks x 16 one-token backend blocks, each a 640-wide row.
    assert view.shape == (32, 1, 640)


def test_a_padded_width_narrower_than_the_latent_is_refused_by_name():
    cfg = load_model_config("deepseek-r1").with_overrides(mla_kv_entry_dim=500)
    with pytest.raises(ConfigFieldError, match=r"mla_kv_entry_dim.*500.*576"):
        build_modules(cfg)


# -- GLM-5.2 -----------------------------------------------------------------------------------


def test_glm52_is_sparse_mla_with_an_indexer_on_every_layer_and_its_mtp_layer():
    runner = _runner("glm-5.2", tp_size=8, kv_dtype="fp8")
    # 78 layers + 1 MTP layer, each with a latent row and an indexer-key row.
    assert runner.row_counts() == {"mla": 79, "mla_index": 79}
    # Per 16-token entry: kv 79 x 16 x 576 x 1 B = 728064; index 79 x 16 x 128 x 1 B = 161792
    # placed at 728064 (already 256-aligned); index_scale 79 x 16 x 4 B = 5056, placed at
    # 728064 + 161792 = 889856; the indexer group ends at 894912 -> rounded to 894976.
    kv = 79 * 16 * 576
    index = 79 * 16 * 128
    scale = 79 * 16 * 4
    group = -(-(index + scale) // 256) * 256
    assert kv + group == 894976
    assert runner.entry_bytes() == {EntryClass.PAGE: 894976}


# -- MiniMax-M3 (+ its EAGLE3 draft) -------------------------------------------------------------


def _m3(**engine):
    engine = {"tp_size": 4, "kv_dtype": "fp8", "scheduler_block_size": 128, **engine}
    return _runner("minimax-m3", "minimax-m3-eagle3", **engine)


def test_minimax_m3_target_pool_golden_tp4_fp8_block128():
    """Record: "`entry_bytes` byte parity ... 2961408 == 2961408 for the target pool" -- tp 4,
    fp8 KV, the target paging at sparse_block_size 128. Every number here is the public config's."""
    runner = _m3()
    text = runner.text_config
    sparse = text.require("sparse_attention_config")
    layers = text.require_int("num_hidden_layers")
    heads = text.require_int("num_key_value_heads") // 4
    head_dim = text.require_int("head_dim")
    block = sparse["sparse_block_size"]
    sparse_layers = sum(1 for f in sparse["sparse_attention_freq"] if f)
    assert (layers, heads, head_dim, block, sparse_layers) == (60, 1, 128, 128, 57)
    kv = 2 * layers * block * heads * head_dim * 1  # K and V, fp8: 1966080
    scales = 2 * layers * heads * block * 4  # one fp32 per token per head: 61440
    index = sparse_layers * block * sparse["sparse_index_dim"] * 1  # fp8 keys: 933888
    assert kv + scales + index == 2961408
    target = [s for s in runner.sub_pool_specs() if s.name == "target.h1d128"]
    assert [s.entry_bytes for s in target] == [2961408]
    assert runner.row_counts() == {"h1d128": 60, "mha_index": 57, "draft.h16d128": 1}


def test_minimax_m3_with_its_eagle3_draft_golden_rests_on_the_assumed_draft_shape():
    """Record: "`sub-pool kv: entry_bytes=3502080` unchanged" -- target plus the EAGLE3 draft's
    sibling pool, one entry each per scheduler block. The draft's 64 heads x 128 are ASSUMED
    (its config.json is not public; see minimax-m3-eagle3.json): 1 layer x 128 tokens x 16 heads
    per rank x (128 + 128) x 1 B + 2 x 128 x 16 x 4 B = 540672, and 2961408 + 540672 = 3502080."""
    runner = _m3()
    draft = 1 * 128 * (64 // 4) * (128 + 128) * 1 + 2 * 128 * (64 // 4) * 4
    assert draft == 540672
    assert runner.entry_bytes() == {EntryClass.PAGE: 2961408 + draft} == {EntryClass.PAGE: 3502080}


def test_minimax_m3_indexer_keys_are_extra_fields_in_their_own_group():
    runner = _m3()
    pool = runner.builder.paged_pools["h1d128"]
    assert [[f.name for f in g] for g in pool.field_groups] == [
        ["k", "v"],
        ["k_scale", "v_scale"],
        ["index"],
    ]
    (index,) = pool.extra_fields
    assert (index.rows, index.shape, index.dtype) == (
        57,
        (1, 128, 128),
        runner.engine.kv_torch_dtype,
    )


def test_minimax_m3_sparse_layers_bind_their_keys_in_the_kernels_shape():
    runner = _m3().initialize(3)
    modules = runner.skeleton.modules
    dense, sparse = modules[2], modules[3]
    assert "index_cache" not in dense.kv_views
    keys = sparse.kv_views["index_cache"]
    # 3 scheduler blocks x 1 backend block of 128 keys, 128 wide, fp8.
    assert keys.shape == (3, 128, 128) and keys.dtype == runner.engine.kv_torch_dtype
    # The first sparse layer owns indexer row 0; its keys sit in the pool's third group.
    assert runner.builder.region_role_of(sparse, "index_cache") == "target.h1d128/index/0"


def test_minimax_m3_indexer_is_charged_per_scheduler_block_at_any_ratio():
    """The old sizing charged `sparse_layers * backend_page * dim` while the allocation was
    `blocks * block_ratio` pages deep: at a 256-token scheduler block (ratio 2) the index field
    must cost 2 x 128 keys an entry, not 128."""
    runner = _m3(scheduler_block_size=256)
    pool = runner.builder.paged_pools["h1d128"]
    (index,) = pool.extra_fields
    assert pool.blocks_per_entry == 2
    assert index.bytes == 57 * 2 * 128 * 128 * 1
    assert runner.entry_bytes()[EntryClass.PAGE] == 2 * 3502080


def test_minimax_m3_pages_at_the_nested_sparse_block_whatever_the_scheduler_says():
    runner = _m3(scheduler_block_size=1024)
    assert runner.builder.block_size == 128
    assert runner.builder.blocks_per_entry == 8
    with pytest.raises(ValueError, match=r"scheduler block size 64 is not a whole number.*128"):
        _m3(scheduler_block_size=64)


def test_a_sparse_attention_freq_that_does_not_cover_every_layer_is_refused_by_name():
    cfg = load_model_config("minimax-m3")
    text = dict(cfg.require("text_config"))
    text["sparse_attention_config"] = {
        **text["sparse_attention_config"],
        "sparse_attention_freq": [0, 0, 0] + [1] * 50,
    }
    bad = cfg.with_overrides(text_config=text)
    with pytest.raises(ConfigFieldError, match=r"sparse_attention_freq.*60 layers"):
        build_modules(bad)
