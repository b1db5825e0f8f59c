"""Files as users have them (issue 11, item 5): every one checked or reported, none a crash.

The encodings, line endings, symlinks, a deleted and a read-only file under
``--fix`` have their own tests beside this one; here are the rest of the
shapes a real tree holds: NUL bytes, tabs, form feeds, a 50,000-line module,
nesting 500 deep, symlink loops.
"""

from __future__ import annotations

import os

from checkers import api
from checkers.cli import main

from .conftest import ASSERT_LINES


def _codes(result):
    return sorted((f.path, f.code) for f in result.findings)


def _with_plain(project, name: str, data: bytes):
    (project / name).write_bytes(data)
    (project / "plain.py").write_text("\n".join(ASSERT_LINES))
    return api.check(use_cache=False, jobs=1, cwd=project)


def test_a_nul_byte_is_ac001(project):
    data = b"def f(x):\n    assert x\x00\n"
    try:
        compile(data, "m.py", "exec")
        raise AssertionError("compile accepted a NUL byte")
    except (SyntaxError, ValueError):
        pass
    assert _codes(_with_plain(project, "nul.py", data)) == [
        ("nul.py", "AC001"),
        ("plain.py", "AC301"),
    ]


def test_tab_indentation_is_read_and_fixed(project):
    (project / "tabs.py").write_text("def f(x):\n\tassert x > 0\n\treturn x\n")
    result = api.check(use_cache=False, jobs=1, cwd=project, fix=True, unsafe_fixes=True)
    assert result.fixed == 1
    text = (project / "tabs.py").read_text()
    assert (
        text
        == 'def f(x):\n\tif not (x > 0):\n\t    raise ValueError("expected x > 0")\n\treturn x\n'
    )
    compile(text, "tabs.py", "exec")


def test_a_50_000_line_module_is_checked(project):
    body = "".join(f"def f{i}(x):\n    assert x > {i}\n" for i in range(25_000))
    result = _with_plain(project, "big.py", body.encode())
    big = [f for f in result.findings if f.path == "big.py"]
    assert len(big) == 25_000 and all(f.code == "AC301" for f in big)
    assert big[-1].line == 50_000


def test_nesting_500_deep_is_ac001_where_python_refuses_it(project):
    parens = "def f(x):\n    assert x\n    return " + "(" * 500 + "x" + ")" * 500 + "\n"
    blocks = (
        "def f(x):\n"
        + "".join(" " * (i + 1) + "if x:\n" for i in range(500))
        + " " * 501
        + "assert x\n"
    )
    lists = "def f(x):\n    assert x\n    return " + "[" * 500 + "]" * 500 + "\n"
    for name, text in (("parens.py", parens), ("blocks.py", blocks), ("lists.py", lists)):
        try:
            compile(text, name, "exec")
            compiles = True
        except (SyntaxError, RecursionError, MemoryError):
            compiles = False
        result = _with_plain(project, name, text.encode())
        codes = {code for path, code in _codes(result) if path == name}
        assert ("plain.py", "AC301") in _codes(result)
        assert "AC002" not in codes
        assert ("AC001" in codes) == (not compiles), (name, codes)
        (project / name).unlink()


def test_symlink_loops_are_neither_followed_forever_nor_fatal(project, capsys):
    (project / "pkg").mkdir()
    (project / "pkg" / "m.py").write_text("\n".join(ASSERT_LINES))
    (project / "pkg" / "loop").symlink_to("..", target_is_directory=True)
    (project / "a.py").symlink_to("b.py")
    (project / "b.py").symlink_to("a.py")
    (project / "dangling.py").symlink_to("nowhere.py")
    code = main(["check", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 1, captured.err
    assert "internal error" not in captured.err
    assert "pkg/m.py:2:12: AC301" in captured.out
    assert captured.out.count("pkg/m.py:2:12: AC301") == 1


def test_a_read_only_file_is_reported_but_never_rewritten(project, capsys):
    path = project / "ro.py"
    path.write_text("\n".join(ASSERT_LINES))
    os.chmod(path, 0o444)
    before = os.stat(path)
    assert main(["check", "--fix", "--unsafe-fixes", "--no-cache"]) == 1
    assert "ro.py:2:12: AC301" in capsys.readouterr().out
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns, after.st_mode) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_mode,
    )


def test_a_pyproject_nested_too_deeply_is_a_config_error_not_a_crash(project, capsys):
    deep = 100_000
    (project / "pyproject.toml").write_text(
        (project / "pyproject.toml").read_text() + "\n[tool.other]\nx = " + "[" * deep + "]" * deep
    )
    (project / "mod.py").write_text("x = 1\n")
    assert main(["check", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml: not readable TOML" in err and "nested too deep" in err
    assert "internal error" not in err
