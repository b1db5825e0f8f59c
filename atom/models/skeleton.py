"""A model's attention-like modules for one tensor-parallel rank and one pipeline stage.

This is the engine's stand-in for building the model: the pool rows come from walking what it
returns, so every fact sizing needs about *which* layers cache *what* lives here, read off the
config's own declarations -- ``layer_types``, ``full_attention_interval``, ``linear_attn_config``,
a latent rank, an indexer head dim -- and nowhere else. No backend, runner or test counts layers
from the config; they count the modules this builds.

MTP layers are the target's own modules (``is_draft=True``): they cache like a target layer and
bind into the target's pool. A draft under pipeline parallelism is built whole on the last stage
and split across none, so MTP modules appear only there.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from atom.models.family import Family, attn_family, declares_compress_ratios, has_mla_indexer
from atom.models.hf_config import ConfigFieldError, HfConfig
from atom.models.modules import (
    AttentionModule,
    IndexerKeys,
    LinearAttention,
    MhaAttention,
    MlaAttention,
    V4Attention,
)
from atom.pool_layout.reach import FULL as FULL_REACH
from atom.pool_layout.reach import Reach
from atom.pool_layout.refusals import require_count

_TORCH_DTYPES = {
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
    "float32": torch.float32,
}

FULL = "full_attention"
SLIDING = "sliding_attention"
LINEAR = "linear_attention"
#: Llama 4's ``layer_types`` spelling of a chunked-local layer.
CHUNKED = "chunked_attention"
LAYER_KINDS = (FULL, SLIDING, LINEAR, CHUNKED)


@dataclass(frozen=True)
class ParallelRank:
    """Which rank of which stage the modules are built for."""

    tp_size: int = 1
    pp_size: int = 1
    pp_rank: int = 0

    def __post_init__(self) -> None:
        for name in ("tp_size", "pp_size"):
            require_count(name, getattr(self, name), minimum=1)
        if require_count("pp_rank", self.pp_rank) >= self.pp_size:
            raise ValueError(f"pp_rank {self.pp_rank!r} is not a stage of pp_size {self.pp_size}")

    @property
    def is_last_stage(self) -> bool:
        return self.pp_rank == self.pp_size - 1


@dataclass
class ModelSkeleton:
    """The modules one rank of one stage holds, in walk order (target layers, then MTP)."""

    config: HfConfig
    family: Family
    rank: ParallelRank
    modules: list[AttentionModule]
    #: each target layer's reach and the fields it was read from (what the report cites).
    reaches: LayerReaches | None = None

    @property
    def target_modules(self) -> list[AttentionModule]:
        return [m for m in self.modules if not m.is_draft]

    @property
    def mtp_modules(self) -> list[AttentionModule]:
        return [m for m in self.modules if m.is_draft]


def state_dtype(cfg: HfConfig) -> torch.dtype:
    name = cfg.get("torch_dtype") or "bfloat16"
    if name not in _TORCH_DTYPES:
        raise ConfigFieldError(
            cfg.source, "torch_dtype", f"is {name!r}, not one of {sorted(_TORCH_DTYPES)}"
        )
    return _TORCH_DTYPES[name]


def per_rank(cfg: HfConfig, field: str, count: int, tp_size: int, *, replicate: bool) -> int:
    """A head count's share on one rank.

    KV heads replicate when there are more ranks than heads (each rank keeps one); heads that
    carry state or projections split exactly or not at all.
    """
    if count % tp_size == 0:
        return count // tp_size
    if replicate and tp_size % count == 0:
        return 1
    raise ConfigFieldError(cfg.source, field, f"= {count} does not divide across tp {tp_size}")


def pp_layer_span(num_layers: int, rank: ParallelRank) -> range:
    """The target layers stage ``rank.pp_rank`` holds: contiguous, remainder to early stages."""
    if rank.pp_size > num_layers:
        raise ValueError(f"pp_size {rank.pp_size} exceeds the model's {num_layers} layers")
    base, extra = divmod(num_layers, rank.pp_size)
    start = rank.pp_rank * base + min(rank.pp_rank, extra)
    stop = start + base + (1 if rank.pp_rank < extra else 0)
    return range(start, stop)


def layer_types(cfg: HfConfig) -> list[str]:
    """Each target layer's attention kind, from whichever declaration the config makes."""
    return declared_layer_kinds(cfg)[0]


def _pattern_list(cfg: HfConfig, field: str, n: int) -> list[object]:
    values = cfg.get(field)
    if not isinstance(values, list) or len(values) != n:
        raise ConfigFieldError(cfg.source, field, f"must list one entry for each of {n} layers")
    return values


def declared_layer_kinds(cfg: HfConfig) -> tuple[list[str], str | None]:
    """Each target layer's kind, and the config field that said so (None: no field did).

    The spellings public configs use, first match wins:

    * ``linear_attn_config`` full / KDA lists, 1-indexed (Kimi-Linear's hub config);
    * ``layer_types``, one kind a layer (transformers' own field: gpt-oss, Gemma 3, Qwen3.5);
      ``chunked_attention`` is Llama 4's spelling of a chunked-local layer;
    * ``hybrid_layer_pattern``, 1 for a sliding-window layer (MiMo-V2's hub config; vLLM's and
      ATOM's ``mimo_v2.py`` read it so);
    * ``sliding_window_pattern`` P: layer ``i`` slides unless ``(i + 1) % P == 0`` (Gemma 3;
      transformers' Gemma3 rule, five local layers then one global);
    * ``no_rope_layers`` beside ``attention_chunk_size``: a layer with RoPE (entry 1) is
      chunked-local, a NoPE layer (entry 0) full (Llama 4, as vLLM's ``llama4.py`` reads it);
    * ``max_window_layers`` with ``use_sliding_window``: layers from that index on slide
      (Qwen2's rule in transformers);
    * ``full_attention_interval``: every interval-th layer full, the rest linear (Qwen3.5).
    """
    n = cfg.require_int("num_hidden_layers")
    lac = cfg.get("linear_attn_config")
    if isinstance(lac, dict):
        full = lac.get("full_attn_layers")
        linear = lac.get("kda_layers")
        if not isinstance(full, list) or not isinstance(linear, list):
            raise ConfigFieldError(
                cfg.source, "linear_attn_config", "must list full_attn_layers and kda_layers"
            )
        # These lists are 1-indexed in the hub config.
        kinds = []
        for layer in range(n):
            one_indexed = layer + 1
            if (one_indexed in full) == (one_indexed in linear):
                raise ConfigFieldError(
                    cfg.source,
                    "linear_attn_config",
                    f"must put layer {one_indexed} (1-indexed) in exactly one of "
                    "full_attn_layers / kda_layers",
                )
            kinds.append(FULL if one_indexed in full else LINEAR)
        return kinds, "linear_attn_config"
    declared = cfg.get("layer_types")
    if declared is not None:
        if not isinstance(declared, list) or len(declared) != n:
            raise ConfigFieldError(
                cfg.source, "layer_types", f"must list one kind for each of {n} layers"
            )
        unknown = sorted({str(k) for k in declared if k not in LAYER_KINDS})
        if unknown:
            raise ConfigFieldError(cfg.source, "layer_types", f"names unknown kinds {unknown}")
        return list(declared), "layer_types"
    if cfg.get("hybrid_layer_pattern") is not None:
        pattern = _pattern_list(cfg, "hybrid_layer_pattern", n)
        bad = sorted({repr(v) for v in pattern if v not in (0, 1) or isinstance(v, bool)})
        if bad:
            raise ConfigFieldError(
                cfg.source, "hybrid_layer_pattern", f"holds {bad}; 1 marks a sliding layer, 0 full"
            )
        return [SLIDING if v == 1 else FULL for v in pattern], "hybrid_layer_pattern"
    if cfg.get("sliding_window_pattern") is not None:
        period = cfg.require_int("sliding_window_pattern")
        kinds = [FULL if (layer + 1) % period == 0 else SLIDING for layer in range(n)]
        return kinds, "sliding_window_pattern"
    if cfg.get("no_rope_layers") is not None and cfg.get("attention_chunk_size") is not None:
        flags = _pattern_list(cfg, "no_rope_layers", n)
        bad = sorted({repr(v) for v in flags if v not in (0, 1) or isinstance(v, bool)})
        if bad:
            raise ConfigFieldError(
                cfg.source, "no_rope_layers", f"holds {bad}; 1 marks a RoPE layer, 0 a NoPE one"
            )
        return [CHUNKED if v == 1 else FULL for v in flags], "no_rope_layers"
    if cfg.get("use_sliding_window") is True and cfg.get("max_window_layers") is not None:
        first = cfg.int_or("max_window_layers", 0)
        return [SLIDING if layer >= first else FULL for layer in range(n)], "max_window_layers"
    if cfg.get("full_attention_interval") is not None:
        interval = cfg.require_int("full_attention_interval")
        kinds = [FULL if (layer + 1) % interval == 0 else LINEAR for layer in range(n)]
        return kinds, "full_attention_interval"
    return [FULL] * n, None


# -- reach ---------------------------------------------------------------------------------------

#: The fields a sliding window's width is spelled in. MiMo-V2's hub config states it twice
#: (``sliding_window`` and ``sliding_window_size``); when they differ the larger is planned, since
#: a token too many costs at most a block and a token too few is a read of evicted KV.
WINDOW_FIELDS = ("sliding_window", "sliding_window_size")
CHUNK_FIELD = "attention_chunk_size"


@dataclass(frozen=True)
class LayerReaches:
    """Each target layer's reach, the config fields it was read from, and what was left unread.

    ``notes`` says why a declaration did not make a layer a window -- a width with no statement
    of which layers use it, or ``use_sliding_window: false`` -- so a report can say that the
    layers were planned full on purpose.
    """

    reaches: tuple[Reach, ...]
    sources: tuple[str, ...]
    notes: tuple[str, ...]


def _window_tokens(cfg: HfConfig) -> tuple[int, tuple[str, ...]]:
    stated = {f: cfg.require_int(f) for f in WINDOW_FIELDS if cfg.get(f) is not None}
    if not stated:
        raise ConfigFieldError(
            cfg.source,
            WINDOW_FIELDS[0],
            "is missing: the config marks sliding-window layers but states no window "
            f"(read from any of {list(WINDOW_FIELDS)})",
        )
    return max(stated.values()), tuple(stated)


def layer_reaches(cfg: HfConfig) -> LayerReaches:
    """Each target layer's reach, read off the same declaration ``layer_types`` reads.

    A sliding layer reads a window of ``sliding_window`` tokens (the query and the ones before
    it, transformers' and vLLM's convention), a chunked layer the current ``attention_chunk_size``
    chunk, anything else every token. A window width the config states without saying which
    layers use it is planned full, and said so: Gemma 3's hub config leaves its pattern to
    transformers' default, and reading a bare width as "every layer" would plan its ten global
    layers as windows -- a capacity no request could reach.
    """
    kinds, declared_by = declared_layer_kinds(cfg)
    notes: list[str] = []
    sources: list[str] = [declared_by] if declared_by else []
    windowed = SLIDING in kinds
    if windowed and cfg.get("use_sliding_window") is False:
        notes.append(
            f"{declared_by} marks {kinds.count(SLIDING)} layers sliding but use_sliding_window is "
            "false: planned full"
        )
        kinds = [FULL if k == SLIDING else k for k in kinds]
        windowed = False
    reaches = []
    window = chunk = None
    if windowed:
        window, fields = _window_tokens(cfg)
        sources.extend(fields)
    if CHUNKED in kinds:
        chunk = cfg.require_int(CHUNK_FIELD)
        sources.append(CHUNK_FIELD)
    for kind in kinds:
        if kind == SLIDING:
            reaches.append(Reach.sliding(window))
        elif kind == CHUNKED:
            reaches.append(Reach.chunked(chunk))
        else:
            reaches.append(FULL_REACH)
    if not windowed and not notes and declared_by in (None, "full_attention_interval"):
        for field in (*WINDOW_FIELDS, CHUNK_FIELD):
            if cfg.get(field) is not None and not declares_compress_ratios(cfg):
                notes.append(
                    f"{field} = {cfg.get(field)!r} is stated without which layers use it (no "
                    "layer_types, hybrid_layer_pattern, sliding_window_pattern or no_rope_layers): "
                    "planned full"
                )
    return LayerReaches(tuple(reaches), tuple(sources), tuple(notes))


def mtp_layer_count(cfg: HfConfig) -> int:
    """How many MTP layers the config declares, in any of the spellings shipped configs use."""
    if cfg.get("num_nextn_predict_layers"):
        return cfg.int_or("num_nextn_predict_layers", 0)
    if cfg.get("mtp_num_hidden_layers"):
        return cfg.int_or("mtp_num_hidden_layers", 0)
    if cfg.get("use_mtp"):
        modules = cfg.require_int("num_mtp_modules")
        return modules * cfg.int_or("mtp_transformer_layers", 1, minimum=1)
    return 0


# -- one module per kind -------------------------------------------------------------------------


def _mha(
    cfg: HfConfig,
    prefix: str,
    layer: int,
    tp: int,
    *,
    sliding: bool,
    is_draft: bool,
    reach: Reach = FULL_REACH,
):
    heads_field = "num_key_value_heads"
    head_dim_field = "head_dim"
    v_field = "v_head_dim"
    if sliding:
        heads_field, head_dim_field, v_field = (
            "swa_num_key_value_heads",
            "swa_head_dim",
            "swa_v_head_dim",
        )
    # A sliding-window layer that states no head count of its own caches the full layers' count.
    kv_heads = (
        cfg.require_int(heads_field) if cfg.get(heads_field) is not None else _full_kv_heads(cfg)
    )
    head_dim = _head_dim(cfg, head_dim_field)
    v_head_dim = cfg.int_or(v_field, head_dim, minimum=1)
    # MTP and draft layers sit past the config's own layer list and carry no indexer.
    indexer = None if is_draft else sparse_indexer(cfg, layer)
    return MhaAttention(
        prefix=prefix,
        layer_num=layer,
        is_draft=is_draft,
        num_kv_heads=per_rank(cfg, heads_field, kv_heads, tp, replicate=True),
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        indexer=indexer,
        reach=reach,
    )


SPARSE_ATTENTION_CONFIG = "sparse_attention_config"


def sparse_attention_config(cfg: HfConfig) -> HfConfig | None:
    """MiniMax-M3's ``sparse_attention_config``, as a config of its own so a refusal names it."""
    nested = cfg.get(SPARSE_ATTENTION_CONFIG)
    if nested is None:
        return None
    if not isinstance(nested, dict):
        raise ConfigFieldError(cfg.source, SPARSE_ATTENTION_CONFIG, "must be a JSON object")
    if nested.get("use_sparse_attention") is False:
        return None
    return HfConfig(nested, f"{cfg.source}:{SPARSE_ATTENTION_CONFIG}")


def sparse_indexer(cfg: HfConfig, layer: int) -> IndexerKeys | None:
    """The indexer keys MHA layer ``layer`` caches, if ``sparse_attention_freq`` marks it sparse.

    One flag per target layer, so the list must cover exactly ``num_hidden_layers``: a short list
    would leave the tail's layers dense without a word, and a long one names layers that do not
    exist.
    """
    sub = sparse_attention_config(cfg)
    if sub is None:
        return None
    freq = sub.require("sparse_attention_freq")
    n = cfg.require_int("num_hidden_layers")
    if not isinstance(freq, list) or len(freq) != n:
        raise ConfigFieldError(
            sub.source, "sparse_attention_freq", f"must list one flag for each of {n} layers"
        )
    if not freq[layer]:
        return None
    return IndexerKeys(head_dim=sub.require_int("sparse_index_dim"))


def _full_kv_heads(cfg: HfConfig) -> int:
    if cfg.get("num_key_value_heads") is not None:
        return cfg.require_int("num_key_value_heads")
    return cfg.require_int("num_attention_heads")


def _head_dim(cfg: HfConfig, field: str) -> int:
    if cfg.get(field) is not None:
        return cfg.require_int(field)
    if field != "head_dim" and cfg.get("head_dim") is not None:
        return cfg.require_int("head_dim")
    hidden = cfg.get("hidden_size")
    if hidden is None:
        raise ConfigFieldError(cfg.source, field, "is missing (and no hidden_size to derive it)")
    heads = cfg.require_int("num_attention_heads")
    hidden = cfg.require_int("hidden_size")
    if hidden % heads:
        raise ConfigFieldError(
            cfg.source, "hidden_size", f"= {hidden} is not a multiple of {heads} heads"
        )
    return hidden // heads


#: The config field a NoPE model states its padded MLA row width in. No public config we ship
#: declares one (Kimi-K3 says ``mla_use_nope: true`` and caches the unpadded 576); the name is the
#: engine's own expression, ``mla_kv_entry_dim``, so a config that needs it says it by that name.
MLA_KV_ENTRY_DIM = "mla_kv_entry_dim"


def mla_kv_entry_dim(cfg: HfConfig) -> int:
    """Elements one cached MLA token takes: the declared padded width, else the latent split.

    Read here and nowhere else, so the pool's price, its carve and the kernels' row width are one
    number; a declared width narrower than the latent cannot hold it and is refused by name.
    """
    latent = cfg.require_int("kv_lora_rank") + cfg.require_int("qk_rope_head_dim", minimum=0)
    width = cfg.int_or(MLA_KV_ENTRY_DIM, latent, minimum=1)
    if width < latent:
        raise ConfigFieldError(
            cfg.source,
            MLA_KV_ENTRY_DIM,
            f"= {width} is narrower than kv_lora_rank + qk_rope_head_dim = {latent}",
        )
    return width


def _mla(
    cfg: HfConfig, prefix: str, layer: int, *, is_draft: bool, reach: Reach = FULL_REACH
) -> MlaAttention:
    indexer = None
    if has_mla_indexer(cfg):
        indexer = IndexerKeys(head_dim=cfg.require_int("index_head_dim"))
    return MlaAttention(
        prefix=prefix,
        layer_num=layer,
        is_draft=is_draft,
        kv_lora_rank=cfg.require_int("kv_lora_rank"),
        qk_rope_head_dim=cfg.require_int("qk_rope_head_dim", minimum=0),
        indexer=indexer,
        kv_entry_dim=mla_kv_entry_dim(cfg),
        reach=reach,
    )


def _gdn(cfg: HfConfig, prefix: str, layer: int, tp: int) -> LinearAttention:
    key_heads = per_rank(
        cfg, "linear_num_key_heads", cfg.require_int("linear_num_key_heads"), tp, replicate=False
    )
    value_heads = per_rank(
        cfg,
        "linear_num_value_heads",
        cfg.require_int("linear_num_value_heads"),
        tp,
        replicate=False,
    )
    key_dim = cfg.require_int("linear_key_head_dim")
    value_dim = cfg.require_int("linear_value_head_dim")
    kernel = cfg.require_int("linear_conv_kernel_dim", minimum=2)
    # The short conv runs over q, k (key width) and v (value width) concatenated, and keeps the
    # last kernel-1 inputs.
    conv_dim = 2 * key_heads * key_dim + value_heads * value_dim
    return LinearAttention(
        prefix=prefix,
        layer_num=layer,
        variant="gdn",
        conv_shape=(kernel - 1, conv_dim),
        recurrent_shape=(value_heads, key_dim, value_dim),
        dtype=state_dtype(cfg),
    )


def _kda(cfg: HfConfig, prefix: str, layer: int, tp: int) -> LinearAttention:
    lac = cfg.require("linear_attn_config")
    sub = HfConfig(lac, f"{cfg.source}:linear_attn_config")
    heads = per_rank(sub, "num_heads", sub.require_int("num_heads"), tp, replicate=False)
    head_dim = sub.require_int("head_dim")
    kernel = sub.require_int("short_conv_kernel_size", minimum=2)
    # KDA convolves q, k and v separately, each heads x head_dim wide; one window holds all three.
    return LinearAttention(
        prefix=prefix,
        layer_num=layer,
        variant="kda",
        conv_shape=(kernel - 1, 3 * heads * head_dim),
        recurrent_shape=(heads, head_dim, head_dim),
        dtype=state_dtype(cfg),
    )


V4_RATIOS = (0, 4, 128)


def v4_compress_ratios(cfg: HfConfig) -> list[int]:
    """DeepSeek-V4's per-layer compress ratios: the target's layers, then the drafter's.

    The list is at least ``num_hidden_layers`` long; its tail is one ratio per draft layer. The
    DSpark checkpoint ships 46 ratios for 43 layers and three ``mtp.*`` blocks while its
    ``num_nextn_predict_layers`` says 1, and the engine sizes from the ratio list
    (``num_layers = len(compress_ratios)``), so this does too.
    """
    ratios = cfg.require("compress_ratios")
    n = cfg.require_int("num_hidden_layers")
    if not isinstance(ratios, list) or len(ratios) < n:
        raise ConfigFieldError(
            cfg.source, "compress_ratios", f"must list a ratio for each of {n} layers at least"
        )
    bad = sorted({r for r in ratios if isinstance(r, bool) or r not in V4_RATIOS})
    if bad:
        raise ConfigFieldError(
            cfg.source, "compress_ratios", f"names ratios {bad}; V4 knows {list(V4_RATIOS)}"
        )
    return list(ratios)


def _v4(cfg: HfConfig, prefix: str, layer: int, ratio: int, *, is_draft: bool) -> V4Attention:
    head_dim = cfg.require_int("head_dim")
    return V4Attention(
        prefix=prefix,
        layer_num=layer,
        is_draft=is_draft,
        compress_ratio=ratio,
        head_dim=head_dim,
        rope_head_dim=cfg.require_int("qk_rope_head_dim"),
        # Only a CSA layer runs the indexer; its keys are index_head_dim wide.
        index_head_dim=cfg.require_int("index_head_dim") if ratio == 4 else 0,
        window=cfg.require_int("sliding_window"),
    )


def build_modules(
    hf_config: HfConfig,
    rank: ParallelRank | None = None,
    *,
    include_mtp: bool = True,
    as_draft: bool = False,
) -> ModelSkeleton:
    """The modules of ``hf_config``'s text model on ``rank``.

    ``as_draft`` builds a separate draft model (an EAGLE head): every module is a draft module,
    it is built whole (a draft under PP lives on the last stage and is split across none), and it
    declares no MTP of its own.
    """
    rank = rank or ParallelRank()
    cfg = hf_config.text_config()
    family = attn_family(cfg)
    kinds = layer_types(cfg)
    reading = layer_reaches(cfg)
    reaches = reading.reaches
    tp = rank.tp_size
    # A separate draft is built whole on the last stage; only the target splits across stages.
    span = range(len(kinds)) if as_draft else pp_layer_span(len(kinds), rank)
    root = "draft" if as_draft else "model"
    latent = family in (Family.MLA, Family.MLA_KDA)
    modules: list[AttentionModule] = []
    ratios = v4_compress_ratios(cfg) if family is Family.DSV4 else []
    for layer in span:
        kind = kinds[layer]
        prefix = f"{root}.layers.{layer}"
        if family is Family.DSV4:
            modules.append(_v4(cfg, f"{prefix}.attn", layer, ratios[layer], is_draft=as_draft))
        elif kind == LINEAR:
            if family is Family.GDN:
                modules.append(_gdn(cfg, f"{prefix}.linear_attn", layer, tp))
            elif family is Family.MLA_KDA:
                modules.append(_kda(cfg, f"{prefix}.self_attn", layer, tp))
            else:
                raise ConfigFieldError(
                    cfg.source, "layer_types", "declares linear layers in a non-hybrid"
                )
        elif latent:
            modules.append(
                _mla(cfg, f"{prefix}.self_attn", layer, is_draft=as_draft, reach=reaches[layer])
            )
        else:
            modules.append(
                _mha(
                    cfg,
                    f"{prefix}.self_attn",
                    layer,
                    tp,
                    sliding=kind == SLIDING,
                    is_draft=as_draft,
                    reach=reaches[layer],
                )
            )
    if include_mtp and not as_draft and rank.is_last_stage and family is Family.DSV4:
        for layer in range(len(kinds), len(ratios)):
            prefix = f"model.layers.{layer}.attn"
            modules.append(_v4(cfg, prefix, layer, ratios[layer], is_draft=True))
    elif include_mtp and not as_draft and rank.is_last_stage:
        first = len(kinds)
        for i in range(mtp_layer_count(cfg)):
            layer = first + i
            prefix = f"model.layers.{layer}.self_attn"
            if latent:
                modules.append(_mla(cfg, prefix, layer, is_draft=True))
            else:
                modules.append(_mha(cfg, prefix, layer, tp, sliding=False, is_draft=True))
    return ModelSkeleton(config=cfg, family=family, rank=rank, modules=modules, reaches=reading)
