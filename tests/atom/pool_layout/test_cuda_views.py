"""The same carve on a CUDA device: allocation, fills, absolute offsets, write-readback.

CPU tests cannot see a device-side difference -- a fill_ an fp8 CUDA tensor
does not support, an allocator base off 256 B, a view that only a CPU
storage accepts. Skipped visibly where there is no CUDA device.
"""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout import (
    EntryField,
    IndexerField,
    LinearStatePool,
    MhaKvPool,
    MlaKvPool,
    carve_layer_major,
)

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

FP8 = torch.float8_e4m3fn


def test_an_mha_write_on_the_device_lands_in_its_transfer_region():
    pool = MhaKvPool(
        16, block_size=16, blocks_per_entry=1, num_kv_heads=2, head_dim=256, kv_dtype=FP8
    )
    views = pool.allocate(100, device="cuda")
    views.k_cache(3)[5, 2].fill_(1.0)
    region = {r.semantic_role: r.tensor for r in views.region_tensors()}["h2d256/k/3"]
    token_bytes = 2 * 256
    assert region.is_cuda
    assert region[5, 2 * token_bytes : 3 * token_bytes].ne(0).all()
    assert int(region.ne(0).sum()) == token_bytes


def test_a_carve_into_a_device_buffer_keeps_offsets_absolute_and_aligned():
    pool = MhaKvPool(
        16, block_size=16, blocks_per_entry=1, num_kv_heads=2, head_dim=256, kv_dtype=FP8
    )
    buf = torch.zeros(4096 + pool.pool_bytes(10), dtype=torch.uint8, device="cuda")
    views = pool.allocate(10, buf=buf[4096:])
    k = views.k_cache(2)
    # region start + K row 2 x 10 entries x 8192 B a K row (16 tokens x 2 heads x 256 x 1 B fp8)
    assert k.storage_offset() == 4096 + 2 * 10 * (16 * 2 * 256 * 1) == 4096 + 2 * 10 * 8192
    assert k.data_ptr() % 256 == 0
    assert views.k_scale(2).data_ptr() % 256 == 0


def test_fills_shuffle_views_mla_and_state_work_on_the_device():
    score = EntryField("score", 2, (16,), torch.float32, fill=float("-inf"))
    (arena,) = carve_layer_major([[score]], 4, device="cuda")
    assert torch.isneginf(arena.view("score")).all()
    shuffle = MhaKvPool(
        2,
        block_size=16,
        blocks_per_entry=8,
        num_kv_heads=1,
        head_dim=128,
        kv_dtype=torch.bfloat16,
        layout="shuffle",
    )
    v = shuffle.allocate(10, device="cuda").v_cache(1)
    assert v.shape == (80, 1, 2, 128, 8) and v.is_contiguous()
    mla = MlaKvPool(
        62,
        block_size=1,
        blocks_per_entry=16,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        kv_dtype=FP8,
        index=IndexerField(61, 128, FP8, 16, torch.float32),
    )
    mla_views = mla.allocate(8, device="cuda")
    assert mla_views.kv_cache(61).shape == (128, 1, 576)
    mla_views.index_cache(60).fill_(1.0)
    state = LinearStatePool(
        48,
        conv_shape=(3, 5120),
        conv_dtype=torch.bfloat16,
        recurrent_shape=(24, 128, 128),
        recurrent_dtype=torch.bfloat16,
    )
    state_views = state.allocate(4, device="cuda")
    state_views.recurrent_state(47)[3].fill_(1.0)
    assert state_views.entry(3).ne(0).any()
    state_views.reset_entry(3)
    assert state_views.entry(3).eq(0).all()
