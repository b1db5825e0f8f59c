"""The project's functions and classes, answered from per-file summaries.

``checkers.analysis.functions`` summarises one module; this is the
project-wide side: which function a call names (through the file's imports,
``self.`` by the class and its bases, ``super().``), a class's bases in
order, a module's summary read from the cache or made from its bytes. Never
by importing: the code checked may not import on this machine at all.

A summary is read the way ``Project.module_imports`` reads an import
summary: the cache's copy while the file's ``(size, mtime)`` -- or failing
that its digest -- is unchanged, otherwise the file is parsed once and its
summary left in ``Project.new_summaries`` for the cache, under the file's
path and ``SUMMARY_KEY`` (one store, two summaries a file). An *outline*
(aliases, classes, signatures) is all a question about a callee's parameters
needs and costs a tenth of the parse; *details* (each body's calls, dicts and
unit forms) are made only for a file a chain or a flow actually enters.

How a call is resolved, what the source spells and nothing else, is
``checkers.analysis.resolution``'s: ``Program`` answers its questions.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import time
from collections import OrderedDict
from pathlib import Path

from ..source import read_regular
from .functions import (
    FORMAT,
    O_QUAL,
    S_ALIASES,
    S_CLASSES,
    S_DETAILS,
    S_FACETS,
    S_OUTLINES,
    S_SELF_SET,
    Outliner,
    body_details,
    facet_of,
)
from .resolution import Resolution

#: A function summary is stored beside the file's import summary under ``path + SUMMARY_KEY``:
#: a path holds no NUL, so the two never collide.
SUMMARY_KEY = "\0functions"
_RACY_SECONDS = 2
_KEPT_TREES = 16
# A function defined at column 0, in a file's bytes.
MODULE_DEF = re.compile(rb"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# Each byte that cannot be part of an identifier, as a space: a file's words are then
# ``data.translate(WORD_BYTES).split()`` (a non-ASCII identifier is searched every file).
WORD_BYTES = bytes(b if chr(b).isalnum() or b == ord("_") else ord(" ") for b in range(256))


def _made(project) -> Program | None:
    """The program made for a project index, if one was."""
    found = getattr(project, "_program", None)
    return found if found is not None and found.project is project else None


def keep_details(project) -> None:
    """The bodies a project index's program worked out, left for the cache (see
    ``Program.keep_details``); nothing when no program was made."""
    found = _made(project)
    if found is not None:
        found.keep_details()


def drop_trees(project) -> None:
    """Let every tree a project index's program holds go (see ``Program.drop_trees``)."""
    found = _made(project)
    if found is not None:
        found.drop_trees()


def program_of(project) -> Program:
    """The one ``Program`` of a project index (made on first use, kept on the index)."""
    found = _made(project)
    if found is None:
        found = Program(project)
        # An index that takes no attributes gets a program per question.
        with contextlib.suppress(AttributeError):
            project._program = found
    return found


class Module:
    """One module's summary, with its functions and classes by qualified name.

    ``lazy`` (an ``Outliner`` over the module's tree) makes a function's details
    when first asked; without it a summary made without details has none.
    """

    __slots__ = (
        "_details",
        "_facets",
        "_lazy",
        "_lines",
        "_text",
        "aliases",
        "classes",
        "functions",
        "name",
        "outlines",
        "path",
        "self_set",
    )

    def __init__(self, name: str, path: str, summary: tuple, lazy=None) -> None:
        self.name = name
        self.path = path  # relative to the project root
        self.aliases: dict[str, str] = dict(summary[S_ALIASES])
        self.classes: dict[str, tuple] = {c[0]: c for c in summary[S_CLASSES]}
        self.outlines: tuple = summary[S_OUTLINES]
        self.functions: dict[str, int] = {o[O_QUAL]: i for i, o in enumerate(self.outlines)}
        stored = summary[S_DETAILS]
        self._details: list | None = list(stored) if stored is not None else None
        found = summary[S_SELF_SET] if len(summary) > S_SELF_SET else None
        self.self_set: frozenset[str] | None = frozenset(found) if found is not None else None
        self._lazy = lazy
        # (index, facet) -> that facet walked alone, for a body whose details are not made
        held = summary[S_FACETS] if len(summary) > S_FACETS else None
        self._facets: dict[tuple[int, str], object] = {(i, f): v for i, f, v in held or ()}
        self._text: str | None = None  # the file being checked's text, for line questions
        self._lines: dict[str, tuple[int, ...]] = {}
        if self._details is None and lazy is not None:
            self._details = [None] * len(self.outlines)

    def lines_mentioning(self, needle: str) -> tuple[int, ...] | None:
        """1-based lines spelling ``needle``; None when the module's text is not at hand."""
        if self._text is None:
            return None
        found = self._lines.get(needle)
        if found is None:
            from .imports import lines_mentioning

            found = self._lines[needle] = lines_mentioning(self._text, (needle,))
        return found

    @property
    def has_details(self) -> bool:
        return self._details is not None

    @property
    def text(self) -> str | None:
        """The text of the file being checked; None for a module known by its summary."""
        return self._text

    def made(self, qual: str, facet: str | None = None) -> bool:
        """Whether a function's details are at hand: made already, or kept by the cache; or,
        where ``facet`` is named, that facet walked alone already."""
        details = self._details
        index = self.functions[qual]
        if details is not None and details[index] is not None:
            return True
        return facet is not None and (index, facet) in self._facets

    def on_disk(self) -> tuple[str, bytes | None] | None:
        """For a module known by its summary, the file and the digest of the bytes the
        summary was made from (None where none was left); None for any other."""
        lazy = self._lazy
        return (lazy.abspath, lazy.digest) if isinstance(lazy, _FileDetails) else None

    @property
    def outliner(self) -> Outliner | None:
        """The outliner over the module's tree, for the file being checked (None otherwise)."""
        return self._lazy if isinstance(self._lazy, Outliner) else None

    def outline(self, qual: str) -> tuple | None:
        index = self.functions.get(qual)
        return None if index is None else self.outlines[index]

    def detail(self, qual: str) -> tuple | None:
        index = self.functions.get(qual)
        if index is None or self._details is None:
            return None
        found = self._details[index]
        if found is None and self._lazy is not None:
            lazy = self._lazy
            found = lazy.detail(index) if isinstance(lazy, Outliner) else lazy.detail(index, self)
            self._details[index] = found
        return found

    def facet(self, qual: str, facet: str):
        """One facet of a function's details (``functions.facet_of``): the details' own where
        they are made, else that facet walked alone and kept. A question that reads one
        field of a body -- which attributes a method assigns a call's result to, whether it
        calls a name at all -- is answered by a walk a fraction of the whole one's cost."""
        index = self.functions.get(qual)
        if index is None:
            return None
        details = self._details
        if details is not None and details[index] is not None:
            return facet_of(details[index], facet)
        key = (index, facet)
        made = self._facets.get(key)
        lazy = self._lazy
        if made is not None or lazy is None:
            return made
        if isinstance(lazy, Outliner):
            made = lazy.facet(index, facet)
        else:
            made = lazy.detail(index, self, facet)
        if made is not None:  # None: not at hand now (unreadable), asked again later
            self._facets[key] = made
        return made

    def summary(self) -> tuple:
        """As the cache stores it: the details made so far, None for a function not asked
        about (a later question about one parses the file), and the facets walked alone of
        bodies whose details were not made."""
        details = self._details
        facets = self._facets_held()
        if details is not None and all(d is None for d in details):
            details = None
        return (
            FORMAT,
            tuple(self.aliases.items()),
            tuple(self.classes.values()),
            self.outlines,
            tuple(details) if details is not None else None,
            tuple(sorted(self.self_set)) if self.self_set is not None else None,
            facets or None,
        )

    def _facets_held(self) -> tuple:
        """``(index, facet, value)`` for each facet walked alone whose details are not made."""
        details = self._details
        return tuple(
            (index, facet, value)
            for (index, facet), value in self._facets.items()
            if details is None or details[index] is None
        )


class _FileDetails:
    """A function's details for a module known by its summary: that function's lines read
    from the file and parsed alone (``body_details``), and only that body walked.

    The module's tree is parsed instead only where it is still among the program's last
    few (no parse at all) or where the body does not parse alone. Walking every body at
    the first question spared later reads at a high price: on vLLM with the bug-class
    kinds, 1,694 of the 1,864 bodies walked so were never asked about. Parsing the whole
    module for each body asked after its tree was let go cost 0.39 s of a two-worker vLLM
    run's CPU (575 bodies asked this way); parsed alone, 0.11 s.
    """

    __slots__ = ("abspath", "digest", "program", "rel")

    def __init__(self, program, rel: str, abspath: str, digest: bytes) -> None:
        self.program, self.rel, self.abspath, self.digest = program, rel, abspath, digest

    def detail(self, index: int, module: Module, facet: str | None = None):
        """The function's details, or only their ``facet`` where one is named."""
        program = self.program
        kept = program._trees.get(self.rel)
        if kept is None or kept[0] != self.digest:
            lines = program._lines(self.rel, self.abspath, self.digest)
            if lines is None:
                return None  # unreadable, or bytes other than the ones the outline is of
            outline = module.outlines[index]
            package = program.project.package_of(self.rel)
            where = f"{self.rel}:{outline[O_QUAL]}"
            found = body_details(lines, outline, module.aliases, package, where, facet)
            if found is not None:
                return found
        outliner = program._outliner(self.rel, self.abspath, self.digest)
        if outliner is None or index >= len(outliner.outlines):
            return None
        return outliner.detail(index) if facet is None else outliner.facet(index, facet)


class Program(Resolution):
    """Questions about the project's functions, each file summarised at most once a run."""

    def __init__(self, project) -> None:
        self.project = project
        self._modules: dict[str, Module | None] = {}
        self._mro: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self._dotted: dict[str, tuple[str, str] | None] = {}
        self._classes: dict[str, tuple[str, str] | None] = {}
        # The last few trees parsed for an outline: a question about a body often follows one
        # about the signature, the linter checks a module soon after a question about it
        # (``tree_for``), and a parse is the expensive half of any of them.
        # path -> (digest, outliner, tree)
        self._trees: dict[str, tuple] = {}
        self._text_of: tuple | None = None  # (path, digest, lines): the last read for a body
        self._of_source: dict[str, tuple[ast.Module, Module]] = {}
        self._scans: dict[tuple, list] = {}
        self._held: dict[tuple, tuple[str, str] | None] = {}
        self._calls: dict[tuple, tuple[str, str] | None] = {}
        self._answering = 0  # resolve_call's depth: an answer kept only at the top
        self._words: dict[bytes, list[str]] | None = None  # word -> files spelling it
        self._defining: dict[bytes, list[str]] | None = None  # name -> files `def`ining it
        # rel -> (InputOrigins, Module) of the callers input-assert's package_callers read
        self.package_analyses: OrderedDict[str, tuple] = OrderedDict()

    # -- summaries -----------------------------------------------------------

    def module(self, name: str) -> Module | None:
        """The summary of a first-party module by dotted name; None when there is none. Its
        bodies' details are read when first asked (``Module.detail``)."""
        if name in self._modules:
            return self._modules[name]
        path = self.project.resolve(name)
        found = self._load(name, path) if path is not None else None
        self._modules[name] = found
        return found

    def module_of_source(self, source) -> Module | None:
        """The summary of the file being checked, from its own tree: made once for every kind
        that asks, each function's details made when first asked, and left for the cache."""
        name = source.module_name or self.project.module_name(source.path) or ""
        tree = source.tree
        if tree is None:
            return None
        made = self._of_source.get(source.path)
        if made is not None and made[0] is tree:
            return made[1]
        outliner = Outliner(tree, self.project.package_of(source.path), source.text)
        found = Module(name, source.path, outliner.summary(details=False), lazy=outliner)
        found._text = source.text
        for _old_tree, old in self._of_source.values():
            # The last file checked lets its tree go (a run keeps summaries, never every
            # tree): a later question about one of its bodies reads the file again.
            old_abspath = os.path.join(self.project.root, old.path)
            old._lazy = _FileDetails(self, old.path, old_abspath, self._stored_digest(old.path))
            old._text = None
            old._lines = {}
        self._of_source = {source.path: (tree, found)}  # only the file being checked
        if name:
            # The same file known by its summary, whose bodies a question about another file
            # walked before it came to be checked (a per-file run's re-check asks a dependent's
            # calls, then checks it): what was made of them goes to the cache before the
            # summary is replaced, or every such run parses them again.
            previous = self._modules.get(name)
            if previous is not None:
                self._keep_bodies(previous)
            self._modules[name] = found
        return found

    def may_import(self, rel: str, modules) -> bool:
        """Whether a file's text spells the last name of one of ``modules`` -- which every
        import of one does (``import a.b.c``, ``from a.b import c``, ``from .c import x``):
        a byte scan, so a file that cannot be reaching them is not parsed to ask."""
        return self.spells(rel, tuple({m.rpartition(".")[2] for m in modules}))

    def spells(self, rel: str, needles) -> bool:
        """Whether the bytes of the file at ``rel`` (under the project root) hold one of
        ``needles``; False when it cannot be read."""
        data = self.project.read_bytes(rel)
        return data is not None and any(n.encode() in data for n in needles)

    def modules_mentioning(self, needles: tuple[str, ...]) -> list[str]:
        """First-party modules whose bytes spell one of ``needles`` (a text scan, no parse)."""
        key = ("mentioning", needles)
        found = self._scans.get(key)
        if found is not None:
            return found
        found = []
        wanted = [n.encode() for n in needles if n]
        if wanted:
            for abspath, data in self._file_bytes():
                if any(n in data for n in wanted):
                    name = self.project.module_name(self.project.relpath(abspath))
                    if name:
                        found.append(name)
        self._scans[key] = found
        return found

    def modules_spelling(self, word: str) -> list[str]:
        """The files (paths under the project root) of first-party modules whose text spells
        ``word`` as a whole word: an index of every file's words, made by one byte scan of
        the tree when first asked (about 1.3 s on vLLM's 3,200 files) and kept for the run."""
        index = self._words
        if index is None:
            index = self._words = {}
            for abspath, data in self._file_bytes():
                rel = self.project.relpath(abspath)
                for found in set(data.translate(WORD_BYTES).split()):
                    held = index.get(found)
                    if held is None:
                        index[found] = [rel]
                    else:
                        held.append(rel)
        if not word.isascii():
            return [self.project.relpath(p) for p in self._files()]
        return index.get(word.encode(), [])

    def modules_defining(self, name: str) -> list[str]:
        """The files of first-party modules with a module-level ``def name`` (a ``def`` at
        column 0, which a string's line can imitate: more files, never fewer), from one
        byte scan of the tree when first asked, kept for the run."""
        index = self._defining
        if index is None:
            index = self._defining = {}
            for abspath, data in self._file_bytes():
                rel = self.project.relpath(abspath)
                for found in set(MODULE_DEF.findall(data)):
                    index.setdefault(found, []).append(rel)
        return index.get(name.encode(), [])

    def _file_bytes(self):
        """Each first-party file's path and bytes, one at a time (one unreadable, or no
        regular file -- a FIFO named like a module would wait for a writer -- is skipped)."""
        for abspath in self._files():
            try:
                data = read_regular(abspath)
            except OSError:
                continue
            yield abspath, data

    def all_modules(self) -> list[str]:
        """Every first-party module under the src roots."""
        names = (self.project.module_name(self.project.relpath(p)) for p in self._files())
        return [n for n in names if n]

    def _files(self) -> list[str]:
        """Every ``.py`` file under the project's src roots (hidden folders and caches skipped)."""
        found = self._scans.get(("files",))
        if found is not None:
            return found
        skip = {"__pycache__", "node_modules", "site-packages", "venv", "build", "dist"}
        found, seen = [], set()
        for top in self.project.src_roots:
            for folder, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d not in skip and not d.startswith("."))
                if folder in seen:
                    continue
                seen.add(folder)
                found.extend(os.path.join(folder, f) for f in sorted(files) if f.endswith(".py"))
        found = list(dict.fromkeys(found))
        self._scans[("files",)] = found
        return found

    def store(self, source) -> None:
        """Leave what is known of the file being checked for the cache (its outline and the
        bodies asked about): a run over other files later asks the same of it, unparsed."""
        made = self._of_source.get(source.path)
        if made is not None and made[0] is source.tree:
            self._store(source, made[1].summary())

    def keep_details(self) -> None:
        """Put the bodies asked about of each module read from disk beside its outline in
        ``new_summaries``. The outline went there when the module was first loaded, without
        bodies; a later run (the CLI's next one, the server's next keystroke, which drops this
        program) asks the same questions of the same bytes and would parse the file again."""
        for module in self._modules.values():
            self._keep_bodies(module)

    def _keep_bodies(self, module) -> None:
        """``keep_details`` for one module known by its summary."""
        new = self.project.new_summaries
        lazy = getattr(module, "_lazy", None)
        if not isinstance(lazy, _FileDetails) or module._details is None:
            return
        made = sum(d is not None for d in module._details)
        facets = len(module._facets_held())
        key = module.path + SUMMARY_KEY
        entry = new.get(key) or self.project.summaries.get(key)
        if made + facets == 0 or entry is None or entry[2] != lazy.digest:
            return  # nothing asked, or bytes other than the ones the outline is of
        held = entry[3][S_DETAILS]
        held_facets = entry[3][S_FACETS] if len(entry[3]) > S_FACETS else None
        held_made = sum(d is not None for d in held) if held is not None else 0
        if held_made >= made and len(held_facets or ()) >= facets:
            return
        new[key] = (entry[0], entry[1], entry[2], module.summary())

    def drop_trees(self) -> None:
        """Let go of every tree held: the last few kept, and any a module's bodies were still
        to be read from (a later question about one of those reads its file again).

        A pool worker calls this before the full collection that ends each chunk of files: a
        collection walks every live object, and a tree is a node per token. With the trees
        held into it, those collections were about a tenth of a vLLM run's CPU with the
        bug-class kinds on (1.4 s of 15 s on two pinned cores). What a run keeps past a chunk
        is its summaries.
        """
        self._trees.clear()
        self._text_of = None
        self._of_source = {}
        for module in self._modules.values():
            if module is not None and isinstance(module._lazy, Outliner):
                abspath = os.path.join(self.project.root, module.path)
                digest = self._stored_digest(module.path)
                module._lazy = _FileDetails(self, module.path, abspath, digest)
                module._text = None
                module._lines = {}

    def _stored_digest(self, rel: str) -> bytes | None:
        """The digest of the bytes a checked file's summary was left for the cache from: its
        text on disk then. None where none was left (an editor's unsaved buffer): a later
        question about one of its bodies then reads whatever the disk holds."""
        entry = self.project.new_summaries.get(rel + SUMMARY_KEY)
        return entry[2] if entry is not None else None

    def _store(self, source, summary: tuple) -> None:
        """Leave a summary of the file being checked for the cache -- when its bytes on disk
        are the text checked (an editor's unsaved buffer is not)."""
        try:
            st = os.stat(source.abspath)
            data = read_regular(source.abspath)
        except OSError:
            return
        from ..source import DecodeError, decode_source

        try:
            if decode_source(data) != source.text:
                return
        except DecodeError:
            return
        from contracts.config import content_digest

        digest = content_digest(data)
        mtime = -1 if time.time() - st.st_mtime < _RACY_SECONDS else st.st_mtime_ns
        key = self.project.relpath(source.abspath) + SUMMARY_KEY
        self.project.new_summaries[key] = (st.st_size, mtime, digest, summary)

    def _load(self, name: str, path: Path) -> Module | None:
        """A module's summary: the cache's while the bytes are unchanged, else made from a
        parse, its outline now and each function's details when first asked."""
        project = self.project
        abspath = str(path)
        rel = project.relpath(abspath)
        key = rel + SUMMARY_KEY
        registered = getattr(project, "_sources", {}).get(abspath)
        if registered is not None and registered.tree is not None:
            outliner = Outliner(registered.tree, project.package_of(rel), registered.text)
            return Module(name, rel, outliner.summary(details=False), lazy=outliner)
        stored = project.summaries.get(key)
        try:
            st = os.stat(abspath)
        except OSError:
            return None
        usable = stored is not None and stored[3][0] == FORMAT
        if usable and (stored[0], stored[1]) == (st.st_size, st.st_mtime_ns):
            found = self._from_stored(name, rel, stored[3], abspath, stored[2])
            if found is not None:
                return found
        try:
            data = read_regular(abspath)
        except OSError:
            return None
        from contracts.config import content_digest

        digest = content_digest(data)
        if usable and stored[2] == digest:
            found = self._from_stored(name, rel, stored[3], abspath, digest)
            if found is not None:
                return found
        outliner = self._outliner(rel, abspath, digest, data)
        if outliner is None:
            return None
        summary = outliner.summary(details=False)
        mtime = -1 if time.time() - st.st_mtime < _RACY_SECONDS else st.st_mtime_ns
        project.new_summaries[key] = (st.st_size, mtime, digest, summary)
        return Module(name, rel, summary, lazy=_FileDetails(self, rel, abspath, digest))

    def tree_for(self, rel: str, digest: bytes) -> ast.Module | None:
        """The tree kept of the bytes ``digest`` at ``rel`` (the linter's, about to parse them)."""
        kept = self._trees.get(rel)
        return kept[2] if kept is not None and kept[0] == digest else None

    def _keep(self, rel: str, entry: tuple) -> None:
        self._trees.pop(rel, None)
        while len(self._trees) >= _KEPT_TREES:
            self._trees.pop(next(iter(self._trees)))
        self._trees[rel] = entry

    def _lines(self, rel: str, abspath: str, digest: bytes | None) -> list[str] | None:
        """A file's lines, for a body parsed alone: the last file's kept, as questions about a
        module's bodies come together; None when unreadable or not the bytes of ``digest``."""
        if self._text_of is not None and self._text_of[:2] == (rel, digest):
            return self._text_of[2]
        data = _read_unchanged(abspath, digest)
        if data is None:
            return None
        from ..source import DecodeError, decode_source

        try:
            # Split where the tokenizer does, as ``SourceFile.lines``: not at form feeds.
            lines = io.StringIO(decode_source(data), newline="").readlines()
        except DecodeError:
            return None
        self._text_of = (rel, digest, lines)
        return lines

    def _outliner(self, rel: str, abspath: str, digest: bytes, data: bytes | None = None):
        """The outliner over a file's tree, parsed at most once while it stays among the last
        few asked for (a tree is ten times its source: a run keeps summaries, not trees)."""
        kept = self._trees.get(rel)
        if kept is not None and kept[0] == digest:
            self._trees[rel] = self._trees.pop(rel)  # most recently used last
            return kept[1]
        if data is None:
            data = _read_unchanged(abspath, digest)
            if data is None:
                return None  # unreadable, or changed since its summary: no details from it
        parsed = self._parse(data, rel)
        if parsed is None:
            return None
        outliner = Outliner(parsed[0], self.project.package_of(rel), parsed[1])
        self._keep(rel, (digest, outliner, parsed[0]))
        return outliner

    @staticmethod
    def _parse(data: bytes, rel: str) -> tuple[ast.Module, str] | None:
        from ..source import DecodeError, decode_source

        try:
            text = decode_source(data)
            return ast.parse(text, filename=rel), text
        except (DecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None

    def _from_stored(self, name: str, rel: str, summary, abspath: str, digest) -> Module | None:
        try:
            details = summary[S_DETAILS]
            whole = details is not None and all(d is not None for d in details)
            lazy = None if whole else _FileDetails(self, rel, abspath, digest)
            return Module(name, rel, summary, lazy=lazy)
        except (TypeError, ValueError, IndexError, KeyError):
            return None  # a stored summary of another shape: parse instead


def _read_unchanged(abspath: str, digest: bytes | None) -> bytes | None:
    """A file's bytes, when it can be read and they are those of ``digest`` (any, for None)."""
    try:
        data = read_regular(abspath)
    except OSError:
        return None
    from contracts.config import content_digest

    if digest is not None and content_digest(data) != digest:
        return None
    return data


__all__ = ["SUMMARY_KEY", "Module", "Program", "drop_trees", "keep_details", "program_of"]
