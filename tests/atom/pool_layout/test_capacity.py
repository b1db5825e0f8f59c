"""The budget plan: floors first, the rest in full blocks, refusals by name; vLLM's page rule."""

from __future__ import annotations

import dataclasses

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


def test_a_refusal_is_its_message_and_its_name():
    with pytest.raises(CapacityRefused) as refused:
        _plan([_cls(FULL, 1, 10)], [StateClass("s", 5000)], budget=100)
    assert refused.value.args == (str(refused.value),)
    assert str(refused.value).startswith("the STATE floor does not fit: 4 request slots")


def test_window_pages_parse_by_value_and_pass_a_member_through():
    assert WindowPages.parse("shared") is WindowPages.SHARED
    assert WindowPages.parse(WindowPages.RESERVED) is WindowPages.RESERVED


def test_parts_and_classes_are_values():
    a = PagePart("p", 2, 200, row_bytes=100, pool=object())
    b = PagePart("p", 2, 200, row_bytes=100, pool=object())
    assert a == b and "pool" not in repr(a)  # the pool is how to carve, not what is priced
    assert StateClass("s", 9, pool=object()) == StateClass("s", 9, pool=object())
    assert "pool" not in repr(StateClass("s", 9, pool=object()))
    assert PagePart("p", 1, 1).padding_bytes == 0  # a part priced by its spec alone pads nothing
    plan = _plan([_cls(FULL, 1, 10)])
    group = unify_pages([_cls(FULL, 1, 10), _cls(W1024, 1, 10)], 16)[0]
    for frozen in (a, StateClass("s", 9), _cls(FULL, 1, 10), plan, plan.classes[0], group):
        with pytest.raises(dataclasses.FrozenInstanceError):
            frozen.name = "other"
    assert PageClass(FULL, (a, b)).rows == 4 and PageClass(FULL, (a, b)).page_bytes == 400


@pytest.mark.parametrize(
    ("make", "error", "said"),
    [
        (lambda: PagePart("p", 0, 10), ValueError, "part 'p' rows must be at least 1"),
        (lambda: PagePart("p", 1, 0), ValueError, "part 'p' entry_bytes must be at least 1"),
        (lambda: StateClass("s", 0), ValueError, "state 's' entry_bytes must be at least 1"),
        (lambda: PageClass("full", (PagePart("p", 1, 1),)), TypeError, "reach must be a Reach"),
        (lambda: PageClass(FULL, ()), ValueError, "page class full has no rows"),
    ],
)
def test_declarations_refuse_by_name(make, error, said):
    with pytest.raises(error, match=said):
        make()
    assert PagePart("p", 1, 1).entry_bytes == 1 and StateClass("s", 1).entry_bytes == 1


def test_a_part_or_state_with_no_pool_carves_its_spec():
    assert PagePart("v4", 3, 977152).carved_bytes(5) == 5 * 977152
    assert StateClass("v4_slot", 18652160).carved_bytes(2) == 2 * 18652160


@pytest.mark.parametrize(
    ("kw", "error", "said"),
    [
        ({"max_model_len": 0}, ValueError, "max_model_len must be at least 1"),
        ({"block_tokens": 0}, ValueError, "block_tokens must be at least 1"),
        ({"step_tokens": 0}, ValueError, "step_tokens must be at least 1"),
        ({"budget": 0}, ValueError, "budget must be at least 1"),
    ],
)
def test_plan_arguments_refuse_by_name(kw, error, said):
    with pytest.raises(error, match=said):
        _plan([_cls(FULL, 1, 10)], **kw)


def test_plan_arguments_at_their_least():
    plan = _plan([_cls(W1024, 1, 10)], budget=1 << 30, max_model_len=1, max_num_seqs=1,
                 block_tokens=1, step_tokens=1)  # fmt: skip
    assert plan.by_name("sliding1024").per_request == 1


def test_a_given_step_is_the_step_planned():
    window = _cls(W1024, 2, 10)
    assert _plan([window]).step_tokens == 16  # one block
    assert _plan([window]).by_name("sliding1024").per_request == 66
    assert _plan([window], step_tokens=1).by_name("sliding1024").per_request == 65


def test_classes_of_the_wrong_type_are_refused():
    with pytest.raises(TypeError, match="page classes are PageClass"):
        _plan([StateClass("s", 1)])
    with pytest.raises(TypeError, match="state classes are StateClass"):
        _plan([_cls(FULL, 1, 10)], [_cls(FULL, 1, 10)])


def _shared(budget, *, s, states=()):
    classes = [_cls(FULL, 10, 100), _cls(W1024, 20, 100)]
    return _plan(classes, states, budget=budget, max_model_len=4096, max_num_seqs=s,
                 pages="shared")  # fmt: skip


def test_shared_pages_each_class_by_hand():
    # Group size 10 (20 >= 1.5 x 10): the full class is 1 group, the window class 2, no empty
    # layers; a page is 10 x 100 B. A request holds 256 full pages and 2 x 66 window pages.
    plan = _shared(10**7, s=8)
    assert (plan.page_count, plan.requests, plan.bound_by) == (10000, 8, "max_num_seqs")
    full, window = plan.by_name("full"), plan.by_name("sliding1024")
    assert (full.role, full.entry_bytes, full.entries, full.bytes) == (
        "page",
        1000,
        8 * 256,
        8 * 256 * 1000,
    )
    assert (full.per_request, full.requests, full.block_tokens) == (256, 10000 // 388, 16)
    assert (window.role, window.entry_bytes, window.entries) == ("window", 2000, 8 * 66)
    assert (window.bytes, window.padding_bytes) == (8 * 66 * 2000, 0)
    assert window.tokens == 8 * 1024 and full.tokens == plan.tokens == (10000 - 8 * 132) * 16
    assert plan.used_bytes == 10000 * 1000


def test_shared_pages_pay_the_state_floor_first():
    plan = _shared(10**7, s=8, states=[StateClass("s", 5000)])
    assert plan.page_count == (10**7 - 8 * 5000) // 1000 == 9960
    assert plan.used_bytes == 8 * 5000 + 9960 * 1000


def test_shared_pages_refuse_the_window_floor_at_its_boundary():
    # 8 slots x 132 window pages = 1056 pages of 1000 B.
    plan = _shared(1056 * 1000, s=8)
    assert (plan.requests, plan.bound_by) == (1056 // 388, "shared pages")
    with pytest.raises(CapacityRefused, match=r"8 request slots .* each hold 132 pages") as r:
        _shared(1056 * 1000 - 1, s=8)
    assert r.value.what == "window floor"


def test_shared_pages_refuse_one_request_at_its_boundary():
    assert _shared(388 * 1000, s=1).requests == 1
    with pytest.raises(CapacityRefused) as r:
        _shared(388 * 1000 - 1, s=1)
    assert r.value.what == "max_model_len request"
    assert str(r.value) == (
        "one max_model_len request does not fit: 4096 tokens need 256 pages of 1000 B of the "
        "full-reach rows and its 132 window pages; the pool holds 387 pages"
    )


def test_shared_pages_bound_by_slots_when_the_pool_holds_exactly_that_many():
    assert (_shared(2 * 388 * 1000, s=2).requests, _shared(2 * 388 * 1000, s=2).bound_by) == (
        2,
        "max_num_seqs",
    )


def test_reserved_bounds_by_slots_when_the_blocks_hold_exactly_that_many():
    plan = _plan([_cls(FULL, 1, 1000)], budget=10 * 256 * 1000, max_num_seqs=10)
    assert (plan.requests, plan.bound_by) == (10, "max_num_seqs")
    full = plan.by_name("full")
    assert (full.bytes, full.tokens) == (2560 * 1000, 2560 * 16)


def test_a_window_holds_its_width_or_the_whole_request():
    assert _plan([_cls(W1024, 1, 10)], max_num_seqs=3).by_name("sliding1024").tokens == 3 * 1024
    short = _plan([_cls(W1024, 1, 10)], max_model_len=100, max_num_seqs=3)
    assert short.by_name("sliding1024").tokens == 3 * 100


def test_one_page_size_needs_one_layer_page_a_class():
    mixed = PageClass(
        FULL, (PagePart("a", 1, 100, row_bytes=100), PagePart("b", 1, 200, row_bytes=200))
    )
    with pytest.raises(
        ValueError, match=r"page class full holds rows of per-layer pages \['100', '200'\]"
    ):
        unify_pages([mixed, _cls(W1024, 1, 100)], 16)
    unknown = PageClass(FULL, (PagePart("a", 1, 100),))
    with pytest.raises(ValueError, match="one page size is reached per layer"):
        unify_pages([unknown, _cls(W1024, 1, 100)], 16)


def test_the_one_and_a_half_heuristic_is_strict():
    """15 window layers beside 10 full: 15 is not under 1.5 x 10, so the group is 10."""
    groups = unify_pages([_cls(FULL, 10, 100), _cls(W1024, 15, 100)], 16)
    assert [(g.groups, g.padding_layers) for g in groups] == [(1, 0), (2, 5)]


def test_most_tokens_at_its_edges():
    assert most_tokens(lambda n: n <= 1, 100) == 1
    assert most_tokens(lambda n: n <= 99, 100) == 99
    assert most_tokens(lambda n: True, 1) == 1
    assert most_tokens(lambda n: n <= 2, 2) == 2


def test_state_classes_plan_one_entry_a_slot():
    (state,) = [
        c for c in _plan([_cls(FULL, 1, 10)], [StateClass("s", 5000)]).classes if c.role == "state"
    ]
    assert (state.rows, state.entries, state.bytes, state.per_request) == (0, 4, 4 * 5000, 1)
    assert (state.requests, state.tokens, state.padding_bytes, state.reach) == (4, None, 0, None)


def test_the_window_floor_names_each_class_it_holds():
    with pytest.raises(
        CapacityRefused, match=r"each hold sliding1024 66 blocks x 6000 B: 1584000 B in all"
    ):
        _plan([_cls(FULL, 2, 1000), _cls(W1024, 6, 1000)], budget=1000)


def test_shared_pages_with_two_full_groups_share_their_tokens():
    # 20 full + 10 window layers: group size 10, the full class in 2 groups, each holding one
    # page a 16-token block, so the pool's free pages hold half as many tokens.
    plan = _plan([_cls(FULL, 20, 100), _cls(W1024, 10, 100)], budget=10**7, max_num_seqs=8,
                 pages="shared")  # fmt: skip
    assert [g.groups for g in plan.shared_groups] == [2, 1]
    assert plan.tokens == (10000 - 8 * 66) // 2 * 16


def test_shared_pages_view_every_row_at_its_own_block():
    """The carve of a shared pool asks each part for its rows over `pages x ratio` blocks: a full
    layer at half the largest page is viewed over twice as many blocks, and past 32-bit offsets
    there it is refused though the pool's page count alone would pass."""
    full = MhaKvPool(1, block_size=16, blocks_per_entry=1, num_kv_heads=1, head_dim=64,
                     kv_dtype=torch.bfloat16)  # fmt: skip
    window = MhaKvPool(1, block_size=16, blocks_per_entry=1, num_kv_heads=1, head_dim=64,
                       kv_dtype=torch.float32)  # fmt: skip
    classes = [
        PageClass(
            FULL, (PagePart("f", 1, full.entry_bytes, row_bytes=full.row_bytes(), pool=full),)
        ),
        PageClass(
            W1024,
            (PagePart("w", 1, window.entry_bytes, row_bytes=window.row_bytes(), pool=window),),
        ),
    ]
    assert (full.row_bytes(), window.row_bytes()) == (4096, 8192)
    pages = 2**20 + 1  # the window rows' 1024 fp32 elements a page fit; the full rows' do not
    plan = plan_capacity(classes, budget=pages * 8192, max_model_len=16, max_num_seqs=1,
                         block_tokens=16, pages="shared")  # fmt: skip
    assert (plan.page_count, plan.shared_groups[0].ratio) == (pages, 2)
    with pytest.raises(ValueError, match=rf"field 'k' at {2 * pages} entries"):
        carved_bytes(plan, classes)
