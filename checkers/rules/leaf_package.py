"""leaf-package: a package whose members import nothing but the stdlib, what is allowed, and each other.

``atom/pool_layout/`` holds the declarations every pool is sized and carved
from (``EntryField``, the arenas, ``PoolRowsMixin``, ``KvGeometry``). CI has
no aiter and no GPU, and the layout is exactly what it must be able to test,
so ROCm/ATOM's KV-pool refactor (pull request #2147) made the rule that "a member is reachable without aiter or the rest
of atom so CI can import it". The guard used to read every relative import
as "leaves the tree" (``imported_roots`` scored it as reaching ``atom``),
which was the cheaper check and "was already charging for itself, in
``entry_arena``'s note that a field list and an arena over it could not be
split apart". The refactor then relaxed it deliberately: members may import a
sibling member, because a sibling is held to the same rule by the same check
-- nothing new is reached.

That exemption is only sound while a sibling import names a file the rule
actually covers, which is what ``test_a_sibling_import_names_a_member`` kept;
here it is AC202, checked against the file system, never by importing. A
relative import that climbs out of the package (``from .. import x``) is not
a sibling: it is AC201 like any other import of the rest of the engine.

Importing ``atom.pool_layout`` first runs ``atom/__init__.py``, so an
ancestor ``__init__`` that imports the runner defeats the leaf as surely as
a member that does. Those imports are flagged in the ancestor's own file,
where the fix has to be made. Only imports that run are counted there: one
inside a function runs when called, and ``if TYPE_CHECKING:`` never runs.
Members are held tighter: an import inside a member's function is flagged
too, because the leaf's promise is that *using* it needs nothing else, not
only importing it. A ``try: import x / except ImportError`` in a member is
still flagged: the package imports nothing, rather than importing things
that may be missing.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Sequence

from checkers.analysis.imports import ImportRef, within
from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, String, StringList

RULES = (
    Rule(
        code="AC201",
        name="leaf-package-import",
        what=(
            "Flags an import, in a member of the leaf package, of anything but the "
            "standard library, the `allow`ed modules and the package's own members -- at "
            "module level, inside a function, or through `importlib.import_module` with a "
            "literal name. Also flags an import in an ancestor package's `__init__.py` "
            "that runs when the leaf is imported and reaches beyond those."
        ),
        why=(
            "The leaf is what CI must import without the accelerator libraries or the "
            "rest of the engine. One import of the runner, in a member or in an "
            "`__init__` above it, brings all of it along, and the tests that pin the "
            "layout become collection errors on every machine without aiter."
        ),
        fix_safety=(
            "This rule offers no fix: the import either leaves the leaf together with the "
            "code that needs it, or the dependency is declared in `allow`, and which one "
            "is a design decision."
        ),
    ),
    Rule(
        code="AC202",
        name="leaf-package-missing-member",
        what=(
            "Flags an import into the leaf package (relative, or absolute under it) "
            "that names no member: `from .nonexistent import x`, or `from . import "
            "missing` when there is no such module and the package's `__init__` binds "
            "no such name. Existence is read from the file system."
        ),
        why=(
            "Sibling imports are exempt from AC201 only because a sibling is held to the "
            "same rule. An import that names no member is not covered by the rule at "
            "all, so the exemption would let it through unchecked."
        ),
        fix_safety=(
            "This rule offers no fix: whether the member was renamed, removed or never "
            "written is not visible from the import."
        ),
    ),
)

_PARAMS = {"package": "atom.pool_layout", "allow": ["torch"]}
_TREE = {
    "atom/__init__.py": "",
    "atom/runner.py": "",
    "atom/config.py": "",
    "atom/pool_layout/__init__.py": "from .pool_rows import PoolRowsMixin\n",
    "atom/pool_layout/pool_rows.py": "class PoolRowsMixin: ...\n",
    "atom/pool_layout/entry_arena.py": "class EntryField: ...\n",
    "atom/pool_layout/v4_pool_geometry.py": "",
}


class LeafPackage(Contract):
    KIND = "leaf-package"
    RULES = RULES
    CACHEABLE = False  # AC202 reads other files' existence, AC201 a from-import's targets

    package = String(doc="Dotted name of the leaf package, e.g. `atom.pool_layout`.")
    allow = StringList(
        default=None,
        doc=(
            "Modules the members may import beyond the standard library and each other: "
            "a top-level name (`torch`, which admits `torch.nn`) or a dotted prefix "
            "(`atom.kernels.layout`)."
        ),
    )

    def unmatched(self, files, src: Sequence[str]) -> list[str]:
        """A package no src root holds: as a module, a package, or a namespace directory."""
        out = super().unmatched(files, src)
        stem = self.package.replace(".", "/")
        for root in src:
            base = "" if root in (".", "./") else root.strip("/") + "/"
            if files.any_under(f"{base}{stem}"):
                return out
        return [*out, f"`package` {self.package!r} is no module under `src` {list(src)!r}"]

    VALID = (
        Example(
            source=(
                "from __future__ import annotations\n"
                "\n"
                "import math\n"
                "from dataclasses import dataclass\n"
                "\n"
                "import torch\n"
                "\n"
                "from . import PoolRowsMixin, v4_pool_geometry\n"
                "from .entry_arena import EntryField\n"
                "from atom.pool_layout.pool_rows import PoolRowsMixin as Rows\n"
                "import atom.pool_layout as layout\n"
            ),
            params=_PARAMS,
            path="atom/pool_layout/v4_pool_fields.py",
            files=_TREE,
            note=(
                "Stdlib, an allowed module, and sibling members, relative or absolute; the "
                "package itself under another name."
            ),
        ),
        Example(
            source=(
                "from typing import TYPE_CHECKING\n"
                "\n"
                "if TYPE_CHECKING:\n"
                "    from atom.runner import ModelRunner\n"
            ),
            params=_PARAMS,
            path="atom/pool_layout/pool_rows.py",
            files=_TREE,
            note="An import under `if TYPE_CHECKING:` never runs.",
        ),
        Example(
            source=(
                "import os\n"
                "\n"
                "from . import pool_layout\n"
                "from .pool_layout import entry_arena\n"
                "\n"
                "\n"
                "def load_runner():\n"
                "    from . import runner\n"
                "\n"
                "    return runner\n"
            ),
            params=_PARAMS,
            path="atom/__init__.py",
            files=_TREE,
            note=(
                "An ancestor `__init__` may import the leaf's own members; an import in a "
                "function does not run when the leaf is imported."
            ),
        ),
        Example(
            source="import aiter\n\nfrom atom.pool_layout import entry_arena\n",
            params=_PARAMS,
            path="atom/runner.py",
            files=_TREE,
            note="Files outside the leaf and its ancestors' `__init__` are not held to it.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "import aiter\n"
                "\n"
                "import torch\n"
                "\n"
                "\n"
                "def bind(module):\n"
                "    from atom.runner import ModelRunner\n"
                "\n"
                "    return ModelRunner\n"
            ),
            params=_PARAMS,
            path="atom/pool_layout/pool_rows.py",
            files=_TREE,
            expect=(
                Expect(
                    "AC201",
                    1,
                    8,
                    "imports `aiter`, which is not the standard library, `torch` or a member",
                ),
                Expect("AC201", 7, 5, "imports `atom.runner` (inside a function), which"),
            ),
            note="A third-party module, and the engine imported inside a function.",
        ),
        Example(
            source="from .. import runner\nfrom ..config import Config\n",
            params=_PARAMS,
            path="atom/pool_layout/entry_arena.py",
            files=_TREE,
            expect=(
                Expect("AC201", 1, 16, "leaves the package"),
                Expect("AC201", 2, 1, "`atom.config`"),
            ),
            note="A relative import that climbs out of the package is not a sibling.",
        ),
        Example(
            source=(
                "from .nonexistent import x\n"
                "from .entry_arena import EntryField\n"
                "from . import PoolRowsMixin, missing\n"
            ),
            params=_PARAMS,
            path="atom/pool_layout/v4_pool_fields.py",
            files=_TREE,
            expect=(
                Expect("AC202", 1, 1, "`from .nonexistent import x` names no member"),
                Expect("AC202", 3, 30, "`missing`"),
            ),
            note="Sibling imports must name a member that exists on disk.",
        ),
        Example(
            source=(
                "from .pool_layout import entry_arena\n"
                "from atom.runner import ModelRunner\n"
                "import atom.config\n"
            ),
            params=_PARAMS,
            path="atom/__init__.py",
            files=_TREE,
            expect=(
                Expect("AC201", 2, 1, "ancestor"),
                Expect("AC201", 3, 8, "`atom.config`"),
            ),
            note="Importing the leaf runs this `__init__`, so what it imports is reached.",
        ),
        Example(
            source=(
                "import importlib\n"
                "import atom.pool_layout_v2\n"
                "\n"
                "\n"
                "def load():\n"
                '    return importlib.import_module("aiter.ops")\n'
            ),
            params=_PARAMS,
            path="atom/pool_layout/entry_arena.py",
            files=_TREE,
            expect=(
                Expect("AC201", 2, 8, "`atom.pool_layout_v2`"),
                Expect("AC201", 6, 12, "`aiter.ops`"),
            ),
            note="A name that merely starts like the package is not in it; literal dynamic imports count.",
        ),
    )

    def validate(self, where: str) -> None:
        for name in (self.package, *(self.allow or ())):
            if not all(part.isidentifier() for part in name.split(".")):
                raise ConfigError(f"{where}: {name!r} is not a dotted module name")

    def wants(self, source) -> bool:
        """A path test before any parse: only members and ancestor ``__init__`` files.

        The kind has no text needle (any import may be the wrong one), so
        without this every file in scope would be parsed to learn its module
        name. A member's path contains the package's directories; an
        ancestor's ends in one of theirs plus ``__init__.py``. ``check``
        then decides exactly, from the src roots.
        """
        path = "/" + source.path
        parts = self.package.split(".")
        if f"/{'/'.join(parts)}/" in path or path.endswith(f"/{'/'.join(parts)}.py"):
            return True
        return any(
            path.endswith(f"/{'/'.join(parts[:i])}/__init__.py") for i in range(1, len(parts))
        )

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """A member's imports of an edited sibling: whether what they name exists is read there.

        AC202 asks the file system whether a member exists and the package's
        ``__init__`` whether it binds a name, so editing (or removing) the
        module an import names, or the ``__init__`` it imports from, can fail
        the importing member without a byte of it changing.
        """
        folder = "/" + "/".join(self.package.split("."))
        if folder + "/" not in "/" + path and not ("/" + path).endswith(folder + ".py"):
            return {}  # not a member by its path: no module name to work out
        module = project.module_name(path)
        if module is None or not within(module, self.package):
            return {}
        lines: dict[int, tuple[str, ...]] = {}
        for ref in project.module_imports(path):
            if ref.type_checking or ref.module.startswith("."):
                continue
            if not within(ref.module, self.package):
                # An import leaving the package is AC201 whatever the module it names
                # holds: the member's own finding, which no edit elsewhere causes or mends.
                continue
            named = (ref.module, *(f"{ref.module}.{n}" for n in ref.names if n != "*"))
            hits = tuple(rel for name, rel in edited.items() if name in named)
            if hits:
                lines[ref.lineno] = tuple(dict.fromkeys((*lines.get(ref.lineno, ()), *hits)))
        return lines

    def check(self, source, project) -> Iterator:
        if source.tree is None:
            return
        # Where the file is: the linter and the language server build abspath as root/path
        # (a SourceFile given none has its root-relative path there), so it names the file
        # path names, and the project resolves either form against its root.
        module = project.module_name(source.abspath)
        if module is None:
            return
        if within(module, self.package):
            yield from self._check_member(source, project, module)
        elif source.path.endswith("__init__.py") and self.package.startswith(module + "."):
            yield from self._check_ancestor(source, project, module)

    # -- judging ---------------------------------------------------------

    def _allowed(self, module: str) -> bool:
        if module.startswith("."):
            return False  # a relative import that climbs above the top-level package
        return (
            module.partition(".")[0] in sys.stdlib_module_names
            or within(module, self.package)
            or any(within(module, prefix) for prefix in self.allow or ())
        )

    def _reached(self, ref: ImportRef) -> Iterator[tuple[str, ast.AST]]:
        """(module, anchor) for each module an import loads, as the rule judges it.

        ``from m import sub`` judges ``m.sub`` when that is a module (anchored on
        the name), ``m`` otherwise (anchored on the statement): ``from atom
        import pool_layout`` reaches the leaf, ``from atom import runner`` the
        runner.
        """
        if ref.alias is not None or ref.dynamic:
            yield ref.module, ref.alias or ref.node
            return
        submodules = set(ref.submodules)
        module_named = False
        for alias in ref.node.names:
            target = f"{ref.module}.{alias.name}"
            if target in submodules:
                yield target, alias
            else:
                module_named = True
        if module_named:
            yield ref.module, ref.node

    def _describe(self) -> str:
        allowed = ", ".join(f"`{a}`" for a in self.allow or ())
        return "the standard library" + (f", {allowed}" if allowed else "")

    def _check_member(self, source, project, module: str) -> Iterator:
        for ref in project.imports_of(source):
            if ref.type_checking:
                continue
            for target, anchor in self._reached(ref):
                if self._allowed(target):
                    continue
                where = [] if ref.at_module_level else ["inside a function"]
                if ref.level:
                    where.append("a relative import that leaves the package")
                context = f" ({'; '.join(where)})" if where else ""
                shown = (
                    f"`{target}`"
                    if not target.startswith(".")
                    else f"`{target}` (beyond the top-level package)"
                )
                yield self.finding(
                    source,
                    anchor,
                    f"`{module}` imports {shown}{context}, which is not {self._describe()} "
                    f"or a member of `{self.package}`; the leaf must import without it",
                    code="AC201",
                    span_node=ref.node,
                )
            yield from self._check_member_exists(source, project, ref)

    def _check_member_exists(self, source, project, ref: ImportRef) -> Iterator:
        if ref.module.startswith(".") or not within(ref.module, self.package):
            return
        if not project.exists(self.package):
            return  # a package that is not there is a configuration problem, not this file's
        if not project.exists(ref.module):
            spelled = _spelled(source, ref)
            yield self.finding(
                source,
                ref.alias or ref.node,
                f"`{spelled}` names no member of `{self.package}`: `{ref.module}` is not "
                "a module or package on disk",
                code="AC202",
                span_node=ref.node,
            )
            return
        if ref.alias is not None or ref.dynamic:
            return
        path = project.resolve(ref.module)
        if path is not None and path.name != "__init__.py":
            return  # names inside a module file are its business, not the package's
        for alias in ref.node.names:
            if alias.name != "*" and not project.binds(ref.module, alias.name):
                spelled = _spelled(source, ref)
                yield self.finding(
                    source,
                    alias,
                    f"`{alias.name}` in `{spelled}` names no member of `{self.package}`: "
                    f"no module `{ref.module}.{alias.name}`, and `{ref.module}` binds no "
                    "such name",
                    code="AC202",
                    span_node=ref.node,
                )

    def _check_ancestor(self, source, project, module: str) -> Iterator:
        for ref in project.imports_of(source):
            if not ref.at_module_level or ref.type_checking:
                continue
            for target, anchor in self._reached(ref):
                # Importing an ancestor runs nothing the leaf's import does not already run.
                if self._allowed(target) or within(self.package, target):
                    continue
                yield self.finding(
                    source,
                    anchor,
                    f"`{source.path}` imports `{target}`, and importing "
                    f"`{self.package}` runs this ancestor first: `{target}` is not "
                    f"{self._describe()} or a member of `{self.package}`",
                    code="AC201",
                    span_node=ref.node,
                )


def _spelled(source, ref: ImportRef) -> str:
    """The import as written, first line only (computed only for a finding: it is not cheap)."""
    return source.segment(ref.node).splitlines()[0] if ref.node is not None else ref.module
