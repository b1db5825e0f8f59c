"""A runner's pools grouped by the walk's reach record: whole, split, or priced by their spec."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from atom.models.registry import load_model_config
from atom.pool_layout import EntryClass, MhaKvPool, PoolRows, PoolSpec
from atom.pool_layout.capacity import PageClass, PagePart
from atom.pool_layout.reach import FULL, Reach
from atom.runner.capacity import capacity_classes, plan_classes
from atom.runner.model_runner import ModelRunner


class Module:
    def __init__(self, name, reach):
        self.prefix, self.reach = name, reach


def _builder(name, rows: PoolRows, pools: dict):
    specs = [p.spec(f"{name}.{n}") for n, p in pools.items()]
    return SimpleNamespace(
        name=name, pool_rows=rows, paged_pools=pools, state_pools={}, sub_pool_specs=lambda: specs
    )


def _pool(rows):
    return MhaKvPool(rows, block_size=16, blocks_per_entry=1, num_kv_heads=1, head_dim=16,
                     kv_dtype=torch.bfloat16)  # fmt: skip


def test_a_pool_named_for_no_row_space_is_planned_full_whole():
    rows = PoolRows({"kv": [Module("a", Reach.sliding(8)), Module("b", FULL)]})
    runner = SimpleNamespace(builders=lambda: [_builder("t", rows, {"other": _pool(2)})])
    (page,), states = capacity_classes(runner)
    assert (page.reach, page.rows, states) == (FULL, 2, [])
    assert page.parts[0].name == "t.other" and page.parts[0].pool.rows == 2


def test_window_classes_are_ordered_full_first_then_by_kind_and_width():
    mods = [Module("a", Reach.sliding(128)), Module("b", Reach.sliding(64)),
            Module("c", Reach.chunked(32)), Module("d", FULL)]  # fmt: skip
    runner = SimpleNamespace(
        builders=lambda: [_builder("t", PoolRows({"kv": mods}), {"kv": _pool(4)})]
    )
    classes, _ = capacity_classes(runner)
    assert [c.name for c in classes] == ["full", "chunked32", "sliding64", "sliding128"]
    assert all(c.rows == 1 and c.parts[0].pool.rows == 1 for c in classes)


def test_a_builder_that_allocates_its_own_is_priced_by_its_spec():
    """DeepSeek-V4's builder declares no pool the runner carves: its PAGE spec is one full part,
    its rows the modules its walk holds (43 target layers and 3 drafter layers), its STATE spec
    a class with no pool."""
    from atom.engine_config import EngineConfig

    runner = ModelRunner(load_model_config("deepseek-v4-flash-dspark"),
                         EngineConfig(scheduler_block_size=256))  # fmt: skip
    (page,), (state,) = capacity_classes(runner)
    prices = runner.entry_bytes()
    assert (page.reach, page.rows, page.page_bytes) == (FULL, 46, prices[EntryClass.PAGE])
    assert page.parts[0].pool is None and page.parts[0].name == "target.v4_kv"
    assert (state.name, state.entry_bytes, state.pool) == (
        "target.v4_slot",
        prices[EntryClass.STATE],
        None,
    )


def test_a_plan_whose_carve_is_not_its_price_is_an_error():
    class Lying:
        rows, entry_bytes = 1, 4096

        def pool_bytes(self, entries):
            return entries * 4096 + 256

    part = PagePart("p", 1, 4096, pool=Lying())
    with pytest.raises(ValueError, match=r"priced \d+ B and its pools carve \d+ B"):
        plan_classes([PageClass(FULL, (part,))], [], block_tokens=16, budget=2**20,
                     max_model_len=16, max_num_seqs=1)  # fmt: skip


def test_a_spec_state_class_is_what_the_builder_declares():
    spec = PoolSpec("t.s", EntryClass.STATE, 512)
    rows = PoolRows({"kv": [Module("a", FULL)]})
    builder = _builder("t", rows, {"kv": _pool(1)})
    builder.sub_pool_specs = lambda: [_pool(1).spec("t.kv"), spec]
    _, (state,) = capacity_classes(SimpleNamespace(builders=lambda: [builder]))
    assert (state.name, state.entry_bytes, state.pool) == ("t.s", 512, None)
