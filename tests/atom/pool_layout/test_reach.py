"""Reach: a row's footprint per request, proved against a simulation that frees blocks early."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from atom.pool_layout.reach import FULL, Reach, ReachKind
from contracts.runtime.capacity import rule_is_exact, worst_blocks


def test_names_are_what_a_class_prints_under():
    assert (str(FULL), str(Reach.sliding(1024)), str(Reach.chunked(8192))) == (
        "full",
        "sliding1024",
        "chunked8192",
    )
    assert Reach.sliding(128) == Reach(ReachKind.SLIDING, 128) != Reach.chunked(128)


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: Reach(ReachKind.FULL, 16), ValueError),
        (lambda: Reach(ReachKind.SLIDING), TypeError),
        (lambda: Reach.sliding(0), ValueError),
        (lambda: Reach.chunked(True), TypeError),
        (lambda: Reach("sliding", 4), TypeError),
    ],
)
def test_a_reach_refuses_what_it_cannot_hold(make, error):
    with pytest.raises(error):
        make()


def test_refusals_name_the_count():
    with pytest.raises(ValueError, match=r"step_tokens must be at least 1 \(tokens\), got 0"):
        FULL.blocks_held(16, 16, step_tokens=0)
    with pytest.raises(ValueError, match=r"request tokens must be at least 1"):
        Reach.sliding(4).blocks_held(0, 16, step_tokens=1)


def test_worked_counts():
    # gemma-3-27b's window at a one-block step: the 1023 earlier tokens and 16 new ones, 1039
    # tokens, span ceil(1038 / 16) + 1 = 66 blocks when the first sits in a block's last slot.
    assert Reach.sliding(1024).blocks_held(131072, 16, step_tokens=16) == 66
    # At one token a step: 1024 tokens, ceil(1023 / 16) + 1 = 65.
    assert Reach.sliding(1024).blocks_held(131072, 16, step_tokens=1) == 65
    # vLLM would charge ceil((1024 - 1 + 16) / 16) + 1 = 66 and, at a one-token step,
    # ceil(1024 / 16) + 1 = 65: the same here. They part where W - 1 + T is one past a
    # multiple of the block: W = 2, b = 16, T = 16 holds 17 tokens in at most 2 blocks.
    assert Reach.sliding(2).blocks_held(1000, 16, step_tokens=16) == 2
    assert math.ceil((2 - 1 + 16) / 16) + 1 == 3
    # A request shorter than the window holds what a full row would.
    assert Reach.sliding(1024).blocks_held(100, 16, step_tokens=16) == math.ceil(100 / 16) == 7
    # A chunk that is a whole number of blocks starts on a block boundary: 8192 / 16 blocks at
    # a one-token step, and one more for a one-block step (ceil((8192 - 1 + 16) / 16) = 513).
    assert Reach.chunked(8192).blocks_held(10**6, 16, step_tokens=1) == 512
    assert Reach.chunked(8192).blocks_held(10**6, 16, step_tokens=16) == 513
    # C = 3, b = 4: the chunk at token 3 spans blocks 0 and 1 (vLLM's ceil((3 + 1) / 4) = 1).
    assert Reach.chunked(3).blocks_held(100, 4, step_tokens=1) == 2
    assert FULL.blocks_held(131072, 16, step_tokens=16) == 8192


@given(
    kind=st.sampled_from([ReachKind.FULL, ReachKind.SLIDING, ReachKind.CHUNKED]),
    span=st.integers(1, 48),
    block=st.integers(1, 17),
    step=st.integers(1, 20),
    tokens=st.integers(1, 260),
)
def test_the_rule_never_undercounts_and_is_exact_where_it_says(kind, span, block, step, tokens):
    reach = FULL if kind is ReachKind.FULL else Reach(kind, span)
    rule = reach.blocks_held(tokens, block, step_tokens=step)
    simulated = worst_blocks(reach, tokens, block, step)
    assert rule >= simulated
    if rule_is_exact(reach, tokens, block, step):
        assert rule == simulated


def test_sliding_is_exact_at_every_length_on_a_grid():
    """The sliding rule equals the simulation for every request length, not only long ones."""
    for window in range(1, 20):
        for block in range(1, 7):
            for step in range(1, 8):
                for tokens in range(1, 60):
                    reach = Reach.sliding(window)
                    assert reach.blocks_held(tokens, block, step_tokens=step) == worst_blocks(
                        reach, tokens, block, step
                    ), (window, block, step, tokens)
