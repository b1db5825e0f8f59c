"""A fix leaves nothing behind: not on a full disk, not when its process is killed.

A fix writes a temporary beside its file (the new bytes, renamed over it) or, for a file with
more than one hard link, a backup of the original while it writes in place
(``checkers/fixer.py``). A full disk that refuses either must leave neither; a process
killed by SIGKILL (the OOM killer, ``kill -9``, a CI job's time limit) cannot clean up, so
the next run removes what such a process abandoned -- and only that: a concurrent run's
files are its own, and a backup whose file was cut short mid-write is the only copy of the
original, kept and named.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from checkers import fixer
from checkers.cli import main

from .conftest import ASSERT_LINES

ORIGINAL = "\n".join(ASSERT_LINES).encode()
FIXED = (
    b'def f(x):\n    if not (x > 0):\n        raise ValueError("expected x > 0")\n    return x\n'
)
REPO = Path(fixer.__file__).resolve().parents[1]


def ours(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(".atom-contracts-fix-"))


def _full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# -- a full disk --------------------------------------------------------------------------------


@pytest.mark.parametrize("links", [1, 2], ids=["renamed-over", "written-in-place"])
def test_a_full_disk_leaves_no_temporary_and_the_file_as_it_was(tmp_path, monkeypatch, links):
    # fsync is where a full disk shows on file systems that accept a write into the page
    # cache and refuse the blocks later; a refused write() is the real-mount test below.
    path = tmp_path / "m.py"
    path.write_bytes(ORIGINAL)
    if links == 2:
        os.link(path, tmp_path / "n.py")
    monkeypatch.setattr(os, "fsync", _full_disk)
    with pytest.raises(fixer.WriteRefused, match="No space left on device"):
        fixer.write_fixed(str(path), ORIGINAL, FIXED.decode(), root=tmp_path)
    monkeypatch.undo()
    assert path.read_bytes() == ORIGINAL
    assert ours(tmp_path) == []


def _namespace() -> list[str] | None:
    """``unshare`` arguments for a private mount namespace, or None where none can be had."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return None
    for flags in (["-m"], ["-r", "-m"]):
        probe = subprocess.run(
            ["unshare", *flags, "sh", "-c", "mount -t tmpfs t /mnt"], capture_output=True
        )
        if probe.returncode == 0:
            return ["unshare", *flags]
    return None


NAMESPACE = _namespace()


@pytest.mark.skipif(NAMESPACE is None, reason="this machine lets no test mount a small tmpfs")
def test_a_really_full_disk_leaves_no_temporary(project, tmp_path_factory):
    # A 512 KiB tmpfs holding the project, then filled to the last block: every write the
    # fix makes is refused by write() itself.
    (project / "a.py").write_bytes(ORIGINAL)  # renamed over
    (project / "b.py").write_bytes(ORIGINAL.replace(b"f(x)", b"g(x)"))
    os.link(project / "b.py", project / "c.py")  # written in place
    disk, logs = tmp_path_factory.mktemp("disk"), tmp_path_factory.mktemp("logs")
    script = textwrap.dedent(
        f"""
        mount -t tmpfs -o size=512k tmpfs {disk} || exit 90
        cp -a {project} {disk}/p || exit 91
        cd {disk}/p
        head -c 10m /dev/zero > filler 2>/dev/null
        "$@" check --fix --unsafe-fixes --no-cache 2>{logs}/stderr.txt >{logs}/stdout.txt
        echo "status=$?"
        rm filler
        ls -a
        echo ---; cat {logs}/stderr.txt; echo ---; cat {logs}/stdout.txt
        echo ---; cat a.py; echo ---; cat b.py
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    ran = subprocess.run(
        [*NAMESPACE, "sh", "-c", script, "sh", sys.executable, "-m", "checkers"],
        env=env,
        capture_output=True,
        text=True,
    )
    out = ran.stdout
    assert "status=1" in out, out + ran.stderr
    listing, err, _, a, b = out.split("status=1\n", 1)[1].split("---\n")
    assert ".atom-contracts-fix-" not in listing
    assert "internal error" not in err
    assert "a.py: not fixed: " in err and "No space left on device" in err
    assert "b.py: not fixed: " in err
    assert a.encode() == ORIGINAL
    assert b.encode() == ORIGINAL.replace(b"f(x)", b"g(x)")


# -- what a killed process abandoned ------------------------------------------------------------


def _killed_fix(project: Path, at: str) -> subprocess.CompletedProcess:
    """``check --fix`` in a process that SIGKILLs itself at ``at``: the first fsync (``fsync``),
    the second (``fsync2``), or once part of the new bytes is in the file (``torn``)."""
    code = textwrap.dedent(
        f"""
        import os, signal, sys, builtins
        sys.path.insert(0, {str(REPO)!r})
        at = {at!r}
        calls = []
        real_fsync, real_open = os.fsync, builtins.open
        def fsync(fd):
            calls.append(fd)
            if at == "fsync" or (at == "fsync2" and len(calls) == 2):
                os.kill(os.getpid(), signal.SIGKILL)
            return real_fsync(fd)
        class Torn:
            def __init__(self, fh): self.fh = fh
            def __enter__(self): return self
            def __exit__(self, *exc): return self.fh.__exit__(*exc)
            def write(self, data):
                self.fh.write(data[: len(data) // 2]); self.fh.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            def __getattr__(self, name): return getattr(self.fh, name)
        def opener(file, mode="r", *a, **k):
            fh = real_open(file, mode, *a, **k)
            return Torn(fh) if at == "torn" and mode == "r+b" else fh
        os.fsync, builtins.open = fsync, opener
        from checkers.cli import main
        main(["check", "--fix", "--unsafe-fixes", "--no-cache"])
        """
    )
    return subprocess.run([sys.executable, "-c", code], cwd=project, capture_output=True)


@pytest.mark.parametrize(
    ("links", "at"),
    [(1, "fsync"), (2, "fsync"), (2, "fsync2")],
    ids=["temporary", "backup-before-the-write", "backup-after-the-write"],
)
def test_the_next_fix_removes_what_a_killed_fix_left(project, capsys, links, at):
    path = project / "m.py"
    path.write_bytes(ORIGINAL)
    if links == 2:
        os.link(path, project / "n.py")
    killed = _killed_fix(project, at)
    assert killed.returncode == -signal.SIGKILL
    assert len(ours(project)) == 1  # what the kill left, as the next run finds it
    assert path.read_bytes() in (ORIGINAL, FIXED)
    status = main(["check", "--fix", "--unsafe-fixes", "--no-cache"])
    assert status == 0, capsys.readouterr()
    assert ours(project) == []
    assert path.read_bytes() == FIXED
    assert "warning" not in capsys.readouterr().err


def test_a_plain_check_removes_them_too(project, capsys):
    path = project / "m.py"
    path.write_bytes(ORIGINAL)
    assert _killed_fix(project, "fsync").returncode == -signal.SIGKILL
    assert len(ours(project)) == 1
    assert main(["check", "--no-cache"]) == 1
    assert ours(project) == []
    assert path.read_bytes() == ORIGINAL


def test_a_backup_of_a_write_cut_short_is_kept_and_named(project, capsys):
    path = project / "m.py"
    path.write_bytes(ORIGINAL)
    os.link(path, project / "n.py")
    assert _killed_fix(project, "torn").returncode == -signal.SIGKILL
    [backup] = ours(project)
    torn = path.read_bytes()
    assert torn not in (ORIGINAL, FIXED)  # neither: the kill landed mid-write
    main(["check", "--no-cache"])
    err = capsys.readouterr().err
    assert f"{project / backup}: a fix of {path} was cut short" in err
    assert ours(project) == [backup]
    assert (project / backup).read_bytes() == ORIGINAL  # the only copy, whole


# -- what is not abandoned is left alone --------------------------------------------------------


def _holder(folder: Path, name_pid: str) -> subprocess.Popen:
    """A live process holding a file of ours under ``folder``, named for ``name_pid``."""
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys
        fd = os.open(os.path.join({str(folder)!r}, ".atom-contracts-fix-" + {name_pid!r}.replace(
            "SELF", str(os.getpid())) + "-abcd1234.tmp"), os.O_CREAT | os.O_WRONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        sys.stdin.read()
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline() == "held\n"
    return child


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
@pytest.mark.parametrize("name_pid", ["SELF", "999999999"], ids=["alive", "other-namespace"])
def test_a_concurrent_runs_temporary_is_left_to_it(tmp_path, name_pid):
    # "other-namespace": the PID in its name is no process here (a run in another container
    # sharing the tree), but its lock is held: still not abandoned.
    child = _holder(tmp_path, name_pid)
    try:
        assert fixer.sweep_leftovers([str(tmp_path)]) == []
        assert len(ours(tmp_path)) == 1
    finally:
        child.stdin.close()
        child.wait()
    assert fixer.sweep_leftovers([str(tmp_path)]) == []  # its process gone, its lock with it
    assert ours(tmp_path) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize(
    ("on_disk", "removed"),
    [(ORIGINAL, True), (FIXED, True), (FIXED[:20] + ORIGINAL[20:], False), (None, False)],
    ids=["never-began", "finished", "cut-short", "file-gone"],
)
def test_an_abandoned_backup_is_removed_only_when_its_file_is_whole(tmp_path, on_disk, removed):
    digest = fixer._new_digest(FIXED)
    backup = tmp_path / f".atom-contracts-fix-{_dead_pid()}-{digest}-abcd1234-m.py.orig"
    backup.write_bytes(ORIGINAL)
    if on_disk is not None:
        (tmp_path / "m.py").write_bytes(on_disk)
    warnings = fixer.sweep_leftovers([str(tmp_path)])
    assert backup.exists() is not removed
    assert bool(warnings) is not removed
    if not removed:
        assert warnings == [
            f"{backup}: a fix of {tmp_path / 'm.py'} was cut short while it wrote the file in "
            "place; these are its original bytes, kept: compare, restore if need be, then "
            "remove it"
        ]


def test_a_backup_too_long_to_name_its_file_is_kept_and_named_by_folder(tmp_path):
    backup = tmp_path / f".atom-contracts-fix-{_dead_pid()}-{'0' * 16}-abcd1234-.orig"
    backup.write_bytes(ORIGINAL)
    [warning] = fixer.sweep_leftovers([str(tmp_path)])
    assert f"a fix of a file in {tmp_path} was cut short" in warning and backup.exists()


def test_a_file_only_resembling_ours_is_never_touched(tmp_path):
    for name in (
        ".atom-contracts-fix-notapid-abcd1234.tmp",
        f".atom-contracts-fix-{_dead_pid()}-abcd1234.tmp.bak",
        ".atom-contracts-fixture.tmp",
    ):
        (tmp_path / name).write_bytes(b"mine")
    assert fixer.sweep_leftovers([str(tmp_path)]) == []
    assert len(os.listdir(tmp_path)) == 3


def test_a_name_too_long_to_carry_still_writes_in_place(tmp_path):
    # The backup's own name carries its file's only up to _NAMED_UP_TO bytes.
    path = tmp_path / ("m" * 200 + ".py")
    path.write_bytes(ORIGINAL)
    os.link(path, tmp_path / "n.py")
    fixer.write_fixed(str(path), ORIGINAL, FIXED.decode(), root=tmp_path)
    assert path.read_bytes() == FIXED and ours(tmp_path) == []
