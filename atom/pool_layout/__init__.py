"""How a pool's bytes are declared, priced, carved and bound.

A leaf package: its members import only the standard library, torch and each
other, so CI (and a user's property tests) can import it without aiter, triton
or the rest of `atom`. The vocabulary, and one worked pool, is in
docs/pool_layout.md.

  declare  `EntryField` -- one tensor family of an entry
  price    `walk` -> `EntryWalk.entry_bytes`; `PoolSpec` per `EntryClass`
  place    `plan_regions` / `carve`, `plan_field_planes`
  carve    `EntryMajorArena`, `SplitEntryMajorArena`, `LayerMajorArena`,
           `carve_layer_major`
  order    `ElementOrder` -- where each element of a view a builder
           that allocates its own binds sits, for the readback
  bind     `MhaKvPool`, `MlaKvPool`, `LinearStatePool` and their views;
           rows from `assign_pool_rows` / `PoolRows`, keyed by `KvGeometry`,
           each row's `Reach` recorded beside it
  capacity `Reach.blocks_held` (what a request holds in a row), `plan_capacity`
           (what a budget buys per class: floors, then full blocks)
  V4       `V4RowSpace` (where rows go), `plane_row_widths`,
           `compressor_state_fields`, `plan_shared_row_planes`,
           `indexer_block_regions` (what a row is)
  export   `TransferRegion` / `KVTransferTensors` -- what a P/D
           connector registers, one unit per scheduler block
  wire     `WireManifest` / `describe_regions` -- the regions, described
           in order, that both ends of a transfer compare before a byte
           moves; `StagingLayout`, where each region sits in a staged block
"""

from .capacity import (
    CapacityPlan,
    CapacityRefused,
    ClassPlan,
    PageClass,
    PagePart,
    SharedGroup,
    StateClass,
    WindowPages,
    carved_bytes,
    plan_capacity,
    unify_pages,
)
from .element_order import ElementOrder, row_major
from .entry_arena import EntryMajorArena, SplitEntryMajorArena
from .entry_class import EntryClass, PoolSpec, sum_specs
from .entry_field import DEFAULT_ALIGN, EntryField, EntryWalk, round_up, walk
from .field_planes import plan_field_planes, plane_entry_bytes, plane_fields, plane_rows
from .layer_major import LayerMajorArena, carve_layer_major, plan_layer_major
from .manifest import ManifestMismatch, StagingLayout, WireManifest, describe_regions
from .mha_pool import MhaKvPool, MhaKvPoolViews
from .mla_pool import IndexerField, MlaKvPool, MlaKvPoolViews
from .paged_layout import PagedLayout, k_block_shape, shuffle_vector, v_block_shape
from .paged_pool import PagedPool, PagedPoolViews, RowSubsetPool, is_fp8
from .pool_rows import KindRows, KvGeometry, PoolRows, PoolRowsMixin, assign_pool_rows
from .reach import Reach, ReachKind
from .regions import Region, RegionPlan, carve, plan_regions
from .state_pool import LinearStatePool, LinearStateViews
from .transfer import KVTransferTensors, TransferRegion, owned_regions, owned_role
from .v4_pool_fields import (
    IndexerRegion,
    compressor_state_fields,
    indexer_block_bytes,
    indexer_block_regions,
    plan_shared_row_planes,
    plane_row_widths,
)
from .v4_pool_geometry import V4RowSpace

__all__ = [
    "DEFAULT_ALIGN",
    "CapacityPlan",
    "CapacityRefused",
    "ClassPlan",
    "ElementOrder",
    "EntryClass",
    "EntryField",
    "EntryMajorArena",
    "EntryWalk",
    "IndexerField",
    "IndexerRegion",
    "KVTransferTensors",
    "KindRows",
    "KvGeometry",
    "LayerMajorArena",
    "LinearStatePool",
    "LinearStateViews",
    "ManifestMismatch",
    "MhaKvPool",
    "MhaKvPoolViews",
    "MlaKvPool",
    "MlaKvPoolViews",
    "PageClass",
    "PagePart",
    "PagedLayout",
    "PagedPool",
    "PagedPoolViews",
    "PoolRows",
    "PoolRowsMixin",
    "PoolSpec",
    "Reach",
    "ReachKind",
    "Region",
    "RegionPlan",
    "RowSubsetPool",
    "SharedGroup",
    "SplitEntryMajorArena",
    "StagingLayout",
    "StateClass",
    "TransferRegion",
    "V4RowSpace",
    "WindowPages",
    "WireManifest",
    "assign_pool_rows",
    "carve",
    "carve_layer_major",
    "carved_bytes",
    "compressor_state_fields",
    "describe_regions",
    "indexer_block_bytes",
    "indexer_block_regions",
    "is_fp8",
    "k_block_shape",
    "owned_regions",
    "owned_role",
    "plan_capacity",
    "plan_field_planes",
    "plan_layer_major",
    "plan_regions",
    "plan_shared_row_planes",
    "plane_entry_bytes",
    "plane_fields",
    "plane_row_widths",
    "plane_rows",
    "round_up",
    "row_major",
    "shuffle_vector",
    "sum_specs",
    "unify_pages",
    "v_block_shape",
    "walk",
]
