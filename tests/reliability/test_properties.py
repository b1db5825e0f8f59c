"""The checkers never raise, and fixes keep every byte they do not mean to change.

Generated programs (hypothesmith, from Python's grammar and from libcst's
node types) go through every kind: no AC002, ever. Generated files with
fixable asserts and imports -- in every line ending and encoding users
have, with comments inside the statements and tab indentation -- go
through ``--fix --unsafe-fixes``: the bytes compile, a second fix changes
nothing, the unfixable findings are the same, and every line no fix
touched is still there byte for byte. The 10,000-program run is
``bench/sweep.py --programs``; here the suite's hypothesis profile keeps it short.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers import api
from checkers.linter import Linter

from ..scaffold import CONTRACTS, lay_out, pyproject

# Generated programs say `1 is 1` and `1()`: valid Python that compile() warns about.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")


@pytest.fixture(scope="module")
def linter(tmp_path_factory) -> Linter:
    root = tmp_path_factory.mktemp("every-kind")
    lay_out(root, *CONTRACTS, files={"pkg/__init__.py": "", "pkg/leaf/__init__.py": ""})
    config = api.load_config(root, use_cache=False)
    return Linter(config, api.selection_for(config))


PATHS = ("pkg/mod.py", "pkg/leaf/member.py", "tests/test_mod.py")
SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _never_fails(linter: Linter, text: str) -> None:
    for path in PATHS:
        for variant in (text, text.replace("\n", "\r\n"), text.replace("\n", "\r")):
            failed = [f for f in linter.check_text(path, variant) if f.code == "AC002"]
            assert not failed, failed[0].message


@SETTINGS
@given(hypothesmith.from_grammar())
def test_no_program_from_the_grammar_makes_a_checker_fail(linter, text):
    _never_fails(linter, text)


@SETTINGS
@given(hypothesmith.from_node())
def test_no_program_from_libcst_nodes_makes_a_checker_fail(linter, text):
    _never_fails(linter, text)


# -- fixes -------------------------------------------------------------------

CONDITIONS = ("x > 0", "y is not None", "isinstance(x, int)", "x in (1, 2)", "len(y) == 3")
ALPHABETS = {
    "utf-8": "abc é”€ ",
    "utf-8-sig": "abc é”€ ",
    "latin-1": "abc éü ",
    "cp1252": "abc é”€ ",
    "ascii": "abc ",
}


@st.composite
def fixable_file(draw):
    """(bytes, encoding, newline, the lines no fix may touch)."""
    encoding = draw(st.sampled_from(sorted(ALPHABETS)))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    words = st.text(alphabet=ALPHABETS[encoding], min_size=1, max_size=8)
    indent = draw(st.sampled_from(["    ", "\t", "  "]))
    lines: list[str] = []
    kept: list[str] = []

    def plain(line: str) -> None:
        lines.append(line)
        kept.append(line)

    if encoding not in ("utf-8", "utf-8-sig"):
        plain(f"# -*- coding: {encoding} -*-")
    plain(f"# {draw(words)}")
    if draw(st.booleans()):
        lines += [
            "from vllm.triton_utils import (",
            f"    triton,  # {draw(words)}",
            ")",
        ]
    plain("def f(x, y):")
    for _ in range(draw(st.integers(1, 5))):
        cond = draw(st.sampled_from(CONDITIONS))
        shape = draw(st.integers(0, 5))
        if shape == 0:
            lines.append(f"{indent}assert {cond}")
        elif shape == 1:
            lines.append(f"{indent}assert {cond}, {draw(words)!r}")
        elif shape == 2:
            lines += [
                f"{indent}assert (",
                f"{indent}    {cond}  # {draw(words)}",
                f"{indent}), 'm'",
            ]
        elif shape == 3:
            lines += [
                f"{indent}assert {cond}, (",
                f"{indent}    {draw(words)!r}  # {draw(words)}",
                f"{indent})",
            ]
        elif shape == 4:
            plain(f"{indent}z = StateField  # {draw(words)}")
        else:
            plain("\x0c" + indent + "w = 1")
    plain(f"{indent}return x")
    text = newline.join(lines) + newline
    data = text.encode(encoding)
    line_codec = "utf-8" if encoding == "utf-8-sig" else encoding  # the BOM starts the file only
    return data, encoding, newline, [(line + newline).encode(line_codec) for line in kept]


# The kinds the generated file exercises (a contract that covers no file is a
# configuration error, so the leaf and test-only kinds stay out of it).
FIX_KINDS = pyproject("no-input-asserts", "retired", "plain-triton-imports")


def _unfixable(result) -> list[tuple[str, str]]:
    return sorted((f.code, f.message) for f in result.findings if f.fix is None)


@SETTINGS
@given(fixable_file())
def test_a_fix_compiles_is_stable_and_touches_nothing_else(case):
    data, encoding, newline, kept = case
    compile(data, "m.py", "exec")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "pyproject.toml").write_text(FIX_KINDS)
        path = root / "m.py"
        path.write_bytes(data)
        before = api.check([path], cwd=root, use_cache=False, jobs=1)
        fixed = api.check([path], cwd=root, use_cache=False, jobs=1, fix=True, unsafe_fixes=True)
        assert not fixed.warnings
        once = path.read_bytes()
        compile(once, "m.py", "exec")
        again = api.check([path], cwd=root, use_cache=False, jobs=1, fix=True, unsafe_fixes=True)
        assert again.fixed == 0 and path.read_bytes() == once
        assert _unfixable(fixed) == _unfixable(before)
    assert not [f for f in fixed.findings if f.fix is not None]
    position = 0
    for line in kept:  # untouched lines: still there, in order, byte for byte
        found = once.find(line, position)
        assert found >= 0, (line, once)
        position = found + len(line)
    if encoding == "utf-8-sig":
        assert once.startswith(b"\xef\xbb\xbf")
    body = once.decode(encoding)
    breaks = (
        body.count("\r\n"),
        body.replace("\r\n", "").count("\r"),
        body.replace("\r\n", "").count("\n"),
    )
    assert sum(b for b, nl in zip(breaks, ("\r\n", "\r", "\n"), strict=True) if nl != newline) == 0
