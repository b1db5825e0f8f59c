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
