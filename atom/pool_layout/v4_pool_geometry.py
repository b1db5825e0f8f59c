"""Where every DeepSeek-V4 KV row lives, in rows rather than bytes.

V4 keeps two kinds of KV in one row space: compressed history addressed by
block, and a per-request slot (compressor state, then sliding windows)
addressed by request. A *row* is one token's KV at one layer; what it costs
differs per plane (512 B packed fp8 NoPE and 128 B bf16 RoPE, or one 1024 B
bf16 row with RoPE inline) but a row *index* means the same in every plane,
because V4's sparse kernels take several planes and ONE index buffer. This is
the sibling of `v4_pool_fields`: that one says what a row is, this one says
where rows go.

  envelope  one backend block (256 tokens) of compressed history, every
            compressed layer: a CSA (ratio 4) layer compresses it to 64 rows,
            an HCA (ratio 128) layer to 2, a dense layer to none. Classes are
            grouped (HCA first, then CSA) so one class's layer stride is a
            constant and one index formula serves the class.
  entry     a request's sliding windows: `ring_slots` positions per layer
            (the window plus the speculative lookahead), dense class first,
            then HCA, then CSA. A compressed class interleaves its layers'
            windows in runs of its block rows so a window row's index has the
            same layer term as a compressed row's (`entry_rows_for`).
  slot      `arena_rows` of compressor state, then the entry, rounded to an
            even row count so the next slot's state starts on a 256 B
            boundary of the 128 B plane.

The figures are the engine's (ROCm/ATOM
`atom/model_ops/attentions/v4_pool_geometry.py` at ffdf3bb5): the carve
here is the pinned split -- `num_blocks` envelopes from row 0, then
`num_slots` slots -- with nothing between them, so a plane is exactly
`num_blocks x envelope_rows + num_slots x slot_rows` rows and the pool takes
what PAGE and STATE priced, no rounding. The engine's elastic boundary (slots
numbered down from the top of a plane sized above the split) is not modelled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .refusals import require_count

DENSE_RATIO = 0
CSA_RATIO = 4
HCA_RATIO = 128
KNOWN_RATIOS = (DENSE_RATIO, CSA_RATIO, HCA_RATIO)
#: Envelope order puts the narrow class first; the entry leads with dense, which has no
#: envelope part at all.
ENVELOPE_ORDER = (HCA_RATIO, CSA_RATIO)
ENTRY_ORDER = (DENSE_RATIO, HCA_RATIO, CSA_RATIO)
#: A slot is rounded to this many rows: the state's 256 B boundary on a 128 B plane.
SLOT_ALIGN_ROWS = 2


def ring_offset_for(num_layers: int, ring_stride: int, ring_pos: int) -> int:
    """The layer-independent part of a window row: runs of `ring_stride`, interleaved."""
    chunk, within = divmod(ring_pos, ring_stride)
    return chunk * (num_layers * ring_stride) + within


def entry_rows_for(num_layers: int, ring_stride: int, ring_slots: int) -> int:
    """Rows a class's interleaved windows reach: the last layer's last position, plus one."""
    return (
        (num_layers - 1) * ring_stride
        + ring_offset_for(num_layers, ring_stride, ring_slots - 1)
        + 1
    )


@dataclass(frozen=True)
class ClassRows:
    """One compress class: its layer count, its rows per block and its offsets."""

    ratio: int
    layers: int
    block_rows: int
    ring_stride: int
    envelope_offset: int
    entry_offset: int
    entry_rows: int


class V4RowSpace:
    """The row space of one V4 pool: class layer counts in, row counts out.

    `layers_by_ratio` maps a compress ratio to how many layers of it the pool
    holds -- the walk's counts, never the config's -- `block_size` is the
    backend block (256 tokens), `ring_slots` the window positions a request
    keeps, `arena_rows` the rows its compressor state takes off the front of a
    slot.
    """

    def __init__(
        self,
        layers_by_ratio: dict[int, int],
        *,
        block_size: int,
        ring_slots: int,
        arena_rows: int,
    ) -> None:
        unknown = sorted(set(layers_by_ratio) - set(KNOWN_RATIOS))
        if unknown:
            raise ValueError(f"unknown V4 compress ratios {unknown}; known {list(KNOWN_RATIOS)}")
        for ratio, n in layers_by_ratio.items():
            require_count(f"V4RowSpace layers of ratio {ratio}", n)
        if not any(layers_by_ratio.values()):
            raise ValueError("a V4 row space needs at least one layer")
        self.block_size = require_count("V4RowSpace block_size", block_size, minimum=1)
        for ratio in (CSA_RATIO, HCA_RATIO):
            if layers_by_ratio.get(ratio) and block_size % ratio:
                raise ValueError(
                    f"V4 block_size {block_size} is not a multiple of compress ratio {ratio}"
                )
        self.ring_slots = require_count("V4RowSpace ring_slots", ring_slots, minimum=1)
        self.arena_rows = require_count("V4RowSpace arena_rows", arena_rows)
        self.layers_by_ratio = {r: n for r, n in layers_by_ratio.items() if n}

        def stride(ratio: int) -> int:
            return ring_slots if ratio == DENSE_RATIO else block_size // ratio

        envelope: dict[int, int] = {}
        cursor = 0
        for ratio in ENVELOPE_ORDER:
            if ratio in self.layers_by_ratio:
                envelope[ratio] = cursor
                cursor += self.layers_by_ratio[ratio] * (block_size // ratio)
        self.envelope_rows = cursor
        classes: dict[int, ClassRows] = {}
        cursor = 0
        for ratio in ENTRY_ORDER:
            n = self.layers_by_ratio.get(ratio)
            if not n:
                continue
            rows = entry_rows_for(n, stride(ratio), ring_slots)
            classes[ratio] = ClassRows(
                ratio=ratio,
                layers=n,
                block_rows=0 if ratio == DENSE_RATIO else block_size // ratio,
                ring_stride=stride(ratio),
                envelope_offset=envelope.get(ratio, 0),
                entry_offset=cursor,
                entry_rows=rows,
            )
            cursor += rows
        self.entry_rows = cursor
        self.classes = classes
        rows = self.arena_rows + self.entry_rows
        self.slot_rows = -(-rows // SLOT_ALIGN_ROWS) * SLOT_ALIGN_ROWS

    # -- prices, in rows and at a plane's width ---------------------------------------------

    def block_bytes(self, row_bytes: int) -> int:
        """Bytes one backend block costs in a plane of `row_bytes` rows."""
        return self.envelope_rows * row_bytes

    def slot_bytes(self, row_bytes: int) -> int:
        """Bytes one request costs in a plane of `row_bytes` rows: state and windows."""
        return self.slot_rows * row_bytes

    def plane_rows(self, num_blocks: int, num_slots: int) -> int:
        """Rows of a plane at the pinned split: the envelopes, then the slots."""
        require_count("num_blocks", num_blocks)
        require_count("num_slots", num_slots)
        return num_blocks * self.envelope_rows + num_slots * self.slot_rows

    # -- addresses -------------------------------------------------------------------------

    def compressed_rows(self, ratio: int, layer_index: int) -> tuple[int, int]:
        """`(first row inside an envelope, rows)` of layer `layer_index` of class `ratio`."""
        cls = self._class(ratio)
        if ratio == DENSE_RATIO:
            raise ValueError("a dense layer keeps no compressed KV")
        self._check_layer(cls, layer_index)
        return cls.envelope_offset + layer_index * cls.block_rows, cls.block_rows

    def window_row(self, ratio: int, layer_index: int, ring_pos: int) -> int:
        """Row of window position `ring_pos` of a layer, counted from its slot's start."""
        cls = self._class(ratio)
        self._check_layer(cls, layer_index)
        if not 0 <= ring_pos < self.ring_slots:
            raise ValueError(f"ring position {ring_pos} is outside 0..{self.ring_slots}")
        return (
            self.arena_rows
            + cls.entry_offset
            + layer_index * cls.ring_stride
            + ring_offset_for(cls.layers, cls.ring_stride, ring_pos)
        )

    def _class(self, ratio: int) -> ClassRows:
        if ratio not in self.classes:
            raise ValueError(f"this row space holds no layer of compress ratio {ratio}")
        return self.classes[ratio]

    @staticmethod
    def _check_layer(cls: ClassRows, layer_index: int) -> None:
        require_count("layer index", layer_index)
        if layer_index >= cls.layers:
            raise ValueError(
                f"layer {layer_index} is outside the {cls.layers} layers of ratio {cls.ratio}"
            )


def layers_by_ratio(ratios: Sequence[int]) -> dict[int, int]:
    """Layer counts per compress ratio, in a per-layer ratio list."""
    out = {r: 0 for r in KNOWN_RATIOS}
    for r in ratios:
        if r not in out:
            raise ValueError(f"unknown V4 compress ratio {r!r}; known {list(KNOWN_RATIOS)}")
        out[r] += 1
    return out
