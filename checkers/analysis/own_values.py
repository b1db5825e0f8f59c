"""What a function computed itself: the values ``origins`` tells from what it was handed.

An assert comparing what the function worked out with what it was given is a
postcondition, whatever the given side reads: a local the function bound to
a call that is not a view of input (on the one binding that dominates the
assert, or on every binding some branch makes), a list it filled, a counter
it advances, a piece it cut by its own bound, a per-step record's field. And
arithmetic over parameters alone (``batch * topk * steps``) is the input
worked out, not a computation. A mixin of ``origins.InputOrigins``, whose
``view`` says what is input.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .names import dotted
from .scopes import Element, Scope, before
from .shapes import (
    REDUCING_BUILTINS,
    is_step_record,
    names_constant,
    names_step_record,
    renormalises,
)


@dataclass
class _Follow:
    """A binding that views another local (``buf = box.data``): ask about that one."""

    name: ast.Name


class OwnValues:
    """The "computed here" questions of ``InputOrigins``."""

    def _arithmetic_of_input(self, value: ast.AST, func: Scope, at: ast.AST) -> bool:
        """``batch * topk * steps`` over parameters: input, worked out, not computed."""
        leaves = []

        def collect(node: ast.AST) -> None:
            if isinstance(node, ast.BinOp):
                collect(node.left)
                collect(node.right)
            elif isinstance(node, ast.UnaryOp):
                collect(node.operand)
            else:
                leaves.append(node)

        if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult) for n in ast.walk(value)):
            return False  # `x @ w`: a product of tensors, the function's own result
        collect(value)
        inputs = [leaf for leaf in leaves if not isinstance(leaf, ast.Constant)]
        return bool(inputs) and all(self.view(leaf, func, at) is not None for leaf in inputs)

    def _computed(self, expr: ast.AST, func: Scope, at: ast.AST):
        """Is ``expr`` (seen through ``len``, attributes and items) a local the
        function bound to the result of a call that is not a view of input?

        Returns the computation (the bound value) when it can tell, True when the
        local is one the function builds up or advances, and False otherwise.
        """
        while True:
            if (
                isinstance(expr, ast.Call)
                and dotted(expr.func, through_calls=True) in ("len", *REDUCING_BUILTINS)
                and expr.args
            ):
                expr = expr.args[0]  # `len(parts)`, `sum(parts)`: what the reduction reads
            elif isinstance(expr, ast.Attribute) and (field := self.built_field(expr, func, at)):
                expr, at = field  # `rec.x` of `rec = Pair(x=a, ...)`: what `a` is
                if isinstance(expr, ast.Call) and self.view(expr, func, at) is None:
                    return expr  # `Pair(x=plan(n), ...)`: handed the function's own result
            elif isinstance(expr, (ast.Attribute, ast.Subscript)):
                expr = expr.value
            else:
                break
        if self._reads_step_record(expr, func, at):
            # `block_tables` off `forward_metadata`, checked against the step's tensors:
            # the engine's own plan against its data, an invariant of the engine.
            return True
        for _ in range(8):  # a chain of views: `box = out.data; buf = box.data`
            if not isinstance(expr, ast.Name):
                return False
            if expr.id not in func.params and expr.id in self.built.get(id(func.node), ()):
                return True  # a list the function filled in itself
            if expr.id not in func.params and self._advanced(expr.id, func, at):
                return True  # a counter the function's loop moves (`i += 1`)
            binding = self.dominating_binding(expr.id, func, at)
            if binding is None:
                return self._computed_on_every_path(expr.id, func, at)
            stmt, value, _ = binding
            found = self._computed_binding(expr, func, stmt, value)
            if not isinstance(found, _Follow):
                return found
            expr, at = found.name, stmt
        return False

    def _computed_binding(self, expr: ast.Name, func: Scope, stmt: ast.AST, value):
        """``_computed`` for one binding ``stmt`` of ``expr``: the answer, or
        ``_Follow(name)`` when the binding only views another local."""
        if expr.id in func.params and renormalises(expr.id, value):
            return False  # `dims = normalize(dims)`: still the caller's value
        if (
            isinstance(stmt, ast.Assign)
            and isinstance(value, Element)
            and isinstance(value.iterable, ast.Call)
        ):
            value = value.iterable  # `k_fp4, k_sf = quantize(x)`: a part of the call's result
        if isinstance(value, ast.Subscript) and self._cut_by_own(value.slice, func, stmt):
            return value  # `part = hidden[:total]`: a piece the function measured out
        while isinstance(value, (ast.Attribute, ast.Subscript)):
            if isinstance(value, ast.Attribute) and self.built_field(value, func, stmt):
                # `ids = rec.x.input_ids` of `rec = Pair(x=a, ...)`: what `a` is.
                return self._computed(value, func, stmt)
            value = value.value
        if isinstance(value, ast.Name):
            return _Follow(value)
        # The result of processing values (`objects = compile(sources)`), not
        # an independent fact queried with no arguments (`device_count()`).
        if isinstance(value, ast.BinOp) and self._arithmetic_of_input(value, func, stmt):
            return False
        if value is None or isinstance(value, ast.BinOp):
            if isinstance(stmt, ast.AugAssign):
                return True  # `i += 1`
            return value if isinstance(stmt, ast.Assign) else False  # `i = j + 1`
        if isinstance(value, ast.Call) and names_constant(value, func):
            return False  # `cpu = torch.device("cpu")`: a constant, whatever it is compared with
        if (
            isinstance(value, ast.Call)
            and bool(value.args or value.keywords or isinstance(value.func, ast.Name))
            and self._binding_origin(expr.id, func, stmt, value) is None
        ):
            return value
        return False

    def _computed_on_every_path(self, name: str, func: Scope, at: ast.AST) -> bool:
        """Is the local ``name``, bound in more than one branch before ``at`` and
        dominated by none, the function's own value whichever branch ran?

        ``x_q = quant_a(x)`` under one ``if`` and ``x_q = quant_b(x)`` under its
        ``else``: each binding is asked as if it were the one that reached; a
        parameter, or a binding that is input, leaves the caller's value on a path.
        """
        if name in func.params:
            return False
        reaching = [
            (stmt, value)
            for stmt, value, _ in func.bindings.get(name, ())
            if before(stmt, at) and stmt is not at
        ]
        if len(reaching) < 2:
            return False
        key = (id(at), name)
        if key in self._busy:
            return False
        self._busy.add(key)
        try:
            probe = ast.Name(id=name, ctx=ast.Load())
            for stmt, value in reaching:
                if self._reads_step_record(value, func, stmt):
                    continue  # `tables = forward_metadata.spec_tables`: the engine's plan
                found = self._computed_binding(probe, func, stmt, value)
                if isinstance(found, _Follow):
                    found = self._computed(found.name, func, stmt)
                if not found:
                    return False
            return True
        finally:
            self._busy.discard(key)

    def _reads_step_record(self, expr: ast.AST, func: Scope, at: ast.AST) -> bool:
        """Is ``expr`` a per-step record, read off one, or a local bound to such a read
        (``counts = forward_batch.late_counts``)?"""
        for _ in range(8):
            while isinstance(expr, (ast.Attribute, ast.Subscript)):
                if isinstance(expr, ast.Attribute) and names_step_record(expr.attr):
                    return True
                expr = expr.value
            if not isinstance(expr, ast.Name):
                return False
            if expr.id in func.params:
                return is_step_record(func.params[expr.id]) or self.fed_by_step_record(
                    func, expr.id
                )
            binding = self.dominating_binding(expr.id, func, at)
            if binding is None or not isinstance(binding[1], (ast.Attribute, ast.Subscript)):
                return False
            at, expr = binding[0], binding[1]
        return False

    def _advanced(self, name: str, func: Scope, at: ast.AST) -> bool:
        """Does the function move ``name`` by arithmetic on itself (before ``at``, or in
        a loop around it)?"""
        for stmt, value, chain in func.bindings.get(name, ()):
            if not before(stmt, at) and not self.shares_loop(chain, at):
                continue
            if isinstance(stmt, ast.AugAssign):
                return True
            if isinstance(value, ast.BinOp) and any(
                isinstance(n, ast.Name) and n.id == name for n in ast.walk(value)
            ):
                return True
        return False
