"""plan_field_planes: exact, deterministic, and emptying a plane when it should."""

from __future__ import annotations

import itertools
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import EntryField, plan_field_planes, plane_entry_bytes, plane_rows

A = EntryField("a", 1, (512,), torch.uint8)


def test_the_records_cases_one_field_over_two_planes():
    # 512 B costs 8 rows x 64 B in either 64 B plane: the earlier plane wins
    assert plan_field_planes([A], [64, 64]) == [["a"], []]
    # 512 B either way, but one 512 B row beats eight 64 B rows
    assert plan_field_planes([A], [64, 512]) == [[], ["a"]]


def test_bytes_come_first_a_narrow_field_stays_in_the_narrow_plane():
    small = EntryField("s", 1, (64,), torch.uint8)
    assert plan_field_planes([small], [64, 512]) == [["s"], []]
    assert plane_entry_bytes([small], [64, 512]) == [64, 0]


def test_names_keep_declaration_order_inside_a_plane():
    fields = [EntryField(n, 1, (64,), torch.uint8) for n in ("z", "y", "x")]
    assert plan_field_planes(fields, [64]) == [["z", "y", "x"]]


def _brute_force(fields, widths):
    """Every assignment, scored by (bytes, rows, assignment): the definition."""
    best = None
    for assignment in itertools.product(range(len(widths)), repeat=len(fields)):
        if any(widths[p] < f.itemsize for f, p in zip(fields, assignment, strict=True)):
            continue
        total_bytes = sum(
            plane_rows(f, widths[p]) * widths[p] for f, p in zip(fields, assignment, strict=True)
        )
        total_rows = sum(plane_rows(f, widths[p]) for f, p in zip(fields, assignment, strict=True))
        key = (total_bytes, total_rows, assignment)
        if best is None or key < best:
            best = key
    planes = [[] for _ in widths]
    for f, p in zip(fields, best[2], strict=True):
        planes[p].append(f.name)
    return planes


@given(data=st.data())
def test_the_per_field_answer_is_the_optimum_over_every_assignment(data, field_lists):
    fields = data.draw(field_lists())
    widths = data.draw(st.lists(st.sampled_from([1, 2, 16, 64, 128, 512]), min_size=1, max_size=3))
    if all(w < max(f.itemsize for f in fields) for w in widths):
        with pytest.raises(ValueError, match="fits no plane"):
            plan_field_planes(fields, widths)
        return
    answer = plan_field_planes(fields, widths)
    assert answer == _brute_force(fields, widths)
    assert answer == plan_field_planes(list(fields), list(widths))  # deterministic


def test_a_large_input_is_solved_without_refusal():
    fields = [EntryField(f"f{i}", 1 + i % 3, (7 + i,), torch.bfloat16) for i in range(200)]
    planes = plan_field_planes(fields, [16, 64, 256, 1024, 4096, 128, 32, 8])
    assert sorted(n for p in planes for n in p) == sorted(f.name for f in fields)


@pytest.mark.parametrize(
    ("fields", "widths", "error", "named"),
    [
        ([A], [], ValueError, "[]"),
        ([A], [48], ValueError, "48"),
        ([A], [0], ValueError, "0"),
        ([A, A], [64], ValueError, "'a'"),
        (["a"], [64], TypeError, "'a'"),
        ([EntryField("w", 1, (2,), torch.float32)], [2], ValueError, "'w'"),
    ],
)
def test_refusals_name_the_value(fields, widths, error, named):
    with pytest.raises(error, match=re.escape(named)):
        plan_field_planes(fields, widths)
