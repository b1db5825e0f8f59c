"""`LinearStatePool`: a linear-attention layer's per-request state.

A gated-delta-net or KDA layer keeps no per-token KV; it keeps a short
convolution window and a recurrent state per request. That is a STATE entry
-- one request's state across all of the pool's rows -- priced per request
and carved entry-major, so one request's state is one contiguous range
(`entry(i)`) that a checkpoint or a transfer moves as a unit.

The P/D decode side imports a paged pool as a handle and never runs sizing,
so a STATE class has no entry count there at all; a caller that would build
this pool on that side must refuse by name before anything is backed.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .byte_view import contiguous_strides as _dense
from .entry_arena import EntryMajorArena
from .entry_class import EntryClass, PoolSpec
from .entry_field import DEFAULT_ALIGN, EntryField, walk
from .refusals import INT32_MAX, require_count, require_dtype, require_int32_offsets
from .transfer import TransferRegion


class LinearStatePool:
    """`rows` rows of (conv state, recurrent state) per request."""

    kind = "linear_state"

    def __init__(
        self,
        rows: int,
        *,
        conv_shape: Sequence[int],
        conv_dtype: torch.dtype,
        recurrent_shape: Sequence[int],
        recurrent_dtype: torch.dtype,
    ) -> None:
        self.rows = require_count("LinearStatePool rows", rows, minimum=1)
        require_dtype("LinearStatePool conv_dtype", conv_dtype)
        require_dtype("LinearStatePool recurrent_dtype", recurrent_dtype)
        self.align = DEFAULT_ALIGN
        self.fields = (
            EntryField("conv", self.rows, tuple(conv_shape), conv_dtype),
            EntryField("recurrent", self.rows, tuple(recurrent_shape), recurrent_dtype),
        )
        self.conv_shape = self.fields[0].shape
        self.recurrent_shape = self.fields[1].shape

    @property
    def field_groups(self) -> tuple[tuple[EntryField, ...], ...]:
        return (self.fields,)

    @property
    def entry_bytes(self) -> int:
        """Bytes one request's state costs across all rows."""
        return walk(self.fields, align=self.align).entry_bytes

    def pool_bytes(self, entries: int) -> int:
        self.require_row_offsets(entries)
        return EntryMajorArena.nbytes(self.fields, entries, align=self.align)

    def require_row_offsets(self, entries: int) -> None:
        """Refuse `entries` request slots if a row's view passes 32-bit element offsets.

        A row's view strides by a whole entry (every row of one request's state), so its largest
        offset grows with the slot count: `(entries - 1) x entry_elems` plus one row's extent.
        Checked before anything is allocated, as the paged rows are.
        """
        require_count("LinearStatePool entries", entries, minimum=1)
        entry_bytes = walk(self.fields, align=self.align).entry_bytes
        for f in self.fields:
            per_slot = entry_bytes // f.itemsize
            require_int32_offsets(
                f"a row of state field {f.name!r} at {entries} request slots",
                (entries, *f.shape),
                (per_slot, *_dense(f.shape)),
                f.dtype,
                fewer=f"at most {(INT32_MAX - f.row_elems + 1) // per_slot + 1} request slots",
            )

    def spec(self, name: str) -> PoolSpec:
        return PoolSpec(name, EntryClass.STATE, self.entry_bytes)

    def allocate(
        self,
        entries: int,
        *,
        device: torch.device | str = "cpu",
        buf: torch.Tensor | None = None,
    ) -> LinearStateViews:
        self.require_row_offsets(entries)
        return LinearStateViews(
            self, EntryMajorArena(self.fields, entries, buf=buf, device=device, align=self.align)
        )


class LinearStateViews:
    """An allocated `LinearStatePool`: per-row state views over one entry-major arena."""

    def __init__(self, pool: LinearStatePool, arena: EntryMajorArena) -> None:
        self.pool = pool
        self.arena = arena
        self.entries = arena.entries

    def _row(self, name: str, row: int) -> torch.Tensor:
        require_count(f"{name} row", row)
        if row >= self.pool.rows:
            raise ValueError(f"row {row} is out of range for a pool of {self.pool.rows} rows")
        return self.arena.view(name)[:, row]

    def conv_state(self, row: int) -> torch.Tensor:
        """Row `row`'s conv window: `(entries, *conv_shape)`, entry-strided."""
        return self._row("conv", row)

    def recurrent_state(self, row: int) -> torch.Tensor:
        """Row `row`'s recurrent state: `(entries, *recurrent_shape)`, entry-strided."""
        return self._row("recurrent", row)

    def entry(self, i: int) -> torch.Tensor:
        """Request slot `i`'s whole state: one contiguous byte range."""
        return self.arena.entry(i)

    def reset_entry(self, i: int) -> None:
        """Return slot `i` to its declared fill before the next request takes it."""
        self.arena.reset_entry(i)

    def region_tensors(self) -> list[TransferRegion]:
        """One region, uint8 `(entries, stride_bytes)`: a request's state per row of it."""
        (region,) = self.arena.region_tensors()
        return [TransferRegion(self.pool.kind, region.tensor, region.dtype)]
