"""One module's functions, summarised as plain tuples a cross-file question can read.

Three contract kinds follow a value or a call out of the file being checked:
``reachable-calls`` walks the project's call graph from an entry to a
forbidden call, ``published-keys`` asks which keys a dict's producer publishes
on each of its return paths, and ``units`` asks what unit a callee's
parameter is declared in and what unit it returns. None of them may import
the code, and none can afford to parse every file a chain passes through more
than once: so each file is read once into a *summary* -- built from the AST
here, kept by the cache beside the file's import summary
(``checkers.cache``), and read back without a parse while the file's bytes
are unchanged. ``checkers.analysis.program`` answers the project-wide
questions from the summaries.

A summary holds what depends on the file's bytes alone, as tuples of str, int
and bool (marshal-able):

* the file's import aliases (``import a.b as c`` binds ``c`` to ``a.b``;
  relative imports resolved against the file's package), wherever they sit;
* its classes, by qualified name (``Outer.Inner``), with their bases and
  decorators as spelled, aliases resolved (``torch.nn.Module``);
* its functions (``f``, ``C.m``, ``C.m.inner``), each with its line, its
  parameters, its decorators, and:

  - **calls**: every call in its body (not in a nested ``def``, which is a
    function of its own), as the callee is spelled with the head resolved
    through the aliases -- ``torch.cuda.synchronize``, ``self.stage``,
    ``super().build``, ``?.item`` for a method of a value with no name
    (``x[0].item()``) -- its position and keyword names;
  - **dict paths**: for each ``return`` of a dict this function built -- a
    literal, ``dict(k=...)``, ``{}`` filled by ``d[k] = v``, ``d.update``,
    ``d.setdefault`` -- the keys it publishes on every path to that return,
    the keys only some paths publish (with the line that sets each), whether
    the key set is *open* (a ``**spread``, a computed key, an ``update`` from
    another mapping: any key may be there), and the calls the dict was
    handed to, which may fill it (resolved by the reader, through the
    callee's own fills);
  - **fills**: the keys the function writes into a dict it was handed as a
    parameter, and whether it writes them on every path;
  - **carriers**: attributes assigned a call's result (``self.meta =
    self._build_meta()``), so a read of ``x.meta["k"]`` elsewhere can find
    the dict's producer;
  - **unit forms**: each ``return`` expression as a small tree of names,
    calls and arithmetic, which a ``units`` contract evaluates under its own
    vocabulary (the summary does not know the vocabulary; the cache keeps it
    once for every declaration), and each parameter bound unchanged to a
    name (``self.num_blocks = n``), which is what an undeclared parameter's
    unit is inferred from;

The walk of a body lives beside this module: ``function_walk`` (its statements, expressions
and calls), ``dict_paths`` (the dicts it builds) and ``unit_forms`` (its returns as unit forms,
and which values are evidently host ints).

A question that reads one field of a body's details asks that *facet* alone (``FACETS``: its
carriers; the last names of its calls), walked by a walk that visits the same statements in
the same order and records only that field -- a sixth of the whole walk's cost for carriers,
two fifths for the names called. A facet so walked is kept beside the details in the summary,
for a body whose details were not made.

What is not followed: a value stored in a container and read back, a dict
built by a comprehension (open), anything reached through ``getattr`` or a
string. A summary is a sound over-approximation only where it says *open*;
elsewhere it is what the code spells.
"""

from __future__ import annotations

import ast
import re

# Bumped when the tuple shapes change; the cache key digests this module's bytes anyway.
FORMAT = 4

# Indices of a function's outline: what its ``def`` says.
O_QUAL, O_LINE, O_COL, O_END, O_PARAMS, O_SELF, O_DECORATORS, O_KWONLY, O_CLASS = range(9)
# ... and the parameters whose default a callee's test can be decided by, with what it binds
# (``(("check", False), ("strict", None))``: ``function_walk._bound``).
O_DEFAULTS = 9
# Indices of a function's details: what its body does.
D_CALLS, D_DICTS, D_FILLS, D_CARRIERS, D_UNITS, D_READS, D_GUARDS = range(7)

# The facets of a function's details a question may ask alone (``facet_of``): its carriers
# (``D_CARRIERS``), and the last names of its calls' spellings (``item`` for
# ``x.item()``), which tell which functions a body may call without its calls' details.
F_CARRIERS, F_CALLED = "carriers", "called"
FACETS = (F_CARRIERS, F_CALLED)


def facet_of(details: tuple, facet: str):
    """A facet of a function's whole details, as ``_Summariser.facet`` walks it alone."""
    if facet == F_CARRIERS:
        return details[D_CARRIERS]
    if facet == F_CALLED:
        return frozenset(c[C_SPELLING].rpartition(".")[2] for c in details[D_CALLS])
    raise ValueError(f"facet: {facet!r} is none of {FACETS}")


# Indices of a ``[]`` read of a string key: where the dict comes from (``origin_of``), the key,
# its position, whether a ``try`` that catches ``KeyError`` is around it, and the tests it
# runs under: ``((line, column), holds, eq)`` each, the test's place in the function (one
# evaluation: its ``if``'s two ways are exclusive) and the truth the read needs, ``eq``
# ``(subject, constant, True)`` for ``subject == constant`` (``False`` for ``!=``), else None.
R_KIND, R_ORIGIN, R_KEY, R_LINE, R_COL, R_END_LINE, R_END_COL, R_TRY, R_CONDS = range(9)

# Indices of a call site's fields.
C_SPELLING, C_LINE, C_COL, C_END_LINE, C_END_COL, C_KEYWORDS, C_NARGS, C_ORIGINS = range(8)
# ... the arguments (positions, keyword names) that are evidently host ints (``3``,
# ``int(n)``, a parameter annotated ``int``, a local bound to one), whether the callee
# is spelled through an imported module (``torch.repeat_interleave``, not ``x.repeat_...``),
# and where its receiver's data lives: True for a name the function has shown to be on the
# host (after ``if x.device.type != "cpu": return``), else the names a local receiver was
# computed from (``FunctionWalker._computed_from``), else False.
C_INTS, C_MODULE, C_HOST = 8, 9, 10
# ... the arguments written as a literal a test can be decided by -- ``True``, ``None``, an
# int, a string ((position or keyword, value)) -- or ``NOT_NONE`` for one whose form says
# only that it is not None (``lens.cpu()``, ``n + 1``, a display),
# and the parameters whose value decides whether the call runs (``if use_ragged:`` around
# it: ``("use_ragged", True)``; its ``else``: ``False``).
C_CONSTS, C_GUARDS = 11, 12
# A bound value known not to be None and nothing more: it decides ``p is None`` and no other
# test. Ellipsis, which a summary keeps (marshal), and which is not None as a literal too.
NOT_NONE = ...

# What a carrier's attribute holds (its last field): a call's result; the value itself (a
# function's reference, spelled as a call of it would be, or ``?``); or a function installed
# as the object's own method (``w.plan = partial(fast_plan, w)``), its first parameter bound.
K_RESULT, K_HELD, K_INSTALLED = 0, 1, 2
# A tensor's methods whose result is host data (a method called on it reads no device), and
# the name a local computed from such a copy records as its source (``C_HOST``).
HOST_COPIES = ("cpu", "numpy", "tolist", "item")
HOST_COPY = "cpu()"
# The source a host *tensor* records instead -- ``.cpu()``, ``.to("cpu")``, a constructor
# told ``device="cpu"`` or no device -- which, unlike a number or a list, stays where it is
# when it is added to in place (``t += x``). Neither spelling can be a name, so neither is
# taken for one.
HOST_TENSOR = "tensor(cpu)"
# The calls that install a function as an object's own method, the object their second
# argument: `functools.partial(f, obj)`, `types.MethodType(f, obj)`.
INSTALLERS = ("partial", "MethodType")


def _defaults(positional: list[str], args: ast.arguments) -> tuple:
    """``O_DEFAULTS``: each parameter whose default binds a value, with that value."""
    from .function_walk import _FREE, _bound  # which imports this module

    named = [*zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)]
    named += [(a.arg, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    return tuple((name, value) for name, d in named if (value := _bound(d)) is not _FREE)


def positional_params(outline: tuple) -> list[str]:
    """A function's positional parameters, in order: ``O_PARAMS`` less its ``*args``."""
    return [p for p in outline[O_PARAMS] if not p.startswith("*")]


def self_bound(outline: tuple, spelling: str, qual: str) -> int:
    """How many of ``positional_params(outline)`` a call spelled ``spelling`` of the function
    ``qual`` binds before its own arguments: the ``self`` of a method called on an object
    (``x.m(...)``) or of the ``__init__`` a class's call runs (``Cls(...)``), else none."""
    return 1 if outline[O_SELF] and ("." in spelling or qual.endswith(".__init__")) else 0


# A dict path: (return line, origin line, definite keys, maybe keys ((key, line), ...),
# open, fills ((callee spelling, argument position or keyword, certain), ...)).
P_LINE, P_ORIGIN, P_DEFINITE, P_MAYBE, P_OPEN, P_FILLS = range(6)

UNKNOWN = "?"
_MAX_FORM_NODES = 24  # a unit form larger than this is unknown: nobody reads such a return

# Methods of a dict that neither add nor remove keys.
_READ_ONLY_METHODS = frozenset(
    {"get", "items", "keys", "values", "copy", "__contains__", "__getitem__", "__len__"}
)


def summarise_module(
    tree: ast.Module, package: str | None, *, details: bool = True, text: str | None = None
) -> tuple:
    """The summary of one parsed module (see the module docstring for its shape).

    ``package`` is the package its relative imports resolve against (its own
    name for an ``__init__``, its parent's otherwise); None outside a src root.
    Without ``details`` only the outline is made -- aliases, classes, each
    function's signature -- a walk of the statements that define things, which
    is all a question about a callee's parameters needs and costs a tenth of
    the parse; ``details`` walks every function body as well (calls, dicts,
    units), about as long again as the parse.
    """
    return Outliner(tree, package, text).summary(details=details)


class Outliner:
    """A module's outline, with each function's details made on demand from the tree.

    The file being checked keeps one while it is checked: a kind asks for the
    details of the functions it reads (an entry, a function holding a dict
    read), and the rest of the module's bodies are never walked.
    """

    def __init__(self, tree: ast.Module, package: str | None, text: str | None = None) -> None:
        self._builder = _Summariser(package)
        if text is not None:
            # A function's body is walked for nested definitions only where one is spelled.
            from .imports import lines_mentioning

            self._builder.def_lines = lines_mentioning(text, ("def ", "class "))
        self._builder.body(tree.body, prefix="", klass=None, module_level=True)
        self.outlines = tuple(self._builder.outlines)
        self.aliases = tuple(self._builder.aliases.items())
        self.classes = tuple(self._builder.classes)
        # The attributes some method assigns on `self` (a regular expression over the text,
        # so a superset): a question about what `self.x` holds skips a module not naming x.
        self.self_set = None if text is None else self_assigned(text)

    def detail(self, index: int) -> tuple:
        return self._builder.details(self._builder.nodes[index])

    def facet(self, index: int, facet: str):
        """One facet of a function's details (``facet_of``), walked alone."""
        return self._builder.facet(self._builder.nodes[index], facet)

    def node(self, index: int):
        """The ``def`` statement of the function at ``index`` of ``outlines``."""
        return self._builder.nodes[index][0]

    def reads(self, index: int, lines: frozenset[int]) -> tuple[tuple, frozenset[str]]:
        """A function's ``[]`` reads of string keys and the keys it guards, read only from the
        statements on ``lines`` (those spelling a read) and its assignments: what a reader's
        check needs, at a fraction of the body's details."""
        from .function_walk import FunctionWalker  # which reads this module's constants

        node, outline, inherited = self._builder.nodes[index]
        positional = positional_params(outline)
        walker = FunctionWalker(self._builder, node, outline[O_SELF], positional)
        if inherited:
            walker.shadowed.discard(outline[O_SELF])
        walker.read_only(lines)
        return tuple(walker.reads), frozenset(walker.guards)

    def spell(self, func: ast.AST, shadowed) -> str:
        """A callee as the summary spells it: its head resolved through the module's imports."""
        return self._builder.spell(func, shadowed) or UNKNOWN

    def summary(self, *, details: bool) -> tuple:
        found = tuple(self.detail(i) for i in range(len(self.outlines))) if details else None
        return (FORMAT, self.aliases, self.classes, self.outlines, found, self.self_set)


def body_details(
    lines: list[str],
    outline: tuple,
    aliases,
    package: str | None,
    filename: str = "<unknown>",
    facet: str | None = None,
):
    """One function's details from its own lines alone, as ``Outliner.detail`` makes them
    from the module's tree (only its ``facet``, as ``Outliner.facet`` does, when one is
    named); None where its lines do not parse to that function alone.

    What a function's details read beyond its body is the module's imports (``aliases``,
    in its summary) and its package: so a question about one body of a module known by
    its summary parses that body (a tenth of a module, often far less), not the module.
    Its lines keep their numbers (blank lines before them) and their columns: an indented
    ``def`` is parsed under an ``if 1:`` on the line above it, which an indented ``def``
    always has (its own line is a logical line's first: no compound statement follows a
    colon or a semicolon). ``filename`` names the parse, as ``path:qualified name``.
    """
    first, col, end = outline[O_LINE], outline[O_COL], outline[O_END]
    if not 1 <= first <= end <= len(lines):
        return None
    # Blank lines up to the `def`'s own: one fewer and an `if 1:` where it is indented.
    above = "\n" * (first - 2) + "if 1:\n" if col else "\n" * (first - 1)
    text = above + "".join(lines[first - 1 : end])
    try:
        tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = tree.body[0] if tree.body else None
    if col and type(node) is ast.If and len(node.body) == 1:
        node = node.body[0]
    name = outline[O_QUAL].rpartition(".")[2]
    if (
        type(node) not in (ast.FunctionDef, ast.AsyncFunctionDef)
        or len(tree.body) != 1
        or (node.name, node.lineno, node.col_offset) != (name, first, col)
    ):
        return None
    summariser = _Summariser(package)
    summariser.aliases = dict(aliases)
    # A nested function's `self` is its enclosing method's when no parameter names it.
    inherited = bool(outline[O_SELF]) and outline[O_SELF] not in outline[O_PARAMS]
    entry = (node, outline, inherited)
    return summariser.details(entry) if facet is None else summariser.facet(entry, facet)


# Indices of a module summary's fields.
S_FORMAT, S_ALIASES, S_CLASSES, S_OUTLINES, S_DETAILS, S_SELF_SET = range(6)
# ... and, where a question walked a facet of a body whose details were not made, those
# facets: ((function index, facet, value), ...); None where there are none.
S_FACETS = 6
# After an assignment target's attribute: blanks, continuations, brackets closed, a comment
# (to its line's end: a line of `#`s is not cut every way), then `=` or an annotation's `:`.
AFTER_TARGET = r"(?!\w)(?:[\s\\)]|#[^\r\n]*(?![^\r\n]))*(?::|=(?!=))"
# `self.<attr>` before an `=` or an annotation's `:`, every way Python lets an assignment spell
# it: blanks, continuations and brackets closed between `self` and the dot (`(self).x`,
# `self \<newline> .x`), blanks after the dot, and `AFTER_TARGET`. A superset (`x[self.a:]`
# reads `a`): a module none of whose lines spells `self.a` so assigns no `self.a`. A literal
# first, so the scan jumps from one `self` to the next.
_SELF_SET = re.compile(r"self(?<!\wself)[\s\\)]*\.[\s\\]*(\w+)" + AFTER_TARGET)


def self_assigned(text: str) -> tuple[str, ...]:
    """The attributes ``text`` may assign on ``self`` (``_SELF_SET``), sorted; identifiers
    read as Python reads them, NFKC-normalised (a fullwidth letter is its ASCII one)."""
    if not text.isascii():
        import unicodedata

        text = unicodedata.normalize("NFKC", text)
    return tuple(sorted(set(_SELF_SET.findall(text))))


class _Summariser:
    def __init__(self, package: str | None) -> None:
        self.package = package
        self.aliases: dict[str, str] = {}
        self.classes: list[tuple] = []
        self.outlines: list[tuple] = []
        self.nodes: list[tuple] = []  # (def node, outline, closure)
        self.def_lines: tuple[int, ...] | None = None  # lines spelling `def `/`class `

    # -- imports -------------------------------------------------------------

    def imported(self, node, into: dict[str, str]) -> None:
        """The names an import statement binds, into ``into``."""
        if type(node) is ast.Import:
            for alias in node.names:
                if alias.asname:
                    into[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    into[head] = head
            return
        module = self._absolute(node.module, node.level or 0)
        if module is None:
            return
        for alias in node.names:
            if alias.name != "*":
                into[alias.asname or alias.name] = f"{module}.{alias.name}"

    def _absolute(self, module: str | None, level: int) -> str | None:
        if not level:
            return module or None
        if self.package is None:
            return None
        parts = self.package.split(".") if self.package else []
        if level - 1 > len(parts):
            return None
        base = parts[: len(parts) - (level - 1)]
        if module:
            base.append(module)
        return ".".join(base) or None

    # -- definitions ---------------------------------------------------------

    def body(
        self,
        stmts,
        *,
        prefix: str,
        klass: str | None,
        module_level: bool = False,
        closure: tuple[str, str] | None = None,
    ) -> None:
        """Classes and functions defined in a block (and the module's imports, at its level)."""
        for stmt in stmts:
            kind = type(stmt)
            if kind is ast.ClassDef:
                qual = prefix + stmt.name
                bases = tuple(b for b in (self.spell(base, ()) for base in stmt.bases) if b)
                decorators = tuple(
                    d
                    for d in (
                        self.spell(dec, (), through_calls=True) for dec in stmt.decorator_list
                    )
                    if d
                )
                self.classes.append((qual, stmt.lineno, bases, decorators))
                self.body(stmt.body, prefix=qual + ".", klass=qual, module_level=module_level)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self.function(stmt, prefix + stmt.name, klass, closure)
            elif module_level and (kind is ast.Import or kind is ast.ImportFrom):
                self.imported(stmt, self.aliases)
            elif kind in _COMPOUND or kind is ast.Match:
                # A def under `if`/`try`/`with` is still that block's scope's.
                for field in ("body", "orelse", "finalbody"):
                    self.body(
                        getattr(stmt, field, ()),
                        prefix=prefix,
                        klass=klass,
                        module_level=module_level,
                        closure=closure,
                    )
                for handler in getattr(stmt, "handlers", ()):
                    self.body(
                        handler.body,
                        prefix=prefix,
                        klass=klass,
                        module_level=module_level,
                        closure=closure,
                    )
                for case in getattr(stmt, "cases", ()):
                    self.body(
                        case.body,
                        prefix=prefix,
                        klass=klass,
                        module_level=module_level,
                        closure=closure,
                    )

    def function(
        self, node, qual: str, klass: str | None, closure: tuple[str, str] | None = None
    ) -> None:
        """One function's outline; ``closure`` is the enclosing method's ``(self name,
        class)``, which a nested function's free ``self`` still means."""
        args = node.args
        positional = [a.arg for a in (*args.posonlyargs, *args.args)]
        decorators = tuple(
            d for d in (self.spell(dec, (), through_calls=True) for dec in node.decorator_list) if d
        )
        self_name = ""
        if (
            klass is not None
            and positional
            and not any(d.rpartition(".")[2] == "staticmethod" for d in decorators)
        ):
            self_name = positional[0]
        owner = klass or ""
        inherited = False
        if not self_name and closure is not None and closure[0] not in positional:
            self_name, owner = closure
            inherited = True
        params = tuple(positional)
        if args.vararg is not None:
            params += ("*" + args.vararg.arg,)
        kwonly = tuple(a.arg for a in args.kwonlyargs)
        if args.kwarg is not None:
            kwonly += ("**" + args.kwarg.arg,)
        outline = (
            qual,
            node.lineno,
            node.col_offset,
            getattr(node, "end_lineno", node.lineno) or node.lineno,
            params,
            self_name,
            decorators,
            kwonly,
            owner,
            _defaults(positional, args) if args.defaults or args.kw_defaults else (),
        )
        self.outlines.append(outline)
        self.nodes.append((node, outline, inherited))
        if self.def_lines is not None and not _inside(self.def_lines, node):
            return  # no `def`/`class` spelled in its body: nothing nested to outline
        inner = (self_name, owner) if self_name else None
        self.body(node.body, prefix=qual + ".", klass=None, closure=inner)

    def _walked(self, entry, walker_type):
        node, outline, inherited = entry
        positional = positional_params(outline)
        walker = walker_type(self, node, outline[O_SELF], positional)
        if inherited:
            walker.shadowed.discard(outline[O_SELF])
        walker.run()
        return walker

    def details(self, entry) -> tuple:
        """What one function's body does: calls, dict paths, fills, carriers, unit forms, reads."""
        from .function_walk import FunctionWalker  # which reads this module's constants

        walker = self._walked(entry, FunctionWalker)
        return (
            tuple(walker.calls),
            tuple(walker.paths) if walker.has_dict_return else (),
            walker.fills(),
            tuple(walker.carriers),
            (tuple(walker.unit_forms), tuple(dict.fromkeys(walker.sinks))),
            tuple(walker.reads),
            tuple(walker.guards),
        )

    def facet(self, entry, facet: str):
        """One field of a function's details (``FACETS``), walked alone: equal to that field
        of ``details``, made by a walk that visits the same statements in the same order and
        records nothing else."""
        from .function_walk import CalledNamesWalker, CarrierWalker

        if facet == F_CARRIERS:
            return tuple(self._walked(entry, CarrierWalker).carriers)
        if facet == F_CALLED:
            return frozenset(self._walked(entry, CalledNamesWalker).names)
        raise ValueError(f"facet: {facet!r} is none of {FACETS}")

    # -- spelling ------------------------------------------------------------

    def spell(
        self,
        node: ast.AST,
        shadowed,
        *,
        through_calls: bool = False,
        local=None,
        subscripts: bool = False,
    ) -> str:
        """How a callee (or a base, a decorator) is spelled, its head resolved through the
        file's imports unless a parameter or local of the same name hides the import. With
        ``subscripts``, an element taken on the way is spelled ``[]`` (``lens_cpu[].max().item``:
        a method of an element of ``lens_cpu``'s), where it otherwise ends the chain (``?``)."""
        parts: list[str] = []
        called = ""  # a call's result in the chain: `lens_cpu.max().item` keeps its receiver
        while True:
            kind = type(node)
            if kind is ast.Attribute:
                parts.append(node.attr + called)
                called = ""
                node = node.value
            elif kind is ast.Call and through_calls:
                node = node.func
            elif kind is ast.Call and parts and not _is_super(node):
                called = "()" + called.removeprefix("()")
                node = node.func
            elif kind is ast.Subscript and parts and subscripts:
                called = "[]" + called
                node = node.value
            else:
                break
        if type(node) is ast.Name:
            head = node.id
            if local and head in local:
                head = local[head]
            elif head not in shadowed:
                head = self.aliases.get(head, head)
            head += called
        elif _is_super(node):
            head = "super()"
        else:
            if not parts:
                return ""
            head = UNKNOWN
        parts.append(head)
        parts.reverse()
        return ".".join(parts)


# A statement's own expressions (a compound statement's header; a simple one's whole).
_HEADER_FIELDS = ("value", "test", "iter", "subject", "targets", "target", "exc", "msg")


def _header_end_of(stmt) -> int:
    body = getattr(stmt, "body", None)
    if type(body) is list and body:
        return max(stmt.lineno, body[0].lineno - 1)
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _inside(lines: tuple[int, ...], node) -> bool:
    """Whether one of ``lines`` lies in a function's body (after its ``def`` line)."""
    import bisect

    i = bisect.bisect_right(lines, node.lineno)
    end = getattr(node, "end_lineno", None) or node.lineno
    return i < len(lines) and lines[i] <= end


def _is_super(node) -> bool:
    return (
        type(node) is ast.Call
        and type(node.func) is ast.Name
        and node.func.id == "super"
        and not node.args
    )


_COMPOUND = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
if hasattr(ast, "TryStar"):
    _COMPOUND = (*_COMPOUND, ast.TryStar)

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _const_key(node) -> str | None:
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


__all__ = ["FACETS", "FORMAT", "UNKNOWN", "body_details", "facet_of", "summarise_module"]
