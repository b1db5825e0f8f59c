"""The gated-delta-net hybrid (Qwen3.5): MHA full-attention layers between GDN layers.

The builder is the MHA builder plus a STATE pool. It used to allocate its own tensor and inherit
the bind, which is how it needed a pool as well; now the walk hands it both row spaces and it
owns both pools, so sizing and allocation read the same declarations.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

import torch

from atom.backends.builder import KvCacheBuilder
from atom.backends.linear_state import LINEAR_STATE, linear_state_pool, linear_state_views
from atom.backends.mha import AiterBackend, MhaMetadataBuilder
from atom.models.modules import AttentionModule, LinearAttention


class GDNAttentionBackend(AiterBackend):
    NAME = "gdn-hybrid"
    #: A draft of this flavour keeps per-request state beside its paged rows, which a sibling
    #: paged pool cannot hold; it binds into the target's builder, state and all.
    DRAFT_OWNS_KV_POOL = False

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return GDNAttentionMetadataBuilder


class GDNAttentionMetadataBuilder(MhaMetadataBuilder):
    BACKEND: ClassVar[type[AiterBackend]] = GDNAttentionBackend

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        if isinstance(module, LinearAttention):
            return (LINEAR_STATE,)
        return super().row_kinds(module)

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        super()._build_pools(modules)
        counts = self.pool_rows.counts()
        pool = linear_state_pool(modules, counts.get(LINEAR_STATE, 0))
        if pool is not None:
            self.state_pools[LINEAR_STATE] = pool

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        if kind == LINEAR_STATE:
            return linear_state_views(self.state_views[LINEAR_STATE], row)
        return super()._views_for(module, kind, row)
