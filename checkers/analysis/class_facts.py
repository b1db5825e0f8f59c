"""What a class's constructor copies from input: the attributes an assert on ``self`` reads.

``self.block_size = config.block_size`` in ``__init__`` (or in a private
helper only constructors call, or a record's field or property) makes
``self.block_size`` input wherever a method asserts on it -- unless another
method assigns it again, when the class maintains it. Base classes defined
in the same module are asked too. A mixin of ``origins.InputOrigins``, whose
``view`` says where each copied value came from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .bindings import CONSTRUCTORS
from .names import dotted, has_decorator
from .shapes import is_private, is_record, names_step_record, self_attr, walk_statements


@dataclass
class ClassFactsOf:
    node: ast.ClassDef
    init_attrs: dict[str, str]  # attr -> the argument or config it was copied from
    reassigned: set[str]
    assigned: set[str] = field(default_factory=set)  # every `self.<attr> = ...` of the class
    # The base classes its constructor hands its own arguments (`super().__init__(config)`).
    handed_bases: tuple[str, ...] = ()
    # A record's fields its constructor assigns again: (field, value, function, statement),
    # judged once the facts are known, since the value may read the other fields.
    refilled: list = field(default_factory=list)


class ClassFacts:
    """The class questions of ``InputOrigins``: what each constructor copies, memoised per class."""

    def facts(self, klass: ast.ClassDef) -> ClassFactsOf | None:
        """What ``klass``'s constructor copies from input; None while being worked out."""
        key = id(klass)
        if key not in self._class_memo:
            self.ensure_class(klass)  # a class nested in a function: that function's scopes
            self._class_memo[key] = None  # a constructor reading its own attributes
            facts = self._class_memo[key] = self._class_facts(klass)
            for attr, value, func, stmt in facts.refilled:
                # `self.total = count(self.lens)` in `__post_init__`: a field the record
                # fills in itself, whatever a caller passed for it. What it makes of its
                # fields alone (`self.stop = [self.stop]`) is still the caller's.
                if self.view(value, func, stmt) is None:
                    facts.reassigned.add(attr)  # asked first: the field's copy no longer counts
        return self._class_memo[key]

    def _class_facts(self, node: ast.ClassDef) -> ClassFactsOf:
        init_attrs: dict[str, str] = {}
        # What the constructor copied so far, for a later store that works it out
        # (`self.padded = pad(self.vocab_size, 64)` after `self.vocab_size = vocab_size`).
        self.__dict__.setdefault("_copied_so_far", {})[id(node)] = init_attrs
        reassigned: set[str] = set()
        record = is_record(node)
        fields: set[str] = set()
        refilled: list = []
        assigned: set[str] = set()
        for stmt in node.body:
            if record and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                init_attrs[stmt.target.id] = "a field of the record, a constructor argument"
                fields.add(stmt.target.id)
            if (
                record
                and isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
                and has_decorator(stmt, "property")
            ):
                # A record's property is worked out from its fields: what the caller
                # constructed it with, seen another way.
                init_attrs.setdefault(
                    stmt.name, "a property of the record, worked out from its fields"
                )
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            # Whether it constructs is asked only of a method that assigns an attribute
            # of self: a private method's answer needs every call site in the module.
            constructor: bool | None = None
            func = self.funcs.get(stmt)
            for sub in walk_statements(stmt):
                targets = []
                if isinstance(sub, ast.Assign):
                    targets = [(t, sub.value) for t in sub.targets]
                elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
                    targets = [(sub.target, getattr(sub, "value", None))]
                for target, value in targets:
                    attr = self_attr(target, func)
                    if attr is None:
                        continue
                    assigned.add(attr)
                    if constructor is None:
                        constructor = stmt.name in CONSTRUCTORS or self.is_init_helper(stmt.name)
                        self.ensure(stmt)  # what it assigns is asked of its bindings
                    origin = None
                    if (
                        value is not None
                        and func is not None
                        and not _renormalises_attr(attr, value, func)
                    ):
                        # `self.total += size`: what it adds is what it is made of.
                        origin = self.view(value, func, sub)
                    if not constructor:
                        # Another method assigning it makes it the class's own state --
                        # unless what it assigns is the attribute normalised, or
                        # configuration: `self.block = list(self.block)` after loading
                        # still holds what the config said.
                        if not _renormalises_attr(attr, value, func) and not (
                            origin is not None and origin.config
                        ):
                            reassigned.add(attr)
                        continue
                    if (
                        attr in fields
                        and origin is None
                        and value is not None
                        and func is not None
                        and sub in stmt.body  # every construction, not a branch's default
                        and not isinstance(sub, ast.AugAssign)
                        and not _renormalises_attr(attr, value, func)
                    ):
                        refilled.append((attr, value, func, sub))
                        continue
                    if origin is not None:
                        init_attrs.setdefault(attr, f"copied in `{stmt.name}` from {origin.what}")
        del self._copied_so_far[id(node)]
        return ClassFactsOf(
            node, init_attrs, reassigned, assigned, self._handed_bases(node), refilled
        )

    def _handed_bases(self, klass: ast.ClassDef) -> tuple[str, ...]:
        """The bases ``klass``'s constructor hands one of its own parameters to:
        ``super().__init__(model_runner)`` (the first base, next in line) or
        ``Base.__init__(self, config)``."""
        init = next(
            (
                s
                for s in klass.body
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
            ),
            None,
        )
        bases = [base_name(b) for b in klass.bases]
        if init is None:
            # No constructor of its own: its first base's constructs it, handed every
            # argument (`class Encoder(codecs.IncrementalEncoder)`). Not a record, whose
            # constructor is its fields, nor a mixin, which its host constructs; and a
            # mixin among the bases has no constructor to hand them to.
            if is_record(klass) or _is_mixin(klass.name):
                return ()
            return tuple(b for b in bases if not _is_mixin(b))[:1]
        self.ensure(init)  # its parameters are read off its scope
        params = set(self.funcs[init].params)
        out: list[str] = []
        for stmt in walk_statements(init):
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if not (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "__init__"
            ):
                continue
            passed = {
                n.id
                for a in [*call.args, *(k.value for k in call.keywords)]
                for n in ast.walk(a)
                if isinstance(n, ast.Name)
            }
            if not passed & params:
                continue
            receiver = call.func.value
            if isinstance(receiver, ast.Call) and dotted(receiver.func) == "super":
                out.extend(bases[:1])
            elif dotted(receiver) in bases:
                out.append(dotted(receiver))
        return tuple(out)

    def class_input_attr(self, klass: ast.ClassDef, attr: str, seen=None) -> str | None:
        """Where ``self.<attr>`` came from, when a constructor copied it from input.

        Base classes defined in the same module are asked too; an attribute any
        method other than the constructor assigns is the class's own state.
        """
        facts = self.facts(klass)
        if facts is None:
            # Asked while the constructor's copies are being read: those made so far.
            return self.__dict__.get("_copied_so_far", {}).get(id(klass), {}).get(attr)
        if attr in facts.reassigned:
            return None
        if attr in facts.init_attrs:
            return facts.init_attrs[attr]
        seen = seen if seen is not None else {id(klass)}
        foreign = []
        for base in klass.bases:
            name = base_name(base)
            if not name:
                continue  # a base no name spells (`make_base()[0]`): nothing to say it set
            node = self.class_names.get(name)
            if node is None:
                foreign.append(name)
            elif id(node) not in seen:
                seen.add(id(node))
                found = self.class_input_attr(node, attr, seen)
                if found is not None:
                    return found
        handed = [b for b in facts.handed_bases if b in foreign]
        if (
            handed
            and attr not in facts.assigned
            and not is_private(attr)
            and not names_step_record(attr)  # `self.forward_metadata`: planned each step
            and not _in_class_body(klass, attr)  # a method, or a class-level constant
        ):
            # Never assigned here, on a class whose constructor hands its arguments to
            # a base class of another module: that base's constructor set it from them.
            return f"set by `{handed[0]}.__init__` from the arguments handed to it"
        return None


def base_name(base: ast.AST) -> str:
    """The class a base expression names: ``Base`` for ``Base``, ``Base[Info]`` (a generic
    subscripted) and ``make_base(...)``; ``""`` where no name spells it (``bases()[0]``)."""
    if isinstance(base, ast.Subscript):
        return dotted(base.value)
    return dotted(base, through_calls=True)


def _renormalises_attr(attr: str, value: ast.AST | None, func) -> bool:
    """``self.block = list(self.block)``, ``self.w = self.w.contiguous()``: the
    attribute's own value, normalised -- still what it held before."""
    if value is None or func is None or not isinstance(value, ast.Call):
        return False
    reads = [*value.args, *(k.value for k in value.keywords)]
    if isinstance(value.func, ast.Attribute):
        reads.append(value.func.value)
    for read in reads:
        while isinstance(read, ast.Call) and isinstance(read.func, ast.Attribute):
            read = read.func.value  # `self.w.t().contiguous()`
        if self_attr(read, func) == attr:
            return True
    return False


def _is_mixin(name: str) -> bool:
    """``ComposableEpiMixin``, ``mixins.LoggingMixin``: named as a mixin."""
    return name.rpartition(".")[2].endswith("Mixin")


def _in_class_body(klass: ast.ClassDef, name: str) -> bool:
    """Is ``name`` defined by the class body itself (a method, a class attribute)?"""
    for stmt in klass.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                return True
        elif isinstance(stmt, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
                return True
        elif (
            isinstance(stmt, ast.AnnAssign)
            and isinstance(stmt.target, ast.Name)
            and stmt.target.id == name
        ):
            return True
    return False
