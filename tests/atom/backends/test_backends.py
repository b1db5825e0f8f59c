"""Backends as classes: block rules, the draft flag, the allocate hook's signature, binding."""

from __future__ import annotations

import inspect

import pytest
import torch

from atom.backends.gdn import GDNAttentionBackend
from atom.backends.kimi_mla_kda import KimiMlaKdaBackend
from atom.backends.mha import AiterBackend
from atom.backends.mla import AiterMlaBackend
from atom.backends.selector import all_backends, select_backend
from atom.backends.triton_mha import TritonMHABackend
from atom.engine_config import EngineConfig
from atom.models.family import Family
from atom.models.registry import load_model_config
from atom.runner.model_runner import ModelRunner

LLAMA = load_model_config("llama-3.1-8b")


@pytest.mark.parametrize("scheduler", [16, 32, 64, 128, 256, 512, 1024, 2048])
def test_mha_block_rule_and_the_triton_subclass_reads_the_same_one(scheduler):
    expected = scheduler if scheduler in (256, 1024) else 16
    assert AiterBackend.attn_block_size(LLAMA, scheduler) == expected
    assert TritonMHABackend.attn_block_size(LLAMA, scheduler) == expected
    assert GDNAttentionBackend.attn_block_size(LLAMA, scheduler) == expected


def test_a_sparse_block_wins_over_the_scheduler():
    m3_like = load_model_config("minimax-m2").with_overrides(sparse_block_size=128)
    assert AiterBackend.attn_block_size(m3_like, 16) == 128
    assert AiterBackend.attn_block_size(m3_like, 256) == 128


def test_mla_pages_at_one_token():
    r1 = load_model_config("deepseek-r1")
    assert AiterMlaBackend.attn_block_size(r1, 16) == 1
    assert KimiMlaKdaBackend.attn_block_size(r1, 64) == 1


def test_draft_owns_a_pool_only_for_mha_flavours():
    flags = {b.NAME: b.DRAFT_OWNS_KV_POOL for b in all_backends()}
    assert flags == {
        "aiter-mha": True,
        "triton-mha": True,
        "aiter-mla": False,
        "gdn-hybrid": False,
        "kimi-mla-kda": False,
        # ROCm/ATOM's pull request #2147: "DeepseekV4Backend inherits DRAFT_OWNS_KV_POOL = False".
        "deepseek-v4": False,
    }
    with pytest.raises(TypeError, match=r"aiter-mla.*binds into its target's pool"):
        AiterMlaBackend.make_kv_pool(
            LLAMA, None, [], block_size=1, blocks_per_entry=16, kv_dtype=torch.bfloat16
        )


def test_selector_maps_each_family_and_refuses_a_non_family():
    assert select_backend(Family.MHA) is AiterBackend
    assert select_backend(Family.MHA, mha_backend="triton") is TritonMHABackend
    assert select_backend(Family.MLA) is AiterMlaBackend
    assert select_backend(Family.GDN) is GDNAttentionBackend
    assert select_backend(Family.MLA_KDA) is KimiMlaKdaBackend
    with pytest.raises(TypeError, match=r"'mha'"):
        select_backend("mha")


@pytest.mark.parametrize("backend", all_backends(), ids=lambda b: b.NAME)
def test_allocate_takes_blocks_keyword_only_with_no_default(backend):
    """The runtime face of AC101: `blocks` keyword-only, no default, and `buf` likewise."""
    sig = inspect.signature(backend.get_builder_cls().allocate_kv_cache_tensors)
    for name in ("blocks", "buf"):
        param = sig.parameters[name]
        assert param.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert param.default is inspect.Parameter.empty, name


def test_every_builder_records_its_own_num_blocks_in_backend_blocks():
    runner = ModelRunner(LLAMA, EngineConfig(scheduler_block_size=64)).initialize(3)
    # 64-token scheduler blocks of 16-token backend blocks: 4 per entry, written out.
    assert runner.builder.blocks == 3
    assert runner.builder.blocks_per_entry == 4
    assert runner.builder.num_blocks == 3 * 4
    assert runner.bound_modules()[0].kv_views["k_cache"].shape[0] == 12


def test_triton_binds_nhd_and_aiter_shuffle_over_the_same_bytes():
    aiter = ModelRunner(LLAMA, EngineConfig()).initialize(1)
    triton = ModelRunner(LLAMA, EngineConfig(mha_backend="triton")).initialize(1)
    a, t = aiter.bound_modules()[0].kv_views, triton.bound_modules()[0].kv_views
    assert t["k_cache"].shape == (1, 16, 8, 128)  # (num_blocks, block, heads, head_dim)
    assert a["k_cache"].shape == (1, 8, 128 // 8, 16, 8)  # x = 16 B // 2 B
    assert a["v_cache"].dim() == 5  # the 5-D V every SHUFFLE consumer reads without densifying
    assert aiter.entry_bytes() == triton.entry_bytes()


def test_a_block_the_scheduler_is_not_a_multiple_of_is_refused_with_both_numbers():
    with pytest.raises(
        ValueError, match=r"scheduler block size 8 is not a whole number of the backend's 16"
    ):
        ModelRunner(LLAMA, EngineConfig(scheduler_block_size=8))


def test_binding_reads_the_latent_and_indexer_rows_off_one_pool():
    v32 = ModelRunner(
        load_model_config("deepseek-v3.2-exp"), EngineConfig(kv_dtype="fp8")
    ).initialize(2)
    views = v32.bound_modules()[5].kv_views
    assert set(views) == {"kv_cache", "index_cache", "index_scale"}
    assert views["kv_cache"].shape == (2 * 16, 1, 512 + 64)
    assert views["index_cache"].shape == (2, 16, 128)
    assert views["index_scale"].dtype == torch.float32
    bf16 = ModelRunner(load_model_config("deepseek-v3.2-exp")).initialize(1)
    assert set(bf16.bound_modules()[0].kv_views) == {"kv_cache", "index_cache"}
