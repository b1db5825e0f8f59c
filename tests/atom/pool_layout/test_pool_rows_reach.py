"""The walk records each row's reach beside the row; a reach that is not one is refused."""

from __future__ import annotations

import pytest

from atom.pool_layout import PoolRows, assign_pool_rows
from atom.pool_layout.pool_rows import module_reach
from atom.pool_layout.reach import FULL, Reach

W = Reach.sliding(64)


class Module:
    """A module as the walk sees one: a prefix, and the reach it declares (hashable by identity)."""

    def __init__(self, prefix, reach):
        self.prefix, self.reach = prefix, reach


def _mods(*reaches):
    return [Module(f"m{i}", r) for i, r in enumerate(reaches)]


def test_reaches_follow_row_order_per_kind():
    mods = _mods(W, FULL, W, None)
    rows = assign_pool_rows(mods, lambda m: "kv" if m.prefix != "m1" else "other")
    assert rows.reaches("kv") == (W, W, FULL)
    assert rows.reaches("other") == (FULL,)
    assert rows.reach_counts("kv") == {W: 2, FULL: 1}


def test_a_module_in_two_kinds_has_one_reach_in_both():
    (m,) = _mods(W)
    rows = assign_pool_rows([m], lambda _: ["mla", "mla_index"])
    assert rows.reaches("mla") == rows.reaches("mla_index") == (W,)


def test_reach_of_overrides_what_modules_declare():
    rows = assign_pool_rows(_mods(W, W), lambda _: "kv", reach_of=lambda m: FULL)
    assert rows.reaches("kv") == (FULL, FULL)


def test_a_reach_that_is_not_one_is_refused_by_module():
    with pytest.raises(TypeError, match=r"m0.*declares reach 64"):
        module_reach(Module("m0", 64))
    with pytest.raises(TypeError, match=r"reach_of\(.*returned 'full'"):
        assign_pool_rows(_mods(W), lambda _: "kv", reach_of=lambda m: "full")
    with pytest.raises(TypeError, match="reach_of must be callable"):
        assign_pool_rows(_mods(W), lambda _: "kv", reach_of=None)


def test_a_map_built_from_rows_keeps_declared_reaches():
    a, b = _mods(W, FULL)
    rows = PoolRows.from_rows({"kv": {b: 1, a: 0}})
    assert rows.reaches("kv") == (W, FULL)
    assert repr(rows) == "PoolRows(2 kv rows)"
