"""One function per runtime contract (BRIEF section 4), over a built :class:`ModelRunner`.

Each check reads the engine's own answers -- the specs, the plan, the walk, the bound views,
the transfer regions -- and compares them with a second, independent reading of the same bytes:
byte ranges computed from a view's shape, stride and storage offset; rows counted from the
modules; token addresses from the reference store op. A check that read only one answer would
assert that the code agrees with itself.

Every failure is a :class:`ContractViolation` (an ``AssertionError``, so pytest renders it as a
failed assertion) naming the contract, the module or region, and the two numbers that disagree.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Hashable, Iterable
from typing import Any

import torch

from atom.kernels.reference_store import (
    INDEX_VIEWS,
    PAGED_VIEWS,
    STATE_VIEWS,
    block_size_of,
    load_token,
    load_tokens,
    reblock,
    store_token,
    store_tokens,
    token_at,
)
from atom.pool_layout import EntryClass
from atom.runner.model_runner import ModelRunner

RUNTIME_CONTRACTS = (
    "price-equals-carve",
    "rows-from-walk",
    "bind-parity",
    "disjoint-in-bounds",
    "transfer-units",
    "write-readback",
    "refusal-by-name",
)


class ContractViolation(AssertionError):
    def __init__(self, contract: str, message: str) -> None:
        if contract not in RUNTIME_CONTRACTS:
            raise ValueError(f"unknown runtime contract {contract!r}")
        self.contract = contract
        super().__init__(f"[{contract}] {message}")


def _fail(contract: str, message: str) -> None:
    raise ContractViolation(contract, message)


def _require_initialized(runner: ModelRunner, contract: str) -> int:
    if runner.blocks is None or runner.paged_buf is None:
        _fail(
            contract, "the runner has not carved its paged pool (call initialize or import first)"
        )
    return runner.blocks


def byte_extent(t: torch.Tensor) -> tuple[int, int]:
    """``[start, stop)`` bytes of ``t`` within its storage, from shape, stride and offset alone."""
    itemsize = t.element_size()
    start = t.storage_offset() * itemsize
    if t.numel() == 0:
        return start, start
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride(), strict=True))
    return start, start + (last + 1) * itemsize


def _storage_key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


# -- 1. price == carve -------------------------------------------------------------------------


def check_price_equals_carve(runner: ModelRunner) -> None:
    """Each builder's region is its PAGE charge; each pool's arenas take exactly its price."""
    contract = "price-equals-carve"
    blocks = _require_initialized(runner, contract)
    plan = runner.paged_plan(blocks)
    charged_total = 0
    own_total = 0
    for builder in runner.builders():
        charge = builder.paged_entry_bytes() * blocks
        nbytes = builder.paged_pool_bytes(blocks)
        if nbytes == 0:
            # Allocates its own (DeepSeek-V4): no region of the paged buffer, so what it holds
            # must be exactly what it was priced at, PAGE per block and STATE per request.
            own_total += charge
            _check_own_allocation(builder, charge, contract)
            continue
        if nbytes != charge:
            _fail(
                contract,
                f"builder {builder.name!r} asks {nbytes} B; its PAGE specs charge {charge}",
            )
        if plan[builder.name].nbytes != charge:
            _fail(
                contract,
                f"builder {builder.name!r} region is {plan[builder.name].nbytes} B, charged {charge}",
            )
        charged_total += charge
        for name, pool in builder.paged_pools.items():
            views = builder.paged_views[name]
            taken = sum(buf.numel() for buf in views.buffers)
            priced = pool.spec(name).entry_bytes * blocks
            if taken != priced:
                _fail(
                    contract, f"pool {builder.name}.{name} arenas hold {taken} B, priced {priced}"
                )
            data = sum(f.bytes for g in pool.field_groups for f in g) * blocks
            if data + pool.padding_bytes * blocks != priced:
                _fail(
                    contract,
                    f"pool {builder.name}.{name}: data {data} B + padding != price {priced}",
                )
    page_price = runner.entry_bytes().get(EntryClass.PAGE, 0)
    if page_price * blocks != charged_total + own_total:
        _fail(
            contract,
            f"PAGE entry_bytes {page_price} x {blocks} blocks != builders' charges "
            f"{charged_total} + {own_total} allocated by their own builders",
        )
    total = runner.paged_buf.numel()
    slack = plan.align * max(len(plan.regions) - 1, 0)
    if not charged_total <= total <= charged_total + slack:
        _fail(
            contract,
            f"paged buffer is {total} B for {charged_total} B of charges (+{slack} alignment)",
        )
    for builder in runner.builders():
        for name, pool in builder.state_pools.items():
            views = builder.state_views[name]
            priced = pool.spec(name).entry_bytes * views.entries
            if views.arena.buf.numel() != priced:
                _fail(
                    contract,
                    f"STATE pool {name} holds {views.arena.buf.numel()} B, priced {priced}",
                )


def _check_own_allocation(builder: Any, page_charge: int, contract: str) -> None:
    """A builder that allocates its own holds exactly its PAGE charge plus its STATE price times
    the requests it was allocated for -- nothing rounded, nothing left out."""
    held = sum(b.numel() * b.element_size() for b in builder.own_buffers())
    state_price = sum(
        s.entry_bytes for s in builder.sub_pool_specs() if s.entry_class is EntryClass.STATE
    )
    entries = getattr(builder, "entries", None) or 0
    if page_charge and not held:
        _fail(contract, f"builder {builder.name!r} charges {page_charge} B of PAGE and holds none")
    if held != page_charge + state_price * entries:
        _fail(
            contract,
            f"builder {builder.name!r} allocates its own and holds {held} B; PAGE {page_charge} B "
            f"+ STATE {state_price} B x {entries} requests = {page_charge + state_price * entries}",
        )


def _own_buffers(runner: ModelRunner) -> dict[int, torch.Tensor]:
    return {_storage_key(buf): buf for b in runner.builders() for buf in b.own_buffers()}


def _allocates_own(runner: ModelRunner, builder: Any) -> bool:
    return runner.blocks is not None and builder.paged_pool_bytes(runner.blocks) == 0


# -- 2. rows from the walk ---------------------------------------------------------------------


def check_rows_from_walk(runner: ModelRunner) -> None:
    """Rows are positions in the walk, counts are module counts, and a module the walk did not
    visit gets a ``KeyError`` naming it -- never the next row."""
    contract = "rows-from-walk"
    for builder in runner.builders():
        walked = runner._pooled_modules() if builder is runner.builder else runner.draft_modules
        expected: dict[Hashable, list[Any]] = {}
        for module in walked:
            for kind in builder.row_kinds(module):
                expected.setdefault(kind, []).append(module)
        counts = builder.pool_rows.counts()
        if {str(k): n for k, n in counts.items()} != {str(k): len(v) for k, v in expected.items()}:
            _fail(contract, f"builder {builder.name!r} counts {counts}; its modules number "
                  f"{ {str(k): len(v) for k, v in expected.items()} }")  # fmt: skip
        for kind, modules in expected.items():
            for position, module in enumerate(modules):
                row = builder.pool_rows[kind][module]
                if row != position:
                    _fail(
                        contract,
                        f"{module} has {kind} row {row}; it is module {position} of that kind",
                    )
        for name, pool in builder.paged_pools.items():
            # A pool is named for its row kind (str(KvGeometry), "mla"); its main fields' rows
            # are what it was built with, and must be what the walk counted.
            walked_rows = {n for k, n in counts.items() if str(k) == name}
            built_rows = {
                f.rows for g in pool.field_groups for f in g if f.name in ("k", "v", "kv")
            }
            if walked_rows and built_rows != walked_rows:
                _fail(contract, f"pool {builder.name}.{name} was built with {built_rows} rows; "
                      f"the walk counted {walked_rows}")  # fmt: skip
    # A module that exists but was not walked: a fresh twin of the first bound module.
    modules = runner.bound_modules()
    if not modules:
        _fail(contract, "no module was bound")
    twin = _twin(modules[0])
    builder = runner.builder_of(modules[0])
    try:
        builder.build_kv_cache_tensor(twin)
    except KeyError as exc:
        if twin.prefix not in str(exc):
            _fail(contract, f"KeyError for an unwalked module does not name it: {exc}")
    else:
        _fail(contract, f"builder {builder.name!r} bound {twin}, which its walk never visited")


def _twin(module: Any) -> Any:
    import dataclasses

    return dataclasses.replace(module, prefix=f"{module.prefix}.unwalked_twin", kv_views={})


# -- 3. bind parity ----------------------------------------------------------------------------


def _view_signature(view: torch.Tensor, base: torch.Tensor) -> tuple:
    offset_bytes = view.storage_offset() * view.element_size() - base.storage_offset()
    return tuple(view.shape), view.stride(), view.dtype, offset_bytes


def check_bind_parity(allocating: ModelRunner, importing: ModelRunner) -> None:
    """The allocating path and the P/D import path bind identical views, module by module."""
    contract = "bind-parity"
    _require_initialized(allocating, contract)
    _require_initialized(importing, contract)
    a_mods, b_mods = allocating.bound_modules(), importing.bound_modules()
    if [m.prefix for m in a_mods] != [m.prefix for m in b_mods]:
        _fail(contract, "the two paths bound different module lists")
    b_storage = _storage_key(importing.paged_buf)
    for a, b in zip(a_mods, b_mods, strict=True):
        if set(a.kv_views) != set(b.kv_views):
            _fail(contract, f"{a}: views {sorted(a.kv_views)} vs {sorted(b.kv_views)}")
        for name in a.kv_views:
            sa = _view_signature(a.kv_views[name], allocating.paged_buf)
            sb = _view_signature(b.kv_views[name], importing.paged_buf)
            if sa != sb:
                _fail(
                    contract,
                    f"{a}.{name}: allocating (shape, stride, dtype, offset) {sa} vs import {sb}",
                )
            if _storage_key(b.kv_views[name]) != b_storage:
                _fail(
                    contract, f"{b}.{name} on the import side is not a view of the imported buffer"
                )


# -- 4. disjoint and in bounds -----------------------------------------------------------------


def _all_views(runner: ModelRunner) -> Iterable[tuple[Any, str, torch.Tensor]]:
    for module in runner.bound_modules():
        for name, view in module.kv_views.items():
            yield module, name, view


def check_disjoint_in_bounds(runner: ModelRunner) -> None:
    """No byte is reachable through two bound views; each view lies inside its builder's region
    (a paged view) or its STATE arena."""
    contract = "disjoint-in-bounds"
    blocks = _require_initialized(runner, contract)
    plan = runner.paged_plan(blocks)
    base = runner.paged_buf.storage_offset()
    paged_key = _storage_key(runner.paged_buf)
    state_bufs = {
        _storage_key(v.arena.buf): v.arena.buf
        for b in runner.builders()
        for v in b.state_views.values()
    }
    own_bufs = _own_buffers(runner)
    runs: dict[int, list[tuple[int, int, str]]] = {}
    for module, name, view in _all_views(runner):
        key = _storage_key(view)
        start, stop = byte_extent(view)
        if key in own_bufs:
            lo, hi = byte_extent(own_bufs[key])
        elif key == paged_key:
            region = plan[runner.builder_of(module).name]
            lo, hi = base + region.offset, base + region.stop
        elif key in state_bufs:
            lo, hi = byte_extent(state_bufs[key])
        else:
            _fail(
                contract, f"{module}.{name} is a view of neither the paged buffer nor a STATE arena"
            )
        if not lo <= start <= stop <= hi:
            _fail(
                contract,
                f"{module}.{name} spans bytes [{start}, {stop}); its region is [{lo}, {hi})",
            )
        label = f"{module}.{name}"
        runs.setdefault(key, []).extend((a, b, label) for a, b in byte_runs(view))
    for spans in runs.values():
        spans.sort()
        reach, owner = -1, ""
        for start, stop, label in spans:
            if start < reach:
                _fail(
                    contract,
                    f"bytes [{start}, {min(stop, reach)}) are reachable through {owner} and {label}",
                )
            if stop > reach:
                reach, owner = stop, label


def byte_runs(t: torch.Tensor, *, limit: int = 1 << 16) -> list[tuple[int, int]]:
    """The contiguous byte runs ``t`` reaches: its dense innermost dims are one run, repeated over
    the leading dims. An entry-strided STATE row is one run per entry; a paged view is one run."""
    itemsize = t.element_size()
    shape, stride = list(t.shape), list(t.stride())
    dense, k = 1, len(shape)
    while k > 0 and (shape[k - 1] == 1 or stride[k - 1] == dense):
        dense *= shape[k - 1]
        k -= 1
    lead = shape[:k]
    if math.prod(lead) > limit:
        raise ValueError(
            f"a view of shape {tuple(shape)} has {math.prod(lead)} runs; too many to list"
        )
    starts = [t.storage_offset()]
    for size, step in zip(lead, stride[:k], strict=True):
        starts = [s + i * step for s in starts for i in range(size)]
    run = dense * itemsize
    return [(s * itemsize, s * itemsize + run) for s in starts]


# -- 5. transfer units -------------------------------------------------------------------------


def check_transfer_units(runner: ModelRunner) -> None:
    """Every region is ``blocks`` units, ``stride(0)`` the bytes a block owns, roles unique, and
    together they are every data byte of every paged pool, each once."""
    contract = "transfer-units"
    blocks = _require_initialized(runner, contract)
    transfer = runner.kv_transfer
    if transfer is None or transfer.num_blocks != blocks:
        _fail(
            contract,
            f"transfer num_blocks is {getattr(transfer, 'num_blocks', None)}, scheduler has {blocks}",
        )
    roles: set[str] = set()
    spans = []
    for region in transfer.regions:
        t = region.tensor
        if not region.semantic_role or region.semantic_role in roles:
            _fail(contract, f"semantic_role {region.semantic_role!r} is empty or repeated")
        roles.add(region.semantic_role)
        if t.shape[0] != blocks:
            _fail(
                contract,
                f"region {region.semantic_role!r} has {t.shape[0]} units, scheduler {blocks}",
            )
        owned = t.numel() * t.element_size() // blocks
        if region.unit_bytes != owned or not t.is_contiguous():
            _fail(
                contract,
                f"region {region.semantic_role!r} stride(0) is {region.unit_bytes} B; a block owns {owned}",
            )
        if _storage_key(t) != _storage_key(runner.paged_buf):
            _fail(contract, f"region {region.semantic_role!r} is not part of the paged buffer")
        spans.append((*byte_extent(t), region.semantic_role))
    spans.sort()
    for (_, stop, a), (start, _, b) in itertools.pairwise(spans):
        if start < stop:
            _fail(contract, f"regions {a!r} and {b!r} overlap")
    data = (
        sum(
            f.bytes
            for b in runner.builders()
            for p in b.paged_pools.values()
            for g in p.field_groups
            for f in g
        )
        * blocks
    )
    registered = sum(stop - start for start, stop, _ in spans)
    if registered != data:
        _fail(contract, f"regions cover {registered} B; the paged pools hold {data} B of data")
    for module in runner.bound_modules():
        builder = runner.builder_of(module)
        if _allocates_own(runner, builder):
            continue  # nothing of the runner's paged buffer: no region of it to register
        for name in module.kv_views:
            if name in STATE_VIEWS:
                continue
            role = builder.region_role_of(module, name)
            if role not in roles:
                _fail(contract, f"{module}.{name} reads from {role!r}, which no transfer registers")


# -- 6. write-readback -------------------------------------------------------------------------


def _region_by_role(runner: ModelRunner) -> dict[str, Any]:
    return {r.semantic_role: r for r in runner.kv_transfer.regions}


def _random_value(view_name: str, token: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    value = torch.randn(token.shape, generator=gen, dtype=torch.float32)
    if view_name in ("index_scale",):
        value = value.abs() + 0.5
    return value + 0.25 * torch.sign(value)  # no exact zeros: a written byte must differ


def _same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    def raw(t: torch.Tensor) -> torch.Tensor:
        # A fresh dense copy: .contiguous() keeps a size-1 dim's odd stride, which view() refuses.
        return torch.empty(t.numel(), dtype=t.dtype).copy_(t.reshape(-1)).view(torch.uint8)

    return torch.equal(raw(a), raw(b))


def check_write_readback(
    runner: ModelRunner, *, seed: int = 0, modules_per_builder: int = 3, tokens: int = 2
) -> None:
    """A token written through a bound view lands in ``block_ids[t // block]`` of that view's
    transfer region and nowhere else, reads back identically, and a draft's write is read back
    identically by a reader holding the target builder's block tables."""
    contract = "write-readback"
    blocks = _require_initialized(runner, contract)
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    regions = _region_by_role(runner)
    sched = runner.engine.scheduler_block_size
    target = runner.builder
    for builder in runner.builders():
        walked = [m for m in runner.bound_modules() if runner.builder_of(m) is builder]
        # The first and last module (a stage's edges, a draft after the target), then a sample.
        ends = [walked[0], walked[-1]] if len(walked) > 1 else walked[:1]
        middle = walked[1:-1]
        extra = rng.sample(middle, min(len(middle), max(0, modules_per_builder - 2)))
        chosen = [*ends, *extra][:modules_per_builder]
        for module in chosen:
            block_ids = list(range(blocks))
            rng.shuffle(block_ids)
            for _ in range(tokens):
                t = rng.randrange(blocks * sched)
                _write_paged(runner, builder, target, module, block_ids, t, regions, gen, contract)
        # One STATE write per builder: a request's state is tens of MiB on a big hybrid, and
        # the snapshot that proves nothing else moved costs as much again.
        stateful = [m for m in walked if any(n in STATE_VIEWS for n in m.kv_views)]
        if stateful:
            _write_state(builder, rng.choice(stateful), rng, gen, contract)


def _write_paged(runner, builder, target, module, block_ids, t, regions, gen, contract) -> None:
    sched = runner.engine.scheduler_block_size
    paged = {n: v for n, v in module.kv_views.items() if n in PAGED_VIEWS}
    index = {n: v for n, v in module.kv_views.items() if n in INDEX_VIEWS}
    if not paged and not index:
        return
    # The draft addresses with the target builder's slot mapping: it has no metadata of its own.
    slot = builder.slot_mapping(block_ids, [t])[0]
    layout = builder.layout
    unit = block_ids[t // sched]
    snapshot = runner.paged_buf.clone()
    values = {
        n: _random_value(n, token_at(n, v, layout, slot), gen)
        for n, v in paged.items()
        if n in ("k_cache", "v_cache", "kv_cache")
    }
    written = store_token(paged, layout, slot, values)
    index_slot = unit * sched + t % sched
    for n, v in index.items():
        written[n] = _random_value(n, token_at(n, v, layout, index_slot), gen).to(v.dtype)
        token_at(n, v, layout, index_slot).copy_(written[n])
    allowed = []
    for n in written:
        role = builder.region_role_of(module, n)
        region = regions[role]
        lo, hi = region.byte_range(unit)
        allowed.append((lo, hi))
        s = index_slot if n in INDEX_VIEWS else slot
        if _storage_key(module.kv_views[n]) != _storage_key(runner.paged_buf):
            _fail(contract, f"{module}.{n} is not a view of the paged buffer: a write through it "
                  "reaches no transfer region")  # fmt: skip
        tok_lo, tok_hi = byte_extent(token_at(n, module.kv_views[n], layout, s))
        if not lo <= tok_lo < tok_hi <= hi:
            _fail(contract, f"{module}.{n} token {t} at bytes [{tok_lo}, {tok_hi}) is outside block "
                  f"{unit} of region {role!r} [{lo}, {hi})")  # fmt: skip
        back = load_token(module.kv_views, layout, s, [n])[n]
        if not _same_bytes(back, written[n]):
            _fail(contract, f"{module}.{n} token {t} reads back different bytes than were written")
        if module.is_draft and n in PAGED_VIEWS and builder is not target:
            reader = reblock(n, module.kv_views[n], layout, target.block_size)
            if not _same_bytes(token_at(n, reader, layout, slot), written[n]):
                _fail(contract, f"draft {module}.{n} token {t}: read with the target builder's "
                      f"{target.block_size}-token block, the verifier sees other bytes")  # fmt: skip
    base = runner.paged_buf.storage_offset()
    where = _changed_outside(
        runner.paged_buf, snapshot, [(lo - base, hi - base) for lo, hi in allowed]
    )
    if where == "nothing":
        _fail(contract, f"{module}: writing token {t} changed no byte of the paged buffer")
    if where is not None:
        _fail(
            contract,
            f"{module}: writing token {t} changed bytes {where}, outside block {unit} of its regions",
        )


def _changed_outside(buf: torch.Tensor, snapshot: torch.Tensor, allowed: list[tuple[int, int]]):
    """None when every changed byte lies in ``allowed``; "nothing" when no byte changed; else the
    first ``[start, stop)`` gap that changed. Compares gaps whole instead of listing changed bytes,
    which on a pool of tens of MiB is the difference between a memcmp and a nonzero()."""
    spans = sorted(allowed)
    cursor, touched = 0, False
    for lo, hi in [*spans, (buf.numel(), buf.numel())]:
        if lo > cursor and not torch.equal(buf[cursor:lo], snapshot[cursor:lo]):
            return f"[{cursor}, {lo})"
        if hi > lo and not torch.equal(buf[lo:hi], snapshot[lo:hi]):
            touched = True
        cursor = max(cursor, hi)
    return None if touched else "nothing"


def _write_state(builder, module, rng, gen, contract) -> None:
    state = {n: v for n, v in module.kv_views.items() if n in STATE_VIEWS}
    if not state:
        return
    views = next(iter(builder.state_views.values()))
    slot = rng.randrange(views.entries)
    snapshot = views.arena.buf.clone()
    for n, v in state.items():
        value = _random_value(n, v[slot], gen).to(v.dtype)
        v[slot].copy_(value)
        if not _same_bytes(v[slot], value):
            _fail(contract, f"{module}.{n} request slot {slot} reads back different bytes")
    lo, hi = byte_extent(views.entry(slot))
    buf_lo = views.arena.buf.storage_offset()
    where = _changed_outside(views.arena.buf, snapshot, [(lo - buf_lo, hi - buf_lo)])
    if where is not None:
        _fail(
            contract,
            f"{module}: a state write for slot {slot} changed {where}, not only entry({slot})",
        )


# -- 6b. element order ------------------------------------------------------------------------
#
# A byte count, an offset and a block range all agree when a view reads the right bytes in the
# wrong order: the record's V bound non-transposed where every other reader took it 5-D. So the
# element order is checked element by element: a distinct code per (block, token, head, dim,
# field) is written through the module's bound view with the reference store's indexing, and
# read back through every other reader of those bytes -- the transfer region at the offsets the
# documented layout gives (reference_store's table, written out below from the module's own
# declarations, never read off a view), the import side's view, and a draft's verifier.

#: Integer dtypes that reinterpret an element of each itemsize without changing a bit.
_INT_OF_ITEMSIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def documented_offsets(
    name: str, layout: str, *, block: int, heads: int, dim: int, itemsize: int
) -> torch.Tensor:
    """Element offsets inside one block of view ``name``, indexed ``[token, head, dim]``.

    The layouts of ``atom.kernels.reference_store`` (``x = 16 // itemsize``)::

        NHD K/V, MLA kv, indexer   (block, heads, dim)
        SHUFFLE K                  (heads, dim // x, block, x)
        SHUFFLE V                  (heads, block // x, dim, x)
        k_scale / v_scale          (heads, block)
    """
    if name not in PAGED_VIEWS and name not in INDEX_VIEWS:
        raise ValueError(f"view {name!r} has no documented element order")
    t = torch.arange(block).view(-1, 1, 1)
    h = torch.arange(heads).view(1, -1, 1)
    d = torch.arange(dim).view(1, 1, -1)
    x = 16 // itemsize
    if name in ("k_scale", "v_scale"):
        return h * block + t + 0 * d
    if name in ("kv_cache", *INDEX_VIEWS) or layout == "nhd":
        return (t * heads + h) * dim + d
    if name == "k_cache":
        return ((h * (dim // x) + d // x) * block + t) * x + d % x
    return ((h * (block // x) + t // x) * dim + d) * x + t % x  # v_cache


def documented_token_shape(name: str, layout: str, *, heads: int, dim: int, itemsize: int):
    """The shape a kernel indexes one token of view ``name`` in (heads first, then dims)."""
    if name in ("k_scale", "v_scale"):
        return (heads,)
    if name == "index_scale":
        return ()
    if name in ("kv_cache", "index_cache"):
        return (dim,)
    if layout == "shuffle" and name == "k_cache":
        x = 16 // itemsize
        return (heads, dim // x, x)
    return (heads, dim)


def _view_geometry(builder, module, name: str, view: torch.Tensor) -> tuple[int, int, int, int]:
    """``(tokens a block, heads, dim, blocks)`` of view ``name`` from the declarations: the
    module's heads and head dims, the builder's block, the pool field's row width -- never the
    view's own shape, which is what is under test."""
    _, pool_name, field_name = builder.view_home(module, name)
    field = next(
        f for g in builder.paged_pools[pool_name].field_groups for f in g if f.name == field_name
    )
    if name == "index_cache":
        # (tokens, dim) per entry (MLA's indexer), or (backend blocks, tokens, dim) per entry
        # (MiniMax-M3's, paged at the backend block): whatever leads the last two is blocks.
        *lead, tokens, dim = field.shape
        return tokens, 1, dim, builder.blocks * math.prod(lead)
    if name == "index_scale":
        *lead, tokens = field.shape
        return tokens, 1, 1, builder.blocks * math.prod(lead)
    if name == "kv_cache":
        return builder.block_size, 1, field.shape[-1], builder.num_blocks
    heads = module.num_kv_heads
    if name in ("k_scale", "v_scale"):
        return builder.block_size, heads, 1, builder.num_blocks
    dim = module.head_dim if name == "k_cache" else module.v_head_dim
    return builder.block_size, heads, dim, builder.num_blocks


def check_element_readback(
    runner: ModelRunner,
    *,
    importing: ModelRunner | None = None,
    modules_per_builder: int = 2,
    seed: int = 0,
) -> None:
    """Every element written through a bound view is read back as that element by every reader.

    ``importing``, when given, is a runner that imported ``runner``'s own buffer (no copy), so
    its views read what this runner's writes left. Blocks written: every backend block of the
    first and the last scheduler block, all tokens, heads and dims of each.
    """
    contract = "write-readback"
    blocks = _require_initialized(runner, contract)
    rng = random.Random(seed)
    regions = _region_by_role(runner)
    units = sorted({0, blocks - 1})
    imported = {m.prefix: m for m in importing.bound_modules()} if importing is not None else {}
    target = runner.builder
    for builder in runner.builders():
        own = _allocates_own(runner, builder)
        bound = [m for m in runner.bound_modules() if runner.builder_of(m) is builder]
        if own:
            # Its views are in no region: each is read at the order the builder declares.
            walked = [m for m in bound if m.kv_views]
        else:
            walked = [m for m in bound if any(n in PAGED_VIEWS or n in INDEX_VIEWS for n in m.kv_views)]  # fmt: skip
        if not walked:
            # A readback that walks nothing proves nothing: never green by default.
            _fail(contract, f"builder {builder.name!r} binds {len(bound)} modules and none has a "
                  "view with a documented element order: the element readback would walk nothing")  # fmt: skip
        # The first module of each set of view names (so every kind of layer is walked -- a
        # dense, a compressed and an indexer-owning layer bind different views), then a sample.
        firsts: dict[tuple[str, ...], Any] = {}
        for m in walked:
            firsts.setdefault(tuple(sorted(m.kv_views)), m)
        chosen = list(firsts.values())
        rest = [m for m in walked if m not in chosen]
        chosen += rng.sample(rest, min(len(rest), max(0, modules_per_builder - len(chosen))))
        for module in chosen:
            if own:
                _declared_readback(builder, module)
            else:
                _element_readback(
                    runner, builder, target, module, units, regions, imported.get(module.prefix)
                )


def _sample(n: int) -> torch.Tensor:
    """All of ``range(n)`` up to 32, else the first and last 16 and every 8th between."""
    if n <= 32:
        return torch.arange(n)
    return torch.cat([torch.arange(16), torch.arange(16, n - 16, 8), torch.arange(n - 16, n)])


def _element_readback(runner, builder, target, module, units, regions, twin) -> None:
    contract = "write-readback"
    layout = builder.layout
    unknown = sorted(set(module.kv_views) - {*PAGED_VIEWS, *INDEX_VIEWS, *STATE_VIEWS})
    if unknown:
        # A view this check cannot order would pass unread: say so instead of staying green.
        _fail(contract, f"{module} binds views {unknown} with no documented element order; "
              "declare their layout in atom.kernels.reference_store and documented_offsets")  # fmt: skip
    names = [n for n in module.kv_views if n in PAGED_VIEWS or n in INDEX_VIEWS]
    for field_id, n in enumerate(names):
        view = module.kv_views[n]
        block, heads, dim, nblocks = _view_geometry(builder, module, n, view)
        itemsize = view.element_size()
        int_dtype = _INT_OF_ITEMSIZE[itemsize]
        as_int = view.view(int_dtype)
        kernel_block = block_size_of(n, view, layout)
        if kernel_block != block:
            _fail(contract, f"{module}.{n}: a kernel reads a {kernel_block}-token block off the "
                  f"bound view's shape {tuple(view.shape)}; the builder pages at {block}")  # fmt: skip
        token_shape = documented_token_shape(n, layout, heads=heads, dim=dim, itemsize=itemsize)
        first = token_at(n, as_int, layout, 0)
        if tuple(first.shape) != token_shape:
            _fail(contract, f"{module}.{n}: one token of the bound view has shape "
                  f"{tuple(first.shape)}; a kernel indexes it as {token_shape} (heads, dims)")  # fmt: skip
        # The backend blocks of the first and the last scheduler block, and in each the tokens
        # of `_sample`: whole SHUFFLE vectors (x <= 16) at both ends and a stride between -- a
        # bigger block costs time and reaches no other arithmetic.
        # A one-token block (MLA) is sampled the same way across a unit's backend blocks.
        per_unit = nblocks // runner.blocks
        bks = torch.cat([u * per_unit + _sample(per_unit) for u in units])
        toks = _sample(block)
        slots = (bks.view(-1, 1) * block + toks).reshape(-1)
        size = heads * dim
        # One code per (block, token, head, dim), interleaved with the field's id so that two
        # fields' codes never coincide: a K read from V's bytes finds V's codes.
        codes = ((slots.view(-1, 1) * size + torch.arange(size)) * len(names) + field_id).view(
            len(bks), len(toks), heads, dim
        )
        offsets = documented_offsets(
            n, layout, block=block, heads=heads, dim=dim, itemsize=itemsize
        )[toks]
        region = regions[builder.region_role_of(module, n)].tensor.reshape(-1)
        block_bytes = block * size * itemsize
        byte_at = (bks.view(-1, 1, 1, 1) * block_bytes + offsets.unsqueeze(0) * itemsize).unsqueeze(
            -1
        ) + torch.arange(itemsize)
        if int(byte_at.max()) >= region.numel():
            _fail(contract, f"{module}.{n}: its documented layout reaches byte {int(byte_at.max())} "
                  f"of a {region.numel()} B transfer region")  # fmt: skip
        readers = [("its own view", as_int)]
        if twin is not None and n in twin.kv_views:
            readers.append(("the import side's view", twin.kv_views[n].view(int_dtype)))
        if module.is_draft and builder is not target and n in PAGED_VIEWS:
            readers.append(
                ("the verifier's reblocked view", reblock(n, as_int, layout, target.block_size))
            )
        for digit in _digits(codes, itemsize, int_dtype):
            store_tokens(n, as_int, layout, slots, digit.reshape(len(slots), *token_shape))
            got = region[byte_at].view(int_dtype).squeeze(-1)
            if not torch.equal(got, digit):
                bad = (got != digit).nonzero()[0].tolist()
                b, t, h, d = bks[bad[0]].item(), toks[bad[1]].item(), *bad[2:]
                _fail(contract, f"{module}.{n}: element (block {b}, token {t}, head {h}, dim {d}) "
                      f"written through the bound view is not where the {layout} layout puts it "
                      "in its transfer region -- the same bytes read in another element order")  # fmt: skip
            for who, reader in readers:
                back = load_tokens(n, reader, layout, slots).reshape(digit.shape)
                if not torch.equal(back, digit):
                    bad = (back != digit).nonzero()[0].tolist()
                    _fail(contract, f"{module}.{n}: token {toks[bad[1]].item()} of block {bks[bad[0]].item()} "
                          f"written through the bound view reads back other elements through {who}")  # fmt: skip


def _digits(codes: torch.Tensor, itemsize: int, int_dtype: torch.dtype):
    """``codes`` as base-2**(8 x itemsize) digits of ``int_dtype``, least significant first: an
    element holds itemsize bytes, so a wider code is written in passes, and every code is
    distinct across them."""
    base = 1 << (8 * itemsize)
    passes = 1
    while base**passes <= int(codes.max()):
        passes += 1
    for k in range(passes):
        digit = (codes // base**k) % base
        if int_dtype is not torch.uint8:
            digit = (digit + base // 2) % base - base // 2  # into the signed range
        yield digit.to(int_dtype)


def _declared_readback(builder, module) -> None:
    """Element readback for a builder that allocates its own: a distinct code per element of
    each view, written through the module's bound view, must be found in the builder's own
    buffer at the byte its :class:`~atom.pool_layout.ElementOrder` declares, and read back
    through the view. Sampled per axis (``_sample``): both ends of every axis and a stride."""
    contract = "write-readback"
    orders = builder.element_orders(module)
    undeclared = sorted(set(module.kv_views) - set(orders))
    if undeclared:
        _fail(contract, f"{module} binds views {undeclared} with no declared element order; "
              f"builder {builder.name!r} allocates its own and must declare each in element_orders")  # fmt: skip
    buffers = builder.own_buffers()
    names = sorted(module.kv_views)
    for field_id, n in enumerate(names):
        view, order = module.kv_views[n], orders[n]
        if tuple(view.shape) != order.shape:
            _fail(contract, f"{module}.{n}: the bound view has shape {tuple(view.shape)}; its "
                  f"declared element order indexes {dict(zip(order.axes, order.shape, strict=True))}")  # fmt: skip
        if view.dtype != order.dtype:
            _fail(contract, f"{module}.{n}: the bound view is {view.dtype}; declared {order.dtype}")
        if not 0 <= order.buffer < len(buffers):
            _fail(contract, f"{module}.{n}: declared in own buffer {order.buffer}; builder "
                  f"{builder.name!r} holds {len(buffers)}")  # fmt: skip
        buf = buffers[order.buffer].reshape(-1)
        if _storage_key(view) != _storage_key(buf):
            _fail(contract, f"{module}.{n} is not a view of the own buffer {order.buffer} its "
                  "element order is declared in")  # fmt: skip
        itemsize = view.element_size()
        int_dtype = _INT_OF_ITEMSIZE[itemsize]
        as_int = view.view(int_dtype)
        picks = [_sample(size) for size in order.shape]
        index = torch.meshgrid(*picks, indexing="ij")
        byte_at = order.address(*index)
        byte_at = byte_at.expand(index[0].shape).unsqueeze(-1) + torch.arange(itemsize)
        lo, hi = int(byte_at.min()), int(byte_at.max())
        if lo < 0 or hi >= buf.numel():
            _fail(contract, f"{module}.{n}: its declared element order reaches bytes [{lo}, {hi}] "
                  f"of a {buf.numel()} B own buffer")  # fmt: skip
        # One code per element, interleaved with the view's id so two views never coincide.
        flat = torch.zeros((), dtype=torch.int64)
        for i, size in zip(index, order.shape, strict=True):
            flat = flat * size + i
        codes = flat * len(names) + field_id
        for digit in _digits(codes, itemsize, int_dtype):
            as_int[index] = digit
            got = buf[byte_at].view(int_dtype).squeeze(-1)
            if not torch.equal(got, digit):
                bad = (got != digit).nonzero()[0]
                where = ", ".join(
                    f"{a} {int(index[k][tuple(bad)])}" for k, a in enumerate(order.axes)
                )
                _fail(contract, f"{module}.{n}: element ({where}) written through the bound view "
                      "is not where its declared element order puts it -- the same bytes read "
                      "in another element order")  # fmt: skip
            if not torch.equal(as_int[index], digit):
                _fail(contract, f"{module}.{n}: elements written through the bound view read back "
                      "as others through it")  # fmt: skip


# -- 7. refusal by name ------------------------------------------------------------------------


def _expect_refusal(
    contract: str, what: str, needle: str, fn: Callable[[], Any], types=(ValueError, TypeError)
) -> None:
    try:
        fn()
    except types as exc:
        if needle not in str(exc):
            _fail(contract, f"{what}: refused, but the message does not name {needle!r}: {exc}")
        return
    _fail(contract, f"{what}: accepted")


def check_refusals(
    make_runner: Callable[[], ModelRunner], blocks: int, *, built: ModelRunner | None = None
) -> None:
    """Each bad input is refused with ValueError/TypeError naming it, before anything is backed."""
    contract = "refusal-by-name"
    from atom.backends.mha import AiterBackend
    from atom.pool_layout import EntryField, LayerMajorArena
    from atom.spec_decode.draft_kv_builder import DraftKvBuilder

    runner = make_runner()
    state = runner._state_pool_names()
    total = runner.paged_pool_bytes(blocks)
    if state:
        fresh = make_runner()
        _expect_refusal(
            contract, "a STATE pool on the P/D decode side", state[0],
            lambda: fresh.import_paged_pool(torch.zeros(total, dtype=torch.uint8), blocks),
        )  # fmt: skip
        if fresh.paged_buf is not None or any(b.paged_views for b in fresh.builders()):
            _fail(contract, "the STATE refusal came after part of the pool was backed")
    else:
        short = total - 1
        _expect_refusal(
            contract, "a short imported buffer", str(short),
            lambda: make_runner().import_paged_pool(torch.zeros(short, dtype=torch.uint8), blocks),
        )  # fmt: skip
        _expect_refusal(
            contract, "a misaligned imported buffer", "storage offset 1",
            lambda: make_runner().import_paged_pool(torch.zeros(total + 1, dtype=torch.uint8)[1:], blocks),
        )  # fmt: skip
    # A fill on an imported buffer, and an empty layer-major group.
    scores = EntryField("index_scores", 1, (16,), torch.float32, fill=float("-inf"))
    _expect_refusal(
        contract, "a fill on an imported buffer", "index_scores",
        lambda: LayerMajorArena([scores], 1, buf=torch.zeros(256, dtype=torch.uint8)),
    )  # fmt: skip
    _expect_refusal(contract, "an empty layer-major group", "[]", lambda: LayerMajorArena([], 1))
    # A draft with no rows.
    empty = DraftKvBuilder(
        name="empty-draft", draft_config=runner.text_config, draft_modules=[],
        draft_backend=AiterBackend, target_builder=runner.builder, kv_dtype=runner.engine.kv_torch_dtype,
    )  # fmt: skip
    _expect_refusal(contract, "a draft with no rows", "empty-draft", lambda: empty.kv_pool)
    # A block count the regions do not divide into.
    if built is None:
        built = make_runner().initialize(blocks)
    if not built.kv_transfer.regions:
        # Only a builder that allocates its own registers none of the paged buffer.
        if not all(_allocates_own(built, b) for b in built.builders()):
            _fail(contract, "no transfer region was registered for a pool in the paged buffer")
        return
    role = built.kv_transfer.regions[0].semantic_role
    _expect_refusal(
        contract,
        "a transfer at the wrong block count",
        role,
        lambda: built.kv_transfer.set_block_count(blocks + 1),
    )


def check_all(make_runner: Callable[[], ModelRunner], blocks: int, *, seed: int = 0) -> ModelRunner:
    """Every contract on one case: allocate, import (where the model allows), check, release."""
    runner = make_runner().initialize(blocks)
    check_price_equals_carve(runner)
    check_rows_from_walk(runner)
    check_disjoint_in_bounds(runner)
    check_transfer_units(runner)
    if not runner._state_pool_names():
        importing = make_runner().import_paged_pool(runner.paged_buf.clone(), blocks)
        check_bind_parity(runner, importing)
        importing.release()
    check_write_readback(runner, seed=seed)
    shared = None
    if not runner._state_pool_names():
        shared = make_runner().import_paged_pool(runner.paged_buf, blocks)
    check_element_readback(runner, importing=shared, seed=seed)
    check_refusals(make_runner, blocks, built=runner)
    return runner
