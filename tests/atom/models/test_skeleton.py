"""Module skeletons: what each module caches, per tensor-parallel rank and per pipeline stage."""

from __future__ import annotations

import pytest

from atom.models.hf_config import ConfigFieldError
from atom.models.modules import LinearAttention, MhaAttention, MlaAttention
from atom.models.registry import load_model_config
from atom.models.skeleton import ParallelRank, build_modules, layer_types, pp_layer_span


def _modules(name, **rank):
    return build_modules(load_model_config(name), ParallelRank(**rank)).modules


def test_deepseek_r1_is_61_mla_layers_and_one_mtp_layer_of_the_same_row():
    mods = _modules("deepseek-r1")
    assert len(mods) == 62
    assert all(isinstance(m, MlaAttention) and m.latent_dim == 512 + 64 for m in mods)
    assert [m.layer_num for m in mods if m.is_draft] == [61]
    assert (
        build_modules(load_model_config("deepseek-r1"), include_mtp=False).modules[-1].layer_num
        == 60
    )


def test_qwen35_full_attention_every_fourth_layer_and_gdn_state_per_rank():
    mods = _modules("qwen3.5-27b", tp_size=2)
    full = [m for m in mods if isinstance(m, MhaAttention)]
    gdn = [m for m in mods if isinstance(m, LinearAttention)]
    assert [m.layer_num for m in full] == list(range(3, 64, 4))
    assert len(gdn) == 48
    # 4 KV heads over 2 ranks; conv over q,k (16 heads x 128 / 2 each) and v (48 x 128 / 2).
    assert (full[0].num_kv_heads, full[0].head_dim) == (2, 256)
    assert gdn[0].conv_shape == (3, 2 * 8 * 128 + 24 * 128) == (3, 5120)
    assert gdn[0].recurrent_shape == (24, 128, 128)


def test_kimi_linear_reads_its_one_indexed_layer_lists():
    mods = _modules("kimi-linear-48b-a3b", tp_size=4)
    mla = [m.layer_num + 1 for m in mods if isinstance(m, MlaAttention)]
    assert mla == [4, 8, 12, 16, 20, 24, 27]
    kda = [m for m in mods if isinstance(m, LinearAttention)]
    assert len(kda) == 20
    assert kda[0].recurrent_shape == (8, 128, 128)
    assert kda[0].conv_shape == (3, 3 * 8 * 128)


def test_mimo_has_two_geometries_from_its_layer_types():
    mods = _modules("mimo-v2-flash")
    full = [m for m in mods if m.sliding_window is None]
    swa = [m for m in mods if m.sliding_window is not None]
    assert (len(full), len(swa)) == (9, 39)
    assert {(m.num_kv_heads, m.head_dim, m.v_head_dim) for m in full} == {(4, 192, 128)}
    assert {(m.num_kv_heads, m.head_dim, m.v_head_dim) for m in swa} == {(8, 192, 128)}


def test_kv_heads_replicate_past_their_count_and_refuse_an_uneven_split():
    assert {m.num_kv_heads for m in _modules("llama-3.1-8b", tp_size=8)} == {1}
    assert {m.num_kv_heads for m in _modules("llama-3.1-8b", tp_size=16)} == {1}
    with pytest.raises(
        ConfigFieldError, match=r"'num_key_value_heads' = 8 does not divide across tp 3"
    ):
        _modules("llama-3.1-8b", tp_size=3)
    with pytest.raises(ConfigFieldError, match=r"linear_num_key_heads"):
        _modules("qwen3.5-27b", tp_size=32)


def test_pipeline_stages_partition_the_layers_and_only_the_last_holds_mtp():
    cfg = load_model_config("deepseek-r1")
    stages = [build_modules(cfg, ParallelRank(pp_size=4, pp_rank=r)).modules for r in range(4)]
    layers = [m.layer_num for stage in stages for m in stage]
    assert layers == list(range(62))
    assert [sum(m.is_draft for m in s) for s in stages] == [0, 0, 0, 1]
    # Global layer numbers survive a stage boundary: stage 1 starts at layer 16, not 0.
    assert stages[1][0].layer_num == 16
    assert pp_layer_span(61, ParallelRank(pp_size=4, pp_rank=3)) == range(46, 61)


def test_minimax_mtp_modules_count_as_declared():
    mods = _modules("minimax-m2")
    assert sum(m.is_draft for m in mods) == 3 * 1
    assert len(mods) == 65


def test_rank_and_layer_declarations_are_validated_by_name():
    with pytest.raises(ValueError, match=r"pp_rank 2"):
        ParallelRank(pp_size=2, pp_rank=2)
    with pytest.raises(ValueError, match=r"^tp_size must be at least 1, got 0$"):
        ParallelRank(tp_size=0)
    with pytest.raises(TypeError, match=r"^pp_size must be an int, got 2\.0 \(float\)$"):
        ParallelRank(pp_size=2.0)
    with pytest.raises(TypeError, match=r"^pp_rank must be an int, got '0' \(str\)$"):
        ParallelRank(pp_rank="0")
    with pytest.raises(ValueError, match=r"^pp_rank must be at least 0, got -1$"):
        ParallelRank(pp_size=2, pp_rank=-1)
    bad = load_model_config("mimo-v2-flash").with_overrides(layer_types=["full_attention"])
    with pytest.raises(ConfigFieldError, match=r"layer_types"):
        layer_types(bad)


def test_modules_print_as_their_prefix_and_hash_by_identity():
    a, b = _modules("llama-3.1-8b")[:2]
    assert str(a) == "model.layers.0.self_attn"
    twin = type(a)(
        prefix=a.prefix, layer_num=a.layer_num, num_kv_heads=a.num_kv_heads, head_dim=a.head_dim
    )
    assert a != twin and len({a, b, twin}) == 3
