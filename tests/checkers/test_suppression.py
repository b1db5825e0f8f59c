"""``# noqa: AC... -- reason``: span lines, a required reason, and stale suppressions."""

from __future__ import annotations

from checkers.suppression import parse_directives

from ..scaffold import write_tree
from .test_linter import RENAME, codes, run


def test_a_suppression_with_a_reason_suppresses_and_says_nothing(tmp_path):
    write_tree(tmp_path, {"a.py": "x = old_name  # noqa: AC991 -- kept for the v1 API\n"})
    assert codes(run(tmp_path)) == []


def test_any_line_of_the_statement_counts(tmp_path):
    # A formatter moved the comment to the closing parenthesis.
    src = (
        "x = call(\n    old_name,\n    2,\n)  # noqa: AC991 -- the wrapped call keeps its comment\n"
    )
    write_tree(tmp_path, {"a.py": src})
    assert codes(run(tmp_path)) == []


def test_a_line_outside_the_span_does_not_count(tmp_path):
    src = "x = old_name\ny = 2  # noqa: AC991 -- wrong line\n"
    write_tree(tmp_path, {"a.py": src})
    assert codes(run(tmp_path)) == [("a.py", "AC991", 1, 5), ("a.py", "AC902", 2, 8)]


def test_no_reason_still_suppresses_but_is_ac901(tmp_path):
    write_tree(tmp_path, {"a.py": "x = old_name  # noqa: AC991\n"})
    result = run(tmp_path)
    assert codes(result) == [("a.py", "AC901", 1, 15)]
    assert "no reason" in result.findings[0].message


def test_an_unused_code_is_ac902_but_a_plain_noqa_and_other_tools_codes_are_not(tmp_path):
    src = (
        "a = 1  # noqa: AC991 -- nothing here any more\n"
        "b = 2  # noqa\n"
        "c = 3  # noqa: E501, F401\n"
        "d = old_name  # noqa: E501, AC991 -- mixed with ruff's codes\n"
        "e = old_name  # noqa\n"
    )
    write_tree(tmp_path, {"a.py": src})
    # A blanket noqa comment does not suppress a contract: it must name the code.
    assert codes(run(tmp_path)) == [("a.py", "AC902", 1, 8), ("a.py", "AC991", 5, 5)]


def test_a_code_that_did_not_run_is_not_reported_unused(tmp_path):
    write_tree(tmp_path, {"a.py": "a = 1  # noqa: AC991 -- only when AC991 runs\n"})
    assert codes(run(tmp_path, select="AC901")) == []
    # (b.py keeps the contract some file: one it runs on nowhere is refused, test_never_green)
    write_tree(tmp_path, {"b.py": "b = 1\n"})
    assert codes(run(tmp_path, table={"per-file-ignores": {"a.py": ["AC991"]}})) == []
    (tmp_path / "b.py").unlink()
    # A contract that does not apply to the file makes the suppression unused.
    write_tree(tmp_path, {"src/b.py": ""})
    assert codes(run(tmp_path, ({**RENAME, "paths": ["src/**"]},))) == [("a.py", "AC902", 1, 8)]


def test_an_undeclared_code_is_unused(tmp_path):
    write_tree(tmp_path, {"a.py": "a = 1  # noqa: AC123 -- a typo for a code nobody declares\n"})
    assert codes(run(tmp_path)) == [("a.py", "AC902", 1, 8)]


def test_noqa_inside_a_string_is_not_a_suppression():
    src = 'EXAMPLE = "x = 1  # noqa: AC301"\n# noqa: AC301 -- a real one\n'
    (d,) = parse_directives(src)
    assert (d.line, d.codes, d.reason) == (2, ("AC301",), "a real one")


def test_directive_parsing():
    src = "x  # type: ignore  # NOQA:AC101,AC301 --   why   \n"
    (d,) = parse_directives(src)
    assert d.codes == ("AC101", "AC301")
    assert d.reason == "why"
    assert d.column == 20  # "x  # type: ignore  " is 19 characters
    assert parse_directives("x = 1\n") == ()
    # A file that stops tokenizing keeps the comments read before the error.
    (cut,) = parse_directives("x = (  # noqa: AC101\n")
    assert cut.codes == ("AC101",)
