"""Hypothesis strategies over the engine's cases: model x tp x pp stage x kv dtype x scheduler
block x block count.

A case is drawn from what the model itself allows -- a tp its heads divide across, a pp its
layers cover, a scheduler block that is a whole number of every builder's backend block -- so
every example exercises the contracts rather than the refusals (which have their own check).
Tensors stay small: block counts are tiny and a case's paged buffer is capped at ``MAX_PAGED_BYTES``
by lowering the block count, never by skipping the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from hypothesis import event
from hypothesis import strategies as st

from atom.engine_config import INDEX_CACHE_DTYPES, MHA_BACKENDS, EngineConfig
from atom.engine_config import KV_DTYPES as ENGINE_KV_DTYPES
from atom.models.family import Family, attn_family
from atom.models.hf_config import HfConfig
from atom.models.registry import load_model_config, model_names
from atom.pool_layout import EntryClass
from atom.runner.model_runner import ModelRunner

#: A target paired with a draft model is its own case: the registry holds them as two files.
DRAFT_PAIRS: dict[str, tuple[str, str]] = {
    "minimax-m2+eagle3-draft-llama": ("minimax-m2", "eagle3-draft-llama"),
    "minimax-m3+minimax-m3-eagle3": ("minimax-m3", "minimax-m3-eagle3"),
}
#: One device, and the tensor-parallel sizes the pull request's goldens were measured at (2:
#: Qwen3.5-27B; 4: DeepSeek-R1 and MiniMax-M3; 8: Kimi-K3).
TP_SIZES = (1, 2, 4, 8)
#: One stage, and the smallest pipeline with a first and a later stage.
PP_SIZES = (1, 2)
#: Every KV dtype the engine names: fp8 is three dtypes (e4m3fn, ROCm's e4m3fnuz, e5m2), and a
#: reader that recognised only one would price a pool without its scales.
KV_DTYPES = tuple(ENGINE_KV_DTYPES)
#: The engine's default (one 16-token backend block a scheduler block), two and four backend
#: blocks a scheduler block (a slot's backend block within its scheduler block), and 256 (the
#: block DeepSeek-V4 and MiniMax-M3 page at).
SCHEDULER_BLOCK_SIZES = (16, 32, 64, 256)
#: 1 to 4 blocks a case: one block (its first and last coincide) and several, kept tiny.
MAX_BLOCKS = 4
#: 24 MiB: the most paged buffer a case holds (the block count is lowered to fit, never below
#: one), so a write-readback's snapshot and compare stay cheap.
MAX_PAGED_BYTES = 24 << 20
#: One request slot more than the minimum, so a STATE write has a neighbour that must not move.
STATE_ENTRIES = 2


def case_names() -> list[str]:
    return [*model_names(), *DRAFT_PAIRS]


@cache
def names_by_family() -> dict[Family, tuple[str, ...]]:
    """Each attention family and the cases whose target model is of it. A case is drawn family
    first: drawn by name, a family with one model among many (DeepSeek-V4) goes undrawn in a
    short run as soon as the registry grows elsewhere, and its pools go unchecked."""
    grouped: dict[Family, list[str]] = {}
    for name in case_names():
        target, _ = DRAFT_PAIRS.get(name, (name, None))
        grouped.setdefault(attn_family(_config(target).text_config()), []).append(name)
    return {family: tuple(grouped[family]) for family in Family if family in grouped}


@dataclass(frozen=True)
class EngineCase:
    name: str
    engine: EngineConfig
    blocks: int

    def configs(self) -> tuple[HfConfig, HfConfig | None]:
        target, draft = DRAFT_PAIRS.get(self.name, (self.name, None))
        return _config(target), (_config(draft) if draft else None)

    def make_runner(self) -> ModelRunner:
        target, draft = self.configs()
        return ModelRunner(target, self.engine, draft_config=draft)

    def __str__(self) -> str:
        e = self.engine
        return (
            f"{self.name} tp{e.tp_size} pp{e.pp_rank}/{e.pp_size} {e.kv_dtype} "
            f"sched{e.scheduler_block_size} {e.mha_backend} x{self.blocks}"
        )


@cache
def _config(name: str) -> HfConfig:
    return load_model_config(name)


@cache
def _buildable(name: str, engine: EngineConfig) -> int | None:
    """The case's PAGE entry bytes, or None when the model refuses this engine configuration."""
    try:
        target, draft = DRAFT_PAIRS.get(name, (name, None))
        runner = ModelRunner(
            _config(target), engine, draft_config=_config(draft) if draft else None
        )
        # What one block costs wherever it lives: a builder that allocates its own (V4) takes
        # no region of the paged buffer but is still priced per block.
        return max(runner.paged_pool_bytes(1), runner.entry_bytes().get(EntryClass.PAGE, 0))
    except (ValueError, TypeError):
        return None


@st.composite
def engine_cases(draw, names: list[str] | None = None) -> EngineCase:
    if names:
        name = draw(st.sampled_from(names))
    else:
        by_family = names_by_family()
        name = draw(st.sampled_from(by_family[draw(st.sampled_from(list(by_family)))]))
    kv_dtype = draw(st.sampled_from(KV_DTYPES))
    # Only the blocks this model's kernels page within: MiniMax-M3 pages at 128 whatever the
    # scheduler says, so 16, 32 and 64 are refusals (check_refusals' business), never a case.
    scheduler_block = draw(st.sampled_from(_accepted_blocks(name)))
    # The MHA backend picks the paged layout (aiter SHUFFLE, triton NHD): without it the NHD
    # element order is never drawn. Other flavours ignore it.
    mha_backend = draw(st.sampled_from(MHA_BACKENDS))
    # The indexer dtype a flavour that offers the choice (DeepSeek-V4) keys with: fp8 exports
    # transfer regions, fp4 refuses transfer by name. Other flavours ignore it.
    index_cache_dtype = draw(st.sampled_from(INDEX_CACHE_DTYPES))
    options = []
    for pp_size in PP_SIZES:
        for pp_rank in range(pp_size):
            for tp in TP_SIZES:
                engine = EngineConfig(
                    tp_size=tp,
                    pp_size=pp_size,
                    pp_rank=pp_rank,
                    kv_dtype=kv_dtype,
                    scheduler_block_size=scheduler_block,
                    state_entries=STATE_ENTRIES,
                    mha_backend=mha_backend,
                    index_cache_dtype=index_cache_dtype,
                )
                if _buildable(name, engine) is not None:
                    options.append(engine)
    if not options:  # pragma: no cover - every shipped model builds at tp 1, pp 1
        raise ValueError(f"{name} builds at no tp in {TP_SIZES} and pp in {PP_SIZES}")
    engine = draw(st.sampled_from(options))
    blocks = capped_blocks(draw(st.integers(1, MAX_BLOCKS)), _buildable(name, engine))
    # `pytest --hypothesis-show-statistics` lists these; test_strategies asserts the reach.
    event(f"tp {engine.tp_size}, pp {engine.pp_rank}/{engine.pp_size}")
    event(f"kv {kv_dtype}, {mha_backend}")
    event(f"index cache {index_cache_dtype}")
    event(f"blocks {blocks}")
    return EngineCase(name, engine, blocks)


def capped_blocks(wanted: int, per_block: int) -> int:
    """``wanted`` blocks, lowered until a case's paged buffer (``per_block`` bytes a block) is at
    most ``MAX_PAGED_BYTES``, never below one: a case stays small by its block count, never by
    skipping the model. A block that costs nothing is no case: refused by name."""
    if per_block < 1:
        raise ValueError(f"a block priced at {per_block} B is no case: its model pages nothing")
    return max(1, min(wanted, MAX_PAGED_BYTES // per_block))


def accepted_blocks(name: str) -> tuple[int, ...]:
    """The scheduler blocks a case builds at (tp 1, pp 1), smallest first: a model whose kernels
    page above the default block (MiniMax-M3 at 128, DeepSeek-V4 at 256) refuses the smaller."""
    return _accepted_blocks(name)


@cache
def importable_names() -> list[str]:
    """Cases with a P/D import path: a STATE pool is refused on the decode side by name."""
    return [n for n in case_names() if not default_case(n).make_runner()._state_pool_names()]


@cache
def _accepted_blocks(name: str) -> tuple[int, ...]:
    """The scheduler blocks of ``SCHEDULER_BLOCK_SIZES`` the model builds at (tp 1, pp 1)."""
    accepted = tuple(
        b
        for b in SCHEDULER_BLOCK_SIZES
        if _buildable(name, EngineConfig(scheduler_block_size=b, state_entries=STATE_ENTRIES))
        is not None
    )
    if not accepted:  # pragma: no cover - every shipped model pages within 256 tokens
        raise ValueError(f"{name} builds at no scheduler block in {SCHEDULER_BLOCK_SIZES}")
    return accepted


def default_case(name: str, *, blocks: int = 2) -> EngineCase:
    """The model at the engine's defaults (tp 1, bf16, scheduler block 16), or at the smallest
    scheduler block it accepts when its kernels page at a larger one (MiniMax-M3: 128); two
    blocks by default, the fewest whose first and last differ."""
    engine = EngineConfig(state_entries=STATE_ENTRIES)
    if _buildable(name, engine) is None:
        engine = EngineConfig(
            scheduler_block_size=_accepted_blocks(name)[0], state_entries=STATE_ENTRIES
        )
    return EngineCase(name, engine, blocks)


# -- capacity ------------------------------------------------------------------------------------

#: Reach kinds a synthetic layer is drawn from, by the ``layer_types`` spelling.
_LAYER_KINDS = ("full_attention", "sliding_attention", "chunked_attention")


@dataclass(frozen=True)
class CapacityCase:
    """A model, an engine and a budget plan's arguments: what ``check_capacity`` is run on."""

    name: str
    config: HfConfig
    engine: EngineConfig
    budget: int
    max_model_len: int
    max_num_seqs: int
    step_tokens: int | None
    pages: str

    def make_runner(self) -> ModelRunner:
        return ModelRunner(self.config, self.engine)

    def plan_args(self) -> dict:
        return {
            "budget": self.budget,
            "max_model_len": self.max_model_len,
            "max_num_seqs": self.max_num_seqs,
            "step_tokens": self.step_tokens,
            "pages": self.pages,
        }

    def __str__(self) -> str:
        return (
            f"{self.name} {self.engine.kv_dtype} sched{self.engine.scheduler_block_size} "
            f"budget {self.budget} N {self.max_model_len} S {self.max_num_seqs} "
            f"step {self.step_tokens} {self.pages}"
        )


@st.composite
def synthetic_window_configs(draw) -> HfConfig:
    """An MHA config of a few layers, each full, sliding or chunked, of drawn widths."""
    layers = draw(st.integers(1, 8))
    kinds = draw(st.lists(st.sampled_from(_LAYER_KINDS), min_size=layers, max_size=layers))
    data = {
        "model_type": "synthetic",
        "num_hidden_layers": layers,
        "num_attention_heads": 8,
        "num_key_value_heads": draw(st.sampled_from((1, 2, 4, 8))),
        "head_dim": draw(st.sampled_from((16, 32, 64, 128))),
        "layer_types": kinds,
        "sliding_window": draw(st.integers(1, 300)),
        "attention_chunk_size": draw(st.integers(1, 300)),
        "torch_dtype": "bfloat16",
    }
    if draw(st.booleans()):
        # A second geometry for the window layers, as MiMo-V2 declares one.
        data["swa_num_key_value_heads"] = draw(st.sampled_from((1, 2, 4, 8)))
    return HfConfig(data, f"synthetic[{','.join(k[0] for k in kinds)}]")


#: Registry models drawn for a capacity case: a window model of each kind, a STATE model, MLA.
CAPACITY_MODELS = ("gemma-3-27b", "gpt-oss-120b", "mimo-v2-flash", "qwen3.5-27b", "deepseek-r1")


@st.composite
def capacity_cases(draw) -> CapacityCase:
    """A model (synthetic, or a registry model with windows, STATE or MLA), an engine, and a
    budget drawn up to twice what ``max_num_seqs`` requests of ``max_model_len`` cost priced as
    full rows -- so plans that fit, plans bound by their slots, and every refusal are drawn."""
    if draw(st.booleans()):
        config, name = draw(synthetic_window_configs()), "synthetic"
        blocks = (16, 32, 64)
    else:
        name = draw(st.sampled_from(CAPACITY_MODELS))
        config, blocks = _config(name), _accepted_blocks(name)
    engine = EngineConfig(
        kv_dtype=draw(st.sampled_from(KV_DTYPES)),
        scheduler_block_size=draw(st.sampled_from(blocks)),
    )
    runner = ModelRunner(config, engine)
    prices = runner.entry_bytes()
    n = draw(st.integers(1, 2048))
    s = draw(st.integers(1, 16))
    b = engine.scheduler_block_size
    scale = s * (prices.get(EntryClass.PAGE, 0) * -(-n // b) + prices.get(EntryClass.STATE, 0))
    # A percentage of the scale, then a few bytes either way: hypothesis draws small integers
    # often, and a budget drawn in bytes would be mostly too small for anything.
    budget = max(1, scale * draw(st.integers(1, 200)) // 100 + draw(st.integers(-512, 512)))
    step = draw(st.one_of(st.none(), st.integers(1, 2 * b)))
    pages = draw(st.sampled_from(("reserved", "shared")))
    event(f"capacity {pages}")
    return CapacityCase(name, config, engine, budget, n, s, step, pages)
