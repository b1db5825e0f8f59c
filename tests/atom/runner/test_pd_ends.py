"""The pieces of a P/D end (`atom.runner.pd_transfer`), in one process: what the two-process plan
relies on, each pinned where it could go wrong without a pair failing loudly.

The decode side's import at its peer's counts, which view reads by request slot and which by
block, the readback's bytes of each view, the check that nothing outside the moved units changed,
the arrangement a plan states a pre-folding peer by, and the transport's refusals. The whole
exchange between two processes is `test_pd_transfer.py`.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from atom.models.registry import load_model_config
from atom.pool_layout.manifest import WireManifest
from atom.runner import pd_transfer
from atom.runner.kv_transfer import wire_manifest
from atom.runner.model_runner import ModelRunner
from atom.runner.pd_transfer import (
    Transport,
    import_for_peer,
    interleave_fields,
    storages,
    unit_kinds,
    view_bytes,
)
from contracts.runtime.strategies import default_case


def _runner(name: str, **engine) -> ModelRunner:
    base = dataclasses.replace(default_case(name).engine, index_cache_dtype="fp8")
    return ModelRunner(load_model_config(name), dataclasses.replace(base, **engine))


def _llama() -> ModelRunner:
    return _runner("llama-3.1-8b", tp_size=8)


def _qwen() -> ModelRunner:
    # A hybrid: paged full attention and per-request linear-attention state.
    return _runner("qwen3.5-27b", tp_size=8)


# -- the transport -----------------------------------------------------------------------------


def test_gloo_lives_on_the_cpu_and_nccl_on_one_gpu_a_rank():
    assert Transport().backend == "gloo"
    assert Transport("gloo").device(1) == torch.device("cpu")
    assert Transport("nccl").device(0) == torch.device("cuda", 0)
    assert Transport("nccl").device(1) == torch.device("cuda", 1)


def test_gloo_is_available_on_this_machine():
    Transport("gloo").require_available()


def test_each_end_lives_on_its_own_ranks_device():
    from atom.runner.pd_transfer import DECODE, PREFILL, DecodeEnd, PrefillEnd

    assert (PREFILL, DECODE) == (0, 1)
    assert PrefillEnd(None).device == DecodeEnd(lambda: None).device == torch.device("cpu")
    assert PrefillEnd(None, Transport("nccl")).device == torch.device("cuda", 0)
    assert DecodeEnd(lambda: None, Transport("nccl")).device == torch.device("cuda", 1)
    # Each end's peer is the other rank.
    assert PrefillEnd(None).peer == DECODE and DecodeEnd(lambda: None).peer == PREFILL


def test_a_transport_is_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Transport().backend = "nccl"
    assert hash(Transport("gloo")) == hash(Transport("gloo"))


def _machine(monkeypatch, *, gloo=True, nccl=True, cuda=True, gpus=2):
    import torch.distributed as dist

    monkeypatch.setattr(dist, "is_gloo_available", lambda: gloo)
    monkeypatch.setattr(dist, "is_nccl_available", lambda: nccl)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)


def test_a_torch_without_gloo_refuses_gloo_by_name_and_nccl_does_not_need_it(monkeypatch):
    _machine(monkeypatch, gloo=False)
    with pytest.raises(ValueError, match=r"transport 'gloo': this torch build has no gloo backend"):
        Transport("gloo").require_available()
    Transport("nccl").require_available()


@pytest.mark.parametrize(
    ("cuda", "gpus", "shows"),
    [(False, 2, 0), (True, 1, 1), (True, 0, 0)],
    ids=["no-cuda", "1", "0"],
)
def test_nccl_needs_two_visible_gpus_and_names_how_many_it_sees(monkeypatch, cuda, gpus, shows):
    _machine(monkeypatch, cuda=cuda, gpus=gpus)
    with pytest.raises(ValueError, match=rf"needs two visible GPUs; this machine shows {shows}$"):
        Transport("nccl").require_available()


def test_nccl_on_two_gpus_is_available_unless_torch_lacks_it(monkeypatch):
    _machine(monkeypatch, gpus=2)
    Transport("nccl").require_available()
    _machine(monkeypatch, gpus=2, nccl=False)
    with pytest.raises(ValueError, match=r"transport 'nccl': this torch build has no NCCL backend"):
        Transport("nccl").require_available()


def test_a_pair_of_an_unknown_backend_is_refused_before_a_process_starts():
    with pytest.raises(ValueError, match=r"transport backend 'mpi' is not one of"):
        pd_transfer.run_pair([], backend="mpi")


# -- the decode side's import ------------------------------------------------------------------


def test_the_decode_side_imports_at_the_counts_its_peer_states():
    prefill = _qwen().initialize(3, state_entries=5)
    peer = wire_manifest(prefill)
    decode = import_for_peer(_qwen(), peer, device="cpu")
    assert decode.blocks == 3 and decode.state_entries == 5
    assert wire_manifest(decode).difference(peer) is None
    # Its own buffer, zeroed: nothing of the peer's bytes is shared.
    for buf in storages(decode).values():
        assert not bool(buf.any())


def test_a_peer_without_state_gives_the_decode_side_no_state_pool():
    peer = wire_manifest(_llama().initialize(2))
    decode = import_for_peer(_llama(), peer, device="cpu")
    assert decode.blocks == 2 and not decode.state_transfer


def test_a_peer_manifest_with_no_page_regions_is_refused_by_name():
    peer = wire_manifest(_llama().initialize(2))
    no_page = WireManifest.of(dict(peer.header), [])
    with pytest.raises(ValueError, match=r"states no page regions: no block count to import"):
        import_for_peer(_llama(), no_page, device="cpu")
    empty_page = WireManifest.of(
        dict(peer.header), [dataclasses.replace(peer.region_set("page"), regions=())]
    )
    with pytest.raises(ValueError, match=r"states no page regions"):
        import_for_peer(_llama(), empty_page, device="cpu")


# -- which unit indexes a view -----------------------------------------------------------------


def test_a_view_inside_a_state_region_is_read_by_slot_and_every_other_by_block():
    runner = _qwen().initialize(2, state_entries=3)
    kind_of = unit_kinds(runner)
    kinds = {}
    for module in runner.bound_modules():
        for name, view in module.kv_views.items():
            kinds[(str(module), name)] = kind_of(view)
    assert set(kinds.values()) == {"slot", "block"}
    # Every view that starts in a STATE region's bytes is a slot view, and only those.
    state_keys = {r.tensor.untyped_storage().data_ptr() for r in runner.state_transfer}
    for module in runner.bound_modules():
        for name, view in module.kv_views.items():
            in_state = view.untyped_storage().data_ptr() in state_keys and any(
                r.byte_range(0)[0]
                <= view.storage_offset() * view.element_size()
                < r.byte_range(r.units - 1)[1]
                for r in runner.state_transfer
            )
            assert kinds[(str(module), name)] == ("slot" if in_state else "block")


def test_a_view_starting_at_the_last_state_byte_is_a_slot_and_one_past_it_a_block():
    runner = _qwen().initialize(2, state_entries=3)
    kind_of = unit_kinds(runner)
    r = runner.state_transfer[0]
    raw = next(iter(storages(runner).values())).new_empty(0).set_(r.tensor.untyped_storage())
    lo, hi = r.byte_range(0)[0], r.byte_range(r.units - 1)[1]
    assert kind_of(raw[lo : lo + 1]) == "slot"
    assert kind_of(raw[hi - 1 : hi]) == "slot"
    if lo > 0:
        assert kind_of(raw[lo - 1 : lo]) == "block"
    if hi < raw.numel():
        assert kind_of(raw[hi : hi + 1]) == "block"


def test_a_model_without_state_reads_every_view_by_block():
    runner = _llama().initialize(2)
    kind_of = unit_kinds(runner)
    assert {kind_of(v) for m in runner.bound_modules() for v in m.kv_views.values()} == {"block"}


# -- the readback's bytes ----------------------------------------------------------------------


def test_view_bytes_are_each_views_unit_in_bound_order():
    runner = _qwen().initialize(3, state_entries=2)
    pd_transfer._fill_random(runner, 7)
    index, data = view_bytes(runner, [2, 0], [1])
    kind_of = unit_kinds(runner)
    at, expected = 0, []
    for module in runner.bound_modules():
        for name in sorted(module.kv_views):
            view = module.kv_views[name]
            kind = kind_of(view)
            units = runner.blocks if kind == "block" else runner.state_entries
            rows = view.shape[0] // units
            for u in [2, 0] if kind == "block" else [1]:
                piece = view[u * rows : (u + 1) * rows].contiguous().reshape(-1).view(torch.uint8)
                expected.append((str(module), name, kind, u, piece.numel()))
                assert torch.equal(data[at : at + piece.numel()], piece), (module, name, u)
                at += piece.numel()
    assert at == data.numel()
    assert [(p["module"], p["view"], p["kind"], p["unit"], p["bytes"]) for p in index] == expected


def test_an_empty_view_reads_as_no_bytes():
    for dtype in (torch.bfloat16, torch.float32, torch.uint8):
        raw = pd_transfer._raw(torch.empty(0, 4, dtype=dtype))
        assert raw.dtype == torch.uint8 and raw.shape == (0,)
    assert pd_transfer._raw(torch.ones(2, 2, dtype=torch.bfloat16)[:, :1]).numel() == 4


def test_blocks_of_a_set_this_end_lacks_are_refused_by_name(monkeypatch):
    end = pd_transfer.DecodeEnd(_llama, runner=_llama().initialize(2))
    _Wire(monkeypatch, {"sets": ["page", "state"]})
    monkeypatch.setattr(torch.distributed, "recv", lambda t, src: None)
    with pytest.raises(
        ValueError, match=r"the peer sent state units; this end has no state regions"
    ):
        end.receive_blocks([0], [0])


def test_view_bytes_of_no_units_is_empty():
    runner = _llama().initialize(2)
    index, data = view_bytes(runner, [], [])
    assert index == [] and data.numel() == 0 and data.dtype == torch.uint8


def test_a_view_whose_rows_are_not_whole_units_is_refused_by_name():
    runner = _llama().initialize(2)
    module = runner.bound_modules()[0]
    name = sorted(module.kv_views)[0]
    module.kv_views[name] = module.kv_views[name][:-1]
    with pytest.raises(ValueError, match=rf"\.{name}: \d+ rows are not 2 whole blocks"):
        view_bytes(runner, [0], [])


# -- nothing outside the moved units changes ---------------------------------------------------


def _moved_and_kept(runner, blocks, slots):
    before = {k: b.clone() for k, b in storages(runner).items()}
    return before, pd_transfer._unmoved_bytes_kept(runner, blocks, slots, before)


def test_unmoved_bytes_are_counted_and_a_change_inside_a_moved_unit_is_allowed():
    runner = _qwen().initialize(3, state_entries=2)
    pd_transfer._fill_random(runner, 1)
    before, kept = _moved_and_kept(runner, [1], [0])
    total = sum(b.numel() for b in before.values())
    moved = sum(
        r.unit_data_bytes
        for regions, n in ((runner.kv_transfer.regions, 1), (runner.state_transfer, 1))
        for r in regions
        for _ in range(n)
    )
    assert kept == total - moved
    # Every byte of the moved block and slot rewritten: still kept.
    for regions, unit in ((runner.kv_transfer.regions, 1), (runner.state_transfer, 0)):
        for r in regions:
            lo, hi = r.byte_range(unit)
            buf = storages(runner)[r.tensor.untyped_storage().data_ptr()]
            buf[lo:hi] = buf[lo:hi] ^ 0xFF
    assert pd_transfer._unmoved_bytes_kept(runner, [1], [0], before) == kept


@pytest.mark.parametrize("where", ["page", "state"])
def test_a_byte_changed_outside_the_moved_units_is_named(where):
    runner = _qwen().initialize(3, state_entries=2)
    before = {k: b.clone() for k, b in storages(runner).items()}
    r = (runner.kv_transfer.regions if where == "page" else runner.state_transfer)[0]
    # The first byte of the unit after the moved one (block 1 moved, block 2 not; slot 0, slot 1).
    unit = 2 if where == "page" else 1
    lo, _ = r.byte_range(unit)
    storages(runner)[r.tensor.untyped_storage().data_ptr()][lo] ^= 0x5A
    with pytest.raises(ValueError, match=rf"byte {lo} of a decode-side pool changed outside"):
        pd_transfer._unmoved_bytes_kept(runner, [1], [0], before)


def test_storages_are_each_buffer_a_transfer_writes_once():
    runner = _qwen().initialize(2, state_entries=2)
    found = storages(runner)
    keys = {
        r.tensor.untyped_storage().data_ptr()
        for r in [*runner.kv_transfer.regions, *runner.state_transfer]
    }
    assert set(found) == keys
    for key, buf in found.items():
        assert buf.dtype == torch.uint8 and buf.untyped_storage().data_ptr() == key
        assert buf.numel() == buf.untyped_storage().nbytes()


def test_random_fill_depends_on_the_seed_and_only_on_it():
    a, b, c = (_llama().initialize(1) for _ in range(3))
    pd_transfer._fill_random(a, 3)
    pd_transfer._fill_random(b, 3)
    pd_transfer._fill_random(c, 4)
    (sa,), (sb,), (sc,) = (list(storages(x).values()) for x in (a, b, c))
    assert torch.equal(sa, sb) and not torch.equal(sa, sc)
    # Every byte value, 0 and 255 included: a move that zeroes or saturates a byte is seen.
    assert torch.unique(sa).numel() == 256


# -- the arrangement a plan states a pre-folding peer by ---------------------------------------


def test_interleave_fields_orders_regions_row_by_row():
    runner = _llama().initialize(1)
    before = [r.semantic_role for r in runner.kv_transfer.regions]
    interleave_fields(runner)
    after = [r.semantic_role for r in runner.kv_transfer.regions]
    assert sorted(after) == sorted(before) and after != before
    # Llama's pool exports all of k then all of v; row by row is k/0, v/0, k/1, v/1, ...
    assert after[:4] == ["target.h1d128/k/0", "target.h1d128/v/0", "target.h1d128/k/1",
                         "target.h1d128/v/1"]  # fmt: skip
    assert wire_manifest(runner).difference(wire_manifest(_llama().initialize(1))) is not None


def test_interleave_fields_keeps_each_pools_regions_together():
    from contracts.runtime.strategies import DRAFT_PAIRS

    target, draft = DRAFT_PAIRS["minimax-m2+eagle3-draft-llama"]
    engine = dataclasses.replace(
        default_case("minimax-m2+eagle3-draft-llama").engine, tp_size=8, index_cache_dtype="fp8"
    )
    runner = ModelRunner(
        load_model_config(target), engine, draft_config=load_model_config(draft)
    ).initialize(1)
    interleave_fields(runner)
    roles = [r.semantic_role for r in runner.kv_transfer.regions]
    # The target's rows first, row by row; then the draft head's one row.
    assert roles[:2] == ["target.h1d128/k/0", "target.h1d128/v/0"]
    assert roles[-2:] == ["draft.h1d128/k/0", "draft.h1d128/v/0"]
    assert [r.split(".")[0] for r in roles] == ["target"] * (len(roles) - 2) + ["draft"] * 2


def test_interleave_fields_leaves_a_region_without_a_row_in_its_place():
    from types import SimpleNamespace

    from atom.pool_layout import TransferRegion

    roles = ["p/k/0", "p/k/1", "p/v/0", "p/v/1", "p/scale"]
    regions = [TransferRegion(r, torch.zeros(2, 8, dtype=torch.uint8)) for r in roles]
    runner = SimpleNamespace(kv_transfer=SimpleNamespace(regions=regions))
    interleave_fields(runner)
    assert [r.semantic_role for r in regions] == ["p/k/0", "p/v/0", "p/k/1", "p/v/1", "p/scale"]


def test_an_end_is_built_with_its_draft_when_its_spec_names_one():
    engine = {"tp_size": 8, "scheduler_block_size": 128}
    paired = pd_transfer._make_runner(
        {"model": "minimax-m2", "draft": "eagle3-draft-llama", "engine": engine}
    )
    alone = pd_transfer._make_runner({"model": "minimax-m2", "draft": None, "engine": engine})
    assert paired.draft_config is not None and paired.draft_config.get("_model") == (
        load_model_config("eagle3-draft-llama").get("_model")
    )
    assert alone.draft_config is None and alone.engine.tp_size == 8


def test_an_unknown_arrangement_is_refused_by_name():
    assert pd_transfer._arranged({})(None) is None
    with pytest.raises(ValueError, match=r"arrangement 'shuffled' is not one of \['interleave"):
        pd_transfer._arranged({"arrange": "shuffled"})


# -- one end's command line --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "missing"),
    [
        ([], "command"),
        (["worker", "--store", "h:1", "--plan", "p"], "--role"),
        (["worker", "--role", "decode", "--plan", "p"], "--store"),
        (["worker", "--role", "decode", "--store", "h:1"], "--plan"),
    ],
    ids=["command", "role", "store", "plan"],
)
def test_the_worker_command_requires_each_of_its_arguments(capsys, argv, missing):
    with pytest.raises(SystemExit) as exit_:
        pd_transfer.main(argv)
    assert exit_.value.code == 2
    assert f"the following arguments are required: {missing}" in capsys.readouterr().err


def test_the_worker_command_names_its_role_store_and_plan(capsys):
    with pytest.raises(SystemExit) as exit_:
        pd_transfer.main(["worker", "--role", "middle", "--store", "h:1", "--plan", "p"])
    assert exit_.value.code == 2
    assert "invalid choice: 'middle'" in capsys.readouterr().err


# -- the readback's comparison -----------------------------------------------------------------


def _pieces():
    runner = _qwen().initialize(3, state_entries=2)
    pd_transfer._fill_random(runner, 11)
    return view_bytes(runner, [1, 2], [0])


def test_the_same_pieces_compare_equal_and_count_every_byte():
    index, data = _pieces()
    assert pd_transfer.compare_views(index, data, [dict(p) for p in index], data.clone()) == (
        data.numel()
    )


def test_a_changed_byte_is_named_by_its_view_and_both_units():
    index, data = _pieces()
    theirs = [dict(p) for p in index]
    # The last byte of the third piece: its units renumbered on the prefill end.
    at = sum(p["bytes"] for p in index[:3]) - 1
    changed = data.clone()
    changed[at] ^= 1
    theirs[2]["unit"] = 9
    p = index[2]
    with pytest.raises(ValueError) as err:
        pd_transfer.compare_views(index, data, theirs, changed)
    assert str(err.value) == (
        f"{p['module']}.{p['view']}: decode {p['kind']} {p['unit']} differs from prefill "
        f"{p['kind']} 9"
    )
    # The pieces before it compared equal: a change in the first byte names the first piece.
    first = data.clone()
    first[0] ^= 1
    with pytest.raises(ValueError, match=rf"^{index[0]['module']}\.{index[0]['view']}: decode"):
        pd_transfer.compare_views(index, data, theirs, first)


def test_pieces_of_another_view_or_another_count_are_named_not_compared():
    index, data = _pieces()
    renamed = [dict(p) for p in index]
    renamed[1]["view"] = "other"
    with pytest.raises(ValueError) as err:
        pd_transfer.compare_views(index, data, renamed, data)
    assert str(err.value) == (
        f"view piece {index[1]['module']}.other of the prefill end meets "
        f"{index[1]['module']}.{index[1]['view']} here"
    )
    for field, value in (
        ("module", "elsewhere"),
        ("kind", "slot" if index[0]["kind"] == "block" else "block"),
    ):
        moved = [dict(p) for p in index]
        moved[0][field] = value
        with pytest.raises(ValueError, match=r"^view piece .* of the prefill end meets"):
            pd_transfer.compare_views(index, data, moved, data)
    with pytest.raises(ValueError, match=rf"read {len(index) - 1} and {len(index)} view pieces"):
        pd_transfer.compare_views(index, data, index[:-1], data)
    longer = [dict(p) for p in index]
    longer[-1]["bytes"] += 1
    with pytest.raises(ValueError, match=r": decode .* differs from prefill"):
        pd_transfer.compare_views(index, data, longer, data)


def test_a_worker_refuses_a_transport_this_machine_cannot_run_before_it_connects(tmp_path):
    if torch.cuda.is_available() and torch.cuda.device_count() >= 2:
        pytest.skip("two GPUs are visible: NCCL is runnable here")
    plan = tmp_path / "plan.json"
    plan.write_text('{"backend": "nccl", "timeout_s": 1, "cases": []}')
    # Port 1 accepts no store: a worker that tried to connect would fail otherwise, or wait.
    with pytest.raises(ValueError, match=r"transport 'nccl' .* needs two visible GPUs"):
        pd_transfer.main(
            ["worker", "--role", "decode", "--store", "127.0.0.1:1", "--plan", str(plan)]
        )


# -- the handshake, its messages scripted ------------------------------------------------------


class _Wire:
    """The two message functions of an end, in one process: what the end sends is kept, what
    it receives is read off a script."""

    def __init__(self, monkeypatch, *replies):
        self.sent, self.replies = [], list(replies)
        monkeypatch.setattr(
            pd_transfer, "_send_json", lambda obj, dst, device: self.sent.append((obj, dst))
        )
        monkeypatch.setattr(pd_transfer, "_recv_json", lambda src, device: self.replies.pop(0))


def _prefill_end():
    return pd_transfer.PrefillEnd(_llama().initialize(3))


def test_the_prefill_end_sends_its_manifest_and_returns_the_matching_peers(monkeypatch):
    end = _prefill_end()
    mine = wire_manifest(end.runner)
    # The decode end's own capacity (5 blocks) is no difference.
    theirs = wire_manifest(_llama().initialize(5))
    wire = _Wire(monkeypatch, {"manifest": theirs.to_dict(), "error": None, "verdict": None})
    assert end.handshake() == theirs
    assert wire.sent == [
        ({"manifest": mine.to_dict(), "error": None}, pd_transfer.DECODE),
        ({"verdict": None}, pd_transfer.DECODE),
    ]


def test_the_prefill_end_refuses_a_different_peer_and_tells_it_why(monkeypatch):
    end = _prefill_end()
    other = wire_manifest(_runner("llama-3.1-8b", tp_size=8, kv_dtype="fp8").initialize(3))
    wire = _Wire(monkeypatch, {"manifest": other.to_dict(), "error": None, "verdict": "theirs"})
    with pytest.raises(pd_transfer.PeerRefused) as err:
        end.handshake()
    verdict = wire.sent[1][0]["verdict"]
    assert verdict.startswith("kv_dtype is 'bf16' here and 'fp8' on the decode end")
    # Its own reason first, in its own words; the peer's verdict is not what it names.
    assert str(err.value) == verdict


def test_the_prefill_end_names_an_unreadable_peer_manifest(monkeypatch):
    end = _prefill_end()
    doc = wire_manifest(end.runner).to_dict()
    doc["digest"] = "sha256:0"
    wire = _Wire(monkeypatch, {"manifest": doc, "error": None, "verdict": None})
    with pytest.raises(
        pd_transfer.PeerRefused, match=r"^the decode end's manifest is unreadable: "
    ):
        end.handshake()
    assert wire.sent[1][0]["verdict"].startswith("the decode end's manifest is unreadable")


@pytest.mark.parametrize(
    ("reply", "refusal"),
    [
        ({"manifest": None, "error": "it cannot import", "verdict": None}, "it cannot import"),
        (
            {"manifest": "same", "error": None, "verdict": "region 3"},
            "the decode end refused: region 3",
        ),
    ],
    ids=["peer-error", "peer-verdict"],
)
def test_the_prefill_end_refuses_by_the_peers_own_words(monkeypatch, reply, refusal):
    end = _prefill_end()
    if reply["manifest"] == "same":
        reply["manifest"] = wire_manifest(end.runner).to_dict()
    wire = _Wire(monkeypatch, reply)
    with pytest.raises(pd_transfer.PeerRefused) as err:
        end.handshake()
    assert str(err.value) == refusal
    # Its own verdict is None: nothing here to add to the peer's reason.
    assert wire.sent[1][0] == {"verdict": None}


def test_a_prefill_end_that_could_not_build_sends_no_manifest_and_its_reason(monkeypatch):
    end = pd_transfer.PrefillEnd(None)
    wire = _Wire(monkeypatch, {"manifest": None, "error": "x", "verdict": None})
    with pytest.raises(pd_transfer.PeerRefused, match=r"^it broke$"):
        end.handshake(build_error="it broke")
    assert wire.sent[0][0] == {"manifest": None, "error": "it broke"}


def test_a_prefill_end_that_cannot_describe_its_pools_says_so(monkeypatch):
    v4 = _runner("deepseek-v4-flash-dspark", tp_size=8, index_cache_dtype="fp4").initialize(1)
    wire = _Wire(monkeypatch, {"manifest": None, "error": None, "verdict": None})
    with pytest.raises(
        pd_transfer.PeerRefused,
        match=r"^the prefill end cannot describe its pools: .*'fp4' is refused",
    ):
        pd_transfer.PrefillEnd(v4).handshake()
    assert wire.sent[0][0]["manifest"] is None
    assert wire.sent[0][0]["error"].startswith("the prefill end cannot describe its pools")


def test_the_decode_end_builds_at_the_peers_counts_and_returns_its_manifest(monkeypatch):
    peer = wire_manifest(_qwen().initialize(3, state_entries=2))
    arranged = []
    wire = _Wire(monkeypatch, {"manifest": peer.to_dict(), "error": None}, {"verdict": None})
    end = pd_transfer.DecodeEnd(_qwen)
    assert end.handshake(arrange=arranged.append) == peer
    assert arranged == [end.runner] and end.runner.blocks == 3 and end.runner.state_entries == 2
    assert wire.sent == [
        ({"manifest": wire_manifest(end.runner).to_dict(), "error": None, "verdict": None},
         pd_transfer.PREFILL),
    ]  # fmt: skip


def test_the_decode_end_refuses_a_peer_it_differs_from_by_the_first_difference(monkeypatch):
    peer = wire_manifest(_llama().initialize(2))
    wire = _Wire(monkeypatch, {"manifest": peer.to_dict(), "error": None}, {"verdict": "v"})
    end = pd_transfer.DecodeEnd(_llama)
    with pytest.raises(pd_transfer.PeerRefused) as err:
        end.handshake(arrange=interleave_fields)
    assert str(err.value) == (
        "page region 1 is 'target.h1d128/v/0' here and 'target.h1d128/k/1' on the prefill end"
    )
    assert wire.sent[0][0]["verdict"] == str(err.value) and wire.sent[0][0]["error"] is None


@pytest.mark.parametrize(
    ("hello", "answer", "refusal"),
    [
        ({"manifest": None, "error": "no pools"}, {"verdict": None}, "^no pools$"),
        ("same", {"verdict": "odd"}, "^the prefill end refused: odd$"),
        (
            {"manifest": {"version": 1}, "error": None},
            {"verdict": None},
            "^the decode end cannot import the prefill end's pools: manifest header must be",
        ),
    ],
    ids=["peer-error", "peer-verdict", "unreadable"],
)
def test_the_decode_end_refuses_by_the_peers_words_or_its_own(monkeypatch, hello, answer, refusal):
    if hello == "same":
        hello = {"manifest": wire_manifest(_llama().initialize(2)).to_dict(), "error": None}
    wire = _Wire(monkeypatch, hello, answer)
    with pytest.raises(pd_transfer.PeerRefused, match=refusal):
        pd_transfer.DecodeEnd(_llama).handshake()
    assert len(wire.sent) == 1


def test_a_model_with_state_sends_no_state_set_when_no_slot_moves(monkeypatch):
    end = pd_transfer.PrefillEnd(_qwen().initialize(2, state_entries=2))
    wire = _Wire(monkeypatch)
    sent = []
    monkeypatch.setattr(torch.distributed, "send", lambda t, dst: sent.append(t.numel()))
    end.send_blocks([1], [])
    assert wire.sent == [({"sets": ["page"]}, pd_transfer.DECODE)] and len(sent) == 1
    end.send_blocks([1], [0])
    assert wire.sent[1] == ({"sets": ["page", "state"]}, pd_transfer.DECODE) and len(sent) == 3
