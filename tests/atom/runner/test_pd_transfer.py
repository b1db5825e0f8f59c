"""P/D between two real processes (`atom.runner.pd_transfer`), over gloo on the CPU.

One prefill and one decode process run every case of one plan: every registry model (and
target + draft pair) at bf16 and fp8, each end building its own pool -- the decode end through
the P/D import walk at the counts the prefill end's manifest states -- a random set of blocks
(and, for a model with per-request state, request slots) moved through the staging buffer into
other random ids, and every decode-side view read back bit for bit against the prefill side's
view of the blocks it sent, every other byte of the decode side's pools unchanged. Then the
mismatched pairs, each refused by name on both ends before a byte moves.

One pair of processes runs the whole plan (a process costs an interpreter and torch's import, a
case a few hundred milliseconds); the ids are drawn from a seeded generator, and printed in the
case name, so a failure names the ids that showed it.
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from pathlib import Path

import pytest

from atom.models.registry import load_config
from atom.runner import pd_transfer
from atom.runner.pd_transfer import Transport, run_pair
from contracts.runtime.strategies import DRAFT_PAIRS, case_names, default_case

#: The widest tensor parallelism each case builds at: every field and layout of the model at a
#: fraction of its bytes (a hybrid's request state is hundreds of MiB at tp 1).
REPO = Path(__file__).resolve().parents[3]
TP_SIZES = (8, 4, 2, 1)
BLOCKS = 4
STATE_ENTRIES = 2
SEED = 20261206


def _end(name: str, **engine) -> dict:
    target, draft = DRAFT_PAIRS.get(name, (name, None))
    return {"model": target, "draft": draft, "engine": engine}


def _engine(name: str, kv: str) -> dict:
    """The case's engine settings at the widest tp it builds at, and its priced entry bytes."""
    from atom.engine_config import EngineConfig
    from atom.models.registry import load_model_config
    from atom.runner.model_runner import ModelRunner

    block = default_case(name).engine.scheduler_block_size
    target, draft = DRAFT_PAIRS.get(name, (name, None))
    for tp in TP_SIZES:
        engine = dict(tp_size=tp, kv_dtype=kv, scheduler_block_size=block, index_cache_dtype="fp8")
        try:
            runner = ModelRunner(
                load_model_config(target),
                EngineConfig(**engine),
                draft_config=load_model_config(draft) if draft else None,
            )
            return engine, runner
        except (ValueError, TypeError):
            continue
    raise AssertionError(f"{name} builds at no tp in {TP_SIZES}")


def _moved_case(name: str, kv: str, rng: random.Random) -> tuple[dict, dict]:
    engine, runner = _engine(name, kv)
    # One block stays unaddressed; a random non-empty set moves into other random ids.
    count = rng.randint(1, BLOCKS - 1)
    src, dst = rng.sample(range(BLOCKS), count), rng.sample(range(BLOCKS), count)
    state = bool(runner._state_pool_names())
    slots = ([rng.randrange(STATE_ENTRIES)], [rng.randrange(STATE_ENTRIES)]) if state else ([], [])
    label = f"{name} {kv} blocks {src}->{dst}" + (f" slots {slots[0]}->{slots[1]}" if state else "")
    # What a staged unit is, read off the price side: the entry's bytes less its padding.
    from atom.layout_report import layout_report

    classes = layout_report(runner)["entry_classes"]
    case = {
        "name": label,
        "seed": rng.randrange(1 << 30),
        "prefill": {**_end(name, **engine), "blocks": BLOCKS, "state_entries": STATE_ENTRIES,
                    "ids": src, "slots": slots[0]},
        "decode": {**_end(name, **engine), "ids": dst, "slots": slots[1]},
    }  # fmt: skip
    expected = {
        "page": classes["page"]["entry_bytes"] - classes["page"]["padding_bytes"],
        "state": classes["state"]["entry_bytes"] - classes["state"]["padding_bytes"]
        if "state" in classes
        else 0,
        "blocks": count,
        "slots": len(slots[0]),
    }
    return case, expected


def _mismatch(label: str, prefill: dict, decode: dict, **decode_extra) -> dict:
    return {
        "name": label,
        "prefill": {**prefill, "blocks": 3, "state_entries": STATE_ENTRIES, "ids": [0]},
        "decode": {**decode, "ids": [1], **decode_extra},
    }


LLAMA = {"tp_size": 8, "scheduler_block_size": 16}
V4 = {"tp_size": 8, "scheduler_block_size": 256}
M2_HEAD = load_config("eagle3-draft-llama").get("_model")
M3_HEAD = load_config("minimax-m3-eagle3").get("_model")
#: Each mismatched pair, and what both ends' refusal must name.
MISMATCHES = {
    "reordered regions": (
        _mismatch(
            "reordered regions",
            _end("llama-3.1-8b", **LLAMA),
            _end("llama-3.1-8b", **LLAMA),
            arrange="interleave-fields",
        ),
        "page region 1 is 'target.h1d128/v/0' here and 'target.h1d128/k/1' on the prefill end",
    ),
    # The prefill end built before the fields were folded; the decode end after.
    "reordered regions on the prefill end": (
        _mismatch(
            "reordered regions on the prefill end",
            _end("llama-3.1-8b", **LLAMA),
            _end("llama-3.1-8b", **LLAMA),
        ),
        "page region 1 is 'target.h1d128/k/1' here and 'target.h1d128/v/0' on the prefill end",
    ),
    "another dtype": (
        _mismatch(
            "another dtype",
            _end("llama-3.1-8b", **LLAMA, kv_dtype="fp8"),
            _end("llama-3.1-8b", **LLAMA, kv_dtype="fp8_e5m2"),
        ),
        "dtype is float8_e5m2 here and float8_e4m3fn on the prefill end",
    ),
    "another block size": (
        _mismatch(
            "another block size",
            _end("llama-3.1-8b", **LLAMA),
            _end("llama-3.1-8b", tp_size=8, scheduler_block_size=32),
        ),
        "scheduler_block_size is 32 here and 16 on the prefill end",
    ),
    "another model": (
        _mismatch(
            "another model",
            _end("eagle3-draft-llama", **LLAMA),
            _end("minimax-m3-eagle3", **LLAMA),
        ),
        # Each config's ``_model``, the name the registry gives it.
        f"model is {M3_HEAD!r} here and {M2_HEAD!r} on the prefill end",
    ),
    "another layout": (
        _mismatch(
            "another layout",
            _end("llama-3.1-8b", **LLAMA),
            _end("llama-3.1-8b", **LLAMA, mha_backend="triton"),
        ),
        "layouts is 'target=nhd' here and 'target=shuffle' on the prefill end",
    ),
    "an fp4 indexer": (
        _mismatch(
            "an fp4 indexer",
            _end("deepseek-v4-flash-dspark", **V4, index_cache_dtype="fp4"),
            _end("deepseek-v4-flash-dspark", **V4, index_cache_dtype="fp4"),
        ),
        "transfer with index_cache_dtype 'fp4' is refused",
    ),
    # The decode end's own refusal: it imports the prefill end's counts, then cannot describe
    # what it built.
    "an fp4 indexer on the decode end": (
        _mismatch(
            "an fp4 indexer on the decode end",
            _end("deepseek-v4-flash-dspark", **V4, index_cache_dtype="fp8"),
            _end("deepseek-v4-flash-dspark", **V4, index_cache_dtype="fp4"),
        ),
        "the decode end cannot import the prefill end's pools: ",
    ),
}
MISMATCHES["reordered regions on the prefill end"][0]["prefill"]["arrange"] = "interleave-fields"
#: Each refusal's words on the prefill end, where they differ from the decode end's needle.
PREFILL_NEEDLES = {
    "reordered regions": "page region 1 is 'target.h1d128/k/1' here and 'target.h1d128/v/0' on "
    "the decode end",
    "reordered regions on the prefill end": "page region 1 is 'target.h1d128/v/0' here and "
    "'target.h1d128/k/1' on the decode end",
    "another dtype": "dtype is float8_e4m3fn here and float8_e5m2 on the decode end",
    "another block size": "scheduler_block_size is 16 here and 32 on the decode end",
    "another model": f"model is {M2_HEAD!r} here and {M3_HEAD!r} on the decode end",
    "another layout": "layouts is 'target=shuffle' here and 'target=nhd' on the decode end",
    "an fp4 indexer": "the prefill end cannot describe its pools: ",
    "an fp4 indexer on the decode end": "the decode end cannot import the prefill end's pools: ",
}
#: A pair whose handshake passes and whose decode end refuses the blocks it is sent (a block id
#: past its pool): both ends report it, and the case ends there.
REFUSED_SCATTER = _mismatch(
    "a decode block id past its pool", _end("llama-3.1-8b", **LLAMA), _end("llama-3.1-8b", **LLAMA)
)
REFUSED_SCATTER["decode"]["ids"] = [7]


def _plan() -> tuple[list[dict], dict[str, dict]]:
    rng = random.Random(SEED)
    cases, expected = [], {}
    for name in case_names():
        for kv in ("bf16", "fp8"):
            case, want = _moved_case(name, kv, rng)
            cases.append(case)
            expected[case["name"]] = want
    cases += [case for case, _ in MISMATCHES.values()]
    cases.append(REFUSED_SCATTER)
    return cases, expected


PLAN, EXPECTED = _plan()
MOVED = [c["name"] for c in PLAN if c["name"] in EXPECTED]


#: The cases a test reads that are not its own parameter.
CASES_READ = {
    "test_a_refused_fp4_indexer_is_refused_by_that_setting_on_both_ends": [
        "an fp4 indexer",
        "an fp4 indexer on the decode end",
    ],
    "test_a_decode_end_refusing_the_blocks_it_is_sent_ends_the_case_on_both_ends": [
        REFUSED_SCATTER["name"],
    ],
    "test_each_end_reports_each_case_by_name_role_and_milliseconds": [MOVED[0], MOVED[-1]],
}


def _selected(items) -> set[str]:
    """The cases the selected tests read: ``-k llama`` runs llama's alone."""
    names = set()
    for item in items:
        if item.module is not None and item.module.__name__ == __name__:
            label = getattr(item, "callspec", None) and item.callspec.params.get("label")
            names.update([label] if label else CASES_READ.get(item.originalname, []))
    return names


@pytest.fixture(scope="module")
def pair_results(request) -> dict[str, dict]:
    wanted = _selected(request.session.items)
    plan = [case for case in PLAN if case["name"] in wanted]
    started = time.monotonic()
    results = run_pair(plan, backend="gloo", timeout_s=900)
    print(f"\n{len(plan)} P/D cases in two processes: {time.monotonic() - started:.1f} s")
    return {r["case"]: r for r in results}


def _bound_views(name: str, kv: str) -> int:
    _, runner = _engine(name, kv)
    runner.initialize(1, state_entries=STATE_ENTRIES, device="meta")
    return sum(len(m.kv_views) for m in runner.bound_modules())


@pytest.mark.parametrize("label", MOVED)
def test_every_model_moves_bit_exact_from_a_prefill_process_to_a_decode_process(
    pair_results, label
):
    result, want = pair_results[label], EXPECTED[label]
    prefill, decode = result["prefill"], result["decode"]
    assert decode["outcome"] == "moved", decode.get("error") or decode.get("refusal")
    assert prefill["outcome"] == "moved"
    # What crossed: whole blocks and whole slots, each its price less its padding.
    sent = want["blocks"] * want["page"] + want["slots"] * want["state"]
    assert prefill["bytes"] == decode["bytes"] == sent
    readback = decode["readback"]
    name, kv = label.split(" ")[:2]
    assert readback["views"] == _bound_views(name, kv), "a bound view was not read back"
    assert readback["pieces"] > 0 and readback["kept_bytes"] > 0
    # Random bytes were moved, not two blank pools compared: a byte is 0 one time in 256.
    assert readback["nonzero_bytes"] > 0.95 * readback["bytes"]
    # And the decode end's own pools held random bytes of their own before the move.
    assert readback["nonzero_before"] > 0.95 * readback["kept_bytes"]


@pytest.mark.parametrize("label", list(MISMATCHES))
def test_a_mismatched_pair_is_refused_by_name_on_both_ends_before_a_byte_moves(pair_results, label):
    needle = MISMATCHES[label][1]
    result = pair_results[label]
    for end in ("prefill", "decode"):
        assert result[end]["outcome"] == "refused", (end, result[end])
        assert result[end]["bytes"] == 0
    assert needle in result["decode"]["refusal"], result["decode"]["refusal"]
    assert PREFILL_NEEDLES[label] in result["prefill"]["refusal"], result["prefill"]["refusal"]


def test_a_refused_fp4_indexer_is_refused_by_that_setting_on_both_ends(pair_results):
    for label in ("an fp4 indexer", "an fp4 indexer on the decode end"):
        for end in ("prefill", "decode"):
            refusal = pair_results[label][end]["refusal"]
            assert "index_cache_dtype 'fp4' is refused" in refusal, (label, end, refusal)


def test_a_decode_end_refusing_the_blocks_it_is_sent_ends_the_case_on_both_ends(pair_results):
    result = pair_results[REFUSED_SCATTER["name"]]
    for end in ("prefill", "decode"):
        assert result[end]["outcome"] == "failed", (end, result[end])
        assert result[end]["error"] == "block id 7 is out of range for a region set of 3 blocks"
    # The blocks crossed (one llama block at tp 8: 32 layers x k, v x 16 tokens x 1 head x 128
    # x 2 B = 262,144 B); nothing was read back.
    assert result["prefill"]["bytes"] == 32 * 2 * 16 * 1 * 128 * 2
    assert "readback" not in result["decode"]


def test_each_end_reports_each_case_by_name_role_and_milliseconds(pair_results):
    for label, result in pair_results.items():
        for role in ("prefill", "decode"):
            end = result[role]
            assert (end["case"], end["role"]) == (label, role)
            assert 0 <= end["seconds"] < 600 and end["seconds"] == round(end["seconds"], 3)
    # Not every duration is a whole number of hundredths: the third digit is kept.
    assert any(
        r[role]["seconds"] != round(r[role]["seconds"], 2)
        for r in pair_results.values()
        for role in ("prefill", "decode")
    )


def test_the_plan_covers_every_registry_model_at_both_dtypes_and_the_hybrids_state():
    from atom.models.registry import model_names

    covered = {label.split(" ")[0] for label in MOVED}
    assert set(model_names()) | set(DRAFT_PAIRS) == covered
    assert {label.split(" ")[1] for label in MOVED} == {"bf16", "fp8"}
    with_slots = {label.split(" ")[0] for label in MOVED if "slots" in label}
    assert {"qwen3.5-27b", "kimi-linear-48b-a3b", "deepseek-v4-flash-dspark"} <= with_slots


def test_nccl_is_refused_by_name_without_two_gpus():
    import torch

    if torch.cuda.is_available() and torch.cuda.device_count() >= 2:
        pytest.skip("two GPUs are visible: NCCL is runnable here")
    with pytest.raises(
        ValueError, match=r"transport 'nccl' .* needs two visible GPUs; this machine shows"
    ):
        Transport("nccl").require_available()
    with pytest.raises(ValueError, match=r"transport 'nccl' .* needs two visible GPUs"):
        run_pair(PLAN[:1], backend="nccl")
    with pytest.raises(
        ValueError, match=r"transport backend 'mpi' is not one of \('gloo', 'nccl'\)"
    ):
        Transport("mpi")


def test_a_crashing_end_is_reported_and_both_processes_are_gone(monkeypatch):
    # Block 7 of a 3-block pool: the prefill end's gather refuses it after the handshake, while
    # the decode end waits for blocks that never come -- the pair must not wait out its deadline.
    case = _mismatch("crash", _end("llama-3.1-8b", **LLAMA), _end("llama-3.1-8b", **LLAMA))
    case["prefill"]["ids"] = [7]
    # A grace of two minutes: the wait ends when the decode end exits, not when the grace does.
    monkeypatch.setattr(pd_transfer, "FAILURE_GRACE_S", 120.0)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"P/D an end failed; prefill pid \d+ exited 1") as err:
        run_pair([case], timeout_s=600)
    assert time.monotonic() - started < 60
    # The decode end was given its moment to see the lost peer and fail by itself, not killed.
    assert re.search(r"decode pid \d+ exited 1: ", str(err.value)), str(err.value)
    assert "block id 7 is out of range for a region set of 3 blocks" in str(err.value)
    # Both ends ran this tree's code (the traceback's file), not another installed copy.
    assert f'File "{REPO / "atom" / "runner" / "pd_transfer.py"}"' in str(err.value)
    for pid in _pids(str(err.value)):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_pair_past_its_deadline_is_killed():
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"P/D pair ran past 0.2 s") as err:
        run_pair(PLAN[:1], timeout_s=0.2)
    # Killed at the deadline, not waited for: two interpreters still importing torch.
    assert time.monotonic() - started < 20
    assert re.findall(r"exited (-?\d+)", str(err.value)) == ["-9", "-9"], str(err.value)
    for pid in _pids(str(err.value)):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _pids(message: str) -> list[int]:
    pids = [int(p) for p in re.findall(r"pid (\d+)", message)]
    assert len(pids) == 2, message
    return pids


def test_an_interrupted_pair_leaves_no_process_behind(monkeypatch):
    import subprocess

    started = []
    real = subprocess.Popen

    def popen(*args, **kwargs):
        started.append(real(*args, **kwargs))
        return started[-1]

    sleep, calls = time.sleep, []

    def interrupt(seconds):
        calls.append(seconds)
        if len(calls) == 1:
            raise KeyboardInterrupt
        sleep(seconds)

    monkeypatch.setattr(pd_transfer.subprocess, "Popen", popen)
    # The first poll is interrupted, as a Ctrl-C while the pair runs.
    monkeypatch.setattr(pd_transfer.time, "sleep", interrupt)
    with pytest.raises(KeyboardInterrupt):
        run_pair(PLAN[:1], timeout_s=600)
    monkeypatch.undo()
    assert len(started) == 2
    assert all(proc.poll() is not None for proc in started), [p.pid for p in started]


def _gone(pid: int) -> bool:
    """No such process, or one that has exited and waits to be reaped (a zombie runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to see a process")
def test_a_starter_killed_outright_takes_both_ends_with_it(tmp_path):
    import signal
    import subprocess
    import sys

    pids, plan = tmp_path / "pids", tmp_path / "cases.json"
    plan.write_text(json.dumps(PLAN[:1]))
    starter = (
        "import json, subprocess\n"
        "from atom.runner import pd_transfer\n"
        "real = subprocess.Popen\n"
        "def popen(*a, **k):\n"
        "    proc = real(*a, **k)\n"
        f"    with open({str(pids)!r}, 'a') as fh:\n"
        "        fh.write(f'{proc.pid}\\n')\n"
        "    return proc\n"
        "pd_transfer.subprocess.Popen = popen\n"
        f"pd_transfer.run_pair(json.loads(open({str(plan)!r}).read()), timeout_s=600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", starter], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
            not pids.exists() or len(pids.read_text().split()) < 2
        ):
            time.sleep(0.05)
        ends = [int(p) for p in pids.read_text().split()]
        assert len(ends) == 2
    finally:
        proc.send_signal(signal.SIGKILL)  # no `finally` of run_pair runs
        proc.wait()
    # The ends were blocked on a store that is gone with its host; they see their parent go.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not all(_gone(pid) for pid in ends):
        time.sleep(0.1)
    alive = [pid for pid in ends if not _gone(pid)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive, f"ends {alive} outlived the process that started them"
