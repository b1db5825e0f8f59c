"""importorskip (AC601): a test reaches triton only after it has skipped without it."""

from __future__ import annotations

import pytest

from checkers.project import Project
from checkers.rules.importorskip import ImportOrSkip
from contracts.fields import ConfigError

from ..rule_harness import run_rule

PARAMS = {"module": "triton", "tests": ["tests/**"]}
TREE = {
    "atom/__init__.py": "",
    "atom/kernels/__init__.py": "",
    "atom/kernels/store.py": "from atom.kernels import _jit\n",
    "atom/kernels/_jit.py": "import triton\n",
    "atom/kernels/plain.py": "import math\n",
}


def check(tmp_path, source, path="tests/test_x.py", params=PARAMS, files=TREE, project=None):
    return run_rule(
        ImportOrSkip, source, params, path=path, root=tmp_path, files=files, project=project
    )


def where(found):
    return [(f.line, f.column) for f in found]


@pytest.mark.parametrize(
    "skip",
    [
        'pytest.importorskip("triton")',
        'triton = pytest.importorskip("triton")',
        'tl: object = pytest.importorskip("triton.language")',
        'pytest.importorskip(modname="triton", minversion="3.0")',
        'importorskip("triton")',
        # A guarded import in either form, of the module or a submodule.
        "try:\n    from triton import language\nexcept ImportError:\n"
        '    pytest.skip("no triton", allow_module_level=True)',
    ],
)
def test_each_spelling_of_the_skip_counts(tmp_path, skip):
    source = f"import pytest\nfrom pytest import importorskip\n{skip}\nimport atom.kernels.store\n"
    assert check(tmp_path, source) == []


@pytest.mark.parametrize(
    "not_a_skip",
    [
        'pytest.importorskip("tritonx")',
        'pytest.importorskip("aiter", "triton")',  # the second argument is a minversion
        "pytest.importorskip(name)",
        'if CI:\n    pytest.importorskip("triton")',
        'def setup_module():\n    pytest.importorskip("triton")',
        'pytestmark = pytest.mark.skipif(True, reason="triton")',
        'try:\n    import triton\nexcept ImportError:\n    pytest.skip("no triton")',
        # At module level pytest.skip needs allow_module_level=True, or it is itself an error.
        'try:\n    import triton\nexcept ImportError:\n    pytest.skip(reason="no triton")',
        "try:\n    import triton\nexcept ImportError:\n"
        '    pytest.skip("no triton", allow_module_level=False)',
        # A handler that survives the ImportError without skipping.
        "try:\n    import triton\nexcept ImportError:\n    triton = None",
        # A guard around something else: another module, the package's own `.triton`, no import.
        "try:\n    from os import path\nexcept ImportError:\n"
        '    pytest.skip("no triton", allow_module_level=True)',
        "try:\n    from .triton import language\nexcept ImportError:\n"
        '    pytest.skip("no triton", allow_module_level=True)',
        "try:\n    VERSION = 3\nexcept ImportError:\n"
        '    pytest.skip("no triton", allow_module_level=True)',
    ],
)
def test_what_does_not_skip_first_does_not_count(tmp_path, not_a_skip):
    source = f"import pytest\n{not_a_skip}\nimport atom.kernels.store\n"
    found = check(tmp_path, source)
    assert [f.line for f in found] == [source.count("\n")]


def test_a_statement_that_imports_before_it_skips_is_flagged(tmp_path):
    # The skip runs after the statement's own import: the import is not behind the skip.
    source = '__import__("atom.kernels.store").importorskip("triton")\n'
    assert where(check(tmp_path, source)) == [(1, 1)]


def test_one_finding_per_statement_anchored_on_it(tmp_path):
    source = "import os, atom.kernels.store, atom.kernels._jit\nfrom atom.kernels import plain\n"
    found = check(tmp_path, source)
    assert where(found) == [(1, 1)]
    assert "atom.kernels.store -> atom.kernels._jit -> triton" in found[0].message
    assert found[0].span_lines == (1, 1)


def test_a_direct_import_of_a_submodule_names_it(tmp_path):
    found = check(tmp_path, "from triton.language import core\n")
    assert "tests/test_x.py imports triton.language at import time" in found[0].message


def test_imports_that_do_not_run_at_collection_do_not_reach(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import triton\n"
        "try:\n"
        "    import atom.kernels.store\n"
        "except ImportError:\n"
        "    store = None\n"
        "def test_store():\n"
        "    import atom.kernels.store\n"
    )
    assert check(tmp_path, source) == []


def test_a_relative_import_inside_a_test_package_is_followed(tmp_path):
    files = {
        **TREE,
        "tests/__init__.py": "",
        "tests/kernels/__init__.py": "",
        "tests/kernels/helpers.py": "from atom.kernels.store import *\n",
    }
    found = check(
        tmp_path, "from .helpers import rows\n", "tests/kernels/test_rows.py", files=files
    )
    assert "tests.kernels.helpers -> atom.kernels.store -> atom.kernels._jit -> triton" in (
        found[0].message
    )


def test_a_cycle_through_the_chain_still_ends(tmp_path):
    files = {**TREE, "atom/a.py": "import atom.b\n", "atom/b.py": "import atom.a\nimport json\n"}
    assert check(tmp_path, "import atom.a\n", files=files) == []


def test_answers_stay_right_when_one_project_serves_several_tests(tmp_path):
    project = Project(tmp_path, (tmp_path,))
    first = check(tmp_path, "import atom.kernels._jit\n", "tests/test_a.py", project=project)
    second = check(tmp_path, "import atom.kernels.store\n", "tests/test_b.py", project=project)
    clean = check(tmp_path, "import atom.kernels.plain\n", "tests/test_c.py", project=project)
    assert "atom.kernels._jit -> triton" in first[0].message
    assert "atom.kernels.store -> atom.kernels._jit -> triton" in second[0].message
    assert clean == []


def test_only_test_modules_are_checked_even_when_called_directly(tmp_path):
    contract = ImportOrSkip.from_table({"id": "t", **PARAMS}, "contract `t`")
    assert contract.applies_to("tests/test_x.py")
    assert not contract.applies_to("atom/kernels/user.py")
    assert check(tmp_path, "import triton\n", path="atom/kernels/user.py") == []


def test_another_optional_module_is_its_own_contract(tmp_path):
    files = {**TREE, "atom/kernels/aiter_ops.py": "import aiter.ops\n"}
    params = {"module": "aiter", "tests": ["tests/**"]}
    source = "import atom.kernels.store\nimport atom.kernels.aiter_ops\n"
    found = check(tmp_path, source, params=params, files=files)
    assert where(found) == [(2, 1)]
    assert found[0].message.startswith(
        "tests/test_x.py imports atom.kernels.aiter_ops -> aiter at import time"
    )


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"module": "triton lang", "tests": ["tests/**"]}, "'triton lang'"),
        ({"module": "triton"}, "`tests`"),
        ({"module": "triton", "tests": "tests/**"}, "'tests/\\*\\*'"),
    ],
)
def test_a_bad_declaration_names_what_is_wrong(table, named):
    with pytest.raises(ConfigError, match=named):
        ImportOrSkip.from_table({"id": "t", **table}, "contract `t`")


def test_findings_depend_on_other_files_so_they_are_not_cached():
    assert ImportOrSkip.CACHEABLE is False


def _project_with_broken_test(tmp_path, *, reaches: bool):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "skip"\nkind = "importorskip"\nmodule = "triton"\ntests = ["tests/**"]\n'
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text("import triton\n" if reaches else "import math\n")
    (tmp_path / "tests").mkdir()
    # Unparsable on purpose: whether the linter parsed it shows as AC001.
    (tmp_path / "tests" / "test_ops.py").write_text("import pkg.ops\ndef broken(:\n")


def test_a_project_that_never_spells_the_module_parses_no_test(tmp_path):
    from checkers.api import check

    _project_with_broken_test(tmp_path, reaches=False)
    assert check([], cwd=tmp_path, use_cache=False).findings == []


def test_the_project_prefilter_still_parses_when_a_file_spells_the_module(tmp_path):
    from checkers.api import check

    _project_with_broken_test(tmp_path, reaches=True)
    codes = [f.code for f in check([], cwd=tmp_path, use_cache=False).findings]
    assert codes == ["AC001"]


def test_no_dependent_lines_is_an_empty_mapping(tmp_path):
    for rel, text in TREE.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    project = Project(tmp_path, (tmp_path,))
    contract = ImportOrSkip.from_table({"id": "t", **PARAMS}, "contract `t`")
    edited = {"atom.kernels._jit": "atom/kernels/_jit.py"}
    # Not a test file; a test, but the edited module reaches no triton.
    assert contract.dependent_lines("atom/kernels/store.py", project, edited) == {}
    plain = {"atom.kernels.plain": "atom/kernels/plain.py"}
    assert contract.dependent_lines("tests/test_x.py", project, plain) == {}
