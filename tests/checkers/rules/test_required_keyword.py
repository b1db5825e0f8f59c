"""required-keyword (AC701): tensor repeats without output_size=, ints inferred locally."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from checkers.rules.required_keyword import RequiredKeyword
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ..rule_harness import run_rule

PARAMS = {"calls": ["torch.repeat_interleave"], "keyword": "output_size"}


def check(source: str, params=PARAMS, path: str = "pkg/module.py"):
    return run_rule(RequiredKeyword, source, params, path=path)


def flagged(body: str, header: str = "import torch\n\n") -> list[tuple[int, int]]:
    return [(f.line, f.column) for f in check(header + body)]


@pytest.mark.parametrize(
    "repeats",
    [
        "4",
        "len(lens)",
        "int(lens[0])",
        "lens.sum().item()",
        "lens.numel()",
        "x.size(0)",
        "x.shape[1] // 2",
        "x.size()[1:3][0] * 2",
        "min(block, x.shape[0])",
        "max(1, x.dim())",
        "block * 2 + 1",
        "-block",
        "block if x.dim() == 2 else 1",
    ],
)
def test_provable_ints_are_not_flagged(repeats):
    body = f"def f(x, lens, block: int):\n    return x.repeat_interleave({repeats})\n"
    assert flagged(body) == []


@pytest.mark.parametrize(
    "repeats",
    [
        "lens",  # annotated Tensor
        "lens.long()",
        "torch.tensor([1, 2], device=x.device)",
        "meta.context_lens",  # an attribute named as per-row lengths
        "grid[:, 0]",  # a multi-dimensional index: lists reject it
        "torch.tensor([1, 2]).to(x.device)",  # a host tensor moved to a device
        "x.cpu().cuda()",
    ],
)
def test_tensor_evidence_is_flagged(repeats):
    body = (
        "def f(x, lens: torch.Tensor, meta: Metadata):\n"
        f"    return x.repeat_interleave({repeats})\n"
    )
    assert len(flagged(body)) == 1


def test_unannotated_parameters_carry_no_evidence():
    body = (
        "def split(x, n_splits, blocksize, ctx):\n"
        "    y = x.repeat_interleave(n_splits)\n"
        "    y = torch.repeat_interleave(y, blocksize[0], dim=1)\n"
        "    return y.repeat_interleave(ctx.scan_length)\n"
    )
    assert flagged(body) == []


def test_other_objects_attributes_and_unknown_calls_carry_no_evidence():
    # A config's count and a helper's result look like a batch's tensor from
    # here; only a name spelled as per-row lengths tips them (see the test above).
    body = (
        "def f(x, spec: SpecConfig, layer: Layer):\n"
        "    y = x.repeat_interleave(spec.num_draft_tokens)\n"
        "    y = y.repeat_interleave(layer.output_size_per_partition)\n"
        "    y = y.repeat_interleave(partition(spec)[1])\n"
        "    return y.repeat_interleave(spec.topk or 1)\n"
    )
    assert flagged(body) == []


def test_items_of_containers_annotated_as_ints_are_ints():
    body = (
        "def f(x, block: list[int], grids: list[tuple[int, int]], shape: 'tuple[int, ...]'):\n"
        "    bn, bk = block\n"
        "    y = x.repeat_interleave(bn).repeat_interleave(block[1] // bk)\n"
        "    for h, w in grids:\n"
        "        y = y.repeat_interleave(h * w)\n"
        "    return y.repeat_interleave(shape[0])\n"
    )
    assert flagged(body) == []


def test_init_attributes_from_int_containers_and_record_fields():
    body = (
        "class Vae:\n"
        "    def __init__(self, channels: tuple[int, ...], z: int):\n"
        "        self.channels = channels\n"
        "        self.z = z\n"
        "        self.heads, self.kv_heads = split_heads(z)\n"
        "\n"
        "    def up(self, x):\n"
        "        x = x.repeat_interleave(self.channels[0] // self.z)\n"
        "        return x.repeat_interleave(self.heads // self.kv_heads)\n"
        "\n"
        "class Expand:\n"
        "    rows: int\n"
        "\n"
        "    def go(self, x):\n"
        "        return x.repeat_interleave(self.rows)\n"
    )
    assert flagged(body) == []


def test_host_tensors_cost_no_device_sync():
    body = (
        "def f(x, seq_lens_cpu, docs):\n"
        "    pages = (seq_lens_cpu.to(torch.int64) + 15) // 16\n"
        "    lengths = torch.tensor([len(d) for d in docs], dtype=torch.int64)\n"
        "    y = x.repeat_interleave(pages)\n"
        "    y = y.repeat_interleave(lengths.long())\n"
        "    return y.repeat_interleave(x.cpu())\n"
    )
    assert flagged(body) == []


def test_the_reaching_list_of_python_numbers_is_ints():
    body = (
        "def f(x, grid):\n"
        "    for row in grid:\n"
        "        t, h, w = row.tolist()\n"
        "        x = x.repeat_interleave(h * w)\n"
        "    return x\n"
    )
    assert flagged(body) == []


def test_locals_loops_defaults_constants_and_init_attributes():
    body = (
        "BLOCK = 16\n"
        "\n"
        "class Obs:\n"
        "    def __init__(self, rate: int):\n"
        "        self.rate = rate\n"
        "        self.up = 16\n"
        "        self.lens = torch.zeros(4, device='cuda')\n"
        "\n"
        "    def run(self, x, scale=32):\n"
        "        for i in range(3):\n"
        "            x = x.repeat_interleave(i)\n"
        "        for j, row in enumerate(x):\n"
        "            x = x.repeat_interleave(j)\n"
        "        g = x.size(0) // 2\n"
        "        g += 1\n"
        "        x = x.repeat_interleave(g)\n"
        "        x = x.repeat_interleave(BLOCK)\n"
        "        x = x.repeat_interleave(scale)\n"
        "        x = x.repeat_interleave(self.rate)\n"
        "        x = x.repeat_interleave(self.up)\n"
        "        return x.repeat_interleave(self.lens)\n"
    )
    # 8 spaces + "return " + "x.repeat_interleave(" = 35 characters before `self.lens`.
    assert flagged(body) == [(23, 36)]


def test_output_size_or_kwargs_means_the_caller_said_it():
    body = (
        "def f(x, lens: torch.Tensor, total: int, **kw):\n"
        "    a = torch.repeat_interleave(x, lens, output_size=total)\n"
        "    b = x.repeat_interleave(lens, dim=0, output_size=total)\n"
        "    return torch.repeat_interleave(x, lens, **kw)\n"
    )
    assert flagged(body) == []


def test_import_aliases_resolve_and_other_functions_do_not_match():
    src = (
        "import torch as th\n"
        "from torch import repeat_interleave as ri\n"
        "import numpy as np\n"
        "\n"
        "def f(x, lens: th.Tensor):\n"
        "    a = th.repeat_interleave(x, lens)\n"
        "    b = ri(x, repeats=lens)\n"
        "    c = np.repeat(x, lens)\n"
        "    d = np.repeat_interleave(x, lens)\n"
        "    return ri(lens)\n"
    )
    # `lens` after "    a = th.repeat_interleave(x, " (32) and "    b = ri(x, repeats=" (22);
    # the single-argument call itself after "    return " (11).
    assert [(f.line, f.column) for f in check(src)] == [(6, 33), (7, 23), (10, 12)]


def test_method_form_is_off_when_methods_is_false():
    body = "def f(x, lens: torch.Tensor):\n    return x.repeat_interleave(lens)\n"
    assert flagged(body) != []
    assert check("import torch\n\n" + body, {**PARAMS, "methods": False}) == []


def test_more_positionals_than_the_signature_is_another_function():
    body = (
        "def f(g, x, lens: torch.Tensor, dim):\n    return sym.repeat_interleave(g, x, lens, dim)\n"
    )
    assert flagged(body) == []


def test_message_explains_the_sync_and_the_span_is_the_statement():
    src = (
        "import torch\n"
        "\n"
        "def f(x, lens: torch.Tensor):\n"
        "    return torch.repeat_interleave(\n"
        "        x,\n"
        "        lens,\n"
        "    )\n"
    )
    (found,) = check(src)
    assert (found.line, found.column, found.end_line, found.end_column) == (6, 9, 6, 13)
    assert found.span_lines == (4, 7)
    assert "syncs" in found.message and "output_size=" in found.message


def test_other_calls_and_keywords_are_configurable():
    params = {
        "calls": ["mylib.gather"],
        "keyword": "size",
        "argument": "index",
        "signature": ["src", "index"],
        "methods": False,
    }
    src = (
        "import mylib\n"
        "\n"
        "def f(src, idx: Tensor, n: int):\n"
        "    a = mylib.gather(src, idx)\n"
        "    b = mylib.gather(src, n)\n"
        "    return mylib.gather(src, idx, size=n)\n"
    )
    assert [(f.line, f.column) for f in check(src, params)] == [(4, 27)]


def test_argument_must_be_in_the_signature():
    with pytest.raises(ConfigError, match="argument"):
        RequiredKeyword.from_table({"id": "t", **PARAMS, "argument": "count"}, "contract `t`")


def test_keyword_is_required():
    with pytest.raises(ConfigError, match="keyword"):
        RequiredKeyword.from_table({"id": "t", "calls": ["torch.repeat_interleave"]}, "t")


def test_pre_filter_needs_the_last_component():
    contract = RequiredKeyword.from_table({"id": "t", **PARAMS}, "t")
    assert contract.needles() == ("repeat_interleave",)
    assert not contract.wants(SourceFile("a.py", "import torch\nx = torch.repeat(x, 2)\n"))


def test_a_staticmethods_first_parameter_is_an_argument_not_self():
    # vLLM 0.33.0's AiterMLAHelper.get_mla_padded_q: `num_heads: int` is the first
    # parameter of a staticmethod. Read as `self`, it was a tensor and the call flagged.
    body = (
        "class Helper:\n"
        "    @staticmethod\n"
        "    def pad(num_heads: int, q, m: int):\n"
        "        return q.repeat_interleave(m // num_heads, dim=1)\n"
        "\n"
        "    def widen(self, q, m: int):\n"
        "        return q.repeat_interleave(m // self, dim=1)\n"
    )
    assert flagged(body) == [(9, 36)]


def test_a_call_with_a_starred_argument_is_not_judged():
    # `*args` may hold the repeats: neither the one-argument form nor an argument to judge.
    assert flagged("torch.repeat_interleave(*args)\ntorch.repeat_interleave(x, *rest)\n") == []


def test_the_method_form_without_the_argument_in_its_signature_is_not_judged():
    # The argument is the function's first parameter, which the method form binds to `self`.
    params = {**PARAMS, "argument": "input"}
    assert check("import torch\n\nx.repeat_interleave(lens)\n", params) == []


def test_import_of_a_submodule_binds_the_top_package():
    # `import torch.nn` binds `torch`, so `torch.repeat_interleave` is still torch's.
    assert flagged("x.sum()\ntorch.repeat_interleave(x, lens)\n", "import torch.nn\n\n") == [
        (4, 28)
    ]


@pytest.mark.parametrize(
    "header",
    ["import numpy as np\n\n", "from scipy import np\n\n"],
    ids=["import-as", "from-import"],
)
def test_a_method_called_on_an_imported_module_is_not_the_tensor_method(header):
    assert flagged("np.repeat_interleave(x, lens)\n", header) == []


def test_a_call_inside_a_wrapped_statement_is_suppressed_from_the_statement():
    found = check("import torch\n\ny = (\n    torch.repeat_interleave(x, lens)\n)\n")
    assert [(f.line, f.span_lines) for f in found] == [(4, (3, 5))]


def test_a_relative_import_is_the_projects_own_module_not_the_library():
    # `.torch` is a module of this package (a compat shim, say), not torch: its
    # repeat_interleave is another function, and the absolute import beside it still counts.
    src = (
        "from .torch import repeat_interleave\n"
        "from torch import repeat_interleave as ri\n"
        "\n"
        "def f(x, lens):\n"
        "    return repeat_interleave(x, lens), ri(lens)\n"
    )
    # The one finding is `ri(lens)`, after "    return repeat_interleave(x, lens), " (39).
    assert [(f.line, f.column) for f in check(src)] == [(5, 40)]


def test_loading_the_kind_imports_no_analysis():
    """A warm one-file run loads the kind for its declaration and may check no tree: the int
    inference (checkers.analysis) is imported where a tree is analysed, not with the kind.

    A fresh interpreter, run from this checkout's root so it imports this tree's modules.
    """
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys, checkers.linter\n"
        "from checkers.rules import kind_class\n"
        "kind_class('required-keyword')\n"
        "print('checkers.analysis.int_kinds' in sys.modules)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False"]


@pytest.mark.parametrize(
    "params, prelude, repeats",
    [
        ("opts: dict[str, Any]", "", "opts['n']"),  # a mapping of anything: no evidence
        ("opts: Dict[str, Any]", "n = opts['n']\n    ", "n"),
        ("xs: list", "", "xs[0]"),  # a bare container: items of anything
        ("n: Any", "", "n"),
        ("d: dict[str, int]", "", "d['a']"),
        ("block: list[int] | None", "rows, _ = block\n    ", "rows"),  # a union's members
        ("block: Union[tuple[int, int], None]", "rows, _ = block\n    ", "rows"),
        ("a_cpu, b_cpu", "", "torch.minimum(a_cpu, b_cpu)"),  # operands on the host
        ("a_cpu, b_cpu", "", "torch.cat([a_cpu, b_cpu])"),
        ("a_cpu", "", "torch.empty_like(a_cpu)"),  # a host tensor's twin
        ("x_cpu, data", "", "x_cpu.new_tensor(data)"),
    ],
)
def test_declared_items_and_host_operands_are_not_flagged(params, prelude, repeats):
    body = f"def f(x, {params}):\n    {prelude}return x.repeat_interleave({repeats})\n"
    assert flagged(body, header="import torch\nfrom typing import Any, Dict, Union\n\n") == []


@pytest.mark.parametrize(
    "params, prelude, repeats",
    [
        ("d: dict[str, torch.Tensor]", "", "d['lens']"),  # a mapping of tensors
        ("ls: list[torch.Tensor] | None", "", "ls[0]"),
        ("data", "reps = x.new_tensor(data)\n    ", "reps"),  # built on x's device
        ("x_cpu, n", "", "x_cpu.new_zeros(n, device='cuda')"),  # told another device
        ("a_cpu, device", "", "torch.minimum(a_cpu.to(device), a_cpu)"),  # one operand moved
        ("a_cpu, b: torch.Tensor", "", "torch.cat([a_cpu, b])"),
        ("y: torch.Tensor", "", "torch.zeros_like(y)"),
    ],
)
def test_tensors_built_on_a_device_are_flagged(params, prelude, repeats):
    body = f"def f(x, {params}):\n    {prelude}return x.repeat_interleave({repeats})\n"
    assert len(flagged(body, header="import torch\nfrom typing import Any\n\n")) == 1


def test_a_none_placeholder_says_nothing_about_the_value_bound_later():
    body = (
        "def f(x, items, use_mm):\n"
        "    grid = None\n"
        "    if use_mm:\n"
        "        grid = torch.stack([i.grid for i in items]).cpu()\n"
        "    x = torch.repeat_interleave(grid[:, 1] * grid[:, 2], grid[:, 0])\n"
        "    reps = None\n"
        "    if use_mm:\n"
        "        reps = x.new_tensor([1, 2])\n"
        "    return x.repeat_interleave(reps)\n"
    )
    # The host grid stays a host tensor; line 9's is a device tensor either way.
    assert flagged(body) == [(11, 32)]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # A placeholder alone is no tensor.
        ("    reps = None\n    return x.repeat_interleave(reps)\n", []),
        # A host tensor and a number: the result stays on the host.
        ("    return x.repeat_interleave(torch.minimum(a_cpu, 4))\n", []),
        # An operand passed by keyword counts as one passed by position.
        (
            "    return x.repeat_interleave(torch.maximum(a_cpu, other=b.to(device)))\n",
            [(6, 32)],
        ),
        ("    return x.repeat_interleave(torch.maximum(a_cpu, dtype=torch.int64))\n", []),
    ],
)
def test_operands_placeholders_and_numbers(body, expected):
    assert (
        flagged("def f(x, a_cpu, b, device):\n" + body, header="import torch\n\n\n\n") == expected
    )


@pytest.mark.parametrize(
    "repeats",
    [
        "torch.tensor(counts, device='cpu')",
        "torch.arange(n, device=torch.device('cpu'))",
        "torch.full((n,), 2, device='cpu:0')",
        "lens.to('cpu')",
        "lens.to(device='cpu', non_blocking=True)",
        "lens.to(torch.device('cpu'))",
        "torch.zeros_like(lens, device='cpu')",
        "lens.new_ones(n, device='cpu')",
        "torch.randint(0, 4, (n,), device='cpu')",
    ],
)
def test_a_device_spelled_as_the_cpu_is_the_host(repeats):
    body = f"def f(x, lens: torch.Tensor, counts, n: int):\n    return x.repeat_interleave({repeats})\n"
    assert flagged(body) == []


@pytest.mark.parametrize(
    "repeats",
    [
        "torch.tensor(counts, device='cuda')",
        "torch.tensor(counts, device=device)",
        "torch.tensor(counts, device=torch.device('cuda', 0))",
        "lens_cpu.to('cuda')",
        "lens_cpu.to(device)",
        "torch.zeros_like(lens_cpu, device=device)",
        "torch.tensor(counts, device='cpu').to(device)",
    ],
)
def test_a_device_not_spelled_as_the_cpu_is_a_device(repeats):
    body = f"def f(x, lens_cpu, counts, device):\n    return x.repeat_interleave({repeats})\n"
    assert len(flagged(body)) == 1


def test_an_attributes_declared_type_holds_for_every_assignment():
    body = (
        "class Builder:\n"
        "    def __init__(self, layers):\n"
        "        self.window: tuple[int, int] | None = None\n"
        "        for layer in layers:\n"
        "            self.window = layer.sliding_window\n"
        "\n"
        "    def build(self, x, seq_lens_cpu, query_lens_cpu):\n"
        "        swa = torch.minimum(seq_lens_cpu, query_lens_cpu + self.window[0] + 1)\n"
        "        return x.repeat_interleave(swa)\n"
    )
    # `self.window: tuple[int, int] | None` declares the attribute: every value it
    # holds is a pair of ints (or None), so its items are ints and `swa` stays a host tensor.
    assert flagged(body) == []


def test_an_undeclared_attributes_items_carry_no_evidence():
    body = (
        "class Builder:\n"
        "    def __init__(self, layers):\n"
        "        self.window = None\n"
        "        for layer in layers:\n"
        "            self.window = layer.sliding_window\n"
        "\n"
        "    def build(self, x, seq_lens_cpu):\n"
        "        swa = torch.minimum(seq_lens_cpu, self.window[0])\n"
        "        return x.repeat_interleave(swa), x.repeat_interleave(self.grids[0])\n"
        "\n"
        "    def declared(self, x):\n"
        "        self.grids: list[torch.Tensor] = []\n"
        "        return x\n"
    )
    # Undeclared, the window's item may be anything, and a torch function of it may be
    # on a device; a declaration of tensors makes the item a tensor.
    assert flagged(body) == [(11, 36), (11, 62)]


@pytest.mark.parametrize(
    "call",
    [
        "torch.repeat_interleave(torch.arange(n, dtype=torch.int64), q_lens)",
        "torch.repeat_interleave(input=torch.arange(n), repeats=q_lens)",
        "torch.arange(n).repeat_interleave(q_lens)",
        "rows_cpu.repeat_interleave(q_lens, dim=0)",
    ],
)
def test_a_host_input_means_host_repeats(call):
    body = f"def f(q_lens: torch.Tensor, rows_cpu, n: int):\n    return {call}\n"
    # repeat_interleave indexes its input with the repeats' expansion: a call that
    # runs has both on one device, and a host input makes the repeats host values.
    assert flagged(body) == []


@pytest.mark.parametrize(
    "call",
    [
        "torch.repeat_interleave(torch.arange(n, device=q_lens.device), q_lens)",
        "torch.repeat_interleave(rows, q_lens)",
        "torch.arange(n).to(device).repeat_interleave(q_lens)",
        "torch.repeat_interleave(q_lens)",
    ],
)
def test_an_input_not_known_on_the_host_says_nothing_of_the_repeats(call):
    body = f"def f(q_lens: torch.Tensor, rows, n: int, device):\n    return {call}\n"
    assert len(flagged(body)) == 1
