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

What is not followed: a value stored in a container and read back, a dict
built by a comprehension (open), anything reached through ``getattr`` or a
string. A summary is a sound over-approximation only where it says *open*;
elsewhere it is what the code spells.
"""

from __future__ import annotations

import ast
import re

# Bumped when the tuple shapes change; the cache key digests this module's bytes anyway.
FORMAT = 1

# Indices of a function's outline: what its ``def`` says.
O_QUAL, O_LINE, O_COL, O_END, O_PARAMS, O_SELF, O_DECORATORS, O_KWONLY, O_CLASS = range(9)
# Indices of a function's details: what its body does.
D_CALLS, D_DICTS, D_FILLS, D_CARRIERS, D_UNITS, D_READS, D_GUARDS = range(7)

# Indices of a ``[]`` read of a string key: where the dict comes from (``origin_of``), the key,
# its position, and whether a ``try`` that catches ``KeyError`` is around it.
R_KIND, R_ORIGIN, R_KEY, R_LINE, R_COL, R_END_LINE, R_END_COL, R_TRY = range(8)

# Indices of a call site's fields.
C_SPELLING, C_LINE, C_COL, C_END_LINE, C_END_COL, C_KEYWORDS, C_NARGS, C_ORIGINS = range(8)
# ... the arguments (positions, keyword names) that are evidently host ints (``3``,
# ``int(n)``, a parameter annotated ``int``, a local bound to one), whether the callee
# is spelled through an imported module (``torch.repeat_interleave``, not ``x.repeat_...``),
# and whether its receiver is a name the function has shown to be on the host (after
# ``if x.device.type != "cpu": return``).
C_INTS, C_MODULE, C_HOST = 8, 9, 10
# ... the arguments written as ``True``/``False``/``None`` ((position or keyword, value)),
# and the parameters whose value decides whether the call runs (``if use_ragged:`` around
# it: ``("use_ragged", True)``; its ``else``: ``False``).
C_CONSTS, C_GUARDS = 11, 12

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
        self.self_set = None if text is None else tuple(sorted(set(_SELF_SET.findall(text))))

    def detail(self, index: int) -> tuple:
        return self._builder.details(self._builder.nodes[index])

    def node(self, index: int):
        """The ``def`` statement of the function at ``index`` of ``outlines``."""
        return self._builder.nodes[index][0]

    def reads(self, index: int, lines: frozenset[int]) -> tuple[tuple, frozenset[str]]:
        """A function's ``[]`` reads of string keys and the keys it guards, read only from the
        statements on ``lines`` (those spelling a read) and its assignments: what a reader's
        check needs, at a fraction of the body's details."""
        node, outline, inherited = self._builder.nodes[index]
        positional = [p for p in outline[O_PARAMS] if not p.startswith("*")]
        walker = _FunctionWalker(self._builder, node, outline[O_SELF], positional)
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


# Indices of a module summary's fields.
S_FORMAT, S_ALIASES, S_CLASSES, S_OUTLINES, S_DETAILS, S_SELF_SET = range(6)
# A literal first, so the scan jumps from one `self.` to the next.
_SELF_SET = re.compile(r"self\.(\w+)\s*(?::[^=\n]+)?=(?!=)")


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
        )
        self.outlines.append(outline)
        self.nodes.append((node, outline, inherited))
        if self.def_lines is not None and not _inside(self.def_lines, node):
            return  # no `def`/`class` spelled in its body: nothing nested to outline
        inner = (self_name, owner) if self_name else None
        self.body(node.body, prefix=qual + ".", klass=None, closure=inner)

    def details(self, entry) -> tuple:
        """What one function's body does: calls, dict paths, fills, carriers, unit forms, reads."""
        node, outline, inherited = entry
        positional = [p for p in outline[O_PARAMS] if not p.startswith("*")]
        walker = _FunctionWalker(self, node, outline[O_SELF], positional)
        if inherited:
            walker.shadowed.discard(outline[O_SELF])
        walker.run()
        return (
            tuple(walker.calls),
            tuple(walker.paths) if walker.has_dict_return else (),
            walker.fills(),
            tuple(walker.carriers),
            (tuple(walker.unit_forms), tuple(dict.fromkeys(walker.sinks))),
            tuple(walker.reads),
            tuple(walker.guards),
        )

    # -- spelling ------------------------------------------------------------

    def spell(self, node: ast.AST, shadowed, *, through_calls: bool = False, local=None) -> str:
        """How a callee (or a base, a decorator) is spelled, its head resolved through the
        file's imports unless a parameter or local of the same name hides the import."""
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
                called = "()"
                node = node.func
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


class _DictState:
    """What is known of one dict variable at one point of a function."""

    __slots__ = ("definite", "fills", "maybe", "open", "origin")

    def __init__(self, origin: int, definite=(), maybe=None, open_=False, fills=()) -> None:
        self.origin = origin
        self.definite: dict[str, int] = dict(definite)
        self.maybe: dict[str, int] = dict(maybe or {})
        self.open = open_
        self.fills: dict[tuple, bool] = dict(fills)

    def copy(self) -> _DictState:
        return _DictState(self.origin, self.definite, self.maybe, self.open, self.fills)

    def join(self, other: _DictState) -> _DictState:
        out = _DictState(min(self.origin, other.origin))
        for key, line in self.definite.items():
            if key in other.definite:
                out.definite[key] = line
            else:
                out.maybe[key] = line
        for key, line in other.definite.items():
            if key not in self.definite:
                out.maybe[key] = line
        for key, line in (*self.maybe.items(), *other.maybe.items()):
            if key not in out.definite:
                out.maybe.setdefault(key, line)
        out.open = self.open or other.open
        for call, certain in self.fills.items():
            out.fills[call] = certain and other.fills.get(call, False)
        for call in other.fills:
            out.fills.setdefault(call, False)
        return out


_DEAD = None  # the state after `return`/`raise`: no path continues from here


def _join(a, b):
    if a is _DEAD:
        return None if b is _DEAD else {k: v.copy() for k, v in b.items()}
    if b is _DEAD:
        return {k: v.copy() for k, v in a.items()}
    out = {}
    for name in a.keys() & b.keys():
        out[name] = a[name].join(b[name])
    # A dict tracked on one side only was rebound or untracked on the other: unknown there.
    return out


class _FunctionWalker:
    """One pass over a function's statements: calls, dict paths, fills, carriers, unit forms."""

    def __init__(self, summariser: _Summariser, node, self_name: str, positional) -> None:
        self.s = summariser
        self.node = node
        self.self_name = self_name
        self.params = {name: i for i, name in enumerate(positional)}
        for a in node.args.kwonlyargs:
            self.params[a.arg] = a.arg
        # Names a parameter or an assignment binds here hide an import of the same name.
        self.shadowed: set[str] = set(self.params)
        self.calls: list[tuple] = []
        self.paths: list[tuple] = []
        self.has_dict_return = False
        self.carriers: list[tuple] = []
        self.unit_forms: list[tuple] = []
        # (parameter, name) for each parameter bound unchanged to a name (`self.num_blocks =
        # blocks`): what a units vocabulary infers an undeclared parameter's unit from.
        self.sinks: list[tuple] = []
        self.reads: list[tuple] = []
        self.guards: set[str] = set()
        self._key_guard = 0  # inside a `try` whose handler catches KeyError
        self.local_aliases: dict[str, str] = {}  # imports inside the function
        self._captured_names: frozenset[str] | None = None
        self._int_params: set[str] = set()
        self._host_roots: set[str] = set()  # names past a "return unless on the host" test
        self._guards: list[tuple[str, bool]] = []  # enclosing `if param:` tests
        # param -> {key: (line, certain)}; a param handed on or updated from elsewhere is open
        self._fills: dict[object, dict[str, tuple[int, bool]]] = {}
        self._open_params: set = set()
        self._depth = 0  # nesting of conditional blocks, for "every path" of a fill
        self._locals: dict[str, ast.expr] = {}  # the last value bound to each local (unit forms)

    def read_only(self, lines: frozenset[int]) -> None:
        """The reads pass: assignments (what a read's name was bound to), ``try`` blocks that
        catch ``KeyError``, and the expressions of the statements spelling a read or a guard."""
        stack = [(stmt, False) for stmt in reversed(self.node.body)]
        while stack:
            stmt, in_try = stack.pop()
            kind = type(stmt)
            if kind in _DEFS or kind is ast.ClassDef:
                continue
            if kind is ast.Assign and type(stmt.targets[0]) is ast.Name:
                for target in stmt.targets:
                    if type(target) is ast.Name:
                        self._locals[target.id] = stmt.value
            end = _header_end_of(stmt)
            if any(line in lines for line in range(stmt.lineno, end + 1)):
                self._key_guard = 1 if in_try else 0
                for field in _HEADER_FIELDS:
                    child = getattr(stmt, field, None)
                    if isinstance(child, ast.expr):
                        self.expr(child)
                    elif type(child) is list:
                        for item in child:
                            if isinstance(item, ast.expr):
                                self.expr(item)
                if kind in (ast.With, ast.AsyncWith):
                    for item in stmt.items:
                        self.expr(item.context_expr)
            catches = kind is ast.Try and any(_catches_key_error(h) for h in stmt.handlers)
            blocks = []
            for field in ("orelse", "finalbody"):
                blocks.extend((s, in_try) for s in getattr(stmt, field, ()) or ())
            for handler in getattr(stmt, "handlers", ()) or ():
                blocks.extend((s, in_try) for s in handler.body)
            for case in getattr(stmt, "cases", ()) or ():
                blocks.extend((s, in_try) for s in case.body)
            body = getattr(stmt, "body", None)
            if type(body) is list:
                blocks = [(s, in_try or catches) for s in body] + blocks
            stack.extend(reversed(blocks))

    def run(self) -> None:
        args = self.node.args
        self._int_params = {
            a.arg
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
            if a.annotation is not None and _annotated_int(a.annotation)
        }
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                self.shadowed.add(extra.arg)
        self.block(self.node.body, {})

    def fills(self) -> tuple:
        out = []
        for param, keys in self._fills.items():
            out.append(
                (
                    param,
                    tuple((k, line, certain) for k, (line, certain) in keys.items()),
                    param in self._open_params,
                )
            )
        for param in self._open_params - self._fills.keys():
            out.append((param, (), True))
        return tuple(out)

    # -- statements ----------------------------------------------------------

    def block(self, stmts, state):
        for stmt in stmts:
            if state is _DEAD:
                # Unreachable code still calls what it spells; a chain through it is the
                # code's own claim, so calls are recorded, dicts are not.
                self.exprs_of(stmt)
                continue
            state = self.stmt(stmt, state)
        return state

    def stmt(self, stmt, state):
        kind = type(stmt)
        if kind in _DEFS:
            for dec in stmt.decorator_list:
                self.expr(dec)
            self.shadowed.add(stmt.name)
            return state
        if kind is ast.ClassDef:
            self.shadowed.add(stmt.name)
            return state
        if kind is ast.Return:
            if stmt.value is not None:
                self.expr(stmt.value)
                self.ret(stmt, state)
            return _DEAD
        if kind is ast.Raise:
            self.exprs_of(stmt)
            return _DEAD
        if kind is ast.Assign:
            self.expr(stmt.value)
            for target in stmt.targets:
                self.target_expr(target)
            for target in stmt.targets:
                state = self.assign(target, stmt.value, stmt, state)
            return state
        if kind is ast.AnnAssign:
            if stmt.value is not None:
                self.expr(stmt.value)
                self.target_expr(stmt.target)
                return self.assign(stmt.target, stmt.value, stmt, state)
            return state
        if kind is ast.AugAssign:
            self.expr(stmt.value)
            self.target_expr(stmt.target)
            return self.augassign(stmt, state)
        if kind is ast.Expr:
            self.expr(stmt.value)
            return self.effect(stmt.value, state)
        if kind is ast.If:
            self.expr(stmt.test)
            self._depth += 1
            guard = self._param_guard(stmt.test)
            if guard is not None:
                self._guards.append(guard)
            a = self.block(stmt.body, _copy(state))
            if guard is not None:
                self._guards[-1] = (guard[0], not guard[1])
            b = self.block(stmt.orelse, _copy(state))
            if guard is not None:
                self._guards.pop()
            self._depth -= 1
            host = _leaves_unless_host(stmt)
            if host is not None:
                self._host_roots.add(host)
            return _join(a, b)
        if kind in (ast.For, ast.AsyncFor):
            self.expr(stmt.iter)
            self.target_expr(stmt.target)
            self._untrack_target(stmt.target, state)
            self._depth += 1
            body = self.block(stmt.body, _copy(state))
            after = _join(state, body)
            end = self.block(stmt.orelse, _copy(after)) if after is not _DEAD else _DEAD
            self._depth -= 1
            return _join(after, end) if stmt.orelse else after
        if kind is ast.While:
            self.expr(stmt.test)
            self._depth += 1
            body = self.block(stmt.body, _copy(state))
            after = _join(state, body)
            if stmt.orelse and after is not _DEAD:
                after = _join(after, self.block(stmt.orelse, _copy(after)))
            self._depth -= 1
            if _is_true(stmt.test) and not _breaks(stmt.body):
                return _DEAD  # `while True:` without a break leaves only by return/raise
            return after
        if kind in (ast.With, ast.AsyncWith):
            for item in stmt.items:
                self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.target_expr(item.optional_vars)
                    self._untrack_target(item.optional_vars, state)
            return self.block(stmt.body, state)
        if kind is ast.Try or kind.__name__ == "TryStar":
            self._depth += 1
            catches = any(_catches_key_error(h) for h in stmt.handlers)
            self._key_guard += catches
            body = self.block(stmt.body, _copy(state))
            self._key_guard -= catches
            # A handler runs after any prefix of the body: from the entry state, joined.
            start = _join(state, body)
            ends = [self.block(stmt.orelse, _copy(body)) if body is not _DEAD else _DEAD]
            for handler in stmt.handlers:
                if handler.type is not None:
                    self.expr(handler.type)
                ends.append(self.block(handler.body, _copy(start)))
            self._depth -= 1
            out = ends[0]
            for end in ends[1:]:
                out = _join(out, end)
            if stmt.finalbody:
                out = self.block(stmt.finalbody, out if out is not _DEAD else _copy(start))
            return out
        if kind is ast.Match:
            self.expr(stmt.subject)
            self._depth += 1
            out = _DEAD
            exhaustive = False
            for case in stmt.cases:
                if case.guard is not None:
                    self.expr(case.guard)
                out = _join(out, self.block(case.body, _copy(state)))
                if isinstance(case.pattern, ast.MatchAs) and case.pattern.pattern is None:
                    exhaustive = case.guard is None
            self._depth -= 1
            return out if exhaustive else _join(out, state)
        if kind is ast.Delete:
            for target in stmt.targets:
                self.expr(target)
                if (
                    type(target) is ast.Subscript
                    and type(target.value) is ast.Name
                    and state is not _DEAD
                ):
                    tracked = state.get(target.value.id)
                    key = _const_key(target.slice)
                    if tracked is not None:
                        if key is None:
                            tracked.open = True
                        else:
                            tracked.definite.pop(key, None)
            return state
        if kind is ast.Import or kind is ast.ImportFrom:
            self.s.imported(stmt, self.local_aliases)
            return state
        if kind in (ast.Global, ast.Nonlocal):
            self.shadowed.update(stmt.names)
            return state
        self.exprs_of(stmt)
        return state

    def exprs_of(self, stmt) -> None:
        """Record the calls in every expression under a statement (nested blocks too)."""
        for field in stmt._fields:
            value = getattr(stmt, field, None)
            items = value if type(value) is list else (value,)
            for item in items:
                if isinstance(item, ast.expr):
                    self.expr(item)
                elif isinstance(item, ast.stmt):
                    if type(item) in _DEFS:
                        self.stmt(item, {})
                    else:
                        self.exprs_of(item)
                elif isinstance(item, (ast.excepthandler, ast.match_case, ast.withitem)):
                    for sub in ast.iter_child_nodes(item):
                        if isinstance(sub, ast.expr):
                            self.expr(sub)
                        elif isinstance(sub, ast.stmt):
                            self.exprs_of(sub) if type(sub) not in _DEFS else self.stmt(sub, {})

    # -- expressions: calls --------------------------------------------------

    def expr(self, node) -> None:
        """Record every call under an expression (a lambda's body included)."""
        from .walk import child_fields

        stack = [node]
        pop, push = stack.pop, stack.append
        call_type, subscript, load, compare = ast.Call, ast.Subscript, ast.Load, ast.Compare
        while stack:
            item = pop()
            kind = type(item)
            if kind is call_type:
                self.call(item)
            elif kind is subscript and type(item.ctx) is load:
                key = _const_key(item.slice)
                if key is not None:
                    origin = self.origin_of(item.value)
                    if origin is not None:
                        self.reads.append(
                            (
                                *origin,
                                key,
                                item.lineno,
                                item.col_offset,
                                item.end_lineno or item.lineno,
                                item.end_col_offset or item.col_offset,
                                self._key_guard > 0,
                            )
                        )
            elif kind is compare and type(item.ops[0]) in (ast.In, ast.NotIn):
                # `"k" in d` / `"k" not in d`: the function asks before it reads.
                key = _const_key(item.left)
                if key is not None:
                    self.guards.add(key)
            for name in child_fields(kind):
                value = getattr(item, name, None)
                if type(value) is list:
                    stack.extend(value)
                elif value is not None:
                    push(value)

    def origin_of(self, node) -> tuple[str, object] | None:
        """Where a dict read here comes from: ``("c", callee)`` a call's result, ``("s", attr)``
        an attribute of ``self``, ``("a", attr)`` another object's, ``("p", position)`` a
        parameter; None for anything else. A local is followed one binding back."""
        kind = type(node)
        if kind is ast.Name:
            name = node.id
            bound = self._locals.get(name)
            if bound is not None:
                kind, node = type(bound), bound
                if kind is ast.Name:
                    return None
            elif name in self.params:
                return ("p", self.params[name])
            else:
                return None
        if kind is ast.Attribute:
            owner = node.value
            on_self = type(owner) is ast.Name and owner.id == self.self_name
            return ("s" if on_self else "a", node.attr)
        if kind is ast.Call:
            return ("c", self.callee(node.func))
        return None

    def callee(self, func) -> str:
        spelling = self.s.spell(func, self.shadowed, local=self.local_aliases) or UNKNOWN
        if self.self_name and (
            spelling == self.self_name or spelling.startswith(self.self_name + ".")
        ):
            spelling = "self" + spelling[len(self.self_name) :]
        return spelling

    def target_expr(self, target) -> None:
        """Calls inside an assignment target (``x[f()] = v``) and names it binds."""
        kind = type(target)
        if kind is ast.Name:
            self.shadowed.add(target.id)
        elif kind in (ast.Tuple, ast.List):
            for elt in target.elts:
                self.target_expr(elt)
        elif kind is ast.Starred:
            self.target_expr(target.value)
        else:
            self.expr(target)

    def call(self, node: ast.Call) -> None:
        spelling = self.callee(node.func)
        keywords = tuple(kw.arg or "**" for kw in node.keywords)
        nargs = -1 if any(type(a) is ast.Starred for a in node.args) else len(node.args)
        if spelling.endswith((".get", ".pop", ".setdefault")) and node.args:
            key = _const_key(node.args[0])
            if key is not None:
                self.guards.add(key)  # asked for with a default: the function copes without it
        origins = []
        for i, arg in enumerate(node.args):
            if type(arg) is ast.Starred:
                break
            origin = self.origin_of(arg) if type(arg) in _ORIGIN_TYPES else None
            if origin is not None:
                origins.append((i, origin))
        for kw in node.keywords:
            if kw.arg is not None and type(kw.value) in _ORIGIN_TYPES:
                origin = self.origin_of(kw.value)
                if origin is not None:
                    origins.append((kw.arg, origin))
        ints = [i for i, arg in enumerate(node.args) if self._int_evident(arg, 2)]
        ints += [kw.arg for kw in node.keywords if kw.arg and self._int_evident(kw.value, 2)]
        root = node.func
        while type(root) is ast.Attribute:
            root = root.value
        module_form = (
            type(node.func) is ast.Attribute
            and type(root) is ast.Name
            and (
                root.id in self.local_aliases
                or (root.id in self.s.aliases and root.id not in self.shadowed)
            )
        )
        self.calls.append(
            (
                spelling,
                node.lineno,
                node.col_offset,
                getattr(node, "end_lineno", node.lineno) or node.lineno,
                getattr(node, "end_col_offset", node.col_offset) or node.col_offset,
                keywords,
                nargs,
                tuple(origins),
                tuple(ints),
                module_form,
                type(root) is ast.Name and root.id in self._host_roots,
                tuple(
                    [(i, a.value) for i, a in enumerate(node.args) if _flag(a)]
                    + [
                        (kw.arg, kw.value.value)
                        for kw in node.keywords
                        if kw.arg and _flag(kw.value)
                    ]
                ),
                tuple(self._guards),
            )
        )

    def _param_guard(self, test) -> tuple[str, bool] | None:
        """``("p", True)`` for ``if p:``, ``("p", False)`` for ``if not p:``, ``p`` a parameter."""
        required = True
        if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test, required = test.operand, False
        if type(test) is ast.Name and test.id in self.params and test.id != self.self_name:
            return (test.id, required)
        return None

    def _int_evident(self, node, depth: int) -> bool:
        """Whether a value is evidently a host int: a literal, ``int()``/``len()``/``round()``,
        ``.numel()``/``.item()``/``.size(i)``, ``.shape[i]``, a parameter annotated ``int``, a
        name or attribute spelled as a count (``num_*``, ``*_num_*``, ``n_*``, ``*_size``),
        arithmetic of those, or a local last bound to one."""
        kind = type(node)
        if kind is ast.Constant:
            return type(node.value) is int
        if kind is ast.Name or kind is ast.Attribute:
            name = node.id if kind is ast.Name else node.attr
            if name in self._int_params and kind is ast.Name:
                return True
            if _COUNT_NAME.match(name):
                return True  # spelled as a count: `num_draft_tokens`, `block_size`
            if kind is ast.Attribute:
                return False
            bound = self._locals.get(node.id)
            return depth > 0 and bound is not None and self._int_evident(bound, depth - 1)
        if kind is ast.Call:
            func = node.func
            if type(func) is ast.Name:
                return func.id in ("int", "len", "round")
            return type(func) is ast.Attribute and func.attr in _INT_METHODS
        if kind is ast.Subscript:
            value = node.value
            return type(value) is ast.Attribute and value.attr == "shape"
        if kind is ast.BinOp and depth > 0:
            return self._int_evident(node.left, depth - 1) and self._int_evident(
                node.right, depth - 1
            )
        return False

    # -- unit forms ----------------------------------------------------------

    def form(self, node, budget=None) -> object:
        """A small tree a units vocabulary can evaluate: names, calls, arithmetic.

        ``("n", name)`` a name, attribute or parameter by its last component;
        ``("v", name, form)`` a local and the value last bound to it;
        ``("c", spelling)`` a call's result; ``("*", a, b)``, ``("/", a, b)``,
        ``("+", a, b)`` arithmetic; ``("l",)`` a number; ``"?"`` unknown.
        Locals are replaced by the last value bound to them before the point
        of use (one binding back, no further).
        """
        if budget is None:
            budget = [_MAX_FORM_NODES]
        budget[0] -= 1
        if budget[0] < 0:
            return UNKNOWN
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return ("l", value)
            return UNKNOWN
        if kind is ast.Name:
            if node.id == self.self_name:
                return UNKNOWN
            bound = self._locals.get(node.id)
            if bound is not None and bound is not node:
                inner = self._locals.pop(node.id)  # no cycle through `x = x * 2`
                try:
                    value = self.form(inner, budget)
                finally:
                    self._locals[node.id] = inner
                # The local's own name first (a declared name is the declaration), else
                # what it was bound to.
                return ("v", node.id, value)
            return ("n", node.id)
        if kind is ast.Attribute:
            return ("n", node.attr)
        if kind is ast.Call:
            spelling = self.callee(node.func)
            if spelling in _UNIT_PRESERVING and len(node.args) == 1 and not node.keywords:
                return self.form(node.args[0], budget)
            if spelling in ("max", "min") and len(node.args) >= 2 and not node.keywords:
                return ("+", *(self.form(a, budget) for a in node.args[:2]))
            if spelling.rpartition(".")[2] == "cdiv" and len(node.args) == 2:
                return ("/", self.form(node.args[0], budget), self.form(node.args[1], budget))
            return ("c", spelling)
        if kind is ast.BinOp:
            op = type(node.op)
            left = self.form(node.left, budget)
            right = self.form(node.right, budget)
            if op is ast.Mult:
                return ("*", left, right)
            if op in (ast.Div, ast.FloorDiv):
                return ("/", left, right)
            if op in (ast.Add, ast.Sub):
                return ("+", left, right)
            if op is ast.Mod:
                return left
            return UNKNOWN
        if kind is ast.UnaryOp and type(node.op) in (ast.USub, ast.UAdd):
            return self.form(node.operand, budget)
        if kind is ast.IfExp:
            return ("+", self.form(node.body, budget), self.form(node.orelse, budget))
        return UNKNOWN

    # -- assignments and dicts ----------------------------------------------

    def assign(self, target, value, stmt, state):
        kind = type(target)
        if (
            type(value) is ast.Name
            and value.id in self.params
            and kind in (ast.Name, ast.Attribute)
        ):
            self.sinks.append(
                (self.params[value.id], target.id if kind is ast.Name else target.attr)
            )
        if kind is ast.Name:
            name = target.id
            self._locals[name] = value
            if state is _DEAD:
                return state
            new = self.dict_value(value, stmt.lineno, state)
            if new is None:
                state.pop(name, None)
            else:
                state[name] = new
            return state
        if kind is ast.Attribute:
            if type(value) is ast.Call:
                spelling = self.callee(value.func)
                on_self = type(target.value) is ast.Name and target.value.id == self.self_name
                self.carriers.append((target.attr, spelling, stmt.lineno, on_self))
            self._escape(value, state)
            return state
        if kind is ast.Subscript:
            owner = target.value
            if type(owner) is ast.Name and state is not _DEAD:
                key = _const_key(target.slice)
                tracked = state.get(owner.id)
                if tracked is not None:
                    if key is None:
                        tracked.open = True
                    else:
                        # Definite in this branch; joining the branches makes it "maybe".
                        tracked.definite.setdefault(key, stmt.lineno)
                self._fill(owner.id, key, stmt.lineno)
            self._escape(value, state)
            return state
        if kind in (ast.Tuple, ast.List):
            for elt in target.elts:
                self._untrack_target(elt, state)
            self._escape(value, state)
            return state
        return state

    def augassign(self, stmt, state):
        target = stmt.target
        if state is _DEAD:
            return state
        if type(target) is ast.Name and type(stmt.op) is ast.BitOr:
            tracked = state.get(target.id)
            if tracked is not None:
                self._merge_into(tracked, stmt.value, stmt.lineno)
            return state
        if type(target) is ast.Name:
            state.pop(target.id, None)
            self._locals.pop(target.id, None)
        return state

    def effect(self, value, state):
        """A bare call statement: a dict method that adds keys, or a dict handed to a callee."""
        if type(value) is not ast.Call or state is _DEAD:
            return state
        func = value.func
        if type(func) is ast.Attribute and type(func.value) is ast.Name:
            name = func.value.id
            tracked = state.get(name)
            method = func.attr
            if tracked is not None:
                if method == "update":
                    for arg in value.args:
                        self._merge_into(tracked, arg, value.lineno)
                    for kw in value.keywords:
                        if kw.arg is None:
                            tracked.open = True
                        else:
                            tracked.definite.setdefault(kw.arg, value.lineno)
                    self._escape_args(value, state, skip=name)
                    return state
                if method == "setdefault" and value.args:
                    key = _const_key(value.args[0])
                    if key is None:
                        tracked.open = True
                    else:
                        tracked.definite.setdefault(key, value.lineno)
                    return state
                if method == "pop" and value.args:
                    key = _const_key(value.args[0])
                    if key is not None:
                        tracked.definite.pop(key, None)
                    return state
                if method in ("clear", "popitem"):
                    tracked.definite.clear()
                    return state
                if method in _READ_ONLY_METHODS:
                    return state
                tracked.open = True
                return state
            if name in self.params:
                param = self.params[name]
                if method == "update":
                    for kw in value.keywords:
                        if kw.arg is not None:
                            self._fill(name, kw.arg, value.lineno)
                    for arg in value.args:
                        if (
                            type(arg) is ast.Dict
                            and all(_const_key(k) is not None for k in arg.keys if k is not None)
                            and None not in arg.keys
                        ):
                            for k in arg.keys:
                                self._fill(name, _const_key(k), value.lineno)
                        else:
                            self._open_params.add(param)
                elif method == "setdefault" and value.args:
                    self._fill(name, _const_key(value.args[0]), value.lineno)
        self._escape_args(value, state)
        return state

    def _merge_into(self, tracked: _DictState, other, line: int) -> None:
        if type(other) is ast.Dict:
            for key in other.keys:
                k = _const_key(key) if key is not None else None
                if k is None:
                    tracked.open = True
                else:
                    tracked.definite.setdefault(k, line)
        else:
            tracked.open = True

    def _fill(self, name: str, key, line: int) -> None:
        param = self.params.get(name)
        if param is None:
            return
        if key is None:
            self._open_params.add(param)
            return
        keys = self._fills.setdefault(param, {})
        certain = self._depth == 0
        old = keys.get(key)
        if old is None or (certain and not old[1]):
            keys[key] = (line, certain)

    def _escape(self, value, state) -> None:
        """A tracked dict stored or handed on somewhere we do not follow."""
        if state is _DEAD or not state:
            return
        if type(value) is ast.Call:
            self._escape_args(value, state)

    def _escape_args(self, call: ast.Call, state, skip: str | None = None) -> None:
        """A dict handed to a callee may be filled there: note the call, resolved by the reader."""
        if state is _DEAD:
            return
        spelling = self.callee(call.func)
        certain = self._depth == 0
        for i, arg in enumerate(call.args):
            if type(arg) is ast.Name and arg.id != skip:
                tracked = state.get(arg.id)
                if tracked is not None:
                    tracked.fills[(spelling, i)] = (
                        tracked.fills.get((spelling, i), False) or certain
                    )
            elif type(arg) is ast.Starred:
                break
        for kw in call.keywords:
            if kw.arg is not None and type(kw.value) is ast.Name:
                tracked = state.get(kw.value.id)
                if tracked is not None:
                    tracked.fills[(spelling, kw.arg)] = certain
        # A parameter handed on: what the callee writes into it is not followed.
        for arg in (*call.args, *(kw.value for kw in call.keywords)):
            if (
                type(arg) is ast.Name
                and arg.id in self.params
                and arg.id != skip
                and spelling not in _READING_BUILTINS
            ):
                self._open_params.add(self.params[arg.id])

    def dict_value(self, value, line: int, state) -> _DictState | None:
        """The state of a dict a value starts, or None when it is not a dict we track."""
        kind = type(value)
        if kind is ast.Dict:
            new = _DictState(line)
            for key in value.keys:
                k = _const_key(key) if key is not None else None
                if k is None:
                    new.open = True
                else:
                    new.definite.setdefault(k, line)
            return new
        if kind is ast.Call and type(value.func) is ast.Name and value.func.id == "dict":
            new = _DictState(line)
            if value.args:
                first = value.args[0]
                if type(first) is ast.Dict:
                    merged = self.dict_value(first, line, state)
                    if merged is not None:
                        new = merged
                else:
                    new.open = True
            for kw in value.keywords:
                if kw.arg is None:
                    new.open = True
                else:
                    new.definite.setdefault(kw.arg, line)
            return new
        if kind is ast.Name and state is not _DEAD:
            tracked = state.get(value.id)
            if tracked is not None:
                return tracked.copy()
        if kind is ast.DictComp:
            return _DictState(line, open_=True)
        return None

    def _untrack_target(self, target, state) -> None:
        if state is _DEAD:
            return
        for node in ast.walk(target):
            if type(node) is ast.Name:
                state.pop(node.id, None)
                self._locals.pop(node.id, None)

    def _captured(self) -> frozenset[str]:
        """Names used inside the nested functions, lambdas and classes of this function."""
        if self._captured_names is None:
            found: set[str] = set()
            for node in ast.walk(self.node):
                if node is not self.node and type(node) in (*_DEFS, ast.Lambda, ast.ClassDef):
                    found.update(n.id for n in ast.walk(node) if type(n) is ast.Name)
            self._captured_names = frozenset(found)
        return self._captured_names

    def ret(self, stmt: ast.Return, state) -> None:
        value = stmt.value
        self.unit_forms.append((stmt.lineno, self.form(value)))
        if type(value) is ast.Constant and value.value is None:
            return
        tracked = self.dict_value(value, stmt.lineno, state)
        if tracked is None:
            # Not a dict we built: a path whose keys are unknown (open), if this is a producer.
            self.paths.append((stmt.lineno, stmt.lineno, (), (), True, ()))
            return
        self.has_dict_return = True
        # A dict a nested function, lambda or class refers to may be filled when that runs,
        # after the return (a callback that records what it saw): any key may be there.
        captured = type(value) is ast.Name and value.id in self._captured()
        self.paths.append(
            (
                stmt.lineno,
                tracked.origin,
                tuple(tracked.definite),
                tuple(tracked.maybe.items()),
                tracked.open or captured,
                tuple((call[0], call[1], certain) for call, certain in tracked.fills.items()),
            )
        )


_ORIGIN_TYPES = (ast.Name, ast.Attribute, ast.Call)
_COUNT_NAME = re.compile(r"(?:num|n)_[a-z0-9_]*$|[a-z0-9_]*_num_[a-z0-9_]*$|[a-z0-9_]*_size$")
_INT_METHODS = frozenset({"numel", "item", "size", "bit_length", "dim", "element_size"})


def _flag(node) -> bool:
    return type(node) is ast.Constant and (node.value is None or type(node.value) is bool)


def _leaves_unless_host(stmt: ast.If) -> str | None:
    """``x`` for ``if x.device.type != "cpu": return ...`` (or ``if x.is_cuda:`` / ``if not
    x.is_cpu:``, raising instead): past it, ``x`` is on the host."""
    if stmt.orelse or not stmt.body or type(stmt.body[-1]) not in (ast.Return, ast.Raise):
        return None
    test = stmt.test
    kind = type(test)
    if kind is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.NotEq:
        left, right = test.left, test.comparators[0]
        if type(left) is ast.Attribute and left.attr == "type":
            left = left.value
        cpu = (type(right) is ast.Constant and right.value == "cpu") or (
            type(right) is ast.Call
            and right.args
            and type(right.args[0]) is ast.Constant
            and right.args[0].value == "cpu"
        )
        if cpu and type(left) is ast.Attribute and left.attr == "device":
            target = left.value
            return target.id if type(target) is ast.Name else None
        return None
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        operand = test.operand
        if type(operand) is ast.Attribute and operand.attr == "is_cpu":
            return operand.value.id if type(operand.value) is ast.Name else None
        return None
    if kind is ast.Attribute and test.attr == "is_cuda" and type(test.value) is ast.Name:
        return test.value.id
    return None


def _annotated_int(annotation) -> bool:
    """``int``, ``Optional[int]``, ``int | None``."""
    kind = type(annotation)
    if kind is ast.Name:
        return annotation.id == "int"
    if kind is ast.Constant:
        return annotation.value == "int"
    if kind is ast.Subscript:
        return (
            type(annotation.value) is ast.Name
            and annotation.value.id == "Optional"
            and (_annotated_int(annotation.slice))
        )
    if kind is ast.BinOp and type(annotation.op) is ast.BitOr:
        parts = (annotation.left, annotation.right)
        return any(_annotated_int(p) for p in parts) and all(
            _annotated_int(p) or (type(p) is ast.Constant and p.value is None) for p in parts
        )
    return False


_KEY_ERROR_NAMES = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})


def _catches_key_error(handler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
    for t in types:
        name = t.id if type(t) is ast.Name else t.attr if type(t) is ast.Attribute else ""
        if name in _KEY_ERROR_NAMES:
            return True
    return False


# Builtins that read an argument and never write into it.
_READING_BUILTINS = frozenset(
    {
        "len",
        "isinstance",
        "print",
        "str",
        "repr",
        "type",
        "id",
        "bool",
        "list",
        "tuple",
        "sorted",
        "set",
        "iter",
        "next",
        "hash",
        "dict",
        "any",
        "all",
        "getattr",
        "hasattr",
    }
)

# Calls whose result has the unit of their one argument.
_UNIT_PRESERVING = frozenset({"int", "round", "abs", "math.ceil", "math.floor", "float"})


def _copy(state):
    if state is _DEAD:
        return _DEAD
    return {k: v.copy() for k, v in state.items()}


def _const_key(node) -> str | None:
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    return None


def _is_true(test) -> bool:
    return type(test) is ast.Constant and bool(test.value) is True


def _breaks(body) -> bool:
    """Whether a loop body can ``break`` out of its own loop (not a nested one)."""
    stack = list(body)
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        if kind is ast.Break:
            return True
        if kind in (ast.For, ast.AsyncFor, ast.While, *_DEFS, ast.ClassDef):
            if kind in (ast.For, ast.AsyncFor, ast.While):
                stack.extend(stmt.orelse)
            continue
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, ()))
        for handler in getattr(stmt, "handlers", ()):
            stack.extend(handler.body)
        for case in getattr(stmt, "cases", ()):
            stack.extend(case.body)
    return False


__all__ = ["FORMAT", "UNKNOWN", "summarise_module"]
