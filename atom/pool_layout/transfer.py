"""What a P/D transfer registers: regions of the paged pool, one scheduler block per unit.

A transfer addresses ``req.block_ids``, so every region must divide into exactly the scheduler's
block count, with ``stride(0)`` the bytes one block owns. The failure this catches has identical
total bytes: a region registered per token (or per backend block) rather than per scheduler
block has ``blocks_per_entry`` times the units at ``1/blocks_per_entry`` the stride, so both ends
agree on the address arithmetic and disagree on the stride. No byte count distinguishes them;
the unit count does.

``num_blocks`` is not a constructor argument. It is set once, by :meth:`set_block_count`, by the
one caller holding both the complete region list (after a draft appends its own) and the
scheduler's count -- three backends used to state it themselves, in two different units.

Each region carries a ``semantic_role`` (``target.h2d256/k/0``). The connector pairs the two ends
by list position; the role names a region in ``set_block_count``'s refusal, in a report and in the
wire manifest both ends compare (``pool_layout.manifest``). It also carries the ``dtype`` of what
its bytes hold: an fp8 K written as e4m3fn and read as e5m2 has the same bytes, the same spans and
the same roles, and only the dtype tells the two ends apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from .refusals import require_count


def owned_role(owner: str, role: str) -> str:
    """A pool's region role qualified by the builder that exports it (``target.h2d256/k/0``)."""
    return f"{owner}.{role}"


def owned_regions(owner: str, views: Iterable[Any]) -> list[TransferRegion]:
    """Every region of every pool in ``views`` (each with ``region_tensors()``), named for its
    owner: a target builder and a draft builder export through this one spelling."""
    return [
        region.owned_by(owner) for pool_views in views for region in pool_views.region_tensors()
    ]


def dtype_name(dtype: torch.dtype) -> str:
    """``bfloat16`` for ``torch.bfloat16``: the name a manifest carries."""
    return str(dtype).removeprefix("torch.")


def dtypes_name(dtypes: Iterable[torch.dtype]) -> str:
    """The distinct dtypes of a region holding several fields, in the order they first appear,
    joined by ``+`` (``float8_e4m3fn+float32``): a region of one field is that field's dtype."""
    names: list[str] = []
    for d in dtypes:
        name = dtype_name(d)
        if name not in names:
            names.append(name)
    return "+".join(names) if names else "empty"


@dataclass(frozen=True)
class TransferRegion:
    semantic_role: str
    #: ``(units, ...)``: one unit per scheduler block once the region is right.
    tensor: torch.Tensor
    #: What the region's bytes hold (``dtype_name`` / ``dtypes_name``); None: the tensor's own
    #: dtype, which for a region cut as raw bytes is ``uint8``.
    dtype: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.semantic_role, str) or not self.semantic_role:
            raise TypeError(f"a transfer region needs a semantic_role, got {self.semantic_role!r}")
        if not isinstance(self.tensor, torch.Tensor):
            raise TypeError(
                f"region {self.semantic_role!r} must be a tensor, got {type(self.tensor).__name__}"
            )
        if self.dtype is None:
            object.__setattr__(self, "dtype", dtype_name(self.tensor.dtype))
        elif not isinstance(self.dtype, str) or not self.dtype:
            raise TypeError(
                f"region {self.semantic_role!r}: dtype must be a name, got {self.dtype!r}"
            )

    def owned_by(self, owner: str) -> TransferRegion:
        """This region with its role qualified by the builder that exports it."""
        return TransferRegion(owned_role(owner, self.semantic_role), self.tensor, self.dtype)

    @property
    def units(self) -> int:
        return self.tensor.shape[0]

    @property
    def unit_bytes(self) -> int:
        """Bytes from one unit's start to the next: what one scheduler block owns."""
        return self.tensor.stride(0) * self.tensor.element_size()

    @property
    def unit_data_bytes(self) -> int:
        """Bytes one unit's data spans (its first element to its last, inclusive)."""
        t = self.tensor[0]
        if t.numel() == 0:
            return 0
        last = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True))
        return (last + 1) * self.tensor.element_size()

    def byte_range(self, unit: int) -> tuple[int, int]:
        """``[start, stop)`` of unit ``unit`` in its storage, in bytes."""
        start = (
            self.tensor.storage_offset() + unit * self.tensor.stride(0)
        ) * self.tensor.element_size()
        return start, start + self.unit_data_bytes


@dataclass
class KVTransferTensors:
    regions: list[TransferRegion]
    num_blocks: int | None = field(init=False, default=None)
    #: Why this pool set may not be transferred at all, in words naming the setting -- set by the
    #: runner from a builder that refuses (DeepSeek-V4's FP4 indexer); None when it may.
    refusal: str | None = None

    def require_transferable(self) -> None:
        """Refuse, by the builder's own reason, a pool set that may not be moved."""
        if self.refusal is not None:
            raise ValueError(self.refusal)

    def append(self, region: TransferRegion) -> None:
        if self.num_blocks is not None:
            raise ValueError(
                f"region {region.semantic_role!r} appended after set_block_count({self.num_blocks})"
            )
        self.regions.append(region)

    def set_block_count(self, blocks: int) -> None:
        """Fix the scheduler's block count, refusing any region that does not divide into it."""
        require_count("blocks", blocks, minimum=1, unit="scheduler blocks")
        seen: set[str] = set()
        for region in self.regions:
            if region.semantic_role in seen:
                raise ValueError(f"semantic_role {region.semantic_role!r} is registered twice")
            seen.add(region.semantic_role)
            if region.units != blocks:
                raise ValueError(
                    f"transfer region {region.semantic_role!r} has {region.units} units of "
                    f"{region.unit_bytes} B; the scheduler has {blocks} blocks -- a region "
                    "registered per token or per backend block rather than per scheduler block"
                )
            if region.unit_data_bytes > region.unit_bytes:
                raise ValueError(
                    f"transfer region {region.semantic_role!r}: one unit's data spans "
                    f"{region.unit_data_bytes} B but its stride(0) is {region.unit_bytes} B"
                )
        self.num_blocks = blocks
