"""The reference store op: one token's address in every bound view, both MHA layouts."""

from __future__ import annotations

import pytest
import torch

from atom.engine_config import EngineConfig
from atom.kernels.reference_store import (
    load_token,
    reblock,
    reference_reshape_and_cache,
    store_token,
    token_at,
)
from atom.models.registry import load_model_config
from atom.runner.model_runner import ModelRunner


def _views(mha_backend="aiter", kv_dtype="bf16", scheduler=32):
    runner = ModelRunner(
        load_model_config("llama-3.1-8b"),
        EngineConfig(
            tp_size=8, kv_dtype=kv_dtype, scheduler_block_size=scheduler, mha_backend=mha_backend
        ),
    ).initialize(2)
    return runner, runner.bound_modules()[0].kv_views


@pytest.mark.parametrize("mha_backend", ["aiter", "triton"])
def test_a_stored_token_reads_back_and_touches_only_its_own_elements(mha_backend):
    runner, views = _views(mha_backend)
    layout = runner.builder.layout
    gen = torch.Generator().manual_seed(1)
    value = {
        "k_cache": torch.randn(1, 128, generator=gen),
        "v_cache": torch.randn(1, 128, generator=gen),
    }
    token = {n: token_at(n, views[n], layout, 37) for n in value}
    value = {n: v.reshape(token[n].shape) for n, v in value.items()}
    written = store_token(views, layout, 37, value)
    back = load_token(views, layout, 37, ["k_cache", "v_cache"])
    for n in value:
        assert torch.equal(back[n], written[n])
        # Exactly one token's worth of elements is non-zero in the whole view.
        assert int(views[n].ne(0).sum()) == int(written[n].ne(0).sum())


def test_shuffle_and_nhd_put_a_token_at_different_bytes_of_the_same_block():
    _, a = _views("aiter")
    _, t = _views("triton")
    slot = 5
    ones = torch.ones(1, 128)
    store_token(
        a,
        "shuffle",
        slot,
        {"k_cache": ones.reshape(token_at("k_cache", a["k_cache"], "shuffle", slot).shape)},
    )
    store_token(
        t,
        "nhd",
        slot,
        {"k_cache": ones.reshape(token_at("k_cache", t["k_cache"], "nhd", slot).shape)},
    )
    a_bytes = a["k_cache"].reshape(-1).ne(0).nonzero().flatten()
    t_bytes = t["k_cache"].reshape(-1).ne(0).nonzero().flatten()
    assert a_bytes.numel() == t_bytes.numel() == 128
    assert not torch.equal(a_bytes, t_bytes)
    # Both stay inside block 0 (slot 5 < 16 tokens): the same block, a different interleave.
    block_elems = 16 * 1 * 128
    assert int(a_bytes.max()) < block_elems and int(t_bytes.max()) < block_elems


def test_fp8_store_writes_per_token_per_head_scales():
    runner, views = _views(kv_dtype="fp8")
    layout = runner.builder.layout
    value = torch.linspace(-3, 3, 128).reshape(
        token_at("k_cache", views["k_cache"], layout, 3).shape
    )
    written = store_token(views, layout, 3, {"k_cache": value})
    scale = token_at("k_scale", views["k_scale"], layout, 3)
    assert torch.equal(scale, written["k_scale"])
    assert float(scale[0]) == pytest.approx(3 / 448)
    restored = token_at("k_cache", views["k_cache"], layout, 3).float() * scale[0]
    assert torch.allclose(restored, value, rtol=0.07, atol=0.02)


def test_reblock_at_the_own_block_is_the_same_tensor_and_never_copies():
    _, views = _views(scheduler=32)
    for name in ("k_cache", "v_cache"):
        same = reblock(name, views[name], "shuffle", 16)
        assert same.shape == views[name].shape and same.data_ptr() == views[name].data_ptr()
        other = reblock(name, views[name], "shuffle", 32)
        assert (
            other.shape[0] == views[name].shape[0] // 2
            and other.data_ptr() == views[name].data_ptr()
        )
    with pytest.raises(ValueError, match="not dense"):
        reblock("k_cache", views["k_cache"][:, :, :, ::2], "shuffle", 16)


def test_bad_slots_and_layouts_are_refused_by_value():
    _, views = _views()
    with pytest.raises(ValueError, match="slot 9999 is block 624"):
        token_at("k_cache", views["k_cache"], "shuffle", 9999)
    with pytest.raises(ValueError, match="'hnd'"):
        token_at("k_cache", views["k_cache"], "hnd", 0)
    with pytest.raises(ValueError, match=r"^slot must be at least 0, got -1$"):
        token_at("k_cache", views["k_cache"], "shuffle", -1)


def test_a_slot_that_is_not_an_int_is_refused_by_type():
    _, views = _views()
    for slot in (3.0, True):
        with pytest.raises(TypeError, match=rf"^slot must be an int, got {slot!r} "):
            token_at("k_cache", views["k_cache"], "shuffle", slot)


def test_the_batched_op_equals_token_by_token_stores():
    runner, views = _views("triton")
    other_runner, other = _views("triton")
    gen = torch.Generator().manual_seed(3)
    key = torch.randn(5, 1, 128, generator=gen)
    value = torch.randn(5, 1, 128, generator=gen)
    slots = [0, 17, 18, 40, 63]
    reference_reshape_and_cache(key, value, views["k_cache"], views["v_cache"], slots, layout="nhd")
    for t, s in enumerate(slots):
        store_token(other, "nhd", s, {"k_cache": key[t], "v_cache": value[t]})
    assert torch.equal(runner.paged_buf, other_runner.paged_buf)
