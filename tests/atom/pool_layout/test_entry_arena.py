"""EntryMajorArena and SplitEntryMajorArena: entry i is one contiguous range."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import (
    EntryField,
    EntryMajorArena,
    SplitEntryMajorArena,
    plan_field_planes,
    plane_entry_bytes,
    plane_fields,
    walk,
)

CONV = EntryField("conv", 2, (3, 4), torch.bfloat16)  # 2 x 24 B
SSM = EntryField("ssm", 2, (4, 4), torch.float32)  # 2 x 64 B


def test_entry_i_is_one_contiguous_range_holding_every_field_of_it():
    arena = EntryMajorArena([CONV, SSM], entries=3)
    # conv 48 B at 0; ssm at 256, 128 B; stride round_up(384, 256) = 512
    assert arena.stride_bytes == 512
    e1 = arena.entry(1)
    assert e1.numel() == 512 and e1.storage_offset() == 512
    arena.view("ssm")[1].fill_(2.0)
    arena.view("conv")[1].fill_(1.0)
    assert arena.entry(0).eq(0).all() and arena.entry(2).eq(0).all()
    assert e1[256:384].ne(0).any() and e1[48:256].eq(0).all()


def test_view_is_entries_by_rows_with_the_entry_stride():
    arena = EntryMajorArena([CONV, SSM], entries=3)
    view = arena.view("ssm")
    assert view.shape == (3, 2, 4, 4)
    assert view.stride(0) * 4 == 512


def test_entry_ranges_are_the_walks_checkpoint_ranges_of_that_entry():
    arena = EntryMajorArena([CONV, SSM], entries=3)
    assert arena.entry_ranges(2) == [("conv", 1024, 1072), ("ssm", 1280, 1408)]


@given(data=st.data(), entries=st.integers(1, 5))
def test_carved_bytes_equal_priced_bytes_and_views_are_disjoint_and_isolated(
    data, entries, field_lists, carve_is_the_priced_bytes
):
    fields = data.draw(field_lists())
    lead = data.draw(st.sampled_from([0, 512, 1536]))
    priced = EntryMajorArena.nbytes(fields, entries)
    assert priced == entries * walk(fields).entry_bytes
    backing = torch.zeros(lead + priced + 512, dtype=torch.uint8)
    arena = EntryMajorArena(fields, entries, buf=backing[lead : lead + priced])
    carve_is_the_priced_bytes(
        arena,
        fields,
        backing,
        lead,
        priced,
        shape=lambda f: (entries, f.rows, *f.shape),
        offset=lambda f: arena.walk.offsets[f.name],
    )
    for i in range(entries):
        e = arena.entry(i)
        assert e.storage_offset() == lead + i * arena.stride_bytes
        for name, start, stop in arena.entry_ranges(i):
            assert 0 <= start - i * arena.stride_bytes < stop - i * arena.stride_bytes
            assert stop - start == arena.walk.by_name[name].bytes


def test_an_empty_plane_is_zero_bytes_an_entry():
    assert EntryMajorArena([], entries=4, stride_bytes=64).entry_bytes == 0


def test_an_empty_plane_answers_no_view():
    with pytest.raises(KeyError, match="'kv'"):
        EntryMajorArena([], entries=4, stride_bytes=64).view("kv")


def test_an_empty_plane_still_spans_the_stride_its_rows_were_priced_at():
    arena = EntryMajorArena([], entries=4, stride_bytes=64)
    assert arena.buf.numel() == 4 * 64
    assert arena.entry(3).numel() == 64 and arena.entry(3).storage_offset() == 192


def test_an_empty_plane_keeps_its_index_so_later_planes_do_not_shift():
    a = EntryField("a", 1, (64,), torch.uint8)
    split = SplitEntryMajorArena([[], [a]], entries=2, stride_bytes=[256, None])
    assert split.plane(1).view("a").storage_offset() == 2 * 256
    assert split.plane(0).entry_bytes == 0


def test_an_empty_plane_with_no_priced_stride_is_zero_bytes_an_entry():
    arena = EntryMajorArena([], entries=2)
    assert arena.stride_bytes == 0 and arena.entry(1).numel() == 0


def test_stride_bytes_may_widen_an_entry_but_never_narrow_it():
    arena = EntryMajorArena([CONV], entries=2, stride_bytes=1024)
    assert arena.view("conv").stride(0) * 2 == 1024
    with pytest.raises(ValueError, match="128"):
        EntryMajorArena([CONV], entries=2, stride_bytes=128)
    with pytest.raises(ValueError, match="384"):
        EntryMajorArena([CONV], entries=2, stride_bytes=384)


def test_fills_apply_to_own_memory_and_reset_entry_rewrites_one_slot():
    state = EntryField("state", 1, (4,), torch.float32, fill=-1.0)
    arena = EntryMajorArena([state], entries=3)
    assert arena.view("state").eq(-1.0).all()
    arena.view("state").fill_(5.0)
    arena.reset_entry(1)
    assert arena.view("state")[1].eq(-1.0).all()
    assert arena.view("state")[[0, 2]].eq(5.0).all()
    with pytest.raises(ValueError, match=r"'state'.*-1.0"):
        EntryMajorArena([state], 3, buf=torch.zeros(3 * 256, dtype=torch.uint8))


@pytest.mark.parametrize(
    ("call", "error", "named"),
    [
        (lambda a: a.entry(3), ValueError, "entry 3"),
        (lambda a: a.entry(-1), ValueError, "-1"),
        (lambda a: a.reset_entry(7), ValueError, "entry 7"),
        (lambda a: a.view("nope"), KeyError, "'nope'"),
    ],
)
def test_refusals_of_bad_indices_name_them(call, error, named):
    with pytest.raises(error, match=re.escape(named)):
        call(EntryMajorArena([CONV], entries=3))


def test_a_buffer_of_the_wrong_size_or_alignment_is_refused_by_value():
    with pytest.raises(ValueError, match="767"):
        EntryMajorArena([CONV, SSM], 1, buf=torch.zeros(767, dtype=torch.uint8))
    backing = torch.zeros(2048, dtype=torch.uint8)
    with pytest.raises(ValueError, match="storage offset 64"):
        EntryMajorArena([CONV, SSM], 1, buf=backing[64 : 64 + 512])


def test_split_arena_gives_each_plane_its_own_range_of_entry_i():
    a = EntryField("a", 1, (100,), torch.float32)  # 400 B -> stride 512
    b = EntryField("b", 2, (8,), torch.uint8)  # 16 B -> stride 256
    split = SplitEntryMajorArena([[a], [], [b]], entries=3, stride_bytes=[None, 64, None])
    # plane0 3 x 512 = 1536; plane1 3 x 64 = 192 at 1536; plane2 at round_up(1728) = 1792
    assert [p.buf.storage_offset() for p in split.planes] == [0, 1536, 1792]
    assert split.buf.numel() == 1792 + 3 * 256
    assert [t.numel() for t in split.entry(2)] == [512, 64, 256]
    assert split.view("b").shape == (3, 2, 8)
    with pytest.raises(KeyError, match="'c'"):
        split.view("c")
    assert split.plane(1).entry_bytes == 0


def test_split_arena_refuses_a_name_in_two_planes_and_a_stride_list_of_the_wrong_length():
    a = EntryField("a", 1, (4,), torch.uint8)
    with pytest.raises(ValueError, match="'a'"):
        SplitEntryMajorArena([[a], [a]], 1)
    with pytest.raises(ValueError, match=r"\[None\]"):
        SplitEntryMajorArena([[a], []], 1, stride_bytes=[None])


@given(data=st.data(), entries=st.integers(1, 4))
def test_a_split_arena_built_from_the_plan_strides_at_the_planned_price(data, entries, field_lists):
    fields = data.draw(field_lists())
    widths = data.draw(st.lists(st.sampled_from([16, 64, 256, 512, 1024]), min_size=1, max_size=3))
    planes = plane_fields(fields, widths)
    split = SplitEntryMajorArena(planes, entries)
    assert [p.stride_bytes for p in split.planes] == plane_entry_bytes(fields, widths)
    assert [[f.name for f in p] for p in planes] == plan_field_planes(fields, widths)
    for p, w in zip(split.planes, widths, strict=True):
        assert p.stride_bytes % w == 0


@given(data=st.data(), entries=st.integers(1, 4))
def test_copying_only_the_checkpoint_ranges_moves_an_entry_whole(data, entries, field_lists):
    fields = data.draw(field_lists())
    src = EntryMajorArena(fields, entries)
    dst = EntryMajorArena(fields, entries)
    for f in fields:
        view = src.view(f.name)
        view.view(torch.uint8).copy_(
            torch.randint(0, 256, view.view(torch.uint8).shape, dtype=torch.uint8)
        )
    i = data.draw(st.integers(0, entries - 1))
    j = data.draw(st.integers(0, entries - 1))
    base_i, base_j = i * src.stride_bytes, j * dst.stride_bytes
    for (_, a, b), (_, c, d) in zip(src.entry_ranges(i), dst.entry_ranges(j), strict=True):
        assert (a - base_i, b - base_i) == (c - base_j, d - base_j)
        dst.buf[c:d] = src.buf[a:b]
    for f in fields:
        assert torch.equal(
            dst.view(f.name)[j].view(torch.uint8), src.view(f.name)[i].view(torch.uint8)
        )


@given(data=st.data(), entries=st.integers(1, 3))
def test_split_planes_are_disjoint_inside_the_buffer_and_isolated(
    data, entries, field_lists, byte_addresses, mark_bytes, storage_bytes
):
    fields = data.draw(field_lists())
    widths = data.draw(st.lists(st.sampled_from([16, 64, 512]), min_size=1, max_size=3))
    split = SplitEntryMajorArena(plane_fields(fields, widths), entries)
    lo = split.buf.storage_offset()
    addresses = {f.name: byte_addresses(split.view(f.name)) for f in fields}
    every = torch.cat(list(addresses.values()))
    assert every.unique().numel() == every.numel()
    assert every.min() >= lo and every.max() < lo + split.buf.numel()
    for f in fields:
        split.buf.zero_()
        mark_bytes(split.view(f.name))
        changed = storage_bytes(split.buf).nonzero().reshape(-1)
        assert torch.equal(changed, addresses[f.name].sort().values)
