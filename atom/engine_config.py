"""The engine's own arguments: what a user chooses, as opposed to what a config declares.

Only the choices that change a pool are here -- tensor/pipeline rank, KV dtype, the scheduler's
block, whether the declared MTP layers are built, which MHA backend binds. Each is validated
once, on construction, with a message naming the value, because every later reader trusts it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

#: KV dtypes by the name the command line uses, each to the name of its torch dtype. fp8 is e4m3
#: (OCP, CUDA's) with fp32 scales where the flavour dequantizes per token and head (MHA); MLA's fp8
#: latent carries no scale plane. ROCm's e4m3 is ``float8_e4m3fnuz`` (no negative zero, max 240)
#: and e5m2 trades a mantissa bit for range: each is fp8 to every reader, through
#: ``atom.pool_layout.is_fp8``. Names, not dtypes, so that this module -- and the command line
#: whose defaults and choices are read from it -- loads without torch; ``kv_torch_dtype`` resolves.
KV_DTYPES: dict[str, str] = {
    "bf16": "bfloat16",
    "fp8": "float8_e4m3fn",
    "fp8_e4m3fnuz": "float8_e4m3fnuz",
    "fp8_e5m2": "float8_e5m2",
}

MHA_BACKENDS = ("aiter", "triton")

#: A sparse indexer's key-cache dtype where the flavour offers a choice (DeepSeek-V4): packed
#: fp4 (E2M1 + e8m0 group scales) is the engine's native default on gfx950, where ATOM's pull
#: request #2147 measured its V4 goldens; fp8 keys carry one fp32 scale per row.
INDEX_CACHE_DTYPES = ("fp4", "fp8")


@dataclass(frozen=True)
class EngineConfig:
    tp_size: int = 1
    pp_size: int = 1
    pp_rank: int = 0
    kv_dtype: str = "bf16"
    #: tokens per scheduler block: what ``req.block_ids`` count in, and what one PAGE entry holds.
    scheduler_block_size: int = 16
    #: build the MTP layers the config declares (``--no-spec`` turns them off).
    include_mtp: bool = True
    mha_backend: str = "aiter"
    #: STATE entries to allocate: one per request slot (max_num_seqs).
    state_entries: int = 1
    #: draft tokens a speculative step proposes (``--num-speculative-tokens``): a flavour whose
    #: per-request rings must hold the lookahead (DeepSeek-V4's windows and compressor rings)
    #: sizes them by it. 0 is no speculation.
    num_speculative_tokens: int = 0
    #: the sparse indexer's key-cache dtype, for a flavour that offers the choice (V4).
    index_cache_dtype: str = "fp4"

    def __post_init__(self) -> None:
        if self.kv_dtype not in KV_DTYPES:
            raise ValueError(f"kv_dtype {self.kv_dtype!r} is not one of {sorted(KV_DTYPES)}")
        if self.mha_backend not in MHA_BACKENDS:
            raise ValueError(f"mha_backend {self.mha_backend!r} is not one of {MHA_BACKENDS}")
        if self.index_cache_dtype not in INDEX_CACHE_DTYPES:
            raise ValueError(
                f"index_cache_dtype {self.index_cache_dtype!r} is not one of {INDEX_CACHE_DTYPES}"
            )
        spec = self.num_speculative_tokens
        if isinstance(spec, bool) or not isinstance(spec, int) or spec < 0:
            raise ValueError(f"num_speculative_tokens must be a non-negative integer, got {spec!r}")
        for name in ("tp_size", "pp_size", "scheduler_block_size", "state_entries"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    @property
    def kv_torch_dtype(self) -> torch.dtype:
        import torch

        return getattr(torch, KV_DTYPES[self.kv_dtype])

    @property
    def is_fp8(self) -> bool:
        # The pool's one answer, so a name added above cannot be fp8 here and bf16 there.
        from atom.pool_layout import is_fp8

        return is_fp8(self.kv_torch_dtype)
