"""banned-import (AC501): every spelling of a banned module, and a fix that settles."""

from __future__ import annotations

import ast

import pytest

from checkers.project import Project
from checkers.rules.banned_import import BannedImport
from checkers.source import SourceFile
from contracts.fields import ConfigError

HINT = "use plain triton imports"
PARAMS = {"modules": {"vllm.triton_utils": HINT}}


def check(tmp_path, source: str, params=PARAMS, path: str = "pkg/module.py", files=None):
    for rel, text in {**(files or {}), path: source}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    project = Project(tmp_path, (tmp_path,))
    src = SourceFile(path, source, abspath=str(tmp_path / path))
    project.add_source(src)
    contract = BannedImport.from_table({"id": "t", **params}, "contract `t`")
    if not contract.wants(src):
        return []
    return list(contract.check(src, project))


def apply(text: str, findings) -> str:
    """Apply every fix's edits, last first (positions: 1-based lines and char columns)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits = sorted(
        (e for f in findings if f.fix for e in f.fix.edits),
        key=lambda e: (e.line, e.column),
        reverse=True,
    )
    for e in edits:
        begin = starts[e.line - 1] + e.column - 1
        end = starts[e.end_line - 1] + e.end_column - 1
        text = text[:begin] + e.content + text[end:]
    return text


def fix_twice(tmp_path, source: str, params=PARAMS, **kw) -> tuple[str, str]:
    once = apply(source, check(tmp_path, source, params, **kw))
    twice = apply(once, check(tmp_path, once, params, **kw))
    return once, twice


@pytest.mark.parametrize("example", BannedImport.VALID, ids=lambda e: e.note[:40])
def test_valid_examples_pass(tmp_path, example):
    assert check(tmp_path, example.source, example.params, example.path, example.files) == []


@pytest.mark.parametrize("example", BannedImport.INVALID, ids=lambda e: e.note[:40])
def test_invalid_examples_flag_and_fix_as_they_say(tmp_path, example):
    kw = {"path": example.path, "files": example.files}
    found = check(tmp_path, example.source, example.params, **kw)
    assert [(f.code, f.line, f.column) for f in found] == [
        (e.code, e.line, e.column) for e in example.expect
    ]
    for finding, expect in zip(found, example.expect, strict=True):
        assert expect.message is None or expect.message in finding.message
    once, twice = fix_twice(tmp_path, example.source, example.params, **kw)
    assert once == (example.fixed if example.fixed is not None else example.source)
    assert twice == once
    if example.fixed is not None:
        assert all(f.fix.applicability == "unsafe" for f in found if f.fix) == example.unsafe


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
