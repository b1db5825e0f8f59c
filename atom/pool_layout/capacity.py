"""Capacity: how many tokens and requests a byte budget holds, from the declared price and reach.

`entry_bytes` says what one block costs; a maintainer sizing a deployment asks what a budget
buys. That answer needs one more declared fact per row, its reach (`reach.py`), because a
window row gives its blocks back: it holds at most `Reach.blocks_held` blocks a request however
long the request grows. The plan groups a model's rows by reach into classes and gives each
class its footprint, in the order the budget pays for them:

  STATE    one entry a request slot, `max_num_seqs` of them: the state floor. A request cannot
           run without its state, so these are bought first (ATOM's `plan_pools` reserves its
           STATE classes the same way).
  window   each sliding or chunked class, `blocks_held(max_model_len)` blocks a request slot:
           the window floor. Bounded per request, so it scales with `max_num_seqs` like STATE
           and is reserved like it (ATOM prices DeepSeek-V4's sliding window this way).
  full     the rest of the budget, in blocks: `ceil(L / block)` of them a request of `L`.

Refused by name, before anything is carved: a floor the budget cannot hold, and a budget whose
remainder cannot hold one `max_model_len` request (vLLM's `check_enough_kv_cache_memory` refuses
the same). `CapacityRefused.what` names which.

Two arrangements of the window classes, because engines differ in how they allocate them:

  reserved   each class is a pool of its own with its own entry count (this engine's way, and
             ATOM's): no class needs another's page size, so none is padded.
  shared     every class draws pages from one pool, each class with its own block table (vLLM's
             hybrid allocator). One pool needs one page size, which vLLM reaches by its rule
             (`unify_kv_cache_spec_page_size` and `_get_kv_cache_groups_uniform_page_size` in
             `vllm/v1/core/kv_cache_planning.py`): rows are cut into groups of one layer count,
             the short group padded with empty layers; a smaller per-layer page whose size divides
             the largest takes a proportionally larger block instead, and any other is padded to
             it. The padding is reported, per class and per request.

The package stays a leaf: a class is told its rows and bytes (and the pools to carve, where
there are any) and never reads a runner or a config.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .reach import Reach
from .refusals import require_count


class CapacityRefused(ValueError):
    """A budget that cannot hold what the plan was asked for; `what` names it.

    `what` is `"state floor"`, `"window floor"` or `"max_model_len request"`.
    """

    def __init__(self, what: str, message: str) -> None:
        self.what = what
        super().__init__(message)


class WindowPages(enum.Enum):
    """How an engine allocates its window classes' blocks (see the module docstring)."""

    RESERVED = "reserved"
    SHARED = "shared"

    @classmethod
    def parse(cls, value: str | WindowPages) -> WindowPages:
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            raise ValueError(
                f"window pages {value!r} is not one of {[m.value for m in cls]}"
            ) from None


@dataclass(frozen=True)
class PagePart:
    """One pool's share of a page class: `rows` rows costing `entry_bytes` a scheduler block.

    `row_bytes` is the data one row holds a block, the per-layer page vLLM's rule unifies;
    `padding_bytes` is what of `entry_bytes` is alignment. `pool`, when there is one, is the
    declaration a carve can allocate at a count (a builder that allocates its own has none and
    is priced by its spec).
    """

    name: str
    rows: int
    entry_bytes: int
    row_bytes: int | None = None
    padding_bytes: int = 0
    pool: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        require_count(f"part {self.name!r} rows", self.rows, minimum=1)
        require_count(f"part {self.name!r} entry_bytes", self.entry_bytes, minimum=1, unit="bytes")

    def carved_bytes(self, entries: int) -> int:
        """Bytes the part's carve takes at `entries` entries: its pool's own answer, else the
        spec's `entries x entry_bytes`."""
        if self.pool is None:
            return entries * self.entry_bytes
        return self.pool.pool_bytes(entries)


@dataclass(frozen=True)
class PageClass:
    """Rows of one reach, across every PAGE pool that has some, priced per scheduler block."""

    reach: Reach
    parts: tuple[PagePart, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.reach, Reach):
            raise TypeError(f"PageClass reach must be a Reach, got {self.reach!r}")
        if not self.parts:
            raise ValueError(f"page class {self.reach} has no rows")

    @property
    def name(self) -> str:
        return str(self.reach)

    @property
    def rows(self) -> int:
        return sum(p.rows for p in self.parts)

    @property
    def page_bytes(self) -> int:
        return sum(p.entry_bytes for p in self.parts)

    @property
    def padding_bytes(self) -> int:
        return sum(p.padding_bytes for p in self.parts)


@dataclass(frozen=True)
class StateClass:
    """A STATE pool: `entry_bytes` a request slot."""

    name: str
    entry_bytes: int
    pool: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        require_count(f"state {self.name!r} entry_bytes", self.entry_bytes, minimum=1, unit="bytes")

    def carved_bytes(self, entries: int) -> int:
        if self.pool is None:
            return entries * self.entry_bytes
        return self.pool.pool_bytes(entries)


@dataclass(frozen=True)
class ClassPlan:
    """One class of the plan: what it buys and what that holds.

    `entries` is what the budget buys of it (blocks, pages or request slots), `bytes` their
    price, `per_request` what one `max_model_len` request holds of it, `requests` how many such
    requests its entries hold at once, and `tokens` how many tokens it holds across them (None
    for a STATE class, which holds one request's state whatever its length). `padding_bytes` is
    what of one entry is padding: field alignment, or under shared pages vLLM's padding.
    """

    name: str
    role: str
    reach: Reach | None
    rows: int
    entry_bytes: int
    entries: int
    bytes: int
    per_request: int
    requests: int
    tokens: int | None
    padding_bytes: int
    block_tokens: int | None = None


@dataclass(frozen=True)
class SharedGroup:
    """One class under shared pages, cut into vLLM's groups.

    `groups` block tables of `page_bytes // largest layer page` layers each hold the class's
    `layers` rows, `padding_layers` of the slots empty. A per-layer page that divides the largest
    fills it with a block of `block_tokens` tokens (`ratio` scheduler blocks); any other is padded
    by `layer_padding_bytes` a layer. A block of the class's tokens is one page in each of its
    groups: `block_bytes`, of which `padding_bytes` hold nothing.
    """

    reach: Reach
    layers: int
    layer_bytes: int
    groups: int
    padding_layers: int
    ratio: int
    block_tokens: int
    layer_padding_bytes: int
    page_bytes: int

    @property
    def block_bytes(self) -> int:
        return self.groups * self.page_bytes

    @property
    def data_bytes(self) -> int:
        return self.layers * self.layer_bytes * self.ratio

    @property
    def padding_bytes(self) -> int:
        return self.block_bytes - self.data_bytes


@dataclass(frozen=True)
class CapacityPlan:
    """What a budget holds: each class's entries, and the requests and tokens that fit."""

    budget: int
    max_model_len: int
    max_num_seqs: int
    block_tokens: int
    step_tokens: int
    pages: WindowPages
    classes: tuple[ClassPlan, ...]
    requests: int
    bound_by: str
    tokens: int | None
    used_bytes: int
    #: under shared pages: the one page size, and how many pages the budget buys.
    page_bytes: int | None = None
    page_count: int | None = None
    shared_groups: tuple[SharedGroup, ...] = ()

    @property
    def unused_bytes(self) -> int:
        return self.budget - self.used_bytes

    def by_name(self, name: str) -> ClassPlan:
        for c in self.classes:
            if c.name == name:
                return c
        raise KeyError(f"no class {name!r} in this plan; it has {[c.name for c in self.classes]}")


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _check_classes(page_classes: Sequence[PageClass], state_classes: Sequence[StateClass]):
    reaches = [c.reach for c in page_classes]
    if len(set(reaches)) != len(reaches):
        raise ValueError(f"page classes name a reach twice: {[str(r) for r in reaches]}")
    if sum(1 for r in reaches if r.is_full) > 1:  # pragma: no cover - reaches are unique
        raise ValueError("more than one full page class")
    if not page_classes and not state_classes:
        raise ValueError("a model with no PAGE and no STATE class holds nothing to plan")


def _state_floor(state_classes, s, budget) -> int:
    cost = sum(c.entry_bytes for c in state_classes) * s
    if cost > budget:
        names = ", ".join(f"{c.name} {c.entry_bytes} B" for c in state_classes)
        raise CapacityRefused(
            "state floor",
            f"the STATE floor does not fit: {s} request slots (--max-num-seqs) x ({names}) = "
            f"{cost} B, over the budget of {budget} B",
        )
    return cost


def plan_capacity(
    page_classes: Sequence[PageClass],
    state_classes: Sequence[StateClass] = (),
    *,
    budget: int,
    max_model_len: int,
    max_num_seqs: int,
    block_tokens: int,
    step_tokens: int | None = None,
    pages: str | WindowPages = WindowPages.RESERVED,
) -> CapacityPlan:
    """The capacity `budget` bytes buy for requests of up to `max_model_len` tokens.

    `block_tokens` is the scheduler block; `step_tokens` (default: one block) how many tokens a
    request writes in one step, which a window row holds on top of its window.
    """
    require_count("budget", budget, minimum=1, unit="bytes")
    require_count("max_model_len", max_model_len, minimum=1, unit="tokens")
    require_count("max_num_seqs", max_num_seqs, minimum=1, unit="request slots")
    require_count("block_tokens", block_tokens, minimum=1, unit="tokens")
    step = block_tokens if step_tokens is None else step_tokens
    require_count("step_tokens", step, minimum=1, unit="tokens")
    pages = WindowPages.parse(pages)
    for c in page_classes:
        if not isinstance(c, PageClass):
            raise TypeError(f"page classes are PageClass, got {c!r}")
    for c in state_classes:
        if not isinstance(c, StateClass):
            raise TypeError(f"state classes are StateClass, got {c!r}")
    _check_classes(page_classes, state_classes)
    args = (page_classes, state_classes, budget, max_model_len, max_num_seqs, block_tokens, step)
    if pages is WindowPages.SHARED and len(page_classes) > 1:
        return _plan_shared(*args)
    # One page class is one pool whichever way windows are arranged: nothing to unify.
    return _plan_reserved(*args, pages=pages)


def _state_plans(state_classes, s) -> list[ClassPlan]:
    return [
        ClassPlan(
            name=c.name,
            role="state",
            reach=None,
            rows=0,
            entry_bytes=c.entry_bytes,
            entries=s,
            bytes=s * c.entry_bytes,
            per_request=1,
            requests=s,
            tokens=None,
            padding_bytes=0,
        )
        for c in state_classes
    ]


def _refuse_request(n, need, have, unit, what_holds) -> None:
    raise CapacityRefused(
        "max_model_len request",
        f"one max_model_len request does not fit: {n} tokens need {need} {unit} of the full-reach "
        f"rows and {what_holds}",
    )


def _plan_reserved(page_classes, state_classes, budget, n, s, b, step, *, pages) -> CapacityPlan:
    state = _state_floor(state_classes, s, budget)
    classes = _state_plans(state_classes, s)
    full = [c for c in page_classes if c.reach.is_full]
    windows = [c for c in page_classes if not c.reach.is_full]
    window_cost = 0
    for c in windows:
        per = c.reach.blocks_held(n, b, step_tokens=step)
        entries = s * per
        cost = entries * c.page_bytes
        window_cost += cost
        classes.append(
            ClassPlan(
                name=c.name,
                role="window",
                reach=c.reach,
                rows=c.rows,
                entry_bytes=c.page_bytes,
                entries=entries,
                bytes=cost,
                per_request=per,
                requests=s,
                tokens=s * min(n, c.reach.tokens or n),
                padding_bytes=c.padding_bytes,
                block_tokens=b,
            )
        )
    if state + window_cost > budget:
        names = ", ".join(
            f"{c.name} {c.per_request} blocks x {c.entry_bytes} B"
            for c in classes
            if c.role == "window"
        )
        raise CapacityRefused(
            "window floor",
            f"the window floor does not fit: {s} request slots (--max-num-seqs) each hold "
            f"{names} = {window_cost} B, which with the STATE floor's {state} B is over the "
            f"budget of {budget} B",
        )
    used = state + window_cost
    tokens = None
    requests, bound_by = s, "max_num_seqs"
    if full:
        (c,) = full
        per = _cdiv(n, b)
        blocks = (budget - used) // c.page_bytes
        if blocks < per:
            _refuse_request(
                n,
                per,
                blocks,
                f"blocks of {c.page_bytes} B",
                f"the budget left after the floors ({budget - used} B) buys {blocks}",
            )
        held = blocks // per
        classes.append(
            ClassPlan(
                name=c.name,
                role="page",
                reach=c.reach,
                rows=c.rows,
                entry_bytes=c.page_bytes,
                entries=blocks,
                bytes=blocks * c.page_bytes,
                per_request=per,
                requests=held,
                tokens=blocks * b,
                padding_bytes=c.padding_bytes,
                block_tokens=b,
            )
        )
        used += blocks * c.page_bytes
        tokens = blocks * b
        if held < s:
            requests, bound_by = held, c.name
    return CapacityPlan(
        budget=budget,
        max_model_len=n,
        max_num_seqs=s,
        block_tokens=b,
        step_tokens=step,
        pages=pages,
        classes=tuple(classes),
        requests=requests,
        bound_by=bound_by,
        tokens=tokens,
        used_bytes=used,
    )


def unify_pages(page_classes: Sequence[PageClass], block_tokens: int) -> tuple[SharedGroup, ...]:
    """vLLM's rule for one page size over classes that share one pool (see the module docstring).

    Each class is one bucket of layers (its rows must hold one per-layer page: a part's
    `row_bytes`). The group size is the smallest bucket's layer count, or the largest's when
    that is under 1.5 times the smallest (vLLM's heuristic, so 12 window + 13 full layers pad
    to 13 + 13 rather than 12 + 24).
    """
    layer_bytes: dict[Reach, int] = {}
    for c in page_classes:
        sizes = {p.row_bytes for p in c.parts}
        if None in sizes or len(sizes) != 1:
            raise ValueError(
                f"page class {c.name} holds rows of per-layer pages {sorted(map(str, sizes))}; "
                "one page size is reached per layer, so its rows must share one"
            )
        layer_bytes[c.reach] = sizes.pop()
    largest = max(layer_bytes.values())
    counts = [c.rows for c in page_classes]
    group_size = min(counts)
    if max(counts) < 1.5 * min(counts):
        group_size = max(counts)
    out = []
    for c in page_classes:
        own = layer_bytes[c.reach]
        if largest % own == 0:
            ratio, pad = largest // own, 0
        else:
            ratio, pad = 1, largest - own
        groups = _cdiv(c.rows, group_size)
        out.append(
            SharedGroup(
                reach=c.reach,
                layers=c.rows,
                layer_bytes=own,
                groups=groups,
                padding_layers=groups * group_size - c.rows,
                ratio=ratio,
                block_tokens=block_tokens * ratio,
                layer_padding_bytes=pad,
                page_bytes=group_size * largest,
            )
        )
    return tuple(out)


def most_tokens(fits: Callable[[int], bool], upper: int) -> int:
    """The largest `L` in `1..upper` with `fits(L)`, 0 if none (`fits` grows false with L)."""
    if not fits(1):
        return 0
    lo, hi = 1, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _plan_shared(page_classes, state_classes, budget, n, s, b, step) -> CapacityPlan:
    state = _state_floor(state_classes, s, budget)
    classes = _state_plans(state_classes, s)
    groups = unify_pages(page_classes, b)
    page = groups[0].page_bytes
    pool_pages = (budget - state) // page
    blocks = {g.reach: g.reach.blocks_held(n, g.block_tokens, step_tokens=step) for g in groups}
    window = sum(g.groups * blocks[g.reach] for g in groups if not g.reach.is_full)
    if s * window > pool_pages:
        raise CapacityRefused(
            "window floor",
            f"the window floor does not fit: {s} request slots (--max-num-seqs) each hold {window}"
            f" pages of {page} B of the window groups ({s * window} pages), and the budget left "
            f"after the STATE floor ({budget - state} B) buys {pool_pages}",
        )
    need = sum(g.groups * blocks[g.reach] for g in groups)
    if need > pool_pages:
        _refuse_request(
            n,
            need - window,
            pool_pages - window,
            f"pages of {page} B",
            f"its {window} window pages; the pool holds {pool_pages} pages",
        )
    held = pool_pages // need
    requests, bound_by = (s, "max_num_seqs") if held >= s else (held, "shared pages")
    full_groups = [g for g in groups if g.reach.is_full]
    free_for_full = pool_pages - s * window

    def full_fits(length: int) -> bool:
        return sum(g.groups * _cdiv(length, g.block_tokens) for g in full_groups) <= free_for_full

    tokens = None
    if full_groups:
        tokens = most_tokens(full_fits, free_for_full * max(g.block_tokens for g in full_groups))
    for g in groups:
        classes.append(
            ClassPlan(
                name=str(g.reach),
                role="page" if g.reach.is_full else "window",
                reach=g.reach,
                rows=g.layers,
                entry_bytes=g.block_bytes,
                entries=requests * blocks[g.reach],
                bytes=requests * blocks[g.reach] * g.block_bytes,
                per_request=blocks[g.reach],
                requests=held,
                tokens=tokens if g.reach.is_full else s * min(n, g.reach.tokens or n),
                padding_bytes=g.padding_bytes,
                block_tokens=g.block_tokens,
            )
        )
    return CapacityPlan(
        budget=budget,
        max_model_len=n,
        max_num_seqs=s,
        block_tokens=b,
        step_tokens=step,
        pages=WindowPages.SHARED,
        classes=tuple(classes),
        requests=requests,
        bound_by=bound_by,
        tokens=tokens,
        used_bytes=state + pool_pages * page,
        page_bytes=page,
        page_count=pool_pages,
        shared_groups=groups,
    )


def carved_bytes(
    plan: CapacityPlan, page_classes: Sequence[PageClass], state_classes: Sequence[StateClass] = ()
) -> dict[str, int]:
    """Bytes each class's carve takes at the plan's counts, asked of the pools' own walks.

    Asking the pools is the point: a pool refuses, by name and before anything is allocated, a
    count whose row views pass 32-bit element offsets, and the bytes it answers are what the
    carve would take, not the plan's product. Under shared pages every class's rows are viewed
    over the one pool's `page_count` pages, `ratio` blocks a page, and the pool is one region.
    """
    out: dict[str, int] = {}
    for c in state_classes:
        out[c.name] = c.carved_bytes(plan.max_num_seqs)
    if plan.pages is WindowPages.SHARED and plan.shared_groups:
        by_reach = {g.reach: g for g in plan.shared_groups}
        for c in page_classes:
            blocks = plan.page_count * by_reach[c.reach].ratio
            for p in c.parts:
                p.carved_bytes(blocks)
        out["pages"] = plan.page_count * plan.page_bytes
        return out
    by_name = {c.name: c for c in plan.classes}
    for c in page_classes:
        entries = by_name[c.name].entries
        out[c.name] = sum(p.carved_bytes(entries) for p in c.parts)
    return out
