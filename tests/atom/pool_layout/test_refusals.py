"""The package's refusals: by type first, then by value, naming it."""

from __future__ import annotations

import pytest
import torch

from atom.pool_layout.refusals import require_align, require_count, require_dtype


def test_a_bool_is_not_a_count_and_a_float_is_not_either():
    with pytest.raises(TypeError, match=r"rows must be an int, got True \(bool\)"):
        require_count("rows", True)
    with pytest.raises(TypeError, match=r"3\.0 \(float\)"):
        require_count("rows", 3.0)
    assert require_count("rows", 0) == 0


def test_a_count_below_its_minimum_names_both():
    with pytest.raises(ValueError, match="entries must be at least 1, got 0"):
        require_count("entries", 0, minimum=1)


def test_an_alignment_is_a_positive_power_of_two():
    assert require_align("align", 256) == 256
    with pytest.raises(ValueError, match="power of two, got 384"):
        require_align("align", 384)
    with pytest.raises(ValueError, match="got 0"):
        require_align("align", 0)


def test_a_dtype_is_a_torch_dtype():
    assert require_dtype("kv_dtype", torch.bfloat16) is torch.bfloat16
    with pytest.raises(TypeError, match="'bfloat16'"):
        require_dtype("kv_dtype", "bfloat16")
