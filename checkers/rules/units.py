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
its unit whatever is assigned to it; a glob reads no name that is a phrase,
``bytes_for_tokens``, or that asks a question, ``can_store_tokens``: its
answer is a truth, not tokens); a call's result has the unit of its function's
name only when the vocabulary names it exactly (``entry_bytes()``: a glob
reads a function name's object, not its result, as in
``get_block_ids_for_computed_tokens()``); an undeclared local has the unit of
what was last assigned to it (an ``if`` body's binding does not reach its
``else``, and after the two a local keeps a unit only where both agree); a
number is a plain scalar that goes with anything (``blocks + 1``, ``rows *
2``), and so is a product whose units cancel (bytes over bytes); an unknown
added to anything is unknown; two counts multiplied are unknown (one is per
the other -- ``num_reqs * num_bonus_tokens`` are tokens -- which the names do
not say), and so is a ceiling division by a number (``cdiv(n, 256)``, ``(n +
255) // 256`` count chunks); ``int()``, ``round()``, ``abs()``,
``math.ceil``/``floor``, unary minus, ``%`` and a slice of a container
(``block_ids[:n]``) keep their operand's unit (one element of a container is
unknown: an id, a count, or what a buffer named for its pages holds);
``max``/``min`` and ``a if c else b`` want their operands in one unit, where a
rate and a count of its numerator are one unit (a block's size in tokens is
one block's worth of tokens: ``num_tokens > block_size`` compares tokens) but
two rates over different denominators are not (bytes per page, bytes per
block) -- except in a comparison, where two rates of one numerator ask how
their denominators relate (``scheduler_block_size < block_size``: the check
before a ratio is taken, or that it is 1), not which one the value is;
``cdiv(a, b)`` divides. Across the project's functions: an argument passed to
a parameter has to be in the parameter's unit -- declared by the parameter's
name, or inferred from the name the callee binds it to unchanged
(``self.num_blocks = n``); a call that declares nothing has the unit every
``return`` of the callee agrees on, evaluated under this vocabulary
(``checkers.analysis.functions``' unit forms).

What is a finding (only ever with two known units): adding, subtracting,
comparing, ``max``/``min``-ing or assigning two different units (AC801),
including returning from a function whose name declares a unit and ``+=``;
passing one unit where a parameter declares or binds another (AC802); and a
conversion written as its value -- ``blocks * 1`` where a declared ratio
converts between the two units (AC803), the record's "none elided because a
ratio happens to be 1". A name the vocabulary does not cover, an unannotated
product with one, a value from a container or a third-party call is unknown,
and unknown is silent. So is a value that mixes two units: the mix is reported
where it is made, and what is computed from it has no unit, so one mistake is
one finding, not another at each use of its result. What does not flow: a
value through a container, an attribute of ``self`` assigned elsewhere under
an undeclared name, module-level code and class bodies (only function bodies
are read), and a local across a nested function.

A vocabulary holds one meaning per name; where a name means two units in
two parts of the tree (``num_blocks``: backend pages in the backends,
scheduler blocks in a transfer registry), declare two contracts with their
``paths``. Findings depend on other files (a callee's parameters and
returns), so they are not ``CACHEABLE``; a run over some files re-checks
the functions that call into an edited module.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, StringList, StringMap

from ..analysis.unit_algebra import SCALAR, _Vocabulary, compatible, fmt, parse_unit, real

RULES = (
    Rule(
        code="AC801",
        name="unit-mix",
        what=(
            "Flags adding, subtracting, comparing, `max`/`min`-ing, assigning or returning two "
            "quantities whose declared units differ (scheduler blocks and backend pages, rows "
            "and layers, bytes per page taken for bytes per block) with no conversion between "
            "them."
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
# `= name`, `= (name)`, `= \\\n name`, `= (  # why\n name)`: an assignment of a bare name (also
# matches `== name`, `x=name` in a call: more, never less, than the assignments).
_BOUND_TO = r"=(?:[\s(\\]|#[^\n]*)*(?<!\w){}(?!\w)"


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
        Example(
            source=(
                "class BlockGeometry:\n"
                "    def __init__(self, scheduler_block_size, block_size):\n"
                "        if scheduler_block_size < block_size or scheduler_block_size % block_size:\n"
                "            raise ValueError('a scheduler block holds whole backend pages')\n"
                "        self.block_ratio = scheduler_block_size // block_size\n"
            ),
            params=_PARAMS,
            path="atom/backends/geometry.py",
            note=(
                "Two block sizes in tokens compared: the check that relates the scheduler's "
                "block to the backend's page before the ratio between them is taken."
            ),
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
        self._needles: tuple[str, ...] | None = None
        # One run's modules as ``may_store`` reads them, by path: (the program, {path: (the
        # lines spelling a declared name, or None for every line; the text's lines)}).
        self._spelled: tuple[weakref.ref, dict[str, tuple | None]] | None = None
        # One run's answers about callees (``answers``): (the program, {question: answer}).
        self._answers: tuple[weakref.ref, dict] | None = None

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
        from ..analysis.call_patterns import _needle

        if self._needles is None:
            found = [_needle(name) if "*" in name or "?" in name else name for name in self.names]
            if any(n is None for n in found):
                self._needles = ()
            else:
                # A text spelling `num_blocks` spells `_blocks`: the shorter one finds both.
                found = list(dict.fromkeys(found))
                self._needles = tuple(n for n in found if not any(m != n and m in n for m in found))
        return self._needles

    def answers(self, program) -> dict:
        """One run's answers about callees, each of which reads only the callee (and the
        callees it returns from): what it binds a parameter to, ``("sink", (module, function),
        position)``, and what its returns agree on, ``("returns", (module, function),
        depth)``. Kept with the run's program: a later run may have edited the callee."""
        if self._answers is None or self._answers[0]() is not program:
            self._answers = (weakref.ref(program), {})
        return self._answers[1]

    def may_store(self, program, module, outline, param: str) -> bool:
        """Whether a function may bind ``param`` unchanged to a declared name (its sink, what
        an undeclared parameter's unit is read from), as the module's text spells it.

        A sink is an assignment, ``self.num_blocks = n``: the function's own lines spell the
        declared name, and ``=`` then ``n`` (through brackets, line breaks, continuations and
        comments). Where either is missing there is none, and the function's body -- often its
        module parsed and every function of it walked -- is not asked for. True where that
        cannot be told: a glob with no literal to look for, a file that cannot be read."""
        from ..analysis.functions import O_END, O_LINE
        from ..analysis.imports import lines_mentioning
        from ..analysis.resolution import _spans

        if self._spelled is None or self._spelled[0]() is not program:
            self._spelled = (weakref.ref(program), {})
        known = self._spelled[1]
        if module.path not in known:
            source = program.project.read_source(module.path)  # the checked copy, or the disk's
            needles = self.needles()
            known[module.path] = (
                None
                if source is None
                else (lines_mentioning(source.text, needles) if needles else None, source.lines)
            )
        found = known[module.path]
        if found is None:
            return True
        declared, lines = found
        if declared is not None and not _spans(declared, outline):
            return False
        text = "".join(lines[outline[O_LINE] - 1 : outline[O_END]])
        return re.search(_BOUND_TO.format(re.escape(param)), text) is not None

    # -- checking ------------------------------------------------------------

    def check(self, source, project) -> Iterator:
        from ..analysis.imports import lines_mentioning
        from ..analysis.program import program_of
        from ..analysis.resolution import _spans
        from ..analysis.unit_flow import Walker  # the flow, imported once a file is checked

        program = program_of(project)
        module = program.module_of_source(source)
        if module is None or module.outliner is None:
            return
        needles = self.needles()
        lines = lines_mentioning(source.text, needles) if needles else None
        for index, outline in enumerate(module.outlines):
            if lines is not None and not _spans(lines, outline):
                continue
            walker = Walker(self, source, program, module, outline, module.outliner.node(index))
            walker.needle_lines = lines
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
        module = program.module(name)
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


# The unit algebra is the kind's vocabulary; re-exported so a reader of the kind finds it here.
__all__ = ["RULES", "SCALAR", "Units", "compatible", "fmt", "parse_unit", "real"]
