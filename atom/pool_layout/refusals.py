"""How this package refuses input: by type first, then by value, naming it.

Every refusal is a `TypeError` (the wrong kind of thing) or a `ValueError`
(the right kind, a wrong value) whose message names what it found and what it
expected. None is an `assert`: `python -O` strips those, and what one guarded
then goes silent -- a truncating floor division, a block id wrapping into
another field.
"""

from __future__ import annotations

import torch


def require_count(name: str, value: object, *, minimum: int = 0) -> int:
    """Refuse anything but an int (a bool is not a count) at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
    return value


def require_align(name: str, value: object) -> int:
    """An alignment is a positive power of two, so alignments compose by max()."""
    require_count(name, value, minimum=1)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two, got {value!r}")
    return value


def require_dtype(name: str, dtype: object) -> torch.dtype:
    if not isinstance(dtype, torch.dtype):
        raise TypeError(f"{name} must be a torch.dtype, got {dtype!r}")
    return dtype


def refuse_fill_on_handed_buffer(fields, *, why: str) -> None:
    """Refuse a field's non-zero fill on a buffer the arena did not allocate.

    Both arenas share this rule: the buffer may already hold live bytes, and dropping the fill
    instead would turn, say, a ``-inf`` score plane into 0.0 -- "always selected" -- without a
    word. ``why`` says what this arena's caller should do instead.
    """
    for f in fields:
        if f.fill != 0.0:
            raise ValueError(
                f"field {f.name!r} declares fill {f.fill!r}, which cannot be applied to "
                f"a buffer handed in ({why})"
            )
