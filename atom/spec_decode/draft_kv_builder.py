"""A draft's own KV pool: the target's blocks, re-paged at the target builder's block.

A draft no longer carries an attention. ``DraftKvBuilder`` is handed the draft flavour's backend
class and keeps only what is about being a draft:

- its blocks are the target's blocks. The pool is read with the block tables the target builder
  published, and the draft's kernels take the block off the cache they were bound to, so the pool
  is blocked at the *target builder's* block, never at the draft config's own rule. (MiniMax-M3 +
  EAGLE3 is where the two disagree: the target pages at its ``sparse_block_size`` 128 whatever the
  scheduler says, while a Llama head's rule gives 16; the draft could not start at any
  ``--block-size``.)
- its rows are its own walk over its own modules (``PoolRowsMixin``). The row count is not
  knowable when the builder is constructed -- the draft is still being built -- so the pool is
  built lazily, on the first sizing or binding step that reads it, and ``invalidate_pool_rows``
  drops it with the walk that sized it.
- no rows is a contradiction, not a default: this builder exists because the flavour owns a pool,
  and a pool of none prices at zero and binds nothing -- a draft running on no KV, silently.

The allocate guard compares the pool's entry against the *scheduler's* block: ``blocks`` counts
scheduler blocks (the budget ``paged_pool_bytes`` charged per), one entry answers one of them, so
``block_size * blocks_per_entry`` must be exactly that block.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import torch

from atom.pool_layout import EntryClass, PoolRowsMixin, PoolSpec
from atom.pool_layout.refusals import require_count
from atom.pool_layout.transfer import TransferRegion, owned_regions, owned_role


class DraftKvBuilder(PoolRowsMixin):
    def __init__(
        self,
        *,
        name: str,
        draft_config: Any,
        draft_modules: Sequence[Any],
        draft_backend: type,
        target_builder: Any,
        kv_dtype: torch.dtype,
    ) -> None:
        if not getattr(draft_backend, "DRAFT_OWNS_KV_POOL", False):
            raise TypeError(
                f"draft {name!r}: backend {draft_backend.NAME!r} does not own a draft pool; "
                "its draft binds into the target's pool"
            )
        self.name = name
        self.draft_config = draft_config
        self.draft_modules = list(draft_modules)
        self.draft_backend = draft_backend
        self.target_builder = target_builder
        self.kv_dtype = kv_dtype
        self._kv_pool: Any = None
        self.paged_views: dict[str, Any] = {}
        #: an owning draft keeps no per-request state; empty, so readers need no special case.
        self.state_pools: dict[str, Any] = {}
        self.state_views: dict[str, Any] = {}
        self.blocks: int | None = None
        self.num_blocks: int | None = None

    # -- the draft's own walk ---------------------------------------------------------------

    def _pooled_modules(self):
        return self.draft_modules

    def _pool_row_kind(self, module: Any) -> Hashable | None:
        return self.draft_backend.draft_row_kind(module)

    def row_kinds(self, module: Any) -> tuple[Hashable, ...]:
        kind = self._pool_row_kind(module)
        return () if kind is None else (kind,)

    def _pool_rows_invalidated(self) -> None:
        self._kv_pool = None
        self.paged_views = {}

    # -- the block is the target builder's, read where the pool is built ----------------------

    @property
    def block_size(self) -> int:
        return self.target_builder.block_size

    @property
    def blocks_per_entry(self) -> int:
        return self.target_builder.blocks_per_entry

    @property
    def scheduler_block_size(self) -> int:
        return self.target_builder.scheduler_block_size

    @property
    def kind(self) -> Hashable:
        kinds = list(self.pool_rows.counts())
        if len(kinds) != 1:
            raise ValueError(
                f"draft {self.name!r} caches in row spaces {[str(k) for k in kinds]}; its pool holds one"
            )
        return kinds[0]

    @property
    def kv_pool(self) -> Any:
        if self._kv_pool is None:
            counts = self.pool_rows.counts()
            if sum(counts.values()) == 0:
                raise ValueError(
                    f"draft {self.name!r} has no rows: its walk over {len(self.draft_modules)} "
                    "modules found nothing to cache, and a pool of none binds nothing"
                )
            self._kv_pool = self.draft_backend.make_kv_pool(
                self.draft_config,
                self.pool_rows,
                self.draft_modules,
                block_size=self.block_size,
                blocks_per_entry=self.blocks_per_entry,
                kv_dtype=self.kv_dtype,
            )
        return self._kv_pool

    @property
    def pool_name(self) -> str:
        return str(self.kind)

    @property
    def paged_pools(self) -> dict[str, Any]:
        return {self.pool_name: self.kv_pool}

    # -- sizing -----------------------------------------------------------------------------

    def sub_pool_specs(self) -> list[PoolSpec]:
        return [self.kv_pool.spec(f"{self.name}.{self.pool_name}")]

    def paged_entry_bytes(self) -> int:
        return sum(s.entry_bytes for s in self.sub_pool_specs() if s.entry_class is EntryClass.PAGE)

    def paged_pool_bytes(self, entries: int) -> int:
        return self.kv_pool.pool_bytes(entries)

    # -- allocation -------------------------------------------------------------------------

    def allocate_kv_cache_tensors(self, *, blocks: int, buf: torch.Tensor | None) -> dict[str, Any]:
        entry_tokens = self.block_size * self.blocks_per_entry
        if entry_tokens != self.scheduler_block_size:
            raise ValueError(
                f"draft {self.name!r}: an entry of {self.blocks_per_entry} x {self.block_size}-token "
                f"blocks is {entry_tokens} tokens; the scheduler's block is {self.scheduler_block_size}"
            )
        require_count(f"draft {self.name!r}: blocks", blocks, minimum=1, unit="scheduler blocks")
        if buf is None:
            raise ValueError(
                f"draft {self.name!r} charged a region of the paged pool and was handed none"
            )
        pool = self.kv_pool
        self.paged_views = {self.pool_name: pool.allocate(blocks, device=buf.device, buf=buf)}
        self.blocks = blocks
        self.num_blocks = blocks * self.blocks_per_entry
        return dict(self.paged_views)

    def allocate_per_req_cache(self, *, entries: int, device: torch.device | str = "cpu") -> None:
        """A draft of an owning flavour keeps no per-request state."""

    # -- binding ----------------------------------------------------------------------------

    def build_kv_cache_tensor(self, module: Any) -> None:
        kind = self._pool_row_kind(module)
        if kind is None:
            raise ValueError(f"draft {self.name!r} has no row space for module {module}")
        row = self.pool_rows[kind][module]
        module.bind(self.draft_backend.bind_module_views(module, self.paged_views[str(kind)], row))

    def slot_mapping(self, block_ids: Sequence[int], positions: Sequence[int]) -> list[int]:
        """A draft has no metadata of its own: it addresses with the target builder's."""
        return self.target_builder.slot_mapping(block_ids, positions)

    def transfer_regions(self) -> list[TransferRegion]:
        return owned_regions(self.name, self.paged_views.values())

    def state_transfer_regions(self) -> list[TransferRegion]:
        """None: a draft of an owning flavour keeps no per-request state."""
        return []

    def transfer_refusal(self) -> str | None:
        return None

    def own_buffers(self) -> list[torch.Tensor]:
        """None: a draft's pool is a region of the runner's paged buffer."""
        return []

    def view_home(self, module: Any, view_name: str) -> tuple[Hashable, str, str]:
        field_name = self.draft_backend.VIEW_FIELDS.get(view_name)
        if field_name is None:
            raise KeyError(f"draft {self.name!r} binds no view {view_name!r}")
        return self._pool_row_kind(module), self.pool_name, field_name

    def region_role_of(self, module: Any, view_name: str) -> str:
        kind, _pool_name, field_name = self.view_home(module, view_name)
        row = self.pool_rows[kind][module]
        return owned_role(self.name, self.kv_pool.region_role(field_name, row))

    @property
    def layout(self) -> str:
        return getattr(self.draft_backend, "LAYOUT", "nhd")

    def release(self) -> None:
        for views in self.paged_views.values():
            release = getattr(views, "release", None)
            if release is not None:
                release()
        self.paged_views = {}
        self.blocks = None
        self.num_blocks = None
