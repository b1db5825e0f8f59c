"""Ctrl-C as ruff treats it.

Interrupted anywhere, the parallel phase included (1.0-1.3 s into a stdlib
run), the run exits 130 within a second, no process of it survives, and the
cache file is the one from before (never half-written).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from ..conftest import REPO_ROOT
from ..scaffold import pyproject, write_tree

STDLIB = Path(sysconfig.get_paths()["stdlib"])

DECLARATION = pyproject("no-input-asserts", "retired", src=[str(STDLIB)])


def _sigint_as_in_a_terminal() -> None:
    """In the child before exec: SIGINT's default action, as a terminal's foreground job has.

    A suite started with SIGINT ignored (a script's background job) would
    hand that on, and a run started ignoring SIGINT rightly goes on ignoring
    it (``test_a_run_started_with_sigint_ignored_goes_on_ignoring_it``).
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _python(cwd, script: str, *args: str, terminal_sigint: bool = True, timeout: float = 120):
    """``python -c script args`` on this checkout's code, run in ``cwd``, its output as text.

    ``terminal_sigint``: SIGINT's default action in the child (``_sigint_as_in_a_terminal``);
    False hands on the suite's own disposition.
    """
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        preexec_fn=_sigint_as_in_a_terminal if terminal_sigint else None,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid``, from /proc (no psutil here)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _workers(pid: int) -> set[int]:
    """The pool's workers: forked children running the parent's own command line."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            own = fh.read()
    except OSError:
        return set()
    found = set()
    for child in _children(pid):
        try:
            with open(f"/proc/{child}/cmdline", "rb") as fh:
                if fh.read() == own:
                    found.add(child)
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cache_files(cache_dir: Path) -> dict[str, bytes]:
    """Every file of the cache folder (a key's shards in its own folder), by relative name."""
    return {
        p.relative_to(cache_dir).as_posix(): p.read_bytes()
        for p in cache_dir.rglob("*")
        if p.is_file()
    }


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.skipif(not STDLIB.is_dir(), reason="needs the stdlib sources on disk")
def test_ctrl_c_in_the_parallel_phase_exits_130_at_once_and_leaves_nothing(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": DECLARATION})
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    # A cache from an earlier, smaller run: the interrupted run must leave it as it was.
    subprocess.run(
        [sys.executable, "-m", "checkers", "check", "--exit-zero", "-q", str(STDLIB / "json")],
        cwd=tmp_path,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    cache_dir = tmp_path / ".atom-contracts-cache"
    cached = _cache_files(cache_dir)
    assert any(name.endswith(".marshal") for name in cached)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "checkers",
            "check",
            "--jobs",
            "2",
            "--exit-zero",
            "-q",
            str(STDLIB),
        ],
        preexec_fn=_sigint_as_in_a_terminal,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        # Wait until the pool's workers are up: the interrupt must land in the parallel phase.
        deadline = time.monotonic() + 60
        while len(_workers(proc.pid)) < 2 and proc.poll() is None:
            if time.monotonic() > deadline:
                pytest.fail("no worker processes appeared within 60 s")
            time.sleep(0.02)
        workers = _workers(proc.pid)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.2)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
        rc = proc.wait(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    assert rc == 130, err
    assert "Traceback" not in err and "Error" not in err, err
    assert took < 1.0, f"took {took:.2f} s to exit"
    time.sleep(0.2)
    assert not [w for w in workers if _alive(w)], "workers survived the interrupt"
    after = _cache_files(cache_dir)
    assert {name: after.get(name) for name in cached} == cached  # the old cache, whole
    assert not [name for name in after if name.rpartition("/")[2].startswith(".tmp")]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.skipif(not STDLIB.is_dir(), reason="needs the stdlib sources on disk")
def test_workers_die_with_a_killed_run(tmp_path):
    write_tree(tmp_path, {"pyproject.toml": DECLARATION})
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "checkers",
            "check",
            "--no-cache",
            "--jobs",
            "2",
            "--exit-zero",
            "-q",
            str(STDLIB),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while len(_workers(proc.pid)) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = _workers(proc.pid)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 2
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [w for w in workers if _alive(w)]
    for w in survivors:
        os.kill(w, signal.SIGKILL)
    assert workers and not survivors, "workers outlived the killed run"


def test_an_interrupted_cache_save_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    from checkers.cache import Cache, shard_of

    cache = Cache(tmp_path, "k")
    cache.put("a.py", 1, 0, b"d", (), ())
    cache.save()
    shard = cache.shard_path(shard_of("a.py"))
    before = shard.read_bytes()
    cache.put("a.py", 2, 0, b"e", (), ())

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        cache.save()
    monkeypatch.undo()
    assert shard.read_bytes() == before
    assert sorted(_cache_files(cache.base)) == [".gitignore", f"k/{shard.name}"]


def test_an_ended_pool_has_closed_its_pipes_before_the_interpreter_exits(monkeypatch):
    """Interpreter exit writes to the pool's wakeup pipe without the lock its
    close takes (CPython 3.11), so a manager thread still closing it when the
    interrupted run exits printed `OSError: Bad file descriptor` after exit
    130 (1 Ctrl-C in about 60 at random points of a stdlib + torch run). The
    close is slowed here so that race is certain: the pool must be done with
    its pipes when ``end_pool`` returns."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, process

    from checkers.pool import end_pool, init_worker

    real_close = process._ThreadWakeup.close

    def slow_close(self):
        time.sleep(0.2)
        real_close(self)

    monkeypatch.setattr(process._ThreadWakeup, "close", slow_close)
    pool = ProcessPoolExecutor(
        max_workers=2,
        mp_context=multiprocessing.get_context("fork"),
        initializer=init_worker,
        initargs=(None, None),
    )
    futures = [pool.submit(time.sleep, 30) for _ in range(4)]
    wakeup = pool._executor_manager_thread_wakeup
    manager = pool._executor_manager_thread
    end_pool(pool)
    assert wakeup._closed and not manager.is_alive()
    assert all(f.done() for f in futures)


# A run whose first pool fork is hit by SIGINT: in the parent (after the fork,
# where os.register_at_fork's hooks run) or in the new worker (before its
# initializer ignores SIGINT). Both landed at random Ctrl-Cs in about 1 in 50
# tries: the parent's KeyboardInterrupt was raised inside logging's fork hook,
# printed as "Exception ignored" and lost, so the run went on to the end (a
# Ctrl-C that does not end the run); the worker's printed a traceback.
_FORK_HIT = """\
import os, signal, sys
from multiprocessing import process
hit = []

def interrupt():
    if not hit:
        hit.append(1)
        os.kill(os.getpid(), signal.SIGINT)

if sys.argv[1] == "parent":
    os.register_at_fork(after_in_parent=interrupt)
else:  # where the worker's traceback was: its bootstrap, before the initializer
    after_fork = process.BaseProcess._after_fork

    def interrupted_after_fork():
        interrupt()
        after_fork()

    process.BaseProcess._after_fork = staticmethod(interrupted_after_fork)
from checkers.cli import main
sys.exit(main(["check", "--no-cache", "--jobs", "2", "--exit-zero", "-q", "."]))
"""


def _fork_hit_tree(tmp_path: Path) -> None:
    files = {"pyproject.toml": pyproject("no-input-asserts", "retired")}
    for i in range(300):  # past PARALLEL_THRESHOLD, in several chunks: a pool of two
        files[f"m{i}.py"] = "def f(x):\n    assert x\n    return x\n"
    write_tree(tmp_path, files)


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_ctrl_c_in_the_parent_as_the_pool_forks_still_ends_the_run(tmp_path):
    _fork_hit_tree(tmp_path)
    done = _python(tmp_path, _FORK_HIT, "parent")
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_ctrl_c_in_a_worker_before_it_ignores_sigint_is_dropped(tmp_path):
    # The terminal's Ctrl-C reaches the parent too, which ends the run; the
    # worker's copy must make no noise of its own and cost no file its findings.
    _fork_hit_tree(tmp_path)
    done = _python(tmp_path, _FORK_HIT, "child")
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert done.stdout.count("AC301") == 300


# A process that has let its pool go: a thread that never ends stands in for
# the pool's manager thread stuck at exit (the join interpreter exit makes has
# no time limit). The command must still end, with the run's own status.
_ABANDONED = """
import sys, threading
from concurrent.futures import ProcessPoolExecutor
import multiprocessing
from checkers import cli
from checkers.pool import end_pool

pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"))
pool.submit(pow, 2, 2).result()
end_pool(pool)
threading.Thread(target=threading.Event().wait, name="stuck").start()
sys.argv = ["atom-contracts", "explain", "AC301"]
print("before the exit", flush=False)  # unflushed: os._exit must not drop it
cli.console_main()
"""


def test_a_run_that_let_its_pool_go_exits_without_waiting_for_its_threads(tmp_path):
    proc = _python(tmp_path, _ABANDONED, terminal_sigint=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "before the exit" in proc.stdout
    assert "AC301" in proc.stdout  # explain's own output, flushed before os._exit


def test_a_run_that_abandoned_nothing_exits_normally(tmp_path):
    # Without the pool let go, console_main leaves by sys.exit: atexit runs.
    script = (
        "import atexit, sys\n"
        "from checkers import cli\n"
        "atexit.register(lambda: print('atexit ran'))\n"
        "sys.argv = ['atom-contracts', 'explain', 'AC301']\n"
        "cli.console_main()\n"
    )
    proc = _python(tmp_path, script, terminal_sigint=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().endswith("atexit ran")


# The entries that are not `check`: each must end on a Ctrl-C, leaving nothing.

_CONSOLE = "import sys; from checkers.cli import console_main; console_main()"


def _live_descendants_of(proc: subprocess.Popen, until: float, wanted) -> set[int]:
    """Descendants of ``proc`` once one satisfies ``wanted`` (its cmdline, bytes)."""
    while time.monotonic() < until and proc.poll() is None:
        found = set()
        for pid in _children(proc.pid):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if wanted(fh.read()):
                        found.add(pid)
            except OSError:
                continue
        if found:
            return found
        time.sleep(0.01)
    pytest.fail("the process it waits for never appeared")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_ctrl_c_ends_the_language_server_at_once(tmp_path):
    """pygls catches the KeyboardInterrupt and then waits, with no time limit,
    for its thread reading stdin, which waits for the editor's next message:
    a server on a terminal would never end on Ctrl-C."""
    pytest.importorskip("pygls")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE, "server"],
        preexec_fn=_sigint_as_in_a_terminal,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
        proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        proc.stdin.flush()
        # Its answer says the server is up and reading the next message.
        assert proc.stdout.readline().startswith(b"Content-Length:")
        time.sleep(0.2)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGABRT)  # the fault handler prints where it waits
            proc.wait(timeout=5)
            pytest.fail("the server did not end:\n" + proc.stderr.read().decode())
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    assert rc == 130, err
    assert "Traceback" not in err, err
    assert took < 1.0, f"took {took:.2f} s to exit"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_a_language_server_started_with_sigint_ignored_goes_on_ignoring_it(tmp_path):
    pytest.importorskip("pygls")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE, "server"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # As a shell leaves a script's background job: SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
        proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        proc.stdin.flush()
        assert proc.stdout.readline().startswith(b"Content-Length:")
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.5)
        assert proc.poll() is None, "the server took a SIGINT it was started ignoring"
        proc.stdin.close()  # the editor going away ends it, as ever
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _hook_project(tmp_path: Path, fake_ruff: str) -> tuple[Path, dict[str, str], bytes]:
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject("no-input-asserts"),
            "pkg/__init__.py": "",
            "pkg/mod.py": "def f(x):\n    assert x\n    return x\n",
        },
    )
    ruff = tmp_path / "fake-ruff"
    ruff.write_text(fake_ruff)
    ruff.chmod(0o755)
    mod = tmp_path / "pkg" / "mod.py"
    payload = {
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "cwd": str(tmp_path),
        "tool_input": {"file_path": str(mod)},
        "tool_response": {"filePath": str(mod), "success": True},
    }
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "ATOM_CONTRACTS_RUFF": str(ruff),
    }
    import json

    return mod, env, json.dumps(payload).encode()


def _interrupt_hook(tmp_path, env, payload, wanted, after_s) -> tuple[int, float, str, set[int]]:
    """Run the hook, SIGINT its group ``after_s`` once ``wanted`` is running; what it left."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _CONSOLE, "hook", "post-tool-use"],
        preexec_fn=_sigint_as_in_a_terminal,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the hook's group, as Claude Code's Ctrl-C reaches it
    )
    seen: set[int] = set()
    try:
        proc.stdin.write(payload)
        proc.stdin.close()
        seen = _live_descendants_of(proc, time.monotonic() + 60, wanted)
        time.sleep(after_s)
        seen |= _children(proc.pid)
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        rc = proc.wait(timeout=10)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()
    # Looked at as soon as the hook has gone: its ruffs are its own children,
    # reaped before it exits, so anything alive now was left to run on.
    left = {p for p in seen if _alive(p)}
    for p in left:
        os.kill(p, signal.SIGKILL)
    return rc, took, err, left


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_ctrl_c_in_the_hook_leaves_no_ruff_behind(tmp_path):
    """The second ruff (what the rewrite fixed, read while the contracts are
    checked) runs in its own POSIX session, so the terminal's Ctrl-C never
    reaches it: the interrupted hook must end it itself."""
    fake = (
        "#!/bin/sh\n"
        "for last; do :; done\n"
        "case \" $* \" in *' --no-fix '*) exec sleep 60;; esac\n"
        'printf "# rewritten\\n" >> "$last"\n'
        "echo '[]'\n"
    )
    mod, env, payload = _hook_project(tmp_path, fake)
    rc, took, err, left = _interrupt_hook(
        tmp_path, env, payload, lambda cmd: cmd.startswith(b"sleep"), 0.3
    )
    assert rc == 0 and "interrupted; nothing reported" in err, (rc, err)
    assert "Traceback" not in err, err
    assert took < 1.0, f"took {took:.2f} s to exit"
    assert not left, "a ruff outlived the interrupted hook"
    assert mod.read_text().endswith("# rewritten\n")


# ruff --fix writes a file in place (File::create, which truncates, then the
# text: crates/ruff/src/diagnostics.rs), so killing it mid-write loses the file.
# A stand-in that truncates, waits 0.4 s, then writes must be let finish (an
# interrupted hook that killed it at once left the file empty; one interrupted
# before it waited for ruff left ruff running); one still mid-rewrite after the
# grace is killed, and what it left on disk (here the truncated file and one
# line) is nobody's file: the edit is put back.
_FINISHES_IN_THE_GRACE = (
    "#!/bin/sh\n"
    "for last; do :; done\n"
    'fixed=$(cat "$last")\n'
    ': > "$last"\n'
    "sleep 0.4\n"
    'printf "%s\\n# rewritten\\n" "$fixed" > "$last"\n'
    "echo '[]'\n"
)
_NEVER_FINISHES = (
    '#!/bin/sh\nfor last; do :; done\nprintf "import os\\n" > "$last"\nexec sleep 60\n'
)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize(
    ("fake", "kept"),
    [(_FINISHES_IN_THE_GRACE, "# rewritten\n"), (_NEVER_FINISHES, "")],
    ids=["finishes-in-the-grace", "never-finishes"],
)
def test_ctrl_c_in_the_hook_leaves_ruff_s_whole_rewrite_or_the_edit(tmp_path, fake, kept):
    mod, env, payload = _hook_project(tmp_path, fake)
    before = mod.read_text()
    rc, took, err, left = _interrupt_hook(
        tmp_path, env, payload, lambda cmd: cmd.startswith(b"sleep"), 0.1
    )
    assert rc == 0 and "interrupted; nothing reported" in err, (rc, err)
    assert took < 1.0, f"took {took:.2f} s to exit"
    assert not left, "a ruff outlived the interrupted hook"
    assert mod.read_text() == before + kept


# A Ctrl-C that lands once the run is over -- its verdict printed, its cache
# saved -- while the interpreter tears down. An atexit handler stands in for
# that moment (atexit runs inside the teardown): SIGINT then went to
# teardown code, printed as "Exception ignored ... KeyboardInterrupt" with the
# traceback (1 in 100 Ctrl-Cs around the end of a short run did so), and
# one landing after the interpreter had put the default action back killed
# the process by the signal (12 in 100).
_AT_TEARDOWN = """
import atexit, os, signal, sys
from checkers import cli

atexit.register(lambda: os.kill(os.getpid(), signal.SIGINT))
sys.argv = ["atom-contracts", "explain", "AC301"]
cli.console_main()
"""


def test_a_ctrl_c_after_the_run_is_over_changes_neither_its_output_nor_its_status(tmp_path):
    proc = _python(tmp_path, _AT_TEARDOWN, timeout=60)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stderr == "", proc.stderr
    assert "AC301" in proc.stdout


# A Ctrl-C whose KeyboardInterrupt is raised inside a weakref callback, where
# Python prints it as "Exception ignored" and drops it. The project's map of
# the sources being checked runs such a callback for every file (1 Ctrl-C
# in 200 around the end of a short run went so, the run ending 0).
# The SIGINT is sent from inside a callback here, so that is certain.
_IN_A_CALLBACK = """
import os, signal, sys, weakref
from checkers import cli, fixer, linter, reporters

phase = sys.argv[1]
hit = []

class Dying:
    pass

def hitting(real):
    def run(*args, **kwargs):
        if len(hit) == 5:
            dying = Dying()
            ref = weakref.ref(dying, lambda _: os.kill(os.getpid(), signal.SIGINT))
            del dying
        hit.append(1)
        return real(*args, **kwargs)
    return run

if phase == "check":
    linter.Linter.check_file = hitting(linter.Linter.check_file)
    flags = []
elif phase == "report":  # after the last file: no file loop is left to raise it
    hit.extend([1] * 5)
    reporters.render = hitting(reporters.render)
    flags = []
else:  # the fix phase: api imports write_fixed when it starts fixing
    fixer.write_fixed = hitting(fixer.write_fixed)
    flags = ["--fix", "--unsafe-fixes"]
sys.argv = ["atom-contracts", "check", "--no-cache", "--jobs", "1", "--exit-zero", "-q", *flags, "."]
cli.console_main()
"""


@pytest.mark.parametrize("phase", ["check", "fix", "report"])
def test_a_ctrl_c_a_callback_would_drop_still_ends_the_run(tmp_path, phase):
    _fork_hit_tree(tmp_path)
    done = _python(tmp_path, _IN_A_CALLBACK, phase)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    if phase == "check":
        assert done.stdout.count("AC301") <= 6  # ended at the next file, not the 300th
    elif phase == "report":  # the report was under way: it is printed whole, and the run is 130
        assert done.stdout.count("AC301") == 300, done.stdout[-300:]
    else:  # ended at the next file to fix; each one written is whole and compiles
        sources = [p.read_text() for p in sorted(tmp_path.glob("m*.py"))]
        changed = [text for text in sources if "assert x" not in text]
        assert 1 <= len(changed) <= 6, len(changed)
        for text in sources:
            compile(text, "m.py", "exec")


# A process started with SIGINT ignored -- a background job of a script
# (`atom-contracts check &`: the shell ignores SIGINT for it, so the
# terminal's Ctrl-C stops only the foreground job), or under nohup-like
# wrappers -- must go on ignoring it, as Python itself does. The handler that
# keeps a dropped Ctrl-C (checkers.interrupt) was first installed over it.
_IGNORING = """
import os, signal, sys
from checkers import cli, linter

signal.signal(signal.SIGINT, signal.SIG_IGN)  # as inherited from the shell
real = linter.Linter.check_file
hit = []

def check_file(self, *args, **kwargs):
    if len(hit) == 5:
        os.kill(os.getpid(), signal.SIGINT)
    hit.append(1)
    return real(self, *args, **kwargs)

linter.Linter.check_file = check_file
sys.argv = ["atom-contracts", "check", "--no-cache", "--jobs", "1", "--exit-zero", "-q", "."]
cli.console_main()
"""


def test_a_run_started_with_sigint_ignored_goes_on_ignoring_it(tmp_path):
    _fork_hit_tree(tmp_path)
    done = _python(tmp_path, _IGNORING, terminal_sigint=False)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert done.stdout.count("AC301") == 300


# A Ctrl-C in the first moments of the command, once Python's own handler is
# in place but before the run has begun: while console_main loads and
# installs checkers.interrupt (unhandled: a KeyboardInterrupt traceback and
# death by the signal, 1 try in 80 at about 33 ms), and, for the agent hook,
# while the hook module loads (exit 130, which Claude Code shows the user as
# a hook error, where an interrupted hook documents exit 0).
_EARLY = """
import importlib, sys
from checkers import cli, interrupt

def interrupted(*args, **kwargs):
    raise KeyboardInterrupt

if sys.argv[1] == "install":
    interrupt.install = interrupted
    sys.argv = ["atom-contracts", "explain", "AC301"]
else:
    real = importlib.import_module
    importlib.import_module = (
        lambda name, *a: interrupted() if name == "hooks.post_tool_use" else real(name, *a)
    )
    sys.argv = ["atom-contracts", "hook", "post-tool-use"]
cli.console_main()
"""


@pytest.mark.parametrize(
    ("where", "status", "said"),
    [
        ("install", 130, ""),
        ("hook", 0, "atom-contracts hook: interrupted; nothing reported\n"),
    ],
)
def test_a_ctrl_c_before_the_run_begins_is_its_status_without_a_traceback(
    tmp_path, where, status, said
):
    done = subprocess.run(
        [sys.executable, "-c", _EARLY, where],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (status, said)
    assert done.stdout == ""


def test_a_later_run_in_the_same_process_does_not_inherit_an_ended_run_s_ctrl_c(monkeypatch):
    """One Ctrl-C dropped, a second one ending the run: both answered by its 130."""
    from types import SimpleNamespace

    from checkers import cli, interrupt

    def interrupted(args):
        interrupt._noted = True
        interrupt._unraisable(SimpleNamespace(exc_type=KeyboardInterrupt))  # the dropped one
        raise KeyboardInterrupt  # the one that ended the run

    with monkeypatch.context() as patched:
        patched.setattr(cli, "_main", interrupted)
        assert cli.main(["explain", "AC301"]) == 130
    assert cli.main(["explain", "AC301"]) == 0


# A KeyboardInterrupt that no Ctrl-C raised -- code raising it in a weakref callback -- is
# Python's to report as "Exception ignored", as it would be without checkers.interrupt: only a
# SIGINT's interrupt is kept to end the run.
_RAISED_IN_A_CALLBACK = """
import weakref
from checkers import interrupt

interrupt.install()

class Dying:
    pass

def raising(_):
    raise KeyboardInterrupt

dying = Dying()
ref = weakref.ref(dying, raising)
del dying
interrupt.check()
print("went on")
"""


def test_a_keyboardinterrupt_no_ctrl_c_raised_is_reported_not_kept(tmp_path):
    done = _python(tmp_path, _RAISED_IN_A_CALLBACK, timeout=60)
    assert (done.returncode, done.stdout) == (0, "went on\n"), done.stderr
    assert "Exception ignored" in done.stderr and "KeyboardInterrupt" in done.stderr


def test_a_dropped_ctrl_c_is_raised_once(monkeypatch):
    from types import SimpleNamespace

    from checkers import interrupt

    monkeypatch.setattr(interrupt, "_noted", True)
    monkeypatch.setattr(interrupt, "_dropped", False)
    interrupt._unraisable(SimpleNamespace(exc_type=KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        interrupt.check()
    interrupt.check()  # answered: the next file goes on
