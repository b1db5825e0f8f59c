"""A project with one contract of each kind whose fixes rewrite statements."""

from __future__ import annotations

from pathlib import Path

import pytest

# One fixable assert, as bytes: callers pick the line break and the encoding.
ASSERT_LINES = ["def f(x):", "    assert x > 0", "    return x", ""]


@pytest.fixture
def project(make_project) -> Path:
    return make_project("no-input-asserts", "plain-triton-imports", chdir=True).root
