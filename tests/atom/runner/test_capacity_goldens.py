"""The held window models at 60 GiB, 131072-token requests, 64 slots: each figure by hand.

bf16, scheduler block 16, tp 1, one-block steps. A KV row of one block is
16 tokens x heads x (K dim + V dim) x 2 B; a window row of W holds
ceil((W + 16 - 2) / 16) + 1 blocks of a request (`Reach.blocks_held`).
"""

from __future__ import annotations

import json

import pytest

from atom.layout_command import layout_main
from atom.models.registry import load_model_config
from atom.pool_layout.capacity import CapacityRefused
from atom.runner.capacity import capacity_classes, plan_runner_capacity
from atom.runner.model_runner import ModelRunner

BUDGET = 60 * 2**30  # 64424509440
N, S = 131072, 64


def _plan(name, **kw):
    args = dict(budget=BUDGET, max_model_len=N, max_num_seqs=S)
    args.update(kw)
    return plan_runner_capacity(ModelRunner(load_model_config(name)), **args)


def test_gemma_3_27b():
    row = 16 * 16 * (128 + 128) * 2  # 131072 B: 16 KV heads of 128
    assert row * 62 == 8126464  # what `layout` prices a block at, every row full
    plan = _plan("gemma-3-27b")
    window, full = plan.by_name("sliding1024"), plan.by_name("full")
    assert (window.rows, window.entry_bytes) == (52, 52 * row) == (52, 6815744)
    assert (full.rows, full.entry_bytes) == (10, 10 * row) == (10, 1310720)
    per_window = -(-(1024 + 16 - 2) // 16) + 1
    assert window.per_request == per_window == 66
    floor = S * per_window * 52 * row
    assert window.bytes == floor == 28789702656
    blocks = (BUDGET - floor) // (10 * row)
    assert full.entries == blocks == 27187
    assert full.per_request == N // 16 == 8192
    assert (plan.requests, plan.bound_by) == (blocks // 8192, "full") == (3, "full")
    assert plan.tokens == blocks * 16 == 434992
    assert plan.unused_bytes == BUDGET - floor - blocks * 10 * row == 262144
    # Priced full, the same budget buys 64424509440 // 8126464 = 7927 blocks: 126832 tokens,
    # short of one 131072-token request.
    assert BUDGET // (62 * row) * 16 == 126832 < N


def test_gpt_oss_120b():
    row = 16 * 8 * (64 + 64) * 2  # 32768 B: 8 KV heads of 64
    plan = _plan("gpt-oss-120b")
    window, full = plan.by_name("sliding128"), plan.by_name("full")
    assert window.entry_bytes == full.entry_bytes == 18 * row == 589824
    per_window = -(-(128 + 16 - 2) // 16) + 1
    assert window.per_request == per_window == 10
    floor = S * per_window * 18 * row
    assert floor == 377487360
    blocks = (BUDGET - floor) // (18 * row)
    assert full.entries == blocks == 108586
    assert (plan.requests, plan.bound_by) == (blocks // 8192, "full") == (13, "full")
    assert plan.tokens == blocks * 16 == 1737376


def test_mimo_v2_flash_reserved():
    full_row = 16 * 4 * (192 + 128) * 2  # 40960 B: 4 KV heads, K 192, V 128
    window_row = 16 * 8 * (192 + 128) * 2  # 81920 B: the window layers' 8 KV heads
    plan = _plan("mimo-v2-flash")
    window, full = plan.by_name("sliding128"), plan.by_name("full")
    assert (full.rows, full.entry_bytes) == (9, 9 * full_row) == (9, 368640)
    assert (window.rows, window.entry_bytes) == (39, 39 * window_row) == (39, 3194880)
    floor = S * 10 * 39 * window_row
    blocks = (BUDGET - floor) // (9 * full_row)
    assert (floor, blocks) == (2044723200, 169216)
    assert full.entries == blocks and plan.unused_bytes == BUDGET - floor - blocks * 368640 == 0
    assert (plan.requests, plan.bound_by) == (min(S, blocks // 8192), "full") == (20, "full")


def test_mimo_v2_flash_shared_pages_follow_vllms_rule():
    plan = _plan("mimo-v2-flash", pages="shared")
    g_full, g_window = plan.shared_groups
    # Group size 9 (the smaller count; 39 is not under 1.5 x 9). The window layers' page,
    # 81920 B, is the largest; the full layers' 40960 B divides it, so they take a 32-token
    # block instead of padding. 39 window layers fill 5 groups of 9 with 6 slots empty.
    assert (g_full.ratio, g_full.block_tokens, g_full.groups) == (2, 32, 1)
    assert (g_window.groups, g_window.padding_layers) == (5, 6)
    page = 9 * 81920
    assert plan.page_bytes == page == 737280
    pages = BUDGET // page
    assert plan.page_count == pages == 87381
    need = -(-N // 32) + 5 * 10  # 4096 full pages, 10 in each of 5 window groups
    assert plan.by_name("full").per_request == 4096 and plan.by_name("sliding128").per_request == 10
    assert (plan.requests, plan.bound_by) == (pages // need, "shared pages") == (21, "shared pages")
    assert plan.tokens == (pages - S * 50) * 32 == 2693792
    # Padding: 6 empty window layers of 81920 B in each block of the window class.
    assert plan.by_name("sliding128").padding_bytes == 6 * 81920
    assert plan.by_name("full").padding_bytes == 0


def test_every_held_window_model_plans_windows_by_their_reach():
    for name, windows in {
        "gemma-3-27b": {"sliding1024": 52},
        "gpt-oss-120b": {"sliding128": 18},
        "mimo-v2-flash": {"sliding128": 39},
    }.items():
        page_classes, _ = capacity_classes(ModelRunner(load_model_config(name)))
        assert {c.name: c.rows for c in page_classes if not c.reach.is_full} == windows


def test_one_request_too_long_for_the_budget_is_refused_by_name():
    with pytest.raises(CapacityRefused, match="one max_model_len request does not fit") as r:
        _plan("llama-3.1-8b", budget=2**30, max_model_len=N)
    assert r.value.what == "max_model_len request"


def test_the_command_prints_the_plan(capsys):
    argv = ["gemma-3-27b", "--budget", "60GiB", "--max-model-len", str(N), "--max-num-seqs", str(S)]
    assert layout_main([*argv, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cap = report["capacity"]
    assert (cap["budget_bytes"], cap["requests"], cap["tokens"]) == (BUDGET, 3, 434992)
    assert cap["reach"]["rows"] == {"full": 10, "sliding1024": 52}
    assert cap["reach"]["sources"] == ["sliding_window_pattern", "sliding_window"]
    # The layout itself is unchanged: one pool, every row, at 8126464 B a block.
    assert report["entry_classes"]["page"]["entry_bytes"] == 8126464
    assert layout_main(argv) == 0
    text = capsys.readouterr().out
    assert "fits: 3 requests of 131072 tokens at once (bound by full)" in text
    assert "sliding1024" in text and "66 x block of 16" in text
