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


def _synthetic(kinds, **fields):
    from atom.models.hf_config import HfConfig

    data = {"num_hidden_layers": len(kinds), "num_attention_heads": 4, "num_key_value_heads": 2,
            "head_dim": 32, "layer_types": kinds, "sliding_window": 40,
            "attention_chunk_size": 24, **fields}  # fmt: skip
    return HfConfig(data, "synthetic")


#: One case a branch of the plan and of its check, so each is held whatever hypothesis draws:
#: (id, config, budget, max_model_len, max_num_seqs, arrangement, the refusal or the bound).
OUTCOMES = [
    ("state floor", "qwen3.5-27b", 2**20, 8192, 8, "reserved", "state floor"),
    ("window floor", "gemma-3-27b", 2**30, 8192, 16, "reserved", "window floor"),
    ("request", "llama-3.1-8b", 2**30, 131072, 4, "reserved", "max_model_len request"),
    ("bound by blocks", "gpt-oss-120b", 4 * 2**30, 32768, 64, "reserved", "full"),
    ("bound by slots", "mimo-v2-flash", 4 * 2**30, 4096, 8, "reserved", "max_num_seqs"),
    ("shared, bound by pages", "mimo-v2-flash", 4 * 2**30, 32768, 64, "shared", "shared pages"),
    ("shared window floor", "gpt-oss-120b", 2**20, 4096, 64, "shared", "window floor"),
    ("shared request", "gpt-oss-120b", 2**24, 32768, 1, "shared", "max_model_len request"),
    ("chunked", ["chunked_attention", "full_attention"] * 2, 2**24, 3000, 4, "reserved",
     "max_num_seqs"),
    ("chunked, shared", ["chunked_attention", "sliding_attention", "full_attention"], 2**24, 3000,
     4, "shared", "max_num_seqs"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("model", "budget", "n", "s", "pages", "expected"),
    [case[1:] for case in OUTCOMES],
    ids=[case[0] for case in OUTCOMES],
)
def test_every_outcome_holds_against_the_carve(model, budget, n, s, pages, expected):
    config = load_model_config(model) if isinstance(model, str) else _synthetic(model)
    got = check_capacity(ModelRunner(config), budget=budget, max_model_len=n, max_num_seqs=s,
                         pages=pages)  # fmt: skip
    assert (got.what if isinstance(got, CapacityRefused) else got.bound_by) == expected
