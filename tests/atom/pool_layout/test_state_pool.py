"""LinearStatePool: a STATE entry, one request's conv and recurrent state."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout import EntryClass, LinearStatePool, sum_specs, walk


def qwen35_27b_tp2_state() -> LinearStatePool:
    """48 gated-delta-net rows; conv window 3 (kernel 4 - 1) x conv_dim 10240 / tp 2;
    recurrent 48 value heads / tp 2 = 24 heads of 128 x 128; bf16 throughout."""
    return LinearStatePool(
        48,
        conv_shape=(3, 5120),
        conv_dtype=torch.bfloat16,
        recurrent_shape=(24, 128, 128),
        recurrent_dtype=torch.bfloat16,
    )


def test_golden_qwen35_27b_tp2_state_entry_bytes():
    pool = qwen35_27b_tp2_state()
    conv = 3 * 5120 * 2  # 30720
    ssm = 24 * 128 * 128 * 2  # 786432
    assert (conv, ssm) == (30720, 786432)
    assert pool.entry_bytes == 48 * (conv + ssm) == 39223296
    # conv's 48 x 30720 = 1474560 B is a multiple of 256, so recurrent starts there
    assert walk(pool.fields).offsets["recurrent"] == 1474560
    assert walk(pool.fields).padding_bytes == 0
    spec = pool.spec("linear_state")
    assert spec.entry_class is EntryClass.STATE and spec.entry_bytes == 39223296


def test_priced_per_request_and_carved_entry_major():
    pool = LinearStatePool(
        3,
        conv_shape=(3, 8),
        conv_dtype=torch.bfloat16,
        recurrent_shape=(2, 4, 4),
        recurrent_dtype=torch.float32,
    )
    views = pool.allocate(4)
    assert pool.pool_bytes(4) == 4 * pool.entry_bytes == views.arena.buf.numel()
    assert views.conv_state(2).shape == (4, 3, 8)
    assert views.recurrent_state(2).shape == (4, 2, 4, 4)
    views.recurrent_state(1)[2].fill_(3.0)
    views.conv_state(0)[2].fill_(1.0)
    for i in (0, 1, 3):
        assert views.entry(i).eq(0).all()
    assert views.entry(2).ne(0).any()
    views.reset_entry(2)
    assert views.entry(2).eq(0).all()
    (region,) = views.region_tensors()
    assert region.semantic_role == "linear_state" and region.tensor.shape == (4, pool.entry_bytes)


def test_state_and_page_specs_of_one_class_sum_and_of_different_classes_do_not():
    state = qwen35_27b_tp2_state().spec("gdn")
    draft = qwen35_27b_tp2_state().spec("draft_gdn")
    totals = sum_specs([state, draft])
    assert totals == {EntryClass.STATE: 2 * 39223296}


def test_refusals_name_the_value():
    with pytest.raises(ValueError, match="0"):
        LinearStatePool(
            0,
            conv_shape=(3, 8),
            conv_dtype=torch.bfloat16,
            recurrent_shape=(2,),
            recurrent_dtype=torch.bfloat16,
        )
    with pytest.raises(TypeError, match="'bf16'"):
        LinearStatePool(
            1,
            conv_shape=(3, 8),
            conv_dtype="bf16",
            recurrent_shape=(2,),
            recurrent_dtype=torch.bfloat16,
        )
    pool = LinearStatePool(
        2,
        conv_shape=(3, 8),
        conv_dtype=torch.bfloat16,
        recurrent_shape=(2,),
        recurrent_dtype=torch.bfloat16,
    )
    with pytest.raises(ValueError, match="row 2"):
        pool.allocate(1).conv_state(2)
