"""A count whose row views pass 32-bit element offsets is refused by name, before allocation."""

from __future__ import annotations

import pytest
import torch

from atom.models.registry import load_model_config
from atom.pool_layout import EntryField, LayerMajorArena, LinearStatePool, MhaKvPool
from atom.pool_layout import layer_major as layer_major_module
from atom.pool_layout.refusals import INT32_MAX, require_int32_offsets
from atom.runner.model_runner import ModelRunner


def test_the_limit_is_the_largest_int32():
    assert INT32_MAX == 2**31 - 1
    require_int32_offsets("v", (2**31,), (1,), torch.uint8)  # offsets 0 .. 2**31 - 1
    with pytest.raises(ValueError, match=r"v, \(2147483649,\) torch.uint8 .* offset 2147483648"):
        require_int32_offsets("v", (2**31 + 1,), (1,), torch.uint8)
    with pytest.raises(ValueError, match=r"has stride 2147483648"):
        require_int32_offsets("v", (1, 2), (2**31, 1), torch.uint8)
    require_int32_offsets("empty", (0, 5), (2**40, 1), torch.uint8)


def test_a_layer_major_row_is_refused_one_entry_past_the_limit():
    # One row of one entry is 4 x 1024 bf16 elements: 2**31 / 4096 = 524288 entries fit.
    f = EntryField("k", 3, (4, 1024), torch.bfloat16)
    assert LayerMajorArena.nbytes([f], 524288) == 524288 * 3 * 8192
    with pytest.raises(ValueError, match=r"a row of field 'k' at 524289 entries.*at most 524288"):
        LayerMajorArena.nbytes([f], 524289)


def test_a_pool_refuses_before_it_allocates(monkeypatch):
    pool = MhaKvPool(2, block_size=16, blocks_per_entry=1, num_kv_heads=8, head_dim=128,
                     kv_dtype=torch.float8_e4m3fn)  # fmt: skip
    limit = (INT32_MAX + 1) // (16 * 8 * 128)
    assert pool.pool_bytes(limit) == limit * pool.entry_bytes
    allocated = []
    monkeypatch.setattr(layer_major_module.torch, "zeros", lambda *a, **k: allocated.append(a))
    with pytest.raises(ValueError, match=rf"field 'k' at {limit + 1} entries"):
        pool.allocate(limit + 1, device="meta")
    assert allocated == []


def test_a_state_row_strides_by_a_whole_entry():
    # Entry: 2 rows x (conv 3 x 1024 + recurrent 4 x 64 x 64) bf16 = 2 x (6144 + 32768) B.
    pool = LinearStatePool(2, conv_shape=(3, 1024), conv_dtype=torch.bfloat16,
                           recurrent_shape=(4, 64, 64), recurrent_dtype=torch.bfloat16)  # fmt: skip
    per_slot = pool.entry_bytes // 2
    fit = (INT32_MAX - 4 * 64 * 64 + 1) // per_slot + 1
    pool.pool_bytes(fit)
    with pytest.raises(ValueError, match=rf"state field 'recurrent' at {fit + 1} request slots"):
        pool.pool_bytes(fit + 1)
    with pytest.raises(ValueError, match=rf"at most {fit} request slots"):
        pool.allocate(fit + 1, device="meta")


def test_the_runner_refuses_a_state_count_before_carving_anything(monkeypatch):
    runner = ModelRunner(load_model_config("qwen3.5-27b"))
    # One request's state across the 48 GDN rows is 78446592 B, 39223296 bf16 elements: a row's
    # view reaches (S - 1) x 39223296 + its own extent, which passes 2**31 - 1 at 56 slots.
    carved = []
    monkeypatch.setattr(runner, "_carve_paged_pool", lambda *a, **k: carved.append(a))
    with pytest.raises(ValueError, match=r"at 56 request slots.*at most 55 request slots"):
        runner.initialize(1, state_entries=56, device="meta")
    assert carved == []
