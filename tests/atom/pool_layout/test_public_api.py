"""The agreed public surface, pinned: the engine slice codes against these names.

A rename here is a break in another part of the tree that this package's own
tests would not see, so the names and keyword parameters of the agreed API
(/tmp/spec/pool_layout_api.md at the time of writing) are checked directly.
"""

from __future__ import annotations

import inspect

import pytest

import atom.pool_layout as pl

AGREED = {
    "EntryField": ["name", "rows", "shape", "dtype", "fill", "align"],
    "walk": ["fields", "align"],
    "plan_regions": ["sizes", "align", "base"],
    "carve": ["buf", "plan"],
    "EntryMajorArena": ["fields", "entries", "buf", "device", "align"],
    "SplitEntryMajorArena": ["planes", "entries"],
    "plan_field_planes": ["fields", "plane_widths"],
    "LayerMajorArena": ["fields", "entries", "buf", "device", "align"],
    "carve_layer_major": ["groups", "entries", "buf"],
    "PoolSpec": ["name", "entry_class", "entry_bytes"],
    "sum_specs": ["specs"],
    "MhaKvPool": [
        "rows",
        "block_size",
        "blocks_per_entry",
        "num_kv_heads",
        "head_dim",
        "v_head_dim",
        "kv_dtype",
        "scale_dtype",
        "extra_fields",
    ],
    "MlaKvPool": [
        "rows",
        "block_size",
        "blocks_per_entry",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "kv_dtype",
        "index",
    ],
    "IndexerField": ["rows", "head_dim", "dtype", "tokens_per_entry", "scale_dtype"],
    "LinearStatePool": [
        "rows",
        "conv_shape",
        "conv_dtype",
        "recurrent_shape",
        "recurrent_dtype",
    ],
    "KvGeometry": ["num_kv_heads", "head_dim"],
    "assign_pool_rows": ["modules", "kind_of"],
}

KEYWORD_ONLY = {
    "MhaKvPool": ["block_size", "blocks_per_entry", "num_kv_heads", "head_dim", "kv_dtype"],
    "MlaKvPool": ["block_size", "blocks_per_entry", "kv_lora_rank", "qk_rope_head_dim"],
    "LinearStatePool": ["conv_shape", "conv_dtype", "recurrent_shape", "recurrent_dtype"],
    "walk": ["align"],
    "plan_regions": ["align", "base"],
}

METHODS = {
    "EntryWalk": ["checkpoint_ranges", "padding_bytes"],
    "EntryMajorArena": ["entry", "view", "nbytes"],
    "SplitEntryMajorArena": ["entry", "view", "plane"],
    "LayerMajorArena": ["view", "row", "nbytes"],
    "MhaKvPool": ["field_groups", "entry_bytes", "pool_bytes", "spec", "allocate"],
    "MhaKvPoolViews": ["k_cache", "v_cache", "k_scale", "v_scale", "region_tensors"],
    "MlaKvPool": ["field_groups", "entry_bytes", "pool_bytes", "spec", "allocate"],
    "MlaKvPoolViews": ["kv_cache", "index_cache", "region_tensors"],
    "LinearStatePool": ["entry_bytes", "pool_bytes", "spec", "allocate"],
    "LinearStateViews": ["conv_state", "recurrent_state", "entry"],
    "PoolRows": ["counts"],
    "PoolRowsMixin": ["pool_rows", "invalidate_pool_rows"],
}


def _parameters(obj) -> dict[str, inspect.Parameter]:
    if inspect.isclass(obj) and issubclass(obj, tuple):
        return {n: None for n in obj._fields}
    return dict(inspect.signature(obj).parameters)


@pytest.mark.parametrize("name", sorted(AGREED))
def test_agreed_names_take_the_agreed_parameters(name):
    params = _parameters(getattr(pl, name))
    missing = [p for p in AGREED[name] if p not in params]
    assert missing == [], f"{name} lost {missing}"


@pytest.mark.parametrize("name", sorted(KEYWORD_ONLY))
def test_agreed_keyword_only_parameters_stay_keyword_only(name):
    params = _parameters(getattr(pl, name))
    positional = [p for p in KEYWORD_ONLY[name] if params[p].kind is not params[p].KEYWORD_ONLY]
    assert positional == [], f"{name} made {positional} positional"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_agreed_members_exist(name):
    cls = getattr(pl, name)
    assert [m for m in METHODS[name] if not hasattr(cls, m)] == []


def test_entry_class_has_page_and_state():
    assert {c.name for c in pl.EntryClass} == {"PAGE", "STATE"}


def test_layer_major_arena_has_no_entry_accessor():
    assert not hasattr(pl.LayerMajorArena, "entry")


def test_every_name_in_all_is_importable():
    assert [n for n in pl.__all__ if not hasattr(pl, n)] == []
