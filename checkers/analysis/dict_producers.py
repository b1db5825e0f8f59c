"""Which functions of a module may be a producer of a dict: a cheap look at the tree, before
any body is walked.

published-keys judges a read against the key sets of its producer's return paths, and a
producer is judged only when it returns, on some reachable path, a dict it built itself: a
literal, ``dict(...)``, or a name bound to one (``checkers.analysis.functions`` tracks exactly
these), and on no path anything else. So a module none of whose functions has such a return
holds no producer, and no read there can be linked to one: its bodies need not be walked.

What is found is a superset, never a subset, of the producers the full walk finds: a
function counts when one of its returns hands back a literal, ``dict(...)``, or a name it
assigns one of those (or a comprehension, or another name) anywhere in its own body, whether
or not that binding reaches the return, and whatever its other returns are. A class's
``__init__`` may count and is still no producer a call can reach (calling a class returns the
instance).

Before that, the text: ``may_build_a_returned_dict`` answers, without a parse, whether a
module can hold a producer at all -- a cheaper superset again, so published-keys leaves a
file unparsed when nothing else wants it.
"""

from __future__ import annotations

import ast
import re

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
# What holds statements: a return inside one of these is the function's own.
_COMPOUND = frozenset(
    getattr(ast, name)
    for name in (
        "If", "For", "AsyncFor", "While", "With", "AsyncWith", "Try", "TryStar", "Match",
        "ExceptHandler", "match_case",
    )
    if hasattr(ast, name)
)  # fmt: skip


def dict_producers(tree: ast.Module) -> frozenset[str]:
    """The names of the functions (methods and nested ones too) that may be producers."""
    found: set[str] = set()
    stack: list = list(tree.body)
    while stack:
        node = stack.pop()
        if type(node) in _DEFS:
            if _may_produce(node, stack):
                found.add(node.name)
            continue
        for field in _BLOCKS:
            stack.extend(getattr(node, field, ()) or ())
    return frozenset(found)


def spells_a_call_of(text: str, names) -> bool:
    """Whether ``text`` calls one of ``names`` somewhere: a ``name(`` that is no ``def name(``.
    A read is linked to a producer of its own module only through a call of it (its result,
    ``self``'s attribute assigned it, a caller's argument)."""
    for name in names:
        if text.count(name) <= 1:
            continue  # its definition alone
        for match in re.finditer(re.escape(name) + r"\s*\(", text):
            start = match.start()
            if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
                continue  # the end of a longer name
            before = text[max(0, start - 64) : start].rstrip()
            if before.endswith("def") and not (before[-4:-3].isalnum() or before[-4:-3] == "_"):
                continue  # `def name(`
            return True
    return False


# Each starts with a literal, so `re` jumps between its occurrences (a pattern led by `\b`
# or a look-behind is tried at every position: twenty-five times slower on vLLM's package).
# `[\s(\\]*` crosses what may stand between the two halves: spaces, a line break inside
# parentheses, an opening parenthesis, a backslash continuation.
_RETURN_BUILT = re.compile(r"return[\s(\\]*(?:\{|dict\s*\()")
_RETURN_NAME = re.compile(r"return[\s(\\]*(\w+)[ \t)]*(?:$|[;#])", re.M)
_BOUND_BUILT = re.compile(r"=(?!=)[\s(\\]*(?:\{|dict\s*\()")
_BOUND_NAME = re.compile(r"=(?!=)[\s(\\]*(\w+)[ \t)]*(?:$|[;#])", re.M)
_WORD = re.compile(r"\w+")


def may_build_a_returned_dict(text: str) -> bool:
    """Whether a module's text may hold a function that returns a dict it built: a
    superset, read without a parse, of the modules the full walk finds a closed producer in.

    A closed return path hands back a literal, ``dict(...)``, or a name bound to one --
    directly or through other names (``checkers.analysis.dict_paths``, which opens every
    other path). So such a module spells ``return`` before ``{`` or ``dict(``, or returns a
    name that an ``=`` binds, possibly through other names, to ``{`` or ``dict(``. The scan
    reads every ``=`` as binding every name of its logical line before it -- an
    annotation's, a subscript's, a keyword argument's too -- and every ``return NAME`` in
    the module as returning that name, whatever function either is in: it never says no
    where the walk could say yes, only yes more often. Strings and comments are read as
    code, which only adds matches.
    """
    for found in _RETURN_BUILT.finditer(text):
        if _starts_a_word(text, found.start()):
            return True
    returned = {m.group(1) for m in _RETURN_NAME.finditer(text) if _starts_a_word(text, m.start())}
    if not returned:
        return False
    bound = set()
    for found in _BOUND_BUILT.finditer(text):
        if _assigns(text, found.start()):
            bound.update(_targets(text, found.start()))
    if returned & bound:
        return True
    if not bound:
        return False
    # `e = d` after `d = {}`: a name bound to a bound name is bound, to a fixed point.
    aliases = [
        (m.group(1), m.start()) for m in _BOUND_NAME.finditer(text) if _assigns(text, m.start())
    ]
    grew = True
    while grew:
        grew = False
        for name, at in aliases:
            if name in bound:
                new = set(_targets(text, at)) - bound
                if new:
                    bound |= new
                    grew = True
    return bool(returned & bound)


def _starts_a_word(text: str, at: int) -> bool:
    return at == 0 or not (text[at - 1].isalnum() or text[at - 1] == "_")


def _assigns(text: str, at: int) -> bool:
    """The ``=`` at ``at`` ends no ``==``, ``!=``, ``<=`` or ``>=``."""
    return at == 0 or text[at - 1] not in "=!<>"


def _targets(text: str, at: int) -> list[str]:
    """Every word of the logical line before ``at``: a target spread over lines by an open
    bracket (``meta: dict[\n    str, int\n] = {}``) is read from where the bracket opened."""
    start = text.rfind("\n", 0, at) + 1
    depth = _closing(text[start:at])
    while depth > 0 and start > 0:
        above = text.rfind("\n", 0, start - 1) + 1
        depth += _closing(text[above:start])
        start = above
    return _WORD.findall(text, start, at)


def _closing(segment: str) -> int:
    """Brackets ``segment`` closes, less those it opens."""
    return sum(map(segment.count, ")]}")) - sum(map(segment.count, "([{"))


def _dict_made(value) -> bool:
    kind = type(value)
    return kind is ast.Dict or (
        kind is ast.Call and type(value.func) is ast.Name and value.func.id == "dict"
    )


def _may_produce(function, outer: list) -> bool:
    """Whether a ``return`` of the function's own body (nested definitions are pushed on
    ``outer``, each judged as its own function) may hand back a dict it built. Its other
    returns are not asked about: one in code after a ``return`` is never walked, so it opens
    no path, and a function with only such returns is rare enough to walk."""
    returned = []
    bound: set[str] = set()
    stack: list = list(function.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _DEFS or kind is ast.ClassDef:
            outer.append(node)
            continue
        if kind is ast.Return:
            if node.value is not None:
                returned.append(node.value)
        elif kind is ast.Assign and _binds_a_dict(node.value):
            bound.update(t.id for t in node.targets if type(t) is ast.Name)
        elif (
            kind is ast.AnnAssign
            and node.value is not None
            and type(node.target) is ast.Name
            and _binds_a_dict(node.value)
        ):
            bound.add(node.target.id)
        if kind in _COMPOUND:
            for field in _BLOCKS:
                stack.extend(getattr(node, field, ()) or ())
    return any(
        _dict_made(value) or (type(value) is ast.Name and value.id in bound) for value in returned
    )


def _binds_a_dict(value) -> bool:
    """A value whose name the walk tracks as a dict: built, comprehended, or another name."""
    return _dict_made(value) or type(value) in (ast.Name, ast.DictComp)


__all__ = ["dict_producers", "may_build_a_returned_dict", "spells_a_call_of"]
