"""MlaKvPool: one latent row a token, width derived, indexer on its own rows."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import EntryClass, IndexerField, MlaKvPool

FP8 = torch.float8_e4m3fn


def deepseek_r1_page(**kwargs) -> MlaKvPool:
    """DeepSeek-R1: 61 layers + 1 MTP layer = 62 MLA rows, MLA paging at block 1."""
    return MlaKvPool(
        62,
        block_size=1,
        blocks_per_entry=16,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        kv_dtype=FP8,
        **kwargs,
    )


def test_golden_deepseek_r1_page_entry_bytes():
    pool = deepseek_r1_page()
    latent = 512 + 64  # kv_lora_rank + qk_rope_head_dim
    tokens = 1 * 16  # backend block 1 x blocks_per_entry 16
    assert pool.kv_entry_dim == latent
    assert pool.entry_tokens == tokens
    assert pool.entry_bytes == 62 * tokens * latent * 1 == 571392
    assert pool.padding_bytes == 0  # 571392 = 2232 x 256
    assert pool.spec("kv").entry_class is EntryClass.PAGE


def test_the_row_width_follows_the_declared_ranks_not_a_literal():
    pool = MlaKvPool(
        2,
        block_size=16,
        blocks_per_entry=1,
        kv_lora_rank=256,
        qk_rope_head_dim=32,
        kv_dtype=torch.bfloat16,
    )
    assert pool.allocate(1).kv_cache(0).shape == (1, 16, 288)
    padded = MlaKvPool(
        2,
        block_size=16,
        blocks_per_entry=1,
        kv_lora_rank=256,
        qk_rope_head_dim=32,
        kv_dtype=torch.bfloat16,
        kv_entry_dim=320,
    )
    assert padded.entry_bytes == 2 * 16 * 320 * 2
    with pytest.raises(ValueError, match="280"):
        MlaKvPool(
            2,
            block_size=16,
            blocks_per_entry=1,
            kv_lora_rank=256,
            qk_rope_head_dim=32,
            kv_dtype=torch.bfloat16,
            kv_entry_dim=280,
        )


def test_kv_cache_is_paged_by_the_backend_block_and_an_entry_is_the_scheduler_block():
    views = deepseek_r1_page().allocate(3)
    assert views.num_blocks == 3 * 16
    kv = views.kv_cache(61)
    assert kv.shape == (48, 1, 576) and kv.is_contiguous()
    regions = views.region_tensors()
    assert regions[0].semantic_role == "mla/kv/0" and regions[0].dtype == "float8_e4m3fn"
    # stride(0) is what one scheduler block owns: 16 tokens x 576 B, no * block_ratio
    assert regions[0].tensor.shape == (3, 16 * 576) and regions[0].tensor.stride(0) == 16 * 576


def test_an_indexer_is_its_own_group_with_its_own_row_count_and_token_count():
    # a sparse variant: every MLA row but the MTP one owns an indexer; fp8 keys of 128,
    # fp32 scale a key, one key a token
    index = IndexerField(
        rows=61, head_dim=128, dtype=FP8, tokens_per_entry=16, scale_dtype=torch.float32
    )
    pool = deepseek_r1_page(index=index)
    index_bytes = 61 * 16 * 128 * 1  # rows x tokens x head_dim x 1 B = 124928
    scale_bytes = 61 * 16 * 4  # rows x tokens x 4 B = 3904 -> padded to 4096 by the walk
    assert pool.entry_bytes == 571392 + index_bytes + 4096
    assert pool.padding_bytes == 4096 - scale_bytes
    views = pool.allocate(2)
    assert views.index_cache(60).shape == (2, 16, 128)
    assert views.index_scale(60).shape == (2, 16)
    with pytest.raises(ValueError, match="row 61"):
        views.index_cache(61)
    assert pool.pool_bytes(2) == 2 * pool.entry_bytes


def test_a_pooling_indexer_holds_fewer_keys_than_tokens():
    index = IndexerField(rows=4, head_dim=64, dtype=torch.bfloat16, tokens_per_entry=4)
    pool = MlaKvPool(
        4,
        block_size=16,
        blocks_per_entry=1,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        kv_dtype=torch.bfloat16,
        index=index,
    )
    assert pool.allocate(1).index_cache(3).shape == (1, 4, 64)
    with pytest.raises(ValueError, match="scale_dtype"):
        pool.allocate(1).index_scale(0)


def test_no_indexer_answers_no_index_cache():
    with pytest.raises(ValueError, match="index=None"):
        deepseek_r1_page().allocate(1).index_cache(0)


@pytest.mark.parametrize(
    ("index", "error", "named"),
    [
        (IndexerField(63, 128, FP8, 16), ValueError, "63"),
        (IndexerField(2, 128, FP8, 5), ValueError, "5"),
        ("index", TypeError, "'index'"),
    ],
)
def test_indexer_refusals_name_the_value(index, error, named):
    with pytest.raises(error, match=re.escape(named)):
        deepseek_r1_page(index=index)


def test_indexer_field_refuses_bad_numbers_by_value():
    with pytest.raises(ValueError, match="0"):
        IndexerField(0, 128, FP8, 16)
    with pytest.raises(TypeError, match="'fp8'"):
        IndexerField(1, 128, "fp8", 16)


@given(
    rows=st.integers(1, 4),
    block_size=st.sampled_from([1, 16, 64]),
    blocks_per_entry=st.sampled_from([1, 2, 16]),
    rank=st.sampled_from([64, 512]),
    rope=st.sampled_from([0, 64]),
    dtype=st.sampled_from([FP8, torch.bfloat16]),
    with_index=st.booleans(),
    entries=st.integers(1, 3),
)
def test_carved_bytes_are_priced_bytes_with_or_without_an_indexer(
    rows, block_size, blocks_per_entry, rank, rope, dtype, with_index, entries
):
    tokens = block_size * blocks_per_entry
    index = IndexerField(rows, 64, FP8, tokens, torch.float32) if with_index else None
    pool = MlaKvPool(
        rows,
        block_size=block_size,
        blocks_per_entry=blocks_per_entry,
        kv_lora_rank=rank,
        qk_rope_head_dim=rope,
        kv_dtype=dtype,
        index=index,
    )
    assert pool.pool_bytes(entries) == entries * pool.entry_bytes
    views = pool.allocate(entries)
    assert sum(r.tensor.numel() for r in views.region_tensors()) + entries * pool.padding_bytes == (
        entries * pool.entry_bytes
    )
    for r in range(rows):
        assert views.kv_cache(r).shape == (entries * blocks_per_entry, block_size, rank + rope)
