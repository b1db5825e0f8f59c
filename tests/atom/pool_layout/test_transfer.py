"""Transfer regions (`atom.pool_layout.transfer`): one unit per scheduler block, named by role.

The runner and the block-transfer kernels exercise these through whole engines; here each
property and refusal is pinned on hand-built tensors whose byte arithmetic is written out.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from atom.pool_layout import KVTransferTensors, TransferRegion, owned_regions, owned_role


def _region(role="target.kv", shape=(3, 8), dtype=torch.uint8):
    return TransferRegion(role, torch.zeros(shape, dtype=dtype))


def test_a_role_is_qualified_by_its_owner():
    assert owned_role("draft", "h16d128/k/0") == "draft.h16d128/k/0"


def test_owned_regions_lists_every_pools_regions_in_order_under_the_owners_name():
    a, b, c = (torch.zeros(2, 4, dtype=torch.uint8) for _ in range(3))

    class Views:
        def __init__(self, *regions):
            self.regions = regions

        def region_tensors(self):
            return list(self.regions)

    regions = owned_regions(
        "target",
        [
            Views(TransferRegion("p/k", a, "bfloat16"), TransferRegion("p/v", b, "bfloat16")),
            Views(TransferRegion("q/kv", c, "float8_e4m3fn")),
        ],
    )
    assert [r.semantic_role for r in regions] == ["target.p/k", "target.p/v", "target.q/kv"]
    assert all(r.tensor is t for r, t in zip(regions, (a, b, c), strict=True))
    # The dtype of what a region holds is kept through the owner's qualification.
    assert [r.dtype for r in regions] == ["bfloat16", "bfloat16", "float8_e4m3fn"]
    assert owned_regions("target", []) == []


def test_a_region_names_its_dtype_its_tensors_by_default():
    assert _region(dtype=torch.float32).dtype == "float32"
    assert TransferRegion("r", torch.zeros(2, 4, dtype=torch.uint8), "bfloat16").dtype == "bfloat16"
    with pytest.raises(TypeError, match=r"region 'r': dtype must be a name, got ''"):
        TransferRegion("r", torch.zeros(2, 4), "")


def test_a_region_is_frozen_and_refuses_a_missing_role_or_a_non_tensor_by_name():
    with pytest.raises(dataclasses.FrozenInstanceError):
        _region().semantic_role = "other"
    for role in ("", None, 3):
        with pytest.raises(TypeError, match=r"a transfer region needs a semantic_role, got"):
            TransferRegion(role, torch.zeros(1))
    with pytest.raises(TypeError, match=r"region 'target.kv' must be a tensor, got list"):
        TransferRegion("target.kv", [0, 1])


def test_units_and_unit_bytes_come_from_the_first_axis():
    # 3 units of 5 int32 columns, sliced to 2: stride(0) 5 elements = 20 B a unit, the data of
    # one unit 2 x 4 = 8 B.
    base = torch.zeros(3, 5, dtype=torch.int32)
    region = TransferRegion("r", base[:, 1:3])
    assert (region.units, region.unit_bytes, region.unit_data_bytes) == (3, 20, 8)


def test_unit_data_bytes_spans_the_first_to_the_last_element_of_a_unit():
    # A unit (2, 2) of int16 inside rows of 3: its last element is 1 x 3 + 1 = 4 elements past
    # its first, so it spans 5 elements = 10 B (the element between the rows included).
    base = torch.zeros(4, 2, 3, dtype=torch.int16)
    assert TransferRegion("r", base[:, :, :2]).unit_data_bytes == 10
    # A unit of one element spans that element; an empty unit spans nothing.
    assert TransferRegion("r", torch.zeros(3, 1, dtype=torch.float64)).unit_data_bytes == 8
    assert TransferRegion("r", torch.zeros(3, 0, dtype=torch.float64)).unit_data_bytes == 0
    # A region of a single unit (one scheduler block) has a data span too.
    assert TransferRegion("r", torch.zeros(1, 6, dtype=torch.uint8)).unit_data_bytes == 6


def test_byte_range_is_a_units_bytes_in_its_storage():
    # Rows of 4 int32 from row 1, columns 1 and 2: storage offset 1 x 4 + 1 = 5 elements;
    # unit 2 starts (5 + 2 x 4) x 4 B = 52 B in and spans 2 x 4 = 8 B.
    base = torch.zeros(5, 4, dtype=torch.int32)
    region = TransferRegion("r", base[1:, 1:3])
    assert region.tensor.storage_offset() == 5
    assert region.byte_range(0) == (20, 28)
    assert region.byte_range(2) == (52, 60)


def test_the_block_count_is_set_once_not_passed_to_the_constructor():
    with pytest.raises(TypeError):
        KVTransferTensors([], num_blocks=3)  # type: ignore[call-arg]
    tensors = KVTransferTensors([_region("target.a")])
    assert tensors.num_blocks is None
    tensors.append(_region("draft.a"))
    assert [r.semantic_role for r in tensors.regions] == ["target.a", "draft.a"]
    tensors.set_block_count(3)
    assert tensors.num_blocks == 3
    with pytest.raises(ValueError, match=r"region 'draft.b' appended after set_block_count\(3\)"):
        tensors.append(_region("draft.b"))
    assert len(tensors.regions) == 2


def test_one_scheduler_block_is_a_block_count():
    tensors = KVTransferTensors([_region(shape=(1, 8))])
    tensors.set_block_count(1)
    assert tensors.num_blocks == 1


def test_a_role_registered_twice_is_refused_by_name():
    tensors = KVTransferTensors([_region("target.a"), _region("target.b"), _region("target.a")])
    with pytest.raises(ValueError, match=r"semantic_role 'target.a' is registered twice"):
        tensors.set_block_count(3)
    assert tensors.num_blocks is None


def test_a_region_per_token_is_refused_by_its_unit_count_and_stride():
    # The same bytes as 3 blocks of 8 B, registered as 24 one-byte units.
    tensors = KVTransferTensors([_region("target.a"), _region("target.b", shape=(24,))])
    with pytest.raises(
        ValueError,
        match=r"'target.b' has 24 units of 1 B; the scheduler has 3 blocks -- a region "
        r"registered per token",
    ):
        tensors.set_block_count(3)
    assert tensors.num_blocks is None


def test_a_unit_whose_data_runs_past_its_stride_is_refused_and_one_that_fills_it_is_not():
    buf = torch.zeros(32, dtype=torch.uint8)
    exact = TransferRegion("exact", buf[:24].view(3, 8))  # data 8 B == stride 8 B
    overlapping = TransferRegion("overlap", buf.as_strided((3, 8), (4, 1)))  # data 8 > 4
    KVTransferTensors([exact]).set_block_count(3)
    tensors = KVTransferTensors([exact, overlapping])
    with pytest.raises(
        ValueError, match=r"'overlap': one unit's data spans 8 B but its stride\(0\) is 4 B"
    ):
        tensors.set_block_count(3)
    assert tensors.num_blocks is None
