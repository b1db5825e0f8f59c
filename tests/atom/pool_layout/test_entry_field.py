"""EntryField and the one walk: offsets, entry_bytes, checkpoint ranges."""

from __future__ import annotations

import itertools
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import EntryField, walk


def test_row_bytes_and_bytes_are_shape_times_itemsize_times_rows():
    f = EntryField("k", rows=3, shape=(16, 2, 8), dtype=torch.bfloat16)
    assert f.row_bytes == 16 * 2 * 8 * 2  # 512
    assert f.bytes == 3 * 512


def test_shape_is_normalised_to_a_tuple_so_equal_declarations_compare_equal():
    assert EntryField("a", 1, [4, 4], torch.uint8) == EntryField("a", 1, (4, 4), torch.uint8)


def test_walk_places_each_field_on_its_alignment_and_rounds_the_entry():
    a = EntryField("a", 1, (3,), torch.float32)  # 12 B
    b = EntryField("b", 2, (5,), torch.bfloat16)  # 2 x 10 B = 20 B
    w = walk([a, b])
    # a at 0; b at round_up(12, 256) = 256; entry round_up(256 + 20, 256) = 512
    assert dict(w.offsets) == {"a": 0, "b": 256}
    assert w.entry_bytes == 512
    assert dict(w.spans) == {"a": 256, "b": 256}
    assert w.checkpoint_ranges() == [("a", 0, 12), ("b", 256, 276)]
    assert w.padding_bytes == 512 - 32


def test_a_field_wider_aligned_than_the_walk_sets_the_entry_stride():
    a = EntryField("a", 1, (3,), torch.uint8, align=1)
    b = EntryField("b", 1, (3,), torch.uint8, align=512)
    w = walk([a, b], align=64)
    assert w.offsets["b"] == 512
    assert w.entry_bytes == 1024  # round_up(515, 512): the next entry's b stays 512-aligned
    assert w.align == 512


def test_an_empty_field_list_is_an_entry_of_zero_bytes():
    w = walk([])
    assert w.entry_bytes == 0
    assert w.checkpoint_ranges() == []


@given(data=st.data())
def test_walk_invariants(data, field_lists):
    fields = data.draw(field_lists())
    align = data.draw(st.sampled_from([1, 64, 256]))
    w = walk(fields, align=align)
    ranges = w.checkpoint_ranges()
    assert [name for name, _, _ in ranges] == [f.name for f in fields]
    for f, (_, start, stop) in zip(fields, ranges, strict=True):
        assert start % f.align == 0
        assert stop - start == f.bytes
        assert w.spans[f.name] >= f.bytes
    for (_, _, stop), (_, start, _) in itertools.pairwise(ranges):
        assert stop <= start  # in declaration order, never overlapping
    assert ranges[-1][2] <= w.entry_bytes
    assert sum(w.spans.values()) == w.entry_bytes
    assert w.entry_bytes % align == 0
    assert all(w.entry_bytes % f.align == 0 for f in fields)
    assert w.padding_bytes == w.entry_bytes - sum(f.bytes for f in fields)
    # the padding is only alignment: less than one boundary per field plus the tail
    assert w.padding_bytes < (len(fields) + 1) * w.align


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"rows": 0}, ValueError, "0"),
        ({"rows": True}, TypeError, "True"),
        ({"rows": 2.0}, TypeError, "2.0"),
        ({"shape": (4, 0)}, ValueError, "(4, 0)"),
        ({"shape": "44"}, TypeError, "'44'"),
        ({"dtype": "bf16"}, TypeError, "'bf16'"),
        ({"fill": "inf"}, TypeError, "'inf'"),
        ({"align": 96}, ValueError, "96"),
        ({"align": 0}, ValueError, "0"),
        ({"dtype": torch.float32, "align": 2}, ValueError, "2"),
        ({"name": ""}, TypeError, "''"),
    ],
)
def test_refusals_name_the_value(kwargs, error, named):
    base = {"name": "k", "rows": 1, "shape": (4,), "dtype": torch.uint8}
    with pytest.raises(error, match=re.escape(named)):
        EntryField(**{**base, **kwargs})


def test_walk_refuses_a_name_declared_twice():
    f = EntryField("k", 1, (4,), torch.uint8)
    with pytest.raises(ValueError, match="'k'"):
        walk([f, f])


def test_walk_refuses_something_that_is_not_a_field():
    with pytest.raises(TypeError, match="'k'"):
        walk(["k"])
    with pytest.raises(ValueError, match="48"):
        walk([], align=48)


def test_a_fill_an_integer_dtype_cannot_hold_is_refused_by_value():
    with pytest.raises(ValueError, match="-inf"):
        EntryField("ids", 1, (4,), torch.int32, fill=float("-inf"))
    with pytest.raises(ValueError, match=r"0\.5"):
        EntryField("ids", 1, (4,), torch.int32, fill=0.5)
    assert EntryField("ids", 1, (4,), torch.int32, fill=-1).fill == -1.0
