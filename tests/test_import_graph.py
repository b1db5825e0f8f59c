"""The house's picture, read from the imports: no loop between top-level packages, none in atom/.

The project's own contracts (pyproject.toml) name each never -- contracts imports nothing of
checkers, checkers nothing of hooks, the static path nothing of atom or torch, a builder
nothing of the runner. This reads every ``import`` statically (``ast``, nothing is imported)
and holds the general shape those nevers are instances of: the graph of top-level packages
has no cycle, and neither has the graph of atom/'s subpackages, so no module of atom/ imports
upward. Every import counts, at module level or inside a function; ``if TYPE_CHECKING:``
imports count too, since a type a module names is still a dependency of its source.

``python tests/test_import_graph.py`` prints both graphs.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOP = ("atom", "checkers", "contracts", "hooks")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports() -> dict[str, set[str]]:
    """Each module of the top-level packages -> the absolute module names it imports."""
    found: dict[str, set[str]] = {}
    for package in TOP:
        for path in sorted((REPO / package).rglob("*.py")):
            name = _module_name(path)
            is_package = path.name == "__init__.py"
            targets: set[str] = set()
            for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
                if isinstance(node, ast.Import):
                    targets.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = name.split(".")
                        base = base[: len(base) - node.level + (1 if is_package else 0)]
                        stem = ".".join(base + ([node.module] if node.module else []))
                    else:
                        stem = node.module or ""
                    targets.add(stem)
                    # `from pkg import sub` may name a submodule: count it as one.
                    targets.update(f"{stem}.{alias.name}" for alias in node.names)
            found[name] = targets
    return found


def _group(module: str, depth: int) -> str:
    return ".".join(module.split(".")[:depth])


def graph(prefix: str, depth: int) -> dict[str, set[str]]:
    """Edges between groups of modules under ``prefix`` (their first ``depth`` name parts)."""
    known = imports()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in known.items():
        if not module.startswith(prefix):
            continue
        source = _group(module, depth)
        for target in targets:
            if target in known and target.startswith(prefix):
                group = _group(target, depth)
                if group != source:
                    edges[source].add(group)
    return dict(edges)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(edges) | {n for targets in edges.values() for n in targets}):
        if node not in index:
            visit(node)
    return found


def test_the_finder_sees_a_loop_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_relative_and_lazy_imports():
    # checkers/check_command.py imports the api only inside a function, and relatively.
    edges = imports()
    assert "checkers.api" in edges["checkers.check_command"]
    assert "contracts.finding" in edges["checkers.linter"]


def test_no_loop_between_top_level_packages():
    edges = graph("", 1)
    assert cycles(edges) == [], edges


def test_no_loop_between_atoms_subpackages():
    edges = graph("atom.", 2)
    assert cycles(edges) == [], edges


if __name__ == "__main__":
    for title, edges in (("top-level packages", graph("", 1)), ("atom/", graph("atom.", 2))):
        print(f"{title}:")
        for source in sorted(edges):
            print(f"  {source} -> {', '.join(sorted(edges[source]))}")
        print(f"  cycles: {cycles(edges) or 'none'}")
    sys.exit(0)
