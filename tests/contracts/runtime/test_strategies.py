"""The engine-case strategy draws only cases the model allows, and keeps tensors small."""

from __future__ import annotations

from hypothesis import given, settings

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
    assert case.blocks == 1 or case.blocks * runner.entry_bytes()[EntryClass.PAGE] <= MAX_PAGED_BYTES
    assert per_block > 0
    assert str(case).startswith(case.name)
