"""retired-name (AC401): whole words, everywhere they are spelled, at the occurrence."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checkers.rules.retired_name import RetiredName
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import run_rule


def check(tmp_path, source: str, names=("StateArena",), path: str = "atom/mod.py"):
    names = names if isinstance(names, dict) else list(names)
    return run_rule(RetiredName, source, {"names": names}, path=path, root=tmp_path)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("StateArena\n", 1),
        ("a StateArena\n", 3),
        ("x = StateArena.build()\n", 5),
        ("(StateArena)\n", 2),
        ("'StateArena.'\n", 2),
        ("self.StateArena\n", 6),
        ("f(StateArena-1)\n", 3),
        ("StateArenaV2\n", None),
        ("StateArena_\n", None),
        ("_StateArena\n", None),
        ("MyStateArena\n", None),
        ("StateArena2\n", None),
        ("éStateArena\n", None),  # a letter is a word character in any script
        ("statearena\n", None),  # names are case-sensitive, as identifiers are
    ],
)
def test_word_boundaries_treat_underscore_as_a_word_character(tmp_path, text, column):
    found = check(tmp_path, text)
    assert [f.column for f in found] == ([] if column is None else [column])


@given(
    st.text(alphabet="aZ9_ .(é-\t", max_size=3),
    st.text(alphabet="aZ9_ .(é-\t", max_size=3),
)
def test_a_name_matches_exactly_when_neither_neighbour_continues_the_word(before, after):
    """The oracle is str.isalnum (any script) or `_`, not the rule's own regex."""
    with tempfile.TemporaryDirectory() as d:
        found = check(Path(d), f"{before}StateArena{after}\n")

    def continues(ch: str) -> bool:
        return ch.isalnum() or ch == "_"

    expected = not (before and continues(before[-1])) and not (after and continues(after[0]))
    assert [f.column for f in found] == ([len(before) + 1] if expected else [])


def test_a_name_with_dots_or_brackets_gets_edges_only_where_it_has_word_characters(tmp_path):
    names = ["runner.use_mla", "is_qwen_next()"]
    text = "self.runner.use_mla\nmyrunner.use_mla\nrunner.use_mla_v2\ncfg.is_qwen_next() or x\n"
    found = check(tmp_path, text, names)
    # `self.` is 5 characters and `cfg.` 4: the occurrences start at columns 6 and 5.
    assert [(f.line, f.column, f.end_column) for f in found] == [(1, 6, 20), (4, 5, 19)]


def test_every_occurrence_on_a_line_is_its_own_finding(tmp_path):
    found = check(tmp_path, "StateArena(StateArena)  # StateArena\n")
    # 0-based starts 0, 11 and 26 -> columns 1, 12 and 27; each spans len("StateArena") = 10.
    assert [(f.column, f.end_column) for f in found] == [(1, 11), (12, 22), (27, 37)]


def test_the_table_form_names_the_replacement_and_the_list_form_does_not(tmp_path):
    (with_hint,) = check(tmp_path, "StateArena\n", {"StateArena": "EntryMajorArena"})
    (bare,) = check(tmp_path, "StateArena\n", ["StateArena"])
    assert "now `EntryMajorArena`" in with_hint.message
    assert "now" not in bare.message and "`StateArena`" in bare.message


def test_an_occurrence_in_a_multiline_string_is_suppressed_from_its_statement(tmp_path):
    source = (
        'def carve():\n    """Carve.\n\n    Was a StateArena.\n    """\n    x = 1  # StateArena\n'
    )
    found = check(tmp_path, source)
    # The docstring is the Expr statement on lines 2-5; a suppression comment can only follow its
    # closing quotes. The comment occurrence is suppressed from its own line.
    assert [(f.line, f.span_lines) for f in found] == [(4, (2, 5)), (6, (6, 6))]


@pytest.mark.parametrize(
    ("source", "span_lines"),
    [
        # On the string's first line: the statement (lines 1-2) still holds the suppression.
        ('x = """StateArena\n"""\n', (1, 2)),
        # On its last line, inside a statement that goes on past the string (lines 1-4).
        ('x = (\n    """a\n    StateArena"""\n)\n', (1, 4)),
        # A one-line string inside a wrapped call is suppressed from its own line only: a
        # comment there is possible, and one on the call's other lines is about other words.
        ('x = f(\n    "StateArena",\n)\n', (2, 2)),
    ],
)
def test_a_multiline_string_reaches_its_statement_from_its_first_and_last_lines(
    tmp_path, source, span_lines
):
    (found,) = check(tmp_path, source)
    assert found.span_lines == span_lines


def test_a_file_that_does_not_parse_is_scanned_all_the_same(tmp_path):
    found = check(tmp_path, "def broken(:\n    StateArena\n")
    assert [(f.line, f.column) for f in found] == [(2, 5)]
    assert RetiredName.NEEDS_TREE is False


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_lines_are_counted_as_python_counts_them(tmp_path, newline):
    # A form feed is not a line break to Python, even though str.splitlines says it is.
    text = newline.join(["x = 1", "\x0c", "y = StateArena", ""])
    found = check(tmp_path, text)
    assert [(f.line, f.column) for f in found] == [(3, 5)]


def test_needles_are_the_names(tmp_path):
    contract = RetiredName.from_table({"id": "t", "names": ["A1", "B2"]}, "contract `t`")
    assert contract.needles() == ("A1", "B2")
    assert not contract.wants(SourceFile("m.py", "nothing here\n"))


@pytest.mark.parametrize(
    ("names", "named"),
    [
        ([], r"\[\]"),
        ("StateArena", "'StateArena'"),
        (["StateArena", ""], "''"),
        ({"StateArena": 3}, "3"),
        ({}, r"\{\}"),
        ({"StateArena": "EntryMajorArena", " ": "x"}, "names are not empty"),
    ],
)
def test_a_bad_declaration_names_the_bad_value(names, named):
    with pytest.raises(ConfigError, match=named):
        RetiredName.from_table({"id": "t", "names": names}, "contract `t`")


def test_loading_the_kind_imports_no_typing():
    """typing costs milliseconds a run (contracts/finding.py); the kind's annotations need none.

    A fresh interpreter, run from this checkout's root so it imports this tree's modules.
    It starts with -S: an editable install's .pth finder imports typing at startup
    (setuptools' `__editable___*_finder` pulls in tempfile), so with site's startup run,
    typing is loaded before a line of ours and the check would measure the environment.
    site-packages goes on the path by hand, without running its .pth files.
    """
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys, site\n"
        "sys.path.extend(site.getsitepackages())\n"
        "if 'typing' in sys.modules: raise SystemExit('typing loaded before the kind')\n"
        "import checkers.linter\n"
        "from checkers.rules import kind_class\n"
        "kind_class('retired-name')\n"
        "print('typing' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=root, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"]
