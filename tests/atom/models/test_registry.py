"""The shipped configs are facts with their sources, and any HF config.json loads the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atom.models.hf_config import ConfigFieldError, HfConfig
from atom.models.registry import config_path, load_config, load_model_config, model_names

SHARED_MODELS = Path(__file__).resolve().parents[3].parent / "shared" / "design" / "models"
EXPECTED = {
    "deepseek-r1",
    "deepseek-v3.2-exp",
    "deepseek-v4-flash-dspark",
    "eagle3-draft-llama",
    "gemma-3-27b",
    "glm-5.2",
    "gpt-oss-120b",
    "kimi-k3",
    "kimi-linear-48b-a3b",
    "llama-3.1-8b",
    "mimo-v2-flash",
    "minimax-m2",
    "minimax-m3",
    "minimax-m3-eagle3",
    "qwen3.5-27b",
}


def test_registry_lists_every_shipped_config():
    assert set(model_names()) == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_config_keeps_its_sources(name):
    cfg = load_model_config(name)
    assert cfg.get("_sources"), f"{name} lost its _sources"
    assert cfg.source == name


#: Shipped, or re-sourced from a public config, after the design copies were taken; their
#: sources are in their own ``_sources`` (the copies of qwen3.5-27b and deepseek-r1 predate
#: their public sources: one says DERIVED, the other names no repository).
NOT_IN_DESIGN_COPIES = {
    "deepseek-r1",
    "deepseek-v4-flash-dspark",
    "gemma-3-27b",
    "glm-5.2",
    "gpt-oss-120b",
    "kimi-k3",
    "minimax-m3",
    "minimax-m3-eagle3",
    "qwen3.5-27b",
}


@pytest.mark.parametrize("name", sorted(EXPECTED - NOT_IN_DESIGN_COPIES))
def test_configs_are_byte_identical_to_the_design_copies(name):
    if not SHARED_MODELS.is_dir():
        pytest.skip(f"{SHARED_MODELS} is not laid beside this checkout")
    assert config_path(name).read_bytes() == (SHARED_MODELS / f"{name}.json").read_bytes()


#: In the design copies, and re-sourced since: their provenance was rewritten.
RE_SOURCED = {"deepseek-r1", "qwen3.5-27b"}


@pytest.mark.parametrize("name", sorted(RE_SOURCED))
def test_a_re_sourced_config_keeps_every_value_of_its_design_copy(name):
    """Re-sourcing rewrites a config's provenance and may add a public field (qwen3.5-27b's
    `mamba_ssm_dtype`), never changes a value the pools were sized from: a value changed to
    make a golden come out would show here."""
    if not SHARED_MODELS.is_dir():
        pytest.skip(f"{SHARED_MODELS} is not laid beside this checkout")

    def values(path):
        return {k: v for k, v in json.loads(path.read_text()).items() if not k.startswith("_")}

    shipped, copy = values(config_path(name)), values(SHARED_MODELS / f"{name}.json")
    assert {k: shipped.get(k) for k in copy} == copy
    assert config_path(name).read_bytes() != (SHARED_MODELS / f"{name}.json").read_bytes()


def test_a_user_config_loads_from_a_file_or_a_checkpoint_dir(tmp_path):
    data = {
        "model_type": "llama",
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "hidden_size": 256,
    }
    (tmp_path / "config.json").write_text(json.dumps(data))
    by_dir = load_config(tmp_path)
    by_file = load_config(str(tmp_path / "config.json"))
    assert by_dir.as_dict() == by_file.as_dict() == data
    assert by_file.source.endswith("config.json")


def test_unknown_registry_name_is_refused_by_name():
    with pytest.raises(ValueError, match=r"no model 'nope'"):
        load_model_config("nope")


def test_missing_file_and_non_json_are_refused_by_path(tmp_path):
    with pytest.raises(ValueError, match=r"does not exist"):
        HfConfig.from_file(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match=r"bad.json.*is not JSON"):
        HfConfig.from_file(bad)


def _nested(depth: int) -> str:
    # Valid JSON, `[` x depth then `]` x depth: the stdlib decoder recurses
    # once per level, so 100,000 is well past any recursion limit.
    return '{"a": ' + "[" * depth + "]" * depth + "}"


def test_a_config_nested_too_deeply_is_refused_by_path_not_a_recursion_error(tmp_path):
    deep = tmp_path / "config.json"
    deep.write_text(_nested(100_000))
    # By path, by directory, and through load_config (the --draft reader).
    for spelling in (deep, tmp_path, str(deep)):
        reader = HfConfig.from_file if spelling is not deep else load_config
        with pytest.raises(ValueError, match=r"config\.json.*nested too deeply"):
            reader(spelling)


def test_a_config_that_is_not_utf_8_is_refused_by_path(tmp_path):
    bad = tmp_path / "latin.json"
    bad.write_bytes(b'{"model_type": "caf\xe9"}')
    with pytest.raises(ValueError, match=r"latin\.json.*not UTF-8"):
        HfConfig.from_file(bad)


def test_a_shipped_config_nested_too_deeply_names_the_model(tmp_path, monkeypatch):
    # The registry reads its own files through the same reader: a packaging
    # accident there is a refusal naming the model, not a RecursionError.
    import atom.models.registry as registry

    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "deep.json").write_text(_nested(100_000))
    monkeypatch.setattr(registry, "_config_dir", lambda: tmp_path / "configs")
    with pytest.raises(ValueError, match=r"deep\.json.*nested too deeply"):
        load_model_config("deep")


def test_required_fields_name_the_field_and_the_source():
    cfg = HfConfig({"num_hidden_layers": True, "x": 0}, "mine.json")
    with pytest.raises(ConfigFieldError, match=r"mine.json: field 'kv_lora_rank' is missing"):
        cfg.require("kv_lora_rank")
    with pytest.raises(ConfigFieldError, match=r"'num_hidden_layers' must be an integer, got True"):
        cfg.require_int("num_hidden_layers")
    with pytest.raises(ConfigFieldError, match=r"'x' must be >= 1, got 0"):
        cfg.require_int("x")


def test_text_config_unwraps_a_multimodal_wrapper_and_keeps_the_dtype():
    wrapper = HfConfig(
        {
            "model_type": "vl_wrapper",
            "torch_dtype": "float16",
            "text_config": {"model_type": "llama"},
        },
        "vl",
    )
    text = wrapper.text_config()
    assert text.model_type == "llama"
    assert text.get("torch_dtype") == "float16"
    assert wrapper.model_type == "vl_wrapper"
    plain = load_model_config("llama-3.1-8b")
    assert plain.text_config() is plain
