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
from atom.models.skeleton import sparse_attention_config
from atom.pool_layout import EntryField, KvGeometry, MhaKvPool

#: The row space of a sparse MHA layer's indexer keys (MiniMax-M3): owned by the sparse layers
#: only, so counted apart from the K/V rows of the same module.
MHA_INDEX = "mha_index"
#: The indexer-key field's name inside the pool, and the view a sparse module is bound.
INDEX_FIELD = "index"


def mha_geometry(module: MhaAttention) -> KvGeometry:
    return KvGeometry(module.num_kv_heads, module.head_dim)


def declared_sparse_block_size(hf_config: HfConfig) -> int | None:
    """The block a sparse MHA model's kernels page at, wherever its config states it.

    MiniMax-M3 nests it in ``sparse_attention_config``; a flat ``sparse_block_size`` is read too.
    """
    if hf_config.get("sparse_block_size") is not None:
        return hf_config.require_int("sparse_block_size")
    sub = sparse_attention_config(hf_config)
    if sub is not None and sub.get("sparse_block_size") is not None:
        return sub.require_int("sparse_block_size")
    return None


def indexer_key_field(
    modules: list[AttentionModule],
    geometry: KvGeometry,
    rows: int,
    *,
    block_size: int,
    blocks_per_entry: int,
    kv_dtype: torch.dtype,
) -> EntryField | None:
    """MiniMax-M3's indexer key cache as an ``extra_fields`` entry of the geometry's pool.

    One key per token per sparse layer -- ``blocks_per_entry`` backend blocks of ``block_size``
    keys an entry, so the field is priced per scheduler block and the ``block_ratio`` the old
    sizing dropped is in its shape. The keys take the KV dtype (the engine's index-cache default);
    an fp8 index cache carries no scale. The pool is told bytes; only this backend reads them back
    in the kernel's shape (:meth:`MhaMetadataBuilder._views_for`).
    """
    dims = {
        m.indexer.head_dim
        for m in modules
        if isinstance(m, MhaAttention) and m.indexer is not None and mha_geometry(m) == geometry
    }
    if not dims:
        return None
    if len(dims) != 1:
        raise ValueError(
            f"sparse modules of geometry {geometry} declare indexer head dims {sorted(dims)}; "
            "one field holds one"
        )
    return EntryField(INDEX_FIELD, rows, (blocks_per_entry, block_size, dims.pop()), kv_dtype)


def mha_pool_for(
    modules: list[AttentionModule],
    geometry: KvGeometry,
    rows: int,
    *,
    block_size: int,
    blocks_per_entry: int,
    kv_dtype: torch.dtype,
    layout: str,
    extra_fields: tuple[EntryField, ...] = (),
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
        extra_fields=extra_fields,
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
        "index_cache": INDEX_FIELD,
    }

    @classmethod
    def attn_block_size(cls, hf_config: HfConfig, scheduler_block_size: int) -> int:
        """A model with a sparse block (MiniMax-M3's indexer) pages at it whatever the scheduler
        says; otherwise the kernels take 256 or 1024 as given and page at 16 below that."""
        sparse = declared_sparse_block_size(hf_config)
        if sparse is not None:
            return sparse
        return scheduler_block_size if scheduler_block_size in (256, 1024) else 16

    @classmethod
    def block_rule(cls, hf_config: HfConfig) -> str:
        sparse = declared_sparse_block_size(hf_config)
        if sparse is not None:
            return f"pages at its sparse_block_size, {sparse} tokens, whatever the scheduler says"
        return "pages at the scheduler's block when it is 256 or 1024 tokens, else at 16 tokens"

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
        if not isinstance(module, MhaAttention):
            return ()
        if module.indexer is not None:
            return (mha_geometry(module), MHA_INDEX)
        return (mha_geometry(module),)

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        counts = self.pool_rows.counts()
        indexed = {
            mha_geometry(m)
            for m in modules
            if isinstance(m, MhaAttention) and m.indexer is not None
        }
        if len(indexed) > 1:
            # One indexer row space; a second geometry's sparse layers would need a second.
            raise ValueError(
                f"sparse MHA layers span KV geometries {sorted(map(str, indexed))}; their "
                f"indexer keys share one {MHA_INDEX!r} row space and one pool holds it"
            )
        for geometry in dict.fromkeys(
            mha_geometry(m) for m in modules if isinstance(m, MhaAttention)
        ):
            index = indexer_key_field(
                modules,
                geometry,
                counts.get(MHA_INDEX, 0),
                block_size=self.block_size,
                blocks_per_entry=self.blocks_per_entry,
                kv_dtype=self.kv_dtype,
            )
            self.paged_pools[str(geometry)] = mha_pool_for(
                modules,
                geometry,
                counts[geometry],
                block_size=self.block_size,
                blocks_per_entry=self.blocks_per_entry,
                kv_dtype=self.kv_dtype,
                layout=self.BACKEND.LAYOUT,
                extra_fields=(index,) if index is not None else (),
            )

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        views = self.paged_views[str(mha_geometry(module))]
        if kind == MHA_INDEX:
            # The kernel's shape, which only this backend knows: (num_blocks, block, index_dim).
            keys = views.field_row(INDEX_FIELD, row)
            return {"index_cache": keys.view(views.num_blocks, self.block_size, keys.shape[-1])}
        return self.BACKEND.bind_module_views(module, views, row)

    def view_home(self, module: AttentionModule, view_name: str) -> tuple[Hashable, str, str]:
        field_name = self.BACKEND.VIEW_FIELDS.get(view_name)
        if field_name is None or not isinstance(module, MhaAttention):
            raise KeyError(f"builder {self.name!r} binds no paged view {view_name!r} on {module}")
        geometry = mha_geometry(module)
        kind = MHA_INDEX if field_name == INDEX_FIELD else geometry
        return kind, str(geometry), field_name
