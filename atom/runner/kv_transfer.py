"""The runner's transfer: the regions its builders export, and the wire manifest read off them.

The regions live in ``atom.pool_layout.transfer`` (the target and draft builders both export
through them, and the builders sit below the runner); the manifest's format and comparison in
``atom.pool_layout.manifest``. What this module adds is the runner's half of a manifest: which
regions it describes -- ``kv_transfer`` (one unit a scheduler block) and ``state_transfer`` (one
unit a request slot), exactly the region lists a transfer moves -- and the header only the runner
can state (the model, its config, the KV dtype, the scheduler block, the ranks, the paged layout
each builder binds).

A model is named by its config's ``_model`` (the registry's) or its source, and identified by a
digest of the config itself: two copies of one config.json on two hosts are one model, and a
config that differs in any field is another, whatever its name.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from atom.pool_layout.manifest import WireManifest, describe_regions
from atom.pool_layout.transfer import KVTransferTensors, TransferRegion, owned_regions, owned_role

if TYPE_CHECKING:
    from atom.models.hf_config import HfConfig
    from atom.runner.model_runner import ModelRunner

__all__ = [
    "KVTransferTensors",
    "TransferRegion",
    "config_digest",
    "owned_regions",
    "owned_role",
    "wire_manifest",
]


def config_digest(config: HfConfig) -> str:
    """sha256 of a config's own fields (the registry's ``_``-prefixed notes left out), in a
    canonical JSON spelling: the model's identity, whatever file or name it was loaded by."""
    fields = {k: v for k, v in config.as_dict().items() if not k.startswith("_")}
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _model_name(config: HfConfig | None) -> str:
    if config is None:
        return "none"
    return str(config.get("_model") or config.source)


def wire_manifest(runner: ModelRunner) -> WireManifest:
    """The manifest of ``runner``'s pool set, as built: its header, its PAGE regions and, when it
    keeps per-request state, its STATE regions. A pool set that refuses transfer (a builder's
    reason on ``kv_transfer``) is refused here, by that reason, before anything is described."""
    if runner.kv_transfer is None:
        raise ValueError(
            "no wire manifest: the runner has registered no transfer regions (initialize it, or "
            "import a peer's pool, first)"
        )
    runner.kv_transfer.require_transferable()
    engine = runner.engine
    header: dict[str, str | int] = {
        "model": _model_name(runner.hf_config),
        "config": config_digest(runner.hf_config),
        "draft": _model_name(runner.draft_config),
        "draft_config": config_digest(runner.draft_config) if runner.draft_config else "none",
        "family": runner.family.value,
        "kv_dtype": engine.kv_dtype,
        "scheduler_block_size": engine.scheduler_block_size,
        "tp": engine.tp_size,
        "pp": engine.pp_size,
        "pp_rank": engine.pp_rank,
        "layouts": ",".join(f"{b.name}={b.layout}" for b in runner.builders()),
    }
    sets = [describe_regions("page", runner.kv_transfer.regions)]
    if runner.state_transfer:
        sets.append(describe_regions("state", runner.state_transfer))
    return WireManifest.of(header, sets)
