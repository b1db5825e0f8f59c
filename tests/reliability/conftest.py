"""A project with one contract of each kind whose fixes rewrite statements."""

from __future__ import annotations

from pathlib import Path

import pytest

PYPROJECT = """\
[tool.atom-contracts]
src = ["."]

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"

[[tool.atom-contracts.contracts]]
id = "plain-triton-imports"
kind = "banned-import"
modules = { "vllm.triton_utils" = "import triton directly" }
"""

# One fixable assert, as bytes: callers pick the line break and the encoding.
ASSERT_LINES = ["def f(x):", "    assert x > 0", "    return x", ""]


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    monkeypatch.chdir(tmp_path)
    return tmp_path


# A contract of every kind, over the whole project (the property tests' declaration).
EVERY_KIND = """\
[tool.atom-contracts]
src = ["."]

[[tool.atom-contracts.contracts]]
id = "takes-blocks"
kind = "keyword-only"
functions = ["allocate"]
parameters = ["blocks"]

[[tool.atom-contracts.contracts]]
id = "leaf"
kind = "leaf-package"
package = "pkg.leaf"

[[tool.atom-contracts.contracts]]
id = "no-input-asserts"
kind = "input-assert"

[[tool.atom-contracts.contracts]]
id = "retired"
kind = "retired-name"
names = ["StateField"]

[[tool.atom-contracts.contracts]]
id = "plain-triton-imports"
kind = "banned-import"
modules = { "vllm.triton_utils" = "import triton directly" }

[[tool.atom-contracts.contracts]]
id = "skip-triton"
kind = "importorskip"
module = "triton"
tests = ["tests/**"]

[[tool.atom-contracts.contracts]]
id = "output-size"
kind = "required-keyword"
calls = ["torch.repeat_interleave"]
keyword = "output_size"
"""
