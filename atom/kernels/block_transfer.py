"""Whole scheduler blocks out of a pool's transfer regions and back, through one staging buffer.

P/D transfer, offload to host memory and checkpointing move whole blocks, and they address them
through the regions every pool exports (:mod:`atom.pool_layout.transfer`): region ``r`` is
``units`` byte ranges, unit ``u`` at ``base_r + u * stride_r``, ``span_r`` bytes long. A layer-major
pool exports one region per field per row, so a block is one range *per layer*; an entry-major
pool one region per plane, so a block is one range per plane. The layout must not cost the
transfer. This module is the transfer written once over any region set:

- :class:`StagingLayout` -- where each region's bytes sit inside one staged block: regions in
  the set's order, each at the running sum of the spans before it, so a staged block is
  ``block_bytes`` contiguous bytes and ``n`` blocks are one ``(n, block_bytes)`` uint8 buffer.
  Both ends of a transfer compare layouts (roles, order, spans) and a difference is refused by the
  first region that differs, *before* any byte moves: position alone would move K into V.
- :class:`RegionSet` -- the regions of one storage, checked once (one device, one storage, equal
  unit counts, each unit's bytes one contiguous range, no two regions sharing a byte), with the
  table of every region's base, stride and span built once per set and reused by every call.
- :func:`RegionSet.gather` / :meth:`RegionSet.scatter` -- the blocks of a list of block ids into a
  staging buffer and back. ``impl="torch"`` is the reference, one ``index_select`` (gather) or
  ``index_copy_`` (scatter) per region over a byte view of the storage, which is the
  specification and runs on the CPU; ``impl="triton"`` is one launch over every region and block
  (``atom.kernels.triton_block_transfer``, imported only when asked for, so importing ``atom``
  never needs triton); ``"auto"`` takes triton on a CUDA device when it imports.

Regions are byte ranges, so the kernel moves words of the widest size that every base, stride and
span -- and the storage's own address -- is a multiple of (8 bytes for every pool the engine builds,
whose fields sit on 256 B boundaries), and tells the compiler when they are also 16-byte aligned,
so each thread moves 16 bytes an access. A region set whose bytes are odd still moves, a byte a
word.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from atom.pool_layout.manifest import StagingLayout
from atom.pool_layout.transfer import KVTransferTensors, TransferRegion

#: Word widths the kernel moves, widest first; the dtype only carries the width (bits are copied).
WORD_DTYPES: dict[int, torch.dtype] = {
    8: torch.int64,
    4: torch.int32,
    2: torch.int16,
    1: torch.uint8,
}
#: Bytes one kernel program moves at most: a piece of one region's span of one block.
PIECE_BYTES = 16384
IMPLS = ("auto", "torch", "triton")


@dataclass(frozen=True)
class KernelConfig:
    """How the Triton kernel is launched; every field changes speed, none changes a byte moved
    (the GPU suite checks every combination the bench times against the reference).

    - ``piece_bytes``: the most one program moves in one go, a piece of one range of a block
      (a power of two >= 16); ``num_warps``: warps a program (a power of two, 1 to 32).
    - ``persistent``: 0 launches one program a piece; ``k`` launches ``k`` programs a
      multiprocessor that loop over the pieces (a grid-stride loop), so no program starts, looks
      up its block id and range and exits per piece.
    - ``prefetch`` (persistent only): a program issues the loads of its next piece before the
      stores of the current one, so its bytes are in flight while it looks up the next piece.
    - ``blocks_per_program``: a program moves the same piece of this many blocks of the ids, so
      a launch is that many times fewer programs -- for a transfer of a few MiB, where starting
      and retiring programs is a share of the time (not with ``prefetch``).
    - ``one_region``: a block that is one range of the storage (an entry-major arena, a state
      pool) has its pieces computed from three scalars instead of read from the table.
    - ``full_fast``: a whole piece moves unmasked; ``streaming``: loads evict first and stores
      bypass cache retention (``.cs``), a transfer's bytes being touched once.
    - ``direct``: a call whose arguments triton would specialize as an earlier call's were goes
      straight to that call's compiled kernel, skipping triton's per-call argument binding and
      cache-key string -- host time that a back-to-back transfer of a few MiB waits on.
    """

    piece_bytes: int = PIECE_BYTES
    num_warps: int = 4
    persistent: int = 0
    prefetch: bool = False
    blocks_per_program: int = 1
    one_region: bool = True
    full_fast: bool = True
    streaming: bool = False
    direct: bool = True

    def __post_init__(self) -> None:
        for name in ("piece_bytes", "num_warps", "persistent", "blocks_per_program"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"KernelConfig.{name} must be an int, got {value!r}")
        for name in ("prefetch", "one_region", "full_fast", "streaming", "direct"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise TypeError(f"KernelConfig.{name} must be a bool, got {value!r}")
        if self.piece_bytes < 16 or self.piece_bytes & (self.piece_bytes - 1):
            # A program's words are one `tl.arange`, whose length is a power of two.
            raise ValueError(f"piece_bytes must be a power of two >= 16, got {self.piece_bytes}")
        if not 1 <= self.num_warps <= 32 or self.num_warps & (self.num_warps - 1):
            raise ValueError(f"num_warps must be a power of two from 1 to 32, got {self.num_warps}")
        if self.persistent < 0:
            raise ValueError(
                f"persistent must be 0 (a program a piece) or programs a multiprocessor, got "
                f"{self.persistent}"
            )
        if self.prefetch and not self.persistent:
            raise ValueError("prefetch needs a persistent grid (persistent > 0)")
        if not 1 <= self.blocks_per_program <= 64:
            raise ValueError(f"blocks_per_program must be 1 to 64, got {self.blocks_per_program}")
        if self.prefetch and self.blocks_per_program > 1:
            raise ValueError("prefetch moves one block a task; blocks_per_program must be 1")

    @classmethod
    def parse(cls, text: str) -> KernelConfig:
        """``"piece_bytes=32768,persistent=4,prefetch=1"`` (what the bench prints and takes);
        fields left out keep their defaults, an empty string is the default config."""
        fields = {f.name: f.type for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, eq, raw = item.partition("=")
            name = name.strip()
            if not eq or name not in fields:
                raise ValueError(
                    f"kernel config item {item!r} is not NAME=VALUE with NAME one of "
                    f"{sorted(fields)}"
                )
            if fields[name] in (bool, "bool"):
                if raw.strip() not in ("0", "1", "true", "false"):
                    raise ValueError(f"kernel config {name}={raw!r} is not 0/1/true/false")
                values[name] = raw.strip() in ("1", "true")
            else:
                try:
                    values[name] = int(raw)
                except ValueError:
                    raise ValueError(f"kernel config {name}={raw!r} is not an int") from None
        return cls(**values)

    def __str__(self) -> str:
        return ",".join(
            f"{f.name}={int(v) if isinstance(v, bool) else v}"
            for f in dataclasses.fields(self)
            for v in [getattr(self, f.name)]
        )


#: What a call launches unless told otherwise, for a block of several ranges (a layer-major
#: pool): 16 KiB pieces, 4 warps -- larger pieces go partly masked over ranges of a few KiB
#: (64 KiB pieces ran llama fp8 layer-major at 71% of a plain copy, deepseek-v3.2 fp8 at 39%).
DEFAULT_KERNEL = KernelConfig()
#: ... and for a block that is one range of at least a piece (entry-major arenas, state pools):
#: 64 KiB pieces, 16 warps, the one launch of the H200 sweep (docs/performance.md) that ran
#: entry-major pools within 5% of a plain copy (median 95.4%, where 16 KiB ran 93.6%).
ONE_RANGE_KERNEL = KernelConfig(piece_bytes=65536, num_warps=16)
#: ... and for one range of at least 128 KiB: 128 KiB pieces, 32 warps, 0.3-1.2 points over
#: ``ONE_RANGE_KERNEL`` on every entry-major pool of 216 KiB blocks and more in the H200
#: sweep of direct launches (median 96.4% of a plain copy, against 95.4%; docs/performance.md).
WIDE_RANGE_KERNEL = KernelConfig(piece_bytes=131072, num_warps=32)


@dataclass(frozen=True)
class StagedBlocks:
    """Blocks gathered out of a region set: ``data[i]`` is block ``i`` of the ids, laid out as
    ``layout`` says. It carries its layout so the importing end can refuse a different one."""

    layout: StagingLayout
    #: ``(blocks, layout.block_bytes)`` uint8, contiguous: on the device, or in host memory.
    data: torch.Tensor

    def __post_init__(self) -> None:
        if not isinstance(self.layout, StagingLayout):
            raise TypeError(f"layout must be a StagingLayout, got {type(self.layout).__name__}")
        d = self.data
        if not isinstance(d, torch.Tensor) or d.dtype != torch.uint8 or d.dim() != 2:
            raise ValueError(
                f"staged data must be a 2-D uint8 tensor, got "
                f"{getattr(d, 'dtype', type(d).__name__)} of shape {tuple(getattr(d, 'shape', ()))}"
            )
        if d.shape[1] != self.layout.block_bytes or not d.is_contiguous():
            raise ValueError(
                f"staged data of shape {tuple(d.shape)} (stride {d.stride()}) is not contiguous "
                f"blocks of the layout's {self.layout.block_bytes} B"
            )

    @classmethod
    def trusted(cls, layout: StagingLayout, data: torch.Tensor) -> StagedBlocks:
        """Staged blocks whose data was checked against ``layout`` by an earlier call on the
        same buffer (a region set's repeated call), without checking them again."""
        staged = object.__new__(cls)
        object.__setattr__(staged, "layout", layout)
        object.__setattr__(staged, "data", data)
        return staged

    @property
    def blocks(self) -> int:
        return self.data.shape[0]

    def to_host(self, *, non_blocking: bool = False) -> StagedBlocks:
        """A copy in host memory, pinned when a CUDA device exists (what an offload keeps).

        ``non_blocking=True`` returns before the copy lands: the caller synchronizes before the
        host reads it (a scatter back on the same stream needs nothing).
        """
        pin = torch.cuda.is_available()
        host = torch.empty(self.data.shape, dtype=torch.uint8, pin_memory=pin)
        host.copy_(self.data, non_blocking=non_blocking and pin)
        return StagedBlocks(self.layout, host)


def _regions_of(regions: KVTransferTensors | Iterable[TransferRegion]) -> list[TransferRegion]:
    if isinstance(regions, KVTransferTensors):
        regions.require_transferable()
        return list(regions.regions)
    if isinstance(regions, TransferRegion) or not isinstance(regions, Iterable):
        raise TypeError(
            f"a region set takes KVTransferTensors or an iterable of TransferRegion, got "
            f"{type(regions).__name__}"
        )
    out = list(regions)
    for r in out:
        if not isinstance(r, TransferRegion):
            raise TypeError(f"a region set takes TransferRegion items, got {type(r).__name__}")
    return out


def triton_interpreted() -> bool:
    """Whether triton runs kernels in its interpreter, on CPU tensors (``TRITON_INTERPRET=1``):
    how the kernel is exercised on a machine with triton and no GPU."""
    return os.environ.get("TRITON_INTERPRET") == "1"


@functools.cache
def _launcher():
    """The Triton launch, imported on first use (importing it runs ``@triton.jit``)."""
    from atom.kernels.triton_block_transfer import launch

    return launch


@functools.cache
def _relauncher():
    """The Triton launch of a prepared call again (``triton_block_transfer.relaunch``)."""
    from atom.kernels.triton_block_transfer import relaunch

    return relaunch


def _word_bytes(alignment: int) -> int:
    return next(w for w in WORD_DTYPES if alignment % w == 0)


class RegionSet:
    """The transfer regions of one storage, checked once, with the table every call reuses.

    ``regions`` is a runner's ``kv_transfer`` (target regions, then a draft's appended after
    them) or any list of :class:`TransferRegion` -- a STATE pool's whole-entry region, an
    entry-major arena's planes. Block ``u`` of the set is unit ``u`` of every region.
    """

    def __init__(self, regions: KVTransferTensors | Iterable[TransferRegion]) -> None:
        regions = _regions_of(regions)
        if not regions:
            raise ValueError("a region set needs at least one transfer region, got none")
        first = regions[0]
        storage = first.tensor.untyped_storage()
        self.device = first.tensor.device
        self.units = first.units if first.tensor.dim() else 0
        if self.units < 1:
            raise ValueError(
                f"region {first.semantic_role!r} has no units; a region set moves blocks of at "
                "least one"
            )
        seen: set[str] = set()
        bases, strides, spans = [], [], []
        for r in regions:
            t = r.tensor
            if r.semantic_role in seen:
                raise ValueError(f"semantic_role {r.semantic_role!r} is in the region set twice")
            seen.add(r.semantic_role)
            if t.device != self.device or t.untyped_storage().data_ptr() != storage.data_ptr():
                raise ValueError(
                    f"region {r.semantic_role!r} lives in another storage ({t.device}) than "
                    f"region {first.semantic_role!r} ({self.device}); a region set is one "
                    "storage, so one table addresses it -- make one set per storage"
                )
            if t.dim() < 1 or r.units != self.units:
                raise ValueError(
                    f"region {r.semantic_role!r} has {r.units if t.dim() else 0} units; region "
                    f"{first.semantic_role!r} has {self.units} -- every region of a set has one "
                    "unit per block"
                )
            span = r.unit_data_bytes
            if t[0].numel() * t.element_size() != span:
                raise ValueError(
                    f"region {r.semantic_role!r}: a unit's {t[0].numel() * t.element_size()} B of "
                    f"data are spread over {span} B (unit stride {tuple(t.stride()[1:])}); a "
                    "transfer moves whole byte ranges and would move the bytes between them"
                )
            if self.units > 1 and r.unit_bytes < span:
                raise ValueError(
                    f"region {r.semantic_role!r}: one unit's data spans {span} B but its "
                    f"stride(0) is {r.unit_bytes} B, so two units share bytes"
                )
            # A region of no bytes (an empty plane) keeps its place in the layout and moves
            # nothing; its stride is torch's placeholder, not an address, so it is not kept.
            bases.append(t.storage_offset() * t.element_size() if span else 0)
            strides.append(r.unit_bytes if self.units > 1 and span else span)
            spans.append(span)
        self.regions = tuple(regions)
        self._storage = storage
        self._bases, self._strides, self._spans = bases, strides, spans
        self._refuse_overlaps()
        self.layout = StagingLayout.of(
            (r.semantic_role, s) for r, s in zip(regions, spans, strict=True)
        )
        # The storage's own address counts: the kernel's words are aligned in memory, not only
        # relative to the storage.
        alignment = storage.data_ptr()
        for value in (*bases, *strides, *spans):
            alignment = math.gcd(alignment, value)
        #: The widest word every base, stride and span is a multiple of, and whether they are
        #: all 16-byte aligned as well (so a thread can move 16 bytes an access).
        self.alignment = alignment or 16
        self.word_bytes = _word_bytes(self.alignment)
        self._byte_views: list[torch.Tensor | None] | None = None
        self._ranges: list[tuple[int, int, int, int]] | None = None
        self._tables: dict[tuple[int, int], tuple[torch.Tensor, int]] = {}
        self._plans: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor, int]] = {}
        #: The Triton launcher's prepared launches of recent calls (its to read and write).
        self._launches: dict[tuple, tuple] = {}
        #: The last unvalidated call of each direction that passed its checks, and what its
        #: launch prepared (``_repeat``); the launcher sets ``_last_prepared`` on every launch.
        self._last_calls: dict[str, tuple] = {}
        self._last_prepared: tuple | None = None

    # -- checks, once per set -------------------------------------------------------------------

    def _refuse_overlaps(self) -> None:
        """No byte belongs to two regions: a scatter would write it twice, in no defined order.

        A sweep over the regions' extents (first byte of unit 0 to last byte of the last unit)
        compares only regions whose extents meet, which for a layer-major pool -- disjoint
        ranges -- is none. Two that meet are apart only when they interleave at one stride with
        disjoint offsets within it (fields of one entry-major arena, exported one by one);
        anything else is refused, naming both.
        """
        extents = sorted(
            (b, b + (self.units - 1) * s + n, i)
            for i, (b, s, n) in enumerate(zip(self._bases, self._strides, self._spans, strict=True))
            if n
        )
        active: list[tuple[int, int]] = []
        for lo, hi, i in extents:
            active = [(end, j) for end, j in active if end > lo]
            for _, j in active:
                if not self._interleaved_apart(i, j):
                    ra, rb = self.regions[j].semantic_role, self.regions[i].semantic_role
                    raise ValueError(
                        f"regions {ra!r} and {rb!r} share bytes of their storage (or interleave "
                        "at different strides); a scatter would write a byte twice"
                    )
            active.append((hi, i))

    def _interleaved_apart(self, a: int, b: int) -> bool:
        """Whether regions ``a`` and ``b`` repeat at one stride with disjoint offsets in it:
        two arcs on a circle of ``stride`` bytes that do not meet."""
        stride = self._strides[a]
        if self.units == 1 or stride != self._strides[b]:
            return False
        gap_ab = (self._bases[b] - self._bases[a]) % stride
        gap_ba = (self._bases[a] - self._bases[b]) % stride
        return gap_ab >= self._spans[a] and gap_ba >= self._spans[b]

    # -- ids ------------------------------------------------------------------------------------

    def _ids(self, ids: Any, *, unique: bool, validate: bool) -> torch.Tensor:
        what = "scatter" if unique else "gather"
        if isinstance(ids, torch.Tensor):
            if (
                ids.dim() != 1
                or ids.dtype.is_floating_point
                or ids.dtype.is_complex
                or ids.dtype == torch.bool
            ):
                raise ValueError(
                    f"block ids must be a 1-D integer tensor, got {ids.dtype} of shape "
                    f"{tuple(ids.shape)}"
                )
            # Contiguous: the kernel reads the ids as one dense array (a strided view, ids[::2],
            # would otherwise be read as the ids between its elements).
            t = ids.to(device=self.device, dtype=torch.int64).contiguous()
            if validate and t.numel():
                lo, hi = (int(v) for v in torch.aminmax(t))
                if lo < 0 or hi >= self.units:
                    bad = lo if lo < 0 else hi
                    raise ValueError(
                        f"block id {bad} is out of range for a region set of {self.units} blocks"
                    )
                if unique and torch.unique(t).numel() != t.numel():
                    raise ValueError(
                        f"{what} block ids repeat an id: two staged blocks would write one block"
                    )
            return t
        if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
            raise TypeError(f"block ids must be a sequence of ints or a tensor, got {ids!r}")
        seq = list(ids)
        for b in seq:
            if isinstance(b, bool) or not isinstance(b, int):
                raise TypeError(f"block ids must be ints, got {b!r}")
            if not 0 <= b < self.units:
                raise ValueError(
                    f"block id {b} is out of range for a region set of {self.units} blocks"
                )
        if unique and len(set(seq)) != len(seq):
            dup = next(b for i, b in enumerate(seq) if b in seq[:i])
            raise ValueError(
                f"{what} block ids repeat {dup}: two staged blocks would write one block"
            )
        return torch.tensor(seq, dtype=torch.int64, device=self.device)

    # -- the reference --------------------------------------------------------------------------

    def byte_views(self) -> list[torch.Tensor | None]:
        """Each region as uint8 ``(units, span)`` over the storage, unit stride ``stride``: the
        reference's reading of the table (None for a region of no bytes)."""
        if self._byte_views is None:
            whole = torch.empty(0, dtype=torch.uint8, device=self.device).set_(self._storage)
            self._byte_views = [
                whole.as_strided((self.units, n), (s, 1), b) if n else None
                for b, s, n in zip(self._bases, self._strides, self._spans, strict=True)
            ]
        return self._byte_views

    def _gather_torch(self, ids: torch.Tensor, out: torch.Tensor) -> None:
        for view, r in zip(self.byte_views(), self.layout.regions, strict=True):
            if view is not None:
                out[:, r.offset : r.offset + r.span] = view.index_select(0, ids)

    def _scatter_torch(self, data: torch.Tensor, ids: torch.Tensor) -> None:
        for view, r in zip(self.byte_views(), self.layout.regions, strict=True):
            if view is not None:
                view.index_copy_(0, ids, data[:, r.offset : r.offset + r.span])

    # -- the kernel's table ---------------------------------------------------------------------

    def word_bytes_for(self, staging: torch.Tensor) -> int:
        """The word a call moves: the set's, narrowed to what the staging buffer's address
        allows (a caller's buffer may start anywhere)."""
        return _word_bytes(math.gcd(self.alignment, staging.data_ptr()) or self.alignment)

    def ranges(self) -> list[tuple[int, int, int, int]]:
        """The byte ranges one block is, ``(base, stride, staged offset, span)`` each, built
        once per set (see ``_merged_ranges``)."""
        if self._ranges is None:
            self._ranges = self._merged_ranges()
        return list(self._ranges)

    def _merged_ranges(self) -> list[tuple[int, int, int, int]]:
        """The byte ranges one block is, as ``(base, stride, staged offset, span)``: the regions
        with bytes, in staging order, each run of regions that follow one another in the storage
        at one stride (unit ``u`` of the next starts where unit ``u`` of this one ends) merged
        into one range, since they are one range in the staged block as well."""
        out: list[list[int]] = []
        for b, s, r in zip(self._bases, self._strides, self.layout.regions, strict=True):
            if not r.span:
                continue
            if out:
                pb, ps, po, pn = out[-1]
                if po + pn == r.offset and pb + pn == b and (ps == s or self.units == 1):
                    out[-1][3] += r.span
                    continue
            out.append([b, s, r.offset, r.span])
        return [tuple(r) for r in out]

    def one_range(self) -> tuple[int, int, int] | None:
        """``(base, stride, span)`` in bytes when a block is one range of the storage (an
        entry-major arena, a state pool): the kernel then computes its pieces from these three
        instead of reading a table row. None otherwise."""
        # Every call asks (the launch and default_kernel()): read off the cached ranges, never
        # rebuilt -- a walk over 300 regions is host time a back-to-back transfer pays.
        ranges = self.ranges() if self._ranges is None else self._ranges
        if len(ranges) != 1:
            return None
        base, stride, offset, span = ranges[0]
        return (base, stride, span) if offset == 0 else None

    def table(self, word_bytes: int, piece_bytes: int = PIECE_BYTES) -> tuple[torch.Tensor, int]:
        """``(pieces, 4)`` int64 on the set's device -- per piece of a block: its source offset
        in words from the storage's start, the region's stride in words, its offset in words
        into a staged block, its length in words -- and the piece count. Built once per word and
        piece size, then reused: a call uploads only its ids."""
        key = (word_bytes, piece_bytes)
        if key not in self._tables:
            if (
                isinstance(piece_bytes, bool)
                or not isinstance(piece_bytes, int)
                or piece_bytes < 16
                or piece_bytes & (piece_bytes - 1)
            ):
                # A program's words are one `tl.arange`, whose length is a power of two.
                raise ValueError(f"piece_bytes must be a power of two >= 16, got {piece_bytes!r}")
            rows = []
            for b, s, offset, span in self.ranges():
                for start in range(0, span, piece_bytes):
                    n = min(piece_bytes, span - start)
                    rows.append(
                        (
                            (b + start) // word_bytes,
                            s // word_bytes,
                            (offset + start) // word_bytes,
                            n // word_bytes,
                        )
                    )
            table = torch.tensor(rows or [[0, 0, 0, 0]], dtype=torch.int64, device=self.device)
            self._tables[key] = (table, len(rows))
        return self._tables[key]

    def storage_words(self, word_bytes: int) -> torch.Tensor:
        """The whole storage as words of ``word_bytes`` (what the kernel's offsets count in)."""
        dtype = WORD_DTYPES[word_bytes]
        n = self._storage.nbytes() // word_bytes
        return torch.empty(0, dtype=dtype, device=self.device).set_(self._storage, 0, (n,), (1,))

    def plan(
        self, word_bytes: int, piece_bytes: int = PIECE_BYTES
    ) -> tuple[torch.Tensor, torch.Tensor, int]:
        """``(storage words, table, pieces)`` for one word and piece size, built on first use and
        kept: a call's host work is its ids and one launch, which at 256 small blocks is most of
        what it costs."""
        key = (word_bytes, piece_bytes)
        plan = self._plans.get(key)
        if plan is None:
            table, pieces = self.table(word_bytes, piece_bytes)
            plan = self._plans[key] = (self.storage_words(word_bytes), table, pieces)
        return plan

    # -- the two directions ---------------------------------------------------------------------

    def default_kernel(self) -> KernelConfig:
        """The launch a call takes when given none: for a block that is one range, the widest
        of ``WIDE_RANGE_KERNEL`` and ``ONE_RANGE_KERNEL`` whose piece the range fills at least
        once; else ``DEFAULT_KERNEL``. (A transfer of 8-32 MiB takes the same: on an H100 no
        launch of fewer, longer-lived programs -- several blocks a program, a persistent grid --
        moved one faster than the copy's own spread; what those lost was the call's host work.)"""
        one = self.one_range()
        if one is not None:
            for kernel in (WIDE_RANGE_KERNEL, ONE_RANGE_KERNEL):
                if one[2] >= kernel.piece_bytes:
                    return kernel
        return DEFAULT_KERNEL

    def _kernel(self, kernel: Any) -> KernelConfig:
        if kernel is None:
            return self.default_kernel()
        if not isinstance(kernel, KernelConfig):
            raise TypeError(f"kernel must be a KernelConfig, got {type(kernel).__name__}")
        return kernel

    def _impl(self, impl: str) -> str:
        if impl not in IMPLS:
            raise ValueError(f"impl {impl!r} is not one of {IMPLS}")
        if impl == "auto":
            if self.device.type != "cuda":
                return "torch"
            try:
                import triton  # noqa: F401
            except ImportError:
                return "torch"
            return "triton"
        if impl == "triton" and self.device.type != "cuda" and not triton_interpreted():
            raise ValueError(
                f"impl 'triton' needs a CUDA region set (or TRITON_INTERPRET=1, which runs the "
                f"kernel on the CPU); this one is on {self.device}"
            )
        return impl

    def gather(
        self,
        ids: Sequence[int] | torch.Tensor,
        *,
        out: torch.Tensor | None = None,
        impl: str = "auto",
        validate: bool = True,
        kernel: KernelConfig | None = None,
    ) -> StagedBlocks:
        """Blocks ``ids`` of every region, into ``out`` (or a fresh buffer on the set's device):
        ``(len(ids), layout.block_bytes)`` uint8. ``validate=False`` skips the range check of a
        tensor of ids (one device sync), for a caller that checked them already. ``kernel`` is
        how the Triton kernel is launched (ignored by the reference); None: the set's
        :meth:`default_kernel`.

        A call repeating the last unvalidated one -- the very same ids and ``out`` tensors, at the
        same addresses, the same ``impl`` and ``kernel`` -- skips the checks that call passed and
        launches what it prepared: a back-to-back transfer of a few MiB otherwise waits on them
        (the ids' values may change between the calls; the kernel reads them where they are)."""
        if not validate and self._repeat("gather", ids, out, impl, kernel):
            return StagedBlocks.trusted(self.layout, out)
        passed = kernel
        impl = self._impl(impl)
        t = self._ids(ids, unique=False, validate=validate)
        kernel = self._kernel(kernel)
        shape = (t.numel(), self.layout.block_bytes)
        if out is None:
            out = torch.empty(shape, dtype=torch.uint8, device=self.device)
        elif (
            not isinstance(out, torch.Tensor)
            or out.dtype != torch.uint8
            or tuple(out.shape) != shape
            or out.device != self.device
        ):
            raise ValueError(
                f"out is {getattr(out, 'dtype', type(out).__name__)} of shape "
                f"{tuple(getattr(out, 'shape', ()))} on {getattr(out, 'device', None)}; "
                f"{t.numel()} blocks of this set are uint8 {shape} on {self.device}"
            )
        staged = StagedBlocks(self.layout, out)
        if t.numel() == 0 or self.layout.block_bytes == 0:
            return staged
        if impl == "torch":
            self._gather_torch(t, out)
        else:
            _launcher()(self, "gather", out, t, kernel)
            if not validate and t is ids:
                self._remember("gather", ids, out, impl, passed)
        return staged

    def scatter(
        self,
        staged: StagedBlocks,
        ids: Sequence[int] | torch.Tensor,
        *,
        impl: str = "auto",
        validate: bool = True,
        kernel: KernelConfig | None = None,
    ) -> None:
        """Write ``staged`` block ``i`` into block ``ids[i]`` of every region.

        Refused before any byte moves: a staged layout other than this set's (by the first
        region that differs), a block count other than ``len(ids)``, and ids out of range or
        repeated. Staged blocks in host memory are copied to the set's device first.
        """
        if not isinstance(staged, StagedBlocks):
            raise TypeError(f"scatter takes StagedBlocks, got {type(staged).__name__}")
        # This set's own layout needs no comparing: a repeat of the last call launches again.
        if (
            not validate
            and staged.layout is self.layout
            and self._repeat("scatter", ids, staged.data, impl, kernel)
        ):
            return
        passed = kernel
        impl = self._impl(impl)
        kernel = self._kernel(kernel)
        why = self.layout.difference(staged.layout)
        if why is not None:
            raise ValueError(f"the staged blocks were laid out for another region set: {why}")
        t = self._ids(ids, unique=True, validate=validate)
        if t.numel() != staged.blocks:
            raise ValueError(
                f"{staged.blocks} staged blocks were handed {t.numel()} destination block ids"
            )
        if t.numel() == 0 or self.layout.block_bytes == 0:
            return
        data = staged.data
        if data.device != self.device:
            data = data.to(self.device, non_blocking=data.is_pinned())
        if impl == "torch":
            self._scatter_torch(data, t)
        else:
            _launcher()(self, "scatter", data, t, kernel)
            if not validate and t is ids and data is staged.data and staged.layout is self.layout:
                self._remember("scatter", ids, data, impl, passed)

    # -- repeated calls -------------------------------------------------------------------------

    def _repeat(self, direction: str, ids: Any, buf: Any, impl: str, kernel: Any) -> bool:
        """Launch again the last unvalidated ``direction`` call if this one repeats it: the same
        ids and buffer objects, still at the addresses they had, the same ``impl`` and the same
        ``kernel`` argument. Identity, not equality, so the test costs next to nothing."""
        last = self._last_calls.get(direction)
        if last is None:
            return False
        ids_ref, buf_ref, ids_at, buf_at, last_impl, last_kernel, prepared = last
        if (
            ids_ref() is not ids
            or buf_ref() is not buf
            or impl != last_impl
            or kernel is not last_kernel
            or ids.data_ptr() != ids_at
            or buf.data_ptr() != buf_at
        ):
            return False
        return _relauncher()(prepared)

    def _remember(self, direction: str, ids: Any, buf: Any, impl: str, kernel: Any) -> None:
        """Keep what a call that passed its checks launched, if the launch prepared one (a
        direct launch); weakly, so the buffers are not kept alive by it."""
        prepared = self._last_prepared
        if prepared is None:
            self._last_calls.pop(direction, None)
            return
        self._last_calls[direction] = (
            weakref.ref(ids), weakref.ref(buf), ids.data_ptr(), buf.data_ptr(), impl, kernel,
            prepared,
        )  # fmt: skip

    def __repr__(self) -> str:
        return (
            f"RegionSet({len(self.regions)} regions x {self.units} blocks, "
            f"{self.layout.block_bytes} B a block, {self.word_bytes} B words)"
        )
