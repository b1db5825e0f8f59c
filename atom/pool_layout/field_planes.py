"""`plan_field_planes`: which plane each field of a split entry lives in.

A *plane* is a row space of one width: plane `p`'s rows are
`plane_widths[p]` bytes wide, every field placed there starts on one of its
rows, and an entry of the plane is a whole number of its rows. A field of
`f.bytes` bytes an entry placed in plane `p` therefore costs

    plane_rows(f, p) = ceil(f.bytes / width_p)      (a count)
    plane_bytes(f, p) = plane_rows(f, p) x width_p  (a size)

The plan minimises, in this order:

  1. total bytes an entry, the sum over fields of `plane_bytes` -- the price;
  2. total plane rows, the sum over fields of `plane_rows` -- a field held in
     one wide row is addressed by one row index, not a run of narrow ones;
  3. the assignment read as a sequence of plane indices in field order,
     lexicographically -- so the answer is deterministic and, all else equal,
     prefers the earlier plane.

Widths are powers of two, because a plane's width is the alignment of every
field in it: `plane_fields` re-declares each field aligned to its plane's
rows, whatever alignment it declared on its own, since a plane's kernels
address it in rows of that width. A plane narrower than a field's itemsize
cannot hold it; a field no plane can hold is refused by name.

Enumerating every assignment is exact too, and is what one reaches for first,
but it is `planes ** fields` and has to refuse inputs past a bound. It is not
needed: a plane's bytes are the sum of what its fields occupy, with nothing
shared between fields, so all three objectives decompose per field and the
minimum over every assignment is each field taking its own best plane under
the key `(plane_bytes, plane_rows, p)`. That is `fields x planes` work for any
input, so there is no size to refuse.

A consequence ROCm/ATOM's KV-pool refactor (pull request #2147) calls out: a plane is emptied whenever the fields fit
better elsewhere, which needs no unusual shape -- one 512 B field over two
planes does it:

    widths [64, 64]  -> [['a'], []]    (512 B and 8 rows either way: earlier plane)
    widths [64, 512] -> [[], ['a']]    (512 B either way; 1 row beats 8)

An empty plane keeps its index (see `EntryMajorArena`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from .entry_field import EntryField
from .refusals import require_align


def _check(fields: Sequence[EntryField], plane_widths: Sequence[int]) -> None:
    if isinstance(fields, (str, bytes)) or not isinstance(fields, Sequence):
        raise TypeError(f"plan_field_planes takes a sequence of EntryField, got {fields!r}")
    if isinstance(plane_widths, (str, bytes)) or not isinstance(plane_widths, Sequence):
        raise TypeError(f"plane_widths must be a sequence of ints, got {plane_widths!r}")
    if not plane_widths:
        raise ValueError(f"plane_widths {list(plane_widths)!r} declares no plane")
    for p, width in enumerate(plane_widths):
        require_align(f"plane_widths[{p}]", width)
    seen: set[str] = set()
    for f in fields:
        if not isinstance(f, EntryField):
            raise TypeError(f"plan_field_planes takes EntryField items, got {f!r}")
        if f.name in seen:
            raise ValueError(f"field name {f.name!r} is declared twice")
        seen.add(f.name)


def plane_rows(f: EntryField, width: int) -> int:
    """Rows of a `width`-byte plane that field `f` occupies an entry."""
    return -(-f.bytes // width)


def _best_plane(f: EntryField, plane_widths: Sequence[int]) -> int:
    candidates = [
        (plane_rows(f, w) * w, plane_rows(f, w), p)
        for p, w in enumerate(plane_widths)
        if w >= f.itemsize
    ]
    if not candidates:
        raise ValueError(
            f"field {f.name!r} ({f.dtype}, itemsize {f.itemsize}) fits no plane of "
            f"widths {list(plane_widths)!r}"
        )
    return min(candidates)[2]


def plan_field_planes(fields: Sequence[EntryField], plane_widths: Sequence[int]) -> list[list[str]]:
    """Field names per plane, in declaration order; exact and deterministic."""
    _check(fields, plane_widths)
    planes: list[list[str]] = [[] for _ in plane_widths]
    for f in fields:
        planes[_best_plane(f, plane_widths)].append(f.name)
    return planes


def plane_fields(
    fields: Sequence[EntryField], plane_widths: Sequence[int]
) -> list[list[EntryField]]:
    """The plan as field lists ready for `SplitEntryMajorArena`.

    Each field is re-declared with its plane's width as its alignment, so the
    arena's own walk starts it on a plane row and rounds the plane's entry to
    whole rows: the arena's carve is the plan's price, by the same walk.
    """
    names = plan_field_planes(fields, plane_widths)
    by_name = {f.name: f for f in fields}
    return [
        [dataclasses.replace(by_name[n], align=max(w, by_name[n].itemsize)) for n in plane]
        for plane, w in zip(names, plane_widths, strict=True)
    ]


def plane_entry_bytes(fields: Sequence[EntryField], plane_widths: Sequence[int]) -> list[int]:
    """Bytes an entry of each plane is priced at under the plan."""
    names = plan_field_planes(fields, plane_widths)
    by_name = {f.name: f for f in fields}
    return [
        sum(plane_rows(by_name[n], w) * w for n in plane)
        for plane, w in zip(names, plane_widths, strict=True)
    ]
