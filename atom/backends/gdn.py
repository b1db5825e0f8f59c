"""The gated-delta-net hybrid (Qwen3.5): MHA full-attention layers between GDN layers.

The builder is the MHA builder plus a STATE pool. It used to allocate its own tensor and inherit
the bind, which is how it needed a pool as well; now the walk hands it both row spaces and it
owns both pools, so sizing and allocation read the same declarations.
"""

from __future__ import annotations

from typing import ClassVar

from atom.backends.builder import KvCacheBuilder
from atom.backends.linear_state import LinearStateMixin
from atom.backends.mha import AiterBackend, MhaMetadataBuilder


class GDNAttentionBackend(AiterBackend):
    NAME = "gdn-hybrid"
    #: A draft of this flavour keeps per-request state beside its paged rows, which a sibling
    #: paged pool cannot hold; it binds into the target's builder, state and all.
    DRAFT_OWNS_KV_POOL = False

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return GDNAttentionMetadataBuilder


class GDNAttentionMetadataBuilder(LinearStateMixin, MhaMetadataBuilder):
    BACKEND: ClassVar[type[AiterBackend]] = GDNAttentionBackend
