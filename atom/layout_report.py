"""What ``atom-contracts layout`` prints: a model's pools, read off the runner's own declarations.

The report is data first (:func:`layout_report`, a JSON-ready dict) and text second
(:func:`format_text`), so the table a person reads and the JSON a tool reads cannot say different
things. Nothing is allocated: every number comes from the walk, the specs and each pool's
``field_groups`` -- the list its price and its carve both walk -- at one entry.

Field ``offset`` is the field's byte offset inside one entry's price (groups in declaration
order). In a layer-major pool a field's region starts at ``entries x offset`` and row ``r`` of it
``entries x row_bytes x r`` further on; that is the arithmetic ``LayerMajorArena`` carves with.
"""

from __future__ import annotations

from typing import Any

from atom.pool_layout import EntryClass, walk
from atom.runner.model_runner import ModelRunner


def human_bytes(nbytes: int) -> str:
    """``571392`` -> ``558.0 KiB``; exact bytes stay in the JSON."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{nbytes} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _pool_report(builder: Any, name: str, pool: Any, entry_class: EntryClass) -> dict[str, Any]:
    fields = []
    cursor = 0
    data = padding = 0
    for group_index, group in enumerate(pool.field_groups):
        if not group:
            continue
        w = walk(group, align=pool.align)
        for f in group:
            fields.append(
                {
                    "name": f.name,
                    "group": group_index,
                    "rows": f.rows,
                    "shape": list(f.shape),
                    "dtype": _dtype_name(f.dtype),
                    "row_bytes": f.row_bytes,
                    "bytes": f.bytes,
                    "offset": cursor + w.offsets[f.name],
                }
            )
        cursor += w.entry_bytes
        data += w.data_bytes
        padding += w.padding_bytes
    entry_bytes = pool.entry_bytes
    report: dict[str, Any] = {
        "name": f"{builder.name}.{name}",
        "builder": builder.name,
        "entry_class": entry_class.value,
        "entry_bytes": entry_bytes,
        "data_bytes": data,
        "padding_bytes": padding,
        "padding_pct": round(100.0 * padding / entry_bytes, 4) if entry_bytes else 0.0,
        "fields": fields,
    }
    if entry_class is EntryClass.PAGE:
        report["backend_block_size"] = pool.block_size
        report["blocks_per_entry"] = pool.blocks_per_entry
        report["entry_tokens"] = pool.entry_tokens
        layout = getattr(pool, "layout", None)
        if layout is not None:
            report["layout"] = layout.value
    return report


def layout_report(runner: ModelRunner) -> dict[str, Any]:
    pools = []
    for builder in runner.builders():
        for name, pool in builder.paged_pools.items():
            pools.append(_pool_report(builder, name, pool, EntryClass.PAGE))
        for name, pool in builder.state_pools.items():
            pools.append(_pool_report(builder, name, pool, EntryClass.STATE))
    entry_classes: dict[str, Any] = {}
    for entry_class, nbytes in runner.entry_bytes().items():
        members = [p for p in pools if p["entry_class"] == entry_class.value]
        pad = sum(p["padding_bytes"] for p in members)
        entry_classes[entry_class.value] = {
            "entry_bytes": nbytes,
            "pools": [p["name"] for p in members],
            "padding_bytes": pad,
            "padding_pct": round(100.0 * pad / nbytes, 4) if nbytes else 0.0,
            "per": (
                f"scheduler block ({runner.engine.scheduler_block_size} tokens)"
                if entry_class is EntryClass.PAGE
                else "request"
            ),
        }
    mtp = runner.skeleton.mtp_modules
    draft = None
    if runner.draft_config is not None:
        draft = {
            "config": runner.draft_config.source,
            "family": runner.draft_family.value,
            "owns_pool": runner.draft_builder is not None,
            "modules": len(runner.draft_modules),
            "block_size": runner.builder.block_size,
        }
    return {
        "model": runner.hf_config.source,
        "model_type": runner.text_config.model_type,
        "family": runner.family.value,
        "backend": runner.backend.NAME,
        "tp": runner.engine.tp_size,
        "pp": runner.engine.pp_size,
        "pp_rank": runner.engine.pp_rank,
        "kv_dtype": runner.engine.kv_dtype,
        "scheduler_block_size": runner.engine.scheduler_block_size,
        "backend_block_size": runner.builder.block_size,
        "blocks_per_entry": runner.builder.blocks_per_entry,
        "mtp_layers": len(mtp),
        "draft": draft,
        "entry_classes": entry_classes,
        "rows": runner.row_counts(),
        "modules": len(runner.bound_modules()),
        "pools": pools,
    }


def format_text(report: dict[str, Any]) -> str:
    lines = []
    lines.append(
        f"{report['model']}  ({report['model_type']}, family {report['family']}, "
        f"backend {report['backend']})"
    )
    lines.append(
        f"tp {report['tp']}  kv {report['kv_dtype']}  scheduler block {report['scheduler_block_size']}"
        f" tokens = {report['blocks_per_entry']} x {report['backend_block_size']}-token backend blocks"
    )
    spec = f"MTP layers {report['mtp_layers']} (bound into the target's pool)"
    if report["draft"]:
        d = report["draft"]
        where = "its own sibling pool" if d["owns_pool"] else "the target's pool"
        spec += f"; draft {d['config']} ({d['family']}, {d['modules']} modules) in {where}"
    lines.append(spec)
    lines.append("")
    lines.append(f"{'entry class':<12} {'entry_bytes':>12} {'':>11}  {'padding':>8}  per")
    for name, ec in report["entry_classes"].items():
        lines.append(
            f"{name:<12} {ec['entry_bytes']:>12} {human_bytes(ec['entry_bytes']):>11}  "
            f"{ec['padding_pct']:>7.2f}%  {ec['per']}"
        )
    lines.append("")
    lines.append("rows: " + ", ".join(f"{k} {n}" for k, n in report["rows"].items()))
    for pool in report["pools"]:
        lines.append("")
        head = (
            f"pool {pool['name']}  {pool['entry_class']}  entry {human_bytes(pool['entry_bytes'])}"
            f" ({pool['entry_bytes']} B)  padding {pool['padding_bytes']} B ({pool['padding_pct']:.2f}%)"
        )
        if "backend_block_size" in pool:
            head += f"  block {pool['blocks_per_entry']} x {pool['backend_block_size']}"
            if "layout" in pool:
                head += f"  {pool['layout']}"
        lines.append(head)
        lines.append(
            f"  {'field':<12} {'rows':>5}  {'shape per row':<24} {'dtype':<14} "
            f"{'bytes/entry':>12}  {'offset':>9}"
        )
        for f in pool["fields"]:
            shape = "(" + ", ".join(map(str, f["shape"])) + ")"
            lines.append(
                f"  {f['name']:<12} {f['rows']:>5}  {shape:<24} {f['dtype']:<14} "
                f"{human_bytes(f['bytes']):>12}  {f['offset']:>9}"
            )
    return "\n".join(lines) + "\n"
