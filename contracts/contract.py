"""The base of every contract kind: declared parameters, docs and proof.

A kind is a class. Its parameters are ``contracts.fields`` objects, validated
by one generic loop in ``from_table``; its rules carry their documentation
(ruff's shape: What it does / Why is this bad? / Example / Use instead / Fix
safety / Options); its ``VALID`` and ``INVALID`` examples are run by the test
suite and rendered into the docs (fixit's habit), so a rule cannot be added
without saying what it accepts and what it refuses, and is never documented
twice.

``check`` is the only method that sees source. It receives a ``Source`` and
a ``ProjectIndex`` (``contracts.interfaces``: Protocols the checker's
``SourceFile`` and ``Project`` satisfy) and yields ``contracts.finding.Finding``,
so ``contracts`` imports nothing of the checker, not even for typing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .fields import ConfigError, Field, Globs, did_you_mean
from .finding import Finding, Fix

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    import ast
    from typing import Any, ClassVar, Protocol

    from .interfaces import ProjectIndex, Source

    class FileIndex(Protocol):
        """The project's Python files, as ``checkers.coverage`` answers for them."""

        def any_match(self, glob: str) -> bool: ...
        def any_under(self, stem: str) -> bool: ...


@dataclass(frozen=True)
class Rule:
    """One finding code of a kind, with the documentation ruff readers expect."""

    code: str
    name: str  # kebab-case, e.g. "keyword-only-parameter"
    what: str  # What it does
    why: str  # Why is this bad?
    fix_safety: str = "This rule offers no fix."


@dataclass(frozen=True)
class Expect:
    """Where an INVALID example must be flagged: code, 1-based line and column."""

    code: str
    line: int
    column: int
    message: str | None = None  # a substring the message must contain


@dataclass(frozen=True)
class Example:
    """A proof case: a file (and, for cross-file kinds, its neighbours).

    ``params`` are the contract's parameters as a user would write them in
    TOML (kebab-case keys). ``fixed`` is the file after applying every fix
    (``unsafe`` says whether that needs ``--unsafe-fixes``).
    """

    source: str
    params: Mapping[str, Any] = field(default_factory=dict)
    path: str = "pkg/module.py"
    files: Mapping[str, str] = field(default_factory=dict)
    expect: tuple[Expect, ...] = ()
    fixed: str | None = None
    unsafe: bool = False
    note: str = ""


class Contract:
    """A named, declared instance of a kind."""

    KIND: ClassVar[str] = ""
    RULES: ClassVar[tuple[Rule, ...]] = ()
    VALID: ClassVar[tuple[Example, ...]] = ()
    INVALID: ClassVar[tuple[Example, ...]] = ()
    # False when a file's findings depend on other files' contents (an import
    # chain, a package listing): the cache is keyed by one file's bytes.
    CACHEABLE: ClassVar[bool] = True
    # Whether a kind that is not CACHEABLE follows other files' imports (an import chain):
    # then every file the run parses has its imports summarised for the cache, so a later
    # chain through it reads the summary. A kind that follows calls keeps summaries of its
    # own (checkers.analysis.program) and sets this False.
    IMPORT_SUMMARIES: ClassVar[bool] = True
    # False when ``check`` reads only ``source.text`` (a text scan): the engine then runs it on
    # a file that does not parse, instead of leaving that file to the one AC001.
    NEEDS_TREE: ClassVar[bool] = True

    paths = Globs(
        default=None,
        doc=(
            "Globs (relative to the project root) the contract applies to, as gitignore reads "
            'them: a later `!glob` takes files back out (`"!**/ops/**"`), the last glob '
            "that matches deciding; all files when absent."
        ),
    )

    def __init__(self, id: str, **params: Any) -> None:
        self.id = id
        for name, f in self.fields().items():
            setattr(self, name, params.get(name, f.default))
        self._path_spec = None

    # -- declaration -----------------------------------------------------

    @classmethod
    def fields(cls) -> dict[str, Field]:
        out: dict[str, Field] = {}
        for klass in reversed(cls.__mro__):
            for name, value in vars(klass).items():
                if isinstance(value, Field):
                    out[name] = value
        return out

    @classmethod
    def from_table(cls, table: Mapping[str, Any], where: str) -> Contract:
        """Build from a TOML table, refusing unknown, missing and mistyped keys by name."""
        by_key = {f.key: (name, f) for name, f in cls.fields().items()}
        contract_id = table.get("id")
        if not isinstance(contract_id, str) or not contract_id:
            raise ConfigError(f"{where}: `id` must be a non-empty string, got {contract_id!r}")
        params: dict[str, Any] = {}
        for key, value in table.items():
            if key in ("id", "kind"):
                continue
            if key not in by_key:
                known = ", ".join(sorted(by_key)) or "none"
                raise ConfigError(
                    f"{where}: unknown parameter `{key}` for kind `{cls.KIND}` (known: {known})"
                    + did_you_mean(key, by_key)
                )
            name, f = by_key[key]
            params[name] = f.parse(value, where)
        for key, (name, f) in by_key.items():
            if f.required and name not in params:
                raise ConfigError(
                    f"{where}: kind `{cls.KIND}` requires `{key}` ({f.type_name}), which is missing"
                )
        contract = cls(contract_id, **params)
        contract.validate(where)
        return contract

    def validate(self, where: str) -> None:
        """Cross-parameter checks a kind needs beyond field types; raise ConfigError."""

    @classmethod
    def codes(cls) -> tuple[str, ...]:
        return tuple(r.code for r in cls.RULES)

    # -- scope and pre-filter -------------------------------------------

    def applies_to(self, path: str) -> bool:
        if self.paths is None:
            return True
        if self._path_spec is None:
            from .fields import compile_globs

            self._path_spec = compile_globs(self.paths, where=f"contract `{self.id}`: `paths`")
        return self._path_spec.match_file(path)

    def unmatched(self, files: FileIndex, src: Sequence[str]) -> list[str]:
        """What this contract names that no file of the project matches, one phrase each.

        ``files`` answers for the project's whole file listing
        (``checkers.coverage``), ``src`` its src roots as declared. A glob
        parameter (``paths``, and a kind's own, e.g. ``tests``) that matches
        nothing means the contract checks nothing: a typo, or a tree that
        moved. A negated glob only narrows, so it is not asked to match.
        """
        out = []
        for name, f in self.fields().items():
            globs = getattr(self, name)
            if not isinstance(f, Globs) or globs is None:
                continue
            for glob in globs:
                if not glob.startswith("!") and not files.any_match(glob):
                    out.append(f"`{f.key}` glob {glob!r} matches no file")
        return out

    def needles(self) -> tuple[str, ...]:
        """Strings one of which a file's text must contain for this contract to parse it.

        Empty means every file in scope is parsed. This is what keeps a
        whole-tree check cheap: most files fail every needle and are never
        parsed.
        """
        return ()

    def wants(self, source: Source) -> bool:
        needles = self.needles()
        return not needles or any(n in source.text for n in needles)

    def wants_project(self, project: ProjectIndex) -> bool:
        """Whether any file of this project could produce a finding; asked once a run.

        The per-file pre-filter cannot rule out a kind whose finding sits at
        the end of a chain through other files (a test reaching triton through
        first-party imports): every test file must be parsed to follow it.
        When nothing in the project even spells the module the chain must
        reach, no chain exists, and the whole contract is dropped unparsed.
        """
        return True

    def dependent_lines(
        self, path: str, project: ProjectIndex, edited: Mapping[str, str]
    ) -> dict[int, tuple[str, ...]]:
        """Lines of ``path`` whose findings can change when the ``edited`` files change.

        ``edited`` maps each edited file's module name to its path. Asked of
        a kind that is not ``CACHEABLE`` when a run covers only some files
        (pre-commit, the agent hook, ``check FILE``), for every other file in
        its scope: the lines returned, each with the edited paths that reach
        it, are re-checked and reported, so a local run fails where the
        whole-tree run will. Answered from the project's import summaries,
        without parsing ``path``; empty means nothing there depends on them.
        """
        return {}

    # -- checking ----------------------------------------------------------

    def check(self, source: Source, project: ProjectIndex) -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        source: Source,
        node: ast.AST | tuple[int, int, int, int],
        message: str,
        *,
        code: str | None = None,
        fix: Fix | None = None,
        span_node: ast.AST | None = None,
    ) -> Finding:
        """A finding anchored on ``node`` (or an explicit span).

        ``span_node`` is the statement whose lines a suppression may sit on
        (defaults to ``node``).
        """
        if isinstance(node, tuple):
            line, col, end_line, end_col = node
        else:
            line, col, end_line, end_col = source.span(node)
        outer = span_node if span_node is not None else node
        if isinstance(outer, tuple):
            span_lines = (outer[0], outer[2])
        else:
            span_lines = (outer.lineno, getattr(outer, "end_lineno", None) or outer.lineno)
        return Finding(
            code=code or self.RULES[0].code,
            contract=self.id,
            kind=self.KIND,
            path=source.path,
            line=line,
            column=col,
            end_line=end_line,
            end_column=end_col,
            message=message,
            fix=fix,
            span_lines=span_lines,
        )
