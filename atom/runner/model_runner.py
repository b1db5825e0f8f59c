"""The runner's part of the KV pools: one walk, one price, one buffer, one bind.

In order, each step reading what the one before it decided:

1. **walk** -- :meth:`assign_pool_rows` walks the modules that exist (this rank, this stage,
   the MTP layers, a draft that binds into the target) and gives each its ``pool_rows``; the
   counts are how many rows sizing buys. Nothing counts layers from the config.
2. **price** -- :meth:`sub_pool_specs` is every builder's specs; :meth:`entry_bytes` sums them per
   entry class (PAGE, STATE), which is how an EAGLE3 draft's sibling pool rides the target's
   block ids: one entry, one block id, both pools' bytes.
3. **carve** -- :meth:`_carve_paged_pool` places every builder's region in one buffer with
   ``plan_regions`` and hands each its region; a builder answering zero allocates its own. The
   one check made on every start: each builder took exactly what its PAGE specs charged.
4. **bind** -- :meth:`_bind_kv_cache_to_modules` runs the builders' own bind over the same walk.
5. **transfer** -- the regions every builder exports, the draft's appended, then
   ``set_block_count`` with the scheduler's count, which only this caller holds; and the STATE
   regions (``state_transfer``), one unit a request slot. A builder may refuse transfer outright
   (DeepSeek-V4's FP4 indexer); its reason travels with ``kv_transfer`` and is what a region set
   or a wire manifest over it raises.

The P/D decode side (:meth:`import_paged_pool`) runs steps 3-5 over an imported buffer through
the same :meth:`_back_paged_pools`, so the two ends cannot disagree about where a region starts.
A handle carries the paged count only, and a STATE class has no entry count on that side at all:
a model with a STATE pool is refused by the pool's name *before* anything is backed, unless the
caller passes the STATE entry count it was told (the peer's wire manifest carries it,
``atom.runner.kv_transfer``).

``blocks`` is always the scheduler's count. The builders record their own
``num_blocks = blocks * blocks_per_entry``.
"""

from __future__ import annotations

from typing import Any

import torch

from atom.backends.builder import KvCacheBuilder
from atom.backends.selector import select_backend
from atom.engine_config import EngineConfig
from atom.models.family import Family, attn_family
from atom.models.hf_config import HfConfig
from atom.models.modules import AttentionModule
from atom.models.skeleton import ModelSkeleton, ParallelRank, build_modules
from atom.pool_layout import EntryClass, PoolRows, PoolSpec, carve, plan_regions, sum_specs
from atom.pool_layout.refusals import require_count
from atom.pool_layout.transfer import KVTransferTensors, TransferRegion
from atom.runner.pool_walk import walk_pool_rows
from atom.spec_decode.draft_kv_builder import DraftKvBuilder


class ModelRunner:
    def __init__(
        self,
        hf_config: HfConfig,
        engine: EngineConfig | None = None,
        *,
        draft_config: HfConfig | None = None,
    ) -> None:
        self.engine = engine or EngineConfig()
        self.hf_config = hf_config
        self.text_config = hf_config.text_config()
        self.family: Family = attn_family(self.text_config)
        self.backend = select_backend(self.family, mha_backend=self.engine.mha_backend)
        self.rank = ParallelRank(self.engine.tp_size, self.engine.pp_size, self.engine.pp_rank)
        self.skeleton: ModelSkeleton = build_modules(
            hf_config, self.rank, include_mtp=self.engine.include_mtp
        )
        self.builder: KvCacheBuilder = self.backend.get_builder_cls()(
            self.text_config, self.engine, name="target"
        )
        self.draft_config: HfConfig | None = None
        self.draft_family: Family | None = None
        self.draft_modules: list[AttentionModule] = []
        self.draft_builder: DraftKvBuilder | None = None
        if draft_config is not None:
            self._attach_draft(draft_config)
        self.pool_rows: PoolRows | None = None
        self.paged_buf: torch.Tensor | None = None
        self.blocks: int | None = None
        self.kv_transfer: KVTransferTensors | None = None
        self.state_transfer: list[TransferRegion] | None = None
        self.state_entries: int | None = None
        self.assign_pool_rows()

    # -- the draft ------------------------------------------------------------------------------

    def _attach_draft(self, draft_config: HfConfig) -> None:
        """A separate draft model (an EAGLE3 head): its flavour comes from its own config.

        A draft is built whole, on the last pipeline stage only. If its flavour owns a pool it
        gets a ``DraftKvBuilder`` blocked at the target builder's block; otherwise its modules
        join the target's walk and bind into the target's pool.
        """
        self.draft_config = draft_config
        self.draft_family = attn_family(draft_config.text_config())
        if not self.rank.is_last_stage:
            return
        draft = build_modules(draft_config, ParallelRank(self.rank.tp_size), as_draft=True)
        self.draft_modules = draft.modules
        draft_backend = select_backend(self.draft_family, mha_backend=self.engine.mha_backend)
        if draft_backend.DRAFT_OWNS_KV_POOL:
            self.draft_builder = DraftKvBuilder(
                name="draft",
                draft_config=draft_config.text_config(),
                draft_modules=self.draft_modules,
                draft_backend=draft_backend,
                target_builder=self.builder,
                kv_dtype=self.engine.kv_torch_dtype,
            )

    def builders(self) -> list[Any]:
        """The target builder, then the draft's: the order regions are placed and exported in."""
        return [self.builder] + ([self.draft_builder] if self.draft_builder is not None else [])

    # -- 1. the walk ----------------------------------------------------------------------------

    def _pooled_modules(self) -> list[AttentionModule]:
        """The modules the target builder binds: this stage's layers, the MTP layers, and a
        draft that binds into the target's pool. A draft with its own pool is walked by it."""
        shared_draft = self.draft_modules if self.draft_builder is None else []
        return [*self.skeleton.modules, *shared_draft]

    def assign_pool_rows(self) -> PoolRows:
        """Run the one walk; the draft's own walk is dropped with it and re-runs on first use."""
        modules = self._pooled_modules()
        self.pool_rows = walk_pool_rows(modules, self.builder.row_kinds, owner=self.builder.name)
        self.builder.set_pool_rows(self.pool_rows, modules)
        if self.draft_builder is not None:
            self.draft_builder.invalidate_pool_rows()
        return self.pool_rows

    def row_counts(self) -> dict[str, int]:
        """Rows per row space, the draft's prefixed with its builder's name."""
        counts = {str(k): n for k, n in self.pool_rows.counts().items()}
        if self.draft_builder is not None:
            for kind, n in self.draft_builder.pool_rows.counts().items():
                counts[f"{self.draft_builder.name}.{kind}"] = n
        return counts

    # -- 2. the price ---------------------------------------------------------------------------

    def sub_pool_specs(self) -> list[PoolSpec]:
        return [spec for b in self.builders() for spec in b.sub_pool_specs()]

    def entry_bytes(self) -> dict[EntryClass, int]:
        """What one entry of each class costs, summed over every pool that declares it."""
        return sum_specs(self.sub_pool_specs())

    def _state_pool_names(self) -> list[str]:
        return [s.name for s in self.sub_pool_specs() if s.entry_class is EntryClass.STATE]

    def blocks_for_budget(self, budget_bytes: int, *, state_entries: int | None = None) -> int:
        """Scheduler blocks a byte budget buys after the STATE entries are paid for.

        At least one block, or a ValueError saying what the budget was short of: a pool of zero
        blocks cannot serve a token, and returning 0 would leave the caller to find that out.
        """
        require_count("budget_bytes", budget_bytes, unit="bytes")
        entries = self._state_entries(state_entries)
        prices = self.entry_bytes()
        state = entries * prices.get(EntryClass.STATE, 0)
        page = prices.get(EntryClass.PAGE, 0)
        if page == 0:
            raise ValueError("this model declares no PAGE pool; a budget buys no blocks")
        blocks = (budget_bytes - state) // page
        if blocks < 1:
            raise ValueError(
                f"a budget of {budget_bytes} B buys no scheduler block: {entries} STATE entries "
                f"cost {state} B and one PAGE block costs {page} B"
            )
        return blocks

    def _state_entries(self, state_entries: int | None) -> int:
        """The caller's count when given, the engine's otherwise: ``None`` means unset, while a 0
        passed on purpose is the caller's to keep (``or`` would turn it into the default)."""
        if state_entries is None:
            return self.engine.state_entries
        return require_count("state_entries", state_entries, unit="request slots")

    # -- 3. the carve ---------------------------------------------------------------------------

    def paged_plan(self, blocks: int):
        """Each builder's region of the one paged buffer, at ``blocks`` scheduler blocks."""
        sizes = [(b.name, b.paged_pool_bytes(blocks)) for b in self.builders()]
        return plan_regions([(n, nbytes) for n, nbytes in sizes if nbytes > 0])

    def paged_pool_bytes(self, blocks: int) -> int:
        return self.paged_plan(blocks).total_bytes

    def _carve_paged_pool(self, blocks: int, *, device: torch.device | str = "cpu") -> torch.Tensor:
        """The allocating path: one fresh zeroed buffer, backed by :meth:`_back_paged_pools`."""
        plan = self.paged_plan(blocks)
        buf = torch.zeros(plan.total_bytes, dtype=torch.uint8, device=device)
        self._back_paged_pools(blocks, buf)
        return buf

    def _back_paged_pools(self, blocks: int, buf: torch.Tensor) -> None:
        """Place every builder's region in ``buf`` and back its pools there -- the one path the
        allocating side and the P/D import side share."""
        require_count("blocks", blocks, minimum=1, unit="scheduler blocks")
        plan = self.paged_plan(blocks)
        pieces = carve(buf, plan)
        # Every region is checked against its builder's charge before any builder is backed, so
        # a refusal leaves nothing half-bound.
        for b in self.builders():
            region = pieces.get(b.name)
            charged = b.paged_entry_bytes() * blocks
            if region is not None and region.numel() != charged:
                raise ValueError(
                    f"builder {b.name!r} took {region.numel()} B for {blocks} blocks; its PAGE "
                    f"specs charged {b.paged_entry_bytes()} B x {blocks} = {charged}"
                )
        for b in self.builders():
            region = pieces.get(b.name)
            views = b.allocate_kv_cache_tensors(blocks=blocks, buf=region)
            if region is None:
                continue
            # What the arenas actually hold, not a second reading of the plan.
            held = sum(arena_buf.numel() for v in views.values() for arena_buf in v.buffers)
            if held != region.numel():
                raise ValueError(
                    f"builder {b.name!r} was handed {region.numel()} B and its pools hold {held} B"
                )
        self.paged_buf = buf
        self.blocks = blocks

    def allocate_state(self, entries: int, *, device: torch.device | str = "cpu") -> None:
        for b in self.builders():
            b.allocate_per_req_cache(entries=entries, device=device)
        self.state_entries = entries

    # -- 4. the bind ----------------------------------------------------------------------------

    def _bind_kv_cache_to_modules(self) -> None:
        """Each module to the builder whose walk holds it: a draft's own modules to the draft's
        builder, everything else to the target's -- whose ``pool_rows`` raises for anything else."""
        for module in self._pooled_modules():
            self.builder.build_kv_cache_tensor(module)
        if self.draft_builder is not None:
            for module in self.draft_modules:
                self.draft_builder.build_kv_cache_tensor(module)

    def bound_modules(self) -> list[AttentionModule]:
        own = self.draft_modules if self.draft_builder is not None else []
        return [*self._pooled_modules(), *own]

    def builder_of(self, module: AttentionModule) -> Any:
        if self.draft_builder is not None and any(module is m for m in self.draft_modules):
            return self.draft_builder
        return self.builder

    # -- 5. transfer ----------------------------------------------------------------------------

    def _register_transfer(self, blocks: int) -> KVTransferTensors:
        refusal = next(filter(None, (b.transfer_refusal() for b in self.builders())), None)
        transfer = KVTransferTensors(regions=list(self.builder.transfer_regions()), refusal=refusal)
        if self.draft_builder is not None:
            for region in self.draft_builder.transfer_regions():
                transfer.append(region)
        transfer.set_block_count(blocks)
        state = [r for b in self.builders() for r in b.state_transfer_regions()]
        for region in state:
            # A request's state is one unit: a region cut at any other count would move a
            # fraction of one request's state into another's slot.
            if region.units != self.state_entries:
                raise ValueError(
                    f"STATE transfer region {region.semantic_role!r} has {region.units} units; "
                    f"the pools hold {self.state_entries} request slots"
                )
        self.kv_transfer = transfer
        self.state_transfer = state
        return transfer

    # -- the two paths --------------------------------------------------------------------------

    def initialize(
        self, blocks: int, *, state_entries: int | None = None, device: torch.device | str = "cpu"
    ) -> ModelRunner:
        """The allocating side: carve, allocate STATE, bind, register transfer regions.

        Both counts are put to the pools before anything is allocated, so a count a pool refuses
        (a row view past 32-bit element offsets) leaves nothing half-carved.
        """
        entries = self._state_entries(state_entries)
        self.paged_plan(blocks)
        for b in self.builders():
            for pool in b.state_pools.values():
                pool.pool_bytes(entries)
        self._carve_paged_pool(blocks, device=device)
        self.allocate_state(entries, device=device)
        self._bind_kv_cache_to_modules()
        self._register_transfer(blocks)
        return self

    def export_paged_pool(self) -> tuple[torch.Tensor, int]:
        """The P/D handle: the one paged buffer and the scheduler's block count."""
        if self.paged_buf is None:
            raise ValueError("nothing to export: the paged pool has not been carved")
        return self.paged_buf, self.blocks

    def import_paged_pool(
        self, buf: torch.Tensor, blocks: int, *, state_entries: int | None = None
    ) -> ModelRunner:
        """The P/D decode side: the same walk backed by a peer's buffer.

        Refuses a STATE pool by name first, unless ``state_entries`` says how many request slots
        to back: the handle carries the paged count only, so without it the STATE pools could
        never be allocated here, and their modules would bind to nothing. A decode side that
        exchanged wire manifests with its peer has that count (the manifest's ``state`` set).
        """
        state = self._state_pool_names()
        if state and state_entries is None:
            raise ValueError(
                f"P/D import cannot back STATE pools {state}: the imported handle carries only the "
                "paged pool and its block count, so this side has no entry count for them (pass "
                "state_entries, the request slots the peer's wire manifest states)"
            )
        if state:
            require_count("state_entries", state_entries, minimum=1, unit="request slots")
        self._back_paged_pools(blocks, buf)
        if state:
            self.allocate_state(state_entries, device=buf.device)
        self._bind_kv_cache_to_modules()
        self._register_transfer(blocks)
        return self

    def release(self) -> None:
        """Free every pool, the draft's too, and unbind every module."""
        for b in self.builders():
            b.release()
        for module in self.bound_modules():
            module.unbind()
        self.paged_buf = None
        self.blocks = None
        self.kv_transfer = None
        self.state_transfer = None
        self.state_entries = None
