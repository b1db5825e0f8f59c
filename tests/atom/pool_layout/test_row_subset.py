"""`PagedPool.with_rows`: a reach class's share of a pool, priced and carved by the same walk."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout import EntryField, MhaKvPool, RowSubsetPool


def _pool(rows=6, **kw):
    return MhaKvPool(rows, block_size=16, blocks_per_entry=2, num_kv_heads=2, head_dim=64,
                     kv_dtype=torch.float8_e4m3fn, **kw)  # fmt: skip


def test_a_subset_is_the_same_declaration_over_fewer_rows():
    pool = _pool()
    sub = pool.with_rows(4)
    assert isinstance(sub, RowSubsetPool) and sub.parent is pool
    assert (sub.rows, sub.block_size, sub.blocks_per_entry, sub.entry_tokens) == (4, 16, 2, 32)
    # K and V: 2 blocks x 16 tokens x 2 heads x 64 x 1 B a row; fp32 scales 2 x 2 x 16 x 4 B.
    assert pool.row_bytes() == sub.row_bytes() == 2 * (2 * 16 * 2 * 64) + 2 * (2 * 2 * 16 * 4)
    assert sub.entry_bytes == 4 * 2 * 4096 + 4 * 2 * 256
    assert [f.name for g in sub.field_groups for f in g] == ["k", "v", "k_scale", "v_scale"]
    assert sub.role_prefix() == pool.role_prefix() == "h2d64"
    assert repr(sub).startswith("4 of MhaKvPool(6 rows h2d64")


def test_a_subset_carves_what_it_prices():
    sub = _pool().with_rows(3)
    views = sub.allocate(5, device="meta")
    assert sum(b.numel() for b in views.buffers) == sub.pool_bytes(5) == 5 * sub.entry_bytes
    assert views.field_row("k", 2).shape == (5, 2, 16, 2, 64)
    with pytest.raises(ValueError, match="row 3 is out of range"):
        views.field_row("k", 3)


def test_a_field_over_rows_of_its_own_cannot_be_split():
    index = EntryField("index", 2, (2, 16, 128), torch.float8_e4m3fn)
    pool = _pool(extra_fields=(index,))
    assert pool.row_bytes() is None
    with pytest.raises(
        ValueError, match=r"field 'index' spans 2 rows of its own, not the pool's 6"
    ):
        pool.with_rows(3)


def test_a_subset_of_no_rows_is_refused():
    with pytest.raises(ValueError, match="MhaKvPool subset rows must be at least 1"):
        _pool().with_rows(0)
    assert _pool().with_rows(1).rows == 1
