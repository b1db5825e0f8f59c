"""keyword-only: a named hook takes a named parameter keyword-only, with no default.

The refactor record's case is ``allocate_kv_cache_tensors``. The runner used
to publish one product as ``num_physical_kvcache_blocks`` and let five
backends read it back -- two of them reading ``config.num_kvcache_blocks``
instead, for the same quantity, and sizing runs per subprocess so the answers
differ (48425 / 48339 / 48310 on M3 tp4). The hook now takes a keyword-only
``blocks`` and each builder records ``self.num_blocks = blocks *
self.block_ratio``: the caller must say which count it means, and a default
would let one forget.

The record's guard was an AST test, not a grep: "A source grep would have
asserted on the text of the code it tests; the signature is the invariant".
This kind is that test made general. Every ``def`` of a named function is
checked -- a method of any class, inherited or not, async or not -- because an
override is an implementation of the hook whatever its class says, and the
class hierarchy is not something a static check of one file can see.
Removing GDN's ``blocks`` reddened exactly that implementation's cases; the
finding sits on the parameter (or, when it is missing, on the function's
name) so a diff-filtered CI shows it on the line that changed.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import Bool, StringList

_DEF_PREFIX = re.compile(r"(?:async\s+)?def\s+")

RULES = (
    Rule(
        code="AC101",
        name="keyword-only-parameter",
        what=(
            "Checks every `def` of the named functions (methods of any class included, "
            "async too) for each named parameter, and flags one that is missing, "
            "positional, or keyword-only with a default."
        ),
        why=(
            "When a count can be read from several places that disagree, the hook that "
            "receives it must make its caller say which one it passes. A keyword-only "
            "parameter with no default does: a positional one can be passed in the wrong "
            "slot, a default can be forgotten, and `**kwargs` accepts a misspelling "
            "silently."
        ),
        fix_safety=(
            "This rule offers no fix: changing a signature changes every call site, and "
            "which callers pass the argument positionally is not visible from the `def`."
        ),
    ),
)

_PARAMS = {"functions": ["allocate_kv_cache_tensors"], "parameters": ["blocks"]}


class KeywordOnly(Contract):
    KIND = "keyword-only"
    RULES = RULES

    functions = StringList(
        doc=(
            "Names of the functions whose every definition is checked. A bare name "
            "(`allocate_kv_cache_tensors`) matches a function or method of any class; "
            "`Class.method` matches only methods defined in a class of that name."
        )
    )
    parameters = StringList(
        doc="Parameters each of those functions must take keyword-only (after `*`)."
    )
    allow_default = Bool(
        default=False,
        doc=(
            "Accept a default on the keyword-only parameter. Off by default: a default "
            "is how a caller forgets to say which count it means."
        ),
    )

    VALID = (
        Example(
            source=(
                "class MlaBuilder(AttentionBuilder):\n"
                "    def allocate_kv_cache_tensors(self, *, blocks):\n"
                "        self.num_blocks = blocks * self.block_ratio\n"
            ),
            params=_PARAMS,
            note="A method taking `blocks` after `*`, with no default.",
        ),
        Example(
            source=(
                "async def allocate_kv_cache_tensors(pool, *args, blocks, dev=None):\n"
                "    return await pool.carve(blocks, dev)\n"
            ),
            params=_PARAMS,
            note="After `*args` is keyword-only too; other parameters may have defaults.",
        ),
        Example(
            source=(
                "def carve(blocks):\n"
                "    return blocks\n"
                "\n"
                "builder.allocate_kv_cache_tensors(blocks=carve(8))\n"
            ),
            params=_PARAMS,
            note="Other functions and call sites are not definitions of the hook.",
        ),
        Example(
            source=(
                "class Gdn:\n"
                "    def allocate_kv_cache_tensors(self, blocks):\n"
                "        return blocks\n"
                "\n"
                "class Mla:\n"
                "    def allocate_kv_cache_tensors(self, *, blocks):\n"
                "        return blocks\n"
            ),
            params={
                "functions": ["Mla.allocate_kv_cache_tensors"],
                "parameters": ["blocks"],
            },
            note="A qualified name checks only the methods of that class.",
        ),
        Example(
            source="def allocate_kv_cache_tensors(self, *, blocks=None):\n    pass\n",
            params={**_PARAMS, "allow-default": True},
            note="`allow-default` accepts a defaulted keyword-only parameter.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "class GdnBuilder(AttentionBuilder):\n"
                "    def allocate_kv_cache_tensors(self, blocks):\n"
                "        self.num_blocks = blocks * self.block_ratio\n"
            ),
            params=_PARAMS,
            expect=(Expect("AC101", 2, 41, "positional"),),
            note="Positional: anchored on the parameter.",
        ),
        Example(
            source=(
                "class Indexer(MlaBuilder):\n"
                "    def allocate_kv_cache_tensors(self, *, blocks=0):\n"
                "        return blocks\n"
            ),
            params=_PARAMS,
            expect=(Expect("AC101", 2, 44, "default"),),
            note="A default on the keyword-only parameter, in an inherited override.",
        ),
        Example(
            source=(
                "class Draft:\n"
                "    async def allocate_kv_cache_tensors(self, **kwargs):\n"
                "        return kwargs['blocks']\n"
            ),
            params=_PARAMS,
            expect=(Expect("AC101", 2, 15, "missing `blocks` (`**kwargs` does not count)"),),
            note="Missing (`**kwargs` does not count): anchored on the function's name.",
        ),
        Example(
            source=("class Draft:\n    def \\\nallocate_kv_cache_tensors(self):\n        pass\n"),
            params=_PARAMS,
            expect=(Expect("AC101", 2, 5, "missing `blocks`; it must"),),
            note="A `def` split from its name by a backslash: anchored on the `def`.",
        ),
        Example(
            source=(
                "def allocate_kv_cache_tensors(\n"
                "    self,\n"
                "    blocks,\n"
                "    /,\n"
                "    *rows,\n"
                "    dev,\n"
                "):\n"
                "    pass\n"
            ),
            params={"functions": ["allocate_kv_cache_tensors"], "parameters": ["blocks", "dev"]},
            expect=(Expect("AC101", 3, 5, "positional"),),
            note="Positional-only counts as positional; `dev` after `*rows` is keyword-only.",
        ),
        Example(
            source=(
                "def allocate_kv_cache_tensors(*blocks):\n"
                "    pass\n"
                "\n"
                "class Builder:\n"
                "    def build(self):\n"
                "        def allocate_kv_cache_tensors(blocks=8):\n"
                "            pass\n"
            ),
            params=_PARAMS,
            expect=(
                Expect("AC101", 1, 32, "takes `blocks` positionally (as `*blocks`)"),
                Expect("AC101", 6, 39, "takes `blocks` positionally; it must"),
            ),
            note="`*blocks` is variadic positional; a nested definition is a definition too.",
        ),
    )

    def needles(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(name.rpartition(".")[2] for name in self.functions))

    def check(self, source, project) -> Iterator:
        tree = source.tree
        if tree is None:
            return
        bare = {name for name in self.functions if "." not in name}
        qualified = {tuple(name.rsplit(".", 1)) for name in self.functions if "." in name}
        for node, owner in _definitions(tree, None):
            if node.name in bare or (owner, node.name) in qualified:
                yield from self._check_def(source, node)

    def _check_def(self, source, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator:
        args = node.args
        span = _signature_span(node)
        kwonly = dict(zip((a.arg for a in args.kwonlyargs), args.kw_defaults, strict=True))
        positional = {a.arg: a for a in [*args.posonlyargs, *args.args]}
        if args.vararg is not None:
            positional.setdefault(args.vararg.arg, args.vararg)
        for name in self.parameters:
            if name in kwonly:
                default = kwonly[name]
                if default is not None and not self.allow_default:
                    arg = next(a for a in args.kwonlyargs if a.arg == name)
                    yield self.finding(
                        source,
                        arg,
                        f"`{node.name}` gives keyword-only `{name}` a default "
                        f"(`{source.segment(default)}`); it must have none, so every caller "
                        "states it",
                        span_node=span,
                    )
            elif name in positional:
                arg = positional[name]
                how = f"positionally (as `*{name}`)" if arg is args.vararg else "positionally"
                yield self.finding(
                    source,
                    arg,
                    f"`{node.name}` takes `{name}` {how}; it must be keyword-only "
                    "(after `*`), so a caller cannot pass it in the wrong slot",
                    span_node=span,
                )
            else:
                kwargs = f" (`**{args.kwarg.arg}` does not count)" if args.kwarg else ""
                yield self.finding(
                    source,
                    _name_span(source, node),
                    f"`{node.name}` is missing `{name}`{kwargs}; it must take "
                    f"`{name}` keyword-only with no default",
                    span_node=span,
                )


def _definitions(
    node: ast.AST, owner: str | None
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """Every def in the tree, with the name of the class it is a method of (if any)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child, owner
            yield from _definitions(child, None)
        elif isinstance(child, ast.ClassDef):
            yield from _definitions(child, child.name)
        elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
            # An except handler and a match case hold statements without being ones.
            yield from _definitions(child, owner)


def _signature_span(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int, int, int]:
    """Lines from `def` to the line before the body: where a suppression comment for it may sit.

    Not the whole def: a suppression deep in the body must not silence the signature.
    """
    first_body = node.body[0].lineno
    end = max(node.lineno, first_body - 1) if first_body > node.lineno else node.lineno
    return (node.lineno, 1, end, 1)


def _name_span(source, node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int, int, int]:
    """The function's name, located after `def` on its line (the def node starts at `def`)."""
    line = node.lineno
    col = source.char_column(line, node.col_offset)
    text = source.lines[line - 1] if line <= len(source.lines) else ""
    match = _DEF_PREFIX.match(text, col)
    if match is None or not text.startswith(node.name, match.end()):
        return (line, col + 1, line, col + 1)  # a `def` split by a backslash: the def
    start = match.end() + 1
    return (line, start, line, start + len(node.name))
