"""The MHA flavour: paged K and V (plus fp8 scales) per KV geometry, one block rule.

``AiterBackend`` answers the block rule and the pool a draft of this flavour owns; the builder
keeps one ``MhaKvPool`` per :class:`KvGeometry` the walk found -- one for almost every model,
two for MiMo-V2-Flash, whose sliding-window layers carry a second head count: a second geometry
in one block-id space, which sizing sums as two PAGE specs. The pools take successive slices of
this builder's region, placed by the same ``plan_regions`` the runner uses for builders.

The paged layout is declared once, in ``MhaKvPool``; a backend picks which of its declared
layouts it binds (``LAYOUT``), and nothing here spells a shape. Seven places once spelled the
SHUFFLE shapes of a block, agreeing on every byte and disagreeing on a view.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar

import torch

from atom.backends.backend import AttentionBackend
from atom.backends.builder import KvCacheBuilder
from atom.models.hf_config import ConfigFieldError, HfConfig
from atom.models.modules import AttentionModule, MhaAttention
from atom.pool_layout import KvGeometry, MhaKvPool


def mha_geometry(module: MhaAttention) -> KvGeometry:
    return KvGeometry(module.num_kv_heads, module.head_dim)


def mha_pool_for(
    modules: list[AttentionModule],
    geometry: KvGeometry,
    rows: int,
    *,
    block_size: int,
    blocks_per_entry: int,
    kv_dtype: torch.dtype,
    layout: str,
) -> MhaKvPool:
    """One geometry's pool; every module of it must agree on the V head dim it caches."""
    v_dims = {
        m.v_head_dim for m in modules if isinstance(m, MhaAttention) and mha_geometry(m) == geometry
    }
    if len(v_dims) != 1:
        raise ValueError(
            f"modules of geometry {geometry} declare v_head_dim {sorted(v_dims)}; one pool holds one"
        )
    return MhaKvPool(
        rows,
        block_size=block_size,
        blocks_per_entry=blocks_per_entry,
        num_kv_heads=geometry.num_kv_heads,
        head_dim=geometry.head_dim,
        v_head_dim=v_dims.pop(),
        kv_dtype=kv_dtype,
        layout=layout,
    )


class AiterBackend(AttentionBackend):
    NAME = "aiter-mha"
    #: An MHA draft (an EAGLE3 Llama head) owns a sibling pool in the target's block-id space.
    DRAFT_OWNS_KV_POOL = True
    #: Which of ``MhaKvPool``'s declared paged layouts this backend's kernels read; the pool is
    #: built in it, so every view a module is bound to is already the one its kernel takes.
    LAYOUT: ClassVar[str] = "shuffle"

    VIEW_FIELDS: ClassVar[dict[str, str]] = {
        "k_cache": "k",
        "v_cache": "v",
        "k_scale": "k_scale",
        "v_scale": "v_scale",
    }

    @classmethod
    def attn_block_size(cls, hf_config: HfConfig, scheduler_block_size: int) -> int:
        """A model with a sparse block (MiniMax-M3's indexer) pages at it whatever the scheduler
        says; otherwise the kernels take 256 or 1024 as given and page at 16 below that."""
        if hf_config.get("sparse_block_size") is not None:
            return hf_config.require_int("sparse_block_size")
        return scheduler_block_size if scheduler_block_size in (256, 1024) else 16

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return MhaMetadataBuilder

    @classmethod
    def draft_row_kind(cls, module: AttentionModule) -> KvGeometry | None:
        return mha_geometry(module) if isinstance(module, MhaAttention) else None

    @classmethod
    def make_kv_pool(cls, hf_config, pool_rows, modules, *, block_size, blocks_per_entry, kv_dtype):
        """The pool an MHA draft owns: rows from the draft's own walk, block from the target."""
        counts = pool_rows.counts()
        if len(counts) != 1:
            raise ConfigFieldError(
                hf_config.source,
                "num_key_value_heads",
                f"gives a draft KV geometries {[str(g) for g in counts]}; its pool holds one",
            )
        (geometry,) = counts
        return mha_pool_for(
            modules,
            geometry,
            pool_rows.rows(geometry),
            block_size=block_size,
            blocks_per_entry=blocks_per_entry,
            kv_dtype=kv_dtype,
            layout=cls.LAYOUT,
        )

    @classmethod
    def bind_module_views(
        cls, module: AttentionModule, pool_views: Any, row: int
    ) -> dict[str, torch.Tensor]:
        views = {"k_cache": pool_views.k_cache(row), "v_cache": pool_views.v_cache(row)}
        if pool_views.pool.has_scales:
            views["k_scale"] = pool_views.k_scale(row)
            views["v_scale"] = pool_views.v_scale(row)
        return views


class MhaMetadataBuilder(KvCacheBuilder):
    BACKEND: ClassVar[type[AiterBackend]] = AiterBackend

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        return (mha_geometry(module),) if isinstance(module, MhaAttention) else ()

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        counts = self.pool_rows.counts()
        for geometry in dict.fromkeys(
            mha_geometry(m) for m in modules if isinstance(m, MhaAttention)
        ):
            self.paged_pools[str(geometry)] = mha_pool_for(
                modules,
                geometry,
                counts[geometry],
                block_size=self.block_size,
                blocks_per_entry=self.blocks_per_entry,
                kv_dtype=self.kv_dtype,
                layout=self.BACKEND.LAYOUT,
            )

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        return self.BACKEND.bind_module_views(module, self.paged_views[str(kind)], row)

    def view_home(self, module: AttentionModule, view_name: str) -> tuple[Hashable, str, str]:
        field_name = self.BACKEND.VIEW_FIELDS.get(view_name)
        if field_name is None or not isinstance(module, MhaAttention):
            raise KeyError(f"builder {self.name!r} binds no paged view {view_name!r} on {module}")
        geometry = mha_geometry(module)
        return geometry, str(geometry), field_name
