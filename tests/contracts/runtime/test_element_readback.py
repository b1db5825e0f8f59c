"""Element order: a bug class where bytes, offsets and block ranges all agree.

Before ROCm/ATOM's KV-pool refactor (pull request #2147), its Eagle3 builder bound V
non-transposed where every other reader took it 5-D: the same bytes, another element order. No
byte count, bind offset or block range can see that, so each planted breakage here is first
shown to pass every byte-level check, then caught by :func:`check_element_readback` with its
own message.
"""

from __future__ import annotations

import pytest
import torch

import atom.pool_layout.mha_pool as mha_pool
from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.pool_layout import PagedLayout
from atom.runner.model_runner import ModelRunner
from contracts.runtime import (
    ContractViolation,
    check_disjoint_in_bounds,
    check_price_equals_carve,
    check_transfer_units,
    check_write_readback,
)
from contracts.runtime.checks import check_element_readback, documented_offsets


def _runner(name="llama-3.1-8b", blocks=2, **engine):
    return ModelRunner(load_model_config(name), EngineConfig(**engine)).initialize(blocks)


def _byte_level_checks_pass(runner):
    check_price_equals_carve(runner)
    check_disjoint_in_bounds(runner)
    check_transfer_units(runner)
    check_write_readback(runner)


def _swap_nhd_v(monkeypatch, order):
    """Declare NHD V in another axis order: the same bytes, a transposed view."""
    real = mha_pool.v_block_shape

    def swapped(layout, *, block_size, num_kv_heads, v_head_dim, dtype):
        shape = real(
            layout, block_size=block_size, num_kv_heads=num_kv_heads, v_head_dim=v_head_dim,
            dtype=dtype,
        )  # fmt: skip
        return tuple(shape[i] for i in order) if layout is PagedLayout.NHD else shape

    monkeypatch.setattr(mha_pool, "v_block_shape", swapped)


def test_nhd_v_with_its_token_and_head_axes_swapped_is_caught(monkeypatch):
    """NHD V declared (heads, block, dim): the same bytes, read back in the wrong order."""
    _swap_nhd_v(monkeypatch, (1, 0, 2))
    runner = _runner(tp_size=2, mha_backend="triton")
    assert runner.builder.layout == "nhd"
    check_price_equals_carve(runner)
    check_disjoint_in_bounds(runner)
    check_transfer_units(runner)
    with pytest.raises(
        ContractViolation, match=r"v_cache: a kernel reads a 4-token block .* pages at 16"
    ):
        check_element_readback(runner)


def test_nhd_v_with_its_head_and_dim_axes_swapped_is_caught(monkeypatch):
    _swap_nhd_v(monkeypatch, (0, 2, 1))
    runner = _runner(tp_size=2, mha_backend="triton")
    _byte_level_checks_pass(runner)
    with pytest.raises(
        ContractViolation, match=r"v_cache: one token of the bound view has shape \(128, 4\)"
    ):
        check_element_readback(runner)


def bind_square_transposed_v(module) -> int:
    """Bind ``module``'s NHD V as a square (heads x heads) view with heads and dims transposed:
    tokens stay put, every shape agrees, only the element order differs. Returns the module's
    real ``v_head_dim``, which the square view's narrows to the head count."""
    v = module.kv_views["v_cache"]
    nb, bs, h, d = v.shape
    # (block, heads, dim) read as if (block, dim, heads).
    square = v.reshape(nb, bs, h * d)[:, :, : h * h].reshape(nb, bs, h, h)
    module.bind({**module.kv_views, "v_cache": square.transpose(2, 3)})
    module.v_head_dim, real_dim = h, module.v_head_dim
    return real_dim


def test_a_square_transposition_is_caught_by_element_order():
    """Heads == dims: every shape agrees, only the element order differs."""
    runner = _runner(mha_backend="triton")
    module = runner.bound_modules()[0]
    real_dim = bind_square_transposed_v(module)
    try:
        with pytest.raises(
            ContractViolation,
            match=r"v_cache: element \(block 0, token 0, head 0, dim 1\) written through the bound "
            r"view is not where the nhd layout puts it in its transfer region; element \(block 0, "
            r"token 0, head 1, dim 0\) of v_cache is there",
        ):
            check_element_readback(runner)
    finally:
        module.v_head_dim = real_dim


def test_a_shuffle_v_read_with_its_dim_and_vector_axes_swapped_is_caught():
    runner = _runner(tp_size=2)
    module = runner.bound_modules()[0]
    v = module.kv_views["v_cache"]
    d = v.shape[3]
    # Same storage, shape and extent; the last two axes exchange strides.
    swapped = torch.as_strided(v, v.shape, (*v.stride()[:3], 1, d), v.storage_offset())
    module.bind({**module.kv_views, "v_cache": swapped})
    _byte_level_checks_pass(runner)
    with pytest.raises(ContractViolation, match=r"v_cache: element .* shuffle layout"):
        check_element_readback(runner)


def test_k_and_v_bound_to_each_others_rows_is_caught():
    runner = _runner(mha_backend="triton")
    module = runner.bound_modules()[0]
    k, v = module.kv_views["k_cache"], module.kv_views["v_cache"]
    module.bind({**module.kv_views, "k_cache": v, "v_cache": k})
    check_disjoint_in_bounds(runner)
    with pytest.raises(ContractViolation, match=r"k_cache: element \(block 0, token 0, head 0"):
        check_element_readback(runner)


def test_an_import_side_reading_another_order_is_caught():
    runner = _runner(tp_size=2, mha_backend="triton")
    importing = ModelRunner(
        load_model_config("llama-3.1-8b"), EngineConfig(tp_size=2, mha_backend="triton")
    ).import_paged_pool(runner.paged_buf, 2)
    twin = importing.bound_modules()[0]
    k = twin.kv_views["k_cache"]
    _, bs, _, d = k.shape
    transposed = torch.as_strided(k, k.shape, (k.stride(0), 1 * d, bs * d, 1), k.storage_offset())
    twin.bind({**twin.kv_views, "k_cache": transposed})
    check_element_readback(runner)  # the allocating side alone is right
    with pytest.raises(
        ContractViolation,
        match=r"k_cache: element \(block 0, token 0, head 1, dim 0\) written through the bound "
        r"view reads back through the import side's view as element \(block 0, token 4, head 0, "
        r"dim 0\) of k_cache",
    ):
        check_element_readback(runner, importing=importing)


def test_every_element_of_a_sampled_block_is_written_and_found():
    """The check is not vacuous: after it runs, every byte of the first block of K is nonzero
    somewhere in its passes, and the region holds the last pass's codes."""
    runner = _runner(tp_size=8, mha_backend="triton")
    check_element_readback(runner)
    k = runner.bound_modules()[0].kv_views["k_cache"]
    assert int(k[0].view(torch.int16).ne(0).sum()) >= k[0].numel() - 1


def test_documented_offsets_are_a_permutation_of_one_block():
    for name, layout, heads, dim in [
        ("k_cache", "shuffle", 2, 64), ("v_cache", "shuffle", 2, 64), ("k_cache", "nhd", 2, 64),
        ("k_scale", "shuffle", 3, 1), ("kv_cache", "nhd", 1, 576),
    ]:  # fmt: skip
        off = documented_offsets(name, layout, block=16, heads=heads, dim=dim, itemsize=2)
        assert sorted(off.flatten().tolist()) == list(range(16 * heads * dim)), name
    with pytest.raises(ValueError, match="'conv_state' has no documented element order"):
        documented_offsets("conv_state", "nhd", block=1, heads=1, dim=1, itemsize=2)
