"""A run on some files re-checks the cross-file findings those files can cause elsewhere.

A commit that adds ``import triton`` to a non-test module touches one file,
but the AC601 it causes lands on a test that imports the module. A run that
checked only the touched files would pass where the whole-tree run fails: a
local run must fail where the whole-tree run will, naming the edited file.
"""

from __future__ import annotations

import os
import time

import pytest

from checkers import api

from ..scaffold import pyproject, write_tree

PYPROJECT = pyproject("skip-triton", "leaf")

TREE = {
    "pyproject.toml": PYPROJECT,
    "pkg/__init__.py": "",
    "pkg/ops.py": "def rope():\n    return 1\n",
    "pkg/wrap.py": "from pkg.ops import rope\n\nwrapped = rope\n",
    "pkg/kern.py": "import triton\n",
    "pkg/leaf/__init__.py": "WIDTH = 8\n",
    "pkg/leaf/rows.py": "from . import WIDTH\n\nROWS = WIDTH * 2\n",
    "pkg/leaf/other.py": "import os\n",
    "tests/__init__.py": "",
    "tests/test_ops.py": "from pkg.ops import rope\n",
    "tests/test_wrap.py": "import os\n\nfrom pkg.wrap import wrapped\n",
    "tests/test_skips.py": (
        'import pytest\n\npytest.importorskip("triton")\n\nfrom pkg.ops import rope\n'
    ),
    "tests/test_unrelated.py": "import json\n",
    "tests/test_kern.py": "from pkg.kern import *\n",  # already failing before any edit
}

ADD_TRITON = "import triton\n\n\ndef rope():\n    return 1\n"


@pytest.fixture
def project(tmp_path):
    write_tree(tmp_path, TREE)
    past = time.time() - 60  # older than the cache's racy window
    for folder, _, files in os.walk(tmp_path):
        for name in files:
            os.utime(os.path.join(folder, name), (past, past))
    return tmp_path


def codes_at(result):
    return sorted((f.path, f.line, f.code) for f in result.findings)


@pytest.mark.parametrize("warm", [True, False], ids=["cache-filled", "no-cache"])
def test_an_edit_that_reaches_triton_fails_the_tests_importing_it(project, warm):
    if warm:
        api.check([], cwd=project, jobs=1)  # the whole-tree run that fills the cache
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    local = api.check(["pkg/ops.py"], cwd=project, jobs=1, use_cache=warm)
    assert codes_at(local) == [
        ("tests/test_ops.py", 1, "AC601"),
        ("tests/test_wrap.py", 3, "AC601"),
    ]
    by_path = {f.path: f for f in local.findings}
    # The finding names the edited file that caused it.
    assert "pkg/ops.py" in by_path["tests/test_ops.py"].message
    assert "pkg.wrap -> pkg.ops -> triton" in by_path["tests/test_wrap.py"].message
    assert "pkg/ops.py" in by_path["tests/test_wrap.py"].message


def test_the_local_run_equals_the_whole_tree_run_on_what_the_edit_can_affect(project):
    api.check([], cwd=project, jobs=1)
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    local = api.check(["pkg/ops.py"], cwd=project, jobs=1)
    whole = api.check([], cwd=project, jobs=1, use_cache=False)
    # test_kern's finding predates the edit and does not run through pkg/ops.py:
    # the whole tree reports it, the local run over pkg/ops.py has no business to.
    assert ("tests/test_kern.py", 1, "AC601") in codes_at(whole)
    affected = {f.path for f in local.findings}
    assert affected == {"tests/test_ops.py", "tests/test_wrap.py"}
    assert codes_at(local) == [t for t in codes_at(whole) if t[0] in affected]
    whole_messages = {(f.path, f.line): f.message for f in whole.findings}
    for f in local.findings:
        assert f.message.startswith(whole_messages[(f.path, f.line)])


def test_an_edit_that_reaches_nothing_rechecks_nothing(project):
    (project / "pkg/ops.py").write_text("import json\n\n\ndef rope():\n    return 2\n")
    assert api.check(["pkg/ops.py"], cwd=project, jobs=1).findings == []


def test_a_noqa_on_the_dependent_test_still_suppresses(project):
    (project / "tests/test_ops.py").write_text(
        "from pkg.ops import rope  # noqa: AC601 -- runs only on the GPU runner\n"
    )
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    local = api.check(["pkg/ops.py"], cwd=project, jobs=1)
    assert codes_at(local) == [("tests/test_wrap.py", 3, "AC601")]


def test_removing_a_binding_from_the_leaf_init_fails_the_member_importing_it(project):
    api.check([], cwd=project, jobs=1)
    (project / "pkg/leaf/__init__.py").write_text("HEIGHT = 8\n")
    local = api.check(["pkg/leaf/__init__.py"], cwd=project, jobs=1)
    assert codes_at(local) == [("pkg/leaf/rows.py", 1, "AC202")]
    assert "pkg/leaf/__init__.py" in local.findings[0].message


def test_a_warm_local_run_parses_only_the_edit_and_the_tests_it_reaches(project, record_parses):
    api.check([], cwd=project, jobs=1)
    (project / "pkg/ops.py").write_text(ADD_TRITON)
    parsed = record_parses()
    api.check(["pkg/ops.py"], cwd=project, jobs=1)
    # pkg/wrap.py, pkg/kern.py and the tests that reach nothing edited come
    # from the cache's import summaries; test_skips reaches pkg.ops, so its
    # lines are checked (its skip comes first, so nothing is reported).
    assert sorted(parsed) == [
        "pkg/ops.py",
        "tests/test_ops.py",
        "tests/test_skips.py",
        "tests/test_wrap.py",
    ]


def test_a_finding_the_edit_cannot_change_is_the_files_own_not_reported_again(
    project, capsys, monkeypatch
):
    # pkg/leaf/far.py leaves its package (AC201) by importing pkg.ops: that finding is
    # far.py's whatever pkg/ops.py holds. pre-commit checks its files in batches, one
    # process each; the batch holding far.py reports it, and the batch holding an edited
    # pkg/ops.py must not report it again as if the edit had caused it.
    from checkers.cli import main

    monkeypatch.chdir(project)
    (project / "pkg/leaf/far.py").write_text("from pkg.ops import rope\n")
    (project / "pkg/ops.py").write_text("def rope():\n    return 2\n")
    printed = []
    for batch in (["pkg/leaf/far.py", "tests/test_unrelated.py"], ["pkg/ops.py", "pkg/wrap.py"]):
        main(["check", "--no-cache", *batch])
        printed += [line for line in capsys.readouterr().out.splitlines() if ": AC" in line]
    assert [line.split(" ")[:2] for line in printed] == [["pkg/leaf/far.py:1:1:", "AC201"]]
    assert "edited" not in printed[0]


def test_an_edit_that_removes_what_a_sibling_imports_still_reaches_it(project):
    # The other side of the line above: AC202 reads the edited file, so it is re-checked.
    (project / "pkg/leaf/__init__.py").write_text("HEIGHT = 8\n")
    local = api.check(["pkg/leaf/__init__.py"], cwd=project, jobs=1, use_cache=False)
    assert ("pkg/leaf/rows.py", 1, "AC202") in codes_at(local)
