"""banned-import (AC501): every spelling of a banned module, and a fix that settles."""

from __future__ import annotations

import ast

import pytest

from checkers.rules.banned_import import BannedImport
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import apply_fixes, run_rule

HINT = "use plain triton imports"
PARAMS = {"modules": {"vllm.triton_utils": HINT}}


def check(tmp_path, source: str, params=PARAMS, path: str = "pkg/module.py", files=None):
    return run_rule(BannedImport, source, params, path=path, root=tmp_path, files=files)


def fix_twice(tmp_path, source: str, params=PARAMS, **kw) -> tuple[str, str]:
    once = apply_fixes(source, check(tmp_path, source, params, **kw))
    twice = apply_fixes(once, check(tmp_path, once, params, **kw))
    return once, twice


@pytest.mark.parametrize(
    ("source", "fixed"),
    [
        (
            "if HAVE_TRITON:\n    from vllm.triton_utils import (\n        triton,\n        tl,\n    )\n",
            "if HAVE_TRITON:\n    import triton\n    import triton.language as tl\n",
        ),
        (
            "x = 1; from vllm.triton_utils import tl as language\n",
            "x = 1; import triton.language as language\n",
        ),
        (
            "from vllm.triton_utils import triton, tl; y = 2\n",
            "import triton; import triton.language as tl; y = 2\n",
        ),
        (
            "from vllm.triton_utils import tldevice\n",
            "import triton.language.extra.libdevice as tldevice\n",
        ),
        (
            "from vllm.triton_utils import triton  # vendored from vLLM\n",
            "import triton  # vendored from vLLM\n",
        ),
    ],
)
def test_the_fix_fits_where_the_statement_sits_and_settles(tmp_path, source, fixed):
    once, twice = fix_twice(tmp_path, source)
    assert once == fixed
    assert twice == once
    ast.parse(once)


def test_no_fix_unless_every_name_has_a_known_source(tmp_path):
    source = "from vllm.triton_utils import triton, HAS_TRITON\nfrom vllm.triton_utils import *\n"
    found = check(tmp_path, source)
    assert [f.line for f in found] == [1, 2]
    assert [f.fix for f in found] == [None, None]


def test_replace_adds_sources_and_a_qualified_key_wins(tmp_path):
    params = {
        "modules": {"vllm.triton_utils": HINT, "sglang.compat": "no"},
        "replace": {"HAS_TRITON": "atom.triton_probe", "sglang.compat.tl": "sgl_triton.language"},
    }
    source = "from vllm.triton_utils import HAS_TRITON, tl\nfrom sglang.compat import tl\n"
    once, twice = fix_twice(tmp_path, source, params)
    assert once == (
        "import atom.triton_probe as HAS_TRITON\n"
        "import triton.language as tl\n"
        "import sgl_triton.language as tl\n"
    )
    assert twice == once


def test_every_spelling_of_the_module_is_refused_and_only_that_module(tmp_path):
    source = (
        "import vllm.triton_utils\n"
        "import vllm.triton_utils.importing as imp\n"
        "from vllm.triton_utils.importing import HAS_TRITON\n"
        "from vllm import config, triton_utils\n"
        "import importlib\n"
        "mod = importlib.import_module('vllm.triton_utils')\n"
        "import vllm.triton_utilsx\n"
        "from vllm import triton_utils_v2\n"
    )
    found = check(tmp_path, source)
    # Anchors: the alias of `import` (column 8), the statement of `from m import`, the name
    # of `from parent import m` (`from vllm import config, ` is 25 characters), the call.
    assert [(f.line, f.column) for f in found] == [(1, 8), (2, 8), (3, 1), (4, 26), (6, 7)]
    assert all(HINT in f.message for f in found)
    assert "under banned `vllm.triton_utils`" in found[1].message


def test_the_most_specific_banned_module_gives_the_hint(tmp_path):
    params = {"modules": {"vllm": "no vllm at all", "vllm.triton_utils": HINT}}
    found = check(tmp_path, "import vllm.config\nimport vllm.triton_utils.importing\n", params)
    assert [f.message.rsplit(": ", 1)[1] for f in found] == ["no vllm at all", HINT]


def test_a_banned_import_inside_a_function_or_type_checking_is_still_refused(tmp_path):
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from vllm.triton_utils import tl\n"
        "def f():\n"
        "    import vllm.triton_utils\n"
    )
    assert [(f.line, f.column) for f in check(tmp_path, source)] == [(3, 5), (5, 12)]


def test_the_needle_is_the_last_component(tmp_path):
    contract = BannedImport.from_table({"id": "t", **PARAMS}, "contract `t`")
    assert contract.needles() == ("triton_utils",)
    assert not contract.wants(SourceFile("m.py", "import vllm\n"))


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"modules": {"vllm/triton_utils": HINT}}, "'vllm/triton_utils'"),
        ({"modules": {"vllm.triton_utils": 1}}, "1"),
        ({"modules": PARAMS["modules"], "replace": {"tl": "triton language"}}, "'triton language'"),
        ({"modules": ["vllm.triton_utils"]}, "vllm.triton_utils"),
    ],
)
def test_a_bad_declaration_names_the_bad_value(table, named):
    with pytest.raises(ConfigError, match=named):
        BannedImport.from_table({"id": "t", **table}, "contract `t`")


def test_examples_are_unsafe_fixes_because_the_module_may_hand_out_placeholders():
    fixable = [e for e in BannedImport.INVALID if e.fixed is not None]
    assert fixable and all(e.unsafe for e in fixable)
    assert "unsafe" in BannedImport.RULES[0].fix_safety
