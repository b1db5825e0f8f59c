"""The process pool a large run spreads its files over, and how it ends.

Above ``linter.PARALLEL_THRESHOLD`` files to check, the files go to forked workers
in chunks of ``CHUNK_FILES``, each worker inheriting the parent's linter (its
parsed configuration, its compiled globs; spawn platforms rebuild it from a
pickled copy). How a Ctrl-C is answered here -- the mask while the pool
forks, the workers that ignore SIGINT and die with their parent, the pool let
go without waiting -- is in docs/reliability.md.
"""

from __future__ import annotations

import gc
import math
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from contracts.config import Config

from . import interrupt
from .linter import CHUNK_FILES, FileResult, Linter, report_progress
from .selection import Selection


def available_cpus(
    cgroup_root: str = "/sys/fs/cgroup", proc_cgroup: str = "/proc/self/cgroup"
) -> int:
    """How many CPUs this process may use: the default number of workers.

    ``os.cpu_count()`` counts the machine's CPUs, not this process's: under
    ``taskset -c 2,3`` or in a container limited to two CPUs it still says 16,
    and 16 workers time-sliced on two cores cost about a sixth more CPU than
    two (vLLM's package on a quiet host: 8.1x ruff's CPU against 6.9x). So the count is the CPU affinity
    (``os.sched_getaffinity``), capped by a CPU quota of the process's
    control group -- ``cpu.max`` (cgroup v2) or ``cpu.cfs_quota_us`` over
    ``cpu.cfs_period_us`` (v1), rounded up -- the strictest found on the way
    from its group up to the hierarchy's root. At least one.
    """
    try:
        count = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        count = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        count = min(count, quota)
    return max(count, 1)


def _cgroup_quota(cgroup_root: str, proc_cgroup: str) -> int | None:
    """The CPU quota of this process's control groups, in whole CPUs; None when unlimited."""
    try:
        with open(proc_cgroup, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    found: list[float] = []
    for line in lines:
        controllers, _, path = line.partition(":")[2].partition(":")
        if controllers == "":  # cgroup v2: "0::/path"
            candidates = [cgroup_root]
            reader = _v2_quota
        elif "cpu" in controllers.split(","):
            candidates = [os.path.join(cgroup_root, name) for name in (controllers, "cpu")]
            reader = _v1_quota
        else:
            continue
        for base in map(os.path.normpath, candidates):
            # The group's folder, then each one above it: a parent's quota binds its children.
            folder = os.path.normpath(os.path.join(base, path.lstrip("/")))
            while True:
                quota = reader(folder)
                if quota is not None:
                    found.append(quota)
                if folder == base or not folder.startswith(base):
                    break
                folder = os.path.dirname(folder)
    if not found:
        return None
    return max(1, math.ceil(min(found)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except (OSError, ValueError):
        return None


def _v2_quota(folder: str) -> float | None:
    """``cpu.max``: ``"max 100000"`` (no limit) or ``"200000 100000"`` (two CPUs)."""
    text = _read(os.path.join(folder, "cpu.max"))
    if not text:
        return None
    quota, _, period = text.partition(" ")
    try:
        return int(quota) / int(period) if quota != "max" and int(period) > 0 else None
    except ValueError:
        return None


def _v1_quota(folder: str) -> float | None:
    """``cpu.cfs_quota_us`` over ``cpu.cfs_period_us``; a quota of -1 is no limit."""
    quota, period = (_read(os.path.join(folder, f"cpu.cfs_{n}_us")) for n in ("quota", "period"))
    try:
        q, p = int(quota or ""), int(period or "")
    except ValueError:
        return None
    return q / p if q > 0 and p > 0 else None


def check_parallel(linter: Linter, files, entries, jobs, progress, unchanged) -> list[FileResult]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    global _WORKER
    chunks = [files[i : i + CHUNK_FILES] for i in range(0, len(files), CHUNK_FILES)]
    payload = [
        (unchanged, [(rel, abspath, entries.get(rel)) for rel, abspath in chunk])
        for chunk in chunks
    ]
    # fork: workers inherit this linter (its parsed config, compiled globs)
    # instead of unpickling it; spawn platforms re-create it from the config.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    _WORKER = linter
    results: list[FileResult] = []
    done = 0
    pool = ProcessPoolExecutor(
        max_workers=min(jobs, len(chunks)),
        mp_context=multiprocessing.get_context(method),
        initializer=init_worker,
        initargs=(linter.config, linter.selection) if method == "spawn" else (None, None),
    )
    try:
        # SIGINT is held back while the pool forks: a Ctrl-C landing in a
        # fork hook was lost in the parent (logging's hook printed it as
        # "Exception ignored" and the run went on), and in a worker that
        # had not yet ignored it, it broke the pool. Held, it reaches the
        # parent when the mask is lifted; a worker inherits the mask, sets
        # SIG_IGN, then lifts it (init_worker), which drops its copy.
        with _sigint_held():
            # submit, not map: map cancels its pending futures when
            # interrupted, and the pool's manager thread then trips over them.
            futures = [pool.submit(_check_chunk, chunk) for chunk in payload]
        for future in futures:
            interrupt.check()
            chunk_results, summaries = future.result()
            results.extend(chunk_results)
            if summaries:
                linter.project.new_summaries.update(summaries)
            done += len(chunk_results)
            if progress:
                report_progress(done, len(files))
    except BaseException:
        # Ctrl-C (or any failure) in the parallel phase: the workers ignore
        # SIGINT, so end them here rather than wait for their chunks --
        # ruff's behaviour, exit 130 at once -- and leave no orphans.
        end_pool(pool)
        raise
    pool.shutdown()
    if progress:
        report_progress(len(files), len(files), final=True)
    return results


_WORKER: Linter | None = None


def init_worker(config: Config | None, selection: Selection | None) -> None:
    """A pool worker: the parent alone answers Ctrl-C, and the worker dies with the parent.

    A terminal's Ctrl-C reaches the whole process group; a worker that took it
    would die mid-chunk and leave the pool waiting for it. On Linux the kernel
    also kills a worker whose parent died (``PR_SET_PDEATHSIG``), so a killed
    run leaves no worker behind to finish its chunks for nobody.
    """
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # held by _sigint_held
    _die_with_parent()
    global _WORKER
    if config is not None and selection is not None:  # spawn: rebuild what fork inherits
        _WORKER = Linter(config, selection)


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Block SIGINT in this thread (and so in processes it forks) for the block."""
    import signal

    if not hasattr(signal, "pthread_sigmask"):  # Windows: no masks, and no fork either
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        if signal.SIGINT not in previous:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request took: nobody to work for
        os._exit(1)


#: Set once a pool has been let go without waiting (``end_pool``): the
#: process must then leave by ``os._exit`` (``cli.console_main``), because
#: interpreter exit joins the pool's manager thread with no time limit, and
#: on 3.11 that join can wait for ever behind threads whose workers were
#: killed (cpython#83386, gh-125451). One run in 248 interrupted ones hung so.
POOL_ABANDONED = False


def end_pool(pool) -> None:
    """Kill a pool's workers now and let it go without waiting for their work."""
    global POOL_ABANDONED
    POOL_ABANDONED = True
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for process in processes:
        with suppress(OSError, ValueError, AttributeError):
            process.kill()
    for process in processes:
        with suppress(OSError, ValueError, AssertionError):
            process.join(0.5)
    # Not cancel_futures: the pool's manager thread fails the killed workers'
    # futures as broken, and one already cancelled makes it print a traceback.
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False)
    # Wait (briefly: it only joins dead workers) for the manager thread to
    # close the pool's wakeup pipe. Interpreter exit writes to that pipe
    # without the lock close takes (3.11; gh-125451 added one in 3.12 and
    # 3.13), so a close landing mid-write printed an `OSError: Bad file
    # descriptor` traceback after an exit 130 (docs/reliability.md).
    if manager is not None:
        with suppress(RuntimeError):
            manager.join(0.5)


def _check_chunk(
    chunk: tuple[bool, list[tuple[str, str, tuple | None]]],
) -> tuple[list[FileResult], dict[str, tuple]]:
    """One chunk's results, and the import summaries the worker worked out for the cache."""
    linter = _WORKER
    if linter is None:  # pragma: no cover - the initializer always ran
        raise RuntimeError("worker started without a linter")
    unchanged, items = chunk
    gc.disable()
    try:
        results = [
            linter.check_file(rel, abspath, entry, tree_unchanged=unchanged)
            for rel, abspath, entry in items
        ]
        summaries: dict[str, tuple] = {}
        linter.end_chunk()  # its trees let go before the collection below, which walks them
        if linter._project is not None and linter._project.new_summaries:
            summaries = linter._project.new_summaries
            linter._project.new_summaries = {}
        return results, summaries
    finally:
        # The collector was off for the chunk, so the cycles its files left
        # (input-assert's analysis leaves ~100 objects in cycles per file) are
        # collected now, once; what survives -- the project's import summaries,
        # chains, bindings, never a tree -- is then frozen out of later
        # collections' sight, this process being the pool's. Freezing without
        # collecting first froze that garbage for good: a worker's peak grew
        # with the tree (69 MB on vLLM, 99 MB on it doubled).
        gc.collect()
        gc.freeze()
        gc.enable()
