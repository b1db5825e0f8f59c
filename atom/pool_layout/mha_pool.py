"""`MhaKvPool`: the one declaration of a paged MHA pool.

K and V, and for an fp8 pool the per-token-per-head scale planes, each a
field of `rows` rows whose per-entry shape already holds the entry's
`blocks_per_entry` backend blocks. It takes the numbers that define the bytes
-- rows, block, heads, head dims, dtypes -- and never a model runner or a
config; the row count is the caller's, from the `pool_rows` walk, because a
config says what one row holds and only the walk knows how many rows exist
(`num_hidden_layers` was once used and is one layer too many on any hybrid).

`extra_fields` are declared by a backend that knows what they hold (MiniMax-
M3's indexer keys) and read back through `field_view` in the shape only that
backend knows; the pool is told bytes and prices and carves them with the
rest, as their own group, so one expression answers sizing and allocation.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .entry_field import EntryField
from .paged_layout import PagedLayout, k_block_shape, v_block_shape
from .paged_pool import PagedPool, PagedPoolViews, is_fp8
from .pool_rows import KvGeometry
from .refusals import require_count, require_dtype


class MhaKvPool(PagedPool):
    """A paged MHA pool: `rows` rows of K, V and (fp8) their scales.

    `layout` is the paged layout kernels take (`"nhd"` or `"shuffle"`); the
    views come only in that layout, declared once in `paged_layout`.
    `scale_dtype` applies only to an fp8 pool, whose scales are one per token
    per head per row; a bf16 pool's scale group holds no field, so it carves
    to None, rather than two scale fields of zero bytes that every reader
    would have to test for (the DeepSeek-V4 builds once answered "how many
    planes" five separate ways for exactly that reason).
    """

    def __init__(
        self,
        rows: int,
        *,
        block_size: int,
        blocks_per_entry: int,
        num_kv_heads: int,
        head_dim: int,
        v_head_dim: int | None = None,
        kv_dtype: torch.dtype,
        scale_dtype: torch.dtype = torch.float32,
        extra_fields: Sequence[EntryField] = (),
        layout: str | PagedLayout = PagedLayout.NHD,
    ) -> None:
        super().__init__(rows, block_size=block_size, blocks_per_entry=blocks_per_entry)
        self.num_kv_heads = require_count("MhaKvPool num_kv_heads", num_kv_heads, minimum=1)
        self.head_dim = require_count("MhaKvPool head_dim", head_dim, minimum=1)
        self.v_head_dim = (
            self.head_dim
            if v_head_dim is None
            else require_count("MhaKvPool v_head_dim", v_head_dim, minimum=1)
        )
        self.kv_dtype = require_dtype("MhaKvPool kv_dtype", kv_dtype)
        self.scale_dtype = require_dtype("MhaKvPool scale_dtype", scale_dtype)
        self.layout = PagedLayout.parse(layout)
        if isinstance(extra_fields, (str, bytes)) or not isinstance(extra_fields, Sequence):
            raise TypeError(f"extra_fields must be a sequence of EntryField, got {extra_fields!r}")
        for f in extra_fields:
            if not isinstance(f, EntryField):
                raise TypeError(f"extra_fields takes EntryField items, got {f!r}")
        self.extra_fields = tuple(extra_fields)
        self.k_block_shape = k_block_shape(
            self.layout,
            block_size=self.block_size,
            num_kv_heads=self.num_kv_heads,
            head_dim=self.head_dim,
            dtype=self.kv_dtype,
        )
        self.v_block_shape = v_block_shape(
            self.layout,
            block_size=self.block_size,
            num_kv_heads=self.num_kv_heads,
            v_head_dim=self.v_head_dim,
            dtype=self.kv_dtype,
        )
        self.scale_block_shape = (self.num_kv_heads, self.block_size)
        bpe = self.blocks_per_entry
        kv = (
            EntryField("k", self.rows, (bpe, *self.k_block_shape), self.kv_dtype),
            EntryField("v", self.rows, (bpe, *self.v_block_shape), self.kv_dtype),
        )
        scales: tuple[EntryField, ...] = ()
        if self.has_scales:
            scales = (
                EntryField("k_scale", self.rows, (bpe, *self.scale_block_shape), scale_dtype),
                EntryField("v_scale", self.rows, (bpe, *self.scale_block_shape), scale_dtype),
            )
        self._groups = (kv, scales, self.extra_fields)
        self._check_groups(self._groups)

    @property
    def has_scales(self) -> bool:
        """Whether K and V carry per-token-per-head dequantization scales (fp8)."""
        return is_fp8(self.kv_dtype)

    @property
    def geometry(self) -> KvGeometry:
        return KvGeometry(self.num_kv_heads, self.head_dim)

    @property
    def field_groups(self) -> tuple[tuple[EntryField, ...], ...]:
        """(K, V), (k_scale, v_scale) or (), extra_fields: one group per region."""
        return self._groups

    def role_prefix(self) -> str:
        return str(self.geometry)

    def allocate(
        self,
        entries: int,
        *,
        device: torch.device | str = "cpu",
        buf: torch.Tensor | None = None,
    ) -> MhaKvPoolViews:
        """Carve `entries` entries over a fresh buffer, or over `buf` exactly.

        Handed `buf` (the runner's region, or a P/D peer's imported pool), the
        carve is also the check that it fits this declaration.
        """
        return MhaKvPoolViews(self, entries, self._carve(entries, device, buf))

    def __repr__(self) -> str:
        return (
            f"MhaKvPool({self.rows} rows {self.geometry} {self.kv_dtype}, block {self.block_size}"
            f" x {self.blocks_per_entry}/entry, {self.layout.value}, {self.entry_bytes} B/entry)"
        )


class MhaKvPoolViews(PagedPoolViews):
    """An allocated `MhaKvPool`: per-row paged views in the pool's one layout."""

    pool: MhaKvPool

    def _check_layout(self, layout: str | PagedLayout | None) -> None:
        # A caller may say which layout it expects; it gets the pool's or a
        # refusal, never a second reading of the same bytes in another layout
        # (which is how a non-5-D V view reached a kernel that densified it).
        if layout is not None and PagedLayout.parse(layout) is not self.pool.layout:
            raise ValueError(
                f"layout {layout!r} was asked of a pool declared {self.pool.layout.value!r}; "
                "declare the pool in the layout its kernels take"
            )

    def k_cache(self, row: int, layout: str | PagedLayout | None = None) -> torch.Tensor:
        """Row `row` of K: `(num_blocks, *k_block_shape)`, dense, no copy."""
        self._check_layout(layout)
        return self._blocks("k", row, self.pool.k_block_shape)

    def v_cache(self, row: int, layout: str | PagedLayout | None = None) -> torch.Tensor:
        """Row `row` of V: `(num_blocks, *v_block_shape)` (5-D under SHUFFLE)."""
        self._check_layout(layout)
        return self._blocks("v", row, self.pool.v_block_shape)

    def _scale(self, name: str, row: int) -> torch.Tensor:
        if not self.pool.has_scales:
            raise ValueError(
                f"a {self.pool.kv_dtype} pool has no {name}: scales exist only for fp8 KV"
            )
        return self._blocks(name, row, self.pool.scale_block_shape)

    def k_scale(self, row: int) -> torch.Tensor:
        """Row `row`'s K scales: `(num_blocks, num_kv_heads, block_size)`, one per token per head."""
        return self._scale("k_scale", row)

    def v_scale(self, row: int) -> torch.Tensor:
        """Row `row`'s V scales: `(num_blocks, num_kv_heads, block_size)`."""
        return self._scale("v_scale", row)
