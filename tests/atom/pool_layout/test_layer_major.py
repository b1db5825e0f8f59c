"""LayerMajorArena: row axis outermost, priced bytes carved, no entry(i)."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import (
    EntryField,
    LayerMajorArena,
    carve_layer_major,
    plan_layer_major,
    walk,
)

K = EntryField("k", 3, (2, 4), torch.bfloat16)  # 3 rows x 16 B
S = EntryField("s", 2, (5,), torch.float32)  # 2 rows x 20 B


def test_views_are_rows_by_entries_and_a_row_is_dense():
    arena = LayerMajorArena([K, S], entries=5)
    assert arena.view("k").shape == (3, 5, 2, 4)
    row = arena.row("k", 2)
    assert row.shape == (5, 2, 4) and row.is_contiguous()
    # region of k: 5 entries x span 256 = 1280 B; s starts at 5 x offset 256 = 1280
    assert arena.view("s").storage_offset() * 4 == 5 * 256
    assert arena.buf.numel() == 5 * walk([K, S]).entry_bytes == 5 * 512


def test_there_is_no_entry_accessor_on_purpose():
    assert not hasattr(LayerMajorArena([K], entries=2), "entry")


def test_row_region_is_one_transfer_region_whose_stride_is_what_an_entry_owns():
    arena = LayerMajorArena([K], entries=4)
    region = arena.row_region("k", 1)
    assert region.dtype == torch.uint8
    assert region.shape == (4, 16) and region.stride(0) == 16
    # row 1 of k starts after row 0's 4 entries x 16 B
    assert region.storage_offset() == 64
    arena.row("k", 1)[2].fill_(1.0)
    assert region[2].ne(0).any() and region[[0, 1, 3]].eq(0).all()


@given(data=st.data(), entries=st.integers(1, 5))
def test_carve_takes_the_priced_bytes_views_disjoint_inside_and_isolated(
    data, entries, field_lists, carve_is_the_priced_bytes
):
    fields = data.draw(field_lists())
    lead = data.draw(st.sampled_from([0, 512, 4096]))
    priced = LayerMajorArena.nbytes(fields, entries)
    assert priced == entries * walk(fields).entry_bytes
    backing = torch.zeros(lead + priced + 256, dtype=torch.uint8)
    buf = backing[lead : lead + priced]
    arena = LayerMajorArena(fields, entries, buf=buf)
    # absolute: the field's offset in the arena (entries x its offset in one
    # entry, the row axis outermost) plus where the arena sits
    carve_is_the_priced_bytes(
        arena,
        fields,
        backing,
        lead,
        priced,
        shape=lambda f: (f.rows, entries, *f.shape),
        offset=lambda f: entries * arena.walk.offsets[f.name],
    )


def test_fills_are_applied_to_memory_the_arena_allocated():
    score = EntryField("score", 1, (4,), torch.float32, fill=float("-inf"))
    arena = LayerMajorArena([K, score], entries=2)
    assert torch.isneginf(arena.view("score")).all()
    assert arena.view("k").eq(0).all()


def test_a_non_zero_fill_is_refused_on_a_buffer_handed_in():
    score = EntryField("score", 1, (4,), torch.float32, fill=float("-inf"))
    buf = torch.zeros(LayerMajorArena.nbytes([score], 2), dtype=torch.uint8)
    with pytest.raises(ValueError, match=r"'score'.*-inf"):
        LayerMajorArena([score], 2, buf=buf)
    # the caller saying it allocated the buffer itself gets the fill applied
    arena = LayerMajorArena([score], 2, buf=buf, zeroed=True)
    assert torch.isneginf(arena.view("score")).all()


def test_an_empty_field_list_is_refused_and_names_what_to_use():
    with pytest.raises(ValueError, match=r"\[\].*carve_layer_major"):
        LayerMajorArena([], entries=1)


@pytest.mark.parametrize(
    ("buf", "error", "named"),
    [
        (torch.zeros(1023, dtype=torch.uint8), ValueError, "1023"),
        (torch.zeros(2048, dtype=torch.uint8), ValueError, "2048"),
        (torch.zeros(256, dtype=torch.float32), TypeError, "torch.float32"),
        (torch.zeros(2048, dtype=torch.uint8)[128 : 128 + 1024], ValueError, "128"),
    ],
)
def test_a_buffer_that_does_not_fit_the_declaration_is_refused_by_value(buf, error, named):
    with pytest.raises(error, match=re.escape(named)):
        LayerMajorArena([K, S], entries=2, buf=buf)  # priced 2 x 512 = 1024


def test_refusals_of_bad_indices_name_them():
    arena = LayerMajorArena([K], entries=2)
    with pytest.raises(ValueError, match="row 3"):
        arena.row("k", 3)
    with pytest.raises(KeyError, match="'v'"):
        arena.view("v")
    with pytest.raises(ValueError, match="0"):
        LayerMajorArena([K], entries=0)


def test_carve_layer_major_maps_an_empty_group_to_none_and_packs_the_rest():
    arenas = carve_layer_major([[K], [], [S]], entries=3)
    assert arenas[1] is None
    k_arena, s_arena = arenas[0], arenas[2]
    assert k_arena.buf.untyped_storage().data_ptr() == s_arena.buf.untyped_storage().data_ptr()
    # group0: 3 x 256; group2 starts right after, on 256
    assert s_arena.buf.storage_offset() == 3 * 256
    plan = plan_layer_major([[K], [], [S]], 3)
    assert plan.total_bytes == 3 * 256 + 3 * 256


def test_carve_layer_major_over_a_buffer_is_exact_and_keeps_offsets_absolute():
    plan = plan_layer_major([[K], [S]], 2)
    backing = torch.zeros(4096 + plan.total_bytes, dtype=torch.uint8)
    arenas = carve_layer_major([[K], [S]], 2, backing[4096:])
    assert arenas[1].view("s").storage_offset() * 4 == 4096 + 2 * 256
    with pytest.raises(ValueError, match=str(plan.total_bytes - 1)):
        carve_layer_major([[K], [S]], 2, torch.zeros(plan.total_bytes - 1, dtype=torch.uint8))


def test_carve_layer_major_applies_fills_to_its_own_allocation():
    score = EntryField("score", 1, (4,), torch.float32, fill=-1.0)
    (arena,) = carve_layer_major([[score]], 2)
    assert arena.view("score").eq(-1.0).all()
    with pytest.raises(ValueError, match=re.escape("-1.0")):
        carve_layer_major([[score]], 2, torch.zeros(512, dtype=torch.uint8))
