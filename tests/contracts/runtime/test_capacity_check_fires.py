"""Every branch of the capacity check fires on a plan planted to break it, with its own message.

Each test wraps the plan the check reads (``plan_runner_capacity``, as the check imports it) so
one figure is wrong, or replaces it with a refusal the carve contradicts -- at the exact
boundary where a comparison one step off would let it through.
"""

from __future__ import annotations

import dataclasses

import pytest

import contracts.runtime.capacity as check_module
from atom.engine_config import EngineConfig
from atom.models.hf_config import HfConfig
from atom.models.registry import load_model_config
from atom.pool_layout.capacity import CapacityPlan, CapacityRefused
from atom.pool_layout.reach import FULL, Reach
from atom.runner.capacity import capacity_classes
from atom.runner.model_runner import ModelRunner
from contracts.runtime.capacity import check_capacity, rule_is_exact, worst_blocks
from contracts.runtime.checks import ContractViolation

GEMMA = dict(budget=60 * 2**30, max_model_len=131072, max_num_seqs=64)
MIMO_SHARED = dict(budget=4 * 2**30, max_model_len=32768, max_num_seqs=64, pages="shared")


def _runner(name, **engine):
    return ModelRunner(load_model_config(name), EngineConfig(**engine) if engine else None)


def _plant(monkeypatch, change):
    real = check_module.plan_runner_capacity

    def planted(runner, **kw):
        return change(real(runner, **kw))

    monkeypatch.setattr(check_module, "plan_runner_capacity", planted)


def _refuse(monkeypatch, what):
    def refuse(runner, **kw):
        raise CapacityRefused(what, "planted")

    monkeypatch.setattr(check_module, "plan_runner_capacity", refuse)


def _fires(runner, match, **kw):
    with pytest.raises(ContractViolation, match=match):
        check_capacity(runner, **kw)


# -- a plan ---------------------------------------------------------------------------------------


def test_a_price_other_than_the_carve(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, used_bytes=p.used_bytes + 1))
    _fires(_runner("gemma-3-27b"), r"the plan prices \d+ B and its pools carve", **GEMMA)


def test_a_carve_over_the_budget(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, budget=p.used_bytes - 1))
    _fires(_runner("gemma-3-27b"), r"the pools carve \d+ B, over the budget", **GEMMA)


def test_tokens_other_than_the_full_blocks_hold(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, tokens=p.tokens + 16))
    _fires(_runner("gemma-3-27b"), r"says 435008 tokens and the full class carves", **GEMMA)


def test_a_pool_that_carves_another_count(monkeypatch):
    real = check_module.capacity_classes

    class Miscounting:
        def __init__(self, pool):
            self.pool = pool

        def allocate(self, entries, *, device):
            views = self.pool.allocate(entries, device=device)
            views.entries += 1
            return views

    def miscounted(runner):
        pages, states = real(runner)
        part = pages[0].parts[0]
        pages[0] = dataclasses.replace(
            pages[0], parts=(dataclasses.replace(part, pool=Miscounting(part.pool)),)
        )
        return pages, states

    monkeypatch.setattr(check_module, "capacity_classes", miscounted)
    _fires(_runner("gemma-3-27b"), r"class full: the plan bought 27187 entries", **GEMMA)


def test_fewer_requests_than_the_carve_admits(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, requests=p.requests - 1))
    _fires(
        _runner("gemma-3-27b"), "admitting them one at a time into the carved pools fits 3", **GEMMA
    )


def test_shared_a_price_other_than_the_carve(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, used_bytes=p.used_bytes + 1))
    _fires(_runner("mimo-v2-flash"), r"the plan prices \d+ B, the carve takes", **MIMO_SHARED)


def test_shared_a_carve_over_the_budget(monkeypatch):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, budget=p.used_bytes - 1))
    _fires(_runner("mimo-v2-flash"), r"the carve takes \d+, budget", **MIMO_SHARED)


def test_shared_a_page_left_unbought(monkeypatch):
    # Exactly one page more: a comparison one step off would call it full.
    _plant(monkeypatch, lambda p: dataclasses.replace(p, budget=p.used_bytes + p.page_bytes))
    _fires(_runner("mimo-v2-flash"), "one more page of 737280 B still fits", **MIMO_SHARED)


@pytest.mark.parametrize("off", [-1, 1])
def test_shared_requests_other_than_the_pool_admits(monkeypatch, off):
    _plant(monkeypatch, lambda p: dataclasses.replace(p, requests=p.requests + off))
    _fires(_runner("mimo-v2-flash"), "shared pages and admitting them one at a time", **MIMO_SHARED)


# -- a refusal ------------------------------------------------------------------------------------


def test_a_state_floor_refused_at_exactly_its_price(monkeypatch):
    runner = _runner("qwen3.5-27b", tp_size=2)
    exact = 4 * 39223296  # four slots of GDN state, to the byte
    _refuse(monkeypatch, "state floor")
    _fires(runner, r"refused the STATE floor, yet 4 slots carve 156893184 B of 156893184 B",
           budget=exact, max_model_len=4096, max_num_seqs=4)  # fmt: skip


def test_a_window_floor_refused_at_exactly_its_price(monkeypatch):
    (_, window), _ = capacity_classes(_runner("gemma-3-27b"))
    exact = 4 * 66 * window.page_bytes
    _refuse(monkeypatch, "window floor")
    _fires(_runner("gemma-3-27b"), "refused the window floor, yet it carves 0 \\+ ",
           budget=exact, max_model_len=131072, max_num_seqs=4)  # fmt: skip


def test_a_request_refused_at_exactly_its_price(monkeypatch):
    (full, window), _ = capacity_classes(_runner("gemma-3-27b"))
    exact = 66 * window.page_bytes + 8192 * full.page_bytes
    _refuse(monkeypatch, "max_model_len request")
    _fires(_runner("gemma-3-27b"), "refused one 131072-token request, yet its 8192 blocks",
           budget=exact, max_model_len=131072, max_num_seqs=1)  # fmt: skip


def test_a_request_refused_with_no_full_rows_to_hold_it(monkeypatch):
    config = HfConfig({"num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
                       "head_dim": 16, "layer_types": ["sliding_attention"] * 2,
                       "sliding_window": 8}, "windows")  # fmt: skip
    _refuse(monkeypatch, "max_model_len request")
    _fires(ModelRunner(config), "with no full-reach rows", budget=2**20, max_model_len=64,
           max_num_seqs=1)  # fmt: skip


@pytest.mark.parametrize("pages", ["reserved", "shared"])
def test_a_refusal_by_an_unknown_name(monkeypatch, pages):
    _refuse(monkeypatch, "bad luck")
    _fires(_runner("mimo-v2-flash"), "refused by an unknown name 'bad luck'", budget=2**30,
           max_model_len=4096, max_num_seqs=4, pages=pages)  # fmt: skip


def test_shared_a_window_floor_refused_at_exactly_its_pages(monkeypatch):
    # 4 slots x 5 window groups x 10 blocks = 200 pages of 737280 B.
    _refuse(monkeypatch, "window floor")
    _fires(_runner("mimo-v2-flash"), "refused the window floor, yet 4 x 50 pages fit in 200",
           budget=200 * 737280, max_model_len=32768, max_num_seqs=4, pages="shared")  # fmt: skip


def test_shared_a_request_refused_at_exactly_its_pages(monkeypatch):
    # One request: 32768 / 32 = 1024 full pages and 50 window pages.
    _refuse(monkeypatch, "max_model_len request")
    _fires(_runner("mimo-v2-flash"), "refused one request of 1074 pages; the pool holds 1074",
           budget=1074 * 737280, max_model_len=32768, max_num_seqs=1, pages="shared")  # fmt: skip


# -- the simulation it counts with ---------------------------------------------------------------


def test_worst_blocks_by_hand():
    assert worst_blocks(FULL, 5, 1, 1) == 5  # every token its own block, none given back
    assert worst_blocks(Reach.sliding(4), 100, 1, 1) == 4
    assert worst_blocks(Reach.chunked(3), 100, 4, 1) == 2  # the chunk at token 3: blocks 0, 1


def test_the_rule_is_exact_where_it_says():
    assert rule_is_exact(FULL, 1, 16, 1) is True
    assert rule_is_exact(Reach.sliding(1024), 1, 16, 16) is True
    # lcm(3, 4) + 3 + 1 = 16 tokens meet a chunk at its worst offset.
    assert rule_is_exact(Reach.chunked(3), 16, 4, 1) is True
    assert rule_is_exact(Reach.chunked(3), 15, 4, 1) is False
    assert rule_is_exact(Reach.chunked(6), 20, 4, 2) is True  # lcm 12 + 6 + 2
    assert rule_is_exact(Reach.chunked(6), 19, 4, 2) is False


# -- cases the plan's branches need ---------------------------------------------------------------


def test_a_builder_priced_by_its_spec_is_carved_by_its_spec():
    runner = _runner("deepseek-v4-flash-dspark", scheduler_block_size=256)
    plan = check_capacity(runner, budget=8 * 2**30, max_model_len=8192, max_num_seqs=4)
    assert isinstance(plan, CapacityPlan) and plan.bound_by == "max_num_seqs"


def test_state_slots_bound_the_admission():
    plan = check_capacity(_runner("qwen3.5-27b", tp_size=2), budget=8 * 2**30,
                          max_model_len=4096, max_num_seqs=4)  # fmt: skip
    assert (plan.requests, plan.bound_by) == (4, "max_num_seqs")


def test_a_given_step_is_the_step_simulated():
    plan = check_capacity(_runner("gpt-oss-120b"), budget=4 * 2**30, max_model_len=32768,
                          max_num_seqs=64, step_tokens=1)  # fmt: skip
    # A one-token step holds ceil(127 / 16) + 1 = 9 window blocks, not the default step's 10.
    assert plan.by_name("sliding128").per_request == 9 and plan.bound_by == "full"
