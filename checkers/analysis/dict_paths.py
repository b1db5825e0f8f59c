"""The dicts a function builds, path by path: the part of a function's walk that
published-keys reads.

A name bound to a literal, ``dict(...)`` or another tracked dict is followed through the
statements (``checkers.analysis.function_walk`` drives the walk; this is its dict half): the
keys each path sets (definite on it, or only on some branch: "maybe"), whether a path may hold
any key (*open*: a spread, a computed key, a mapping merged in, the dict handed to a callee
the project cannot answer for), the callees it is handed to that may fill it, the keys the
function writes into a dict it was handed as a parameter, and the attributes assigned a call's
result (the *carriers* a reader elsewhere finds a producer through). ``ret`` records each
``return``'s path.
"""

from __future__ import annotations

import ast

from .functions import (
    _DEFS,
    _READ_ONLY_METHODS,
    INSTALLERS,
    K_HELD,
    K_INSTALLED,
    K_RESULT,
    UNKNOWN,
    _const_key,
)


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


def _literal_keys_into(state: _DictState, literal: ast.Dict, line: int) -> None:
    """A literal's constant keys, definite at ``line``; a computed key or a ``**`` spread
    opens the dict."""
    for key in literal.keys:
        k = _const_key(key) if key is not None else None
        if k is None:
            state.open = True
        else:
            state.definite.setdefault(k, line)


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


def _copy(state):
    if state is _DEAD:
        return _DEAD
    return {k: v.copy() for k, v in state.items()}


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


class DictPaths:
    """The dict half of ``FunctionWalker``: what assignments, bare calls and returns do to the
    dicts the function tracks (``state``: name -> ``_DictState``; ``_DEAD`` after a return)."""

    def carry(self, target: ast.Attribute, value, stmt) -> None:
        """``x.attr = f(...)``: a carrier, the attribute and the callee as spelled, the
        attribute holding the call's result (``K_RESULT``) -- or, for ``partial(f, x)`` or
        ``MethodType(f, x)`` of the same ``x``, ``f`` installed as ``x``'s method
        (``K_INSTALLED``). On ``self``, any other value is a carrier too, held as it is
        (``K_HELD``): a function's reference spelled as a call of it would be (``self.fill =
        fill_kv_cache``, ``self.fwd = self._forward_cuda``), anything else as ``?`` -- a
        parameter's value or a choice, which the class's other assignments of the
        attribute cannot be taken for."""
        on_self = type(target.value) is ast.Name and target.value.id == self.self_name
        kind = type(value)
        if kind is ast.Call:
            installed = self._installed(target, value)
            if installed is not None:
                self.carriers.append((target.attr, installed, stmt.lineno, on_self, K_INSTALLED))
            else:
                spelling = self.callee(value.func)
                self.carriers.append((target.attr, spelling, stmt.lineno, on_self, K_RESULT))
        elif on_self:
            spelling = self._reference(value) or UNKNOWN
            self.carriers.append((target.attr, spelling, stmt.lineno, True, K_HELD))

    def _reference(self, value) -> str | None:
        """A function's reference as a call of it would be spelled; None for any other
        value, and for a name bound here (a parameter, a local: it holds what its caller
        gave) -- only an import, a module's own name or this instance's attribute is
        spelled."""
        head = value
        while type(head) is ast.Attribute:
            head = head.value
        if type(head) is ast.Name and (head.id == self.self_name or head.id not in self.shadowed):
            return self.callee(value)
        return None

    def _installed(self, target: ast.Attribute, value: ast.Call) -> str | None:
        """The function ``partial(f, x)`` or ``MethodType(f, x)`` installs as ``x.attr``'s
        method, where ``x`` is the object assigned to."""
        func = value.func
        name = func.attr if type(func) is ast.Attribute else getattr(func, "id", "")
        if name not in INSTALLERS or len(value.args) < 2:
            return None
        if ast.dump(value.args[1]) != ast.dump(target.value):
            return None
        if type(value.args[0]) not in (ast.Name, ast.Attribute):
            return None
        return self._reference(value.args[0])

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
            self._forget_choices(name)
            if state is _DEAD:
                return state
            new = self.dict_value(value, stmt.lineno, state)
            if new is None:
                state.pop(name, None)
            else:
                state[name] = new
            return state
        if kind is ast.Attribute:
            self.carry(target, value, stmt)
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
            self._forget_choices(target.id)
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
            _literal_keys_into(tracked, other, line)
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
            _literal_keys_into(new, value, line)
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
                self._forget_choices(node.id)

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
