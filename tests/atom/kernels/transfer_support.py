"""Round trips of whole blocks between two pools of one model, read back through every view.

Shared by the CPU suite (the torch reference) and the GPU suite (the Triton kernel, device and
pinned host staging). A round trip builds the exporting runner (a prefill pool), writes random
bytes through every view bound to every module -- so each element holds its own value, fp8 and
scales included -- builds a fresh importing runner of the same model whose whole buffer holds
other random bytes, gathers some blocks out of the first and scatters them into *other* block ids
of the second, then reads every consumer's view of the second back against the first, element by
element, bit for bit. A block the transfer did not address must keep the importing side's bytes,
checked against byte ranges read off ``kv_transfer`` (not the region set's own table). STATE pools
move the same way, by request slot (``state_transfer``). A view is read by request slot when it
starts in a STATE region and by scheduler block otherwise -- DeepSeek-V4's windows and compressor
state are slot views of the same buffer as its compressed history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from atom.engine_config import EngineConfig
from atom.kernels.block_transfer import KernelConfig, RegionSet, StagedBlocks
from atom.models.registry import load_model_config
from atom.pool_layout import EntryClass
from atom.pool_layout.transfer import TransferRegion
from atom.runner.model_runner import ModelRunner
from atom.runner.pd_transfer import storages, unit_kinds
from contracts.runtime.strategies import DRAFT_PAIRS, case_names, default_case

#: Scheduler blocks in each pool (the round trip moves three of them, one stays put) and the
#: paged bytes a case may take: the block count is lowered to fit, never the model skipped.
BLOCKS = 4
MAX_PAGED_BYTES = 24 << 20
STATE_ENTRIES = 3
TP_SIZES = (8, 4, 2, 1)
#: (exported ids, imported ids): different ids on the two ends, one block left unaddressed.
SOURCE_IDS = [3, 0, 2]
DEST_IDS = [1, 3, 0]
SOURCE_SLOTS = [2, 0]
DEST_SLOTS = [1, 2]

#: Engine settings every model runs the round trip at: both MHA layouts (SHUFFLE's 5-D V, and
#: NHD) and fp8 with its scale planes. An MLA or linear model ignores the MHA backend; every model
#: but DeepSeek-V4 ignores the indexer dtype, and V4 moves with an fp8 indexer only (an FP4 one
#: refuses transfer by name).
SETTINGS = {
    "bf16-shuffle": dict(kv_dtype="bf16", mha_backend="aiter", index_cache_dtype="fp8"),
    "fp8-shuffle": dict(kv_dtype="fp8", mha_backend="aiter", index_cache_dtype="fp8"),
    "bf16-nhd": dict(kv_dtype="bf16", mha_backend="triton", index_cache_dtype="fp8"),
}


def every_case() -> list[str]:
    """The registry, read now (models are files; a new one is a new case), and the draft pairs."""
    return case_names()


def settings_of(name: str) -> list[str]:
    """The settings that give ``name`` a different pool: an MLA or linear model binds the same
    views under either MHA backend, so it runs each dtype once."""
    seen, out = set(), []
    for setting in SETTINGS:
        runner = Case(name, setting).runner()
        key = (runner.engine.kv_dtype, tuple(b.layout for b in runner.builders()))
        if key not in seen:
            seen.add(key)
            out.append(setting)
    return out


@dataclass
class Case:
    """A model (or target + draft pair) at one setting, at the widest tensor parallelism it
    builds at: a rank's share has every field and layout the model has, at a fraction of the
    bytes (a hybrid's request state is hundreds of MiB at tp 1)."""

    name: str
    setting: str
    tp_size: int | None = None

    def _build(self, tp_size: int) -> ModelRunner:
        target, draft = DRAFT_PAIRS.get(self.name, (self.name, None))
        # The scheduler block the property suite's default case settles on: the engine's 16,
        # or the smallest a model that pages wider accepts (MiniMax-M3 pages at 128).
        block = default_case(self.name).engine.scheduler_block_size
        return ModelRunner(
            load_model_config(target),
            EngineConfig(
                tp_size=tp_size,
                scheduler_block_size=block,
                state_entries=STATE_ENTRIES,
                **SETTINGS[self.setting],
            ),
            draft_config=load_model_config(draft) if draft else None,
        )

    def runner(self) -> ModelRunner:
        if self.tp_size is not None:
            return self._build(self.tp_size)
        for tp in TP_SIZES:
            try:
                runner = self._build(tp)
            except (ValueError, TypeError):
                continue
            self.tp_size = tp
            return runner
        raise ValueError(f"{self.name} builds at no tp in {TP_SIZES}")

    def blocks(self) -> int:
        # What one block costs wherever it lives: DeepSeek-V4 takes no region of the paged
        # buffer but is priced per block all the same.
        runner = self.runner()
        per_block = max(runner.paged_pool_bytes(1), runner.entry_bytes().get(EntryClass.PAGE, 0))
        return max(len(SOURCE_IDS) + 1, min(BLOCKS, MAX_PAGED_BYTES // per_block))


def raw(t: torch.Tensor) -> torch.Tensor:
    """``t``'s bytes, element by element (a dense copy, so any strided view compares)."""
    return (
        t.contiguous().reshape(-1).view(torch.uint8)
        if t.numel()
        else t.new_empty(0, dtype=torch.uint8)
    )


def random_bytes(shape, gen: torch.Generator, device) -> torch.Tensor:
    return torch.randint(0, 256, tuple(shape), generator=gen, dtype=torch.uint8, device=device)


def write_every_view(runner: ModelRunner, gen: torch.Generator) -> int:
    """Random bytes through every view bound to every module; the number of views written."""
    written = 0
    for module in runner.bound_modules():
        for view in module.kv_views.values():
            as_bytes = view.view(torch.uint8)
            as_bytes.copy_(random_bytes(as_bytes.shape, gen, view.device))
            written += 1
    return written


def per_block(view: torch.Tensor, blocks: int) -> torch.Tensor:
    """A paged view indexed by scheduler block: ``(blocks, backend blocks in one, ...)``."""
    if view.shape[0] % blocks:
        raise AssertionError(f"a view of {view.shape[0]} units is not {blocks} whole blocks")
    return view.unflatten(0, (blocks, view.shape[0] // blocks))


def page_buffer(runner: ModelRunner) -> torch.Tensor:
    """The whole storage the PAGE regions live in, flat uint8: the runner's paged buffer, or the
    buffer a builder that allocates its own (DeepSeek-V4) made."""
    return storages(runner)[runner.kv_transfer.regions[0].tensor.untyped_storage().data_ptr()]


Mover = Callable[[RegionSet, RegionSet, list[int], list[int]], StagedBlocks]


def move(impl: str, *, via_host: bool = False, kernel: KernelConfig | None = None) -> Mover:
    def run(src: RegionSet, dst: RegionSet, src_ids, dst_ids) -> StagedBlocks:
        staged = src.gather(src_ids, impl=impl, kernel=kernel)
        if via_host:
            staged = staged.to_host()
            if staged.data.device.type != "cpu":
                raise AssertionError("an offload left the staged blocks on the device")
        dst.scatter(staged, dst_ids, impl=impl, kernel=kernel)
        return staged

    return run


def untouched_outside(
    buf: torch.Tensor, before: torch.Tensor, regions: list[TransferRegion], units: list[int]
) -> None:
    """Every byte of ``buf`` outside units ``units`` of ``regions`` equals ``before``."""
    moved = torch.zeros(buf.numel(), dtype=torch.bool, device=buf.device)
    base = buf.storage_offset()
    for region in regions:
        for u in units:
            lo, hi = region.byte_range(u)
            moved[lo - base : hi - base] = True
    changed = (buf != before) & ~moved
    if bool(changed.any()):
        first = int(changed.nonzero()[0])
        raise AssertionError(
            f"byte {first} of the importing buffer changed outside the moved blocks"
        )


def round_trip(case: Case, *, device: str, mover: Mover, seed: int = 0) -> dict[str, int]:
    """Export, import, read every view back; what was compared, by kind."""
    blocks = case.blocks()
    gen = torch.Generator(device=device).manual_seed(seed)
    src = case.runner().initialize(blocks, state_entries=STATE_ENTRIES, device=device)
    dst = case.runner().initialize(blocks, state_entries=STATE_ENTRIES, device=device)
    write_every_view(src, gen)
    for buf in storages(dst).values():  # the paged buffer, a builder's own, the state pools
        buf.copy_(random_bytes(buf.shape, gen, device))
    pages = page_buffer(dst)
    before = pages.clone()
    src_set, dst_set = RegionSet(src.kv_transfer), RegionSet(dst.kv_transfer)
    slot_of = unit_kinds(dst)
    state_before = {m.prefix: {n: v.clone() for n, v in m.kv_views.items() if slot_of(v) == "slot"}
                    for m in dst.bound_modules()}  # fmt: skip
    mover(src_set, dst_set, SOURCE_IDS, DEST_IDS)
    # A slot in the same storage (V4's planes) is outside every moved block: it must not change.
    untouched_outside(pages, before, dst.kv_transfer.regions, DEST_IDS)

    src_state, dst_state = src.state_transfer, dst.state_transfer
    if src_state:
        mover(RegionSet(src_state), RegionSet(dst_state), SOURCE_SLOTS, DEST_SLOTS)

    compared = {"paged views": 0, "state views": 0, "modules": 0, "views": 0}
    src_ids = torch.tensor(SOURCE_IDS, device=device)
    dst_ids = torch.tensor(DEST_IDS, device=device)
    for a, b in zip(src.bound_modules(), dst.bound_modules(), strict=True):
        if a.prefix != b.prefix or a.kv_views.keys() != b.kv_views.keys():
            raise AssertionError(f"the two pools bound {a} and {b} differently")
        compared["modules"] += 1
        compared["views"] += len(a.kv_views)
        for name, view in a.kv_views.items():
            other = b.kv_views[name]
            if slot_of(other) == "slot":
                for s, d in zip(SOURCE_SLOTS, DEST_SLOTS, strict=True):
                    if not torch.equal(raw(view[s]), raw(other[d])):
                        raise AssertionError(f"{b}.{name} slot {d} differs from slot {s} exported")
                for d in range(other.shape[0]):
                    if d not in DEST_SLOTS and not torch.equal(
                        raw(other[d]), raw(state_before[b.prefix][name][d])
                    ):
                        raise AssertionError(f"{b}.{name} slot {d} changed; nothing moved there")
                compared["state views"] += 1
                continue
            got = per_block(other, blocks).index_select(0, dst_ids)
            want = per_block(view, blocks).index_select(0, src_ids)
            if not torch.equal(raw(got), raw(want)):
                for i, (s, d) in enumerate(zip(SOURCE_IDS, DEST_IDS, strict=True)):
                    if not torch.equal(raw(got[i]), raw(want[i])):
                        raise AssertionError(
                            f"{b}.{name}: imported block {d} differs from exported block {s}"
                        )
            compared["paged views"] += 1
    return compared


def regions_at(buf: torch.Tensor, spans_and_strides, *, start: int = 0, units: int = 4):
    """Hand-made regions ``r0, r1, ...`` laid one after another in ``buf`` from byte ``start``:
    each ``units`` units of ``stride`` bytes, of which the first ``span`` are the region's."""
    out, at = [], start
    for i, (span, stride) in enumerate(spans_and_strides):
        out.append(
            TransferRegion(f"r{i}", buf[at : at + units * stride].view(units, stride)[:, :span])
        )
        at += units * stride
    return out
