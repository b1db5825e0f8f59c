"""banned-import: one import convention, with the configured spellings refused.

Two modules vendored from vLLM took triton from ``vllm.triton_utils``, as they
arrived. The repository had already decided against that when the same files
were vendored into ``fla_ops`` -- "couples to vLLM internals. ATOM uses plain
triton imports throughout" -- and 73 files imported triton directly; these two
were the last that did not. The reverse holds in other repositories, which is
why the banned modules and what to say about them are configuration, not
code.

A module is banned with everything under it (``vllm.triton_utils`` bans
``vllm.triton_utils.importing``) and only that: ``vllm.triton_utilsx`` is
another module. Every spelling that loads it is refused: ``import m``,
``import m.sub``, ``from m import x``, ``from m.sub import x``, ``from parent
import m``, a relative import that resolves to it, and
``importlib.import_module("m")`` with a literal name.

The fix rewrites a from-import when every name it takes has a known direct
source. Three are built in, because they are the case this kind was made for
and what ``vllm.triton_utils`` binds: ``triton`` comes from ``import triton``,
``tl`` from ``import triton.language as tl`` and ``tldevice`` from ``import
triton.language.extra.libdevice as tldevice``. ``replace`` adds more, or
overrides these.
"""

from __future__ import annotations

from collections.abc import Iterator

from checkers.analysis.imports import ImportRef, within
from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, StringMap

# Imported name -> the module that provides it directly.
# vllm.triton_utils binds these three (or placeholders for them, without triton).
BUILTIN_REPLACEMENTS = {
    "triton": "triton",
    "tl": "triton.language",
    "tldevice": "triton.language.extra.libdevice",
}

RULES = (
    Rule(
        code="AC501",
        name="banned-import",
        what=(
            "Flags an import of a banned module or anything under it, in any spelling "
            "(`import m.sub`, `from m import x`, `from parent import m`, a relative "
            "import resolving to it, `importlib.import_module('m')`), with the "
            "configured hint in the message."
        ),
        why=(
            "A repository that has settled on one import convention pays for every "
            "exception: the banned module couples the code to another project's "
            "internals, and each file that still uses it is one more that breaks when "
            "those internals move."
        ),
        fix_safety=(
            "The fix is unsafe. It replaces `from m import a, b` with direct imports of "
            "each name's own module (`from vllm.triton_utils import triton, tl` becomes "
            "`import triton` and `import triton.language as tl`), and is offered only "
            "when every name has a known source. The banned module may not hand out "
            "the same objects: `vllm.triton_utils` substitutes a placeholder when "
            "triton is not installed, so after the fix the import raises "
            "`ImportError` where it used to succeed. That is usually the point, but it "
            "changes behaviour, which is what unsafe means."
        ),
    ),
)

_HINT = "ATOM uses plain triton imports throughout: `import triton`, `import triton.language as tl`"
_PARAMS = {"modules": {"vllm.triton_utils": _HINT}}


class BannedImport(Contract):
    KIND = "banned-import"
    RULES = RULES

    modules = StringMap(
        doc=(
            "Banned modules (dotted), each with the hint the message gives: "
            '`{ "vllm.triton_utils" = "use plain triton imports" }`. A module bans '
            "everything under it."
        )
    )
    replace = StringMap(
        default=None,
        doc=(
            "For the fix: an imported name -> the module that provides it directly, "
            '`{ tl = "triton.language" }`; a key may be qualified by the banned module '
            '(`"vllm.triton_utils.tl"`) to apply to that module only. Merged over the '
            "built-ins `triton` -> `triton`, `tl` -> `triton.language` and `tldevice` -> "
            "`triton.language.extra.libdevice`. A from-import "
            "with a name that has no entry gets no fix."
        ),
    )

    VALID = (
        Example(
            source=(
                "import triton\n"
                "import triton.language as tl\n"
                "\n"
                "\n"
                "@triton.jit\n"
                "def kernel(x_ptr, BLOCK: tl.constexpr):\n"
                "    pass\n"
            ),
            params=_PARAMS,
            note="Plain triton imports, as the rest of the repository has them.",
        ),
        Example(
            source=(
                "import vllm\n"
                "from vllm import sampling_params\n"
                "from vllm.triton_utilsx import helper\n"
                "from vllm_triton_utils import triton_utils\n"
            ),
            params=_PARAMS,
            note="The banned module's parent, and names that only look alike.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "from vllm.triton_utils import triton, tl\n"
                "\n"
                "\n"
                "@triton.jit\n"
                "def kernel(x_ptr, BLOCK: tl.constexpr):\n"
                "    pass\n"
            ),
            params=_PARAMS,
            expect=(Expect("AC501", 1, 1, "plain triton imports"),),
            fixed=(
                "import triton\n"
                "import triton.language as tl\n"
                "\n"
                "\n"
                "@triton.jit\n"
                "def kernel(x_ptr, BLOCK: tl.constexpr):\n"
                "    pass\n"
            ),
            unsafe=True,
            note="The refactor's case: the fix imports each name from its own module.",
        ),
        Example(
            source=(
                "def build():\n"
                "    from vllm.triton_utils.importing import triton as tr\n"
                "\n"
                "    return tr\n"
            ),
            params=_PARAMS,
            expect=(
                Expect(
                    "AC501", 2, 5, "`vllm.triton_utils.importing`, under banned `vllm.triton_utils`"
                ),
            ),
            fixed=("def build():\n    import triton as tr\n\n    return tr\n"),
            unsafe=True,
            note="A submodule of a banned module, inside a function, under another name.",
        ),
        Example(
            source=(
                "from vllm.triton_utils import HAS_TRITON\n"
                "import os, vllm.triton_utils as tu\n"
                "from vllm import triton_utils\n"
            ),
            params=_PARAMS,
            expect=(
                Expect("AC501", 1, 1, "imports banned `vllm.triton_utils`"),
                Expect("AC501", 2, 12, "`vllm.triton_utils`"),
                Expect("AC501", 3, 18, "`vllm.triton_utils`"),
            ),
            note="No fix where a name has no known source or the module itself is bound.",
        ),
        Example(
            source="from vllm.triton_utils import triton, tl; # kernels below\n",
            params=_PARAMS,
            expect=(Expect("AC501", 1, 1, "plain triton imports"),),
            fixed="import triton; import triton.language as tl; # kernels below\n",
            unsafe=True,
            note=(
                "A statement that shares its line (here with a trailing `;`) is replaced on "
                "that line, the imports joined by `; `."
            ),
        ),
        Example(
            source="from ..compat.triton_compat import triton\n",
            params={"modules": {"atom.compat.triton_compat": "import triton directly"}},
            path="atom/kernels/store.py",
            files={
                "atom/__init__.py": "",
                "atom/kernels/__init__.py": "",
                "atom/compat/__init__.py": "",
                "atom/compat/triton_compat.py": "import triton\n",
            },
            expect=(Expect("AC501", 1, 1, "`atom.compat.triton_compat`"),),
            fixed="import triton\n",
            unsafe=True,
            note="A relative import is judged by the module it resolves to.",
        ),
    )

    def validate(self, where: str) -> None:
        for name in [*self.modules, *(self.replace or {}).values()]:
            if not all(part.isidentifier() for part in name.split(".")):
                raise ConfigError(f"{where}: {name!r} is not a dotted module name")

    def needles(self) -> tuple[str, ...]:
        # Every spelling of `a.b.c` contains `c`, even `from a.b import c` and `from . import c`.
        return tuple(dict.fromkeys(m.rpartition(".")[2] for m in self.modules))

    def _banned(self, module: str) -> str | None:
        """The banned module ``module`` falls under (the most specific), if any."""
        hits = [m for m in self.modules if within(module, m)]
        return max(hits, key=len) if hits else None

    def check(self, source, project) -> Iterator:
        if source.tree is None:
            return
        for ref in project.imports_of(source):
            if ref.alias is not None or ref.dynamic:
                banned = self._banned(ref.module)
                if banned is not None:
                    anchor = ref.alias or ref.node
                    yield self._finding(source, ref, anchor, ref.module, banned)
                continue
            banned = self._banned(ref.module)
            if banned is not None:
                yield self._finding(
                    source, ref, ref.node, ref.module, banned, fix=self._fix(source, ref)
                )
                continue
            for alias in ref.node.names:
                target = f"{ref.module}.{alias.name}"
                banned = self._banned(target)
                if banned is not None:
                    yield self._finding(source, ref, alias, target, banned)

    def _finding(self, source, ref: ImportRef, anchor, module: str, banned: str, fix=None):
        spelled = " ".join(source.segment(ref.node).split())
        what = f"banned `{banned}`" if module == banned else f"`{module}`, under banned `{banned}`"
        return self.finding(
            source,
            anchor,
            f"`{spelled}` imports {what}: {self.modules[banned]}",
            fix=fix,
            span_node=ref.node,
        )

    def _fix(self, source, ref: ImportRef):
        """Direct imports for each name, or None when one has no known source."""
        from contracts.finding import Edit, Fix

        stmt = ref.node
        table = {**BUILTIN_REPLACEMENTS, **(self.replace or {})}
        written = "." * ref.level + (stmt.module or "")
        imports = []
        for alias in stmt.names:
            target = table.get(f"{written}.{alias.name}", table.get(alias.name))
            if alias.name == "*" or target is None:
                return None
            bound = alias.asname or alias.name
            imports.append(f"import {target}" if target == bound else f"import {target} as {bound}")
        line, col, end_line, end_col = source.span(stmt)
        before = source.lines[line - 1][: col - 1]
        after = source.lines[end_line - 1][end_col - 1 :].strip()
        alone = not before.strip() and (not after or after.startswith("#"))
        content = ("\n" + before).join(imports) if alone else "; ".join(imports)
        return Fix(
            message="Import each name from its own module",
            edits=(Edit(line, col, end_line, end_col, content),),
            applicability="unsafe",
        )
