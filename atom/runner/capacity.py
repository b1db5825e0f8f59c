"""A runner's capacity classes: its pools' rows grouped by the reach the walk recorded.

The price is the builders' (`sub_pool_specs`, each pool's `entry_bytes`); the reach is the
walk's (`pool_rows.reaches(kind)`); this module only puts them side by side. A pool whose rows
share one reach joins that reach's class whole. A pool whose rows differ -- gemma-3-27b's one
KV geometry holds 10 global and 52 window rows -- is split with `PagedPool.with_rows`, so each
share is priced and carved by the pool's own walk, never by a second formula. A PAGE spec no
pool declares (a builder that allocates its own, DeepSeek-V4) joins the full class at its spec's
price: its rows keep compressed history of every token, and its window is already a STATE class.

Every PAGE row of every builder shares one block-id space today, which is why the full rows of
several pools (two KV geometries, a draft's sibling pool) are one class: one block id buys an
entry of each.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from atom.pool_layout import EntryClass
from atom.pool_layout.capacity import (
    CapacityPlan,
    PageClass,
    PagePart,
    StateClass,
    WindowPages,
    carved_bytes,
    plan_capacity,
)
from atom.pool_layout.reach import FULL, Reach


def _row_kind(builder: Any, pool_name: str) -> Hashable | None:
    """The row space a builder's pool is named for (`str(kind) == pool_name`), if any."""
    rows = builder.pool_rows
    for kind in rows:
        if str(kind) == pool_name:
            return kind
    return None


def _part(name: str, pool: Any) -> PagePart:
    return PagePart(
        name=name,
        rows=pool.rows,
        entry_bytes=pool.entry_bytes,
        row_bytes=pool.row_bytes(),
        padding_bytes=pool.padding_bytes,
        pool=pool,
    )


def _pool_parts(builder: Any, pool_name: str, pool: Any) -> list[tuple[Reach, PagePart]]:
    name = f"{builder.name}.{pool_name}"
    kind = _row_kind(builder, pool_name)
    reaches = builder.pool_rows.reaches(kind) if kind is not None else ()
    if len(reaches) != pool.rows:
        # No row space by this pool's name, or one of another size: nothing says which of its
        # rows slide, so all of them are planned full.
        return [(FULL, _part(name, pool))]
    counts: dict[Reach, int] = {}
    for reach in reaches:
        counts[reach] = counts.get(reach, 0) + 1
    if len(counts) == 1:
        return [(reaches[0], _part(name, pool))]
    return [(reach, _part(name, pool.with_rows(n))) for reach, n in counts.items()]


def _module_count(builder: Any) -> int:
    seen = {id(m) for kind in builder.pool_rows for m in builder.pool_rows[kind]}
    return max(1, len(seen))


def capacity_classes(runner: Any) -> tuple[list[PageClass], list[StateClass]]:
    """The runner's page classes (one per reach, full first) and STATE classes."""
    by_reach: dict[Reach, list[PagePart]] = {}
    states: list[StateClass] = []
    for builder in runner.builders():
        specs = builder.sub_pool_specs()
        declared = set()
        for pool_name, pool in builder.paged_pools.items():
            declared.add(f"{builder.name}.{pool_name}")
            for reach, part in _pool_parts(builder, pool_name, pool):
                by_reach.setdefault(reach, []).append(part)
        state_pools = {f"{builder.name}.{n}": p for n, p in builder.state_pools.items()}
        for spec in specs:
            if spec.entry_class is EntryClass.STATE:
                states.append(StateClass(spec.name, spec.entry_bytes, state_pools.get(spec.name)))
            elif spec.name not in declared:
                part = PagePart(spec.name, _module_count(builder), spec.entry_bytes)
                by_reach.setdefault(FULL, []).append(part)
    order = sorted(by_reach, key=lambda r: (not r.is_full, r.kind.value, r.tokens or 0))
    return [PageClass(r, tuple(by_reach[r])) for r in order], states


def plan_runner_capacity(
    runner: Any,
    *,
    budget: int,
    max_model_len: int,
    max_num_seqs: int,
    step_tokens: int | None = None,
    pages: str | WindowPages = WindowPages.RESERVED,
) -> CapacityPlan:
    """The capacity plan for `runner`'s pools at the scheduler's block.

    The plan's counts are put to the pools before it is returned (`carved_bytes`), so a count a
    pool would refuse to carve -- a row past 32-bit element offsets -- is refused here, by the
    pool's own words, and a plan whose carve would take other bytes than it priced is an error.
    """
    page_classes, state_classes = capacity_classes(runner)
    plan = plan_capacity(
        page_classes,
        state_classes,
        budget=budget,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        block_tokens=runner.engine.scheduler_block_size,
        step_tokens=step_tokens,
        pages=pages,
    )
    carved = carved_bytes(plan, page_classes, state_classes)
    if sum(carved.values()) != plan.used_bytes:
        raise ValueError(
            f"the capacity plan priced {plan.used_bytes} B and its pools carve "
            f"{sum(carved.values())} B ({carved})"
        )
    return plan
