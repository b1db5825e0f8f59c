"""Recall of the bug-class kinds: the record's five bugs planted in ROCm/ATOM's own files.

    python bench/bug_classes.py plant

Each plant is an edit of one file of ROCm/ATOM at ffdf3bb5d, in the shape the refactor's
record describes, with its *control*: the same place as the record's fix left it. For each,
a scratch copy of ATOM's package (hard links, the edited file a real copy) is checked twice,
planted and controlled, with ATOM's maintainer declaration (``bench/bug_classes/
atom-upstream.toml``) plus the names the planted code spells (``RECALL_NAMES``: the
record's vocabulary for rows, layers and the index cache's element size). A plant is caught
when the planted copy has a finding of its kind on the planted lines and the control has
none there.

The sizing plant is no plant: ATOM at ffdf3bb5d still has the bug the refactor fixed
(`sparse_layers * physical_block_size * index_dim` charged per scheduler block); its control
is the fix, a `* self.block_ratio` more.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bug_classes import CONFIGS, check, project, tree_root

# What the planted code spells beyond what the maintainer declaration names: pool rows, a
# stage's layer bounds, layer counts, the backend's page in tokens, the indexer's elements
# per token and an element's bytes, and a transfer unit's bytes.
RECALL_NAMES = {
    "pool_rows": "row",
    "*_layer": "layer",
    "*_layers": "layer",
    "physical_block_size": "token/page",
    "index_dim": "element/token",
    "element_size": "byte/element",
    "unit_bytes": "byte/block",
}


@dataclass(frozen=True)
class Plant:
    name: str
    code: str  # the finding's code prefix
    path: str  # relative to the tree
    old: str
    planted: str
    control: str
    says: str  # a substring of the planted finding's message


LOCAL_DRAFT_ROWS = '''    def _local_draft_rows(self) -> int:
        """A shared draft's rows of the MLA pool on this pipeline stage."""
        inner = self.model
        while not hasattr(inner, "start_layer") and hasattr(inner, "model"):
            inner = inner.model
        pool_rows = int(self.kv_cache.shape[0])
{body}

'''
PUBLISH = '''    def publish_batch_ids(self, bs: int):
        """Stage the row -> sequence map through the buffer's pinned host mirror."""
        return self._stage("v4_batch_id_per_token", self._row_ids_np[:bs])

    @staticmethod
    def _make_gather_slot('''

_REGION = (
    "            block_regions.append(\n"
    "                KVTransferRegion(\n"
    "                    base_addr=t.data_ptr(),\n"
    "                    total_bytes=t.numel() * t.element_size(),\n"
    "                    unit_bytes=bpb,\n"
    "                )\n"
    "            )\n"
)

PLANTS = (
    Plant(
        "_local_draft_rows: pool rows minus the stage's layer span",
        "AC80",
        "atom/model_engine/model_runner.py",
        "    def run_model(\n",
        LOCAL_DRAFT_ROWS.format(
            body="        return pool_rows - (inner.end_layer - inner.start_layer)"
        )
        + "    def run_model(\n",
        LOCAL_DRAFT_ROWS.format(
            body="        return sum(1 for m in self.drafter.modules() if m.use_mla)"
        )
        + "    def run_model(\n",
        "layer",
    ),
    Plant(
        "sizing charged per backend page, allocated blocks * block_ratio deep",
        "AC80",
        "atom/model_ops/attentions/aiter_attention.py",
        "                sparse_layers\n                * runner.physical_block_size\n"
        "                * index_dim\n",
        "                sparse_layers\n                * runner.physical_block_size\n"
        "                * index_dim\n",
        "                sparse_layers\n                * runner.physical_block_size\n"
        "                * self.block_ratio\n                * index_dim\n",
        "byte/page",
    ),
    Plant(
        "transfer * block_ratio where stride(0) is already per block",
        "AC80",
        "atom/model_ops/attentions/aiter_mla.py",
        "            t = runner.kv_cache[layer_id]\n"
        "            bpb = t.stride(0) * t.element_size() * self.block_ratio\n" + _REGION,
        "            t = runner.kv_cache[layer_id]\n"
        "            block_bytes = t.stride(0) * t.element_size()  # a row is a scheduler block\n"
        "            bpb = block_bytes * self.block_ratio\n" + _REGION,
        "            t = runner.kv_cache[layer_id]\n"
        "            block_bytes = t.stride(0) * t.element_size()  # a row is a scheduler block\n"
        "            bpb = block_bytes\n" + _REGION,
        "unit_bytes",
    ),
    Plant(
        "V4 indexer meta: the decode scorer reads a prefill-only key",
        "AC81",
        "atom/models/deepseek_v4.py",
        '        cta_info = indexer_meta["fp4_cta_info"]\n',
        '        row_to_batch = indexer_meta["batch_id_per_token_gpu"]\n'
        '        cta_info = indexer_meta["fp4_cta_info"]\n',
        "        row_to_batch = get_forward_context().attn_metadata.batch_id_per_token\n"
        '        cta_info = indexer_meta["fp4_cta_info"]\n',
        "batch_id_per_token_gpu",
    ),
    Plant(
        "prepare_mtp_decode routes the row map through publish_batch_ids",
        "AC82",
        "atom/model_ops/attentions/deepseek_v4_attn.py",
        "        win = self.window_size  # SWA prefix max per token\n",
        "        win = self.window_size  # SWA prefix max per token\n"
        "        attn_metadata.batch_id_per_token = self.publish_batch_ids(bs)\n",
        "        win = self.window_size  # SWA prefix max per token\n"
        "        attn_metadata.batch_id_per_token = self._row_ids_gpu[:bs].clone()\n",
        "publish_batch_ids",
    ),
)
# The publish plant also adds the helper the planted call names (both versions define it).
HELPER = {
    "atom/model_ops/attentions/deepseek_v4_attn.py": (
        "    @staticmethod\n    def _make_gather_slot(",
        PUBLISH,
    )
}


def config() -> Path:
    """ATOM's declaration plus the recall vocabulary and the record's declared names."""
    text = (CONFIGS / "atom-upstream.toml").read_text()
    extra = ", ".join(f'"{k}" = "{v}"' for k, v in RECALL_NAMES.items())
    text = text.replace(
        ' }\n\n[[tool.atom-contracts.contracts]]\nid = "metadata-keys"',
        f', {extra} }}\ncounts = ["layer"]\n\n[[tool.atom-contracts.contracts]]\nid = "metadata-keys"',
        1,
    )
    text = text.replace(
        'kind = "published-keys"\n',
        'kind = "published-keys"\nproducers = ["*._build_v4_indexer_meta"]\n',
        1,
    )
    text = text.replace(
        'forbidden = { "*.copy_to_gpu" = "stages through the pinned host mirror",',
        'forbidden = { "*.publish_batch_ids" = "stages through a pinned host mirror fenced once '
        'per forward", "*.copy_to_gpu" = "stages through the pinned host mirror",',
        1,
    )
    out = Path(tempfile.gettempdir()) / "atom-contracts-bug-classes" / "recall.toml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return out


def edited(plant: Plant, version: str) -> tuple[str, range]:
    original = (tree_root("atom-upstream") / plant.path).read_text()
    if original.count(plant.old) != 1:
        raise SystemExit(f"{plant.name}: the anchor is not once in {plant.path}")
    new = plant.planted if version == "planted" else plant.control
    start = original.index(plant.old)
    text = original[:start] + new + original[start + len(plant.old) :]
    first = text[:start].count("\n") + 1
    lines = range(first, first + new.count("\n") + 1)
    helper = HELPER.get(plant.path)
    if helper is not None and plant.code == "AC82":
        anchor, added = helper
        text = text.replace(anchor, added, 1)
    return text, lines


def run(plant: Plant, version: str, declaration: Path) -> list[dict]:
    where = Path(tempfile.gettempdir()) / "atom-contracts-bug-classes" / f"plant-{version}"
    shutil.rmtree(where, ignore_errors=True)
    project("atom-upstream", declaration, into=where)
    text, lines = edited(plant, version)
    target = where / "tree" / plant.path
    target.unlink()  # a hard link: write a file of its own, never into the tree
    target.write_text(text)
    found = [
        f
        for f in check(where)
        if f["path"] == plant.path and f["line"] in lines and f["code"].startswith(plant.code)
    ]
    shutil.rmtree(where, ignore_errors=True)
    return found


def cmd_plant(args) -> int:
    declaration = config()
    caught = 0
    for plant in PLANTS:
        planted = run(plant, "planted", declaration)
        control = run(plant, "control", declaration)
        hit = any(plant.says in f["message"] for f in planted)
        ok = hit and not control
        caught += ok
        print(f"{'caught' if ok else 'MISSED'}: {plant.name}")
        for f in planted:
            print(f"    planted  {f['code']} {f['path']}:{f['line']}: {f['message'][:200]}")
        for f in control:
            print(f"    control  {f['code']} {f['path']}:{f['line']}: {f['message'][:200]}")
    print(f"{caught} of {len(PLANTS)} caught, each control clean")
    return 0 if caught == len(PLANTS) else 1


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(__file__))
    sys.exit(cmd_plant(None))
