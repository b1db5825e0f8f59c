"""The paged layouts, each declared once: shapes and their refusals."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout import PagedLayout, k_block_shape, shuffle_vector, v_block_shape

FP8 = torch.float8_e4m3fn


def test_x_is_the_elements_of_one_16_byte_vector():
    assert shuffle_vector(FP8) == 16
    assert shuffle_vector(torch.bfloat16) == 8
    assert shuffle_vector(torch.float32) == 4


def test_nhd_and_shuffle_shapes_hold_the_same_elements():
    kw = {"block_size": 16, "num_kv_heads": 4, "dtype": FP8}
    k_nhd = k_block_shape(PagedLayout.NHD, head_dim=128, **kw)
    k_shuffle = k_block_shape(PagedLayout.SHUFFLE, head_dim=128, **kw)
    v_shuffle = v_block_shape(PagedLayout.SHUFFLE, v_head_dim=128, **kw)
    assert k_nhd == (16, 4, 128)
    assert k_shuffle == (4, 128 // 16, 16, 16)
    assert v_shuffle == (4, 16 // 16, 128, 16)
    n = 16 * 4 * 128
    assert torch.Size(k_nhd).numel() == torch.Size(k_shuffle).numel() == n
    assert torch.Size(v_shuffle).numel() == n


def test_parse_accepts_the_enum_or_its_name_and_refuses_others_by_value():
    assert PagedLayout.parse("SHUFFLE") is PagedLayout.SHUFFLE
    assert PagedLayout.parse(PagedLayout.NHD) is PagedLayout.NHD
    with pytest.raises(ValueError, match="'hnd'"):
        PagedLayout.parse("hnd")
    with pytest.raises(ValueError, match="3"):
        PagedLayout.parse(3)


def test_shuffle_refuses_dims_that_do_not_divide_into_vectors():
    with pytest.raises(ValueError, match="24"):
        v_block_shape(PagedLayout.SHUFFLE, block_size=24, num_kv_heads=1, v_head_dim=64, dtype=FP8)
    with pytest.raises(ValueError, match="72"):
        k_block_shape(PagedLayout.SHUFFLE, block_size=16, num_kv_heads=1, head_dim=72, dtype=FP8)
