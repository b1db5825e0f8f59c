"""What the docs promise of pool_layout, held exactly: sizes, refusals by name, frozen declarations.

Grouped by module, each test names what would get through if the promise broke: a size one
alignment over, a refusal that names the wrong value or none, a declaration that can be edited
after it was priced.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from atom.pool_layout import (
    ElementOrder,
    EntryClass,
    EntryField,
    EntryMajorArena,
    IndexerField,
    KvGeometry,
    KVTransferTensors,
    LayerMajorArena,
    LinearStatePool,
    MhaKvPool,
    MlaKvPool,
    PoolRows,
    PoolSpec,
    SplitEntryMajorArena,
    carve_layer_major,
    is_fp8,
    plan_field_planes,
    plan_layer_major,
    plan_regions,
    row_major,
    shuffle_vector,
    walk,
)
from atom.pool_layout.pool_rows import describe_module
from atom.pool_layout.refusals import require_count
from atom.pool_layout.regions import Region

U8 = torch.uint8


def _f(name="a", rows=1, shape=(8,), dtype=torch.float32, **kw):
    return EntryField(name, rows, shape, dtype, **kw)


# -- declarations are immutable and hash by identity where they hold mappings --------------------


def test_declarations_are_frozen():
    for obj, attr in [
        (_f(), "rows"),
        (walk([_f()]), "entry_bytes"),
        (IndexerField(1, head_dim=8, dtype=torch.bfloat16, tokens_per_entry=4), "rows"),
        (Region("r", 0, 1), "offset"),
        (plan_regions([("a", 1)]), "total_bytes"),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, 0)


def test_a_walk_hashes_by_identity_and_does_not_print_its_index():
    w = walk([_f()])
    assert hash(w) == hash(w) and w != walk([_f()])  # eq=False: two walks are two objects
    assert "by_name" not in repr(w)


# -- entry_arena: exact size, the stride rule, refusals by name ---------------------------------


def test_a_stride_equal_to_the_aligned_entry_is_accepted_and_a_narrower_one_refused():
    fields = [_f(shape=(3,), align=4)]  # 12 B of data, aligned entry 16 B (align=16)
    arena = EntryMajorArena(fields, 2, align=16, stride_bytes=16)
    assert arena.stride_bytes == 16 and arena.buf.numel() == 32
    with pytest.raises(ValueError, match=r"stride_bytes 12 is less than the 16 bytes"):
        EntryMajorArena(fields, 2, align=16, stride_bytes=12)
    with pytest.raises(TypeError, match=r"EntryMajorArena stride_bytes must be an int, got '16'"):
        EntryMajorArena(fields, 2, align=16, stride_bytes="16")


def test_entry_ranges_under_a_widened_stride_address_each_entrys_own_bytes():
    fields = [_f("a", shape=(2,)), _f("b", shape=(2,), dtype=torch.int32)]
    arena = EntryMajorArena(fields, 3, stride_bytes=1024)
    ranges = arena.entry_ranges(2)
    assert ranges == [("a", 2048, 2056), ("b", 2048 + 256, 2048 + 264)]
    arena.view("b")[2].fill_(7)
    _, lo, hi = ranges[1]
    assert arena.buf[lo:hi].view(torch.int32).tolist() == [7, 7]


def test_entry_major_nbytes_refuses_zero_entries():
    with pytest.raises(ValueError, match=r"EntryMajorArena entries must be at least 1, got 0"):
        EntryMajorArena.nbytes([_f()], 0)


def _planes():
    return [[_f("a", shape=(3,), dtype=U8, align=1)], [_f("b", shape=(2,))]]


def test_split_arena_refuses_a_longer_buffer_than_priced():
    priced = SplitEntryMajorArena.nbytes(_planes(), 2)
    SplitEntryMajorArena(_planes(), 2, buf=torch.zeros(priced, dtype=U8))  # exact: accepted
    with pytest.raises(ValueError, match=rf"holds {priced + 256} bytes; 2 entries across 2 planes"):
        SplitEntryMajorArena(_planes(), 2, buf=torch.zeros(priced + 256, dtype=U8))


def test_split_arena_refuses_a_wrong_kind_of_or_misaligned_buffer():
    priced = SplitEntryMajorArena.nbytes(_planes(), 2)
    with pytest.raises(TypeError, match=r"SplitEntryMajorArena buf must be uint8"):
        SplitEntryMajorArena(_planes(), 2, buf=torch.zeros(priced, dtype=torch.int8))
    with pytest.raises(ValueError, match=r"SplitEntryMajorArena buf starts at storage offset 1"):
        SplitEntryMajorArena(_planes(), 2, buf=torch.zeros(priced + 1, dtype=U8)[1:])


def test_split_arena_fills_what_it_allocated_and_refuses_a_fill_on_a_handed_buffer():
    planes = [[_f("s", shape=(4,), fill=float("-inf"))]]
    fresh = SplitEntryMajorArena(planes, 2)
    assert torch.isneginf(fresh.view("s")).all()
    priced = SplitEntryMajorArena.nbytes(planes, 2)
    with pytest.raises(ValueError, match=r"field 's' declares fill -inf"):
        SplitEntryMajorArena(planes, 2, buf=torch.zeros(priced, dtype=U8))


def test_a_plane_strides_at_its_own_fields_alignment_not_the_arenas():
    """A 3-byte uint8 field of align 1 strides 3 B an entry inside its plane."""
    arena = SplitEntryMajorArena(_planes(), 4)
    assert arena.plane(0).stride_bytes == 3
    assert arena.plane(0).entry(3).numel() == 3
    assert SplitEntryMajorArena.plan_planes(_planes(), 4).regions[0].nbytes == 12


def test_split_arena_refuses_a_string_for_its_planes():
    with pytest.raises(TypeError, match=r"planes must be a sequence of field lists, got 'ab'"):
        SplitEntryMajorArena.plan_planes("ab", 1)


# -- layer_major ----------------------------------------------------------------------------------


def _groups():
    return [[_f("k", rows=2, shape=(4,)), _f("v", rows=2, shape=(4,), dtype=torch.bfloat16)], []]


def test_carve_layer_major_takes_exactly_its_price_from_a_handed_buffer():
    priced = plan_layer_major(_groups(), 2).total_bytes
    arenas = carve_layer_major(_groups(), 2, torch.zeros(priced, dtype=U8))
    assert arenas[1] is None and arenas[0].buf.numel() == priced
    with pytest.raises(ValueError, match=rf"holds {priced + 256} bytes; the groups are priced"):
        carve_layer_major(_groups(), 2, torch.zeros(priced + 256, dtype=U8))
    with pytest.raises(TypeError, match=r"carve_layer_major buf must be uint8"):
        carve_layer_major(_groups(), 2, torch.zeros(priced, dtype=torch.int8))
    with pytest.raises(ValueError, match=r"carve_layer_major buf starts at storage offset 1"):
        carve_layer_major(_groups(), 2, torch.zeros(priced + 1, dtype=U8)[1:])


def test_layer_major_counts_are_refused_by_name():
    with pytest.raises(ValueError, match=r"LayerMajorArena entries must be at least 1, got 0"):
        LayerMajorArena.nbytes([_f()], 0)
    with pytest.raises(ValueError, match=r"carve_layer_major entries must be at least 1, got 0"):
        plan_layer_major(_groups(), 0)
    arena = LayerMajorArena(_groups()[0], 2)
    assert arena.entry_bytes == walk(_groups()[0]).entry_bytes == 512
    with pytest.raises(ValueError, match=r"row of field 'k' must be at least 0, got -1"):
        arena.row("k", -1)
    with pytest.raises(ValueError, match=r"row 2 is out of range for field 'v'"):
        arena.row_region("v", 2)
    for method in (arena.view, arena.region):
        with pytest.raises(KeyError, match=r"no field named 'q'; this arena holds \['k', 'v'\]"):
            method("q")


def test_a_layer_major_region_is_the_fields_own_bytes():
    arena = LayerMajorArena(_groups()[0], 3)
    region = arena.region("v")
    # v starts at entries x offset(v) = 3 x 256 and spans entries x span(v) = 3 x 256 bytes.
    assert region.storage_offset() == 3 * 256 and region.numel() == 3 * 256
    arena.view("v").fill_(1.0)
    assert region[: 2 * 3 * 4 * 2].view(torch.bfloat16).eq(1.0).all()
    assert arena.region("k").numel() == 3 * 256 and arena.region("k").storage_offset() == 0


# -- entry_field, field_planes, regions: refusals by type ----------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "needle"),
    [
        (lambda: walk("ab"), TypeError, r"walk takes a sequence of EntryField, got 'ab'"),
        (lambda: plan_field_planes("ab", [256]), TypeError, r"plan_field_planes takes a sequence"),
        (lambda: plan_field_planes([_f()], "ab"), TypeError, r"plane_widths must be a sequence"),
        (lambda: plan_field_planes([_f()], []), ValueError, r"plane_widths \[\] declares no plane"),
        (
            lambda: plan_regions("ab"),
            TypeError,
            r"plan_regions takes a sequence of \(name, nbytes\), got 'ab'",
        ),
        (lambda: plan_regions([("a", 1)], base=-1), ValueError, r"plan_regions base must be at"),
    ],
)
def test_refused_by_type_or_value(call, error, needle):
    with pytest.raises(error, match=needle):
        call()


def test_a_plan_with_a_base_counts_its_padding_after_the_base():
    plan = plan_regions([("a", 1), ("b", 1)], base=512)
    assert plan.padding_bytes == plan.total_bytes - 512 - 2 == 255


# -- paged pools ----------------------------------------------------------------------------------


def _mha(**kw):
    args = dict(block_size=16, blocks_per_entry=2, num_kv_heads=1, head_dim=8, kv_dtype=U8)
    return MhaKvPool(1, **{**args, **kw})


def test_v_head_dim_shapes_v_and_its_price():
    pool = _mha(head_dim=16, v_head_dim=8)
    assert pool.k_block_shape == (16, 1, 16) and pool.v_block_shape == (16, 1, 8)
    assert pool.entry_bytes == 2 * 16 * 16 + 256  # K 512 B; V 2 x 16 x 8 = 256 B
    assert _mha(head_dim=16).v_block_shape == (16, 1, 16)
    assert _mha(num_kv_heads=1, head_dim=1, v_head_dim=1).v_block_shape == (16, 1, 1)


def test_mha_pool_refusals_and_views():
    with pytest.raises(TypeError, match=r"extra_fields must be a sequence of EntryField, got 'ab'"):
        _mha(extra_fields="ab")
    views = _mha(layout="shuffle", head_dim=16).allocate(2)
    with pytest.raises(ValueError, match=r"layout 'nhd' was asked of a pool declared 'shuffle'"):
        views.v_cache(0, layout="nhd")
    with pytest.raises(ValueError, match=r"layout 'nhd' was asked of a pool declared 'shuffle'"):
        views.k_cache(0, layout="nhd")
    assert views.k_cache(0, layout="shuffle").shape == views.k_cache(0).shape
    assert views.buffers == [views.arenas[0].buf]  # a u8 pool: no scale arena, no extra arena
    assert views.pool.num_blocks(3) == 6
    with pytest.raises(ValueError, match=r"entries must be at least 1, got 0"):
        views.pool.num_blocks(0)
    assert "MhaKvPool(1 rows h1d16 torch.uint8, block 16 x 2/entry, shuffle" in repr(views.pool)


@pytest.mark.parametrize(
    "dtype", [torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz]
)
def test_every_torch_fp8_dtype_keeps_its_scales(dtype):
    assert is_fp8(dtype)
    pool = _mha(kv_dtype=dtype)
    assert [f.name for f in pool.field_groups[1]] == ["k_scale", "v_scale"]
    assert not is_fp8(torch.bfloat16) and not _mha(kv_dtype=torch.bfloat16).field_groups[1]


def test_mla_and_indexer_counts_and_dtypes_are_refused_by_name():
    ok = IndexerField(1, head_dim=1, dtype=torch.bfloat16, tokens_per_entry=1)
    assert ok.head_dim == ok.tokens_per_entry == 1
    with pytest.raises(ValueError, match=r"IndexerField head_dim must be at least 1, got 0"):
        IndexerField(1, head_dim=0, dtype=torch.bfloat16, tokens_per_entry=1)
    with pytest.raises(ValueError, match=r"IndexerField tokens_per_entry must be at least 1"):
        IndexerField(1, head_dim=1, dtype=torch.bfloat16, tokens_per_entry=0)
    with pytest.raises(TypeError, match=r"IndexerField scale_dtype must be a torch.dtype"):
        IndexerField(1, head_dim=1, dtype=torch.bfloat16, tokens_per_entry=1, scale_dtype="f32")
    pool = MlaKvPool(
        1, block_size=1, blocks_per_entry=2, kv_lora_rank=1, qk_rope_head_dim=0, kv_dtype=U8,
        kv_entry_dim=1,
    )  # fmt: skip
    assert pool.kv_entry_dim == 1 and "MlaKvPool(1 rows x 1" in repr(pool)
    with pytest.raises(ValueError, match=r"MlaKvPool kv_entry_dim must be at least 1, got 0"):
        MlaKvPool(
            1, block_size=1, blocks_per_entry=2, kv_lora_rank=1, qk_rope_head_dim=0,
            kv_dtype=U8, kv_entry_dim=0,
        )  # fmt: skip


def test_shuffle_vector_takes_a_dtype_as_wide_as_one_vector():
    assert shuffle_vector(torch.complex128) == 1  # 16 B: one element fills a 16 B vector


# -- rows and state -------------------------------------------------------------------------------


class _Mod:
    def __init__(self, prefix):
        self.prefix = prefix


def test_pool_rows_answer_membership_iteration_and_size():
    a, b = _Mod("a"), _Mod("b")
    rows = PoolRows({"k": [a, b], "j": [b]})
    assert list(rows) == ["k", "j"] and len(rows) == 2
    assert a in rows["k"] and a not in rows["j"]
    assert KvGeometry(1, 1).num_kv_heads == 1


def test_a_module_is_described_by_its_prefix_or_else_its_short_repr():
    assert describe_module(_Mod("model.layers.3")) == "_Mod 'model.layers.3'"
    assert describe_module(_Mod("")).startswith("<")
    assert describe_module(7) == "7"


def test_linear_state_pool_refuses_dtypes_and_rows_by_name_and_keeps_its_shapes():
    with pytest.raises(TypeError, match=r"LinearStatePool conv_dtype must be a torch.dtype"):
        LinearStatePool(1, conv_shape=(2,), recurrent_shape=(3,), conv_dtype="bf16",
                        recurrent_dtype=torch.bfloat16)  # fmt: skip
    with pytest.raises(TypeError, match=r"LinearStatePool recurrent_dtype must be a torch.dtype"):
        LinearStatePool(1, conv_shape=(2,), recurrent_shape=(3,), conv_dtype=torch.bfloat16,
                        recurrent_dtype="bf16")  # fmt: skip
    pool = LinearStatePool(
        2, conv_shape=(2,), recurrent_shape=(3,), conv_dtype=torch.bfloat16,
        recurrent_dtype=torch.float32,
    )  # fmt: skip
    assert pool.conv_shape == (2,) and pool.recurrent_shape == (3,)
    assert pool.field_groups == (pool.fields,)
    views = pool.allocate(1)
    with pytest.raises(ValueError, match=r"conv row must be at least 0, got -1"):
        views.conv_state(-1)


def test_a_fill_of_one_is_applied_like_any_other_non_zero_fill():
    arena = EntryMajorArena([_f(fill=1.0)], 2)
    assert arena.view("a").eq(1.0).all()


def test_entry_major_arenas_export_whole_entries_as_transfer_regions():
    arena = EntryMajorArena([_f(shape=(3,))], 4, stride_bytes=512)
    (region,) = arena.region_tensors()
    assert region.semantic_role == "entry" and region.tensor.shape == (4, 512)
    assert region.tensor.stride(0) == 512
    split = SplitEntryMajorArena(_planes(), 2)
    assert [(r.semantic_role, tuple(r.tensor.shape)) for r in split.region_tensors()] == [
        ("plane0", (2, 3)),
        ("plane1", (2, 256)),
    ]
    pool = LinearStatePool(
        2, conv_shape=(2,), recurrent_shape=(3,), conv_dtype=torch.bfloat16,
        recurrent_dtype=torch.float32,
    )  # fmt: skip
    (state,) = pool.allocate(3).region_tensors()
    assert state.semantic_role == pool.kind and state.tensor.shape == (3, pool.entry_bytes)
    # One region holding both fields names both dtypes, in walk order.
    assert state.dtype == "bfloat16+float32"


def test_planes_of_byte_fields_pack_without_padding_at_align_one():
    planes = [[_f("a", shape=(3,), dtype=U8, align=1)], [_f("b", shape=(3,), dtype=U8, align=1)]]
    plan = SplitEntryMajorArena.plan_planes(planes, 1, align=1)
    assert [(r.offset, r.nbytes) for r in plan.regions] == [(0, 3), (3, 3)]


def test_a_row_region_starts_at_its_rows_bytes():
    arena = LayerMajorArena(_groups()[0], 3)
    # v starts at 3 entries x 256 B; row 1 after row 0's 3 entries x 8 B (4 bf16).
    assert arena.row_region("v", 1).storage_offset() == 3 * 256 + 3 * 8


def test_pool_rows_from_rows_orders_by_row_and_counts_a_single_row():
    a, b = _Mod("a"), _Mod("b")
    rows = PoolRows.from_rows({"k": {a: 1, b: 0}})
    assert list(rows["k"]) == [b, a]
    assert PoolRows({"j": [b]}).rows("j") == 1


# -- element_order: the declared order of a view a builder allocates itself ----------------------


def _order(**kw):
    args = {
        "buffer": 0,
        "dtype": torch.bfloat16,
        "shape": (2, 3),
        "axes": ("row", "dim"),
        "address": lambda r, d: r * 6 + d * 2,
        **kw,
    }
    return ElementOrder(**args)


def test_an_element_order_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        _order().buffer = 1


@pytest.mark.parametrize(
    ("kw", "error", "needle"),
    [
        ({"buffer": -1}, ValueError, "ElementOrder buffer must be at least 0, got -1"),
        ({"buffer": "0"}, TypeError, "ElementOrder buffer must be an int"),
        ({"dtype": "bf16"}, TypeError, "ElementOrder dtype must be a torch.dtype, got 'bf16'"),
        ({"axes": ("row",)}, ValueError, r"names 1 axes \('row',\) for shape \(2, 3\)"),
        ({"axes": ("a", "b", "c")}, ValueError, "names 3 axes"),
        ({"shape": (2, 0)}, ValueError, "ElementOrder axis 'dim' must be at least 1, got 0"),
    ],
)
def test_an_element_order_refuses_by_name(kw, error, needle):
    with pytest.raises(error, match=needle):
        _order(**kw)


def test_row_major_is_the_flat_offset_of_a_dense_block_with_the_last_axis_fastest():
    shape = (2, 3, 4)
    dense = torch.arange(24).reshape(shape)
    index = torch.meshgrid(*(torch.arange(n) for n in shape), indexing="ij")
    assert torch.equal(row_major(index, shape), dense)
    # One element written out: (1, 2, 3) -> (1 x 3 + 2) x 4 + 3 = 23.
    assert int(row_major([torch.tensor(1), torch.tensor(2), torch.tensor(3)], shape)) == 23
    assert row_major([torch.tensor(1)], (5,)).dtype is torch.int64


def test_row_major_refuses_an_index_of_another_rank_by_both_counts():
    with pytest.raises(ValueError, match=r"2 indices for a 3-axis shape \(2, 3, 4\)"):
        row_major([torch.tensor(0), torch.tensor(0)], (2, 3, 4))


# -- the split arena's plane and field lookups ---------------------------------------------------


def test_split_arena_plane_and_view_lookups_refuse_by_name():
    arena = SplitEntryMajorArena([[_f("a")], [_f("b", shape=(4,))]], 2)
    assert arena.plane(1) is arena.planes[1]
    assert arena.view("b").data_ptr() == arena.planes[1].view("b").data_ptr()
    with pytest.raises(ValueError, match="plane 2 is out of range; 2 planes exist"):
        arena.plane(2)
    with pytest.raises(ValueError, match="plane index must be at least 0, got -1"):
        arena.plane(-1)
    with pytest.raises(TypeError, match="plane index must be an int"):
        arena.plane(True)
    with pytest.raises(KeyError, match=r"no field named 'c'; the planes hold \['a', 'b'\]"):
        arena.view("c")


def test_a_pool_spec_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        PoolSpec("p", EntryClass.PAGE, 8).entry_bytes = 0


def test_a_count_refusal_names_the_unit_counted():
    with pytest.raises(
        ValueError, match=r"^blocks must be at least 1 \(scheduler blocks\), got 0$"
    ):
        KVTransferTensors([]).set_block_count(0)
    with pytest.raises(TypeError, match=r"^n must be an int \(bytes\), got 1.5 \(float\)$"):
        require_count("n", 1.5, unit="bytes")
    with pytest.raises(ValueError, match=r"^n must be at least 0, got -1$"):  # no unit, no ()
        require_count("n", -1)
