"""The node-alone predicates of checkers/analysis/shapes.py that input-assert's newer
principles rest on: a tensor split, a comprehension's element, a normalised tuple, a
per-step record, a record class."""

from __future__ import annotations

import ast

import pytest

from checkers.analysis.scopes import Element
from checkers.analysis.shapes import (
    is_record,
    is_step_record,
    reads_target,
    renormalises,
    splits_tensor,
)


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("qkv.split([q, kv, kv], dim=-1)", True),  # sizes listed
        ("x.split(2)", True),  # an int size
        ("x.split(sizes, dim=1)", True),  # a dim names a tensor split
        ("x.chunk(2)", True),
        ("x.tensor_split(idx)", True),
        ("line.split(',')", False),  # a string's fields
        ("line.split()", False),
        ("line.split(sep)", False),  # a name: a separator as likely as a size
        ("x.view(2, 3)", False),
        ("split(x)", False),
    ],
)
def test_a_tensor_split_is_told_from_a_strings(call, expected):
    assert splits_tensor(_expr(call)) is expected


@pytest.mark.parametrize(
    ("comp", "expected"),
    [
        ("[s[0] * s[1] for s in xs]", True),
        ("[d % 16 == 0 for d in xs]", True),
        ("[-d for d in xs]", True),
        ("[d == e for d in xs]", False),  # e is neither the variable nor a literal
        ("[1 == 2 for d in xs]", False),  # reads nothing of the variable
        ("[d * e for d in xs]", False),
        ("[f(d) for d in xs]", False),
    ],
)
def test_a_comprehensions_element_reads_its_variable(comp, expected):
    node = _expr(comp)
    assert reads_target(node.elt, node.generators[0].target) is expected


@pytest.mark.parametrize(
    ("statement", "name", "expected"),
    [
        ("q, k = [contiguous(t) for t in (q, k)]", "q", True),
        ("q, k = [contiguous(t) for t in (other, k)]", "q", False),  # q is not among them
        ("q, k = [contiguous(t) for t in (q, k) if t]", "q", False),  # filtered
        ("q, k = [f(t, u) for t, u in zip(q, k)]", "q", False),
        ("q, k = pair(q, k)", "q", False),  # a part of a call's result
        ("x = f(x)", "x", True),
        ("x = x.contiguous()", "x", True),
        ("x = f(y)", "x", False),
    ],
)
def test_a_name_renormalised_alone_or_with_others(statement, name, expected):
    stmt = ast.parse(statement).body[0]
    value = stmt.value
    if isinstance(stmt.targets[0], ast.Tuple):
        value = Element(value)
    assert renormalises(name, value) is expected


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        ("forward_batch", True),
        ("forward_context", True),
        ("attn_metadata", True),
        ("a_metadata", True),  # the shortest name that is one: a word and the suffix
        ("_metadata", False),
        ("metadata", False),  # a checkpoint's metadata, in torch
        ("meta: FlashMLAMetadata", True),
        ("meta: 'FlashMLAMetadata'", True),  # a string annotation
        ("meta: attention.DSV4AttnMetadata", True),
        ("meta: Metadata", False),
        ("batch: ForwardBatch", True),
        ("batch: Batch", False),
    ],
)
def test_a_per_step_record_is_named_or_annotated_as_one(param, expected):
    arg = ast.parse(f"def f({param}): pass").body[0].args.args[0]
    assert is_step_record(arg) is expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("@dataclass\nclass C:", True),
        ("@pydantic_dataclass\nclass C:", True),
        ("@pydantic_dataclass(config=Cfg)\nclass C:", True),  # the alias, called
        ("@dataclasses.dataclass(frozen=True)\nclass C:", True),
        ("class C(NamedTuple):", True),
        ("class C(Base):", False),
        ("@cache\nclass C:", False),
    ],
)
def test_a_record_class_under_an_alias_that_says_so(header, expected):
    klass = ast.parse(f"{header}\n    x: int\n").body[0]
    assert is_record(klass) is expected
