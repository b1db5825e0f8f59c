"""Whether ``--fix --unsafe-fixes`` leaves formatted files formatted, on a real tree.

    python bench/format_stability.py TREE [TREE ...] [--line-length N] [--keep DIR]

Each tree (a package folder, e.g. ``/work/trees/sglang-0.4.6/sglang``) is copied into a
scratch project declaring a contract of every per-file kind (``bench/sweep.py``'s
declaration), with ``[tool.ruff] line-length`` set (88, ruff's default, unless given). Then:

1. ``ruff format --check``: the files already unformatted (the tree's own style);
2. ``atom-contracts check --fix --unsafe-fixes --no-cache`` (this checkout's code);
3. ``ruff format --check`` again: a file that passed in 1 and fails now was unformatted by a
   fix. Each is printed with ruff's diff, and counted.

Prints the files fixed, the fixes, the files unformatted before, and the files the fixes
unformatted; exits 1 when that last count is not 0. Not a timing: it runs ruff and the
checker once each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

from sweep import declaration  # noqa: E402


def _ruff() -> str:
    found = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(found).exists():
        raise SystemExit("ruff is not installed (pip install ruff)")
    return found


def unformatted(ruff: str, project: Path) -> set[str]:
    run = subprocess.run(
        [ruff, "format", "--check", "--output-format", "concise", "."],
        cwd=project,
        capture_output=True,
        text=True,
    )
    return {line.split(":", 1)[0] for line in run.stdout.splitlines() if ":" in line}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--line-length", type=int, default=88)
    parser.add_argument("--keep", type=Path, help="scratch folder to keep (default: a temporary)")
    parser.add_argument("--quiet", action="store_true", help="no diffs, only the counts")
    args = parser.parse_args(argv)
    ruff = _ruff()
    bad_total = 0
    for tree in args.trees:
        scratch = Path(args.keep or tempfile.mkdtemp(prefix="format-stability-"))
        project = scratch / tree.name
        if project.exists():
            shutil.rmtree(project)
        shutil.copytree(tree, project / tree.name, symlinks=True)
        (project / "pyproject.toml").write_text(
            declaration(".", None, None) + f"\n[tool.ruff]\nline-length = {args.line_length}\n"
        )
        before = unformatted(ruff, project)
        from checkers import api

        result = api.check(cwd=project, fix=True, unsafe_fixes=True, use_cache=False)
        after = unformatted(ruff, project)
        made = sorted(after - before)
        print(f"{tree}: ruff {subprocess.check_output([ruff, '--version'], text=True).strip()}")
        print(f"  line length                         {args.line_length}")
        print(f"  files fixed                         {len(result.fixes)}")
        print(f"  fixes applied                       {result.fixed}")
        print(f"  unformatted before the fixes        {len(before)}")
        print(f"  formatted files the fixes unformat  {len(made)}")
        for rel in made:
            print(f"    {rel}")
            if not args.quiet:
                diff = subprocess.run(
                    [ruff, "format", "--diff", rel], cwd=project, capture_output=True, text=True
                ).stdout
                print("      " + diff.replace("\n", "\n      "))
        bad_total += len(made)
        if args.keep is None:
            shutil.rmtree(scratch)
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
