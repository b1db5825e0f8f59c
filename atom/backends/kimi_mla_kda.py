"""The MLA + KDA hybrid (Kimi-Linear): MLA layers between KDA linear-attention layers.

The MLA builder plus the STATE pool the linear layers keep. The MLA pool covers only the MLA
modules -- the walk gives the KDA layers a ``linear_state`` row instead -- which is the shorter
layer axis a hook once had to state, and which the transfer path must use: a hybrid caches for
fewer layers than the model has.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import ClassVar

import torch

from atom.backends.backend import AttentionBackend
from atom.backends.builder import KvCacheBuilder
from atom.backends.linear_state import LINEAR_STATE, linear_state_pool, linear_state_views
from atom.backends.mla import AiterMlaBackend, MlaMetadataBuilder
from atom.models.modules import AttentionModule, LinearAttention


class KimiMlaKdaBackend(AiterMlaBackend):
    NAME = "kimi-mla-kda"

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return KimiMlaKdaMetadataBuilder


class KimiMlaKdaMetadataBuilder(MlaMetadataBuilder):
    BACKEND: ClassVar[type[AttentionBackend]] = KimiMlaKdaBackend

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        if isinstance(module, LinearAttention):
            return (LINEAR_STATE,)
        return super().row_kinds(module)

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        super()._build_pools(modules)
        pool = linear_state_pool(modules, self.pool_rows.counts().get(LINEAR_STATE, 0))
        if pool is not None:
            self.state_pools[LINEAR_STATE] = pool

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        if kind == LINEAR_STATE:
            return linear_state_views(self.state_views[LINEAR_STATE], row)
        return super()._views_for(module, kind, row)
