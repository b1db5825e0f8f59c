"""checkers.analysis indexes a function only when a question reaches it, and answers as if it had all.

Each case below is built so that an index which skipped the function holding
the answer gives a different verdict: a private helper's caller found only
through an unusual spelling of the call, a base class nested in a function,
a constructor's private helper. Every verdict is compared with the eager
index's (every function walked up front), over these cases, every
input-assert example, and this repository's own modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from checkers.analysis.origins import InputOrigins
from checkers.rules.input_assert import _DEFAULT_INPUTS, InputAssert
from checkers.source import SourceFile

REPO = Path(__file__).resolve().parents[2]
INPUTS = frozenset(_DEFAULT_INPUTS)


def verdicts(text: str, *, lazy: bool) -> list[tuple[int, str | None]]:
    """(line, why it is input or None) for every assert, as input-assert asks."""
    source = SourceFile("pkg/module.py", text)
    module = InputOrigins(source.tree, INPUTS, source if lazy else None)
    out = []
    for node in module.asserts:
        func = module.scope_at(node)
        origin = module.reads_input(node.test, func, node)
        out.append((node.lineno, origin.what if origin is not None else None))
    return out


HELPER_THROUGH_COMMENT = """\
def _check(rows):
    assert rows > 0

def bind(rows):
    return [_check  # the helper, its call split by a comment
            (rows)]
"""

HELPER_PARENTHESISED = """\
def _check(total):
    assert total > 0

def bind(items):
    total = pack_rows(items)
    return (_check)(total)
"""

HELPER_NFKC = """\
def _fill(rows):
    assert rows > 0

def bind():
    return _\ufb01ll(compute())
"""

BASE_IN_A_FUNCTION = """\
def make():
    class Base:
        def __init__(self, config):
            self.block = config.block
    return Base

class Base2(Base):
    pass

class Child(Base):
    def run(self):
        assert self.block % 64 == 0
"""

INIT_HELPER_ALSO_CALLED_LATER = """\
class Pool:
    def __init__(self, node):
        self._init_from(node)

    def _init_from(self, node):
        self.size = node.size

    def run(self):
        assert self.size > 0


def reset(pool, other):
    pool._init_from(other)
"""

CONSTRUCTOR_REBINDS = """\
class Pool:
    def __init__(self, n):
        n = compute()
        self.size = n

    def run(self):
        assert self.size > 0
"""


ENVS = """\
import vllm.envs as envs

def warm_up():
    assert envs.VLLM_USE_V1
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The caller passes its own parameter: input, found through the split call.
        (
            HELPER_THROUGH_COMMENT,
            [(2, "parameter `rows` of `_check`, which a caller passes input unchanged")],
        ),
        # The only caller passes what it computed: the helper restates it.
        (HELPER_PARENTHESISED, [(2, None)]),
        (HELPER_NFKC, [(2, None)]),
        (
            BASE_IN_A_FUNCTION,
            [(12, "`self.block`, copied in `__init__` from `config`, a configured input name")],
        ),
        # `_init_from` is also called outside construction: `size` is the class's own state.
        (INIT_HELPER_ALSO_CALLED_LATER, [(9, None)]),
        # The constructor's own binding, not its parameter, is what it copies.
        (CONSTRUCTOR_REBINDS, [(7, None)]),
        # The engine's module of environment variables, with the text at hand or without.
        (ENVS, [(4, "`envs`, the environment variables the engine reads")]),
    ],
)
def test_lazy_finds_what_the_whole_module_decides(text: str, expected) -> None:
    assert verdicts(text, lazy=True) == expected
    assert verdicts(text, lazy=False) == expected


def test_a_module_costs_the_functions_its_asserts_reach() -> None:
    text = (
        "def carve(sizes):\n"
        "    total = sum(sizes)\n"
        "    assert total >= 0\n"
        "\n"
        "def unrelated(a, b):\n"
        "    return [x * b for x in a]\n"
        "\n"
        "class Other:\n"
        "    def method(self, x):\n"
        "        return x.y(1)\n"
    )
    source = SourceFile("pkg/module.py", text)
    module = InputOrigins(source.tree, INPUTS, source)
    names = {getattr(n, "name", None) for n in module._deferred}
    assert names == {"carve", "unrelated", "method"}
    for node in module.asserts:
        module.reads_input(node.test, module.scope_at(node), node)
    assert {n.name for n in module._deferred} == {"unrelated", "method"}
    eager = InputOrigins(source.tree, INPUTS)
    assert not eager._deferred


def test_call_sites_come_in_the_order_of_one_whole_walk() -> None:
    text = "def _h(x):\n    assert x\ndef a():\n    _h(1)\ndef b():\n    _h(2)\n_h(3)\n"
    source = SourceFile("pkg/module.py", text)
    for module in (InputOrigins(source.tree, INPUTS, source), InputOrigins(source.tree, INPUTS)):
        assert [call.args[0].value for call, _ in module.calls_of("_h")] == [1, 2, 3]


def _examples() -> list[str]:
    return [e.source for e in (*InputAssert.VALID, *InputAssert.INVALID)]


@pytest.mark.parametrize("text", _examples())
def test_every_example_answers_the_same_lazily(text: str) -> None:
    assert verdicts(text, lazy=True) == verdicts(text, lazy=False)


def test_this_repository_answers_the_same_lazily() -> None:
    compared = 0
    for path in sorted(REPO.glob("[a-z]*/**/*.py")):
        text = path.read_text(encoding="utf-8")
        if "assert" not in text:
            continue
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        assert verdicts(text, lazy=True) == verdicts(text, lazy=False), path
        compared += 1
    assert compared > 50
