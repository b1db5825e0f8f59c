"""input-assert (AC301): where the asserted value came from decides, not that it is an assert."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from checkers.rules.input_assert import InputAssert
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import apply_fixes, run_rule


def check(source: str, params=None, path: str = "pkg/module.py"):
    return run_rule(InputAssert, source, params, path=path)


def lines(source: str, params=None, path: str = "pkg/module.py") -> list[int]:
    return [f.line for f in check(source, params, path)]


# -- the kind's own examples ---------------------------------------------------


@pytest.mark.parametrize(
    "example", [e for e in InputAssert.INVALID if e.fixed], ids=lambda e: e.note[:50]
)
def test_fix_gives_the_documented_text_parses_and_is_stable(example):
    found = check(example.source, example.params, example.path)
    fixed = apply_fixes(example.source, found)
    assert fixed == example.fixed
    ast.parse(fixed)
    assert all(f.fix is None or f.fix.applicability == "unsafe" for f in found) and example.unsafe
    again = apply_fixes(fixed, check(fixed, example.params, example.path))
    assert again == fixed


# -- where input comes from ------------------------------------------------------


def test_parameter_read_through_attributes_items_and_loops():
    src = (
        "def bind(layout, rows):\n"
        "    for row in rows.values():\n"
        "        assert row.shape[0] == layout.entries\n"
        "    first, *_ = rows\n"
        "    assert first is not None\n"
    )
    assert lines(src) == [3, 5]


def test_local_computed_from_a_parameter_is_the_functions_own_value():
    src = (
        "def price(fields):\n"
        "    total = layout_bytes(fields)\n"
        "    assert total > 0\n"
        "    aligned = round_up(total, 256)\n"
        "    assert aligned % 256 == 0\n"
    )
    assert lines(src) == []


def test_a_reduction_of_input_alone_is_input():
    # A caller passing no fields, or unsorted sizes, makes each false: what a
    # builtin or a tensor method reduces the input to is that input summarised.
    src = (
        "def price(fields, sizes, lens):\n"
        "    total = sum(f.nbytes for f in fields)\n"
        "    assert total > 0\n"
        "    ordered = sorted(sizes)\n"
        "    assert ordered[0] > 0\n"
        "    longest = lens.max(dim=0).values\n"
        "    assert longest.item() < 8192\n"
        "    dims = [s[0] * s[1] for s in sizes]\n"
        "    assert all(d % 16 == 0 for d in dims)\n"
    )
    assert lines(src) == [3, 5, 7, 9]


def test_comparing_a_result_against_the_argument_is_a_postcondition():
    src = (
        "def regroup(nodes):\n"
        "    out = group(nodes)\n"
        "    assert len(out) == len(nodes)\n"
        "    return out\n"
    )
    assert lines(src) == []


def test_renormalised_parameter_is_still_the_callers_value():
    src = (
        "def permute(x, dims):\n"
        "    dims = normalize_dims(dims)\n"
        "    assert sorted(dims) == list(range(len(dims)))\n"
    )
    assert lines(src) == [3]


def test_isinstance_after_the_function_normalised_the_parameter_is_narrowing():
    src = (
        "def register(ops):\n"
        "    if not isinstance(ops, (list, tuple)):\n"
        "        ops = [ops]\n"
        "    assert isinstance(ops, (list, tuple))\n"
        "\n"
        "def take(ops):\n"
        "    assert isinstance(ops, (list, tuple))\n"
    )
    assert lines(src) == [7]


def test_the_other_branchs_type_test_of_an_unchanged_parameter_is_input():
    src = (
        "def forward(x, y, z, rows):\n"
        "    if isinstance(x, Tensor):\n"
        "        x = x.contiguous()\n"
        "    else:\n"
        "        assert isinstance(x, QTensor)\n"
        "    if isinstance(y, Tensor):\n"
        "        pass\n"
        "    elif isinstance(y, list):\n"
        "        y = stack(y)\n"
        "    else:\n"
        "        assert isinstance(y, QTensor)\n"
        "    if isinstance(z, list):\n"
        "        z = stack(z)\n"
        "    else:\n"
        "        z = z.contiguous()\n"
        "    assert isinstance(z, Tensor)\n"
        "    for row in rows:\n"
        "        if isinstance(row, Tensor):\n"
        "            rows = [rows]\n"
        "        else:\n"
        "            assert isinstance(rows, list)\n"
        "\n"
        "def later(w, flag):\n"
        "    if isinstance(w, list):\n"
        "        w = stack(w)\n"
        "    if flag:\n"
        "        assert isinstance(w, Tensor)\n"
    )
    # Input: the `else` of a test whose branch re-binds the parameter sees the
    # caller's value (5), also past an `elif` (11). Narrowing: past an `if` whose
    # branches both re-bind it (16), in a loop, where the branch's binding reaches
    # the `else` on the next pass (21), and under a later `if`, which the earlier
    # one's binding reaches (27).
    assert lines(src) == [5, 11]


def test_the_facts_of_a_dtype_a_parameter_names_are_input():
    src = (
        "import torch\n"
        "import numpy as np\n"
        "def smooth(w_bits, quant_dtype, x):\n"
        "    if quant_dtype == 'fp8':\n"
        "        quant_dtype = 'float8_e4m3fn'\n"
        "    quant_dtype = getattr(torch, quant_dtype, torch.int8)\n"
        "    if quant_dtype.is_floating_point:\n"
        "        info = torch.finfo(quant_dtype)\n"
        "    else:\n"
        "        info = torch.iinfo(quant_dtype)\n"
        "    assert info.bits == w_bits\n"
        "    limits = np.iinfo(x.dtype)\n"
        "    assert limits.max >= w_bits\n"
        "    y = quantize(x)\n"
        "    own = torch.finfo(y.dtype)\n"
        "    assert own.bits == w_bits\n"
    )
    # Input: the bits of the dtype the caller named, by name (11) or by its tensor's
    # dtype (13), against another parameter. Not: the facts of the dtype of the
    # function's own result, against what it was given (16: a postcondition).
    assert lines(src) == [11, 13]


def test_constructor_copies_are_input_until_the_class_reassigns_them():
    src = (
        "class Pool:\n"
        "    def __init__(self, config, entries):\n"
        "        self.block = config.block_size\n"
        "        self.entries = entries\n"
        "        self.used = 0\n"
        "\n"
        "    def grow(self):\n"
        "        self.entries += 1\n"
        "\n"
        "    def check(self):\n"
        "        assert self.block % 16 == 0\n"
        "        assert self.entries > 0\n"
        "        assert self.used >= 0\n"
    )
    assert lines(src, {"inputs": ["hf_config"]}) == [11]


def test_dataclass_fields_and_same_module_base_classes():
    src = (
        "from dataclasses import dataclass\n"
        "\n"
        "@dataclass\n"
        "class Field:\n"
        "    rows: int\n"
        "\n"
        "    def __post_init__(self):\n"
        "        assert self.rows > 0\n"
        "\n"
        "class Base:\n"
        "    def __init__(self, nodes):\n"
        "        self.nodes = nodes\n"
        "\n"
        "class Child(Base):\n"
        "    def render(self):\n"
        "        assert len(self.nodes) == 2\n"
    )
    assert lines(src) == [8, 16]


def test_collaborators_tables_and_private_fields_are_its_state():
    src = (
        "class Node:\n"
        "    def __init__(self, scheduler, buf):\n"
        "        self.scheduler = scheduler\n"
        "        self.buf = buf\n"
        "\n"
        "    def decide(self, name):\n"
        "        entry = self.scheduler.name_to_buf[name]\n"
        "        assert entry.users is not None\n"
        "        assert not self.buf._closed\n"
    )
    assert lines(src) == []


def test_environment_and_command_line_at_module_level_and_in_functions():
    src = (
        "import os, sys, argparse\n"
        "\n"
        "BLOCK = int(os.environ.get('BLOCK', '16'))\n"
        "opts = argparse.ArgumentParser().parse_args()\n"
        "\n"
        "def plan():\n"
        "    devices = [int(d) for d in os.environ['CUDA_VISIBLE_DEVICES'].split(',')]\n"
        "    assert len(devices) <= 8\n"
        "    assert BLOCK % 16 == 0\n"
        "    assert opts.workers > 0\n"
        "    assert len(sys.argv) > 1\n"
    )
    assert lines(src) == [8, 9, 10, 11]


def test_inputs_names_are_input_wherever_they_appear_unless_rebound():
    src = (
        "from torch._inductor import config\n"
        "\n"
        "def launch(kernel):\n"
        "    assert config.static_launcher\n"
        "\n"
        "class DeviceCopy:\n"
        "    def codegen(self):\n"
        "        args = self.codegen_args()\n"
        "        assert len(args) == 2\n"
        "\n"
        "def cfg_only():\n"
        "    assert cfg.block_size == 16\n"
    )
    # `args` re-bound to the object's own value is not the parsed command line.
    assert lines(src) == [4]
    assert lines(src, {"inputs": ["cfg"]}) == [12]


def test_private_helper_counts_only_when_a_caller_passes_input():
    src = (
        "def _ratio(block, page):\n"
        "    assert page % block == 0\n"
        "\n"
        "def _check(rows):\n"
        "    assert rows > 0\n"
        "\n"
        "def _unused(x):\n"
        "    assert x > 0\n"
        "\n"
        "def entry(layout, rows):\n"
        "    _ratio(backend_block(layout), page_tokens(layout))\n"
        "    [_check(r) for r in rows]\n"
    )
    # _unused is called from elsewhere (or nowhere): its callers are not visible.
    assert lines(src) == [5, 8]


def test_nested_helper_and_recursion():
    src = (
        "def walk(tree):\n"
        "    def visit(node):\n"
        "        assert node.kind in KINDS\n"
        "        for child in node.children:\n"
        "            visit(child)\n"
        "    visit(tree.root)\n"
        "\n"
        "def fold(tree):\n"
        "    def visit(node):\n"
        "        assert node.kind in KINDS\n"
        "    visit(make_root())\n"
    )
    assert lines(src) == [3]


def test_a_list_the_function_fills_is_its_own():
    src = (
        "def offsets(index, n, bounds):\n"
        "    new_index = list(index[:n])\n"
        "    for idx, low in zip(index[n:], bounds):\n"
        "        new_index.append(idx - low)\n"
        "    assert len(new_index) == len(index)\n"
    )
    assert lines(src) == []


def test_assigned_only_after_the_assert_unless_a_loop_comes_back():
    src = (
        "def race(coro_fns):\n"
        "    winner = None\n"
        "    assert winner is None\n"
        "    for i, fn in enumerate(coro_fns):\n"
        "        winner = fn\n"
        "\n"
        "def drain(items):\n"
        "    current = None\n"
        "    for item in items:\n"
        "        assert current is None or current < item\n"
        "        current = item\n"
    )
    assert lines(src) == [10]


def test_a_binding_after_the_assert_does_not_decide_what_it_read():
    # The parameter is what the assert reads; the constant bound on the next line is not.
    src = "def scale(x):\n    assert x > 0\n    x = 1\n    return x\n"
    assert lines(src) == [2]


def test_markers_tests_and_test_files_are_left_alone():
    src = (
        "def pick(kind):\n"
        "    assert False, f'unreachable {kind}'\n"
        "\n"
        "def test_pick(kind):\n"
        "    assert pick(kind) == 1\n"
        "\n"
        "class TestPick:\n"
        "    def check(self, kind):\n"
        "        assert kind\n"
    )
    assert lines(src) == []
    assert lines("def helper(x):\n    assert x\n", path="tests/helpers.py") == []
    assert lines("def helper(x):\n    assert x\n", path="pkg/test_pool.py") == []
    assert lines("def helper(x):\n    assert x\n", path="pkg/conftest.py") == []


# -- messages, anchors and fixes ---------------------------------------------------


def test_anchor_is_the_test_expression_and_span_is_the_statement():
    src = "def f(x):\n    assert (\n        x > 0\n    ), 'x must be positive'\n"
    (found,) = check(src)
    assert (found.line, found.column, found.end_line, found.end_column) == (3, 9, 3, 14)
    assert found.span_lines == (2, 4)
    assert "parameter `x` of `f`" in found.message
    assert "ValueError" in found.message


def test_columns_count_characters_not_bytes():
    src = "def f(größe):\n    s = 'ü'; assert größe > 0\n"
    (found,) = check(src)
    # 4 spaces + "s = 'ü'; " (9 characters, 10 bytes) + "assert " (7) = 20 before it.
    assert (found.line, found.column) == (2, 21)
    assert found.fix is None  # shares its line with another statement


def test_fix_keeps_a_multiline_condition_and_message():
    src = (
        "def f(x, y):\n"
        "    assert (\n"
        "        x == y\n"
        "    ), f'{x} != {y}'  # why\n"
        "    assert (x and\n"
        "            y)\n"
        "    return x\n"
    )
    fixed = apply_fixes(src, check(src))
    assert fixed == (
        "def f(x, y):\n"
        "    if not (x == y):\n"
        "        raise ValueError(f'{x} != {y}')  # why\n"
        # Joined, as the formatter joins it (checkers/fix_layout.py).
        "    if not (x and y):\n"
        "        raise ValueError('expected x and y')\n"
        "    return x\n"
    )
    ast.parse(fixed)


def test_fix_raises_type_error_for_type_checks():
    src = "def f(x):\n    assert not isinstance(x, str)\n    assert issubclass(x, int), x\n"
    fixed = apply_fixes(src, check(src))
    assert fixed == (
        "def f(x):\n"
        "    if not (not isinstance(x, str)):\n"
        '        raise TypeError("expected not isinstance(x, str)")\n'
        "    if not (issubclass(x, int)):\n"
        "        raise TypeError(x)\n"
    )


def test_pre_filter_skips_files_with_only_unittest_asserts():
    contract = InputAssert.from_table({"id": "t"}, "t")
    assert not contract.wants(SourceFile("a.py", "self.assertEqual(a, b)\nassert_called()\n"))
    assert contract.wants(SourceFile("a.py", "x = 1; assert x\n"))
    assert contract.wants(SourceFile("a.py", "if x: assert y\n"))
    assert contract.wants(SourceFile("a.py", "def f():\n\tassert y\n"))


def test_unparsable_file_yields_nothing():
    assert check("def f(x:\n    assert x\n") == []


def test_inputs_must_be_a_list_of_names():
    with pytest.raises(ConfigError, match="inputs"):
        InputAssert.from_table({"id": "t", "inputs": "args"}, "contract `t`")


def test_a_helper_restating_its_callers_type_test_is_not_validating():
    src = (
        "def _cmp(a, b):\n"
        "    assert isinstance(b, Date)\n"
        "\n"
        "def _scale(a, b):\n"
        "    assert b.shape[0] == 4\n"
        "\n"
        "def eq(a, b):\n"
        "    if isinstance(b, Date):\n"
        "        return _cmp(a, b) == 0\n"
        "    if b is not None:\n"
        "        return _scale(a, b)\n"
    )
    # `is not None` says nothing about b's shape: that helper still validates input.
    assert lines(src) == [5]


def test_a_counter_the_function_moves_is_its_own():
    src = (
        "def translate(pat):\n"
        "    i, n = 0, len(pat)\n"
        "    while i < n:\n"
        "        i = i + 1\n"
        "    assert i == n\n"
        "    assert n > 0\n"
    )
    assert lines(src) == [6]


# -- where an engine hides input ------------------------------------------------


def test_config_names_are_input_wherever_they_are_kept():
    src = (
        "class Runner:\n"
        "    def __init__(self, model):\n"
        "        self.model = model\n"
        "\n"
        "    def plan(self, batch):\n"
        "        assert self.model.model_config.page_size > 1\n"
        "        assert self.runner_config.top_k is not None\n"
        "        assert batch.args is not None\n"
        "\n"
        "def launch(opts):\n"
        "    server_args = opts.server_args\n"
        "    assert server_args.tp_size > 0\n"
    )
    # `.args` is not a config: FX nodes, AST calls and exceptions all carry one;
    # `batch` is a parameter of a public method, so line 8 is flagged for it.
    assert lines(src) == [6, 7, 8, 12]
    assert "runner_config" in check(src)[1].message


def test_what_a_function_makes_of_a_config_alone_is_input():
    src = (
        "def check(server_args, ids):\n"
        "    prefill, decode = backends_of(resolved(server_args))\n"
        "    assert decode in ('fa3', 'triton')\n"
        "    assert uses_mla(server_args)\n"
        "    top_k = first_attr(self_config(), ('top_k', 'k'))\n"
        "    positions = rope_index(ids.cpu(), hf_config=server_args.hf)\n"
        "    out = positions.squeeze(1)\n"
        "    assert out.shape[-1] == 3\n"
    )
    # Line 8: a function of data and a config computes something new.
    assert lines(src) == [3, 4]


def test_tensor_views_casts_and_concatenations_of_input_are_input():
    src = (
        "import torch\n"
        "\n"
        "def embed(items, device):\n"
        "    crops = items[0].crops.unsqueeze(0).type(torch.half).to(device=device)\n"
        "    assert crops.dim() == 6\n"
        "    grid = torch.cat([item.grid for item in items], dim=0)\n"
        "    assert grid.dim() == 2\n"
        "    key = items[0].name.rsplit('.', 2)[0].replace('a', 'b')\n"
        "    assert key.endswith('.proj')\n"
    )
    assert lines(src) == [5, 7, 9]


def test_arithmetic_over_parameters_is_input_not_a_computation():
    src = (
        "def slots(loc, batch, topk, steps):\n"
        "    expected = batch * topk * steps\n"
        "    assert loc.shape[0] == expected\n"
        "\n"
        "def regroup(nodes):\n"
        "    out = group(nodes)\n"
        "    n = len(out) + 0\n"
        "    assert n == len(nodes)\n"
    )
    # Line 8: `n` is arithmetic over what the function computed: a postcondition.
    assert lines(src) == [3]


def test_records_of_every_kind_pass_their_fields_and_properties_as_input():
    src = (
        "from pydantic import BaseModel\n"
        "import msgspec\n"
        "\n"
        "class Scales(BaseModel):\n"
        "    factors: dict\n"
        "\n"
        "    def check(self, tp):\n"
        "        assert len(self.factors) == 4\n"
        "\n"
        "class Shard(msgspec.Struct):\n"
        "    start: int\n"
        "    end: int\n"
        "\n"
        "    @property\n"
        "    def size(self):\n"
        "        return self.end - self.start\n"
        "\n"
        "    def width(self):\n"
        "        return self.size\n"
        "\n"
        "    def validate(self):\n"
        "        assert self.size >= 0\n"
        "        assert self.width() > 0\n"
    )
    assert lines(src) == [8, 22, 23]


def test_a_conversions_result_narrowed_is_the_functions_own():
    src = (
        "def lens(batch):\n"
        "    for i in range(batch.size):\n"
        "        n = batch.lens_cpu[i].item()\n"
        "        assert isinstance(n, int)\n"
        "    m = batch.lens_cpu\n"
        "    assert isinstance(m, list)\n"
    )
    assert lines(src) == [6]


def test_the_objects_own_protocol_is_state():
    src = (
        "class Tree:\n"
        "    def __init__(self, pool, table, rank):\n"
        "        self.pool = pool\n"
        "        self.table = table\n"
        "        self.rank = rank\n"
        "        self.name = 'tree'\n"
        "        self._pending = {}\n"
        "\n"
        "    def step(self, kind):\n"
        "        assert kind not in self._pending\n"
        "        assert kind not in self.table\n"
        "        assert self.pool.table is self.table\n"
        "        assert self.pool.anchor(self.name) == 0\n"
        "        assert self.pool.anchor(kind) == 0\n"
    )
    # Line 11: a public table copied from the constructor is input; line 14 asks
    # the collaborator about the caller's value.
    assert lines(src) == [11, 14]


def test_a_private_method_its_callers_chose_for_the_value_restates_it():
    src = (
        "class Loop:\n"
        "    def __init__(self, rank):\n"
        "        self.rank = rank\n"
        "\n"
        "    def run(self):\n"
        "        if self.rank == 0:\n"
        "            self._recv()\n"
        "        else:\n"
        "            self._send()\n"
        "        self._drain()\n"
        "\n"
        "    def _send(self):\n"
        "        assert self.rank > 0\n"
        "\n"
        "    def _drain(self):\n"
        "        assert self.rank >= 0\n"
    )
    assert lines(src) == [16]


def test_loading_the_kind_imports_no_analysis():
    """A warm one-file run loads the kind for its declaration and may check no tree: the scope
    analysis (checkers.analysis) is imported where a tree is analysed, not with the kind.

    A fresh interpreter, run from this checkout's root so it imports this tree's modules.
    """
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys, checkers.linter\n"
        "from checkers.rules import kind_class\n"
        "kind_class('input-assert')\n"
        "print(sorted(m for m in sys.modules if m.startswith('checkers.analysis')))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["[]"]


def test_whether_the_caller_passed_a_value_and_what_it_picks_are_input():
    src = (
        "def f(x, mask, bidirectional, hidden, args):\n"
        "    has_mask = mask is not None\n"
        "    assert has_mask\n"
        "    width = (2 if bidirectional else 1) * hidden\n"
        "    assert width <= 4096\n"
        "    engine = Engine.from_engine_args(args)\n"
        "    assert engine.block_size % 16 == 0\n"
        "    fields = x.split(',')\n"
        "    assert len(fields) == 3\n"
    )
    # A string's fields are the caller's too (`split` with a separator).
    assert lines(src) == [3, 5, 7, 9]


def test_pieces_and_products_the_function_sized_are_its_own():
    src = (
        "def forward(qkv, q_size, kv_size, head_dim, weight, out_features, hidden, lens):\n"
        "    q, k, v = qkv.split([q_size, kv_size, kv_size], dim=-1)\n"
        "    assert q.shape[-1] == head_dim\n"
        "    y = q @ weight\n"
        "    assert y.shape[-1] == out_features\n"
        "    total = count_tokens(lens)\n"
        "    part = hidden[:total]\n"
        "    assert part.shape[0] == lens.sum()\n"
        "    for i in range(0, len(lens), 8):\n"
        "        chunk = lens[i : i + 8]\n"
        "        assert len(chunk) == hidden.shape[0]\n"
    )
    # Line 11: a chunk the loop cuts from the input is still the caller's.
    assert lines(src) == [11]


def test_a_global_the_modules_own_setter_assigns_is_its_state():
    src = (
        "_current_vllm_config = None\n"
        "\n"
        "def set_current_vllm_config(vllm_config):\n"
        "    global _current_vllm_config\n"
        "    _current_vllm_config = vllm_config\n"
        "\n"
        "def get_current_vllm_config():\n"
        "    assert _current_vllm_config is not None, 'set it first'\n"
        "    return _current_vllm_config\n"
        "\n"
        "def check(model_config):\n"
        "    assert model_config.block_size > 0\n"
    )
    # Line 12: a parameter named as a config stays input.
    assert lines(src) == [12]


def test_a_field_the_record_fills_in_itself_is_its_state():
    src = (
        "from dataclasses import dataclass\n"
        "\n"
        "@dataclass\n"
        "class Meta:\n"
        "    lens: list\n"
        "    total: int = 0\n"
        "\n"
        "    def __post_init__(self):\n"
        "        self.total = count_tokens(self.lens)\n"
        "        self.lens = list(self.lens)\n"
        "\n"
        "    def check(self):\n"
        "        assert self.total > 0\n"
        "        assert len(self.lens) > 0\n"
    )
    # Line 14: a field normalised in `__post_init__` is still what the caller passed.
    assert lines(src) == [14]


def test_a_field_reassigned_from_itself_or_a_config_stays_input():
    src = (
        "class Linear:\n"
        "    def __init__(self, quant_config, rows):\n"
        "        self.block = quant_config.weight_block_size\n"
        "        self.dtype = quant_config.dtype\n"
        "        self.rows = rows\n"
        "\n"
        "    def process_weights_after_loading(self, layer):\n"
        "        self.block = list(self.block)\n"
        "        self.dtype = layer.quant_config.dtype\n"
        "        self.rows = layer.rows * 2\n"
        "\n"
        "    def apply(self, x):\n"
        "        assert self.block[0] % 128 == 0\n"
        "        assert self.dtype is not None\n"
        "        assert self.rows > 0\n"
    )
    # Line 15: re-assigned to a value of the class's own making.
    assert lines(src) == [13, 14]


def test_what_a_collaborators_call_left_is_its_state():
    src = (
        "class Model:\n"
        "    def __init__(self, layers, buf):\n"
        "        self.layers = layers\n"
        "        self.buf = buf\n"
        "\n"
        "    def forward(self, x, out):\n"
        "        self.layers.prepare(x)\n"
        "        assert self.layers.ready is not None\n"
        "        out.fill_(0)\n"
        "        assert out.is_contiguous()\n"
        "        assert self.buf.ready is not None\n"
    )
    # Line 10: filling an argument in place leaves its layout the caller's;
    # line 11: nothing was asked of `self.buf`.
    assert lines(src) == [10, 11]


def test_a_dataclass_alias_sizes_and_normalised_tuples():
    src = (
        "from pydantic.dataclasses import dataclass as pydantic_dataclass\n"
        "\n"
        "@pydantic_dataclass\n"
        "class EngineConfig:\n"
        "    tp: int = 1\n"
        "\n"
        "    def __post_init__(self):\n"
        "        assert self.tp >= 1\n"
        "\n"
        "def attend(q, k, dim):\n"
        "    q, k = [contiguous(t) for t in (q, k)]\n"
        "    assert q.shape[-1] == k.shape[-1]\n"
        "    block = k.size(dim)\n"
        "    assert block >= 16\n"
    )
    assert lines(src) == [8, 12, 14]


def test_the_per_step_records_an_engine_builds_are_its_state():
    src = (
        "class Backend:\n"
        "    def forward(self, q, forward_batch, attn_metadata: 'FlashMLAMetadata', meta):\n"
        "        assert forward_batch.extend_prefix_lens is not None\n"
        "        assert attn_metadata.decode is not None\n"
        "        assert meta.decode is not None\n"
        "        assert q.shape[0] > 0\n"
        "\n"
        "    def plan(self, other: 'DSV4AttnMetadata', metadata: 'Metadata'):\n"
        "        assert other.page_size == 64\n"
        "        assert metadata.version == 2\n"
    )
    # `meta` and a bare `Metadata` (a checkpoint's, in torch) are not named as
    # per-step records; `q` is data.
    assert lines(src) == [5, 6, 10]


def test_the_objects_running_tables_and_counts_are_its_protocol():
    src = (
        "class Tree:\n"
        "    def __init__(self, layer_ids):\n"
        "        self.cache = {}\n"
        "        self.layer_map = {}\n"
        "        for i, layer in enumerate(layer_ids):\n"
        "            self.layer_map[layer] = i\n"
        "\n"
        "    def insert(self, node):\n"
        "        assert node.id not in self.cache\n"
        "        self.cache[node.id] = node\n"
        "\n"
        "    def index(self, layer_id):\n"
        "        assert layer_id in self.layer_map\n"
        "        return self.layer_map[layer_id]\n"
        "\n"
        "def release(leaf):\n"
        "    node = leaf\n"
        "    while node is not None:\n"
        "        assert node.ref > 0\n"
        "        node.ref -= 1\n"
        "        node = node.parent\n"
    )
    # Line 13: a table its constructor filled from what it was given.
    assert lines(src) == [13]


def test_a_count_against_a_buffer_the_object_allocated_is_its_admission():
    src = (
        "import torch\n"
        "\n"
        "class Pool:\n"
        "    def __init__(self, size, table):\n"
        "        self.buffer = torch.empty(size)\n"
        "        self.table = table\n"
        "\n"
        "    def alloc(self, num_tokens):\n"
        "        assert num_tokens <= self.buffer.shape[0]\n"
        "        assert len(self.table) >= num_tokens\n"
        "        return self.buffer[:num_tokens]\n"
    )
    # Line 10: a table the caller handed in is the caller's.
    assert lines(src) == [10]


def test_what_a_base_class_elsewhere_sets_from_the_arguments_is_input():
    src = (
        "from .base import BaseRunner\n"
        "\n"
        "class XRunner(BaseRunner):\n"
        "    cache_kind = 'paged'\n"
        "\n"
        "    def __init__(self, model_runner):\n"
        "        super().__init__(model_runner)\n"
        "        assert not self.enable_two_batch_overlap\n"
        "        assert self.cache_kind == 'paged'\n"
        "        assert self.forward_metadata is None\n"
        "\n"
        "class Plain(BaseRunner):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        assert not self.enable_two_batch_overlap\n"
    )
    # Line 15: nothing of the constructor's was handed to the base.
    assert lines(src) == [8]


def test_process_wide_accessors_of_another_module_are_input():
    src = (
        "from engine.context import get_parallel, is_hip, get_attn_backend\n"
        "from engine.tree import BlankLine\n"
        "\n"
        "_is_hip = is_hip()\n"
        "\n"
        "def pick(n):\n"
        "    if n:\n"
        "        return 1\n"
        "    assert not _is_hip\n"
        "\n"
        "def plan():\n"
        "    assert get_parallel().attn_dcp_size == 1\n"
        "    backend = get_attn_backend()\n"
        "    assert isinstance(backend, TboBackend)\n"
        "    assert backend.forward_metadata.loc is not None\n"
        "    line = BlankLine()\n"
        "    assert line.prefix == ''\n"
    )
    # The platform and the configuration read through accessors; not the type of
    # what the program installed (line 14), a per-step record it keeps (15), or a
    # new object (17).
    assert lines(src) == [9, 12]


def test_a_per_step_record_against_the_steps_tensors_is_an_engine_invariant():
    src = (
        "def forward(q_nope, forward_metadata, local_rows, forward_batch):\n"
        "    block_tables = forward_metadata.block_tables\n"
        "    assert block_tables.shape[0] == q_nope.shape[0]\n"
        "    counts = forward_batch.late_counts\n"
        "    assert counts[0] == local_rows\n"
        "    assert q_nope.shape[0] == local_rows\n"
    )
    assert lines(src) == [6]


def test_the_edges_of_what_the_object_keeps():
    src = (
        "import torch\n"
        "\n"
        "class Pool:\n"
        "    def __init__(self, size, table, pool):\n"
        "        self.buffer = torch.empty(size)\n"
        "        self.slots = [0] * size\n"
        "        self.table = table\n"
        "        self.pool = pool\n"
        "        self.seen = set()\n"
        "        self.index = {}\n"
        "\n"
        "    def reset(self, table):\n"
        "        self.index = dict(table)\n"
        "        self.pool.index[0] = 1\n"
        "\n"
        "    def note(self, key):\n"
        "        self.seen.add(key)\n"
        "\n"
        "    def alloc(self, n, key, hidden, out):\n"
        "        assert n <= len(self.slots)\n"
        "        assert n <= self.buffer.size(0)\n"
        "        assert n <= self.buffer.stride(0)\n"
        "        assert 0 <= n <= self.buffer.shape[0]\n"
        "        assert n <= count(self.slots)\n"
        "        assert key not in self.seen\n"
        "        assert key in self.index\n"
        "        assert key in self.pool.index\n"
        "        total = plan(hidden)\n"
        "        part = hidden[:, :total]\n"
        "        assert part.shape[1] == n\n"
        "        out.update(hidden)\n"
        "        assert out.ready\n"
        "        out.buf.update(hidden)\n"
        "        assert out.buf.ready\n"
        "        assert n <= len()\n"
    )
    # Input: a stride is no capacity (22), a chained bound is not one bound (23), an
    # unknown helper's count of a buffer (24), a table a method re-assigns whole from
    # its argument (26), a collaborator's table (27), an argument after a call on it
    # (32), and an argument's own parts after a call on them (34). The object's own:
    # its buffer's length and size (20, 21), a set a method fills (25), a slice it cut
    # in a tuple index (30); and `len()` of nothing is no buffer (35), not a crash.
    assert lines(src) == [22, 23, 24, 26, 27, 32, 34, 35]


def test_a_parameter_named_like_the_modules_global_is_the_callers():
    src = (
        "_current_config = None\n"
        "\n"
        "def set_config(config):\n"
        "    global _current_config\n"
        "    _current_config = config\n"
        "\n"
        "def check(_current_config):\n"
        "    assert _current_config is not None\n"
    )
    assert lines(src) == [8]


def test_where_the_newer_principles_stop():
    src = (
        "def f(x, n, hidden, flag, sizes, a, b, ctx, q):\n"
        "    out = compute(x)\n"
        "    out = normalize(out)\n"
        "    assert out.shape[0] == n\n"
        "    wide = decide(x)\n"
        "    width = hidden if wide else 16\n"
        "    assert width <= 4096\n"
        "    same = a is b\n"
        "    assert same\n"
        "    v = sizes.lookup(key=n)\n"
        "    assert v > 0\n"
        "    tables = ctx.forward_metadata.block_tables\n"
        "    assert tables.shape[0] == q.shape[0]\n"
    )
    # Line 4: a local the function computed and then normalised is still its own;
    # line 7: the caller's `hidden` is one of the values `width` can take; line 9: an
    # identity of two arguments is no `is None`; line 11: a lookup with a keyword
    # computes; line 13: a per-step record kept on another object.
    assert lines(src) == [7]


def test_what_a_constructor_hands_a_base_class_elsewhere_and_what_it_does_not():
    src = (
        "from .base import Base, Mixin\n"
        "from .factory import with_meta\n"
        "\n"
        "DEFAULTS = {}\n"
        "\n"
        "class Local:\n"
        "    pass\n"
        "\n"
        "class A(Base):\n"
        "    tag: str = 'a'\n"
        "\n"
        "    def __init__(self, config):\n"
        "        super().__init__(config)\n"
        "        self.mode = pick()\n"
        "        self.total = 0\n"
        "        self.total += config.size\n"
        "\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
        "        assert self.mode == 1\n"
        "        assert self.run is not None\n"
        "        assert self.tag == 'a'\n"
        "        assert self.total > 0\n"
        "\n"
        "class B(Base):\n"
        "    def __init__(self, config):\n"
        "        super().__init__(DEFAULTS)\n"
        "\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
        "\n"
        "class C(Local, Mixin):\n"
        "    def __init__(self, config):\n"
        "        super().__init__(config)\n"
        "\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
        "\n"
        "class D(Base):\n"
        "    def __init__(self, config):\n"
        "        Base.__init__(self, config)\n"
        "\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
        "\n"
        "class E(with_meta(Base)):\n"
        "    def __init__(self, config):\n"
        "        super().__init__(config)\n"
        "\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
        "\n"
        "class F(Base):\n"
        "    def run(self):\n"
        "        assert self.block_size > 0\n"
    )
    # Input: what Base set from the config (19, 44, 51 -- the base spelled as a call
    # too), a total the constructor adds the config's size to (23), and on a class
    # with no constructor of its own, whose base's constructor is handed every
    # argument (55). Not: what the class computed (20), a method (21), a class
    # attribute (22), a base handed no argument of the constructor's (30), the local
    # base first in line (37).
    assert lines(src) == [19, 23, 44, 51, 55]


def test_a_field_renormalised_by_a_method_call_on_itself_stays_input():
    src = (
        "class Linear:\n"
        "    def __init__(self, quant_config):\n"
        "        self.block = quant_config.weight_block_size\n"
        "\n"
        "    def process_weights_after_loading(self):\n"
        "        self.block = self.block.copy()\n"
        "\n"
        "    def apply(self):\n"
        "        assert self.block[0] % 128 == 0\n"
    )
    assert lines(src) == [9]


def test_a_local_every_branch_binds_to_the_functions_own_value_is_its_own():
    src = (
        "def run(x, quant_info, mode):\n"
        "    if mode == 'a':\n"
        "        x_q, scale = quantize_a(x, quant_info.hidden_size)\n"
        "    elif mode == 'b':\n"
        "        x_q, scale = quantize_b(x, quant_info.hidden_size)\n"
        "    else:\n"
        "        raise NotImplementedError(mode)\n"
        "    assert x_q.shape[-1] == quant_info.hidden_size\n"
        "\n"
        "def attend(q, forward_metadata, verify):\n"
        "    if verify:\n"
        "        tables = forward_metadata.spec_tables\n"
        "    else:\n"
        "        tables = forward_metadata.tables\n"
        "    assert tables.shape[0] == q.shape[0] and tables.shape[1] == q.shape[1]\n"
        "\n"
        "def pad(x, quant_info, mode):\n"
        "    if mode == 'a':\n"
        "        x_q = quantize_a(x, quant_info.hidden_size)\n"
        "    else:\n"
        "        x_q = x\n"
        "    assert x_q.shape[-1] == quant_info.hidden_size\n"
        "\n"
        "def shape(x, quant_info, mode):\n"
        "    if mode == 'a':\n"
        "        x_q = quantize_a(x, quant_info.hidden_size)\n"
        "    assert x_q.shape[-1] == quant_info.hidden_size\n"
    )
    # Not input: every path to the assert binds `x_q` to a call's result (8), `tables`
    # to a per-step record's field (15, asked twice in one assert). Input: one path binds the caller's `x` (22);
    # one binding and no other leaves the caller's value on the path past the `if` (27).
    assert lines(src) == [22, 27]


def test_the_engines_environment_module_is_the_environment():
    src = (
        "import vllm.envs as venvs\n"
        "from sglang.srt.environ import envs as senvs\n"
        "\n"
        "def build(group):\n"
        "    assert venvs.VLLM_USE_V1\n"
        "    assert not senvs.SGLANG_FLAG.get()\n"
        "\n"
        "def communicator(group):\n"
        "    from lmdeploy.pytorch import envs as _envs\n"
        "    enabled = _envs.enable_symm_mem or _envs.enable_allreduce\n"
        "    assert not enabled\n"
        "\n"
        "def own(group):\n"
        "    envs = make_envs(group)\n"
        "    assert envs.ready\n"
        "\n"
        "def plain(group):\n"
        "    from gym import vector\n"
        "    assert vector.envs\n"
        "\n"
        "def unnamed(group):\n"
        "    from lmdeploy.pytorch import envs\n"
        "    assert envs.enable_eager\n"
        "\n"
        "def package(group):\n"
        "    import vllm.envs\n"
        "    assert vllm.ready\n"
    )
    # Input: what the engine's environment-variable module (`envs`, however it is
    # imported and named) holds (5, 6, 11, 23). Not: a local named so (15), nor an
    # attribute named so (19), nor the package `import vllm.envs` binds (27).
    assert lines(src) == [5, 6, 11, 23]


def test_input_parsed_is_still_input():
    src = (
        "import re\n"
        "\n"
        "def read_table(filename):\n"
        "    f = open(filename)\n"
        "    for line in f:\n"
        "        mo = re.match(r'^(\\w+) (\\d+)$', line)\n"
        "        assert mo, line\n"
        "\n"
        "class Pool:\n"
        "    def __init__(self, kv_layout):\n"
        "        self.kv_layout = Layout.parse(kv_layout)\n"
        "\n"
        "    def check(self):\n"
        "        assert self.kv_layout is Layout.V4\n"
        "\n"
        "PAT = re.compile(r'x')\n"
        "\n"
        "def own(rows, pattern, line):\n"
        "    mo = re.match(pattern, render(rows))\n"
        "    assert mo\n"
        "    found = PAT.search(line)\n"
        "    assert found\n"
        "    again = PATS[0].fullmatch(line)\n"
        "    assert again\n"
    )
    # Input: a regex match of a line of the file the caller names (7), a layout parsed
    # from the constructor's argument (14), the caller's line through the module's own
    # pattern, named or picked from a table (22, 24). Not: the function's own text,
    # whatever pattern it is matched against (20).
    assert lines(src) == [7, 14, 22, 24]


def test_a_class_without_a_constructor_is_built_by_its_first_bases():
    src = (
        "import codecs\n"
        "from .epilogue import EpiMixin, Gemm\n"
        "\n"
        "class Encoder(codecs.IncrementalEncoder):\n"
        "    def encode(self, input, final=False):\n"
        "        assert self.errors == 'strict'\n"
        "\n"
        "class ActMixin(EpiMixin):\n"
        "    def epilogue(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
        "\n"
        "class Act(ActMixin, Gemm):\n"
        "    def run(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
        "\n"
        "class Gated(EpiMixin, Gemm):\n"
        "    def run(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
        "\n"
        "class OnlyMixins(EpiMixin):\n"
        "    pass\n"
        "\n"
        "class Leaf(OnlyMixins):\n"
        "    def run(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
    )
    # Input: what codecs' constructor set from the arguments it was handed (6), what
    # the first base that is no mixin set (14, 18). Not: a mixin's attribute, which its
    # host sets (10), nor a class whose bases are all mixins (25).
    assert lines(src) == [6, 14, 18]


def test_a_generic_base_subscripted_is_named_by_its_class():
    src = (
        "from .processing import BaseProcessor\n"
        "\n"
        "class Processor(BaseProcessor[Info]):\n"
        "    def run(self):\n"
        "        assert self.info.width > 0\n"
        "\n"
        "class Handed(BaseProcessor[Info]):\n"
        "    def __init__(self, info):\n"
        "        super().__init__(info)\n"
        "\n"
        "    def run(self):\n"
        "        assert self.info.width > 0\n"
        "\n"
        "class Unnamed(bases()[0]):\n"
        "    def run(self):\n"
        "        assert self.info.width > 0\n"
    )
    found = check(src)
    # Built by the generic's constructor, named as the class a reader sees (5, 12); a base
    # no name spells says nothing of who set the attribute (16).
    assert [f.line for f in found] == [5, 12]
    assert all("`BaseProcessor.__init__`" in f.message for f in found), [f.message for f in found]


def test_what_a_computed_local_is_seen_through_and_where_the_chain_stops():
    views = "".join(f"    v{i} = v{i - 1}.data\n" for i in range(1, 10))
    src = (
        "def own(x, n):\n"
        "    q = quantize(x)\n"
        "    box = q.data\n"
        "    assert box.shape[0] == n\n"
        "\n"
        "def long_chain(x, n):\n"
        "    v0 = quantize(x)\n" + views + "    assert v9.shape[0] == n\n"
    )
    # A view of a local the function computed is its own (4). Past eight views the
    # chain is not followed, and the caller's `n` decides (17).
    assert lines(src) == [17]


def test_who_builds_a_class_without_a_constructor():
    src = (
        "from dataclasses import dataclass\n"
        "from .epilogue import Gemm\n"
        "\n"
        "class PlainMixin(Gemm):\n"
        "    def epilogue(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
        "\n"
        "@dataclass\n"
        "class Record(Gemm):\n"
        "    size: int\n"
        "\n"
        "    def check(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
        "\n"
        "class Local:\n"
        "    def __init__(self):\n"
        "        self.tile = plan()\n"
        "\n"
        "class Two(Local, Gemm):\n"
        "    def run(self):\n"
        "        assert self.tile[1] % 32 == 0\n"
    )
    # None is input: a mixin is built by its host, whatever its base (6); a record's
    # constructor takes its fields, not a base's arguments (13); the first base's own
    # constructor runs, not the second's (21).
    assert lines(src) == []


def test_a_parameter_the_function_advanced_by_its_own_value_is_its_own():
    src = (
        "class Acc:\n"
        "    def add(self, total, limit):\n"
        "        total += self._pad\n"
        "        assert total <= limit\n"
        "\n"
        "    def take(self, total, limit):\n"
        "        assert total <= limit\n"
    )
    # `total` moved by the object's own padding is the function's value, checked
    # against the caller's bound (4); unmoved, it is the caller's (7).
    assert lines(src) == [7]


def test_a_local_an_import_binds_is_not_the_functions_computation():
    src = "def f(n):\n    from .limits import LIMIT\n    assert LIMIT == n\n"
    # An import is not a value the function computed: the caller's `n` decides.
    assert lines(src) == [3]


def test_a_constant_the_function_names_is_no_computation_of_its_own():
    src = (
        "import torch\n"
        "def pages(seq_lens, extra, prefix_lens=None):\n"
        "    cpu = torch.device('cpu')\n"
        "    allowed = set({'out_shape', 'fake_impl'})\n"
        "    assert seq_lens.device == cpu\n"
        "    assert allowed >= set(extra)\n"
        "    n = torch.device(count())\n"
        "    assert seq_lens.device == n\n"
        "    lens = torch.cumsum(seq_lens, 0)\n"
        "    assert lens.shape == seq_lens.shape\n"
    )
    # A call with literal arguments alone names one value on every call, so the
    # caller's tensor decides the first two; a call given what the function
    # computed (`count()`) or its input (`cumsum`) is its own work.
    assert lines(src) == [5, 6]


def test_a_binding_under_the_same_test_of_the_objects_flag_reaches_the_assert():
    src = (
        "class Model:\n"
        "    def forward(self, positions, forward_batch, x):\n"
        "        if self.is_mrope:\n"
        "            positions = forward_batch.mrope_positions\n"
        "            x = forward_batch.hidden\n"
        "        if not forward_batch.forward_mode.is_decode():\n"
        "            if self.is_mrope:\n"
        "                assert positions.ndim == 2\n"
        "        assert positions.ndim == 1\n"
        "        if self.other:\n"
        "            assert x.ndim == 2\n"
        "\n"
        "    def toggles(self, positions, forward_batch):\n"
        "        if self.is_mrope:\n"
        "            positions = forward_batch.mrope_positions\n"
        "            self.is_mrope = False\n"
        "        if self.is_mrope:\n"
        "            assert positions.ndim == 2\n"
    )
    # Only a path through the first `if self.is_mrope:` reaches line 8, so the
    # step record's positions are what it reads. Line 9 is reached with the
    # parameter too; another flag (line 11) says nothing of the first branch;
    # a flag the method assigns may differ the second time it is read.
    assert lines(src) == [9, 11, 18]


def test_an_assert_restating_the_test_of_its_if_cannot_fail():
    src = (
        "def reshape(old, args, dense_dim=None, n=0):\n"
        "    reorder = dense_dim is not None and dense_dim != len(old) - 1\n"
        "    if reorder:\n"
        "        assert dense_dim is not None\n"
        "        assert dense_dim > 0\n"
        "    if args and n > 1:\n"
        "        assert n > 1 and args\n"
        "        assert len(args) >= 2\n"
        "    if n:\n"
        "        assert n > 0\n"
    )
    # Lines 4 and 7 restate the test they sit under (line 4 through the local
    # bound to it): narrowing for the type checker. What the test does not
    # say (lines 5, 8, 10) is still the caller's to break; that `args` was
    # tested does not make `len(args)` checked.
    assert lines(src) == [5, 8, 10]


def test_an_assert_restating_what_an_earlier_exit_or_an_else_established_cannot_fail():
    src = (
        "def embed(weight, sparse, bias, n):\n"
        "    if sparse:\n"
        "        return fallback(weight)\n"
        "    assert not sparse\n"
        "    if bias is None:\n"
        "        args = [weight]\n"
        "    else:\n"
        "        assert bias is not None\n"
        "        bias = realize(bias)\n"
        "        assert bias is not None\n"
        "    if n is None or n < 2:\n"
        "        raise ValueError(n)\n"
        "    assert n is not None and n >= 2\n"
        "    assert n >= 3\n"
    )
    # Past `if sparse: return`, `sparse` is false; in the `else` of `bias is
    # None`, `bias` is not None -- until the function binds it again (line 10);
    # what the exit does not say (line 14) is still the caller's.
    assert lines(src) == [10, 14]


def test_a_local_flag_bound_once_reads_the_same_at_both_tests():
    src = (
        "def swap(lb, sb=None, n=0):\n"
        "    if disallow := sb is None:\n"
        "        sb = make()\n"
        "    if disallow:\n"
        "        assert not sb\n"
        "    if n:\n"
        "        lb = make()\n"
        "    if n:\n"
        "        assert lb\n"
        "    again = n > 1\n"
        "    if again:\n"
        "        lb = make()\n"
        "    again = n > 2\n"
        "    if again:\n"
        "        assert lb\n"
    )
    # `disallow` is bound once, so the buffer the function made is what line 5
    # reads; a parameter (`n`) or a flag bound twice may differ the second time.
    assert lines(src) == [9, 15]


def test_which_bindings_under_a_test_reach_an_assert_under_the_same_test():
    src = (
        "class Model:\n"
        "    def walrus(self, x, cheap):\n"
        "        if self.flag:\n"
        "            if cheap and (x := compute()):\n"
        "                pass\n"
        "        if self.flag:\n"
        "            assert x\n"
        "\n"
        "    def elsewhere(self, x, a, b, forward_batch):\n"
        "        if a:\n"
        "            if self.flag:\n"
        "                x = forward_batch.positions\n"
        "        if b:\n"
        "            if self.flag:\n"
        "                assert x.ndim == 2\n"
        "\n"
        "    def in_else(self, x, forward_batch):\n"
        "        if self.flag:\n"
        "            pass\n"
        "        else:\n"
        "            x = forward_batch.positions\n"
        "        if self.flag:\n"
        "            assert x.ndim == 2\n"
        "\n"
        "    def asked(self, x, forward_batch):\n"
        "        if self.enabled():\n"
        "            x = forward_batch.positions\n"
        "        if self.enabled():\n"
        "            assert x.ndim == 2\n"
    )
    # A walrus under a short-circuit may not run (line 7); a branch of another
    # `if` (line 15) or an `else` (line 23) is not the test the assert sits
    # under; a call may answer differently the second time (line 29).
    assert lines(src) == [7, 15, 23, 29]


def test_what_the_tests_on_the_way_establish_reaches_through_loops_handlers_and_flags():
    src = (
        "import torch\n"
        "def walk(x, n, items, flag, opts):\n"
        "    for i in items:\n"
        "        if flag:\n"
        "            continue\n"
        "        try:\n"
        "            if n == 5:\n"
        "                return\n"
        "            assert n != 5\n"
        "        except ValueError:\n"
        "            if n:\n"
        "                raise\n"
        "            assert not n\n"
        "    y = opts.get('k')\n"
        "    if y is None:\n"
        "        return\n"
        "    assert y is not None\n"
        "    ok = x is not None\n"
        "    if ok and n:\n"
        "        assert x is not None\n"
        "    dev = here()\n"
        "    assert x.device == dev\n"
    )
    # Exits inside a loop and a handler hold below them; a local read off a
    # parameter before its exit is still that local; a flag among other tests
    # is what it was bound to. Line 22 compares with what `here()` computed.
    assert lines(src) == []


# -- `assert False`, configurations asked, attributes stored on the way ----------------


def test_an_assert_false_is_read_by_the_tests_that_lead_to_it():
    src = (
        "def pick(kind, sizes, step):\n"
        "    for size in sizes:\n"
        "        if size > 4:\n"
        "            return size\n"
        "    if step:\n"
        "        if kind == 'a':\n"
        "            return 1\n"
        "        else:\n"
        "            assert False, 'branch of kind'\n"  # 9: the else of a test of kind
        "    while True:\n"
        "        if kind == 'b':\n"
        "            break\n"
        "        assert False, 'in a loop'\n"  # 13: past `if kind == 'b': break`
        "    assert False, 'past a loop'\n"  # 14: the block's ifs return inside a loop
        "\n"
        "def parse(rule, parts):\n"
        "    if rule == 'tse':\n"
        "        for part in parts:\n"
        "            try:\n"
        "                float(part)\n"
        "            except ValueError:\n"
        "                assert False, 'not a number'\n"  # 22: under `if rule == ...`, deep
    )
    assert lines(src) == [9, 13, 22]


def test_an_assert_false_behind_the_functions_own_tests_is_a_marker():
    src = (
        "def plan(rows):\n"
        "    n = count(rows)\n"
        "    if n > 8:\n"
        "        return 'wide'\n"
        "    elif n > 2:\n"
        "        return 'narrow'\n"
        "    else:\n"
        "        assert False, 'unreachable'\n"
        "\n"
        "def mode(flag):\n"
        "    if flag:\n"
        "        if check_ready():\n"
        "            return 1\n"
        "        assert False\n"  # behind an own test in the branch flag chose: the nearest
        "    return 0\n"
        "\n"
        "def ok(x):\n"
        "    assert True, 'a note'\n"
        "\n"
        "def shape(rows):\n"
        "    assert rows > 0, rows\n"
        "    n = count()\n"
        "    if n > 2:\n"
        "        return n\n"
        "    assert False, 'unreachable'\n"
    )
    # `mode`: the `if flag:` around the block is a branch too -- input chose it.
    # `shape`: the assert on `rows` (21) stops the function, but chooses no branch
    # leading to the `assert False` (25); only the function's own test does.
    assert lines(src) == [14, 21]


def test_an_assert_false_fix_raises_in_its_place_naming_the_failed_test():
    src = (
        "def page_tokens(kind):\n"
        "    if kind == 'mla':\n"
        "        return 64\n"
        "    assert False\n"
        "\n"
        "def pick(kind):\n"
        "    if kind == 'mla':\n"
        "        assert False\n"
        "\n"
        "def other(kind):\n"
        "    if kind == 'gqa':\n"
        "        return 1\n"
        "    else:\n"
        "        assert False\n"
    )
    fixed = apply_fixes(src, check(src))
    assert "    raise ValueError(\"expected kind == 'mla'\")\n" in fixed
    assert "        raise ValueError(\"unexpected: kind == 'mla'\")\n" in fixed
    assert "        raise ValueError(\"expected kind == 'gqa'\")\n" in fixed


def test_what_a_configuration_answers_when_asked_is_configuration():
    src = (
        "def build(layer, quant_config, x):\n"
        "    method = quant_config.get_quant_method(layer, 'p')\n"
        "    assert method is not None\n"
        "    out = quant_config.apply(layer, x)\n"
        "    assert out is not None\n"  # handed data to work on: its own result
        "    ready = quant_config.is_ready(layer)\n"
        "    assert ready\n"
        "    width = padded(quant_config.get_group_size())\n"
        "    assert width > 0\n"  # what a function makes of the answer alone: still config
    )
    assert lines(src) == [3, 7, 9]


def test_an_attribute_stored_on_the_way_to_the_assert_holds_what_was_stored():
    src = (
        "class Model:\n"
        "    def __init__(self, hf_config):\n"
        "        self.hf_config = hf_config\n"
        "        self.n = 0\n"
        "\n"
        "    def build(self, flag):\n"
        "        self.arch = self.hf_config.architectures[0]\n"
        "        assert self.arch\n"  # 8: stored from the config just above
        "        if flag:\n"
        "            self.kind = self.hf_config.model_type\n"
        "            assert self.kind is not None\n"  # 11: stored in the block it sits in
        "        assert self.kind\n"  # 12: stored only under `if flag:`
        "        self.arch = local_default()\n"
        "        assert self.arch\n"  # 14: the last store is the function's own value
        "        self.n = self.n + 1\n"
        "        assert self.n\n"  # 16: reads itself as it was, once
    )
    assert lines(src) == [8, 11]


def test_a_constructors_stores_are_read_as_the_classs_facts():
    # Read through the constructor's own stores, the worker would be "built from the
    # configuration alone"; which role built it is the object's protocol.
    src = (
        "class Connector:\n"
        "    def __init__(self, config, role):\n"
        "        self.engine_id = config.engine_id\n"
        "        if role == 1:\n"
        "            self.worker = Worker(config, self.engine_id)\n"
        "        else:\n"
        "            self.worker = None\n"
        "\n"
        "    def register(self):\n"
        "        assert self.worker is not None\n"
    )
    assert lines(src) == []


def test_a_helper_that_hands_back_its_arguments_worked_out_passes_input_on():
    src = (
        "import torch\n"
        "\n"
        "def pad_to(n, multiple=64):\n"
        "    return ((n + multiple - 1) // multiple) * multiple\n"
        "\n"
        "def lookup(node):\n"
        "    if not hasattr(node, 'meta'):\n"
        "        return None\n"
        "    return node.meta['val']\n"
        "\n"
        "def rounded(n):\n"
        "    n = n + 1\n"
        "    return n\n"
        "\n"
        "def lengths(x):\n"
        "    yield x.shape[0]\n"
        "\n"
        "class Embedding:\n"
        "    def __init__(self, vocab, added, tp):\n"
        "        self.vocab = vocab\n"
        "        self.padded = pad_to(self.vocab)\n"
        "        self.total = pad_to(self.padded + added, 128)\n"
        "        assert self.padded <= self.total\n"
        "        self.tp = tp\n"
        "\n"
        "    def _tensor(self, indices):\n"
        "        return torch.as_tensor(indices, device=self.device).view(-1)\n"
        "\n"
        "    def _own(self, indices):\n"
        "        return torch.as_tensor(indices, device=self.device).view(self.rows)\n"
        "\n"
        "    def store(self, index, rows):\n"
        "        flat = self._tensor(index)\n"
        "        assert flat.numel() == 1\n"
        "        shaped = self._own(rows)\n"
        "        assert shaped.numel() == 1\n"
        "\n"
        "def nodes(items, n):\n"
        "    for node in items:\n"
        "        ft = lookup(node)\n"
        "        assert ft is not None\n"
        "    m = rounded(n)\n"
        "    assert m > 1\n"
        "    k = pad_to(len(items) * 2, 8)\n"
        "    assert k > 0\n"
        "    w = next(lengths(items))\n"
        "    assert w > 0\n"
        "    own = pad_to(count_blocks())\n"
        "    assert own > 0\n"
    )
    # Input: the constructor's copies worked out by the module's padding helper and
    # compared (23); an index the object's own reshaping method hands back (34); a
    # size padded from the caller's count (45). Not: a reshape to the object's own
    # shape (36); a lookup that returns None when it fails (41); a helper that re-binds
    # its parameter (43) or yields (47); the helper applied to the function's own
    # count (49).
    assert lines(src) == [23, 34, 45]


def test_a_helper_restating_the_test_its_caller_left_on_is_not_validating():
    src = (
        "def _days_in(year, month):\n"
        "    assert 1 <= month <= 12\n"
        "    return 31\n"
        "\n"
        "def _tp_group(tp):\n"
        "    assert tp > 1\n"
        "    return tp\n"
        "\n"
        "def _width(n):\n"
        "    assert n % 8 == 0\n"
        "    return n\n"
        "\n"
        "def _kind(node):\n"
        "    assert isinstance(node, Leaf)\n"
        "    return node\n"
        "\n"
        "def check_fields(year, month):\n"
        "    if not 1 <= month <= 12:\n"
        "        raise ValueError(month)\n"
        "    return _days_in(year, month)\n"
        "\n"
        "def build(config):\n"
        "    tp = config.tp\n"
        "    if tp == 1:\n"
        "        return None\n"
        "    group = _tp_group(tp)\n"
        "    if tp > 8:\n"
        "        return group\n"
        "    return group\n"
        "\n"
        "def pad(n, m):\n"
        "    if n is None:\n"
        "        return 0\n"
        "    if m > 8:\n"
        "        return 0\n"
        "    return _width(n)\n"
        "\n"
        "def visit(node):\n"
        "    if not isinstance(node, Leaf):\n"
        "        raise TypeError(node)\n"
        "    node = node.parent\n"
        "    return _kind(node)\n"
        "\n"
        "def _leaf(node):\n"
        "    assert isinstance(node, Leaf)\n"
        "\n"
        "def leaf(node):\n"
        "    if not isinstance(node, Leaf):\n"
        "        raise TypeError(node)\n"
        "    _leaf(node)\n"
        "\n"
        "def _rows(n):\n"
        "    assert n > 0\n"
        "\n"
        "def late(n):\n"
        "    _rows(n)\n"
        "    if n > 8:\n"
        "        return\n"
        "\n"
        "def _pair(node):\n"
        "    assert isinstance(node, (Leaf, Node))\n"
        "\n"
        "def pair(node):\n"
        "    if not isinstance(node, (Leaf, Node)):\n"
        "        raise TypeError(node)\n"
        "    _pair(node)\n"
        "\n"
        "def _cols(n):\n"
        "    assert n > 1\n"
        "\n"
        "KEY = lambda n: _cols(n)\n"
        "_cols(COLUMNS)\n"
    )
    # Each caller of `_days_in` and `_tp_group` tested the value it passes and left when
    # the test failed: the helper restates it, as `_leaf` restates `not isinstance`.
    # Not so for `_width` (its caller tested whether `n` came, and another value: 10),
    # `_kind` (handed a value bound after the test: 14), `_rows` (tested after: 53) or
    # `_cols` (called from a lambda and the module itself, neither testing it: 69).
    assert lines(src) == [10, 14, 53, 69]


def test_a_helper_restating_the_assert_its_caller_made_is_not_validating():
    src = (
        "def _groups(n, k):\n"
        "    assert n % k == 0\n"
        "    return n // k\n"
        "\n"
        "def _kind(node):\n"
        "    assert isinstance(node, Leaf)\n"
        "\n"
        "def split(n, k):\n"
        "    assert n > 0\n"
        "    assert k > 0, k\n"
        "    return _groups(n, k)\n"
        "\n"
        "def visit(node):\n"
        "    assert isinstance(node, Leaf)\n"
        "    _kind(node)\n"
        "\n"
        "def _rows(n):\n"
        "    assert n > 1\n"
        "\n"
        "def late(n):\n"
        "    _rows(n)\n"
        "    assert n > 1\n"
        "\n"
        "def _cols(n):\n"
        "    assert n > 1\n"
        "\n"
        "def came(n):\n"
        "    assert n is not None\n"
        "    assert n\n"
        "    _cols(n)\n"
        "\n"
        "def _width(n):\n"
        "    assert n > 1\n"
        "\n"
        "def again(n):\n"
        "    assert n > 1\n"
        "    n = n - 1\n"
        "    _width(n)\n"
        "\n"
        "def _depth(n):\n"
        "    assert n > 1\n"
        "\n"
        "def aside(n, flag):\n"
        "    if flag:\n"
        "        assert n > 1\n"
        "    _depth(n)\n"
        "\n"
        "def _leaf(node):\n"
        "    assert isinstance(node, Leaf)\n"
        "\n"
        "def other(node):\n"
        "    assert not isinstance(node, Leaf)\n"
        "    _leaf(node)\n"
    )
    # Every caller's own assert is input (9, 10, 14, 22, 28, 29, 36, 45, 52). Each
    # caller of `_groups` and `_kind` asserted what it passes before the call, as an
    # `if ...: raise` would have tested it: the helper restates it. Not so for `_rows`
    # (asserted after the call: 18), `_cols` (asserted only that it came: 25), `_width`
    # (handed a value bound after the assert: 33), `_depth` (asserted on one branch
    # only: 41) or `_leaf` (asserted what it is not: 49).
    assert lines(src) == [9, 10, 14, 18, 22, 25, 28, 29, 33, 36, 41, 45, 49, 52]


def test_each_part_of_a_callers_and_assert_or_or_exit_is_a_test_of_its_own():
    src = (
        "def _span(lo, hi):\n"
        "    assert lo < hi\n"
        "\n"
        "def span(lo, hi):\n"
        "    assert lo > 0 and hi > 0\n"
        "    _span(lo, hi)\n"
        "\n"
        "def _pages(n):\n"
        "    assert 64 % n == 0\n"
        "\n"
        "def pages(n):\n"
        "    if n < 8 or 64 % n != 0:\n"
        "        raise ValueError(n)\n"
        "    _pages(n)\n"
        "\n"
        "def _cut(n):\n"
        "    assert n > 0\n"
        "\n"
        "def cut(n, m):\n"
        "    assert n > 0 or m > 0\n"
        "    _cut(n)\n"
        "\n"
        "def _trim(n):\n"
        "    assert n > 0\n"
        "\n"
        "def trim(n, m):\n"
        "    if n > 0 and m > 0:\n"
        "        return\n"
        "    _trim(n)\n"
    )
    # Past `assert lo > 0 and hi > 0` each holds, as past `if n < 8 or ...: raise` the
    # caller knows `n >= 8`: `_span` and `_pages` restate their callers. Past `assert
    # n > 0 or m > 0` (20) or `if n > 0 and m > 0: return` nothing is known of `n`
    # alone: `_cut` (17) and `_trim` (24) check the callers' input.
    assert lines(src) == [5, 17, 20, 24]


def test_a_callers_comparison_with_another_input_says_nothing_of_what_the_value_is():
    src = (
        "SIZES = (128, 256)\n"
        "\n"
        "def _blocks(k):\n"
        "    assert k % 128 == 0\n"
        "\n"
        "def mix(x, w):\n"
        "    k = x.shape[1]\n"
        "    assert w.shape[1] == k\n"
        "    return _blocks(k)\n"
        "\n"
        "def _tiles(k):\n"
        "    assert k % 128 == 0\n"
        "\n"
        "def tile(x):\n"
        "    k = x.shape[1]\n"
        "    assert k in SIZES\n"
        "    return _tiles(k)\n"
        "\n"
        "def _rows(n):\n"
        "    assert n % 8 == 0\n"
        "\n"
        "def rows(x, limit):\n"
        "    n = x.shape[0]\n"
        "    if n > limit:\n"
        "        return None\n"
        "    return _rows(n)\n"
    )
    # `w.shape[1] == k` says the caller's two tensors agree, not what `k` is: `_blocks`
    # checks the caller's input (4), as `_rows` does past `if n > limit: return` (20).
    # `k in SIZES` holds `k` to the module's own constants: `_tiles` restates it.
    assert lines(src) == [4, 8, 16, 20]


def test_a_helper_called_under_its_callers_test_of_the_value_restates_it():
    src = (
        "def _topk(k):\n"
        "    assert 0 < k <= 2048\n"
        "\n"
        "def pick(x, k):\n"
        "    if x.ok and 0 < k <= 2048:\n"
        "        return _topk(k)\n"
        "    return None\n"
        "\n"
        "def _shard(sid):\n"
        "    assert sid in ('w1', 'w3')\n"
        "\n"
        "def load(sid):\n"
        "    if sid == 'w2':\n"
        "        return None\n"
        "    elif sid in ('w1', 'w3'):\n"
        "        _shard(sid)\n"
        "\n"
        "def _rows(n):\n"
        "    assert n > 0\n"
        "\n"
        "def rows(n, limit):\n"
        "    if n < limit:\n"
        "        _rows(n)\n"
        "\n"
        "def _cols(n):\n"
        "    assert n > 0\n"
        "\n"
        "def cols(n):\n"
        "    if n > 0:\n"
        "        n = n - 1\n"
        "        _cols(n)\n"
        "\n"
        "def _span(n):\n"
        "    assert n > 0\n"
        "\n"
        "def span(n):\n"
        "    if n:\n"
        "        _span(n)\n"
        "\n"
        "def _wide(n):\n"
        "    assert n > 8\n"
        "\n"
        "def wide(n):\n"
        "    if n <= 8:\n"
        "        note(n)\n"
        "    else:\n"
        "        _wide(n)\n"
        "\n"
        "def _deep(n):\n"
        "    assert n > 0\n"
        "\n"
        "def deep(n, m):\n"
        "    if n > 0 and m > 0:\n"
        "        note(n)\n"
        "    else:\n"
        "        _deep(n)\n"
    )
    # `_topk`, `_shard` and `_wide` are called only where the caller's `if` (or its
    # `else`) holds the value to what they assert. Not so `_rows` (compared with another
    # input: 19), `_cols` (handed a value bound inside the `if`: 26), `_span` (a truth
    # test: 34) or `_deep` (in the `else` of `n > 0 and m > 0`, where `n` may be
    # anything: 50).
    assert lines(src) == [19, 26, 34, 50]


def test_a_value_the_modules_parser_keeps_not_none_is_still_not_none():
    src = (
        "def parse(value, prefix='sha:'):\n"
        "    if value is None:\n"
        "        return None\n"
        "    if not value.startswith(prefix):\n"
        "        raise ValueError(value)\n"
        "    return prefix + value[4:].lower()\n"
        "\n"
        "def lookup(value):\n"
        "    if value is None:\n"
        "        return None\n"
        "    return TABLE.get(value)\n"
        "\n"
        "def loose(value):\n"
        "    if value is None:\n"
        "        return None\n"
        "    if value == '':\n"
        "        return None\n"
        "    return value + '/'\n"
        "\n"
        "def falls(value):\n"
        "    if value is None:\n"
        "        return None\n"
        "    if value:\n"
        "        return value + '/'\n"
        "\n"
        "def keyed(feature, namespace=None):\n"
        "    if namespace is None:\n"
        "        return feature\n"
        "    namespace = parse(namespace)\n"
        "    assert namespace is not None\n"
        "    return namespace\n"
        "\n"
        "def found(feature, key, other, more):\n"
        "    if key is None:\n"
        "        return feature\n"
        "    key = lookup(key)\n"
        "    assert key is not None\n"
        "    if other is None:\n"
        "        return key\n"
        "    other = falls(other)\n"
        "    assert other is not None\n"
        "    if more is None:\n"
        "        return key\n"
        "    more = loose(more)\n"
        "    assert more is not None\n"
        "\n"
        "def elsewhere(name, label):\n"
        "    if name is None:\n"
        "        return 0\n"
        "    name = normalize(name)\n"
        "    assert name is not None\n"
        "    if label is None:\n"
        "        return 0\n"
        "    label = label.strip()\n"
        "    assert label is not None\n"
    )
    # `parse` returns None only when handed None, and otherwise a string by its form:
    # past `if namespace is None: return`, `parse(namespace)` is not None (30). Not so
    # `lookup` (a `.get` may miss: 37), `falls` (falls off its end: 41), `loose` (None
    # for an empty string as well: 45), or what the module does not define (51, 55).
    assert lines(src) == [37, 41, 45, 51, 55]


def test_a_none_check_past_the_functions_own_filling_of_the_none_narrows():
    src = (
        "class Head:\n"
        "    def forward(self, ids, embeds=None, mask=None, scale=None):\n"
        "        if embeds is None:\n"
        "            embeds = self.embed_tokens(ids)\n"
        "        assert embeds is not None\n"
        "        if not mask:\n"
        "            mask = self.make_mask(ids)\n"
        "        assert mask\n"
        "        if scale is None:\n"
        "            scale: float = self.default_scale(ids)\n"
        "            scale = scale * 2\n"
        "        assert scale is not None and embeds is not None\n"
        "        return embeds\n"
        "\n"
        "    def other(self, ids, embeds=None, fallback=None, mask=None, bias=None, w=None, v=None):\n"
        "        if embeds is None:\n"
        "            embeds = fallback\n"
        "        assert embeds is not None\n"
        "        if mask is None:\n"
        "            mask = self.make_mask(ids)\n"
        "        assert mask.dim() == 2\n"
        "        assert mask\n"
        "        if bias is None:\n"
        "            if ids.numel():\n"
        "                bias = self.make_bias(ids)\n"
        "        assert bias is not None\n"
        "        if w is None:\n"
        "            w = self.make(ids)\n"
        "        w = convert(w)\n"
        "        assert w is not None\n"
        "        if v is None:\n"
        "            v = self.make(ids)\n"
        "        else:\n"
        "            v = v.float()\n"
        "        assert v is not None\n"
        "\n"
        "    def more(self, ids, a=None, b=None, fallback=None):\n"
        "        if a is None:\n"
        "            a = self.make(ids)\n"
        "            if ids.numel():\n"
        "                a = fallback\n"
        "        assert a is not None\n"
        "        if b is None:\n"
        "            b, c = self.pair(ids)\n"
        "        assert b is not None\n"
        "        if ids is None:\n"
        "            ids = self.default_ids()\n"
        "        assert ids is not None\n"
        "\n"
        "    def last(self, ids, opts, a=None):\n"
        "        if a is None:\n"
        "            self.log(ids)\n"
        "        assert a is not None\n"
        "        b = opts.get('b')\n"
        "        if b is None:\n"
        "            b = self.make(ids)\n"
        "        assert b is not None\n"
        "        b = self.more(b)\n"
        "        if not opts.ready:\n"
        "            warn('not ready')\n"
        "        assert opts.ready\n"
    )
    # Past `if x is None: x = <the function's own value>`, the caller's value is not None
    # or the branch ran: `x is not None` can fail only by the fill (5; `if not x:` and
    # `assert x` alike, 8; each part of an `and`, 12). Still the caller's: a fill with
    # another input (18), anything else of the value (21; `assert mask`: a falsy value
    # the caller passed, 22), a fill only on some paths (26), a re-binding past the
    # `if` (30), an `else` (35), a fill that may end with another input (42), a tuple
    # unpacked (45), no fill at all (53). A fill at the top of the body with the
    # function's own counts (48), whatever bound the name before the `if` or binds it
    # past the assert (57). Only a name is filled: `if not opts.ready:` fills nothing (61).
    assert lines(src) == [18, 21, 22, 26, 30, 35, 42, 45, 53, 61]


def test_a_fill_of_a_none_does_not_lead_to_an_assert_false():
    src = (
        "def pick(sizes, need, kind=None):\n"
        "    if kind is None:\n"
        "        kind = default_kind()\n"
        "    for i, size in enumerate(sizes):\n"
        "        if size >= need:\n"
        "            return kind, i\n"
        "    assert False, 'the pool keeps an entry of every size'\n"
    )
    # The `if` does not leave: it chooses no branch that ends in the `assert False`.
    assert lines(src) == []


def test_a_helpers_parameter_every_caller_fills_from_the_step_record_is_the_plan():
    src = (
        "def _trim(x, rows):\n"
        "    assert rows <= x.shape[0]\n"
        "    return x[:rows]\n"
        "\n"
        "def _clip(x, rows):\n"
        "    assert rows <= x.shape[0]\n"
        "    return x[:rows]\n"
        "\n"
        "class Backend:\n"
        "    def forward(self, q, forward_batch, limit):\n"
        "        meta = self.forward_metadata\n"
        "        q = _trim(q, meta.seq_lens.shape[0])\n"
        "        q = _trim(q, forward_batch.batch_size)\n"
        "        q = _clip(q, forward_batch.batch_size)\n"
        "        return _clip(q, limit)\n"
        "\n"
        "def _rows(x, rows):\n"
        "    assert rows <= x.shape[0]\n"
        "    return _more(x, rows)\n"
        "\n"
        "def _more(x, rows):\n"
        "    if rows:\n"
        "        return _rows(x[1:], rows)\n"
        "    return x\n"
        "\n"
        "def run(q, forward_batch):\n"
        "    return _more(q, forward_batch.batch_size)\n"
    )
    # `_trim`'s rows always come from the step's record: the engine's plan against the
    # step's tensor (state), as are `_rows`', which `_more` hands round with it. `_clip`
    # is also handed the caller's `limit`: input (6).
    assert lines(src) == [6]


def test_the_arguments_of_a_call_are_read_before_its_statement_binds():
    src = (
        "def _scaled(x):\n"
        "    assert x.shape[0] % 2 == 0\n"
        "    return compute(x)\n"
        "\n"
        "def forward(q):\n"
        "    x = q.view(-1)\n"
        "    x = _scaled(x)\n"
        "    y = build()\n"
        "    y = _scaled(y)\n"
        "    return x, y\n"
    )
    # `_scaled(x)` is handed the view of the caller's `q` -- not the result it is about
    # to bind to `x` -- so the helper's assert checks input (2).
    assert lines(src) == [2]


def test_a_helper_that_hands_back_pieces_of_what_it_reads_passes_input_on():
    src = (
        "PREFIX = '<'\n"
        "\n"
        "def _read_until(index, text, stops):\n"
        "    end = len(text)\n"
        "    found = None\n"
        "    for s in stops:\n"
        "        pos = text.find(s, index)\n"
        "        if pos != -1 and pos < end:\n"
        "            end, found = pos, s\n"
        "    if found:\n"
        "        piece = text[index:end]\n"
        "        return end + len(found), piece, found\n"
        "    return len(text), text[index:], None\n"
        "\n"
        "def _count_until(index, text, stops):\n"
        "    n = 0\n"
        "    for s in stops:\n"
        "        n += text.count(s, index)\n"
        "    return n\n"
        "\n"
        "def _read_prefixed(index, text):\n"
        "    return index, PREFIX + text[index:]\n"
        "\n"
        "def _read_normal(index, text):\n"
        "    text = normalise(text)\n"
        "    return index, text[index:]\n"
        "\n"
        "def parse(text):\n"
        "    index, stop = 0, None\n"
        "    index, body, stop = _read_until(index, text, [PREFIX + 'end>'])\n"
        "    assert body == '>\\n'\n"
        "    assert stop == PREFIX + 'end>'\n"
        "    assert len(text) == index\n"
        "    n = _count_until(0, text, ['<end>'])\n"
        "    assert n == 1\n"
        "    _, prefixed = _read_prefixed(0, text)\n"
        "    assert prefixed\n"
        "    _, normal = _read_normal(0, text)\n"
        "    assert normal\n"
        "    own = render()\n"
        "    _, piece, _ = _read_until(0, own, ['x'])\n"
        "    assert piece\n"
    )
    # Input: pieces of the caller's text the module's reader cut where it found the
    # literals -- the piece (31), the stop it met (32), where it stopped (33). Not: a
    # count the helper made of the text (35); a helper reading a global (37) or
    # handing back a piece of its own computation (39); the reader handed the
    # function's own text (42).
    assert lines(src) == [31, 32, 33]


def test_what_a_reader_is_handed_lines_up_with_its_parameters():
    src = (
        "def _read_until(index, text='', stops=()):\n"
        "    end = len(text)\n"
        "    for s in stops:\n"
        "        pos = text.find(s, index)\n"
        "        if pos != -1 and pos < end:\n"
        "            end = pos\n"
        "    return end, text[index:end]\n"
        "\n"
        "class Reader:\n"
        "    @staticmethod\n"
        "    def _cut(text, index):\n"
        "        piece = text[index:]\n"
        "        return piece\n"
        "\n"
        "    def _take(self, text, index):\n"
        "        piece = text[:index]\n"
        "        return piece\n"
        "\n"
        "    def read(self, text, rest):\n"
        "        _, by_name = _read_until(0, stops=['>'], text=text)\n"
        "        assert by_name\n"
        "        _, starred = _read_until(0, *rest)\n"
        "        assert starred\n"
        "        _, empty = _read_until(0)\n"
        "        assert empty\n"
        "        cut = self._cut(text, 1)\n"
        "        assert cut\n"
        "        taken = self._take(text, 1)\n"
        "        assert taken\n"
        "        _, mine = _read_until(0, stops=[text], text=render())\n"
        "        assert mine\n"
    )
    # Input: the caller's text handed by keyword (21), to a static method (27) and to
    # a method (29). Not: where a starred argument leaves which is the text unknown
    # (23), no text handed (25), the function's own text, whatever else is handed (31).
    assert lines(src) == [21, 27, 29]


@pytest.mark.parametrize(
    ("helper", "pieces"),
    [
        ("def f(x, i):\n    return x[i:]\n", {"x"}),
        ("def f(x, i):\n    j = x.find('>', i)\n    return j, x[i:j]\n", {"x"}),
        ("def f(x, i):\n    part = x[i]\n    return part.strip()\n", set()),
        ("def f(x, i):\n    part = x[i]\n    return part\n", {"x"}),
        ("def f(x):\n    a, b = x[0]\n    return a\n", set()),
        ("def f(x, y):\n    return x[0], y[1:]\n", {"x", "y"}),
        ("def f(x, i):\n    for k in range(len(x)):\n        i = k\n    return x[i]\n", {"x"}),
        ("def f(x, i):\n    return [x[i]]\n", set()),
        ("def f(x, i):\n    return x[i] if i else None\n", set()),
        ("def f(x):\n    return X[0]\n", set()),
        ("def f(x):\n    return x[K]\n", set()),
        ("def f(x):\n    x = x + 'a'\n    return x[0]\n", set()),
        ("def f(x):\n    y = x\n    return y[0]\n", set()),
        ("def f(x):\n    return x.y[0]\n", set()),
        ("def f(self, x):\n    return x[0]\n", {"x"}),
        ("def f(self, x):\n    return x[self.n]\n", set()),
        ("def f(x):\n    log(x)\n    return x[0]\n", set()),
        ("def f(x):\n    x[0] = 1\n    return x[0]\n", set()),
        ("def f(x):\n    x.n = 1\n    return x[0]\n", set()),
        ("def f(x):\n    global G\n    G = 1\n    return x[0]\n", set()),
        ("def f(x):\n    g = lambda: 1\n    return x[0]\n", set()),
        ("def f(x):\n    import re\n    return x[0]\n", set()),
        ("def f(x):\n    with x:\n        return x[0]\n", set()),
        ("def f(x):\n    yield x[0]\n", set()),
        ("async def f(x):\n    return x[0]\n", set()),
        ("def f(x):\n    return x[max(0, len(x) - 1)]\n", {"x"}),
        ("def f(x):\n    return x[[n for n in x][0]]\n", {"x"}),
    ],
)
def test_which_helpers_hand_back_pieces_of_a_parameter(helper, pieces):
    from checkers.analysis.pass_through import pieces_handed_back

    node = ast.parse(helper).body[0]
    assert pieces_handed_back(node, skip_first=node.args.args[0].arg == "self") == pieces


@pytest.mark.parametrize(
    ("helper", "method", "hands_back"),
    [
        ("def f(n, m):\n    return (n + m - 1) // m * m\n", False, True),
        ("def f(n):\n    return -n\n", False, True),
        ("def f(x):\n    return x.shape[1:]\n", False, True),
        ("def f(x, i):\n    return x[i]\n", False, True),
        ("def f(x, i):\n    return x[i::2]\n", False, True),
        ("def f(x):\n    return x.reshape(1, -1), x.shape\n", False, True),
        (
            "def f(x):\n    '''Doc.'''\n    if x:\n        return x\n    raise ValueError(x)\n",
            False,
            True,
        ),
        ("def f(x):\n    if x:\n        return x\n    else:\n        return -x\n", False, True),
        ("def f(x, d):\n    return torch.as_tensor(x, device=d)\n", False, True),
        ("def f(x, w):\n    return torch.as_tensor(x, out=w)\n", False, True),
        ("def f(x):\n    return torch.as_tensor(x, out=GLOBAL)\n", False, False),
        ("def f(x):\n    return len(x)\n", False, True),
        ("def f(x):\n    return sorted(x)\n", False, True),
        ("def f(x):\n    return x.item()\n", False, True),
        ("def f(x):\n    return ROWS.view(x)\n", False, False),
        ("def f(self, x):\n    return x.view(-1)\n", True, True),
        ("def f(self, x):\n    return self.x\n", True, False),
        ("def f(self, x):\n    return self\n", False, True),
        ("def f(x):\n    return x.view(ROWS)\n", False, False),
        ("def f(x):\n    return ROWS\n", False, False),
        ("def f(x):\n    return None\n", False, False),
        ("def f(x):\n    return\n", False, False),
        ("def f(x):\n    pass\n", False, False),
        ("def f(x):\n    return x[i]\n", False, False),
        ("def f(x):\n    return x[::k]\n", False, False),
        ("def f(x):\n    return x + k\n", False, False),
        ("def f(x):\n    return k + x\n", False, False),
        ("def f(x):\n    return x, k\n", False, False),
        ("def f(x):\n    return compute(x)\n", False, False),
        ("def f(x):\n    return x.matmul(x)\n", False, False),
        ("def f(x):\n    return x.view(k)\n", False, False),
        ("def f(x):\n    return [x]\n", False, False),
        ("def f(x):\n    if x:\n        x = 1\n    return x\n", False, False),
        ("def f(x):\n    if x:\n        return x\n    else:\n        y = 2\n", False, False),
        ("def f(x):\n    x.append(1)\n    return x\n", False, False),
        ("def f(*, x):\n    return x\n", False, True),
        ("async def f(x):\n    return x\n", False, False),
        ("def f(x):\n    yield x\n", False, False),
    ],
)
def test_which_helpers_hand_back_their_arguments(helper, method, hands_back):
    from checkers.analysis.pass_through import returns_its_arguments

    node = ast.parse(helper).body[0]
    assert returns_its_arguments(node, skip_first=method) is hands_back


def test_which_helper_a_call_names_and_how_its_parameters_line_up():
    src = (
        "if FAST:\n"
        "    def twice(n):\n"
        "        return n\n"
        "def twice(n):\n"
        "    return n * 2\n"
        "def twice(n):\n"
        "    return n * 3\n"
        "\n"
        "def once(n):\n"
        "    return n * 2\n"
        "\n"
        "class Pool:\n"
        "    def __init__(self, rows):\n"
        "        self.rows = rows\n"
        "\n"
        "    @staticmethod\n"
        "    def _flat(x):\n"
        "        return x.view(-1)\n"
        "\n"
        "    def _first(self, x):\n"
        "        return x.view(-1)\n"
        "\n"
        "    def _own(self, x):\n"
        "        return self.rows\n"
        "\n"
        "    def _shadowed(self, x):\n"
        "        return x\n"
        "\n"
        "    def _shadowed(self, x):\n"
        "        return x\n"
        "\n"
        "    def put(self, index):\n"
        "        a = twice(index)\n"
        "        assert a > 0\n"
        "        b = once(index)\n"
        "        assert b > 0\n"
        "        c = self._flat(index)\n"
        "        assert c.numel() == 1\n"
        "        d = self._first(index)\n"
        "        assert d.numel() == 1\n"
        "        e = self._own(index)\n"
        "        assert e > 0\n"
        "        f = self._shadowed(index)\n"
        "        assert f > 0\n"
        "        g = other._first(index)\n"
        "        assert g.numel() == 1\n"
        "        h = self._first(5)\n"
        "        assert h.numel() == 1\n"
    )
    # Input: the one `once` (36), a staticmethod (38) and a method (40) handing back
    # `index`. Not: a name the module defines twice (34), a method returning the
    # object's own rows (42), a method defined twice (44), another object's method
    # (46), a helper handed a literal alone (48).
    assert lines(src) == [36, 38, 40]


def test_a_field_of_a_record_built_in_place_is_what_it_was_handed():
    src = (
        "def attend(q, k, pair, n):\n"
        "    shape = Shape(heads=q.shape[1], kv_heads=k.shape[1], rows=count(n))\n"
        "    assert shape.heads % shape.kv_heads == 0\n"
        "    assert shape.rows > 0\n"
        "    assert shape.total > 0\n"
        "    rec = Pair(x=pair.x.seqs[0], y=pair.y.seqs[0])\n"
        "    common = min(len(rec.x.ids), len(rec.y.ids))\n"
        "    x_ids = rec.x.ids[:common]\n"
        "    y_ids = rec.y.ids[:common]\n"
        "    assert x_ids == y_ids\n"
        "    own = Pair(x=plan(n), y=plan(n))\n"
        "    mine = own.x.ids\n"
        "    assert own.x.ids == q.ids or mine == q.ids\n"
        "    made = build(heads=q.shape[1])\n"
        "    assert made.heads > 0\n"
        "    tok = Tokenizer(q)\n"
        "    assert tok.next is None\n"
        "    viewed = Pair(x=q.view(-1))\n"
        "    assert viewed.x.numel() == n\n"
        "    named = records.Pair(x=k.shape[0])\n"
        "    assert named.x > 0\n"
        "    fixed = Pair(x=3)\n"
        "    assert fixed.x == n\n"
        "\n"
        "def given(shape, q):\n"
        "    assert shape.heads > 0\n"
    )
    # Input: fields the record was handed from the caller's tensors (3, 19, 21, the
    # class named through its module) and pair (10); the caller's count against a
    # constant a record holds (23). Not: a field handed the function's own count (4),
    # one it was not handed by name (5), the record's own plan against the caller's
    # ids, read in place or through a local (13: a postcondition), a field of what a
    # function (not a class) built (15), a tokenizer's state after reading the caller's
    # text (17). A parameter's field is the caller's (26).
    assert lines(src) == [3, 10, 19, 21, 23, 26]


def test_a_product_asserted_divisible_by_its_own_factor_holds_for_any_input():
    src = (
        "def carve(shapes, dtype, stride):\n"
        "    size = dtype.itemsize\n"
        "    for shape in shapes:\n"
        "        nbytes = prod(shape) * size\n"
        "        assert nbytes % size == 0\n"
        "        assert (shape[0] * stride) % stride == 0\n"
        "        assert nbytes % stride == 0\n"
        "        total = prod(shape) + size\n"
        "        assert total % size == 0\n"
        "    width = stride * 2\n"
        "    stride = stride + 1\n"
        "    assert width % stride == 0\n"
        "    rows = size * 4\n"
        "    assert rows % size != 0\n"
        "\n"
        "def step(a, k, n):\n"
        "    p = a * k\n"
        "    for _ in range(n):\n"
        "        assert p % k == 0\n"
        "        k = k + 1\n"
        "    q = a * n\n"
        "    assert q % n == 0\n"
        "    n = 0\n"
        "    q = a + 1\n"
        "    r = a * k\n"
        "    for _ in range(n):\n"
        "        assert r % k == 0\n"
        "        r = r + 1\n"
        "\n"
        "def tail(a, k, flag):\n"
        "    t = a * k\n"
        "    if flag:\n"
        "        assert t % k == 0\n"
        "        k = 0\n"
        "    from sizes import page\n"
        "    assert page % k == 0\n"
    )
    # Never false, whatever the caller passed: a product divided by one of its own
    # factors (5, through the local; 6, written out; 22, the factor and the product
    # bound again only past the assert) leaves no remainder. A product against another
    # input (7), a sum (9), a factor bound again between the product and the assert
    # (12) or in a loop around the assert that the product is outside of (19), the
    # product itself bound again in such a loop (27), and a test the product fails (14)
    # still read the caller's, as does an imported name against the caller's (36); the
    # factor bound again past the assert in an `if` around it, no loop, does not (33).
    assert lines(src) == [7, 9, 12, 14, 19, 27, 36]


def test_an_entry_the_callers_key_picks_from_the_modules_own_table_is_input():
    src = (
        "_KINDS = {'sigmoid': 0, 'softmax': 1}\n"
        "_SEEN = {}\n"
        "LIMITS = {'a': 1}\n"
        "LIMITS = {'b': 2}\n"
        "\n"
        "def gate(scores, scoring_func='sigmoid', kind=None):\n"
        "    code = _KINDS.get(scoring_func.lower())\n"
        "    assert code is not None\n"
        "    seen = _SEEN.get(scoring_func)\n"
        "    assert seen is not None\n"
        "    limit = LIMITS.get(kind)\n"
        "    assert limit is not None\n"
        "    own = _KINDS.get(pick(scores))\n"
        "    assert own is not None\n"
        "    fixed = _KINDS['softmax']\n"
        "    assert fixed == 1\n"
        "    entry = _KINDS.get(kind, 0)\n"
        "    assert entry > 0\n"
        "\n"
        "def shadow(kind, _KINDS):\n"
        "    entry = _KINDS.get(kind, 0)\n"
        "    assert entry > 0\n"
        "\n"
        "def local(kind):\n"
        "    table = {'a': 1}\n"
        "    entry = table.get(kind)\n"
        "    assert entry is not None\n"
        "\n"
        "CODECS = {'utf-8': 'utf8'}\n"
        "ALIASES = {'latin_1': 'iso-8859-1'}\n"
        "NAMES = {'a': 1}\n"
        "\n"
        "def add(name, codec, alias):\n"
        "    CODECS[name] = codec\n"
        "    ALIASES.update({alias: name})\n"
        "\n"
        "def lookup(name):\n"
        "    codec = CODECS.get(name)\n"
        "    assert codec is not None\n"
        "    alias = ALIASES.get(name)\n"
        "    assert alias is not None\n"
        "    n = NAMES.get(name)\n"
        "    assert n is not None\n"
        "\n"
        "HITS = {'a': 0}\n"
        "\n"
        "def count(name):\n"
        "    HITS[name] += 1\n"
        "\n"
        "def rebuilt(kind, scores):\n"
        "    _KINDS = build(scores)\n"
        "    entry = _KINDS.get(kind)\n"
        "    assert entry is not None\n"
        "    made = build(scores).get(kind)\n"
        "    assert made is not None\n"
        "    hit = HITS.get(kind)\n"
        "    assert hit is not None\n"
    )
    # A table the module writes down (a dict display bound once), looked up with the
    # caller's key by `.get`, None where the key is missing: whether there is an
    # entry is the caller's choice of key (8, 43). Not: a table the module fills as it
    # runs (10), a name bound twice (12), a key the function computed (14) or wrote
    # down (16), a lookup with a default, which finds something whatever the key (18),
    # a table the function builds itself (27), tables the module fills as it runs, by
    # an item stored (39), an update (41) or an augmented item (48, asked at 57); a table the
    # function binds under the module table's name (53) or a call hands back (55). A
    # parameter of the table's name is the caller's table, read as before (22).
    assert lines(src) == [8, 22, 43]


def test_a_local_bound_to_a_test_of_a_parameter_against_a_constant_is_that_test():
    src = (
        "def plan(table, page_size, extra=None, mode='a'):\n"
        "    paged = page_size > 1\n"
        "    if extra is None:\n"
        "        assert paged\n"
        "    known = mode in ('a', 'b')\n"
        "    assert known, mode\n"
        "    both = page_size > 1 and mode == 'a'\n"
        "    assert both\n"
        "    fits = page_size <= len(table)\n"
        "    assert fits\n"
        "    n = count(table)\n"
        "    big = n > 1\n"
        "    assert big\n"
        "    limit = make_limit(mode)\n"
        "    under = page_size < limit\n"
        "    assert under\n"
        "\n"
        "def makefile(mode, buffering):\n"
        "    writing = 'w' in mode\n"
        "    reading = 'r' in mode or not writing\n"
        "    assert reading or writing\n"
        "    single = len(mode) == 1\n"
        "    assert not single\n"
        "    unbuffered = buffering == 0\n"
        "    if unbuffered:\n"
        "        return None\n"
        "    assert not unbuffered\n"
        "    if reading and writing:\n"
        "        return 2\n"
        "    elif reading:\n"
        "        return 1\n"
        "    else:\n"
        "        assert writing\n"
        "    return 0\n"
        "\n"
        "def tiles(page_size, table):\n"
        "    small = not (page_size > 8)\n"
        "    assert small\n"
        "    n = count(table)\n"
        "    mixed = page_size > 1 and n > 1\n"
        "    assert mixed\n"
    )
    # A flag the function bound to a test of the caller's values against constants or
    # each other is that test, spelled once: asserting it, or its negation, checks the
    # caller's values (4, 6, 8, 10, 23), as `assert page_size > 1` would. Not: the
    # function's own count against a constant (13), the caller's value against a limit
    # the function computed (16: a postcondition), flags combined in the assert itself
    # (21), and a flag an `if` on the way tests -- one it left on (27) or a branch of
    # a chain on it (35): what the assert says is what the branches left. A `not` of
    # such a test is one too (38); an `and` with the function's own count is not (41).
    found = check(src)
    assert [f.line for f in found] == [4, 6, 8, 10, 23, 38]
    assert "page_size" in found[2].message  # the first input the test reads


def test_a_callers_type_test_settles_type_asserts_not_what_the_value_holds():
    src = (
        "def _split(tensors, prefix=''):\n"
        "    for key, value in tensors.items():\n"
        "        assert '%' not in key\n"
        "        assert isinstance(value, (int, Tensor))\n"
        "    assert isinstance(tensors, dict) and len(tensors) > 0\n"
        "    assert not isinstance(tensors, list)\n"
        "\n"
        "def send(tensors):\n"
        "    assert isinstance(tensors, dict)\n"
        "    return _split(tensors)\n"
        "\n"
        "def _emit(node):\n"
        "    for inner in node.get_nodes():\n"
        "        assert isinstance(inner, Node)\n"
        "    assert node.name != ''\n"
        "\n"
        "def run(node):\n"
        "    if isinstance(node, Fused):\n"
        "        _emit(node)\n"
        "        _kind(node)\n"
        "\n"
        "def _kind(node):\n"
        "    assert isinstance(node, Fused) or isinstance(node, Node)\n"
        "    if node.kind == 'a':\n"
        "        return 1\n"
        "    assert False, node.kind\n"
    )
    # The callers' `isinstance` says what type the value is: the helpers' type
    # asserts, on it or on what it holds, restate that much (4, 6, 14, 23). What the
    # value holds -- its keys (3), its length (5, in an `and` with a type test), its
    # name (15), the kind that leads to an `assert False` (26) -- no type test
    # checked: the caller's value, read as input. And `send` asserts its own public
    # parameter (9), which no test of this module stands before.
    assert lines(src) == [3, 5, 9, 15, 26]


def test_a_value_bound_only_under_a_flag_asserted_where_the_flag_holds_narrows():
    src = (
        "def run(weights, ids, shared, fallback=None):\n"
        "    collapsed = weights[:, :1] if shared else None\n"
        "    other = fallback if shared else None\n"
        "    if shared:\n"
        "        assert collapsed is not None\n"
        "        assert other is not None\n"
        "    if ids.numel() > 0:\n"
        "        assert collapsed is not None\n"
        "\n"
        "    def stage():\n"
        "        if ids.numel() > 4:\n"
        "            pass\n"
        "        elif shared:\n"
        "            assert collapsed is not None\n"
        "    stage()\n"
        "\n"
        "def again(weights, shared, fallback):\n"
        "    head = weights[:1] if shared else None\n"
        "    if shared:\n"
        "        assert head is not None\n"
        "    twice = weights[:1] if shared else None\n"
        "    twice = fallback\n"
        "    if shared:\n"
        "        assert twice is not None\n"
        "    flipped = weights[:1] if shared else None\n"
        "    shared = not shared\n"
        "    if shared:\n"
        "        assert flipped is not None\n"
        "\n"
        "    def late():\n"
        "        if shared:\n"
        "            assert flipped is not None\n"
        "    late()\n"
    )
    # `x = A if T else None`, asserted not None where T holds: the function set it
    # None exactly when T fails, so the assert is the type checker's narrowing of the
    # function's own choice (5, 20, and 14 in a nested function reading the flag and
    # the value it closes over). Not where A is the caller's value, which may itself be
    # None (6: the caller's `fallback`), where nothing on the way tests T (8), where
    # the local is bound again (24) or the flag is, before the assert (28) or before
    # the nested function that reads both (32).
    assert lines(src) == [6, 8, 24, 28, 32]


def test_an_attribute_of_what_a_call_makes_of_input_reads_that_input():
    src = "def load(path, n):\n    assert inspect_file(path).ok\n    assert plan(8).ok\n"
    # The verdict a helper returns on the caller's value is a check of it (2), as
    # `assert is_valid(path)` is; one on the function's own constant is not (3).
    assert lines(src) == [2]


def test_a_spread_of_keywords_fills_only_what_no_positional_argument_fills():
    source = (
        "def _launch(a, block=64):\n"
        "    assert a.dim() == 2\n"
        "    return a\n"
        "\n"
        "def run(x):\n"
        "    cfg = {'block': 128}\n"
        "    return _launch(x, **cfg)\n"
    )
    assert lines(source) == [2]  # `a` is the caller's `x`, not the spread `cfg`
