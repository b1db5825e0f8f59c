"""units: quantities of different declared units mixed without a declared conversion.

ROCm/ATOM's KV-pool refactor: "The units are the point, and they are kept
apart even where they are the same number: ``blocks``, a pool entry and
``req.block_ids`` are the scheduler's; ``num_blocks`` is the backend's.
Conversions are written out; none is elided because a ratio happens to be
1." Three of its bugs were units mixed: sizing charged ``sparse_layers *
backend_page * dim`` while the allocation was ``blocks * block_ratio`` pages
deep (undercharged by ``block_ratio``); ``get_kv_transfer_tensors`` multiplied
by ``block_ratio`` where ``stride(0)`` was already per block; and
``_local_draft_rows`` took ``pool rows - this stage's layer span``, mixing
MLA rows with every layer, and went negative. Each is an ``int`` minus or
times an ``int``, which no type checker separates.

The project declares a vocabulary: name globs and the unit each means
(``blocks``, ``*_blocks`` and ``block_ids`` a scheduler block; ``num_blocks``
a backend page; ``*_tokens`` a token; ``*_bytes`` a byte; ``rows`` a pool
row). A unit is a product of base units over another (``byte/block``,
``token/page``); ``1`` is a declared plain number. A name whose unit is a
ratio *is* a conversion: ``x * block_ratio`` turns scheduler blocks
(``page/block``) into backend pages, ``x * block_size`` pages into tokens,
``x // block_size`` back. Units multiply and divide as in physics; bases
declared ``counts`` (layers, heads) scale a quantity without changing its
unit -- ten layers of a 64-byte row are 640 bytes -- but are a unit of their
own when added, subtracted or compared, so rows minus layers is a mix.

What flows, within a function: a name, an attribute (``self.num_blocks``,
``req.block_ids``) and a parameter have the unit their *own* name declares
(the last component: a declaration is the contract, so a declared name keeps
its unit whatever is assigned to it); a call's result has the unit of its
function's name only when the vocabulary names it exactly (``entry_bytes()``:
a glob reads a function name's object, not its result, as in
``get_block_ids_for_computed_tokens()``); an undeclared local has the unit of
what was last assigned to it; a number is a plain scalar that goes with
anything (``blocks + 1``, ``rows * 2``), and so is a product whose units
cancel (bytes over bytes); an unknown added to anything is unknown; two
counts multiplied are unknown (one is per the other -- ``num_reqs *
num_bonus_tokens`` are tokens -- which the names do not say), and
so is a ceiling division by a number (``cdiv(n, 256)``, ``(n + 255) // 256``
count chunks);
``int()``, ``round()``, ``abs()``, ``math.ceil``/``floor``, unary minus, ``%``
and a slice of a container (``block_ids[:n]``) keep their operand's unit (one
element of a container is unknown: an id, a count, or what a buffer named for its
pages holds);
``max``/``min`` and ``a if c else b`` want their operands in one unit, where
a rate and a count of its numerator are one unit (a block's size in tokens is
one block's worth of tokens: ``num_tokens > block_size`` compares tokens) but
two rates over different denominators are not (bytes per page, bytes per
block); ``cdiv(a, b)`` divides. Across the project's functions: an argument
passed to a parameter has to be in the parameter's unit -- declared by the
parameter's name, or inferred from the name the callee binds it to unchanged
(``self.num_blocks = n``); a call that declares nothing has the unit every
``return`` of the callee agrees on, evaluated under this vocabulary
(``checkers.analysis.functions``' unit forms).

What is a finding (only ever with two known units): adding, subtracting,
comparing, ``max``/``min``-ing or assigning two different units (AC801),
including returning from a function whose name declares a unit and ``+=``;
passing one unit where a parameter declares or binds another (AC802); and a
conversion written as its value -- ``blocks * 1`` where a declared ratio
converts between the two units (AC803), the record's "none elided because a
ratio happens to be 1". A name the vocabulary does not cover, an
unannotated product with one, a value from a container or a third-party call
is unknown, and unknown is silent. What does not flow: a value through a
container, an attribute of ``self`` assigned elsewhere under an undeclared
name, module-level code and class bodies (only function bodies are read),
and a local across a nested function.

A vocabulary holds one meaning per name; where a name means two units in
two parts of the tree (``num_blocks``: backend pages in the backends,
scheduler blocks in a transfer registry), declare two contracts with their
``paths``. Findings depend on other files (a callee's parameters and
returns), so they are not ``CACHEABLE``; a run over some files re-checks
the functions that call into an edited module.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, StringList, StringMap

RULES = (
    Rule(
        code="AC801",
        name="unit-mix",
        what=(
            "Flags adding, subtracting, comparing, `max`/`min`-ing, assigning or returning two "
            "quantities whose declared units differ (scheduler blocks and backend pages, rows "
            "and layers, bytes per page and bytes per block) with no conversion between them."
        ),
        why=(
            "Two counts in different units are the same Python int, so nothing fails: the "
            "pool is undercharged by `block_ratio`, a row count goes negative, a transfer "
            "registers the wrong stride. ROCm/ATOM's refactor found three such bugs, each "
            "invisible while the ratio between the units happened to be 1."
        ),
    ),
    Rule(
        code="AC802",
        name="unit-argument",
        what=(
            "Flags an argument whose declared unit differs from the unit of the parameter it "
            "is passed to -- the parameter's own declared name, or the name the callee binds "
            "it to unchanged -- through keywords and through positions resolved in the project."
        ),
        why=(
            "A call is an assignment across a file boundary: `allocate(blocks=num_blocks)` "
            "hands pages to a parameter that counts scheduler blocks, and the callee sizes "
            "everything off it."
        ),
    ),
    Rule(
        code="AC803",
        name="conversion-as-value",
        what=(
            "Flags a conversion written as the ratio's value (`blocks * 1`, `pages // 1`) "
            "where a declared ratio converts between the two units."
        ),
        why=(
            '"Conversions are written out; none is elided because a ratio happens to be 1." '
            "A literal ratio is right for today's configurations and silently wrong for the "
            "first one where the ratio is not 1."
        ),
    ),
)

_VOCABULARY = {
    "blocks": "block",
    "*_blocks": "block",
    "block_ids": "block",
    "num_blocks": "page",
    "*_tokens": "token",
    "*_bytes": "byte",
    "*_token_bytes": "byte/token",
    "entry_bytes": "byte/block",
    "rows": "row",
    "*_rows": "row",
    "*_layers": "layer",
    "block_ratio": "page/block",
    "block_size": "token/page",
    "scheduler_block_size": "token/block",
}
_PARAMS = {"names": _VOCABULARY, "counts": ["layer"]}


class Units(Contract):
    KIND = "units"
    RULES = RULES
    CACHEABLE = False  # a callee's parameters and returns are in other files
    IMPORT_SUMMARIES = False  # its own summaries (checkers.analysis.program) carry the calls

    names = StringMap(
        doc=(
            'Name globs and the unit each means: `blocks = "block"`, `"*_tokens" = '
            '"token"`, `block_ratio = "page/block"` (a ratio is a conversion). Matched '
            "against a variable's, attribute's, parameter's or function's own name; an exact "
            "name wins over a glob, a longer glob over a shorter. A unit is base names joined "
            "by `*`, over at most one `/`; `1` is a declared plain number."
        )
    )
    counts = StringList(
        default=(),
        doc=(
            "Base units that count things (`layer`, `head`): they scale a quantity without "
            "changing its unit when multiplied, and stay a unit of their own when added, "
            "subtracted or compared."
        ),
    )

    VALID = (
        Example(
            source=(
                "class IndexerBuilder:\n"
                "    def entry_bytes(self):\n"
                "        # per scheduler block: a block holds block_ratio backend pages\n"
                "        return (\n"
                "            self.index_layers * self.block_size * self.block_ratio\n"
                "            * self.index_token_bytes\n"
                "        )\n"
                "\n"
                "    def allocate(self, *, blocks):\n"
                "        self.num_blocks = blocks * self.block_ratio\n"
                "        return self.num_blocks * self.block_size\n"
            ),
            params=_PARAMS,
            path="atom/backends/indexer.py",
            note=(
                "The refactor's fix: the field is priced per scheduler block, so the charge "
                "converts pages to blocks where the allocation converts blocks to pages."
            ),
        ),
        Example(
            source=(
                "def draft_rows(pool, rows):\n"
                "    local_rows = rows - len(pool.target_modules)\n"
                "    return max(local_rows, 0) + 1\n"
            ),
            params=_PARAMS,
            path="atom/spec_decode/draft.py",
            note="Rows minus a count of no declared unit is unknown, and unknown is silent.",
        ),
    )
    INVALID = (
        Example(
            source=(
                "class IndexerBuilder:\n"
                "    def entry_bytes(self):\n"
                "        return self.index_layers * self.block_size * self.index_token_bytes\n"
                "\n"
                "    def allocate(self, *, blocks):\n"
                "        self.num_blocks = blocks * self.block_ratio\n"
                "        return self.num_blocks * self.block_size\n"
            ),
            params=_PARAMS,
            path="atom/backends/indexer.py",
            expect=(Expect("AC801", 3, 16, "byte/page"),),
            note=(
                "The record's sizing bug: the charge per entry is a backend page's bytes while "
                "the allocation is `blocks * block_ratio` pages deep."
            ),
        ),
        Example(
            source=(
                "def _local_draft_rows(rows, start_layer, end_layer):\n"
                "    stage_layers = end_layer - start_layer\n"
                "    return rows - stage_layers\n"
            ),
            params={**_PARAMS, "names": {**_VOCABULARY, "*_layer": "layer"}},
            path="atom/spec_decode/draft.py",
            expect=(Expect("AC801", 3, 12, "layer"),),
            note="The record's `_local_draft_rows`: pool rows minus a span of every layer.",
        ),
        Example(
            source=(
                "def get_kv_transfer_tensors(pool, block_ratio):\n"
                "    regions = []\n"
                "    for t in pool.region_tensors():\n"
                "        per_block = pool.entry_bytes()\n"
                "        regions.append(Region(t.data_ptr(), entry_bytes=per_block * block_ratio))\n"
                "    return regions\n"
            ),
            params=_PARAMS,
            path="atom/backends/transfer.py",
            expect=(Expect("AC802", 5, 57, "byte*page/block^2"),),
            note=(
                "The record's transfer bug: a region's unit is already a scheduler block's "
                "bytes, and `* block_ratio` converts again."
            ),
        ),
        Example(
            source=(
                "def allocate(*, blocks, block_ratio):\n"
                "    num_blocks = blocks * 1\n"
                "    return num_blocks\n"
            ),
            params=_PARAMS,
            path="atom/backends/flat.py",
            expect=(Expect("AC803", 2, 18, "`block_ratio`"),),
            note="A conversion elided because the ratio is 1 in every shipped configuration.",
        ),
    )

    def __init__(self, id: str, **params) -> None:
        super().__init__(id, **params)
        self._vocab: _Vocabulary | None = None

    def validate(self, where: str) -> None:
        bases: set[str] = set()
        for name, unit in self.names.items():
            if not re.fullmatch(r"[A-Za-z_*?][A-Za-z0-9_*?]*", name):
                raise ConfigError(
                    f"{where}: `names` key {name!r} is not a name glob (letters, digits, `_`, "
                    "`*`, `?`)"
                )
            try:
                bases.update(b for b, _ in parse_unit(unit))
            except ValueError as exc:
                raise ConfigError(f"{where}: `names.{name}`: {exc}") from None
        for count in self.counts:
            if count not in bases:
                raise ConfigError(
                    f"{where}: `counts` names {count!r}, which no unit in `names` uses"
                )

    @property
    def vocabulary(self) -> _Vocabulary:
        if self._vocab is None:
            self._vocab = _Vocabulary(self.names, self.counts)
        return self._vocab

    def needles(self) -> tuple[str, ...]:
        from .reachable_calls import _needle

        found = [_needle(name) if "*" in name or "?" in name else name for name in self.names]
        return () if any(n is None for n in found) else tuple(dict.fromkeys(found))

    # -- checking ------------------------------------------------------------

    def check(self, source, project) -> Iterator:
        from ..analysis.imports import lines_mentioning
        from ..analysis.program import program_of
        from .published_keys import _spans

        program = program_of(project)
        module = program.module_of_source(source)
        if module is None or module.outliner is None:
            return
        needles = self.needles()
        lines = lines_mentioning(source.text, needles) if needles else None
        for index, outline in enumerate(module.outlines):
            if lines is not None and not _spans(lines, outline):
                continue
            walker = _Walker(self, source, program, module, outline, module.outliner.node(index))
            walker.needle_lines = frozenset(lines) if lines is not None else None
            walker.run()
            yield from walker.findings

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """Every line of each function of ``path`` that calls into an edited module: an edit
        there changes a parameter's unit or a return's, and the finding may sit anywhere the
        value goes in the caller. A file whose text spells no edited module's name cannot
        import one, and is not parsed."""
        from ..analysis.functions import C_SPELLING, D_CALLS, O_END, O_LINE, O_QUAL
        from ..analysis.program import program_of

        name = project.module_name(path)
        if not name or name in edited:
            return {}
        if not program_of(project).may_import(path, edited):
            return {}
        program = program_of(project)
        module = program.module(name, details=True)
        if module is None:
            return {}
        lines: dict[int, tuple[str, ...]] = {}
        for outline in module.outlines:
            detail = module.detail(outline[O_QUAL])
            if detail is None:
                continue
            causes = []
            for call in detail[D_CALLS]:
                target = program.resolve_call(module, outline, call[C_SPELLING])
                if target is not None and target[0] in edited:
                    causes.append(edited[target[0]])
            if causes:
                for line in range(outline[O_LINE], outline[O_END] + 1):
                    lines[line] = tuple(dict.fromkeys(causes))
        return lines


# -- units ---------------------------------------------------------------------

SCALAR = "scalar"  # a number written in the code: goes with any unit, scales by nothing


def parse_unit(text: str) -> tuple[tuple[str, int], ...]:
    """``"byte/block"`` -> ``(("block", -1), ("byte", 1))``; ``"1"`` -> ``()``."""
    text = text.strip()
    if text == "1":
        return ()
    top, slash, bottom = text.partition("/")
    if "/" in bottom:
        raise ValueError(f"{text!r} has more than one `/`")
    exps: dict[str, int] = {}
    for part, sign in ((top, 1), (bottom, -1)) if slash else ((top, 1),):
        names = [p.strip() for p in part.split("*")]
        if part.strip() == "1" and sign == 1 and slash:
            continue
        for n in names:
            if not n.isidentifier():
                raise ValueError(
                    f"{text!r} is not a unit: base names (identifiers) joined by `*`, "
                    "over at most one `/`, or `1`"
                )
            exps[n] = exps.get(n, 0) + sign
    return tuple(sorted((b, e) for b, e in exps.items() if e))


def fmt(unit) -> str:
    if unit == ():
        return "1"
    top = [b if e == 1 else f"{b}^{e}" for b, e in unit if e > 0]
    bottom = [b if e == -1 else f"{b}^{-e}" for b, e in unit if e < 0]
    text = "*".join(top) or "1"
    return f"{text}/{'*'.join(bottom)}" if bottom else text


_COUNTING = ("num_", "n_", "total_", "max_", "min_")
# A name that is a phrase (`bytes_for_tokens`, `tokens_per_page`) is not read by its last word.
_PHRASE = re.compile(r"_(?:for|per|of|to|from|in|by)_")


class _Vocabulary:
    """Names to units, with the algebra the declaration's counts imply."""

    def __init__(self, names: dict[str, str], counts) -> None:
        self.exact: dict[str, tuple] = {}
        globs = []
        for name, unit in names.items():
            parsed = parse_unit(unit)
            if "*" in name or "?" in name:
                literal = len(name.replace("*", "").replace("?", ""))
                regex = re.compile(
                    "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in name)
                )
                # `*_bytes`: the literal tail after the last `*`, for `_per_own_word`
                suffix = name.rpartition("*")[2] if name.startswith("*") and "?" not in name else ""
                globs.append((literal, regex, parsed, suffix))
            else:
                self.exact[name] = parsed
        globs.sort(key=lambda g: -g[0])
        self.globs = globs
        self.bases = frozenset(
            b for u in (*self.exact.values(), *(g[2] for g in globs)) for b, _ in u
        )
        self.counts = frozenset(counts)
        self._memo: dict[str, tuple | None] = {}

    def of(self, name: str):
        found = self._memo.get(name, False)
        if found is not False:
            return found
        found = self.exact.get(name)
        if found is None and not _PHRASE.search(name):
            for _literal, regex, unit, suffix in self.globs:
                if regex.fullmatch(name):
                    found = self._per_own_word(name, suffix, unit)
                    break
        self._memo[name] = found
        return found

    def _per_own_word(self, name: str, suffix: str, unit):
        """``row_bytes`` under ``*_bytes``: when the word before the glob's suffix names a base
        unit (``row``), the name is per one of it -- a row's bytes are byte/row."""
        if not suffix or not name.endswith(suffix):
            return unit
        stem = name[: -len(suffix)].rstrip("_")
        if stem.startswith(_COUNTING) or stem in ("num", "n", "total", "max", "min"):
            return unit  # `num_token_blocks` counts blocks; it is not per token
        word = stem.rpartition("_")[2]
        if word in self.bases and all(b != word for b, _ in unit):
            return self.mul(unit, ((word, 1),), -1)
        return unit

    def is_count(self, unit) -> bool:
        return bool(unit) and all(b in self.counts for b, _ in unit)

    def mul(self, a, b, sign: int = 1):
        if a is None or b is None:
            return None
        if b is SCALAR:
            return a
        if a is SCALAR:
            return b if sign == 1 else tuple((n, -e) for n, e in b)
        if self.is_count(b) and not self.is_count(a):
            return a
        if self.is_count(a) and not self.is_count(b):
            return b if sign == 1 else tuple((n, -e) for n, e in b)
        if sign == 1 and a and b and _plain(a) and _plain(b):
            # Two counts multiplied: one of them is per the other (`num_reqs *
            # num_bonus_tokens` are tokens, `num_tokens * num_draft_tokens` too), which the
            # names do not say.
            return None
        exps = dict(a)
        for n, e in b:
            exps[n] = exps.get(n, 0) + sign * e
        found = tuple(sorted((n, e) for n, e in exps.items() if e))
        # Units that cancel leave a plain number (bytes over bytes a block counts blocks of
        # some size): it goes with anything, as a number written in the code does.
        return found if found else SCALAR

    def conversions(self, frm, to) -> list[tuple[str, str]]:
        """Declared ratio names that turn ``frm`` into ``to``: ``(name, "*" or "/")``."""
        out = []
        for name, unit in self.exact.items():
            if not any(e < 0 for _, e in unit) or not any(e > 0 for _, e in unit):
                continue  # a conversion is a ratio of two units
            if self.mul(frm, unit) == to:
                out.append((name, "*"))
            elif self.mul(frm, unit, -1) == to:
                out.append((name, "/"))
        return out


def real(unit) -> bool:
    return unit is not None and unit is not SCALAR


def _sum(a, b):
    """The unit of ``a + b`` once they are checked: a number beside a unit takes the unit;
    an unknown beside anything is unknown (it might be the other unit, or another)."""
    if a is None or b is None:
        return None
    if a is SCALAR:
        return b
    return a


def compatible(a, b) -> bool:
    """Whether two known units may be added, compared or assigned.

    Equal units may; so may a rate and a count of its numerator -- a block's
    size in tokens (``token/block``) is also one block's worth of tokens, so
    ``num_tokens > block_size`` and ``step = block_tokens`` compare tokens
    with tokens. Two rates over different denominators may not: bytes per page
    are not bytes per block.
    """
    if a == b:
        return True
    a_rate, b_rate = any(e < 0 for _, e in a), any(e < 0 for _, e in b)
    if a_rate == b_rate:
        return False
    rate, count = (a, b) if a_rate else (b, a)
    return tuple(p for p in rate if p[1] > 0) == count


class _Deferred:
    """A call whose own name declares no unit: its callee's returns answer, when asked."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node


_KEEPS = frozenset({"int", "round", "abs", "float", "math.ceil", "math.floor", "math.trunc"})
_COMPARE = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


class _Walker:
    """One function's statements in order: each expression's unit, and every mix of two."""

    def __init__(self, rule: Units, source, program, module, outline, node) -> None:
        from ..analysis.functions import O_PARAMS, O_QUAL, O_SELF

        self.rule = rule
        self.vocab = rule.vocabulary
        self.source = source
        self.program = program
        self.module = module
        self.outline = outline
        self.node = node
        self.qual = outline[O_QUAL]
        self.self_name = outline[O_SELF]
        self.params = {p.lstrip("*") for p in outline[O_PARAMS]}
        self.env: dict[str, object] = {}
        self.findings: list = []
        self.stmt: ast.stmt | None = None
        self.needle_lines: frozenset[int] | None = None
        self._flagged: set[int] = set()

    def run(self) -> None:
        args = self.node.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            self.params.add(a.arg)
        self.block(self.node.body)

    # -- statements ----------------------------------------------------------

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.statement(stmt)

    def statement(self, stmt) -> None:
        kind = type(stmt)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            return  # a function of its own (its outline is walked on its own)
        if not self._worth(stmt, kind):
            # No declared name on its lines and no local of a known unit: nothing in it can
            # mix two units. What it binds forgets its old unit; its blocks are read as usual.
            for target in _bound_here(stmt, kind):
                for name in _names_bound(target):
                    self.env.pop(name, None)
            for field in ("body", "orelse", "finalbody"):
                self.block(getattr(stmt, field, ()))
            for handler in getattr(stmt, "handlers", ()):
                self.block(handler.body)
            for case in getattr(stmt, "cases", ()):
                self.block(case.body)
            return
        outer, self.stmt = self.stmt, stmt
        try:
            self._statement(stmt, kind)
        finally:
            self.stmt = outer

    def _worth(self, stmt, kind) -> bool:
        """Whether a statement's own lines (a compound statement's header) can hold a mix:
        they spell a declared name, or a local whose unit is known."""
        if self.needle_lines is None:
            return True
        first = stmt.lineno
        last = _header_end(stmt, kind)
        if any(line in self.needle_lines for line in range(first, last + 1)):
            return True
        known = [name for name, unit in self.env.items() if unit is not None]
        if not known:
            return False
        text = "".join(self.source.lines[first - 1 : last])
        return any(name in text for name in known)

    def _statement(self, stmt, kind) -> None:
        if kind is ast.Assign:
            value = self.eval(stmt.value)
            for target in stmt.targets:
                self.assign(target, value, stmt.value)
        elif kind is ast.AnnAssign:
            if stmt.value is not None:
                self.assign(stmt.target, self.eval(stmt.value), stmt.value)
        elif kind is ast.AugAssign:
            value = self.eval(stmt.value)
            current = self.eval(stmt.target, load=True)
            op = type(stmt.op)
            if op in (ast.Add, ast.Sub):
                verb = "adds" if op is ast.Add else "subtracts"
                self.mix(current, value, stmt.target, stmt.value, stmt.value, verb, augmented=True)
                result = _sum(self.known(current), self.known(value))
            elif op is ast.Mult:
                result = self.vocab.mul(self.known(current), self.known(value))
            elif op in (ast.Div, ast.FloorDiv):
                result = self.vocab.mul(self.known(current), self.known(value), -1)
            else:
                result = None
            if type(stmt.target) is ast.Name and self.vocab.of(stmt.target.id) is None:
                self.env[stmt.target.id] = result
        elif kind is ast.Return:
            if stmt.value is not None:
                value = self.eval(stmt.value)
                declared = self.vocab.of(self.qual.rpartition(".")[2])
                if real(declared):
                    self.check_into(
                        declared, value, stmt.value, "returns", f"`{self.qual}`", code="AC801"
                    )
        elif kind in (ast.For, ast.AsyncFor):
            self.eval(stmt.iter)
            for name in _names_bound(stmt.target):
                self.env.pop(name, None)
            self.block(stmt.body)
            self.block(stmt.orelse)
        else:
            for field in ("test", "value", "subject", "exc", "cause", "msg"):
                child = getattr(stmt, field, None)
                if isinstance(child, ast.expr):
                    self.eval(child)
            for item in getattr(stmt, "items", ()):
                self.eval(item.context_expr)
            for field in ("body", "orelse", "finalbody"):
                self.block(getattr(stmt, field, ()))
            for handler in getattr(stmt, "handlers", ()):
                self.block(handler.body)
            for case in getattr(stmt, "cases", ()):
                if case.guard is not None:
                    self.eval(case.guard)
                self.block(case.body)

    def assign(self, target, value, value_node) -> None:
        kind = type(target)
        if kind is ast.Name:
            declared = self.vocab.of(target.id)
            if real(declared):
                self.check_into(declared, value, value_node, "assigns", f"`{target.id}`")
            else:
                self.env[target.id] = value
        elif kind is ast.Attribute:
            self.eval(target.value)
            declared = self.vocab.of(target.attr)
            if real(declared):
                self.check_into(declared, value, value_node, "assigns", f"`{target.attr}`")
        elif kind in (ast.Tuple, ast.List):
            for elt in target.elts:
                for name in _names_bound(elt):
                    self.env.pop(name, None)
        elif kind is ast.Subscript:
            self.eval(target.value)
            self.eval(target.slice)

    # -- expressions -----------------------------------------------------------

    def eval(self, node, *, load: bool = False):
        """The unit of an expression (None unknown, ``SCALAR`` a number), checking inside."""
        kind = type(node)
        vocab = self.vocab
        if kind is ast.Constant:
            value = node.value
            return (
                SCALAR if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            )
        if kind is ast.Name:
            declared = vocab.of(node.id)
            if declared is not None:
                return declared
            return self.env.get(node.id)
        if kind is ast.Attribute:
            inner = node.value
            if type(inner) not in (ast.Name, ast.Attribute):
                self.eval(inner)
            return vocab.of(node.attr)
        if kind is ast.BinOp:
            left, right = self.eval(node.left), self.eval(node.right)
            op = type(node.op)
            if op in (ast.Add, ast.Sub):
                verb = "adds" if op is ast.Add else "subtracts"
                self.mix(left, right, node.left, node.right, node, verb)
                return _sum(self.known(left), self.known(right))
            if op is ast.Mult:
                return vocab.mul(self.known(left), self.known(right))
            if op in (ast.Div, ast.FloorDiv):
                if op is ast.FloorDiv and right is SCALAR and _ceiling(node):
                    return None  # `(n + 255) // 256` counts chunks, as `cdiv` does
                return vocab.mul(self.known(left), self.known(right), -1)
            if op is ast.Mod:
                return self.known(left)
            return None
        if kind is ast.UnaryOp:
            operand = self.eval(node.operand)
            return operand if type(node.op) in (ast.USub, ast.UAdd) else None
        if kind is ast.Compare:
            units = [self.eval(node.left), *(self.eval(c) for c in node.comparators)]
            nodes = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if type(op) in _COMPARE:
                    self.mix(units[i], units[i + 1], nodes[i], nodes[i + 1], node, "compares")
            return None
        if kind is ast.Call:
            return self.call(node)
        if kind is ast.IfExp:
            self.eval(node.test)
            a, b = self.eval(node.body), self.eval(node.orelse)
            self.mix(a, b, node.body, node.orelse, node, "chooses between")
            a, b = self.known(a), self.known(b)
            return a if real(a) else b
        if kind is ast.Subscript:
            self.eval(node.slice)
            container = self.known(self.eval(node.value))
            # A slice of a quantity is the same quantity; one element of a container may be
            # anything (an id, a count, the bytes a buffer named for its pages holds).
            return container if type(node.slice) is ast.Slice else None
        if kind is ast.Starred:
            return self.eval(node.value)
        if kind is ast.Lambda:
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child)
            elif isinstance(child, ast.comprehension):
                self.eval(child.iter)
                for cond in child.ifs:
                    self.eval(cond)
        return None

    def call(self, node: ast.Call):
        func = node.func
        if type(func) is ast.Attribute and type(func.value) not in (ast.Name, ast.Attribute):
            self.eval(func.value)
        args = [self.eval(a) for a in node.args]
        keywords = [(kw.arg, self.eval(kw.value), kw.value) for kw in node.keywords]
        spelling = self.spelling(func)
        last = spelling.rpartition(".")[2]
        # keyword arguments name the parameter they fill: no callee needed
        for name, unit, value_node in keywords:
            if name is None:
                continue
            declared = self.vocab.of(name)
            if real(declared):
                self.check_into(
                    declared, unit, value_node, "passes", f"`{name}` of `{last}`", code="AC802"
                )
        if any(real(a) for a in args):
            # Only an argument of known unit asks for the callee's parameters: a call's
            # result of no declared unit would need the callee's callee too.
            self.positional(node, spelling, args)
        if spelling in _KEEPS and len(args) == 1:
            return args[0]
        if spelling in ("max", "min") and len(args) >= 2 and not node.keywords:
            for i in range(1, len(args)):
                self.mix(
                    args[0], args[i], node.args[0], node.args[i], node, f"takes the {spelling} of"
                )
            known = [self.known(a) for a in args]
            return next((a for a in known if real(a)), None)
        if last in ("cdiv", "ceil_div", "div_up", "round_up_div") and len(args) == 2:
            divisor = self.known(args[1])
            if divisor is SCALAR:
                return None  # `cdiv(n, 256)` counts 256-wide chunks of n, not n's units
            return self.vocab.mul(self.known(args[0]), divisor, -1)
        # A function's name declares its result only when the vocabulary names it exactly
        # (`entry_bytes()`): a glob reads a function name's object, not its result
        # (`get_block_ids_for_computed_tokens()` returns block ids), so those are inferred.
        declared = self.vocab.exact.get(last)
        if declared is not None:
            return declared
        return _Deferred(node)

    def positional(self, node, spelling, args) -> None:
        from ..analysis.functions import O_PARAMS, O_QUAL, O_SELF

        target = self.program.resolve_call(self.module, self.outline, spelling)
        if target is None:
            return
        callee_module = self.program.module(target[0])
        callee = callee_module.outline(target[1]) if callee_module is not None else None
        if callee is None:
            return
        params = [p for p in callee[O_PARAMS] if not p.startswith("*")]
        bound = 1 if callee[O_SELF] and ("." in spelling or target[1].endswith(".__init__")) else 0
        for i, unit in enumerate(args):
            if type(node.args[i]) is ast.Starred:
                return
            index = i + bound
            if index >= len(params) or not real(unit):
                continue
            param = params[index]
            declared = self.vocab.of(param)
            where = f"`{param}` of `{callee[O_QUAL]}`"
            if not real(declared):
                sink = self._sink(target, index)
                if sink is None:
                    continue
                declared, into = sink
                where = f"`{param}` of `{callee[O_QUAL]}`, which it stores as `{into}`"
            self.check_into(declared, unit, node.args[i], "passes", where, code="AC802")

    def _sink(self, target, index):
        from ..analysis.functions import D_UNITS

        module = self.program.module(target[0], details=True)
        detail = module.detail(target[1]) if module is not None else None
        if detail is None:
            return None
        units = {self.vocab.of(name) for param, name in detail[D_UNITS][1] if param == index}
        units.discard(None)
        if len(units) != 1:
            return None
        unit = units.pop()
        name = next(n for p, n in detail[D_UNITS][1] if p == index and self.vocab.of(n) == unit)
        return (unit, name) if real(unit) else None

    def spelling(self, func) -> str:
        outliner = self.module.outliner
        shadowed = self.params | set(self.env)
        spelling = outliner.spell(func, shadowed)
        if self.self_name and (
            spelling == self.self_name or spelling.startswith(self.self_name + ".")
        ):
            spelling = "self" + spelling[len(self.self_name) :]
        return spelling

    def known(self, unit):
        """A deferred call's unit when its callee's returns agree on one; else as it is."""
        if not isinstance(unit, _Deferred):
            return unit
        return self.returns_of(self.spelling(unit.node.func))

    def returns_of(self, spelling: str, module=None, outline=None, depth: int = 0):
        from ..analysis.functions import D_UNITS

        if depth > 3:
            return None
        module = module or self.module
        outline = outline or self.outline
        target = self.program.resolve_call(module, outline, spelling)
        if target is None:
            return None
        callee_module = self.program.module(target[0], details=True)
        if callee_module is None:
            return None
        detail = callee_module.detail(target[1])
        callee = callee_module.outline(target[1])
        if detail is None or not detail[D_UNITS][0]:
            return None
        found = set()
        for _line, form in detail[D_UNITS][0]:
            unit = self.form_unit(form, callee_module, callee, depth)
            if unit is SCALAR:
                continue
            if unit is None:
                return None
            found.add(unit)
        return found.pop() if len(found) == 1 else None

    def form_unit(self, form, module, outline, depth):
        if form == "?":
            return None
        tag = form[0]
        vocab = self.vocab
        if tag == "l":
            return SCALAR
        if tag == "n":
            return vocab.of(form[1])
        if tag == "v":
            declared = vocab.of(form[1])
            return (
                declared
                if declared is not None
                else self.form_unit(form[2], module, outline, depth)
            )
        if tag == "c":
            declared = vocab.exact.get(form[1].rpartition(".")[2])
            if declared is not None:
                return declared
            return self.returns_of(form[1], module, outline, depth + 1)
        a = self.form_unit(form[1], module, outline, depth)
        b = self.form_unit(form[2], module, outline, depth)
        if tag == "*":
            return vocab.mul(a, b)
        if tag == "/":
            return vocab.mul(a, b, -1)
        if tag == "+":
            if real(a) and real(b) and not compatible(a, b):
                return None
            return _sum(a, b)
        return None

    # -- findings ----------------------------------------------------------------

    def mix(self, a, b, node_a, node_b, anchor, verb, *, augmented: bool = False) -> None:
        if real(a) and isinstance(b, _Deferred):
            b = self.known(b)
        elif real(b) and isinstance(a, _Deferred):
            a = self.known(a)
        if not (real(a) and real(b)) or compatible(a, b):
            return
        seg_a, seg_b = self._segment(node_a), self._segment(node_b)
        if verb == "adds":
            said = f"adds {fmt(b)} (`{seg_b}`) to {fmt(a)} (`{seg_a}`)"
        elif verb == "subtracts":
            said = f"subtracts {fmt(b)} (`{seg_b}`) from {fmt(a)} (`{seg_a}`)"
        else:
            said = f"{verb} {fmt(a)} (`{seg_a}`) and {fmt(b)} (`{seg_b}`)"
        self._report(anchor, "AC801", said, frm=b, to=a)

    def check_into(self, declared, value, node, verb, where, *, code="AC801") -> None:
        if isinstance(value, _Deferred):
            value = self.known(value)
        if not real(value) or compatible(value, declared):
            return
        literal = _literal_ratio(node)
        if literal is not None:
            inner = self.known(self.eval_quiet(literal[0]))
            if real(inner) and not compatible(inner, declared):
                ratios = self.vocab.conversions(inner, declared)
                if ratios:
                    named = ", ".join(f"`{r}`" for r, _ in ratios)
                    self._report(
                        node,
                        "AC803",
                        f"`{self._segment(node)}` writes the conversion from {fmt(inner)} to "
                        f"{fmt(declared)} as its value `{literal[1]}`: write the declared ratio "
                        f"({named}) even where it is {literal[1]}, so the code is right the day "
                        "it is not",
                        suggest=False,
                    )
                    return
        if verb == "assigns":
            said = (
                f"assigns {fmt(value)} (`{self._segment(node)}`) to {where}, "
                f"declared {fmt(declared)}"
            )
        elif verb == "returns":
            said = (
                f"returns {fmt(value)} (`{self._segment(node)}`) from {where}, "
                f"declared {fmt(declared)}"
            )
        else:
            said = (
                f"passes {fmt(value)} (`{self._segment(node)}`) as {where}, "
                f"declared {fmt(declared)}"
            )
        self._report(
            node, code, said, frm=value, to=declared, extra=self._converted_twice(node, declared)
        )

    def _converted_twice(self, node, declared) -> str:
        """``x * ratio`` where ``x`` is already in the declared unit: say to drop the ratio."""
        if type(node) is not ast.BinOp or type(node.op) not in (ast.Mult, ast.Div, ast.FloorDiv):
            return ""
        op = "*" if type(node.op) is ast.Mult else "/" if type(node.op) is ast.Div else "//"
        for kept, ratio in ((node.left, node.right), (node.right, node.left)):
            if ratio is node.left and op != "*":
                continue
            if self.known(self.eval_quiet(kept)) == declared:
                return (
                    f"; `{self._segment(kept)}` is already {fmt(declared)}: drop "
                    f"`{op} {self._segment(ratio)}`"
                )
        return ""

    def eval_quiet(self, node):
        """An operand's unit, without reporting what is inside it twice."""
        findings, flagged = self.findings, set(self._flagged)
        self.findings = []
        try:
            return self.eval(node)
        finally:
            self.findings, self._flagged = findings, flagged

    def _report(self, anchor, code, said, *, frm=None, to=None, suggest=True, extra="") -> None:
        if id(anchor) in self._flagged:
            return
        self._flagged.add(id(anchor))
        hint = extra
        if suggest and not hint and frm is not None and to is not None:
            ratios = self.vocab.conversions(frm, to)
            if ratios:
                hint = "; convert with " + " or ".join(
                    f"`{op} {name}` ({fmt(self.vocab.exact[name])})" for name, op in ratios
                )
            else:
                hint = " (no declared conversion relates the two)"
        message = said if code == "AC803" else f"{said}: two units mixed without a conversion{hint}"
        self.findings.append(
            self.rule.finding(self.source, anchor, message, code=code, span_node=self.stmt)
        )

    def _segment(self, node) -> str:
        from ..analysis.names import source_segment

        text = source_segment(self.source, node, first_line=True)
        return text if len(text) <= 60 else text[:57] + "..."


def _plain(unit) -> bool:
    """A count: no unit below the line."""
    return all(e > 0 for _, e in unit)


def _ceiling(node) -> bool:
    """``(a + b - 1) // b``, ``(a + c) // d`` with literal ``c``: ceiling division."""
    left = node.left
    return type(left) is ast.BinOp and type(left.op) in (ast.Add, ast.Sub)


def _literal_ratio(node):
    """``(x, value)`` for ``x * c``, ``c * x``, ``x / c``, ``x // c`` with ``c`` a number."""
    if type(node) is not ast.BinOp or type(node.op) not in (ast.Mult, ast.Div, ast.FloorDiv):
        return None
    for this, other in ((node.right, node.left), (node.left, node.right)):
        if type(this) is ast.Constant and isinstance(this.value, (int, float)):
            if this is node.left and type(node.op) is not ast.Mult:
                continue
            return other, this.value
    return None


def _header_end(stmt, kind) -> int:
    """The last line of a statement's own expressions: a compound statement's header."""
    body = getattr(stmt, "body", None)
    if isinstance(body, list) and body and kind is not ast.Lambda:
        return max(stmt.lineno, body[0].lineno - 1)
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _bound_here(stmt, kind) -> list:
    if kind is ast.Assign:
        return list(stmt.targets)
    if kind in (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor):
        return [stmt.target]
    if kind in (ast.With, ast.AsyncWith):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    return []


def _names_bound(target) -> list[str]:
    return [n.id for n in ast.walk(target) if type(n) is ast.Name]
