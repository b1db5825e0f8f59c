"""Reach: which of a request's tokens one attention row still reads, and so still holds.

A full-attention row reads every token before the query, so a request of `L` tokens holds
`ceil(L / block)` blocks in it. A sliding-window row of `W` tokens reads the query and the
`W - 1` tokens before it; a chunked-local row of `C` tokens reads back to the start of the query's
`C`-token chunk. Once a block holds only tokens no query will read again it can be given back, so
what such a row holds is bounded by its reach, not by the request's length. Pricing every row as
full charges gemma-3-27b's 52 window layers for tokens they dropped long ago.

The reach is a property of a row, recorded by the walk that assigns rows (`pool_rows`), because
the rows are the unit a pool is priced in: the capacity plan groups rows by reach and gives each
group the footprint below. What a row holds also depends on how many tokens a request has in
flight in one step (`step_tokens`, T): the step's tokens are written before the oldest block
leaves the window.

The footprint is the exact worst case, and `tests/atom/pool_layout/test_reach.py` proves it
against a simulation that frees a block the moment no query will read it again:

  full        ceil(L / b)
  sliding W   min(ceil(L / b), ceil((W + T - 2) / b) + 1)
  chunked C   min(ceil(L / b), ceil((C - 1 + T + b - gcd(C, b)) / b))

A sliding row holds the `W - 1 + T` tokens from the first query's window start to the step's
last token; `x` contiguous tokens span at most `ceil((x - 1) / b) + 1` blocks, when the first sits
in a block's last slot. vLLM (`SlidingWindowSpec.max_admission_blocks_per_request` in
`vllm/v1/kv_cache_interface.py`) charges `ceil((W - 1 + T) / b) + 1`: the same count with `x` in
place of `x - 1` under the ceiling, one block more whenever `W - 1 + T` is one past a multiple of
`b`, because its `+ 1` for a window that does not start on a block boundary sits on a count that
already rounds up. At `T = b` that expression is `ceil((W + b - 1) / b) + 1`, the rule usually
quoted for a window layer. The exact count is followed here because the plan claims the largest capacity the
declaration allows, and a block the simulation never holds would make that claim false.

A chunked row's chunk starts on a multiple of `C`, so when `b` divides `C` the held tokens start
on a block boundary and no extra block is needed; otherwise a chunk can start `b - gcd(C, b)`
slots into a block. vLLM charges `ceil((C + T) / b)`, one block more than held at `T = 1` when `b`
divides `C`, and one block less than held when `b` does not divide `C` (C = 3, b = 4: the chunk
at token 3 spans blocks 0 and 1, which vLLM counts as one).

vLLM sets `T` to every token a step may schedule (`max_num_batched_tokens`, a chunked
prefill's chunk); the plan takes `T` from the caller and says which it used.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from .refusals import require_count


class ReachKind(enum.Enum):
    """How far back a row reads: every token, a sliding window, or the current chunk."""

    FULL = "full"
    SLIDING = "sliding"
    CHUNKED = "chunked"


@dataclass(frozen=True)
class Reach:
    """A row's reach: `FULL`, or `SLIDING` / `CHUNKED` over `tokens` tokens.

    `str()` is `full`, `sliding1024` or `chunked8192`: the name a capacity class prints under.
    Build one with `Reach.full()`, `Reach.sliding(W)` or `Reach.chunked(C)`.
    """

    kind: ReachKind
    tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ReachKind):
            raise TypeError(f"Reach kind must be a ReachKind, got {self.kind!r}")
        if self.kind is ReachKind.FULL:
            if self.tokens is not None:
                raise ValueError(f"a full reach reads every token; got tokens={self.tokens!r}")
        else:
            require_count(f"{self.kind.value} reach tokens", self.tokens, minimum=1, unit="tokens")

    @classmethod
    def full(cls) -> Reach:
        return cls(ReachKind.FULL)

    @classmethod
    def sliding(cls, window: int) -> Reach:
        """A window of `window` tokens: the query and the `window - 1` before it."""
        return cls(ReachKind.SLIDING, window)

    @classmethod
    def chunked(cls, chunk: int) -> Reach:
        """Chunked-local attention over `chunk`-token chunks aligned to multiples of `chunk`."""
        return cls(ReachKind.CHUNKED, chunk)

    @property
    def is_full(self) -> bool:
        return self.kind is ReachKind.FULL

    def __str__(self) -> str:
        return "full" if self.is_full else f"{self.kind.value}{self.tokens}"

    def blocks_held(self, tokens: int, block: int, *, step_tokens: int) -> int:
        """The most `block`-token blocks one request of `tokens` tokens holds in a row of this
        reach, when each of its steps writes at most `step_tokens` tokens."""
        require_count("request tokens", tokens, minimum=1, unit="tokens")
        require_count("block", block, minimum=1, unit="tokens")
        require_count("step_tokens", step_tokens, minimum=1, unit="tokens")
        every = -(-tokens // block)
        if self.kind is ReachKind.FULL:
            return every
        span = self.tokens or 0  # never 0: __post_init__ requires a window of at least 1
        if self.kind is ReachKind.SLIDING:
            bound = -(-(span + step_tokens - 2) // block) + 1
        else:
            offset = block - math.gcd(span, block)
            bound = -(-(span - 1 + step_tokens + offset) // block)
        return min(every, bound)


FULL = Reach.full()
