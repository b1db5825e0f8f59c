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
from dataclasses import dataclass

from .bindings import CONSTRUCTORS
from .names import dotted, has_decorator
from .shapes import is_record, self_attr, walk_statements


@dataclass
class ClassFactsOf:
    node: ast.ClassDef
    init_attrs: dict[str, str]  # attr -> the argument or config it was copied from
    reassigned: set[str]


class ClassFacts:
    """The class questions of ``InputOrigins``: what each constructor copies, memoised per class."""

    def facts(self, klass: ast.ClassDef) -> ClassFactsOf | None:
        """What ``klass``'s constructor copies from input; None while being worked out."""
        key = id(klass)
        if key not in self._class_memo:
            self.ensure_class(klass)  # a class nested in a function: that function's scopes
            self._class_memo[key] = None  # a constructor reading its own attributes
            self._class_memo[key] = self._class_facts(klass)
        return self._class_memo[key]

    def _class_facts(self, node: ast.ClassDef) -> ClassFactsOf:
        init_attrs: dict[str, str] = {}
        reassigned: set[str] = set()
        record = is_record(node)
        for stmt in node.body:
            if record and isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                init_attrs[stmt.target.id] = "a field of the record, a constructor argument"
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
                    if constructor is None:
                        constructor = stmt.name in CONSTRUCTORS or self.is_init_helper(stmt.name)
                        if constructor:
                            self.ensure(stmt)  # what it copies is asked of its bindings
                    if not constructor:
                        reassigned.add(attr)
                        continue
                    origin = None
                    if (
                        value is not None
                        and func is not None
                        and not isinstance(sub, ast.AugAssign)
                    ):
                        origin = self.view(value, func, sub)
                    if origin is not None:
                        init_attrs.setdefault(attr, f"copied in `{stmt.name}` from {origin.what}")
        return ClassFactsOf(node, init_attrs, reassigned)

    def class_input_attr(self, klass: ast.ClassDef, attr: str, seen=None) -> str | None:
        """Where ``self.<attr>`` came from, when a constructor copied it from input.

        Base classes defined in the same module are asked too; an attribute any
        method other than the constructor assigns is the class's own state.
        """
        facts = self.facts(klass)
        if facts is None or attr in facts.reassigned:
            return None
        if attr in facts.init_attrs:
            return facts.init_attrs[attr]
        seen = seen if seen is not None else {id(klass)}
        for base in klass.bases:
            node = self.class_names.get(dotted(base, through_calls=True))
            if node is not None and id(node) not in seen:
                seen.add(id(node))
                found = self.class_input_attr(node, attr, seen)
                if found is not None:
                    return found
        return None
