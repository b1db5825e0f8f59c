"""What an object and its module keep for themselves: the state ``origins`` tells from input.

An assert on a value the function was handed is input; these are the values
a function is handed that are nonetheless the code's own, each a small
question of the module's text: a slice cut by a bound the function worked
out, a collaborator after a call the function made on it, a global the
module's own setter assigns, a table the object fills as it runs, a count
the module advances, a count checked against a buffer the object allocated.
A mixin of ``origins.InputOrigins``, whose ``view`` says what is input.
"""

from __future__ import annotations

import ast

from .bindings import CONSTRUCTORS
from .names import dotted
from .scopes import Scope, before, self_class
from .shapes import VIEW_METHODS, is_literal, walk_statements

# Methods that put items into a container or take them out.
_FILLING_METHODS = frozenset(
    {"add", "append", "extend", "insert", "update", "setdefault", "pop", "remove", "discard"}
)


class ObjectProtocol:
    """The state questions of ``InputOrigins``, memoised per module, class or function."""

    def _cut_by_own(self, index: ast.AST, func: Scope, at: ast.AST) -> bool:
        """Is ``index`` a slice with a bound the function worked out itself (not a
        literal, not input)? The piece it cuts has the function's size, not the caller's."""
        slices = index.elts if isinstance(index, ast.Tuple) else [index]
        bounds = [
            b
            for s in slices
            if isinstance(s, ast.Slice)
            for b in (s.lower, s.upper, s.step)
            if b is not None and not is_literal(b)
        ]
        return any(
            self.view(b, func, at) is None and not self._loop_counted(b, func, at) for b in bounds
        )

    def _loop_counted(self, bound: ast.AST, func: Scope, at: ast.AST) -> bool:
        """Does ``bound`` read a loop variable (``x[i : i + chunk]``)? Chunking the input
        in a loop keeps its pieces the caller's."""
        for node in ast.walk(bound):
            if isinstance(node, ast.Name):
                binding = self.dominating_binding(node.id, func, at)
                if binding is not None and isinstance(binding[0], (ast.For, ast.AsyncFor)):
                    return True
        return False

    def _fits_own_buffer(self, expr: ast.Compare, func: Scope, at: ast.AST) -> bool:
        """``n <= self.buf.shape[0]`` (or ``len(self.slots) >= n``): a count checked
        against the size of a buffer the object allocated itself -- not one it was
        handed. Engines admit work against their buffers before they fill them; the
        assert restates that admission."""
        if len(expr.ops) != 1:
            return False
        op = expr.ops[0]
        if isinstance(op, (ast.Lt, ast.LtE)):
            bound = expr.comparators[0]
        elif isinstance(op, (ast.Gt, ast.GtE)):
            bound = expr.left
        else:
            return False
        buffer = None
        if isinstance(bound, ast.Call) and dotted(bound.func, through_calls=True) == "len":
            buffer = bound.args[0] if bound.args else None
        elif (
            isinstance(bound, ast.Subscript)
            and isinstance(bound.value, ast.Attribute)
            and bound.value.attr == "shape"
        ):
            buffer = bound.value.value
        elif (
            isinstance(bound, ast.Call)
            and isinstance(bound.func, ast.Attribute)
            and bound.func.attr in ("size", "numel")
        ):
            buffer = bound.func.value
        if not (
            isinstance(buffer, ast.Attribute)
            and isinstance(buffer.value, ast.Name)
            and func is not None
        ):
            return False
        owner = self_class(buffer.value.id, func)
        return owner is not None and self.class_input_attr(owner, buffer.attr) is None

    def _changed_by_call(self, obj: ast.AST, func: Scope, at: ast.AST) -> bool:
        """Did the function, before ``at``, call a method of ``obj`` for its effect (a
        statement of its own, the result dropped: ``self.layers.prepare(x)``)?

        ``obj`` is a collaborator the object keeps (``self.layers``), not
        ``self`` itself -- every method of a class is a call on ``self`` -- nor an
        argument, whose registering or filling (``layer.register_parameter``,
        ``t.fill_(0)``) leaves what the caller configured it with alone, nor a
        configuration, which a call completing its defaults leaves configuration.
        """
        if not (isinstance(obj, ast.Attribute) and self._via_collaborator(obj, func, at)):
            return False
        if self.is_input_name(obj.attr):
            return False  # `self.parallel_config.set_dcp_defaults()`: still the configuration
        effects = self._effects.get(id(func.node))
        if effects is None:
            effects = self._effects[id(func.node)] = [
                (stmt, ast.dump(stmt.value.func.value))
                for stmt in walk_statements(func.node)
                if isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Call)
                and isinstance(stmt.value.func, ast.Attribute)
                and stmt.value.func.attr not in VIEW_METHODS
                and not stmt.value.func.attr.endswith("_")  # in place: same tensor, new values
            ]
        if not effects:
            return False
        spelled = ast.dump(obj)
        where = self.blocks.get(at)
        if where is None:
            return False
        for stmt, target in effects:
            chain = self.blocks.get(stmt)
            # The call dominates `at`: before it, in a block that encloses it.
            if (
                target == spelled
                and chain is not None
                and where[: len(chain)] == chain
                and before(stmt, at)
            ):
                return True
        return False

    def _counted_by_module(self, expr: ast.Attribute) -> bool:
        """Does code of this module advance ``.<attr>`` on an object other than ``self``
        by arithmetic on itself (``cd.session_ref -= 1``)? A count it keeps."""
        if self._module_counts is None:
            self._module_counts = {
                stmt.target.attr
                for stmt in walk_statements(self.tree)
                if isinstance(stmt, ast.AugAssign)
                and isinstance(stmt.target, ast.Attribute)
                and not (
                    isinstance(stmt.target.value, ast.Name)
                    and stmt.target.value.id in ("self", "cls")
                )
            }
        return expr.attr in self._module_counts

    def _filled_by_class(self, container: ast.Attribute, func: Scope) -> bool:
        """Does a method of the class put items into ``self.<attr>`` (``self.cache[k] =
        v``, ``self.cache.add(k)``, ``del self.cache[k]``) as it runs? Then it is the
        class's running table. A table its constructor fills (``self.layer_map[l] =
        i``) is a lookup of what it was configured with."""
        if not isinstance(container.value, ast.Name):
            return False
        klass = self_class(container.value.id, func)
        if klass is None:
            return False
        filled = self._filled.get(id(klass))
        if filled is None:
            filled = self._filled[id(klass)] = set()
            methods = [
                m
                for m in klass.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                and m.name not in CONSTRUCTORS
                and not self.is_init_helper(m.name)
            ]
            for stmt in (s for m in methods for s in walk_statements(m)):
                targets: list[ast.AST] = []
                if isinstance(stmt, (ast.Assign, ast.Delete)):
                    targets = stmt.targets
                elif isinstance(stmt, ast.AugAssign):
                    targets = [stmt.target]
                elif (
                    isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Attribute)
                    and stmt.value.func.attr in _FILLING_METHODS
                ):
                    targets = [stmt.value.func.value]
                for target in targets:
                    if isinstance(target, ast.Subscript):
                        target = target.value  # an item of it, not the attribute itself
                    elif not isinstance(stmt, ast.Expr):
                        continue
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                        filled.add(target.attr)
        return container.attr in filled

    def _set_by_module(self, name: str, func: Scope | None, at: ast.AST) -> bool:
        """Is ``name`` read here as a module global that a function of the module
        re-binds through ``global name`` (a setter, a lazy initialiser)?"""
        scope = func
        while scope is not None:
            if name in scope.params or name in scope.bindings:
                return False  # a local or a parameter of this function or an enclosing one
            scope = scope.parent
        if name not in self.module_bindings:
            return False
        if self._globals_set is None:
            self._globals_set = {
                n
                for stmt in walk_statements(self.tree)
                if isinstance(stmt, ast.Global)
                for n in stmt.names
            }
        return name in self._globals_set
