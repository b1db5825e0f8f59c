"""bench/sweep.py's own verdicts: its "untouched bytes" figure must be right over every fix round.

The fixer re-checks after each pass, and a fix can expose a finding the
first pass did not have (torch's ``_inductor/codegen/cpp.py``: once
``gen_kernel``'s assert raises, ``gen_loop_at``'s is input too and is fixed
in the second pass). A sweep that took the spans of the first pass alone
counted that line as lost; one that cannot see a line that *is* lost would be
green by mistake. Both are held here, on a three-line-of-context copy of the
torch case and on hand-made round chains.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.finding import Edit, Finding, Fix

from ..conftest import bench_module

REPO = Path(__file__).resolve().parents[2]

# Shaped like torch 2.13.0's _inductor/codegen/cpp.py, CppKernel.codegen_loops_impl.
TWO_ROUNDS = """\
def run(loop_nest):
    def gen_kernel(nest):
        assert nest.loops
        gen_loop_at(nest)

    def gen_loop_at(nest):
        assert nest.loops
        gen_loop_nest(nest)

    def gen_loop_nest(nest):
        gen_kernel(nest)

    gen_loop_nest(loop_nest)
"""


@pytest.fixture(scope="module")
def sweep():
    return bench_module("sweep")


def _round_trip(sweep, tmp_path: Path, files: dict[str, bytes]) -> dict[str, int]:
    from checkers import api

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pyproject.toml").write_text(sweep.declaration(".", None, None))
    for rel, data in files.items():
        (tree / rel).write_bytes(data)
    base = api.check([tree], cwd=tree, use_cache=False, jobs=1)
    return sweep.fix_round_trips(tree, base, tmp_path / "fix")


def test_the_torch_case_takes_two_rounds(sweep, tmp_path):
    figures = _round_trip(sweep, tmp_path, {"loops.py": TWO_ROUNDS.encode()})
    assert figures["fixes applied"] == 2
    # the case this test is about: the second assert is fixed in a second round
    assert figures["fix rounds (most in one file)"] == 2
    assert figures["bytes lost outside the fixes (files)"] == 0


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_two_rounds_keep_every_other_byte_in_other_line_endings(sweep, tmp_path, newline):
    data = ("# -*- coding: latin-1 -*-\n# café\n" + TWO_ROUNDS).replace("\n", newline)
    figures = _round_trip(sweep, tmp_path, {"loops.py": data.encode("latin-1")})
    assert figures["fixes applied"] == 2
    assert figures["bytes lost outside the fixes (files)"] == 0


def _finding(line: int, end_line: int, content: str, column: int = 5, end_column: int = 18):
    edit = Edit(line, column, end_line, end_column, content)
    return Finding(
        "AC301",
        "no-input-asserts",
        "input-assert",
        "m.py",
        line,
        column,
        end_line,
        end_column,
        "x",
        fix=Fix(message="x", edits=(edit,)),
    )


def test_a_line_changed_outside_every_round_is_lost(sweep):
    before = "def f(a, b):\n    assert a\n    assert b\n    return a\n"
    after = "def f(a, b):\n    if not (a):\n        raise ValueError\n    assert b\n    return b\n"
    rounds = [
        (before, [_finding(2, 2, "if not (a):\n        raise ValueError", end_column=13)], after)
    ]
    lost = sweep.lost_lines(before.encode(), after.encode(), rounds)
    assert (lost.where, lost.line, lost.text) == ("round 1", 4, "    return a\n")


def test_a_line_of_the_first_text_changed_in_the_second_round_outside_its_spans_is_lost(sweep):
    t0 = "def f(a, b):\n    assert a\n    return b\n"
    t1 = "def f(a, b):\n    if not (a):\n        raise ValueError\n    return b\n"
    t2 = "def f(a, b):\n    if not (a):\n        raise TypeError\n    return a\n"
    rounds = [
        (t0, [_finding(2, 2, "if not (a):\n        raise ValueError", end_column=13)], t1),
        (t1, [_finding(3, 3, "raise TypeError", column=9, end_column=25)], t2),
    ]
    lost = sweep.lost_lines(t0.encode(), t2.encode(), rounds)
    assert (lost.where, lost.line, lost.text) == ("round 2", 4, "    return b\n")


def test_a_line_ending_changed_outside_the_fixes_is_lost(sweep):
    before = "def f(a):\r\n    assert a\r\n    return a\r\n"
    after = "def f(a):\r\n    if not (a):\r\n        raise ValueError\r\n    return a\n"
    rounds = [
        (before, [_finding(2, 2, "if not (a):\n        raise ValueError", end_column=13)], after)
    ]
    lost = sweep.lost_lines(before.encode(), after.encode(), rounds)
    assert (lost.where, lost.line, lost.text) == ("round 1", 3, "    return a\r\n")


def test_bytes_on_disk_other_than_the_fixers_text_are_lost(sweep):
    text = "def f(a):\n    assert a\n    return a\n"
    fixed = "def f(a):\n    if not (a):\n        raise ValueError\n    return a\n"
    rounds = [
        (text, [_finding(2, 2, "if not (a):\n        raise ValueError", end_column=13)], fixed)
    ]
    assert sweep.lost_lines(text.encode(), fixed.encode(), rounds) is None
    written = fixed.replace("\n", "\r\n").encode()  # the writer, not a fix, changed the endings
    lost = sweep.lost_lines(text.encode(), written, rounds)
    assert (lost.where, lost.line) == ("written (not the fixer's text)", 1)
