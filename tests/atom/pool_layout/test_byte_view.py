"""Typed views over a byte buffer sit at absolute storage offsets."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout.byte_view import (
    contiguous_strides,
    require_aligned,
    require_byte_buffer,
    typed_view,
)


def test_a_typed_view_of_a_carved_buffer_addresses_the_buffers_own_bytes():
    backing = torch.zeros(4096, dtype=torch.uint8)
    buf = backing[1024:2048]
    view = typed_view(buf, 256, torch.float32, (2, 3), (3, 1))
    assert view.storage_offset() * 4 == 1024 + 256
    view.fill_(1.0)
    assert backing[1280 : 1280 + 24].ne(0).any()
    assert backing[:1280].eq(0).all() and backing[1280 + 24 :].eq(0).all()


def test_contiguous_strides_are_row_major_in_elements():
    assert contiguous_strides((2, 3, 4)) == (12, 4, 1)
    assert contiguous_strides(()) == ()


def test_alignment_is_judged_by_the_position_in_the_storage():
    backing = torch.zeros(1024, dtype=torch.uint8)
    require_aligned(backing[512:], 256, "buf")
    with pytest.raises(ValueError, match="storage offset 384"):
        require_aligned(backing[384:], 256, "buf")


def test_a_buffer_is_flat_contiguous_bytes():
    with pytest.raises(TypeError, match="bytearray"):
        require_byte_buffer(bytearray(8), "buf")
    with pytest.raises(ValueError, match=r"stride \(2,\)"):
        require_byte_buffer(torch.zeros(8, dtype=torch.uint8)[::2], "buf")
