"""leaf-package (AC201, AC202): members, siblings, ancestors, judged from disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkers.project import Project
from checkers.rules.leaf_package import LeafPackage
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import run_rule

PARAMS = {"package": "atom.pool_layout", "allow": ["torch"]}
TREE = {
    "atom/__init__.py": "",
    "atom/runner.py": "",
    "atom/pool_layout/__init__.py": "from .rows import PoolRowsMixin\n",
    "atom/pool_layout/rows.py": "",
    "atom/pool_layout/geometry/__init__.py": "GEOMETRY = 1\n",
}


def check(tmp_path: Path, source: str, path: str, params=PARAMS, files=TREE):
    return run_rule(LeafPackage, source, params, path=path, root=tmp_path, files=files)


def codes(found):
    return [(f.code, f.line, f.column) for f in found]


def test_stdlib_allowed_prefixes_and_members_pass_and_lookalikes_do_not(tmp_path):
    source = (
        "import os.path\n"
        "import torch.nn\n"
        "import atom.kernels.layout.tables\n"
        "import atom.kernels.layoutx\n"
        "import atom.kernels\n"
        "import torchvision\n"
    )
    params = {"package": "atom.pool_layout", "allow": ["torch", "atom.kernels.layout"]}
    found = check(tmp_path, source, "atom/pool_layout/rows.py", params)
    assert [f.message.split("`")[3] for f in found] == [
        "atom.kernels.layoutx",
        "atom.kernels",
        "torchvision",
    ]


def test_a_guarded_import_in_a_member_is_still_an_import(tmp_path):
    source = "try:\n    import aiter\nexcept ImportError:\n    aiter = None\n"
    assert codes(check(tmp_path, source, "atom/pool_layout/rows.py")) == [("AC201", 2, 12)]


def test_an_import_beyond_the_top_level_package_is_named_as_such(tmp_path):
    found = check(tmp_path, "from ... import x\n", "atom/pool_layout/rows.py")
    assert codes(found) == [("AC201", 1, 1)]
    assert "beyond the top-level package" in found[0].message


def test_a_deeper_leaf_holds_every_ancestor_init(tmp_path):
    files = {
        "a/__init__.py": "import a.b\n",
        "a/b/__init__.py": "",
        "a/b/c/__init__.py": "",
        "a/x.py": "",
    }
    params = {"package": "a.b.c"}
    middle = "from a import x\nfrom .c import leaf\nimport a\nimport json\n"
    assert codes(check(tmp_path, middle, "a/b/__init__.py", params, files)) == [("AC201", 1, 15)]
    # The top imports an ancestor of the leaf: that runs nothing the leaf's import does not.
    assert check(tmp_path, files["a/__init__.py"], "a/__init__.py", params, files) == []
    # A module beside the ancestors, not an __init__, is not run by importing the leaf.
    assert check(tmp_path, "import aiter\n", "a/b/side.py", params, files) == []


def test_an_ancestor_init_is_judged_only_by_what_runs(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from atom.runner import ModelRunner\n"
        "try:\n"
        "    import aiter\n"
        "except ImportError:\n"
        "    aiter = None\n"
    )
    # A guarded import still runs (and drags aiter in) wherever aiter is installed.
    assert codes(check(tmp_path, source, "atom/__init__.py")) == [("AC201", 5, 12)]


def test_a_member_of_a_subpackage_is_a_member(tmp_path):
    source = "from .. import rows\nfrom . import GEOMETRY\nfrom ..rows import x\n"
    assert check(tmp_path, source, "atom/pool_layout/geometry/planes.py") == []


def test_names_from_a_subpackage_must_be_bound_by_its_init(tmp_path):
    source = "from .geometry import GEOMETRY, PLANES\nfrom .rows import Anything\n"
    found = check(tmp_path, source, "atom/pool_layout/fields.py")
    # Line 1: `from .geometry import GEOMETRY, ` is 32 characters, so PLANES is at 33.
    # A name inside a module file (`rows`) is that module's business: not checked.
    assert codes(found) == [("AC202", 1, 33)]
    assert "`PLANES`" in found[0].message


def test_a_namespace_leaf_checks_its_members_on_disk(tmp_path):
    files = {"ns/leaf/a.py": ""}
    source = "from . import a, missing\nfrom . import *\n"
    found = check(tmp_path, source, "ns/leaf/b.py", {"package": "ns.leaf"}, files)
    assert codes(found) == [("AC202", 1, 18)]


def test_an_absolute_import_of_a_missing_member_is_a_missing_member(tmp_path):
    source = "import atom.pool_layout.gone\nfrom atom.pool_layout.rows import x\n"
    assert codes(check(tmp_path, source, "atom/pool_layout/fields.py")) == [("AC202", 1, 8)]


def test_files_outside_the_source_roots_are_not_members(tmp_path):
    (tmp_path / "src" / "leaf").mkdir(parents=True)
    (tmp_path / "leaf").mkdir()
    (tmp_path / "leaf" / "tool.py").write_text("import aiter\n")
    project = Project(tmp_path, ("src",))
    contract = LeafPackage.from_table({"id": "t", "package": "leaf"}, "contract `t`")
    src = SourceFile("leaf/tool.py", "import aiter\n", abspath=str(tmp_path / "leaf/tool.py"))
    assert list(contract.check(src, project)) == []
    inside = SourceFile(
        "src/leaf/tool.py", "import aiter\n", abspath=str(tmp_path / "src/leaf/tool.py")
    )
    assert [f.code for f in contract.check(inside, project)] == ["AC201"]


def test_the_suppression_span_is_the_whole_statement(tmp_path):
    source = "from atom.runner import (\n    ModelRunner,\n)\n"
    (finding,) = check(tmp_path, source, "atom/pool_layout/rows.py")
    assert finding.span_lines == (1, 3)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"package": "atom/pool_layout"}, "'atom/pool_layout'"),
        ({"package": "atom.pool_layout", "allow": ["torch-x"]}, "'torch-x'"),
        ({"allow": ["torch"]}, "`package`"),
    ],
)
def test_a_bad_declaration_names_what_is_wrong(table, named):
    with pytest.raises(ConfigError, match=named):
        LeafPackage.from_table({"id": "t", **table}, "contract `t`")


def test_findings_depend_on_other_files_so_they_are_not_cached():
    assert LeafPackage.CACHEABLE is False
