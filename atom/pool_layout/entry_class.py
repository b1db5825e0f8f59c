"""Entry classes and the price a pool declares for its entries.

A PAGE entry is one scheduler block across all of a pool's rows; a STATE entry
is one request's state. The budget buys entries per class, so two specs naming
the same class sum: that is how an EAGLE3 draft's sibling pool rides the
target's block ids -- one entry, one block id, both pools' bytes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from .refusals import require_count


class EntryClass(enum.Enum):
    """The unit a pool is priced in: PAGE (a scheduler block) or STATE (a request)."""

    PAGE = "page"
    STATE = "state"


@dataclass(frozen=True)
class PoolSpec:
    """`entry_bytes` per entry of `entry_class`, declared by the pool `name`."""

    name: str
    entry_class: EntryClass
    entry_bytes: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(f"PoolSpec name must be a non-empty str, got {self.name!r}")
        if not isinstance(self.entry_class, EntryClass):
            raise TypeError(
                f"PoolSpec {self.name!r} entry_class must be an EntryClass, "
                f"got {self.entry_class!r}"
            )
        require_count(f"PoolSpec {self.name!r} entry_bytes", self.entry_bytes)


def sum_specs(specs: Iterable[PoolSpec]) -> dict[EntryClass, int]:
    """Bytes an entry of each class costs across every pool that declares it."""
    totals: dict[EntryClass, int] = {}
    for spec in specs:
        if not isinstance(spec, PoolSpec):
            raise TypeError(f"sum_specs takes PoolSpec items, got {spec!r}")
        totals[spec.entry_class] = totals.get(spec.entry_class, 0) + spec.entry_bytes
    return totals
