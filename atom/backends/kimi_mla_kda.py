"""The MLA + KDA hybrid (Kimi-Linear): MLA layers between KDA linear-attention layers.

The MLA builder plus the STATE pool the linear layers keep. The MLA pool covers only the MLA
modules -- the walk gives the KDA layers a ``linear_state`` row instead -- which is the shorter
layer axis a hook once had to state, and which the transfer path must use: a hybrid caches for
fewer layers than the model has.
"""

from __future__ import annotations

from typing import ClassVar

from atom.backends.backend import AttentionBackend
from atom.backends.builder import KvCacheBuilder
from atom.backends.linear_state import LinearStateMixin
from atom.backends.mla import AiterMlaBackend, MlaMetadataBuilder


class KimiMlaKdaBackend(AiterMlaBackend):
    NAME = "kimi-mla-kda"

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return KimiMlaKdaMetadataBuilder


class KimiMlaKdaMetadataBuilder(LinearStateMixin, MlaMetadataBuilder):
    BACKEND: ClassVar[type[AttentionBackend]] = KimiMlaKdaBackend
