"""Every kind's VALID and INVALID examples, run through the real linter.

fixit's habit: a rule carries its own proof, and the suite runs all of it.
Each INVALID example must yield exactly its expected findings -- code, line
and column, nothing more -- each VALID one none, and an example with a
``fixed`` text must be fixed to exactly that, still parse, and be left alone
by a second fix pass; one without it must offer no fix at all.
"""

from __future__ import annotations

import ast

import pytest

from checkers import api
from checkers.rules import KIND_PATHS, kind_class

from .example_project import example_config, run_example


def _cases():
    for kind_name in KIND_PATHS:
        try:
            kind = kind_class(kind_name)
        except ModuleNotFoundError as exc:
            yield pytest.param(
                None,
                None,
                None,
                id=f"{kind_name}-missing",
                marks=pytest.mark.skip(
                    reason=f"kind {kind_name!r} is registered but its module is missing: {exc}"
                ),
            )
            continue
        for label, examples in (("valid", kind.VALID), ("invalid", kind.INVALID)):
            for index, ex in enumerate(examples):
                yield pytest.param(kind, label, ex, id=f"{kind_name}-{label}-{index}")


CASES = list(_cases())


def test_every_registered_kind_has_examples_both_ways():
    for kind_name in KIND_PATHS:
        try:
            kind = kind_class(kind_name)
        except ModuleNotFoundError:
            continue
        assert kind.VALID, f"{kind_name} has no VALID example"
        assert kind.INVALID, f"{kind_name} has no INVALID example"
        assert kind.RULES, f"{kind_name} declares no rule"
        codes = {e.code for ex in kind.INVALID for e in ex.expect}
        missing = set(kind.codes()) - codes
        assert not missing, f"{kind_name}: no INVALID example expects {sorted(missing)}"


@pytest.mark.parametrize(("kind", "label", "ex"), CASES)
def test_example(kind, label, ex, tmp_path):
    result = run_example(kind, ex, tmp_path)
    got = sorted((f.code, f.line, f.column) for f in result.findings)
    if label == "valid":
        assert got == [], f"VALID example flagged: {[f.message for f in result.findings]}"
        return
    assert ex.expect, "an INVALID example must say what it expects"
    want = sorted((e.code, e.line, e.column) for e in ex.expect)
    assert got == want, "\n".join(
        f"{f.code} {f.line}:{f.column} {f.message}" for f in result.findings
    )
    for expect in ex.expect:
        if expect.message is None:
            continue
        messages = [
            f.message
            for f in result.findings
            if (f.code, f.line, f.column) == (expect.code, expect.line, expect.column)
        ]
        assert any(expect.message in m for m in messages), (expect.message, messages)
    for f in result.findings:
        assert f.path == ex.path
        assert (f.line, f.column) <= (f.end_line, f.end_column)
        assert f.span_lines[0] <= f.line <= f.span_lines[1], f
    if ex.fixed is None:
        # An example that declares no fixed text promises no fix: a fix offered
        # here would be one no example proves (test_fixed_example_round_trips
        # proves the ones that are declared).
        offered = [f"{f.code} {f.line}:{f.column}" for f in result.findings if f.fix]
        assert offered == [], f"fixes offered by an example with no `fixed` text: {offered}"


FIXED = [c for c in CASES if c.values[1] == "invalid" and c.values[2].fixed is not None] or [
    pytest.param(None, None, None, marks=pytest.mark.skip(reason="no example declares `fixed`"))
]


@pytest.mark.parametrize(("kind", "label", "ex"), FIXED)
def test_fixed_example_round_trips(kind, label, ex, tmp_path):
    target = tmp_path / ex.path
    if ex.unsafe:
        run_example(kind, ex, tmp_path, fix=True, unsafe=False)
        assert target.read_text() != ex.fixed, "an unsafe fix applied without --unsafe-fixes"
    result = run_example(kind, ex, tmp_path, fix=True, unsafe=ex.unsafe)
    assert target.read_text() == ex.fixed
    assert result.fixed >= 1
    ast.parse(ex.fixed)
    # A second pass over the fixed file (not a fresh copy of the example) changes nothing.
    second = api.check(
        [target],
        config=example_config(kind, ex, tmp_path),
        use_cache=False,
        jobs=1,
        fix=True,
        unsafe_fixes=ex.unsafe,
    )
    assert second.fixed == 0
    assert target.read_text() == ex.fixed
