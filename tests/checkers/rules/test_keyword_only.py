"""keyword-only (AC101): which of the three failures, anchored where the diff shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkers.rules.keyword_only import KeywordOnly
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import run_rule

PARAMS = {"functions": ["allocate_kv_cache_tensors"], "parameters": ["blocks"]}


def check(tmp_path: Path, source: str, params=PARAMS, path: str = "pkg/module.py", files=None):
    return run_rule(KeywordOnly, source, params, path=path, root=tmp_path, files=files)


@pytest.mark.parametrize(
    ("signature", "word", "column"),
    [
        ("def allocate_kv_cache_tensors(self, blocks):", "positional", 37),
        ("def allocate_kv_cache_tensors(self, *, blocks=None):", "default", 40),
        ("def allocate_kv_cache_tensors(self, *, block):", "missing", 5),
        ("def allocate_kv_cache_tensors(self, **blocks):", "missing", 5),
    ],
)
def test_the_message_says_which_failure_and_names_both(tmp_path, signature, word, column):
    # `def allocate_kv_cache_tensors(` is 4 + 25 + 1 = 30 characters; `self, ` ends at 36,
    # `self, *, ` at 39; a missing parameter anchors on the name, after `def ` (column 5).
    (finding,) = check(tmp_path, signature + "\n    pass\n")
    assert word in finding.message
    assert "`allocate_kv_cache_tensors`" in finding.message and "`blocks`" in finding.message
    assert (finding.line, finding.column) == (1, column)


def test_the_missing_anchor_covers_exactly_the_name(tmp_path):
    source = "class A:\n    @staticmethod\n    async  def allocate_kv_cache_tensors(): ...\n"
    (finding,) = check(tmp_path, source)
    # `    async  def ` is 15 characters: the name starts at column 16.
    assert (finding.line, finding.column, finding.end_line, finding.end_column) == (
        3,
        16,
        3,
        16 + len("allocate_kv_cache_tensors"),
    )


def test_every_parameter_and_every_definition_is_reported(tmp_path):
    source = (
        "class Base:\n"
        "    def allocate_kv_cache_tensors(self, blocks, dev):\n"
        "        pass\n"
        "class Child(Base):\n"
        "    def allocate_kv_cache_tensors(self, *, blocks, dev):\n"
        "        pass\n"
        "class Other(Base):\n"
        "    class Inner:\n"
        "        def allocate_kv_cache_tensors(self, dev, *, blocks=1):\n"
        "            pass\n"
    )
    params = {**PARAMS, "parameters": ["blocks", "dev"]}
    found = check(tmp_path, source, params)
    # Line 2: 4 + len("def ") + 25 + len("(") = 34 characters precede `self, ` (6), so
    # `blocks` starts at column 41 and `dev` after `blocks, ` (8) at 49. Line 9: 8 more
    # indentation gives 38 before `self, `; `dev` at 45, `blocks` after `dev, *, ` at 53.
    assert [(f.line, f.column, f.message.split(";")[0]) for f in found] == [
        (2, 41, "`allocate_kv_cache_tensors` takes `blocks` positionally"),
        (2, 49, "`allocate_kv_cache_tensors` takes `dev` positionally"),
        (9, 53, "`allocate_kv_cache_tensors` gives keyword-only `blocks` a default (`1`)"),
        (9, 45, "`allocate_kv_cache_tensors` takes `dev` positionally"),
    ]


def test_definitions_in_handlers_and_match_cases_are_definitions(tmp_path):
    source = (
        "try:\n"
        "    from fast import allocate_kv_cache_tensors\n"
        "except ImportError:\n"
        "    def allocate_kv_cache_tensors(blocks): ...\n"
        "match backend:\n"
        "    case 'gdn':\n"
        "        class Gdn:\n"
        "            def allocate_kv_cache_tensors(self, blocks): ...\n"
    )
    # `    def allocate_kv_cache_tensors(` is 34 characters; the method's line adds 8
    # indentation and `self, ` (6): `blocks` at 35 and at 49.
    assert [(f.line, f.column) for f in check(tmp_path, source)] == [(4, 35), (8, 49)]


def test_a_qualified_name_matches_only_that_class(tmp_path):
    source = (
        "class Mla:\n    def alloc(self, blocks): ...\n"
        "class Gdn:\n    def alloc(self, blocks): ...\n"
        "def alloc(blocks): ...\n"
    )
    found = check(tmp_path, source, {"functions": ["Gdn.alloc"], "parameters": ["blocks"]})
    assert [f.line for f in found] == [4]


def test_a_noqa_may_sit_on_the_signature_but_not_in_the_body(tmp_path):
    source = (
        "def allocate_kv_cache_tensors(\n"
        "    self,\n"
        "    blocks,\n"
        ") -> None:\n"
        '    """Doc."""\n'
        "    return None\n"
    )
    (finding,) = check(tmp_path, source)
    assert finding.span_lines == (1, 4)


def test_a_file_that_never_names_the_function_is_not_parsed(tmp_path):
    contract = KeywordOnly.from_table({"id": "t", **PARAMS}, "contract `t`")
    assert not contract.wants(SourceFile("a.py", "def other(blocks): ...\n"))
    assert contract.needles() == ("allocate_kv_cache_tensors",)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"functions": ["f"]}, "`parameters`"),
        ({"functions": "f", "parameters": ["x"]}, "'f'"),
        ({"functions": ["f"], "parameters": ["x"], "allow-default": "yes"}, "'yes'"),
    ],
)
def test_a_bad_declaration_names_what_is_wrong(table, named):
    with pytest.raises(ConfigError, match=named):
        KeywordOnly.from_table({"id": "t", **table}, "contract `t`")


def test_a_def_split_from_its_name_is_anchored_on_the_def_as_a_point(tmp_path):
    # The name is on the next line, so no span on the def's line covers it: the finding marks
    # the `def` at column 5 and spans nothing, rather than underlining unrelated text.
    source = "class Draft:\n    def \\\nallocate_kv_cache_tensors(self):\n        pass\n"
    (found,) = check(tmp_path, source)
    assert (found.line, found.column, found.end_line, found.end_column) == (2, 5, 2, 5)
