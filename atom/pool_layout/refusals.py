"""How this package refuses input: by type first, then by value, naming it.

Every refusal is a `TypeError` (the wrong kind of thing) or a `ValueError`
(the right kind, a wrong value) whose message names what it found and what it
expected. None is an `assert`: `python -O` strips those, and what one guarded
then goes silent -- a truncating floor division, a block id wrapping into
another field.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .byte_view import require_aligned, require_byte_buffer

#: The largest element offset a kernel can form from a view's first element in 32-bit signed
#: arithmetic. Paged kernels take a layer's view and compute `block_id * block_stride + ...` in
#: `int`, and take strides as `int` arguments (aiter's `reshape_and_cache`; vLLM widens the mamba
#: state copy's block id to int64 for exactly this); past it the offset wraps and the kernel
#: reads another block's bytes, which no shape or byte count notices.
INT32_MAX = 2**31 - 1


def require_int32_offsets(
    what: str, size: Sequence[int], stride: Sequence[int], dtype: torch.dtype, *, fewer: str = ""
) -> None:
    """Refuse a view whose strides or largest element offset pass `INT32_MAX`.

    `size` and `stride` are the view's, in elements of `dtype`; `fewer` says what would fit
    (e.g. "at most 131072 entries"), for the refusal.
    """
    if not size or min(size) == 0:
        return
    largest = sum((n - 1) * st for n, st in zip(size, stride, strict=True))
    widest = max(stride)
    if largest <= INT32_MAX and widest <= INT32_MAX:
        return
    which = f"reaches element offset {largest}" if largest > INT32_MAX else f"has stride {widest}"
    hint = f"; {fewer} fit" if fewer else ""
    raise ValueError(
        f"{what}, {tuple(size)} {dtype} with stride {tuple(stride)}, {which}, past 2**31 - 1: a "
        f"kernel indexing it in 32-bit arithmetic wraps and reads another entry's bytes{hint}"
    )


def require_count(name: str, value: object, *, minimum: int = 0, unit: str = "") -> int:
    """Refuse anything but an int (a bool is not a count) at least `minimum`.

    ``unit`` names what is counted ("bytes", "request slots"), said in the refusal."""
    counted = f" ({unit})" if unit else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int{counted}, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}{counted}, got {value!r}")
    return value


def require_align(name: str, value: object) -> int:
    """An alignment is a positive power of two, so alignments compose by max()."""
    require_count(name, value, minimum=1)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two, got {value!r}")
    return value


def require_dtype(name: str, dtype: object) -> torch.dtype:
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype, got {dtype!r}")
    return dtype


def refuse_fill_on_handed_buffer(fields, *, why: str) -> None:
    """Refuse a field's non-zero fill on a buffer the arena did not allocate.

    Both arenas share this rule: the buffer may already hold live bytes, and dropping the fill
    instead would turn, say, a ``-inf`` score plane into 0.0 -- "always selected" -- without a
    word. ``why`` says what this arena's caller should do instead.
    """
    for f in fields:
        if f.fill != 0.0:
            raise ValueError(
                f"field {f.name!r} declares fill {f.fill!r}, which cannot be applied to "
                f"a buffer handed in ({why})"
            )


def back_arena_buffer(
    buf: torch.Tensor | None,
    nbytes: int,
    *,
    arena: str,
    priced: str,
    fields,
    align: int,
    zeroed: bool,
    fill_why: str,
    device: torch.device | str,
) -> tuple[torch.Tensor, bool]:
    """The buffer an arena carves, and whether its fills may be written.

    Both arenas back themselves the same way: allocate the priced bytes zeroed, or adopt a
    handed-in buffer only if it is exactly the priced size, aligned, and not asked to take a
    fill it may not apply. ``priced`` says how ``nbytes`` was reached, for the refusal.
    """
    if buf is None:
        return torch.zeros(nbytes, dtype=torch.uint8, device=device), True
    require_byte_buffer(buf, f"{arena} buf")
    if buf.numel() != nbytes:
        raise ValueError(f"{arena} buf holds {buf.numel()} bytes; {priced} are priced at {nbytes}")
    if fields:
        require_aligned(buf, align, f"{arena} buf")
    if not zeroed:
        refuse_fill_on_handed_buffer(fields, why=fill_why)
    return buf, zeroed


def apply_fills(views, fields) -> None:
    """Write each field's declared non-zero fill into its view of a buffer the arena may fill."""
    for f in fields:
        if f.fill != 0.0:
            views[f.name].fill_(f.fill)
