"""What ``atom-contracts layout MODEL --budget SIZE`` adds: the capacity a budget buys, per class.

Data first (:func:`capacity_report`, JSON-ready), text second (:func:`format_capacity`), as the
layout report is, so the table a person reads and the JSON a tool reads cannot disagree. Every
figure is read off the plan (`atom.pool_layout.capacity`) and the walk's reach record; nothing is
computed here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from atom.layout_report import human_bytes
from atom.pool_layout.capacity import CapacityPlan, WindowPages
from atom.runner.capacity import capacity_classes, plan_runner_capacity

#: Units a budget may be written in: binary (GiB) and decimal (GB), and bare bytes.
_UNITS = {
    "": 1,
    "b": 1,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_bytes(text: str) -> int:
    """``60GiB`` -> 64424509440; ``80GB``, ``1.5TiB`` and bare byte counts too.

    A fractional count of bytes is rounded down: a budget is what may be spent, at most.
    """
    match = _SIZE.match(text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(
            f"budget {text!r} is not a size: write bytes, or a number with one of "
            "B, KiB, MiB, GiB, TiB, KB, MB, GB, TB (60GiB)"
        )
    value = int(Fraction(match.group(1)) * _UNITS[match.group(2).lower()])
    if value < 1:
        raise ValueError(f"budget {text!r} is {value} bytes; a budget buys at least one byte")
    return value


def _reach_report(runner: Any) -> dict[str, Any]:
    reading = runner.skeleton.reaches
    page_classes, _ = capacity_classes(runner)
    return {
        "rows": {c.name: c.rows for c in page_classes},
        "sources": list(reading.sources) if reading else [],
        "notes": list(reading.notes) if reading else [],
    }


def capacity_report(
    runner: Any,
    *,
    budget: int,
    max_model_len: int,
    max_num_seqs: int,
    step_tokens: int | None = None,
    window_pages: str = WindowPages.RESERVED.value,
) -> dict[str, Any]:
    """The plan for `runner` as JSON-ready data; a `CapacityRefused` propagates by name."""
    plan: CapacityPlan = plan_runner_capacity(
        runner,
        budget=budget,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        step_tokens=step_tokens,
        pages=window_pages,
    )
    page_classes, _ = capacity_classes(runner)
    parts = {
        c.name: [{"name": p.name, "rows": p.rows, "entry_bytes": p.entry_bytes} for p in c.parts]
        for c in page_classes
    }
    report: dict[str, Any] = {
        "budget_bytes": plan.budget,
        "max_model_len": plan.max_model_len,
        "max_num_seqs": plan.max_num_seqs,
        "block_tokens": plan.block_tokens,
        "step_tokens": plan.step_tokens,
        "window_pages": plan.pages.value,
        "reach": _reach_report(runner),
        "requests": plan.requests,
        "bound_by": plan.bound_by,
        "tokens": plan.tokens,
        "used_bytes": plan.used_bytes,
        "unused_bytes": plan.unused_bytes,
        "classes": [
            {
                "name": c.name,
                "role": c.role,
                "reach": None if c.reach is None else str(c.reach),
                "rows": c.rows,
                "entry_bytes": c.entry_bytes,
                "entries": c.entries,
                "bytes": c.bytes,
                "per_request": c.per_request,
                "requests": c.requests,
                "tokens": c.tokens,
                "padding_bytes": c.padding_bytes,
                "padding_pct": round(100.0 * c.padding_bytes / c.entry_bytes, 4),
                "block_tokens": c.block_tokens,
                "parts": parts.get(c.name, []),
            }
            for c in plan.classes
        ],
    }
    if plan.pages is WindowPages.SHARED and plan.shared_groups:
        report["shared"] = {
            "page_bytes": plan.page_bytes,
            "pages": plan.page_count,
            "groups": [
                {
                    "reach": str(g.reach),
                    "layers": g.layers,
                    "groups": g.groups,
                    "padding_layers": g.padding_layers,
                    "layer_bytes": g.layer_bytes,
                    "ratio": g.ratio,
                    "block_tokens": g.block_tokens,
                    "layer_padding_bytes": g.layer_padding_bytes,
                    "padding_bytes": g.padding_bytes,
                }
                for g in plan.shared_groups
            ],
        }
    return report


def _unit(c: dict[str, Any]) -> str:
    if c["role"] == "state":
        return "slot"
    return "page" if c["block_tokens"] is None else f"block of {c['block_tokens']}"


def format_capacity(cap: dict[str, Any]) -> str:
    lines = [
        f"capacity  budget {human_bytes(cap['budget_bytes'])} ({cap['budget_bytes']} B)  "
        f"max_model_len {cap['max_model_len']}  max_num_seqs {cap['max_num_seqs']}  "
        f"step {cap['step_tokens']} tokens  windows {cap['window_pages']}"
    ]
    reach = cap["reach"]
    rows = ", ".join(f"{n} {name}" for name, n in reach["rows"].items())
    said = f" (read from {', '.join(reach['sources'])})" if reach["sources"] else ""
    lines.append(f"reach: {rows} rows{said}")
    lines.extend(f"  note: {note}" for note in reach["notes"])
    lines.append("")
    lines.append(
        f"{'class':<22} {'role':<7} {'rows':>5} {'entry':>10} {'entries':>9} "
        f"{'per request':>20} {'requests':>9} {'tokens':>10} {'padding':>8}"
    )
    for c in cap["classes"]:
        tokens = "any length" if c["tokens"] is None else str(c["tokens"])
        per = f"{c['per_request']} x {_unit(c)}"
        lines.append(
            f"{c['name']:<22} {c['role']:<7} {c['rows']:>5} {human_bytes(c['entry_bytes']):>10} "
            f"{c['entries']:>9} {per:>20} {c['requests']:>9} {tokens:>10} "
            f"{c['padding_pct']:>7.2f}%"
        )
    shared = cap.get("shared")
    if shared:
        lines.append("")
        lines.append(
            f"one pool of {shared['pages']} pages of {human_bytes(shared['page_bytes'])} "
            f"({shared['page_bytes']} B), vLLM's grouping:"
        )
        for g in shared["groups"]:
            how = (
                f"block {g['block_tokens']} tokens (x{g['ratio']})"
                if g["ratio"] > 1
                else f"layer page padded by {g['layer_padding_bytes']} B"
                if g["layer_padding_bytes"]
                else "no layer padding"
            )
            lines.append(
                f"  {g['reach']:<20} {g['layers']} layers in {g['groups']} groups, "
                f"{g['padding_layers']} empty; {how}; {g['padding_bytes']} B padding a block"
            )
    lines.append("")
    tokens = "" if cap["tokens"] is None else f"; {cap['tokens']} tokens in full-reach rows"
    lines.append(
        f"fits: {cap['requests']} requests of {cap['max_model_len']} tokens at once "
        f"(bound by {cap['bound_by']}){tokens}; {cap['unused_bytes']} B of the budget unused"
    )
    return "\n".join(lines) + "\n"
