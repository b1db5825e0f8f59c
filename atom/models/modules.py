"""The attention-like modules a model has, each saying what it caches on this rank.

A module is the unit a pool row belongs to: ``pool_rows[kind][module]``. Modules therefore hash
by identity (``eq=False``) -- two layers of identical shape are two rows -- and print as their
prefix, which is what a ``KeyError`` from ``pool_rows`` names.

What a module caches is stated per tensor-parallel rank: a head count here is the rank's share,
already divided (or replicated, when there are more ranks than KV heads). Nothing here knows
about pools or backends; a backend reads these declarations and decides which row space a module
sits in, and binding writes the module's views back onto it (``kv_views``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from atom.pool_layout.reach import FULL, Reach, ReachKind


@dataclass(eq=False)
class AttentionModule:
    """Common part: where the module sits and whether it belongs to a draft."""

    prefix: str
    #: the layer's GLOBAL index in its model (a PP stage's first module may be layer 39).
    layer_num: int
    #: part of a speculative-decoding draft: an MTP layer of the target, or an EAGLE head.
    is_draft: bool = False
    #: how far back the module reads (full, a sliding window, a local chunk): what bounds a
    #: request's footprint in its rows. The pool_rows walk records it beside the row.
    reach: Reach = FULL
    #: views bound by a builder, by name (``k_cache``, ``kv_cache``, ``conv_state`` ...).
    kv_views: dict[str, torch.Tensor] = field(default_factory=dict, repr=False)

    def bind(self, views: dict[str, torch.Tensor]) -> None:
        self.kv_views = dict(views)

    def unbind(self) -> None:
        self.kv_views = {}

    def caches(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.prefix

    __str__ = __repr__


@dataclass(frozen=True)
class IndexerKeys:
    """A sparse-attention indexer's key cache: one ``head_dim`` key per token."""

    head_dim: int


@dataclass(eq=False, repr=False)
class MhaAttention(AttentionModule):
    """Paged K and V, per rank: ``(num_kv_heads, head_dim, v_head_dim)``; a sparse layer
    (MiniMax-M3) also caches its indexer's keys, one ``IndexerKeys.head_dim`` key per token,
    which are not split by heads."""

    num_kv_heads: int = 0
    head_dim: int = 0
    v_head_dim: int = 0
    indexer: IndexerKeys | None = None

    @property
    def sliding_window(self) -> int | None:
        """The window of a sliding-window layer, in tokens; None for any other reach. A window
        layer caches the same paged rows as a full one; what it changes is how long it holds
        them (``reach``), which the capacity plan prices."""
        return self.reach.tokens if self.reach.kind is ReachKind.SLIDING else None

    def caches(self) -> str:
        text = f"mha kv_heads={self.num_kv_heads} head_dim={self.head_dim} v_head_dim={self.v_head_dim}"
        if self.indexer is not None:
            text += f" indexer_keys={self.indexer.head_dim}"
        return text


@dataclass(eq=False, repr=False)
class MlaAttention(AttentionModule):
    """One packed latent row per token (``kv_lora_rank + qk_rope_head_dim``), the same on every
    rank because the latent is not split by heads; optionally indexer keys beside it."""

    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    indexer: IndexerKeys | None = None
    #: the width one cached token takes, in elements: ``latent_dim`` unless the config declares a
    #: padded one (a NoPE model's row need not equal ``kv_lora_rank + qk_rope_head_dim``).
    kv_entry_dim: int = 0

    def __post_init__(self) -> None:
        if not self.kv_entry_dim:
            self.kv_entry_dim = self.latent_dim

    @property
    def latent_dim(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    def caches(self) -> str:
        text = f"mla latent={self.kv_lora_rank}+{self.qk_rope_head_dim}"
        if self.kv_entry_dim != self.latent_dim:
            text += f" padded={self.kv_entry_dim}"
        if self.indexer is not None:
            text += f" indexer_keys={self.indexer.head_dim}"
        return text


@dataclass(eq=False, repr=False)
class LinearAttention(AttentionModule):
    """Per-request state of a linear-attention layer (gated delta net, KDA): a short-conv
    window and a recurrent state, both per rank."""

    #: "gdn" or "kda": which kernel family, for the report only.
    variant: str = ""
    conv_shape: tuple[int, ...] = ()
    recurrent_shape: tuple[int, ...] = ()
    dtype: Any = torch.bfloat16

    def caches(self) -> str:
        return f"{self.variant} conv={self.conv_shape} recurrent={self.recurrent_shape}"


@dataclass(eq=False, repr=False)
class V4Attention(AttentionModule):
    """A DeepSeek-V4 layer: a compress ratio (0 dense, 4 CSA, 128 HCA) and the widths of its
    one-head KV row (``head_dim``, RoPE ``rope_head_dim`` of it). A CSA layer also keeps an
    indexer over its compressed rows (``index_head_dim``); every layer keeps a sliding window
    of ``window`` tokens. MQA: the single KV head is not split across ranks."""

    compress_ratio: int = 0
    head_dim: int = 0
    rope_head_dim: int = 0
    index_head_dim: int = 0
    window: int = 0

    def caches(self) -> str:
        kind = {0: "dense", 4: "csa", 128: "hca"}.get(self.compress_ratio, "?")
        text = (
            f"v4 {kind} ratio={self.compress_ratio} head_dim={self.head_dim} window={self.window}"
        )
        if self.index_head_dim:
            text += f" indexer={self.index_head_dim}"
        return text
