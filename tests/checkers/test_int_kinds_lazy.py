"""required-keyword's int inference, indexed per function on demand, answers as the eager one.

``IntInference`` defers each function a top-level statement defines until a
question reaches a node in its lines. Every verdict must be the one the whole-module
index gives: a function indexed too late (or never) would leave a name's
bindings unread and flip INT to TENSOR, an import missed inside a function
would flip UNKNOWN to TENSOR.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checkers.analysis.int_kinds import IntInference
from checkers.rules.required_keyword import RequiredKeyword

REPO = Path(__file__).resolve().parents[2]

# Each verdict here needs a deferred function's index: its bindings, an import
# inside another function, a method's assignments of `self.<attr>`, a nested
# function reading its parent's local.
CASES = """
import torch

def helper():
    import numpy as np
    return np

class Pool:
    def __init__(self, n: int, lens):
        self.blocks = n * 2
        self.lens = torch.tensor(lens)

    def grow(self, x):
        return x.repeat_interleave(self.blocks), x.repeat_interleave(self.lens)

def f(x, counts):
    k = len(counts)
    def inner(y):
        return y.repeat_interleave(k)
    return torch.repeat_interleave(x, counts.sum()), inner(x), x.repeat_interleave(np)

@decorate(lambda q: q)
def g(
    x,
    n=3,
):
    m = n
    return x.repeat_interleave(m)

def one(x, k: int): return x.repeat_interleave(k)
"""


def _verdicts(tree: ast.Module, inference: IntInference) -> list[tuple[int, int, str]]:
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        scope = inference.scope_of(node)
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            out.append((arg.lineno, arg.col_offset, inference.verdict(arg, scope)))
    return out


def _same(text: str) -> int:
    # Two parses: the per-statement memo would hand the eager index the lazy
    # one's pieces (the same statement objects), half indexed by its questions.
    tree, other = ast.parse(text), ast.parse(text)
    lazy = _verdicts(tree, IntInference(tree))
    eager = _verdicts(other, IntInference(other, lazy=False))
    assert lazy == eager
    return len(lazy)


def test_verdicts_that_need_a_deferred_function_are_the_eager_ones():
    tree = ast.parse(CASES)
    verdicts: dict[int, list[str]] = {}
    for line, _, verdict in sorted(_verdicts(tree, IntInference(tree))):
        verdicts.setdefault(line, []).append(verdict)
    assert verdicts[14] == ["int", "host"]  # `self.blocks`, `self.lens`: __init__'s assignments
    assert verdicts[19] == ["int"]  # `k`, the parent function's `len(...)`
    assert verdicts[20][-1] == "unknown"  # `np`, imported inside `helper`
    assert verdicts[28] == ["int"]  # `m = n`, `n=3`
    assert verdicts[30] == ["int"]  # a one-line function: the call sits on its `def` line
    assert _same(CASES) > 8


def test_an_import_inside_a_function_is_known_before_that_function_is_indexed():
    tree = ast.parse("def f(x):\n    return x.repeat_interleave(np)\n\ndef g():\n    import np\n")
    inference = IntInference(tree)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call))
    assert inference.verdict(call.args[0], inference.scope_of(call)) == "unknown"


def test_every_example_of_the_rule():
    for example in (*RequiredKeyword.VALID, *RequiredKeyword.INVALID):
        _same(example.source)


@pytest.mark.parametrize("folder", ["checkers", "atom", "tests/checkers"])
def test_this_repository_s_modules(folder):
    for path in sorted((REPO / folder).rglob("*.py")):
        _same(path.read_text(encoding="utf-8"))


def test_torch_s_files_that_call_repeat_interleave():
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    checked = 0
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "repeat_interleave" in text:
            checked += _same(text) > 0
            if checked == 25:  # enough real engine code, and the suite stays quick
                break
    assert checked == 25
