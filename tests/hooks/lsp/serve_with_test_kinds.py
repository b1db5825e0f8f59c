"""Run ``atom-contracts server`` with two kinds that exist only for its tests.

The real kinds offer no safe fix and none of them crashes, so the server's
"fix all safe" and "a rule crashed" paths need kinds of their own: ``rename``
flags a name and offers a safe fix to another; ``explode`` raises on any file
that mentions ``boom``. They are registered the way ``checkers.rules`` finds
kinds (a module under ``checkers.rules``) before the server starts, in the
server's own process: this file is the command the tests start.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import checkers.rules
from contracts.contract import Contract, Rule

# The linter's tests' own `rename`, one copy: this file runs as a script, not in the suite.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "checkers"))
from fake_kinds import Rename


class Explode(Contract):
    KIND = "explode"
    RULES = (Rule(code="AC993", name="test-explode", what="crashes", why="tests"),)

    def needles(self):
        return ("boom",)

    def check(self, source, project):
        raise ZeroDivisionError("the rule itself is broken")
        yield  # pragma: no cover - a generator, as every kind's check is


module = types.ModuleType("checkers.rules.server_test_kinds")
module.Rename = Rename
module.Explode = Explode
sys.modules[module.__name__] = module
checkers.rules.KIND_PATHS["rename"] = "server_test_kinds:Rename"
checkers.rules.KIND_PATHS["explode"] = "server_test_kinds:Explode"

if __name__ == "__main__":
    from hooks.lsp import main

    sys.exit(main(sys.argv[1:]))
