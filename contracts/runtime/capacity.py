"""The capacity contract: a budget plan agrees with a brute-force count over its carved pools.

The plan (`atom.runner.capacity`) answers in closed form -- each class's entries, the requests
and tokens that fit -- from the declared price and the footprint rule. This check answers the
same questions the long way, from two independent readings:

* the pools themselves, carved at the plan's counts on the ``meta`` device (no memory, every
  shape and byte count): what they hold must be the plan's bytes and never over the budget, and
  one more block of the remainder class must carry it over;
* a simulation of what one request holds in each class -- every step boundary a request of
  ``max_model_len`` tokens can pass through, freeing a block the moment no query reads it --
  and an admission loop that hands those blocks out of the carved entries one request at a
  time until one does not fit.

A refused plan is checked the same way: the carve at the refused counts must be over the budget.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from atom.pool_layout.capacity import (
    CapacityPlan,
    CapacityRefused,
    StateClass,
    WindowPages,
    unify_pages,
)
from atom.pool_layout.reach import Reach, ReachKind
from atom.runner.capacity import capacity_classes, plan_runner_capacity
from atom.runner.model_runner import ModelRunner
from contracts.runtime.checks import ContractViolation

CONTRACT = "capacity-fits-carve"


def _fail(message: str) -> None:
    raise ContractViolation(CONTRACT, message)


def worst_blocks(reach: Reach, tokens: int, block: int, step_tokens: int) -> int:
    """By simulation: the most `block`-token blocks one request of `tokens` tokens holds in a
    row of `reach`, over every position a step of up to `step_tokens` tokens can start at.

    A step writing tokens `n .. n + t - 1` needs every key its first query reads: from 0 (full),
    from `n - W + 1` (a window of W), or from the start of `n`'s chunk; blocks wholly below that
    were given back before the step. Nothing here reads the footprint rule.
    """
    peak = 0
    for n in range(tokens):
        t = min(step_tokens, tokens - n)
        if reach.kind is ReachKind.FULL:
            first = 0
        elif reach.kind is ReachKind.SLIDING:
            first = max(0, n - reach.tokens + 1)
        else:
            first = n // reach.tokens * reach.tokens
        peak = max(peak, (n + t - 1) // block - first // block + 1)
    return peak


def rule_is_exact(reach: Reach, tokens: int, block: int, step_tokens: int) -> bool:
    """Whether `Reach.blocks_held` must equal the simulation: always for full and sliding rows; for
    a chunked row once a request is long enough to meet a chunk at its worst block offset."""
    if reach.kind is not ReachKind.CHUNKED:
        return True
    c = reach.tokens
    return tokens >= c * block // math.gcd(c, block) + c + step_tokens


def _carve_part_bytes(part: Any, entries: int, device: str) -> tuple[int, int]:
    """(bytes, entries) of a part carved on `device`: the arenas' own buffers and count."""
    if part.pool is None:
        return entries * part.entry_bytes, entries
    views = part.pool.allocate(entries, device=device)
    return sum(b.numel() for b in views.buffers), views.entries


def _carve_state_bytes(state: StateClass, entries: int, device: str) -> tuple[int, int]:
    if state.pool is None:
        return entries * state.entry_bytes, entries
    views = state.pool.allocate(entries, device=device)
    return views.arena.buf.numel(), views.entries


def check_capacity(
    runner: ModelRunner,
    *,
    budget: int,
    max_model_len: int,
    max_num_seqs: int,
    step_tokens: int | None = None,
    pages: str | WindowPages = WindowPages.RESERVED,
    device: str = "meta",
) -> CapacityPlan | CapacityRefused:
    """Plan `budget` for `runner` and hold the plan (or its refusal) to the carve and a count."""
    page_classes, state_classes = capacity_classes(runner)
    block = runner.engine.scheduler_block_size
    step = block if step_tokens is None else step_tokens
    try:
        plan = plan_runner_capacity(
            runner,
            budget=budget,
            max_model_len=max_model_len,
            max_num_seqs=max_num_seqs,
            step_tokens=step_tokens,
            pages=pages,
        )
    except CapacityRefused as refused:
        _check_refusal(refused, page_classes, state_classes, budget, max_model_len,
                       max_num_seqs, block, step, WindowPages.parse(pages), device)  # fmt: skip
        return refused
    if plan.pages is WindowPages.SHARED and plan.shared_groups:
        _check_shared(plan, page_classes, state_classes, device)
    else:
        _check_reserved(plan, page_classes, state_classes, device)
    return plan


def _need(reach: Reach | None, plan: CapacityPlan, block: int) -> int:
    if reach is None:
        return 1
    return worst_blocks(reach, plan.max_model_len, block, plan.step_tokens)


def _check_reserved(plan, page_classes, state_classes, device) -> None:
    by_name = {c.name: c for c in plan.classes}
    carved: dict[str, tuple[int, int]] = {}
    for s in state_classes:
        carved[s.name] = _carve_state_bytes(s, plan.max_num_seqs, device)
    for c in page_classes:
        entries = by_name[c.name].entries
        pieces = [_carve_part_bytes(p, entries, device) for p in c.parts]
        if any(n != entries for _, n in pieces):
            _fail(f"class {c.name}: the plan bought {entries} entries and its pools carve {pieces}")
        carved[c.name] = (sum(b for b, _ in pieces), entries)
    total = sum(b for b, _ in carved.values())
    if total != plan.used_bytes:
        _fail(f"the plan prices {plan.used_bytes} B and its pools carve {total} B ({carved})")
    if total > plan.budget:
        _fail(f"the pools carve {total} B, over the budget of {plan.budget} B")
    full = [c for c in page_classes if c.reach.is_full]
    if full:
        (c,) = full
        entries = carved[c.name][1]
        more = sum(p.carved_bytes(entries + 1) for p in c.parts) - carved[c.name][0]
        if total + more <= plan.budget:
            _fail(
                f"one more {c.name} block ({more} B) still fits: {total} + {more} <= "
                f"{plan.budget}; the plan left capacity unbought"
            )
    # Admission: hand each request its simulated holding out of the carved entries.
    free = {name: n for name, (_, n) in carved.items()}
    need = {s.name: 1 for s in state_classes}
    for c in page_classes:
        need[c.name] = _need(c.reach, plan, plan.block_tokens)
    admitted = 0
    while admitted < plan.max_num_seqs and all(free[k] >= need[k] for k in need):
        for k in need:
            free[k] -= need[k]
        admitted += 1
    if admitted != plan.requests:
        _fail(
            f"the plan says {plan.requests} requests of {plan.max_model_len} tokens fit and "
            f"admitting them one at a time into the carved pools fits {admitted} "
            f"(each holds {need}; the pools hold {free} more)"
        )
    if full and plan.tokens != carved[full[0].name][1] * plan.block_tokens:
        _fail(
            f"the plan says {plan.tokens} tokens and the full class carves {carved[full[0].name]}"
        )


def _check_shared(plan, page_classes, state_classes, device) -> None:
    state = sum(_carve_state_bytes(s, plan.max_num_seqs, device)[0] for s in state_classes)
    pool = torch.empty(plan.page_count * plan.page_bytes, dtype=torch.uint8, device=device)
    total = state + pool.numel()
    if total != plan.used_bytes or total > plan.budget:
        _fail(f"the plan prices {plan.used_bytes} B, the carve takes {total}, budget {plan.budget}")
    if total + plan.page_bytes <= plan.budget:
        _fail(f"one more page of {plan.page_bytes} B still fits in {plan.budget} B")
    groups = {g.reach: g for g in plan.shared_groups}
    for c in page_classes:
        g = groups[c.reach]
        # Every row of the class, viewed over the one pool at its block: the views must exist.
        for p in c.parts:
            _carve_part_bytes(p, plan.page_count * g.ratio, device)
    need = sum(
        groups[c.reach].groups
        * worst_blocks(c.reach, plan.max_model_len, groups[c.reach].block_tokens, plan.step_tokens)
        for c in page_classes
    )
    free, admitted = plan.page_count, 0
    while admitted < plan.max_num_seqs and free >= need:
        free -= need
        admitted += 1
    exact = all(
        rule_is_exact(c.reach, plan.max_model_len, groups[c.reach].block_tokens, plan.step_tokens)
        for c in page_classes
    )
    if admitted < plan.requests or (exact and admitted != plan.requests):
        _fail(
            f"the plan says {plan.requests} requests fit in {plan.page_count} shared pages and "
            f"admitting them one at a time fits {admitted} (each holds {need} pages)"
        )


def _check_refusal(refused, page_classes, state_classes, budget, n, s, block, step, pages, device):
    state = sum(_carve_state_bytes(c, s, device)[0] for c in state_classes)
    if refused.what == "state floor":
        if state <= budget:
            _fail(f"refused the STATE floor, yet {s} slots carve {state} B of {budget} B")
        return
    if pages is WindowPages.SHARED and len(page_classes) > 1:
        groups = unify_pages(page_classes, block)
        pool = torch.empty(
            (budget - state) // groups[0].page_bytes, dtype=torch.uint8, device=device
        )
        held = {
            g.reach: g.groups * g.reach.blocks_held(n, g.block_tokens, step_tokens=step)
            for g in groups
        }
        window = sum(v for r, v in held.items() if not r.is_full)
        if refused.what == "window floor" and s * window <= pool.numel():
            _fail(f"refused the window floor, yet {s} x {window} pages fit in {pool.numel()}")
        if refused.what == "max_model_len request" and sum(held.values()) <= pool.numel():
            _fail(
                f"refused one request of {sum(held.values())} pages; the pool holds {pool.numel()}"
            )
        if refused.what not in ("window floor", "max_model_len request"):
            _fail(f"refused by an unknown name {refused.what!r}: {refused}")
        return
    windows = 0
    for c in page_classes:
        if not c.reach.is_full:
            entries = s * c.reach.blocks_held(n, block, step_tokens=step)
            windows += sum(_carve_part_bytes(p, entries, device)[0] for p in c.parts)
    if refused.what == "window floor":
        if state + windows <= budget:
            _fail(f"refused the window floor, yet it carves {state} + {windows} B of {budget} B")
        return
    if refused.what != "max_model_len request":
        _fail(f"refused by an unknown name {refused.what!r}: {refused}")
    full = [c for c in page_classes if c.reach.is_full]
    if not full:
        _fail("refused a max_model_len request with no full-reach rows to hold it")
    per = -(-n // block)
    carve = sum(p.carved_bytes(per) for p in full[0].parts)
    if state + windows + carve <= budget:
        _fail(
            f"refused one {n}-token request, yet its {per} blocks carve {carve} B beside the "
            f"floors' {state + windows} B within {budget} B"
        )
