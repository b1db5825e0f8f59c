"""published-keys: a function reads a dict in a shape no return path of its producer has.

ROCm/ATOM's KV-pool refactor: ``_build_v4_indexer_meta`` "returns two
different dicts. The DECODE short-circuit starts from ``meta = {}`` and adds
only the FP4 window schedule; the prefill path falls through to a literal
with a dozen more fields." Renaming the row-to-sequence map pointed
``_score_topk_decode_fp4`` at ``batch_id_per_q_token``, "which only the
prefill literal published -- so the first real FP4 decode raised
``KeyError``. Nothing in the unit suite reaches that forward; CI found it."

A dict whose keys depend on the branch that built it is read by functions
that each expect one of its shapes: the decode scorer reads the decode
keys, the prefill scorer the prefill ones. A key missing on *some* path is
therefore no bug by itself -- ``_score_topk_prefill`` reading a prefill-only
key is the design. The bug is a reader that expects a shape *no* path
produces: the decode scorer read the FP4 window schedule, which only the
decode path publishes, and ``batch_id_per_q_token``, which only the prefill
path does, so whichever dict reached it, one read raised. That is the
finding: for each function, the keys it reads with ``[]`` from one
producer's dict; when no return path of the producer can publish all of them,
each read of a key the closest path lacks is flagged, naming that path and
the path that does publish it. The keys judged together are those one run of
the function can read: an ``if``'s body and its ``else`` are two runs, and so
are ``kind == "a"`` and ``kind == "b"`` (a subject is never equal to two
constants), and past an ``if`` one of whose ways leaves (``return``, ``raise``,
``continue``, ``break``) the rest of the block runs under the other's truth --
so a dict tagged by a value and read per tag is no finding. Past eight tests
among one producer's reads, they are judged as one run.

The key set per return path (``checkers.analysis.functions``): a literal,
``dict(k=...)``, ``{}`` filled by ``d[k] = v``, ``d.update(...)``,
``d.setdefault(...)``, through ``if``/``for``/``try``; a key set under a
condition counts as one the path can publish. A path that returns a dict
built elsewhere, spreads ``**other``, uses a computed key or hands the dict
to a callee the project does not resolve is *open* -- it may publish
anything -- and a producer with an open path is never flagged. A callee the
dict is handed to (``self._refresh(..., meta)``) adds what it writes into
that parameter. Dataclass and TypedDict fields are out of scope.

Which producer a read sees: a call's result (``meta = self._build(...);
meta["k"]``, ``build()["k"]``), through the local's last binding -- an ``if``
body's binding does not reach its ``else``, a ``for``, ``with`` or tuple target
rebinds the name, a comprehension's ``for`` binds a name of its own scope
(``[x["k"] for x in items]`` reads an item, not the local ``x``), a local bound
to a parameter is that parameter, and where an ``if``'s two ways bound the local
apart, a read under that same test (``inputs["page_table"] if paged else None``
after ``if paged: inputs = build_paged() else: inputs = build_dense()``) sees the
way the test chose, until the local or a name of the test is bound again; an attribute
of ``self`` that a method of the class or its bases assigns a call's result
(``self.meta = self._build()``); a parameter, from what the same module's
callers pass. Undeclared (``producers``
is ``*``), a producer is looked for in the reader's own module only -- its
functions, its classes and their bases defined there -- so no other file is
read to answer, and a file whose text cannot return a dict it built (no
``return`` of ``{`` or ``dict(``, or of a name bound to one: a scan, not a parse)
is not read at all; nor are the bodies of a module none of whose functions may
return a dict it built, or that calls none of those
(``checkers.analysis.dict_producers``). Declared producers are followed across the
project, through its imports and classes, and through an attribute of any
object that the project assigns a declared producer's result
(``attn_metadata.indexer_meta = self._build_v4_indexer_meta(...)``): an
attribute's name alone says too little about which dict it holds to link
every ``x.meta`` to every ``meta`` builder, and a declaration says which
dicts matter enough to follow. Not a read: ``.get``, a read
under ``"k" in d`` or after ``d.get("k")`` in the same function, or inside a
``try`` that catches ``KeyError``. A key the reader reads that no path
publishes at all is flagged only when the reader reaches the producer
directly (a call's result, ``self``'s attribute): through a parameter or
another object's attribute, such a key says the link is a different dict.
"""

from __future__ import annotations

from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import StringList

RULES = (
    Rule(
        code="AC811",
        name="unpublished-key",
        what=(
            "Flags a `[]` read of a string key from a dict when no return path of the dict's "
            "producer publishes every key the reading function reads from it: a reader that "
            "expects a shape no branch of the producer builds. The message names the return "
            "path closest to the reader's shape, what it lacks, and the path that has it."
        ),
        why=(
            "A dict whose keys depend on the branch that built it fails only on the branch a "
            "test did not take. ROCm/ATOM's decode scorer read a key only the prefill branch "
            "published, next to keys only the decode branch did: whichever dict reached it, "
            "one read raised `KeyError`, and only CI's GPU job got there."
        ),
        fix_safety=(
            "This rule offers no fix: whether to publish the key on every path, read the "
            "value from where the producer copied it, or split the dict is a design decision."
        ),
    ),
)

# The record's shape, rebuilt: a builder whose decode short-circuit starts from `{}` and
# whose prefill path returns a literal; the indexer reads it off the attention metadata.
_BUILDER = (
    "class V4Builder:\n"
    "    def build(self, attn_metadata, positions):\n"
    "        attn_metadata.indexer_meta = self._build_v4_indexer_meta(attn_metadata, positions)\n"
    "\n"
    "    def _build_v4_indexer_meta(self, attn_metadata, positions):\n"
    "        if attn_metadata.is_decode:\n"
    "            meta = {}\n"
    '            meta["n_committed_per_seq"] = attn_metadata.n_committed_csa_per_seq\n'
    "            if self.indexer_fp4:\n"
    '                meta["fp4_cta_info"] = self.fp4_cta_info\n'
    '                meta["fp4_total_ctas"] = self.fp4_units\n'
    "            return meta\n"
    "        return {\n"
    '            "n_committed_per_seq": attn_metadata.n_committed_csa_per_seq,\n'
    '            "batch_id_per_q_token": attn_metadata.batch_id_per_q_token,\n'
    '            "cu_committed": attn_metadata.cu_committed,\n'
    '            "cu_starts": attn_metadata.cu_starts,\n'
    '            "cu_ends": attn_metadata.cu_ends,\n'
    '            "visible_end": positions // 4,\n'
    "        }\n"
)
_FILES = {
    "atom/__init__.py": "",
    "atom/backends/__init__.py": "",
    "atom/backends/v4.py": _BUILDER,
    "atom/models/__init__.py": "",
}
_PARAMS = {"producers": ["*._build_v4_indexer_meta"]}
_READER = (
    "class Indexer:\n"
    "    def score_topk(self, fc, q):\n"
    "        indexer_meta = fc.attn_metadata.indexer_meta\n"
    "        if fc.is_prefill:\n"
    "            return self._score_topk_prefill(q, indexer_meta)\n"
    "        return self._score_topk_decode_fp4(q, fc.attn_metadata, indexer_meta)\n"
    "\n"
    "    def _score_topk_prefill(self, q, indexer_meta):\n"
    '        return q, indexer_meta["cu_starts"], indexer_meta["cu_ends"]\n'
    "\n"
)


# Past this many tests among one producer's reads in one function, its reads are judged as
# one run: the runs are every way of each test, and 2**8 of them is already a long function.
_MAX_TESTS = 8


def _together(reads: list) -> list[list]:
    """The reads one run of the reading function may make together, as the largest sets:
    a run takes one way of each test the reads sit under (``R_CONDS``), an ``if``'s body
    or its ``else``, and never holds one subject equal to two constants (``kind ==
    'mean_std'`` and ``kind == 'min_max'``) or equal and unequal to one. Reads under no
    test are in every run."""
    from ..analysis.functions import R_CONDS

    tests: dict[tuple, object] = {}
    for read in reads:
        for place, _holds, eq in read[R_CONDS]:
            tests[place] = eq
    if not tests or len(tests) > _MAX_TESTS:
        return [reads]
    places = list(tests)
    runs: list[list] = []
    for bits in range(1 << len(places)):
        ways = {place: bool(bits >> i & 1) for i, place in enumerate(places)}
        if not _consistent(ways, tests):
            continue
        run = [r for r in reads if all(ways[p] is holds for p, holds, _ in r[R_CONDS])]
        if run not in runs:
            runs.append(run)
    # A run whose reads another's hold as well says nothing the larger one does not.
    return [run for run in runs if not any(len(o) > len(run) and _within(run, o) for o in runs)]


def _consistent(ways: dict, tests: dict) -> bool:
    """Whether the tests' truths can hold at once: no subject equal to two constants, or
    equal and unequal to one."""
    equal: dict[str, str] = {}
    unequal: set[tuple[str, str]] = set()
    for place, holds in ways.items():
        eq = tests[place]
        if eq is None:
            continue
        subject, constant, is_eq = eq
        if holds is is_eq:
            if equal.setdefault(subject, constant) != constant:
                return False
        else:
            unequal.add((subject, constant))
    return not any((subject, constant) in unequal for subject, constant in equal.items())


def _within(run: list, other: list) -> bool:
    return all(any(r is o for o in other) for r in run)


class PublishedKeys(Contract):
    KIND = "published-keys"
    RULES = RULES
    CACHEABLE = False  # the producer is in other files
    IMPORT_SUMMARIES = False  # its own summaries (checkers.analysis.program) carry the calls

    producers = StringList(
        default=("*",),
        doc=(
            "Dotted-name globs of the functions whose dicts are checked, matched against "
            "`module.Class.method` (`*._build_*_meta`), followed across the project and "
            "through any object's attribute the project assigns their result to; `*` (the "
            "default) is every function of the reader's own module."
        ),
    )

    VALID = (
        Example(
            source=_READER
            + (
                "    def _score_topk_decode_fp4(self, q, attn_metadata, indexer_meta):\n"
                "        rows = attn_metadata.batch_id_per_q_token\n"
                '        return rows, indexer_meta["fp4_cta_info"], indexer_meta["fp4_total_ctas"]\n'
            ),
            params=_PARAMS,
            path="atom/models/deepseek_v4.py",
            files=_FILES,
            note=(
                "The refactor's fix: the decode scorer reads the map off the metadata it was "
                "copied from. Each scorer's keys are one path's: prefill's, decode's."
            ),
        ),
        Example(
            source=(
                "def shape(decode):\n"
                "    if decode:\n"
                '        return {"rows": 1}\n'
                "    return dict(rows=2, cols=3)\n"
                "\n"
                "\n"
                "def read(decode):\n"
                "    meta = shape(decode)\n"
                '    if "cols" in meta:\n'
                '        return meta["rows"] * meta["cols"]\n'
                '    return meta["rows"] + meta.get("extra", 0)\n'
            ),
            path="atom/shapes.py",
            note="A read guarded by `in`, and `.get`, cope with a missing key.",
        ),
    )
    INVALID = (
        Example(
            source=_READER
            + (
                "    def _score_topk_decode_fp4(self, q, attn_metadata, indexer_meta):\n"
                '        rows = indexer_meta["batch_id_per_q_token"]\n'
                '        return rows, indexer_meta["fp4_cta_info"], indexer_meta["fp4_total_ctas"]\n'
            ),
            params=_PARAMS,
            path="atom/models/deepseek_v4.py",
            files=_FILES,
            expect=(
                Expect(
                    "AC811",
                    12,
                    16,
                    "the return at atom/backends/v4.py:12 (the dict from line 7) publishes "
                    "`fp4_cta_info`, `fp4_total_ctas` but not `batch_id_per_q_token`",
                ),
            ),
            note=(
                "The record's bug: the decode scorer reads decode-only keys and a "
                "prefill-only one. The dict reaches it through the metadata's attribute and a "
                "parameter."
            ),
        ),
        Example(
            source=(
                "def plan(blocks, decode):\n"
                "    out = {}\n"
                "    if decode:\n"
                '        out["rows"] = blocks\n'
                "        return out\n"
                "    out.update(rows=blocks, cols=2)\n"
                "    return out\n"
                "\n"
                "\n"
                "def width(blocks):\n"
                '    return plan(blocks, True)["colls"]\n'
            ),
            path="atom/plan.py",
            expect=(Expect("AC811", 11, 12, "every path; did you mean `cols`?"),),
            note="A key no path publishes (a typo of `cols`), read off a call's result.",
        ),
    )

    def __init__(self, id: str, **params) -> None:
        super().__init__(id, **params)
        from ..analysis.call_patterns import _globs

        self._everything = "*" in self.producers
        self._producer_re = None if self._everything else _globs(self.producers)
        self._memo: dict[tuple, object] = {}
        self._memo_owner = None

    def needles(self) -> tuple[str, ...]:
        return ('["', "['")

    def wants(self, source) -> bool:
        from ..analysis.dict_reads import _DICT_BUILDERS

        text = source.text
        if '["' not in text and "['" not in text:
            return False
        if not self._everything:
            return True
        # Undeclared, producers are the reader's own module's: one of its functions must
        # return a dict it built (a text scan: the file is not parsed for this kind else).
        from ..analysis.dict_producers import may_build_a_returned_dict

        return any(b in text for b in _DICT_BUILDERS) and may_build_a_returned_dict(text)

    # -- checking ------------------------------------------------------------

    def check(self, source, project) -> Iterator:
        from ..analysis.dict_reads import _guard_lines, _read_lines, _spans
        from ..analysis.program import program_of

        program = program_of(project)
        self._own(program)
        if not self._everything:
            wanted = self._reader_needles(program)
            if wanted is not None and not any(n in source.text for n in wanted):
                return
        else:
            # Undeclared, the producer is a function of this module, called here. (A kind
            # that needs the tree is run only on a file that parses.)
            from ..analysis.dict_producers import dict_producers, spells_a_call_of

            if not spells_a_call_of(source.text, dict_producers(source.tree)):
                return
        module = program.module_of_source(source)
        if module is None:
            return
        lines = _read_lines(source.text)
        # A guard spells its key in quotes beside ` in ` or `.get(`: those lines are read too.
        wanted = frozenset(lines) | frozenset(_guard_lines(source.text))
        outliner = module.outliner
        for index, outline in enumerate(module.outlines):
            if not _spans(lines, outline):
                continue
            found = outliner.reads(index, wanted)
            yield from self._check_function(source, program, module, outline, found)

    def _own(self, program) -> None:
        """Memos belong to one program (one project index, one run or one editor state)."""
        if self._memo_owner is not program:
            self._memo = {}
            self._memo_owner = program

    def _check_function(self, source, program, module, outline, found) -> Iterator:
        from ..analysis.functions import R_KEY, R_TRY

        reads, guards = found
        # producer -> (direct?, [read, ...]) in the order the function reads them
        by_producer: dict[tuple[str, str], list] = {}
        for read in reads:
            if read[R_TRY] or read[R_KEY] in guards:
                continue
            for producer, direct in self._producers(program, module, outline, read[:2], 0):
                entry = by_producer.setdefault(producer, [True, []])
                entry[0] = entry[0] and direct
                entry[1].append(read)
        for producer, (direct, reads) in by_producer.items():
            yield from self._judge(source, program, producer, direct, reads)

    def _judge(self, source, program, producer, direct, reads) -> Iterator:
        from ..analysis.functions import R_COL, R_LINE

        shapes = self._shapes(program, producer)
        if shapes is None:
            return
        reads = sorted(reads, key=lambda r: (r[R_LINE], r[R_COL]))
        flagged: set[str] = set()
        for together in _together(reads):
            yield from self._judge_run(source, program, producer, direct, together, shapes, flagged)

    def _judge_run(self, source, program, producer, direct, reads, shapes, flagged) -> Iterator:
        """The reads one run of the reading function makes, against the producer's shapes;
        ``flagged``, the keys already reported for this producer."""
        from ..analysis.dict_reads import _names, _segment
        from ..analysis.functions import R_COL, R_END_COL, R_END_LINE, R_KEY, R_LINE

        wanted = list(dict.fromkeys(r[R_KEY] for r in reads))
        # The path that publishes most of what this function reads, then the earliest.
        best = max(shapes, key=lambda s: (sum(k in s[1] for k in wanted), -s[0]))
        lacking = [k for k in wanted if k not in best[1]]
        if not lacking:
            return
        mod_name, qual = producer
        module = program.module(mod_name)
        path = module.path if module is not None else mod_name
        for read in reads:
            key = read[R_KEY]
            if key not in lacking or key in flagged:
                continue
            elsewhere = [s for s in shapes if key in s[1]]
            if not elsewhere and not direct:
                continue  # through a parameter or an attribute: probably another dict
            flagged.add(key)
            if elsewhere:
                has = [k for k in wanted if k in best[1]]
                why = (
                    f"reads a key that no return path of `{qual}` publishes together with the "
                    "others this function reads from it: the return at "
                    f"{path}:{best[0]} (the dict from line {best[2]}) publishes "
                    f"{_names(has) or 'none of them'} but not `{key}`, which only the return at "
                    f"line {elsewhere[0][0]} does; whichever dict reaches here, a read raises "
                    "KeyError. Publish the key on every path, read it from where the producer "
                    "took it, or `.get` it where it may be absent"
                )
            else:
                from contracts.fields import did_you_mean

                returns = ", ".join(str(s[0]) for s in shapes)
                published = sorted({k for s in shapes for k in s[1]})
                why = (
                    f"reads a key that no return path of `{qual}` publishes ({path}, returns at "
                    f"line{'s' if len(shapes) > 1 else ''} {returns}): it raises KeyError on "
                    f"every path{did_you_mean(key, published)}"
                )
            line, end_line = read[R_LINE], read[R_END_LINE]
            span = (
                line,
                source.char_column(line, read[R_COL]) + 1,
                end_line,
                source.char_column(end_line, read[R_END_COL]) + 1,
            )
            text = _segment(source, span)
            yield self.finding(source, span, f"`{text}` {why}", span_node=(line, 0, end_line, 0))

    # -- producers ------------------------------------------------------------

    def _resolve(self, program, module, outline, spelling: str) -> tuple[str, str] | None:
        """The function a call names -- in every module for declared producers; undeclared,
        only in the reader's own module (its functions, and methods of its classes and of
        their bases defined there), which no other file is read to answer."""
        from ..analysis.dict_reads import _local_mro

        if not self._everything:
            return program.resolve_call(module, outline, spelling)
        from ..analysis.functions import O_CLASS

        head, _, rest = spelling.partition(".")
        if not rest:
            return program.resolve_call(module, outline, spelling)
        if head != "self" or "." in rest or not outline[O_CLASS]:
            return None
        for klass in _local_mro(module, outline[O_CLASS]):
            if f"{klass}.{rest}" in module.functions:
                return (module.name, f"{klass}.{rest}")
        return None

    def _allowed(self, target: tuple[str, str]) -> bool:
        if self._everything:
            return True
        return bool(self._producer_re.fullmatch(f"{target[0]}.{target[1]}"))

    def _producers(self, program, module, outline, origin, depth) -> list[tuple[tuple, bool]]:
        """The producers a dict read from ``origin`` in ``outline``'s body may come from, each
        with whether the link is direct (a call's result, ``self``'s attribute)."""
        from ..analysis.functions import O_CLASS, O_QUAL

        # Every read of one dict asks the same: a function reads a parameter's keys, or a
        # call's, a dozen times, and its callers are searched once.
        key = ("producers", module.name, outline[O_QUAL], outline[O_CLASS], origin, depth)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._ask(program, module, outline, origin, depth)
        return found

    def _ask(self, program, module, outline, origin, depth) -> list[tuple[tuple, bool]]:
        from ..analysis.dict_reads import callers_passing
        from ..analysis.functions import O_CLASS

        kind, what = origin
        if kind == "c":
            target = self._resolve(program, module, outline, what)
            if target is not None and self._allowed(target) and self._shapes(program, target):
                return [(target, True)]
            return []
        if kind == "s":
            found = []
            klass = outline[O_CLASS]
            if klass:
                found = [(p, True) for p in self._self_carriers(program, module.name, klass, what)]
            if not self._everything:
                found += [(p, False) for p in self._carriers(program).get(what, ())]
            return list(dict.fromkeys(found))
        if kind == "a":
            if self._everything:
                return []
            return [(p, False) for p in self._carriers(program).get(what, ())]
        if kind == "p" and depth < 2:
            found = []
            for caller, origin_there in callers_passing(self, program, module, outline, what):
                for producer, _direct in self._producers(
                    program, module, caller, origin_there, depth + 1
                ):
                    found.append((producer, False))
            return list(dict.fromkeys(found))
        return []

    def _self_carriers(self, program, module_name, klass, attr) -> list[tuple[str, str]]:
        """Producers whose result a method of ``klass`` (or of a base) assigns to ``self.attr``."""
        from ..analysis.dict_reads import _carried, _local_mro
        from ..analysis.functions import O_CLASS

        key = ("self", module_name, klass, attr)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = []
        found = []
        if self._everything:
            mro = [(module_name, k) for k in _local_mro(program.module(module_name), klass)]
        else:
            mro = program.mro(module_name, klass)
        for owner_module, owner in mro:
            mod = program.module(owner_module)
            if mod is None or (mod.self_set is not None and attr not in mod.self_set):
                continue  # no method of the module assigns `self.<attr>`
            for outline in mod.outlines:
                if outline[O_CLASS] != owner:
                    continue
                for target in _carried(self, program, mod, outline, attr, on_self=True):
                    if self._allowed(target) and self._shapes(program, target):
                        found.append(target)
        self._memo[key] = found = list(dict.fromkeys(found))
        return found

    def _carriers(self, program) -> dict[str, list[tuple[str, str]]]:
        """Declared producers only: attribute name -> producers the project assigns to it,
        from the files that spell a producer's name."""
        from ..analysis.dict_reads import _all_carried

        key = ("carriers",)
        found = self._memo.get(key)
        if found is not None:
            return found

        found = {}
        self._memo[key] = found
        names = self._producer_names()
        mentioning = (
            program.modules_mentioning(names) if names is not None else program.all_modules()
        )
        for module_name in mentioning:
            mod = program.module(module_name)
            if mod is None:
                continue
            for outline in mod.outlines:
                for attr, target in _all_carried(program, mod, outline):
                    if self._allowed(target) and self._shapes(program, target):
                        found.setdefault(attr, [])
                        if target not in found[attr]:
                            found[attr].append(target)
        return found

    def _producer_names(self) -> tuple[str, ...] | None:
        """What a file calling a declared producer spells; None when a pattern names none."""
        from ..analysis.call_patterns import _needle

        names = [_needle(p) for p in self.producers]
        return None if any(n is None for n in names) else tuple(names)

    def _reader_needles(self, program) -> tuple[str, ...] | None:
        names = self._producer_names()
        return None if names is None else (*names, *self._carriers(program))

    def _shapes(self, program, producer) -> list[tuple] | None:
        """Each closed return path of ``producer`` as ``(line, keys it can publish, origin
        line)``; None when the producer builds no dict or may return one of any shape."""
        from ..analysis.dict_reads import _filled
        from ..analysis.functions import (
            D_DICTS,
            P_DEFINITE,
            P_FILLS,
            P_LINE,
            P_MAYBE,
            P_OPEN,
            P_ORIGIN,
        )

        key = ("shapes", producer)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a fill that calls back into its producer ends here
        mod = program.module(producer[0])
        outline = mod.outline(producer[1]) if mod is not None else None
        detail = mod.detail(producer[1]) if outline is not None else None
        if detail is None or not detail[D_DICTS]:
            return None
        shapes = []
        for path in detail[D_DICTS]:
            if path[P_OPEN]:
                return None
            keys = set(path[P_DEFINITE]) | {k for k, _ in path[P_MAYBE]}
            for spelling, where, _certain in path[P_FILLS]:
                filled = _filled(self, program, mod, outline, spelling, where)
                if filled is None:
                    return None
                keys |= filled
            shapes.append((path[P_LINE], frozenset(keys), path[P_ORIGIN]))
        self._memo[key] = shapes
        return shapes

    # -- a run over some files -------------------------------------------------

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """Reads in ``path`` whose producer is in an edited module, answered from summaries.

        Most files are answered without a parse: undeclared, a read's producer is in the
        reader's own module, which is not the edited one; declared, an edit reaches a read
        only when an edited module defines a declared producer, and only a file spelling a
        producer's name or an attribute one is assigned to (what ``check`` itself asks of a
        file before reading it) has a read to reach."""
        from ..analysis.functions import D_READS, O_QUAL, R_LINE
        from ..analysis.program import program_of

        name = project.module_name(path)
        if not name or name in edited or self._everything:
            return {}
        program = program_of(project)
        self._own(program)
        if not self._defines_producer(program, edited):
            return {}
        wanted = self._reader_needles(program)
        if wanted is not None and not program.spells(path, wanted):
            return {}
        module = program.module(name)
        if module is None:
            return {}
        lines: dict[int, tuple[str, ...]] = {}
        for outline in module.outlines:
            detail = module.detail(outline[O_QUAL])
            if detail is None:
                continue
            for read in detail[D_READS]:
                for producer, _direct in self._producers(program, module, outline, read[:2], 0):
                    if producer[0] in edited:
                        line = read[R_LINE]
                        lines[line] = tuple(
                            dict.fromkeys((*lines.get(line, ()), edited[producer[0]]))
                        )
        return lines

    def _defines_producer(self, program, edited) -> bool:
        """Whether an edited module defines a function the declared producers match (by its
        text first: a module that spells no producer's name defines none)."""
        key = ("edited", tuple(sorted(edited.items())))
        found = self._memo.get(key)
        if found is None:
            names = self._producer_names()
            found = False
            for module_name, rel in edited.items():
                if names is not None and not program.spells(rel, names):
                    continue
                module = program.module(module_name)
                if module is not None and any(
                    self._allowed((module_name, qual)) for qual in module.functions
                ):
                    found = True
                    break
            self._memo[key] = found
        return found
