"""`EntryMajorArena`: a field list laid out with the entry axis outermost.

Entry `i` is one contiguous byte range, `entry(i)`, which is what a STATE
pool (one request's state), a checkpoint and an RDMA registration need: one
address and one length per entry. It once carried the STATE pool's name and
was never state-specific -- its `buf=` / `stride_bytes=` hooks let
DeepSeek-V4 carve it out of a plane it shares with paged blocks -- so it is
named for where its entry axis sits, which is what separates it from
`LayerMajorArena` (a name tied to one pool would read as if it cannot serve
PAGE).

A plane may hold no field. `plan_field_planes` empties a plane whenever the
fields fit in fewer, and a plane is addressed by index and still costs its
rows, so it has to exist even when empty -- dropping it would shift every
later plane. Such an arena has zero bytes of fields an entry, answers no
`view`, and still spans the `stride_bytes` its rows were priced at. (Refusing
an empty field list here was a startup crash waiting on a field count.)
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from .byte_view import contiguous_strides, require_aligned, require_byte_buffer, typed_view
from .entry_field import DEFAULT_ALIGN, EntryField, EntryWalk, walk
from .field_planes import plan_field_planes, plane_entry_bytes
from .refusals import apply_fills, back_arena_buffer, require_count
from .regions import RegionPlan, carve, plan_regions
from .transfer import TransferRegion, dtypes_name

__all__ = [
    "EntryMajorArena",
    "SplitEntryMajorArena",
    "carve",
    "plan_field_planes",
    "plan_regions",
    "plane_entry_bytes",
]


def _stride_for(w: EntryWalk, stride_bytes: int | None, what: str) -> int:
    if stride_bytes is None:
        return w.entry_bytes
    require_count(f"{what} stride_bytes", stride_bytes)
    if stride_bytes < w.entry_bytes:
        raise ValueError(
            f"{what} stride_bytes {stride_bytes} is less than the {w.entry_bytes} bytes "
            "its fields take an entry"
        )
    if w.fields and stride_bytes % w.align:
        raise ValueError(
            f"{what} stride_bytes {stride_bytes} is not a multiple of its fields' "
            f"alignment {w.align}"
        )
    return stride_bytes


class EntryMajorArena:
    """Fields of `entries` entries, entry axis outermost, over one byte buffer.

    `view(name)` is `(entries, rows, *shape)` with `stride(0)` the entry
    stride (in elements); `entry(i)` is entry `i`'s `stride_bytes` bytes.
    `stride_bytes` defaults to the walk's `entry_bytes` and may be larger
    (a plane priced wider than what it holds), never smaller.

    Handed a `buf`, the arena checks it is exactly `entries x stride_bytes`
    and aligned, and refuses a non-zero fill, for the reason `LayerMajorArena`
    does: it cannot know the bytes are nobody's. `reset_entry(i)` writes the
    declared fills into one entry, which is what a STATE slot needs when the
    next request takes it.
    """

    def __init__(
        self,
        fields: Sequence[EntryField],
        entries: int,
        *,
        buf: torch.Tensor | None = None,
        device: torch.device | str = "cpu",
        align: int = DEFAULT_ALIGN,
        stride_bytes: int | None = None,
        zeroed: bool = False,
    ) -> None:
        self.walk: EntryWalk = walk(fields, align=align)
        self.fields = self.walk.fields
        self.entries = require_count("EntryMajorArena entries", entries, minimum=1)
        self.stride_bytes = _stride_for(self.walk, stride_bytes, "EntryMajorArena")
        nbytes = self.entries * self.stride_bytes
        buf, fresh = back_arena_buffer(
            buf,
            nbytes,
            arena="EntryMajorArena",
            priced=f"{self.entries} entries x {self.stride_bytes} stride_bytes",
            fields=self.fields,
            align=self.walk.align,
            zeroed=zeroed,
            fill_why="call reset_entry() on entries known to be free",
            device=device,
        )
        self.buf = buf
        self._views = {f.name: self._build_view(f) for f in self.fields}
        if fresh:
            apply_fills(self._views, self.fields)

    @staticmethod
    def nbytes(
        fields: Sequence[EntryField],
        entries: int,
        *,
        align: int = DEFAULT_ALIGN,
        stride_bytes: int | None = None,
    ) -> int:
        """Bytes the carve takes: `entries x stride_bytes`."""
        require_count("EntryMajorArena entries", entries, minimum=1)
        return entries * _stride_for(walk(fields, align=align), stride_bytes, "EntryMajorArena")

    @property
    def entry_bytes(self) -> int:
        """Bytes one entry's fields take (the walk's answer, <= stride_bytes)."""
        return self.walk.entry_bytes

    def _build_view(self, f: EntryField) -> torch.Tensor:
        inner = contiguous_strides((f.rows, *f.shape))
        return typed_view(
            self.buf,
            self.walk.offsets[f.name],
            f.dtype,
            (self.entries, f.rows, *f.shape),
            (self.stride_bytes // f.itemsize, *inner),
        )

    def _check_entry(self, i: int) -> int:
        require_count("entry index", i)
        if i >= self.entries:
            raise ValueError(f"entry {i} is out of range for an arena of {self.entries} entries")
        return i

    def entry(self, i: int) -> torch.Tensor:
        """Entry `i`'s bytes: one contiguous uint8 range of `stride_bytes`."""
        self._check_entry(i)
        return self.buf[i * self.stride_bytes : (i + 1) * self.stride_bytes]

    def view(self, name: str) -> torch.Tensor:
        """Field `name` of every entry: `(entries, rows, *shape)`."""
        try:
            return self._views[name]
        except KeyError:
            raise KeyError(
                f"no field named {name!r}; this arena holds {list(self._views)}"
            ) from None

    def region_tensors(self) -> list[TransferRegion]:
        """The arena as one transfer region, uint8 `(entries, stride_bytes)`: entry `i` is
        unit `i`, so a whole entry moves as one range -- the reason to lay a pool out this way.
        Its dtype names every dtype its fields hold."""
        return [
            TransferRegion(
                "entry",
                self.buf.view(self.entries, self.stride_bytes),
                dtypes_name(f.dtype for f in self.fields),
            )
        ]

    def entry_ranges(self, i: int) -> list[tuple[str, int, int]]:
        """The walk's checkpoint ranges of entry `i`, as offsets into `buf`."""
        base = self._check_entry(i) * self.stride_bytes
        return [(n, base + a, base + b) for n, a, b in self.walk.checkpoint_ranges()]

    def reset_entry(self, i: int) -> None:
        """Write every field's declared fill into entry `i`."""
        self._check_entry(i)
        for f in self.fields:
            self._views[f.name][i].fill_(f.fill)


class SplitEntryMajorArena:
    """Several entry-major planes sharing one entry index, over one buffer.

    Plane `p` is an `EntryMajorArena` over `planes[p]`; entry `i` is one
    contiguous range in each plane. `stride_bytes[p]` (None: the plane's own
    walk) is what the plane's rows were priced at, which an empty plane still
    spans. Planes are placed with `plan_regions`, so each starts on `align`.

    Inside a plane the entry stride is set by its fields' own alignment and
    nothing else, so a plane built by `plane_fields` (each field aligned to
    its plane's width) strides at exactly what `plane_entry_bytes` priced.
    """

    def __init__(
        self,
        planes: Sequence[Sequence[EntryField]],
        entries: int,
        *,
        buf: torch.Tensor | None = None,
        device: torch.device | str = "cpu",
        align: int = DEFAULT_ALIGN,
        stride_bytes: Sequence[int | None] | None = None,
    ) -> None:
        self.plan = self.plan_planes(planes, entries, align=align, stride_bytes=stride_bytes)
        strides = self._strides(planes, stride_bytes)
        if buf is None:
            buf = torch.zeros(self.plan.total_bytes, dtype=torch.uint8, device=device)
            zeroed = True
        else:
            require_byte_buffer(buf, "SplitEntryMajorArena buf")
            if buf.numel() != self.plan.total_bytes:
                raise ValueError(
                    f"SplitEntryMajorArena buf holds {buf.numel()} bytes; {entries} entries "
                    f"across {len(planes)} planes are priced at {self.plan.total_bytes}"
                )
            require_aligned(buf, self.plan.align, "SplitEntryMajorArena buf")
            zeroed = False
        self.buf = buf
        self.entries = entries
        pieces = carve(buf, self.plan)
        self.planes = [
            EntryMajorArena(
                fields,
                entries,
                buf=pieces[f"plane{p}"],
                align=1,
                stride_bytes=strides[p],
                zeroed=zeroed,
            )
            for p, fields in enumerate(planes)
        ]
        self._plane_of = {f.name: p for p, arena in enumerate(self.planes) for f in arena.fields}

    @staticmethod
    def _strides(
        planes: Sequence[Sequence[EntryField]], stride_bytes: Sequence[int | None] | None
    ) -> list[int | None]:
        if stride_bytes is None:
            return [None] * len(planes)
        if len(stride_bytes) != len(planes):
            raise ValueError(
                f"stride_bytes {list(stride_bytes)!r} names {len(stride_bytes)} planes; "
                f"{len(planes)} were declared"
            )
        return list(stride_bytes)

    @classmethod
    def plan_planes(
        cls,
        planes: Sequence[Sequence[EntryField]],
        entries: int,
        *,
        align: int = DEFAULT_ALIGN,
        stride_bytes: Sequence[int | None] | None = None,
    ) -> RegionPlan:
        """Where each plane sits in the one buffer (the pricing of the carve)."""
        if isinstance(planes, (str, bytes)) or not isinstance(planes, Sequence):
            raise TypeError(f"planes must be a sequence of field lists, got {planes!r}")
        strides = cls._strides(planes, stride_bytes)
        names: set[str] = set()
        for fields in planes:
            for f in fields:
                if isinstance(f, EntryField) and f.name in names:
                    raise ValueError(f"field name {f.name!r} is declared in two planes")
                if isinstance(f, EntryField):
                    names.add(f.name)
        sizes = [
            (f"plane{p}", EntryMajorArena.nbytes(fields, entries, align=1, stride_bytes=s))
            for p, (fields, s) in enumerate(zip(planes, strides, strict=True))
        ]
        # A plane starts where its widest field may: the planes' own alignment
        # wins over `align` when it is larger.
        widest = max([align, *(walk(fields, align=1).align for fields in planes)])
        return plan_regions(sizes, align=widest)

    @classmethod
    def nbytes(
        cls,
        planes: Sequence[Sequence[EntryField]],
        entries: int,
        *,
        align: int = DEFAULT_ALIGN,
        stride_bytes: Sequence[int | None] | None = None,
    ) -> int:
        return cls.plan_planes(planes, entries, align=align, stride_bytes=stride_bytes).total_bytes

    def plane(self, p: int) -> EntryMajorArena:
        require_count("plane index", p)
        if p >= len(self.planes):
            raise ValueError(f"plane {p} is out of range; {len(self.planes)} planes exist")
        return self.planes[p]

    def view(self, name: str) -> torch.Tensor:
        """Field `name`, from whichever plane holds it."""
        if name not in self._plane_of:
            raise KeyError(f"no field named {name!r}; the planes hold {list(self._plane_of)}")
        return self.planes[self._plane_of[name]].view(name)

    def entry(self, i: int) -> tuple[torch.Tensor, ...]:
        """Entry `i` in every plane: one contiguous range each."""
        return tuple(arena.entry(i) for arena in self.planes)

    def region_tensors(self) -> list[TransferRegion]:
        """One transfer region per plane (`plane0`, ...), uint8 `(entries, stride_bytes)`.

        An empty plane is exported too, at the width it was priced at: it keeps its index here
        as everywhere, so both ends of a transfer list the same planes in the same order.
        """
        return [
            TransferRegion(
                f"plane{p}",
                arena.buf.view(arena.entries, arena.stride_bytes),
                dtypes_name(f.dtype for f in arena.fields),
            )
            for p, arena in enumerate(self.planes)
        ]
