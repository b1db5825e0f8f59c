"""Typed views over a byte buffer, at absolute storage offsets.

Every arena owns a 1-D uint8 buffer that may itself be a region of a larger
shared buffer. A view of a field is built over the *storage*, so its
`storage_offset()` is the field's absolute position in that storage and not
its distance from the arena's front: a consumer (a transfer registering
regions, a bind probe comparing two paths) reads the same number whichever
buffer the arena was carved from.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def require_byte_buffer(buf: object, what: str) -> None:
    """A buffer is a 1-D uint8 tensor; anything else is refused by type."""
    if not isinstance(buf, torch.Tensor):
        raise TypeError(f"{what} must be a torch.Tensor, got {type(buf).__name__}")
    if buf.dtype != torch.uint8:
        raise TypeError(f"{what} must be uint8, got {buf.dtype}")
    if buf.dim() != 1:
        raise ValueError(f"{what} must be 1-D, got shape {tuple(buf.shape)}")
    if not buf.is_contiguous():
        raise ValueError(f"{what} must be contiguous, got stride {buf.stride()}")


def require_aligned(buf: torch.Tensor, align: int, what: str) -> None:
    """Refuse a buffer whose first byte is not on `align` within its storage.

    The allocator aligns a storage's base; what a caller controls is where in
    that storage the buffer starts, and a field's typed view needs that to be
    a multiple of its alignment (and so of its itemsize).
    """
    offset = buf.storage_offset()
    if offset % align:
        raise ValueError(
            f"{what} starts at storage offset {offset}, which is not a multiple of {align}"
        )


def typed_view(
    buf: torch.Tensor,
    offset_bytes: int,
    dtype: torch.dtype,
    size: Sequence[int],
    stride: Sequence[int],
) -> torch.Tensor:
    """`dtype` elements of `buf` starting `offset_bytes` into it.

    `stride` is in elements of `dtype`. The caller guarantees the placement
    (the walk aligned it); this only converts units, never copies.
    """
    itemsize = dtype.itemsize
    # view(dtype) needs a whole number of elements and an element-aligned
    # start; both hold because every stride the walk produces is a multiple of
    # the widest field alignment, which is a multiple of every itemsize.
    elems = buf.view(dtype)
    return torch.as_strided(
        elems,
        tuple(size),
        tuple(stride),
        storage_offset=elems.storage_offset() + offset_bytes // itemsize,
    )


def contiguous_strides(size: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides, in elements, of a dense tensor of `size`."""
    strides: list[int] = []
    step = 1
    for dim in reversed(tuple(size)):
        strides.append(step)
        step *= dim
    return tuple(reversed(strides))
