"""Lay a rule example out as a project on disk and run the real linter on it.

Shared by the rule-example test and the linter tests: an example is checked
exactly as a user's file would be -- discovery of the one file, the kind's
``from_table`` validation, suppressions, fixes -- so a rule cannot pass its
own examples through a path users never take.
"""

from __future__ import annotations

from pathlib import Path

from checkers import api
from checkers.rules import kind_class
from contracts.config import Config, parse_table
from contracts.contract import Contract, Example

from ..scaffold import write_tree


def example_config(kind: type[Contract], ex: Example, root: Path) -> Config:
    table = {"id": f"{kind.KIND}-example", "kind": kind.KIND, **ex.params}
    return parse_table({"contracts": [table]}, root=root, registry=kind_class)


def run_example(
    kind: type[Contract], ex: Example, root: Path, *, fix: bool = False, unsafe: bool = False
):
    write_tree(root, {**ex.files, ex.path: ex.source})
    config = example_config(kind, ex, root)
    return api.check(
        [root / ex.path], config=config, use_cache=False, jobs=1, fix=fix, unsafe_fixes=unsafe
    )
