"""The default number of workers: the CPUs this process may use, not the machine's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from checkers import pool


def _fake_cgroups(tmp_path, proc_lines: list[str], files: dict[str, str]):
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(exist_ok=True)
    proc = tmp_path / "proc_self_cgroup"
    proc.write_text("".join(line + "\n" for line in proc_lines))
    return str(root), str(proc)


@pytest.fixture
def sixteen_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)


def test_a_cgroup_v2_quota_caps_the_affinity(tmp_path, sixteen_cpus):
    root, proc = _fake_cgroups(
        tmp_path,
        ["0::/job/step"],
        {"job/step/cpu.max": "max 100000", "job/cpu.max": "250000 100000"},
    )
    # 2.5 CPUs of quota in the parent group: three workers, never sixteen.
    assert pool.available_cpus(root, proc) == 3


def test_an_unlimited_cgroup_v2_leaves_the_affinity(tmp_path, sixteen_cpus):
    root, proc = _fake_cgroups(tmp_path, ["0::/"], {"cpu.max": "max 100000"})
    assert pool.available_cpus(root, proc) == 16


def test_a_container_sees_its_own_group_at_the_root(tmp_path, sixteen_cpus):
    # /proc/self/cgroup names the host's path; the container mounts its own group at the root.
    root, proc = _fake_cgroups(tmp_path, ["0::/docker/abc"], {"cpu.max": "200000 100000"})
    assert pool.available_cpus(root, proc) == 2


def test_a_cgroup_v1_quota_caps_the_affinity(tmp_path, sixteen_cpus):
    root, proc = _fake_cgroups(
        tmp_path,
        ["4:memory:/x", "2:cpu,cpuacct:/kube/pod"],
        {
            "cpu,cpuacct/kube/pod/cpu.cfs_quota_us": "400000",
            "cpu,cpuacct/kube/pod/cpu.cfs_period_us": "100000",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1",
            "cpu,cpuacct/cpu.cfs_period_us": "100000",
        },
    )
    assert pool.available_cpus(root, proc) == 4


def test_a_fraction_of_a_cpu_is_one_worker_and_garbage_is_no_limit(tmp_path, sixteen_cpus):
    root, proc = _fake_cgroups(tmp_path, ["0::/a"], {"a/cpu.max": "50000 100000"})
    assert pool.available_cpus(root, proc) == 1
    root, proc = _fake_cgroups(tmp_path / "g", ["0::/a"], {"a/cpu.max": "lots 100000"})
    assert pool.available_cpus(root, proc) == 16
    assert pool.available_cpus(str(tmp_path / "none"), str(tmp_path / "no-such-file")) == 16


def test_the_affinity_caps_the_count_where_no_quota_is_set(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {2, 3}, raising=False)
    root, proc = _fake_cgroups(tmp_path, ["0::/"], {"cpu.max": "800000 100000"})
    assert pool.available_cpus(root, proc) == 2


@pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="Linux CPU affinity, and two CPUs to pin one of",
)
def test_a_run_pinned_to_one_cpu_checks_in_one_process(tmp_path):
    # Past the pool's threshold. Pinned to one CPU the files are checked in-process;
    # with two the same run starts a pool (the linter it hands its workers is kept).
    for i in range(220):
        (tmp_path / f"m{i}.py").write_text("def f(x):\n    assert x\n")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.atom-contracts]\n[[tool.atom-contracts.contracts]]\nid = "a"\nkind = "input-assert"\n'
    )
    script = (
        "import os, sys\n"
        "cpus = sorted(os.sched_getaffinity(0))[: int(sys.argv[1])]\n"
        "os.sched_setaffinity(0, cpus)\n"
        "from checkers.api import check\n"
        "from checkers import pool\n"
        "result = check(['.'], use_cache=False)\n"
        "print(len(result.findings), pool.available_cpus(), pool._WORKER is not None)\n"
    )

    def run(cpus: int) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", script, str(cpus)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.split()

    assert run(1) == ["220", "1", "False"]
    assert run(2) == ["220", "2", "True"]
