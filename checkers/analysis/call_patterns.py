"""Declared call patterns and the chains that reach them, for reachable-calls.

Dotted-name globs (``*.capture_*``, ``pkg.backends.*Impl.forward``) as one regular
expression, the text a file holding a match must spell (so a file that cannot hold an entry
is not parsed), the forbidden calls matched against a call as spelled or as resolved (with
the keyword or the evident int that makes one safe, and the receivers that hold host data),
and a chain of hops as the finding prints it. ``checkers.rules.reachable_calls`` holds the
kind, its docs and examples, and the search.
"""

from __future__ import annotations

import ast
import functools
import operator
import re

_MAX_FUNCTIONS = 20000  # functions one entry's search visits before it stops looking
# The head of the guard a call inside ``with cm(...):`` carries (``"with " + cm``'s spelling):
# no parameter's or attribute's test starts so, so no binding or condition decides it.
CONTEXT = "with "


def _bindings(
    program,
    target,
    spelling: str,
    call,
    bound: int | None = None,
    holding: dict | None = None,
    caller: tuple | None = None,
) -> frozenset:
    """What a call binds in the callee, by parameter name: each parameter it passes a
    literal or a value not None by its form (``function_walk._bound``), and each it leaves
    out that has such a default (``O_DEFAULTS``; unless a starred argument may fill it);
    and, for a parameter of the ``caller`` (its outline) handed on unchanged, the literal
    its own caller bound (``holding``) --
    ``update(..., use_ragged=False)`` reaches ``if use_ragged:`` in the helper ``update``
    hands ``use_ragged`` to -- and what the tests around the call say of it, as facts keyed
    ``guard?`` in the callee's names: a call in the ``else`` of ``if
    mode.is_decode_or_idle():`` that hands ``mode`` on gives the callee
    ``("mode.is_decode_or_idle()?", False)`` -- and so of a local the call hands on
    unchanged (the walk's ``("f", facts)`` origin). A ``**kwargs`` the caller hands on whole
    holds what its own caller passed (``("**", keys)`` in the caller's bindings): its keys
    count as passed, and a callee that hands its own on is bound the keys it gets. ``bound``
    is the leading parameters bound before the call's arguments where the spelling does not
    tell (a method installed with ``partial(f, obj)``: ``obj``)."""
    from .functions import (
        C_CONSTS,
        C_GUARDS,
        C_KEYWORDS,
        C_NARGS,
        C_ORIGINS,
        O_DEFAULTS,
        O_KWONLY,
        positional_params,
        self_bound,
    )

    consts = list(call[C_CONSTS])
    passed: dict[str, object] = {}  # a caller's parameter handed on unchanged -> where
    spread = None  # the keywords the caller's `**kwargs`, handed on here, holds
    told = []  # what the caller's tests say of a local it hands on: (where, rest, truth)
    if caller is not None:
        names = positional_params(caller)
        for where, origin in call[C_ORIGINS]:
            if origin[0] == "f":
                told.extend((where, rest, truth) for rest, truth in origin[1])
                continue
            if origin[0] != "p":
                continue
            if where == "**":
                spread = (holding or {}).get("**")
                if spread is not None:
                    consts.extend((name, holding[name]) for name in spread if name in holding)
                continue
            # A position is the walk's index into these same parameters (`origin_of`).
            name = names[origin[1]] if isinstance(origin[1], int) else origin[1]
            passed.setdefault(name, where)
            if holding and name in holding:
                consts.append((where, holding[name]))
    facts = told
    if passed:
        known = list(call[C_GUARDS])
        if holding:
            known += [(k[:-1], v) for k, v in holding.items() if k.endswith("?")]
        for guard, truth in known:
            if type(guard) is not str:
                continue  # an `or`'s ways: no one fact of a value
            root = _ROOT.match(guard)
            if root is not None and root[0] in passed:
                facts.append((passed[root[0]], guard[root.end() :], truth))
    mod = program.module(target[0])
    outline = mod.outline(target[1]) if mod is not None else None
    if outline is None:
        return frozenset()
    defaults = outline[O_DEFAULTS]
    keywords = call[C_KEYWORDS]
    # Which keywords the call passes, where it says: its own and a `**kwargs` whose keys its
    # caller told; None where a `**` argument may hold any.
    named = (
        [k for k in keywords if k != "**"] if spread is not None or "**" not in keywords else None
    )
    if named is not None and spread:
        named += spread
    hands_on = named is not None and _hands_on_kwargs(mod, target[1], outline)
    if not consts and not facts and not defaults and not hands_on:
        return frozenset()
    params = positional_params(outline)
    shift = bound if bound is not None else self_bound(outline, spelling, target[1])

    def param(where):
        if isinstance(where, int):
            return params[where + shift] if where + shift < len(params) else None
        return where

    out = []
    for where, value in consts:
        name = param(where)
        if name is not None:
            out.append((name, value))
    for where, rest, truth in facts:
        name = param(where)
        if name is not None:
            out.append((f"{name}{rest}?", truth))
    if defaults and call[C_NARGS] >= 0 and named is not None:
        # What the call leaves out holds its default; a starred argument may fill any.
        given = {*params[: shift + call[C_NARGS]], *named}
        out.extend(item for item in defaults if item[0] not in given)
    if hands_on:
        # The keywords the callee names none of are what its own `**kwargs` holds.
        taken = {*params, *outline[O_KWONLY]}
        out.append(("**", tuple(sorted({k for k in named if k not in taken}))))
    return frozenset(out)


def _hands_on_kwargs(mod, qual: str, outline) -> bool:
    """Whether the function has a ``**kwargs`` it hands on whole to a call (``f(**kwargs)``,
    the walk's ``("**", ...)`` origin): only there does what it holds decide anything."""
    from .functions import C_ORIGINS, D_CALLS, O_KWONLY

    if not any(p.startswith("**") for p in outline[O_KWONLY]):
        return False
    detail = mod.detail(qual)
    return detail is not None and any(
        where == "**" for call in detail[D_CALLS] for where, _ in call[C_ORIGINS]
    )


# The name a guard tests the value of: `mode` in `mode.is_decode()`, `p is None`, `p == 1`.
_ROOT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _bound_rules_out(bound: dict, guard: str, required: bool) -> bool:
    """Whether the literals a caller binds (``_bindings``) decide a guard of the callee's call
    against the truth it needs: ``use_ragged`` bound to ``False`` rules out ``if
    use_ragged:``'s body, ``page_size`` bound to ``1`` the ``else`` of ``if page_size ==
    1:``, ``strict`` bound to ``None`` the body of ``if strict is not None:``. A comparison
    with a name's value (``mode == Mode.DECODE``) is not decided here: the literal is known,
    the constant is not. A value known only not to be None (``NOT_NONE``: ``lens.cpu()``
    passed) decides ``is None`` and nothing else."""
    from .functions import NOT_NONE

    fact = bound.get(guard + "?")
    if fact is not None:
        return fact is not required
    if guard.endswith(" is None"):
        tested = guard.removesuffix(" is None")
        return tested in bound and (bound[tested] is None) is not required
    tested, sep, constant = guard.partition(" == ")
    if sep:
        value = bound.get(tested, NOT_NONE)
        if value is NOT_NONE:
            return False
        literal = _literal(constant)
        return literal is not _UNKNOWN and (value == literal) is not required
    order = _order(guard)
    if order is not None:
        tested, holds = order
        value = bound.get(tested, NOT_NONE)
        return type(value) in (int, float) and holds(value) is not required
    value = bound.get(guard, NOT_NONE)
    return value is not NOT_NONE and bool(value) is not required


_UNKNOWN = object()
# An order's operators as a guard spells them, what each tests, and its negation; and a
# guard of an order against a number, as the walk spells it: `meta.num_prefills > 0`.
_COMPARE = {"<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
_ORDER = re.compile(rf"(.+) ({'|'.join(_COMPARE)}) (-?[0-9][0-9.e+-]*)")


def _order(guard: str):
    """``(subject, test of a number)`` for an order's guard (``n > 0`` -> ``("n", v > 0)``),
    or None for a guard of another shape."""
    match = _ORDER.fullmatch(guard)
    if match is None:
        return None
    number = _literal(match[3])
    if type(number) not in (int, float):
        return None
    compare = _COMPARE[match[2]]
    return match[1], lambda value: compare(value, number)


@functools.lru_cache(maxsize=1024)
def _literal(spelling: str):
    """A guard's constant as a value -- a literal's ``repr`` read back -- or ``_UNKNOWN`` for
    a dotted name."""
    try:
        return ast.literal_eval(spelling)
    except (ValueError, SyntaxError):
        return _UNKNOWN


def _hops(parent, node, call, path) -> list[tuple]:
    """The chain to ``node`` (whose ``call`` is forbidden): ``(module, qual, call, path)`` a hop."""
    out = [(node[0], node[1], call, path)]
    link = parent[node]
    while link is not None:
        prev, prev_call, prev_path = link
        out.append((prev[0], prev[1], prev_call, prev_path))
        link = parent[prev]
    out.reverse()
    return out


def _spelled(spelling: str) -> str:
    """A call as the finding prints it: ``?.item`` (a method of an unnamed value) as ``.item()``,
    ``lens[].max`` (of an element) as ``lens[...].max()``."""
    spelling = spelling.replace("[]", "[...]")
    if spelling.startswith("?."):
        return spelling[1:] + "()"
    return spelling + "()"


def _where(call) -> str:
    """The tests a call runs under, as a hop of a finding prints them after its line
    (``, where mode != 'decode', meta.kv_size is None``): each guard the walk recorded
    around it (``C_GUARDS``) with the truth it holds in, an ``or``'s ways joined; ``""``
    where it runs under none. A reader of the chain sees which branch it assumes, and a
    maintainer the fact an ``entry-conditions`` or ``boundary-contexts`` entry would state.
    That a parameter is not None is not printed: the walk records it past every use of the
    parameter (``lens.max()``), so it would be said of nearly every call, and says no branch.
    That an attribute is (``meta.kv_size is not None``) is a test the code made, and is."""
    from .functions import C_GUARDS

    said = [
        _condition(guard, truth)
        for guard, truth in call[C_GUARDS]
        if truth
        or type(guard) is not str
        or not guard.endswith(" is None")
        or "." in guard[: -len(" is None")]
    ]
    return f"{_WHERE}{_BESIDE.join(said)}" if said else ""


# How a hop prints its tests after its line, and what stands between two of them; and the
# tests of a hop read back, up to the hop's end (`assumed_tests`).
_WHERE, _BESIDE = ", where ", ", "
_HOP_TESTS = re.compile(re.escape(_WHERE) + r"(.*?)\) -> ")
_OPENS, _CLOSES = "([{", ")]}"


def assumed_tests(message: str) -> list[str]:
    """The tests a reachable-calls finding's hops run under, as ``_where`` printed them, in
    the order the chain passes them: the branch the chain assumes, one test at a time (an
    ``or``'s ways stay one test). ``--statistics`` tallies them over a run's chains."""
    found = []
    for tests in _HOP_TESTS.findall(message):
        depth, quote, start = 0, "", 0
        for at, char in enumerate(tests):
            if quote:
                quote = "" if char == quote else quote
            elif char in "'\"`":
                quote = char
            elif char in _OPENS:
                depth += 1
            elif char in _CLOSES:
                depth -= 1
            elif depth == 0 and tests.startswith(_BESIDE, at):
                found.append(tests[start:at])
                start = at + len(_BESIDE)
        found.append(tests[start:])
    return found


def _condition(guard, truth: bool) -> str:
    """One guard as a test that holds: ``("x is None", False)`` -> ``x is not None``,
    ``("x == 1", False)`` -> ``x != 1``, ``("p", False)`` -> ``not p``, an ``or``'s ways
    ``(a or b)``, a ``with`` block's ``inside `with cm()```."""
    if type(guard) is tuple:
        return "(" + " or ".join(_condition(way, held) for way, held in guard) + ")"
    if guard.startswith(CONTEXT):
        return f"inside `{guard}()`"
    if truth:
        return guard
    if guard.endswith(" is None"):
        return guard[: -len(" is None")] + " is not None"
    subject, eq, constant = guard.partition(" == ")
    if eq:
        return f"{subject} != {constant}"
    match = _ORDER.fullmatch(guard)
    if match is not None:
        return f"{match[1]} {_NEGATED[match[2]]} {match[3]}"
    return f"not {guard}"


def _on_host(host: re.Pattern | None, where, parts: list[str]) -> bool:
    """Whether a receiver (its chain's ``parts``) is host data: past a copy to the host
    (``lens.cpu().int()``); computed from copies alone, or from the contract's ``host``
    names (``C_HOST``'s tuple: ``x = torch.clamp(lens_cpu, ...)``); and, with host names
    declared, a part of its chain named so (``lens_cpu``) or ``where`` True, where the walk
    saw a test that leaves unless it is."""
    from .functions import HOST_COPIES, HOST_COPY, HOST_TENSOR

    for part in parts:
        called = part.rstrip("[]")
        if called.endswith("()") and called[:-2] in HOST_COPIES:
            return True
    if type(where) is tuple and all(
        name in (HOST_COPY, HOST_TENSOR) or (host is not None and host.fullmatch(name))
        for name in where
    ):
        return True
    if host is None:
        return False
    return where is True or any(host.fullmatch(p.rstrip("()[]")) for p in parts)


def _copies_to_host(call) -> bool:
    """Whether a ``.to(...)`` call copies to the host and waits: its first argument or
    ``device=`` a literal CPU (``"cpu"``, ``"cpu:0"``), without ``non_blocking=True``, which
    copies without a sync."""
    from .functions import C_CONSTS

    consts = dict(call[C_CONSTS])
    device = consts.get(0, consts.get("device"))
    return (
        type(device) is str
        and device.partition(":")[0] == "cpu"
        and consts.get("non_blocking") is not True
    )


class _Forbidden:
    """The forbidden patterns, matched against a spelling: method patterns by their last name."""

    def __init__(self, patterns, unless, unless_int, host=None) -> None:
        self.unless = dict(unless)
        self.host = host
        self.unless_int = {}
        for pattern, value in unless_int.items():
            name, _, position = value.partition(":")
            if position.isdigit():
                self.unless_int[pattern] = (name, int(position))
        self.methods: dict[str, str] = {}
        self.others: list[tuple[re.Pattern, str]] = []
        for pattern in patterns:
            head, _, last = pattern.rpartition(".")
            if head == "*" and last and not any(c in last for c in "*?["):
                self.methods[last] = pattern
            else:
                self.others.append((_globs((pattern,)), pattern))

    def match(self, spelling: str, call) -> str | None:
        from .functions import C_HOST, C_INTS, C_KEYWORDS, C_MODULE

        found = None
        receiver, _, last = spelling.rpartition(".")
        if receiver:
            found = self.methods.get(last)
            if found is None and last == "to" and _copies_to_host(call):
                found = self.methods.get("cpu")  # `x.to("cpu")` is the copy `*.cpu` forbids
            # What a copy to the host returned is on the host (`lens.cpu().int().tolist()`: the
            # sync is the `.cpu()`, a call of its own).
            if found is not None and _on_host(self.host, call[C_HOST], receiver.split(".")):
                return None  # `lens_cpu.tolist()`, `lens_cpu.max().item()`: host data
        if found is None:
            for regex, pattern in self.others:
                if regex.fullmatch(spelling):
                    found = pattern
                    break
        if found is not None:
            keyword = self.unless.get(found)
            if keyword is not None and (keyword in call[C_KEYWORDS] or "**" in call[C_KEYWORDS]):
                return None
            evident = self.unless_int.get(found)
            if evident is not None:
                name, position = evident
                ints = call[C_INTS]
                if name in ints or position + bool(call[C_MODULE]) in ints:
                    return None
        return found


def _globs(patterns, *, last_component: bool = False) -> re.Pattern | None:
    """One regex for dotted-name globs: ``*`` any run of characters (dots too), ``?`` one.

    With ``last_component`` a pattern's last component matches the function's own name
    only: ``*.capture_*`` is a method named ``capture_...``, not a function nested in one;
    and a pattern without a dot is a name in any module or class (``capture_*``).
    """
    if not patterns:
        return None
    parts = []
    for pattern in patterns:
        head, dot, last = pattern.rpartition(".") if last_component else ("", "", pattern)
        out = ["(?:.*\\.)?"] if last_component and not dot else []
        for ch in head:
            out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        out.append(re.escape(dot))
        for ch in last:
            if last_component:
                out.append("[^.]*" if ch == "*" else "[^.]" if ch == "?" else re.escape(ch))
            else:
                out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        parts.append("".join(out))
    return re.compile("|".join(f"(?:{p})" for p in parts))


def _required_runs(pattern: str) -> list[str] | None:
    """The literal runs (3 characters or more) a file defining ``pattern``'s function spells:
    its last component's, and the one before when that is a glob (a class pattern, where a
    module path would be spelled whole); None when there is none to require."""
    parts = pattern.split(".")
    picked = [parts[-1]]
    if len(parts) >= 2 and any(c in parts[-2] for c in "*?["):
        picked.append(parts[-2])
    runs = [r for part in picked for r in re.split(r"[*?\[\]]", part) if len(r) >= 3]
    return runs or None


def _may_be_named(path: str, pattern: str) -> bool:
    """Whether a function of the module at ``path`` may match the entry glob ``pattern``,
    matched against ``module.qual``: the module's name is the path's dotted form less a src
    root, so either it starts with the glob's literal prefix (found whole in the path) or it
    is one of the packages that prefix names (the path ends with one)."""
    if "." not in pattern:
        return True  # a name in any module or class
    prefix = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
    if not prefix:
        return True
    dotted = path.replace("\\", "/").removesuffix(".pyi").removesuffix(".py")
    dotted = dotted.removesuffix("/__init__")
    dotted = "." + dotted.replace("/", ".")
    if "." + prefix in dotted + ".":
        return True
    segments = prefix.split(".")[:-1]  # the complete ones: `a.b.C*` -> a, a.b
    return any(dotted.endswith("." + ".".join(segments[:i])) for i in range(1, len(segments) + 1))


def _needle(pattern: str) -> str | None:
    """The longest literal run of a glob's last component: text a matching file must hold."""
    last = pattern.rpartition(".")[2] if not pattern.endswith(".") else pattern
    runs = [r for r in re.split(r"[*?\[\]]", last) if r]
    best = max(runs, key=len, default="")
    return best if len(best) >= 3 else None
