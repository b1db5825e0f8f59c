"""Which project function a call names, and which class a base or an attribute holds.

Resolution follows what the source spells and nothing else: a method called
on ``self`` is looked up in the class and then its bases in order (an
override in a subclass is not followed: the call the code spells is to its
own class's), a name imported from a package's ``__init__`` that re-exports it
is followed to where it is defined, a class called is its ``__init__``. A
call on any other object (``self.pool.carve()``, ``x.item()``) names no
project function; what it may match is a forbidden method's spelling.

``Resolution`` is the question half of ``checkers.analysis.program.Program``, which supplies
the summaries (``module``) and the memos these read and fill.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .functions import (
    AFTER_TARGET,
    C_KEYWORDS,
    C_NARGS,
    F_CARRIERS,
    INSTALLERS,
    K_HELD,
    K_INSTALLED,
    K_RESULT,
    O_CLASS,
    O_END,
    O_KWONLY,
    O_LINE,
    O_PARAMS,
    O_QUAL,
    O_SELF,
    positional_params,
)

if TYPE_CHECKING:
    from .program import Module

_KEPT_TEXTS = 4  # module texts kept for the assignment scan
_MAX_DEPTH = 8  # re-exports and bases followed before giving up (a cycle, or an odd tree)


class Resolution:
    """Calls, classes and bases resolved through the modules' summaries (``self.module``)."""

    def resolve_call(self, module: Module, outline: tuple, spelling: str) -> tuple[str, str] | None:
        """The project function a call spelled ``spelling`` in ``outline``'s body names.

        Answered once per module, function and spelling: an entry's search and a unit's flow
        ask the same calls again. A question asked while another is being answered is not
        kept: a cycle of attributes or re-exports answers it with what is known so far."""
        if not spelling or spelling.startswith("?"):
            return None
        key = (module, outline[O_QUAL], outline[O_CLASS], spelling)
        found = self._calls.get(key, False)
        if found is not False:
            return found
        self._answering += 1
        try:
            found = self._resolve_call(module, outline, spelling)
        finally:
            self._answering -= 1
        if not self._answering:
            self._calls[key] = found
        return found

    def _resolve_call(self, module: Module, outline: tuple, spelling: str):
        if "[]" in spelling:
            return None  # a method of a container's element: its class is not known
        head, _, rest = spelling.partition(".")
        if head == "self":
            klass = outline[O_CLASS]
            if not klass or not rest:
                return None
            attr, _, method = rest.partition(".")
            if not method:
                found = self.method(module.name, klass, attr)
                if found is not None:
                    return found
            elif "." in method:
                return None
            # `self.norm(x)`, `self.pool.carve()`: an attribute the class's methods assign an
            # instance of a project class; calling the instance runs its `__call__`, or, for a
            # torch module, its `forward`.
            held = self.attribute_class(module.name, klass, attr)
            if held is None:
                # `self.fill(k, v)`: an attribute every assignment of which holds one project
                # function (`self.fill = fill_kv_cache`) runs that function.
                return None if method else self.attribute_function(module.name, klass, attr)
            if method:
                return self.method(*held, method)
            return self.method(*held, "__call__") or self.method(*held, "forward")
        if head == "super()":
            klass = outline[O_CLASS]
            if not klass or not rest or "." in rest:
                return None
            return self.method(module.name, klass, rest, skip_self=True)
        if not rest:
            # A nested function of this one or of an enclosing one, then the module's own.
            # A class body is no enclosing scope of its methods: its levels are skipped.
            qual = outline[O_QUAL]
            while True:
                while qual in module.classes:
                    qual = qual.rpartition(".")[0]
                candidate = f"{qual}.{head}" if qual else head
                if candidate in module.functions:
                    return (module.name, candidate)
                if candidate in module.classes:
                    return self.method(module.name, candidate, "__init__")
                if not qual:
                    return None
                qual = qual.rpartition(".")[0]
        if head in module.classes:
            return self._member(module, spelling.split("."), 0)
        if head in module.functions:
            return None  # an attribute of a function
        return self.dotted(spelling)

    def attribute_class(self, module: str, klass: str, attr: str) -> tuple[str, str] | None:
        """The project class whose instance ``klass``'s methods (or its bases') assign to
        ``self.attr`` -- only when every such assignment that names a class names that one."""
        key = ("attr", module, klass, attr)
        if key in self._held:
            return self._held[key]
        self._held[key] = None
        found: set[tuple[str, str]] = set()
        for mod, outline, spelling, held in self._self_assignments(module, klass, attr):
            if held:
                continue  # the value itself, not a call's result
            target = self.resolve_call(mod, outline, spelling)
            if target is not None and target[1].endswith(".__init__"):
                found.add((target[0], target[1].rpartition(".")[0]))
            elif target is None:
                called = self.class_called(mod, outline, spelling)
                if called is not None:
                    found.add(called)
        result = found.pop() if len(found) == 1 else None
        self._held[key] = result
        return result

    def attribute_function(self, module: str, klass: str, attr: str) -> tuple[str, str] | None:
        """The project function ``klass``'s methods (or its bases') hold in ``self.attr`` --
        only when every assignment of the attribute they spell names that one function
        (``self.fill = fill_kv_cache``; ``self.fwd = self._forward_cuda``, the method of the
        class the assignment is in). A call's result, a parameter's value or a choice held
        there instead, or two functions, and the attribute's value is not known."""
        key = ("function", module, klass, attr)
        if key in self._held:
            return self._held[key]
        self._held[key] = None
        found: set[tuple[str, str] | None] = set()
        for mod, outline, spelling, held in self._self_assignments(module, klass, attr):
            found.add(self.resolve_call(mod, outline, spelling) if held == K_HELD else None)
        result = found.pop() if len(found) == 1 else None
        self._held[key] = result
        return result

    def may_call(
        self, module: Module, outline: tuple, spelling: str, call: tuple | None = None
    ) -> tuple[tuple, ...]:
        """Every project function a call spelled ``spelling`` may run: ``(target, bound)``,
        ``bound`` the leading parameters bound before the call's own arguments where its
        spelling does not tell (1 for a method installed with ``partial``), else None.

        The one ``resolve_call`` names; then, on ``self`` or an attribute holding a project
        class's instance, each function the class's methods hold in the attribute called
        (``self.update = self.update_single_wrapper`` in one branch, ``...sliding_window``
        in another: an instance's own attribute hides the class's method of that name); and
        for a method of an object of no known class, each function the module installs as
        that method on the object it is assigned to (``w.begin_forward = partial(plan,
        w)``). The first answers the question of which function runs; these, which may --
        and given the ``call`` site, only those its arguments fit (``fits``): a prefill
        wrapper's ``begin_forward(..., custom_mask=m)`` is not the installed decode plan,
        which takes no ``custom_mask``."""
        found: list[tuple] = []
        one = self.resolve_call(module, outline, spelling)
        if one is not None:
            found.append((one, None))
        owner, _, attr = spelling.rpartition(".")
        if not owner:
            return tuple(found)  # a function's name, no object's method
        held = None
        if outline[O_CLASS] and owner == "self":
            held = (module.name, outline[O_CLASS])
        elif outline[O_CLASS] and owner.startswith("self.") and owner[5:].isidentifier():
            held = self.attribute_class(module.name, outline[O_CLASS], owner[5:])
        if held is not None:
            maybe = self._held_functions(*held, attr)
        elif one is None:
            # An object of no known class -- a parameter, an element (`wrappers[i]`), a call's
            # result -- may be one the module patched; but inside a function the module
            # installs as that method, the call is the one it replaced (a wrapper of the
            # library's `plan` calls the library's `plan`).
            installed = self.installed_methods(module, attr)
            if (module.name, outline[O_QUAL]) in installed:
                installed = ()
            maybe = tuple((target, 1) for target in installed)
        else:
            maybe = ()
        for target, bound in maybe:
            if call is None or self.fits(target, call, bound):
                found.append((target, bound))
        return tuple(dict.fromkeys(found))

    def fits(self, target: tuple[str, str], call: tuple, bound: int | None) -> bool:
        """Whether ``call``'s arguments could be passed to ``target``: no keyword it has no
        parameter for, no more positional arguments than it takes (past ``bound`` leading
        ones, or ``self`` for a method), unless it takes ``**``/``*``. A function whose
        ``def`` is not at hand fits any call."""
        mod = self.module(target[0])
        callee = mod.outline(target[1]) if mod is not None else None
        if callee is None:
            return True
        params, kwonly = callee[O_PARAMS], callee[O_KWONLY]
        positional = positional_params(callee)
        if bound is None:
            bound = 1 if callee[O_SELF] and positional[:1] == [callee[O_SELF]] else 0
        named = set(positional[bound:]) | {k for k in kwonly if not k.startswith("**")}
        if not any(k.startswith("**") for k in kwonly) and any(
            k != "**" and k not in named for k in call[C_KEYWORDS]
        ):
            return False
        nargs = call[C_NARGS]
        if nargs >= 0 and len(positional) == len(params):  # no `*args`
            return bound + nargs <= len(positional)
        return True

    def _held_functions(self, module: str, klass: str, attr: str) -> tuple[tuple, ...]:
        """Each project function ``klass``'s methods (or its bases') assign to ``self.attr``
        or install there: ``(target, bound)``, as ``may_call`` gives them."""
        key = ("held", module, klass, attr)
        found = self._held.get(key)
        if found is not None:
            return found
        self._held[key] = ()
        out = []
        for mod, outline, spelling, held in self._self_assignments(module, klass, attr):
            if held != K_RESULT:
                target = self.resolve_call(mod, outline, spelling)
                if target is not None:
                    out.append((target, 1 if held == K_INSTALLED else None))
        found = self._held[key] = tuple(dict.fromkeys(out))
        return found

    def installed_methods(self, module: Module, attr: str) -> tuple[tuple[str, str], ...]:
        """The project functions ``module`` installs as an object's method ``attr`` (``w.
        begin_forward = partial(fast_decode_plan, w)``), the object not ``self``.

        Only this module's: the objects it patches are the ones it makes and calls, and a
        call of a method of that name elsewhere is as likely an unpatched object's (another
        backend's wrapper, the library's own method). Its text is scanned for such an
        assignment, and a function is walked only where its lines hold one."""
        key = ("installed", module, attr)
        found = self._held.get(key)
        if found is not None:
            return found
        lines = self._installing(module).get(attr)
        if lines is None:
            self._held[key] = ()
            return ()
        out = []
        for outline in module.outlines:
            if not any(outline[O_LINE] <= line <= outline[O_END] for line in lines):
                continue
            for carried, spelling, _line, on_self, held in (
                module.facet(outline[O_QUAL], F_CARRIERS) or ()
            ):
                if carried == attr and held == K_INSTALLED and not on_self:
                    target = self.resolve_call(module, outline, spelling)
                    if target is not None:
                        out.append(target)
        found = self._held[key] = tuple(dict.fromkeys(out))
        return found

    def _installing(self, module: Module) -> dict[str, tuple[int, ...]]:
        """Where ``module``'s text may spell ``x.attr = partial(`` (or another of
        ``INSTALLERS``): attr -> lines. Empty where the text is not at hand."""
        key = ("installing", module)
        found = self._held.get(key)
        if found is not None:
            return found
        text = self._module_text(module)
        index: dict[str, list[int]] = {}
        if text is not None:
            from .imports import line_numbers

            hits = list(_INSTALLING.finditer(text))
            for hit, line in zip(hits, line_numbers(text, [h.start() for h in hits]), strict=True):
                index.setdefault(hit.group(1), []).append(line)
        found = self._held[key] = {attr: tuple(lines) for attr, lines in index.items()}
        return found

    def _self_assignments(self, module: str, klass: str, attr: str) -> tuple[tuple, ...]:
        """Each assignment to ``self.attr`` in ``klass``'s methods or its bases': ``(module,
        outline, spelling, held)``, as the method's carriers record it. Collected once a run
        for the three questions asked of it (the class, the one function, every function
        held there), which a call through ``self.attr`` asks in turn.

        A method is walked only where its own lines may spell that assignment
        (``_assign_targets``): the others were walked, every one of a class with many, only
        to find they assign no such attribute. The text is read only for a body whose
        details are not at hand: what the walk would have read, and no more. In a module
        not being checked, a method whose instance is ``self`` is skipped where the summary's
        scan of ``self.x =`` spellings (``Module.self_set``) names no such attribute: the
        spellings this scan finds, read for the name ``self``."""
        key = ("assigned", module, klass, attr)
        found = self._held.get(key)
        if found is None:
            found = self._held[key] = tuple(self._assignments(module, klass, attr))
        return found

    def _assignments(self, module: str, klass: str, attr: str) -> Iterator[tuple]:
        for owner_module, owner in self.mro(module, klass):
            mod = self.module(owner_module)
            if mod is None:
                continue
            checked = mod.text is not None  # the file being checked: its text is at hand
            unassigned = not checked and mod.self_set is not None and attr not in mod.self_set
            for outline in mod.outlines:
                self_name = outline[O_SELF]
                # A function with no instance (a staticmethod) assigns none: what it assigns
                # to is never the empty name.
                if outline[O_CLASS] != owner or not self_name:
                    continue
                if unassigned and self_name == "self":
                    continue
                if not mod.made(outline[O_QUAL], F_CARRIERS):
                    targets = self._assign_targets(mod, attr)
                    if targets is not None and not _spans(targets.get(self_name, ()), outline):
                        continue  # its lines spell no `<its instance>.<attr>` an `=` can follow
                carriers = mod.facet(outline[O_QUAL], F_CARRIERS)
                for name, spelling, _line, on_self, held in carriers or ():
                    if name == attr and on_self:
                        yield mod, outline, spelling, held

    def _assign_targets(self, module: Module, attr: str) -> dict[str, tuple[int, ...]] | None:
        """Where ``module``'s text may spell ``<name>.<attr>`` as an assignment's target:
        name -> the lines holding the name, ascending. None where the text the outline was
        made from is not at hand without a parse: every method is walked then (a module
        whose bodies the cache holds costs no walk).

        A target ``self.attr`` is the tokens ``self``, ``.``, ``attr``, then ``=`` or an
        annotation's ``:``. Python allows blanks, line breaks and backslash continuations
        between them (a break inside brackets), brackets closed around the name or the
        target (``(self).attr``, ``(self.attr) =``), and a comment after ``attr``: each is
        allowed here, and so every such target is found, with reads an ``=`` or a ``:``
        follows besides (``f(self.attr=...)``, ``x[self.attr:]``); ``==`` assigns nothing.
        Not seen: a comment between ``self`` and ``.attr`` (it needs a line break inside
        brackets there). Identifiers are read as Python reads them, NFKC-normalised."""
        memo = ("assigned", module, attr)
        if memo in self._held:
            return self._held[memo]
        text = self._module_text(module)
        found: dict[str, list[int]] | None = None
        if text is not None:
            from .imports import line_numbers

            found = {}
            spots: list[tuple[int, int]] = []  # (where the instance's name starts, its end)
            at = text.find(attr)
            while at != -1:
                dot, after = at, at + len(attr)
                # One starting inside this one follows an identifier's character: no target.
                at = text.find(attr, after)
                while dot and text[dot - 1] in _BLANKS:
                    dot -= 1
                if not dot or text[dot - 1] != "." or not _AFTER_TARGET.match(text, after):
                    continue
                end = dot - 1
                while end and text[end - 1] in _BEFORE_DOT:
                    end -= 1
                start = end
                while start and ("a" + text[start - 1]).isidentifier():
                    start -= 1
                if start != end:
                    spots.append((start, end))
            # Each start is an identifier's first character: no line break, none split.
            for (start, end), line in zip(
                spots, line_numbers(text, [s for s, _ in spots]), strict=True
            ):
                lines = found.setdefault(text[start:end], [])
                if not lines or lines[-1] != line:
                    lines.append(line)
        result = None if found is None else {n: tuple(v) for n, v in found.items()}
        self._held[memo] = result
        return result

    def _module_text(self, module: Module) -> str | None:
        """The text ``module``'s outline was made from, NFKC-normalised: the file being
        checked's, or the file's while its bytes are those the summary was made from; None
        otherwise. The last few are kept: a class's attributes are asked one after another,
        each of the modules of its bases."""
        texts = vars(self).setdefault("_texts", {})  # module -> text, made on first use
        kept = texts.get(module)
        if kept is not None:
            return kept
        text = module.text
        if text is None:
            where = module.on_disk()  # a module known by its summary
            if where is None:
                return None
            lines = self._lines(module.path, *where)
            if lines is None:
                return None
            text = "".join(lines)
        if not text.isascii():
            import unicodedata

            text = unicodedata.normalize("NFKC", text)  # no line break made or lost
        while len(texts) >= _KEPT_TEXTS:
            texts.pop(next(iter(texts)))
        texts[module] = text
        return text

    def class_called(self, module: Module, outline: tuple, spelling: str) -> tuple[str, str] | None:
        """The project class a call spelled ``spelling`` constructs (one without ``__init__``
        of its own in the project still names its class)."""
        head, _, rest = spelling.partition(".")
        if not rest and head in module.classes:
            return (module.name, head)
        if head in module.classes:
            return (module.name, spelling) if spelling in module.classes else None
        return self._class_dotted(spelling, 0) if "." in spelling else None

    def dotted(self, name: str) -> tuple[str, str] | None:
        """The project function a fully dotted name reaches (``pkg.mod.Class.method``)."""
        if name in self._dotted:
            return self._dotted[name]
        self._dotted[name] = None  # a re-export cycle ends here
        found = self._dotted_at(name, 0)
        self._dotted[name] = found
        return found

    def _at_module(self, name: str) -> tuple[Module, list[str]] | None:
        """The longest first-party module a dotted ``name`` starts with, and the parts after
        it; None when no module of the project begins it."""
        parts = name.split(".")
        project = self.project
        if not project.is_first_party(parts[0]):
            return None
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            if project.resolve(prefix) is None:
                continue
            module = self.module(prefix)
            return None if module is None else (module, parts[i:])
        return None

    def _dotted_at(self, name: str, depth: int) -> tuple[str, str] | None:
        found = self._at_module(name) if depth <= _MAX_DEPTH else None
        return None if found is None else self._member(found[0], found[1], depth)

    def _member(self, module: Module, rest: list[str], depth: int) -> tuple[str, str] | None:
        """A function (or a class's ``__init__``) named by ``rest`` inside ``module``."""
        qual = ".".join(rest)
        if qual in module.functions:
            return (module.name, qual)
        if qual in module.classes:
            return self.method(module.name, qual, "__init__")
        if len(rest) >= 2:
            klass = ".".join(rest[:-1])
            if klass in module.classes:
                return self.method(module.name, klass, rest[-1])
        target = module.aliases.get(rest[0])
        if target is not None and target != module.name:
            return self._dotted_at(".".join([target, *rest[1:]]), depth + 1)
        return None

    def method(
        self, module: str, klass: str, name: str, *, skip_self: bool = False
    ) -> tuple[str, str] | None:
        """``name`` looked up on ``klass`` (defined in ``module``) and then its bases, in order."""
        for owner_module, owner in self.mro(module, klass)[1 if skip_self else 0 :]:
            found = self.module(owner_module)
            if found is not None and f"{owner}.{name}" in found.functions:
                return (owner_module, f"{owner}.{name}")
        return None

    def mro(self, module: str, klass: str) -> tuple[tuple[str, str], ...]:
        """The class and its project bases, depth first, left to right, each once."""
        key = (module, klass)
        found = self._mro.get(key)
        if found is not None:
            return found
        self._mro[key] = (key,)  # a cycle of bases ends here
        order: list[tuple[str, str]] = []
        seen: set[tuple[str, str]] = set()
        stack = [(key, 0)]
        while stack:
            (mod_name, cls), depth = stack.pop()
            if (mod_name, cls) in seen or depth > _MAX_DEPTH:
                continue
            seen.add((mod_name, cls))
            order.append((mod_name, cls))
            mod = self.module(mod_name)
            if mod is None or cls not in mod.classes:
                continue
            bases = []
            for base in mod.classes[cls][2]:
                resolved = self.class_named(mod, base)
                if resolved is not None:
                    bases.append((resolved, depth + 1))
            stack.extend(reversed(bases))
        found = self._mro[key] = tuple(order)
        return found

    def class_named(self, module: Module, spelling: str) -> tuple[str, str] | None:
        """The project class a base (or any class reference) spelled in ``module`` names."""
        if spelling in module.classes:
            return (module.name, spelling)
        key = f"{module.name}:{spelling}"
        if key in self._classes:
            return self._classes[key]
        self._classes[key] = None
        found = self._class_dotted(spelling, 0)
        self._classes[key] = found
        return found

    def _class_dotted(self, name: str, depth: int) -> tuple[str, str] | None:
        found = self._at_module(name) if depth <= _MAX_DEPTH else None
        if found is None:
            return None
        module, rest = found
        if ".".join(rest) in module.classes:
            return (module.name, ".".join(rest))
        target = module.aliases.get(rest[0])
        if target is not None and target != module.name:
            return self._class_dotted(".".join([target, *rest[1:]]), depth + 1)
        return None


# Between an assignment target's name and its dot: blanks, line breaks, a backslash
# continuation, a bracket closed around the name.
_BEFORE_DOT = frozenset(" \t\f\r\n\\)")


_AFTER_TARGET = re.compile(AFTER_TARGET)
# `<object>.<attr> = partial(` or `= MethodType(` (either through its module): where an
# assignment may install a function as an object's method, the attribute captured. A scan
# of the text, which the carriers the walk records then confirm; past the `=`, what may
# stand before the call (blanks, a line break inside brackets, an opening bracket, a
# backslash continuation) is crossed.
_INSTALLING = re.compile(
    r"\.[ \t]*(\w+)[ \t]*=[\s(\\]*(?:[\w.]+\.)?(?:"
    + "|".join(map(re.escape, INSTALLERS))
    + r")\s*\("
)
# Between an assignment target's dot and its attribute.
_BLANKS = frozenset(" \t\f\r\n\\")


def _spans(lines: tuple[int, ...], outline) -> bool:
    """Whether one of ``lines`` (ascending) lies in the function's own lines."""
    import bisect

    i = bisect.bisect_left(lines, outline[O_LINE])
    return i < len(lines) and lines[i] <= outline[O_END]
