"""What every attention backend answers as a class, before any builder exists.

A backend is a class, never instantiated: its block rule (:meth:`attn_block_size`), whether a
draft of its flavour owns a pool (``DRAFT_OWNS_KV_POOL``), the pool a draft of its flavour gets
(:meth:`make_kv_pool`) and how a module's views are read out of such a pool
(:meth:`bind_module_views`). The builder that sizes, carves and binds the target's pools is
``get_builder_cls()``; keeping the per-step metadata owner apart from the pool declaration is
what lets a draft ask for a second pool without building a second builder.

The seam carries the *scheduler's* block, which every model in the process shares; each backend
answers its own block from its own config. A backend block that does not divide the scheduler's
is refused here, by both numbers, because an entry is one scheduler block and has to be a whole
number of backend blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from atom.pool_layout.refusals import require_count

if TYPE_CHECKING:
    import torch

    from atom.backends.builder import KvCacheBuilder
    from atom.models.hf_config import HfConfig
    from atom.models.modules import AttentionModule


def blocks_per_entry(scheduler_block_size: int, block_size: int, *, who: str) -> int:
    """Backend blocks in one scheduler block (one PAGE entry); a ratio, written out even at 1."""
    require_count(f"{who}: backend block size", block_size, minimum=1, unit="tokens")
    if scheduler_block_size % block_size:
        raise ValueError(
            f"{who}: scheduler block size {scheduler_block_size} is not a whole number of the "
            f"backend's {block_size}-token blocks"
        )
    return scheduler_block_size // block_size


class AttentionBackend:
    NAME: ClassVar[str] = "base"
    #: Whether a draft whose config resolves to this flavour owns a sibling pool. False means
    #: "a draft of this flavour binds into the target's pool" (MLA, and the default).
    DRAFT_OWNS_KV_POOL: ClassVar[bool] = False

    def __init__(self) -> None:  # pragma: no cover - the class is the backend
        raise TypeError(f"{type(self).__name__} is used as a class, never instantiated")

    @classmethod
    def attn_block_size(cls, hf_config: HfConfig, scheduler_block_size: int) -> int:
        raise NotImplementedError(cls.NAME)

    @classmethod
    def block_rule(cls, hf_config: HfConfig) -> str:
        """:meth:`attn_block_size` in words, for a reader choosing ``--block-size``: what block
        this flavour's kernels page at for ``hf_config``."""
        raise NotImplementedError(cls.NAME)

    @classmethod
    def get_builder_cls(cls) -> type[KvCacheBuilder]:
        raise NotImplementedError(cls.NAME)

    @classmethod
    def draft_row_kind(cls, module: AttentionModule) -> Any:
        """The row space a draft module of this flavour sits in, in the draft's own pool."""
        raise TypeError(f"backend {cls.NAME!r} has no draft pool to give module {module} a row in")

    @classmethod
    def make_kv_pool(
        cls,
        hf_config: HfConfig,
        pool_rows: Any,
        modules: list[AttentionModule],
        *,
        block_size: int,
        blocks_per_entry: int,
        kv_dtype: torch.dtype,
    ) -> Any:
        """A draft's own pool, rows from its walk (``pool_rows``). Only a flavour with
        ``DRAFT_OWNS_KV_POOL`` answers; the base raises rather than returning None, because
        whether a draft owns a pool is the flag's question, not this factory's."""
        raise TypeError(
            f"backend {cls.NAME!r} has DRAFT_OWNS_KV_POOL={cls.DRAFT_OWNS_KV_POOL}: a draft of "
            "this flavour binds into its target's pool and has none of its own"
        )

    @classmethod
    def bind_module_views(
        cls, module: AttentionModule, pool_views: Any, row: int
    ) -> dict[str, torch.Tensor]:
        raise NotImplementedError(cls.NAME)
