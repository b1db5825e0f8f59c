"""The one model of a module's imports: what each import statement loads and binds.

Every question about imports is answered from here: the project index's
import summaries and chains (``ImportRef``: which module an import loads, in
what context it runs -- at import time, inside a function, guarded by a
``try`` that survives ``ImportError``, under ``if TYPE_CHECKING:``), and a
rule's "what does this local name stand for" (``bind_import``:
``import torch as th`` binds ``th`` to ``torch``; ``from torch import
repeat_interleave as ri`` binds ``ri`` to ``torch.repeat_interleave``), and
the scope analyses' "which name does an import bind" (``bound_name``).

Nothing here reads the file system: whether ``from pkg import name`` names
a first-party submodule is the project index's question, passed in as
``project`` (anything with ``is_first_party`` and ``exists``).
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field

# Handlers that make a failed import survivable: `try: import x except
# ImportError:`. `Exception` and a bare `except:` catch it too.
_IMPORT_ERROR_NAMES = frozenset(
    {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
)
_DYNAMIC_IMPORT_NEEDLES = ("import_module", "__import__")


@dataclass(frozen=True)
class ImportRef:
    """One imported module, as written in a file, with relative names resolved.

    ``import a, b`` gives two refs; ``from m import x, y`` gives one with
    ``names == ("x", "y")``. ``submodules`` are the names of a from-import that
    are modules themselves (``from pkg import sub`` loads ``pkg.sub``), found
    on disk for first-party packages. ``module`` of a relative import that
    climbs above the top-level package keeps its dots (``"..x"``), since it
    names nothing.

    ``at_module_level`` is False inside a function body (it runs only when
    called); ``guarded`` means inside ``try`` whose handler survives an
    ``ImportError``; ``type_checking`` means under ``if TYPE_CHECKING:``,
    which never runs. ``dynamic`` marks ``importlib.import_module("x")`` or
    ``__import__("x")`` with a literal name.
    """

    module: str
    names: tuple[str, ...]
    lineno: int
    level: int
    at_module_level: bool
    guarded: bool = False
    type_checking: bool = False
    dynamic: bool = False
    submodules: tuple[str, ...] = ()
    # The statement (or call) and, for `import x`, the alias: rules anchor on them.
    node: ast.AST | None = field(default=None, compare=False, repr=False)
    alias: ast.alias | None = field(default=None, compare=False, repr=False)

    @property
    def targets(self) -> tuple[str, ...]:
        """Every module this import loads by name: the module, then submodules named."""
        return (self.module, *self.submodules)

    @property
    def runs_at_import(self) -> bool:
        """Whether importing the file executes this import unconditionally."""
        return self.at_module_level and not self.type_checking and not self.guarded


def ancestors(module: str) -> tuple[str, ...]:
    """``a.b.c`` -> ``("a", "a.b")``: the packages whose ``__init__`` importing it runs."""
    parts = module.split(".")
    return tuple(".".join(parts[:i]) for i in range(1, len(parts)))


def within(module: str, prefix: str) -> bool:
    """Whether ``module`` is ``prefix`` or inside it (``a.bc`` is not inside ``a.b``)."""
    return module == prefix or module.startswith(prefix + ".")


def bound_name(alias: ast.alias) -> str:
    """The local name an import binds: ``import a.b`` binds ``a``; ``as x`` binds ``x``."""
    return (alias.asname or alias.name).split(".")[0]


def bind_import(
    node: ast.Import | ast.ImportFrom, aliases: dict[str, str], modules: set[str]
) -> None:
    """Record what one import statement binds, in order (a later import of a name wins).

    ``aliases``: local name -> the dotted name it stands for (``th`` ->
    ``torch``, ``ri`` -> ``torch.repeat_interleave``, ``os`` -> ``os`` for
    ``import os.path``); ``modules``: every local name an import binds. A
    relative from-import binds names but stands for nothing absolute, so it
    is left out of both, as a name the file defines itself would be.
    """
    if isinstance(node, ast.Import):
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            aliases[local] = alias.name if alias.asname else local
            modules.add(local)
    elif node.module and not node.level:
        for alias in node.names:
            local = alias.asname or alias.name
            aliases[local] = f"{node.module}.{alias.name}"
            modules.add(local)


def import_refs(tree: ast.Module, text: str, package: str | None, project) -> tuple[ImportRef, ...]:
    """Every import of a module's tree (module level and inside functions), in source order,
    relative names resolved against ``package`` (None: the file is outside every src root)."""
    walker = ImportWalker(
        project,
        package=package,
        # Every import statement and dynamic import spells `import` on one of
        # its lines ("import_module" and "__import__" contain it): a statement
        # with none is not entered (most function bodies of a module).
        import_lines=lines_mentioning(text, ("import",)),
        dynamic_lines=lines_mentioning(text, _DYNAMIC_IMPORT_NEEDLES),
    )
    walker.visit_body(tree.body, in_function=False, guarded=False, type_checking=False)
    return tuple(walker.refs)


class ImportWalker:
    """Collects ImportRefs with the context each import runs in.

    Statements are walked by hand so the context (function body, guarded
    ``try``, ``if TYPE_CHECKING``) is known where each import sits; a
    statement's expressions are entered only when its own lines mention a
    dynamic import, which keeps nearly every statement a statement-only visit
    (CPython's test suite spells ``import_module`` in hundreds of files).
    """

    def __init__(
        self,
        project,
        *,
        package: str | None,
        import_lines: tuple[int, ...],
        dynamic_lines: tuple[int, ...],
    ) -> None:
        self.project = project
        self.package = package
        self.import_lines = import_lines
        self.dynamic_lines = dynamic_lines
        self.refs: list[ImportRef] = []

    @staticmethod
    def _spans(lines: tuple[int, ...], stmt: ast.stmt) -> bool:
        """Whether one of ``lines`` lies within the statement's own lines, decorators included.

        A decorator sits on lines before the ``def``/``class`` line that ``lineno`` names.
        """
        if not lines:
            return False
        start = stmt.lineno
        for decorator in getattr(stmt, "decorator_list", ()):
            start = min(start, decorator.lineno)
        i = bisect.bisect_left(lines, start)
        end = getattr(stmt, "end_lineno", None) or stmt.lineno
        return i < len(lines) and lines[i] <= end

    def _mentions_dynamic(self, stmt: ast.stmt) -> bool:
        """Whether a dynamic-import name appears on the statement's own lines."""
        return self._spans(self.dynamic_lines, stmt)

    def visit_body(self, body, *, in_function: bool, guarded: bool, type_checking: bool) -> None:
        for stmt in body:
            if self._spans(self.import_lines, stmt):
                self.visit(
                    stmt, in_function=in_function, guarded=guarded, type_checking=type_checking
                )

    def visit(self, stmt, *, in_function: bool, guarded: bool, type_checking: bool) -> None:
        ctx = {"in_function": in_function, "guarded": guarded, "type_checking": type_checking}
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self._add(alias.name, (), stmt, level=0, alias=alias, **ctx)
        elif isinstance(stmt, ast.ImportFrom):
            self._add_from(stmt, **ctx)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if self._mentions_dynamic(stmt):
                for expr in [*stmt.decorator_list, *stmt.args.defaults, *stmt.args.kw_defaults]:
                    if expr is not None:
                        self._scan_expr(expr, **ctx)
            self.visit_body(
                stmt.body, in_function=True, guarded=guarded, type_checking=type_checking
            )
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            self.visit_body(
                stmt.body,
                in_function=in_function,
                guarded=guarded or any(_survives_import_error(h) for h in stmt.handlers),
                type_checking=type_checking,
            )
            for handler in stmt.handlers:
                self.visit_body(handler.body, **ctx)
            self.visit_body(stmt.orelse, **ctx)
            self.visit_body(stmt.finalbody, **ctx)
        elif isinstance(stmt, ast.If) and _is_type_checking(stmt.test):
            self.visit_body(stmt.body, in_function=in_function, guarded=guarded, type_checking=True)
            self.visit_body(stmt.orelse, **ctx)
        else:
            if self._mentions_dynamic(stmt):
                for child in ast.iter_child_nodes(stmt):
                    if isinstance(child, ast.expr):
                        self._scan_expr(child, **ctx)
            for attr in ("body", "orelse", "finalbody"):
                self.visit_body(getattr(stmt, attr, ()), **ctx)
            for case in getattr(stmt, "cases", ()):
                self.visit_body(case.body, **ctx)

    def _scan_expr(self, expr: ast.expr, **ctx) -> None:
        for node in ast.walk(expr):
            if (
                isinstance(node, ast.Call)
                and _dynamic_import_callee(node.func)
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and node.args[0].value
            ):
                name = node.args[0].value
                level = len(name) - len(name.lstrip("."))
                module = self._absolute(name.lstrip("."), level) if level else name
                self._add(module, (), node, level=level, dynamic=True, **ctx)

    def _absolute(self, module: str | None, level: int) -> str:
        """A relative module made absolute; keeps its dots when it climbs out of the tree."""
        raw = "." * level + (module or "")
        if self.package is None:
            return raw
        parts = self.package.split(".") if self.package else []
        if level - 1 >= len(parts):
            return raw  # Python refuses it: beyond the top-level package
        base = parts[: len(parts) - (level - 1)]
        if module:
            base.append(module)
        return ".".join(base) if base else raw

    def _add_from(self, stmt: ast.ImportFrom, **ctx) -> None:
        level = stmt.level or 0
        module = self._absolute(stmt.module, level) if level else (stmt.module or "")
        names = tuple(alias.name for alias in stmt.names)
        submodules: tuple[str, ...] = ()
        if not module.startswith(".") and self.project.is_first_party(module):
            submodules = tuple(
                f"{module}.{name}"
                for name in names
                if name != "*" and self.project.exists(f"{module}.{name}")
            )
        self._add(module, names, stmt, level=level, submodules=submodules, **ctx)

    def _add(
        self,
        module: str,
        names: tuple[str, ...],
        node: ast.AST,
        *,
        level: int,
        in_function: bool,
        guarded: bool,
        type_checking: bool,
        alias: ast.alias | None = None,
        dynamic: bool = False,
        submodules: tuple[str, ...] = (),
    ) -> None:
        self.refs.append(
            ImportRef(
                module=module,
                names=names,
                lineno=node.lineno,
                level=level,
                at_module_level=not in_function,
                guarded=guarded,
                type_checking=type_checking,
                dynamic=dynamic,
                submodules=submodules,
                node=node,
                alias=alias,
            )
        )


def summarise(refs: tuple[ImportRef, ...]) -> tuple:
    """A file's imports as plain tuples (marshal-able): what depends on its bytes alone.

    Submodules are left out: whether ``from pkg import name`` names a module
    is a fact about the file system, recomputed when the summary is read.
    """
    return tuple(
        (
            r.module,
            r.names,
            r.lineno,
            r.level,
            r.at_module_level,
            r.guarded,
            r.type_checking,
            r.dynamic,
        )
        for r in refs
    )


def lines_mentioning(text: str, needles: tuple[str, ...]) -> tuple[int, ...]:
    """1-based numbers of the lines containing any needle (Python's line breaks), ascending.

    From each occurrence, not from each line: a module has far more lines than
    imports, and ``str.find``/``str.count`` run in C. No needle holds a line
    break, so each one lies within a line, and each occurrence starts on a
    character that is no line break (what ``line_numbers`` asks of its offsets).
    """
    found: set[int] = set()
    for needle in needles:
        at = text.find(needle)
        while at != -1:
            found.add(at)
            at = text.find(needle, at + 1)
    lines: list[int] = []
    for line in line_numbers(text, sorted(found)):
        if not lines or lines[-1] != line:
            lines.append(line)
    return tuple(lines)


def line_numbers(text: str, offsets):
    """The 1-based line of each of ``offsets`` (ascending) in ``text``, as the tokenizer
    numbers lines: each ``\n``, ``\r\n`` and lone ``\r`` ends one.

    The breaks are counted between one offset and the next, so the text is read once in
    all; an offset must not fall between a ``\r`` and its ``\n`` (none does that starts a
    needle or a name). A text without ``\r`` -- almost every file -- needs one count a gap
    instead of three: a module spelling ``def `` a few hundred times asks this per
    definition.
    """
    line, prev = 1, 0
    count = text.count
    if "\r" not in text:
        for at in offsets:
            line += count("\n", prev, at)
            prev = at
            yield line
        return
    for at in offsets:
        line += count("\n", prev, at) + count("\r", prev, at) - count("\r\n", prev, at)
        prev = at
        yield line


def _survives_import_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    for t in types:
        name = t.id if isinstance(t, ast.Name) else t.attr if isinstance(t, ast.Attribute) else ""
        if name in _IMPORT_ERROR_NAMES:
            return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _dynamic_import_callee(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in ("import_module", "__import__")
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "import_module"
        and isinstance(func.value, ast.Name)
        and func.value.id == "importlib"
    )
