"""The cache's shards: a one-file run reads one, writes only what changed, and a shard a
partial run rewrote never lets a whole-tree run trust another tree's findings."""

from __future__ import annotations

import os
import time

from checkers import api
from checkers import cache as cache_module
from checkers.cache import CACHE_DIR, SHARDS, Cache, shard_of

from ..scaffold import write_tree

OLD = 1_000_000_000 * 10**9  # an mtime far outside the racy window


def _paths_in_two_shards() -> tuple[str, str]:
    first = "a.py"
    other = next(f"b{i}.py" for i in range(1000) if shard_of(f"b{i}.py") != shard_of(first))
    return first, other


def _entry(tree: tuple = ()) -> tuple:
    return (10, OLD, b"digest", (), (), tree)


def test_a_path_is_read_from_its_one_shard(tmp_path):
    first, other = _paths_in_two_shards()
    cache = Cache(tmp_path, "k")
    cache.put(first, *_entry())
    cache.put(other, *_entry())
    cache.set_stamp(None)
    cache.save()
    written = sorted(p.name for p in cache.directory.iterdir())
    assert written == sorted(f"{shard_of(p):02x}.marshal" for p in (first, other))
    fresh = Cache(tmp_path, "k")
    assert fresh.get(first) == _entry()
    assert list(fresh._shards) == [shard_of(first)]  # the other shard was never read
    assert 0 <= shard_of(other) < SHARDS


def test_an_unchanged_entry_writes_nothing(tmp_path):
    cache = Cache(tmp_path, "k")
    cache.put("a.py", *_entry())
    cache.save()
    shard = cache.shard_path(shard_of("a.py"))
    os.utime(shard, ns=(OLD, OLD))
    again = Cache(tmp_path, "k")
    again.put("a.py", *_entry())
    again.set_stamp(None)
    again.save()
    assert shard.stat().st_mtime_ns == OLD
    again.put("a.py", *_entry(tree=(("AC601",),)))
    again.save()
    assert shard.stat().st_mtime_ns != OLD


def test_a_shard_rewritten_by_a_partial_run_withdraws_the_stamp(tmp_path):
    first, other = _paths_in_two_shards()
    whole = Cache(tmp_path, "k")
    whole.put(first, *_entry())
    whole.put(other, *_entry())
    whole.set_stamp("S")
    whole.save()
    assert Cache(tmp_path, "k").stamp == "S"
    # A run on one file whose cross-file findings came out differently (another tree):
    partial = Cache(tmp_path, "k")
    partial.put(first, *_entry(tree=(("AC601",),)))
    partial.set_stamp(None)
    partial.save()
    # The other shard still says S, this one None: no stamp vouches for the whole cache.
    assert Cache(tmp_path, "k").stamp is None
    # A whole run under S stamps every shard it read again, changed or not.
    again = Cache(tmp_path, "k")
    assert again.get(first) is not None and again.get(other) is not None
    again.set_stamp("S")
    again.save()
    assert Cache(tmp_path, "k").stamp == "S"


def test_a_missing_cache_reads_no_shard_and_is_empty(tmp_path):
    cache = Cache(tmp_path, "k")
    assert cache.get("a.py") is None
    assert not cache.entries
    assert cache.stamp is None
    cache.save()  # nothing to write: no folder appears
    assert not (tmp_path / ".atom-contracts-cache").exists()


def test_older_single_file_caches_are_pruned_and_the_config_memo_kept(tmp_path):
    base = tmp_path / ".atom-contracts-cache"
    base.mkdir()
    (base / "0123456789abcdef01234567.marshal").write_bytes(b"old layout")
    (base / "pyproject.marshal").write_bytes(b"config memo")
    (base / "listing.marshal").write_bytes(b"listing")
    cache = Cache(tmp_path, "k")
    cache.put("a.py", *_entry())
    cache.save()
    assert sorted(p.name for p in base.iterdir()) == [
        ".gitignore",
        "k",
        "listing.marshal",
        "pyproject.marshal",
    ]


def test_summaries_are_a_file_of_their_own_that_a_warm_run_never_reads(tmp_path, monkeypatch):
    """A cross-file run leaves per-file summaries beside the entries, in a second file per
    shard; a warm whole-tree run answers from the entries and never loads a summary."""
    write_tree(
        tmp_path,
        {
            "pyproject.toml": (
                "[tool.atom-contracts]\n"
                "[[tool.atom-contracts.contracts]]\n"
                'id = "decode-no-sync"\nkind = "reachable-calls"\nentries = ["*.capture_*"]\n'
                'forbidden = { "*.item" = "a host sync" }\n'
            ),
            "pkg/__init__.py": "",
            "pkg/helpers.py": "def width(x):\n    return x.max()\n",
            "pkg/model.py": (
                "from pkg.helpers import width\n\n\ndef capture_step(x):\n    return width(x)\n"
            ),
        },
    )
    past = time.time() - 60
    for folder, _, files in os.walk(tmp_path):
        for name in files:
            os.utime(os.path.join(folder, name), (past, past))
    api.check([], cwd=tmp_path, jobs=1)
    folder = next(p for p in (tmp_path / CACHE_DIR).iterdir() if p.is_dir())
    assert list(folder.glob("*.summaries.marshal")), "no summary was kept"
    read = []
    real = cache_module._load_marshal

    def recording(path):
        read.append(path.name)
        return real(path)

    monkeypatch.setattr(cache_module, "_load_marshal", recording)
    assert api.check([], cwd=tmp_path, jobs=1).findings == []
    assert read, "the warm run read no shard at all"
    assert not [name for name in read if name.endswith(".summaries.marshal")]
