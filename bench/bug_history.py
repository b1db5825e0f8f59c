"""Recall on bugs the engines fixed: each case's parent and fix, checked with the engine's contract.

    python bench/bug_history.py run [N ...]     # every case (or the Nth ones), parent and fix
    python bench/bug_history.py list            # the cases

The cases are ``bench/bug_history.toml``: a fix commit of vLLM or SGLang whose parent has a
bug of one of the three classes. For each, the package is ``git archive``d at the parent and
at the fix from the repository's mirror (``/work/.mirror/<owner>+<name>/repo``, as the
``fetch`` tool leaves it, or ``$ATOM_CONTRACTS_MIRRORS``), and both are checked with the one
contract the case names, taken from ``bench/bug_classes/<repo>.toml`` as it stands there.

A case is **caught** when the parent has a finding of the contract on a line the fix
changed -- for reachable-calls, a chain whose last hop (the forbidden call) is on one --
that the fix no longer has (the same code, file and message, its numbers aside); **noisy**
besides, when the fix has a finding on a line it changed that the parent had not. Otherwise
it is **missed**. A case whose verdict differs from the one ``recorded`` is marked ``!``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "bench" / "bug_history.toml"
CONFIGS = REPO / "bench" / "bug_classes"
MIRRORS = Path(os.environ.get("ATOM_CONTRACTS_MIRRORS", "/work/.mirror"))
HOP = re.compile(r"\(tree/([^():]+):(\d+)[),]")
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)

# The checker's own TOML spelling and the bug-class checks, from this checkout.
sys.path[:0] = [p for p in (str(REPO), str(REPO / "bench")) if p not in sys.path]


def load() -> dict:
    with open(CASES, "rb") as fh:
        return tomllib.load(fh)


def git(mirror: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", f"--git-dir={mirror}", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} in {mirror}: {done.stderr.strip()}")
    return done.stdout


def mirror_of(repo: dict) -> Path:
    where = MIRRORS / repo["mirror"].replace("/", "+") / "repo"
    if not where.is_dir():
        raise SystemExit(
            f"no mirror of {repo['mirror']} at {where} (fetch github:{repo['mirror']}, "
            "or set ATOM_CONTRACTS_MIRRORS to the folder that holds it)"
        )
    return where


def changed_lines(mirror: Path, parent: str, fix: str, repo: dict) -> dict[str, set[int]]:
    """The parent's lines the fix changed, by path in the checked tree (``sglang/srt/...``);
    a pure insertion counts the line before it and the line after."""
    prefix = f"{repo['package-dir']}/" if repo["package-dir"] else ""
    out: dict[str, set[int]] = {}
    for chunk in git(mirror, "diff", "-U0", parent, fix, "--", prefix + repo["package"]).split(
        "diff --git "
    )[1:]:
        head = re.search(r"^--- a/(\S+)", chunk, re.M)
        if head is None:
            continue  # a file the fix adds: no parent line
        path = head.group(1).removeprefix(prefix)
        lines = out.setdefault(path, set())
        for start, count in HUNK.findall(chunk):
            first, n = int(start), 1 if count == "" else int(count)
            lines.update(range(first, first + n) if n else (first, first + 1))
    return out


def contract_toml(config: str, contract_id: str, entries: list[str] | None) -> str:
    from checkers.rule_docs import toml_key, toml_value

    with open(CONFIGS / f"{config}.toml", "rb") as fh:
        declared = tomllib.load(fh)
    tool = declared["tool"]["atom-contracts"]
    (table,) = [c for c in tool["contracts"] if c["id"] == contract_id]
    if entries is not None:
        table = {**table, "entries": entries}
    head = {k: v for k, v in tool.items() if k != "contracts"}
    lines = [
        "[tool.atom-contracts]",
        *(f"{toml_key(k)} = {toml_value(v)}" for k, v in head.items()),
    ]
    lines += ["", "[[tool.atom-contracts.contracts]]"]
    lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def check(where: Path) -> list[dict]:
    """Every finding in ``where`` (a contract that failed on a file stops the run)."""
    from bug_classes import check as checked

    return [{**f, "path": f"tree/{f['path']}"} for f in checked(where)]


def spots(finding: dict) -> list[tuple[str, int]]:
    """Where a finding says the bug is: a chain's last hop (the forbidden call's line), or
    the finding's own line."""
    hops = HOP.findall(finding["message"])
    if finding["kind"] == "reachable-calls" and hops:
        path, line = hops[-1]
        return [(path, int(line))]
    return [(finding["path"].removeprefix("tree/"), finding["line"])]


def same(finding: dict) -> tuple:
    return (finding["code"], finding["path"], re.sub(r"\d+", "N", finding["message"]))


def verdict(before: list[dict], after: list[dict], changed: dict[str, set[int]]) -> tuple:
    """``(verdict, the parent's findings on changed lines the fix lost, the fix's new ones)``."""

    def on_changed(f):
        return any(line in changed.get(path, ()) for path, line in spots(f))

    kept_after = {same(f) for f in after}
    kept_before = {same(f) for f in before}
    gone = [f for f in before if on_changed(f) and same(f) not in kept_after]
    new = [f for f in after if on_changed(f) and same(f) not in kept_before]
    if not gone:
        return "missed", gone, new
    return ("noisy" if new else "caught"), gone, new


def run_case(number: int, case: dict, repos: dict, scratch: Path) -> str:
    repo = repos[case["repo"]]
    mirror = mirror_of(repo)
    fix = case["fix"]
    parent = git(mirror, "rev-parse", f"{fix}^").strip()
    changed = changed_lines(mirror, parent, fix, repo)
    declared = contract_toml(case["repo"], case["contract"], case.get("entries"))
    found = {}
    for side, commit in (("before", parent), ("after", fix)):
        where = scratch / f"{number}-{side}"
        (where / "tree").mkdir(parents=True)
        spec = f"{commit}:{repo['package-dir']}" if repo["package-dir"] else commit
        archive = subprocess.run(
            ["git", f"--git-dir={mirror}", "archive", spec, repo["package"]],
            capture_output=True, check=True,
        )  # fmt: skip
        subprocess.run(["tar", "x", "-C", str(where / "tree")], input=archive.stdout, check=True)
        (where / "pyproject.toml").write_text(declared)
        found[side] = check(where)
    got, gone, new = verdict(found["before"], found["after"], changed)
    mark = " " if got == case["recorded"] else "!"
    print(
        f"{mark} [{number}] {case['repo']} {fix[:9]} (#{case['pull']}) {case['contract']}: "
        f"{got} (recorded {case['recorded']}); {len(found['before'])} findings before, "
        f"{len(found['after'])} after",
        flush=True,
    )
    for f in gone:
        print(f"      caught: {f['code']} {f['path'].removeprefix('tree/')}:{f['line']}")
    for f in new:
        print(f"      new in the fix: {f['code']} {f['path'].removeprefix('tree/')}:{f['line']}")
    if got == "missed" and case["why"]:
        print(f"      why: {case['why']}")
    return got


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="check each case's parent and fix")
    run.add_argument("numbers", nargs="*", type=int, help="the cases to run (default: all)")
    sub.add_parser("list", help="the cases")
    args = parser.parse_args(argv)
    data = load()
    cases = list(enumerate(data["case"]))
    if args.cmd == "list":
        for number, case in cases:
            print(f"[{number}] {case['repo']} {case['fix'][:9]} {case['contract']}: {case['bug']}")
        return 0
    wanted = [c for c in cases if not args.numbers or c[0] in args.numbers]
    tally: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="atom-contracts-history-") as tmp:
        for number, case in wanted:
            got = run_case(number, case, data["repos"], Path(tmp))
            tally[got] = tally.get(got, 0) + 1
    print(", ".join(f"{k} {v}" for k, v in sorted(tally.items())), f"of {len(wanted)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
