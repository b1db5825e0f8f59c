"""pool_rows: rows assigned by one walk over the modules that exist."""

from __future__ import annotations

import pytest

from atom.pool_layout import KvGeometry, PoolRows, PoolRowsMixin, assign_pool_rows


class Module:
    """A stand-in for an nn.Module: identity, a prefix, and what it caches."""

    def __init__(self, prefix: str, caches):
        self.prefix = prefix
        self.caches = caches

    def __eq__(self, other):  # modules that compare equal must still own two rows
        return isinstance(other, Module)

    __hash__ = None  # and a module need not hash


H2D256 = KvGeometry(2, 256)


def qwen35_27b_modules() -> list[Module]:
    """64 layers, every 4th full attention (16 x h2d256 at tp 2), the rest GDN (48)."""
    return [
        Module(f"model.layers.{i}", H2D256 if i % 4 == 3 else "linear_state") for i in range(64)
    ]


def test_kv_geometry_prints_h2d256_for_logs_and_roles():
    assert str(H2D256) == "h2d256"
    assert f"{KvGeometry(8, 128)}" == "h8d128"
    assert H2D256 == (2, 256)


def test_rows_are_positions_among_modules_of_a_kind_in_walk_order():
    modules = qwen35_27b_modules()
    rows = assign_pool_rows(modules, lambda m: m.caches)
    assert rows.counts() == {"linear_state": 48, H2D256: 16}
    assert rows[H2D256][modules[3]] == 0
    assert rows[H2D256][modules[63]] == 15
    assert rows["linear_state"][modules[0]] == 0
    assert rows["linear_state"][modules[62]] == 47
    assert list(rows[H2D256]) == modules[3::4]
    assert "16 h2d256 rows" in repr(rows)


def test_a_module_that_caches_nothing_gets_no_row():
    modules = [Module("embed", None), Module("layers.0", H2D256)]
    rows = assign_pool_rows(modules, lambda m: m.caches)
    assert rows.counts() == {H2D256: 1}
    assert modules[0] not in rows[H2D256]


def test_a_module_missing_from_the_walk_raises_keyerror_naming_it():
    rows = assign_pool_rows(qwen35_27b_modules(), lambda m: m.caches)
    draft = Module("draft.layers.0", H2D256)
    with pytest.raises(KeyError, match=r"'draft\.layers\.0'.*h2d256"):
        rows[H2D256][draft]
    with pytest.raises(KeyError, match="mla"):
        rows["mla"]


def test_a_module_visited_twice_is_refused_by_name():
    m = Module("layers.0", H2D256)
    with pytest.raises(ValueError, match=r"'layers\.0'"):
        assign_pool_rows([m, m], lambda m: m.caches)


def test_a_kind_with_no_rows_is_a_contradiction_not_a_default():
    rows = assign_pool_rows([Module("a", H2D256)], lambda m: m.caches)
    assert rows.rows(H2D256) == 1
    with pytest.raises(KeyError, match="linear_state"):
        rows.rows("linear_state")


def test_refusals_of_bad_callables_name_them():
    with pytest.raises(TypeError, match="'kind'"):
        assign_pool_rows([], "kind")
    with pytest.raises(TypeError, match=r"\{'x': 1\}"):
        assign_pool_rows([Module("a", None)], lambda m: {"x": 1})


class Builder(PoolRowsMixin):
    def __init__(self, modules):
        self.modules = modules
        self.walks = 0
        self.pool = "sized"

    def _pooled_modules(self):
        self.walks += 1
        return self.modules

    def _pool_row_kind(self, module):
        return module.caches

    def _pool_rows_invalidated(self):
        self.pool = None


def test_the_mixin_walks_once_and_drops_the_pool_with_the_walk():
    modules = qwen35_27b_modules()
    builder = Builder(modules)
    assert builder.pool_rows[H2D256][modules[7]] == 1
    assert builder.pool_rows.counts()[H2D256] == 16
    assert builder.walks == 1
    builder.modules = modules[:8]
    builder.invalidate_pool_rows()
    assert builder.pool is None
    assert builder.pool_rows.counts() == {"linear_state": 6, H2D256: 2}
    assert builder.walks == 2


def test_the_mixin_names_the_hook_a_builder_forgot():
    class Bare(PoolRowsMixin):
        pass

    with pytest.raises(NotImplementedError, match="Bare"):
        _ = Bare().pool_rows


def test_kv_geometry_refuses_a_count_that_would_print_as_a_plausible_name():
    with pytest.raises(ValueError, match="0"):
        KvGeometry(0, 256)
    with pytest.raises(TypeError, match="'256'"):
        KvGeometry(2, "256")


def test_a_module_in_two_row_spaces_takes_a_row_in_each_from_one_walk():
    # DeepSeek-V3.2-like: every layer has a latent row, only odd layers an indexer row
    modules = [Module(f"layers.{i}", ["mla", "mla_index"] if i % 2 else "mla") for i in range(6)]
    rows = assign_pool_rows(modules, lambda m: m.caches)
    assert rows.counts() == {"mla": 6, "mla_index": 3}
    assert rows["mla"][modules[5]] == 5
    assert rows["mla_index"][modules[5]] == 2
    with pytest.raises(KeyError, match=r"'layers\.4'"):
        rows["mla_index"][modules[4]]


def test_a_set_of_kinds_is_walked_in_a_deterministic_order():
    modules = [Module("a", frozenset({"z", "b"})), Module("b", {"z"})]
    rows = assign_pool_rows(modules, lambda m: m.caches)
    assert list(rows.counts()) == ["b", "z"]
    assert rows["z"][modules[1]] == 1


def test_a_tuple_is_one_kind_because_a_geometry_is_a_tuple():
    rows = assign_pool_rows([Module("a", H2D256)], lambda m: m.caches)
    assert list(rows.counts()) == [H2D256]


def test_a_list_naming_a_kind_twice_or_none_is_refused_by_value():
    with pytest.raises(ValueError, match=r"\['mla', 'mla'\]"):
        assign_pool_rows([Module("a", ["mla", "mla"])], lambda m: m.caches)
    with pytest.raises(TypeError, match=r"\['mla', None\]"):
        assign_pool_rows([Module("a", ["mla", None])], lambda m: m.caches)


class Hashed:
    def __init__(self, name):
        self.prefix = name


def test_from_rows_and_as_dict_round_trip_and_refuse_a_hole():
    a, b, c = Hashed("a"), Hashed("b"), Hashed("c")
    rows = PoolRows.from_rows({"mla": {b: 1, a: 0}, H2D256: {c: 0}})
    assert list(rows["mla"]) == [a, b]
    assert rows.as_dict() == {"mla": {a: 0, b: 1}, H2D256: {c: 0}}
    assert PoolRows.from_rows(rows.as_dict()).as_dict() == rows.as_dict()
    with pytest.raises(ValueError, match=r"\[0, 2\]"):
        PoolRows.from_rows({"mla": {a: 0, b: 2}})
    with pytest.raises(ValueError, match=r"\[1, 1\]"):
        PoolRows.from_rows({"mla": {a: 1, b: 1}})
