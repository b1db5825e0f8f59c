"""The Triton MHA backend: the aiter backend's pool, block rule and bind, in the NHD layout.

It subclasses :class:`AiterBackend` rather than forwarding to it: one pool, one layout
declaration, one block rule. A builder finds its backend through the ``BACKEND`` class attribute,
so this subclass's builder reads this class's ``LAYOUT`` and inherits everything else -- which is
all ``TritonMHAMetadataBuilder.build_kv_cache_tensor`` ever added over its parent.
"""

from __future__ import annotations

from typing import ClassVar

from atom.backends.builder import KvCacheBuilder
from atom.backends.mha import AiterBackend, MhaMetadataBuilder


class TritonMHABackend(AiterBackend):
    NAME = "triton-mha"
    LAYOUT: ClassVar[str] = "nhd"

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return TritonMHAMetadataBuilder


class TritonMHAMetadataBuilder(MhaMetadataBuilder):
    BACKEND: ClassVar[type[AiterBackend]] = TritonMHABackend
