"""Whether a value comes from input or was computed where it is read.

``input-assert`` flags an ``assert`` that validates input -- what a caller, a
configuration, the environment or the command line hands in -- and leaves
alone one that restates what the function computed itself. This answers the
question for one expression at one place in one function, from what
``bindings.BindingIndex`` recorded: a name is followed to the binding that
dominates the place (or the parameter it is, and on to the private helper's
callers), an attribute of ``self`` to what the constructor copied into it,
and a call is input only when it is a view of input (``len(x)``, ``x.view(...)``)
or what a function makes of configuration alone. Every answer is an
``Origin`` phrased for the message, or None.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .bindings import BindingIndex
from .class_facts import ClassFacts, ClassFactsOf
from .imports import bound_name
from .names import dotted
from .protocol import ObjectProtocol
from .scopes import Element, Scope, before, self_class, within
from .shapes import (
    CONVERSIONS,
    JOINING_CALLS,
    PARSING_CALLS,
    REDUCING_BUILTINS,
    REDUCING_METHODS,
    VIEW_BUILTINS,
    VIEW_METHODS,
    argument_for,
    inside,
    is_environment,
    is_literal,
    is_parse_args,
    is_private,
    is_record,
    is_self_call,
    is_step_record,
    names_step_record,
    reads_environment,
    reads_target,
    renormalises,
    splits_tensor,
)

# A name ending in `_config` is a config too (`quant_config`, `model_config`,
# `runner_config`): engines name every configuration object that way.
_CONFIG_SUFFIX = "_config"


@dataclass
class _Follow:
    """A binding that views another local (``buf = box.data``): ask about that one."""

    name: ast.Name


@dataclass
class Origin:
    """Why a value is input, phrased for the message."""

    what: str
    config: bool = False  # a configuration object: what a function makes of it is input too


class InputOrigins(ClassFacts, ObjectProtocol, BindingIndex):
    """Where the values of one module come from, asked per expression and memoised."""

    def __init__(self, tree: ast.Module, inputs: frozenset[str], source=None) -> None:
        self.inputs = inputs
        self._env_globals: dict[str, bool] = {}
        self._memo: dict[tuple[int, str], Origin | None] = {}
        self._busy: set[tuple[int, str]] = set()
        self._class_memo: dict[int, ClassFactsOf | None] = {}
        self._globals_set: set[str] | None = None  # names some function declares `global`
        self._imports: set[str] | None = None  # names module-level imports bind
        self._filled: dict[int, set[str]] = {}  # class id -> attributes it puts items into
        self._module_counts: set[str] | None = None  # `.attr`s advanced on objects not self
        # function node id -> [(statement, the object it calls a method of for its effect)]
        self._effects: dict[int, list[tuple[ast.stmt, str]]] = {}
        super().__init__(tree, source)

    def env_global(self, name: str) -> bool:
        """Is the module-level ``name`` bound to something read from the environment?

        Asked per name when a module-level read is resolved, not worked out for
        every module binding up front: that walked each binding's whole value
        (a module's tables, its docstrings) for the handful of names an assert reads.
        """
        found = self._env_globals.get(name)
        if found is None:
            values = self.module_bindings.get(name, ())
            found = any(
                v is not None and (reads_environment(v) or self._accessor_call(v)) for v in values
            )
            self._env_globals[name] = found
        return found

    def _accessor_call(self, value: ast.AST) -> bool:
        """``is_hip()``, ``get_parallel()``: a call with no arguments of a function
        another module defines -- not a class (``BlankLine()`` builds a new object)."""
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and not value.args
            and not value.keywords
            and not value.func.id[:1].isupper()
            and self._imported(value.func.id)
        )

    def reads_input(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> Origin | None:
        """Does the assert condition ``expr`` read input anywhere inside it?"""
        if self._narrows_normalised(expr, func, at):
            # A parameter the function normalised (`x = [x]`, `g = guard_int(g)`) and
            # now narrows for the type checker: its own doing.
            return None
        if self._narrows_conversion(expr, func, at):
            return None  # `n = t.item(); assert isinstance(n, int)`: the conversion's type
        if isinstance(expr, ast.Compare) and func is not None:
            sides = [expr.left, *expr.comparators]
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops) and all(
                self._own_attribute(e, func, at) for e in sides
            ):
                return None  # `self.pool.table is self.table`: the object keeps them one
            if any(self._computed(e, func, at) for e in sides):
                return None  # checks what the function computed against what it was given
            if self._fits_own_buffer(expr, func, at):
                return None  # `n <= self.buf.shape[0]`: the admission upstream, restated
            if (
                len(expr.ops) == 1
                and isinstance(expr.ops[0], (ast.In, ast.NotIn))
                and isinstance(expr.comparators[0], ast.Attribute)
                and self._own_attribute(expr.comparators[0], func, at)
                and (
                    is_private(expr.comparators[0].attr)
                    or self._filled_by_class(expr.comparators[0], func)
                )
            ):
                # `kind not in self._pending`, `node.id not in self.cache` where the
                # class fills `self.cache` itself: where the object's protocol stands.
                return None
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)) or (
            isinstance(expr, ast.Call) and is_self_call(expr, func)
        ):
            origin = self.view(expr, func, at)
            if origin is not None:
                return origin
            if isinstance(expr, ast.Name):
                return None
        if isinstance(expr, ast.Attribute):
            if is_private(expr.attr) and not (
                isinstance(expr.value, ast.Name) and self_class(expr.value.id, func)
            ):
                return None  # another object's bookkeeping, whoever handed us the object
            if func is not None and self._changed_by_call(expr.value, func, at):
                return None  # what a call the function made left in the object
            if self._counted_by_module(expr):
                return None  # a count the module advances on the object
            if names_step_record(expr.attr):
                return None  # a per-step record, whoever keeps it
            return self.reads_input(expr.value, func, at)
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and (expr.args or expr.keywords)
            and expr.func.attr not in VIEW_METHODS
            and self._via_collaborator(expr.func.value, func, at)
        ):
            # `self.buffer.anchor_bytes(name)`: a question the collaborator the
            # constructor stored answers from its own state; only what is passed
            # to it can be input.
            for arg in [*expr.args, *(k.value for k in expr.keywords)]:
                if self._own_attribute(arg, func, at):
                    continue  # the object asking about itself (`size_of(self.name)`)
                origin = self.reads_input(arg, func, at)
                if origin is not None:
                    return origin
            return None
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, (ast.expr, ast.comprehension, ast.keyword)):
                origin = self.reads_input(child, func, at)
                if origin is not None:
                    return origin
        return None

    def _via_collaborator(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        """Is ``expr`` read off an attribute the constructor stored (``self.scheduler.x``)?

        A constructor-copied value (``self.block_size``) is input; a lookup in a
        table of a constructor-copied *object* (``self.scheduler.name_to_buf[n]``)
        is that object's state.
        """
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            if (
                isinstance(expr, ast.Attribute)
                and isinstance(expr.value, ast.Name)
                and func is not None
                and self_class(expr.value.id, func) is not None
            ):
                return True
            expr = expr.value
        return False

    def _narrows_normalised(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if dotted(expr.func, through_calls=True) not in ("isinstance", "issubclass"):
            return False
        subject = expr.args[0]
        if not isinstance(subject, ast.Name) or subject.id not in func.params:
            return False
        return any(before(stmt, at) for stmt, _, _ in func.bindings.get(subject.id, []))

    def _narrows_conversion(self, expr: ast.AST, func: Scope | None, at: ast.AST) -> bool:
        if func is None or not isinstance(expr, ast.Call) or not expr.args:
            return False
        if dotted(expr.func, through_calls=True) != "isinstance" or not isinstance(
            expr.args[0], ast.Name
        ):
            return False
        name = expr.args[0].id
        if name in func.params:
            return False
        binding = self.dominating_binding(name, func, at)
        value = binding[1] if binding is not None else None
        if not isinstance(value, ast.Call):
            return False
        callee = value.func
        called = (
            callee.attr if isinstance(callee, ast.Attribute) else dotted(callee, through_calls=True)
        )
        if self._accessor_call(value):
            return True  # `backend = get_attn_backend()`: the type the program installed
        return called in CONVERSIONS

    def _own_attribute(self, expr: ast.AST, func: Scope, at: ast.AST) -> bool:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
            if isinstance(expr, ast.Name):
                return self_class(expr.id, func) is not None
        return False

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
                return is_step_record(func.params[expr.id])
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

    def view(self, expr: ast.AST | None, func: Scope | None, at: ast.AST) -> Origin | None:
        """Is ``expr``'s value input, or input seen another way (not computed)?"""
        if expr is None:
            return None
        if isinstance(expr, Element):
            return self.view(expr.iterable, func, at)
        if is_environment(expr):
            return Origin("the environment or the command line")
        if isinstance(expr, ast.Name):
            return self.resolve(expr.id, func, at)
        if isinstance(expr, ast.Attribute):
            if func is not None and self._changed_by_call(expr.value, func, at):
                # `self.layers.prepare(x)` on the line above: what the object holds
                # now is what that call left, not what its constructor was given.
                return None
            if self._counted_by_module(expr):
                # `cd.session_ref`, which this module's code advances (`cd.session_ref
                # -= 1`): a count the module keeps on the objects it hands around.
                return None
            if names_step_record(expr.attr):
                # `get_attn_backend().forward_metadata`, `ctx.attn_metadata`: a per-step
                # record wherever it is kept.
                return None
            if expr.attr != "args" and self.is_input_name(expr.attr):
                # `self.config`, `layer.quant_config`: a configuration wherever it is
                # kept. Not `.args`: FX nodes, AST calls and exceptions all have one.
                return Origin(f"`{expr.attr}`, a configuration", config=True)
            if func is not None and isinstance(expr.value, ast.Name):
                owner = self_class(expr.value.id, func)
                if owner is not None:
                    source = self.class_input_attr(owner, expr.attr)
                    if source is None or self._callers_tested(func, expr.attr):
                        return None
                    return Origin(f"`self.{expr.attr}`, {source}")
            if is_private(expr.attr):
                return None  # another object's private attribute: its own bookkeeping
            return self.view(expr.value, func, at)
        if isinstance(expr, ast.Subscript):
            if not isinstance(expr.slice, (ast.Constant, ast.Slice)) and self._via_collaborator(
                expr.value, func, at
            ):
                return None  # a lookup in a table the collaborator maintains
            return self.view(expr.value, func, at)
        if isinstance(expr, (ast.Starred, ast.NamedExpr)):
            return self.view(expr.value, func, at)
        if isinstance(expr, ast.IfExp):
            found = self.view(expr.body, func, at) or self.view(expr.orelse, func, at)
            if found is None and is_literal(expr.body) and is_literal(expr.orelse):
                # `2 if bidirectional else 1`: the input picks which constant it is.
                return self.view(expr.test, func, at)
            return found
        if (
            isinstance(expr, ast.Compare)
            and all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops)
            and any(isinstance(c, ast.Constant) and c.value is None for c in expr.comparators)
        ):
            # `has_mask = mask is not None`: whether the caller passed one, a fact
            # about the input and not a value of the function's own.
            return self.view(expr.left, func, at)
        if (
            isinstance(expr, ast.BinOp)
            and func is not None
            and self._arithmetic_of_input(expr, func, at)
        ):
            # `width = (2 if bidirectional else 1) * hidden`: sizes worked out from
            # parameters by arithmetic alone.
            return next((o for e in (expr.left, expr.right) if (o := self.view(e, func, at))), None)
        if isinstance(expr, ast.BoolOp):
            return next((o for v in expr.values if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return next((o for v in expr.elts if (o := self.view(v, func, at))), None)
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            if reads_environment(expr):
                return Origin("the environment or the command line")
            gens = expr.generators
            # `[n.node for n in nodes]` reads the argument; `[fmt(x) for x in xs]`
            # and a filtered comprehension compute something new.
            if len(gens) == 1 and not gens[0].ifs and reads_target(expr.elt, gens[0].target):
                return self.view(gens[0].iter, func, at)
            return None
        if isinstance(expr, ast.Call):
            if is_parse_args(expr):
                return Origin("the command line (`parse_args()`)")
            callee = expr.func
            called = dotted(callee, through_calls=True)
            if called in VIEW_BUILTINS or called in JOINING_CALLS or called in REDUCING_BUILTINS:
                return next((o for a in expr.args if (o := self.view(a, func, at))), None)
            if splits_tensor(expr):
                return None  # pieces the function sized: their shapes are its own
            if self._accessor_call(expr):
                # `get_parallel()`, `is_hip()`: a process-wide accessor another module
                # defines -- the configuration, the platform, the environment.
                return Origin(f"`{callee.id}()`, process-wide settings another module keeps")
            parsed = self._parsed(expr, func, at)
            if parsed is not None:
                return parsed
            if isinstance(callee, ast.Attribute) and callee.attr.startswith("from_"):
                # `Engine.from_engine_args(args)`: an object a factory builds from what
                # it is given alone is that input, built.
                given = [
                    a for a in [*expr.args, *(k.value for k in expr.keywords)] if not is_literal(a)
                ]
                found = [self.view(a, func, at) for a in given]
                if found and all(o is not None for o in found):
                    return Origin(f"`{callee.attr}(...)` of {found[0].what}")
            # What a function makes of a configuration alone is configuration:
            # `use_mla_backend(server_args)`, `backends_of(resolved(server_args))`.
            # A function of data and a config (`rope_index(ids, hf_config=...)`)
            # computes something new.
            passed = [
                a for a in [*expr.args, *(k.value for k in expr.keywords)] if not is_literal(a)
            ]
            origins = [self.view(a, func, at) for a in passed]
            if origins and all(o is not None and o.config for o in origins):
                return origins[0]
            if isinstance(callee, ast.Attribute) and (
                (not expr.args and not expr.keywords)
                or callee.attr in VIEW_METHODS
                or callee.attr in REDUCING_METHODS
            ):
                owner = (
                    self_class(callee.value.id, func)
                    if isinstance(callee.value, ast.Name)
                    else None
                )
                if owner is not None:
                    if not expr.args and not expr.keywords and is_record(owner):
                        # `self.resolved_head_dim()` of a dataclass: its fields, the
                        # caller's arguments, worked out.
                        return Origin(
                            f"`self.{callee.attr}()`, worked out from the record's fields"
                        )
                    return None  # the object's own method computes something
                if (
                    expr.args
                    and callee.attr == "get"
                    and self._via_collaborator(callee.value, func, at)
                ):
                    return None
                return self.view(callee.value, func, at)
        return None

    def _parsed(self, call: ast.Call, func: Scope | None, at: ast.AST) -> Origin | None:
        """``re.match(r"(\\d+)", line)``, ``PAT.search(line)``, ``Layout.parse(kv_layout)``:
        input read by a parser with nothing but literals beside it is that input.

        The receiver of a method (a compiled pattern, a parser) is the reader, not
        what is read; an argument the function computed (``re.match(p, render(x))``)
        makes the result its own.
        """
        callee = call.func
        name = dotted(callee, through_calls=True) or getattr(callee, "attr", "")
        if name.rpartition(".")[2] not in PARSING_CALLS:
            return None
        given = [a for a in [*call.args, *(k.value for k in call.keywords)] if not is_literal(a)]
        found = [self.view(a, func, at) for a in given]
        if found and all(o is not None for o in found):
            return Origin(f"{found[0].what}, parsed by `{name}`")
        return None

    def resolve(self, name: str, func: Scope | None, at: ast.AST) -> Origin | None:
        if self._set_by_module(name, func, at):
            # `_current_vllm_config`, assigned by the module's own setter through
            # `global`: where the module's protocol stands, whatever its name says.
            return None
        if self.is_input_name(name) and not self._shadowed(name, func, at):
            return Origin(f"`{name}`, a configured input name", config=name != "args")
        if func is None:
            if self.env_global(name):
                return Origin(
                    f"`{name}`, read from the environment, the command line or the platform"
                )
            return None
        if name == func.self_name:
            return None
        for comp, value in self.comprehension_bindings.get(name, ()):
            if inside(at, comp) and self.owner.get(comp) is func:
                return self._binding_origin(name, func, comp, value)
        binding = self.dominating_binding(name, func, at)
        if (
            binding is not None
            and name not in func.params
            and name in self.built.get(id(func.node), ())
        ):
            return None  # a list or set the function fills in itself
        if binding is not None:
            stmt, value, _ = binding
            if name in func.params and renormalises(name, value):
                # `dims = cls._map_neg_dims(dims)`: still the caller's value, normalised.
                return self.param_origin(func, name)
            return self._binding_origin(name, func, stmt, value)
        others = func.bindings.get(name, [])
        if name in func.params:
            return self.param_origin(func, name)
        if others:
            if name in self.built.get(id(func.node), ()):
                return None  # a list or set the function fills in itself
            for stmt, value, bchain in others:
                if not before(stmt, at) and not self.shares_loop(bchain, at):
                    continue  # assigned only after the assert, and no loop comes back
                origin = self._binding_origin(name, func, stmt, value)
                if origin is not None:
                    return origin
            return None
        if func.parent is not None:
            return self.resolve(name, func.parent, func.node)  # a closure's free name
        return self.resolve(name, None, at)

    def _imported(self, name: str) -> bool:
        """Is ``name`` bound by an import at module level (and nowhere else)?"""
        values = self.module_bindings.get(name)
        return bool(values) and all(v is None for v in values) and name in self._import_names()

    def _import_names(self) -> set[str]:
        if self._imports is None:
            self._imports = {
                bound_name(alias)
                for stmt in self.tree.body
                if isinstance(stmt, (ast.Import, ast.ImportFrom))
                for alias in stmt.names
            }
        return self._imports

    def is_input_name(self, name: str) -> bool:
        return name in self.inputs or (
            name.endswith(_CONFIG_SUFFIX) and len(name) > len(_CONFIG_SUFFIX)
        )

    def _binding_origin(self, name, func, stmt, value) -> Origin | None:
        key = (id(stmt), name)
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            return self.view(value, func, stmt)
        finally:
            self._busy.discard(key)

    def _callers_tested(self, func: Scope, attr: str) -> bool:
        """Is ``func`` a private method every call of which (``self.<func>()``) sits
        under an ``if`` that tests ``self.<attr>`` -- the branch chose the method
        for the value the assert restates?"""
        name = func.name
        if not is_private(name) or func.self_name is None:
            return False
        sites = self.calls_of(name)
        if not sites:
            return False
        for call, caller in sites:
            if caller is None or caller.self_name is None or caller is func:
                return False
            if not (
                isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == caller.self_name
            ):
                return False
            tests = [
                test
                for block in self.blocks.get(call, ())
                for test in (self.guards.get(block), self.else_guards.get(block))
                if test is not None
            ]
            if not any(
                isinstance(n, ast.Attribute)
                and n.attr == attr
                and isinstance(n.value, ast.Name)
                and n.value.id == caller.self_name
                for t in tests
                for n in ast.walk(t)
            ):
                return False
        return True

    def _caller_checked(self, bound: ast.AST, call: ast.Call) -> bool:
        """Is ``call`` inside ``if isinstance(arg, T):`` or ``if arg.kind == K:`` for its arg?

        Only a test of what the value *is* counts; ``if arg is not None`` or a
        truth test leaves everything else about it unchecked.
        """
        if not isinstance(bound, ast.Name):
            return False
        for block in self.blocks.get(call, ()):
            test = self.guards.get(block)
            if test is None:
                continue
            tests = (
                test.values
                if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
                else [test]
            )
            for t in tests:
                if (
                    isinstance(t, ast.Call)
                    and dotted(t.func, through_calls=True) in ("isinstance", "issubclass")
                    and t.args
                    and isinstance(t.args[0], ast.Name)
                    and t.args[0].id == bound.id
                ):
                    return True
                if (
                    isinstance(t, ast.Compare)
                    and isinstance(t.left, ast.Attribute)
                    and isinstance(t.left.value, ast.Name)
                    and t.left.value.id == bound.id
                    and not any(
                        isinstance(c, ast.Constant) and c.value is None for c in t.comparators
                    )
                ):
                    return True
        return False

    def _shadowed(self, name: str, func: Scope | None, at: ast.AST) -> bool:
        """An `inputs` name the function re-binds to its own value (`args = self.codegen_args()`)."""
        if func is None or name in func.params:
            return False
        binding = self.dominating_binding(name, func, at)
        if binding is None:
            return False
        stmt, value, _ = binding
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            return False  # `from torch._inductor import config` is the config
        return self._binding_origin(name, func, stmt, value) is None

    def param_origin(self, func: Scope, name: str) -> Origin | None:
        key = (id(func.node), name)
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            origin = self._param_origin(func, name)
        finally:
            self._busy.discard(key)
        self._memo[key] = origin
        return origin

    def _param_origin(self, func: Scope, name: str) -> Origin | None:
        if is_step_record(func.params[name]):
            # `attn_metadata.decode is not None`: what the engine's own builder
            # planned for this step, not what a user handed in.
            return None
        plain = Origin(f"parameter `{name}` of `{func.name}`")
        fname = func.name
        private = fname.startswith("_") and not fname.endswith("__")
        nested = func.parent is not None and func.klass is None  # a method is not "nested"
        if not (private or nested) or isinstance(func.node, ast.Lambda):
            return plain
        sites = [
            (call, caller)
            for call, caller in self.calls_of(fname)
            if (not nested or within(caller, func.parent)) and not within(caller, func)
        ]  # a recursive call passes on what the function already had
        if not sites:
            return plain  # called from elsewhere (another module, a callback)
        arg = func.params[name]
        node_args = func.node.args
        positional = [a.arg for a in [*node_args.posonlyargs, *node_args.args]]
        if func.self_name is not None:
            positional = positional[1:]
        for call, caller in sites:
            bound = argument_for(call, arg, positional, node_args, func)
            if bound is None or self._caller_checked(bound, call):
                continue  # the caller tested what it passes: the helper restates it
            if self.view(bound, caller, call) is not None:
                return Origin(
                    f"parameter `{name}` of `{fname}`, which a caller passes input unchanged"
                )
        return None
