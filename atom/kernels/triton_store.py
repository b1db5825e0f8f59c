"""A Triton store kernel over bound NHD views: ``reshape_and_cache`` for paged K and V.

Optional, GPU only, and imported only lazily: this module runs ``@triton.jit`` at import, so
nothing CI imports may import it at module level, and a test that does must first
``pytest.importorskip("triton")``. It writes through the views the runner bound -- no
densifying copy between bind and kernel -- and takes the block size off the cache, never from
metadata of its own, which is the rule a draft's kernels follow too. The torch reference it is
checked against is :func:`atom.kernels.reference_store.reference_reshape_and_cache`.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _store_nhd_kernel(
    key_ptr,
    value_ptr,
    k_cache_ptr,
    v_cache_ptr,
    slot_ptr,
    key_stride,
    value_stride,
    cache_block_stride,
    cache_token_stride,
    block_size,
    ROW: tl.constexpr,
    BLOCK: tl.constexpr,
):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token).to(tl.int64)
    if slot < 0:  # a padded token writes nothing
        return
    block = slot // block_size
    offset = slot % block_size
    cols = tl.arange(0, BLOCK)
    mask = cols < ROW
    base = block * cache_block_stride + offset * cache_token_stride
    k = tl.load(key_ptr + token * key_stride + cols, mask=mask)
    v = tl.load(value_ptr + token * value_stride + cols, mask=mask)
    tl.store(k_cache_ptr + base + cols, k.to(k_cache_ptr.dtype.element_ty), mask=mask)
    tl.store(v_cache_ptr + base + cols, v.to(v_cache_ptr.dtype.element_ty), mask=mask)


def reshape_and_cache_nhd(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
) -> None:
    """Store ``(tokens, heads, head_dim)`` K and V at ``slot_mapping`` in NHD caches
    ``(num_blocks, block_size, heads, head_dim)``; K and V must share a head dim here."""
    if k_cache.dim() != 4 or v_cache.shape != k_cache.shape:
        raise ValueError(
            f"NHD caches must be 4-D and alike, got K {tuple(k_cache.shape)} V {tuple(v_cache.shape)}"
        )
    if k_cache.stride(2) != k_cache.shape[3] or k_cache.stride(3) != 1:
        raise ValueError(f"NHD cache rows must be dense per token, got stride {k_cache.stride()}")
    tokens, heads, head_dim = key.shape
    row = heads * head_dim
    if row != k_cache.shape[2] * k_cache.shape[3]:
        raise ValueError(
            f"a token of {heads} x {head_dim} does not fit a cache row {tuple(k_cache.shape[2:])}"
        )
    key = key.reshape(tokens, row)
    value = value.reshape(tokens, row)
    _store_nhd_kernel[(tokens,)](
        key,
        value,
        k_cache,
        v_cache,
        slot_mapping,
        key.stride(0),
        value.stride(0),
        k_cache.stride(0),
        k_cache.stride(1),
        k_cache.shape[1],
        ROW=row,
        BLOCK=triton.next_power_of_2(row),
    )
