"""Which backend serves a family: the one dispatch ``attn_family`` feeds.

A ``Family`` value that has no backend raises here instead of falling through to MHA.
"""

from __future__ import annotations

from atom.backends.backend import AttentionBackend
from atom.backends.deepseek_v4 import DeepseekV4Backend
from atom.backends.gdn import GDNAttentionBackend
from atom.backends.kimi_mla_kda import KimiMlaKdaBackend
from atom.backends.mha import AiterBackend
from atom.backends.mla import AiterMlaBackend
from atom.backends.triton_mha import TritonMHABackend
from atom.models.family import Family

_BY_FAMILY: dict[Family, type[AttentionBackend]] = {
    Family.MHA: AiterBackend,
    Family.MLA: AiterMlaBackend,
    Family.GDN: GDNAttentionBackend,
    Family.MLA_KDA: KimiMlaKdaBackend,
    Family.DSV4: DeepseekV4Backend,
}


def select_backend(family: Family, *, mha_backend: str = "aiter") -> type[AttentionBackend]:
    if not isinstance(family, Family):
        raise TypeError(f"select_backend takes a Family, got {family!r}")
    if family not in _BY_FAMILY:
        raise ValueError(f"no backend serves family {family.value!r}")
    if family is Family.MHA and mha_backend == "triton":
        return TritonMHABackend
    if mha_backend not in ("aiter", "triton"):
        raise ValueError(f"mha_backend {mha_backend!r} is not 'aiter' or 'triton'")
    return _BY_FAMILY[family]


def all_backends() -> tuple[type[AttentionBackend], ...]:
    return (
        AiterBackend,
        TritonMHABackend,
        AiterMlaBackend,
        GDNAttentionBackend,
        KimiMlaKdaBackend,
        DeepseekV4Backend,
    )
