"""One function per runtime contract (``RUNTIME_CONTRACTS``), over a built :class:`ModelRunner`.

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
    "capacity-fits-carve",
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


def _own_buffers(runner: ModelRunner) -> dict[int, list[torch.Tensor]]:
    """Each storage a builder allocated itself, to the buffers it declares there (DeepSeek-V4
    declares two ranges of one allocation: the indexer's and the planes')."""
    out: dict[int, list[torch.Tensor]] = {}
    for b in runner.builders():
        for buf in b.own_buffers():
            out.setdefault(_storage_key(buf), []).append(buf)
    return out


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
            # The declared buffer holding the view's first byte is its bound.
            extents = [byte_extent(buf) for buf in own_bufs[key]]
            lo, hi = next(((a, b) for a, b in extents if a <= start < b), extents[0])
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
    together they are every data byte of every paged pool, each once -- a builder that allocates
    its own exporting exactly its PAGE charge from its own buffers. The STATE regions are one
    unit a request slot and cover every STATE byte once. A pool set that refuses transfer (a
    builder's reason on ``kv_transfer``) registers no region at all."""
    contract = "transfer-units"
    blocks = _require_initialized(runner, contract)
    transfer = runner.kv_transfer
    if transfer is None or transfer.num_blocks != blocks:
        _fail(
            contract,
            f"transfer num_blocks is {getattr(transfer, 'num_blocks', None)}, scheduler has {blocks}",
        )
    if transfer.refusal is not None:
        if transfer.regions or runner.state_transfer:
            _fail(contract, f"transfer is refused ({transfer.refusal}) yet registers regions")
        return
    own_bufs = _own_buffers(runner)
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
        key = _storage_key(t)
        if key != _storage_key(runner.paged_buf) and key not in own_bufs:
            _fail(
                contract,
                f"region {region.semantic_role!r} is part of neither the paged buffer nor a "
                "builder's own",
            )
        spans.append((key, *byte_extent(t), region.semantic_role))
    _refuse_overlaps(spans, contract)
    registered = sum(stop - start for _, start, stop, _ in spans)
    expected = _paged_data_bytes(runner, blocks, transfer)
    if registered != expected:
        _fail(contract, f"regions cover {registered} B; the paged pools hold {expected} B of data")
    _check_state_units(runner, contract)
    regions_of = [(_storage_key(r.tensor), *byte_extent(r.tensor)) for r in _all_regions(runner)]
    for module in runner.bound_modules():
        builder = runner.builder_of(module)
        if _allocates_own(runner, builder):
            # Its views are in no region of the paged buffer; each lies in one of its regions.
            for name, view in module.kv_views.items():
                key, (start, stop) = _storage_key(view), byte_extent(view)
                if not any(k == key and lo <= start and stop <= hi for k, lo, hi in regions_of):
                    _fail(contract, f"{module}.{name} spans bytes [{start}, {stop}), in no "
                          "transfer region of its builder")  # fmt: skip
            continue
        for name in module.kv_views:
            if name in STATE_VIEWS:
                continue
            role = builder.region_role_of(module, name)
            if role not in roles:
                _fail(contract, f"{module}.{name} reads from {role!r}, which no transfer registers")


def _all_regions(runner: ModelRunner) -> list[Any]:
    return [*runner.kv_transfer.regions, *(runner.state_transfer or [])]


def _refuse_overlaps(spans: list[tuple[int, int, int, str]], contract: str) -> None:
    """No two regions (storage, first byte, stop, role) share a byte of one storage."""
    spans.sort()
    for (ka, _, stop, a), (kb, start, _, b) in itertools.pairwise(spans):
        if ka == kb and start < stop:
            _fail(contract, f"regions {a!r} and {b!r} overlap")


def _paged_data_bytes(runner: ModelRunner, blocks: int, transfer: Any) -> int:
    """The data bytes the PAGE regions must cover: every paged pool's fields, and for a builder
    that allocates its own and exports, its whole PAGE charge (its envelopes and indexer blocks
    are all data to a transfer)."""
    total = 0
    for b in runner.builders():
        if _allocates_own(runner, b):
            if any(r.semantic_role.startswith(f"{b.name}.") for r in transfer.regions):
                total += b.paged_entry_bytes() * blocks
            continue
        total += sum(f.bytes for p in b.paged_pools.values() for g in p.field_groups for f in g) * (
            blocks
        )
    return total


def _check_state_units(runner: ModelRunner, contract: str) -> None:
    """Every STATE region is one unit a request slot, and together they cover each STATE pool's
    price times its slots, each byte once."""
    regions = runner.state_transfer or []
    entries = runner.state_entries or 0
    spans = []
    for region in regions:
        if region.units != entries:
            _fail(contract, f"STATE region {region.semantic_role!r} has {region.units} units; "
                  f"the pools hold {entries} request slots")  # fmt: skip
        # Unit by unit: a slot's state and its windows interleave at one stride, so the extents
        # of two regions meet while their units do not.
        key = _storage_key(region.tensor)
        spans += [(key, *region.byte_range(u), region.semantic_role) for u in range(region.units)]
    _refuse_overlaps(spans, contract)
    covered = sum(r.unit_data_bytes for r in regions) * entries
    priced = entries * sum(
        s.entry_bytes for s in runner.sub_pool_specs() if s.entry_class is EntryClass.STATE
    )
    if covered != priced:
        _fail(contract, f"STATE regions cover {covered} B of {entries} request slots; the STATE "
              f"pools are priced {priced} B for them")  # fmt: skip


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


def check_write_readback(runner: ModelRunner, *, seed: int = 0) -> None:
    """Through every bound module, one token each: written through each paged and indexer view,
    it sits at the slot the scheduler's block table gives it (``block_ids[t // block] x block +
    t % block``; a draft addresses with the target builder's), inside ``block_ids[t // block]``
    of that view's transfer region, reads back identically, and a draft's write reads back
    identically through a reader holding the target builder's block tables. Once every module of
    a builder has written its token, each token still reads back and no other byte of the paged
    buffer moved. Then one request slot written through every STATE view: each reads back, and
    no byte outside that request's entry moved.

    ``seed`` (default 0) draws each token's position and shuffles each builder's block table, so
    a failure reproduces by running the check again with the same seed. Every byte written is
    cleared first, so a second run over the same runner is the same check, never a false alarm.
    """
    contract = "write-readback"
    blocks = _require_initialized(runner, contract)
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    regions = _region_by_role(runner)
    sched = runner.engine.scheduler_block_size
    target = runner.builder
    # One snapshot a builder, not one a write: every module is walked, and comparing a pool of
    # tens of MiB after each write would cost a full compare per module.
    snapshot = torch.empty_like(runner.paged_buf)
    for builder in runner.builders():
        walked = [m for m in runner.bound_modules() if runner.builder_of(m) is builder]
        block_ids = list(range(blocks))
        rng.shuffle(block_ids)
        snapshot.copy_(runner.paged_buf)
        tokens = []
        for module in walked:
            t = rng.randrange(blocks * sched)
            tokens += _write_paged(runner, builder, target, module, block_ids, t, regions, gen, contract)  # fmt: skip
        _nothing_else_moved(runner, builder, snapshot, tokens, contract)
        stateful = [m for m in walked if any(n in STATE_VIEWS for n in m.kv_views)]
        if stateful:
            _write_state(builder, stateful, rng, contract)


def _write_paged(runner, builder, target, module, block_ids, t, regions, gen, contract) -> list:
    """Write token ``t`` through the module's paged and indexer views and check where it went;
    returns ``(module, view name, t, the token's view, what it must hold)`` per view written."""
    sched = runner.engine.scheduler_block_size
    paged = {n: v for n, v in module.kv_views.items() if n in PAGED_VIEWS}
    index = {n: v for n, v in module.kv_views.items() if n in INDEX_VIEWS}
    if not paged and not index:
        return []
    layout = builder.layout
    unit = block_ids[t // sched]
    slot = unit * sched + t % sched
    answered = builder.slot_mapping(block_ids, [t])[0]
    if answered != slot:
        # A slot inside the right block but at another token passes every byte range: a kernel
        # would read another token's K/V in its place.
        _fail(contract, f"builder {builder.name!r} maps token {t} to slot {answered}; block {unit} "
              f"of the scheduler's block table puts it at slot {slot}")  # fmt: skip
    for n, v in {**paged, **index}.items():
        if _storage_key(v) != _storage_key(runner.paged_buf):
            _fail(contract, f"{module}.{n} is not a view of the paged buffer: a write through it "
                  "reaches no transfer region")  # fmt: skip
        _check_kernel_block(
            module, n, v, layout, _view_geometry(builder, module, n, v)[0], contract
        )
        try:
            token = token_at(n, v, layout, slot)
        except ValueError as exc:  # a slot the view does not hold: a violation, not a traceback
            _fail(
                contract, f"{module}.{n}: token {t} (slot {slot}) is not in the bound view: {exc}"
            )
        token.zero_()
    values = {
        n: _random_value(n, token_at(n, v, layout, slot), gen)
        for n, v in paged.items()
        if n in ("k_cache", "v_cache", "kv_cache")
    }
    written = store_token(paged, layout, slot, values)
    for n, v in index.items():
        written[n] = _random_value(n, token_at(n, v, layout, slot), gen).to(v.dtype)
        token_at(n, v, layout, slot).copy_(written[n])
    out = []
    for n in written:
        role = builder.region_role_of(module, n)
        lo, hi = regions[role].byte_range(unit)
        token = token_at(n, module.kv_views[n], layout, slot)
        tok_lo, tok_hi = byte_extent(token)
        if not lo <= tok_lo < tok_hi <= hi:
            _fail(contract, f"{module}.{n} token {t} at bytes [{tok_lo}, {tok_hi}) is outside block "
                  f"{unit} of region {role!r} [{lo}, {hi})")  # fmt: skip
        back = load_token(module.kv_views, layout, slot, [n])[n]
        if not _same_bytes(back, written[n]):
            _fail(contract, f"{module}.{n} token {t} reads back different bytes than were written")
        if module.is_draft and n in PAGED_VIEWS and builder is not target:
            reader = reblock(n, module.kv_views[n], layout, target.block_size)
            if not _same_bytes(token_at(n, reader, layout, slot), written[n]):
                _fail(contract, f"draft {module}.{n} token {t}: read with the target builder's "
                      f"{target.block_size}-token block, the verifier sees other bytes")  # fmt: skip
        out.append((module, n, t, token, written[n]))
    # Every written byte was zero before the write: a token still all zero was never written.
    if all(_same_bytes(token, torch.zeros_like(token)) for *_, token, _ in out):
        _fail(contract, f"{module}: writing token {t} changed no byte of the paged buffer")
    return out


def _check_kernel_block(module, name: str, view: torch.Tensor, layout: str, block: int, contract):
    """A kernel takes the block size off the bound view's shape: it must be the builder's."""
    kernel_block = block_size_of(name, view, layout)
    if kernel_block != block:
        _fail(contract, f"{module}.{name}: a kernel reads a {kernel_block}-token block off the "
              f"bound view's shape {tuple(view.shape)}; the builder pages at {block}")  # fmt: skip


def _nothing_else_moved(runner, builder, snapshot, tokens, contract) -> None:
    """After every module of ``builder`` wrote its token: each token still holds what was
    written (no later write reached it), and the paged buffer differs from ``snapshot`` only in
    the bytes of those tokens."""
    buf = runner.paged_buf
    base = buf.storage_offset()  # a uint8 buffer: its offset is in bytes
    for module, n, t, token, value in tokens:
        if not _same_bytes(token, value):
            _fail(contract, f"{module}.{n} token {t} reads back other bytes once every module of "
                  f"builder {builder.name!r} has written a token: another write reached it")  # fmt: skip
        at = byte_positions(token) - base
        snapshot[at] = buf[at]
    if not torch.equal(buf, snapshot):
        moved = (buf != snapshot).nonzero().view(-1)
        modules = len({m.prefix for m, *_ in tokens})
        _fail(contract, f"writing one token through each of the {modules} modules of builder "
              f"{builder.name!r} changed bytes {int(moved[0])} to {int(moved[-1])} of the paged "
              "buffer, which none of those tokens holds")  # fmt: skip


def byte_positions(t: torch.Tensor) -> torch.Tensor:
    """Every byte ``t`` reaches, as offsets into its storage (from shape, stride and offset)."""
    at = torch.tensor(t.storage_offset())
    for size, stride in zip(t.shape, t.stride(), strict=True):
        at = at.unsqueeze(-1) + torch.arange(size) * stride
    itemsize = t.element_size()
    return (at.reshape(-1, 1) * itemsize + torch.arange(itemsize)).reshape(-1)


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


def _write_state(builder, modules, rng, contract) -> None:
    """One request slot written through every STATE view of ``modules``, each view its own
    value, so a view bound to another's rows reads the other's value back."""
    views = next(iter(builder.state_views.values()))
    slot = rng.randrange(views.entries)
    state = [(m, n, v) for m in modules for n, v in m.kv_views.items() if n in STATE_VIEWS]
    for _, _, v in state:
        v[slot].zero_()  # every byte written is cleared first: a write must change one
    snapshot = views.arena.buf.clone()
    # Each view its own small integer (exact in every state dtype up to 256): a fill costs a
    # memset, where random values for a hybrid's tens of MiB of state a request cost seconds.
    for k, (_, _, v) in enumerate(state):
        v[slot].fill_(1 + k)
    for k, (module, n, v) in enumerate(state):
        if not _same_bytes(v[slot], torch.full_like(v[slot], 1 + k)):
            _fail(contract, f"{module}.{n} request slot {slot} reads back different bytes")
    lo, hi = byte_extent(views.entry(slot))
    buf_lo = views.arena.buf.storage_offset()
    where = _changed_outside(views.arena.buf, snapshot, [(lo - buf_lo, hi - buf_lo)])
    if where == "nothing":
        _fail(contract, f"writing request slot {slot} through {len(state)} STATE views changed "
              "no byte of its arena")  # fmt: skip
    if where is not None:
        _fail(
            contract,
            f"a state write for slot {slot} changed {where}, not only entry({slot})",
        )


# -- 6b. element order ------------------------------------------------------------------------
#
# A byte count, an offset and a block range all agree when a view reads the right bytes in the
# wrong order: ROCm/ATOM's Eagle3 draft builder, before its KV-pool refactor, bound V
# non-transposed where every other reader took it 5-D. So the element order is checked element by element: a distinct code per (block, token, head, dim,
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


def check_element_readback(runner: ModelRunner, *, importing: ModelRunner | None = None) -> None:
    """Every element written through every bound module's views is read back as that element by
    every reader.

    ``importing``, when given, is a runner that imported ``runner``'s own buffer (no copy), so
    its views read what this runner's writes left. Every module with a view of documented or
    declared order is walked: an element-order bug confined to one layer (one transposed view) is
    invisible to a sample of modules that skips that layer. The first module of each kind of
    layer (each set of view names: a dense, a compressed and an indexer-owning layer bind
    different views) is read in full -- the backend blocks of the first and the last scheduler
    block, in each the tokens of ``_sample``, all heads and dims -- and every other module at the
    ends of each: the first and the last of those backend blocks, and their first and last token,
    all heads and dims (a declared order: both ends of every axis). Writing every element of
    every layer would cost the property suite twice its time, and a view bound one block over, to
    another row or transposed shows at either end.
    """
    contract = "write-readback"
    blocks = _require_initialized(runner, contract)
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
        firsts: dict[tuple[str, ...], Any] = {}
        for m in walked:
            firsts.setdefault(tuple(sorted(m.kv_views)), m)
        for module in walked:
            full = module in firsts.values()
            if own:
                _declared_readback(builder, module, full=full)
            else:
                _element_readback(
                    runner, builder, target, module, units, regions, imported.get(module.prefix),
                    full=full,
                )  # fmt: skip


def _sample(n: int) -> torch.Tensor:
    """All of ``range(n)`` up to 32, else the first and last 16 and every 8th between."""
    if n <= 32:
        return torch.arange(n)
    return torch.cat([torch.arange(16), torch.arange(16, n - 16, 8), torch.arange(n - 16, n)])


def _ends(n: int) -> torch.Tensor:
    """The first and the last of ``range(n)`` (one index when ``n`` is 1)."""
    return torch.tensor(sorted({0, n - 1}))


def element_codes(
    slots: torch.Tensor, *, heads: int, dim: int, fields: int, field: int
) -> torch.Tensor:
    """The code ``_element_readback`` writes for each ``(slot, head, dim)`` of field ``field`` of
    ``fields``, shaped ``(len(slots), heads, dim)``: 1 + the element's row-major index in
    (token, head, dim), times ``fields``, plus ``field``. Distinct across the fields, so a K read
    from V's bytes finds V's codes; never 0, so a byte nothing wrote names no element.
    :func:`element_named` reads one back."""
    element = (slots.view(-1, 1, 1) * heads + torch.arange(heads).view(-1, 1)) * dim
    return 1 + (element + torch.arange(dim)) * fields + field


def element_named(code: int, *, block: int, heads: int, dim: int, names: list[str]) -> str:
    """The element and view ``code`` (:func:`element_codes`' codes of ``names``) was written as,
    or that no element was: what a reader found, in a failure message."""
    if code < 1:
        return f"{code}, which no element was written as"
    element, field = divmod(code - 1, len(names))
    slot, rest = divmod(element, heads * dim)
    head, d = divmod(rest, dim)
    return f"element (block {slot // block}, token {slot % block}, head {head}, dim {d}) of {names[field]}"  # fmt: skip


def _rebuilt(passes: list, reader: int) -> torch.Tensor:
    """The codes reader ``reader`` found, from its digit of every pass (least significant first),
    each read as the unsigned number its bits are."""
    code = 0
    for k, (_, gots) in enumerate(passes):
        bits = 8 * gots[reader].element_size()
        code = code + (gots[reader].to(torch.int64) % (1 << bits) << (bits * k))
    return code


def _first(differs: torch.Tensor) -> tuple[int, ...]:
    """The index of the first True, in row-major order."""
    return tuple(differs.nonzero()[0].tolist())


def _element_readback(runner, builder, target, module, units, regions, twin, *, full) -> None:
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
        _check_kernel_block(module, n, view, layout, block, contract)
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
        if not full:
            bks, toks = bks[_ends(len(bks))], _ends(block)
        slots = (bks.view(-1, 1) * block + toks).reshape(-1)
        codes = element_codes(slots, heads=heads, dim=dim, fields=len(names), field=field_id).view(
            len(bks), len(toks), heads, dim
        )
        offsets = documented_offsets(
            n, layout, block=block, heads=heads, dim=dim, itemsize=itemsize
        )[toks]
        region = regions[builder.region_role_of(module, n)].tensor.reshape(-1)
        block_bytes = block * heads * dim * itemsize
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
        who = ["the transfer region", *(w for w, _ in readers)]

        passes = []  # each pass's digits, and what every reader found
        for digit in _digits(codes, itemsize, int_dtype):
            store_tokens(n, as_int, layout, slots, digit.reshape(len(slots), *token_shape))
            reads = [load_tokens(n, r, layout, slots).reshape(digit.shape) for _, r in readers]
            passes.append((digit, [region[byte_at].view(int_dtype).squeeze(-1), *reads]))
        if all(torch.equal(got, digit) for digit, gots in passes for got in gots):
            continue
        # A reader found another element: its codes, rebuilt from every pass's digits, name it.
        for j, reader in enumerate(who):
            got = _rebuilt(passes, j)
            if torch.equal(got, codes):
                continue
            i = _first(got != codes)
            there = element_named(int(got[i]), block=block, heads=heads, dim=dim, names=names)
            element = f"element (block {int(bks[i[0]])}, token {int(toks[i[1]])}, head {i[2]}, dim {i[3]})"  # fmt: skip
            if j == 0:
                _fail(contract, f"{module}.{n}: {element} written through the bound view is not "
                      f"where the {layout} layout puts it in its transfer region; {there} is "
                      "there -- the same bytes read in another element order")  # fmt: skip
            _fail(contract, f"{module}.{n}: {element} written through the bound view reads back "
                  f"through {reader} as {there}")  # fmt: skip


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


def declared_codes(index: list[torch.Tensor], shape: tuple[int, ...], *, fields: int, field: int):
    """The code ``_declared_readback`` writes at each ``index`` (one tensor per axis of
    ``shape``) of field ``field`` of ``fields``: 1 + the element's row-major index in ``shape``,
    times ``fields``, plus ``field`` -- distinct across fields, never 0."""
    flat = torch.zeros((), dtype=torch.int64)
    for i, size in zip(index, shape, strict=True):
        flat = flat * size + i
    return 1 + flat * fields + field


def declared_named(code: int, *, shape: tuple[int, ...], axes: tuple[str, ...], names: list[str]):
    """The element and view ``code`` (:func:`declared_codes`' codes of ``names``) was written as,
    or that no element was."""
    if code < 1:
        return f"{code}, which no element was written as"
    flat, field = divmod(code - 1, len(names))
    where = torch.unravel_index(torch.tensor(flat), shape)
    coords = ", ".join(f"{a} {int(i)}" for a, i in zip(axes, where, strict=True))
    return f"element ({coords}) of {names[field]}"


def _declared_readback(builder, module, *, full) -> None:
    """Element readback for a builder that allocates its own: a distinct code per element of
    each view, written through the module's bound view, must be found in the builder's own
    buffer at the byte its :class:`~atom.pool_layout.ElementOrder` declares, and read back
    through the view. Sampled per axis: ``_sample`` when ``full``, else both ends."""
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
        picks = [(_sample if full else _ends)(size) for size in order.shape]
        index = torch.meshgrid(*picks, indexing="ij")
        sampled = tuple(len(p) for p in picks)
        byte_at = order.address(*index).expand(sampled).unsqueeze(-1) + torch.arange(itemsize)
        lo, hi = int(byte_at.min()), int(byte_at.max())
        if lo < 0 or hi >= buf.numel():
            _fail(contract, f"{module}.{n}: its declared element order reaches bytes [{lo}, {hi}] "
                  f"of a {buf.numel()} B own buffer")  # fmt: skip
        codes = declared_codes(index, order.shape, fields=len(names), field=field_id)

        passes = []  # each pass's digits, and what the declared bytes and the view hold
        for digit in _digits(codes, itemsize, int_dtype):
            as_int[index] = digit
            passes.append((digit, [buf[byte_at].view(int_dtype).squeeze(-1), as_int[index]]))
        if all(torch.equal(got, digit) for digit, gots in passes for got in gots):
            continue
        # Another element was found: its codes, rebuilt from every pass's digits, name it.
        for j in range(len(passes[0][1])):  # the declared bytes, then the view
            got = _rebuilt(passes, j)
            if torch.equal(got, codes):
                continue
            i = _first(got != codes)
            where = ", ".join(f"{a} {int(index[k][i])}" for k, a in enumerate(order.axes))
            there = declared_named(int(got[i]), shape=order.shape, axes=order.axes, names=names)
            if j == 0:
                _fail(contract, f"{module}.{n}: element ({where}) written through the bound view "
                      f"is not where its declared element order puts it; {there} is there -- the "
                      "same bytes read in another element order")  # fmt: skip
            _fail(contract, f"{module}.{n}: element ({where}) written through the bound view reads "
                  f"back through it as {there}")  # fmt: skip


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
    """Each bad input is refused with ValueError/TypeError naming it, before anything is backed.

    The inputs, each wrong in one way only: on the P/D decode side a model with a STATE pool
    (refused naming the pool, with nothing backed), else a buffer one byte short of the pool's
    price (naming its size) and one of exactly the price at storage offset 1 (naming the
    offset); a layer-major arena of one entry of one filled field -- 16 fp32 scores, 64 B, fill
    -inf -- on an imported 256-byte buffer, which it fits (naming the field); an empty
    layer-major group of one entry (naming ``[]``); a draft builder with no modules (naming the
    draft); and ``blocks + 1`` scheduler blocks set on the built runner's transfer (naming its
    first region) -- or, where no region was registered, every builder allocating its own.
    """
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
    check_element_readback(runner, importing=shared)
    check_refusals(make_runner, blocks, built=runner)
    return runner
