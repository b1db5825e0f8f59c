"""The project index: which files are first-party and what each imports.

Cross-file kinds (a leaf package, an import chain that reaches triton) ask
questions about files other than the one being checked. This answers them by
reading and parsing those files -- never importing or running them, because
the code being checked may not import on this machine at all, which is the
very thing several contracts are about.

Everything is memoised for one run: a file's imports and its package
bindings are worked out once however many contracts and files ask about
them, and a module name resolves to a path once. What is kept is those
summaries, never a file's text or tree: a whole-tree run would otherwise hold
every AST it ever parsed until it ends (535 MB in one worker over the
stdlib), and the cyclic collector would walk them all again at each
collection. The linter registers the source it is checking with
``add_source``, so a question about that file while it is being checked
reads the linter's copy rather than the disk; the registration lasts as long
as the linter holds the source.

Resolution follows Python's own rules as far as the file system shows them:
``pkg/__init__.py`` before ``pkg.py`` (a regular package wins over a module),
a directory without ``__init__.py`` is a namespace package, and a relative
import is resolved against the importing file's package (its own dotted name
for an ``__init__.py``, its parent's otherwise).
"""

from __future__ import annotations

import ast
import os
import weakref
from collections import deque
from pathlib import Path

from .analysis.imports import (
    ImportRef,
    ancestors,
    import_refs,
    summarise,
    within,
)
from .source import DecodeError, SourceFile, decode_source, read_regular

# Folder names that hold no first-party code: installed environments and caches.
_NOT_PROJECT = frozenset({"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"})


class Project:
    def __init__(
        self,
        root: str | os.PathLike[str],
        src_roots: tuple[str | os.PathLike[str], ...] = (),
        summaries: dict[str, tuple] | None = None,
    ) -> None:
        # Not resolved: the linter joins paths onto the root as given, and a
        # symlinked root must still contain them. module_name falls back to
        # real paths when the spelled ones do not line up.
        self.root = Path(os.path.abspath(root))
        roots = tuple(self._absolute(r) for r in src_roots) or (self.root,)
        # Most specific first, so `src/` wins over the project root that holds it.
        self.src_roots: tuple[Path, ...] = tuple(
            sorted(dict.fromkeys(roots), key=lambda p: len(p.parts), reverse=True)
        )
        self._real_src_roots: tuple[Path, ...] | None = None
        self._src_str: tuple[tuple[Path, ...], tuple[str, ...]] | None = None
        self._names: dict[str, str | None] = {}
        # Sources the linter is checking right now; a weak map, so registering
        # a file never keeps its tree past the linter's own use of it.
        self._sources: weakref.WeakValueDictionary[str, SourceFile] = weakref.WeakValueDictionary()
        self._imports: dict[str, tuple[ImportRef, ...]] = {}
        self._resolved: dict[str, Path | None] = {}
        self._exists: dict[str, bool] = {}
        self._bound: dict[str, frozenset[str]] = {}
        self._chains: dict[tuple[str, str], tuple[str, ...] | None] = {}
        self._mentions: dict[str, bool] = {}
        # relpath -> (size, mtime_ns, digest, summarise(imports)): the cache's
        # per-file import summaries, and the ones this run worked out.
        self.summaries: dict[str, tuple] = dict(summaries or {})
        self.new_summaries: dict[str, tuple] = {}

    def mentions(self, needle: str) -> bool:
        """Whether any Python file under the root or a src root spells ``needle``.

        A byte search, no parse: reading a tree is a small fraction of parsing
        it. Hidden folders, caches and virtual environments are not the
        project's code and are skipped.
        """
        found = self._mentions.get(needle)
        if found is None:
            found = self._mentions[needle] = self._scan_for(needle.encode())
        return found

    def _scan_for(self, needle: bytes) -> bool:
        seen: set[Path] = set()
        for top in (self.root, *self.src_roots):
            if any(top == s or s in top.parents for s in seen):
                continue
            seen.add(top)
            for folder, dirs, files in os.walk(top):
                dirs[:] = [d for d in dirs if d not in _NOT_PROJECT and not d.startswith(".")]
                for name in files:
                    if not name.endswith((".py", ".pyi")):
                        continue
                    try:
                        if needle in read_regular(os.path.join(folder, name)):
                            return True
                    except OSError:
                        continue
        return False

    def _absolute(self, path: str | os.PathLike[str]) -> Path:
        p = Path(path)
        return Path(os.path.normpath(p if p.is_absolute() else self.root / p))

    def relpath(self, path: str | os.PathLike[str]) -> str:
        """Posix path relative to the root (absolute when outside it)."""
        p = self._absolute(path)
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return p.as_posix()

    # -- names -----------------------------------------------------------

    def module_name(self, relpath: str | os.PathLike[str]) -> str | None:
        """Dotted name of a ``.py`` file under a src root; None when it is not one."""
        key = os.fspath(relpath)
        if key not in self._names:
            p = self._absolute(relpath)
            if p.suffix != ".py":
                self._names[key] = None
            else:
                name = _dotted_str(str(p), self._src_strings())
                if name is _OUTSIDE:
                    if self._real_src_roots is None:
                        self._real_src_roots = tuple(
                            Path(os.path.realpath(r)) for r in self.src_roots
                        )
                    name = _dotted(Path(os.path.realpath(p)), self._real_src_roots)
                self._names[key] = None if name is _OUTSIDE else name
        return self._names[key]

    def package_of(self, relpath: str | os.PathLike[str]) -> str | None:
        """The package a relative import in this file is resolved against."""
        name = self.module_name(relpath)
        if name is None:
            return None
        if Path(relpath).name == "__init__.py":
            return name
        return name.rpartition(".")[0]

    def resolve(self, module: str) -> Path | None:
        """The first-party file of a dotted module (``pkg/__init__.py`` or ``mod.py``)."""
        if module in self._resolved:
            return self._resolved[module]
        found: Path | None = None
        parts = module.split(".")
        if all(part.isidentifier() for part in parts):
            # os.path on strings, not pathlib: the one-file re-check asks this of a few
            # hundred imports, and Path's parsing and joins were most of its cost.
            for src in self._src_strings():
                base = os.path.join(src, *parts)
                init = os.path.join(base, "__init__.py")
                if os.path.isfile(init):
                    found = Path(init)
                    break
                if os.path.isfile(base + ".py"):
                    found = Path(base + ".py")
                    break
        self._resolved[module] = found
        return found

    def _src_strings(self) -> tuple[str, ...]:
        if self._src_str is None or self._src_str[0] is not self.src_roots:
            self._src_str = (self.src_roots, tuple(str(src) for src in self.src_roots))
        return self._src_str[1]

    def exists(self, module: str) -> bool:
        """A first-party module, package, or namespace package (a bare directory)."""
        if module not in self._exists:
            parts = module.split(".")
            self._exists[module] = self.resolve(module) is not None or (
                all(part.isidentifier() for part in parts)
                and any(os.path.isdir(os.path.join(src, *parts)) for src in self._src_strings())
            )
        return self._exists[module]

    def is_first_party(self, module: str) -> bool:
        """Whether the module's top-level package lies under a src root."""
        top = module.partition(".")[0]
        return bool(top) and self.exists(top)

    def binds(self, package: str, name: str) -> bool:
        """Whether ``from package import name`` finds something, judged from disk.

        A submodule, or a name the package's ``__init__`` binds at module level
        (a def, a class, an assignment, an import). A star import or a
        module ``__getattr__`` in the ``__init__`` could bind anything, so
        either makes every name count as bound.
        """
        if self.exists(f"{package}.{name}"):
            return True
        if package not in self._bound:
            self._bound[package] = self._init_bindings(package)
        bound = self._bound[package]
        return "*" in bound or name in bound

    def _init_bindings(self, package: str) -> frozenset[str]:
        path = self.resolve(package)
        if path is None or path.name != "__init__.py":
            return frozenset()
        source = self.read_source(path)
        tree = source.tree if source is not None else None
        if tree is None:
            return frozenset()
        names: set[str] = set()
        stack: list[ast.stmt] = list(tree.body)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add("*" if stmt.name == "__getattr__" else stmt.name)
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    names.add(alias.asname or alias.name.partition(".")[0])
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for target in targets:
                    names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            else:
                for attr in ("body", "orelse", "finalbody"):
                    stack.extend(getattr(stmt, attr, ()))
                for handler in getattr(stmt, "handlers", ()):
                    stack.extend(handler.body)
        return frozenset(names)

    # -- files -----------------------------------------------------------

    def add_source(self, source: SourceFile) -> None:
        """Register the file the linter is checking: questions about it read this copy.

        Held weakly: once the linter lets the source go, so does the project
        (what it learnt from it stays, in the import and binding summaries).
        """
        self._sources[str(self._absolute(source.abspath))] = source

    def update(self, path: str | os.PathLike[str], source: SourceFile | None) -> None:
        """One file changed (an editor's buffer, a save, a file created or deleted).

        ``source`` is its new text, or None to read it from disk when next asked.
        A long-lived index (the language server's) keeps every other file's
        parse and imports; what may depend on this file is dropped: its own
        imports, every import chain (any chain may pass through it), the
        bindings of the package it is the ``__init__`` of, and -- when it is to
        be read from disk again (``source`` None: saved, created or deleted) --
        path lookups (a created or deleted file changes where a module
        resolves; a buffer's new text does not, and keeping them spares a
        keystroke its stat calls). A needle
        the index had never found counts as found once the new text spells it;
        one it had found stays found -- ``mentions`` is a pre-filter, and a
        stale yes costs a check that finds nothing.
        """
        key = str(self._absolute(path))
        if source is None:
            self._sources.pop(key, None)
        else:
            self._sources[key] = source
        self._imports.pop(key, None)
        self._chains.clear()
        # The function summaries (checkers.analysis.program): any call chain may pass through it.
        # What the program learnt of other files' bodies still holds for their bytes: kept.
        from .analysis.program import keep_details

        keep_details(self)
        program = self.__dict__.pop("_program", None)
        if source is not None and program is not None and program.project is self:
            # The program's scans read only the disk (which files there are, which spell a
            # needle), and a buffer's new text leaves the disk as it was: the next program
            # starts from them, or every keystroke would read every file of the project.
            from .analysis.program import Program

            fresh = self._program = Program(self)
            fresh._scans = program._scans
        if source is None or key.endswith("__init__.py"):
            self._bound.clear()
        if source is None:
            # Path lookups read the disk, which a new buffer text does not change
            # (the language server's keystroke); a file re-read may be one created or deleted.
            self._resolved.clear()
            self._exists.clear()
        if source is not None:
            for needle, found in self._mentions.items():
                if not found and needle in source.text:
                    self._mentions[needle] = True

    def read_source(self, path: str | os.PathLike[str]) -> SourceFile | None:
        """The file as a SourceFile (the registered copy, else read from disk); None when unreadable.

        Not kept: callers keep the summary they derive from it, so a file is
        still parsed once for them.
        """
        key = str(self._absolute(path))
        registered = self._sources.get(key)
        if registered is not None:
            return registered
        return self._read(Path(key))

    def read_bytes(self, path: str | os.PathLike[str]) -> bytes | None:
        """A file's bytes as on disk (not an editor's unsaved buffer); None when it cannot be
        read or is no regular file (a FIFO named like a module would wait for a writer)."""
        try:
            return read_regular(str(self._absolute(path)))
        except OSError:
            return None

    def _read(self, path: Path) -> SourceFile | None:
        data = self.read_bytes(path)
        return None if data is None else self._decode(path, data)

    def _decode(self, path: Path, data: bytes) -> SourceFile | None:
        try:
            # As import decodes it: a BOM or a cookie on a neighbour must not
            # make it read as binding nothing.
            text = decode_source(data)
        except DecodeError:
            return None
        return SourceFile(self.relpath(path), text, abspath=str(path))

    def module_imports(self, path: str | os.PathLike[str]) -> tuple[ImportRef, ...]:
        """Every import in a file (module level and inside functions), parsed once.

        A file whose bytes match a stored summary (``summaries``, the cache's)
        is not parsed at all: its imports come back from the summary, without
        the AST nodes (``node``/``alias`` None), which only the file being
        checked needs. A file read from disk here leaves its summary in
        ``new_summaries`` for the cache.
        """
        key = str(self._absolute(path))
        found = self._imports.get(key)
        if found is not None:
            return found
        registered = self._sources.get(key)
        if registered is not None:
            found = self._imports[key] = self.imports_of(registered)
            return found
        rel = self.relpath(key)
        stored = self.summaries.get(rel)
        try:
            st = os.stat(key)
        except OSError:
            self._imports[key] = ()
            return ()
        if stored is not None and (stored[0], stored[1]) == (st.st_size, st.st_mtime_ns):
            found = self._from_summary(stored[3])
            if found is not None:
                self._imports[key] = found
                return found
        try:
            data = read_regular(key)
        except OSError:
            self._imports[key] = ()
            return ()
        from contracts.config import content_digest

        digest = content_digest(data)
        if stored is not None and stored[2] == digest:
            found = self._from_summary(stored[3])
        if found is None:
            source = self._decode(Path(key), data)
            found = self.imports_of(source) if source is not None else ()
        self._imports[key] = found
        self.new_summaries[rel] = (st.st_size, _stat_mtime(st), digest, summarise(found))
        return found

    def remember(self, source: SourceFile, size: int, mtime_ns: int, digest: bytes) -> None:
        """Summarise a file the linter has parsed anyway, so no one parses it again.

        Called with the stat and digest the linter read the bytes under; the
        summary goes to ``new_summaries`` (and so to the cache) beside the
        memo, which is what a later chain through the file reads.
        """
        if "tree" not in source.__dict__ or source.tree is None:
            return  # never parse here: a file no contract parsed stays unparsed
        key = str(self._absolute(source.abspath))
        refs = self._imports.get(key)
        if refs is None:
            refs = self._imports[key] = self.imports_of(source)
        rel = self.relpath(key)
        stored = self.summaries.get(rel)
        if stored is None or stored[2] != digest or (stored[0], stored[1]) != (size, mtime_ns):
            import time

            if time.time() - mtime_ns / 1e9 < _RACY_SECONDS:
                mtime_ns = -1
            self.new_summaries[rel] = (size, mtime_ns, digest, summarise(refs))

    def _from_summary(self, raw: tuple) -> tuple[ImportRef, ...] | None:
        """The imports a stored summary describes; None when it is not one (then parse)."""
        try:
            return self._refs_from(raw)
        except (TypeError, ValueError, AttributeError):
            return None

    def _refs_from(self, raw: tuple) -> tuple[ImportRef, ...]:
        refs = []
        for module, names, lineno, level, at_module, guarded, type_checking, dynamic in raw:
            submodules: tuple[str, ...] = ()
            if names and not module.startswith(".") and self.is_first_party(module):
                # Which names are modules is the file system's answer today,
                # not the one stored with the file's bytes.
                submodules = tuple(
                    f"{module}.{name}"
                    for name in names
                    if name != "*" and self.exists(f"{module}.{name}")
                )
            refs.append(
                ImportRef(
                    module,
                    tuple(names),
                    lineno,
                    level,
                    bool(at_module),
                    bool(guarded),
                    bool(type_checking),
                    bool(dynamic),
                    submodules,
                )
            )
        return tuple(refs)

    def imports_of(self, source: SourceFile) -> tuple[ImportRef, ...]:
        """The imports of an in-memory source, resolved against its place in the tree."""
        tree = source.tree
        if tree is None:
            return ()
        return import_refs(tree, source.text, self.package_of(source.abspath), self)

    # -- chains ----------------------------------------------------------

    def import_chain(self, start: str, target: str) -> tuple[str, ...] | None:
        """The shortest chain of import-time imports from ``start`` to ``target``.

        ``("a.b", "a.c", "triton")`` means importing ``a.b`` runs ``import
        a.c``, which runs ``import triton``. Only imports that run when the
        module is imported count: not inside a function, not under ``if
        TYPE_CHECKING:``, not in a ``try`` that survives ``ImportError``.
        Importing a module also runs its ancestors' ``__init__``, so those are
        followed too. Returns None when ``target`` is not reached; a
        third-party module is a dead end, since its source is not ours to read.
        """
        key = (start, target)
        if key in self._chains:
            return self._chains[key]
        parent: dict[str, str | None] = {start: None}
        queue = deque([start])
        found: str | None = None
        while queue and found is None:
            current = queue.popleft()
            known = self._chains.get((current, target), ())
            if known is None:
                continue
            if known:
                found = current
                break
            for nxt in self._import_time_edges(current):
                if within(nxt, target):
                    parent[nxt] = current
                    found = nxt
                    break
                if nxt not in parent and self.is_first_party(nxt):
                    parent[nxt] = current
                    queue.append(nxt)
        if found is None:
            # Everything visited is closed under its edges and none reached the
            # target, so none of them ever will: later questions are free.
            for module in parent:
                self._chains[(module, target)] = None
            return None
        chain: list[str] = []
        node: str | None = found
        while node is not None:
            chain.append(node)
            node = parent[node]
        chain.reverse()
        # A module reached earlier with its own chain: splice that chain's tail on.
        result = tuple(chain) + tuple(self._chains.get((found, target)) or ())[1:]
        for i, module in enumerate(result[:-1]):
            self._chains.setdefault((module, target), result[i:])
        return result

    def _import_time_edges(self, module: str) -> list[str]:
        edges = list(ancestors(module))
        path = self.resolve(module)
        if path is None:
            return edges
        for ref in self.module_imports(path):
            if not ref.runs_at_import:
                continue
            for name in ref.targets:
                edges.extend(ancestors(name))
                edges.append(name)
        return list(dict.fromkeys(edges))


_OUTSIDE = "<outside every src root>"
_RACY_SECONDS = 2


def _stat_mtime(st: os.stat_result) -> int:
    """The mtime to trust next time; -1 when too recent to prove anything (git's racy index)."""
    import time

    return -1 if time.time() - st.st_mtime < _RACY_SECONDS else st.st_mtime_ns


def _dotted_str(path: str, src_roots: tuple[str, ...]) -> str | None:
    """``_dotted`` on normalised absolute strings: the one-file re-check names every
    candidate's module, and pathlib's ``relative_to`` was most of that."""
    for src in src_roots:
        prefix = src if src.endswith(os.sep) else src + os.sep
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) : -len(".py")].split(os.sep)
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts)
        return None
    return _OUTSIDE


def _dotted(path: Path, src_roots: tuple[Path, ...]) -> str | None:
    """Dotted name under the first src root holding ``path``; _OUTSIDE when none does."""
    for src in src_roots:
        try:
            parts = list(path.relative_to(src).with_suffix("").parts)
        except ValueError:
            continue
        if parts and parts[-1] == "__init__":
            parts.pop()
        if parts and all(part.isidentifier() for part in parts):
            return ".".join(parts)
        return None
    return _OUTSIDE
