"""Element order for a builder that allocates its own: DeepSeek-V4's planes, windows,
compressor state and indexer regions.

None of V4's views is a region of the runner's paged buffer, so the reference store's layout
table says nothing about them; the builder declares each one's order
(`DeepseekV4MetadataBuilder.element_orders`, from the row space's addresses, the state fields'
walk and the indexer regions' offsets) and the readback compares the bound view with that
declaration element by element. Each planted breakage here keeps the view's shape, dtype and
byte range -- the byte-level checks stay green -- and is caught with the element check's own
message. A readback that would walk nothing fails by name.
"""

from __future__ import annotations

import pytest
import torch

import contracts.runtime.checks as checks
from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.runner.model_runner import ModelRunner
from contracts.runtime import ContractViolation, check_disjoint_in_bounds, check_price_equals_carve
from contracts.runtime.checks import check_element_readback

V4 = "deepseek-v4-flash-dspark"


def _v4(kv_dtype="bf16", blocks=2, entries=2):
    engine = EngineConfig(
        tp_size=2, kv_dtype=kv_dtype, scheduler_block_size=256, num_speculative_tokens=5
    )
    return ModelRunner(load_model_config(V4), engine).initialize(blocks, state_entries=entries)


def _layer(runner, ratio):
    return next(m for m in runner.bound_modules() if m.compress_ratio == ratio)


def _rebind(module, name, view):
    module.bind({**module.kv_views, name: view})


def _column_major(view):
    """The same bytes as ``view`` (its last two axes dense), read with those axes swapped: the
    record's bug class -- nothing moves but the element order."""
    *_, rows, cols = view.shape
    assert view.stride()[-2:] == (cols, 1)
    return torch.as_strided(view, view.shape, (*view.stride()[:-2], 1, rows), view.storage_offset())


def test_every_view_of_every_kind_of_layer_is_walked(monkeypatch):
    """A dense, a CSA and an HCA layer bind different views; the readback walks the first
    layer of each, every view of it, in both plane layouts."""
    real = checks._declared_readback
    walked = []
    monkeypatch.setattr(
        checks, "_declared_readback", lambda b, m, **k: (walked.append(m), real(b, m, **k))
    )
    for kv_dtype, planes in (("bf16", 1), ("fp8", 2)):
        runner = _v4(kv_dtype)
        walked.clear()
        check_element_readback(runner)
        assert {m.compress_ratio for m in walked} == {0, 4, 128}
        csa = next(m for m in walked if m.compress_ratio == 4)
        declared = runner.builder.element_orders(csa)
        assert set(declared) == set(csa.kv_views)
        assert {"v4_index_kv", "v4_index_scale", "compressor_kv", "kv_compressed"} <= set(declared)
        assert sum(n.startswith("kv_compressed") for n in declared) == planes


def test_compressed_rows_read_in_another_order_are_caught():
    runner = _v4()
    csa = _layer(runner, 4)
    _rebind(csa, "kv_compressed", _column_major(csa.kv_views["kv_compressed"]))
    check_price_equals_carve(runner)
    check_disjoint_in_bounds(runner)
    with pytest.raises(
        ContractViolation,
        match=r"kv_compressed: element \(block 0, row 0, dim 1\) written through the bound view is "
        r"not where its declared element order puts it; element \(block 0, row 1, dim 0\) of "
        r"kv_compressed is there",
    ):
        check_element_readback(runner)


def test_a_compressor_state_read_with_position_and_dim_swapped_is_caught():
    runner = _v4("fp8")
    hca = _layer(runner, 128)
    _rebind(hca, "compressor_score", _column_major(hca.kv_views["compressor_score"]))
    check_price_equals_carve(runner)
    with pytest.raises(ContractViolation, match=r"compressor_score: element \(slot 0, position 0"):
        check_element_readback(runner)


def test_a_window_bound_to_the_next_layers_interleaved_rows_is_caught():
    """An HCA window is runs of 2 rows interleaved across the class's layers: the view one
    layer over has the same shape and stride, and reads its neighbour's positions."""
    runner = _v4()
    first, second = [m for m in runner.bound_modules() if m.compress_ratio == 128][:2]
    _rebind(first, "window", second.kv_views["window"])
    with pytest.raises(ContractViolation, match=r"window: element \(slot 0, run 0, position 0"):
        check_element_readback(runner)


def test_an_indexer_scale_region_starting_one_region_early_is_caught():
    """A scale view that recomputes `rows * head_dim` from the pool shape and starts one region
    early reads the tail of the data: valid-looking numbers (ATOM's pull request #2147)."""
    runner = _v4()
    csa = _layer(runner, 4)
    scale = csa.kv_views["v4_index_scale"]
    per_block = scale[0].numel() * scale.element_size()
    early = torch.as_strided(scale, scale.shape, scale.stride(), scale.storage_offset() - per_block)
    _rebind(csa, "v4_index_scale", early)
    with pytest.raises(ContractViolation, match=r"v4_index_scale: element \(block 0, axis0 0"):
        check_element_readback(runner)


def test_a_view_shorter_than_its_declaration_is_named():
    runner = _v4()
    csa = _layer(runner, 4)
    _rebind(csa, "window_tail", csa.kv_views["window_tail"][:, :-1])
    with pytest.raises(ContractViolation, match=r"window_tail: the bound view has shape"):
        check_element_readback(runner)


def test_a_view_the_builder_declares_no_order_for_fails_by_name(monkeypatch):
    runner = _v4()
    builder = runner.builder
    real = builder.element_orders
    monkeypatch.setattr(
        builder, "element_orders", lambda m: {n: o for n, o in real(m).items() if n != "window"}
    )
    with pytest.raises(
        ContractViolation, match=r"binds views \['window'\] with no declared element order"
    ):
        check_element_readback(runner)


@pytest.mark.parametrize("name", [V4, "llama-3.1-8b"])
def test_a_readback_with_nothing_to_walk_fails_by_name(name):
    """Never a ValueError out of the sampling, never a silent pass: a check that walks nothing
    proves nothing."""
    if name == V4:
        runner = _v4()
    else:
        runner = ModelRunner(load_model_config(name), EngineConfig()).initialize(2)
    for m in runner.bound_modules():
        m.bind({})
    with pytest.raises(
        ContractViolation, match=r"builder 'target' binds \d+ modules .* walk nothing"
    ):
        check_element_readback(runner)


def test_the_declared_orders_are_one_to_one_over_a_small_pool():
    """The declaration itself: no two elements of any two views share a byte, and every
    address lies in the buffer it names -- every element of every view, on a small V4 (the
    shipped config cut to 6 layers and its 3-layer drafter, 8 window positions)."""
    cfg = load_model_config(V4).with_overrides(
        num_hidden_layers=6, compress_ratios=[0, 0, 4, 128, 4, 128, 0, 0, 0], sliding_window=8
    )
    engine = EngineConfig(kv_dtype="fp8", scheduler_block_size=256, num_speculative_tokens=1)
    runner = ModelRunner(cfg, engine).initialize(1, state_entries=2)
    assert {m.compress_ratio for m in runner.bound_modules()} == {0, 4, 128}
    builder = runner.builder
    seen = {i: [] for i, _ in enumerate(builder.own_buffers())}
    for m in runner.bound_modules():
        for order in builder.element_orders(m).values():
            index = torch.meshgrid(*[torch.arange(s) for s in order.shape], indexing="ij")
            at = order.address(*index).expand(index[0].shape).reshape(-1, 1)
            seen[order.buffer].append(at + torch.arange(order.dtype.itemsize))
    for i, parts in seen.items():
        addresses = torch.cat([p.reshape(-1) for p in parts])
        assert int(addresses.min()) >= 0
        assert int(addresses.max()) < builder.own_buffers()[i].numel()
        assert addresses.unique().numel() == addresses.numel()


def test_a_view_of_another_dtype_than_declared_is_named():
    runner = _v4()
    csa = _layer(runner, 4)
    view = csa.kv_views["kv_compressed"]
    assert view.dtype == torch.bfloat16  # the bf16 build: the same bytes read as int16
    _rebind(csa, "kv_compressed", view.view(torch.int16))
    with pytest.raises(
        ContractViolation,
        match=r"kv_compressed: the bound view is torch.int16; declared torch.bfloat16",
    ):
        check_element_readback(runner)


def test_an_order_declared_in_a_buffer_the_builder_does_not_hold_is_named(monkeypatch):
    import dataclasses

    runner = _v4()
    builder = runner.builder
    held = len(builder.own_buffers())
    real = builder.element_orders
    monkeypatch.setattr(
        builder,
        "element_orders",
        lambda m: {n: dataclasses.replace(o, buffer=held) for n, o in real(m).items()},
    )
    # One past the last buffer: `held` buffers are numbered 0 .. held - 1.
    with pytest.raises(
        ContractViolation, match=rf"declared in own buffer {held}; builder 'target' holds {held}"
    ):
        check_element_readback(runner)


def test_a_view_of_a_copy_instead_of_the_own_buffer_is_named():
    runner = _v4()
    csa = _layer(runner, 4)
    _rebind(csa, "kv_compressed", csa.kv_views["kv_compressed"].clone())
    with pytest.raises(
        ContractViolation, match=r"kv_compressed is not a view of the own buffer \d+"
    ):
        check_element_readback(runner)


@pytest.mark.parametrize("past", [0, 1])
def test_an_order_declared_past_its_buffer_is_named(monkeypatch, past):
    """Every view's order moved so its last byte is the buffer's last (past 0: accepted as a
    bound, then caught as another order) or one beyond it (past 1: named as out of range)."""
    import dataclasses

    runner = _v4()
    builder = runner.builder
    buffers = builder.own_buffers()
    real = builder.element_orders

    def shifted(m):
        out = {}
        for n, o in real(m).items():
            index = torch.meshgrid(*[torch.arange(s) for s in o.shape], indexing="ij")
            last = int(o.address(*index).max()) + o.dtype.itemsize - 1
            delta = buffers[o.buffer].numel() - 1 - last + past

            def address(*i, _o=o, _d=delta):
                return _o.address(*i) + _d

            out[n] = dataclasses.replace(o, address=address)
        return out

    monkeypatch.setattr(builder, "element_orders", shifted)
    if past:
        with pytest.raises(ContractViolation, match=r"its declared element order reaches bytes"):
            check_element_readback(runner)
    else:
        with pytest.raises(ContractViolation, match=r"not where its declared element order puts"):
            check_element_readback(runner)


def test_a_layer_past_the_first_of_its_kind_is_read_too():
    """Every layer is walked, not a sample: the compressed rows of the last CSA layer alone,
    read column-major, are caught at the ends of its axes."""
    runner = _v4()
    csa = [m for m in runner.bound_modules() if m.compress_ratio == 4]
    assert len(csa) > 2
    last = csa[-1]
    _rebind(last, "kv_compressed", _column_major(last.kv_views["kv_compressed"]))
    with pytest.raises(
        ContractViolation,
        match=rf"{last.prefix}\.kv_compressed: element \(block 0, row 0, dim \d+\) written "
        r"through the bound view is not where its declared element order puts it",
    ):
        check_element_readback(runner)


def test_the_first_layer_of_each_kind_is_read_in_full_and_the_rest_at_their_ends(monkeypatch):
    real = checks._declared_readback
    calls = []
    monkeypatch.setattr(
        checks, "_declared_readback", lambda b, m, **k: (calls.append((m, k)), real(b, m, **k))
    )
    runner = _v4()
    check_element_readback(runner)
    walked = [m for m in runner.bound_modules() if m.kv_views]
    assert [m for m, _ in calls] == walked  # each once, in walk order
    full = [m for m, k in calls if k["full"]]
    assert 3 <= len(full) < len(walked)  # a dense, a CSA and an HCA layer at least
    kinds = {}
    for m in walked:
        kinds.setdefault(tuple(sorted(m.kv_views)), m)
    assert full == list(kinds.values())


@pytest.mark.filterwarnings("ignore:Use of index_put_ on expanded tensors")
def test_a_view_reading_other_bytes_than_it_wrote_is_named_where_its_declared_bytes_agree():
    """The declared bytes can hold the right codes without this view having put them there: a
    second run over bytes the first left (fp32 codes take one pass), through a view whose every
    element is one byte no sampled element is declared at. Only the read back through the view
    sees it."""
    runner = _v4()
    hca = _layer(runner, 128)
    check_element_readback(runner)
    v = hca.kv_views["compressor_kv"]
    assert v.dtype == torch.float32 and v.shape[1] > 33 and v.shape[2] > 33
    # (slot 0, position 17, dim 17): 17 is in no axis' sample (0..15, 16, 24, ...).
    stuck = torch.as_strided(v, v.shape, (0, 0, 0), v.storage_offset() + 17 * v.stride(1) + 17)
    _rebind(hca, "compressor_kv", stuck)
    with pytest.raises(
        ContractViolation,
        match=r"compressor_kv: element \(slot 0, position 0, dim [01]\) written through the bound "
        r"view reads back through it as element \(slot \d+, position \d+, dim \d+\) of "
        r"compressor_kv",
    ):
        check_element_readback(runner)


def test_a_layer_past_the_first_of_its_kind_is_read_at_both_ends_of_every_axis(monkeypatch):
    import dataclasses

    runner = _v4()
    builder = runner.builder
    real = builder.element_orders
    grids = {}

    def recording(m):
        def wrap(n, o):
            def address(*i):
                grids[(m.prefix, n)] = tuple(i[0].shape)
                return o.address(*i)

            return dataclasses.replace(o, address=address)

        return {n: wrap(n, o) for n, o in real(m).items()}

    monkeypatch.setattr(builder, "element_orders", recording)
    check_element_readback(runner)
    first, second = [m for m in runner.bound_modules() if m.compress_ratio == 4][:2]
    shape = first.kv_views["kv_compressed"].shape
    assert grids[(second.prefix, "kv_compressed")] == tuple(min(s, 2) for s in shape)
    assert grids[(first.prefix, "kv_compressed")] == tuple(len(checks._sample(s)) for s in shape)
