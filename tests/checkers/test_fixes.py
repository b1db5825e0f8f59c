"""Which fixes exist, how safe they are, and how they are shown: --fix, --diff, --show-fixes.

The one safe fix is AC902's (an unused suppression code removed from its
comment); the rewrite keeps every other byte of the comment. ``--diff``
prints what ``--fix`` would write and writes nothing; fixes are spelled in
the quotes the file already uses, so ``ruff format`` leaves them alone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from checkers.cli import main


@pytest.fixture
def project(make_project):
    return make_project("blocks-keyword-only", "no-input-asserts", src=None, chdir=True).root


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x = 1  # noqa: AC101 -- was a signature once\n", "x = 1\n"),
        ("x = 1  # noqa: E501, AC101 -- long\n", "x = 1  # noqa: E501 -- long\n"),
        ("x = 1  # noqa: AC101, AC301 -- both gone\n", "x = 1\n"),
        ("x = 1  # type: ignore  # noqa: AC101 -- r\n", "x = 1  # type: ignore\n"),
        ("x = 1  # noqa: AC999 -- no such rule\n", "x = 1\n"),
        ("y = f(\n    1,\n    # noqa: AC101 -- stale\n)\n", "y = f(\n    1,\n)\n"),
        ("x = 1\r\ny = 2  # noqa: AC101 -- crlf\r\n", "x = 1\r\ny = 2\r\n"),
    ],
    ids=[
        "alone",
        "beside-another-tool",
        "two-codes",
        "after-a-comment",
        "unknown",
        "own-line",
        "crlf",
    ],
)
def test_an_unused_suppression_is_removed_by_the_safe_fix(project, capsys, before, after):
    target = project / "m.py"
    target.write_bytes(before.encode())
    assert main(["check", "--no-cache", "m.py"]) == 1
    assert "[*]" in capsys.readouterr().out  # offered under plain --fix
    assert main(["check", "--no-cache", "--fix", "m.py"]) == 0, capsys.readouterr().out
    assert target.read_bytes() == after.encode()


def test_a_used_code_stays_beside_the_removed_one(project, capsys):
    before = (
        "def allocate_kv_cache_tensors(self, blocks):  # noqa: AC101, AC301 -- legacy\n    pass\n"
    )
    (project / "m.py").write_text(before)
    assert main(["check", "--no-cache", "--fix", "m.py"]) == 0, capsys.readouterr().out
    assert (project / "m.py").read_text() == before.replace("AC101, AC301", "AC101")


def test_diff_prints_every_fix_and_writes_nothing(project, capsys):
    source = "def f(n):\n    assert n > 0\n    return n  # noqa: AC101 -- stale\n"
    (project / "m.py").write_text(source)
    code = main(["check", "--no-cache", "--diff", "--unsafe-fixes", "m.py"])
    out = capsys.readouterr().out
    assert code == 1  # ruff's --diff: 1 when there is something to fix
    assert (project / "m.py").read_text() == source
    assert "--- m.py\n+++ m.py\n" in out
    assert "-    assert n > 0\n" in out
    assert '+    if not (n > 0):\n+        raise ValueError("expected n > 0")\n' in out
    assert "+    return n\n" in out
    # Without --unsafe-fixes only the safe one is shown.
    assert main(["check", "--no-cache", "--diff", "m.py"]) == 1
    out = capsys.readouterr().out
    assert "-    assert" not in out and "+    return n\n" in out


def test_diff_with_nothing_to_fix_exits_0_and_prints_nothing(project, capsys):
    (project / "m.py").write_text("x = 1\n")
    assert main(["check", "--no-cache", "--diff", "m.py"]) == 0
    assert capsys.readouterr().out == ""


def test_diff_is_not_taken_as_an_abbreviation_of_diff_base(project, capsys):
    from checkers.cli import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args(["check", "--diff-b", "main"])
    capsys.readouterr()
    assert _parser().parse_args(["check", "--diff"]).diff is True


def test_show_fixes_lists_what_was_fixed(project, capsys):
    (project / "m.py").write_text("x = 1  # noqa: AC101 -- stale\ny = 2  # noqa: AC301 -- stale\n")
    assert main(["check", "--no-cache", "--fix", "--show-fixes", "m.py"]) == 0
    out = capsys.readouterr().out
    assert "Fixed 2 findings:\n- m.py:\n    2 \u00d7 AC902 (unused-suppression)\n" in out


@pytest.mark.parametrize("quote", ['"', "'"])
def test_fixes_are_spelled_in_the_files_quotes_and_ruff_format_keeps_them(project, capsys, quote):
    ruff = shutil.which("ruff") or pytest.skip("ruff is not installed")
    other = "'" if quote == '"' else '"'
    source = (
        f"NAME = {quote}pool{quote}\n\n\n"
        f"def f(n, kind={quote}k{quote}):\n"
        "    assert n > 0\n"
        f"    return {quote}%d{quote} % n\n"
    )
    (project / "m.py").write_text(source)
    style = "double" if quote == '"' else "single"
    (project / "ruff.toml").write_text(f'[format]\nquote-style = "{style}"\n')
    assert subprocess.run([ruff, "format", "--check", "m.py"], cwd=project).returncode == 0
    assert main(["check", "--no-cache", "--fix", "--unsafe-fixes", "m.py"]) == 0
    capsys.readouterr()
    fixed = (project / "m.py").read_text()
    assert f"raise ValueError({quote}expected n > 0{quote})" in fixed
    assert other + "expected" not in fixed
    check = subprocess.run([ruff, "format", "--diff", "m.py"], cwd=project, capture_output=True)
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()


def test_the_fix_hook_applies_the_safe_fix(project):
    (project / "m.py").write_text("x = 1  # noqa: AC101 -- stale\n")
    run = subprocess.run(
        [sys.executable, "-m", "checkers", "check", "--fix", "m.py"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert (project / "m.py").read_text() == "x = 1\n"


def test_a_literal_in_either_quote_reads_back_as_its_value():
    import ast

    from hypothesis import given
    from hypothesis import strategies as st

    from checkers.literals import string_literal

    @given(st.text(), st.sampled_from(['"', "'"]))
    def round_trip(value, quote):
        literal = string_literal(value, quote)
        assert ast.literal_eval(literal) == value
        if value.count('"') == value.count("'"):
            assert literal[0] == quote  # the preferred quote unless the other escapes less

    round_trip()
