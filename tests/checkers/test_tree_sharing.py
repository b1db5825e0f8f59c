"""A file a cross-file question parsed is not parsed again for its own check soon after: the
program keeps its last few trees, and the linter reads them. The other way round -- a question
soon after the check -- parses the body asked about again, alone: keeping every checked file's
tree for it cost as much in freeing trees late as it saved in parses."""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from checkers import api

from ..scaffold import write_tree

PYPROJECT = (
    "[tool.atom-contracts]\n"
    "[[tool.atom-contracts.contracts]]\n"
    'id = "decode-no-sync"\nkind = "reachable-calls"\nentries = ["*.prepare_*"]\n'
    'forbidden = { "*.item" = "a host sync" }\n'
)
# Each module holds an entry, so each is checked; the entry of the first in path order calls
# into the second, and the second's into the first: one question is asked before the module
# it is about is checked, the other after.
FILES = {
    "pkg/__init__.py": "",
    "pkg/a_rows.py": (
        "from pkg.z_plan import plan\n\n\ndef rows(ids):\n    return ids.item()\n\n\n"
        "def prepare_rows(ids):\n    return plan(ids)\n"
    ),
    "pkg/z_plan.py": (
        "from pkg.a_rows import rows\n\n\ndef plan(ids):\n    return ids.clone()\n\n\n"
        "def prepare_plan(ids):\n    return rows(ids)\n"
    ),
}


@pytest.fixture
def parsed(record_parses):
    return record_parses()


def test_a_module_asked_about_before_its_check_is_parsed_once(tmp_path, parsed):
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    result = api.check([], cwd=tmp_path, jobs=1, use_cache=False)
    assert [(f.path, f.code) for f in result.findings] == [("pkg/z_plan.py", "AC821")]
    # z_plan: asked about by a_rows's entry, then checked with that tree. a_rows: checked,
    # then asked about by z_plan's entry, which parses the one body asked about, `rows`.
    assert Counter(parsed) == {"pkg/a_rows.py": 1, "pkg/a_rows.py:rows": 1, "pkg/z_plan.py": 1}


def test_dropped_trees_are_let_go_and_their_bodies_still_answered(tmp_path, parsed):
    """What a pool worker does before each chunk's collection: no tree stays reachable from
    the program, and a body not yet asked about is read from its file again, the same."""
    from checkers.analysis.functions import D_CALLS
    from checkers.analysis.program import drop_trees, program_of
    from checkers.project import Project
    from checkers.source import SourceFile

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    project = Project(tmp_path, ["."])
    program = program_of(project)
    text = (tmp_path / "pkg/a_rows.py").read_text()
    source = SourceFile("pkg/a_rows.py", text, abspath=str(tmp_path / "pkg/a_rows.py"))
    source._module_name = "pkg.a_rows"
    module = program.module_of_source(source)
    program.module("pkg.z_plan").detail("plan")  # a neighbour's tree kept
    parsed.clear()
    drop_trees(project)
    assert not _reachable_nodes(program, keep=source)
    # The checked module's bodies not yet asked are read from the file again, each alone.
    calls = [c[0] for c in module.detail("prepare_rows")[D_CALLS]]
    assert calls == ["pkg.z_plan.plan"]
    assert parsed == ["pkg/a_rows.py:prepare_rows"]
    assert [c[0] for c in program.module("pkg.z_plan").detail("prepare_plan")[D_CALLS]] == [
        "pkg.a_rows.rows"
    ]
    assert parsed == ["pkg/a_rows.py:prepare_rows", "pkg/z_plan.py:prepare_plan"]


def test_a_body_is_not_read_from_bytes_other_than_its_outlines(tmp_path, parsed):
    from checkers.analysis.program import drop_trees, program_of
    from checkers.project import Project

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    program = program_of(Project(tmp_path, ["."]))
    module = program.module("pkg.z_plan")
    drop_trees(program.project)
    # An edit after the outline was made: its lines are no longer the outline's.
    path = tmp_path / "pkg/z_plan.py"
    path.write_text("import os\n\n" + path.read_text())
    parsed.clear()
    assert module.detail("prepare_plan") is None
    assert parsed == []


def test_a_body_that_does_not_parse_alone_is_read_from_its_module(tmp_path, parsed):
    from checkers.analysis.functions import D_CALLS
    from checkers.analysis.program import drop_trees, program_of
    from checkers.project import Project

    # The body's last line continues onto a blank one: its own lines end mid-statement.
    odd = "def plan(ids):\n    return ids.clone() \\\n\n\n\ndef prepare_plan(ids):\n    return 1\n"
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES, "pkg/z_plan.py": odd})
    program = program_of(Project(tmp_path, ["."]))
    module = program.module("pkg.z_plan")
    drop_trees(program.project)
    parsed.clear()
    assert [c[0] for c in module.detail("plan")[D_CALLS]] == ["ids.clone"]
    assert parsed == ["pkg/z_plan.py:plan", "pkg/z_plan.py"]


def _reachable_nodes(root, keep) -> list:
    """Syntax nodes reachable from ``root`` through its attributes and containers, but for
    those of ``keep`` (the source the caller still holds)."""
    import gc
    import types

    seen, stack, found = {id(keep)}, [root], []
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        if isinstance(obj, ast.AST):
            found.append(obj)
            continue
        stack.extend(gc.get_referents(obj))
    return found


def test_a_serial_run_lets_its_trees_go_at_each_chunk_end(tmp_path, monkeypatch):
    """A run in one process keeps the program's summaries past each chunk of files, never a
    tree: the collector that runs between chunks would walk every node of each one."""
    from checkers import linter as linter_module
    from checkers.analysis.program import program_of
    from checkers.linter import Linter

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    config = api.load_config(tmp_path, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    monkeypatch.setattr(linter_module, "CHUNK_FILES", 2)
    kept = []
    end_chunk = linter.end_chunk

    def counting_end_chunk():
        end_chunk()
        kept.append(len(_reachable_nodes(program_of(linter._project), keep=None)))

    monkeypatch.setattr(linter, "end_chunk", counting_end_chunk)
    files = [(rel, str(tmp_path / rel)) for rel in sorted(FILES)]
    results = linter.check_files(files, jobs=1)
    assert [f.code for r in results for f in r.findings] == ["AC821"]
    # Three files in chunks of two: two chunk ends, neither leaving a node reachable.
    assert kept == [0, 0]


def test_a_chunk_end_leaves_the_bodies_worked_out_for_the_cache(tmp_path):
    """What a pool worker hands back after each chunk (and a run in one process keeps): the
    bodies its questions walked, beside each module's outline, so the next run reads them."""
    from checkers.analysis.functions import S_DETAILS
    from checkers.analysis.program import SUMMARY_KEY
    from checkers.linter import Linter

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    config = api.load_config(tmp_path, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    rel = "pkg/a_rows.py"
    linter.check_file(rel, str(tmp_path / rel), None)  # its entry walks z_plan's `plan`
    linter.end_chunk()
    summary = linter._project.new_summaries["pkg/z_plan.py" + SUMMARY_KEY][3]
    assert summary[S_DETAILS] is not None and any(d is not None for d in summary[S_DETAILS])


def test_a_checked_files_later_bodies_come_from_the_bytes_it_was_checked_in(tmp_path, parsed):
    from checkers.analysis.functions import D_CALLS
    from checkers.analysis.program import drop_trees, program_of
    from checkers.project import Project
    from checkers.source import SourceFile

    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    program = program_of(Project(tmp_path, ["."]))
    path = tmp_path / "pkg/a_rows.py"
    source = SourceFile("pkg/a_rows.py", path.read_text(), abspath=str(path))
    source._module_name = "pkg.a_rows"
    module = program.module_of_source(source)
    program.store(source)  # its summary left for the cache, with the digest of its bytes
    drop_trees(program.project)
    parsed.clear()
    # Two bodies asked: the file is read once for both (the second from the lines kept).
    assert [c[0] for c in module.detail("rows")[D_CALLS]] == ["ids.item"]
    path.unlink()
    assert [c[0] for c in module.detail("prepare_rows")[D_CALLS]] == ["pkg.z_plan.plan"]
    assert parsed == ["pkg/a_rows.py:rows", "pkg/a_rows.py:prepare_rows"]

    # Bytes other than the checked ones (the function's own lines unchanged): no details.
    write_tree(tmp_path, {"pkg/a_rows.py": FILES["pkg/a_rows.py"] + "\n\nEXTRA = 1\n"})
    module = program.module_of_source(source)
    program.store(source)
    drop_trees(program.project)
    assert module.detail("rows") is None
