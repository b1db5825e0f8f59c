"""The wire manifest: what both ends of a P/D transfer compare before a byte moves.

A transfer pairs the two ends' regions by position. Folding the fields changed a pool's region
order from ``K0,V0,K1,V1...`` to all of K then all of V at the same count and the same bytes, and
a peer pairing by position then "transfers K into V and says nothing"; an fp8 pool written as
e4m3fn and read as e5m2 has the same bytes in the same places. No count and no byte total
distinguishes either pair, so each end describes its regions -- in order, each by its semantic
role, dtype, span and stride -- and refuses a peer whose description differs, naming the first
region and field that does.

The description is read off the transfer regions the pools export (``TransferRegion``), the same
objects a transfer moves; nothing here is a second declaration of a layout. A manifest is:

- a ``header``: what the two ends must agree on that no single region says (the model, its
  config, the KV dtype, the scheduler block, the ranks, the paged layout each builder binds);
- one :class:`RegionSetManifest` a region set -- ``page`` (one unit per scheduler block) and,
  where a model keeps per-request state, ``state`` (one unit per request slot) -- listing each
  region's ``role``, ``dtype``, ``span`` (the bytes one unit contributes to a staged block),
  ``stride`` (the bytes one unit owns in the pool), ``units`` and where its span sits in a staged
  block (the :class:`StagingLayout`);
- a ``digest``: sha256 over the header and every region's role, dtype, span and stride. The unit
  counts are each end's own capacity (a decode instance may hold more blocks than its prefill
  peer) and are left out of it: block ids are checked against each end's own pool when they move.

:meth:`WireManifest.difference` is the comparison: None, or one sentence naming the first header
field that differs and the first region that differs (by set, position and role) and which of its
fields -- never a count of regions. The manifest travels as JSON (:meth:`WireManifest.to_json`);
a received one is checked field by field and against its own digest (:meth:`from_json`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .transfer import TransferRegion

MANIFEST_VERSION = 1
#: The region sets a pool set exports, and the unit each counts in.
SET_UNITS = {"page": "scheduler block", "state": "request slot"}
#: The region fields both ends must agree on, in the order a difference is reported.
COMPARED_FIELDS = ("role", "dtype", "span", "stride")


# -- the staging layout ------------------------------------------------------------------------


@dataclass(frozen=True)
class StagedRegion:
    role: str
    #: bytes from a staged block's start to this region's first byte.
    offset: int
    #: bytes of this region one block owns (its unit's data, first byte to last).
    span: int


@dataclass(frozen=True)
class StagingLayout:
    """Where every region's bytes sit in one staged block; ``block_bytes`` is their sum."""

    regions: tuple[StagedRegion, ...]

    @functools.cached_property
    def block_bytes(self) -> int:
        # Cached: every call asks (the staged buffer's check, the launch), and a pool of 300
        # regions would sum 300 spans each time.
        return sum(r.span for r in self.regions)

    @classmethod
    def of(cls, roles_and_spans: Iterable[tuple[str, int]]) -> StagingLayout:
        regions, offset = [], 0
        for role, span in roles_and_spans:
            regions.append(StagedRegion(role, offset, span))
            offset += span
        return cls(tuple(regions))

    def difference(self, staged: StagingLayout) -> str | None:
        """None when ``staged`` (the other end's) equals this one; else the first region that
        differs, by name."""
        for i, (here, there) in enumerate(zip(self.regions, staged.regions, strict=False)):
            if here.role != there.role:
                return f"staged region {i} is {there.role!r}, but region {i} here is {here.role!r}"
            if here.span != there.span:
                return (
                    f"region {here.role!r} spans {there.span} B a block in the staged blocks "
                    f"and {here.span} B here"
                )
        if len(staged.regions) > len(self.regions):
            extra = staged.regions[len(self.regions)]
            return f"staged region {extra.role!r} has no region here"
        if len(self.regions) > len(staged.regions):
            missing = self.regions[len(staged.regions)]
            return f"region {missing.role!r} here is not in the staged blocks"
        return None


# -- the manifest ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ManifestRegion:
    role: str
    dtype: str
    #: bytes one unit's data spans: what one unit contributes to a staged block.
    span: int
    #: bytes from one unit's start to the next in the pool: what one unit owns there.
    stride: int
    #: units this end's region holds (scheduler blocks or request slots); not compared.
    units: int


@dataclass(frozen=True)
class RegionSetManifest:
    """One region set's description: ``name`` is ``page`` or ``state``."""

    name: str
    regions: tuple[ManifestRegion, ...]

    @property
    def unit(self) -> str:
        return SET_UNITS[self.name]

    @functools.cached_property
    def staging(self) -> StagingLayout:
        """The staged block both ends build from these regions: each span at the running sum."""
        return StagingLayout.of((r.role, r.span) for r in self.regions)

    @property
    def block_bytes(self) -> int:
        return self.staging.block_bytes

    @property
    def units(self) -> int:
        """Units of this end's regions (every region of a set has the same count)."""
        return self.regions[0].units if self.regions else 0


def describe_regions(name: str, regions: Sequence[TransferRegion]) -> RegionSetManifest:
    """The manifest of one region set, read off the regions themselves, in their order."""
    if name not in SET_UNITS:
        raise ValueError(f"region set {name!r} is not one of {sorted(SET_UNITS)}")
    described = []
    for r in regions:
        if not isinstance(r, TransferRegion):
            raise TypeError(f"a manifest describes TransferRegion items, got {type(r).__name__}")
        described.append(
            ManifestRegion(r.semantic_role, r.dtype, r.unit_data_bytes, r.unit_bytes, r.units)
        )
    counts = {m.units for m in described}
    if len(counts) > 1:
        first = described[0]
        odd = next(m for m in described if m.units != first.units)
        raise ValueError(
            f"{name} region {odd.role!r} holds {odd.units} units and {first.role!r} holds "
            f"{first.units}: a region set has one unit a {SET_UNITS[name]} in every region"
        )
    return RegionSetManifest(name, tuple(described))


HeaderValue = str | int


@dataclass(frozen=True)
class WireManifest:
    """A pool set's description: its header, then its region sets in order."""

    header: tuple[tuple[str, HeaderValue], ...]
    sets: tuple[RegionSetManifest, ...]
    version: int = MANIFEST_VERSION

    @classmethod
    def of(
        cls, header: Mapping[str, HeaderValue], sets: Sequence[RegionSetManifest]
    ) -> WireManifest:
        for key, value in header.items():
            if (
                not isinstance(key, str)
                or isinstance(value, bool)
                or not isinstance(value, (str, int))
            ):
                raise TypeError(f"manifest header {key!r}: {value!r} is not a name or a number")
        names = [s.name for s in sets]
        if len(set(names)) != len(names):
            raise ValueError(f"manifest region sets {names} name a set twice")
        return cls(tuple(header.items()), tuple(sets))

    # -- reads ----------------------------------------------------------------------------------

    def header_value(self, key: str) -> HeaderValue:
        for k, v in self.header:
            if k == key:
                return v
        raise KeyError(f"manifest header has no {key!r}; it holds {[k for k, _ in self.header]}")

    def region_set(self, name: str) -> RegionSetManifest | None:
        return next((s for s in self.sets if s.name == name), None)

    def _layout(self) -> dict[str, Any]:
        """Everything both ends must agree on: what the digest covers (no unit counts)."""
        return {
            "version": self.version,
            "header": [[k, v] for k, v in self.header],
            "sets": [
                {
                    "name": s.name,
                    "regions": [[getattr(r, f) for f in COMPARED_FIELDS] for r in s.regions],
                }
                for s in self.sets
            ],
        }

    @functools.cached_property
    def digest(self) -> str:
        canonical = json.dumps(self._layout(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    # -- the comparison -------------------------------------------------------------------------

    def difference(self, peer: WireManifest, *, peer_name: str = "the peer") -> str | None:
        """None when ``peer`` describes the same layout; else the first header field and the
        first region that differ, each by name."""
        if not isinstance(peer, WireManifest):
            raise TypeError(
                f"a manifest is compared with a WireManifest, got {type(peer).__name__}"
            )
        if peer.version != self.version:
            return f"manifest version {peer.version} on {peer_name} and {self.version} here"
        if peer.digest == self.digest:
            return None
        parts = []
        header = _header_difference(self, peer, peer_name)
        if header:
            parts.append(header)
        region = _region_difference(self, peer, peer_name)
        if region:
            parts.append(region if not parts else f"first differing region: {region}")
        return "; ".join(parts) or None

    def require_match(self, peer: WireManifest, *, peer_name: str = "the peer") -> None:
        """Refuse, by name, a peer whose manifest describes another layout."""
        why = self.difference(peer, peer_name=peer_name)
        if why is not None:
            raise ManifestMismatch(
                f"the wire manifests differ ({self.digest[:19]} here, {peer.digest[:19]} on "
                f"{peer_name}): {why}"
            )

    # -- the wire -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "digest": self.digest,
            "header": dict(self.header),
            "sets": [
                {
                    "name": s.name,
                    "unit": s.unit,
                    "units": s.units,
                    "block_bytes": s.block_bytes,
                    "regions": [
                        {
                            "role": r.role,
                            "dtype": r.dtype,
                            "span": r.span,
                            "stride": r.stride,
                            "units": r.units,
                            "offset": staged.offset,
                        }
                        for r, staged in zip(s.regions, s.staging.regions, strict=True)
                    ],
                }
                for s in self.sets
            ],
        }

    def to_json(self, *, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Any) -> WireManifest:
        """A manifest received from a peer, each field checked, and its digest recomputed: one
        that does not match what the peer stated was altered on the way (or written by another
        version of this code), and is refused rather than compared."""
        doc = _require(data, dict, "manifest")
        version = _require(doc.get("version"), int, "manifest version")
        header = _require(doc.get("header"), dict, "manifest header")
        sets = []
        for i, raw_set in enumerate(_require(doc.get("sets"), list, "manifest sets")):
            s = _require(raw_set, dict, f"manifest set {i}")
            name = _require(s.get("name"), str, f"manifest set {i} name")
            if name not in SET_UNITS:
                raise ValueError(f"manifest set {i} is {name!r}, not one of {sorted(SET_UNITS)}")
            regions = []
            for j, raw in enumerate(_require(s.get("regions"), list, f"{name} regions")):
                r = _require(raw, dict, f"{name} region {j}")
                regions.append(
                    ManifestRegion(
                        _require(r.get("role"), str, f"{name} region {j} role"),
                        _require(r.get("dtype"), str, f"{name} region {j} dtype"),
                        _require(r.get("span"), int, f"{name} region {j} span"),
                        _require(r.get("stride"), int, f"{name} region {j} stride"),
                        _require(r.get("units"), int, f"{name} region {j} units"),
                    )
                )
            if len({r.units for r in regions}) > 1:
                raise ValueError(
                    f"manifest {name} regions hold {sorted({r.units for r in regions})} units: "
                    f"a region set has one unit a {SET_UNITS[name]} in every region"
                )
            sets.append(RegionSetManifest(name, tuple(regions)))
        manifest = dataclasses.replace(cls.of(header, sets), version=version)
        stated = doc.get("digest")
        if stated != manifest.digest:
            raise ValueError(
                f"manifest states digest {stated!r} but its fields hash to {manifest.digest!r}: "
                "it was altered after it was written"
            )
        return manifest

    @classmethod
    def from_json(cls, text: str) -> WireManifest:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"a wire manifest must be JSON: {exc}") from None
        return cls.from_dict(data)

    def format_text(self) -> str:
        width = max([len(k) for k, _ in self.header] + [7])
        lines = [f"wire manifest v{self.version}  {self.digest}"]
        lines += [f"  {k:<{width}}  {v}" for k, v in self.header]
        for s in self.sets:
            lines.append("")
            lines.append(
                f"{s.name} regions: {len(s.regions)}, one unit a {s.unit} ({s.units} here), "
                f"{s.block_bytes} B a staged {s.unit}"
            )
            role_w = max([len(r.role) for r in s.regions] + [4])
            dtype_w = max([len(r.dtype) for r in s.regions] + [5])
            lines.append(
                f"  {'#':>4}  {'role':<{role_w}}  {'dtype':<{dtype_w}}  {'span B':>9}  "
                f"{'stride B':>9}  {'staged at':>10}"
            )
            for i, (r, staged) in enumerate(zip(s.regions, s.staging.regions, strict=True)):
                lines.append(
                    f"  {i:>4}  {r.role:<{role_w}}  {r.dtype:<{dtype_w}}  {r.span:>9}  "
                    f"{r.stride:>9}  {staged.offset:>10}"
                )
        return "\n".join(lines) + "\n"


class ManifestMismatch(ValueError):
    """Two ends' manifests describe different layouts; the message names the first difference."""


def _require(value: Any, kind: type, what: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{what} must be a {kind.__name__}, got {value!r}")
    return value


def _header_difference(here: WireManifest, peer: WireManifest, peer_name: str) -> str | None:
    mine, theirs = dict(here.header), dict(peer.header)
    for key in [*mine, *(k for k in theirs if k not in mine)]:
        if key not in theirs:
            return f"{key} is {mine[key]!r} here and not stated on {peer_name}"
        if key not in mine:
            return f"{key} is {theirs[key]!r} on {peer_name} and not stated here"
        if mine[key] != theirs[key]:
            return f"{key} is {mine[key]!r} here and {theirs[key]!r} on {peer_name}"
    return None


def _region_difference(here: WireManifest, peer: WireManifest, peer_name: str) -> str | None:
    theirs = {s.name: s for s in peer.sets}
    for s in here.sets:
        other = theirs.get(s.name)
        if other is None:
            first = s.regions[0].role if s.regions else "(none)"
            return (
                f"{s.name} region 0 {first!r} here has no counterpart: {peer_name} moves no "
                f"{s.unit}s"
            )
        for i, (a, b) in enumerate(zip(s.regions, other.regions, strict=False)):
            if a.role != b.role:
                return f"{s.name} region {i} is {a.role!r} here and {b.role!r} on {peer_name}"
            for f in COMPARED_FIELDS[1:]:
                mine, there = getattr(a, f), getattr(b, f)
                if mine != there:
                    unit = "" if f == "dtype" else " B"
                    return (
                        f"{s.name} region {i} {a.role!r}: {f} is {mine}{unit} here and "
                        f"{there}{unit} on {peer_name}"
                    )
        if len(other.regions) > len(s.regions):
            extra = other.regions[len(s.regions)]
            return (
                f"{s.name} region {len(s.regions)} {extra.role!r} on {peer_name} has no "
                "counterpart here"
            )
        if len(s.regions) > len(other.regions):
            missing = s.regions[len(other.regions)]
            return (
                f"{s.name} region {len(other.regions)} {missing.role!r} here has no counterpart "
                f"on {peer_name}"
            )
    mine = {s.name for s in here.sets}
    for s in peer.sets:
        if s.name not in mine:
            first = s.regions[0].role if s.regions else "(none)"
            return f"{s.name} region 0 {first!r} on {peer_name} has no counterpart: this end moves no {s.unit}s"
    return None
