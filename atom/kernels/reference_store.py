"""The reference store op: where one token's bytes sit in each bound view, in plain torch.

A kernel addresses a paged view with a *slot* -- ``backend_block * block_size + offset`` -- and
takes the block size off the cache it was bound to, never from metadata of its own. This module
is that addressing written once, for every view name a builder binds and both MHA layouts, so the
write-readback contract exercises the same arithmetic a kernel does: a view bound at the wrong
block reads and writes the wrong bytes here too.

Shapes per backend block, with ``x = 16 // itemsize`` (declared in ``pool_layout.paged_layout``):

==============  ===========================================  =================================
view            NHD                                          SHUFFLE
==============  ===========================================  =================================
``k_cache``     ``(num_blocks, block, heads, head_dim)``     ``(num_blocks, heads, head_dim//x, block, x)``
``v_cache``     ``(num_blocks, block, heads, v_head_dim)``   ``(num_blocks, heads, block//x, v_head_dim, x)``
``k_scale``     ``(num_blocks, heads, block)``               same
``kv_cache``    ``(num_blocks, block, latent)``              --
``index_*``     ``(entries, tokens_per_entry, ...)``         -- (addressed per scheduler block)
==============  ===========================================  =================================

fp8 K/V are stored as ``value / scale`` with one fp32 scale per token per head
(``amax / finfo(dtype).max``: 448 for e4m3fn, 240 for e4m3fnuz, 57344 for e5m2), written to the scale views beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from atom.pool_layout.refusals import require_count

PAGED_VIEWS = ("k_cache", "v_cache", "k_scale", "v_scale", "kv_cache")
INDEX_VIEWS = ("index_cache", "index_scale")
STATE_VIEWS = ("conv_state", "recurrent_state")


def _layout(layout: str) -> str:
    if layout not in ("nhd", "shuffle"):
        raise ValueError(f"paged layout {layout!r} is not 'nhd' or 'shuffle'")
    return layout


def block_size_of(name: str, cache: torch.Tensor, layout: str) -> int:
    """Tokens in one block of ``cache``, read off its shape as a kernel does."""
    layout = _layout(layout)
    if name in ("k_scale", "v_scale"):
        return cache.shape[2]
    if name == "kv_cache" or layout == "nhd" or name in INDEX_VIEWS:
        return cache.shape[1]
    if name == "k_cache":
        return cache.shape[3]
    if name == "v_cache":
        return cache.shape[2] * cache.shape[4]
    raise ValueError(f"view {name!r} is not a paged view")


def _token_index(name: str, cache: torch.Tensor, layout: str, slot):
    """The index of token ``slot`` in ``cache``: an int (a view of one token) or a 1-D tensor of
    slots (every token at once, advanced indexing), through the same arithmetic."""
    bs = block_size_of(name, cache, layout)
    block, off = slot // bs, slot % bs
    if name in ("k_scale", "v_scale"):
        return block, slice(None), off
    if name == "kv_cache" or layout == "nhd" or name in INDEX_VIEWS:
        return block, off
    if name == "k_cache":
        return block, slice(None), slice(None), off, slice(None)
    x = cache.shape[-1]
    return block, slice(None), off // x, slice(None), off % x


def token_at(name: str, cache: torch.Tensor, layout: str, slot: int) -> torch.Tensor:
    """The elements of token ``slot`` in ``cache``: a view, so writing it writes the pool."""
    require_count("slot", slot)
    block = slot // block_size_of(name, cache, layout)
    if block >= cache.shape[0]:
        raise ValueError(f"slot {slot} is block {block}; view {name!r} has {cache.shape[0]} blocks")
    return cache[_token_index(name, cache, layout, slot)]


def _slots(name: str, cache: torch.Tensor, layout: str, slots: Sequence[int]) -> torch.Tensor:
    slots = torch.as_tensor(slots, dtype=torch.int64).reshape(-1)
    if slots.numel() and int(slots.min()) < 0:
        raise ValueError(f"slots must be non-negative, got {int(slots.min())}")
    bs = block_size_of(name, cache, layout)
    if slots.numel() and int(slots.max()) // bs >= cache.shape[0]:
        top = int(slots.max())
        raise ValueError(
            f"slot {top} is block {top // bs}; view {name!r} has {cache.shape[0]} blocks"
        )
    return slots


def load_tokens(name: str, cache: torch.Tensor, layout: str, slots: Sequence[int]) -> torch.Tensor:
    """Tokens ``slots`` of ``cache`` as ``(len(slots), *token_shape)``: :func:`token_at`'s
    indexing for many tokens at once (a copy)."""
    return cache[_token_index(name, cache, layout, _slots(name, cache, layout, slots))]


def store_tokens(
    name: str, cache: torch.Tensor, layout: str, slots: Sequence[int], values: torch.Tensor
) -> None:
    """Write ``values`` (``(len(slots), *token_shape)``, already in ``cache``'s dtype) into
    tokens ``slots``: the batched form of a write through :func:`token_at`."""
    cache[_token_index(name, cache, layout, _slots(name, cache, layout, slots))] = values


def reblock(name: str, cache: torch.Tensor, layout: str, block_size: int) -> torch.Tensor:
    """The same bytes as ``cache``, read at ``block_size`` tokens a block.

    This is how a reader holding another builder's block tables sees a pool: a verifier reading
    a draft's pool with the target builder's block. When the pool was blocked at that block the
    result is ``cache`` itself; when it was not, tokens land elsewhere, which is the point.
    """
    layout = _layout(layout)
    bs = block_size_of(name, cache, layout)
    tokens = cache.shape[0] * bs
    if tokens % block_size:
        raise ValueError(
            f"{tokens} tokens of view {name!r} are not whole {block_size}-token blocks"
        )
    nb = tokens // block_size
    if not cache.is_contiguous():
        # A copy would be a different set of bytes; reblocking is only ever a reinterpretation.
        raise ValueError(
            f"view {name!r} is not dense (stride {cache.stride()}); it cannot be reblocked"
        )
    flat = cache.view(-1)
    if name in ("k_scale", "v_scale"):
        shape = (nb, cache.shape[1], block_size)
    elif name == "kv_cache" or layout == "nhd":
        shape = (nb, block_size, *cache.shape[2:])
    elif name == "k_cache":
        shape = (nb, cache.shape[1], cache.shape[2], block_size, cache.shape[4])
    else:
        x = cache.shape[4]
        if block_size % x:
            raise ValueError(f"SHUFFLE V needs a block divisible by x={x}, got {block_size}")
        shape = (nb, cache.shape[1], block_size // x, cache.shape[3], x)
    return flat.view(shape)


def quantize_fp8(value: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-head fp8 quantization of one token (heads first, any layout of the rest): the stored
    values and one scale per head."""
    amax = value.float().flatten(1).abs().amax(dim=1).clamp(min=1e-6)
    # Each fp8 dtype's own largest finite value: 448 for e4m3fn, 240 for ROCm's e4m3fnuz,
    # 57344 for e5m2. Dividing by 448 everywhere would overflow fnuz to NaN.
    scale = amax / torch.finfo(dtype).max
    per_head = scale.view(-1, *([1] * (value.dim() - 1)))
    return (value.float() / per_head).to(dtype), scale.to(torch.float32)


def store_token(
    views: Mapping[str, torch.Tensor], layout: str, slot: int, values: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """Write one token through a module's bound views, as a store kernel would.

    ``values`` maps ``k_cache`` / ``v_cache`` / ``kv_cache`` to the token's un-quantized value;
    an fp8 K/V also writes its scale view. Returns what each view now holds for the token, in the
    view's own dtype -- what a readback must find.
    """
    written: dict[str, torch.Tensor] = {}
    for name, value in values.items():
        cache = views[name]
        target = token_at(name, cache, layout, slot)
        scale_name = {"k_cache": "k_scale", "v_cache": "v_scale"}.get(name)
        if scale_name is not None and scale_name in views:
            stored, scale = quantize_fp8(value, cache.dtype)
            target.copy_(stored)
            token_at(scale_name, views[scale_name], layout, slot).copy_(scale)
            written[scale_name] = scale
        else:
            stored = value.to(cache.dtype)
            target.copy_(stored)
        written[name] = stored
    return written


def load_token(
    views: Mapping[str, torch.Tensor], layout: str, slot: int, names: Sequence[str]
) -> dict[str, torch.Tensor]:
    return {name: token_at(name, views[name], layout, slot).clone() for name in names}


def reference_reshape_and_cache(
    key: torch.Tensor,
    value: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    slot_mapping: Sequence[int],
    *,
    layout: str,
    k_scale: torch.Tensor | None = None,
    v_scale: torch.Tensor | None = None,
) -> None:
    """Batched form of :func:`store_token` over ``(tokens, heads, dim)`` K and V -- the reference
    the optional Triton kernel is compared against."""
    views = {"k_cache": k_cache, "v_cache": v_cache}
    if k_scale is not None:
        views["k_scale"] = k_scale
    if v_scale is not None:
        views["v_scale"] = v_scale
    for t, slot in enumerate(slot_mapping):
        store_token(views, layout, int(slot), {"k_cache": key[t], "v_cache": value[t]})
