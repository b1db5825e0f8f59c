"""Medians of a ``bench/gpu_transfer.py`` table, read back from its log.

    python3 bench/gpu_summary.py bench.log

Per block count and layout: the kernel's share of a plain copy of the same bytes (median, min)
and of the device's 4 GiB copy (median, min), for transfers over 32 MiB; then every transfer of
at most 32 MiB with its share of its plain copy, the target there being 80%.
"""

from __future__ import annotations

import re
import statistics
import sys

SMALL_BYTES = 32 << 20
LAYOUTS = ("layer-major", "entry-major", "split-planes", "v4 planes")


def rows(text: str) -> list[tuple]:
    out = []
    for line in text.splitlines():
        m = re.match(
            r"(\S+)\s+(bf16|fp8)\s+(layer-major|entry-major|split-planes|v4 planes)\s+(\d+)\s+"
            r"([\d.]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)",
            line,
        )
        if m:
            name, kv, layout, _regions, kib, blocks, k, _scatter, _index, c = m.groups()
            out.append((name, kv, layout, float(kib), int(blocks), float(k), float(c)))
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(args[0]) as f:
        text = f.read()
    device = re.search(r"plain copy of 4 GiB: (\d+) GB/s", text)
    dev = float(device.group(1)) if device else float("nan")
    table = rows(text)
    print(f"{len(table)} rows; device copy {dev:.0f} GB/s")
    for blocks in sorted({r[4] for r in table}, reverse=True):
        for layout in LAYOUTS:
            big = [r for r in table if r[4] == blocks and r[2] == layout]
            big = [r for r in big if r[3] * 1024 * r[4] > SMALL_BYTES]
            if not big:
                continue
            share = [r[5] / r[6] for r in big]
            of_dev = [r[5] / dev for r in big]
            print(
                f"{blocks:5d} {layout:12} {len(big):3d} rows  of plain copy median "
                f"{statistics.median(share):6.1%} min {min(share):6.1%}  of device median "
                f"{statistics.median(of_dev):6.1%} min {min(of_dev):6.1%}"
            )
    small = [r for r in table if r[3] * 1024 * r[4] <= SMALL_BYTES]
    if small:
        share = [r[5] / r[6] for r in small]
        print(
            f"at most 32 MiB: {sum(s >= 0.80 for s in share)} of {len(small)} rows >= 80% of a "
            f"plain copy, median {statistics.median(share):.1%}, min {min(share):.1%}"
        )
        for r, s in zip(small, share, strict=True):
            print(f"  {r[0]} {r[1]} {r[2]} x{r[4]}: {r[3] * r[4] / 1024:.1f} MiB, {s:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
