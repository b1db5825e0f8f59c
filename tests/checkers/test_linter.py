"""The linter on small projects: pre-filter, AC001, cache, parallel, fixes."""

from __future__ import annotations

from checkers import api

from ..scaffold import write_tree
from .fake_kinds import Counted, Rename, config_for

RENAME = {"id": "no-old", "kind": "rename", "old": "old_name", "new": "new_name"}


def run(root, contracts=(RENAME,), paths=(), **kw):
    kw.setdefault("use_cache", False)
    kw.setdefault("jobs", 1)
    config = config_for(root, list(contracts), **kw.pop("table", {}))
    return api.check([root / p for p in paths], config=config, **kw)


def codes(result):
    return [(f.path, f.code, f.line, f.column) for f in result.findings]


def test_a_file_that_fails_every_needle_is_not_parsed(tmp_path, record_parses):
    write_tree(tmp_path, {"a.py": "x = 1\n", "b.py": "y = old_name\n"})
    parsed = record_parses()
    result = run(tmp_path)
    assert codes(result) == [("b.py", "AC991", 1, 5)]
    assert parsed == ["b.py"]
    assert result.files_checked == 2


def test_an_unparsable_file_a_contract_wants_is_ac001_not_a_crash(tmp_path):
    write_tree(
        tmp_path,
        {"bad.py": "def f(:\n    old_name\n", "ok.py": "old_name\n", "other.py": "def g(:\n"},
    )
    result = run(tmp_path)
    # other.py fails to parse too, but no contract wants it past the pre-filter.
    assert codes(result) == [("bad.py", "AC001", 1, 7), ("ok.py", "AC991", 1, 1)]
    assert "cannot be parsed" in result.findings[0].message


def test_one_ac001_per_file_when_cached_and_recomputed_contracts_both_want_it(tmp_path):
    write_tree(tmp_path, {"bad.py": "def f(:\n    old_name, marker\n"})
    result = run(tmp_path, (RENAME, {"id": "m", "kind": "counted"}), use_cache=True)
    assert codes(result) == [("bad.py", "AC001", 1, 7)]


def test_an_undecodable_file_is_ac001(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"x = '\xff'\n")
    result = run(tmp_path)
    assert [f.code for f in result.findings] == ["AC001"]
    assert "cannot be decoded" in result.findings[0].message
    # select/ignore cannot turn AC001 off; per-file-ignores, naming the file, can.
    assert [f.code for f in run(tmp_path, ignore="AC0").findings] == ["AC001"]
    assert run(tmp_path, table={"per-file-ignores": {"latin.py": ["AC001"]}}).findings == []


def test_a_coding_cookie_is_honoured(tmp_path):
    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\nold_name = '\xff'\n")
    assert codes(run(tmp_path)) == [("latin.py", "AC991", 2, 1)]


def test_non_ascii_columns_are_characters(tmp_path):
    write_tree(tmp_path, {"u.py": "s = 'ééé'; old_name\n"})
    (f,) = run(tmp_path).findings
    # "s = " 4 + "'ééé'" 5 + "; " 2 = 11 characters before the name (17 bytes),
    # so it starts at column 12 and ends, 8 characters later, at 20 (exclusive).
    assert (f.column, f.end_column) == (12, 20)


def test_select_ignore_and_per_file_ignores(tmp_path):
    write_tree(tmp_path, {"a.py": "old_name\nmarker\n", "tests/t.py": "old_name\nmarker\n"})
    contracts = (RENAME, {"id": "m", "kind": "counted"})
    both = run(tmp_path, contracts)
    assert [f.code for f in both.findings] == ["AC991", "AC992", "AC991", "AC992"]
    only = run(tmp_path, contracts, select="AC991")
    assert [f.code for f in only.findings] == ["AC991", "AC991"]
    ignored = run(tmp_path, contracts, ignore=["AC99"], select=["AC992"])
    assert [f.code for f in ignored.findings] == ["AC992", "AC992"]  # the longer prefix wins
    pfi = run(tmp_path, contracts, table={"per-file-ignores": {"tests/**": ["AC991"]}})
    assert codes(pfi) == [
        ("a.py", "AC991", 1, 1),
        ("a.py", "AC992", 2, 1),
        ("tests/t.py", "AC992", 2, 1),
    ]


def test_cache_gives_the_same_findings_and_skips_cacheable_work(tmp_path):
    files = {
        f"m{i}.py": ("old_name\n" if i % 3 else "x = 1\n") + ("marker\n" if i % 2 else "")
        for i in range(30)
    }
    write_tree(tmp_path, files)
    contracts = (RENAME, {"id": "m", "kind": "counted"})
    cold_reference = run(tmp_path, contracts, use_cache=False)
    Rename.calls = Counted.calls = 0
    first = run(tmp_path, contracts, use_cache=True)
    cold_calls = (Rename.calls, Counted.calls)
    Rename.calls = Counted.calls = 0
    warm = run(tmp_path, contracts, use_cache=True)
    assert codes(first) == codes(warm) == codes(cold_reference)
    assert cold_calls == (20, 15)  # i % 3 != 0 for 20 of 30; i odd for 15
    assert (Rename.calls, Counted.calls) == (0, 15)  # the non-cacheable kind always reruns
    # A changed file is re-checked; the others are served from the cache.
    (tmp_path / "m0.py").write_text("old_name\nold_name\n")
    Rename.calls = 0
    changed = run(tmp_path, contracts, use_cache=True)
    assert Rename.calls == 1
    assert [(f.line) for f in changed.findings if f.path == "m0.py"] == [1, 2]


def test_a_changed_declaration_misses_the_cache(tmp_path):
    write_tree(tmp_path, {"a.py": "old_name\nother\n"})
    run(tmp_path, use_cache=True)
    renamed = run(tmp_path, ({**RENAME, "old": "other"},), use_cache=True)
    assert codes(renamed) == [("a.py", "AC991", 2, 1)]


def test_parallel_and_serial_agree(tmp_path):
    files = {f"pkg{i % 7}/m{i}.py": f"v{i} = old_name + {i}\n" for i in range(450)}
    files["pkg0/bad.py"] = "def f(:\n old_name\n"
    write_tree(tmp_path, files)
    serial = run(tmp_path, jobs=1)
    parallel = run(tmp_path, jobs=4)
    assert codes(serial) == codes(parallel)
    assert len(serial.findings) == 451
    assert serial.files_checked == parallel.files_checked == 451


def test_fix_applies_safe_fixes_atomically_and_round_trips(tmp_path):
    write_tree(tmp_path, {"a.py": "x = old_name(old_name)\ny = old_name\n"})
    (tmp_path / "a.py").chmod(0o640)
    result = run(tmp_path, fix=True)
    assert (tmp_path / "a.py").read_text() == "x = new_name(new_name)\ny = new_name\n"
    assert result.fixed == 3
    assert result.findings == []
    assert (tmp_path / "a.py").stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["a.py"]  # no temporary file left behind
    again = run(tmp_path, fix=True)
    assert again.fixed == 0


def test_unsafe_fixes_need_the_flag(tmp_path):
    write_tree(tmp_path, {"a.py": "x = old_name\n"})
    unsafe = ({**RENAME, "unsafe": True},)
    kept = run(tmp_path, unsafe, fix=True)
    assert kept.fixed == 0 and len(kept.findings) == 1
    assert (tmp_path / "a.py").read_text() == "x = old_name\n"
    done = run(tmp_path, unsafe, fix=True, unsafe_fixes=True)
    assert done.fixed == 1
    assert (tmp_path / "a.py").read_text() == "x = new_name\n"


def test_a_fix_that_would_break_the_file_is_not_written(tmp_path):
    write_tree(tmp_path, {"a.py": "x = old_name\n"})
    breaking = ({**RENAME, "new": "new name"},)
    result = run(tmp_path, breaking, fix=True)
    assert result.fixed == 0
    assert (tmp_path / "a.py").read_text() == "x = old_name\n"
    assert len(result.findings) == 1


def test_a_crashing_contract_is_an_ac002_on_that_file_naming_it(tmp_path, monkeypatch):
    write_tree(tmp_path, {"a.py": "old_name\n"})

    def boom(self, source, project):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Rename, "check", boom)
    (finding,) = run(tmp_path).findings
    assert finding.code == "AC002" and finding.path == "a.py"
    assert "`no-old`" in finding.message and "RuntimeError: kaboom" in finding.message


def _age(root, seconds=60):
    """Backdate every file: a file modified within the racy window never vouches for a cache hit."""
    import os
    import time

    past = time.time() - seconds
    for p in root.rglob("*.py"):
        os.utime(p, (past, past))


def test_cross_file_findings_are_reused_only_while_the_whole_tree_is_unchanged(tmp_path):
    files = {f"m{i}.py": "marker\n" if i % 2 else "x = 1\n" for i in range(10)}
    write_tree(tmp_path, files)
    _age(tmp_path)
    counted = ({"id": "m", "kind": "counted"},)

    def calls(**kw):
        Counted.calls = 0
        result = run(tmp_path, counted, use_cache=True, **kw)
        return Counted.calls, [(f.path, f.line) for f in result.findings]

    first = calls()
    assert first == (5, [(f"m{i}.py", 1) for i in range(1, 10, 2)])
    assert calls() == (0, first[1])  # nothing anywhere changed: the stored findings hold
    # One file changes: its neighbours' cross-file findings may depend on it, so all rerun.
    (tmp_path / "m2.py").write_text("marker\n")
    _age(tmp_path)
    changed = calls()
    assert changed[0] == 6
    assert ("m2.py", 1) in changed[1]
    assert calls() == (0, changed[1])
    # A run over one file recomputes its file, and stores nothing when that is what was
    # stored: the tree is still the one the whole run's stamp describes, so the stored
    # findings still hold (tests/checkers/test_cache_shards.py: one it changes does not).
    assert calls(paths=["m1.py"])[0] == 1
    assert calls()[0] == 0
    # Any edit changes the stamp: the next whole run recomputes every file.
    (tmp_path / "m4.py").write_text("marker\n")
    _age(tmp_path)
    assert calls(paths=["m4.py"])[0] == 1
    assert calls()[0] == 7
