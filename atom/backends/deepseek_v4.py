"""The DeepSeek-V4 flavour: one row space, materialized in one or two planes, that it allocates.

A V4 layer keeps compressed history (CSA ratio 4, HCA ratio 128, none for a dense layer), a
sliding window, and compressor state; a CSA layer also keeps an indexer over its compressed
rows. Compressed history is addressed by block, the windows and the state by request, and they
share one row space (`pool_layout.v4_pool_geometry`) that each plane materializes at its own
width (`pool_layout.v4_pool_fields.plane_row_widths`: two planes on fp8, ONE on bf16).

Two entry classes, priced from those declarations and nothing else:

  PAGE   per scheduler block: `blocks_per_entry` envelopes in every plane, plus the indexer
         block of every CSA layer (`indexer_block_regions`, packed with nothing between);
  STATE  per request: one slot in every plane -- compressor state first, then the windows.

The builder allocates its own (`paged_pool_bytes` answers 0, the runner hands it no region):
half of what PAGE is priced for lives in the planes, which need the request count too and are
made by `allocate_per_req_cache`. It makes ONE buffer -- the indexer's blocks, then the planes --
so one region set addresses every byte a transfer moves. The carve is the pinned split, so the
buffer holds exactly `blocks x PAGE + entries x STATE` bytes (`own_buffers`: the indexer's and
the planes' ranges of it), which is what the runtime price-equals-carve contract checks for a
builder that allocates its own.

Rows come from the walk: the row spaces are the compress classes (`v4_dense`, `v4_hca`,
`v4_csa`) and the CSA layers' indexer rows (`v4_index`), so the class layer counts the row space
is built from are module counts, drafter layers included. Every view a module is bound is
disjoint from every other module's: a layer's compressed rows (an envelope slice per block), its
window (per slot: whole runs of its class's interleave, then the partial tail), its compressor
state (an entry-strided row of a plane's state arena) and, for CSA, its indexer regions.

Transfer, from the same buffer, in three kinds of region (the engine's: its `block_regions`
and its SLOT regions):

  PAGE   per plane, one scheduler block's envelopes -- every compressed layer of it, one range
         (`v4_kv/envelope/P`); per CSA layer, its indexer blocks (`v4_kv/index/R`);
  STATE  per plane, one request slot: its compressor state (`v4_slot/state/P`), then its
         sliding windows (`v4_slot/window/P`).

An FP4 indexer refuses transfer by name (`transfer_refusal`), as the engine does: it keeps the
FP4 indexer's e8m0 scales in a pool of their own that its transfer map does not describe. The
P/D decode side is refused by the STATE pool's name before anything is backed unless it is told
the peer's request slots (the record: "V4's arena ... never exist[s]" on a side that is not). A
draft binds into the target's pool (`DRAFT_OWNS_KV_POOL` False): V4's drafter layers are rows of
the same row space.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import ClassVar

import torch

from atom.backends.backend import AttentionBackend
from atom.backends.builder import KvCacheBuilder
from atom.models.hf_config import HfConfig
from atom.models.modules import AttentionModule, V4Attention
from atom.pool_layout import (
    ElementOrder,
    EntryClass,
    EntryField,
    EntryMajorArena,
    PoolSpec,
    carve,
    plan_regions,
    row_major,
    walk,
)
from atom.pool_layout.refusals import require_count
from atom.pool_layout.transfer import TransferRegion, dtype_name, dtypes_name
from atom.pool_layout.v4_pool_fields import (
    IndexerRegion,
    compressor_state_fields,
    indexer_block_bytes,
    indexer_block_regions,
    plan_shared_row_planes,
    plane_row_widths,
)
from atom.pool_layout.v4_pool_geometry import (
    CSA_RATIO,
    DENSE_RATIO,
    HCA_RATIO,
    V4RowSpace,
)

#: V4's backend block: 2 x lcm(4, 128) original tokens, so a CSA layer compresses one block to
#: 64 rows and an HCA layer to 2 (the engine forces the same block for V4).
V4_BLOCK_SIZE = 256
CLASS_KINDS = {DENSE_RATIO: "v4_dense", HCA_RATIO: "v4_hca", CSA_RATIO: "v4_csa"}
V4_INDEX = "v4_index"
PAGE_POOL = "v4_kv"
STATE_POOL = "v4_slot"
#: state fields a module of each class reads, by the view name it is bound under.
STATE_VIEWS = {
    CSA_RATIO: {
        "compressor_kv": "csa_main_kv",
        "compressor_score": "csa_main_score",
        "indexer_compressor_kv": "csa_idx_kv",
        "indexer_compressor_score": "csa_idx_score",
    },
    HCA_RATIO: {"compressor_kv": "hca_main_kv", "compressor_score": "hca_main_score"},
    DENSE_RATIO: {},
}
#: view name of a plane's compressed rows / window runs, per plane index.
PLANE_SUFFIX = ("", "_rope")


class DeepseekV4Backend(AttentionBackend):
    NAME = "deepseek-v4"
    DRAFT_OWNS_KV_POOL = False

    @classmethod
    def attn_block_size(cls, hf_config: HfConfig, scheduler_block_size: int) -> int:
        return V4_BLOCK_SIZE

    @classmethod
    def block_rule(cls, hf_config: HfConfig) -> str:
        return f"pages at {V4_BLOCK_SIZE} tokens (2 x lcm(4, 128), so every compress ratio divides)"

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        return DeepseekV4MetadataBuilder


@dataclass(frozen=True)
class V4PoolDeclaration:
    """Everything V4's price and carve read, decided once from the walk and the engine."""

    rows: V4RowSpace
    plane_widths: tuple[int, ...]
    plane_dtypes: tuple[torch.dtype, ...]
    plane_elems: tuple[int, ...]
    state_planes: tuple[tuple[EntryField, ...], ...]
    indexer_regions: tuple[IndexerRegion, ...]
    csa_layers: int
    blocks_per_entry: int

    @property
    def indexer_block_bytes(self) -> int:
        last = self.indexer_regions[-1] if self.indexer_regions else None
        return last.offset + last.nbytes if last else 0

    @property
    def page_entry_bytes(self) -> int:
        """One scheduler block: its backend blocks' envelopes in every plane, and the indexer."""
        per_block = sum(self.rows.block_bytes(w) for w in self.plane_widths)
        per_block += self.csa_layers * self.indexer_block_bytes
        return self.blocks_per_entry * per_block

    @property
    def state_entry_bytes(self) -> int:
        """One request: a slot in every plane."""
        return sum(self.rows.slot_bytes(w) for w in self.plane_widths)


class DeepseekV4MetadataBuilder(KvCacheBuilder):
    BACKEND: ClassVar[type[AttentionBackend]] = DeepseekV4Backend

    def __init__(self, hf_config, engine, *, name: str = "target") -> None:
        super().__init__(hf_config, engine, name=name)
        self.declaration: V4PoolDeclaration | None = None
        #: the one buffer this builder allocates; `index_buf` and `plane_buf` are its two ranges.
        self.own_buf: torch.Tensor | None = None
        self.index_buf: torch.Tensor | None = None
        self.plane_buf: torch.Tensor | None = None
        self.planes: list[torch.Tensor] = []
        self.state_arenas: list[EntryMajorArena] = []
        self.entries: int | None = None

    # -- the walk ---------------------------------------------------------------------------

    def row_kinds(self, module: AttentionModule) -> tuple[Hashable, ...]:
        if not isinstance(module, V4Attention):
            return ()
        kind = CLASS_KINDS[module.compress_ratio]
        return (kind, V4_INDEX) if module.compress_ratio == CSA_RATIO else (kind,)

    def invalidate_pool_rows(self) -> None:
        super().invalidate_pool_rows()
        self.declaration = None

    def _build_pools(self, modules: list[AttentionModule]) -> None:
        v4 = [m for m in modules if isinstance(m, V4Attention)]
        if not v4:
            return
        shapes = {(m.head_dim, m.rope_head_dim, m.window) for m in v4}
        index_dims = {m.index_head_dim for m in v4 if m.compress_ratio == CSA_RATIO}
        if len(shapes) != 1 or len(index_dims) > 1:
            raise ValueError(
                f"V4 modules declare (head_dim, rope, window) {sorted(shapes)} and indexer dims "
                f"{sorted(index_dims)}; one row space holds one of each"
            )
        head_dim, rope_head_dim, window = shapes.pop()
        index_head_dim = index_dims.pop() if index_dims else 0
        counts = self.pool_rows.counts()
        layers = {ratio: counts.get(kind, 0) for ratio, kind in CLASS_KINDS.items()}
        spec = self.engine.num_speculative_tokens
        kv_fp8 = self.engine.is_fp8
        widths = plane_row_widths(kv_fp8=kv_fp8, head_dim=head_dim, rope_head_dim=rope_head_dim)
        if kv_fp8:
            dtypes = (torch.float8_e4m3fn, torch.bfloat16)
            elems = (head_dim, rope_head_dim)
        else:
            dtypes, elems = (torch.bfloat16,), (head_dim,)
        state = compressor_state_fields(
            csa_layers=layers[CSA_RATIO],
            hca_layers=layers[HCA_RATIO],
            head_dim=head_dim,
            index_head_dim=index_head_dim,
            ring_extra=spec,
        )
        planes, arena_rows = plan_shared_row_planes(state, widths)
        rows = V4RowSpace(
            layers, block_size=self.block_size, ring_slots=window + spec, arena_rows=arena_rows
        )
        regions: tuple[IndexerRegion, ...] = ()
        if layers[CSA_RATIO]:
            csa_rows = self.block_size // CSA_RATIO
            fp4 = self.engine.index_cache_dtype == "fp4"
            regions = indexer_block_regions(csa_rows, index_head_dim, fp4=fp4)
            # The regions and their sum are one walk; this is the indexer's price.
            if indexer_block_bytes(csa_rows, index_head_dim, fp4=fp4) != sum(
                r.nbytes for r in regions
            ):  # pragma: no cover - the same function, read twice
                raise ValueError("indexer regions do not sum to the block they describe")
        self.declaration = V4PoolDeclaration(
            rows=rows,
            plane_widths=widths,
            plane_dtypes=dtypes,
            plane_elems=elems,
            state_planes=tuple(tuple(p) for p in planes),
            indexer_regions=regions,
            csa_layers=layers[CSA_RATIO],
            blocks_per_entry=self.blocks_per_entry,
        )

    def _require_declaration(self) -> V4PoolDeclaration:
        self._require_walk()
        if self.declaration is None:
            raise ValueError(f"builder {self.name!r}: the walk found no V4 module to build for")
        return self.declaration

    # -- sizing -----------------------------------------------------------------------------

    def sub_pool_specs(self) -> list[PoolSpec]:
        d = self._require_declaration()
        return [
            PoolSpec(f"{self.name}.{PAGE_POOL}", EntryClass.PAGE, d.page_entry_bytes),
            PoolSpec(f"{self.name}.{STATE_POOL}", EntryClass.STATE, d.state_entry_bytes),
        ]

    def paged_pool_bytes(self, entries: int) -> int:
        """Zero: this builder allocates its own, the planes with the request count."""
        self._require_walk()
        return 0

    def own_buffers(self) -> list[torch.Tensor]:
        """The buffers this builder allocated itself: the indexer's, then the planes'."""
        return [b for b in (self.index_buf, self.plane_buf) if b is not None]

    # -- allocation -------------------------------------------------------------------------

    def allocate_kv_cache_tensors(self, *, blocks: int, buf: torch.Tensor | None) -> dict:
        """Records the block count. The indexer is allocated with the planes, in one buffer
        (`allocate_per_req_cache`), which needs the request count as well."""
        out = super().allocate_kv_cache_tensors(blocks=blocks, buf=buf)
        self._require_declaration()
        return out

    def allocate_per_req_cache(self, *, entries: int, device: torch.device | str = "cpu") -> None:
        """One buffer: the indexer's `csa_layers x num_blocks` blocks of packed regions
        (layer-major, so one layer's blocks are one contiguous range), then the planes --
        `num_blocks` envelopes from row 0, then `entries` slots; each plane's slot range backs an
        `EntryMajorArena` of its share of the compressor state, strided by the slot, so a
        request's state is one contiguous range per plane."""
        d = self._require_declaration()
        if self.num_blocks is None:
            raise ValueError(
                f"builder {self.name!r}: allocate the paged pools (the block count) before "
                "the planes, which hold both the blocks and the slots"
            )
        require_count(f"builder {self.name!r}: entries", entries, minimum=1, unit="request slots")
        plane_rows = d.rows.plane_rows(self.num_blocks, entries)
        plan = plan_regions([(f"plane{p}", plane_rows * w) for p, w in enumerate(d.plane_widths)])
        index_bytes = d.csa_layers * self.num_blocks * d.indexer_block_bytes
        whole = plan_regions([("index", index_bytes), ("planes", plan.total_bytes)])
        self.own_buf = torch.zeros(whole.total_bytes, dtype=torch.uint8, device=device)
        ranges = carve(self.own_buf, whole)
        self.index_buf = ranges["index"] if index_bytes else None
        self.plane_buf = ranges["planes"]
        pieces = carve(self.plane_buf, plan)
        self.planes = [pieces[f"plane{p}"] for p in range(len(d.plane_widths))]
        block_rows = self.num_blocks * d.rows.envelope_rows
        self.state_arenas = [
            EntryMajorArena(
                fields,
                entries,
                buf=plane[block_rows * w :],
                stride_bytes=d.rows.slot_rows * w,
                zeroed=True,
            )
            for plane, fields, w in zip(self.planes, d.state_planes, d.plane_widths, strict=True)
        ]
        self.entries = entries

    # -- binding ----------------------------------------------------------------------------

    def _typed_rows(self, p: int) -> torch.Tensor:
        """Plane `p` as `(plane_rows, elems)` of its dtype."""
        d = self.declaration
        return self.planes[p].view(d.plane_dtypes[p]).view(-1, d.plane_elems[p])

    def _views_for(
        self, module: AttentionModule, kind: Hashable, row: int
    ) -> dict[str, torch.Tensor]:
        d = self._require_declaration()
        if not self.planes:
            raise ValueError(f"builder {self.name!r}: the planes are not allocated yet")
        if kind == V4_INDEX:
            return self._indexer_views(row)
        ratio = module.compress_ratio
        views: dict[str, torch.Tensor] = {}
        rows = d.rows
        cls = rows.classes[ratio]
        blocks_rows = self.num_blocks * rows.envelope_rows
        for p in range(len(self.planes)):
            plane = self._typed_rows(p)
            suffix = PLANE_SUFFIX[p]
            if ratio != DENSE_RATIO:
                first, count = rows.compressed_rows(ratio, row)
                envelopes = plane[:blocks_rows].view(self.num_blocks, rows.envelope_rows, -1)
                views[f"kv_compressed{suffix}"] = envelopes[:, first : first + count]
            slots = plane[blocks_rows:].view(self.entries, rows.slot_rows, -1)
            # The class's windows: `whole` runs in which each of its layers owns `ring_stride`
            # consecutive rows, then each layer's `partial` rows of the last run.
            base = rows.arena_rows + cls.entry_offset
            whole, partial = divmod(rows.ring_slots, cls.ring_stride)
            run = cls.layers * cls.ring_stride
            if whole:
                runs = slots[:, base : base + whole * run]
                runs = runs.unflatten(1, (whole, cls.layers, cls.ring_stride))[:, :, row]
                views[f"window{suffix}"] = runs
            if partial:
                tail = base + whole * run + row * cls.ring_stride
                views[f"window_tail{suffix}"] = slots[:, tail : tail + partial]
        for view_name, field in STATE_VIEWS[ratio].items():
            arena = next(a for a in self.state_arenas if field in {f.name for f in a.fields})
            views[view_name] = arena.view(field)[:, row]
        return views

    def _indexer_views(self, row: int) -> dict[str, torch.Tensor]:
        d = self.declaration
        blocks = self.index_buf.view(d.csa_layers, self.num_blocks, d.indexer_block_bytes)[row]
        out = {}
        for region in d.indexer_regions:
            raw = blocks[:, region.offset : region.offset + region.nbytes]
            out[f"v4_{region.name}"] = raw.view(region.dtype).view(self.num_blocks, *region.shape)
        return out

    # -- element order ----------------------------------------------------------------------

    def element_orders(self, module: AttentionModule) -> dict[str, ElementOrder]:
        """Where every element of every view ``module`` is bound sits, written from the
        declarations alone: the row space's addresses (`compressed_rows`, `window_row`, the
        pinned split), the state fields' walk and the indexer regions' packed offsets. The
        views are carved by slicing and reshaping; this is the second reading the runtime
        readback compares them with, element by element."""
        self._require_declaration()
        if not self.planes:
            raise ValueError(f"builder {self.name!r}: the planes are not allocated yet")
        orders: dict[str, ElementOrder] = {}
        for kind in self.row_kinds(module):
            row = self.pool_rows[kind][module]
            if kind == V4_INDEX:
                orders.update(self._indexer_orders(row))
            else:
                orders.update(self._plane_orders(module.compress_ratio, row))
        return orders

    def _own_index(self, buf: torch.Tensor) -> int:
        """Position of `buf` in `own_buffers()` (by identity: `==` on tensors compares values)."""
        return next(i for i, b in enumerate(self.own_buffers()) if b is buf)

    def _plane_orders(self, ratio: int, row: int) -> dict[str, ElementOrder]:
        d = self.declaration
        rows = d.rows
        buffer = self._own_index(self.plane_buf)
        plane_rows = rows.plane_rows(self.num_blocks, self.entries)
        plan = plan_regions([(f"plane{p}", plane_rows * w) for p, w in enumerate(d.plane_widths)])
        block_rows = self.num_blocks * rows.envelope_rows
        cls = rows.classes[ratio]
        whole, partial = divmod(rows.ring_slots, cls.ring_stride)
        orders: dict[str, ElementOrder] = {}
        for p, (width, dtype, elems) in enumerate(
            zip(d.plane_widths, d.plane_dtypes, d.plane_elems, strict=True)
        ):
            base, item = plan[f"plane{p}"].offset, dtype.itemsize
            suffix = PLANE_SUFFIX[p]

            def at_row(plane_row, e, base=base, width=width, item=item):
                return base + plane_row * width + e * item

            if ratio != DENSE_RATIO:
                first, count = rows.compressed_rows(ratio, row)
                orders[f"kv_compressed{suffix}"] = ElementOrder(
                    buffer, dtype, (self.num_blocks, count, elems), ("block", "row", "dim"),
                    lambda b, i, e, at_row=at_row, first=first: at_row(
                        b * rows.envelope_rows + first + i, e
                    ),
                )  # fmt: skip
            # A window position's row is the row space's own formula, one position at a time.
            ring = torch.tensor(
                [rows.window_row(ratio, row, pos) for pos in range(rows.ring_slots)]
            )

            def window_at(s, pos, e, at_row=at_row, ring=ring):
                return at_row(block_rows + s * rows.slot_rows + ring[pos], e)

            if whole:
                orders[f"window{suffix}"] = ElementOrder(
                    buffer, dtype, (self.entries, whole, cls.ring_stride, elems),
                    ("slot", "run", "position", "dim"),
                    lambda s, c, j, e, window_at=window_at: window_at(s, c * cls.ring_stride + j, e),
                )  # fmt: skip
            if partial:
                orders[f"window_tail{suffix}"] = ElementOrder(
                    buffer, dtype, (self.entries, partial, elems), ("slot", "position", "dim"),
                    lambda s, j, e, window_at=window_at: window_at(s, whole * cls.ring_stride + j, e),
                )  # fmt: skip
        for view_name, field_name in STATE_VIEWS[ratio].items():
            p = next(i for i, fs in enumerate(d.state_planes) if field_name in {f.name for f in fs})
            fields = d.state_planes[p]
            field = next(f for f in fields if f.name == field_name)
            # The state arena's walk: entry-strided by the slot, the field at its walk offset,
            # then (layer row, *shape) dense -- the order `EntryField` declares.
            start = (
                plan[f"plane{p}"].offset
                + block_rows * d.plane_widths[p]
                + walk(fields).offsets[field_name]
            )
            slot_bytes = rows.slot_rows * d.plane_widths[p]
            orders[view_name] = ElementOrder(
                buffer, field.dtype, (self.entries, *field.shape), ("slot", "position", "dim"),
                lambda s, i, e, start=start, slot_bytes=slot_bytes, field=field: start
                + s * slot_bytes
                + row_major([torch.as_tensor(row), i, e], (field.rows, *field.shape)) * field.itemsize,
            )  # fmt: skip
        return orders

    def _indexer_orders(self, row: int) -> dict[str, ElementOrder]:
        """The indexer is `csa_layers x num_blocks` blocks of packed regions, layer-major."""
        d = self.declaration
        buffer = self._own_index(self.index_buf)
        orders: dict[str, ElementOrder] = {}
        for region in d.indexer_regions:
            axes = ("block", *(f"axis{k}" for k in range(len(region.shape))))

            def at(b, *index, region=region):
                block = (row * self.num_blocks + b) * d.indexer_block_bytes
                return (
                    block + region.offset + row_major(index, region.shape) * region.dtype.itemsize
                )

            orders[f"v4_{region.name}"] = ElementOrder(
                buffer, region.dtype, (self.num_blocks, *region.shape), axes, at
            )
        return orders

    def view_home(self, module: AttentionModule, view_name: str):
        raise KeyError(
            f"builder {self.name!r} allocates its own pool; {module}.{view_name} is in no region "
            "of the paged buffer"
        )

    def transfer_refusal(self) -> str | None:
        if (
            self.engine.index_cache_dtype == "fp4"
            and self.declaration
            and self.declaration.csa_layers
        ):
            return (
                f"builder {self.name!r} ({DeepseekV4Backend.NAME}): transfer with "
                "index_cache_dtype 'fp4' is refused: the engine keeps the FP4 indexer's e8m0 "
                "scales in a pool of their own that its transfer map does not describe, so a peer "
                "would receive keys without their scales (use --index-cache-dtype fp8)"
            )
        return None

    def _slot_rows(self, p: int) -> torch.Tensor:
        """Plane `p`'s slot range as uint8 `(entries, slot bytes)`."""
        rows, w = self.declaration.rows, self.declaration.plane_widths[p]
        start = self.num_blocks * rows.envelope_rows * w
        return self.planes[p][start : start + self.entries * rows.slot_rows * w].view(
            self.entries, rows.slot_rows * w
        )

    def transfer_regions(self) -> list[TransferRegion]:
        """PAGE, one unit a scheduler block: each plane's envelopes (every compressed layer of a
        block, one range), then each CSA layer's indexer blocks. None under a refusal."""
        if self.transfer_refusal() is not None or not self.planes:
            return []
        d = self.declaration
        regions = []
        for p, (plane, w) in enumerate(zip(self.planes, d.plane_widths, strict=True)):
            per_block = d.blocks_per_entry * d.rows.block_bytes(w)
            envelopes = plane[: self.blocks * per_block].view(self.blocks, per_block)
            regions.append(
                TransferRegion(
                    f"{PAGE_POOL}/envelope/{p}", envelopes, dtype_name(d.plane_dtypes[p])
                )
            )
        if d.csa_layers:
            per_block = d.blocks_per_entry * d.indexer_block_bytes
            layers = self.index_buf.view(d.csa_layers, self.blocks, per_block)
            held = dtypes_name(r.dtype for r in d.indexer_regions)
            regions += [
                TransferRegion(f"{PAGE_POOL}/index/{row}", layers[row], held)
                for row in range(d.csa_layers)
            ]
        return [r.owned_by(self.name) for r in regions]

    def state_transfer_regions(self) -> list[TransferRegion]:
        """STATE, one unit a request slot: per plane, the slot's compressor state, then its
        sliding windows (the rows after the state, the slot's rounding row included)."""
        if self.transfer_refusal() is not None or not self.planes:
            return []
        d = self.declaration
        regions = []
        for p, w in enumerate(d.plane_widths):
            slots = self._slot_rows(p)
            state = d.rows.arena_rows * w
            regions.append(
                TransferRegion(
                    f"{STATE_POOL}/state/{p}",
                    slots[:, :state],
                    dtypes_name(f.dtype for f in d.state_planes[p]),
                )
            )
            regions.append(
                TransferRegion(
                    f"{STATE_POOL}/window/{p}", slots[:, state:], dtype_name(d.plane_dtypes[p])
                )
            )
        return [r.owned_by(self.name) for r in regions]

    def release(self) -> None:
        super().release()
        self.own_buf = None
        self.index_buf = None
        self.plane_buf = None
        self.planes = []
        self.state_arenas = []
        self.entries = None
