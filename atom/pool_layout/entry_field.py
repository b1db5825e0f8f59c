"""What one entry of a pool holds, and the one walk that places it.

An `EntryField` is one tensor family of an entry: a name, how many rows of it
an entry carries (a row is a module's position in the pool, so a field owned
by a subset of layers simply has fewer rows), the shape of one row, its dtype,
the value a fresh entry starts at, and the alignment its first byte needs.

`walk` is the single align-place-advance pass over a field list. Every answer
that has to agree is read off its result -- a field's offset inside an entry,
the entry's size, the byte ranges a checkpoint carries, a layer-major region's
size (`entries` times the span the walk gave the field) -- so two answers
cannot drift the way ATOM's hand-written formulas did before its KV-pool
refactor (pull request #2147): sizing charged `sparse_layers * backend_page *
dim` while the allocation was `block_ratio` times deeper.

The declarations live apart from the arenas over them. That split was tried
once and reverted, because the `pool_layout` guard then scored every relative
import as reaching `atom` and so every member had to be a leaf. The guard now
allows a relative import that names a sibling member (the sibling is held to
the same stdlib-and-torch rule), which is what lets this module exist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import torch

from .refusals import require_align, require_count

DEFAULT_ALIGN = 256
"""Bytes a field's first byte and an entry's stride are rounded up to.

256 B is the boundary the engine's pools have always placed fields and
regions on (`plan_regions`' rule since ATOM's pull request #2147), and it is a multiple
of every itemsize, so every typed view's storage offset divides by its
itemsize as `Tensor.view(dtype)` requires. It is also why pricing must be per
entry: the padding it costs is paid once per field per entry, and charging
per backend block would pay it `blocks_per_entry` times.
"""


def round_up(nbytes: int, align: int) -> int:
    """The smallest multiple of `align` that is at least `nbytes`."""
    return -(-nbytes // align) * align


@dataclass(frozen=True)
class EntryField:
    """One tensor family of an entry.

    `rows` is a count of pool rows (modules), `shape` is one row's shape inside
    one entry, and `row_bytes` / `bytes` are sizes: a row of one entry, and
    all rows of one entry. A PAGE field's shape already includes the entry's
    tokens (`blocks_per_entry` backend blocks of `block_size` tokens), so a
    field is priced per scheduler block and never per backend block.

    `fill` is what a freshly allocated entry holds. It is applied only to
    memory the arena allocated itself: a buffer handed in may be an imported
    pool already holding a peer's KV, so an arena refuses a non-zero fill there
    rather than dropping it (a `-inf` score plane read as 0.0 means "always
    selected" instead of "never").

    `align` is the alignment of the field's first byte inside an entry; it
    must be a power of two and a multiple of the dtype's itemsize, so every
    typed view over the field starts on an element boundary.
    """

    name: str
    rows: int
    shape: tuple[int, ...]
    dtype: torch.dtype
    fill: float = 0.0
    align: int = DEFAULT_ALIGN

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"EntryField name must be a non-empty str, got {self.name!r}")
        require_count(f"EntryField {self.name!r} rows", self.rows, minimum=1)
        if isinstance(self.shape, (str, bytes)) or not isinstance(self.shape, Sequence):
            raise TypeError(
                f"EntryField {self.name!r} shape must be a sequence of ints, got {self.shape!r}"
            )
        shape = tuple(self.shape)
        for dim in shape:
            require_count(f"EntryField {self.name!r} shape {shape!r} dimension", dim, minimum=1)
        object.__setattr__(self, "shape", shape)
        if not isinstance(self.dtype, torch.dtype):
            raise TypeError(
                f"EntryField {self.name!r} dtype must be a torch.dtype, got {self.dtype!r}"
            )
        if isinstance(self.fill, bool) or not isinstance(self.fill, (int, float)):
            raise TypeError(f"EntryField {self.name!r} fill must be a number, got {self.fill!r}")
        object.__setattr__(self, "fill", float(self.fill))
        if not (self.dtype.is_floating_point or self.dtype.is_complex) and (
            not math.isfinite(self.fill) or not self.fill.is_integer()
        ):
            raise ValueError(
                f"EntryField {self.name!r} fill {self.fill!r} is not representable in {self.dtype}"
            )
        require_align(f"EntryField {self.name!r} align", self.align)
        if self.align % self.itemsize:
            raise ValueError(
                f"EntryField {self.name!r} align {self.align} is not a multiple of "
                f"{self.dtype} itemsize {self.itemsize}"
            )

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def row_elems(self) -> int:
        """Elements of one row of one entry (a count, not a size)."""
        return math.prod(self.shape)

    @property
    def row_bytes(self) -> int:
        """Bytes of one row of one entry: prod(shape) x itemsize."""
        return self.row_elems * self.itemsize

    @property
    def bytes(self) -> int:
        """Bytes of all rows of one entry: rows x row_bytes."""
        return self.rows * self.row_bytes


@dataclass(frozen=True, eq=False)
class EntryWalk:
    """The placement of a field list inside one entry.

    `offsets[name]` is where the field starts, `spans[name]` the bytes it owns
    up to the next field's start (its data plus the padding after it), and
    `entry_bytes` the entry's stride. The spans sum to `entry_bytes`, which is
    what lets a layer-major carve give each field `entries x span` bytes and
    take exactly what the entry was priced at.
    """

    fields: tuple[EntryField, ...]
    offsets: Mapping[str, int]
    spans: Mapping[str, int]
    entry_bytes: int
    align: int
    by_name: Mapping[str, EntryField] = field(repr=False)

    @property
    def data_bytes(self) -> int:
        """Bytes of one entry that hold a field's data."""
        return sum(f.bytes for f in self.fields)

    @property
    def padding_bytes(self) -> int:
        """Bytes of one entry that are alignment, never read or written."""
        return self.entry_bytes - self.data_bytes

    def checkpoint_ranges(self) -> list[tuple[str, int, int]]:
        """`(name, start, stop)` byte ranges of one entry that hold data.

        A checkpoint or a transfer of one entry copies exactly these and skips
        the padding between them, and it reads them from the same walk the
        arena carved, so it cannot copy a range the arena shifted.
        """
        return [(f.name, self.offsets[f.name], self.offsets[f.name] + f.bytes) for f in self.fields]


def walk(fields: Sequence[EntryField], *, align: int = DEFAULT_ALIGN) -> EntryWalk:
    """Align, place, advance: the one pass every offset and size comes from.

    Each field starts at the cursor rounded up to its own `align`; the cursor
    then advances by the field's bytes. The entry's stride is the cursor
    rounded up to `align` or the widest field alignment, whichever is larger,
    so the next entry's fields are as aligned as this one's. An empty list is
    an entry of zero bytes (a plane that holds no field).
    """
    require_align("walk align", align)
    if isinstance(fields, (str, bytes)) or not isinstance(fields, Sequence):
        raise TypeError(f"walk takes a sequence of EntryField, got {fields!r}")
    by_name: dict[str, EntryField] = {}
    for f in fields:
        if not isinstance(f, EntryField):
            raise TypeError(f"walk takes EntryField items, got {f!r} ({type(f).__name__})")
        if f.name in by_name:
            raise ValueError(f"field name {f.name!r} is declared twice in one entry")
        by_name[f.name] = f
    offsets: dict[str, int] = {}
    cursor = 0
    for f in fields:
        offsets[f.name] = round_up(cursor, f.align)
        cursor = offsets[f.name] + f.bytes
    entry_align = max([align, *(f.align for f in fields)])
    entry_bytes = round_up(cursor, entry_align)
    spans: dict[str, int] = {}
    ordered = list(fields)
    for i, f in enumerate(ordered):
        stop = offsets[ordered[i + 1].name] if i + 1 < len(ordered) else entry_bytes
        spans[f.name] = stop - offsets[f.name]
    return EntryWalk(
        fields=tuple(fields),
        offsets=MappingProxyType(offsets),
        spans=MappingProxyType(spans),
        entry_bytes=entry_bytes,
        align=entry_align,
        by_name=MappingProxyType(by_name),
    )
