"""A tree the checker may read but not write gives the findings a writable one gives.

Nix builds, Bazel sandboxes and CI jobs that mount the checkout read-only are such trees: the
cache folder may be there from an earlier run, or not, and every write -- a memo, a shard, a
temporary and its clean-up -- fails with EROFS. A read-only *mount* refuses even root, and
refuses an ``unlink`` of a file that does not exist with EROFS rather than ENOENT (the kernel
asks for write access to the mount before it looks the name up), which a ``chmod`` never
shows. So each case runs twice: under ``read_only_mount``, which makes every write call under
a folder fail as that mount does (any user, any machine), and, where this machine lets the
test make one, in a real read-only bind mount (``unshare -m``), the CLI in a subprocess.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from checkers import api
from checkers.cache import CACHE_DIR
from checkers.cli import main

from .conftest import ASSERT_LINES

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@contextlib.contextmanager
def read_only_mount(folder: Path):
    """Every call that would change something under ``folder`` fails with EROFS, as on a
    read-only mount: opening for writing, creating, renaming, removing, changing mode."""
    top = os.path.realpath(folder)

    def under(path) -> bool:
        if isinstance(path, int):
            return False
        real = os.path.realpath(os.path.abspath(os.fsdecode(path)))
        return real == top or real.startswith(top + os.sep)

    def refuse(path):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), os.fsdecode(path))

    def guard(real, *positions):
        def call(*args, **kwargs):
            for i in positions:
                if i < len(args) and under(args[i]):
                    refuse(args[i])
            return real(*args, **kwargs)

        return call

    real_open, real_os_open = builtins.open, os.open

    def opener(file, mode="r", *args, **kwargs):
        if not isinstance(file, int) and set(mode) & set("wax+") and under(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def os_opener(path, flags, *args, **kwargs):
        if flags & _WRITE_FLAGS and under(path):
            refuse(path)
        return real_os_open(path, flags, *args, **kwargs)

    real_access, real_statvfs = os.access, os.statvfs

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and under(path):
            return False
        return real_access(path, mode, *args, **kwargs)

    def statvfs(path):
        found = real_statvfs(path)
        if not under(path):
            return found
        return os.statvfs_result((*found[:8], found.f_flag | os.ST_RDONLY, *found[9:]))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "access", access)
        patch.setattr(os, "statvfs", statvfs)
        patch.setattr(builtins, "open", opener)
        patch.setattr(io, "open", opener)
        patch.setattr(os, "open", os_opener)
        for name, positions in {
            "replace": (0, 1),
            "rename": (0, 1),
            "unlink": (0,),
            "remove": (0,),
            "mkdir": (0,),
            "rmdir": (0,),
            "chmod": (0,),
            "chown": (0,),
            "utime": (0,),
            "link": (1,),
            "symlink": (1,),
            "truncate": (0,),
        }.items():
            patch.setattr(os, name, guard(getattr(os, name), *positions))
        yield


def _tree(project: Path) -> dict[str, bytes]:
    return {
        p.relative_to(project).as_posix(): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def two_files(project: Path) -> Path:
    (project / "a.py").write_text("\n".join(ASSERT_LINES))
    (project / "b.py").write_text("import triton\nfrom vllm.triton_utils import tl\n")
    return project


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(args))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("cached_before", [True, False], ids=["cache-there", "no-cache-yet"])
@pytest.mark.parametrize("what", ["tree", "cache-folder"])
def test_a_read_only_tree_gives_the_same_findings_as_a_writable_one(
    two_files, monkeypatch, cached_before, what
):
    writable = _run("check")
    assert writable[0] == 1 and "AC301" in writable[1] and "vllm.triton_utils" in writable[1]
    if not cached_before:
        shutil.rmtree(two_files / CACHE_DIR)
        if what == "cache-folder":
            (two_files / CACHE_DIR).mkdir()
    # A new file since the cache was written: the second run has real work to do, and a
    # stale memo or listing would show.
    (two_files / "c.py").write_text("\n".join(ASSERT_LINES).replace("f(x)", "g(x)"))
    expected = _run("check", "--no-cache")
    before = _tree(two_files)
    folder = two_files if what == "tree" else two_files / CACHE_DIR
    with read_only_mount(folder):
        for _ in range(2):  # the second finds whatever the first could leave
            assert _run("check") == expected
            assert _tree(two_files) == before


def test_a_fix_on_a_read_only_tree_names_the_file_system_not_a_mode(two_files, monkeypatch):
    before = _tree(two_files)
    with read_only_mount(two_files):
        status, out, err = _run("check", "--fix", "--unsafe-fixes")
    assert status == 1 and "a.py:2:12: AC301" in out
    assert "internal error" not in err
    # The file's mode allows writing; what refuses is the mount, and that is what is said.
    assert "a.py: not fixed: on a read-only file system" in err
    assert "mode" not in err
    assert _tree(two_files) == before


def test_a_file_without_write_permission_names_its_mode(two_files, capsys):
    os.chmod(two_files / "a.py", 0o444)
    assert main(["check", "--fix", "--unsafe-fixes", "--no-cache"]) == 1
    assert "a.py: not fixed: read-only (mode -r--r--r--)" in capsys.readouterr().err


def test_a_file_another_user_owns_names_its_mode_and_owner(two_files, monkeypatch, capsys):
    # As root every permission check passes, so "not this user's to write" is what
    # os.access says, on a mount that is writable.
    target = os.path.realpath(two_files / "a.py")
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda p, m, *a, **k: False if p == target and m & os.W_OK else real(p, m)
    )
    assert main(["check", "--fix", "--unsafe-fixes", "--no-cache"]) == 1
    st = os.stat(target)
    assert (
        f"a.py: not fixed: not writable by this user (mode -rw-r--r--, owner {st.st_uid}, "
        f"group {st.st_gid})" in capsys.readouterr().err
    )


def test_the_simulated_mount_refuses_what_a_real_one_refuses(tmp_path, monkeypatch):
    # The helper above is only a stand-in for a mount if it refuses as one does.
    (tmp_path / "there").write_text("x")
    with read_only_mount(tmp_path):
        for call in (
            lambda: (tmp_path / "new").write_text("x"),
            lambda: (tmp_path / "missing").unlink(missing_ok=True),
            lambda: os.replace(tmp_path / "there", tmp_path / "moved"),
            lambda: (tmp_path / "dir").mkdir(),
            lambda: open(tmp_path / "there", "r+b").close(),
        ):
            with pytest.raises(OSError) as caught:
                call()
            assert caught.value.errno == errno.EROFS
        assert (tmp_path / "there").read_text() == "x"  # reading still works
        assert not os.access(tmp_path / "there", os.W_OK)
        assert os.statvfs(tmp_path).f_flag & os.ST_RDONLY


# -- a real read-only mount, where this machine lets a test make one ---------------------------


def _mount_prefix() -> list[str] | None:
    """``unshare`` arguments giving a private mount namespace, or None where none can be had."""
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return None
    for flags in (["-m"], ["-r", "-m"]):  # root, then an unprivileged user namespace
        probe = subprocess.run(
            [
                "unshare",
                *flags,
                "sh",
                "-c",
                "mount --bind / /mnt 2>/dev/null || mount -t tmpfs t /mnt",
            ],
            capture_output=True,
        )
        if probe.returncode == 0:
            return ["unshare", *flags]
    return None


MOUNT = _mount_prefix()


@pytest.mark.skipif(MOUNT is None, reason="this machine lets no test make a mount namespace")
@pytest.mark.parametrize("what", ["tree", "cache-folder"])
def test_a_real_read_only_mount_gives_the_same_findings(two_files, what):
    env = {**os.environ, "PYTHONPATH": str(Path(api.__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "checkers", "check"]
    writable = subprocess.run(command, cwd=two_files, env=env, capture_output=True, text=True)
    assert writable.returncode == 1 and "AC301" in writable.stdout
    (two_files / "c.py").write_text("\n".join(ASSERT_LINES).replace("f(x)", "g(x)"))
    expected = subprocess.run(
        [*command, "--no-cache"], cwd=two_files, env=env, capture_output=True, text=True
    )
    before = _tree(two_files)
    folder = two_files if what == "tree" else two_files / CACHE_DIR
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && "
        f"touch {folder}/probe 2>/dev/null && exit 99; "
        f'"$@"; "$@"'  # twice: the second meets whatever the first left
    )
    ran = subprocess.run(
        [*MOUNT, "sh", "-c", script, "sh", *command],
        cwd=two_files,
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 1, ran.stderr
    assert ran.stdout == expected.stdout * 2
    assert "internal error" not in ran.stderr and not ran.stderr.strip()
    assert _tree(two_files) == before
