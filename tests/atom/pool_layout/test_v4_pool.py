"""DeepSeek-V4's declarations in the leaf (`v4_pool_fields`, `v4_pool_geometry`), pinned directly.

The V4 backend and the record goldens reach these through a whole engine; here every figure is
written out by hand -- rows, offsets and bytes from the shapes -- so the leaf's own tests hold
what a backend test would only notice as a wrong total.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from atom.pool_layout import (
    EntryField,
    IndexerRegion,
    V4RowSpace,
    compressor_state_fields,
    indexer_block_bytes,
    indexer_block_regions,
    plan_shared_row_planes,
    plane_row_widths,
    v4_pool_fields,
    walk,
)
from atom.pool_layout.v4_pool_fields import plane_state_bytes
from atom.pool_layout.v4_pool_geometry import (
    ClassRows,
    entry_rows_for,
    layers_by_ratio,
    ring_offset_for,
)

F32 = torch.float32

# -- what a row is: planes ----------------------------------------------------------------------


def test_an_fp8_build_has_two_planes_and_a_bf16_build_one():
    # fp8: packed NoPE 512 x 1 B, RoPE 64 x 2 B (bf16); bf16: one 512 x 2 B row, RoPE inline.
    assert plane_row_widths(kv_fp8=True, head_dim=512, rope_head_dim=64) == (512, 128)
    assert plane_row_widths(kv_fp8=False, head_dim=512, rope_head_dim=64) == (1024,)
    # RoPE as wide as the whole head still sits inside it; one element of each is a width.
    assert plane_row_widths(kv_fp8=True, head_dim=64, rope_head_dim=64) == (64, 128)
    assert plane_row_widths(kv_fp8=True, head_dim=1, rope_head_dim=1) == (1, 2)


@pytest.mark.parametrize(
    ("head_dim", "rope", "error", "needle"),
    [
        (0, 64, ValueError, "V4 head_dim must be at least 1, got 0"),
        (512, 0, ValueError, "V4 rope_head_dim must be at least 1, got 0"),
        (512, 1.0, TypeError, "V4 rope_head_dim must be an int"),
        (64, 65, ValueError, "V4 rope_head_dim 65 exceeds the head_dim 64 it sits inside"),
    ],
)
def test_plane_widths_refuse_by_name(head_dim, rope, error, needle):
    with pytest.raises(error, match=needle):
        plane_row_widths(kv_fp8=True, head_dim=head_dim, rope_head_dim=rope)


# -- what a row is: the compressor state ---------------------------------------------------------


def test_the_compressor_state_is_a_kv_and_score_pair_per_compressor():
    fields = compressor_state_fields(
        csa_layers=2, hca_layers=3, head_dim=8, index_head_dim=4, ring_extra=5
    )
    # CSA keeps 2 x 4 + 5 = 13 ring positions of 2 x head_dim (main) and 2 x index_head_dim
    # (indexer); HCA keeps 128 + 5 = 133 positions of head_dim. Scores start at -inf.
    assert [(f.name, f.rows, f.shape, f.dtype, f.fill) for f in fields] == [
        ("csa_main_kv", 2, (13, 16), F32, 0.0),
        ("csa_main_score", 2, (13, 16), F32, float("-inf")),
        ("csa_idx_kv", 2, (13, 8), F32, 0.0),
        ("csa_idx_score", 2, (13, 8), F32, float("-inf")),
        ("hca_main_kv", 3, (133, 8), F32, 0.0),
        ("hca_main_score", 3, (133, 8), F32, float("-inf")),
    ]


def test_a_class_with_no_layers_declares_no_state():
    def names(csa, hca):
        fields = compressor_state_fields(
            csa_layers=csa, hca_layers=hca, head_dim=8, index_head_dim=4, ring_extra=0
        )
        return [f.name for f in fields]

    assert names(0, 1) == ["hca_main_kv", "hca_main_score"]
    assert names(1, 0) == ["csa_main_kv", "csa_main_score", "csa_idx_kv", "csa_idx_score"]
    assert names(0, 0) == []


@pytest.mark.parametrize(
    ("kw", "error", "needle"),
    [
        ({"csa_layers": -1}, ValueError, "csa_layers must be at least 0, got -1"),
        ({"hca_layers": "2"}, TypeError, "hca_layers must be an int"),
        ({"ring_extra": -1}, ValueError, "ring_extra must be at least 0, got -1"),
    ],
)
def test_the_compressor_state_refuses_counts_by_name(kw, error, needle):
    args = {"csa_layers": 1, "hca_layers": 1, "head_dim": 8, "index_head_dim": 4, "ring_extra": 0}
    with pytest.raises(error, match=needle):
        compressor_state_fields(**{**args, **kw})


def test_a_planes_state_bytes_are_its_walk_and_an_empty_plane_costs_nothing():
    # 256 B, then 100 B placed at 256 and padded to the 256 B alignment: 512.
    fields = [EntryField("a", 1, (64,), F32), EntryField("b", 1, (25,), F32)]
    assert plane_state_bytes(fields) == walk(fields).entry_bytes == 512
    assert plane_state_bytes([]) == 0


# -- what a row is: the state split over planes sharing one row count ----------------------------


def test_two_equal_fields_over_two_equal_planes_take_one_row_each():
    a, b = EntryField("a", 1, (64,), F32), EntryField("b", 1, (64,), F32)  # 256 B each
    # Assignment codes, field 0 the least significant digit: 0 puts both in plane 0 (2 rows),
    # 1 puts a in plane 1 and b in plane 0 (1 row), 2 the reverse (1 row), 3 both in plane 1.
    # The first with the fewest rows wins.
    planes, rows = plan_shared_row_planes([a, b], [256, 256])
    assert ([[f.name for f in p] for p in planes], rows) == ([["b"], ["a"]], 1)
    # One plane: everything in it, 512 B in rows of 256.
    planes, rows = plan_shared_row_planes([a, b], (256,))
    assert ([[f.name for f in p] for p in planes], rows) == ([["a", "b"]], 2)


def test_the_v4_flash_state_splits_to_21826_rows():
    """The split the record's tp 2 golden rests on, in bytes: CSA main 21 layers x 13
    positions x 1024 x 4 B = 1118208 a field, CSA indexer 21 x 13 x 256 x 4 = 279552, HCA
    20 x 133 x 512 x 4 = 5447680. Plane 0 (512 B rows) takes the CSA indexer score and both HCA
    fields, 11174912 B = 21826 rows; plane 1 (128 B rows) the CSA main pair and indexer kv,
    2515968 B = 19656 rows."""
    fields = compressor_state_fields(
        csa_layers=21, hca_layers=20, head_dim=512, index_head_dim=128, ring_extra=5
    )
    planes, rows = plan_shared_row_planes(fields, (512, 128))
    assert [[f.name for f in p] for p in planes] == [
        ["csa_idx_score", "hca_main_kv", "hca_main_score"],
        ["csa_main_kv", "csa_main_score", "csa_idx_kv"],
    ]
    assert (279552 + 2 * 5447680) // 512 == 21826 and (2 * 1118208 + 279552) // 128 == 19656
    assert rows == 21826


def test_the_split_refuses_bad_widths_and_fields_by_name():
    f = EntryField("a", 1, (64,), F32)
    for widths in ("ab", 512):
        with pytest.raises(TypeError, match="plane_widths must be a sequence of ints, got"):
            plan_shared_row_planes([f], widths)
    with pytest.raises(ValueError, match="a row space needs at least one plane"):
        plan_shared_row_planes([f], [])
    with pytest.raises(ValueError, match=r"plane_widths\[1\] must be a power of two, got 100"):
        plan_shared_row_planes([f], [512, 100])
    with pytest.raises(TypeError, match="plan_shared_row_planes takes EntryField items, got 'a'"):
        plan_shared_row_planes([f, "a"], [512])


def test_the_split_refuses_past_its_enumeration_bound_and_answers_at_it(monkeypatch):
    fields = [EntryField(f"f{i}", 1, (64,), F32) for i in range(17)]
    with pytest.raises(
        ValueError, match=r"17 fields over 2 planes is 131072 assignments; refusing more than 65536"
    ):
        plan_shared_row_planes(fields, [256, 256])
    # At the bound exactly the question is answered (a bound of 8 keeps the enumeration short).
    monkeypatch.setattr(v4_pool_fields, "MAX_ASSIGNMENTS", 8)
    assert plan_shared_row_planes(fields[:3], [256, 256])[1] == 2
    with pytest.raises(ValueError, match="4 fields over 2 planes is 16 assignments"):
        plan_shared_row_planes(fields[:4], [256, 256])


# -- what a row is: one CSA layer's indexer block ------------------------------------------------


def test_an_fp8_indexer_block_is_keys_then_one_fp32_scale_a_row():
    kv, scale = indexer_block_regions(64, 128, fp4=False)
    # 64 rows x 128 fp8 keys = 8192 B, then 64 x 4 B scales from byte 8192: nothing between.
    assert kv == IndexerRegion("index_kv", 0, 8192, (64, 128), torch.float8_e4m3fn)
    assert scale == IndexerRegion("index_scale", 8192, 256, (64,), F32)
    assert indexer_block_bytes(64, 128, fp4=False) == 8192 + 256
    assert indexer_block_bytes(3, 100, fp4=False) == 3 * 100 + 3 * 4
    assert indexer_block_bytes(1, 1, fp4=False) == 1 + 4  # one row of one key is a block


def test_an_fp4_indexer_block_is_the_preshuffled_tiles_then_their_scale_bytes():
    kv, scale = indexer_block_regions(64, 256, fp4=True)
    # 256 / 128 = 2 K tiles x 4 sub-tiles x 64 rows x 16 packed bytes = 8192 B, then one e8m0
    # byte per (tile, sub-tile, row): 2 x 4 x 64 = 512 B.
    assert kv == IndexerRegion("index_kv", 0, 8192, (2, 4, 64, 16), torch.uint8)
    assert scale == IndexerRegion("index_scale", 8192, 512, (2, 4, 64), torch.uint8)
    assert indexer_block_bytes(64, 256, fp4=True) == 8704
    assert indexer_block_bytes(64, 128, fp4=True) == 4096 + 256


@pytest.mark.parametrize(
    ("args", "fp4", "needle"),
    [
        ((0, 128), False, "indexer rows must be at least 1, got 0"),
        ((64, 0), True, "index_head_dim must be at least 1, got 0"),
        ((64, 200), True, "an fp4 indexer needs index_head_dim a multiple of 128, got 200"),
    ],
)
def test_the_indexer_block_refuses_by_name(args, fp4, needle):
    with pytest.raises(ValueError, match=needle):
        indexer_block_regions(*args, fp4=fp4)


def test_v4_declarations_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        indexer_block_regions(1, 128, fp4=False)[0].offset = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        ClassRows(4, 1, 64, 64, 0, 0, 64).layers = 2


# -- where rows go -----------------------------------------------------------------------------


def test_window_rows_interleave_a_class_in_runs_of_its_stride():
    # 3 layers in runs of 2: position 5 is in the third run (chunk 2) at 1 within it, and a run
    # of all three layers is 3 x 2 = 6 rows: 2 x 6 + 1 = 13.
    assert ring_offset_for(3, 2, 5) == 13
    assert ring_offset_for(3, 2, 0) == 0
    # 3 layers x 6 positions fill 18 rows exactly; 2 layers x 5 positions in runs of 4 leave
    # rows 9-11 unused: layer 1's position 4 is row 4 + 8 = 12, so 13 rows.
    assert entry_rows_for(3, 2, 6) == 18
    assert entry_rows_for(2, 4, 5) == 13


def _flash(arena_rows=21826):
    # V4-Flash-DSpark: 5 dense, 21 CSA and 20 HCA layers, 256-token blocks, 128 + 5 positions.
    return V4RowSpace({0: 5, 4: 21, 128: 20}, block_size=256, ring_slots=133, arena_rows=arena_rows)


def test_the_v4_flash_row_space():
    space = _flash()
    # Envelope, HCA first: 20 x 256/128 = 40 rows, then CSA 21 x 256/4 = 1344 from row 40.
    assert space.envelope_rows == 40 + 1344
    # Entry, dense first: 4 x 133 + 132 + 1 = 665; HCA 19 x 2 + 66 x 40 + 1 = 2679 from 665;
    # CSA 20 x 64 + (2 x 21 x 64 + 4) + 1 = 3973 from 665 + 2679 = 3344.
    assert space.classes == {
        0: ClassRows(0, 5, 0, 133, 0, 0, 665),
        128: ClassRows(128, 20, 2, 2, 0, 665, 2679),
        4: ClassRows(4, 21, 64, 64, 40, 3344, 3973),
    }
    assert list(space.classes) == [0, 128, 4]
    assert space.entry_rows == 665 + 2679 + 3973 == 7317
    # The slot: 21826 + 7317 = 29143 rows, rounded up to an even 29144.
    assert space.slot_rows == 29144
    assert _flash(arena_rows=21825).slot_rows == 29142  # already even: no rounding
    assert space.block_bytes(512) == 1384 * 512
    assert space.slot_bytes(128) == 29144 * 128
    assert space.plane_rows(3, 2) == 3 * 1384 + 2 * 29144
    assert space.plane_rows(0, 0) == 0


def test_compressed_and_window_rows_of_the_v4_flash_row_space():
    space = _flash()
    assert space.compressed_rows(4, 2) == (40 + 2 * 64, 64)
    assert space.compressed_rows(128, 19) == (19 * 2, 2)
    # CSA layer 1, position 70: slot start 21826 + class 3344 + layer 1 x 64 + position 70 in
    # its second run of 21 x 64 rows (1344) at 6 within it.
    assert space.window_row(4, 1, 70) == 21826 + 3344 + 64 + 1344 + 6
    # The last dense layer's last position is the dense class's last row.
    assert space.window_row(0, 4, 132) == 21826 + 665 - 1
    assert space.window_row(128, 0, 0) == 21826 + 665


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda s: s.compressed_rows(0, 0), ValueError, "a dense layer keeps no compressed KV"),
        (lambda s: s.compressed_rows(4, 21), ValueError, "layer 21 is outside the 21 layers of"),
        (lambda s: s.compressed_rows(4, -1), ValueError, "layer index must be at least 0"),
        (lambda s: s.compressed_rows(8, 0), ValueError, "holds no layer of compress ratio 8"),
        (lambda s: s.window_row(128, 20, 0), ValueError, "layer 20 is outside the 20 layers of"),
        (lambda s: s.window_row(4, 0, 133), ValueError, r"ring position 133 is outside 0\.\.133"),
        (lambda s: s.window_row(4, 0, -1), ValueError, r"ring position -1 is outside"),
        (lambda s: s.plane_rows(-1, 0), ValueError, "num_blocks must be at least 0"),
        (lambda s: s.plane_rows(0, -1), ValueError, "num_slots must be at least 0"),
    ],
)
def test_row_space_addresses_refuse_by_name(call, error, needle):
    with pytest.raises(error, match=needle):
        call(_flash())


def test_a_row_space_holds_only_the_classes_it_has_layers_of():
    space = V4RowSpace({0: 0, 4: 2, 128: 0}, block_size=8, ring_slots=3, arena_rows=0)
    assert space.layers_by_ratio == {4: 2}
    assert list(space.classes) == [4]
    # 2 CSA layers x 8/4 = 2 rows a block; windows in runs of 2: (2 - 1) x 2 + (1 x 4 + 0) + 1.
    assert (space.envelope_rows, space.entry_rows, space.slot_rows) == (4, 7, 8)


@pytest.mark.parametrize(
    ("layers", "kw", "error", "needle"),
    [
        ({8: 1}, {}, ValueError, r"unknown V4 compress ratios \[8\]; known \[0, 4, 128\]"),
        ({4: -1, 0: 1}, {}, ValueError, "V4RowSpace layers of ratio 4 must be at least 0"),
        ({4: 0, 128: 0}, {}, ValueError, "a V4 row space needs at least one layer"),
        ({4: 1}, {"block_size": 0}, ValueError, "V4RowSpace block_size must be at least 1"),
        ({4: 1}, {"block_size": 254}, ValueError, "block_size 254 is not a multiple of .* 4"),
        ({128: 1}, {"block_size": 260}, ValueError, "block_size 260 is not a multiple of .* 128"),
        ({4: 1}, {"ring_slots": 0}, ValueError, "V4RowSpace ring_slots must be at least 1"),
        ({4: 1}, {"arena_rows": -1}, ValueError, "V4RowSpace arena_rows must be at least 0"),
    ],
)
def test_a_row_space_refuses_by_name(layers, kw, error, needle):
    args = {"block_size": 256, "ring_slots": 133, "arena_rows": 0, **kw}
    with pytest.raises(error, match=needle):
        V4RowSpace(layers, **args)


def test_a_block_needs_to_divide_only_by_the_ratios_it_holds():
    # 260 is no multiple of 128 and 254 none of 4: fine without HCA, or without compression.
    assert V4RowSpace({4: 1}, block_size=260, ring_slots=1, arena_rows=0).envelope_rows == 65
    assert V4RowSpace({0: 1}, block_size=254, ring_slots=1, arena_rows=0).envelope_rows == 0
    # The smallest space: one dense layer, a one-token block, one window position.
    space = V4RowSpace({0: 1}, block_size=1, ring_slots=1, arena_rows=0)
    assert (space.envelope_rows, space.entry_rows, space.slot_rows) == (0, 1, 2)


def test_layer_counts_per_ratio_come_from_a_per_layer_list():
    assert layers_by_ratio([0, 0, 4, 128, 4]) == {0: 2, 4: 2, 128: 1}
    assert layers_by_ratio([]) == {0: 0, 4: 0, 128: 0}
    with pytest.raises(ValueError, match=r"unknown V4 compress ratio 8; known \[0, 4, 128\]"):
        layers_by_ratio([4, 8])
