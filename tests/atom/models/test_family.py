"""Family is decided by what a config declares, never by a list of model types."""

from __future__ import annotations

import pytest

from atom.models.family import Family, attn_family, has_mla_indexer
from atom.models.hf_config import HfConfig
from atom.models.registry import load_model_config

EXPECTED = {
    "deepseek-r1": Family.MLA,
    "deepseek-v3.2-exp": Family.MLA,
    "eagle3-draft-llama": Family.MHA,
    "kimi-linear-48b-a3b": Family.MLA_KDA,
    "llama-3.1-8b": Family.MHA,
    "mimo-v2-flash": Family.MHA,
    "minimax-m2": Family.MHA,
    "qwen3.5-27b": Family.GDN,
}


@pytest.mark.parametrize(("name", "family"), sorted(EXPECTED.items()))
def test_shipped_models_resolve_to_their_family(name, family):
    assert attn_family(load_model_config(name).text_config()) is family


def test_a_latent_rank_means_mla_whatever_the_model_type():
    """`k3_dspark` carries kv_lora_rank=512 and was missed by a list of six MLA model types."""
    cfg = HfConfig({"model_type": "k3_dspark", "kv_lora_rank": 512}, "k3")
    assert attn_family(cfg) is Family.MLA
    assert attn_family(cfg.with_overrides(kv_lora_rank=0)) is Family.MHA


def test_the_decoding_algorithm_is_not_an_attention():
    """An EAGLE head trained on an MLA base is MLA; the shipped Llama head is MHA."""
    eagle_on_mla = HfConfig({"model_type": "eagle", "kv_lora_rank": 512}, "eagle-mla")
    assert attn_family(eagle_on_mla) is Family.MLA
    assert attn_family(load_model_config("eagle3-draft-llama")) is Family.MHA


def test_a_hybrid_beats_a_latent_rank_and_the_wrapper_type_is_not_read():
    kimi = load_model_config("kimi-linear-48b-a3b")
    assert attn_family(kimi.with_overrides(model_type="deepseek_v3")) is Family.MLA_KDA
    wrapped = HfConfig(
        {"model_type": "qwen3_5_moe", "text_config": load_model_config("qwen3.5-27b").as_dict()},
        "w",
    )
    assert attn_family(wrapped.text_config()) is Family.GDN


def test_layer_types_declaring_linear_attention_is_gdn():
    cfg = HfConfig({"layer_types": ["linear_attention", "full_attention"]}, "lt")
    assert attn_family(cfg) is Family.GDN


def test_family_is_an_enum_a_missing_name_raises():
    with pytest.raises(ValueError):
        Family("not-a-family")
    with pytest.raises(TypeError, match=r"HfConfig"):
        attn_family({"kv_lora_rank": 512})


def test_indexer_is_read_off_the_indexer_head_dim():
    assert has_mla_indexer(load_model_config("deepseek-v3.2-exp"))
    assert not has_mla_indexer(load_model_config("deepseek-r1"))
    # An indexer head dim on a model with no latent rank is not an MLA indexer.
    assert not has_mla_indexer(HfConfig({"index_head_dim": 128}, "x"))
