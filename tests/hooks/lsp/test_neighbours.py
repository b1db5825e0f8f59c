"""A keystroke re-reads the buffer typed in, not the modules around it.

The cross-file kinds (published-keys, reachable-calls, units) summarise the
neighbour modules they read; a change to the buffer drops the index's program
built from them, because those summaries may depend on the buffer. The CLI
reads them back from its cache; the server writes no cache, so it keeps them
itself, under the bytes they were made from: each keystroke after the first
parses no neighbour again, and one changed on disk is parsed again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from checkers.analysis import program
from hooks.lsp.folders import Declaration

REPO = Path(__file__).resolve().parents[3]
AS = "atom/models/_typed_in_the_editor.py"  # never written: the buffer is checked


def counting_parses(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = program.Program._parse

    def count(data: bytes, rel: str):
        parsed.append(rel)
        return real(data, rel)

    monkeypatch.setattr(program.Program, "_parse", staticmethod(count))
    return parsed


def test_a_keystroke_parses_no_neighbour_again(monkeypatch, tmp_path):
    parsed = counting_parses(monkeypatch)
    declaration = Declaration(REPO / "pyproject.toml")
    path = str(REPO / AS)
    text = (REPO / "atom" / "backends" / "mha.py").read_text(encoding="utf-8")
    first = declaration.check(path, text, buffer=True)
    assert parsed, "the buffer's contracts read no neighbour: the test shows nothing"
    parsed.clear()
    typed = text.replace("\n\n\n", "\n\n\nx = 1\n", 1)  # a keystroke's worth, a new statement
    second = declaration.check(path, typed, buffer=True)
    assert parsed == []
    assert [f.code for f in second] == [f.code for f in first]


def producer_project(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose declared producer ``pkg.producer.stats`` builds ``{"hits": ...}``: its
    root and the producer's file."""
    root = tmp_path / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[tool.atom-contracts]\nsrc = ["."]\n\n[[tool.atom-contracts.contracts]]\n'
        'id = "published-keys"\nkind = "published-keys"\nproducers = ["pkg.producer.stats"]\n',
        encoding="utf-8",
    )
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    producer = root / "pkg" / "producer.py"
    producer.write_text('def stats():\n    return {"hits": 1}\n', encoding="utf-8")
    return root, producer


def test_a_neighbour_changed_on_disk_is_parsed_again(monkeypatch, tmp_path):
    root, producer = producer_project(tmp_path)
    reader = 'from pkg.producer import stats\n\n\ndef show():\n    return stats()["hits"]\n'
    parsed = counting_parses(monkeypatch)
    declaration = Declaration(root / "pyproject.toml")
    path = str(root / "pkg" / "reader.py")
    assert declaration.check(path, reader, buffer=True) == []
    assert "pkg/producer.py" in parsed
    parsed.clear()
    declaration.check(path, reader + "\n", buffer=True)
    assert parsed == []
    # The producer no longer builds the key the reader reads: read from disk again.
    producer.write_text('def stats():\n    return {"misses": 1}\n', encoding="utf-8")
    declaration.forget(str(producer))  # what the server does when the editor says it changed
    found = declaration.check(path, reader + "\n\n", buffer=True)
    assert "pkg/producer.py" in parsed
    assert [f.code for f in found] == ["AC811"]


def test_a_cached_run_asks_a_neighbours_bodies_of_the_cache(monkeypatch, tmp_path):
    """The bodies a cross-file kind read of another module go to the cache beside its outline:
    a second run over a changed reader answers them without parsing the producer."""
    from checkers.api import check

    root, producer = producer_project(tmp_path)
    # Old enough that its stat is trusted (a file younger than two seconds is re-digested).
    os.utime(producer, (1_000_000_000, 1_000_000_000))
    reader = root / "pkg" / "reader.py"
    reader.write_text(
        'from pkg.producer import stats\n\n\ndef show():\n    return stats()["misses"]\n'
    )
    parsed = counting_parses(monkeypatch)
    first = check([str(reader)], cwd=root, jobs=1)
    assert [f.code for f in first.findings] == ["AC811"]
    assert "pkg/producer.py" in parsed
    parsed.clear()
    reader.write_text(reader.read_text() + "\n")
    second = check([str(reader)], cwd=root, jobs=1)
    assert [f.code for f in second.findings] == ["AC811"]
    assert "pkg/producer.py" not in parsed


def counting_opens(monkeypatch) -> list[str]:
    """Every file opened from now on (``open``, and ``Path.read_bytes`` through ``io.open``)."""
    import builtins
    import io

    opened: list[str] = []
    real = io.open

    def count(file, *args, **kwargs):
        opened.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", count)
    monkeypatch.setattr(io, "open", count)
    return opened


def test_a_keystroke_reads_no_file_until_one_changes_on_disk(monkeypatch):
    """The scans of the project's files (which there are, which spell a needle) read the disk
    alone, which a keystroke leaves as it was; a file the editor says changed on disk makes
    the next keystroke scan again."""
    declaration = Declaration(REPO / "pyproject.toml")
    path = str(REPO / AS)
    text = (REPO / "atom" / "backends" / "mha.py").read_text(encoding="utf-8")
    declaration.check(path, text, buffer=True)
    first = declaration.check(path, text + "\n", buffer=True)  # the first keystroke
    opened = counting_opens(monkeypatch)
    second = declaration.check(path, text + "\nx = 1\n", buffer=True)
    assert opened == []
    assert [f.code for f in second] == [f.code for f in first]
    declaration.forget(str(REPO / "atom" / "backends" / "__init__.py"))
    third = declaration.check(path, text + "\nx = 12\n", buffer=True)
    assert len(opened) > 10, opened  # every file of the project scanned again
    assert [f.code for f in third] == [f.code for f in first]
