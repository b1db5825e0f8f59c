"""The MLA flavour: one packed latent row per token, with or without an indexer's keys.

MLA packs ``k_c`` and ``k_pe`` into one row and absorbs V, so a block is one field rather than
four; the row width is the module's ``kv_entry_dim`` -- ``kv_lora_rank + qk_rope_head_dim``
unless the config declares a padded (NoPE) width -- never a literal 576. A sparse model's indexer keys are a second field of the same pool with its own row
count (the ``mla_index`` row space: owned by the layers that declare an indexer), not a second
pool.

MLA pages at one token, so ``blocks_per_entry`` equals the scheduler's block: that many backend
rows of the allocation make one entry, and keeping the entry at the scheduler block is what lets
a row of ``region_tensors`` be the unit a transfer registers.

``DRAFT_OWNS_KV_POOL`` is False: an MTP draft of this flavour binds into the target's pool --
DeepSeek-R1's one MTP layer is row 61 of 62.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar

import torch

from atom.backends.backend import AttentionBackend
from atom.backends.builder import KvCacheBuilder
from atom.models.hf_config import HfConfig
from atom.models.modules import AttentionModule, MlaAttention
from atom.pool_layout import IndexerField, MlaKvPool

MLA = "mla"
MLA_INDEX = "mla_index"


class AiterMlaBackend(AttentionBackend):
    NAME = "aiter-mla"
    DRAFT_OWNS_KV_POOL = False

    @classmethod
    def attn_block_size(cls, hf_config: HfConfig, scheduler_block_size: int) -> int:
        return 1

    @classmethod
    def block_rule(cls, hf_config: HfConfig) -> str:
        return "pages at 1 token (one latent row a block)"

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return MlaMetadataBuilder

    @classmethod
    def bind_module_views(
        cls, module: AttentionModule, pool_views: Any, row: int
    ) -> dict[str, torch.Tensor]:
        return {"kv_cache": pool_views.kv_cache(row)}


class MlaMetadataBuilder(KvCacheBuilder):
    BACKEND: ClassVar[type[AttentionBackend]] = AiterMlaBackend

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        if not isinstance(module, MlaAttention):
            return ()
        return (MLA, MLA_INDEX) if module.indexer is not None else (MLA,)

    def _indexer_field(self, modules: list[AttentionModule], rows: int) -> IndexerField | None:
        dims = {m.indexer.head_dim for m in modules if isinstance(m, MlaAttention) and m.indexer}
        if not dims:
            return None
        if len(dims) != 1:
            raise ValueError(
                f"MLA modules declare indexer head dims {sorted(dims)}; one field holds one"
            )
        fp8 = self.engine.is_fp8
        # One key per token: the indexer here does not pool, so an entry holds the scheduler's
        # block of them. fp8 keys carry one fp32 scale per token.
        return IndexerField(
            rows,
            head_dim=dims.pop(),
            dtype=self.kv_dtype if fp8 else torch.bfloat16,
            tokens_per_entry=self.scheduler_block_size,
            scale_dtype=torch.float32 if fp8 else None,
        )

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        mla = [m for m in modules if isinstance(m, MlaAttention)]
        if not mla:
            return
        counts = self.pool_rows.counts()
        dims = {(m.kv_lora_rank, m.qk_rope_head_dim, m.kv_entry_dim) for m in mla}
        if len(dims) != 1:
            raise ValueError(
                f"MLA modules declare latent splits (rank, rope, row width) {sorted(dims)}; "
                "one pool holds one"
            )
        kv_lora_rank, qk_rope_head_dim, kv_entry_dim = dims.pop()
        self.paged_pools[MLA] = MlaKvPool(
            counts[MLA],
            block_size=self.block_size,
            blocks_per_entry=self.blocks_per_entry,
            kv_lora_rank=kv_lora_rank,
            qk_rope_head_dim=qk_rope_head_dim,
            kv_dtype=self.kv_dtype,
            index=self._indexer_field(modules, counts.get(MLA_INDEX, 0)),
            kv_entry_dim=kv_entry_dim,
        )

    _VIEW_HOMES: ClassVar[dict[str, tuple[str, str]]] = {
        "kv_cache": (MLA, "kv"),
        "index_cache": (MLA_INDEX, "index"),
        "index_scale": (MLA_INDEX, "index_scale"),
    }

    def view_home(self, module: AttentionModule, view_name: str) -> tuple[Hashable, str, str]:
        home = self._VIEW_HOMES.get(view_name)
        if home is None or not isinstance(module, MlaAttention):
            raise KeyError(f"builder {self.name!r} binds no paged view {view_name!r} on {module}")
        return home[0], MLA, home[1]

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        views = self.paged_views[MLA]
        if kind == MLA_INDEX:
            out = {"index_cache": views.index_cache(row)}
            if views.pool.index.scale_dtype is not None:
                out["index_scale"] = views.index_scale(row)
            return out
        return self.BACKEND.bind_module_views(module, views, row)
