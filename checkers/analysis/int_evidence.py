"""What torch's API and an annotation say about a value on their face: an int, a tensor, or neither.

The evidence ``int_kinds.IntInference`` weighs, one node at a time and with
no binding followed: the calls and methods that return host ints, the
constructors that build on the host, the methods that keep a tensor where
it is, the annotations that admit only ints, the names engines give per-row
lengths and host copies -- and how verdicts combine (``worst``).
"""

from __future__ import annotations

import ast

from .names import dotted

INT = "int"
TENSOR = "tensor"
HOST = "host"
UNKNOWN = "unknown"

_INT_ANNOTATIONS = frozenset({"int", "float", "bool", "SymInt", "torch.SymInt", "IntLike"})
# Annotations that admit anything: they say nothing about the value.
_ANY_ANNOTATIONS = frozenset({"Any", "typing.Any", "object"})
INT_CALLS = frozenset({"len", "int", "round", "math.ceil", "math.floor", "math.prod", "abs"})
INT_METHODS = frozenset(
    {
        "item",
        "numel",
        "nelement",
        "dim",
        "ndimension",
        "element_size",
        "bit_length",
        "count",
        "index",
        "get_device",
    }
)
# Annotations of containers whose items are what their type arguments say.
_CONTAINERS = frozenset(
    {"list", "List", "tuple", "Tuple", "Sequence", "Iterable", "MutableSequence", "set", "Set"}
)
# Mappings, whose items (what indexing one gives) are what their last type argument says.
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict"})
# torch constructors that put their result on the default (host) device unless told.
HOST_CONSTRUCTORS = frozenset(
    {"tensor", "as_tensor", "arange", "zeros", "ones", "full", "empty", "LongTensor", "IntTensor"}
)
# Tensor constructors that build on their argument's device (``torch.zeros_like(x)``,
# ``x.new_tensor(data)``) unless told another: a host tensor's twin is a host tensor.
LIKE_CONSTRUCTORS = frozenset(
    {"empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like"}
)
NEW_METHODS = frozenset({"new_tensor", "new_empty", "new_zeros", "new_ones", "new_full"})
# Methods that keep a host tensor on the host (a cast, arithmetic, a reshape).
DEVICE_PRESERVING = frozenset(
    {
        "long",
        "int",
        "float",
        "sum",
        "cumsum",
        "diff",
        "clamp",
        "clone",
        "flatten",
        "view",
        "reshape",
        "squeeze",
        "unsqueeze",
        "contiguous",
        "max",
        "min",
        "prod",
        "type",
    }
)
# The last word of a name for per-row lengths or counts: a collection, so as
# repeats a tensor (repeat_interleave takes nothing else that is not an int).
_PLURAL_LENGTHS = ("lens", "lengths", "seqlens", "counts")
SIZED_METHODS = frozenset({"size", "stride"})  # an int with an argument, a tuple without
INT_ATTRIBUTES = frozenset({"ndim", "itemsize"})
TENSOR_METHODS = frozenset(
    {
        "sum",
        "cumsum",
        "diff",
        "to",
        "long",
        "int",
        "cuda",
        "cpu",
        "clone",
        "flatten",
        "view",
        "reshape",
        "repeat",
        "repeat_interleave",
        "clamp",
        "masked_select",
        "nonzero",
        "bincount",
        "squeeze",
        "unsqueeze",
        "contiguous",
        "float",
        "max",
        "min",
        "prod",
        "type",
    }
)


def _unquoted(ann: ast.expr | None) -> ast.expr | None:
    """A string annotation (``"int | None"``) as the expression it spells; None if it spells none."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            return ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    return ann


def _union_members(ann: ast.expr) -> list[ast.expr]:
    """The members of ``A | B``, ``Optional[A]`` and ``Union[A, B]``, ``None`` left out."""
    parts: list[ast.expr] = []

    def split(a: ast.expr) -> None:
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            split(a.left)
            split(a.right)
        elif isinstance(a, ast.Subscript) and dotted(a.value).rpartition(".")[2] == "Optional":
            split(a.slice)
        elif isinstance(a, ast.Subscript) and dotted(a.value).rpartition(".")[2] == "Union":
            for e in a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]:
                split(e)
        elif not (isinstance(a, ast.Constant) and a.value is None):
            parts.append(a)

    split(ann)
    return parts


def annotation_verdict(ann: ast.expr | None) -> str:
    ann = _unquoted(ann)
    if ann is None:
        return UNKNOWN
    names = {dotted(p) for p in _union_members(ann)}
    if names and names <= _INT_ANNOTATIONS:
        return INT
    if names and names <= _INT_ANNOTATIONS | _ANY_ANNOTATIONS:
        return UNKNOWN  # `Any` admits an int and a tensor alike: no evidence
    return TENSOR  # an annotation that admits something other than an int


def item_annotation_verdict(ann: ast.expr | None) -> str | None:
    """The verdict for an item of a value annotated ``ann``; None when ``ann`` declares
    no container (no annotation, or a tensor's: its items are the caller's question).

    ``list[int]`` and ``tuple[int, ...]`` give INT, ``list[tuple[int, int]]`` too
    (ints all the way down); ``dict[str, torch.Tensor]`` gives TENSOR;
    ``dict[str, Any]`` gives UNKNOWN -- a mapping of anything says nothing about
    one of its values. Each member of a union must agree (``list[int] | None``).
    """
    ann = _unquoted(ann)
    if ann is None:
        return None
    members = _union_members(ann)
    verdicts = [_container_items(m) for m in members]
    if not verdicts or any(v is None for v in verdicts):
        return None
    return worst(set(verdicts))


def _container_items(ann: ast.expr) -> str | None:
    if dotted(ann) in ("torch.Size", "Size"):
        return INT
    if not isinstance(ann, ast.Subscript):
        if dotted(ann).rpartition(".")[2] in _CONTAINERS | _MAPPINGS:
            return UNKNOWN  # a bare `list` or `dict`: items of anything
        return None
    kind = dotted(ann.value).rpartition(".")[2]
    args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    args = [a for a in args if not (isinstance(a, ast.Constant) and a.value is Ellipsis)]
    if kind in _MAPPINGS:
        args = args[-1:]  # the values; the keys are not what an index gives
    elif kind not in _CONTAINERS:
        return None
    if not args:
        return None
    verdicts = set()
    for a in args:
        # Ints all the way down (`list[tuple[int, int]]`): an item, or an item of
        # one, is an int or a container of them -- never a tensor.
        verdict = annotation_verdict(a)
        if verdict == TENSOR and item_annotation_verdict(a) == INT:
            verdict = INT
        verdicts.add(verdict)
    return worst(verdicts)


def _last_word(node: ast.AST) -> str:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name.rpartition("_")[2]


def names_lengths(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute)) and _last_word(node) in _PLURAL_LENGTHS


def names_host(node: ast.AST) -> bool:
    return isinstance(node, (ast.Name, ast.Attribute)) and _last_word(node) == "cpu"


def has_device(call: ast.Call) -> bool:
    return any(k.arg == "device" or k.arg is None for k in call.keywords)


def on_host(call: ast.Call) -> bool:
    """A call whose device is spelled as the CPU -- ``device="cpu"``, ``"cpu:0"``,
    ``torch.device("cpu")``, or ``.to("cpu")``'s positional: what it builds or
    moves is a host tensor, whatever its operands are."""
    spelled = [k.value for k in call.keywords if k.arg == "device"]
    if isinstance(call.func, ast.Attribute) and call.func.attr == "to" and call.args:
        spelled.append(call.args[0])
    return any(_is_cpu(value) for value in spelled)


def _is_cpu(value: ast.AST) -> bool:
    if (
        isinstance(value, ast.Call)
        and dotted(value.func) in ("torch.device", "device")
        and value.args
    ):
        value = value.args[0]
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.partition(":")[0] == "cpu"
    )


def moves(call: ast.Call) -> bool:
    """``.to(...)`` that names a device (a positional that is not a dtype, or ``device=``)."""
    if has_device(call):
        return True
    for a in call.args:
        path = dotted(a)
        if not (path.startswith("torch.") or path in _DTYPE_NAMES):
            return True
    return False


_DTYPE_NAMES = frozenset({"dtype", "torch_dtype"})


def is_size_call(node: ast.AST | None) -> bool:
    """``t.size()``: a Size, whose items are ints."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    )


def combine(a: str, b: str) -> str:
    return worst({a, b})


def worst(verdicts: set[str]) -> str:
    """A device tensor anywhere makes one; else no evidence anywhere makes no evidence;
    else a host tensor anywhere makes a host tensor (an int and a host tensor add up
    to a host tensor)."""
    if TENSOR in verdicts:
        return TENSOR
    if UNKNOWN in verdicts:
        return UNKNOWN
    if HOST in verdicts:
        return HOST
    return INT
