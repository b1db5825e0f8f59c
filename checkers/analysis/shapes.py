"""What a node of the AST is on its face, answered from the node alone.

``origins`` follows a name to its binding, an attribute to the constructor
that set it, a parameter to its callers; each step ends in a question about
one node that needs nothing else to answer: is this call a view of its
argument (``len(x)``, ``x.view(...)``), a read of the environment or the
command line, a literal, a record class, ``self.m(...)``, a renormalisation
of the same name, which argument a call passes for a parameter. Those answers
are here, pure functions of the node.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator

from .names import dotted, has_decorator
from .scopes import Element, Scope, self_class

# Builtins whose result is their argument seen another way, not a new value.
VIEW_BUILTINS = frozenset(
    {
        "len",
        "tuple",
        "list",
        "zip",
        "enumerate",
        "reversed",
        "iter",
        "next",
        "int",
        "float",
        "str",
        "bool",
        "type",
        "vars",
        "getattr",
        "dict",
        "open",
        "itertools.chain",
        "cast",
        "typing.cast",
    }
)
# Calls that look up the fixed numeric facts of the dtype they are handed (its bits,
# its range): that dtype seen another way, as `type(x)` is -- a table the library
# keeps, not a computation on the value.
DTYPE_FACTS = frozenset(
    {"torch.finfo", "torch.iinfo", "np.finfo", "np.iinfo", "numpy.finfo", "numpy.iinfo"}
)
# Methods that read a container or string without computing from other inputs.
VIEW_METHODS = frozenset(
    {
        "get",
        "pop",
        "setdefault",
        "items",
        "keys",
        "values",
        "split",
        "strip",
        "rstrip",
        "lstrip",
        "splitlines",
        "lower",
        "upper",
        "copy",
        "partition",
        "rpartition",
        "rsplit",
        "replace",
        "removeprefix",
        "removesuffix",
        # A tensor seen another way: a cast, a move, a reshape keeps the caller's
        # values and, but for the reshape, its shape.
        "to",
        "type",
        "contiguous",
        "float",
        "half",
        "bfloat16",
        "long",
        "detach",
        "unsqueeze",
        "squeeze",
        "view",
        "reshape",
        "flatten",
        "narrow",
        # A tensor's shape read with an index: `x.size(0)` is `x.shape[0]`.
        "size",
        "stride",
    }
)
# Calls that lay their arguments' values side by side: a concatenation of input is input.
JOINING_CALLS = frozenset({"torch.cat", "torch.concat", "torch.stack", "cat", "concat"})
# Builtins that reorder or reduce what they are given: what they make of input
# alone is that input summarised (``sorted(sizes)``, ``max(lens)``), not a value
# the function computed from its own state.
REDUCING_BUILTINS = frozenset(
    {"sorted", "min", "max", "sum", "any", "all", "set", "frozenset", "abs", "math.prod"}
)
# Tensor methods that reduce or reorder it (``lens.max(dim=0).values``): the
# input summarised, as the builtins above.
REDUCING_METHODS = frozenset(
    {"max", "min", "sum", "amax", "amin", "prod", "mean", "all", "any", "sort", "unique", "abs"}
)
# Calls that read text or a spelled-out value (``re.match(r"(\d+)", line)``,
# ``KVLayout.parse(kv_layout)``, ``json.loads(body)``): what they make of input
# with nothing but literals beside it is that input, read -- whether it matched,
# which layout it names -- not a value the function computed.
PARSING_CALLS = frozenset({"match", "fullmatch", "search", "parse", "loads", "literal_eval"})
# Methods that cut a tensor into pieces whose sizes the caller of the method chose.
_SPLITTING_METHODS = frozenset({"split", "tensor_split", "chunk", "unbind", "split_with_sizes"})
# Conversions whose result's type is what they produce: narrowing it is for the type checker.
CONVERSIONS = frozenset({"item", "tolist", "int", "float", "str", "bool", "len"})
# Classes whose annotated class-body names are constructor arguments.
_RECORD_BASES = frozenset({"NamedTuple", "BaseModel", "Struct", "TypedDict"})
_RECORD_DECORATORS = frozenset({"dataclass", "define", "frozen", "attrs", "s"})


# Per-step records an engine builds for itself and hands its layers: what the
# forward pass is (`forward_batch`, `ForwardContext`) and the attention metadata
# its builders planned (`attn_metadata: FlashMLAMetadata`). Like a `*_config`,
# they are named for what they are; unlike one, what they hold is the engine's.
_STEP_RECORD_NAMES = frozenset({"forward_batch", "forward_context", "step_context"})
_STEP_RECORD_CLASSES = frozenset({"ForwardBatch", "ForwardContext", "StepContext"})


def names_step_record(name: str) -> bool:
    """``forward_batch``, ``attn_metadata``, ``forward_metadata``: named as a per-step record."""
    return name in _STEP_RECORD_NAMES or (name.endswith("_metadata") and len(name) > 9)


def is_step_record(param: ast.arg) -> bool:
    """Is the parameter one of the per-step records an engine builds itself?"""
    if names_step_record(param.arg):
        return True
    ann = param.annotation
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        spelled = ann.value.strip().rpartition(".")[2]
    else:
        spelled = dotted(ann).rpartition(".")[2] if ann is not None else ""
    return spelled in _STEP_RECORD_CLASSES or (
        spelled.endswith("Metadata") and len(spelled) > len("Metadata")
    )


def splits_tensor(call: ast.Call) -> bool:
    """``qkv.split([q, kv, kv], dim=-1)``, ``x.chunk(2)``: a tensor cut into pieces the
    code sized, not ``line.split(",")`` (a string's fields, which are the caller's)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _SPLITTING_METHODS:
        return False
    if func.attr != "split":
        return True
    if any(k.arg == "dim" for k in call.keywords):
        return True
    first = call.args[0] if call.args else None
    return isinstance(first, (ast.List, ast.Tuple)) or (
        isinstance(first, ast.Constant) and isinstance(first.value, int)
    )


def reads_target(elt: ast.AST, target: ast.AST) -> bool:
    """Is a comprehension's element its loop variable, read off it, or arithmetic and
    comparisons of those and literals (``s[0] * s[1]``, ``d % 16 == 0``)?"""
    if isinstance(elt, ast.BinOp):
        return all(reads_target(e, target) or is_literal(e) for e in (elt.left, elt.right))
    if isinstance(elt, ast.Compare):
        sides = [elt.left, *elt.comparators]
        return any(reads_target(e, target) for e in sides) and all(
            reads_target(e, target) or is_literal(e) for e in sides
        )
    if isinstance(elt, ast.UnaryOp):
        return reads_target(elt.operand, target)
    names = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    while True:
        if isinstance(elt, (ast.Attribute, ast.Subscript, ast.Starred)):
            elt = elt.value
        elif isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute) and not elt.args:
            elt = elt.func.value
        elif (
            isinstance(elt, ast.Call)
            and dotted(elt.func, through_calls=True) in VIEW_BUILTINS
            and elt.args
        ):
            elt = elt.args[0]  # `int(d)`: the same value converted
        elif isinstance(elt, ast.Tuple):
            return all(reads_target(e, target) for e in elt.elts)
        else:
            return isinstance(elt, ast.Name) and elt.id in names


def is_self_call(call: ast.Call, func: Scope | None) -> bool:
    """``self.m(...)``: the object's own method (a record's worked-out field)."""
    callee = call.func
    return (
        isinstance(callee, ast.Attribute)
        and isinstance(callee.value, ast.Name)
        and self_class(callee.value.id, func) is not None
    )


def is_literal(node: ast.AST) -> bool:
    """A constant, or a tuple/list/set of them (`("num_experts", "n_experts")`)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return all(is_literal(e) for e in node.elts)
    return False


def names_constant(call: ast.Call, func) -> bool:
    """``torch.device("cpu")``, ``np.dtype("int32")``: a call of an imported or
    module-level name with literal arguments alone names the same value on every
    call -- a constant the function wrote down, not a value it worked out."""
    if not (call.args or call.keywords):
        return False  # `device_count()`: a fact queried, not a constant named
    if not all(
        is_literal(a) or (isinstance(a, ast.UnaryOp) and isinstance(a.operand, ast.Constant))
        for a in [*call.args, *(k.value for k in call.keywords)]
    ):
        return False
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    return (
        isinstance(root, ast.Name)
        and root.id not in func.params
        and root.id != func.self_name
        and root.id not in func.bindings
    )


def is_record(node: ast.ClassDef) -> bool:
    """A dataclass (also under an alias that says so: ``pydantic_dataclass``), attrs
    class, NamedTuple, pydantic model or msgspec Struct."""
    return (
        any(has_decorator(node, d) for d in _RECORD_DECORATORS)
        or any(
            dotted(d, through_calls=True).rpartition(".")[2].endswith("dataclass")
            for d in node.decorator_list
        )
        or any(
            dotted(b, through_calls=True).rpartition(".")[2] in _RECORD_BASES for b in node.bases
        )
    )


def is_private(attr: str) -> bool:
    return attr.startswith("_") and not attr.endswith("__")


def inside(node: ast.AST, outer: ast.AST) -> bool:
    start = (outer.lineno, outer.col_offset)
    end = (outer.end_lineno, outer.end_col_offset)
    return start <= (node.lineno, node.col_offset) <= end


def renormalises(name: str, value: ast.AST | None) -> bool:
    """``name = f(name, ...)`` or ``name = name.m(...)``: the same value, normalised --
    also each of several at once, ``q, k = [contiguous(t) for t in (q, k)]``."""
    if isinstance(value, Element):
        comp = value.iterable
        return (
            isinstance(comp, (ast.ListComp, ast.GeneratorExp))
            and len(comp.generators) == 1
            and not comp.generators[0].ifs
            and isinstance(comp.generators[0].iter, (ast.Tuple, ast.List))
            and any(isinstance(e, ast.Name) and e.id == name for e in comp.generators[0].iter.elts)
            and isinstance(comp.generators[0].target, ast.Name)
            and renormalises(comp.generators[0].target.id, comp.elt)
        )
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == name
    ):
        return True
    for arg in [*value.args, *(k.value for k in value.keywords)]:
        while isinstance(arg, ast.Call) and arg.args:  # f(g(name))
            arg = arg.args[0]
        if isinstance(arg, ast.Name) and arg.id == name:
            return True
    return False


def argument_for(call: ast.Call, arg: ast.arg, positional, node_args, func) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == arg.arg:
            return kw.value
    # A `**kwargs` passes whatever it holds, but only for what no positional argument fills.
    spread = next((kw.value for kw in call.keywords if kw.arg is None), None)
    if arg.arg in positional:
        index = positional.index(arg.arg)
        # A call through a class (`Cls.method(obj, x)`) passes self positionally.
        if func.self_name is not None and isinstance(call.func, ast.Attribute):
            receiver = call.func.value
            if isinstance(receiver, ast.Name) and receiver.id[:1].isupper():
                index += 1
        for i, a in enumerate(call.args):
            if isinstance(a, ast.Starred):
                return a.value
            if i == index:
                return a
    if node_args.vararg is not None and arg is node_args.vararg:
        extra = call.args[len(positional) :]
        return extra[0] if extra else None
    return spread


def self_attr(target: ast.AST, func: Scope | None) -> str | None:
    if (
        func is not None
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == func.self_name
    ):
        return target.attr
    return None


def is_environment(expr: ast.AST) -> bool:
    path = dotted(expr, through_calls=True) if isinstance(expr, (ast.Attribute, ast.Name)) else ""
    if path in ("os.environ", "sys.argv", "environ"):
        return True
    if isinstance(expr, ast.Call):
        callee = dotted(expr.func, through_calls=True)
        return callee in ("os.getenv", "getenv", "os.environ.get", "os.environb.get")
    return False


def is_parse_args(expr: ast.Call) -> bool:
    return isinstance(expr.func, ast.Attribute) and expr.func.attr in (
        "parse_args",
        "parse_known_args",
    )


# What can hold a statement: statements, and the handlers and cases of the statements that have them.
_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def walk_statements(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk(node)``'s statements, in its order, without entering expressions.

    No expression holds a statement, so leaving them out of the breadth-first
    queue keeps every statement at its depth and its place among its level:
    the order ``ast.walk`` yields them in, which decides which of two copies
    of one attribute a constructor is said to make. A class's methods are
    mostly expressions, and walking them all was a fifth of the rule's time.
    """
    todo = deque([node])
    while todo:
        node = todo.popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                todo.extend(item for item in value if isinstance(item, _STATEMENT_HOLDERS))
            elif isinstance(value, _STATEMENT_HOLDERS):
                todo.append(value)
        yield node


def reads_environment(value: ast.AST) -> bool:
    return any(
        is_environment(n) or (isinstance(n, ast.Call) and is_parse_args(n)) for n in ast.walk(value)
    )
