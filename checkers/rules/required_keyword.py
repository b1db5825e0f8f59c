"""required-keyword: ``torch.repeat_interleave`` with tensor repeats and no ``output_size=``.

From ROCm/ATOM's KV-pool refactor (pull request #2147): ``build_batch_ids_device`` takes the total as a required
argument, because without it ``torch.repeat_interleave`` synchronizes the
device to read back its own output length -- verified under
``torch.cuda.set_sync_debug_mode("error")`` -- once per prefill, between the
metadata and the first layer. The caller already held the sum as
``total_kv``. Required and not defaulted, because omitting it is only
slower, which is the kind of thing a default hides; and nothing else notices
a missing keyword that only costs a sync.

The sync happens only when ``repeats`` is a device tensor: with an int the
output length is known on the host, and a host tensor's values are read
without one. So the rule flags a call with neither the keyword nor repeats
that might be an int, and infers locally (``checkers.analysis.int_kinds``):
ints are literals, ``len``/``int``/``min``/``max``, ``.item()``,
``.numel()``, ``.size(i)``, ``.shape[i]``, arithmetic over them,
``int``-annotated parameters and items of ones annotated as containers of
ints (``block_size: list[int]``), items of ``.tolist()``, loop variables over
``range``, module constants, dataclass fields annotated ``int`` and
attributes ``__init__`` sets to any of these; host tensors are ``torch``
constructors without ``device=`` or with the CPU spelled there
(``device="cpu"``, ``torch.device("cpu")``), ``.cpu()`` and ``.to("cpu")``,
``*_cpu`` names, and what
torch functions make of host operands alone (``torch.minimum(a_cpu, b_cpu)``,
``torch.zeros_like(a_cpu)``: torch computes on its operands' device). What it
flags needs evidence of a device tensor: a ``Tensor`` annotation (a
container's item type included: ``dict[str, Tensor]``), a ``torch.*`` call
with an operand that is not on the host, ``x.new_tensor(...)``, a tensor
method, a ``grid[:, 0]`` index, or a name spelled as per-row lengths
(``seq_lens``, ``lengths``, ``counts``). An unannotated parameter, an
``Any`` (``opts: dict[str, Any]``: an item of anything), another object's
attribute and an unknown helper's result carry no evidence and are left alone: on sglang's 285 calls, treating another
object's attribute as a tensor flagged 83 int counts
(``server_args.speculative_num_draft_tokens``, ``quant_config.group_size``)
for 40 real syncs, and a rule that noisy gets turned off. A device
tensor passed with a host input (``torch.repeat_interleave(torch.arange(n),
q_lens)``) is not flagged either: the call indexes the input with the
repeats' expansion, so a call that runs has both on one device, and the
input's being on the host says the repeats are. The
single-argument form ``torch.repeat_interleave(repeats)`` always syncs:
there the tensor is the repeats.

Calls are matched by what the name resolves to through the file's imports
(``import torch as th``, ``from torch import repeat_interleave as ri``), and
the Tensor method form ``x.repeat_interleave(...)`` by its last component when
``methods`` is on, skipping receivers that are imported modules (an ONNX
symbolic function spelled ``opset9.repeat_interleave(g, self, repeats)``) and
calls with more positional arguments than the method takes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import Bool, ConfigError, String, StringList

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (see contracts/finding.py)
if TYPE_CHECKING:
    from ..analysis.int_kinds import IntInference

# checkers.analysis is imported where a tree is analysed, not here: a warm one-file
# run loads this kind for its declaration and never checks a tree.

RULES = (
    Rule(
        code="AC701",
        name="required-keyword",
        what=(
            "Flags a call of a configured function (`torch.repeat_interleave`, also as the "
            "method `x.repeat_interleave`) that omits the configured keyword (`output_size`) "
            "while its `repeats` argument is not provably an int."
        ),
        why=(
            "With tensor repeats and no `output_size`, `repeat_interleave` synchronizes the "
            "device to read back its own output length (ROCm/ATOM's KV-pool refactor verified it "
            'under `torch.cuda.set_sync_debug_mode("error")`): a stall on every call, '
            "between launches that could have overlapped, that no test notices because the "
            "result is the same. Pass the total the caller already holds."
        ),
        fix_safety=(
            "This rule offers no fix: the value of `output_size` (the sum of the repeats) is "
            "not known statically, and a wrong one is silently wrong output."
        ),
    ),
)

_PARAMS = {"calls": ["torch.repeat_interleave"], "keyword": "output_size"}


class RequiredKeyword(Contract):
    KIND = "required-keyword"
    RULES = RULES

    calls = StringList(
        doc=(
            "Dotted names of the functions whose calls must pass `keyword` "
            "(`torch.repeat_interleave`); matched through the file's imports and aliases."
        )
    )
    keyword = String(doc="The keyword those calls must pass (`output_size`).")
    argument = String(
        default="repeats",
        doc=(
            "The argument whose being an int makes the keyword unnecessary (`repeats`): "
            "a call whose argument is provably an int is not flagged."
        ),
    )
    signature = StringList(
        default=("input", "repeats", "dim"),
        doc=(
            "The function form's positional parameters, to find `argument` among the "
            "positional arguments; the method form drops the first. When the call passes "
            "fewer, the first (the tensor) is the argument: `torch.repeat_interleave(t)`."
        ),
    )
    methods = Bool(
        default=True,
        doc=(
            "Also match the method form `x.<last component>(...)` (the Tensor method), on "
            "any receiver that is not an imported module."
        ),
    )

    VALID = (
        Example(
            source=(
                "import torch\n"
                "\n"
                "def build_batch_ids_device(context_lens, *, total_kv):\n"
                "    ids = torch.arange(context_lens.numel(), device=context_lens.device)\n"
                "    return torch.repeat_interleave(ids, context_lens, output_size=total_kv)\n"
            ),
            params=_PARAMS,
            note="The refactor's fix: the caller's total passed as `output_size`.",
        ),
        Example(
            source=(
                "import torch as th\n"
                "\n"
                "class Gqa:\n"
                "    def __init__(self, heads: int, kv_heads: int):\n"
                "        self.group = heads // kv_heads\n"
                "\n"
                "    def expand(self, key, query):\n"
                "        g = query.size(1) // key.size(1)\n"
                "        key = th.repeat_interleave(key, g, dim=1)\n"
                "        return key.repeat_interleave(self.group, dim=1)\n"
            ),
            params=_PARAMS,
            note="Int repeats: `.size(i)` arithmetic, an attribute `__init__` sets from ints.",
        ),
        Example(
            source=(
                "def split(rows, counts, block_size: int, n_splits):\n"
                "    for i in range(len(counts)):\n"
                "        rows = rows.repeat_interleave(i + block_size)\n"
                "    return rows.repeat_interleave(n_splits)\n"
            ),
            params=_PARAMS,
            note="A loop variable over range, an int annotation; an unannotated parameter.",
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "class Drafter:\n"
                "    def __init__(self, server_args):\n"
                "        self.draft_tokens = server_args.num_draft_tokens or 1\n"
                "\n"
                "    def widen(self, page_table, block: tuple[int, int], lens_cpu):\n"
                "        rows, cols = block\n"
                "        page_table = page_table.repeat_interleave(self.draft_tokens, dim=0)\n"
                "        page_table = page_table.repeat_interleave(rows * cols, dim=1)\n"
                "        return page_table.repeat_interleave(lens_cpu.long())\n"
            ),
            params=_PARAMS,
            note=(
                "A count copied from a config, items of an int-tuple annotation, a host "
                "tensor (`*_cpu`): none syncs the device."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "from typing import Any\n"
                "\n"
                "def expand(x, opts: dict[str, Any], block: list[int] | None, lens_cpu):\n"
                "    x = x.repeat_interleave(opts['repeats'])\n"
                "    rows, _ = block\n"
                "    x = x.repeat_interleave(rows)\n"
                "    both = torch.maximum(lens_cpu, torch.zeros_like(lens_cpu))\n"
                "    return x.repeat_interleave(both)\n"
            ),
            params=_PARAMS,
            note=(
                "A value of a `dict[str, Any]` says nothing; the items of a `list[int] | None` "
                "are ints; a torch function of host tensors, and a twin of one, stay on the host."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "def draft_rows(rows, num_draft_tokens: list[int], lens):\n"
                '    counts = torch.tensor(num_draft_tokens, device="cpu")\n'
                "    rows = rows.repeat_interleave(counts)\n"
                '    return rows.repeat_interleave(lens.to("cpu"))\n'
            ),
            params=_PARAMS,
            note=(
                'A device spelled as the CPU (`device="cpu"`, `.to("cpu")`, '
                '`torch.device("cpu")`) makes a host tensor, whatever it was built from.'
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "class SparsePlan:\n"
                "    def __init__(self, layers):\n"
                "        self.window: tuple[int, int] | None = None\n"
                "        for layer in layers:\n"
                "            self.window = layer.sliding_window\n"
                "\n"
                "    def rows(self, qsl: torch.Tensor, seq_lens_cpu, query_lens_cpu):\n"
                "        q_lens = qsl[1:] - qsl[:-1]\n"
                "        rows = torch.repeat_interleave(torch.arange(len(q_lens)), q_lens)\n"
                "        swa = torch.minimum(seq_lens_cpu, query_lens_cpu + self.window[0])\n"
                "        return rows, rows.repeat_interleave(swa)\n"
            ),
            params=_PARAMS,
            note=(
                "A host input means host repeats (the call indexes one with the other's "
                "expansion, so both are on one device); an attribute's declared type "
                "holds for every value it is given: `self.window[0]` is an int."
            ),
        ),
        Example(
            source=(
                "from torch.onnx import symbolic_opset9 as opset9\n"
                "\n"
                "def repeat_interleave(g, self, repeats, dim):\n"
                "    return opset9.repeat_interleave(g, self, repeats, dim)\n"
            ),
            params=_PARAMS,
            note="A function of an imported module that shares the name is not the method.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "import torch\n"
                "\n"
                "def build_batch_ids_device(context_lens: torch.Tensor):\n"
                "    ids = torch.arange(context_lens.numel(), device=context_lens.device)\n"
                "    return torch.repeat_interleave(ids, context_lens)\n"
            ),
            params=_PARAMS,
            expect=(Expect("AC701", 5, 41, "output_size"),),
            note="Tensor repeats, no `output_size`: the sync ATOM's PR #2147 measured.",
        ),
        Example(
            source=(
                "from torch import repeat_interleave as ri\n"
                "\n"
                "def batch_ids(attn_metadata):\n"
                "    lens = attn_metadata.context_lens\n"
                "    ids = ri(lens)\n"
                "    return ids, lens.cumsum(0).repeat_interleave(lens.long())\n"
            ),
            params=_PARAMS,
            expect=(
                Expect("AC701", 5, 11, "single-argument"),
                Expect("AC701", 6, 50, "output_size"),
            ),
            note=(
                "An alias; the single-argument form (the tensor is the repeats); the "
                "method form with a tensor method's result."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "def patch_ids(grid, batch):\n"
                "    sizes = grid[:, 1] * grid[:, 2]\n"
                "    per_frame = torch.repeat_interleave(sizes, grid[:, 0])\n"
                "    return batch.req_ids.repeat_interleave(batch.extend_lens), per_frame\n"
            ),
            params=_PARAMS,
            expect=(
                Expect("AC701", 5, 48, "not provably an int"),
                Expect("AC701", 6, 44, "output_size"),
            ),
            note=(
                "Unannotated, but a `grid[:, 0]` index is a tensor's (lists reject it), and "
                "an attribute named as per-row lengths is not a count."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "def expand(x, widths, lens_cpu, device):\n"
                "    reps = x.new_tensor(widths)\n"
                "    x = x.repeat_interleave(reps)\n"
                "    live = torch.minimum(lens_cpu.to(device), torch.ones_like(reps))\n"
                "    return x.repeat_interleave(live)\n"
            ),
            params=_PARAMS,
            expect=(
                Expect("AC701", 5, 29, "output_size"),
                Expect("AC701", 7, 32, "output_size"),
            ),
            note=(
                "`x.new_tensor(...)` builds on `x`'s device; a torch function follows its "
                "operands there, once one is moved off the host."
            ),
        ),
    )

    def validate(self, where: str) -> None:
        if self.argument not in self.signature:
            raise ConfigError(
                f"{where}: `argument` {self.argument!r} is not in `signature` {list(self.signature)}"
            )

    def needles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name.rpartition(".")[2] for name in self.calls))

    def check(self, source, project) -> Iterator:
        tree = source.tree
        if tree is None:
            return
        from ..analysis.int_kinds import HOST, INT, UNKNOWN, IntInference
        from ..analysis.names import source_segment

        targets = set(self.calls)
        method_names = {name.rpartition(".")[2] for name in self.calls} if self.methods else set()
        aliases, modules, calls = _imports_and_calls(tree, source, self.needles(), targets)
        inference: IntInference | None = None
        for node in calls:
            if any(kw.arg == self.keyword for kw in node.keywords):
                continue
            if any(kw.arg is None for kw in node.keywords):
                continue  # `**kwargs` may carry it
            resolved = _resolve(node.func, aliases)
            if resolved in targets:
                params = list(self.signature)
                call_name = resolved
            elif (
                isinstance(node.func, ast.Attribute)
                and node.func.attr in method_names
                and not _is_module(node.func.value, modules)
            ):
                params = list(self.signature)[1:]
                call_name = f"Tensor.{node.func.attr}"
            else:
                continue
            if len(node.args) > len(params) or any(isinstance(a, ast.Starred) for a in node.args):
                continue  # not this function's signature
            argument = _argument(node, params, self.argument)
            if inference is None:
                inference = IntInference(tree, source=source)
            scope = inference.scope_of(node)
            if argument is None:
                if call_name.startswith("Tensor."):
                    continue  # the method without repeats is not a call this rule knows
                anchor = node
                why = (
                    "the single-argument form: the tensor is the repeats, so the device "
                    "syncs to read back their sum"
                )
            else:
                verdict = inference.verdict(argument, scope)
                if verdict in (INT, HOST, UNKNOWN):
                    continue
                source_tensor = (
                    node.func.value
                    if call_name.startswith("Tensor.")
                    else _argument(node, params, params[0])
                )
                if source_tensor is not None and inference.verdict(source_tensor, scope) == HOST:
                    # The repeats' expansion indexes the input: a call that runs has both
                    # on one device, so a host input means host repeats.
                    continue
                anchor = argument
                why = (
                    f"`{self.argument}` (`{source_segment(source, argument, first_line=True)}`) is not provably an "
                    "int, and with tensor repeats the device syncs to read back the output "
                    'length (`torch.cuda.set_sync_debug_mode("error")` raises there)'
                )
            yield self.finding(
                source,
                anchor,
                f"`{call_name}` without `{self.keyword}=`: {why}; pass "
                f"`{self.keyword}=` the total the caller already holds",
                span_node=_enclosing(tree, node),
            )


def _argument(call: ast.Call, params: list[str], name: str) -> ast.AST | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    index = params.index(name) if name in params else -1
    if 0 <= index < len(call.args):
        return call.args[index]
    return None


def _imports_and_calls(
    tree: ast.Module, source=None, needles: tuple[str, ...] = (), targets: set[str] = frozenset()
) -> tuple[dict[str, str], set[str], list[ast.Call]]:
    """Local name -> dotted target for every import in the file; module aliases; and the
    file's calls that can be a configured one, in ``ast.walk`` order (one walk for all
    three: on a 2,000-line buffer each walk is milliseconds of a keystroke's check in the
    language server).

    Walked per top-level statement, level by level, and kept per statement
    (``_LEVELS``): the language server's next tree shares the statements a
    keystroke did not touch, and only the touched one is walked again. Merged
    level by level, the statements' levels are ``ast.walk``'s breadth-first
    order of the whole module, so a name imported twice resolves as before.

    With ``source``, only the statements whose text can hold what is looked for are
    walked: an import (``import``), a call spelled with a configured name's last
    component (``needles``), or a call through a bare name an import binds to a
    configured one (found once the imports are known). A statement spelling none of
    these holds no import and no call the rule asks about: leaving it out takes
    nothing from the result but calls no one looks at, and keeps every other node's
    order (a 100,000-line module in the language server was walked whole for three calls).
    """
    from ..analysis.memo import StatementMemo

    global _LEVELS
    if _LEVELS is None:
        _LEVELS = StatementMemo()
    if source is None:
        return _merged_levels(_LEVELS.each(tree, _levels))
    words = ("import", *needles)
    found = _merged_levels(
        _LEVELS.some(tree, _levels, lambda stmt: any(source.spells(stmt, w) for w in words))
    )
    bare = [local for local, target in found[0].items() if target in targets and local not in words]
    if not bare:
        return found
    words += tuple(bare)
    return _merged_levels(
        _LEVELS.some(tree, _levels, lambda stmt: any(source.spells(stmt, w) for w in words))
    )


def _merged_levels(per_statement: list) -> tuple[dict[str, str], set[str], list[ast.Call]]:
    from ..analysis.imports import bind_import

    aliases: dict[str, str] = {}
    modules: set[str] = set()
    calls: list[ast.Call] = []
    per_statement = [levels for levels in per_statement if levels]
    depth = max((len(levels) for levels in per_statement), default=0)
    for d in range(depth):
        for levels in per_statement:
            if d >= len(levels):
                continue
            found_calls, imports = levels[d]
            calls += found_calls
            for node in imports:
                bind_import(node, aliases, modules)
    return aliases, modules, calls


_LEVELS = None  # a StatementMemo of _levels, made on first use


def _levels(stmt: ast.stmt) -> list[tuple[list[ast.Call], list[ast.stmt]]]:
    """(calls, imports) at each depth under ``stmt``, each in ``ast.walk``'s order."""
    from ..analysis.walk import child_fields

    # Children through the fields that can hold a node (analysis.walk): names,
    # contexts and operators are never pushed, which changes no other node's
    # order and makes the walk 3x faster than iter_child_nodes.
    out = []
    frontier: list[ast.AST] = [stmt]
    call, imported = ast.Call, (ast.Import, ast.ImportFrom)
    while frontier:
        found_calls: list[ast.Call] = []
        imports: list[ast.stmt] = []
        below: list[ast.AST] = []
        extend = below.extend
        for node in frontier:
            kind = type(node)
            if kind is call:
                found_calls.append(node)
            elif kind in imported:
                imports.append(node)
            for name in child_fields(kind):
                value = getattr(node, name, None)
                if type(value) is list:
                    extend(item for item in value if item is not None)
                elif value is not None:
                    below.append(value)
        out.append((found_calls, imports))
        frontier = below
    return out


def _resolve(func: ast.AST, aliases: dict[str, str]) -> str:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return ""
    head = aliases.get(func.id, func.id)
    return ".".join([head, *reversed(parts)])


def _is_module(receiver: ast.AST, modules: set[str]) -> bool:
    """A receiver spelled as an imported name (or a dotted path through one)."""
    while isinstance(receiver, ast.Attribute):
        receiver = receiver.value
    return isinstance(receiver, ast.Name) and receiver.id in modules


def _enclosing(tree: ast.Module, call: ast.Call) -> ast.stmt | None:
    """The call's innermost enclosing statement, where a `# noqa` for it may sit: found in
    the one top-level statement whose lines hold it, each statement's table kept for the
    next tree as ``_imports_and_calls``'s levels are."""
    from bisect import bisect_right

    from ..analysis.memo import StatementMemo

    global _PARENTS
    if _PARENTS is None:
        _PARENTS = StatementMemo()
    body = tree.body
    firsts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in body]
    holders = set()
    i = bisect_right(firsts, call.lineno) - 1
    while i >= 0 and (body[i].end_lineno or body[i].lineno) >= call.lineno:
        holders.add(id(body[i]))  # statements sharing the line (`a(); b()`) all ask
        i -= 1
    for table in _PARENTS.some(tree, _parents_in, lambda stmt: id(stmt) in holders):
        found = table.get(id(call)) if table is not None else None
        if found is not None:
            return found
    return None


_PARENTS = None


def _parents_in(stmt: ast.stmt) -> dict[int, ast.stmt]:
    from ..analysis.walk import child_fields

    # An explicit stack over the fields that can hold a node: no recursion
    # limit on deep code, and no visit of names, contexts and operators.
    out: dict[int, ast.stmt] = {}
    stmt_type, call_type = ast.stmt, ast.Call
    stack: list[tuple[ast.AST, ast.stmt]] = [(stmt, stmt)]
    pop, push = stack.pop, stack.append
    while stack:
        node, here = pop()
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            for child in value if type(value) is list else (value,):
                if child is None:
                    continue
                inner = child if isinstance(child, stmt_type) else here
                if type(child) is call_type:
                    out[id(child)] = inner
                push((child, inner))
    return out
