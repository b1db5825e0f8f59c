"""A layer's reach, read from whichever spelling a public config uses, and recorded by the walk."""

from __future__ import annotations

import pytest

from atom.models.hf_config import ConfigFieldError, HfConfig
from atom.models.registry import load_model_config
from atom.models.skeleton import build_modules, declared_layer_kinds, layer_reaches
from atom.pool_layout.reach import FULL, Reach
from atom.runner.model_runner import ModelRunner

BASE = {"num_hidden_layers": 6, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8}


def _reaches(**fields):
    return layer_reaches(HfConfig({**BASE, **fields}, "t"))


def test_layer_types_with_a_window_and_a_chunk():
    kinds = ["sliding_attention", "full_attention", "chunked_attention"] * 2
    got = _reaches(layer_types=kinds, sliding_window=64, attention_chunk_size=256)
    assert got.reaches == (Reach.sliding(64), FULL, Reach.chunked(256)) * 2
    assert got.sources == ("layer_types", "sliding_window", "attention_chunk_size")
    assert got.notes == ()


def test_gemma3_sliding_window_pattern_five_local_one_global():
    got = _reaches(sliding_window=1024, sliding_window_pattern=3)
    assert got.reaches == (Reach.sliding(1024),) * 2 + (FULL,) + (Reach.sliding(1024),) * 2 + (
        FULL,
    )
    assert got.sources == ("sliding_window_pattern", "sliding_window")


def test_mimo_hybrid_layer_pattern_reads_its_window_spelling():
    got = _reaches(hybrid_layer_pattern=[0, 1, 1, 1, 1, 0], sliding_window_size=128)
    assert got.reaches == (FULL,) + (Reach.sliding(128),) * 4 + (FULL,)
    assert got.sources == ("hybrid_layer_pattern", "sliding_window_size")


def test_a_window_stated_twice_is_planned_at_the_larger():
    got = _reaches(hybrid_layer_pattern=[1] * 6, sliding_window=129, sliding_window_size=128)
    assert set(got.reaches) == {Reach.sliding(129)}
    assert got.sources == ("hybrid_layer_pattern", "sliding_window", "sliding_window_size")


def test_llama4_rope_layers_are_chunked_and_nope_layers_full():
    got = _reaches(no_rope_layers=[1, 1, 1, 0, 1, 0], attention_chunk_size=8192)
    assert got.reaches == (Reach.chunked(8192),) * 3 + (FULL, Reach.chunked(8192), FULL)


def test_qwen2_slides_from_max_window_layers_only_when_asked():
    on = _reaches(use_sliding_window=True, max_window_layers=4, sliding_window=4096)
    assert on.reaches == (FULL,) * 4 + (Reach.sliding(4096),) * 2
    off = _reaches(use_sliding_window=False, max_window_layers=4, sliding_window=4096)
    assert off.reaches == (FULL,) * 6
    assert "without which layers use it" in off.notes[0]


def test_use_sliding_window_false_turns_declared_windows_off_and_says_so():
    got = _reaches(
        layer_types=["sliding_attention"] * 6, sliding_window=32, use_sliding_window=False
    )
    assert got.reaches == (FULL,) * 6
    assert got.notes == (
        "layer_types marks 6 layers sliding but use_sliding_window is false: planned full",
    )


def test_a_bare_window_is_planned_full_and_said_so():
    got = _reaches(sliding_window=4096)
    assert got.reaches == (FULL,) * 6
    assert got.notes and "sliding_window = 4096 is stated without" in got.notes[0]


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"layer_types": ["sliding_attention"] * 6}, "sliding_window"),
        ({"layer_types": ["chunked_attention"] * 6}, "attention_chunk_size"),
        ({"hybrid_layer_pattern": [0, 1]}, "hybrid_layer_pattern"),
        ({"hybrid_layer_pattern": [2] * 6, "sliding_window": 4}, "hybrid_layer_pattern"),
        ({"no_rope_layers": [1] * 5, "attention_chunk_size": 4}, "no_rope_layers"),
        ({"layer_types": ["global"] * 6}, "layer_types"),
        ({"sliding_window_pattern": 0, "sliding_window": 4}, "sliding_window_pattern"),
    ],
)
def test_a_spelling_that_does_not_add_up_is_refused_by_field(fields, field):
    with pytest.raises(ConfigFieldError) as refused:
        layer_reaches(HfConfig({**BASE, **fields}, "t"))
    assert refused.value.field == field


def test_held_configs_declare_their_windows():
    assert layer_reaches(load_model_config("gemma-3-27b").text_config()).reaches.count(FULL) == 10
    gpt = layer_reaches(load_model_config("gpt-oss-120b"))
    assert gpt.reaches == (Reach.sliding(128), FULL) * 18
    mimo = layer_reaches(load_model_config("mimo-v2-flash"))
    assert (mimo.reaches.count(FULL), mimo.reaches.count(Reach.sliding(128))) == (9, 39)
    # Every other held config is full everywhere, and a config with no window says nothing.
    assert set(layer_reaches(load_model_config("llama-3.1-8b")).reaches) == {FULL}
    assert layer_reaches(load_model_config("llama-3.1-8b")).notes == ()
    # DeepSeek-V4 states a window its own STATE class holds: no note, every row full.
    v4 = layer_reaches(load_model_config("deepseek-v4-flash-dspark"))
    assert (set(v4.reaches), v4.notes) == ({FULL}, ())


def test_the_kinds_and_who_declared_them():
    assert declared_layer_kinds(HfConfig(BASE, "t")) == (["full_attention"] * 6, None)
    cfg = HfConfig({**BASE, "full_attention_interval": 3, "linear_num_value_heads": 2}, "t")
    assert declared_layer_kinds(cfg)[1] == "full_attention_interval"


def test_modules_carry_their_reach_and_the_walk_records_it_beside_the_row():
    runner = ModelRunner(load_model_config("gpt-oss-120b"))
    (kind,) = runner.pool_rows
    assert runner.pool_rows.reach_counts(kind) == {Reach.sliding(128): 18, FULL: 18}
    modules = list(runner.pool_rows[kind])
    assert [m.reach for m in modules] == list(runner.pool_rows.reaches(kind))
    assert modules[0].sliding_window == 128 and modules[1].sliding_window is None
    gemma = build_modules(load_model_config("gemma-3-27b"))
    assert [m.layer_num for m in gemma.modules if m.reach == FULL] == list(range(5, 62, 6))
