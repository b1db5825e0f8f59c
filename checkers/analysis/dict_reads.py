"""A dict's reads and its producers' keys, for published-keys: the helpers its rule asks.

Which lines of a file read a string key (``[...]``) or guard one (`` in ``, ``.get(``), the
callers in a module that hand a function its dict, the attributes a producer's result is
assigned to (*carriers*), and the keys a callee writes into a dict it is handed.
``checkers.rules.published_keys`` holds the kind, its docs and examples.
"""

from __future__ import annotations

from .resolution import _spans


def _segment(source, span) -> str:
    line, col, end_line, end_col = span
    if line != end_line:
        return source.lines[line - 1][col - 1 :].rstrip() + " ..."
    return source.lines[line - 1][col - 1 : end_col - 1]


# What building a dict spells: undeclared, a reader's producers are in its own module.
_DICT_BUILDERS = ("return {", "= {", "dict(", ".update(", "setdefault(", ": {")


def _local_mro(module, klass: str) -> list[str]:
    """``klass`` and its bases defined in the same module, depth first, each once."""
    order, stack = [], [klass]
    while stack:
        current = stack.pop()
        if current in order or module is None or current not in module.classes:
            continue
        order.append(current)
        stack.extend(reversed([b for b in module.classes[current][2] if b in module.classes]))
    return order


def _names(keys) -> str:
    return ", ".join(f"`{k}`" for k in keys)


def _guard_lines(text: str) -> tuple[int, ...]:
    from .imports import lines_mentioning

    return lines_mentioning(text, ('" in ', "' in ", '" not in ', "' not in ", ".get(", ".pop("))


def _read_lines(text: str) -> tuple[int, ...]:
    from .imports import lines_mentioning

    return lines_mentioning(text, ('["', "['"))


def _carried(rule, program, module, outline, detail, attr, *, on_self) -> list[tuple[str, str]]:
    from .functions import D_CARRIERS

    out = []
    for name, spelling, _line, is_self in detail[D_CARRIERS] if detail else ():
        if name == attr and (is_self or not on_self):
            target = rule._resolve(program, module, outline, spelling)
            if target is not None:
                out.append(target)
    return out


def _all_carried(program, module, outline, detail):
    from .functions import D_CARRIERS

    for name, spelling, _line, _is_self in detail[D_CARRIERS] if detail else ():
        target = program.resolve_call(module, outline, spelling)
        if target is not None:
            yield name, target


def _called_names(program, module, caller) -> frozenset[str]:
    """The last names of the calls in ``caller``'s body (from its details)."""
    from .functions import C_SPELLING, D_CALLS, O_QUAL

    detail = module.detail(caller[O_QUAL])
    if detail is None:
        return frozenset()
    return frozenset(c[C_SPELLING].rpartition(".")[2] for c in detail[D_CALLS])


def _filled(rule, program, module, outline, spelling, where) -> frozenset[str] | None:
    """Keys a callee writes into the dict handed to it at ``where``; None when not known."""
    from .functions import D_FILLS, O_PARAMS, O_SELF

    target = rule._resolve(program, module, outline, spelling)
    if target is None:
        return None
    callee_module = program.module(target[0])
    callee = callee_module.outline(target[1]) if callee_module is not None else None
    detail = callee_module.detail(target[1]) if callee is not None else None
    if detail is None:
        return None
    params = [p for p in callee[O_PARAMS] if not p.startswith("*")]
    if isinstance(where, int):
        bound = 1 if callee[O_SELF] and "." in spelling else 0
        index = where + bound
        name = params[index] if index < len(params) else None
    else:
        name = where
        index = params.index(where) if where in params else where
    keys: set[str] = set()
    for param, filled, open_ in detail[D_FILLS]:
        if param in (index, name):
            if open_:
                return None
            keys.update(k for k, _line, _certain in filled)
    return frozenset(keys)


class Reach:
    """Which functions of the module being checked a producer's dict can reach, read from its
    text: undeclared, a read's producer is a function of its own module, and only a function
    spelling a producer's name can take the dict from it.

    A read is linked to a producer by a call whose result it reads (``c``), by ``self``'s
    attribute a method assigned the call's result (``s``), or by a parameter whose callers
    pass one of those, or a parameter of theirs whose own callers do (``p``, two callers up).
    A call resolves, undeclared, to a function of the module named by the call's last name
    (``build``, ``self.build``), or, a class called, to the ``__init__`` it runs (the one
    other name a call's target can have). So:

    * ``names``: what a call linking a read to a producer spells -- the names of the
      functions that may be producers (``dict_producers``: a superset of those the walk
      finds), and the names of the module's classes whose ``__init__`` may be one: every
      class where an ``__init__`` of the module may be a producer, and a class whose
      ``__init__`` may be another module's (``_init_elsewhere``);
    * ``roots``: the functions whose text spells one of ``names`` (the only ones whose calls,
      or whose assignments to ``self``, can hold a producer's result), and the methods of a
      class whose text spells an attribute such a method assigns a call's result to, where
      that method's class is the class or one of its bases in the module (``self``'s
      attribute, assigned there, read here);
    * a function *may feed* a dict to its callees when it is a root, or one of its callers
      is (a parameter it passes on); a read *may be linked* in a root, or in a function one
      of whose callers may feed it. A caller is a function whose text spells the callee's
      name, as ``callers_passing`` asks before it reads a body.

    Every link ``published_keys`` can find passes these tests, so a function that may not be
    linked needs no reads pass, and a caller that may not feed needs no walk of its body.
    """

    __slots__ = ("_callers", "_feeds", "_order", "_parent", "_starts", "module", "names", "roots")

    def __init__(self, module, outliner, names, text: str) -> None:
        from .functions import O_CLASS, O_END, O_LINE, O_QUAL
        from .imports import lines_mentioning

        self.module = module
        outlines = module.outlines
        # The functions by their first line, each with the one whose lines hold it: a
        # function's lines hold a nested one's whole, and two functions' lines are otherwise
        # apart, so the functions holding a line are the last to start at or above it and
        # those that hold that one.
        self._order = sorted(range(len(outlines)), key=lambda i: outlines[i][O_LINE])
        self._starts = [outlines[i][O_LINE] for i in self._order]
        self._parent: list[int] = []
        open_: list[int] = []
        for at, i in enumerate(self._order):
            while open_ and outlines[self._order[open_[-1]]][O_END] < outlines[i][O_LINE]:
                open_.pop()
            self._parent.append(open_[-1] if open_ else -1)
            open_.append(at)
        names = set(names)
        for klass in module.classes:
            if "__init__" in names or _init_elsewhere(module, klass):
                names.add(klass.rpartition(".")[2])  # a call of the class runs that __init__
        self.names = frozenset(names)
        roots = self.holders(lines_mentioning(text, tuple(names)))
        # class -> the attributes its methods among the roots assign a call's result to
        carried: dict[str, set[str]] = {}
        for index, o in enumerate(outlines):
            if o[O_CLASS] and o[O_QUAL] in roots:
                found = _assigned(outliner.node(index))
                carried.setdefault(o[O_CLASS], set()).update(found)
        if any(carried.values()):
            spelling: dict[str, set[str]] = {}  # attribute -> the functions spelling it
            for o in outlines:
                if o[O_QUAL] in roots:
                    continue
                attrs = set().union(*(carried.get(k, ()) for k in _local_mro(module, o[O_CLASS])))
                for attr in attrs:
                    if attr not in spelling:
                        spelling[attr] = self.holders(lines_mentioning(text, (attr,)))
                    if o[O_QUAL] in spelling[attr]:
                        roots.add(o[O_QUAL])
                        break
        self.roots = frozenset(roots)
        self._callers: dict[str, set[str]] = {}
        self._feeds: dict[str, bool] = {}

    def holders(self, lines) -> set[str]:
        """The functions whose lines (``def`` to end) hold one of ``lines``."""
        import bisect

        from .functions import O_END, O_QUAL

        found: set[str] = set()
        outlines = self.module.outlines
        for line in lines:
            at = bisect.bisect_right(self._starts, line) - 1
            while at >= 0:
                outline = outlines[self._order[at]]
                if outline[O_END] >= line:
                    found.add(outline[O_QUAL])
                at = self._parent[at]
        return found

    def callers(self, qual: str) -> set[str]:
        """The functions whose text spells ``qual``'s name (the module is the file being
        checked: its text is at hand, and its lines are shared with ``callers_passing``)."""
        short = qual.rpartition(".")[2]
        found = self._callers.get(short)
        if found is None:
            found = self._callers[short] = self.holders(self.module.lines_mentioning(short))
        return found

    def may_feed(self, qual: str) -> bool:
        found = self._feeds.get(qual)
        if found is None:
            found = qual in self.roots or not self.roots.isdisjoint(self.callers(qual))
            self._feeds[qual] = found
        return found

    def may_link(self, qual: str) -> bool:
        return qual in self.roots or any(self.may_feed(c) for c in self.callers(qual))


def _init_elsewhere(module, klass: str) -> bool:
    """Whether the ``__init__`` a call of ``klass`` runs may be another module's: no class of
    its bases in the module defines one, and one of them has a base the module does not."""
    mro = _local_mro(module, klass)
    if any(f"{k}.__init__" in module.functions for k in mro):
        return False
    return any(b not in module.classes for k in mro for b in module.classes[k][2])


def _assigned(function) -> set[str]:
    """The attributes a function's own statements (not a nested definition's) assign a call's
    result to, on any object: ``x.meta = build()``, ``x.meta: dict = build()``. The walk
    records a carrier (``functions.D_CARRIERS``) only from such a statement."""
    import ast

    found: set[str] = set()
    stack = list(function.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Assign or kind is ast.AnnAssign:
            if type(node.value) is ast.Call:
                targets = node.targets if kind is ast.Assign else (node.target,)
                found.update(t.attr for t in targets if type(t) is ast.Attribute)
            continue
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            stack.extend(getattr(node, field, ()) or ())
    return found


def callers_passing(rule, program, module, outline, param, reach=None) -> list[tuple[tuple, tuple]]:
    """``(caller outline, origin of the argument)`` for each call in ``module`` of the
    function ``outline`` that passes its parameter ``param`` (a position or a name); with
    ``reach`` (the module's, undeclared), only from callers that may feed it a dict."""
    from .functions import C_ORIGINS, C_SPELLING, D_CALLS, O_PARAMS, O_QUAL, O_SELF

    key = ("callers", module.name, outline[O_QUAL], param)
    if key in rule._memo:
        return rule._memo[key]
    found = []
    params = [p for p in outline[O_PARAMS] if not p.startswith("*")]
    name = params[param] if isinstance(param, int) and param < len(params) else param
    short = outline[O_QUAL].rpartition(".")[2]
    spelled = module.lines_mentioning(short)
    for caller in module.outlines:
        if spelled is not None and not _spans(spelled, caller):
            continue  # the caller's text never spells the callee: no details needed
        if reach is not None and not reach.may_feed(caller[O_QUAL]):
            continue  # no producer's dict can be in hand there: its body need not be walked
        if short not in _called_names(program, module, caller):
            continue
        detail = module.detail(caller[O_QUAL])
        if detail is None:
            continue
        for call in detail[D_CALLS]:
            if not call[C_SPELLING].endswith(short):
                continue
            target = rule._resolve(program, module, caller, call[C_SPELLING])
            if target != (module.name, outline[O_QUAL]):
                continue
            bound = 1 if outline[O_SELF] and "." in call[C_SPELLING] else 0
            for where, origin in call[C_ORIGINS]:
                if (isinstance(where, int) and where + bound == param) or where == name:
                    found.append((caller, origin))
    rule._memo[key] = found
    return found
