"""The paged layouts an MHA block's bytes are read in, each declared once.

Seven places once spelled out the SHUFFLE shapes of a paged MHA block. They
agreed on every byte and disagreed on a view: one builder declared V
non-transposed where the others declared it 5-D. Nothing could catch it --
the byte count is identical either way -- and the one consumer that cared
read `v_cache.ndim` at runtime and densified anything not already 5-D, which
relaid a whole 1.4 GiB draft pool once per chunked-prefill forward (7.1% of
GPU time). So the shapes live here, once, and a pool hands every consumer the
view its layout declares; no consumer is ever handed a view it must densify.

Shapes are per backend block (`block_size` tokens), with `x = 16 // itemsize`
elements making one 16-byte vector:

  NHD      K (block_size, heads, head_dim)
           V (block_size, heads, v_head_dim)
  SHUFFLE  K (heads, head_dim // x, block_size, x)
           V (heads, block_size // x, v_head_dim, x)     -- the 5-D V view

Both are reinterpretations of one dense block; neither costs a byte more.
"""

from __future__ import annotations

import enum

import torch

VECTOR_BYTES = 16
"""Bytes one SHUFFLE vector holds; `x = VECTOR_BYTES // itemsize` elements."""


class PagedLayout(enum.Enum):
    NHD = "nhd"
    SHUFFLE = "shuffle"

    @classmethod
    def parse(cls, value: object) -> PagedLayout:
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for layout in cls:
                if layout.value == value.lower():
                    return layout
        raise ValueError(f"paged layout {value!r} is not one of {[layout.value for layout in cls]}")


def shuffle_vector(dtype: torch.dtype) -> int:
    """`x`: elements of `dtype` in one 16-byte vector."""
    if dtype.itemsize > VECTOR_BYTES:
        raise ValueError(f"dtype {dtype} is wider than a {VECTOR_BYTES}-byte vector")
    return VECTOR_BYTES // dtype.itemsize


def k_block_shape(
    layout: PagedLayout, *, block_size: int, num_kv_heads: int, head_dim: int, dtype: torch.dtype
) -> tuple[int, ...]:
    """One backend block of K in `layout`."""
    if layout is PagedLayout.NHD:
        return (block_size, num_kv_heads, head_dim)
    x = shuffle_vector(dtype)
    if head_dim % x:
        raise ValueError(f"SHUFFLE K needs head_dim divisible by x={x} ({dtype}), got {head_dim}")
    return (num_kv_heads, head_dim // x, block_size, x)


def v_block_shape(
    layout: PagedLayout,
    *,
    block_size: int,
    num_kv_heads: int,
    v_head_dim: int,
    dtype: torch.dtype,
) -> tuple[int, ...]:
    """One backend block of V in `layout` (5-D with the block axis under SHUFFLE)."""
    if layout is PagedLayout.NHD:
        return (block_size, num_kv_heads, v_head_dim)
    x = shuffle_vector(dtype)
    if block_size % x:
        raise ValueError(
            f"SHUFFLE V needs block_size divisible by x={x} ({dtype}), got {block_size}"
        )
    return (num_kv_heads, block_size // x, v_head_dim, x)
