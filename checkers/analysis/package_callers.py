"""Who calls a module-level function anywhere in the package, and with what.

``callers.HelperCallers`` reads a private helper's callers in its own module;
a public function's callers are elsewhere, so by the letter its parameter is
the caller's. The labelling policy the rule is measured against
(``bench/label_asserts.py``) reads it the other way once every caller is
found: a kernel whose every call site in the package hands it a buffer the
caller allocated, a literal, or a value the caller tested first restates its
callers when it asserts that value. This answers the question the policy asks,
from the source and nothing else:

* the files that may call ``f`` are the package's files spelling the word
  ``f`` (``Program.modules_spelling``: one byte scan of the tree, made when the
  first question comes);
* in each, every reference to the function -- ``f`` bound by an import of it
  (or of a package re-exporting it), ``mod.f`` on an imported module, ``f`` in
  its own module -- must be the callee of a call. A reference that is not
  (``register(f)``, ``partial(f, ...)``, ``kernel[grid]``) hands the function to
  callers nobody can list, and the answer is "not every caller is found";
* each call's argument for the parameter is read by the same rule in the
  caller's module, with that module's own in-module reading; where the caller
  hands on its own parameter, that parameter is asked of the caller's callers
  in turn, as many levels deep as the rule asks (past the last level, a
  caller's parameter is input).

An attribute call on an object the file does not import (``self.ops.f(x)``) is
taken to be some other object's method, and a name looked up by a string
(``getattr(mod, "f")``) is not seen: the two ways this can miss a caller.
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict

from .names import dotted
from .scopes import Scope, within
from .shapes import argument_for

# `from pkg import (\n    a,\n    f,\n)`: the names of an import spread over lines.
_PARENTHESISED_IMPORT = re.compile(rb"import[ \t]*\([^)]*\)")
_UNSURE = object()  # a reference that may or may not name the function
# Callers' analyses kept for the run, up to this many bytes of their source (about 20
# times that in memory: a module's tree and its index). The kernels of one folder share
# their callers, and which folder comes next is the file order's, not the callers', so a
# small cache re-parsed: on vLLM's package, eight modules kept made 5,048 parses in a
# serial run and 47.6 s of CPU in two workers; every one kept, 2,855 and 31.0 s, with a
# lower peak (740 MB a worker against 1.1 GB: re-parsed trees were garbage to collect).
_KEPT_BYTES = 32 * 2**20


class PackageCallers:
    """The call sites of a module's functions across the package, for ``InputOrigins``.

    ``program`` is the run's ``Program``, ``module_name`` and ``summary`` the
    checked module's dotted name and its outline (``Program.module_of_source``),
    ``inputs`` the rule's configured input names (a caller's module is read
    with them too), ``levels`` how many levels of callers are asked (the rule's
    ``CALLER_LEVELS``).
    """

    def __init__(
        self, program, module_name: str, summary, inputs: frozenset[str], levels: int
    ) -> None:
        self.program = program
        self.module_name = module_name
        self.summary = summary
        self.inputs = inputs
        self.levels = levels
        self._above: dict[str, PackageCallers] = {}
        self._sites: dict[tuple[str, str], list | None] = {}
        # rel -> (origins, module summary): kept on the program, so the callers read for
        # one checked file serve the next.
        self._analyses: OrderedDict[str, tuple] = program.package_analyses

    def sites(self, own, func: Scope, name: str) -> list[tuple] | None:
        """``(caller's origins, call, caller scope, argument)`` for every call in the package
        of the module-level function ``func``, the argument None where a call leaves the
        parameter at its default; None when some reference to the function is not a call,
        when nothing calls it, or when ``func`` is not a module-level function. ``own`` is
        the checked module's ``InputOrigins``: its calls are read with it."""
        if func.parent is not None or func.klass is not None or not self.module_name:
            return None
        fname = func.name
        if fname not in self.summary.functions:
            return None  # defined under an `if` or twice: which one a call reaches is unsure
        key = (fname, name)
        if key in self._sites:
            return self._sites[key]
        self._sites[key] = None
        calls = self._calls(own, func)
        found = None
        if calls:
            node_args = func.node.args
            positional = [a.arg for a in [*node_args.posonlyargs, *node_args.args]]
            arg = func.params[name]
            found = [
                (
                    origins,
                    call,
                    caller,
                    argument_for(call, arg, positional, node_args, func),
                    summary,
                )
                for origins, call, caller, summary in calls
            ]
        self._sites[key] = found
        return found

    def _calls(self, own, func: Scope) -> list[tuple] | None:
        """Every call of ``func`` in the package, with the caller's origins and scope; None
        when a reference to it is not a call."""
        fname = func.name
        target = (self.module_name, fname)
        out: list[tuple] = []
        imported_from = self.module_name.rpartition(".")[2].encode()
        for rel in self.program.modules_spelling(fname):
            if rel == self.summary.path:
                origins, summary = own, self.summary
            else:
                if not self._may_reach(rel, fname, imported_from):
                    continue
                made = self._analysis(rel)
                if made is None:
                    return None  # a file spelling it that does not parse: unsure
                origins, summary = made
            # `from pkg.kernels import launch as go` calls it `go` in that file.
            spelled = [fname] + [
                local
                for local, held in summary.aliases.items()
                if local != fname
                and held.rpartition(".")[2] == fname
                and self.program.dotted(held) == target
            ]
            for word in spelled:
                callers = {id(call): caller for call, caller in origins.calls_of(word)}
                for ref, parent in _references(origins.tree, word, origins._source):
                    named = self._names(summary, ref, origins._source)
                    if named is _UNSURE:
                        return None  # `from pkg import *` may have bound it
                    if named != target:
                        continue
                    if not (isinstance(parent, ast.Call) and parent.func is ref):
                        return None  # handed on as a value: its callers cannot be listed
                    if id(parent) not in callers:
                        return None
                    caller = callers[id(parent)]
                    if within(caller, func):
                        continue  # a recursive call hands on what the function already had
                    out.append((origins, parent, caller, summary))
        return out or None

    def above(self, summary) -> PackageCallers | None:
        """The callers of a caller's own functions, one level further up; None at the last."""
        if self.levels <= 1 or not summary.name:
            return None
        found = self._above.get(summary.name)
        if found is None:
            found = PackageCallers(
                self.program, summary.name, summary, self.inputs, self.levels - 1
            )
            self._above[summary.name] = found
        return found

    def _names(self, summary, ref: ast.AST, source) -> tuple[str, str] | object | None:
        """The project function a reference names, through the file's imports; ``_UNSURE``
        for a bare name the file's own imports do not bind where it imports ``*``."""
        spelled = dotted(ref)
        if not spelled:
            return None
        head, _, rest = spelled.partition(".")
        if summary.name == self.module_name and not rest and head in summary.functions:
            return (self.module_name, head)
        target = summary.aliases.get(head)
        if target is None:
            if not rest and source is not None and "import *" in source.text:
                return _UNSURE
            return None  # a local, a parameter, an attribute of some object
        return self.program.dotted(f"{target}.{rest}" if rest else target)

    def _may_reach(self, rel: str, fname: str, imported_from: bytes) -> bool:
        """Whether a file spelling ``fname`` can be naming this module's function, by its
        bytes: a file that names the function's module, imports something spelled
        ``fname`` (a re-export) or imports everything from somewhere may; another binds
        ``fname`` to something else, or only mentions it."""
        data = self.program.project.read_bytes(rel)
        if data is None:
            return True
        if imported_from in data or b"import *" in data:
            return True
        word = fname.encode()
        if any(word in found.group() for found in _PARENTHESISED_IMPORT.finditer(data)):
            return True
        return any(b"import" in line and word in line for line in data.splitlines())

    def _analysis(self, rel: str) -> tuple | None:
        made = self._analyses.get(rel)
        if made is not None:
            self._analyses.move_to_end(rel)  # the most recently asked goes last: kept longest
            return made
        from .origins import InputOrigins

        program = self.program
        name = program.project.module_name(rel)
        summary = program.module(name) if name else None
        source = program.project.read_source(rel)
        if source is None or summary is None:
            return None
        # The outline was just made from a parse of these bytes, most often: its tree serves.
        from contracts.config import content_digest

        tree = program.tree_for(rel, content_digest(source.text.encode()))
        if tree is not None:
            source.__dict__["tree"] = tree  # the cached property, already answered
        tree = source.tree
        if tree is None:
            return None
        made = (InputOrigins(tree, self.inputs, source), summary)
        # Summed afresh on each parse (a few hundred lengths beside a parse of a module).
        kept = len(source.text) + sum(len(o._source.text) for o, _ in self._analyses.values())
        while self._analyses and kept > _KEPT_BYTES:
            _, (dropped, _) = self._analyses.popitem(last=False)  # the least recently asked
            kept -= len(dropped._source.text)
        self._analyses[rel] = made
        return made


def _references(tree: ast.Module, word: str, source) -> list[tuple[ast.AST, ast.AST | None]]:
    """Each ``Name`` spelled ``word`` and each ``.word`` attribute, with its parent, walking
    only the statements whose lines spell the word."""
    lines = None
    if source is not None and word.isascii():
        from .imports import lines_mentioning

        lines = frozenset(lines_mentioning(source.text, (word,)))
    out: list[tuple[ast.AST, ast.AST | None]] = []
    stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
    while stack:
        node, parent = stack.pop()
        if lines is not None and hasattr(node, "lineno"):
            end = node.end_lineno or node.lineno
            if not any(node.lineno <= line <= end for line in lines):
                continue
        if (isinstance(node, ast.Name) and node.id == word) or (
            isinstance(node, ast.Attribute) and node.attr == word
        ):
            out.append((node, parent))
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return out
