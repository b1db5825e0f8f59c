"""`MlaKvPool`: the one declaration of a paged MLA pool.

MLA packs the compressed latent `k_c` and the rotary `k_pe` into one row and
absorbs V, so an entry is one field, `kv`, whose per-token width is
`kv_entry_dim`: `kv_lora_rank + qk_rope_head_dim` unless a model declares a
padded width. Three places once wrote the literal `576` while the expression
that exists precisely for a NoPE model's padded width was read by two others;
every model happened to be 576, so it was a latent split rather than a live
one. Here the width is only ever derived.

A sparse variant adds an indexer field (`IndexerField`), owned by a subset of
layers -- its own row count -- and holding one key per token or, where the
indexer pools tokens, fewer (`tokens_per_entry`). Differing row counts are
what `EntryField` already says, so it is a second field group in the same
pool, not a second pool, and it is one scheduler block wide per entry.

MLA usually pages at `block_size` 1, so `blocks_per_entry` backend blocks
make one entry; keeping the entry at the scheduler block is what lets a row
of `region_tensors` be the unit a transfer registers with no `* block_ratio`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .entry_field import EntryField
from .paged_pool import PagedPool, PagedPoolViews
from .refusals import require_count, require_dtype


@dataclass(frozen=True)
class IndexerField:
    """The sparse indexer's key cache: `rows` rows of `tokens_per_entry` keys.

    `scale_dtype`, when set, adds one dequantization scale per key as its own
    field (`index_scale`).
    """

    rows: int
    head_dim: int
    dtype: torch.dtype
    tokens_per_entry: int
    scale_dtype: torch.dtype | None = None

    def __post_init__(self) -> None:
        require_count("IndexerField rows", self.rows, minimum=1)
        require_count("IndexerField head_dim", self.head_dim, minimum=1)
        require_count("IndexerField tokens_per_entry", self.tokens_per_entry, minimum=1)
        require_dtype("IndexerField dtype", self.dtype)
        if self.scale_dtype is not None:
            require_dtype("IndexerField scale_dtype", self.scale_dtype)


class MlaKvPool(PagedPool):
    """A paged MLA pool: `rows` latent rows, plus an optional indexer group."""

    kind = "mla"

    def __init__(
        self,
        rows: int,
        *,
        block_size: int,
        blocks_per_entry: int,
        kv_lora_rank: int,
        qk_rope_head_dim: int,
        kv_dtype: torch.dtype,
        index: IndexerField | None = None,
        kv_entry_dim: int | None = None,
    ) -> None:
        super().__init__(rows, block_size=block_size, blocks_per_entry=blocks_per_entry)
        self.kv_lora_rank = require_count("MlaKvPool kv_lora_rank", kv_lora_rank, minimum=1)
        self.qk_rope_head_dim = require_count(
            "MlaKvPool qk_rope_head_dim", qk_rope_head_dim, minimum=0
        )
        latent = self.kv_lora_rank + self.qk_rope_head_dim
        if kv_entry_dim is None:
            kv_entry_dim = latent
        require_count("MlaKvPool kv_entry_dim", kv_entry_dim, minimum=1)
        if kv_entry_dim < latent:
            raise ValueError(
                f"MlaKvPool kv_entry_dim {kv_entry_dim} is narrower than kv_lora_rank + "
                f"qk_rope_head_dim = {latent}"
            )
        self.kv_entry_dim = kv_entry_dim
        self.kv_dtype = require_dtype("MlaKvPool kv_dtype", kv_dtype)
        if index is not None and not isinstance(index, IndexerField):
            raise TypeError(f"MlaKvPool index must be an IndexerField or None, got {index!r}")
        self.index = index
        kv = (
            EntryField(
                "kv", self.rows, (self.blocks_per_entry, self.block_size, kv_entry_dim), kv_dtype
            ),
        )
        indexer: tuple[EntryField, ...] = ()
        if index is not None:
            if index.rows > self.rows:
                raise ValueError(
                    f"IndexerField rows {index.rows} exceed the pool's {self.rows} rows; "
                    "an indexer is owned by a subset of the MLA layers"
                )
            if self.entry_tokens % index.tokens_per_entry:
                raise ValueError(
                    f"IndexerField tokens_per_entry {index.tokens_per_entry} does not divide "
                    f"the entry's {self.entry_tokens} tokens"
                )
            indexer = (
                EntryField(
                    "index", index.rows, (index.tokens_per_entry, index.head_dim), index.dtype
                ),
            )
            if index.scale_dtype is not None:
                indexer += (
                    EntryField(
                        "index_scale", index.rows, (index.tokens_per_entry,), index.scale_dtype
                    ),
                )
        self._groups = (kv, indexer)
        self._check_groups(self._groups)

    @property
    def field_groups(self) -> tuple[tuple[EntryField, ...], ...]:
        """(kv,), (index, index_scale) or (): one group per region."""
        return self._groups

    def allocate(
        self,
        entries: int,
        *,
        device: torch.device | str = "cpu",
        buf: torch.Tensor | None = None,
    ) -> MlaKvPoolViews:
        return MlaKvPoolViews(self, entries, self._carve(entries, device, buf))

    def __repr__(self) -> str:
        return (
            f"MlaKvPool({self.rows} rows x {self.kv_entry_dim} {self.kv_dtype}, block "
            f"{self.block_size} x {self.blocks_per_entry}/entry, {self.entry_bytes} B/entry)"
        )


class MlaKvPoolViews(PagedPoolViews):
    """An allocated `MlaKvPool`: the latent cache and the indexer, per row."""

    pool: MlaKvPool

    def kv_cache(self, row: int) -> torch.Tensor:
        """Row `row`'s latent cache: `(num_blocks, block_size, kv_entry_dim)`."""
        return self._blocks("kv", row, (self.pool.block_size, self.pool.kv_entry_dim))

    def _need_index(self) -> IndexerField:
        if self.pool.index is None:
            raise ValueError("this MlaKvPool declares no indexer (index=None)")
        return self.pool.index

    def index_cache(self, row: int) -> torch.Tensor:
        """Indexer row `row`: `(entries, tokens_per_entry, head_dim)`, one scheduler block wide."""
        self._need_index()
        return self.field_row("index", row)

    def index_scale(self, row: int) -> torch.Tensor:
        """Indexer row `row`'s scales: `(entries, tokens_per_entry)`."""
        if self._need_index().scale_dtype is None:
            raise ValueError("this MlaKvPool's indexer declares no scale_dtype")
        return self.field_row("index_scale", row)
