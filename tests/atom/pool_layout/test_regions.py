"""plan_regions / carve: 256 B placement, and a short buffer refused."""

from __future__ import annotations

import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout import carve, plan_regions


def test_regions_are_packed_on_256_byte_boundaries():
    plan = plan_regions([("a", 100), ("b", 256), ("c", 1)])
    # a at 0; b at round_up(100) = 256; c at round_up(512) = 512; end 513
    assert [(r.name, r.offset, r.nbytes) for r in plan.regions] == [
        ("a", 0, 100),
        ("b", 256, 256),
        ("c", 512, 1),
    ]
    assert plan.total_bytes == 513
    assert plan.padding_bytes == 513 - 357
    assert plan["b"].stop == 512


def test_base_is_where_the_first_region_may_start():
    plan = plan_regions([("a", 10)], base=300)
    assert plan["a"].offset == 512
    assert plan.total_bytes == 522


@given(sizes=st.lists(st.integers(0, 5000), max_size=6), base=st.integers(0, 1000))
def test_plan_is_ordered_aligned_disjoint_and_total_is_the_last_end(sizes, base):
    plan = plan_regions([(f"r{i}", n) for i, n in enumerate(sizes)], base=base)
    cursor = base
    for region in plan.regions:
        assert region.offset % 256 == 0
        assert region.offset >= cursor
        assert region.offset - cursor < 256
        cursor = region.stop
    assert plan.total_bytes == cursor


def test_carve_returns_views_sharing_storage_at_absolute_offsets():
    backing = torch.zeros(8192, dtype=torch.uint8)
    buf = backing[1024:]
    regions = carve(buf, plan_regions([("a", 100), ("b", 300)]))
    assert regions["a"].storage_offset() == 1024
    assert regions["b"].storage_offset() == 1024 + 256
    assert regions["b"].numel() == 300
    regions["b"].fill_(7)
    assert backing[1024 + 256 : 1024 + 556].eq(7).all()
    assert backing[: 1024 + 256].eq(0).all() and backing[1024 + 556 :].eq(0).all()


def test_carve_refuses_a_short_buffer_rather_than_returning_a_short_last_region():
    plan = plan_regions([("a", 100), ("b", 300)])  # total 556
    with pytest.raises(ValueError, match=r"555 bytes.*556"):
        carve(torch.zeros(555, dtype=torch.uint8), plan)


def test_carve_accepts_a_longer_buffer_whose_tail_belongs_to_no_region():
    regions = carve(torch.zeros(1000, dtype=torch.uint8), plan_regions([("a", 10)]))
    assert regions["a"].numel() == 10


def test_carve_refuses_a_buffer_that_is_not_flat_bytes():
    plan = plan_regions([("a", 4)])
    with pytest.raises(TypeError, match=r"torch\.float32"):
        carve(torch.zeros(8), plan)
    with pytest.raises(ValueError, match=r"\(2, 4\)"):
        carve(torch.zeros(2, 4, dtype=torch.uint8), plan)
    with pytest.raises(TypeError, match="RegionPlan"):
        carve(torch.zeros(8, dtype=torch.uint8), [("a", 4)])


@pytest.mark.parametrize(
    ("sizes", "error", "named"),
    [
        ([("a", -1)], ValueError, "-1"),
        ([("a", 1), ("a", 2)], ValueError, "'a'"),
        ([("a",)], TypeError, "('a',)"),
        ([(3, 1)], TypeError, "3"),
    ],
)
def test_plan_refusals_name_the_value(sizes, error, named):
    with pytest.raises(error, match=re.escape(named)):
        plan_regions(sizes)


def test_plan_refuses_an_alignment_that_is_not_a_power_of_two():
    with pytest.raises(ValueError, match="100"):
        plan_regions([("a", 1)], align=100)
