"""Strategies and byte-level probes shared by the pool_layout tests.

Strategies are handed out as session-scoped fixtures and drawn with
`st.data()`, because test modules here are imported by path and cannot
import one another. Sizes are kept small: the whole repository's property
suite has a 60 s budget on two cores.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import strategies as st

from atom.pool_layout import EntryField

DTYPES = [torch.uint8, torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn]


@st.composite
def _entry_field(draw, name: str) -> EntryField:
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=1, max_size=3)))
    align = draw(st.sampled_from([a for a in (1, 2, 4, 16, 64, 256, 512) if a >= dtype.itemsize]))
    return EntryField(name, draw(st.integers(1, 4)), shape, dtype, align=align)


@st.composite
def _field_lists(draw, min_size: int = 1, max_size: int = 4) -> list[EntryField]:
    n = draw(st.integers(min_size, max_size))
    return [draw(_entry_field(f"f{i}")) for i in range(n)]


@pytest.fixture(scope="session")
def field_lists():
    """A strategy: 1-4 uniquely named fields of random rows, shapes, dtypes, alignments."""
    return _field_lists


@pytest.fixture(scope="session")
def entry_field():
    """A strategy factory: one field named `name`."""
    return _entry_field


def _byte_addresses(view: torch.Tensor) -> torch.Tensor:
    """Absolute byte addresses, within its storage, of every byte `view` covers."""
    itemsize = view.element_size()
    storage_elems = view.untyped_storage().nbytes() // itemsize
    elems = torch.as_strided(
        torch.arange(storage_elems, dtype=torch.int64),
        view.size(),
        view.stride(),
        view.storage_offset(),
    ).reshape(-1)
    return (elems[:, None] * itemsize + torch.arange(itemsize)).reshape(-1)


@pytest.fixture(scope="session")
def byte_addresses():
    return _byte_addresses


def _mark(view: torch.Tensor) -> None:
    """Write 0xFF into every byte of `view`, through the view itself."""
    if view.dim() == 0 or view.stride(-1) != 1:
        view = view.unsqueeze(-1)
    view.view(torch.uint8).fill_(0xFF)


@pytest.fixture(scope="session")
def mark_bytes():
    return _mark


def _storage_bytes(t: torch.Tensor) -> torch.Tensor:
    """A uint8 copy of the whole storage under `t`."""
    storage = t.untyped_storage()
    return torch.empty(0, dtype=torch.uint8).set_(storage).clone()


@pytest.fixture(scope="session")
def storage_bytes():
    return _storage_bytes


def _carve_is_the_priced_bytes(arena, fields, backing, lead, priced, *, shape, offset) -> None:
    """Each field's view of ``arena`` (carved at byte ``lead`` of ``backing``, ``priced``
    bytes) has ``shape(f)``, starts at absolute byte ``lead + offset(f)``, stays inside
    the priced bytes, shares no byte with another view, and writes only its own bytes."""
    addresses = {}
    for f in fields:
        view = arena.view(f.name)
        assert view.shape == shape(f)
        assert view.dtype == f.dtype
        assert view.untyped_storage().data_ptr() == backing.untyped_storage().data_ptr()
        assert view.storage_offset() * f.itemsize == lead + offset(f)
        addresses[f.name] = _byte_addresses(view)
        assert addresses[f.name].min() >= lead
        assert addresses[f.name].max() < lead + priced
    every = torch.cat(list(addresses.values()))
    assert every.unique().numel() == every.numel()
    for f in fields:
        backing.zero_()
        _mark(arena.view(f.name))
        changed = _storage_bytes(backing).nonzero().reshape(-1)
        assert torch.equal(changed, addresses[f.name].sort().values)


@pytest.fixture(scope="session")
def carve_is_the_priced_bytes():
    """The arena tests' one carve-against-price check (entry-major and layer-major alike)."""
    return _carve_is_the_priced_bytes
