"""The budget plan: floors first, the rest in full blocks, refusals by name; vLLM's page rule."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout import MhaKvPool
from atom.pool_layout.capacity import (
    CapacityRefused,
    PageClass,
    PagePart,
    StateClass,
    WindowPages,
    carved_bytes,
    most_tokens,
    plan_capacity,
    unify_pages,
)
from atom.pool_layout.reach import FULL, Reach

W1024 = Reach.sliding(1024)


def _cls(reach, rows, row_bytes):
    return PageClass(reach, (PagePart(f"p.{reach}", rows, rows * row_bytes, row_bytes=row_bytes),))


def _plan(classes, states=(), **kw):
    args = dict(budget=1 << 30, max_model_len=4096, max_num_seqs=4, block_tokens=16)
    args.update(kw)
    return plan_capacity(classes, states, **args)


def test_reserved_buys_the_floors_then_full_blocks():
    full, window = _cls(FULL, 2, 1000), _cls(W1024, 6, 1000)
    state = StateClass("s", 5000)
    plan = _plan([full, window], [state], budget=10_000_000, max_model_len=4096, max_num_seqs=4)
    # STATE: 4 slots x 5000 B. Window: ceil((1024 + 16 - 2) / 16) + 1 = 66 blocks a slot,
    # 4 x 66 x 6000 B. Full: what is left, in blocks of 2000 B.
    state_cost, window_cost = 4 * 5000, 4 * 66 * 6000
    blocks = (10_000_000 - state_cost - window_cost) // 2000
    assert [(c.name, c.entries) for c in plan.classes] == [
        ("s", 4),
        ("sliding1024", 264),
        ("full", blocks),
    ]
    assert plan.by_name("full").per_request == 4096 // 16 == 256
    assert plan.requests == min(4, blocks // 256) == 4 and plan.bound_by == "max_num_seqs"
    assert plan.tokens == blocks * 16
    assert plan.used_bytes == state_cost + window_cost + blocks * 2000
    assert 0 <= plan.unused_bytes < 2000


def test_the_full_class_bounds_requests_when_blocks_run_short():
    plan = _plan([_cls(FULL, 1, 1000)], budget=10 * 256 * 1000 + 999, max_num_seqs=64)
    assert (plan.requests, plan.bound_by) == (10, "full")
    assert plan.by_name("full").entries == 2560


def test_a_model_of_windows_only_is_bound_by_its_slots():
    plan = _plan([_cls(W1024, 4, 100)], budget=10**9, max_num_seqs=3)
    assert (plan.requests, plan.bound_by, plan.tokens) == (3, "max_num_seqs", None)
    assert plan.by_name("sliding1024").tokens == 3 * 1024


@pytest.mark.parametrize(
    ("budget", "what"),
    [
        (4 * 5000 - 1, "state floor"),
        (4 * 5000 + 4 * 66 * 6000 - 1, "window floor"),
        (4 * 5000 + 4 * 66 * 6000 + 256 * 2000 - 1, "max_model_len request"),
    ],
)
def test_each_shortfall_is_refused_by_name(budget, what):
    classes = [_cls(FULL, 2, 1000), _cls(W1024, 6, 1000)]
    with pytest.raises(CapacityRefused) as refused:
        _plan(classes, [StateClass("s", 5000)], budget=budget)
    assert refused.value.what == what
    assert what.split()[0] in str(refused.value).lower()
    # One byte more and this shortfall is met: the plan goes on, to the next or to the end.
    order = ["state floor", "window floor", "max_model_len request"]
    try:
        _plan(classes, [StateClass("s", 5000)], budget=budget + 1)
    except CapacityRefused as later:
        assert order.index(later.what) > order.index(what)


def test_the_refusals_say_what_was_short():
    with pytest.raises(CapacityRefused, match=r"4 request slots \(--max-num-seqs\)"):
        _plan([_cls(FULL, 1, 10)], [StateClass("s", 5000)], budget=100)
    with pytest.raises(CapacityRefused, match=r"4096 tokens need 256 blocks"):
        _plan([_cls(FULL, 1, 10)], budget=100)


def test_inputs_are_refused_by_name():
    with pytest.raises(ValueError, match="max_num_seqs must be at least 1"):
        _plan([_cls(FULL, 1, 10)], max_num_seqs=0)
    with pytest.raises(TypeError, match="budget must be an int"):
        _plan([_cls(FULL, 1, 10)], budget=1.5)
    with pytest.raises(ValueError, match="name a reach twice"):
        _plan([_cls(FULL, 1, 10), _cls(FULL, 2, 10)])
    with pytest.raises(ValueError, match="window pages 'half' is not one of"):
        _plan([_cls(FULL, 1, 10)], pages="half")
    with pytest.raises(ValueError, match="nothing to plan"):
        plan_capacity([], budget=1, max_model_len=1, max_num_seqs=1, block_tokens=16)


def test_vllm_grouping_pads_the_short_bucket():
    """10 full + 20 window layers: group size 10, no padding (vLLM's docstring example)."""
    full, window = _cls(FULL, 10, 100), _cls(W1024, 20, 100)
    groups = unify_pages([full, window], 16)
    assert [(g.groups, g.padding_layers) for g in groups] == [(1, 0), (2, 0)]
    assert groups[0].page_bytes == 10 * 100


def test_vllm_grouping_takes_the_larger_count_within_one_and_a_half():
    """gpt-oss-20b + EAGLE: 12 window + 13 full layers pad to 13 + 13, not 12 + 24."""
    full, window = _cls(FULL, 13, 100), _cls(Reach.sliding(128), 12, 100)
    groups = unify_pages([full, window], 16)
    assert [(g.groups, g.padding_layers) for g in groups] == [(1, 0), (1, 1)]
    assert groups[1].padding_bytes == 1 * 100


def test_a_dividing_layer_page_takes_a_larger_block_and_another_is_padded():
    # MiMo-V2-Flash bf16: full rows 16 x 4 x (192 + 128) x 2 = 40960 B, window rows 81920 B.
    full, window = _cls(FULL, 9, 40960), _cls(Reach.sliding(128), 39, 81920)
    g_full, g_win = unify_pages([full, window], 16)
    assert (g_full.ratio, g_full.block_tokens, g_full.layer_padding_bytes) == (2, 32, 0)
    # group size 9 (39 >= 1.5 x 9): 5 groups of 9 hold 39 window layers, 6 slots empty.
    assert (g_win.groups, g_win.padding_layers, g_win.page_bytes) == (5, 6, 9 * 81920)
    assert g_win.padding_bytes == 6 * 81920
    odd = unify_pages([_cls(FULL, 2, 300), _cls(W1024, 2, 1000)], 16)
    assert (odd[0].ratio, odd[0].layer_padding_bytes, odd[0].padding_bytes) == (1, 700, 1400)


def test_shared_pages_pool_the_classes():
    full, window = _cls(FULL, 10, 100), _cls(W1024, 20, 100)
    plan = _plan([full, window], budget=10**7, max_model_len=4096, max_num_seqs=8, pages="shared")
    assert plan.pages is WindowPages.SHARED and plan.page_bytes == 1000
    pages = 10**7 // 1000
    need = 1 * 256 + 2 * 66
    assert plan.page_count == pages and plan.requests == min(8, pages // need)
    # Tokens: the pages the full group keeps after 8 slots' windows, 16 tokens each.
    assert plan.tokens == (pages - 8 * 2 * 66) * 16


def test_one_class_is_one_pool_whichever_arrangement():
    full = _cls(FULL, 3, 100)
    shared, reserved = _plan([full], pages="shared"), _plan([full], pages="reserved")
    assert shared.classes == reserved.classes and shared.shared_groups == ()
    assert (shared.requests, shared.tokens) == (reserved.requests, reserved.tokens)


def test_most_tokens_is_a_bisection():
    assert most_tokens(lambda n: n <= 37, 100) == 37
    assert most_tokens(lambda n: False, 100) == 0
    assert most_tokens(lambda n: True, 100) == 100


def test_carved_bytes_asks_the_pools():
    pool = MhaKvPool(6, block_size=16, blocks_per_entry=1, num_kv_heads=2, head_dim=64,
                     kv_dtype=torch.bfloat16)  # fmt: skip
    full, window = pool.with_rows(2), pool.with_rows(4)
    classes = [
        PageClass(FULL, (PagePart("f", 2, full.entry_bytes, pool=full),)),
        PageClass(W1024, (PagePart("w", 4, window.entry_bytes, pool=window),)),
    ]
    plan = plan_capacity(classes, budget=50_000_000, max_model_len=2048, max_num_seqs=2,
                         block_tokens=16)  # fmt: skip
    carved = carved_bytes(plan, classes)
    assert carved == {
        "full": full.pool_bytes(plan.by_name("full").entries),
        "sliding1024": window.pool_bytes(2 * 66),
    }
    assert sum(carved.values()) == plan.used_bytes
