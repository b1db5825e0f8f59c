"""What each function binds, where, and who calls whom -- worked out per function, when asked.

Every later question (is this name input here? was it computed? does a test
guard this call?) is answered from what this index recorded. Per function
(a ``scopes.Scope``): each binding with its statement, its value and the chain
of blocks around it -- a binding dominates what follows it in its own block and
the blocks nested there. Per module: the call sites of each name, the ``if``
test guarding each block, the loops, the comprehensions' variables, the
asserts, and the private helpers only constructors call.

Lazily, per function. A module's own code (its statements and its class
bodies) is indexed when the index is built, with a walk of its statements
alone for the asserts and the classes; a function defined there (a top-level
function or a method) is indexed, with everything nested in it, only when a
question first reaches it: the function an assert sits in, a constructor whose
copies are asked about, or a function whose text names a callee whose call
sites are asked for (``calls_of``). On vLLM, where most modules hold a few
asserts in a few functions, most functions are never walked. Each answer is
the one a whole-module walk gives: call sites come back in that walk's order
(a rank per site), the first class of a name is the first in source order, and
a function whose text is not ASCII is searched as if it named every callee
(Python reads identifiers NFKC-normalised, so ``ﬁll`` calls ``fill``).
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from itertools import accumulate

from .imports import bound_name
from .names import call_name
from .scopes import Element, FunctionNode, Scope, before, function_scope
from .shapes import inside

# Calls that build a local up: after one, the local is the function's own construction.
_BUILDING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "appendleft"})


class BindingIndex:
    """The bindings, blocks, call sites and guards of one module, each function's on demand.

    With ``source`` (its ``text`` and ``lines``) a function is indexed when a
    question first needs it; without, every function is indexed at once.
    """

    def __init__(self, tree: ast.Module, source=None) -> None:
        self.tree = tree
        self.funcs: dict[ast.AST, Scope] = {}
        self.blocks: dict[ast.AST, tuple[int, ...]] = {}  # node -> chain of enclosing blocks
        self.owner: dict[ast.AST, Scope | None] = {}  # statement/expression -> function
        self.class_names: dict[str, ast.ClassDef] = {}
        self.module_bindings: dict[str, list[ast.AST | None]] = {}
        # name -> [(the comprehension, what its variable is bound to)]: visible
        # only inside that comprehension.
        self.comprehension_bindings: dict[str, list[tuple[ast.AST, ast.AST]]] = {}
        self.loop_blocks: set[int] = set()  # ids of loop bodies' statement lists
        self.asserts: list[ast.Assert] = []
        self.guards: dict[int, ast.expr] = {}  # id of an `if` body -> its test
        self.else_guards: dict[int, ast.expr] = {}  # id of an `if`'s else -> its test
        self.built: dict[int, set[str]] = {}  # function node id -> locals it builds up
        # name -> [(rank, call, caller)]; a rank orders sites as one whole-module walk meets them.
        self._sites: dict[str, list[tuple[tuple[int, ...], ast.Call, Scope | None]]] = {}
        self._calls: dict[str, list[tuple[ast.Call, Scope | None]]] = {}  # complete, in order
        # A function of the module's own code not walked yet -> (its scope, its rank).
        self._deferred: dict[ast.AST, tuple[Scope, int]] = {}
        # An assert or a class -> the deferred function it sits in.
        self._unit_of: dict[ast.AST, ast.AST | None] = {}
        self._rank_prefix: tuple[int, ...] = ()
        self._rank = 0
        self._source = source
        self._units: list[tuple[int, int, ast.AST]] | None = None  # (first line, last line, node)
        self._index(tree, None, None, ())
        self._outline(tree)
        if source is None:
            for node in list(self._deferred):
                self.ensure(node)

    # -- indexing ------------------------------------------------------

    def _index(self, node: ast.AST, func: Scope | None, klass, chain: tuple[int, ...]) -> None:
        """One pass over the tree: bindings, call sites, blocks, asserts, classes.

        Positions (block chain, owning function) are kept only for the nodes
        questions are asked at -- statements, calls, comprehensions, walrus
        targets -- not for every name and constant: on a 10,000-line module
        that is most of the nodes and most of the time. What to do with a node
        is worked out once per node type (``_plan_for``, ``_field_plan``), not by a chain of
        ``isinstance`` tests at each of its hundreds of thousands of nodes.

        The walk is pre-order over an explicit stack, not recursive: code Python
        compiles can nest deeper than the interpreter's recursion limit allows a
        recursive walk (a 500-term sum, a 2,000-branch ``elif`` chain).
        """
        stack: list[tuple] = []
        self._expand(node, func, klass, chain, stack)
        visit = self._visit
        pop = stack.pop
        while stack:
            visit(*pop(), stack)

    def _expand(self, node: ast.AST, func: Scope | None, klass, chain, stack: list) -> None:
        """Push ``node``'s children to be visited, so that they pop in source order."""
        plan = _FIELD_PLANS.get(type(node)) or _field_plan(type(node))
        # Names and constants are most of a tree's nodes: they are skipped here,
        # without the call to ``_visit`` that would only return.
        skipped = _SKIPPED
        children: list[tuple] = []
        for name, block in plan:
            value = getattr(node, name, None)
            if isinstance(value, list):
                # Each statement list is a block; a binding dominates what follows
                # it in its own block and in the blocks nested inside that.
                if block:
                    sub = (*chain, id(value))
                    if block is _LOOP_BODY:
                        self.loop_blocks.add(id(value))
                    elif block is _IF_BODY:
                        self.guards[id(value)] = node.test
                    elif block is _IF_ELSE:
                        self.else_guards[id(value)] = node.test
                else:
                    sub = chain
                for child in value:
                    if type(child) not in skipped and isinstance(child, ast.AST):
                        children.append((child, func, klass, sub))
            elif type(value) not in skipped and isinstance(value, ast.AST):
                children.append((value, func, klass, chain))
        children.reverse()
        stack.extend(children)

    def _visit(
        self, child: ast.AST, func: Scope | None, klass, sub: tuple[int, ...], stack: list
    ) -> None:
        kind = type(child)
        plan = _PLANS.get(kind) or _plan_for(kind)
        role = plan[0]
        if role is _SKIP:
            return
        if role is _ATTRIBUTE:
            stack.append((child.value, func, klass, sub))
            return
        if plan[1]:
            self.blocks[child] = sub
            self.owner[child] = func
        if role is _FUNCTION:
            self._bind(func, child, child, None, sub, name=getattr(child, "name", None))
            inner = self._new_func(child, func, klass)
            if func is None and kind is not ast.Lambda:
                # A function of the module's own code: walked when first asked about.
                self._rank += 1
                self._deferred[child] = (inner, self._rank)
                return
            self._expand(child, inner, None, (), stack)
            return
        elif role is _CLASS:
            self._bind(func, child, child, None, sub, name=child.name)
            self._expand(child, func, child, sub, stack)
            return
        collect = plan[2]
        if collect is not None:
            collect(self, child, func, sub)
        self._expand(child, func, klass, sub, stack)

    def _new_func(self, node: FunctionNode, parent: Scope | None, klass) -> Scope:
        func = function_scope(node, parent, klass)
        self.funcs[node] = func
        return func

    def _bind(self, func, stmt, target, value, chain, name=None) -> None:
        """Record that ``target`` (a Name, or a bare name) is bound to ``value``."""
        names: list[tuple[str, ast.AST | None]] = []
        if name is not None:
            names.append((name, value))
        else:
            unpack(target, value, names)
        for n, v in names:
            if func is None:
                self.module_bindings.setdefault(n, []).append(v)
            else:
                func.bindings.setdefault(n, []).append((stmt, v, chain))

    def _collect_assign(self, node: ast.Assign, func: Scope | None, chain) -> None:
        for target in node.targets:
            self._bind(func, node, target, node.value, chain)

    def _collect_ann_assign(self, node: ast.AnnAssign, func: Scope | None, chain) -> None:
        if node.value is not None:
            self._bind(func, node, node.target, node.value, chain)

    def _collect_aug_assign(self, node: ast.AugAssign, func: Scope | None, chain) -> None:
        self._bind(func, node, node.target, None, chain)  # arithmetic: computed

    def _collect_for(self, node: ast.For | ast.AsyncFor, func: Scope | None, chain) -> None:
        self._bind(func, node, node.target, Element(node.iter), chain)

    def _collect_with(self, node: ast.With | ast.AsyncWith, func: Scope | None, chain) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind(func, node, item.optional_vars, None, chain)

    def _collect_named(self, node: ast.NamedExpr, func: Scope | None, chain) -> None:
        self._bind(func, node, node.target, node.value, chain)

    def _collect_comprehension(self, node: ast.AST, func: Scope | None, chain) -> None:
        for gen in node.generators:
            names: list = []
            unpack(gen.target, Element(gen.iter), names)
            for n, v in names:
                self.comprehension_bindings.setdefault(n, []).append((node, v))

    def _collect_import(self, node: ast.Import | ast.ImportFrom, func: Scope | None, chain) -> None:
        for alias in node.names:
            self._bind(
                func,
                node,
                None,
                None,
                chain,
                name=bound_name(alias),
            )

    def _collect_handler(self, node: ast.ExceptHandler, func: Scope | None, chain) -> None:
        if node.name:
            self._bind(func, node, None, None, chain, name=node.name)

    def _collect_call(self, node: ast.Call, func: Scope | None, chain) -> None:
        callee = node.func
        if (
            func is not None
            and isinstance(callee, ast.Attribute)
            and callee.attr in _BUILDING_METHODS
            and isinstance(callee.value, ast.Name)
        ):
            self.built.setdefault(id(func.node), set()).add(callee.value.id)
        key = call_name(node.func)
        if key:
            self._rank += 1
            self._sites.setdefault(key, []).append(((*self._rank_prefix, self._rank), node, func))

    # -- on demand -----------------------------------------------------

    def _outline(self, tree: ast.Module) -> None:
        """The asserts and classes of the whole module, in the order a whole walk meets them.

        Statements alone (no expression holds one), so this is a fraction of a
        walk of every node; each assert and class remembers which deferred
        function it sits in, to be indexed before it is asked about.
        """
        deferred = self._deferred
        text = self._source.text if self._source is not None else None
        ends = self._ends()
        stack: list[tuple[ast.AST, ast.AST | None]] = [(tree, None)]
        pop, push = stack.pop, stack.extend
        while stack:
            node, unit = pop()
            kind = type(node)
            if kind is ast.Assert:
                self.asserts.append(node)
                self._unit_of[node] = unit
                continue
            if kind is ast.ClassDef:
                self.class_names.setdefault(node.name, node)
                self._unit_of[node] = unit
            elif unit is None and node in deferred:
                if text is not None:
                    # Neither word in its text: no assert and no class in it to record.
                    start = ends[node.lineno - 2] if node.lineno > 1 else 0
                    end = ends[(node.end_lineno or node.lineno) - 1]
                    if text.find("assert", start, end) < 0 and text.find("class", start, end) < 0:
                        continue
                unit = node
            children = [
                (item, unit)
                for name in _STATEMENT_FIELDS.get(kind) or _statement_fields(kind)
                for item in getattr(node, name)
            ]
            children.reverse()
            push(children)

    def ensure(self, node: ast.AST | None) -> None:
        """Index the deferred function ``node`` (and all it nests) if it is not yet."""
        entry = self._deferred.pop(node, None) if node is not None else None
        if entry is None:
            return
        inner, rank = entry
        saved = self._rank_prefix, self._rank
        self._rank_prefix, self._rank = (rank,), 0
        stack: list[tuple] = []
        self._expand(node, inner, None, (), stack)
        visit, pop = self._visit, stack.pop
        while stack:
            visit(*pop(), stack)
        self._rank_prefix, self._rank = saved

    def scope_at(self, node: ast.AST) -> Scope | None:
        """The function an assert (or a class) sits in, its function indexed."""
        self.ensure(self._unit_of.get(node))
        return self.owner.get(node)

    def ensure_class(self, klass: ast.ClassDef) -> None:
        """Index the function a class is nested in, so its methods' scopes exist."""
        self.ensure(self._unit_of.get(klass))

    def calls_of(self, name: str) -> list[tuple[ast.Call, Scope | None]]:
        """Every call site of ``name`` (``name(...)``, ``x.name(...)``) in the module, with
        its caller, in the order a whole-module walk meets them."""
        found = self._calls.get(name)
        if found is None:
            for node in self._units_naming(name):
                self.ensure(node)
            sites = sorted(self._sites.get(name, ()), key=_first)
            found = self._calls[name] = [(call, caller) for _, call, caller in sites]
        return found

    def _units_naming(self, name: str) -> list[ast.AST]:
        """The deferred functions whose text may call ``name``: the word, followed by a
        ``(``, in their lines -- or anything that is not ASCII (an identifier may be
        spelled another way)."""
        if not self._deferred:
            return []
        if not name.isascii():
            return list(self._deferred)
        units = self._units
        if units is None:
            units = self._units = sorted(
                (
                    min([node.lineno, *(d.lineno for d in node.decorator_list)]),
                    node.end_lineno or node.lineno,
                    node,
                )
                for node in self._deferred
            )
            self._starts = [u[0] for u in units]
            lines = self._source.lines
            text = self._source.text
            self._foreign = (
                set()
                if text.isascii()
                else {
                    node
                    for first, last, node in units
                    if not "".join(lines[first - 1 : last]).isascii()
                }
            )
        found = [node for node in self._foreign if node in self._deferred]
        starts, ends = self._starts, self._ends()
        text, size = self._source.text, len(name)
        # str.find, not a pattern with look-arounds: re cannot skip ahead to a
        # literal behind a look-behind, and crawled a large module per name.
        at = text.find(name)
        while at >= 0:
            end = at + size
            if not (at and _word(text[at - 1])) and _opens_call(text, end):
                line = bisect_right(ends, at) + 1
                i = bisect_right(starts, line) - 1
                if i >= 0 and units[i][1] >= line and units[i][2] in self._deferred:
                    found.append(units[i][2])
            at = text.find(name, end)
        return found

    def _ends(self) -> list[int]:
        """Each line's end as an offset into the text (empty without a source)."""
        ends = getattr(self, "_line_ends", None)
        if ends is None:
            lines = self._source.lines if self._source is not None else ()
            ends = self._line_ends = list(accumulate(map(len, lines)))
        return ends

    def is_init_helper(self, name: str) -> bool:
        """A private method called only as ``self.m(...)`` from constructors.

        ``_init_from_node(node)`` called from every subclass's ``__init__`` is
        part of construction: what it copies from its argument is input.
        """
        if not name.startswith("_") or name.endswith("__"):
            return False
        sites = self.calls_of(name)
        return bool(sites) and all(
            caller is not None
            and caller.name in CONSTRUCTORS
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == caller.self_name
            for call, caller in sites
        )

    def dominating_binding(self, name: str, func: Scope, at: ast.AST):
        """The last binding of ``name`` that every path to ``at`` passes through."""
        chain = self.blocks.get(at, ())
        best = last = None
        for entry in func.bindings.get(name, []):
            stmt, _, bchain = entry
            if not before(stmt, at) or stmt is at:
                continue
            if isinstance(stmt, _ASSIGNS) and inside(at, stmt):
                continue  # `q, n = trim(q, n)`: the call's arguments are read before it binds
            if last is None or before(last[0], stmt):
                last = entry
            if chain[: len(bchain)] != bchain:
                continue  # in a branch or loop the assert is not inside
            if isinstance(stmt, ast.NamedExpr):
                continue  # a walrus inside a condition may not run
            if best is None or before(best[0], stmt):
                best = entry
        if last is not None and last is not best and self._same_guard(last, func, chain):
            return last
        return best

    def _assigned(self, func: Scope) -> frozenset[str]:
        """What the function assigns as a target anywhere (``self.x = ...``), once per
        function: ``ast.dump`` of each, read back as a load."""
        cache = self.__dict__.setdefault("_assigned_memo", {})
        key = id(func.node)
        if key not in cache:
            found = set()
            for node in ast.walk(func.node):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                    targets = [node.target]
                else:
                    continue
                found.update(ast.dump(t).replace("Store()", "Load()") for t in targets)
            cache[key] = frozenset(found)
        return cache[key]

    def _same_guard(self, entry, func: Scope, chain) -> bool:
        """Is ``entry``, the last binding before the place ``chain`` leads to and not
        one that dominates it, under ``if C:`` while the place sits under another
        ``if C:`` that reads the same twice?

        ``if self.mrope: positions = batch.mrope_positions`` ... ``if self.mrope:
        assert positions.ndim == 2``: only a path through the first branch reaches
        the assert, so that binding is what it reads, as if it dominated.
        """
        stmt, _, bchain = entry
        if isinstance(stmt, ast.NamedExpr):
            return False  # a walrus in a condition may not run, whatever guards it
        outer, block = bchain[:-1], bchain[-1]
        test = self.guards.get(block)
        if test is None or chain[: len(outer)] != outer:
            return False
        others = [
            self.guards[other]
            for other in chain[len(outer) :]
            if other != block and other in self.guards
        ]
        if not others:
            return False
        same = ast.dump(_tested(test))
        if not any(ast.dump(_tested(t)) == same for t in others):
            return False
        return _stable_test(test, func, self._assigned(func))

    def other_branch(self, bchain: tuple[int, ...], at: ast.AST) -> bool:
        """Does a binding in the blocks ``bchain`` sit in the other branch of an ``if`` the
        place ``at`` sits in (its body against its ``else``, an ``elif`` being in the
        ``else``), with no loop around that ``if`` to carry the value from one pass to
        the next? Then no path from the binding reaches the place."""
        chain = self.blocks.get(at, ())
        for depth, (mine, theirs) in enumerate(zip(chain, bchain, strict=False)):
            if mine == theirs:
                continue
            test = self.guards.get(theirs, self.else_guards.get(theirs))
            if test is None or test is not self.guards.get(mine, self.else_guards.get(mine)):
                return False  # not the two branches of one `if`
            return not any(b in self.loop_blocks for b in chain[:depth])
        return False

    def shares_loop(self, chain: tuple[int, ...], at: ast.AST) -> bool:
        at_chain = self.blocks.get(at, ())
        return any(b in self.loop_blocks and b in at_chain for b in chain)


CONSTRUCTORS = ("__init__", "__post_init__")


def _tested(test: ast.expr) -> ast.expr:
    """``if (flag := x is None):`` tests what a later ``if flag:`` tests."""
    if isinstance(test, ast.NamedExpr):
        return ast.Name(id=test.target.id, ctx=ast.Load())
    return test


def _stable_test(test: ast.expr, func: Scope, assigned: frozenset[str]) -> bool:
    """A test that reads the same twice: the object's own attributes the function
    never assigns (``self.is_mrope_enabled``, ``not self.cfg.fused``), or a local
    flag it binds once (``disallow = sb is None`` ... ``if disallow:``)."""
    read = set()
    for node in ast.walk(_tested(test)):
        if isinstance(node, ast.Name):
            if node.id == func.self_name:
                continue
            if node.id in func.params or len(func.bindings.get(node.id, ())) != 1:
                return False
            read.add(node.id)
        elif isinstance(node, ast.Attribute):
            read.add(ast.dump(node))
        elif not isinstance(
            node, (ast.Load, ast.Constant, ast.UnaryOp, ast.Not, ast.BoolOp, ast.And, ast.Or)
        ):
            return False
    return bool(read) and read.isdisjoint(assigned)


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _opens_call(text: str, at: int) -> bool:
    """Whether what follows ``at`` can be a call's ``(``: past blanks, line breaks,
    backslash continuations, comments and closing parentheses (``(self.f)(x)``
    calls ``f``) -- all a call may hold between its callee's name and its
    parenthesis -- the next character is ``(``."""
    size = len(text)
    while at < size:
        char = text[at]
        if char == "(":
            return True
        if char in " \t\f\r\n\\)":
            at += 1
        elif char == "#":
            # A comment ends at the first line break of any kind (\n, \r\n, \r).
            newline = text.find("\n", at)
            newline = size if newline < 0 else newline
            ret = text.find("\r", at, newline)
            at = newline if ret < 0 else ret
        else:
            return False
    return False


def _first(site: tuple) -> tuple[int, ...]:
    return site[0]


_STATEMENT_FIELDS: dict[type, tuple[str, ...]] = {}


def _statement_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that hold statements (or handlers, or cases)."""
    fields = _STATEMENT_FIELDS[kind] = tuple(
        name
        for name in kind._fields
        if name in ("body", "orelse", "finalbody", "handlers", "cases")
        and not (kind is ast.Lambda or issubclass(kind, ast.expr))
    )
    return fields


_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers"})
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# Statements that bind a name to the value they hold: simple, so a node inside one is in it.
_ASSIGNS = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_FUNCTIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})
# Nodes that hold nothing the index records.
_LEAVES = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.Load,
        ast.Store,
        ast.Del,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.alias,
    }
)
# Expressions questions are asked at (a call site, a comprehension's variables).
_POSITIONED = frozenset(
    {
        ast.Call,
        ast.NamedExpr,
        ast.ListComp,
        ast.SetComp,
        ast.GeneratorExp,
        ast.DictComp,
        ast.Lambda,
        ast.ExceptHandler,
    }
)


# What ``BindingIndex._visit`` does with a node, by its type.
_SKIP, _ATTRIBUTE, _ASSERT, _FUNCTION, _CLASS, _PLAIN = (
    "skip",
    "attribute",
    "assert",
    "function",
    "class",
    "plain",
)
_COLLECTORS = {
    ast.Assign: BindingIndex._collect_assign,
    ast.AnnAssign: BindingIndex._collect_ann_assign,
    ast.AugAssign: BindingIndex._collect_aug_assign,
    ast.For: BindingIndex._collect_for,
    ast.AsyncFor: BindingIndex._collect_for,
    ast.With: BindingIndex._collect_with,
    ast.AsyncWith: BindingIndex._collect_with,
    ast.NamedExpr: BindingIndex._collect_named,
    ast.ListComp: BindingIndex._collect_comprehension,
    ast.SetComp: BindingIndex._collect_comprehension,
    ast.GeneratorExp: BindingIndex._collect_comprehension,
    ast.DictComp: BindingIndex._collect_comprehension,
    ast.Import: BindingIndex._collect_import,
    ast.ImportFrom: BindingIndex._collect_import,
    ast.ExceptHandler: BindingIndex._collect_handler,
    ast.Call: BindingIndex._collect_call,
}
_PLANS: dict[type, tuple] = {}
_SKIPPED: set[type] = set(_LEAVES)  # node types ``_visit`` returns on at once
# A statement list's role: a plain block, a loop's body, an `if`'s body or else.
_BLOCK, _LOOP_BODY, _IF_BODY, _IF_ELSE = "block", "loop body", "if body", "if else"
_FIELD_PLANS: dict[type, tuple[tuple[str, str | None], ...]] = {}


def _plan_for(kind: type) -> tuple:
    """(role, positioned, collector) of a node type, worked out on first sight."""
    collect = _COLLECTORS.get(kind)
    if kind in _LEAVES or (not kind._fields and collect is None and not issubclass(kind, ast.stmt)):
        # An operator or context singleton holds nothing and is asked nothing.
        role = _SKIP
    elif kind is ast.Attribute:
        role = _ATTRIBUTE
    elif kind is ast.Assert:
        role = _ASSERT
    elif kind in _FUNCTIONS:
        role = _FUNCTION
    elif kind is ast.ClassDef:
        role = _CLASS
    else:
        role = _PLAIN
    positioned = kind in _POSITIONED or issubclass(kind, ast.stmt)
    plan = _PLANS[kind] = (role, positioned, collect)
    if role is _SKIP:
        _SKIPPED.add(kind)
    return plan


def _field_plan(kind: type) -> tuple[tuple[str, str | None], ...]:
    """Each field of a node type with the role its statement list plays, if it is one."""
    out = []
    for name in kind._fields:
        block = None
        if name in _BLOCK_FIELDS:
            block = _BLOCK
            if name == "body" and issubclass(kind, _LOOPS):
                block = _LOOP_BODY
            elif name == "body" and issubclass(kind, ast.If):
                block = _IF_BODY
            elif name == "orelse" and issubclass(kind, ast.If):
                block = _IF_ELSE
        out.append((name, block))
    plan = _FIELD_PLANS[kind] = tuple(out)
    return plan


def unpack(target, value, out: list) -> None:
    if isinstance(target, ast.Name):
        out.append((target.id, value))
    elif isinstance(target, (ast.Tuple, ast.List)):
        elts = None
        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
            elts = value.elts
        for i, t in enumerate(target.elts):
            if elts is not None:
                unpack(t, elts[i], out)
            elif value is None:
                unpack(t, None, out)
            else:
                # An element of an unpacked value is read off it, not computed.
                unpack(t, Element(value) if not isinstance(value, Element) else value, out)
    elif isinstance(target, ast.Starred):
        unpack(target.value, value, out)
