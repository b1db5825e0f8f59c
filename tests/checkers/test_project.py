"""The project index: names, resolution, imports and chains, read from files only."""

from __future__ import annotations

import itertools
import tempfile
from collections import deque
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkers.project import Project, ancestors, within
from checkers.source import SourceFile


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def refs_of(tmp_path: Path, rel: str, text: str, files: dict[str, str] | None = None):
    write(tmp_path, {**(files or {}), rel: text})
    return Project(tmp_path, (tmp_path,)).module_imports(rel)


# -- names ---------------------------------------------------------------


def test_module_names_follow_python_rules(tmp_path):
    project = Project(tmp_path, (tmp_path,))
    assert project.module_name("pkg/__init__.py") == "pkg"
    assert project.module_name("pkg/sub/mod.py") == "pkg.sub.mod"
    assert project.module_name(tmp_path / "pkg" / "mod.py") == "pkg.mod"
    assert project.module_name("pkg/data.json") is None
    assert project.module_name("tests/test-x.py") is None  # not an identifier: not importable


def test_the_most_specific_src_root_names_a_file(tmp_path):
    project = Project(tmp_path, (".", "src"))
    assert project.module_name("src/pkg/mod.py") == "pkg.mod"
    assert project.module_name("tools/run.py") == "tools.run"
    assert Project(tmp_path, ("src",)).module_name("tools/run.py") is None


def test_a_symlinked_root_still_names_its_files(tmp_path):
    write(tmp_path / "real", {"pkg/mod.py": ""})
    (tmp_path / "link").symlink_to(tmp_path / "real")
    project = Project(tmp_path / "link", (tmp_path / "real",))
    assert project.module_name(tmp_path / "link" / "pkg" / "mod.py") == "pkg.mod"


def test_a_package_wins_over_a_module_of_the_same_name(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg.py": "", "solo.py": "", "ns/leaf.py": ""})
    project = Project(tmp_path, (tmp_path,))
    assert project.resolve("pkg") == tmp_path / "pkg" / "__init__.py"
    assert project.resolve("solo") == tmp_path / "solo.py"
    # A directory without __init__ is a namespace package: it exists, with no file.
    assert project.resolve("ns") is None
    assert project.exists("ns") and project.exists("ns.leaf")
    assert not project.exists("ns.missing")
    assert project.is_first_party("ns.anything") and project.is_first_party("solo")
    assert not project.is_first_party("torch")


def test_within_and_ancestors_respect_dots():
    assert within("atom.pool_layout.arena", "atom.pool_layout")
    assert within("atom.pool_layout", "atom.pool_layout")
    assert not within("atom.pool_layout_v2", "atom.pool_layout")
    assert ancestors("a.b.c") == ("a", "a.b")
    assert ancestors("a") == ()


# -- imports -------------------------------------------------------------


def test_relative_imports_resolve_against_the_files_package(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/x.py": ""}
    in_module = refs_of(
        tmp_path, "pkg/sub/mod.py", "from . import x\nfrom ..other import y\n", files
    )
    assert [(r.module, r.level) for r in in_module] == [("pkg.sub", 1), ("pkg.other", 2)]
    assert in_module[0].submodules == ("pkg.sub.x",)
    # In an __init__, `.` is the package itself, not its parent.
    in_init = refs_of(tmp_path, "pkg/sub/__init__.py", "from .x import z\n", files)
    assert [r.module for r in in_init] == ["pkg.sub.x"]


def test_a_relative_import_beyond_the_top_keeps_its_dots(tmp_path):
    refs = refs_of(tmp_path, "pkg/mod.py", "from .. import x\nfrom ...deep import y\n")
    assert [r.module for r in refs] == ["..", "...deep"]


def test_each_import_knows_whether_it_runs_at_import_time(tmp_path):
    text = (
        "import os, sys as system\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import typed\n"
        "try:\n"
        "    import guarded\n"
        "except (ValueError, ModuleNotFoundError):\n"
        "    import fallback\n"
        "try:\n"
        "    import unguarded\n"
        "except ValueError:\n"
        "    pass\n"
        "class Holder:\n"
        "    import in_class\n"
        "def later():\n"
        "    import in_function\n"
        "async def later_async():\n"
        "    import in_async\n"
    )
    refs = {r.module: r for r in refs_of(tmp_path, "mod.py", text)}
    assert refs["sys"].alias.asname == "system"
    assert refs["typed"].type_checking and not refs["typed"].runs_at_import
    assert refs["guarded"].guarded and not refs["guarded"].runs_at_import
    assert refs["fallback"].runs_at_import  # a handler's own body is not guarded
    assert refs["unguarded"].runs_at_import  # ValueError does not survive an ImportError
    assert refs["in_class"].runs_at_import  # a class body runs at import
    assert not refs["in_function"].at_module_level
    assert not refs["in_async"].at_module_level


def test_dynamic_imports_with_a_literal_name_are_imports(tmp_path):
    text = (
        "import importlib\n"
        "mod = importlib.import_module('aiter.ops')\n"
        "def late():\n"
        "    return __import__('late_dep')\n"
        "computed = importlib.import_module(name)\n"
    )
    refs = [r for r in refs_of(tmp_path, "mod.py", text) if r.dynamic]
    assert [(r.module, r.at_module_level, r.lineno) for r in refs] == [
        ("aiter.ops", True, 2),
        ("late_dep", False, 4),
    ]


def test_a_dynamic_import_in_a_decorator_above_its_def_or_class_runs_at_import(tmp_path):
    # A decorator's line comes before the `def`/`class` line the statement's
    # lineno names: the walk looked for a dynamic import from that line on only.
    text = (
        "import importlib\n"
        "@register(\n"
        "    importlib.import_module('in_def_decorator'))\n"
        "def f():\n"
        "    pass\n"
        "@register(__import__('in_class_decorator'))\n"
        "class C:\n"
        "    pass\n"
    )
    refs = [r for r in refs_of(tmp_path, "mod.py", text) if r.dynamic]
    assert [(r.module, r.at_module_level, r.lineno) for r in refs] == [
        ("in_def_decorator", True, 3),
        ("in_class_decorator", True, 6),
    ]


def test_the_import_walk_skips_only_statements_that_spell_no_import(tmp_path):
    # The walk enters a statement only when one of its lines (decorators
    # included) spells `import`: every import statement and every dynamic
    # import does. Compared here with the walk that enters everything, over
    # this repository's own modules.
    from checkers.analysis import imports as imports_module

    root = Path(__file__).resolve().parents[2]
    files = sorted(
        p
        for top in ("checkers", "contracts", "hooks", "atom", "tests")
        for p in (root / top).rglob("*.py")
    )
    assert len(files) > 100
    project = Project(root, (root,))
    pruned, whole = [], []
    for path in files:
        source = SourceFile(str(path.relative_to(root)), path.read_text(), abspath=str(path))
        pruned.append(project.imports_of(source))
        saved = imports_module.lines_mentioning
        try:
            imports_module.lines_mentioning = lambda text, needles: tuple(
                range(1, text.count("\n") + 2)
            )
            whole.append(project.imports_of(source))
        finally:
            imports_module.lines_mentioning = saved
    assert pruned == whole
    assert sum(len(r) for r in whole) > 1000


@given(
    st.lists(
        st.sampled_from(
            ["import", "__import__", "import_module", "x", " ", "\n", "\r", "\r\n", "#"]
        ),
        max_size=40,
    ).map("".join)
)
def test_lines_mentioning_a_needle_are_python_s_lines(text):
    # Python's line breaks are \n, \r\n and a lone \r; the line numbers are the
    # tokenizer's, which the AST's linenos are.
    import re

    from checkers.analysis.imports import lines_mentioning

    for needles in (("import",), ("import_module", "__import__")):
        lines = re.split(r"\r\n|\r|\n", text)
        expected = tuple(
            i for i, line in enumerate(lines, start=1) if any(n in line for n in needles)
        )
        assert lines_mentioning(text, needles) == expected


def test_imports_are_memoised_and_a_registered_source_wins_over_disk(tmp_path):
    write(tmp_path, {"mod.py": "import on_disk\n"})
    project = Project(tmp_path, (tmp_path,))
    held = SourceFile("mod.py", "import in_memory\n", abspath=str(tmp_path / "mod.py"))
    project.add_source(held)
    first = project.module_imports("mod.py")
    (tmp_path / "mod.py").write_text("import changed\n")
    assert [r.module for r in first] == ["in_memory"]
    assert project.module_imports(tmp_path / "mod.py") is first
    assert project.read_source("mod.py") is held is project.read_source(tmp_path / "mod.py")


def test_a_registered_source_is_not_kept_past_the_linters_use(tmp_path):
    # The project keeps summaries, never a file's tree: a whole-tree run
    # would otherwise hold every AST it parsed until it ends.
    import gc
    import weakref

    write(tmp_path, {"mod.py": "import on_disk\n"})
    project = Project(tmp_path, (tmp_path,))
    held = SourceFile("mod.py", "import in_memory\n", abspath=str(tmp_path / "mod.py"))
    assert held.tree is not None
    project.add_source(held)
    assert [r.module for r in project.module_imports("mod.py")] == ["in_memory"]
    tree = weakref.ref(held.tree)
    del held
    gc.collect()
    assert tree() is None
    assert project.read_source("mod.py").text == "import on_disk\n"
    assert project.read_source("mod.py") is not project.read_source("mod.py")


def test_unreadable_and_unparseable_files_have_no_imports(tmp_path):
    write(tmp_path, {"broken.py": "import (\n"})
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nimport caf\xe9\n")
    project = Project(tmp_path, (tmp_path,))
    assert project.read_source("missing.py") is None
    assert project.module_imports("missing.py") == ()
    assert project.module_imports("broken.py") == ()
    assert [r.module for r in project.module_imports("latin.py")] == ["café"]


def test_binds_reads_the_package_init(tmp_path):
    write(
        tmp_path,
        {
            "pkg/__init__.py": (
                "from .a import A as Alias\nVALUE = 1\ndef helper(): ...\n"
                "if True:\n    class Nested: ...\n"
            ),
            "pkg/a.py": "",
            "star/__init__.py": "from .a import *\n",
            "lazy/__init__.py": "def __getattr__(name): ...\n",
        },
    )
    project = Project(tmp_path, (tmp_path,))
    for name in ("a", "Alias", "VALUE", "helper", "Nested"):
        assert project.binds("pkg", name), name
    assert not project.binds("pkg", "missing")
    assert project.binds("star", "anything") and project.binds("lazy", "anything")


# -- chains --------------------------------------------------------------


def test_a_chain_follows_ancestors_and_skips_what_does_not_run(tmp_path):
    write(
        tmp_path,
        {
            "atom/__init__.py": "",
            "atom/ops/__init__.py": "from .jit import k\n",
            "atom/ops/jit.py": "import triton.language as tl\n",
            "atom/ops/rope.py": "",
            "atom/lazy.py": "def f():\n    import triton\n",
            "atom/guard.py": "try:\n    import triton\nexcept ImportError:\n    triton = None\n",
            "atom/a.py": "import atom.b\n",
            "atom/b.py": "import atom.a\nfrom atom import lazy, guard\n",
        },
    )
    project = Project(tmp_path, (tmp_path,))
    assert project.import_chain("atom.ops.rope", "triton") == (
        "atom.ops.rope",
        "atom.ops",
        "atom.ops.jit",
        "triton",
    )
    # A cycle ends, and nothing in it reaches triton: lazy and guard do not run it.
    assert project.import_chain("atom.a", "triton") is None
    assert project.import_chain("atom.b", "triton") is None


def _reference_reaches(edges: dict[int, set[int]], hits: set[int], start: int) -> bool:
    seen, queue = {start}, deque([start])
    while queue:
        node = queue.popleft()
        if node in hits:
            return True
        for nxt in edges[node] - seen:
            seen.add(nxt)
            queue.append(nxt)
    return False


graphs = st.integers(min_value=1, max_value=7).flatmap(
    lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=14),
        st.sets(st.integers(0, n - 1), max_size=3),
        st.permutations(list(range(n))),
    )
)


@given(graphs)
def test_chains_agree_with_plain_reachability_whatever_the_query_order(graph):
    """Memoised answers (negative closures, spliced tails) must equal a fresh BFS.

    Each module ``m<i>`` imports its edges; the ones in ``hits`` import triton.
    Queries run in a random order on one Project, so later ones are answered
    from what earlier ones memoised.
    """
    n, edge_list, hits, order = graph
    edges: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edge_list:
        edges[a].add(b)
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        for i in range(n):
            lines = [f"import m{j}" for j in sorted(edges[i])]
            if i in hits:
                lines.append("import triton")
            (root / f"m{i}.py").write_text("\n".join(lines) + "\n")
        project = Project(root, (root,))
        for i in order:
            chain = project.import_chain(f"m{i}", "triton")
            assert (chain is not None) == _reference_reaches(edges, hits, i)
            if chain is None:
                continue
            assert chain[0] == f"m{i}" and chain[-1] == "triton"
            assert len(set(chain)) == len(chain)
            for a, b in itertools.pairwise(chain[:-1]):
                assert int(b[1:]) in edges[int(a[1:])]
            assert int(chain[-2][1:]) in hits


@pytest.mark.parametrize("src", [(), (".",)])
def test_the_default_src_root_is_the_project_root(tmp_path, src):
    assert Project(tmp_path, src).src_roots == (tmp_path,)
