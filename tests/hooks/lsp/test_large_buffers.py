"""A huge buffer in the language server: checked like any other, nothing of its tree kept."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from checkers.analysis import memo
from hooks.lsp.folders import Declaration

ASSERTING = (
    "def f{i}(x, counts):\n    assert x > {i}\n    return torch.repeat_interleave(x, counts)\n\n"
)


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "a"\nkind = "input-assert"\n'
        "[[tool.atom-contracts.contracts]]\n"
        'id = "r"\nkind = "required-keyword"\n'
        'calls = ["torch.repeat_interleave"]\nkeyword = "output_size"\n'
    )
    return tmp_path / "pyproject.toml"


def _module(functions: int) -> str:
    return "import torch\n\n" + "".join(ASSERTING.format(i=i) for i in range(functions))


def test_a_buffer_past_the_limit_keeps_no_tree_and_finds_what_a_small_one_finds(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(memo, "KEEP_LINES", 200)
    declaration = Declaration(_project(tmp_path))
    path = str(tmp_path / "big.py")
    small = declaration.check(path, _module(10), buffer=True)  # 42 lines: kept, spliced next
    assert declaration._buffers
    big_text = _module(100)  # 402 lines
    big = declaration.check(path, big_text, buffer=True)
    assert not declaration._buffers  # the huge buffer's tree is not kept for a splice
    assert [f.code for f in small] == ["AC301", "AC701"] * 10
    assert [f.code for f in big] == ["AC301", "AC701"] * 100
    # ... and the analyses' memos keep nothing of it either: no statement of its tree lives on.
    for kept in memo._MEMOS:
        assert not kept._kept
    # The same findings the second time, with nothing kept from the first.
    assert declaration.check(path, big_text, buffer=True) == big


def test_closing_a_document_lets_every_memo_go_of_its_tree(tmp_path):
    declaration = Declaration(_project(tmp_path))
    path = str(tmp_path / "m.py")
    declaration.check(path, _module(5), buffer=True)
    source = declaration._buffers[str(tmp_path / "m.py")]
    statement = weakref.ref(source.tree.body[-1])
    assert any(kept._kept for kept in memo._MEMOS)  # a small buffer's statements are kept
    del source
    declaration.forget(path)
    gc.collect()
    assert all(not kept._kept for kept in memo._MEMOS)
    assert statement() is None  # nothing holds the closed buffer's tree any more
