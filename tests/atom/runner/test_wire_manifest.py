"""The runner's wire manifest: golden manifests for every registry model, and what each real
difference between two ends is refused by.

The goldens (``manifests/CASE-KV.txt``) are ``atom-contracts layout CASE --kv-dtype KV
--manifest`` at the case's default engine (tp 1, the smallest scheduler block it accepts, an fp8
indexer for DeepSeek-V4, whose FP4 one refuses transfer): a change that reorders, renames,
retypes or resizes a region fails here with the diff. When a change means to, regenerate them
with ``ATOM_UPDATE_GOLDENS=1 python -m pytest tests/atom/runner/test_wire_manifest.py`` and read
the diff. The numbers that matter are also pinned with their arithmetic beside them.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from pathlib import Path

import pytest
import torch

from atom.models.registry import load_model_config
from atom.runner.kv_transfer import config_digest, wire_manifest
from atom.runner.model_runner import ModelRunner
from contracts.runtime.strategies import DRAFT_PAIRS, case_names, default_case

GOLDENS = Path(__file__).parent / "manifests"
KV_DTYPES = ("bf16", "fp8")
CASES = [(name, kv) for name in case_names() for kv in KV_DTYPES]


def _runner(name: str, **engine) -> ModelRunner:
    target, draft = DRAFT_PAIRS.get(name, (name, None))
    base = dataclasses.replace(default_case(name).engine, state_entries=1, index_cache_dtype="fp8")
    return ModelRunner(
        load_model_config(target),
        dataclasses.replace(base, **engine),
        draft_config=load_model_config(draft) if draft else None,
    )


def _manifest(name: str, **engine):
    return wire_manifest(_runner(name, **engine).initialize(1, device="meta"))


@pytest.mark.parametrize(("name", "kv"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_every_registry_model_has_its_golden_manifest(name, kv):
    got = _manifest(name, kv_dtype=kv).format_text()
    golden = GOLDENS / f"{name}-{kv}.txt"
    if os.environ.get("ATOM_UPDATE_GOLDENS") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(got)
    if not golden.is_file():
        pytest.fail(f"no golden manifest {golden.name}; regenerate with ATOM_UPDATE_GOLDENS=1")
    want = golden.read_text()
    if got != want:
        diff = difflib.unified_diff(
            want.splitlines(), got.splitlines(), f"golden {golden.name}", "built now", lineterm=""
        )
        pytest.fail("the wire manifest changed:\n" + "\n".join(list(diff)[:60]))


def test_every_golden_is_a_registry_case():
    """A golden for a model that left the registry is a stale file, not a test."""
    expected = {f"{n}-{k}.txt" for n, k in CASES}
    assert {p.name for p in GOLDENS.glob("*.txt")} == expected


def test_llama_spans_are_its_block_of_tokens_heads_and_dims():
    bf16 = _manifest("llama-3.1-8b").region_set("page")
    # 32 layers x (k, v): 64 regions; one block of k is 16 tokens x 8 heads x 128 dims x 2 B.
    assert len(bf16.regions) == 64 and bf16.regions[0].span == 16 * 8 * 128 * 2 == 32768
    assert bf16.regions[0].role == "target.h8d128/k/0" and bf16.regions[32].role == (
        "target.h8d128/v/0"
    )
    assert bf16.block_bytes == 64 * 32768  # 2 MiB a staged block
    fp8 = _manifest("llama-3.1-8b", kv_dtype="fp8").region_set("page")
    # fp8 halves K and V and adds a scale a token a head: 16 x 8 x 4 B = 512 B a row a block.
    assert len(fp8.regions) == 128 and fp8.regions[0].span == 16384
    assert fp8.regions[64].role == "target.h8d128/k_scale/0" and fp8.regions[64].span == 512
    assert (fp8.regions[0].dtype, fp8.regions[64].dtype) == ("float8_e4m3fn", "float32")
    assert fp8.block_bytes == 64 * 16384 + 64 * 512 == 1081344


def test_a_hybrids_state_is_one_region_a_request_slot():
    m = _manifest("qwen3.5-27b", tp_size=2)
    (state,) = m.region_set("state").regions
    # 48 GDN rows x (conv 3 x 5120 bf16 + recurrent 24 x 128 x 128 bf16), one slot.
    assert state.role == "target.linear_state" and state.dtype == "bfloat16"
    assert state.span == state.stride == 48 * (3 * 5120 * 2 + 24 * 128 * 128 * 2) == 39223296
    assert m.region_set("state").unit == "request slot"


def test_deepseek_v4_exports_its_envelopes_indexer_blocks_and_slots():
    m = _manifest("deepseek-v4-flash-dspark", kv_dtype="fp8")
    page = m.region_set("page").regions
    # An envelope is every compressed layer of one 256-token block: 21 CSA layers x 64 rows and
    # 20 HCA layers x 2 rows = 1384 rows, 512 B each in the fp8 NoPE plane, 128 B in the RoPE one.
    assert [(r.role, r.span) for r in page[:2]] == [
        ("target.v4_kv/envelope/0", 1384 * 512),
        ("target.v4_kv/envelope/1", 1384 * 128),
    ]
    # Each CSA layer's indexer block: 64 rows x 128 fp8 keys, then 64 fp32 scales.
    index = page[2:]
    assert len(index) == 21 and {r.span for r in index} == {64 * 128 + 64 * 4}
    assert index[0].dtype == "float8_e4m3fn+float32"
    state = [r.role for r in m.region_set("state").regions]
    assert state == [
        "target.v4_slot/state/0",
        "target.v4_slot/window/0",
        "target.v4_slot/state/1",
        "target.v4_slot/window/1",
    ]
    # A slot's state and windows are one plane stride apart: together, every byte of the slot.
    for p in (0, 1):
        s, w = m.region_set("state").regions[2 * p : 2 * p + 2]
        assert s.stride == w.stride == s.span + w.span


def test_deepseek_v4_with_an_fp4_indexer_refuses_a_manifest_by_name():
    runner = _runner("deepseek-v4-flash-dspark", index_cache_dtype="fp4").initialize(
        1, device="meta"
    )
    with pytest.raises(
        ValueError, match=r"index_cache_dtype 'fp4' is refused: .*--index-cache-dtype fp8"
    ):
        wire_manifest(runner)


@pytest.mark.parametrize(
    ("name", "here", "there", "needle"),
    [
        ("llama-3.1-8b", {}, {"kv_dtype": "fp8"}, "kv_dtype is 'bf16' here and 'fp8' on the peer"),
        (
            "llama-3.1-8b",
            {"kv_dtype": "fp8"},
            {"kv_dtype": "fp8_e5m2"},
            "dtype is float8_e4m3fn here and float8_e5m2 on the peer",
        ),
        (
            "llama-3.1-8b",
            {},
            {"scheduler_block_size": 32},
            "page region 0 'target.h8d128/k/0': span is 32768 B here and 65536 B on the peer",
        ),
        (
            "llama-3.1-8b",
            {},
            {"mha_backend": "triton"},
            "layouts is 'target=shuffle' here and 'target=nhd' on the peer",
        ),
        ("llama-3.1-8b", {}, {"tp_size": 2}, "tp is 1 here and 2 on the peer"),
    ],
    ids=["kv-dtype", "fp8-flavour", "block-size", "layout", "tp"],
)
def test_each_real_difference_between_two_ends_is_named(name, here, there, needle):
    assert needle in _manifest(name, **here).difference(_manifest(name, **there))


def test_another_model_is_named_by_its_model_and_config():
    m = _manifest("eagle3-draft-llama").difference(_manifest("minimax-m3-eagle3"))
    assert m.startswith("model is ")
    assert config_digest(load_model_config("llama-3.1-8b")) == config_digest(
        load_model_config("llama-3.1-8b")
    )
    assert config_digest(load_model_config("llama-3.1-8b")) != config_digest(
        load_model_config("llama-3.1-8b").with_overrides(num_hidden_layers=31)
    )


def test_a_config_is_identified_by_its_fields_not_its_name_or_notes():
    cfg = load_model_config("llama-3.1-8b")
    renamed = cfg.with_overrides(_model="elsewhere/llama", _sources="another note")
    assert config_digest(renamed) == config_digest(cfg)


def test_the_decode_side_imported_through_the_walk_describes_the_same_layout():
    prefill = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8").initialize(2, state_entries=3)
    decode = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    buf = torch.zeros(decode.paged_pool_bytes(2), dtype=torch.uint8)
    decode.import_paged_pool(buf, 2, state_entries=3)
    a, b = wire_manifest(prefill), wire_manifest(decode)
    assert a.difference(b) is None and a.digest == b.digest
    assert b.region_set("state").units == 3 and b.region_set("page").units == 2


def test_a_runner_with_no_transfer_regions_has_no_manifest_and_says_why():
    with pytest.raises(
        ValueError, match=r"no wire manifest: the runner has registered no transfer"
    ):
        wire_manifest(_runner("llama-3.1-8b"))
