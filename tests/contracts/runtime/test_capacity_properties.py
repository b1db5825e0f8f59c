"""The capacity contract over drawn models and budgets: the plan is the carve, and the most that fits.

For every drawn case the plan (or its refusal) is held to the pools carved at its counts and to
an admission count over them (``contracts.runtime.capacity.check_capacity``): never over the
budget, one more block of the remainder class over it, and as many ``max_model_len`` requests as
the carved entries admit one at a time -- no more, no fewer.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings

from atom.models.registry import load_model_config
from atom.pool_layout.capacity import CapacityPlan, CapacityRefused
from atom.runner.model_runner import ModelRunner
from contracts.runtime.capacity import check_capacity
from contracts.runtime.checks import ContractViolation
from contracts.runtime.strategies import capacity_cases

SETTINGS = settings()


@SETTINGS
@given(capacity_cases())
def test_the_plan_agrees_with_a_count_over_its_carved_pools(case):
    outcome = check_capacity(case.make_runner(), **case.plan_args())
    assert isinstance(outcome, (CapacityPlan, CapacityRefused))
    if isinstance(outcome, CapacityRefused):
        event(f"refused: {outcome.what}")
    else:
        event(f"planned, bound by {'slots' if outcome.bound_by == 'max_num_seqs' else 'blocks'}")


@pytest.mark.parametrize("pages", ["reserved", "shared"])
@pytest.mark.parametrize("name", ["gemma-3-27b", "gpt-oss-120b", "mimo-v2-flash"])
def test_held_window_models_at_60_gib(name, pages):
    plan = check_capacity(ModelRunner(load_model_config(name)), budget=60 * 2**30,
                          max_model_len=131072, max_num_seqs=64, pages=pages)  # fmt: skip
    assert isinstance(plan, CapacityPlan) and plan.requests >= 3


def test_the_check_fails_a_plan_that_leaves_a_block_unbought(monkeypatch):
    """Plant an off-by-one in the remainder: the carve's extra block must be reported."""
    import atom.pool_layout.capacity as capacity

    real = capacity._plan_reserved

    def short(*args, **kw):
        plan = real(*args, **kw)
        classes = tuple(
            c.__class__(
                **{**c.__dict__, "entries": c.entries - 1, "bytes": c.bytes - c.entry_bytes}
            )
            if c.role == "page"
            else c
            for c in plan.classes
        )
        used = plan.used_bytes - next(c.entry_bytes for c in plan.classes if c.role == "page")
        return plan.__class__(**{**plan.__dict__, "classes": classes, "used_bytes": used})

    monkeypatch.setattr(capacity, "_plan_reserved", short)
    with pytest.raises(ContractViolation, match=r"\[capacity-fits-carve\] one more full block"):
        check_capacity(ModelRunner(load_model_config("llama-3.1-8b")), budget=2**30,
                       max_model_len=1024, max_num_seqs=4)  # fmt: skip


def test_the_check_fails_a_plan_that_counts_more_requests_than_fit(monkeypatch):
    import atom.pool_layout.capacity as capacity

    real = capacity._plan_reserved

    def generous(*args, **kw):
        plan = real(*args, **kw)
        return plan.__class__(**{**plan.__dict__, "requests": plan.requests + 1})

    monkeypatch.setattr(capacity, "_plan_reserved", generous)
    with pytest.raises(ContractViolation, match="admitting them one at a time"):
        check_capacity(ModelRunner(load_model_config("llama-3.1-8b")), budget=60 * 2**30,
                       max_model_len=131072, max_num_seqs=64)  # fmt: skip


def test_the_check_fails_a_refusal_the_carve_contradicts(monkeypatch):
    import atom.pool_layout.capacity as capacity

    def refuse(*args, **kw):
        raise CapacityRefused("window floor", "planted")

    monkeypatch.setattr(capacity, "_plan_reserved", refuse)
    with pytest.raises(ContractViolation, match="refused the window floor, yet it carves"):
        check_capacity(ModelRunner(load_model_config("gemma-3-27b")), budget=60 * 2**30,
                       max_model_len=4096, max_num_seqs=4)  # fmt: skip
