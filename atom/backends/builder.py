"""The part of a backend that sizes, carves and binds one model's pools.

A builder never counts layers. It is handed ``pool_rows`` -- the runner's one walk over the
modules that exist -- together with those modules, builds its pools from what the walk found
(:meth:`_build_pools`), prices them as :class:`PoolSpec`\\ s, takes a region of the runner's one
paged buffer (:meth:`allocate_kv_cache_tensors`) and binds each module's views out of the row the
walk gave it. A module the walk did not give this builder raises the ``KeyError`` ``pool_rows``
promises: a counter would have handed it the next row, past the end of a pool sized without it.

Units are kept apart even where they are the same number: ``blocks`` is the scheduler's (one PAGE
entry each, what ``paged_pool_bytes`` charged per); ``num_blocks = blocks * blocks_per_entry`` is
this builder's own page count, the one its kernels index.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

import torch

from atom.backends.backend import AttentionBackend, blocks_per_entry
from atom.engine_config import EngineConfig
from atom.models.hf_config import HfConfig
from atom.models.modules import AttentionModule
from atom.pool_layout import ElementOrder, EntryClass, PoolSpec, plan_regions
from atom.pool_layout.refusals import require_count
from atom.pool_layout.regions import carve
from atom.pool_layout.transfer import TransferRegion, owned_regions, owned_role


class KvCacheBuilder:
    BACKEND: ClassVar[type[AttentionBackend]] = AttentionBackend

    def __init__(self, hf_config: HfConfig, engine: EngineConfig, *, name: str = "target") -> None:
        self.hf_config = hf_config
        self.engine = engine
        self.name = name
        self.scheduler_block_size = engine.scheduler_block_size
        self.kv_dtype = engine.kv_torch_dtype
        self.block_size = self.BACKEND.attn_block_size(hf_config, engine.scheduler_block_size)
        self.blocks_per_entry = blocks_per_entry(
            engine.scheduler_block_size, self.block_size, who=f"{name} ({self.BACKEND.NAME})"
        )
        self.pool_rows: Any = None
        self.paged_pools: dict[str, Any] = {}
        self.state_pools: dict[str, Any] = {}
        self.paged_views: dict[str, Any] = {}
        self.state_views: dict[str, Any] = {}
        #: scheduler blocks this builder's pools were carved for, and its own backend blocks.
        self.blocks: int | None = None
        self.num_blocks: int | None = None

    # -- the walk ---------------------------------------------------------------------------

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        """The row spaces ``module`` sits in for this builder; () means it caches nothing here."""
        raise NotImplementedError

    def set_pool_rows(self, pool_rows: Any, modules: Sequence[AttentionModule]) -> None:
        """Adopt the runner's walk and the pools it implies; a later walk replaces both."""
        self.invalidate_pool_rows()
        self.pool_rows = pool_rows
        self._build_pools(list(modules))

    def invalidate_pool_rows(self) -> None:
        """Drop the pools with the walk that sized them, so the two cannot part."""
        self.pool_rows = None
        self.paged_pools = {}
        self.state_pools = {}
        self.paged_views = {}
        self.state_views = {}

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        raise NotImplementedError

    def _require_walk(self) -> None:
        if self.pool_rows is None:
            raise ValueError(
                f"builder {self.name!r} has no pool_rows: the runner's walk has not run"
            )

    # -- sizing -----------------------------------------------------------------------------

    def sub_pool_specs(self) -> list[PoolSpec]:
        """Every pool's price, PAGE and STATE, read off the same declarations allocation uses."""
        self._require_walk()
        specs = [pool.spec(f"{self.name}.{n}") for n, pool in self.paged_pools.items()]
        specs += [pool.spec(f"{self.name}.{n}") for n, pool in self.state_pools.items()]
        return specs

    def paged_entry_bytes(self) -> int:
        return sum(s.entry_bytes for s in self.sub_pool_specs() if s.entry_class is EntryClass.PAGE)

    def _paged_plan(self, entries: int):
        return plan_regions([(n, pool.pool_bytes(entries)) for n, pool in self.paged_pools.items()])

    def paged_pool_bytes(self, entries: int) -> int:
        """Bytes this builder's paged pools take at ``entries`` scheduler blocks; zero means
        "I allocate my own" and the runner hands it no region."""
        self._require_walk()
        if not self.paged_pools:
            return 0
        return self._paged_plan(entries).total_bytes

    def own_buffers(self) -> list[torch.Tensor]:
        """Buffers this builder allocated itself rather than taking from the runner's paged
        buffer; empty for every builder that takes a region (DeepSeek-V4 allocates its own)."""
        return []

    def element_orders(self, module: AttentionModule) -> dict[str, ElementOrder]:
        """Each view ``module`` is bound, by name, to its `pool_layout.ElementOrder`: where each
        element sits in `own_buffers()`. Only a builder that allocates its own declares them; a
        view in the runner's paged buffer is read at the reference store's documented layout."""
        return {}

    # -- allocation -------------------------------------------------------------------------

    def allocate_kv_cache_tensors(self, *, blocks: int, buf: torch.Tensor | None) -> dict[str, Any]:
        """Back the paged pools with ``buf`` (this builder's region of the runner's buffer).

        ``blocks`` counts scheduler blocks: it is the count ``paged_pool_bytes`` charged per, and
        one entry answers one of them. ``buf`` is None only for a builder that answered zero.
        """
        self._require_walk()
        require_count(f"builder {self.name!r}: blocks", blocks, minimum=1, unit="scheduler blocks")
        want = self.paged_pool_bytes(blocks)
        if want == 0:
            if buf is not None:
                raise ValueError(
                    f"builder {self.name!r} allocates its own pool but was handed {buf.numel()} B"
                )
        elif buf is None or buf.numel() != want:
            got = None if buf is None else buf.numel()
            raise ValueError(
                f"builder {self.name!r} charged {want} B for {blocks} blocks, handed {got}"
            )
        self.blocks = blocks
        self.num_blocks = blocks * self.blocks_per_entry
        if want:
            pieces = carve(buf, self._paged_plan(blocks))
            self.paged_views = {
                n: pool.allocate(blocks, device=buf.device, buf=pieces[n])
                for n, pool in self.paged_pools.items()
            }
        return dict(self.paged_views)

    def allocate_per_req_cache(self, *, entries: int, device: torch.device | str = "cpu") -> None:
        """STATE pools, one entry per request slot; never part of the paged buffer."""
        self._require_walk()
        self.state_views = {
            n: pool.allocate(entries, device=device) for n, pool in self.state_pools.items()
        }

    # -- binding ----------------------------------------------------------------------------

    def build_kv_cache_tensor(self, module: AttentionModule) -> None:
        """Bind ``module``'s views out of the rows the walk gave it (``KeyError`` if none)."""
        self._require_walk()
        kinds = self.row_kinds(module)
        if not kinds:
            raise ValueError(f"builder {self.name!r} has no row space for module {module}")
        views: dict[str, torch.Tensor] = {}
        for kind in kinds:
            row = self.pool_rows[kind][module]
            views.update(self._views_for(module, kind, row))
        module.bind(views)

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def view_home(self, module: AttentionModule, view_name: str) -> tuple[Hashable, str, str]:
        """``(row kind, pool name, field name)`` a bound paged view of ``module`` is read from."""
        raise NotImplementedError

    def region_role_of(self, module: AttentionModule, view_name: str) -> str:
        """The ``semantic_role`` of the transfer region holding ``module``'s view ``view_name``."""
        kind, pool_name, field_name = self.view_home(module, view_name)
        row = self.pool_rows[kind][module]
        return owned_role(self.name, self.paged_pools[pool_name].region_role(field_name, row))

    @property
    def layout(self) -> str:
        """The paged layout this builder's views are in ("nhd" unless its backend says)."""
        return getattr(self.BACKEND, "LAYOUT", "nhd")

    def slot_mapping(self, block_ids: Sequence[int], positions: Sequence[int]) -> list[int]:
        """Each token's slot in this builder's own pages, from the scheduler's block ids.

        ``block_ids`` are scheduler blocks; a token at ``t`` sits in scheduler block
        ``block_ids[t // scheduler_block_size]``, which is ``blocks_per_entry`` backend blocks,
        and the conversion is written out even when the ratio is 1.
        """
        slots = []
        for t in positions:
            scheduler_block = block_ids[t // self.scheduler_block_size]
            within = t % self.scheduler_block_size
            backend_block = scheduler_block * self.blocks_per_entry + within // self.block_size
            slots.append(backend_block * self.block_size + within % self.block_size)
        return slots

    # -- transfer and release ---------------------------------------------------------------

    def transfer_regions(self) -> list[TransferRegion]:
        """Every paged region this builder's pools export, named for what they hold: one unit a
        scheduler block."""
        return owned_regions(self.name, self.paged_views.values())

    def state_transfer_regions(self) -> list[TransferRegion]:
        """Every STATE region this builder's pools export: one unit a request slot, a request's
        state one range, so a transfer moves it by slot."""
        return owned_regions(self.name, self.state_views.values())

    def transfer_refusal(self) -> str | None:
        """Why this builder's pools may not be transferred at all, naming the setting; None when
        they may."""
        return None

    def release(self) -> None:
        for views in (*self.paged_views.values(), *self.state_views.values()):
            release = getattr(views, "release", None)
            if release is not None:
                release()
        self.paged_views = {}
        self.state_views = {}
        self.blocks = None
        self.num_blocks = None
