"""Files as users have them: every one checked or reported, none a crash.

The encodings, line endings, symlinks, a deleted and a read-only file under
``--fix`` have their own tests beside this one; here are the rest of the
shapes a real tree holds: NUL bytes, tabs, form feeds, a 50,000-line module,
nesting 500 deep, symlink loops.
"""

from __future__ import annotations

import os

import pytest

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
    # A loop is listed, as git lists it, and reported when read: never passed over in silence.
    for name in ("a.py", "b.py"):
        assert f"{name}:1:1: AC001 cannot be read: Too many levels of symbolic links" in (
            captured.out
        )
    # So is a symlink to nothing: a file of the tree that cannot be read, not one deleted
    # mid-run (which is passed over: test_fix_writes.py).
    assert (
        "dangling.py:1:1: AC001 cannot be read: a symlink to nowhere.py, which does not exist"
        in (captured.out)
    )


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


# A FIFO named like a module (a test harness's pipe, a `mkfifo` left behind):
# reading it waits for a writer that never comes, and the run hung -- in the
# tree walk, and in a cross-file contract reading a neighbour it imports.
_RUN = "import sys; from checkers.cli import main; sys.exit(main(sys.argv[1:]))"


def _run_check(cwd, *args):
    import subprocess
    import sys

    from ..conftest import REPO_ROOT

    return subprocess.run(
        [sys.executable, "-c", _RUN, "check", "--no-cache", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_fifo_in_the_tree_is_passed_over_and_never_waited_on(make_project):
    project = make_project(
        "no-input-asserts",
        "leaf",
        files={
            "pkg/__init__.py": "",
            "pkg/leaf/other.py": "",
            "user.py": "from pkg.leaf import piped\n" + "\n".join(ASSERT_LINES),
        },
    ).root
    os.mkfifo(project / "piped.py")
    os.mkfifo(project / "pkg" / "leaf" / "__init__.py")  # read for what it binds
    done = _run_check(project)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "internal error" not in done.stderr, done.stderr
    assert "user.py:3:12: AC301" in done.stdout
    assert "piped.py" not in done.stdout  # not source: git's listing leaves a FIFO out too


def test_a_fifo_named_on_the_command_line_is_refused_by_name(project):
    os.mkfifo(project / "piped.py")
    done = _run_check(project, "piped.py")
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "piped.py: not a regular file or a directory" in done.stderr


def _within_10_s(call):
    """``call()``'s value, from a thread that must be done within 10 s (a FIFO read waits)."""
    import threading

    out = []
    worker = threading.Thread(target=lambda: out.append(call()), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), f"{call} waited on a FIFO"
    return out[0]


def test_the_project_index_reads_no_fifo(tmp_path):
    # Cross-file contracts read neighbours through it: what a module binds and
    # imports, and whether any file spells a name.
    from checkers.project import Project

    os.mkfifo(tmp_path / "piped.py")
    project = Project(tmp_path, (tmp_path,))
    assert _within_10_s(lambda: project.read_source("piped.py")) is None
    assert _within_10_s(lambda: project.module_imports("piped.py")) == ()
    assert _within_10_s(lambda: project.mentions("anything")) is False
    # ... and still reads the regular files beside it.
    (tmp_path / "user.py").write_text("import triton\n")
    assert Project(tmp_path, (tmp_path,)).mentions("triton") is True
    assert Project(tmp_path, (tmp_path,)).mentions("anything") is False


def test_reading_a_fifo_is_an_oserror_not_a_wait(tmp_path):
    import threading

    from checkers.source import read_regular

    os.mkfifo(tmp_path / "piped.py")
    outcome = []

    def read():
        try:
            read_regular(str(tmp_path / "piped.py"))
        except OSError as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "read_regular waited on a FIFO"
    (error,) = outcome
    assert "not a regular file" in str(error)
    (tmp_path / "plain.py").write_bytes(b"x = 1\r\n")
    assert read_regular(str(tmp_path / "plain.py")) == b"x = 1\r\n"


def test_reading_leaves_no_file_descriptor_open(tmp_path):
    # A tree of tens of thousands of files is read through it: one left open per file runs
    # the process out of descriptors (EMFILE) part-way.
    from checkers.source import read_regular

    (tmp_path / "plain.py").write_bytes(b"x = 1\n")
    os.mkfifo(tmp_path / "piped.py")
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(20):
        assert read_regular(str(tmp_path / "plain.py")) == b"x = 1\n"
        with pytest.raises(OSError, match="not a regular file"):
            read_regular(str(tmp_path / "piped.py"))
    assert len(os.listdir("/proc/self/fd")) == before


def test_the_whole_program_scans_read_no_fifo(tmp_path):
    # The word and definition indexes read every file under the src roots, and
    # input-assert's package callers read the files an edit reaches.
    from checkers.analysis.program import program_of
    from checkers.project import Project
    from checkers.rules.input_assert import InputAssert

    os.mkfifo(tmp_path / "piped.py")
    (tmp_path / "user.py").write_text("def launch(x):\n    assert x\n")
    (tmp_path / "caller.py").write_text("from user import launch\nlaunch(1)\n")
    project = Project(tmp_path, (tmp_path,))
    program = program_of(project)
    assert _within_10_s(lambda: program.modules_spelling("launch")) == ["caller.py", "user.py"]
    assert _within_10_s(lambda: program.modules_defining("launch")) == ["user.py"]
    assert _within_10_s(lambda: program.modules_mentioning(("launch",))) == ["caller", "user"]
    assert _within_10_s(lambda: program.module("piped")) is None  # an outline read of it
    assert _within_10_s(lambda: program.spells("piped.py", ("launch",))) is False
    rule = InputAssert.from_table({"id": "t", "package-callers": True}, "t")
    edited = {"piped": "piped.py", "caller": "caller.py"}
    assert _within_10_s(lambda: rule.dependent_lines("piped.py", project, edited)) == {}
    assert _within_10_s(lambda: rule.dependent_lines("user.py", project, edited)) == {
        2: ("caller.py",)
    }


def test_a_local_run_asks_reachable_calls_of_no_fifo(tmp_path):
    # The entry names are looked for in every file in scope before any outline is asked.
    from checkers.project import Project
    from checkers.rules.reachable_calls import ReachableCalls

    os.mkfifo(tmp_path / "piped.py")
    project = Project(tmp_path, (tmp_path,))
    rule = ReachableCalls.from_table(
        {"id": "t", "entries": ["*.capture_*"], "forbidden": {"*.item": "a host sync"}}, "t"
    )
    edited = {"other": "other.py"}
    assert _within_10_s(lambda: rule.dependent_lines("piped.py", project, edited)) == {}


def test_a_fifo_named_gitignore_is_passed_over_by_the_walk(tmp_path):
    # Outside a git work tree the walk reads each folder's .gitignore itself.
    from checkers.discovery import _walk

    (tmp_path / "mod.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / ".gitignore")
    assert _within_10_s(lambda: _walk(str(tmp_path))) == ["mod.py"]
