"""P/D across two processes: a prefill end and a decode end, each with its own pool.

The prefill end builds its pools the allocating way (``ModelRunner.initialize``). The decode end
never sizes: it is told the counts by its peer and builds through the P/D import walk
(``ModelRunner.import_paged_pool`` over a buffer of its own), as a decode instance handed a
peer's pool does -- the paged block count, and the request slots a STATE class needs, both read
off the prefill end's wire manifest. Then, in order:

1. **handshake** -- the prefill end sends its manifest (``atom.runner.kv_transfer``); the decode
   end builds from it, sends its own and its verdict; the prefill end sends its verdict. If
   either end's build failed or either verdict names a difference, both refuse -- by the first
   header field and region that differ (``WireManifest.difference``) -- and no byte of a pool
   moves.
2. **blocks** -- the prefill end gathers the requested blocks (and request slots) into one staging
   buffer per region set (``RegionSet.gather``), sends it, and the decode end scatters it into
   the block ids (slots) it was given. A staged buffer carries the layout it was gathered in,
   which the scatter compares with its own before writing.
3. **readback** (optional) -- once the decode end has said it scattered the blocks (a refused
   scatter ends the case there, on both ends), the prefill end sends every bound view's bytes of
   the blocks and slots it moved, read through the views rather than the regions; the decode end
   reads its views at its ids and compares them bit for bit, and checks every byte outside the
   moved units kept what it held.

The transport is a parameter (:class:`Transport`): ``gloo`` between CPU processes, which is what
CI runs, and ``nccl`` with one process per GPU, which is the same path with CUDA devices and
staging buffers, refused by name where fewer than two GPUs are visible. Objects travel as JSON in
uint8 tensors (``torch.distributed``'s own object helpers need numpy, which the CPU wheel does not
bring).

:func:`run_pair` starts both ends as subprocesses of ``python -m atom.runner.pd_transfer``,
connected through a ``TCPStore`` the caller hosts on a port the operating system picks (no port
is guessed, so two pairs on one machine never collide), waits for both with a deadline, and kills
both (by their own process ids) on any failure or timeout.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from atom.pool_layout.manifest import WireManifest

PREFILL, DECODE = 0, 1
ROLES = {"prefill": PREFILL, "decode": DECODE}
BACKENDS = ("gloo", "nccl")
#: How long a pair may take, seconds, by default: two interpreters importing torch and every case
#: of a plan on a loaded two-core CI machine (a quiet one takes a tenth of it).
DEFAULT_TIMEOUT_S = 600.0
#: Seconds the other end has to exit on its own once one end failed, before it is killed.
FAILURE_GRACE_S = 10.0


# -- the transport -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Transport:
    """Which ``torch.distributed`` backend carries the bytes, and so where pools and staging live:
    ``gloo`` -- CPU tensors; ``nccl`` -- one GPU a process (``cuda:RANK``)."""

    backend: str = "gloo"

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"transport backend {self.backend!r} is not one of {BACKENDS}")

    def require_available(self) -> None:
        """Refuse, by name, a transport this machine cannot run."""
        import torch.distributed as dist

        if self.backend == "gloo" and not dist.is_gloo_available():
            raise ValueError("transport 'gloo': this torch build has no gloo backend")
        if self.backend == "nccl":
            gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if gpus < 2:
                raise ValueError(
                    f"transport 'nccl' runs one process a GPU and needs two visible GPUs; this "
                    f"machine shows {gpus}"
                )
            if not dist.is_nccl_available():
                raise ValueError("transport 'nccl': this torch build has no NCCL backend")

    def device(self, rank: int) -> torch.device:
        return torch.device("cpu") if self.backend == "gloo" else torch.device("cuda", rank)


def _send_json(obj: Any, dst: int, device: torch.device) -> None:
    import torch.distributed as dist

    payload = json.dumps(obj).encode()
    data = torch.tensor(list(payload), dtype=torch.uint8, device=device)
    dist.send(torch.tensor([len(payload)], dtype=torch.int64, device=device), dst=dst)
    if payload:
        dist.send(data, dst=dst)


def _recv_json(src: int, device: torch.device) -> Any:
    import torch.distributed as dist

    size = torch.empty(1, dtype=torch.int64, device=device)
    dist.recv(size, src=src)
    data = torch.empty(int(size.item()), dtype=torch.uint8, device=device)
    if data.numel():
        dist.recv(data, src=src)
    return json.loads(bytes(data.cpu().tolist()).decode())


# -- the decode side's import walk -------------------------------------------------------------


def import_for_peer(runner: Any, peer: WireManifest, *, device: torch.device | str) -> Any:
    """Back ``runner`` through the P/D import walk at the counts ``peer`` states: its paged
    blocks, and its request slots where it moves STATE. The buffer is this end's own (zeroed);
    the walk is the one a decode instance handed a peer's pool runs."""
    page = peer.region_set("page")
    if page is None or not page.units:
        raise ValueError("the peer's manifest states no page regions: no block count to import")
    state = peer.region_set("state")
    blocks = page.units
    buf = torch.zeros(runner.paged_pool_bytes(blocks), dtype=torch.uint8, device=device)
    return runner.import_paged_pool(
        buf, blocks, state_entries=state.units if state is not None else None
    )


# -- the two ends ------------------------------------------------------------------------------


class PeerRefused(ValueError):
    """The handshake ended in a refusal: this end's, or the peer's, named."""


def _staged_sets(runner: Any) -> dict[str, Any]:
    """The region sets a transfer moves: ``page`` and, when the pools keep per-request state,
    ``state``."""
    from atom.kernels.block_transfer import RegionSet

    sets = {"page": RegionSet(runner.kv_transfer)}
    if runner.state_transfer:
        sets["state"] = RegionSet(runner.state_transfer)
    return sets


@dataclass
class PrefillEnd:
    """The allocating end: its runner is built; it sends blocks."""

    runner: Any
    transport: Transport = field(default_factory=Transport)
    peer: int = DECODE

    @property
    def device(self) -> torch.device:
        return self.transport.device(PREFILL)

    def handshake(self, *, build_error: str | None = None) -> WireManifest:
        """Exchange manifests and verdicts; the peer's manifest, or :class:`PeerRefused`."""
        from atom.runner.kv_transfer import wire_manifest

        mine, error = None, build_error
        if error is None:
            try:
                mine = wire_manifest(self.runner)
            except (ValueError, TypeError) as exc:
                error = f"the prefill end cannot describe its pools: {exc}"
        _send_json(
            {"manifest": mine.to_dict() if mine else None, "error": error}, self.peer, self.device
        )
        reply = _recv_json(self.peer, self.device)
        theirs, verdict = None, None
        if error is None and reply["manifest"] is not None:
            try:
                theirs = WireManifest.from_dict(reply["manifest"])
                verdict = mine.difference(theirs, peer_name="the decode end")
            except ValueError as exc:
                verdict = f"the decode end's manifest is unreadable: {exc}"
        _send_json({"verdict": verdict}, self.peer, self.device)
        # This end's own reason first: its sentence says "here" of this end.
        for why, whose in (
            (error, ""),
            (verdict, ""),
            (reply["error"], ""),
            (reply["verdict"], "the decode end refused: "),
        ):
            if why:
                raise PeerRefused(whose + why)
        return theirs

    def send_blocks(self, block_ids: Sequence[int], slot_ids: Sequence[int] = ()) -> int:
        """Gather ``block_ids`` (and request slots ``slot_ids``) and send them; bytes sent."""
        import torch.distributed as dist

        sets = _staged_sets(self.runner)
        staged = {"page": sets["page"].gather(list(block_ids))}
        if slot_ids and "state" in sets:
            staged["state"] = sets["state"].gather(list(slot_ids))
        _send_json({"sets": sorted(staged)}, self.peer, self.device)
        sent = 0
        for name in sorted(staged):
            data = staged[name].data.to(self.device).contiguous()
            dist.send(data, dst=self.peer)
            sent += data.numel()
        return sent


@dataclass
class DecodeEnd:
    """The importing end: builds its runner from the peer's manifest; receives blocks.

    ``build`` makes this end's runner (unbacked: a ``ModelRunner`` of its own model and engine
    settings); the handshake backs it through :func:`import_for_peer`."""

    build: Callable[[], Any]
    transport: Transport = field(default_factory=Transport)
    peer: int = PREFILL
    runner: Any = None

    @property
    def device(self) -> torch.device:
        return self.transport.device(DECODE)

    def handshake(self, *, arrange: Callable[[Any], None] | None = None) -> WireManifest:
        """Receive the peer's manifest, back this end's runner at its counts (``arrange`` runs
        on the backed runner before it is described), exchange manifests and verdicts; the
        peer's manifest, or :class:`PeerRefused` naming the first difference."""
        from atom.runner.kv_transfer import wire_manifest

        hello = _recv_json(self.peer, self.device)
        theirs = mine = None
        error = verdict = None
        if hello["manifest"] is not None:
            try:
                theirs = WireManifest.from_dict(hello["manifest"])
                self.runner = import_for_peer(self.build(), theirs, device=self.device)
                if arrange is not None:
                    arrange(self.runner)
                mine = wire_manifest(self.runner)
                verdict = mine.difference(theirs, peer_name="the prefill end")
            except (ValueError, TypeError, KeyError) as exc:
                error = f"the decode end cannot import the prefill end's pools: {exc}"
        _send_json(
            {"manifest": mine.to_dict() if mine else None, "error": error, "verdict": verdict},
            self.peer,
            self.device,
        )
        answer = _recv_json(self.peer, self.device)
        for why, whose in (
            (error, ""),
            (verdict, ""),
            (hello["error"], ""),
            (answer["verdict"], "the prefill end refused: "),
        ):
            if why:
                raise PeerRefused(whose + why)
        return theirs

    def receive_blocks(self, block_ids: Sequence[int], slot_ids: Sequence[int] = ()) -> int:
        """Receive what the peer sent and scatter it into ``block_ids`` (and ``slot_ids``); bytes
        received. Everything is received before anything is scattered, so a refused scatter
        leaves the two ends in step."""
        import torch.distributed as dist

        from atom.kernels.block_transfer import StagedBlocks

        sets = _staged_sets(self.runner)
        ids = {"page": list(block_ids), "state": list(slot_ids)}
        names = _recv_json(self.peer, self.device)["sets"]
        received = {}
        for name in names:
            rs = sets.get(name)
            if rs is None:
                raise ValueError(f"the peer sent {name} units; this end has no {name} regions")
            data = torch.empty(
                (len(ids[name]), rs.layout.block_bytes), dtype=torch.uint8, device=self.device
            )
            dist.recv(data, src=self.peer)
            received[name] = data
        for name, data in received.items():
            rs = sets[name]
            staged = StagedBlocks(rs.layout, data)
            rs.scatter(staged, ids[name])
        return sum(d.numel() for d in received.values())


# -- the readback ------------------------------------------------------------------------------


def unit_kinds(runner: Any) -> Callable[[torch.Tensor], str]:
    """What indexes a bound view's first axis: ``"slot"`` (a request slot) for a view that
    starts inside a STATE region's units, ``"block"`` (a scheduler block's backend blocks) for
    every other -- read off the regions a transfer moves, not off view names."""
    spans = []
    for r in runner.state_transfer or []:
        key = r.tensor.untyped_storage().data_ptr()
        spans.append((key, r.byte_range(0)[0], r.byte_range(r.units - 1)[1]))

    def kind(view: torch.Tensor) -> str:
        key = view.untyped_storage().data_ptr()
        start = view.storage_offset() * view.element_size()
        return "slot" if any(k == key and lo <= start < hi for k, lo, hi in spans) else "block"

    return kind


def _raw(t: torch.Tensor) -> torch.Tensor:
    # An empty tensor of any dtype views as an empty uint8 one: no case of its own.
    return t.contiguous().reshape(-1).view(torch.uint8)


def view_bytes(
    runner: Any, block_ids: Sequence[int], slot_ids: Sequence[int]
) -> tuple[list[dict[str, Any]], torch.Tensor]:
    """Every bound view's bytes at ``block_ids`` (a view indexed by scheduler block) or
    ``slot_ids`` (one indexed by request slot), read through the view, in bound-module order:
    ``(index, bytes)`` where ``index`` names each piece (module, view, unit kind, units, size)."""
    kind_of = unit_kinds(runner)
    index, pieces = [], []
    for module in runner.bound_modules():
        for name in sorted(module.kv_views):
            view = module.kv_views[name]
            kind = kind_of(view)
            units = runner.blocks if kind == "block" else runner.state_entries
            ids = list(block_ids) if kind == "block" else list(slot_ids)
            if view.shape[0] % units:
                raise ValueError(
                    f"{module}.{name}: {view.shape[0]} rows are not {units} whole {kind}s"
                )
            per_unit = view.unflatten(0, (units, view.shape[0] // units))
            for u in ids:
                raw = _raw(per_unit[u])
                index.append(
                    {
                        "module": str(module),
                        "view": name,
                        "kind": kind,
                        "unit": u,
                        "bytes": raw.numel(),
                    }
                )
                pieces.append(raw)
    data = torch.cat(pieces) if pieces else torch.empty(0, dtype=torch.uint8)
    return index, data


def send_readback(end: PrefillEnd, block_ids, slot_ids) -> None:
    import torch.distributed as dist

    index, data = view_bytes(end.runner, block_ids, slot_ids)
    _send_json({"index": index, "bytes": data.numel()}, end.peer, end.device)
    if data.numel():
        dist.send(data.to(end.device), dst=end.peer)


def check_readback(end: DecodeEnd, block_ids, slot_ids, before: dict[int, torch.Tensor]) -> dict:
    """Compare this end's views at ``block_ids`` / ``slot_ids`` with the prefill end's at its
    own ids, piece by piece, and every byte outside the moved units with ``before`` (storage
    address -> its bytes before the move). Raises ValueError naming the first difference; else
    what was compared."""
    import torch.distributed as dist

    head = _recv_json(end.peer, end.device)
    theirs = torch.empty(head["bytes"], dtype=torch.uint8, device=end.device)
    if theirs.numel():
        dist.recv(theirs, src=end.peer)
    index, mine = view_bytes(end.runner, block_ids, slot_ids)
    compared = compare_views(index, mine, head["index"], theirs)
    kept = _unmoved_bytes_kept(end.runner, block_ids, slot_ids, before)
    return {
        "pieces": len(index),
        "bytes": compared,
        # Of the bytes compared, those not zero: both ends' pools start as random bytes, so a
        # readback of (nearly) all zeros compared two blank pools, not a transfer.
        "nonzero_bytes": int(torch.count_nonzero(mine)),
        "views": len({(p["module"], p["view"]) for p in index}),
        "kept_bytes": kept,
        # This end's pools before the move, not zero: what it kept is told from a blank write.
        "nonzero_before": sum(int(torch.count_nonzero(b)) for b in before.values()),
    }


def compare_views(
    index: list[dict[str, Any]],
    mine: torch.Tensor,
    their_index: list[dict[str, Any]],
    theirs: torch.Tensor,
) -> int:
    """This end's view pieces (``view_bytes``) against the prefill end's, piece by piece: bytes
    compared, or ValueError naming the first piece that differs -- by its module, view, unit
    kind and both ends' unit ids."""
    if len(index) != len(their_index):
        raise ValueError(
            f"the two ends read {len(their_index)} and {len(index)} view pieces of the moved "
            "units: their modules bind different views"
        )
    at = 0
    for here, there in zip(index, their_index, strict=True):
        if (here["module"], here["view"], here["kind"]) != (
            there["module"],
            there["view"],
            there["kind"],
        ):
            raise ValueError(
                f"view piece {there['module']}.{there['view']} of the prefill end meets "
                f"{here['module']}.{here['view']} here"
            )
        n = here["bytes"]
        if n != there["bytes"] or not torch.equal(mine[at : at + n], theirs[at : at + n]):
            raise ValueError(
                f"{here['module']}.{here['view']}: decode {here['kind']} {here['unit']} differs "
                f"from prefill {there['kind']} {there['unit']}"
            )
        at += n
    return at


def storages(runner: Any) -> dict[int, torch.Tensor]:
    """Each storage a transfer writes, by address, as one flat uint8 tensor."""
    out = {}
    for r in [*runner.kv_transfer.regions, *(runner.state_transfer or [])]:
        s = r.tensor.untyped_storage()
        if s.data_ptr() not in out:
            out[s.data_ptr()] = torch.empty(0, dtype=torch.uint8, device=r.tensor.device).set_(s)
    return out


def _unmoved_bytes_kept(runner: Any, block_ids, slot_ids, before: dict[int, torch.Tensor]) -> int:
    moved = {
        key: torch.zeros(buf.numel(), dtype=torch.bool, device=buf.device)
        for key, buf in before.items()
    }
    for regions, units in (
        (runner.kv_transfer.regions, block_ids),
        (runner.state_transfer or [], slot_ids),
    ):
        for r in regions:
            key = r.tensor.untyped_storage().data_ptr()
            for u in units:
                lo, hi = r.byte_range(u)
                moved[key][lo:hi] = True
    kept = 0
    for key, now in storages(runner).items():
        changed = (now != before[key]) & ~moved[key]
        if bool(changed.any()):
            raise ValueError(
                f"byte {int(changed.nonzero()[0])} of a decode-side pool changed outside the moved units"
            )
        kept += int((~moved[key]).sum())
    return kept


# -- one process of a pair ---------------------------------------------------------------------


def _make_runner(spec: dict[str, Any]) -> Any:
    """An unbacked runner of one end's model and engine settings (registry names or paths)."""
    from atom.engine_config import EngineConfig
    from atom.models.registry import load_config
    from atom.runner.model_runner import ModelRunner

    draft = spec.get("draft")
    return ModelRunner(
        load_config(spec["model"]),
        EngineConfig(**spec.get("engine", {})),
        draft_config=load_config(draft) if draft else None,
    )


def interleave_fields(runner: Any) -> None:
    """Reorder ``runner``'s PAGE regions from all of each field then the next (``K0..Kn,
    V0..Vn``) to row by row (``K0,V0,K1,V1...``): the order a peer built before the fields were
    folded exports, at the same count and bytes. How a plan states such a peer."""
    regions = runner.kv_transfer.regions
    # Each pool keeps its place (the target's before a draft's, as exported): only the rows
    # within a pool are interleaved.
    first: dict[str, int] = {}

    def key(pair: tuple[int, Any]) -> tuple[int, int, int]:
        position, region = pair
        pool_field, _, row = region.semantic_role.rpartition("/")
        pool = first.setdefault(pool_field.rpartition("/")[0], position)
        return (pool, int(row) if row.isdigit() else -1, position)

    regions[:] = [r for _, r in sorted(enumerate(regions), key=key)]


ARRANGEMENTS: dict[str, Callable[[Any], None]] = {"interleave-fields": interleave_fields}


def _fill_random(runner: Any, seed: int) -> None:
    gen = torch.Generator(device="cpu").manual_seed(seed)
    for buf in storages(runner).values():
        noise = torch.randint(0, 256, (buf.numel(),), generator=gen, dtype=torch.uint8)
        buf.copy_(noise.to(buf.device))


def _arranged(spec: dict[str, Any]) -> Callable[[Any], None]:
    name = spec.get("arrange")
    if name is None:
        return lambda runner: None
    if name not in ARRANGEMENTS:
        raise ValueError(f"arrangement {name!r} is not one of {sorted(ARRANGEMENTS)}")
    return ARRANGEMENTS[name]


def _prefill_case(case: dict[str, Any], transport: Transport, verify: bool) -> dict[str, Any]:
    spec = case["prefill"]
    device = transport.device(PREFILL)
    runner, error = None, None
    try:
        runner = _make_runner(spec).initialize(
            spec["blocks"], state_entries=spec.get("state_entries"), device=device
        )
        _arranged(spec)(runner)
        _fill_random(runner, case.get("seed", 0))
    except (ValueError, TypeError, KeyError) as exc:
        error = f"the prefill end cannot build its pools: {exc}"
    end = PrefillEnd(runner, transport)
    try:
        end.handshake(build_error=error)
    except PeerRefused as exc:
        return {"outcome": "refused", "refusal": str(exc), "bytes": 0}
    sent = end.send_blocks(spec["ids"], spec.get("slots", ()))
    # The decode end's word on the blocks comes before any readback: one that refused them
    # (a block id past its pool) reads nothing back, and a readback sent regardless would wait
    # for a receive that never comes while that end waits to say so.
    peer = _recv_json(DECODE, device)
    if verify and peer["outcome"] == "moved":
        send_readback(end, spec["ids"], spec.get("slots", ()))
        peer = _recv_json(DECODE, device)
    return {**peer, "bytes": sent}


def _decode_case(case: dict[str, Any], transport: Transport, verify: bool) -> dict[str, Any]:
    spec = case["decode"]
    end = DecodeEnd(lambda: _make_runner(spec), transport)
    arrange = _arranged(spec)
    try:
        end.handshake(arrange=arrange)
    except PeerRefused as exc:
        return {"outcome": "refused", "refusal": str(exc), "bytes": 0}
    _fill_random(end.runner, case.get("seed", 0) + 1)
    before = {key: buf.clone() for key, buf in storages(end.runner).items()}
    ids, slots = spec["ids"], spec.get("slots", ())
    result: dict[str, Any]
    try:
        result = {"outcome": "moved", "bytes": end.receive_blocks(ids, slots)}
    except ValueError as exc:
        result = {"outcome": "failed", "error": str(exc)}
    _send_json(result, PREFILL, end.device)
    if verify and result["outcome"] == "moved":
        try:
            result["readback"] = check_readback(end, ids, slots, before)
        except ValueError as exc:
            result = {"outcome": "failed", "error": str(exc)}
        _send_json(result, PREFILL, end.device)
    return result


def exit_with(parent: int, every_s: float = 0.2) -> threading.Thread:
    """End this process once ``parent`` is no longer its parent.

    A pair's starter killed outright (SIGKILL, the OOM killer) never reaches the ``finally``
    that kills its ends, and an end blocked in a collective would wait out the store's
    timeout -- ten minutes by default -- holding its port and its memory. The ends poll
    instead of asking the kernel (``PR_SET_PDEATHSIG`` is Linux's alone), and a starter
    already gone when the end starts is seen at the first look.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(3)

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def worker(role: str, store_at: str, plan: dict[str, Any], out: Any = sys.stdout) -> int:
    """One end of a pair: join the process group at ``store_at`` and run every case of
    ``plan``, one JSON line a case on ``out``."""
    import torch.distributed as dist

    rank = ROLES[role]
    transport = Transport(plan.get("backend", "gloo"))
    transport.require_available()
    timeout = datetime.timedelta(seconds=float(plan.get("timeout_s", DEFAULT_TIMEOUT_S)))
    host, _, port = store_at.rpartition(":")
    store = dist.TCPStore(host, int(port), None, False, timeout=timeout)
    if transport.backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(
        transport.backend, store=store, rank=rank, world_size=2, timeout=timeout
    )
    try:
        run = _prefill_case if rank == PREFILL else _decode_case
        for case in plan["cases"]:
            started = time.perf_counter()
            result = run(case, transport, bool(plan.get("verify", True)))
            result.update(
                case=case["name"], role=role, seconds=round(time.perf_counter() - started, 3)
            )
            out.write(json.dumps(result) + "\n")
            out.flush()
    finally:
        dist.destroy_process_group()
    return 0


# -- a pair of processes -----------------------------------------------------------------------


def _kill(procs: Sequence[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        # A process that outlives SIGKILL for 30 s is the kernel's to reap, not this loop's.
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)


def _ends(procs: dict[str, subprocess.Popen], logs: dict[str, tuple[Path, Path]]) -> str:
    """Each end's process id, exit status and stderr's tail, for a failure message."""
    parts = []
    for role, proc in procs.items():
        tail = logs[role][1].read_text()[-1500:].strip()
        parts.append(f"{role} pid {proc.pid} exited {proc.returncode}: {tail or '(no stderr)'}")
    return " | ".join(parts)


def run_pair(
    cases: Sequence[dict[str, Any]],
    *,
    backend: str = "gloo",
    verify: bool = True,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[dict[str, Any]]:
    """Run ``cases`` between a prefill and a decode process; each case's two results.

    Both processes are started here and ended here: on success they have exited; on a failure or
    at ``timeout_s`` both are killed (by their own process ids) and a RuntimeError names which
    end failed, with its stderr's tail. The store both connect to is hosted by this process on a
    port the operating system picks.
    """
    import torch.distributed as dist

    transport = Transport(backend)
    transport.require_available()
    plan = {"backend": backend, "verify": verify, "timeout_s": timeout_s, "cases": list(cases)}
    store = dist.TCPStore(
        "127.0.0.1", 0, None, True, timeout=datetime.timedelta(seconds=timeout_s),
        wait_for_workers=False,
    )  # fmt: skip
    repo = str(Path(__file__).resolve().parents[2])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [repo, os.environ.get("PYTHONPATH")])),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"),
    }
    with tempfile.TemporaryDirectory(prefix="atom-pd-") as tmp:
        plan_path = Path(tmp, "plan.json")
        plan_path.write_text(json.dumps(plan))
        procs: dict[str, subprocess.Popen] = {}
        logs: dict[str, tuple[Path, Path]] = {}
        try:
            for role in ROLES:
                out, err = Path(tmp, f"{role}.out"), Path(tmp, f"{role}.err")
                logs[role] = (out, err)
                with out.open("w") as o, err.open("w") as e:
                    procs[role] = subprocess.Popen(
                        [sys.executable, "-m", "atom.runner.pd_transfer", "worker", "--role", role,
                         "--store", f"127.0.0.1:{store.port}", "--plan", str(plan_path),
                         "--parent", str(os.getpid())],
                        stdout=o, stderr=e, env=env, cwd=repo,
                    )  # fmt: skip
            deadline = time.monotonic() + timeout_s
            while any(p.poll() is None for p in procs.values()):
                failed = [r for r, p in procs.items() if p.poll() not in (None, 0)]
                if failed or time.monotonic() > deadline:
                    if failed:
                        # The other end sees the lost connection and fails too: give it a moment
                        # to say so itself, so the message shows which end failed first and why.
                        grace = min(deadline, time.monotonic() + FAILURE_GRACE_S)
                        while time.monotonic() < grace and any(
                            p.poll() is None for p in procs.values()
                        ):
                            time.sleep(0.05)
                    _kill(list(procs.values()))
                    why = "an end failed" if failed else f"pair ran past {timeout_s:g} s"
                    raise RuntimeError(f"P/D {why}; {_ends(procs, logs)}")
                time.sleep(0.05)
            if any(p.returncode != 0 for p in procs.values()):
                raise RuntimeError(f"P/D an end failed; {_ends(procs, logs)}")
            results = {
                role: [json.loads(line) for line in logs[role][0].read_text().splitlines() if line]
                for role in ROLES
            }
        finally:
            _kill(list(procs.values()))
    if any(len(results[r]) != len(cases) for r in ROLES):
        raise RuntimeError(
            f"P/D ran {len(results['prefill'])} and {len(results['decode'])} of {len(cases)} cases"
        )
    return [
        {"case": c["name"], "prefill": p, "decode": d}
        for c, p, d in zip(cases, results["prefill"], results["decode"], strict=True)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m atom.runner.pd_transfer",
        description="One end of a P/D pair (`worker`), started by run_pair.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker", help="one end of a pair: join the store and run a plan")
    w.add_argument("--role", choices=tuple(ROLES), required=True)
    w.add_argument("--store", required=True, metavar="HOST:PORT")
    w.add_argument("--plan", required=True, metavar="FILE")
    w.add_argument(
        "--parent", type=int, metavar="PID", help="exit when this process is no longer the parent"
    )
    args = parser.parse_args(argv)
    if args.parent is not None:
        exit_with(args.parent)
    plan = json.loads(Path(args.plan).read_text())
    return worker(args.role, args.store, plan)


if __name__ == "__main__":
    raise SystemExit(main())
