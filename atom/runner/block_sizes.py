"""Which scheduler block sizes a target and its draft accept together.

``--block-size`` is the scheduler's block; each backend derives the block its kernels page at from
its own config (``attn_block_size``), and the scheduler's block must be a whole number of it. A
draft with a pool of its own is blocked at the *target builder's* block -- the block tables it is
read with are the target's -- and a draft without one binds into the target's pool. No config
states which values survive all of that: MiniMax-M3 + EAGLE3 once had none ("could not start at
all ... No value existed"), and only trying each value showed it.

So this tries each: :func:`accepted_block_sizes` builds the runner at every candidate
(``CANDIDATES``: the powers of two from 1 to 1024 tokens) and prices it -- the same construction
and sizing a start runs, nothing allocated -- first the target alone, then with the draft, so a
refusal is attributed to the side that refused it. Each side's rule is stated in words from its
backend (``block_rule``), so an answer of "none" says why.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from atom.backends.selector import select_backend
from atom.engine_config import EngineConfig
from atom.models.family import attn_family
from atom.models.hf_config import HfConfig
from atom.runner.model_runner import ModelRunner

#: The scheduler block sizes tried, in tokens: every power of two an engine's ``--block-size`` is
#: commonly given, from a token a block to the largest block a shipped backend pages at (1024).
CANDIDATES = tuple(2**i for i in range(11))


@dataclass(frozen=True)
class Refusal:
    block_size: int
    #: "target" or "draft": which side's construction or price refused it.
    side: str
    reason: str


@dataclass(frozen=True)
class BlockSizes:
    target: str
    draft: str | None
    tried: tuple[int, ...]
    accepted: tuple[int, ...]
    refused: tuple[Refusal, ...]
    #: each side's rule in words: "target", and "draft" when there is one.
    rules: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "draft": self.draft,
            "tried": list(self.tried),
            "accepted": list(self.accepted),
            "rules": dict(self.rules),
            "refused": [
                {"block_size": r.block_size, "side": r.side, "reason": r.reason}
                for r in self.refused
            ],
        }

    def format_text(self) -> str:
        pair = self.target + (f" + {self.draft}" if self.draft else "")
        tried = ", ".join(map(str, self.tried))
        if self.accepted:
            head = (
                f"{pair}: scheduler block sizes accepted by {'both' if self.draft else 'it'}: "
                f"{', '.join(map(str, self.accepted))} (tried {tried} tokens)"
            )
        else:
            head = f"{pair}: none of the scheduler block sizes tried ({tried} tokens) is accepted"
        lines = [head]
        lines += [f"  {side}: {rule}" for side, rule in self.rules.items()]
        for r in self.refused:
            lines.append(f"  {r.block_size:>5} refused by the {r.side}: {r.reason}")
        return "\n".join(lines) + "\n"


def _side_rule(config: HfConfig, engine: EngineConfig) -> tuple[str, Any]:
    backend = select_backend(attn_family(config.text_config()), mha_backend=engine.mha_backend)
    return backend.block_rule(config.text_config()), backend


def _name(config: HfConfig) -> str:
    return config.source


def _priced(target: HfConfig, engine: EngineConfig, draft: HfConfig | None) -> None:
    """Build and price the runner: what a start does before it allocates."""
    runner = ModelRunner(target, engine, draft_config=draft)
    runner.entry_bytes()
    for builder in runner.builders():
        builder.paged_pool_bytes(1)


def accepted_block_sizes(
    target: HfConfig,
    draft: HfConfig | None = None,
    *,
    engine: EngineConfig | None = None,
    candidates: tuple[int, ...] = CANDIDATES,
) -> BlockSizes:
    """Every block of ``candidates`` the target (and the draft, when given) accepts at
    ``engine``'s other settings, each refusal with its side and reason, and each side's rule."""
    engine = engine or EngineConfig()
    target_rule, _ = _side_rule(target, engine)
    rules = {f"target {_name(target)}": target_rule}
    if draft is not None:
        draft_rule, draft_backend = _side_rule(draft, engine)
        if draft_backend.DRAFT_OWNS_KV_POOL:
            rules[f"draft {_name(draft)}"] = (
                "its own pool, blocked at the target builder's block (the block tables it is "
                f"read with are the target's); its own rule -- {draft_rule} -- is not read"
            )
        else:
            rules[f"draft {_name(draft)}"] = "binds into the target's pool, at the target's block"
    accepted, refused = [], []
    for size in candidates:
        at = replace(engine, scheduler_block_size=size)
        try:
            _priced(target, at, None)
        except (ValueError, TypeError) as exc:
            refused.append(Refusal(size, "target", str(exc)))
            continue
        if draft is not None:
            try:
                _priced(target, at, draft)
            except (ValueError, TypeError) as exc:
                refused.append(Refusal(size, "draft", str(exc)))
                continue
        accepted.append(size)
    return BlockSizes(
        _name(target),
        _name(draft) if draft is not None else None,
        tuple(candidates),
        tuple(accepted),
        tuple(refused),
        rules,
    )
