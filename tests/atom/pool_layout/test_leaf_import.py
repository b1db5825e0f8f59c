"""`import atom.pool_layout` loads nothing of atom but itself, and only stdlib + torch."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import json, sys
before = set(sys.modules)
import torch
after_torch = set(sys.modules)
import atom.pool_layout
after = set(sys.modules)
print(json.dumps({
    "torch_loaded": sorted(after_torch - before),
    "new": sorted(after - after_torch),
    "stdlib": sorted(sys.stdlib_module_names),
}))
"""


@functools.cache
def _probe() -> dict:
    """One fresh interpreter for both tests: importing torch is most of its cost."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO_ROOT,
    )
    return json.loads(out.stdout)


def test_importing_pool_layout_loads_no_other_part_of_atom_and_nothing_but_stdlib():
    report = _probe()
    new = report["new"]
    atom_modules = [m for m in new if m == "atom" or m.startswith("atom.")]
    assert atom_modules, "the probe imported nothing: it would pass vacuously"
    stray = [m for m in atom_modules if m != "atom" and not m.startswith("atom.pool_layout")]
    assert stray == []
    stdlib = set(report["stdlib"])
    torch_roots = {m.split(".")[0] for m in report["torch_loaded"]}
    foreign = sorted(
        m
        for m in new
        if not (m == "atom" or m.startswith("atom."))
        and m.split(".")[0] not in stdlib
        and m.split(".")[0] not in torch_roots
    )
    assert foreign == []


def test_every_member_module_is_loaded_by_the_package():
    members = {p.stem for p in (REPO_ROOT / "atom" / "pool_layout").glob("*.py")} - {"__init__"}
    loaded = {m.split(".")[-1] for m in _probe()["new"] if m.startswith("atom.pool_layout.")}
    assert members == loaded
