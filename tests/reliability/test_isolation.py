"""One file never takes the whole run down.

A RecursionError inside input-assert on deep but valid code, an expression
too deep for ast.parse, a cache directory that is a plain file or a cache
file of the wrong shape: each is one file's problem, reported on that file,
never an "internal error", exit 2, with every other file's findings lost.
"""

from __future__ import annotations

import marshal

import pytest

from checkers import api
from checkers.cli import main

from .conftest import ASSERT_LINES

DEEP = {
    "sum-500": "def f(x):\n    assert " + " + ".join(["x"] * 500) + "\n",
    "elif-2000": "def f(x):\n    if x == 0:\n        pass\n"
    + "".join(f"    elif x == {i}:\n        assert x\n" for i in range(1, 2000)),
    "nested-90": "def f(x):\n"
    + "".join("    " * (i + 1) + "if x:\n" for i in range(89))
    + "    " * 90
    + "assert x > 0\n",
}


def _codes(result):
    return sorted((f.path, f.code) for f in result.findings)


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_but_valid_code_is_checked_and_the_rest_still_reported(project, name):
    compile(DEEP[name], name, "exec")
    (project / "deep.py").write_text(DEEP[name])
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    result = api.check(use_cache=False, jobs=1, cwd=project)
    codes = _codes(result)
    assert ("plain.py", "AC301") in codes
    assert all(code != "AC002" for _, code in codes), result.findings
    assert ("deep.py", "AC301") in codes


def test_an_expression_too_deep_for_the_parser_is_ac001(project):
    source = "def f(x):\n    assert x\n    return " + "+".join(["x"] * 100_000) + "\n"
    with pytest.raises((RecursionError, MemoryError, SyntaxError)):
        compile(source, "m.py", "exec")
    (project / "deep.py").write_text(source)
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    result = api.check(use_cache=False, jobs=1, cwd=project)
    assert _codes(result) == [("deep.py", "AC001"), ("plain.py", "AC301")]


def test_a_rule_that_raises_is_ac002_on_that_file_only(project, monkeypatch, capsys):
    from checkers.rules import input_assert

    real = input_assert.InputAssert.check

    def check(self, source, project):
        if source.path == "boom.py":
            yield from ()
            raise RuntimeError("kaboom")
        yield from real(self, source, project)

    monkeypatch.setattr(input_assert.InputAssert, "check", check)
    (project / "boom.py").write_text("\n".join(ASSERT_LINES))
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    assert main(["check", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "plain.py:2:12: AC301" in out
    (line,) = [line for line in out.splitlines() if line.startswith("boom.py")]
    assert line.startswith("boom.py:1:1: AC002 contract `no-input-asserts` (input-assert) failed")
    assert "RuntimeError: kaboom" in line


def test_ac002_is_documented_and_always_on(capsys):
    from checkers.selection import Selection

    assert main(["explain", "AC002"]) == 0
    assert "checker-failed" in capsys.readouterr().out
    assert Selection(["AC3"], ["AC0"]).enabled("AC002")
    assert not Selection(["AC3"]).enabled("AC002", ("AC002",))


def test_a_cache_directory_that_is_a_plain_file_is_a_miss(project, capsys):
    (project / ".atom-contracts-cache").write_text("not a directory\n")
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    for _ in range(2):
        assert main(["check"]) == 1
        assert "plain.py:2:12: AC301" in capsys.readouterr().out
    assert (project / ".atom-contracts-cache").read_text() == "not a directory\n"


def _nested(depth: int) -> tuple:
    value: tuple = ()
    for _ in range(depth):
        value = (value,)
    return value


WRONG_SHAPES = {
    "a-list": [1, 2, 3],
    # marshal refuses nesting past 2,000 levels (ValueError); under that it loads,
    # and a value that deep where the findings go must fail only that entry.
    "nested-past-marshal": None,
    "findings-nested-1500-deep": (None, {"plain.py": (0, 0, b"", _nested(1500), (), None)}),
    "entries-a-list": (None, []),
    "short-entry": (None, {"plain.py": (1, 2)}),
    "entry-an-int": (None, {"plain.py": 7}),
    "stamp-an-int": (3, {}),
    "inner-wrong": (None, {"plain.py": (0, 0, b"", (("AC301",),), (), None)}),
    "findings-not-tuples": (None, {"plain.py": (0, 0, b"", 5, 6, 7)}),
}


@pytest.mark.parametrize("name", sorted(WRONG_SHAPES))
def test_a_cache_file_of_the_wrong_shape_is_a_miss(project, capsys, name):
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    assert main(["check"]) == 1
    capsys.readouterr()
    cache_dir = project / ".atom-contracts-cache"
    from checkers.cache import shard_of

    (key_dir,) = (p for p in cache_dir.iterdir() if p.is_dir())
    cache_file = key_dir / f"{shard_of('plain.py'):02x}.marshal"
    assert cache_file.is_file()
    stored = WRONG_SHAPES[name]
    if name in ("inner-wrong", "findings-not-tuples", "findings-nested-1500-deep"):
        # Keep the file's real stat, so the linter trusts the entry and reads its inside.
        import os

        st = os.stat(project / "plain.py")
        entry = stored[1]["plain.py"]
        stored = (None, {"plain.py": (st.st_size, st.st_mtime_ns, *entry[2:])})
    if name == "nested-past-marshal":
        cache_file.write_bytes(b")\x01" * 100_000 + b"N")  # a 1-tuple in a 1-tuple ... of None
    else:
        cache_file.write_bytes(marshal.dumps(stored))
    assert main(["check"]) == 1
    captured = capsys.readouterr()
    assert "plain.py:2:12: AC301" in captured.out
    assert "AC002" not in captured.out and "internal error" not in captured.err


def test_ten_concurrent_runs_and_every_jobs_and_cache_setting_print_the_same(tmp_path):
    """Ten runs at once sharing one cache,
    ``--jobs 1`` and ``--jobs 8``, cached and ``--no-cache``, byte-identical --
    and the cache they raced over still serves the same findings."""
    import os
    import subprocess
    import sys

    from ..scaffold import CONTRACTS, lay_out

    files = {
        f"pkg/m{i // 10}/mod{i}.py": f"import vllm.triton_utils\n\n\ndef allocate(blocks, n{i}):\n"
        f"    assert n{i} > 0\n    return StateField(blocks)\n"
        for i in range(40)
    }
    files.update({f"pkg/m{i}/__init__.py": "" for i in range(4)})
    files.update(
        {
            "pkg/__init__.py": "",
            "pkg/leaf/__init__.py": "from pkg.m0 import mod0\n",
            "tests/test_k.py": "import triton\n",
        }
    )
    lay_out(tmp_path, *CONTRACTS, files=files)
    command = [sys.executable, "-m", "checkers", "check", "--output-format", "json"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def run(*args: str) -> str:
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300
        )
        assert done.returncode == 1 and not done.stderr, done.stderr
        return done.stdout

    want = run("--no-cache", "--jobs", "1")
    assert want.count('"code": "AC301"') == 40, want[:500]
    racing = [
        subprocess.Popen(
            [*command, "--jobs", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            env=env,
        )
        for _ in range(10)
    ]
    for process in racing:
        out, err = process.communicate(timeout=300)
        assert (process.returncode, err) == (1, "")
        assert out == want
    assert run("--no-cache", "--jobs", "8") == want
    assert run("--jobs", "8") == want  # warm, from the cache the ten raced over
    assert run("--jobs", "1") == want
