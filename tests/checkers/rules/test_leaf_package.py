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


@pytest.mark.parametrize(
    ("src", "files", "found"),
    [
        (["."], ["atom/pool/__init__.py"], True),
        (["./"], ["atom/pool.py"], True),
        (["src"], ["src/atom/pool/rows.py"], True),
        (["/src/"], ["src/atom/pool/rows.py"], True),  # a root's slashes are not part of it
        (["lib", "src"], ["src/atom/pool/rows.py"], True),  # any root will do
        (["src"], ["atom/pool/rows.py"], False),  # not under the declared root
        (["."], ["atom/pools.py", "atom/poolx/a.py"], False),  # names that only start alike
    ],
)
def test_the_package_is_looked_for_under_every_src_root(src, files, found):
    from checkers.coverage import Listed

    contract = LeafPackage.from_table({"id": "t", "package": "atom.pool"}, "contract `t`")
    missing = contract.unmatched(Listed(files), src)
    if found:
        assert missing == []
    else:
        assert missing == [f"`package` 'atom.pool' is no module under `src` {src!r}"]


def _dependents(tmp_path, files, path, edited, package="pkg.leaf"):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    project = Project(tmp_path, (tmp_path,))
    contract = LeafPackage.from_table({"id": "t", "package": package}, "contract `t`")
    return contract.dependent_lines(path, project, edited)


LEAF = {
    "pkg/__init__.py": "",
    "pkg/leaf/__init__.py": "WIDTH = 8\n",
    "pkg/leaf/other.py": "import os\n",
    "pkg/leaf/rows.py": (
        "from typing import TYPE_CHECKING\n"
        "from pkg.leaf import WIDTH\n"
        "import pkg.leaf.other\n"
        "from pkg.leaf import *\n"
        "from . import other\n"
        "if TYPE_CHECKING:\n"
        "    import pkg.leaf.other as o\n"
    ),
    "pkg/leafy/rows.py": "from pkg.leaf import WIDTH\n",
    "pkg/single.py": "from pkg.leaf import WIDTH\n",
}


def test_a_members_imports_of_an_edited_module_are_its_dependent_lines(tmp_path):
    init = {"pkg.leaf": "pkg/leaf/__init__.py"}
    # `from pkg.leaf import WIDTH`, `from pkg.leaf import *` and `from . import other` (which
    # resolves to pkg.leaf) read the __init__; the TYPE_CHECKING import never runs.
    assert _dependents(tmp_path, LEAF, "pkg/leaf/rows.py", init) == {
        2: ("pkg/leaf/__init__.py",),
        4: ("pkg/leaf/__init__.py",),
        5: ("pkg/leaf/__init__.py",),
    }
    other = {"pkg.leaf.other": "pkg/leaf/other.py"}
    assert _dependents(tmp_path, LEAF, "pkg/leaf/rows.py", other) == {
        3: ("pkg/leaf/other.py",),
        5: ("pkg/leaf/other.py",),
    }


def test_a_file_outside_the_package_has_no_dependent_lines(tmp_path):
    init = {"pkg.leaf": "pkg/leaf/__init__.py"}
    # Not a member by its path (a sibling whose name starts alike), or not by its module name.
    assert _dependents(tmp_path, LEAF, "pkg/leafy/rows.py", init) == {}
    assert _dependents(tmp_path, LEAF, "pkg/single.py", init) == {}
    # A package that is one module: `pkg/single.py` is its only member, and its import of
    # pkg.leaf leaves the package -- AC201 whatever pkg/leaf holds, so no edit there reaches it.
    edited = {"pkg.leaf": "pkg/leaf/__init__.py"}
    assert _dependents(tmp_path, LEAF, "pkg/single.py", edited, package="pkg.single") == {}


def test_an_import_leaving_the_package_is_no_dependent_line(tmp_path):
    # AC201 is the member's own finding; only imports of the package's own modules read
    # what an edit can change (AC202).
    files = {**LEAF, "pkg/ops.py": "X = 1\n", "pkg/leaf/far.py": "from pkg.ops import X\n"}
    assert _dependents(tmp_path, files, "pkg/leaf/far.py", {"pkg.ops": "pkg/ops.py"}) == {}


def test_with_nothing_allowed_the_message_names_only_the_standard_library(tmp_path):
    found = run_rule(
        LeafPackage,
        "import torch\n",
        {"package": "pkg.leaf"},
        path="pkg/leaf/a.py",
        root=tmp_path,
        files={"pkg/__init__.py": "", "pkg/leaf/__init__.py": ""},
    )
    assert [f.code for f in found] == ["AC201"]
    assert "which is not the standard library or a member of `pkg.leaf`" in found[0].message


def test_a_file_under_a_folder_of_the_same_name_elsewhere_has_no_dependent_lines(tmp_path):
    # `vendor/pkg/leaf/rows.py` has the package's folder in its path, but its module is
    # vendor.pkg.leaf.rows: not a member, so its imports are not the leaf's to re-check.
    files = {**LEAF, "vendor/__init__.py": "", "vendor/pkg/__init__.py": ""}
    files["vendor/pkg/leaf/__init__.py"] = ""
    files["vendor/pkg/leaf/rows.py"] = "from pkg.leaf import WIDTH\n"
    init = {"pkg.leaf": "pkg/leaf/__init__.py"}
    assert _dependents(tmp_path, files, "vendor/pkg/leaf/rows.py", init) == {}


def test_an_init_that_is_no_ancestor_of_the_package_is_not_judged(tmp_path):
    # atom/runner/__init__.py is not run by importing atom.pool_layout: its imports are its own.
    source = "import requests\n"
    assert check(tmp_path, source, "atom/runner/__init__.py") == []
    # atom/__init__.py is, and the same import there is flagged.
    assert codes(check(tmp_path, source, "atom/__init__.py")) == [("AC201", 1, 8)]


def test_an_init_named_like_an_ancestor_in_another_package_is_not_judged(tmp_path):
    # vendor/atom/__init__.py passes the path pre-filter (it ends in atom/__init__.py), but its
    # module is vendor.atom: importing atom.pool_layout never runs it, so its imports are its own.
    files = {**TREE, "vendor/__init__.py": ""}
    assert check(tmp_path, "import requests\n", "vendor/atom/__init__.py", files=files) == []
