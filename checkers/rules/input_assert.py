"""input-assert: an ``assert`` that validates input rather than state.

ROCm/ATOM's KV-pool refactor (pull request #2147) found four assertions validating
input rather than state:
``max_block`` follows from ``--max-model-len`` and ``--block-size``, and the
two kpool checks read ``--block-size`` against the model's ``index_kpool``.
Under ``python -O`` they vanish, and what each lets through is silent -- a
block id wrapping into the packed top-k's tie-break field, a truncating floor
division, and a layout ``deepgemm_fp8_paged_mqa_logits`` computes wrongly.
They raise ValueError now; in the same change two asserts stayed, because they
state what a draft under PP *is* (built whole on the last stage, split across
none): state the code established itself, where an assert is the right tool.

So the rule cannot be S101's "every assert". It asks where the asserted value
came from, following input where it hides -- a parameter and what is read off
it, an attribute a constructor copied from its arguments or a config (or a
base class's constructor, handed them), the environment, the command line and
process-wide settings, the ``inputs`` names and any ``*_config``, input seen
another way (cast, reshaped, summarised, worked out by arithmetic, parsed,
handed back by the module's own helper or read by its own reader), a record's fields (one the function
built in place too), a private helper's parameter some caller hands input -- and
leaving alone what the code established itself: what the function computed and
its comparison with what it was given, the object's and the module's own
bookkeeping, the per-step records an engine builds, ``assert False`` markers
and tests. ``checkers/analysis/origins.py`` lists every principle; the
examples below show them at work.

Where the letter of "what the function computed" and the intent ("can a
caller make it false?") disagree, the rule follows the intent: ``total =
sum(f.nbytes for f in fields); assert total > 0`` is computed, but a caller
passing empty fields fails it, so it is input; a chunk a loop cuts from an
input (``lens[i : i + 8]``) is still the caller's values. A piece the
function sized from its own count is its own. And a local bound to a call is
computed by the letter, but ``cpu = torch.device("cpu")`` -- a call with
literal arguments alone -- is a constant written down, so ``assert
x.device == cpu`` checks the caller's tensor. Likewise a per-step record is a
parameter of a public method -- input, by the letter -- but no caller builds
one but the engine: the rule follows the intent and calls its fields state.

The same reading settles what a function says of its own values however it
spells it: an assert that holds for any input (``nbytes = prod(shape) * size``
then ``nbytes % size == 0``) states the arithmetic, and ``x is not None`` where
the function set ``x`` to None only when a flag it now tests is off narrows its
own choice; a flag bound to a test of input (``paged = page_size > 1``) is that
test when asserted, and whether the module's own written-down table has an
entry for the caller's key is the key's doing. A caller's ``isinstance`` says
what type the value is, so it settles the helper's type asserts and nothing it
holds.

Measured by hand-labelled samples (``bench/precision.py``,
``docs/precision.md``): on 500 asserts of torch 2.13.0 and the standard
library, 0.90 precision at 0.92 recall, against S101's 0.49; on two engines'
whole packages, drawn stratified and held out while the rule was changed,
0.90 at 0.91 on sglang 0.5.23 and 0.93 at 0.86 on lmdeploy 0.18.0 (S101:
0.74, 0.82), on a second pair of held-out draws 0.97 at 0.88 and 0.84
at 0.86 (S101: 0.70, 0.72), on a third 0.93 at 0.80 and 0.86 at 0.91
(S101: 0.85, 0.77), on a fourth 0.85 at 0.88 and 0.93 at 0.83 (S101: 0.67,
0.77), on a fifth 0.88 at 0.96 and 0.87 at 0.96 (S101: 0.75, 0.83), on a
sixth 0.77 at 1.00 and 0.82 at 0.91 (S101: 0.55, 0.73), on a seventh 0.64
at 0.94 and 0.83 at 0.85 (S101: 0.53, 0.78), and on an eighth 0.88 at 0.90
and 0.83 at 0.85 (S101: 0.65, 0.78), and on a ninth 0.73 at 0.89 and
0.91 at 0.89 (S101: 0.60, 0.75; a second reader of that pair agrees with
the first on 0.85 and 0.83 of its asserts, and with the splits settled by
the labelling policy the rule gives 0.59 at 0.87 and 0.68 at 0.86). On a
tenth, labelled under a written policy that the package's callers decide
(two readers agree on 0.90 and 0.98), it gives 0.42 at 0.91 and 0.50 at
0.77 (S101: 0.35, 0.51). The earlier draws' labels read the letter: read
again blind under that policy, a random 78 of them give 0.40 where their
first labels give 0.90. What it gets wrong is mostly what only the whole
program knows: a parameter every caller in another module builds or checks
first, an invariant one of the engine's components hands another, what a
file or a URL yields. The rule reads one module, so for a public function
it follows the letter (its parameter is the caller's) where those labels
follow the callers.

With ``package-callers`` (off by default) it asks the callers: a module-level
function's parameter every call in the package fills with a literal, the
default, a value it tested, or a buffer it allocated (for an assert of the
buffer's form; of its sizes, when they are the caller's own too) is the
callers' own, and a caller handing on its own parameter is asked of its
callers in turn, up to ``CALLER_LEVELS`` levels (the field says how many;
``checkers/analysis/package_callers.py``).
On the draws labelled by the callers that settles 12 false alarms for 2 true
findings lost; on the draws labelled before, a blind reading under the same
policy sides with 66 of the 76 verdicts it changes; what it costs, the field
says (docs/precision.md, "The package's callers, asked", and "The caller
policy, read a third time").
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator

from contracts.contract import Contract, Example, Expect, Rule
from contracts.fields import Bool, StringList

# How far up `package-callers` follows a parameter: the function's callers, and where one
# hands on its own parameter, that caller's callers. On the draws read under the caller
# policy the second level settled 4 more false alarms and lost no true finding, and of the
# 14 earlier letter-labelled findings it drops, a blind reading under the policy called 11
# state; it costs about an eighth more than one level on vLLM (docs/precision.md).
CALLER_LEVELS = 2

# checkers.analysis is imported where a tree is analysed, not here: a warm one-file
# run loads this kind for its declaration and never checks a tree (~3 ms of imports).

RULES = (
    Rule(
        code="AC301",
        name="input-assert",
        what=(
            "Flags an `assert` whose condition reads input: a parameter of the enclosing "
            "function (directly or through attributes, items and loops over it), an "
            "attribute `__init__` copied from an argument or a config, a value read from "
            "the environment or the command line, a configured `inputs` name or any "
            "`*_config` (and what a function makes of one alone), or a record's fields. "
            "An `assert False` is read by the tests that lead to it. Asserts on values the "
            "code computed itself, on the class's own bookkeeping and protocol, `assert False` "
            "markers the code's own values reach, and tests are left alone."
        ),
        why=(
            "`python -O` strips every assert. An assert on state the code established "
            "documents an invariant and costs nothing when stripped; an assert on input "
            "is the only thing between a bad argument and what it corrupts, and under "
            "`-O` that value goes through silently (ROCm/ATOM's KV-pool refactor found one: a block "
            "id wrapping into a packed field, a truncating division). Raise "
            "`ValueError`/`TypeError` naming the value instead."
        ),
        fix_safety=(
            "The fix rewrites `assert cond, msg` to `if not (cond): raise ValueError(msg)` "
            "(`TypeError` for an `isinstance`/`issubclass` condition), keeping the message, "
            "or naming the condition when there is none; an `assert False, msg` ending a "
            "branch becomes `raise ValueError(msg)` in its place (the message naming the test "
            "that led there when there is none). It is unsafe: the check now runs "
            "under `python -O` too, where it used to be stripped, and callers that catch "
            "`AssertionError` stop catching it. A message it writes is quoted the way most of "
            "the file's strings are (double quotes in a tie), and the rewrite is laid out as "
            "ruff's formatter lays it out at the project's line length "
            "(`checkers/fix_layout.py`), so `ruff format` leaves it alone "
            '(docs/reliability.md, "Fixes the formatter leaves alone", says where it cannot '
            "and what was measured)."
        ),
    ),
)


_DEFAULT_INPUTS = ("args", "config", "hf_config", "server_args")


class InputAssert(Contract):
    KIND = "input-assert"
    RULES = RULES

    inputs = StringList(
        default=_DEFAULT_INPUTS,
        doc=(
            "Names that are input wherever they appear (a parsed command line, a model "
            "config): an assert reading one is flagged even where it is a global or a "
            "local. Default: `args`, `config`, `hf_config`."
        ),
    )
    package_callers = Bool(
        default=False,
        doc=(
            "Read a module-level function's parameter from its callers in the whole "
            "package: when every call of the function found in the src roots hands it a "
            "literal, its default, a value the caller tested, or one it built (for an "
            "assert of more than the value's type, rank, layout, dtype or device: built "
            "from nothing the caller was handed), an assert on it restates the callers and "
            "is left alone; a caller that hands on its own parameter is asked of its own "
            f"callers in turn, {CALLER_LEVELS} levels in all; when some reference to the "
            "function is not a call (a callback, a registered op) the parameter stays input. "
            "Costs about "
            "three times the run on vLLM (0.9 GB a worker). Off, one module is read, and a "
            "public function's parameter is the caller's. On, findings depend on other "
            "files, so they are re-checked when any file changes. Default: false."
        ),
    )

    # With package callers read, a finding depends on other files' calls (see the field).
    IMPORT_SUMMARIES = False

    @property
    def CACHEABLE(self) -> bool:
        return not self.package_callers

    VALID = (
        Example(
            source=(
                "def carve(buffer, sizes):\n"
                "    if len(buffer) < sum(sizes):\n"
                "        raise ValueError(f'buffer of {len(buffer)} bytes is too short')\n"
                "    total = sum(sizes)\n"
                "    offsets = [0]\n"
                "    for s in sizes:\n"
                "        offsets.append(offsets[-1] + s)\n"
                "    assert offsets[-1] == total\n"
                "    return offsets\n"
            ),
            note="The assert states what the function computed itself: an invariant.",
        ),
        Example(
            source=(
                "class Pool:\n"
                "    def __init__(self, entries):\n"
                "        if entries <= 0:\n"
                "            raise ValueError(f'entries must be positive, got {entries}')\n"
                "        self.free = list(range(entries))\n"
                "        self.used = 0\n"
                "\n"
                "    def take(self):\n"
                "        self.used += 1\n"
                "        assert self.used <= len(self.free) + self.used\n"
                "        return self.free.pop()\n"
            ),
            note="The class's own bookkeeping, maintained outside `__init__`.",
        ),
        Example(
            source=(
                "def shard(groups):\n"
                "    groups = guard_int(groups)\n"
                "    assert isinstance(groups, int)\n"
                "    return groups\n"
                "\n"
                "def first_fit(sizes, need):\n"
                "    for i, size in enumerate(sizes):\n"
                "        if size >= need:\n"
                "            return i\n"
                "    assert False, 'the pool keeps an entry of every size'\n"
                "\n"
                "def step(sched):\n"
                "    phase = plan_phase(sched)\n"
                "    if phase == 'prefill':\n"
                "        return 1\n"
                "    assert False, f'unreachable: {phase}'\n"
            ),
            note=(
                "Narrowing a name the function re-bound; `assert False` markers: past a loop, "
                "and past a test of a value the function computed."
            ),
        ),
        Example(
            source=(
                "def _ratio(block, scheduler_block):\n"
                "    assert scheduler_block % block == 0\n"
                "    return scheduler_block // block\n"
                "\n"
                "def blocks_per_entry(layout):\n"
                "    return _ratio(attn_block_size(layout), page_tokens(layout))\n"
            ),
            note="A private helper whose only caller passes values it computed.",
        ),
        Example(
            source=(
                "class Ring:\n"
                "    def __init__(self, table, store, rank):\n"
                "        self.table = table\n"
                "        self.store = store\n"
                "        self.rank = rank\n"
                "        self.name = 'ring'\n"
                "        self._pending = set()\n"
                "\n"
                "    def run(self):\n"
                "        if self.rank == 0:\n"
                "            self._serve()\n"
                "        else:\n"
                "            self._forward()\n"
                "\n"
                "    def _forward(self):\n"
                "        assert self.rank > 0\n"
                "\n"
                "    def advance(self, kind, lens):\n"
                "        assert kind not in self._pending\n"
                "        assert self.store.table is self.table\n"
                "        assert self.store.offset_of(self.name) == 0\n"
                "        n = lens[0].item()\n"
                "        assert isinstance(n, int)\n"
            ),
            note=(
                "What the object keeps: a method its caller chose for the value, a "
                "parameter against its private bookkeeping, two of its attributes kept "
                "one, a collaborator asked about the object itself, a conversion narrowed."
            ),
        ),
        Example(
            source=(
                "_current_config = None\n"
                "\n"
                "def set_current_config(model_config):\n"
                "    global _current_config\n"
                "    _current_config = model_config\n"
                "\n"
                "def get_current_config():\n"
                "    assert _current_config is not None, 'set it first'\n"
                "    return _current_config\n"
                "\n"
                "class Model:\n"
                "    def __init__(self, layers):\n"
                "        self.layers = layers\n"
                "\n"
                "    def forward(self, x):\n"
                "        self.layers.prepare(x)\n"
                "        assert self.layers.ready is not None\n"
            ),
            note=(
                "A global the module's own setter assigns; what a collaborator holds after "
                "the function asked it to prepare."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "class Cache:\n"
                "    def __init__(self, size):\n"
                "        self.buffer = torch.empty(size)\n"
                "        self.nodes = {}\n"
                "\n"
                "    def insert(self, node, forward_batch, attn_metadata):\n"
                "        assert node.id not in self.nodes\n"
                "        self.nodes[node.id] = node\n"
                "        assert forward_batch.extend_prefix_lens is not None\n"
                "        assert attn_metadata.decode is not None\n"
                "        assert len(forward_batch.seq_lens) <= self.buffer.shape[0]\n"
            ),
            note=(
                "A table the object fills as it runs; the per-step records the engine "
                "builds; a count against a buffer the object allocated."
            ),
        ),
        Example(
            source=(
                "def attend(qkv, q_size, kv_size, head_dim, weight, out_features):\n"
                "    q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)\n"
                "    assert q.shape[-1] == head_dim\n"
                "    y = q @ weight\n"
                "    assert y.shape[-1] == out_features\n"
                "    if head_dim > 64:\n"
                "        z = quant_a(y)\n"
                "    else:\n"
                "        z = quant_b(y)\n"
                "    assert z.shape[-1] == out_features\n"
                "    return z\n"
            ),
            note="Pieces it sized, a product, a result every branch computed: postconditions.",
        ),
        Example(
            source=(
                "class VisionModel:\n"
                "    def forward(self, positions, forward_batch):\n"
                "        if self.is_mrope_enabled:\n"
                "            positions = forward_batch.mrope_positions\n"
                "        if forward_batch.has_images:\n"
                "            if self.is_mrope_enabled:\n"
                "                assert positions.ndim == 2\n"
            ),
            note=(
                "Re-bound under the same test of the object's own flag that the assert "
                "sits under: only that binding reaches it, and it reads the per-step record."
            ),
        ),
        Example(
            source=(
                "def reshape(old_size, new_size, dense_dim=None):\n"
                "    reorder = dense_dim is not None and len(new_size) == 1\n"
                "    if reorder:\n"
                "        assert dense_dim is not None  # for the type checker\n"
                "        old_size = [*old_size[:dense_dim], *old_size[dense_dim + 1 :]]\n"
            ),
            note="Restating the test of the `if` it sits in: it cannot fail.",
        ),
        Example(
            source=(
                "class DraftHead:\n"
                "    def forward(self, input_ids, inputs_embeds=None):\n"
                "        if inputs_embeds is None:\n"
                "            inputs_embeds = self.embed_tokens(input_ids)\n"
                "        assert inputs_embeds is not None\n"
                "        return self.norm(inputs_embeds)\n"
            ),
            note=(
                "Past the function's own filling of a None: the caller's value is not None "
                "or the branch ran, so only the fill can fail the assert."
            ),
        ),
        Example(
            source=(
                "def _tp_group(tp):\n"
                "    assert tp > 1\n"
                "    return list(range(tp))\n"
                "\n"
                "def build(config):\n"
                "    tp = config.tp\n"
                "    if tp == 1:\n"
                "        return None\n"
                "    return _tp_group(tp)\n"
            ),
            note=(
                "A private helper whose every caller tested the value and left on the "
                "case it handles itself: the assert restates the caller's test."
            ),
        ),
        Example(
            source=(
                "def lora_moe(topk_weights, shared_outer):\n"
                "    collapsed = topk_weights[:, :1] if shared_outer else None\n"
                "    if shared_outer:\n"
                "        assert collapsed is not None\n"
                "        return collapsed.sum()\n"
            ),
            note=(
                "A local the function set to None exactly when a flag is off, asserted "
                "where the flag is on: the type checker's narrowing of its own choice."
            ),
        ),
        Example(
            source=(
                "def conv_views(shapes, dtype):\n"
                "    itemsize = dtype.itemsize\n"
                "    for shape in shapes:\n"
                "        nbytes = prod(shape) * itemsize\n"
                "        assert nbytes % itemsize == 0\n"
            ),
            note=(
                "A product asserted divisible by one of its own factors: true whatever the "
                "caller passed, the function's arithmetic restated."
            ),
        ),
        Example(
            source=("def test_carve(pool):\n    assert pool.carve(8) == 8\n"),
            path="tests/test_pool.py",
            note="A test's assert is the test, not input validation.",
        ),
        Example(
            source=(
                "def silu_and_mul(gate_up, out):\n"
                "    assert gate_up.dim() == 2 and out.is_contiguous()\n"
                "    return out\n"
            ),
            path="pkg/kernels.py",
            files={
                "pkg/__init__.py": "",
                "pkg/moe.py": (
                    "import torch\n"
                    "from pkg.kernels import silu_and_mul\n"
                    "\n"
                    "def experts(tokens, width):\n"
                    "    gate_up = torch.empty(tokens, 2 * width)\n"
                    "    out = torch.empty(tokens, width)\n"
                    "    return silu_and_mul(gate_up, out)\n"
                ),
            },
            params={"package-callers": True},
            note=(
                "With `package-callers`, a module-level function's parameter is read from "
                "its calls in the package: every call hands it buffers the caller allocated, "
                "so the assert restates the callers."
            ),
        ),
    )
    INVALID = (
        Example(
            source=(
                "class VisionModel:\n"
                "    def __init__(self, hf_config):\n"
                "        self.hf_config = hf_config\n"
                "\n"
                "    def build(self):\n"
                "        self.arch = self.hf_config.architectures[0]\n"
                '        assert self.arch in ("LlavaLlamaForCausalLM", "LlavaMistralForCausalLM")\n'
            ),
            expect=(Expect("AC301", 7, 16, "hf_config"),),
            fixed=(
                "class VisionModel:\n"
                "    def __init__(self, hf_config):\n"
                "        self.hf_config = hf_config\n"
                "\n"
                "    def build(self):\n"
                "        self.arch = self.hf_config.architectures[0]\n"
                '        if not (self.arch in ("LlavaLlamaForCausalLM", "LlavaMistralForCausalLM")):\n'
                "            raise ValueError(\n"
                '                \'expected self.arch in ("LlavaLlamaForCausalLM", '
                '"LlavaMistralForCausalLM")\'\n'
                "            )\n"
            ),
            unsafe=True,
            note=(
                "An attribute the function itself stored on the way to the assert holds what "
                "it stored -- here the architecture the model's config names -- whatever the "
                "class's constructor does with it."
            ),
        ),
        Example(
            source=(
                "class Linear:\n"
                "    def __init__(self, quant_config, prefix):\n"
                "        self.quant_method = quant_config.get_quant_method(self, prefix)\n"
                "\n"
                "    def forward(self, x):\n"
                "        assert self.quant_method is not None\n"
                "        return self.quant_method.apply(self, x)\n"
            ),
            expect=(Expect("AC301", 6, 16, "get_quant_method"),),
            fixed=(
                "class Linear:\n"
                "    def __init__(self, quant_config, prefix):\n"
                "        self.quant_method = quant_config.get_quant_method(self, prefix)\n"
                "\n"
                "    def forward(self, x):\n"
                "        if not (self.quant_method is not None):\n"
                '            raise ValueError("expected self.quant_method is not None")\n'
                "        return self.quant_method.apply(self, x)\n"
            ),
            unsafe=True,
            note=(
                "What a configuration answers when asked (`get_*`, `is_*`, `has_*`, `use_*`, "
                "`supports_*`) is configuration, whatever of the caller's the question names: "
                "here, the quantization method it chose for this layer, None where it has none."
            ),
        ),
        Example(
            source=(
                "def role_prefix(message):\n"
                '    role = message["role"]\n'
                '    if role == "user":\n'
                '        return "User: "\n'
                '    elif role == "assistant":\n'
                '        return "Assistant: "\n'
                "    else:\n"
                '        assert False, f"unsupported role {role}"\n'
                "\n"
                "def page_tokens(kind):\n"
                '    if kind == "mla":\n'
                "        return 64\n"
                "    assert False\n"
            ),
            expect=(
                Expect("AC301", 8, 16, "message"),
                Expect("AC301", 13, 12, "kind"),
            ),
            fixed=(
                "def role_prefix(message):\n"
                '    role = message["role"]\n'
                '    if role == "user":\n'
                '        return "User: "\n'
                '    elif role == "assistant":\n'
                '        return "Assistant: "\n'
                "    else:\n"
                '        raise ValueError(f"unsupported role {role}")\n'
                "\n"
                "def page_tokens(kind):\n"
                '    if kind == "mla":\n'
                "        return 64\n"
                "    raise ValueError('expected kind == \"mla\"')\n"
            ),
            unsafe=True,
            note=(
                "`assert False` ending a branch input chooses: each test that leads to it (an "
                "`else:`, an `if ...: return` before it) is read like an assert's condition, "
                "and under `python -O` an unsupported value falls through. The fix raises in "
                "its place, keeping the message or naming the test that failed."
            ),
        ),
        Example(
            source=(
                "def max_block(max_model_len, block_size):\n"
                "    assert max_model_len % block_size == 0, 'block size must divide the length'\n"
                "    return max_model_len // block_size\n"
            ),
            expect=(Expect("AC301", 2, 12, "max_model_len"),),
            fixed=(
                "def max_block(max_model_len, block_size):\n"
                "    if not (max_model_len % block_size == 0):\n"
                "        raise ValueError('block size must divide the length')\n"
                "    return max_model_len // block_size\n"
            ),
            unsafe=True,
            note="The refactor's case: a parameter's precondition. The fix keeps the message.",
        ),
        Example(
            source=(
                "def max_block(max_model_len, block_size):\n"
                "    assert max_model_len % block_size == 0; # the engine's block\n"
                "    return max_model_len // block_size\n"
            ),
            expect=(Expect("AC301", 2, 12, "max_model_len"),),
            note=(
                "No fix where the assert shares its line, even with only a `;` and a comment "
                "after it: an `if` block cannot follow the `;`."
            ),
        ),
        Example(
            source=(
                "class KPool:\n"
                "    def __init__(self, config):\n"
                "        self.block_size = config.block_size\n"
                "\n"
                "    def layout(self, index_kpool):\n"
                "        assert isinstance(index_kpool, int)\n"
                "        assert self.block_size % 64 == 0\n"
                "        return index_kpool\n"
            ),
            params={"inputs": ["hf_config"]},
            expect=(
                Expect("AC301", 6, 16, "index_kpool"),
                Expect("AC301", 7, 16, "copied in `__init__`"),
            ),
            fixed=(
                "class KPool:\n"
                "    def __init__(self, config):\n"
                "        self.block_size = config.block_size\n"
                "\n"
                "    def layout(self, index_kpool):\n"
                "        if not (isinstance(index_kpool, int)):\n"
                '            raise TypeError("expected isinstance(index_kpool, int)")\n'
                "        if not (self.block_size % 64 == 0):\n"
                '            raise ValueError("expected self.block_size % 64 == 0")\n'
                "        return index_kpool\n"
            ),
            unsafe=True,
            note=(
                "An attribute copied from the constructor's config, asserted later; an "
                "`isinstance` check raises TypeError. With no message, one names the condition."
            ),
        ),
        Example(
            source=(
                "import os\n"
                "\n"
                "BLOCK = int(os.environ.get('ATOM_BLOCK', '16'))\n"
                "\n"
                "def _check(rows):\n"
                "    assert rows.size(0) % BLOCK == 0\n"
                "\n"
                "def bind(rows):\n"
                "    _check(rows)\n"
            ),
            expect=(Expect("AC301", 6, 12, "rows"),),
            fixed=(
                "import os\n"
                "\n"
                "BLOCK = int(os.environ.get('ATOM_BLOCK', '16'))\n"
                "\n"
                "def _check(rows):\n"
                "    if not (rows.size(0) % BLOCK == 0):\n"
                "        raise ValueError('expected rows.size(0) % BLOCK == 0')\n"
                "\n"
                "def bind(rows):\n"
                "    _check(rows)\n"
            ),
            unsafe=True,
            note="A private helper handed a public function's argument unchanged.",
        ),
        Example(
            source=(
                "def _tp_group(tp):\n"
                "    assert tp > 1\n"
                "    return list(range(tp))\n"
                "\n"
                "def build(config):\n"
                "    tp = config.tp\n"
                "    assert tp > 1, tp\n"
                "    return _tp_group(tp)\n"
            ),
            expect=(Expect("AC301", 7, 12, "config"),),
            fixed=(
                "def _tp_group(tp):\n"
                "    assert tp > 1\n"
                "    return list(range(tp))\n"
                "\n"
                "def build(config):\n"
                "    tp = config.tp\n"
                "    if not (tp > 1):\n"
                "        raise ValueError(tp)\n"
                "    return _tp_group(tp)\n"
            ),
            unsafe=True,
            note=(
                "The caller's assert is the check to keep; the private helper's restates "
                "it, as it restates an `if ...: raise` in its place."
            ),
        ),
        Example(
            source=(
                "import os\n"
                "\n"
                "WORKERS = os.getenv('ATOM_WORKERS')\n"
                "assert WORKERS is None or WORKERS.isdigit(), WORKERS\n"
                "\n"
                "def plan(args):\n"
                "    for size in args.sizes:\n"
                "        if size: assert size > 0\n"
            ),
            expect=(
                Expect("AC301", 4, 8, "environment"),
                Expect("AC301", 8, 25, "args"),
            ),
            fixed=(
                "import os\n"
                "\n"
                "WORKERS = os.getenv('ATOM_WORKERS')\n"
                "if not (WORKERS is None or WORKERS.isdigit()):\n"
                "    raise ValueError(WORKERS)\n"
                "\n"
                "def plan(args):\n"
                "    for size in args.sizes:\n"
                "        if size: assert size > 0\n"
            ),
            unsafe=True,
            note=(
                "A global read from the environment; an element of a loop over `args`. "
                "An assert sharing its line with an `if` gets no fix."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "class Attention:\n"
                "    def __init__(self, layer):\n"
                "        self.block = layer.quant_config.block\n"
                "\n"
                "    def pick(self, server_args):\n"
                "        assert self.block % 64 == 0\n"
                "        assert uses_paged_kv(server_args)\n"
                "\n"
                "def stage(items, rows, heads, steps):\n"
                "    grid = torch.cat([item.grid for item in items])\n"
                "    assert grid.dim() == 2\n"
                "    expected = heads * steps\n"
                "    assert rows.shape[0] == expected\n"
            ),
            expect=(
                Expect("AC301", 8, 16, "quant_config"),
                Expect("AC301", 9, 16, "server_args"),
                Expect("AC301", 13, 12, "items"),
                Expect("AC301", 15, 12, "rows"),
            ),
            fixed=(
                "import torch\n"
                "\n"
                "class Attention:\n"
                "    def __init__(self, layer):\n"
                "        self.block = layer.quant_config.block\n"
                "\n"
                "    def pick(self, server_args):\n"
                "        if not (self.block % 64 == 0):\n"
                '            raise ValueError("expected self.block % 64 == 0")\n'
                "        if not (uses_paged_kv(server_args)):\n"
                '            raise ValueError("expected uses_paged_kv(server_args)")\n'
                "\n"
                "def stage(items, rows, heads, steps):\n"
                "    grid = torch.cat([item.grid for item in items])\n"
                "    if not (grid.dim() == 2):\n"
                '        raise ValueError("expected grid.dim() == 2")\n'
                "    expected = heads * steps\n"
                "    if not (rows.shape[0] == expected):\n"
                '        raise ValueError("expected rows.shape[0] == expected")\n'
            ),
            unsafe=True,
            note=(
                "Input where an engine hides it: a `*_config` copied in `__init__`, what a "
                "function makes of `server_args`, a concatenation of the items' tensors, "
                "a size worked out from parameters by arithmetic."
            ),
        ),
        Example(
            source=(
                "from engine.context import get_parallel, is_hip\n"
                "\n"
                "_is_hip = is_hip()\n"
                "\n"
                "def plan(n):\n"
                "    assert get_parallel().attn_dcp_size == 1\n"
                "    if n > 1:\n"
                "        return n\n"
                "    assert _is_hip\n"
            ),
            expect=(
                Expect("AC301", 6, 12, "get_parallel()"),
                Expect("AC301", 9, 12, "platform"),
            ),
            fixed=(
                "from engine.context import get_parallel, is_hip\n"
                "\n"
                "_is_hip = is_hip()\n"
                "\n"
                "def plan(n):\n"
                "    if not (get_parallel().attn_dcp_size == 1):\n"
                '        raise ValueError("expected get_parallel().attn_dcp_size == 1")\n'
                "    if n > 1:\n"
                "        return n\n"
                "    if not (_is_hip):\n"
                '        raise ValueError("expected _is_hip")\n'
            ),
            unsafe=True,
            note="The configuration and the platform, read through another module's accessors.",
        ),
        Example(
            source=(
                "from .base import BaseEncoder, BaseRunner\n"
                "\n"
                "class XRunner(BaseRunner):\n"
                "    def __init__(self, model_runner):\n"
                "        super().__init__(model_runner)\n"
                "        assert not self.enable_two_batch_overlap\n"
                "\n"
                "class XEncoder(BaseEncoder):\n"
                "    def encode(self, text):\n"
                "        assert self.errors is not None\n"
            ),
            expect=(
                Expect("AC301", 6, 16, "BaseRunner.__init__"),
                Expect("AC301", 10, 16, "BaseEncoder.__init__"),
            ),
            fixed=(
                "from .base import BaseEncoder, BaseRunner\n"
                "\n"
                "class XRunner(BaseRunner):\n"
                "    def __init__(self, model_runner):\n"
                "        super().__init__(model_runner)\n"
                "        if not (not self.enable_two_batch_overlap):\n"
                '            raise ValueError("expected not self.enable_two_batch_overlap")\n'
                "\n"
                "class XEncoder(BaseEncoder):\n"
                "    def encode(self, text):\n"
                "        if not (self.errors is not None):\n"
                '            raise ValueError("expected self.errors is not None")\n'
            ),
            unsafe=True,
            note=(
                "Never assigned here: the base class of another module set it from the "
                "arguments the constructor handed it, or, with no constructor of its own, "
                "every argument."
            ),
        ),
        Example(
            source=(
                "def plan(sizes, lens, mask, args, line):\n"
                '    mo = re.match(r"(\\d+) blocks", line)\n'
                "    assert mo\n"
                "    ordered = sorted(sizes)\n"
                "    assert ordered[0] > 0\n"
                "    longest = lens.max(dim=0).values\n"
                "    assert longest.item() < 8192\n"
                "    has_mask = mask is not None\n"
                "    assert has_mask\n"
                "    engine = Engine.from_engine_args(args)\n"
                "    assert engine.block_size % 16 == 0\n"
            ),
            expect=(
                Expect("AC301", 3, 12, "parsed by `re.match`"),
                Expect("AC301", 5, 12, "sizes"),
                Expect("AC301", 7, 12, "lens"),
                Expect("AC301", 9, 12, "mask"),
                Expect("AC301", 11, 12, "from_engine_args"),
            ),
            fixed=(
                "def plan(sizes, lens, mask, args, line):\n"
                '    mo = re.match(r"(\\d+) blocks", line)\n'
                "    if not (mo):\n"
                '        raise ValueError("expected mo")\n'
                "    ordered = sorted(sizes)\n"
                "    if not (ordered[0] > 0):\n"
                '        raise ValueError("expected ordered[0] > 0")\n'
                "    longest = lens.max(dim=0).values\n"
                "    if not (longest.item() < 8192):\n"
                '        raise ValueError("expected longest.item() < 8192")\n'
                "    has_mask = mask is not None\n"
                "    if not (has_mask):\n"
                '        raise ValueError("expected has_mask")\n'
                "    engine = Engine.from_engine_args(args)\n"
                "    if not (engine.block_size % 16 == 0):\n"
                '        raise ValueError("expected engine.block_size % 16 == 0")\n'
            ),
            unsafe=True,
            note=(
                "The input read and summarised: a regex match of the caller's line, a "
                "reordering, a reduction, whether an optional argument came, an object a "
                "factory builds from the arguments alone."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "def new_pages(seq_lens, extra):\n"
                '    cpu = torch.device("cpu")\n'
                "    assert seq_lens.device == cpu\n"
                '    allowed = set(("out_shape", "fake_impl"))\n'
                "    assert allowed >= set(extra)\n"
            ),
            expect=(
                Expect("AC301", 5, 12, "seq_lens"),
                Expect("AC301", 7, 12, "extra"),
            ),
            fixed=(
                "import torch\n"
                "\n"
                "def new_pages(seq_lens, extra):\n"
                '    cpu = torch.device("cpu")\n'
                "    if not (seq_lens.device == cpu):\n"
                '        raise ValueError("expected seq_lens.device == cpu")\n'
                '    allowed = set(("out_shape", "fake_impl"))\n'
                "    if not (allowed >= set(extra)):\n"
                '        raise ValueError("expected allowed >= set(extra)")\n'
            ),
            unsafe=True,
            note=(
                "Input against a constant the function wrote down: a call with literal "
                "arguments alone is the same value on every call, not a computation."
            ),
        ),
        Example(
            source=(
                "def pad_to(n, multiple=64):\n"
                "    return (n + multiple - 1) // multiple * multiple\n"
                "\n"
                "class Embedding:\n"
                "    def __init__(self, vocab, added):\n"
                "        self.vocab = vocab\n"
                "        self.padded = pad_to(self.vocab)\n"
                "        self.total = pad_to(self.padded + added)\n"
                "        assert self.padded <= self.total\n"
            ),
            expect=(Expect("AC301", 9, 16, "handed back by `pad_to`"),),
            fixed=(
                "def pad_to(n, multiple=64):\n"
                "    return (n + multiple - 1) // multiple * multiple\n"
                "\n"
                "class Embedding:\n"
                "    def __init__(self, vocab, added):\n"
                "        self.vocab = vocab\n"
                "        self.padded = pad_to(self.vocab)\n"
                "        self.total = pad_to(self.padded + added)\n"
                "        if not (self.padded <= self.total):\n"
                '            raise ValueError("expected self.padded <= self.total")\n'
            ),
            unsafe=True,
            note=(
                "What the module's own helper hands back of the constructor's copies: "
                "`pad_to` returns nothing but its arguments worked out, so the padded "
                "sizes are the caller's, rounded."
            ),
        ),
        Example(
            source=(
                "def _read_until(index, text, stop):\n"
                "    end = text.find(stop, index)\n"
                "    if end == -1:\n"
                "        return len(text), text[index:], None\n"
                "    return end + len(stop), text[index:end], stop\n"
                "\n"
                "def parse_reply(text):\n"
                "    index, body, stop = _read_until(0, text, '</think>')\n"
                "    assert stop is not None\n"
            ),
            expect=(Expect("AC301", 9, 12, "read by `_read_until`"),),
            fixed=(
                "def _read_until(index, text, stop):\n"
                "    end = text.find(stop, index)\n"
                "    if end == -1:\n"
                "        return len(text), text[index:], None\n"
                "    return end + len(stop), text[index:end], stop\n"
                "\n"
                "def parse_reply(text):\n"
                "    index, body, stop = _read_until(0, text, '</think>')\n"
                "    if not (stop is not None):\n"
                "        raise ValueError('expected stop is not None')\n"
            ),
            unsafe=True,
            note=(
                "What the module's own reader hands back of the caller's text: it reads "
                "nothing but what it is handed and returns pieces of `text`, so what comes "
                "back is that text read."
            ),
        ),
        Example(
            source=(
                "import vllm.envs as envs\n"
                "\n"
                "def init_executor():\n"
                "    assert not envs.VLLM_ENABLE_V1_MULTIPROCESSING\n"
            ),
            expect=(Expect("AC301", 4, 12, "the environment variables the engine reads"),),
            fixed=(
                "import vllm.envs as envs\n"
                "\n"
                "def init_executor():\n"
                "    if not (not envs.VLLM_ENABLE_V1_MULTIPROCESSING):\n"
                '        raise ValueError("expected not envs.VLLM_ENABLE_V1_MULTIPROCESSING")\n'
            ),
            unsafe=True,
            note=(
                "An engine's `envs` module holds its environment variables: what is read "
                "off it is the environment, as `os.environ` is."
            ),
        ),
        Example(
            source=(
                "def attend(q, k):\n"
                "    shape = AttentionShape(heads=q.shape[1], kv_heads=k.shape[1])\n"
                "    assert shape.heads % shape.kv_heads == 0\n"
            ),
            expect=(Expect("AC301", 3, 12, "parameter `q`"),),
            fixed=(
                "def attend(q, k):\n"
                "    shape = AttentionShape(heads=q.shape[1], kv_heads=k.shape[1])\n"
                "    if not (shape.heads % shape.kv_heads == 0):\n"
                '        raise ValueError("expected shape.heads % shape.kv_heads == 0")\n'
            ),
            unsafe=True,
            note=(
                "A field of a record the function built in place holds what it was "
                "handed by that name: here the caller's head counts."
            ),
        ),
        Example(
            source=(
                "class DraftHead:\n"
                "    def forward(self, input_ids, inputs_embeds=None):\n"
                "        if inputs_embeds is None:\n"
                "            inputs_embeds = self.embed_tokens(input_ids)\n"
                "        assert inputs_embeds.shape[-1] == 1024\n"
            ),
            expect=(Expect("AC301", 5, 16, "inputs_embeds"),),
            fixed=(
                "class DraftHead:\n"
                "    def forward(self, input_ids, inputs_embeds=None):\n"
                "        if inputs_embeds is None:\n"
                "            inputs_embeds = self.embed_tokens(input_ids)\n"
                "        if not (inputs_embeds.shape[-1] == 1024):\n"
                '            raise ValueError("expected inputs_embeds.shape[-1] == 1024")\n'
            ),
            unsafe=True,
            note=(
                "Past the function's filling of a None, anything else asked of the value "
                "is asked of what the caller passed, when it passed one."
            ),
        ),
        Example(
            source=(
                "def fused_moe(hidden_states, scale):\n"
                "    if isinstance(hidden_states, Tensor):\n"
                "        hidden_states = hidden_states.contiguous()\n"
                "        quant, scales = quantize(hidden_states, scale)\n"
                "    else:\n"
                "        assert isinstance(hidden_states, QTensor)\n"
                "        quant, scales = hidden_states.tensor, hidden_states.scale\n"
                "    return quant, scales\n"
            ),
            expect=(Expect("AC301", 6, 16, "hidden_states"),),
            fixed=(
                "def fused_moe(hidden_states, scale):\n"
                "    if isinstance(hidden_states, Tensor):\n"
                "        hidden_states = hidden_states.contiguous()\n"
                "        quant, scales = quantize(hidden_states, scale)\n"
                "    else:\n"
                "        if not (isinstance(hidden_states, QTensor)):\n"
                '            raise TypeError("expected isinstance(hidden_states, QTensor)")\n'
                "        quant, scales = hidden_states.tensor, hidden_states.scale\n"
                "    return quant, scales\n"
            ),
            unsafe=True,
            note=(
                "A parameter re-bound in one branch of an `if` is unchanged in the other: "
                "there the type check is of what the caller passed."
            ),
        ),
        Example(
            source=(
                "import torch\n"
                "\n"
                "def smooth_quant(model, w_bits=8, quant_dtype='int8'):\n"
                "    quant_dtype = getattr(torch, quant_dtype, torch.int8)\n"
                "    info = torch.iinfo(quant_dtype)\n"
                "    assert info.bits == w_bits\n"
            ),
            expect=(Expect("AC301", 6, 12, "quant_dtype"),),
            fixed=(
                "import torch\n"
                "\n"
                "def smooth_quant(model, w_bits=8, quant_dtype='int8'):\n"
                "    quant_dtype = getattr(torch, quant_dtype, torch.int8)\n"
                "    info = torch.iinfo(quant_dtype)\n"
                "    if not (info.bits == w_bits):\n"
                "        raise ValueError('expected info.bits == w_bits')\n"
            ),
            unsafe=True,
            note=(
                "The facts of a dtype (`torch.finfo`, `torch.iinfo`) are that dtype seen "
                "another way, as `type(x)` is: here the bits of the dtype the caller named, "
                "against the bits it asked for."
            ),
        ),
        Example(
            source=(
                "_SCORING = {'sigmoid': 0, 'softmax': 1}\n"
                "\n"
                "def fused_gate(scores, scoring_func='sigmoid'):\n"
                "    code = _SCORING.get(scoring_func.lower())\n"
                "    assert code is not None, f'unknown scoring_func {scoring_func}'\n"
                "    return route(scores, code)\n"
            ),
            expect=(Expect("AC301", 5, 12, "scoring_func"),),
            fixed=(
                "_SCORING = {'sigmoid': 0, 'softmax': 1}\n"
                "\n"
                "def fused_gate(scores, scoring_func='sigmoid'):\n"
                "    code = _SCORING.get(scoring_func.lower())\n"
                "    if not (code is not None):\n"
                "        raise ValueError(f'unknown scoring_func {scoring_func}')\n"
                "    return route(scores, code)\n"
            ),
            unsafe=True,
            note=(
                "An entry of a table the module wrote down, looked up with the caller's "
                "key: whether there is one is the caller's choice of key."
            ),
        ),
        Example(
            source=(
                "def page_metadata(page_table, real_table, page_size):\n"
                "    paged = page_size > 1\n"
                "    if page_table is None:\n"
                "        assert paged, 'page_table may be None only when paged'\n"
                "        page_table = real_table\n"
                "    return page_table\n"
            ),
            expect=(Expect("AC301", 4, 16, "page_size"),),
            fixed=(
                "def page_metadata(page_table, real_table, page_size):\n"
                "    paged = page_size > 1\n"
                "    if page_table is None:\n"
                "        if not (paged):\n"
                "            raise ValueError('page_table may be None only when paged')\n"
                "        page_table = real_table\n"
                "    return page_table\n"
            ),
            unsafe=True,
            note=(
                "A flag bound to a test of the caller's value against a constant is that "
                "test spelled once: asserting it checks the caller's `page_size`."
            ),
        ),
        Example(
            source=(
                "def _split(tensors):\n"
                "    assert isinstance(tensors, dict)\n"
                "    for key in tensors:\n"
                "        assert '%' not in key, 'the separator of nested keys'\n"
                "\n"
                "def send(tensors):\n"
                "    if not isinstance(tensors, dict):\n"
                "        raise TypeError(f'expected a dict, got {type(tensors)}')\n"
                "    return _split(tensors)\n"
            ),
            expect=(Expect("AC301", 4, 16, "tensors"),),
            fixed=(
                "def _split(tensors):\n"
                "    assert isinstance(tensors, dict)\n"
                "    for key in tensors:\n"
                "        if not ('%' not in key):\n"
                "            raise ValueError('the separator of nested keys')\n"
                "\n"
                "def send(tensors):\n"
                "    if not isinstance(tensors, dict):\n"
                "        raise TypeError(f'expected a dict, got {type(tensors)}')\n"
                "    return _split(tensors)\n"
            ),
            unsafe=True,
            note=(
                "A caller's type test settles the helper's type asserts (restated, not "
                "flagged), not what the value holds: the keys are still the caller's."
            ),
        ),
        Example(
            source=(
                "def silu_and_mul(gate_up, out):\n    assert gate_up.dim() == 2\n    return out\n"
            ),
            path="pkg/kernels.py",
            files={
                "pkg/__init__.py": "",
                "pkg/moe.py": (
                    "import torch\n"
                    "from pkg import kernels\n"
                    "\n"
                    "def experts(tokens, width):\n"
                    "    return kernels.silu_and_mul(torch.empty(tokens, 2 * width), None)\n"
                    "\n"
                    "def shared(gate_up):\n"
                    "    return kernels.silu_and_mul(gate_up, None)\n"
                ),
            },
            params={"package-callers": True},
            expect=(Expect("AC301", 2, 12, "gate_up"),),
            fixed=(
                "def silu_and_mul(gate_up, out):\n"
                "    if not (gate_up.dim() == 2):\n"
                '        raise ValueError("expected gate_up.dim() == 2")\n'
                "    return out\n"
            ),
            unsafe=True,
            note=(
                "With `package-callers`, one call in the package that hands on its own "
                "caller's value (`shared`'s `gate_up`) is enough: the parameter is input."
            ),
        ),
    )

    def wants(self, source) -> bool:
        from ..analysis.asserts import TEST_FILE, has_assert_statement

        # A test file first, by its path: its asserts are the test, and the
        # linter parses whatever a contract wants, so deciding this in `check`
        # paid a parse of every test file with an assert for nothing. Then the
        # statement test, which starts from each "assert" in the text: three
        # files in four hold none at all.
        if TEST_FILE.search(source.path):
            return False
        return has_assert_statement(source.text)

    def check(self, source, project) -> Iterator:
        from ..analysis.asserts import TEST_FILE, exception_for, fix, is_test_function
        from ..analysis.names import source_segment
        from ..analysis.origins import InputOrigins

        if TEST_FILE.search(source.path):
            return
        tree = source.tree
        if tree is None:
            return
        module = InputOrigins(tree, frozenset(self.inputs), source)
        if self.package_callers and project is not None:
            module.package = _package_callers(source, project, frozenset(self.inputs))
        for node in module.asserts:
            if isinstance(node.test, ast.Constant) and node.test.value:
                continue  # `assert True`, `assert "note"`: nothing checked
            func = module.scope_at(node)
            if is_test_function(func):
                continue
            if isinstance(node.test, ast.Constant):
                # `assert False, msg` checks the branch that reaches it.
                chosen = module.branch_input(node, func)
                if chosen is None:
                    continue  # a marker: the code's own values lead there, if anything
                origin, test, failed = chosen
                branch = (test, failed)
                said = f"`assert {source_segment(source, node.test)}` ends a branch input chooses"
                goes = "goes on silently"
            else:
                origin = module.reads_input(node.test, func, node)
                if origin is None:
                    continue
                test, branch = node.test, None
                said, goes = "`assert` validates input", "goes through silently"
            exc = exception_for(test)
            yield self.finding(
                source,
                node.test,
                f"{said} ({origin.what}); `python -O` strips it and the bad value {goes}: "
                f"raise {exc} naming the value instead",
                span_node=node,
                fix=fix(source, node, exc, branch=branch),
            )

    def dependent_lines(self, path, project, edited) -> dict[int, tuple[str, ...]]:
        """With ``package-callers``, the asserts of ``path``'s module-level functions whose
        name an edited module spells, or a module one of its functions calls spells, as
        many levels up as callers are asked: the edit may have added, removed or changed
        a call on the way.

        Asked of every file in scope, so the text decides first: a file with no ``assert``,
        or none of whose ``def``s at column 0 a reaching file names, is answered without
        its outline; the rest take the function spans from it (the cache's, or a parse)."""
        if not self.package_callers:
            return {}
        from ..analysis.functions import O_END, O_LINE, O_QUAL
        from ..analysis.imports import lines_mentioning
        from ..analysis.program import MODULE_DEF, program_of

        name = project.module_name(path)
        if not name or name in edited:
            return {}
        data = project.read_bytes(path)
        if data is None or b"assert" not in data:
            return {}
        reaching_files = self._reaching_files(project, edited)
        reaching = {}
        for fname in dict.fromkeys(MODULE_DEF.findall(data)):
            word = re.compile(rb"\b" + re.escape(fname) + rb"\b")
            found = tuple(
                dict.fromkeys(
                    rel
                    for text, rels in reaching_files.values()
                    if word.search(text)
                    for rel in rels
                )
            )
            if found:
                reaching[fname.decode()] = found
        module = program_of(project).module(name) if reaching else None
        if module is None:
            return {}
        asserts = lines_mentioning(data.decode("utf-8", "replace"), ("assert",))
        lines: dict[int, tuple[str, ...]] = {}
        for outline in module.outlines:
            found = reaching.get(outline[O_QUAL])  # a method's or a nested one's is dotted
            if found is not None:
                for number in asserts:
                    if outline[O_LINE] <= number <= outline[O_END]:
                        lines[number] = found
        return lines

    def _reaching_files(self, project, edited) -> dict[str, tuple[bytes, tuple[str, ...]]]:
        """The text whose calls an edit can change an answer through, by file, each with the
        edited files it traces to: the edited files whole, then ``CALLER_LEVELS - 1`` times over
        the bodies of the module-level functions that text names (their calls are a level
        further from the edit). Worked out once per edited set, as its files' stats stand."""
        from ..analysis.program import WORD_BYTES, program_of

        key = (id(project), CALLER_LEVELS, tuple(sorted(edited.values())))
        memo = self.__dict__.get("_reaching")
        if memo is not None and memo[0] == key and _unchanged(project, memo[1], memo[2]):
            return memo[1]  # the same edit, and no file it reached has changed since
        found: dict[str, tuple[bytes, tuple[str, ...]]] = {}
        for rel in edited.values():
            data = project.read_bytes(rel)
            if data is not None:
                found[rel] = (data, (rel,))
        frontier = found
        seen: set[tuple[str, bytes]] = set()
        lines_of: dict[str, list[bytes] | None] = {}  # a defining file read once, not per name
        program = program_of(project)
        for _ in range(CALLER_LEVELS - 1):
            further: dict[str, tuple[bytes, tuple[str, ...]]] = {}
            for text, rels in frontier.values():
                for word in set(text.translate(WORD_BYTES).split()):
                    for defining in program.modules_defining(word.decode("ascii", "replace")):
                        if (defining, word) in seen:
                            continue
                        seen.add((defining, word))
                        body = _module_function_text(
                            program, project, defining, word.decode(), lines_of
                        )
                        if body is None:
                            continue
                        held_text, held_rels = further.get(defining, (b"", ()))
                        further[defining] = (
                            held_text + b"\n" + body,
                            tuple(dict.fromkeys(held_rels + rels)),
                        )
            for rel, (text, rels) in further.items():
                held_text, held_rels = found.get(rel, (b"", ()))
                found[rel] = (held_text + b"\n" + text, tuple(dict.fromkeys(held_rels + rels)))
            frontier = further
        self.__dict__["_reaching"] = (key, found, _stamps(project, found))
        return found


def _stamps(project, rels) -> tuple:
    """Each file's (size, mtime) as the listing proves them (``listing._stat``: an mtime too
    recent to prove anything is unprovable, and a file gone is ``(None, None)``)."""
    from ..listing import _stat

    return tuple(_stat(os.path.join(project.root, rel)) for rel in rels)


def _unchanged(project, rels, stamps) -> bool:
    """Whether the files ``stamps`` was taken of are provably as they were then: a file
    written within one mtime tick of the stamp could have changed at its size unseen."""
    from ..listing import _UNPROVABLE

    return all(s[1] != _UNPROVABLE for s in stamps) and stamps == _stamps(project, rels)


def _module_function_text(
    program, project, rel: str, fname: str, lines_of: dict[str, list[bytes] | None]
) -> bytes | None:
    """The lines of ``rel``'s module-level function ``fname``, from ``def`` to its end (the
    module's outline), or None when the module has no such function. ``lines_of`` keeps each
    file's lines as first read, for the other names asked of it."""
    from ..analysis.functions import O_END, O_LINE, O_QUAL

    name = project.module_name(rel)
    module = program.module(name) if name else None
    if module is None:
        return None
    for outline in module.outlines:
        if outline[O_QUAL] == fname:
            if rel not in lines_of:
                data = project.read_bytes(rel)
                lines_of[rel] = None if data is None else data.splitlines()
            lines = lines_of[rel]
            if lines is None:
                return None
            return b"\n".join(lines[outline[O_LINE] - 1 : outline[O_END]])
    return None


def _package_callers(source, project, inputs: frozenset[str]):
    """The package's callers of the module's functions, for the analysis (None where the
    file is no module of the project)."""
    from ..analysis import package_callers
    from ..analysis.program import program_of

    name = source.module_name or project.module_name(source.path)
    program = program_of(project)
    summary = program.module_of_source(source)
    if not name or summary is None:
        return None
    return package_callers.PackageCallers(program, name, summary, inputs, CALLER_LEVELS)
