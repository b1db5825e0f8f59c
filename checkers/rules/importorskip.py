"""importorskip: a test module that reaches an optional dependency skips before it does.

``test_minimax_m3_index_topk`` imported ``index_topk``, which defines
``@triton.jit`` kernels -- "and a decorator runs at import". CI has no
triton, so the import was a collection error, "and one of those takes the
whole run down rather than the one file". The tests now
``importorskip("triton")``, which is a visible skip.

The import that fails is rarely the test's own: it is a first-party module
that imports one that imports triton. So this kind follows first-party
imports from the test, through every module's import-time imports, reading
the files and never importing them (the machine running the check is
typically the one without triton), and names the chain it found: ``tests/
test_x.py imports atom.kernels.store -> atom.kernels._jit -> triton``.

What counts as reaching: an import that runs when its module is imported.
One inside a function does not (it runs when called, which fails one test,
not the collection). One under ``if TYPE_CHECKING:`` never runs. One inside
``try: ... except ImportError:`` (or a handler that catches it) is the module
saying it copes without the dependency, so it does not reach either; the
failure ROCm/ATOM's KV-pool refactor met was exactly an unguarded one. Importing ``a.b.c`` runs
``a/__init__.py`` and ``a/b/__init__.py`` first, so those are followed too.
A third-party module is a dead end: its source is not the project's to read.

What counts as skipping first: a module-level ``pytest.importorskip("triton")``
(``triton = pytest.importorskip("triton")`` too, or of a submodule such as
``"triton.language"``, which imports triton) placed before the import, or a
module-level ``try: import triton / except ImportError: pytest.skip(...,
allow_module_level=True)``. Imports after it are fine: the skip has already
happened by the time they run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from checkers.analysis.imports import within
from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, Globs, String, compile_globs

RULES = (
    Rule(
        code="AC601",
        name="import-before-importorskip",
        what=(
            "Flags a module-level import, in a test module, that reaches the optional "
            "dependency at import time -- directly, or through first-party modules' "
            "import-time imports -- before a module-level `pytest.importorskip` of it. "
            "The message names the chain of modules."
        ),
        why=(
            "Without the dependency, the import fails while pytest collects the file. "
            "A collection error stops the whole run instead of skipping one file, and "
            "everything else in the suite goes unreported."
        ),
        fix_safety=(
            "This rule offers no fix: where the skip belongs, and whether the module "
            "should instead be split so its dependency-free half is tested everywhere, "
            "is a decision about the test."
        ),
    ),
)

_PARAMS = {"module": "triton", "tests": ["tests/**"]}
_TREE = {
    "atom/__init__.py": "",
    "atom/kernels/__init__.py": "",
    "atom/kernels/store.py": "from atom.kernels import _jit\n\nwrite_rows = _jit.write_rows\n",
    "atom/kernels/_jit.py": ("import triton\n\n\n@triton.jit\ndef write_rows(x_ptr):\n    pass\n"),
    "atom/kernels/lazy.py": "def load():\n    import triton\n\n    return triton\n",
    "atom/kernels/guarded.py": (
        "try:\n    import triton\nexcept ImportError:\n    triton = None\n"
    ),
    "atom/kernels/typed.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import triton\n"
    ),
    "atom/ops/__init__.py": "from .jit_ops import fused\n",
    "atom/ops/jit_ops.py": "import triton.language as tl\n\nfused = tl\n",
    "atom/ops/rope.py": "def rope():\n    pass\n",
}


class ImportOrSkip(Contract):
    KIND = "importorskip"
    RULES = RULES
    CACHEABLE = False  # the chain runs through other files

    module = String(doc="The optional dependency, e.g. `triton` (its submodules count as it).")
    tests = Globs(doc="Globs (relative to the project root) selecting the test modules to check.")

    VALID = (
        Example(
            source=(
                "import pytest\n"
                "\n"
                'triton = pytest.importorskip("triton")\n'
                "\n"
                "from atom.kernels.store import write_rows\n"
            ),
            params=_PARAMS,
            path="tests/test_store.py",
            files=_TREE,
            note="The skip comes first; what is imported after it never runs without triton.",
        ),
        Example(
            source=(
                "import pytest\n"
                "\n"
                "from atom.kernels import guarded, lazy, typed\n"
                "\n"
                "\n"
                "def test_store():\n"
                "    from atom.kernels.store import write_rows\n"
            ),
            params=_PARAMS,
            path="tests/test_lazy.py",
            files=_TREE,
            note=(
                "Modules that import triton in a function, in a guarded try, or under "
                "TYPE_CHECKING do not reach it; neither does an import inside a test."
            ),
        ),
        Example(
            source=(
                "import pytest\n"
                "\n"
                "try:\n"
                "    import triton\n"
                "except ImportError:\n"
                '    pytest.skip("needs triton", allow_module_level=True)\n'
                "\n"
                "from atom.kernels.store import write_rows\n"
            ),
            params=_PARAMS,
            path="tests/test_store.py",
            files=_TREE,
            note="The try / skip(allow_module_level=True) idiom skips first too.",
        ),
        Example(
            source="from atom.kernels.store import write_rows\n",
            params=_PARAMS,
            path="atom/runner.py",
            # A test beside it, so that `tests` matches a file of the project;
            # it skips first, so checking `atom/runner.py` alone, which
            # re-checks the tests importing it, finds nothing there either.
            files={
                **_TREE,
                "tests/test_runner.py": (
                    'import pytest\n\npytest.importorskip("triton")\n\nimport atom.runner\n'
                ),
            },
            note="Only test modules are checked: elsewhere an import error is the point.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "import pytest\n"
                "\n"
                "from atom.kernels.store import write_rows\n"
                "\n"
                'pytest.importorskip("triton")\n'
            ),
            params=_PARAMS,
            path="tests/test_store.py",
            files=_TREE,
            expect=(
                Expect(
                    "AC601",
                    3,
                    1,
                    "tests/test_store.py imports atom.kernels.store -> atom.kernels._jit -> triton",
                ),
            ),
            note="The skip is there, but after the import that needs it.",
        ),
        Example(
            source="import pytest\nimport triton\n",
            params=_PARAMS,
            path="tests/test_kernels.py",
            files=_TREE,
            expect=(Expect("AC601", 2, 1, "imports triton"),),
            note="A direct import counts.",
        ),
        Example(
            source="from atom.ops.rope import rope\n",
            params=_PARAMS,
            path="tests/ops/test_rope.py",
            files=_TREE,
            expect=(
                Expect(
                    "AC601",
                    1,
                    1,
                    "atom.ops.rope -> atom.ops -> atom.ops.jit_ops -> triton",
                ),
            ),
            note="`rope` itself needs no triton, but its package's `__init__` does.",
        ),
        Example(
            source=(
                "import pytest\n"
                "\n"
                'pytest.importorskip("aiter")\n'
                "from atom.kernels import store\n"
                "\n"
                'triton = pytest.importorskip("triton")\n'
            ),
            params=_PARAMS,
            path="tests/test_store.py",
            files=_TREE,
            expect=(Expect("AC601", 4, 1, "atom.kernels.store -> atom.kernels._jit"),),
            note="A skip for another module does not count; `from pkg import mod` loads `mod`.",
        ),
    )

    def __init__(self, id: str, **params) -> None:
        super().__init__(id, **params)
        self._tests_spec = None

    def validate(self, where: str) -> None:
        if not all(part.isidentifier() for part in self.module.split(".")):
            raise ConfigError(f"{where}: `module` {self.module!r} is not a dotted module name")

    def is_test(self, path: str) -> bool:
        if self._tests_spec is None:
            self._tests_spec = compile_globs(self.tests, where=f"contract `{self.id}`: `tests`")
        return self._tests_spec.match_file(path)

    def applies_to(self, path: str) -> bool:
        return super().applies_to(path) and self.is_test(path)

    def wants_project(self, project) -> bool:
        # A chain to `module` ends in a file that imports it, so spells it.
        return project.mentions(self.module.split(".")[0])

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """A test's import statements whose chain to the module runs through an edited file.

        Only an edited module that now reaches the module (or is it) can put a
        chain through itself; for those, each of the test's import-time
        imports that reaches one of them is a line the edit can fail.
        """
        if not self.is_test(path):
            return {}
        live = {
            name: rel
            for name, rel in edited.items()
            if within(name, self.module) or project.import_chain(name, self.module) is not None
        }
        if not live:
            return {}
        lines: dict[int, tuple[str, ...]] = {}
        for ref in project.module_imports(path):
            if not ref.runs_at_import:
                continue
            hits = tuple(
                rel
                for name, rel in live.items()
                if any(
                    within(t, name)
                    or (
                        not t.startswith(".")
                        and project.is_first_party(t)
                        and project.import_chain(t, name) is not None
                    )
                    for t in ref.targets
                )
            )
            if hits:
                lines[ref.lineno] = tuple(dict.fromkeys((*lines.get(ref.lineno, ()), *hits)))
        return lines

    def check(self, source, project) -> Iterator:
        tree = source.tree
        if tree is None or not self.is_test(source.path):
            return
        skip = self._skip_position(tree)
        flagged: set[int] = set()
        for ref in project.imports_of(source):
            if not ref.runs_at_import or id(ref.node) in flagged:
                continue
            if skip is not None and (ref.node.lineno, ref.node.col_offset) > skip:
                continue
            chain = self._chain(ref, project)
            if chain is None:
                continue
            flagged.add(id(ref.node))
            yield self.finding(
                source,
                ref.node,
                f"{source.path} imports {' -> '.join(chain)} at import time, before any "
                f'module-level `pytest.importorskip("{self.module}")`; without {self.module} '
                "that is a collection error, which stops the whole run, not just this file",
            )

    def _chain(self, ref, project) -> tuple[str, ...] | None:
        for target in ref.targets:
            if within(target, self.module):
                return (target,)
        for target in ref.targets:
            if not target.startswith(".") and project.is_first_party(target):
                chain = project.import_chain(target, self.module)
                if chain is not None:
                    return chain
        return None

    def _skip_position(self, tree: ast.Module) -> tuple[int, int] | None:
        """(line, col) of the first module-level statement that skips without the module."""
        for stmt in tree.body:
            if self._is_importorskip(stmt) or self._is_guarded_skip(stmt):
                return (stmt.lineno, stmt.col_offset)
        return None

    def _is_importorskip(self, stmt: ast.stmt) -> bool:
        value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        named = (isinstance(func, ast.Attribute) and func.attr == "importorskip") or (
            isinstance(func, ast.Name) and func.id == "importorskip"
        )
        if not named:
            return False
        args = [*value.args[:1], *(k.value for k in value.keywords if k.arg == "modname")]
        return any(
            isinstance(a, ast.Constant)
            and isinstance(a.value, str)
            and within(a.value, self.module)
            for a in args
        )

    def _is_guarded_skip(self, stmt: ast.stmt) -> bool:
        """``try: import module / except ImportError: pytest.skip(..., allow_module_level=True)``."""
        if not isinstance(stmt, ast.Try):
            return False
        imports = any(self._imports_module(s) for s in stmt.body)
        if not imports:
            return False
        for handler in stmt.handlers:
            for node in ast.walk(handler):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, (ast.Attribute, ast.Name))
                    and getattr(node.func, "attr", getattr(node.func, "id", "")) == "skip"
                    and any(
                        k.arg == "allow_module_level"
                        and isinstance(k.value, ast.Constant)
                        and k.value.value is True
                        for k in node.keywords
                    )
                ):
                    return True
        return False

    def _imports_module(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, ast.Import):
            return any(within(alias.name, self.module) for alias in stmt.names)
        if isinstance(stmt, ast.ImportFrom):
            return stmt.level == 0 and within(stmt.module or "", self.module)
        return False
