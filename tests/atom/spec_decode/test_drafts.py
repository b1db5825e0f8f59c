"""Speculative decoding's KV: an EAGLE3 draft's sibling pool and an MTP draft in its target's."""

from __future__ import annotations

import pytest

from atom.backends.mha import AiterBackend
from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.pool_layout import EntryClass
from atom.runner.model_runner import ModelRunner
from atom.spec_decode.draft_kv_builder import DraftKvBuilder
from contracts.runtime import ContractViolation, check_write_readback

TARGET = load_model_config("minimax-m2")
EAGLE3 = load_model_config("eagle3-draft-llama")
#: MiniMax-M3's shape: the target pages at its sparse block whatever the scheduler says.
M3_LIKE = TARGET.with_overrides(sparse_block_size=128)


def _eagle(target=TARGET, **engine):
    return ModelRunner(target, EngineConfig(**engine), draft_config=EAGLE3)


def test_eagle3_owns_a_sibling_pool_whose_price_sums_into_page():
    runner = _eagle(tp_size=2)
    assert runner.draft_builder is not None
    specs = {s.name: s.entry_bytes for s in runner.sub_pool_specs()}
    # The draft's one Llama layer: 16 tokens x 4 heads (8 over tp 2) x 128 x 2 B, K and V.
    assert specs["draft.h4d128"] == 2 * 16 * 4 * 128 * 2
    assert runner.entry_bytes()[EntryClass.PAGE] == sum(specs.values())
    assert runner.row_counts() == {"h4d128": 65, "draft.h4d128": 1}


def test_draft_pool_is_blocked_at_the_target_builders_block_not_its_own_rule():
    """Regression: the block came from `attn_block_size` on the draft's own config. On an M3
    target at --block-size 128 the target pages at 128 and a Llama head's rule says 16."""
    runner = _eagle(M3_LIKE, scheduler_block_size=128, tp_size=8)
    assert runner.builder.block_size == 128
    assert AiterBackend.attn_block_size(EAGLE3, 128) == 16  # what the old source would have said
    assert runner.draft_builder.kv_pool.block_size == 128
    runner.initialize(2)
    for seed in range(4):
        check_write_readback(runner, seed=seed)


@pytest.mark.parametrize("builder_says", [128, 16])
def test_a_draft_pool_at_its_own_block_is_read_back_wrong_by_the_verifier(
    monkeypatch, builder_says
):
    """The contract the regression broke: the verifier reads with the target's block tables.

    The draft's pool blocked at 16 where the target pages at 128. Where the draft builder still
    says 128, a kernel reading the draft's view takes a 16-token block off its shape and the
    check names that first; where it says 16 too (the regression itself: the block came from
    the draft's own config), the view agrees with its builder and the verifier, reading at the
    target's 128, sees other bytes."""
    from atom.spec_decode.draft_kv_builder import DraftKvBuilder

    runner = _eagle(M3_LIKE, scheduler_block_size=128, tp_size=8)
    rows = runner.draft_builder.pool_rows
    runner.draft_builder._kv_pool = AiterBackend.make_kv_pool(
        EAGLE3,
        rows,
        runner.draft_modules,
        block_size=16,
        blocks_per_entry=8,
        kv_dtype=runner.engine.kv_torch_dtype,
    )
    if builder_says == 16:
        monkeypatch.setattr(DraftKvBuilder, "block_size", property(lambda self: 16))
        monkeypatch.setattr(DraftKvBuilder, "blocks_per_entry", property(lambda self: 8))
    runner.initialize(2)
    message = (
        r"draft draft\.layers\.0\.self_attn\.[kv]_cache token \d+: read with the target builder's "
        r"128-token block, the verifier sees other bytes"
        if builder_says == 16
        else r"draft\.layers\.0\.self_attn\.k_cache: a kernel reads a 16-token block off the bound "
        r"view's shape \(16, 1, 16, 16, 8\); the builder pages at 128"
    )
    with pytest.raises(ContractViolation, match=message):
        for seed in range(8):
            check_write_readback(runner, seed=seed)


def test_a_draft_module_offered_to_the_target_builder_gets_keyerror_not_the_next_row():
    """Regression: a counter handed it row 65, past the end of a pool sized without it."""
    runner = _eagle(tp_size=2).initialize(1)
    (draft_module,) = runner.draft_modules
    with pytest.raises(KeyError, match=r"draft.layers.0.self_attn"):
        runner.builder.build_kv_cache_tensor(draft_module)


def test_the_draft_pool_is_built_lazily_and_dropped_with_its_walk():
    runner = _eagle()
    builder = runner.draft_builder
    assert builder._kv_pool is None  # nothing read it yet
    first = builder.kv_pool
    assert builder.kv_pool is first
    runner.assign_pool_rows()  # a new walk (a P/D re-bind, a rollout wake)
    assert builder._kv_pool is None
    assert builder.kv_pool is not first


def test_a_draft_with_no_rows_is_refused_by_name():
    runner = ModelRunner(TARGET)
    empty = DraftKvBuilder(
        name="eagle-empty",
        draft_config=EAGLE3,
        draft_modules=[],
        draft_backend=AiterBackend,
        target_builder=runner.builder,
        kv_dtype=runner.engine.kv_torch_dtype,
    )
    with pytest.raises(ValueError, match=r"draft 'eagle-empty' has no rows"):
        empty.sub_pool_specs()


def test_a_flavour_that_does_not_own_a_pool_gets_no_draft_builder():
    from atom.backends.mla import AiterMlaBackend

    with pytest.raises(TypeError, match=r"aiter-mla.* does not own a draft pool"):
        DraftKvBuilder(
            name="x", draft_config=EAGLE3, draft_modules=[], draft_backend=AiterMlaBackend,
            target_builder=ModelRunner(TARGET).builder, kv_dtype=None,
        )  # fmt: skip


def test_an_entry_that_is_not_the_scheduler_block_is_refused_at_allocate():
    runner = _eagle()
    runner.draft_builder.target_builder.blocks_per_entry = 2  # an entry of 32 tokens, scheduler 16
    with pytest.raises(
        ValueError, match=r"2 x 16-token blocks is 32 tokens; the scheduler's block is 16"
    ):
        runner.draft_builder.allocate_kv_cache_tensors(blocks=1, buf=None)


def test_mtp_binds_into_the_targets_pool_as_its_last_row():
    runner = ModelRunner(load_model_config("deepseek-r1"), EngineConfig(kv_dtype="fp8")).initialize(
        2
    )
    assert runner.draft_builder is None
    mtp = [m for m in runner.bound_modules() if m.is_draft]
    assert len(mtp) == 1
    assert runner.builder.pool_rows["mla"][mtp[0]] == 61
    assert (
        mtp[0].kv_views["kv_cache"].untyped_storage().data_ptr()
        == runner.paged_buf.untyped_storage().data_ptr()
    )
    # One MTP layer's write is read back by the verifier through the same pool.
    check_write_readback(runner)  # every module: the MTP row too


def test_no_spec_leaves_the_mtp_rows_out():
    runner = ModelRunner(
        load_model_config("deepseek-r1"), EngineConfig(kv_dtype="fp8", include_mtp=False)
    )
    assert runner.row_counts() == {"mla": 61}


def test_a_draft_under_pp_lives_on_the_last_stage_only():
    first = ModelRunner(TARGET, EngineConfig(pp_size=2, pp_rank=0), draft_config=EAGLE3)
    last = ModelRunner(TARGET, EngineConfig(pp_size=2, pp_rank=1), draft_config=EAGLE3)
    assert first.draft_builder is None and first.draft_modules == []
    assert last.draft_builder is not None and len(last.draft_modules) == 1
