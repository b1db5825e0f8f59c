"""A file is parsed once a run, whether a cross-file question about it comes before its own
check or after it: the program keeps the last few trees, and the linter reads them."""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from checkers import api

from ..scaffold import write_tree

PYPROJECT = (
    "[tool.atom-contracts]\n"
    "[[tool.atom-contracts.contracts]]\n"
    'id = "decode-no-sync"\nkind = "reachable-calls"\nentries = ["*.prepare_*"]\n'
    'forbidden = { "*.item" = "a host sync" }\n'
)
# Each module holds an entry, so each is checked; the entry of the first in path order calls
# into the second, and the second's into the first: one question is asked before the module
# it is about is checked, the other after.
FILES = {
    "pkg/__init__.py": "",
    "pkg/a_rows.py": (
        "from pkg.z_plan import plan\n\n\ndef rows(ids):\n    return ids.item()\n\n\n"
        "def prepare_rows(ids):\n    return plan(ids)\n"
    ),
    "pkg/z_plan.py": (
        "from pkg.a_rows import rows\n\n\ndef plan(ids):\n    return ids.clone()\n\n\n"
        "def prepare_plan(ids):\n    return rows(ids)\n"
    ),
}


@pytest.fixture
def parsed(monkeypatch):
    seen: list[str] = []
    real = ast.parse

    def counting(text, filename="<unknown>", *args, **kwargs):
        seen.append(str(filename))
        return real(text, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


def test_each_module_is_parsed_once_though_the_other_asks_about_it(tmp_path, parsed):
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, **FILES})
    result = api.check([], cwd=tmp_path, jobs=1, use_cache=False)
    assert [(f.path, f.code) for f in result.findings] == [("pkg/z_plan.py", "AC821")]
    assert Counter(parsed) == {"pkg/a_rows.py": 1, "pkg/z_plan.py": 1}
