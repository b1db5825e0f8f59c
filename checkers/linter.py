"""One pass over the files: read once, pre-filter, parse once, check, suppress.

For each file the linter picks the contracts whose ``paths`` cover it and
whose codes are selected; each contract's text pre-filter (``wants``) then
decides whether it needs the tree at all, and the tree is parsed on first
use and shared (``SourceFile.tree``). On the standard library most files
fail every needle and are read but never parsed, which is where the
whole-tree time goes.

Order, per file: contract findings (from the cache for ``CACHEABLE``
contracts, recomputed for the rest) -> ``select``/``ignore`` and
``per-file-ignores`` -> ``# noqa`` suppressions, which add AC901/AC902.
Suppression runs after the cache so a stored result never depends on which
suppressions were used.

Work is spread over a process pool only above ``PARALLEL_THRESHOLD`` files
to check: forking workers and shipping results back costs more than
checking a few dozen files in-process, and the pre-commit path checks a
handful.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from contracts.config import Config
from contracts.contract import Contract
from contracts.finding import Finding

from . import interrupt
from .codes import CHECKER_FAILED, UNCHECKABLE
from .selection import Selection
from .source import DecodeError, SourceFile, read_regular
from .suppression import Directive, apply_suppressions, parse_directives

PARALLEL_THRESHOLD = 200
# Files checked between two runs of the collector, in a pool worker or in this process.
CHUNK_FILES = 64
_PROGRESS_FILES = 1000


class ContractCrash(RuntimeError):
    """Kept for callers that caught it; a contract that raises is now an AC002 finding."""


@dataclass
class FileResult:
    path: str
    findings: list[Finding]
    cache_entry: tuple | None = None  # (size, mtime_ns, digest, findings, directives) to store
    missing: bool = False  # listed (a deleted tracked file) but gone


def uncheckable(path: str, message: str, line: int = 1, column: int = 1) -> Finding:
    return Finding(
        code=UNCHECKABLE,
        contract="",
        kind="builtin",
        path=path,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        message=message,
        span_lines=(line, line),
    )


def checker_failed(path: str, what: str, exc: BaseException) -> Finding:
    """AC002: the checker's own failure on one file, which the rest of the run survives."""
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return Finding(
        code=CHECKER_FAILED,
        contract="",
        kind="builtin",
        path=path,
        line=1,
        column=1,
        end_line=1,
        end_column=1,
        message=(
            f"{what} failed on this file ({type(exc).__name__}{': ' + detail if detail else ''}), "
            "so it is not checked: a bug in atom-contracts, please report it"
        ),
        span_lines=(1, 1),
    )


@contextmanager
def collector_off() -> Iterator[None]:
    """The cyclic collector off for one file's parse and analysis, as it was after.

    A parse allocates a node per token, and each few hundred allocations start
    a collection that walks the young tree again: a quarter of ``ast.parse``'s
    time on the stdlib's large modules, and more than half of it on a
    100,000-line buffer in the language server (0.98 s against 0.42 s alone),
    as much again in the analyses' allocations. An AST holds no cycles and is
    freed by reference count; what the analyses leave in cycles is collected at
    the collector's next run.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def decode(data: bytes) -> str:
    """Source bytes to text the way Python's import reads them; DecodeError where it would not."""
    from .source import decode_source

    return decode_source(data)


class Linter:
    """The checks of one configuration and selection, applied file by file."""

    def __init__(self, config: Config, selection: Selection) -> None:
        self.config = config
        self.selection = selection
        self.contracts: tuple[Contract, ...] = tuple(
            c for c in config.contracts if any(selection.enabled(code) for code in c.codes())
        )
        self._project = None
        self._project_wants: dict[str, bool] = {}
        # Per-file import summaries the cache holds (see Project.module_imports).
        self.summaries: dict[str, tuple] = {}
        # Whether a parsed file's imports are summarised for the cache: a chain through it
        # (a cross-file kind that reads import summaries) is spared a parse later.
        self._cross_file = any(not c.CACHEABLE and c.IMPORT_SUMMARIES for c in self.contracts)

    def unknown(self, codes: set[str]) -> set[str]:
        """The codes among ``codes`` that no rule has (kinds imported only on a miss)."""
        from .rules import matching_no_rule

        return set(matching_no_rule(sorted(codes), {type(c) for c in self.contracts}))

    def project_wants(self, contract: Contract) -> bool:
        wanted = self._project_wants.get(contract.id)
        if wanted is None:
            wanted = self._project_wants[contract.id] = contract.wants_project(self.project)
        return wanted

    def source_changed(self, path: str, source: SourceFile | None) -> None:
        """A long-lived linter (the language server's) hears that one file changed:
        the project index drops what depended on it, and a contract that had no
        business in the project is asked again (the new text may give it one)."""
        if self._project is not None:
            self._project.update(path, source)
        self._project_wants = {k: v for k, v in self._project_wants.items() if v}

    @property
    def project(self):
        if self._project is None:
            from .project import Project

            self._project = Project(self.config.root, self.config.src_roots, self.summaries)
        return self._project

    # -- one file ---------------------------------------------------------

    def applying(
        self, path: str, among: list[Contract] | None = None
    ) -> tuple[list[Contract], tuple[str, ...]]:
        """Contracts that run on ``path`` (scope and selection) and its per-file-ignores.

        ``among``: only these of the linter's contracts are asked (the re-check asks
        every file of the project about its few cross-file contracts, not all of them).
        """
        pfi = self.config.ignored_codes(path)
        out = []
        for c in self.contracts if among is None else among:
            if not c.applies_to(path):
                continue
            if pfi and not any(self.selection.enabled(code, pfi) for code in c.codes()):
                continue
            out.append(c)
        return out, pfi

    def run_contracts(self, source: SourceFile, contracts: Iterable[Contract]) -> list[Finding]:
        findings: list[Finding] = []
        parse_reported = False
        for contract in contracts:
            try:
                wanted = contract.wants(source) and self.project_wants(contract)
            except Exception as exc:
                findings.append(
                    checker_failed(source.path, f"contract `{contract.id}` ({contract.KIND})", exc)
                )
                continue
            if not wanted:
                continue
            if contract.NEEDS_TREE and source.tree is None:
                if not parse_reported:
                    err = source.parse_error
                    line = (err.lineno or 1) if err else 1
                    column = (err.offset or 1) if err else 1
                    from .newer_python import newer_python_note

                    findings.append(
                        uncheckable(
                            source.path,
                            f"cannot be parsed, so contract `{contract.id}` was not checked: "
                            f"{err.msg if err else 'syntax error'}"
                            f"{newer_python_note(err, self.config.pyproject)}",
                            line,
                            max(column, 1),
                        )
                    )
                    parse_reported = True
                continue
            try:
                findings.extend(self._run_one(contract, source))
            except Exception as exc:  # RecursionError on deep code, or a bug in a rule
                findings.append(
                    checker_failed(source.path, f"contract `{contract.id}` ({contract.KIND})", exc)
                )
        return findings

    def _run_one(self, contract: Contract, source: SourceFile) -> list[Finding]:
        project = self.project
        if not source.module_name:
            source._module_name = project.module_name(source.path) or ""
        add = getattr(project, "add_source", None)
        if add is not None:
            add(source)
        # A list, so findings yielded before a failure are kept with its AC002.
        found: list[Finding] = []
        try:
            for finding in contract.check(source, project):
                found.append(finding)
        except Exception as exc:
            found.append(
                checker_failed(source.path, f"contract `{contract.id}` ({contract.KIND})", exc)
            )
        return found

    def _adopt_tree(self, source: SourceFile, digest: bytes) -> None:
        """Give ``source`` the tree a cross-file question parsed of the same bytes moments ago."""
        program = getattr(self._project, "_program", None)
        if program is not None:
            tree = program.tree_for(source.path, digest)
            if tree is not None:
                source.__dict__["tree"] = tree  # the cached property, already answered

    def finalize(
        self,
        path: str,
        raw: list[Finding],
        directives: tuple[Directive, ...],
        pfi: tuple[str, ...],
    ) -> list[Finding]:
        enabled = self.selection.enabled
        kept = [f for f in raw if enabled(f.code, pfi)]
        if directives:
            # A code is "run" here when it is enabled for this file: whether its
            # contract applies, exists, or was misspelled, a suppression of it
            # that hid nothing is stale. Only --select and per-file-ignores,
            # which stop the code from being looked for, keep it quiet.
            ran = {code for d in directives for code in d.codes if enabled(code, pfi)}
            kept = apply_suppressions(
                kept, directives, path=path, ran_codes=ran, unknown_codes=self.unknown(ran)
            )
            kept = [f for f in kept if enabled(f.code, pfi)]
        # One AC001 per file, though the cached and the recomputed pass may each
        # have met the unparsable tree on behalf of a different contract.
        first = next((i for i, f in enumerate(kept) if f.code == UNCHECKABLE), None)
        if first is None:
            return kept
        return [f for i, f in enumerate(kept) if f.code != UNCHECKABLE or i == first]

    def check_text(self, path: str, text: str) -> list[Finding]:
        """One in-memory file, no cache (the flake8 plugin, the fixer)."""
        contracts, pfi = self.applying(path)
        source = SourceFile(path, text, abspath=os.path.join(self.config.root, path))
        with collector_off():
            raw = self.run_contracts(source, contracts)
        return self.finalize(path, raw, parse_directives(text), pfi)

    def check_file(
        self, path: str, abspath: str, entry: tuple | None, *, tree_unchanged: bool = False
    ) -> FileResult:
        """One file on disk, reusing ``entry`` (its cache record) when the file is unchanged.

        ``tree_unchanged`` says the whole tree's stamp matches the cache's, so
        the stored findings of non-CACHEABLE contracts still hold as well.

        The cyclic collector is off while the file is checked. A parse allocates
        a node per token, and each few hundred allocations start a collection
        that walks the young tree again -- a quarter of ``ast.parse``'s time on
        the stdlib's large modules, and as much again in input-assert's index
        of the tree. An AST holds no cycles and is freed by reference count
        when the file's ``SourceFile`` goes, before the collector is back on,
        so nothing it would have found is kept for longer than one file.
        """
        with collector_off():
            return self._guarded(path, abspath, entry, tree_unchanged)

    def _guarded(self, path: str, abspath: str, entry, tree_unchanged: bool) -> FileResult:
        """One file's failure is that file's AC002, never the run's: every other file still reports.

        Contracts' failures are caught where they run, naming the contract; this
        catches the rest (a cache entry of the wrong shape, the suppression pass).
        """
        try:
            return self._check_file(path, abspath, entry, tree_unchanged)
        except Exception as exc:
            if entry is not None:
                # Perhaps the stored entry is what broke: once more from the bytes.
                return self._guarded(path, abspath, None, tree_unchanged)
            return FileResult(path, [checker_failed(path, "the checker", exc)])

    def _check_file(
        self, path: str, abspath: str, entry: tuple | None, tree_unchanged: bool
    ) -> FileResult:
        from .cache import finding_from_tuple, finding_to_tuple

        contracts, pfi = self.applying(path)
        try:
            st = os.stat(abspath)
        except FileNotFoundError:
            if os.path.islink(abspath):  # in the tree, and unreadable: not a file deleted mid-run
                why = f"a symlink to {os.readlink(abspath)}, which does not exist"
                return FileResult(path, [uncheckable(path, f"cannot be read: {why}")])
            return FileResult(path, [], missing=True)
        except OSError as exc:
            return FileResult(path, [uncheckable(path, f"cannot be read: {exc.strerror}")])
        source: SourceFile | None = None
        new_entry = None
        stat_hit = entry is not None and entry[0] == st.st_size and entry[1] == st.st_mtime_ns
        if stat_hit:
            raw_tuples, directive_tuples = entry[3], entry[4]
        else:
            try:
                data = read_regular(abspath)
            except OSError as exc:
                return FileResult(path, [uncheckable(path, f"cannot be read: {exc.strerror}")])
            from contracts.config import content_digest

            digest = content_digest(data)
            if entry is not None and entry[2] == digest:
                raw_tuples, directive_tuples = entry[3], entry[4]
            else:
                try:
                    text = decode(data)
                except DecodeError as exc:
                    raw_tuples = (finding_to_tuple(uncheckable(path, f"cannot be decoded: {exc}")),)
                    directive_tuples = ()
                else:
                    source = SourceFile(path, text, abspath=abspath)
                    self._adopt_tree(source, digest)
                    raw = self.run_contracts(source, [c for c in contracts if c.CACHEABLE])
                    raw_tuples = tuple(finding_to_tuple(f) for f in raw)
                    directive_tuples = tuple(d.as_tuple() for d in parse_directives(text))
                    if self._cross_file:
                        # Parsed anyway: its imports, summarised now, spare a
                        # chain through it (here or in a later local run) a parse.
                        self.project.remember(source, st.st_size, st.st_mtime_ns, digest)
            new_entry = (st.st_size, st.st_mtime_ns, digest, raw_tuples, directive_tuples)
        raw = [finding_from_tuple(t) for t in raw_tuples]
        volatile = [c for c in contracts if not c.CACHEABLE]
        if volatile:
            if tree_unchanged and stat_hit and entry[5] is not None:
                tree_tuples = entry[5]
            else:
                tree_raw: list[Finding] = []
                digest = (new_entry or entry)[2]
                if source is None:
                    try:
                        source = SourceFile(path, decode(read_regular(abspath)), abspath=abspath)
                        self._adopt_tree(source, digest)
                    except (OSError, DecodeError):
                        source = None  # already reported as AC001 by the cached pass
                if source is not None:
                    tree_raw = self.run_contracts(source, volatile)
                    if self._cross_file:
                        self.project.remember(source, st.st_size, st.st_mtime_ns, digest)
                tree_tuples = tuple(finding_to_tuple(f) for f in tree_raw)
                base = new_entry or entry[:5]
                new_entry = (*base, tree_tuples)
            raw.extend(finding_from_tuple(t) for t in tree_tuples)
        directives = tuple(Directive(*d) for d in directive_tuples)
        findings = self.finalize(path, raw, directives, pfi)
        return FileResult(path, findings, new_entry)

    # -- many files -------------------------------------------------------

    def check_files(
        self,
        files: list[tuple[str, str]],
        *,
        cache=None,
        jobs: int | None = None,
        progress: bool = False,
        stamp: str | None = None,
    ) -> list[FileResult]:
        """Check ``files``; ``stamp`` is the tree stamp when they cover every src root."""
        entries = cache.entries if cache is not None else {}
        unchanged = cache is not None and stamp is not None and cache.stamp == stamp
        if cache is not None:
            self.use_summaries(cache.summaries)
        results: list[FileResult] = []
        todo = files
        if entries:
            # Files the cache answers outright are cheaper here than a worker's
            # round trip; only the rest decide whether a pool is worth starting.
            todo = []
            for rel, abspath in files:
                interrupt.check()
                if self._answered(rel, abspath, entries.get(rel), unchanged):
                    results.append(
                        self.check_file(rel, abspath, entries[rel], tree_unchanged=unchanged)
                    )
                else:
                    todo.append((rel, abspath))
        if len(todo) >= PARALLEL_THRESHOLD and jobs is None:
            from .pool import available_cpus

            jobs = available_cpus()
        if jobs is not None and jobs > 1 and len(todo) >= PARALLEL_THRESHOLD:
            from .pool import check_parallel

            results.extend(check_parallel(self, todo, entries, jobs, progress, unchanged))
        else:
            results.extend(self._check_serial(todo, entries, unchanged, progress))
        if cache is not None:
            for r in results:
                if r.cache_entry is not None:
                    cache.put(r.path, *r.cache_entry)
            self.save_summaries(cache)
            # Findings of non-CACHEABLE contracts now stored were computed under
            # this stamp; a partial run (no stamp) leaves nothing to vouch for them.
            cache.set_stamp(stamp if any(not c.CACHEABLE for c in self.contracts) else None)
        return results

    def _check_serial(self, todo, entries, unchanged: bool, progress: bool) -> list[FileResult]:
        """``todo`` in this process, ``CHUNK_FILES`` at a time with the collector off.

        Between files the collector would walk what the program holds past a file -- the
        trees it keeps for the next question -- each time it ran; after a chunk those trees
        are let go first (``end_chunk``), as in a pool worker.
        """
        results: list[FileResult] = []
        for start in range(0, len(todo), CHUNK_FILES):
            with collector_off():
                for index, (rel, abspath) in enumerate(todo[start : start + CHUNK_FILES], start):
                    interrupt.check()  # a Ctrl-C a callback dropped ends the run here
                    results.append(
                        self.check_file(rel, abspath, entries.get(rel), tree_unchanged=unchanged)
                    )
                    if progress and (index + 1) % 200 == 0:
                        report_progress(index + 1, len(todo))
                self.end_chunk()
        if progress:
            report_progress(len(todo), len(todo), final=True)
        return results

    def end_chunk(self) -> None:
        """A chunk of files checked: the bodies the program worked out go beside its outlines
        for the cache, and every tree it holds is let go before the collector next runs (a
        collection walks every live object, and a tree is a node per token)."""
        if self._project is not None:
            from .analysis.program import drop_trees, keep_details

            keep_details(self._project)
            drop_trees(self._project)

    def use_summaries(self, summaries: dict[str, tuple]) -> None:
        """Read import summaries from ``summaries`` (the cache's) instead of parsing."""
        self.summaries = summaries
        if self._project is not None:
            self._project.summaries.update(summaries)

    def save_summaries(self, cache) -> None:
        """Hand the summaries worked out in this process (and its workers) to the cache."""
        if self._project is not None:
            from .analysis.program import keep_details

            keep_details(self._project)
        if self._project is not None and self._project.new_summaries:
            cache.put_summaries(self._project.new_summaries)
            self._project.new_summaries = {}

    def _answered(self, rel: str, abspath: str, entry: tuple | None, unchanged: bool) -> bool:
        """Whether the cache holds this file's whole result: same stat, and nothing to recompute."""
        if entry is None:
            return False
        try:
            st = os.stat(abspath)
        except OSError:
            return False
        if (entry[0], entry[1]) != (st.st_size, st.st_mtime_ns):
            return False
        if unchanged and entry[5] is not None:
            return True
        return all(c.CACHEABLE for c in self.applying(rel)[0])


def report_progress(checked: int, total: int, *, final: bool = False) -> None:
    sys.stderr.write(f"\ratom-contracts: {checked}/{total} files")
    if final:
        sys.stderr.write("\n")
    sys.stderr.flush()


def wants_progress(files: int) -> bool:
    """Progress only where a person is watching and the wait is long enough to wonder."""
    return files >= _PROGRESS_FILES and sys.stderr.isatty()
