"""The optional Triton store kernel against the torch reference (GPU only)."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")

import torch

from atom.engine_config import EngineConfig
from atom.kernels.reference_store import reference_reshape_and_cache
from atom.kernels.triton_store import reshape_and_cache_nhd
from atom.models.registry import load_model_config
from atom.runner.model_runner import ModelRunner

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="the Triton kernel needs a GPU"
)


def _runner():
    return ModelRunner(
        load_model_config("llama-3.1-8b"),
        EngineConfig(tp_size=2, mha_backend="triton", scheduler_block_size=32),
    ).initialize(4, device="cuda")


def test_triton_store_matches_the_reference_through_bound_views():
    kernel, reference = _runner(), _runner()
    gen = torch.Generator(device="cuda").manual_seed(0)
    key = torch.randn(9, 4, 128, device="cuda", generator=gen)
    value = torch.randn(9, 4, 128, device="cuda", generator=gen)
    slots = [0, 1, 15, 16, 31, 64, 65, 100, 127]
    for row in (0, 17, 31):
        k = kernel.bound_modules()[row].kv_views
        r = reference.bound_modules()[row].kv_views
        reshape_and_cache_nhd(
            key,
            value,
            k["k_cache"],
            k["v_cache"],
            torch.tensor(slots, device="cuda", dtype=torch.int64),
        )
        reference_reshape_and_cache(key, value, r["k_cache"], r["v_cache"], slots, layout="nhd")
    torch.cuda.synchronize()
    assert torch.equal(kernel.paged_buf, reference.paged_buf)
