"""The wire manifest (`atom.pool_layout.manifest`): what it describes, what its digest covers,
and how a difference is named -- by the first header field and the first region and field that
differ, never by a count.

Regions here are hand-built tensors whose byte arithmetic is written out beside them; the
runner's manifests of every registry model are pinned in tests/atom/runner.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from atom.pool_layout import TransferRegion
from atom.pool_layout.manifest import (
    ManifestMismatch,
    StagingLayout,
    WireManifest,
    describe_regions,
)


def _kv(rows=2, span=256, order="fields", dtype="bfloat16", units=3, stride=None):
    """K and V regions of ``rows`` rows, ``units`` units of ``span`` bytes (stride ``stride``,
    default the span): all K then all V (``fields``), or K0,V0,K1,V1 (``rows``)."""
    stride = stride or span
    names = [(f, r) for f in ("k", "v") for r in range(rows)]
    if order == "rows":
        names = [(f, r) for r in range(rows) for f in ("k", "v")]
    return [
        TransferRegion(
            f"target.h1d128/{f}/{r}", torch.zeros(units, stride, dtype=torch.uint8)[:, :span], dtype
        )
        for f, r in names
    ]


def _manifest(regions=None, state=None, **header):
    head = {"model": "m", "kv_dtype": "bf16", "scheduler_block_size": 16, **header}
    sets = [describe_regions("page", regions if regions is not None else _kv())]
    if state is not None:
        sets.append(describe_regions("state", state))
    return WireManifest.of(head, sets)


def test_a_region_is_described_by_role_dtype_span_stride_and_units_in_order():
    # 3 units of 512 B a unit in the pool, of which the first 256 are the region's.
    page = describe_regions("page", _kv(rows=1, span=256, stride=512))
    assert [(r.role, r.dtype, r.span, r.stride, r.units) for r in page.regions] == [
        ("target.h1d128/k/0", "bfloat16", 256, 512, 3),
        ("target.h1d128/v/0", "bfloat16", 256, 512, 3),
    ]
    # The staged block is the spans back to back: K at 0, V at 256, 512 B a block.
    assert [(s.role, s.offset, s.span) for s in page.staging.regions] == [
        ("target.h1d128/k/0", 0, 256),
        ("target.h1d128/v/0", 256, 256),
    ]
    assert page.block_bytes == 512 and page.units == 3 and page.unit == "scheduler block"


def test_the_staging_layout_is_the_one_a_region_set_stages_in():
    from atom.kernels.block_transfer import RegionSet

    buf = torch.zeros(4 * 1024, dtype=torch.uint8)
    regions = [
        TransferRegion("a", buf[:2048].view(4, 512)),
        TransferRegion("b", buf[2048:].view(4, 512)[:, :128]),
    ]
    assert describe_regions("page", regions).staging == RegionSet(regions).layout
    assert isinstance(RegionSet(regions).layout, StagingLayout)


def test_the_digest_covers_the_layout_and_not_the_unit_counts():
    base = _manifest()
    assert base.digest.startswith("sha256:") and len(base.digest) == 7 + 64
    # Another end's capacity: 9 blocks instead of 3, the same layout.
    assert _manifest(_kv(units=9)).digest == base.digest
    assert _manifest(_kv(units=9)).difference(base) is None
    for other in (
        _manifest(_kv(order="rows")),
        _manifest(_kv(dtype="float8_e4m3fn")),
        _manifest(_kv(span=128)),
        _manifest(_kv(stride=512)),
        _manifest(kv_dtype="fp8"),
    ):
        assert other.digest != base.digest


def test_all_k_then_all_v_against_row_by_row_is_refused_at_the_first_region_by_role():
    # Same count (4 regions) and the same bytes (256 B each): only the roles differ.
    fields, rows = _manifest(_kv(order="fields")), _manifest(_kv(order="rows"))
    assert sum(r.span for r in fields.sets[0].regions) == sum(r.span for r in rows.sets[0].regions)
    assert fields.difference(rows) == (
        "page region 1 is 'target.h1d128/k/1' here and 'target.h1d128/v/0' on the peer"
    )


@pytest.mark.parametrize(
    ("peer", "needle"),
    [
        (
            _manifest(_kv(dtype="float8_e5m2"), kv_dtype="fp8_e5m2"),
            "kv_dtype is 'bf16' here and 'fp8_e5m2' on the peer; first differing region: page "
            "region 0 'target.h1d128/k/0': dtype is bfloat16 here and float8_e5m2 on the peer",
        ),
        (
            _manifest(_kv(span=512)),
            "page region 0 'target.h1d128/k/0': span is 256 B here and 512 B on the peer",
        ),
        (
            _manifest(_kv(stride=1024)),
            "page region 0 'target.h1d128/k/0': stride is 256 B here and 1024 B on the peer",
        ),
        (_manifest(model="other"), "model is 'm' here and 'other' on the peer"),
        (
            _manifest(_kv(rows=3)),
            "page region 2 is 'target.h1d128/v/0' here and 'target.h1d128/k/2' on the peer",
        ),
    ],
    ids=["dtype", "span", "stride", "model", "rows"],
)
def test_each_difference_is_named_by_its_field_and_region(peer, needle):
    assert _manifest().difference(peer) == needle


def test_a_region_one_end_lacks_is_named_by_role_not_by_a_count():
    short = _manifest(_kv()[:3])
    assert _manifest().difference(short) == (
        "page region 3 'target.h1d128/v/1' here has no counterpart on the peer"
    )
    assert short.difference(_manifest(), peer_name="the decode end") == (
        "page region 3 'target.h1d128/v/1' on the decode end has no counterpart here"
    )


def test_a_state_set_one_end_lacks_is_named_by_its_first_region():
    state = [TransferRegion("target.linear_state", torch.zeros(2, 1024, dtype=torch.uint8))]
    with_state = _manifest(state=state)
    assert _manifest().difference(with_state) == (
        "state region 0 'target.linear_state' on the peer has no counterpart: this end moves no "
        "request slots"
    )
    assert with_state.difference(_manifest()) == (
        "state region 0 'target.linear_state' here has no counterpart: the peer moves no "
        "request slots"
    )


def test_a_header_field_one_end_lacks_is_named():
    assert _manifest(tp=2).difference(_manifest()) == "tp is 2 here and not stated on the peer"
    assert _manifest().difference(_manifest(tp=2)) == "tp is 2 on the peer and not stated here"


def test_require_match_raises_a_value_error_with_both_digests_and_the_difference():
    here, there = _manifest(), _manifest(_kv(order="rows"))
    here.require_match(_manifest(_kv(units=7)))  # another capacity is no difference
    with pytest.raises(ManifestMismatch, match=r"page region 1 is 'target.h1d128/k/1' here") as e:
        here.require_match(there)
    assert isinstance(e.value, ValueError)
    assert here.digest[:19] in str(e.value) and there.digest[:19] in str(e.value)


def test_json_round_trips_and_states_the_staging_offsets():
    m = _manifest(state=[TransferRegion("target.s", torch.zeros(2, 64, dtype=torch.uint8))])
    doc = json.loads(m.to_json())
    assert doc["digest"] == m.digest and doc["header"]["scheduler_block_size"] == 16
    page = doc["sets"][0]
    assert page["block_bytes"] == 4 * 256 and [r["offset"] for r in page["regions"]] == [
        0,
        256,
        512,
        768,
    ]
    back = WireManifest.from_json(m.to_json())
    assert back == m and back.digest == m.digest


def test_a_manifest_altered_on_the_way_is_refused_by_its_digest():
    doc = json.loads(_manifest().to_json())
    doc["sets"][0]["regions"][0]["span"] = 128
    with pytest.raises(ValueError, match=r"states digest 'sha256:.*' but its fields hash to"):
        WireManifest.from_dict(doc)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda d: d.pop("header"), "manifest header must be a dict, got None"),
        (lambda d: d["sets"][0].update(name="pages"), "manifest set 0 is 'pages', not one of"),
        (
            lambda d: d["sets"][0]["regions"][1].update(span="256"),
            "page region 1 span must be a int, got '256'",
        ),
        (lambda d: d.update(version=True), "manifest version must be a int, got True"),
        (
            lambda d: d["header"].update(tp=[2]),
            "manifest header 'tp': [2] is not a name or a number",
        ),
    ],
    ids=["no-header", "set-name", "span-type", "version-bool", "header-value"],
)
def test_a_malformed_manifest_is_refused_by_the_field(edit, needle):
    doc = json.loads(_manifest().to_json())
    edit(doc)
    with pytest.raises(
        (ValueError, TypeError), match=needle.replace("[", r"\[").replace("]", r"\]")
    ):
        WireManifest.from_dict(doc)
    with pytest.raises(ValueError, match="a wire manifest must be JSON"):
        WireManifest.from_json("{not json")


def test_regions_of_one_set_must_agree_on_their_unit_count():
    regions = [*_kv(rows=1, units=3), *_kv(rows=1, units=4)[:1]]
    with pytest.raises(ValueError, match=r"holds 4 units and 'target.h1d128/k/0' holds 3"):
        describe_regions("page", regions)
    with pytest.raises(ValueError, match=r"region set 'blocks' is not one of"):
        describe_regions("blocks", _kv())
    with pytest.raises(TypeError, match="a manifest describes TransferRegion items, got tuple"):
        describe_regions("page", [("r", torch.zeros(2, 2))])


def test_the_text_form_lists_every_region_with_its_staged_offset():
    text = _manifest().format_text()
    lines = text.splitlines()
    assert lines[0] == f"wire manifest v1  {_manifest().digest}"
    assert (
        "page regions: 4, one unit a scheduler block (3 here), 1024 B a staged scheduler block"
        in text
    )
    assert lines[-1].split() == ["3", "target.h1d128/v/1", "bfloat16", "256", "256", "768"]


def test_a_staged_layout_is_compared_region_by_region_by_role_then_span():
    here = StagingLayout.of([("k", 256), ("v", 256)])
    assert here.difference(StagingLayout.of([("k", 256), ("v", 256)])) is None
    assert here.difference(StagingLayout.of([("v", 256), ("k", 256)])) == (
        "staged region 0 is 'v', but region 0 here is 'k'"
    )
    # The role is compared first: a region of another role and another span is named by role.
    assert here.difference(StagingLayout.of([("k", 256), ("s", 128)])) == (
        "staged region 1 is 's', but region 1 here is 'v'"
    )
    assert here.difference(StagingLayout.of([("k", 256), ("v", 128)])) == (
        "region 'v' spans 128 B a block in the staged blocks and 256 B here"
    )
    # One more region, or one fewer, is named by the first region the other side lacks.
    assert here.difference(StagingLayout.of([("k", 256), ("v", 256), ("d", 64), ("e", 8)])) == (
        "staged region 'd' has no region here"
    )
    assert here.difference(StagingLayout.of([("k", 256)])) == (
        "region 'v' here is not in the staged blocks"
    )
    assert StagingLayout.of([]).difference(StagingLayout.of([])) is None
    # Offsets are the running sum of the spans; a block is their total.
    layout = StagingLayout.of([("a", 3), ("b", 5), ("c", 7)])
    assert [(r.offset, r.span) for r in layout.regions] == [(0, 3), (3, 5), (8, 7)]
    assert layout.block_bytes == 15


def test_a_manifest_and_its_parts_are_immutable_and_hashable():
    # The digest is computed once and kept: a manifest whose fields could change after it would
    # state a digest of another layout.
    m = _manifest(state=[TransferRegion("target.s", torch.zeros(2, 64, dtype=torch.uint8))])
    page = m.region_set("page")
    parts = [
        (m, "header", ()),
        (page, "name", "state"),
        (page.regions[0], "span", 1),
        (page.staging, "regions", ()),
        (page.staging.regions[0], "offset", 1),
    ]
    for obj, attr, value in parts:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, attr, value)
        assert hash(obj) == hash(dataclasses.replace(obj))
    assert (
        len(
            {
                m,
                _manifest(
                    state=[TransferRegion("target.s", torch.zeros(2, 64, dtype=torch.uint8))]
                ),
            }
        )
        == 1
    )


def test_a_set_of_no_regions_holds_no_units_and_a_set_named_twice_is_refused():
    empty = describe_regions("state", [])
    assert empty.units == 0 and empty.block_bytes == 0 and empty.unit == "request slot"
    page = describe_regions("page", _kv())
    with pytest.raises(
        ValueError, match=r"manifest region sets \['page', 'page'\] name a set twice"
    ):
        WireManifest.of({"model": "m"}, [page, page])


def test_a_header_value_is_read_by_its_key_and_a_missing_key_is_named():
    m = _manifest(tp=2)
    assert m.header_value("model") == "m"
    assert m.header_value("scheduler_block_size") == 16
    assert m.header_value("tp") == 2
    with pytest.raises(KeyError, match=r"manifest header has no 'pp'; it holds \['model', "):
        m.header_value("pp")
    assert m.region_set("page") is m.sets[0] and m.region_set("state") is None


def test_a_manifest_is_compared_only_with_a_manifest():
    with pytest.raises(TypeError, match="a manifest is compared with a WireManifest, got dict"):
        _manifest().difference(json.loads(_manifest().to_json()))


def test_a_manifest_of_another_version_is_named_by_both_versions():
    here = _manifest()
    newer = dataclasses.replace(_manifest(), version=2)
    assert here.difference(newer) == "manifest version 2 on the peer and 1 here"
    assert here.difference(newer, peer_name="the decode end") == (
        "manifest version 2 on the decode end and 1 here"
    )


def test_a_set_with_no_regions_that_the_other_end_lacks_is_named_as_none():
    empty_state = _manifest(state=[])
    assert empty_state.difference(_manifest()) == (
        "state region 0 '(none)' here has no counterpart: the peer moves no request slots"
    )
    assert _manifest().difference(empty_state) == (
        "state region 0 '(none)' on the peer has no counterpart: this end moves no request slots"
    )


def test_the_text_columns_are_at_least_as_wide_as_their_titles():
    # Keys and roles shorter than the titles, and a set of no regions: the titles set the width
    # (7 for a header key, 4 for a role, 5 for a dtype).
    m = WireManifest.of({"m": "x", "tp": 2}, [describe_regions("state", [])])
    assert m.format_text().splitlines()[1:] == [
        "  m        x",
        "  tp       2",
        "",
        "state regions: 0, one unit a request slot (0 here), 0 B a staged request slot",
        "     #  role  dtype     span B   stride B   staged at",
    ]


def test_a_received_set_whose_regions_disagree_on_their_count_is_refused():
    # A set's count is its first region's: a peer stating two counts in one set is refused as a
    # set described here would be.
    doc = json.loads(_manifest().to_json())
    doc["sets"][0]["regions"][2]["units"] = 9
    with pytest.raises(
        ValueError, match=r"manifest page regions hold \[3, 9\] units: a region set"
    ):
        WireManifest.from_dict(doc)
