"""Which attention family a model is, decided by what its text config declares.

One value, :class:`Family`, from :func:`attn_family`. The priority between declarations is
written here and nowhere else: per-layer compress ratios (DeepSeek-V4) beat everything, since
they are a cache layout of their own; a linear-attention layout beats a latent rank (Kimi-Linear has
both, and is a hybrid first), and a latent rank beats a head count (an MLA config also states
``num_key_value_heads``, which does not size its cache).

MLA is the *presence* of a latent rank, never membership of a list of model types: a list named
six types and missed ``k3_dspark``, whose config carries ``kv_lora_rank=512``. Nothing here
mentions a decoding algorithm either -- an EAGLE draft is not an attention, and its family is
whatever stack it declares (the shipped EAGLE3 head declares ``llama`` and is MHA).

The caller hands the *text* config (:meth:`HfConfig.text_config`); a multimodal wrapper's own
``model_type`` is not an attention and is not read here.
"""

from __future__ import annotations

import enum

from atom.models.hf_config import HfConfig


class Family(enum.Enum):
    """An enum rather than a string, so a name that does not exist raises instead of reading
    as MHA."""

    MHA = "mha"
    MLA = "mla"
    #: full-attention MHA layers between gated-delta-net linear-attention layers (Qwen3.5).
    GDN = "gdn"
    #: MLA layers between KDA linear-attention layers (Kimi-Linear).
    MLA_KDA = "mla_kda"
    #: DeepSeek-V4: per-layer compress ratios (dense / CSA / HCA) over one shared row space.
    DSV4 = "dsv4"


def declares_latent_rank(cfg: HfConfig) -> bool:
    return bool(cfg.get("kv_lora_rank"))


def declares_linear_attention(cfg: HfConfig) -> bool:
    """Any of the three ways a config says some layers keep linear-attention state."""
    if isinstance(cfg.get("linear_attn_config"), dict):
        return True
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list) and "linear_attention" in layer_types:
        return True
    # Present is what counts: `full_attention_interval: 0` is a typo the skeleton refuses by
    # name, never a quiet "no linear layers" that prices Qwen3.5 as pure MHA.
    return cfg.get("full_attention_interval") is not None and bool(
        cfg.get("linear_num_value_heads")
    )


def declares_compress_ratios(cfg: HfConfig) -> bool:
    """DeepSeek-V4's declaration: one compress ratio per layer, drafter layers included."""
    return isinstance(cfg.get("compress_ratios"), list)


def attn_family(hf_text_config: HfConfig) -> Family:
    if not isinstance(hf_text_config, HfConfig):
        raise TypeError(f"attn_family takes an HfConfig, got {type(hf_text_config).__name__}")
    if declares_compress_ratios(hf_text_config):
        # Per-layer compression is a cache layout of its own, whatever else the config states.
        return Family.DSV4
    latent = declares_latent_rank(hf_text_config)
    if declares_linear_attention(hf_text_config):
        return Family.MLA_KDA if latent else Family.GDN
    return Family.MLA if latent else Family.MHA


def has_mla_indexer(hf_text_config: HfConfig) -> bool:
    """Whether this model's MLA rows carry an indexer key cache (DeepSeek-V3.2, GLM-5.x).

    Read off the indexer's own head dim: a sparse model is one that says how wide its index
    keys are, whatever its model type calls itself.
    """
    return declares_latent_rank(hf_text_config) and bool(hf_text_config.get("index_head_dim"))
