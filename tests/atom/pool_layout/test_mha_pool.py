"""MhaKvPool: priced per entry, carved as priced, bound in one declared layout."""

from __future__ import annotations

import itertools
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import EntryClass, EntryField, KvGeometry, MhaKvPool

FP8 = torch.float8_e4m3fn


def qwen35_27b_tp2_page() -> MhaKvPool:
    """Qwen3.5-27B at tp 2: 16 full-attention rows, 4 KV heads / 2 = 2, head_dim 256."""
    return MhaKvPool(
        16, block_size=16, blocks_per_entry=1, num_kv_heads=2, head_dim=256, kv_dtype=FP8
    )


def test_golden_qwen35_27b_tp2_page_entry_bytes():
    pool = qwen35_27b_tp2_page()
    k_bytes = 16 * 16 * 2 * 256 * 1  # rows x tokens x heads x head_dim x 1 B = 131072
    scale_bytes = 16 * 16 * 2 * 4  # rows x tokens x heads x 4 B fp32 = 2048
    assert k_bytes == 131072 and scale_bytes == 2048
    assert pool.entry_bytes == 2 * k_bytes + 2 * scale_bytes == 266240
    assert pool.padding_bytes == 0
    assert pool.spec("kv").entry_class is EntryClass.PAGE
    assert pool.spec("kv").entry_bytes == 266240


def test_fp8_declares_scale_planes_and_bf16_declares_no_scale_group():
    assert [f.name for g in qwen35_27b_tp2_page().field_groups for f in g] == [
        "k",
        "v",
        "k_scale",
        "v_scale",
    ]
    bf16 = MhaKvPool(
        2, block_size=16, blocks_per_entry=1, num_kv_heads=2, head_dim=64, kv_dtype=torch.bfloat16
    )
    assert bf16.field_groups[1] == ()
    assert not bf16.has_scales
    views = bf16.allocate(2)
    with pytest.raises(ValueError, match=r"torch\.bfloat16"):
        views.k_scale(0)


def test_pricing_per_backend_block_would_have_cost_9_percent_at_8_blocks_an_entry():
    # A one-row pool (an EAGLE3 draft) of 1 KV head, head_dim 128, fp8, block 16:
    # per backend block K = V = 16 x 1 x 128 x 1 B = 2048, scales 16 x 1 x 4 B = 64 each.
    def pool(blocks_per_entry):
        return MhaKvPool(
            1,
            block_size=16,
            blocks_per_entry=blocks_per_entry,
            num_kv_heads=1,
            head_dim=128,
            kv_dtype=FP8,
        )

    per_entry = pool(8).entry_bytes
    assert per_entry == 8 * (2048 + 2048 + 64 + 64) == 33792  # no padding at all
    assert pool(8).padding_bytes == 0
    # per backend block each 64 B scale plane is padded to 256: (2048 + 2048 + 256 + 256) x 8
    per_block_times_8 = 8 * pool(1).entry_bytes
    assert per_block_times_8 == 8 * 4608 == 36864
    overhead = per_block_times_8 / per_entry - 1
    assert 0.08 < overhead < 0.10  # 9.09%: 3072 B of padding on 33792 B of data


def test_the_entry_is_the_scheduler_block_and_blocks_stay_the_backends():
    pool = MhaKvPool(
        2, block_size=16, blocks_per_entry=4, num_kv_heads=2, head_dim=64, kv_dtype=FP8
    )
    assert pool.entry_tokens == 64
    views = pool.allocate(3)
    assert views.num_blocks == 3 * 4
    assert views.k_cache(1).shape == (12, 16, 2, 64)
    assert views.k_scale(1).shape == (12, 2, 16)


def test_shuffle_declares_the_5d_v_view_and_nobody_has_to_densify():
    pool = MhaKvPool(
        2,
        block_size=16,
        blocks_per_entry=2,
        num_kv_heads=2,
        head_dim=128,
        kv_dtype=torch.bfloat16,
        layout="shuffle",
    )
    views = pool.allocate(3)
    x = 16 // 2  # 8 bf16 elements a 16 B vector
    k, v = views.k_cache(0), views.v_cache(0)
    assert k.shape == (6, 2, 128 // x, 16, x)
    assert v.shape == (6, 2, 16 // x, 128, x) and v.ndim == 5
    assert k.is_contiguous() and v.is_contiguous()  # a kernel gets them as they lie
    nhd = MhaKvPool(
        2, block_size=16, blocks_per_entry=2, num_kv_heads=2, head_dim=128, kv_dtype=torch.bfloat16
    )
    assert nhd.entry_bytes == pool.entry_bytes  # a layout is a view, never a byte more


def test_views_bind_rows_disjointly_and_a_write_lands_only_in_its_row():
    pool = qwen35_27b_tp2_page()
    views = pool.allocate(3)
    views.v_cache(5).fill_(1.0)
    for region in views.region_tensors():
        touched = bool(region.tensor.ne(0).any())
        assert touched == (region.semantic_role == "h2d256/v/5"), region.semantic_role


def test_region_tensors_are_per_field_per_row_with_roles_and_entry_strides():
    pool = qwen35_27b_tp2_page()
    regions = pool.allocate(5).region_tensors()
    roles = [r.semantic_role for r in regions]
    assert roles[:2] == ["h2d256/k/0", "h2d256/k/1"] and roles[16] == "h2d256/v/0"
    assert roles[32] == "h2d256/k_scale/0" and len(roles) == 4 * 16
    # The field's dtype travels with its region: fp8 K and V, fp32 scales.
    assert {r.dtype for r in regions[:32]} == {"float8_e4m3fn"}
    assert {r.dtype for r in regions[32:]} == {"float32"}
    for r in regions:
        role, t = r.semantic_role, r.tensor
        assert t.shape[0] == 5, role  # divides into exactly the scheduler's block count
        per_entry = 131072 // 16 if "scale" not in role else 2048 // 16
        assert t.stride(0) == t.shape[1] == per_entry, role
    assert sum(r.tensor.numel() for r in regions) == 5 * pool.entry_bytes


@given(
    rows=st.integers(1, 4),
    block_size=st.sampled_from([1, 16, 32]),
    blocks_per_entry=st.integers(1, 4),
    heads=st.integers(1, 3),
    head_dim=st.sampled_from([16, 64, 80]),
    dtype=st.sampled_from([FP8, torch.bfloat16, torch.float16]),
    entries=st.integers(1, 4),
    lead=st.sampled_from([0, 256, 4096]),
)
def test_carved_bytes_are_priced_bytes_and_offsets_are_absolute(
    rows, block_size, blocks_per_entry, heads, head_dim, dtype, entries, lead
):
    pool = MhaKvPool(
        rows,
        block_size=block_size,
        blocks_per_entry=blocks_per_entry,
        num_kv_heads=heads,
        head_dim=head_dim,
        kv_dtype=dtype,
    )
    assert pool.pool_bytes(entries) == entries * pool.entry_bytes
    backing = torch.zeros(lead + pool.pool_bytes(entries), dtype=torch.uint8)
    views = pool.allocate(entries, buf=backing[lead:])
    spans = []
    for r in range(rows):
        for t in [views.k_cache(r), views.v_cache(r)] + (
            [views.k_scale(r), views.v_scale(r)] if pool.has_scales else []
        ):
            start = t.storage_offset() * t.element_size()
            spans.append((start, start + t.numel() * t.element_size()))
            assert t.is_contiguous()
    spans.sort()
    assert spans[0][0] >= lead and spans[-1][1] <= backing.numel()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_extra_fields_are_priced_carved_and_read_back_as_declared():
    index = EntryField("index_k", 3, (16, 128), FP8)  # a sparse indexer's keys, 3 rows
    pool = MhaKvPool(
        4,
        block_size=16,
        blocks_per_entry=1,
        num_kv_heads=1,
        head_dim=128,
        kv_dtype=FP8,
        extra_fields=[index],
    )
    base = MhaKvPool(
        4, block_size=16, blocks_per_entry=1, num_kv_heads=1, head_dim=128, kv_dtype=FP8
    )
    assert pool.entry_bytes == base.entry_bytes + 3 * 16 * 128
    views = pool.allocate(2)
    assert views.field_view("index_k").shape == (3, 2, 16, 128)
    assert views.field_row("index_k", 2).shape == (2, 16, 128)
    assert pool.pool_bytes(2) == 2 * pool.entry_bytes


def test_geometry_prints_as_the_row_space_name():
    assert qwen35_27b_tp2_page().geometry == KvGeometry(2, 256)
    assert str(qwen35_27b_tp2_page().geometry) == "h2d256"


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"block_size": 0}, ValueError, "0"),
        ({"blocks_per_entry": 2.5}, TypeError, "2.5"),
        ({"num_kv_heads": -1}, ValueError, "-1"),
        ({"kv_dtype": "fp8"}, TypeError, "'fp8'"),
        ({"layout": "hnd"}, ValueError, "'hnd'"),
        ({"layout": "shuffle", "block_size": 12}, ValueError, "12"),
        ({"layout": "shuffle", "head_dim": 40, "kv_dtype": FP8}, ValueError, "40"),
        ({"extra_fields": [EntryField("k", 1, (4,), torch.uint8)]}, ValueError, "'k'"),
        ({"extra_fields": [EntryField("w", 1, (4,), torch.uint8, align=512)]}, ValueError, "512"),
        ({"extra_fields": ["w"]}, TypeError, "'w'"),
    ],
)
def test_refusals_name_the_value(kwargs, error, named):
    base = {
        "block_size": 16,
        "blocks_per_entry": 1,
        "num_kv_heads": 2,
        "head_dim": 64,
        "kv_dtype": torch.bfloat16,
    }
    with pytest.raises(error, match=re.escape(named)):
        MhaKvPool(2, **{**base, **kwargs})


def test_a_buffer_that_does_not_fit_the_declaration_is_refused():
    pool = qwen35_27b_tp2_page()
    with pytest.raises(ValueError, match=str(2 * 266240 - 1)):
        pool.allocate(2, buf=torch.zeros(2 * 266240 - 1, dtype=torch.uint8))
    with pytest.raises(ValueError, match="row 16"):
        pool.allocate(1).k_cache(16)


@given(
    blocks_per_entry=st.integers(1, 4),
    entries=st.integers(1, 3),
    data=st.data(),
)
def test_a_token_written_through_a_view_lands_in_its_scheduler_blocks_transfer_bytes(
    blocks_per_entry, entries, data
):
    pool = MhaKvPool(
        2,
        block_size=4,
        blocks_per_entry=blocks_per_entry,
        num_kv_heads=2,
        head_dim=16,
        kv_dtype=FP8,
    )
    views = pool.allocate(entries)
    token = data.draw(st.integers(0, entries * pool.entry_tokens - 1))
    row = data.draw(st.integers(0, 1))
    block, slot = divmod(token, pool.block_size)  # backend block and slot in it
    views.k_cache(row)[block, slot].fill_(1.0)
    regions = {r.semantic_role: r.tensor for r in views.region_tensors()}
    region = regions[f"h2d16/k/{row}"]
    entry = token // pool.entry_tokens  # the scheduler block: block // blocks_per_entry
    assert entry == block // blocks_per_entry
    token_bytes = 2 * 16  # heads x head_dim x 1 B
    start = (token % pool.entry_tokens) * token_bytes
    assert region[entry, start : start + token_bytes].ne(0).all()
    written = region.ne(0).nonzero()
    assert written[:, 0].eq(entry).all()
    assert written[:, 1].min() >= start and written[:, 1].max() < start + token_bytes
    for role, other in regions.items():
        if role != f"h2d16/k/{row}":
            assert other.eq(0).all(), role


def test_released_views_refuse_instead_of_reading_freed_bytes():
    views = qwen35_27b_tp2_page().allocate(1)
    views.release()
    with pytest.raises(ValueError, match="'k'"):
        views.k_cache(0)
    assert views.region_tensors() == []


def test_a_caller_may_name_the_layout_it_expects_and_gets_the_pools_or_a_refusal():
    pool = MhaKvPool(
        1,
        block_size=16,
        blocks_per_entry=1,
        num_kv_heads=1,
        head_dim=128,
        kv_dtype=torch.bfloat16,
        layout="shuffle",
    )
    views = pool.allocate(1)
    assert views.v_cache(0, layout="shuffle").ndim == 5
    with pytest.raises(ValueError, match=r"'nhd'.*'shuffle'"):
        views.v_cache(0, layout="nhd")
