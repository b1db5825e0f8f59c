"""Fixes write back exactly what they read, but for the edit.

Each case is one way a naive writer loses bytes under ``--fix
--unsafe-fixes``: re-encoding cookie files as UTF-8, dropping BOMs, ending
inserted lines in a bare LF in CRLF files, replacing symlinks and hard links
by new files, rewriting read-only files, deleting comments inside the
rewritten statement.
"""

from __future__ import annotations

import os
import stat

import pytest

from checkers import api
from checkers.cli import main

from .conftest import ASSERT_LINES

FIXED_LINES = [
    "def f(x):",
    "    if not (x > 0):",
    # Double quotes: the formatters' default, for a file with no string literal of its own.
    '        raise ValueError("expected x > 0")',
    "    return x",
    "",
]


def fix(project, *paths):
    return api.check(
        [project / p for p in paths] or [project],
        fix=True,
        unsafe_fixes=True,
        use_cache=False,
        jobs=1,
    )


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_inserted_lines_end_as_the_file_s_lines_do(project, newline):
    (project / "m.py").write_bytes(newline.join(ASSERT_LINES).encode())
    result = fix(project, "m.py")
    assert result.fixed == 1
    assert (project / "m.py").read_bytes() == newline.join(FIXED_LINES).encode()


def test_a_latin_1_cookie_file_is_written_in_latin_1(project):
    source = '# -*- coding: latin-1 -*-\ndef f(x):\n    assert x > 0, "café"\n    return x\n'
    (project / "m.py").write_bytes(source.encode("latin-1"))
    assert fix(project, "m.py").fixed == 1
    data = (project / "m.py").read_bytes()
    assert data == (
        "# -*- coding: latin-1 -*-\ndef f(x):\n    if not (x > 0):\n"
        '        raise ValueError("café")\n    return x\n'
    ).encode("latin-1")
    compile(data, "m.py", "exec")


def test_a_cp1252_file_still_compiles(project):
    # 0x9d is undefined in cp1252: written back as UTF-8, "”" (0x94 in cp1252)
    # became bytes whose 0x9d the cookie's codec then refused to read.
    source = '# coding: cp1252\ndef f(x):\n    assert x > 0, "”quoted”"\n    return x\n'
    (project / "m.py").write_bytes(source.encode("cp1252"))
    assert fix(project, "m.py").fixed == 1
    data = (project / "m.py").read_bytes()
    compile(data, "m.py", "exec")
    assert data.decode("cp1252").count("”") == 2


def test_a_bom_is_kept(project):
    (project / "m.py").write_bytes(b"\xef\xbb\xbf" + "\n".join(ASSERT_LINES).encode())
    assert fix(project, "m.py").fixed == 1
    assert (project / "m.py").read_bytes() == b"\xef\xbb\xbf" + "\n".join(FIXED_LINES).encode()


def test_a_fix_the_codec_cannot_spell_is_refused_by_name():
    from checkers.fixer import WriteRefused, encode_like

    source = "# coding: ascii\nx = 1\n"
    assert encode_like(source.encode(), source + "y = 2\n") == (source + "y = 2\n").encode()
    with pytest.raises(WriteRefused, match="'é', which ascii cannot encode"):
        encode_like(source.encode(), source + "y = 'é'\n")


def test_comments_inside_a_rewritten_statement_survive(project):
    source = (
        "def f(x):\n"
        "    assert x > 0, (\n"
        '        "bad x"  # why\n'
        "    )\n"
        "    return x\n"
        "\n"
        "from vllm.triton_utils import (\n"
        "    triton,  # keep me\n"
        ")\n"
    )
    (project / "m.py").write_text(source)
    assert fix(project, "m.py").fixed == 2
    text = (project / "m.py").read_text()
    assert "# why" in text and "# keep me" in text
    compile(text, "m.py", "exec")
    assert "assert" not in text and "vllm" not in text


def test_many_fixes_in_one_file_index_the_text_once_a_pass(project, monkeypatch):
    # Each fix used to split the whole text into lines again (and tokenize it for its
    # comments): 12,500 fixes in one 50,000-line file took minutes. Now a pass indexes its
    # text once, however many fixes it takes, and every comment still survives.
    from checkers import fixer

    counts = {"lines": 0, "tokens": 0}
    real_lines, real_comments = fixer._line_starts, fixer._comments

    def counted_lines(text):
        counts["lines"] += 1
        return real_lines(text)

    def counted_comments(text):
        counts["tokens"] += 1
        return real_comments(text)

    monkeypatch.setattr(fixer, "_line_starts", counted_lines)
    monkeypatch.setattr(fixer, "_comments", counted_comments)
    n = 300
    (project / "m.py").write_text(
        "".join(
            f'def f{i}(x):\n    assert x > {i}, (\n        "bad x"  # why {i}\n    )\n    return x\n\n'
            for i in range(n)
        )
    )
    assert fix(project, "m.py").fixed == n
    text = (project / "m.py").read_text()
    assert all(f"# why {i}\n" in text for i in range(n)) and "assert" not in text
    compile(text, "m.py", "exec")
    # Two passes (the second finds nothing): per pass a table for choosing, one for the
    # comments, one for applying; the tokenizer once for the pass that keeps comments.
    assert counts["lines"] <= 8 and counts["tokens"] <= 2, counts


def test_a_comment_with_no_line_of_its_own_keeps_the_fix_from_applying():
    from checkers.fixer import keeping_comments
    from contracts.finding import Edit, Fix

    text = "x = 1; from a import (b,  # keep\n)\n"
    fix = Fix("m", (Edit(1, 8, 2, 2, "import b"),))
    assert keeping_comments(text, fix) is None
    moved = keeping_comments(
        "from a import (b,  # keep\n)\n", Fix("m", (Edit(1, 1, 2, 2, "import b"),))
    )
    assert moved.edits[0].content == "# keep\nimport b"


def test_a_symlink_is_written_through_to_its_target(project):
    (project / "real.py").write_text("\n".join(ASSERT_LINES))
    (project / "link.py").symlink_to("real.py")
    fix(project, "link.py")
    assert (project / "link.py").is_symlink()
    assert (project / "real.py").read_text() == "\n".join(FIXED_LINES)


def test_a_symlink_leaving_the_project_is_refused_with_a_message(project, tmp_path_factory, capsys):
    outside = tmp_path_factory.mktemp("outside") / "o.py"
    outside.write_text("\n".join(ASSERT_LINES))
    (project / "link.py").symlink_to(outside)
    (project / "mine.py").write_text("\n".join(ASSERT_LINES))
    assert main(["check", "--fix", "--unsafe-fixes", "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert "link.py: not fixed: a symlink to" in err and "outside the project" in err
    assert outside.read_text() == "\n".join(ASSERT_LINES)
    assert (project / "mine.py").read_text() == "\n".join(FIXED_LINES)


def test_a_hard_link_stays_one_file(project):
    (project / "a.py").write_text("\n".join(ASSERT_LINES))
    os.link(project / "a.py", project / "b.py")
    fix(project, "a.py")
    assert os.path.samefile(project / "a.py", project / "b.py")
    assert (project / "b.py").read_text() == "\n".join(FIXED_LINES)
    assert not [p for p in os.listdir(project) if p.startswith(".atom-contracts-fix-")]


@pytest.mark.parametrize("how", ["hard-link", "symlink"])
@pytest.mark.parametrize("cached", [False, True], ids=["no-cache", "cache"])
def test_one_file_under_two_paths_is_fixed_once_and_reported_clean(project, capsys, how, cached):
    # A hard link, or a symlink beside its target, puts one file in the run twice. Fixing
    # it through one path changes the other's bytes too: the other's findings are then
    # those of the fixed file, not the ones read before the fix.
    (project / "a.py").write_text("\n".join(ASSERT_LINES))
    if how == "hard-link":
        os.link(project / "a.py", project / "b.py")
    else:
        os.symlink("a.py", project / "b.py")
    args = ["check", "--fix", "--unsafe-fixes"] + ([] if cached else ["--no-cache"])
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Fixed 1 finding." in out and "Found" not in out and "All contracts hold" in out
    assert (project / "b.py").read_text() == "\n".join(FIXED_LINES)
    assert main(["check", *args[3:]]) == 0  # and a re-check agrees


def test_mode_and_owner_are_kept(project):
    path = project / "m.py"
    path.write_text("\n".join(ASSERT_LINES))
    os.chmod(path, 0o751)
    if os.geteuid() == 0:
        os.chown(path, 1234, 5678)
    fix(project, "m.py")
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o751
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (1234, 5678)
    assert path.read_text() == "\n".join(FIXED_LINES)


def test_a_read_only_file_is_left_alone_and_the_rest_fixed(project, capsys):
    (project / "ro.py").write_text("\n".join(ASSERT_LINES))
    os.chmod(project / "ro.py", 0o444)
    (project / "rw.py").write_text("\n".join(ASSERT_LINES))
    assert main(["check", "--fix", "--unsafe-fixes", "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert "ro.py: not fixed: read-only" in err
    assert (project / "ro.py").read_text() == "\n".join(ASSERT_LINES)
    assert (project / "rw.py").read_text() == "\n".join(FIXED_LINES)


def _during_fix(monkeypatch, action):
    """Run ``action(path)`` between the fixer's read and its write of each file."""
    from checkers import fixer

    real = fixer.write_fixed

    def write_fixed(path, original, text, *, root):
        action(path)
        return real(path, original, text, root=root)

    monkeypatch.setattr(fixer, "write_fixed", write_fixed)


def test_a_file_changed_since_it_was_read_is_left_alone(project, monkeypatch):
    for name in ("a.py", "b.py"):
        (project / name).write_text("\n".join(ASSERT_LINES))

    def edit(path):
        if path.endswith("a.py"):
            with open(path, "a") as fh:
                fh.write("# the user's edit\n")

    _during_fix(monkeypatch, edit)
    result = fix(project)
    assert result.warnings == ["a.py: not fixed: changed on disk since it was read"]
    assert (project / "a.py").read_text().endswith("# the user's edit\n")
    assert "assert" in (project / "a.py").read_text()
    assert (project / "b.py").read_text() == "\n".join(FIXED_LINES)


def test_a_file_deleted_mid_run_is_skipped_and_the_rest_fixed(project, monkeypatch):
    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (project / name).write_text("\n".join(ASSERT_LINES))
    _during_fix(monkeypatch, lambda path: path.endswith("m1.py") and os.unlink(path))
    result = fix(project)
    assert result.warnings == ["m1.py: not fixed: deleted since it was read"]
    assert result.fixed == 4
    for name in names:
        if name != "m1.py":
            assert (project / name).read_text() == "\n".join(FIXED_LINES)


def test_bytes_that_would_not_compile_are_never_written(tmp_path):
    from checkers.fixer import WriteRefused, write_fixed

    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    with pytest.raises(WriteRefused, match="would not compile"):
        write_fixed(str(path), b"x = 1\n", "x = (\n", root=tmp_path)
    assert path.read_bytes() == b"x = 1\n"


def test_an_interrupted_in_place_write_puts_the_original_back(tmp_path, monkeypatch):
    from checkers import fixer

    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")
    os.link(path, tmp_path / "n.py")
    real_open = open
    calls = []

    class Interrupting:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.fh.__exit__(*exc)

        def write(self, data):
            self.fh.write(data[:3])
            raise KeyboardInterrupt

        def __getattr__(self, name):
            return getattr(self.fh, name)

    def fake_open(file, mode="r", *args, **kwargs):
        fh = real_open(file, mode, *args, **kwargs)
        if mode == "r+b" and not calls:
            calls.append(file)
            return Interrupting(fh)
        return fh

    monkeypatch.setattr("builtins.open", fake_open)
    with pytest.raises(KeyboardInterrupt):
        fixer.write_fixed(str(path), b"x = 1\n", "x = 22\n", root=tmp_path)
    monkeypatch.undo()
    assert path.read_bytes() == b"x = 1\n"
    assert sorted(os.listdir(tmp_path)) == ["m.py", "n.py"]


@pytest.mark.parametrize("step", ["fsync", "chmod", "replace"])
def test_an_interrupted_atomic_write_leaves_the_original_and_no_temporary(
    tmp_path, monkeypatch, step
):
    # The normal write (one link, our own file): a temporary beside the file,
    # renamed over it. A Ctrl-C (or a crash) at any step before the rename
    # must leave the file as it was and no temporary behind; the in-place
    # path has its own test above.
    from checkers import fixer

    path = tmp_path / "m.py"
    path.write_bytes(b"x = 1\n")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, step, interrupted)
    with pytest.raises(KeyboardInterrupt):
        fixer.write_fixed(str(path), b"x = 1\n", "x = 22\n", root=tmp_path)
    monkeypatch.undo()
    assert path.read_bytes() == b"x = 1\n"
    assert os.listdir(tmp_path) == ["m.py"]


def test_a_file_deleted_between_the_check_and_the_fix_is_named_and_the_rest_fixed(
    project, monkeypatch
):
    # Deleted after discovery, before the fixer reads it: a FileNotFoundError
    # there must not abandon the files after it (5 of 2,005 fixed, the rest not).
    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (project / name).write_text("\n".join(ASSERT_LINES))
    from checkers import run

    real = run.fix_files

    def deleting_first(*args, **kwargs):
        (project / "m3.py").unlink()
        return real(*args, **kwargs)

    monkeypatch.setattr(run, "fix_files", deleting_first)
    result = fix(project)
    assert result.warnings == ["m3.py: not fixed: cannot be read (No such file or directory)"]
    assert result.fixed == 4
    for name in names:
        if name != "m3.py":
            assert (project / name).read_text() == "\n".join(FIXED_LINES)
    assert not (project / "m3.py").exists()


def test_a_file_deleted_between_discovery_and_its_check_is_passed_over(project, monkeypatch):
    from checkers.linter import Linter

    names = [f"m{i}.py" for i in range(5)]
    for name in names:
        (project / name).write_text("\n".join(ASSERT_LINES))
    real = Linter.check_file

    def deleting(self, path, abspath, *args, **kwargs):
        if path == "m2.py":
            os.unlink(abspath)
        return real(self, path, abspath, *args, **kwargs)

    monkeypatch.setattr(Linter, "check_file", deleting)
    result = api.check([project], use_cache=False, jobs=1)
    assert sorted({(f.path, f.code) for f in result.findings}) == [
        (name, "AC301") for name in names if name != "m2.py"
    ]
