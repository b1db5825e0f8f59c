"""reachable-calls: a declared entry must not reach a declared forbidden call.

ROCm/ATOM's KV-pool refactor: ``prepare_mtp_decode`` "states its own
contract in the first paragraph: eagle leaves the CPU mirrors stale, so this
routine rebuilds on the GPU and touches no host staging". Routing the row ->
sequence map through ``publish_batch_ids`` broke that: it stages via the
buffer's pinned host mirror, fenced once per forward, and a draft step runs
between two forwards, so its host write "overwrites the source of the verify
forward's still-in-flight H2D". MTP acceptance fell from 66% to 51%, under
CUDA graphs only -- an eager run keeps the host close enough that the copy
lands -- which is why an ``--enforce-eager`` gate missed it. The offending
call was not in ``prepare_mtp_decode``: it was two calls down, in a helper
that is fine everywhere else. The same class: a host sync (``.item()``,
``.tolist()``, ``.cpu()``, ``torch.cuda.synchronize``, ``repeat_interleave``
without ``output_size``) reachable from a decode step or a region a CUDA
graph captures.

A maintainer declares the entries (dotted-name globs matched against
``module.Class.method``, and decorators that mark a function as one; ``exclude-entries``
takes some back, as a contract split where a fact holds for some entries only does) and the
forbidden calls (globs matched against a call as it is spelled, its head
resolved through the file's imports -- ``torch.cuda.synchronize``; ``*.item``
for a method of any receiver -- or against the project function it resolves
to, each with the reason printed in the finding). The check walks the
project's call graph from each entry, breadth first, so the chain named is a
shortest one, and reports one finding per entry and forbidden call it reaches --
each is a call to mend, and the sync a fix leaves is not hidden behind the one it
removed -- at the entry's call that starts the chain (or at the forbidden call
itself when the entry spells it), naming every hop with its file and line -- as
AC601 names an import chain -- and the tests each hop's call runs under (``inner
(pkg/x.py:3, where mode != 'decode', meta.kv_size is None)``): the branch the chain
assumes, which a reader judges and a maintainer may rule out by a declared fact
(``entry-conditions``, ``boundary-contexts``). That a parameter is not None is left out:
the walk knows it past every use of the parameter, so it would be said of nearly every call.

What is followed (``checkers.analysis.program``): calls of the module's own
functions and classes, of imported ones (through a package's re-exports),
``self.m()`` on the method's class and then its bases in order, ``super().m()``, a
nested function's calls, and an attribute the class's methods assign an instance of
one project class (``self.norm = RMSNorm(...)``): ``self.norm(x)`` runs its
``__call__`` -- for a torch module, its ``forward`` -- and ``self.pool.carve()`` its
``carve``; and the project functions such a class's methods assign to an attribute
(``self.fill = fill_kv_cache``, ``self.fwd = self._forward_cuda``, as attention
backends pick a kernel once): ``self.fill(k, v)`` may run each of them, and
``self.updater.update(x)`` each method an ``__init__`` dispatches to (``self.update
= self.update_sliding_window`` in one branch, ``self.update_single_wrapper`` in the
other), the class's own ``update`` too. A function a module installs as an object's
method (``w.begin_forward = partial(fast_decode_plan, w)``, or ``types.MethodType``)
is followed from that module's calls of the method on objects of no known class,
with the object bound to its first parameter -- except inside such a function
itself, where a call of the method it replaces is the library's own. A function a
call may run through an attribute or an installation is followed only from a call
whose arguments it could take: a keyword it has no parameter for, or more positional
arguments than it has, is another object's method (a prefill wrapper's
``begin_forward(..., custom_mask=m)`` is not the installed decode plan). What is
not: a method of any other object (``layer(x)`` over a list of layers,
``batch.to_host()``: its class is not known without types), a subclass's override of
the method ``self.m()`` names, a function passed as a value and called elsewhere,
what an attribute holds when it was a parameter's value or a choice (``a if fast
else b``), a method installed in another module (its objects are that module's), and
third-party code (its source is not the project's). A forbidden *method* pattern
(``*.item``) still matches such a call by its spelling, so a sync written on any
receiver is found; only the hops through unknown objects' methods are lost -- but
not on what a copy to the host returned (``lens.cpu().int().tolist()``: the
``.cpu()`` is the sync, and a finding of its own), nor on a local computed from host
data alone through operations that keep their inputs' device (``tmp =
torch.clamp(lens_cpu, max=w)``, ``host = lens.cpu()``, a torch constructor told
``device="cpu"`` or no device at all, which builds on the default device, the host;
not a move, another function's result, or a local bound elsewhere to anything else),
and a host tensor added to in place (``t += x``) stays host data. A call with
a keyword that makes it safe (``repeat_interleave(..., output_size=n)``) is declared
with ``unless-keyword``. The graph is path-insensitive: a call under ``if
is_prefill:`` counts, because nothing here knows the condition is false on the
decode path -- unless the contract says so. What holds whenever an entry runs is
declared in ``entry-conditions`` (``*.is_decoding`` for a captured decode step): a
call under an ``if`` on that attribute's other value, anywhere along a chain, is off
the entry's path, as a call under ``if use_ragged:`` is when the caller passes
``use_ragged=False`` -- or hands on unchanged a ``use_ragged`` its own caller passed
so -- and the ``else`` of ``if page_size == 1:`` when it passes ``1`` (a literal
decides a truth, ``is None``, ``==`` with a literal and an order against a number --
``if n > 0:`` is off the path of a caller passing ``0`` --; a comparison with a name's
value stays undecided), and a parameter the call leaves out holds its default (a
call without ``*args`` or ``**kwargs`` that does not pass ``check=False``'s ``check``
skips ``if check:``). An argument that cannot be None by its form (``lens.cpu()``,
arithmetic, a display) decides ``is None`` only: a capture passing ``seq_lens.cpu()``
does not take the callee's ``if seq_lens_cpu is None:`` fallback. A ``None`` passed
for a parameter that the callee then uses as ``None`` cannot be used (``seq_lens -
prefix_lens``, ``meta.is_decode``) raises there, so nothing after that use is on the
path, and a method of it (``grid_thws.tolist()``) is never called. Past an assert, its
test holds (``assert grid_thws is not None``). A ``**kwargs`` that a function only ever
hands on whole holds the keywords its caller passed, so a callee's default is bound past
it where none of them names it. And what the tests around a call say of a value it hands
on unchanged holds in the callee: past ``if mode.is_decode_or_idle(): return``, a base
class's capture called with ``mode`` does not take its own ``if
mode.is_decode_or_idle():`` branch (a
test is an attribute, a comparison, or a question asked of the value with nothing
passed: ``is_``, ``has_``, ``can_``, ``should_``, ``does_``; the value rebound first is
another; a local bound to a parameter is that parameter; a local tested and handed on
unchanged carries the test too, as ``if query.is_cuda: kernel(query)`` tells
``kernel``'s ``query``; and a local computed from one parameter alone by operations that
keep its device -- a cast, a view or reshape -- is on that parameter's device, so
``flat.is_cuda`` of ``flat = query.reshape(...)`` is ``query.is_cuda``). An ``and``
holds only where each operand does, so ``if meta.is_prefill and
meta.is_token_healing:`` is off a decode entry's path too, as is the ``else`` of an
``or`` one of whose operands the entry holds, and the body of an ``or`` none of whose
operands can hold (``if meta is not None or n is not None:`` for a caller passing
``None`` for both); and past ``if ctx.capturing: return
...``, the rest of the function runs only where the test is false, as it does past
``if use_ragged: return ...`` for a caller passing ``True``. A condition may also
name a value the path holds -- ``*.kv_size is None``, ``*.attn_state !=
*.PrefillNoCache`` -- which rules out a branch, or a conditional expression's way,
tested on another (a constant is matched as spelled). What a call that passes nothing
answers is tested like an attribute: engines reach the step's state through such
accessors (``if get_step_ctx().current_context().enable_microbatch:``, which
``*.enable_microbatch`` matches; not ``get_group(0).is_last_rank``). An engine's facts
often link two values -- the per-rank token counts are passed whenever data parallelism
is on, a verify step always carries its draft -- and stated alone such a fact is false
where the other test fails: ``counts is not None when *.data_parallel_size > 1`` holds
on a path that has passed a test printed as the glob after ``when``, at the call or at
one before it, and nowhere else. A ``with`` block whose context
manager ``boundary-contexts`` names (``with gpu_sync_allowed():``, the syncs an engine
calls deliberate) runs outside the region, as a ``boundary-decorators`` function does.
Otherwise such a call is a finding to suppress with its reason, or a sign the branch
belongs in a function of its own.

Chains run through other files, so the findings are not ``CACHEABLE``: they
are kept under the tree stamp, and a run over some files (pre-commit, the
agent hook, ``check FILE``) re-checks each entry whose chain runs through an
edited file, or takes a ``self.`` call whose target the class or a base in an
edited file assigns (``dependent_lines``), from the files' cached summaries.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import ConfigError, StringList, StringMap

from ..analysis.call_patterns import (
    _MAX_FUNCTIONS,
    CONTEXT,
    _bindings,
    _bound_rules_out,
    _condition,
    _Forbidden,
    _globs,
    _hops,
    _literal,
    _may_be_named,
    _needle,
    _order,
    _required_runs,
    _spelled,
    _where,
)

# A dotted name's glob (`*.is_decoding`, `decoding`, `State.DECODE`).
_DOTTED = r"[A-Za-z_*?][A-Za-z0-9_*?]*(?:\.[A-Za-z_*?][A-Za-z0-9_*?]*)*"
# What a condition tests: a parameter's name or an attribute's spelling, as a glob that names
# something -- not wildcards alone (`*` would hold every test at once).
_GLOB = r"(?=[*?.]*[A-Za-z_])" + _DOTTED
# An entry condition: `*.is_decoding`, `not *.is_prefill`, `*.kv_size is None`, `*.kv_size is
# not None`, `*.state == *.DECODE`, `*.mode != 'prefill'`, `*.n == 1`.
# ... and what it holds under, when it holds only where another test does: `when` and a glob
# of that test as a chain prints it (`*.data_parallel_size > 1`, `mode.is_target_verify()`).
_CONDITION = re.compile(
    rf"(?:(?P<not>not )?(?P<subject>{_GLOB})"
    rf"|(?P<none_of>{_GLOB}) is (?P<is_not>not )?None"
    rf"|(?P<compared>{_GLOB}) (?P<op>==|!=) "
    rf"(?P<constant>{_DOTTED}|-?[0-9]+|'[^'\\]*'|\"[^\"\\]*\"))"
    r"(?: when (?P<when>(?=.*[A-Za-z_])\S.*))?"
)


class _Condition:
    """One declared entry condition, and which of a call's guards it rules out.

    A guard is ``(name, required)`` as the walk records it: ``meta.is_decoding``, ``meta.kv
    is None`` or ``meta.state == State.DECODE``, with the truth the call needs it to have.
    A constant is matched as spelled (a glob: ``*.DECODE``), so two spellings of one value
    read as two values; only a condition of ``==`` rules out a branch on another constant,
    and one of ``==`` an int an order against a number (``meta.num_prefills > 0``).

    A condition with ``when`` holds only on a path that has passed a test it names: ``when``
    is a glob of that test as a chain prints it, matched against each test a call on the
    path runs under (``_antecedents``) -- an engine's facts often link two values
    (``num_tokens_across_dp`` is passed whenever data parallelism is on, not always).
    """

    __slots__ = ("constant", "equal", "form", "holds", "number", "subject", "when")

    def __init__(self, match: re.Match) -> None:
        self.when = _globs([match["when"]]) if match["when"] else None
        if match["subject"]:
            self.form, self.holds = "truth", not match["not"]
            subject = match["subject"]
        elif match["none_of"]:
            self.form, self.holds = "none", not match["is_not"]
            subject = match["none_of"]
        else:
            self.form = "value"  # `holds` unread: the value itself is what holds
            subject, self.equal = match["compared"], match["op"] == "=="
            constant = match["constant"]
            self.number = _literal(constant)  # an int, to decide an order against another
            if constant[0] in "'\"":  # a string, as the walk spells one: its repr
                self.constant = re.compile(re.escape(repr(constant[1:-1])))
            else:
                self.constant = _globs([constant])
        self.subject = _globs([subject])

    def rules_out(self, name: str, required: bool) -> bool:
        if self.form == "truth":
            return (
                " " not in name
                and self.holds is not required
                and bool(self.subject.fullmatch(name))
            )
        if self.form == "none":
            tested = name.removesuffix(" is None")
            return (
                tested != name
                and self.holds is not required
                and bool(self.subject.fullmatch(tested))
            )
        tested, sep, constant = name.partition(" == ")
        if not sep:
            order = _order(name)
            # The path holds one number: an order against another is decided by it.
            return (
                order is not None
                and self.equal
                and type(self.number) is int
                and bool(self.subject.fullmatch(order[0]))
                and order[1](self.number) is not required
            )
        if not self.subject.fullmatch(tested):
            return False
        same = bool(self.constant.fullmatch(constant))
        if self.equal:  # the path holds this value: another's branch, or its own else, is off
            return required is not same
        return same and required  # the path holds another value: this one's branch is off


RULES = (
    Rule(
        code="AC821",
        name="reachable-forbidden-call",
        what=(
            "Flags a declared entry function (a decode step, a region a CUDA graph captures) "
            "from which the project's call graph reaches a declared forbidden call (host "
            "staging, a host sync). The finding sits on the entry's call that starts the "
            "chain and names every hop to the forbidden call, with files and lines and the "
            "tests each hop's call runs under."
        ),
        why=(
            "The forbidden call is rarely in the entry: it is a few calls down, in a helper "
            "that is correct everywhere else. A host sync there stalls every step; host "
            "staging under a CUDA graph races the replay. ROCm/ATOM's MTP acceptance fell "
            "from 66% to 51% that way, under CUDA graphs only, so an eager test run passed."
        ),
        fix_safety=(
            "This rule offers no fix: whether to move the work onto the device, out of the "
            "entry's path, or to declare the chain harmless is a decision about the code."
        ),
    ),
)

# The record's shapes, rebuilt: a builder's decode-step routine and the staging helper.
_STAGING = {
    "atom/__init__.py": "",
    "atom/runner/__init__.py": "",
    "atom/runner/staging.py": (
        "class CpuGpuBuffer:\n"
        "    def __init__(self, cpu, gpu):\n"
        "        self.cpu, self.gpu = cpu, gpu\n"
        "\n"
        "    def copy_to_gpu(self, n):\n"
        "        return self.gpu[:n].copy_(self.cpu[:n], non_blocking=True)\n"
        "\n"
        "\n"
        "def publish_batch_ids(buffer, ids):\n"
        '    """Write through the pinned host mirror; fenced once per forward."""\n'
        "    buffer.cpu[: len(ids)] = ids\n"
        "    return buffer.copy_to_gpu(len(ids))\n"
    ),
    "atom/backends/__init__.py": "",
    "atom/backends/builder.py": (
        "class CommonBuilder:\n"
        "    def max_seqlen(self, context_lens):\n"
        "        return int(context_lens.max().item())\n"
    ),
}
_PARAMS = {
    "entries": ["*.prepare_mtp_decode", "*.capture_*"],
    "forbidden": {
        "*.publish_batch_ids": "stages through a pinned host mirror fenced once per forward",
        "*.item": "a host sync: the device is read back to the host",
        "torch.cuda.synchronize": "a host sync",
        "*.repeat_interleave": "a host sync when repeats is a tensor",
    },
    "unless-keyword": {"*.repeat_interleave": "output_size"},
}


class ReachableCalls(Contract):
    KIND = "reachable-calls"
    RULES = RULES
    CACHEABLE = False  # the chain runs through other files
    IMPORT_SUMMARIES = False  # its own summaries (checkers.analysis.program) carry the calls

    entries = StringList(
        default=(),
        doc=(
            "Dotted-name globs of the entry functions, matched against `module.Class.method` "
            "(`*.prepare_mtp_decode`, `atom.runner.*.capture_*`): `*` crosses dots except in "
            "the last component, which is the function's own name; a glob without a dot "
            "names a function in any module or class."
        ),
    )
    entry_decorators = StringList(
        default=(),
        doc=(
            "Globs of decorators that make a function an entry, spelled as imported "
            "(`torch.compile`, `*.graph_captured`)."
        ),
    )
    entry_class_decorators = StringList(
        default=(),
        doc=(
            "Globs of class decorators that mark a class's `entry-methods` as entries "
            "(`vllm.compilation.decorators.support_torch_compile`: the compiled, captured "
            "region is the decorated model's `forward`)."
        ),
    )
    entry_methods = StringList(
        default=("forward",),
        doc="The methods of a class `entry-class-decorators` marks that are entries.",
    )
    exclude_entries = StringList(
        default=(),
        doc=(
            "Dotted-name globs, as `entries` reads them, of functions that are no entry of "
            "this contract whatever selects them: a contract split where a fact holds for "
            "some entries only keeps its decorators, and excludes those another contract "
            "takes with the fact (`*.KimiDeltaAttention._forward`)."
        ),
    )
    boundary_decorators = StringList(
        default=(),
        doc=(
            "Globs of decorators that mark a function as running outside the entry's "
            "region (`*.eager_on_graph`): a chain does not go into it."
        ),
    )
    boundary_contexts = StringList(
        default=(),
        doc=(
            "Globs of context managers whose `with` block runs outside the entry's region, "
            "spelled as imported (`vllm.utils.gpu_sync_debug.gpu_sync_allowed`: a sync the "
            "engine itself calls deliberate): a chain does not go through a call in it. A "
            "conditional context (`with a() if c else b():`) is one only where both are."
        ),
    )
    forbidden = StringMap(
        doc=(
            "Forbidden calls: a glob matched against a call as spelled, its head resolved "
            "through imports (`torch.cuda.synchronize`, `*.item` for a method of any "
            "receiver), or against the project function it resolves to; each with the "
            "reason the finding prints."
        )
    )
    unless_int_argument = StringMap(
        default=None,
        doc=(
            "A forbidden pattern -> `NAME:POSITION` of an argument whose being a host int makes "
            "its call safe (`*.repeat_interleave` -> `repeats:0`): the position in the method "
            "form `x.repeat_interleave(repeats)`, one more in the function form "
            "`torch.repeat_interleave(x, repeats)`. An int is evident from a literal, `int()`, "
            "`len()`, `.numel()`, `.size(i)`, `.shape[i]`, an `int` annotation, or a local "
            "bound to one."
        ),
    )
    host_receivers = StringList(
        default=(),
        doc=(
            "Globs of names that hold host data (`*_cpu`, `*_np`): a forbidden method called on "
            "one (`query_start_loc_cpu.tolist()`) reads no device, so it is no finding; "
            "declaring any also exempts a name the function has shown is on the host "
            '(after `if x.device.type != "cpu": return`).'
        ),
    )
    unless_keyword = StringMap(
        default=None,
        doc=(
            "A forbidden pattern -> the keyword whose presence makes its call safe "
            "(`*.repeat_interleave` -> `output_size`)."
        ),
    )
    entry_conditions = StringList(
        default=(),
        doc=(
            "What holds whenever an entry runs, each a glob of an attribute as spelled in a "
            "test (`*.is_decoding`: the captured step decodes) or of a parameter's name "
            "(`cu_seqlen_prefill`, in every function the chain enters), its negation (`not "
            "*.is_prefill`), one `is None` or `is not None` (`*.kv_flatten_size is None`), "
            "or one `==` or `!=` a constant, a dotted name's glob or a literal "
            "(`*.attn_state != *.PrefillNoCache`, `*.mode == 'decode'`): a call under a test "
            "of an `if` or a conditional expression that needs the other value (an `and` of "
            "tests, an `or`'s else, past an `if` whose other way returns) is not on an "
            "entry's path; a condition `== <an int>` decides an order against a number too "
            "(`*.num_prefills == 0` rules out `if meta.num_prefills > 0:`, and `if n > 0:` "
            "past `n = meta.num_prefills`). A constant is matched as spelled. A fact that "
            "holds only where another test does (a value passed whenever a mode is on) takes "
            "`when` and a glob of that test as a chain prints it (`counts is not None when "
            "*.data_parallel_size > 1`): it holds on a path that has passed that test, at the "
            "call or at one before it."
        ),
    )

    VALID = (
        Example(
            source=(
                "from atom.backends.builder import CommonBuilder\n"
                "\n"
                "\n"
                "class V4Builder(CommonBuilder):\n"
                "    def prepare_mtp_decode(self, bs):\n"
                '        """Rebuild on the GPU; touch no host staging."""\n'
                '        return {"row_to_seq": self._row_to_seq(bs)}\n'
                "\n"
                "    def _row_to_seq(self, bs):\n"
                "        return self.row_ids[:bs].clone()\n"
                "\n"
                "    def prepare_prefill(self, context_lens):\n"
                "        return self.max_seqlen(context_lens)\n"
            ),
            params=_PARAMS,
            path="atom/backends/v4.py",
            files=_STAGING,
            note=(
                "The refactor's fix: the map is a device copy out of the resident `row_ids`. "
                "A host sync reached only from prefill is no entry's business."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "\n"
                "class MlaBuilder:\n"
                "    def capture_decode(self, ids, lens, total):\n"
                "        rows = torch.repeat_interleave(ids, lens, output_size=total)\n"
                "        return rows, self.pool.stage(rows)\n"
            ),
            params=_PARAMS,
            path="atom/backends/mla.py",
            files=_STAGING,
            note=(
                "`output_size` makes `repeat_interleave` safe; a method of another object "
                "(`self.pool.stage`, never assigned here) is not followed: its class is "
                "not known."
            ),
        ),
        Example(
            source=(
                "class EagleBuilder:\n"
                "    def capture_verify(self, meta, lens):\n"
                "        if meta.is_target_verify:\n"
                "            return self._draft_width(meta.spec_info, lens)\n"
                "        return lens\n"
                "\n"
                "    def _draft_width(self, spec_info, lens):\n"
                "        if spec_info is None:\n"
                "            return int(lens.max().item())\n"
                "        return spec_info.max_len\n"
            ),
            params={
                **_PARAMS,
                "entry-conditions": ["spec_info is not None when *.is_target_verify"],
            },
            path="atom/backends/eagle.py",
            files=_STAGING,
            note=(
                "A verify step always carries its draft: the fact links two values, so it is "
                "declared with `when` and holds on the paths through `meta.is_target_verify`."
            ),
        ),
    )
    INVALID = (
        Example(
            source=(
                "from atom.runner.staging import publish_batch_ids\n"
                "\n"
                "\n"
                "class V4Builder:\n"
                "    def prepare_mtp_decode(self, bs):\n"
                '        """Rebuild on the GPU; touch no host staging."""\n'
                '        return {"row_to_seq": self._row_to_seq(bs)}\n'
                "\n"
                "    def _row_to_seq(self, bs):\n"
                "        return publish_batch_ids(self.row_buffer, self.row_ids[:bs])\n"
            ),
            params=_PARAMS,
            path="atom/backends/v4.py",
            files=_STAGING,
            expect=(
                Expect(
                    "AC821",
                    7,
                    31,
                    "V4Builder.prepare_mtp_decode (atom/backends/v4.py:7) -> V4Builder._row_to_seq"
                    " (atom/backends/v4.py:10) -> `atom.runner.staging.publish_batch_ids()`",
                ),
            ),
            note=(
                "The record's bug: the row -> sequence map routed through `publish_batch_ids`, "
                "a call away from the routine that promises no host staging."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "from atom.backends.builder import CommonBuilder\n"
                "\n"
                "\n"
                "class MlaBuilder(CommonBuilder):\n"
                "    def capture_decode(self, ids, lens):\n"
                "        width = self.max_seqlen(lens)\n"
                "        torch.cuda.synchronize()\n"
                "        return torch.repeat_interleave(ids, lens), width\n"
            ),
            params=_PARAMS,
            path="atom/backends/mla.py",
            files=_STAGING,
            expect=(
                Expect(
                    "AC821",
                    8,
                    17,
                    "-> atom.backends.builder.CommonBuilder.max_seqlen (atom/backends/builder.py:3"
                    ") -> `context_lens.max().item()`",
                ),
                Expect("AC821", 9, 9, "torch.cuda.synchronize"),
                Expect("AC821", 10, 16, "repeat_interleave"),
            ),
            note=(
                "A host sync in a base class's helper, reached through `self.`; a sync and a "
                "`repeat_interleave` without `output_size` in the captured region itself."
            ),
        ),
    )

    def __init__(self, id: str, **params) -> None:
        super().__init__(id, **params)
        self._entry_re = _globs(self.entries, last_component=True)
        self._excluded_re = _globs(self.exclude_entries, last_component=True)
        self._decorator_re = _globs(self.entry_decorators)
        self._class_decorator_re = _globs(self.entry_class_decorators)
        self._boundary_re = _globs(self.boundary_decorators)
        self._contexts_re = _globs(self.boundary_contexts)
        self._forbidden = _Forbidden(
            self.forbidden,
            self.unless_keyword or {},
            self.unless_int_argument or {},
            _globs(self.host_receivers),
        )
        # What `wants` asks of every file of the tree, worked out once.
        self._decorator_runs = [
            _required_runs(p) for p in (*self.entry_decorators, *self.entry_class_decorators)
        ]
        self._entry_runs = [(p, _required_runs(p)) for p in self.entries]
        self._conditions = [
            _Condition(m) for m in map(_CONDITION.fullmatch, self.entry_conditions) if m
        ]
        self._conditional = tuple(
            (index, condition.when)
            for index, condition in enumerate(self._conditions)
            if condition.when is not None
        )

    def validate(self, where: str) -> None:
        if not (self.entries or self.entry_decorators or self.entry_class_decorators):
            raise ConfigError(
                f"{where}: kind `reachable-calls` needs `entries`, `entry-decorators` or "
                "`entry-class-decorators`: without an entry nothing is reached"
            )
        for pattern in self.unless_keyword or {}:
            if pattern not in self.forbidden:
                raise ConfigError(
                    f"{where}: `unless-keyword` names {pattern!r}, which is not in `forbidden`"
                )
        for key, value in (self.unless_int_argument or {}).items():
            name, _, position = value.partition(":")
            if key not in self.forbidden:
                raise ConfigError(
                    f"{where}: `unless-int-argument` names {key!r}, which is not in `forbidden`"
                )
            if not name.isidentifier() or not position.isdigit():
                raise ConfigError(
                    f"{where}: `unless-int-argument.{key}` must be NAME:POSITION "
                    f"(`repeats:0`), got {value!r}"
                )
        for key, value in (self.unless_keyword or {}).items():
            if not value.isidentifier():
                raise ConfigError(
                    f"{where}: `unless-keyword.{key}` must be a keyword name, got {value!r}"
                )
        for text in self.entry_conditions:
            if not _CONDITION.fullmatch(text):
                raise ConfigError(
                    f"{where}: `entry-conditions` item {text!r} is not a glob of an attribute "
                    "or a parameter (`*.is_decoding`, `decoding`), `not` one, one `is None` "
                    "or `is not None`, or one `==` or `!=` a constant (`*.state == *.DECODE`, "
                    "`*.mode != 'prefill'`), optionally followed by `when` and a glob of the "
                    "test, as a chain prints it, under which it holds (`n is not None when "
                    "*.data_parallel_size > 1`)"
                )

    def needles(self) -> tuple[str, ...]:
        needles = [
            _needle(p)
            for p in (*self.entries, *self.entry_decorators, *self.entry_class_decorators)
        ]
        return () if any(n is None for n in needles) else tuple(dict.fromkeys(needles))

    def wants(self, source) -> bool:
        """A file holding an entry spells every literal run of the entry's own name (and of a
        class glob before it: `*Impl.forward` needs `Impl` and `forward`); for an entry named
        by its dotted name, its path can hold a module of that name (a function of
        ``pkg.other`` is no ``pkg.backends.*Impl.forward``, whatever it spells)."""
        text = source.text
        for runs in self._decorator_runs:
            if runs is None or all(r in text for r in runs):
                return True
        for pattern, runs in self._entry_runs:
            if (runs is None or all(r in text for r in runs)) and _may_be_named(
                source.path, pattern
            ):
                return True
        return False

    def wants_project(self, project) -> bool:
        needles = self.needles()
        return not needles or any(project.mentions(n) for n in needles)

    # -- checking ------------------------------------------------------------

    def check(self, source, project) -> Iterator:
        from ..analysis.program import program_of

        program = program_of(project)
        module = program.module_of_source(source)
        if module is None:
            return
        entries = list(self._entries(module))
        for qual, outline, detail in entries:
            for hit in self._search(program, module, qual):
                yield self._finding(source, module, outline, detail, hit)
        if entries:
            # A run over other files asks this file's entries again (`dependent_lines`): the
            # bodies the search walked, kept by the cache, spare it a parse.
            program.store(source)

    def _entries(self, module) -> Iterator[tuple]:
        from ..analysis.functions import O_CLASS, O_DECORATORS, O_QUAL

        prefix = f"{module.name}." if module.name else ""
        marked = set()
        if self._class_decorator_re is not None:
            marked = {
                qual
                for qual, klass in module.classes.items()
                if any(self._class_decorator_re.fullmatch(d) for d in klass[3])
            }
        for outline in module.outlines:
            qual = outline[O_QUAL]
            named = self._entry_re is not None and self._entry_re.fullmatch(prefix + qual)
            decorated = self._decorator_re is not None and any(
                self._decorator_re.fullmatch(d) for d in outline[O_DECORATORS]
            )
            in_marked = (
                outline[O_CLASS] in marked
                and qual == f"{outline[O_CLASS]}.{qual.rpartition('.')[2]}"
                and qual.rpartition(".")[2] in self.entry_methods
            )
            if not (named or decorated or in_marked):
                continue
            if self._excluded_re is not None and self._excluded_re.fullmatch(prefix + qual):
                continue
            yield qual, outline, module.detail(qual)

    def _search(self, program, module, entry: str) -> list[tuple]:
        """Per forbidden call reached, the shortest chain from ``entry`` to it: (pattern,
        hops), each hop ``(module, qual, call)``: the call made in that function, the last one
        forbidden.

        A call that passes a literal for a parameter (``True``, ``None``, ``1``, ``"decode"``),
        or hands on unchanged one its own caller bound, binds it in the callee, whose calls
        under an ``if`` on that parameter that the value rules out are not followed
        (``update(..., use_ragged=False)`` does not take ``if use_ragged:``, ``plan(..., 1)``
        not the ``else`` of ``if page_size == 1:``); so does what the tests around the call
        say of a parameter it hands on (``_bindings``).
        """
        from ..analysis.functions import C_COL, C_LINE

        start = (module.name, entry, frozenset(), frozenset())
        parent: dict[tuple, tuple | None] = {start: None}
        queue = deque([start])
        found: dict[str, list] = {}
        visited = 0
        while queue and visited < _MAX_FUNCTIONS:
            node = queue.popleft()
            visited += 1
            mod = module if node[0] == module.name else program.module(node[0])
            if mod is None:
                continue
            for call, pattern, key in self._edges(program, mod, node):
                if pattern is not None:
                    site = (pattern, mod.name, call[C_LINE], call[C_COL])
                    if site not in found:
                        found[site] = _hops(parent, node, call, mod.path)
                elif key not in parent:
                    parent[key] = (node, call, mod.path)
                    queue.append(key)
        return [(site[0], hops) for site, hops in found.items()]

    def _edges(self, program, mod, node) -> tuple:
        """A function's calls as a search goes through them, in order: ``(call, pattern,
        None)`` for a forbidden call, ``(call, None, node)`` for a project function to enter.

        Made once a run for each function (with the parameters its caller binds) and module
        summary: the entries of a tree share most of what they reach (on vLLM, 1,619
        functions visited by 160 searches are 527 distinct), and the calls of one, their
        callees and their patterns, are the same whichever entry reaches it -- each answer
        here is one the program keeps for ``mod``, so asking again would answer the same.
        """
        from ..analysis.functions import C_GUARDS, C_SPELLING, D_CALLS

        # Kept on the program: a run's program and what it kept go together. (Kept beside it,
        # keyed weakly by it, a module known by its summary in the memo held the program
        # itself, and no program whose searches entered a neighbour was ever let go.)
        memo = vars(program).setdefault("_reachable_edges", {})
        key = (self, mod, node[1], node[2], node[3])
        edges = memo.get(key)
        if edges is not None:
            return edges
        outline, detail = mod.outline(node[1]), mod.detail(node[1])
        if outline is None or detail is None:
            return ()  # not kept: a body not read now may be read later
        bound = dict(node[2])
        made = []
        for call in detail[D_CALLS]:
            held = self._antecedents(call[C_GUARDS], node[3]) if self._conditional else node[3]
            if (bound or self._conditions or self._contexts_re) and any(
                self._off(bound, name, required, held) for name, required in call[C_GUARDS]
            ):
                continue  # under an `if` the caller's values or the entry's conditions rule out
            spelling = call[C_SPELLING]
            pattern = self._forbidden.match(spelling, call)
            if pattern is not None:
                made.append((call, pattern, None))
                continue
            # Every function the call may run, the one it names first: a method an instance
            # attribute or an installed function stands in for is a path too.
            for target, leading in program.may_call(mod, outline, spelling, call):
                pattern = self._forbidden.match(f"{target[0]}.{target[1]}", call)
                if pattern is not None:
                    made.append((call, pattern, None))
                elif not self._boundary(program, target):
                    bindings = _bindings(program, target, spelling, call, leading, bound, outline)
                    made.append((call, None, (*target, bindings, held)))
        edges = memo[key] = tuple(made)
        return edges

    def _antecedents(self, guards, held: frozenset) -> frozenset:
        """The conditions with ``when`` whose test holds for a call: those ``held`` on the way
        to its function, and those whose test one of the call's own guards prints as
        (``_condition``). The callee's calls run on the same path, so it inherits them."""
        return held.union(
            index
            for index, when in self._conditional
            if index not in held
            and any(when.fullmatch(_condition(guard, truth)) for guard, truth in guards)
        )

    def _off(self, bound: dict, guard, required: bool, held: frozenset) -> bool:
        """Whether a call's guard is off the path: ruled out by a value the caller bound
        (``_bound_rules_out``) or by one of the entry's declared conditions (one with
        ``when`` only where its test is ``held``); an ``or``'s guard (its ways,
        ``function_walk``'s ``_holding``) where each of its ways is; a ``with`` block's
        (``CONTEXT``) where ``boundary-contexts`` names its context."""
        if type(guard) is tuple:
            return all(self._off(bound, way, truth, held) for way, truth in guard)
        if guard.startswith(CONTEXT):
            return self._contexts_re is not None and bool(
                self._contexts_re.fullmatch(guard[len(CONTEXT) :])
            )
        if bound and _bound_rules_out(bound, guard, required):
            return True
        return any(
            condition.rules_out(guard, required)
            for index, condition in enumerate(self._conditions)
            if condition.when is None or index in held
        )

    def _boundary(self, program, target) -> bool:
        """Whether ``target`` is declared to run outside the entry's region."""
        if self._boundary_re is None:
            return False
        from ..analysis.functions import O_DECORATORS

        mod = program.module(target[0])
        outline = mod.outline(target[1]) if mod is not None else None
        return outline is not None and any(
            self._boundary_re.fullmatch(d) for d in outline[O_DECORATORS]
        )

    def _finding(self, source, module, outline, detail, hit):
        from ..analysis.functions import C_COL, C_END_COL, C_END_LINE, C_LINE, C_SPELLING

        pattern, hops = hit
        first = hops[0][2]
        line, end_line = first[C_LINE], first[C_END_LINE]
        span = (
            line,
            source.char_column(line, first[C_COL]) + 1,
            end_line,
            source.char_column(end_line, first[C_END_COL]) + 1,
        )
        # Each function with the line where it makes the next call and the tests that call
        # runs under (what a declared condition would rule it out by), then the forbidden call.
        names = [
            f"{qual if mod_name == module.name else f'{mod_name}.{qual}'} ({path}:{call[C_LINE]}"
            f"{_where(call)})"
            for mod_name, qual, call, path in hops
        ]
        names.append(f"`{_spelled(hops[-1][2][C_SPELLING])}`")
        return self.finding(
            source,
            span,
            f"`{hops[0][1]}` is an entry and reaches `{pattern}` "
            f"({self.forbidden[pattern]}): {' -> '.join(names)}",
            span_node=(line, 0, end_line, 0),
        )

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """The entry calls of ``path`` whose chain to a forbidden call runs through an edited
        module, or through a ``self.`` call an edited module's class decides (``_deciding``):
        from the files' summaries (the cache's), parsing only what no summary covers."""
        from ..analysis.functions import C_LINE
        from ..analysis.program import program_of

        name = project.module_name(path)
        if not name or name in edited:
            return {}
        needles = self.needles()
        if needles:
            data = project.read_bytes(path)
            if data is None:
                return {}  # unreadable, or a FIFO or a socket named like a module
            if not any(n.encode() in data for n in needles):
                return {}
        program = program_of(project)
        module = program.module(name)
        if module is None:
            return {}
        lines: dict[int, tuple[str, ...]] = {}
        for qual, _outline, _detail in self._entries(module):
            for _pattern, hops in self._search(program, module, qual):
                deciding = (m for hop in hops for m in _deciding(program, hop))
                through = tuple(dict.fromkeys(edited[m] for m in deciding if m in edited))
                if through:
                    line = hops[0][2][C_LINE]
                    lines[line] = tuple(dict.fromkeys((*lines.get(line, ()), *through)))
        return lines


def _deciding(program, hop) -> Iterator[str]:
    """The modules whose edit may change a hop: its own, and for a call on ``self`` (``self.
    fill(x)``, ``self.pool.carve()``) those of its class and bases, whose methods' assignments
    decide what the attribute holds."""
    from ..analysis.functions import C_SPELLING, O_CLASS

    name, qual, call, _path = hop
    yield name
    if call[C_SPELLING].startswith("self."):
        # A hop's module and outline are the ones its search read (`_edges`).
        klass = program.module(name).outline(qual)[O_CLASS]
        if klass:
            for owner_module, _owner in program.mro(name, klass):
                yield owner_module
