"""`ElementOrder`: where each element of a bound view sits, declared beside the view.

A pool carved out of the runner's paged buffer has its element order written once, in the
reference store's layout table (`atom.kernels.reference_store`), and the runtime readback
reads the transfer region at those offsets. A builder that allocates its own buffers
(DeepSeek-V4: planes of one row space, compressor state, indexer regions) binds views no such
table names, so it declares each one's order itself: for every index a kernel addresses the
view with, the byte it reads, computed from the pool's declarations -- the row space's
address formulas, the state fields' walk, the indexer regions' offsets -- never from the view,
whose strides are what is under test.

`address` takes one int64 index tensor per axis (broadcastable against each other, as
`torch.meshgrid` gives them) and returns the byte offset of each element in
`buffer`, which indexes the builder's `own_buffers()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from .refusals import require_count, require_dtype


@dataclass(frozen=True)
class ElementOrder:
    """One bound view's elements: their dtype, the index space kernels read them in, and the
    byte each index reaches in one of the builder's own buffers."""

    buffer: int
    dtype: torch.dtype
    shape: tuple[int, ...]
    axes: tuple[str, ...]
    address: Callable[..., torch.Tensor]

    def __post_init__(self) -> None:
        require_count("ElementOrder buffer", self.buffer)
        require_dtype("ElementOrder dtype", self.dtype)
        if len(self.axes) != len(self.shape):
            raise ValueError(
                f"ElementOrder names {len(self.axes)} axes {self.axes} for shape {self.shape}"
            )
        for axis, n in zip(self.axes, self.shape, strict=True):
            require_count(f"ElementOrder axis {axis!r}", n, minimum=1)


def row_major(index: Sequence[torch.Tensor], shape: Sequence[int]) -> torch.Tensor:
    """Element offset of `index` in a dense row-major block of `shape` (the last axis fastest),
    the order an `EntryField`'s shape and an indexer region's shape are declared in."""
    if len(index) != len(shape):
        raise ValueError(f"{len(index)} indices for a {len(shape)}-axis shape {tuple(shape)}")
    flat = torch.zeros((), dtype=torch.int64)
    for i, n in zip(index, shape, strict=True):
        flat = flat * n + i
    return flat
