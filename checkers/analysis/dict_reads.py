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


def _carried(rule, program, module, outline, attr, *, on_self) -> list[tuple[str, str]]:
    from .functions import F_CARRIERS, O_QUAL

    out = []
    for name, spelling, _line, is_self, held in module.facet(outline[O_QUAL], F_CARRIERS) or ():
        if name == attr and not held and (is_self or not on_self):
            target = rule._resolve(program, module, outline, spelling)
            if target is not None:
                out.append(target)
    return out


def _all_carried(program, module, outline):
    from .functions import F_CARRIERS, O_QUAL

    for name, spelling, _line, _is_self, held in module.facet(outline[O_QUAL], F_CARRIERS) or ():
        if held:
            continue  # the attribute holds the value itself, not a call's result
        target = program.resolve_call(module, outline, spelling)
        if target is not None:
            yield name, target


def _called_names(program, module, caller) -> frozenset[str]:
    """The last names of the calls in ``caller``'s body (that facet of its details: a body
    that calls no function of the name is not walked whole)."""
    from .functions import F_CALLED, O_QUAL

    return module.facet(caller[O_QUAL], F_CALLED) or frozenset()


def _filled(rule, program, module, outline, spelling, where) -> frozenset[str] | None:
    """Keys a callee writes into the dict handed to it at ``where``; None when not known."""
    from .functions import D_FILLS, O_SELF, positional_params

    target = rule._resolve(program, module, outline, spelling)
    if target is None:
        return None
    callee_module = program.module(target[0])
    callee = callee_module.outline(target[1]) if callee_module is not None else None
    detail = callee_module.detail(target[1]) if callee is not None else None
    if detail is None:
        return None
    params = positional_params(callee)
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


def callers_passing(rule, program, module, outline, param) -> list[tuple[tuple, tuple]]:
    """``(caller outline, origin of the argument)`` for each call in ``module`` of the
    function ``outline`` that passes its parameter ``param`` (a position or a name)."""
    from .functions import C_ORIGINS, C_SPELLING, D_CALLS, O_QUAL, O_SELF, positional_params

    key = ("callers", module.name, outline[O_QUAL], param)
    if key in rule._memo:
        return rule._memo[key]
    found = []
    params = positional_params(outline)
    name = params[param] if isinstance(param, int) and param < len(params) else param
    short = outline[O_QUAL].rpartition(".")[2]
    spelled = module.lines_mentioning(short)
    for caller in module.outlines:
        if spelled is not None and not _spans(spelled, caller):
            continue  # the caller's text never spells the callee: no details needed
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
