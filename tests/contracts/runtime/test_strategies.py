"""The engine-case strategy draws only cases the model allows, and keeps tensors small."""

from __future__ import annotations

import dataclasses
import functools

import pytest
from hypothesis import given, settings

from atom.engine_config import EngineConfig
from atom.pool_layout import EntryClass
from contracts.runtime.strategies import (
    MAX_PAGED_BYTES,
    case_names,
    default_case,
    engine_cases,
)


def test_case_names_cover_the_registry_and_the_draft_pair():
    names = case_names()
    assert "minimax-m2+eagle3-draft-llama" in names
    assert {"deepseek-r1", "qwen3.5-27b", "kimi-linear-48b-a3b", "mimo-v2-flash"} <= set(names)


def test_a_draft_pair_case_builds_a_runner_with_its_draft():
    runner = default_case("minimax-m2+eagle3-draft-llama").make_runner()
    assert runner.draft_builder is not None
    assert runner.hf_config.source == "minimax-m2"


@settings(max_examples=30)
@given(engine_cases())
def test_drawn_cases_build_and_stay_under_the_byte_cap(case):
    runner = case.make_runner()
    # A block's price wherever it lives: V4's builder allocates its own and takes no region.
    per_block = max(runner.paged_pool_bytes(1), runner.entry_bytes()[EntryClass.PAGE])
    assert case.blocks >= 1
    assert case.blocks == 1 or runner.paged_pool_bytes(case.blocks) <= MAX_PAGED_BYTES + 256
    assert (
        case.blocks == 1 or case.blocks * runner.entry_bytes()[EntryClass.PAGE] <= MAX_PAGED_BYTES
    )
    assert per_block > 0
    assert str(case).startswith(case.name)


@functools.cache
def _suite_draws() -> tuple:
    """What the property tests draw under the loaded profile, drawn once for the tests below."""
    seen: list = []

    @settings(settings(), derandomize=True, database=None)
    @given(engine_cases())
    def draw(case):
        seen.append(case)

    draw()
    return tuple(seen)


def test_the_suites_draws_reach_every_axis_the_contracts_are_about():
    """A strategy narrowed to tp 1, pp 1, bf16 and one block went unnoticed (12 of 25 drawn
    cases had one block). This draws exactly what the property tests draw under the profile
    (the ci profile is derandomized, so it is the same cases) and asserts their reach."""
    from atom.models.family import attn_family

    seen = _suite_draws()
    e = [c.engine for c in seen]
    assert any(x.tp_size > 1 for x in e), "no drawn case has tp > 1"
    assert any(x.pp_size > 1 and x.pp_rank > 0 for x in e), "no drawn case is a later pp stage"
    assert {"bf16", "fp8", "fp8_e4m3fnuz", "fp8_e5m2"} <= {x.kv_dtype for x in e}
    assert {"aiter", "triton"} <= {x.mha_backend for x in e}
    assert sum(c.blocks > 1 for c in seen) >= len(seen) // 2, "most cases must have several blocks"
    families = {attn_family(c.configs()[0].text_config()) for c in seen}
    from atom.models.family import Family

    assert families == set(Family), f"families drawn: {sorted(f.value for f in families)}"
    assert any(c.configs()[1] is not None for c in seen), "no drawn case has a draft"


def test_every_value_the_strategy_lists_is_drawn():
    """A listed value no drawn case has is dead weight that reads as coverage: every tp, every
    stage of every pp size, every scheduler block, one block and the most blocks."""
    from contracts.runtime import strategies

    seen = _suite_draws()
    e = [c.engine for c in seen]
    assert {x.tp_size for x in e} == set(strategies.TP_SIZES)
    assert 1 in strategies.TP_SIZES, "the single-device case"
    stages = {(p, r) for p in strategies.PP_SIZES for r in range(p)}
    assert {(x.pp_size, x.pp_rank) for x in e} == stages
    assert {x.scheduler_block_size for x in e} == set(strategies.SCHEDULER_BLOCK_SIZES)
    assert EngineConfig().scheduler_block_size in strategies.SCHEDULER_BLOCK_SIZES
    # One block (the first and last unit coincide) and several.
    assert {c.blocks for c in seen} >= {1, 2}


def test_a_case_is_frozen():
    case = default_case("llama-3.1-8b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        case.blocks = 3  # type: ignore[misc]


def test_a_buildable_case_is_priced_at_one_blocks_page_entry():
    from contracts.runtime.strategies import _buildable

    engine = EngineConfig(state_entries=2)
    runner = default_case("llama-3.1-8b").make_runner()
    assert _buildable("llama-3.1-8b", engine) == runner.entry_bytes()[EntryClass.PAGE]
    assert _buildable("llama-3.1-8b", EngineConfig(tp_size=3)) is None  # 8 KV heads


def test_a_drawn_case_records_its_axes_as_events(monkeypatch):
    from contracts.runtime import strategies

    events: list[str] = []
    monkeypatch.setattr(strategies, "event", events.append)

    @settings(max_examples=1, database=None)
    @given(engine_cases(["llama-3.1-8b"]))
    def draw(case):
        pass

    draw()
    assert any(e.startswith("tp ") and ", pp " in e for e in events)
    assert any(e.startswith("kv ") for e in events)
    assert any(e.startswith("blocks ") for e in events)


def test_importable_names_are_the_cases_without_a_state_pool():
    from contracts.runtime.strategies import importable_names

    names = importable_names()
    assert "llama-3.1-8b" in names and "minimax-m2+eagle3-draft-llama" in names
    assert "qwen3.5-27b" not in names and "kimi-linear-48b-a3b" not in names


def test_a_default_case_takes_the_smallest_block_a_model_accepts():
    assert default_case("llama-3.1-8b").engine.scheduler_block_size == 16
    m3 = default_case("minimax-m3")  # its kernels page at 128: 16, 32 and 64 are refused
    assert m3.engine.scheduler_block_size == 256
    assert m3.make_runner().paged_pool_bytes(1) > 0


def test_a_draft_pair_is_priced_with_its_draft():
    # The pair's block holds the target's pool and the draft's: dearer than the target alone.
    import contracts.runtime.strategies as strategies

    engine = EngineConfig(state_entries=strategies.STATE_ENTRIES)
    pair = strategies._buildable("minimax-m2+eagle3-draft-llama", engine)
    alone = strategies._buildable("minimax-m2", engine)
    assert pair > alone


@pytest.mark.parametrize("name", ["llama-3.1-8b", "minimax-m3", "deepseek-v4-flash-dspark"])
def test_accepted_blocks_are_exactly_the_blocks_the_model_builds_at(name):
    import contracts.runtime.strategies as strategies
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    accepted = strategies.accepted_blocks(name)
    assert accepted and list(accepted) == sorted(accepted)
    for block in strategies.SCHEDULER_BLOCK_SIZES:
        engine = EngineConfig(scheduler_block_size=block, state_entries=strategies.STATE_ENTRIES)
        try:
            ModelRunner(load_model_config(name), engine)
        except ValueError:
            assert block not in accepted
        else:
            assert block in accepted
    # The default case pages at the engine's default block where it can, else the smallest.
    default = strategies.default_case(name).engine.scheduler_block_size
    assert default == (
        EngineConfig().scheduler_block_size if name == "llama-3.1-8b" else accepted[0]
    )


def test_the_drawn_axes_are_the_documented_ones():
    """The values docs/testing.md ("What the strategies reach") names, each for a reason: tp 1
    and the tps of the pull request's goldens (2, 4, 8), the first and the later stage of a
    two-stage pipeline, the default 16-token block and two, four and sixteen 16-token backend
    blocks a scheduler block (32, 64, 256; 256 is what V4 and M3 page at)."""
    e = [c.engine for c in _suite_draws()]
    assert {x.tp_size for x in e} == {1, 2, 4, 8}
    assert {(x.pp_size, x.pp_rank) for x in e} == {(1, 0), (2, 0), (2, 1)}
    assert {x.scheduler_block_size for x in e} == {16, 32, 64, 256}
    assert {x.state_entries for x in e} == {2}  # one request slot more than the minimum, 1


def test_a_case_has_one_to_four_blocks():
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    llama = engine_cases(["llama-3.1-8b"])
    # At a 16-token block Llama 3.1 8B costs at most 32 layers x 16 x 8 heads x 128 x 2 (K, V)
    # x 2 B = 2 MiB a block: the 24 MiB cap never binds, so the block count is what was drawn.
    for n in (1, 4):
        case = find(llama, lambda c, n=n: c.blocks == n and c.engine.scheduler_block_size == 16)
        assert case.blocks == n
    with pytest.raises(NoSuchExample):
        find(llama, lambda c: c.blocks > 4, settings=settings(max_examples=200, database=None))


@pytest.mark.parametrize(
    ("wanted", "per_block", "blocks"),
    [
        (4, 8 << 20, 3),  # 3 x 8 MiB = 24 MiB: exactly the cap
        (4, (8 << 20) + 1, 2),  # one byte more a block, and the third no longer fits
        (2, 1, 2),  # under the cap: what was wanted
        (4, 1, 4),
        (4, 25 << 20, 1),  # one block over the cap is still one block, never none
    ],
)
def test_the_block_count_is_capped_at_24_mib_of_paged_buffer_and_never_below_one(
    wanted, per_block, blocks
):
    from contracts.runtime.strategies import capped_blocks

    assert capped_blocks(wanted, per_block) == blocks


def test_a_block_that_costs_nothing_is_no_case(monkeypatch):
    from atom.runner.model_runner import ModelRunner
    from contracts.runtime.strategies import _buildable, capped_blocks

    with pytest.raises(ValueError, match="a block priced at 0 B is no case"):
        capped_blocks(4, 0)
    # A runner that prices no PAGE entry and asks nothing of the paged buffer: 0 B a block.
    monkeypatch.setattr(ModelRunner, "entry_bytes", lambda self: {})
    monkeypatch.setattr(ModelRunner, "paged_pool_bytes", lambda self, blocks: 0)
    assert _buildable.__wrapped__("llama-3.1-8b", EngineConfig(state_entries=2)) == 0


def test_a_default_case_has_two_blocks():
    # The fewest whose first and last scheduler block differ.
    assert default_case("llama-3.1-8b").blocks == 2


@functools.cache
def _capacity_draws() -> tuple:
    """What the capacity property test draws under the loaded profile."""
    from contracts.runtime.strategies import capacity_cases

    seen: list = []

    @settings(settings(), derandomize=True, database=None)
    @given(capacity_cases())
    def draw(case):
        seen.append(case)

    draw()
    return tuple(seen)


def test_the_capacity_draws_reach_every_axis_the_plan_is_about():
    """Synthetic and held models, every reach a synthetic layer can have, both arrangements, a
    given step and the default one, and each bounded argument at more than one value."""
    from contracts.runtime.strategies import CAPACITY_MODELS

    seen = _capacity_draws()
    names = {c.name for c in seen}
    assert "synthetic" in names and names - {"synthetic"} <= set(CAPACITY_MODELS)
    kinds = {k for c in seen if c.name == "synthetic" for k in c.config.get("layer_types")}
    assert kinds == {"full_attention", "sliding_attention", "chunked_attention"}
    assert {c.pages for c in seen} == {"reserved", "shared"}
    assert None in {c.step_tokens for c in seen} and any(c.step_tokens for c in seen)
    assert len({c.max_model_len for c in seen}) > 1 and len({c.max_num_seqs for c in seen}) > 1
    assert all(1 <= c.max_num_seqs <= 16 and 1 <= c.max_model_len <= 2048 for c in seen)
    assert all(c.budget >= 1 for c in seen) and str(seen[0]).startswith(seen[0].name)


def test_every_case_is_drawable_through_exactly_one_family():
    from atom.models.family import Family
    from contracts.runtime.strategies import names_by_family

    grouped = names_by_family()
    listed = [n for names in grouped.values() for n in names]
    assert sorted(listed) == sorted(case_names())
    assert set(grouped) == set(Family), "a family no registry model is of is never drawn"
    assert "deepseek-v4" in "".join(grouped[Family.DSV4])
