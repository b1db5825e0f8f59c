"""reachable-calls (AC821): a declared entry reaches no declared forbidden call."""

from __future__ import annotations

import os
import time

import pytest

from checkers import api
from checkers.analysis.call_patterns import assumed_tests
from checkers.rules.reachable_calls import ReachableCalls
from contracts.fields import ConfigError

from ...scaffold import write_tree
from ..rule_harness import run_rule

PARAMS = {
    "entries": ["*.prepare_mtp_decode", "*.capture_*"],
    "forbidden": {
        "*.item": "a host sync",
        "torch.cuda.synchronize": "a host sync",
        "*.publish_batch_ids": "host staging",
        "*.repeat_interleave": "a host sync",
    },
    "unless-keyword": {"*.repeat_interleave": "output_size"},
}
TREE = {
    "pkg/__init__.py": "from pkg.staging import publish_batch_ids\n",
    "pkg/staging.py": (
        "def publish_batch_ids(buffer, ids):\n"
        "    buffer.cpu[: len(ids)] = ids\n"
        "\n"
        "\n"
        "def device_copy(ids):\n"
        "    return ids.clone()\n"
    ),
    "pkg/base.py": (
        "class Base:\n"
        "    def width(self, lens):\n"
        "        return lens.max().item()\n"
        "\n"
        "    def plain(self, lens):\n"
        "        return lens\n"
        "\n"
        "\n"
        "class Middle(Base):\n"
        "    def plain(self, lens):\n"
        "        return lens.max().item()\n"
    ),
}


# The contract with `.tolist()` forbidden as well.
WITH_TOLIST = {**PARAMS, "forbidden": {**PARAMS["forbidden"], "*.tolist": "a host sync"}}
TOLIST = {"*.tolist": "a host sync"}


def check(tmp_path, source, params=PARAMS, files=TREE, path="pkg/builder.py"):
    return run_rule(ReachableCalls, source, params, path=path, root=tmp_path, files=files)


def chains(tmp_path, source, forbidden):
    """Each chain the `capture_*` entries of ``source`` reach a ``forbidden`` call by, as its
    finding names it after the colon, its hops without the tests they run under."""
    params = {"entries": ["*.capture_*"], "forbidden": forbidden}
    return [_hops_only(f.message.split(": ", 1)[1]) for f in check(tmp_path, source, params=params)]


def chains_with_tests(tmp_path, source) -> list[str]:
    """Each chain to a ``.tolist()`` from the ``capture_*`` entries, as its finding names it."""
    params = {"entries": ["*.capture_*"], "forbidden": TOLIST}
    return [f.message.split(": ", 1)[1] for f in check(tmp_path, source, params=params)]


def _hops_only(text: str) -> str:
    """A finding's text without the tests each hop runs under (``, where ...`` up to the
    bracket that closes the hop's place), for the tests of which functions a chain runs
    through."""
    out = []
    at = 0
    while True:
        start = text.find(", where ", at)
        if start == -1:
            return "".join(out) + text[at:]
        out.append(text[at:start])
        depth = 0
        for end in range(start, len(text)):
            if text[end] == "(":
                depth += 1
            elif text[end] == ")":
                if depth == 0:
                    break
                depth -= 1
        at = end


def _entries_reaching_tolist(tmp_path, source) -> list[str]:
    """The entry, with the line of its call, that starts each chain to a ``.tolist()``
    (without the tests the call runs under)."""
    return [c.split(" -> ")[0] for c in chains(tmp_path, source, TOLIST)]


def messages(found):
    return [(f.line, f.column, f.message) for f in found]


def test_a_chain_through_a_package_reexport_is_followed_to_its_definition(tmp_path):
    source = (
        "import pkg\n"
        "\n"
        "\n"
        "class B:\n"
        "    def prepare_mtp_decode(self, ids):\n"
        "        return pkg.publish_batch_ids(self.buf, ids)\n"
    )
    (found,) = check(tmp_path, source)
    assert found.line == 6
    assert "`pkg.publish_batch_ids()`" in found.message


def test_an_aliased_import_is_the_function_it_names(tmp_path):
    source = (
        "from pkg.staging import publish_batch_ids as stage\n"
        "\n"
        "\n"
        "def capture_rows(buf, ids):\n"
        "    return stage(buf, ids)\n"
    )
    (found,) = check(tmp_path, source)
    assert "`pkg.staging.publish_batch_ids()`" in found.message


def test_self_resolves_on_the_class_and_then_its_bases_in_order(tmp_path):
    source = (
        "from pkg.base import Middle\n"
        "\n"
        "\n"
        "class B(Middle):\n"
        "    def capture_a(self, lens):\n"
        "        return self.width(lens)\n"
        "\n"
        "    def capture_b(self, lens):\n"
        "        return self.plain(lens)\n"
        "\n"
        "    def capture_c(self, lens):\n"
        "        return super().plain(lens)\n"
    )
    found = check(tmp_path, source)
    # width: Base's (through Middle); plain: Middle's override, which syncs; so does super()'s.
    assert [f.line for f in found] == [6, 9, 12]
    assert "pkg.base.Base.width (pkg/base.py:3)" in found[0].message
    assert "pkg.base.Middle.plain (pkg/base.py:11)" in found[1].message


def test_an_override_in_a_subclass_is_not_what_self_names(tmp_path):
    source = (
        "class Base:\n"
        "    def capture_decode(self, lens):\n"
        "        return self.plain(lens)\n"
        "\n"
        "    def plain(self, lens):\n"
        "        return lens\n"
        "\n"
        "\n"
        "class Sub(Base):\n"
        "    def plain(self, lens):\n"
        "        return lens.item()\n"
    )
    assert check(tmp_path, source) == []


def test_a_class_called_is_its_init_and_a_nested_function_is_followed(tmp_path):
    source = (
        "import torch\n"
        "\n"
        "\n"
        "class Plan:\n"
        "    def __init__(self, lens):\n"
        "        torch.cuda.synchronize()\n"
        "\n"
        "\n"
        "def capture_plan(lens):\n"
        "    def inner():\n"
        "        return Plan(lens)\n"
        "\n"
        "    return inner()\n"
    )
    (found,) = check(tmp_path, source)
    assert found.line == 13
    assert "capture_plan (pkg/builder.py:13) -> capture_plan.inner (pkg/builder.py:11)" in (
        found.message
    )
    assert "Plan.__init__ (pkg/builder.py:6) -> `torch.cuda.synchronize()`" in found.message


def test_a_bare_name_in_a_method_is_not_a_method_of_its_class(tmp_path):
    source = (
        "def sync(x):\n"
        "    return x\n"
        "\n"
        "\n"
        "class B:\n"
        "    def sync(self, x):\n"
        "        return x.item()\n"
        "\n"
        "    def capture_x(self, x):\n"
        "        return sync(x)\n"
    )
    assert check(tmp_path, source) == []


def test_the_shortest_chain_to_each_forbidden_call_is_named_once(tmp_path):
    source = (
        "def a(x):\n"
        "    return b(x)\n"
        "\n"
        "\n"
        "def b(x):\n"
        "    return x.item()\n"
        "\n"
        "\n"
        "def capture_it(x):\n"
        "    a(x)\n"
        "    b(x)\n"
        "    return x.item()\n"
    )
    # `b`'s `.item()` is reached through `a` and through `b`: named once, by the shorter
    # chain; the entry's own `.item()` is another call to mend, and a finding of its own.
    direct, through_b = sorted(check(tmp_path, source), key=lambda f: -f.line)
    assert (direct.line, direct.column) == (12, 12)
    assert direct.message.endswith("capture_it (pkg/builder.py:12) -> `x.item()`")
    assert (through_b.line, through_b.column) == (11, 5)
    assert through_b.message.endswith(
        "capture_it (pkg/builder.py:11) -> b (pkg/builder.py:6) -> `x.item()`"
    )


@pytest.mark.parametrize(
    ("call", "flagged"),
    [
        ("torch.repeat_interleave(ids, lens)", True),
        ("torch.repeat_interleave(ids, lens, output_size=n)", False),
        ("ids.repeat_interleave(lens, **options)", False),
        ("item(ids)", False),  # a plain function named like the method is not it
        ("ids.items()", False),
        ("torch.cuda.synchronize()", True),
        ("cuda.synchronize()", False),
        ("ids.repeat_interleave(3)", False),
        ("ids.repeat_interleave(int(n))", False),
        ("ids.repeat_interleave(k)", False),  # `k: int`
        ("ids.repeat_interleave(m)", False),  # `m = len(lens)` above
        ("ids.repeat_interleave(repeats=m)", False),
        ("torch.repeat_interleave(ids, 4)", False),
        ("torch.repeat_interleave(4, lens)", True),  # the int is the input, not the repeats
        ("ids.repeat_interleave(lens)", True),
        ("lens_cpu.tolist()", False),
        ("lens_cpu.max().item()", False),
        ("lens_cpu[:n].max().item()", False),  # an element of host data is host data
        ("lens_cpu[0].item()", False),
        ("lens.cpu().int().tolist()", False),  # the copy is the `.cpu()`, a call of its own
        ("lens.cpu(non_blocking=True)[0].item()", False),
        ("lens.numpy().tolist()", False),
        ("lens.int().tolist()", True),
        ("lens[:n].max().item()", True),
        ("lens.tolist()", True),
        ("host_only(lens)", False),
        ("cuda_only(lens)", True),
    ],
)
def test_what_counts_as_a_forbidden_call(tmp_path, call, flagged):
    params = {
        **PARAMS,
        "forbidden": {**PARAMS["forbidden"], "*.tolist": "a host sync"},
        "unless-int-argument": {"*.repeat_interleave": "repeats:0"},
        "host-receivers": ["*_cpu"],
    }
    source = (
        "import torch\n\n\n"
        "def host_only(values):\n"
        '    if values.device.type != "cpu":\n'
        "        return None\n"
        "    return values.tolist()\n\n\n"
        "def cuda_only(values):\n"
        "    if values.is_cpu:\n"
        "        return None\n"
        "    return values.tolist()\n\n\n"
        "def capture_x(ids, lens, n, options, k: int, lens_cpu):\n"
        "    m = len(lens)\n"
        f"    return {call}\n"
    )
    assert bool(check(tmp_path, source, params=params)) is flagged


# A move told the CPU is the copy `*.cpu` forbids, however it is spelled; told to copy
# without waiting (`non_blocking=True`), it is no sync, and told another device no copy to
# the host at all. What such a copy returned is host data, as `.cpu()`'s is.
MOVES_TO_THE_HOST = (
    ("lens.to('cpu')", ["`lens.to()`"]),
    ("lens.to(device='cpu')", ["`lens.to()`"]),
    ("lens.to('cpu:0', torch.int32)", ["`lens.to()`"]),
    ("lens.to('cpu').tolist()", ["`lens.to()`"]),
    ("lens.to('cpu', non_blocking=True)", []),
    ("lens.to(torch.int32)", []),
    ("lens.to(device)", []),
    ("lens.to('cuda')", []),
    ("lens_cpu.to('cpu')", []),
)


@pytest.mark.parametrize(("call", "reached"), MOVES_TO_THE_HOST)
def test_a_move_told_the_cpu_is_a_copy_to_the_host(tmp_path, call, reached):
    params = {
        "entries": ["*.capture_*"],
        "forbidden": {"*.cpu": "a copy to the host", "*.tolist": "a host sync"},
        "host-receivers": ["*_cpu"],
    }
    source = f"import torch\n\n\ndef capture_x(lens, lens_cpu, device):\n    return {call}\n"
    found = check(tmp_path, source, params=params)
    assert [f.message.rsplit(" -> ", 1)[1] for f in found] == reached
    assert all("reaches `*.cpu` (a copy to the host)" in f.message for f in found)


# A local computed before the call, the call, and whether it is a device read: a local is
# host data when every name it was computed from is, through operations that keep their
# inputs' device.
HOST_LOCALS = (
    ("tmp = torch.clamp(lens_cpu, max=4)", "tmp.sum().item()", False),
    ("tmp = F.pad(lens_cpu, (1, 0))", "tmp.tolist()", False),
    ("tmp = lens_cpu.sum()", "tmp.item()", False),
    ("tmp = lens_cpu[:n] + 1", "tmp.tolist()", False),
    ("tmp = -meta.seq_lens_cpu", "tmp.tolist()", False),
    ("a = lens_cpu.sum()\n    tmp = a * 2", "tmp.item()", False),
    ("tmp = lens.cpu()", "tmp.tolist()", False),  # a copy, reported where it is made
    ("tmp = lens.to('cpu')", "tmp.tolist()", False),
    ("tmp = lens.to(device='cpu', non_blocking=True)", "tmp.tolist()", False),
    ("tmp = lens.cpu() + lens_cpu", "tmp.tolist()", False),
    ("tmp = lens.cpu() + lens", "tmp.tolist()", True),
    ("tmp = torch.cat((lens_cpu, meta.seq_lens_cpu))", "tmp.tolist()", False),
    ("tmp = lens_cpu.sum()\n    tmp = lens_cpu.max()", "tmp.item()", False),  # both host
    ("import torch.nn.functional as G\n    tmp = G.pad(lens_cpu, (1, 0))", "tmp.tolist()", False),
    ("tmp = torch.minimum(lens_cpu, lens)", "tmp.item()", True),  # one input on the device
    ("tmp = torch.cat([lens_cpu, lens])", "tmp.tolist()", True),
    ("tmp = lens_cpu.sum()", "tmp.cuda().item()", True),  # moved before it is read
    ("tmp = lens_cpu.sum()", "helper(tmp).item()", True),
    ("F = lens\n    tmp = F.pad(lens_cpu, (1, 0))", "tmp.tolist()", True),  # not the module
    ("tmp = lens_cpu.to(device)", "tmp.item()", True),  # a move
    ("tmp = lens_cpu.cuda()", "tmp.item()", True),
    ("tmp = torch.clamp(lens_cpu, max=4, out=buf)", "tmp.item()", True),
    ("tmp = torch.tensor(lens_cpu)", "tmp.item()", False),  # made on the default device
    ("tmp = torch.tensor(times)", "tmp.item()", False),
    ("tmp = torch.zeros(n, **options)", "tmp.item()", True),  # which may name a device
    ("tmp = torch.as_tensor(lens)", "tmp.item()", True),  # the data as it is
    ("tmp = torch.as_tensor(lens_cpu)", "tmp.item()", False),
    ("tmp = helper(lens_cpu)", "tmp.item()", True),  # another function's result
    ("tmp = np.cumsum(lens_cpu)", "tmp.item()", True),  # not torch's: not read
    ("tmp = lens_cpu.sum()\n    tmp = lens.sum()", "tmp.item()", True),  # bound twice
    ("tmp = lens_cpu.sum()\n    for tmp in lens:\n        pass", "tmp.item()", True),
    ("tmp = lens_cpu.sum()\n    tmp += lens", "tmp.item()", True),
    ("tmp = torch.clamp(*args)", "tmp.item()", True),
    # A view or reshape is where its tensor is, whatever the shape it is given.
    ("tmp = lens_cpu.reshape(n, -1)", "tmp.tolist()", False),
    ("b, m = meta.shape\n    tmp = lens_cpu.view(b * m).transpose(0, n)", "tmp.tolist()", False),
    ("tmp = lens_cpu.add(lens)", "tmp.tolist()", True),  # another tensor's data
    # A tensor built on a device spelled as the CPU is host data, and stays there when it is
    # added to in place; a device not spelled so may be any.
    ("tmp = torch.tensor(lens, device='cpu')", "tmp.tolist()", False),
    ("tmp = torch.zeros(n, device=torch.device('cpu:0'))", "tmp.tolist()", False),
    ("tmp = torch.zeros(n, device=device)", "tmp.tolist()", True),
    ("tmp = torch.zeros(n, device='cpu')\n    tmp += lens", "tmp.tolist()", False),
    ("tmp = torch.zeros(n, device='cpu')\n    meta.n += 1\n    buf[0] += 1", "tmp.tolist()", False),
    ("tmp = torch.zeros(n, device='cpu')\n    out = torch.zeros_like(tmp)", "out.tolist()", False),
    ("tmp = torch.zeros(n, device='cpu')\n    tmp = tmp + lens", "tmp.tolist()", True),
    ("tmp = lens.cpu()\n    tmp += lens", "tmp.tolist()", False),
    ("tmp = lens.cpu().item()\n    tmp += lens", "tmp.item()", True),  # a number: now a tensor
    # The receiver itself a torch function of host data, as a local would be.
    ("tmp = lens.cpu()", "torch.isnan(tmp).sum().item()", False),
    ("tmp = lens", "torch.isnan(lens_cpu).sum().item()", False),
    ("tmp = lens", "F.pad(lens_cpu, (1, 0)).tolist()", False),
    ("tmp = lens", "torch.isnan(lens).sum().item()", True),
    # An elementwise comparison is where its operands are.
    ("tmp = lens", "(lens_cpu > 0).sum().item()", False),
    ("tmp = lens_cpu == 0", "tmp.sum().item()", False),
    ("tmp = lens_cpu == n", "tmp.sum().item()", True),  # `n` may be a device tensor
    ("tmp = lens", "(lens_cpu == meta.seq_lens_cpu).all().item()", False),
    ("tmp = lens", "(lens_cpu > lens).sum().item()", True),
    ("tmp = lens", "(helper(lens_cpu) > 0).sum().item()", True),  # another function's result
    ("tmp = lens_cpu != lens", "tmp.tolist()", True),
    ("tmp = lens", "torch.minimum(lens_cpu, lens).item()", True),
    ("tmp = lens", "torch.zeros(n).tolist()", False),  # made on the default device
    ("tmp = lens", "np.cumsum(lens_cpu).tolist()", True),  # not torch's: not read
    ("tmp = lens_cpu", "torch.isnan(tmp).cuda().item()", True),  # moved before the read
)


@pytest.mark.parametrize(("bind", "call", "flagged"), HOST_LOCALS)
def test_a_local_computed_from_host_data_only_is_host_data(tmp_path, bind, call, flagged):
    params = {
        "entries": ["*.capture_*"],
        "forbidden": {"*.item": "a host sync", "*.tolist": "a host sync"},
        "host-receivers": ["*_cpu"],
    }
    source = (
        "import numpy as np\n"
        "import torch\n"
        "import torch.nn.functional as F\n\n\n"
        "def capture_x(lens, lens_cpu, meta, n, device, buf, times, options, *args):\n"
        f"    {bind}\n"
        f"    return {call}\n"
    )
    assert bool(check(tmp_path, source, params=params)) is flagged


def test_a_local_copied_to_the_host_is_host_data_with_no_host_names_declared(tmp_path):
    source = (
        "def capture_x(lens):\n"
        "    copied = lens.cpu()\n"
        "    moved = lens.float()\n"
        "    return copied.tolist(), moved.tolist()\n"
    )
    assert chains(tmp_path, source, TOLIST) == ["capture_x (pkg/builder.py:4) -> `moved.tolist()`"]


def test_a_forbidden_method_of_an_element_is_printed_with_the_name_it_was_taken_of(tmp_path):
    source = "def capture_x(lens, n):\n    return lens[:n].max().item()\n"
    (found,) = check(tmp_path, source)
    assert found.message.endswith("-> `lens[...].max().item()`")


@pytest.mark.parametrize(
    ("excluded", "lines"),
    [
        ((), [7, 13, 17]),
        # whatever selects it, by decorator or by name
        (("pkg.builder.Gdn._forward",), [7, 17]),
        (("*.Gdn._forward", "capture_*"), [7]),
        # a glob reads as `entries` does: its last part is the function's own name (a class's
        # name excludes none of its methods), and a module's `*` its functions, not methods
        (("*.Gdn",), [7, 13, 17]),
        (("pkg.builder.*",), [7, 13]),
        (("*",), []),
    ],
)
def test_an_excluded_entry_is_none_whatever_selects_it(tmp_path, excluded, lines):
    params = {**PARAMS, "entries": ["*.capture_*"], "entry-decorators": ["*.graph_captured"]}
    if excluded:
        params["exclude-entries"] = list(excluded)
    source = (
        "from pkg import marks\n"
        "\n"
        "\n"
        "class Mla:\n"
        "    @marks.graph_captured\n"
        "    def _forward(self, x):\n"
        "        return x.item()\n"
        "\n"
        "\n"
        "class Gdn:\n"
        "    @marks.graph_captured\n"
        "    def _forward(self, x):\n"
        "        return x.item()\n"
        "\n"
        "\n"
        "def capture_step(x):\n"
        "    return x.item()\n"
    )
    found = check(tmp_path, source, params=params)
    assert sorted(f.line for f in found) == lines


def test_a_decorator_makes_an_entry_and_the_entry_glob_names_a_function_not_its_nested_ones(
    tmp_path,
):
    params = {**PARAMS, "entries": ["*.capture_*"], "entry-decorators": ["*.graph_captured"]}
    source = (
        "from pkg import marks\n"
        "\n"
        "\n"
        "@marks.graph_captured\n"
        "def step(x):\n"
        "    return x.item()\n"
        "\n"
        "\n"
        "def capture_outer(x):\n"
        "    def helper(y):\n"
        "        return y.item()\n"
        "\n"
        "    return x\n"
    )
    found = check(tmp_path, source, params=params)
    # `step` is decorated; `capture_outer` never calls `helper`, and `helper` is no entry.
    assert [f.line for f in found] == [6]


def test_a_class_decorator_marks_its_forward_and_a_boundary_decorator_stops_a_chain(tmp_path):
    params = {
        **PARAMS,
        "entries": ["*.never_named"],
        "entry-class-decorators": ["pkg.compile.support_torch_compile"],
        "boundary-decorators": ["*.eager_on_graph"],
    }
    source = (
        "from pkg.compile import eager_on_graph, support_torch_compile\n"
        "\n"
        "\n"
        "@support_torch_compile(dynamic=True)\n"
        "class Model:\n"
        "    def forward(self, x):\n"
        "        self.plan(x)\n"
        "        return self.helper(x)\n"
        "\n"
        "    def load_weights(self, x):\n"
        "        return x.item()\n"
        "\n"
        "    @eager_on_graph\n"
        "    def plan(self, x):\n"
        "        return x.item()\n"
        "\n"
        "    def helper(self, x):\n"
        "        return x.tolist()\n"
        "\n"
        "\n"
        "class Plain:\n"
        "    def forward(self, x):\n"
        "        return x.item()\n"
    )
    params["forbidden"] = {**PARAMS["forbidden"], "*.tolist": "a host sync"}
    found = check(tmp_path, source, params=params)
    # Only the decorated class's forward; `plan` runs outside the region; `helper` is reached.
    assert [(f.line, "tolist" in f.message) for f in found] == [(8, True)]


def test_an_attribute_holding_a_project_class_is_followed_into_its_methods(tmp_path):
    layers = (
        "class RMSNorm:\n"
        "    def forward(self, x):\n"
        "        return x / x.norm().item()\n"
        "\n"
        "\n"
        "class Pool:\n"
        "    def carve(self, x):\n"
        "        return x.tolist()\n"
    )
    source = (
        "from pkg.layers import Pool, RMSNorm\n"
        "\n"
        "\n"
        "class Model:\n"
        "    def __init__(self, maybe):\n"
        "        self.norm = RMSNorm()\n"
        "        self.pool = Pool()\n"
        "        self.either = RMSNorm() if maybe else Pool()\n"
        "\n"
        "    def capture_step(self, x):\n"
        "        self.either(x)\n"
        "        self.pool.carve(x)\n"
        "        return self.norm(x)\n"
    )
    params = WITH_TOLIST
    found = check(tmp_path, source, params=params, files={**TREE, "pkg/layers.py": layers})
    assert sorted((f.line, "pkg.layers" in f.message) for f in found) == [(12, True), (13, True)]


KERNELS = (
    "def fill_kv_cache(k, v):\n"
    "    return k.max().item()\n"
    "\n"
    "\n"
    "def decode_attention(q):\n"
    "    return q.tolist()\n"
    "\n"
    "\n"
    "def other_attention(q):\n"
    "    return q\n"
    "\n"
    "\n"
    "def plan_kernel(on_host, q):\n"
    "    if on_host:\n"
    "        return q.tolist()\n"
    "    return q\n"
)


def test_an_attribute_holding_a_project_function_is_followed_into_each_it_may_hold(tmp_path):
    source = (
        "from pkg import kernels\n"
        "from pkg.kernels import decode_attention, fill_kv_cache, other_attention\n"
        "\n"
        "\n"
        "class Updater:\n"
        "    def __init__(self, sliding):\n"
        "        if sliding:\n"
        "            self.update = self.update_sliding\n"
        "        else:\n"
        "            self.update = self.update_single\n"
        "\n"
        "    def update(self, x):\n"
        "        raise NotImplementedError()\n"
        "\n"
        "    def update_sliding(self, x):\n"
        "        return x\n"
        "\n"
        "    def update_single(self, x):\n"
        "        return x.max().item()\n"
        "\n"
        "\n"
        "class Impl:\n"
        "    def __init__(self, fused, maybe):\n"
        "        self.fill = fill_kv_cache\n"
        "        self.attend = kernels.decode_attention\n"
        "        self.fwd = self._forward_cuda\n"
        "        self.given = fused\n"
        "        self.either = decode_attention if maybe else other_attention\n"
        "        self.pick = other_attention\n"
        "        self.updater = Updater(maybe)\n"
        "        self.built = kernels.pick()[0].run\n"
        "        self.width = 4\n"
        "\n"
        "    def later(self):\n"
        "        self.pick = decode_attention\n"
        "\n"
        "    def _forward_cuda(self, x):\n"
        "        return torch.cuda.synchronize()\n"
        "\n"
        "    def capture_fill(self, k, v):\n"
        "        return self.fill(k, v)\n"
        "\n"
        "    def capture_attend(self, q):\n"
        "        return self.attend(q)\n"
        "\n"
        "    def capture_fwd(self, q):\n"
        "        return self.fwd(q)\n"
        "\n"
        "    def capture_given(self, q):\n"
        "        return self.given(q)\n"
        "\n"
        "    def capture_either(self, q):\n"
        "        return self.either(q)\n"
        "\n"
        "    def capture_pick(self, q):\n"
        "        return self.pick(q)\n"
        "\n"
        "    def capture_update(self, x):\n"
        "        return self.updater.update(x)\n"
        "\n"
        "    def capture_built(self, q):\n"
        "        return self.built(q), self.width(q)\n"
        "\n"
        "    def setup(self, maybe):\n"
        "        self.plan = kernels.plan_kernel\n"
        "        self.u = Updater(maybe)\n"
        "\n"
        "    def capture_attr_of(self, k):\n"
        "        return self.fill.cache_info(k)\n"
        "\n"
        "    def capture_fill_again(self, k, v):\n"
        "        return self.fill(k, v)\n"
        "\n"
        "    def capture_plan(self, q):\n"
        "        return self.plan(False, q)\n"
        "\n"
        "    def capture_u(self, x):\n"
        "        return self.u.update(x)\n"
        "\n"
        "    def capture_another(self, this, x):\n"
        "        return this.updater.update(x)\n"
    )
    params = WITH_TOLIST
    found = check(tmp_path, source, params=params, files={**TREE, "pkg/kernels.py": KERNELS})
    # A parameter's value, a choice, an attribute of a call's result and a constant are not
    # known, a method of the function held is not the function, and another object's
    # attribute is not this instance's; each function assigned
    # (two, apart, for `self.pick`) is a way the call may go, an instance's own attribute
    # stands in for the class's method of that name, and a function held binds its own
    # first parameter (`False` rules out `plan_kernel`'s `if on_host:`).
    assert sorted(f.message.split(": ", 1)[1] for f in found) == [
        "Impl.capture_attend (pkg/builder.py:44) -> pkg.kernels.decode_attention "
        "(pkg/kernels.py:6) -> `q.tolist()`",
        "Impl.capture_fill (pkg/builder.py:41) -> pkg.kernels.fill_kv_cache "
        "(pkg/kernels.py:2) -> `k.max().item()`",
        "Impl.capture_fill_again (pkg/builder.py:72) -> pkg.kernels.fill_kv_cache "
        "(pkg/kernels.py:2) -> `k.max().item()`",
        "Impl.capture_fwd (pkg/builder.py:47) -> Impl._forward_cuda (pkg/builder.py:38) "
        "-> `torch.cuda.synchronize()`",
        "Impl.capture_pick (pkg/builder.py:56) -> pkg.kernels.decode_attention "
        "(pkg/kernels.py:6) -> `q.tolist()`",
        "Impl.capture_u (pkg/builder.py:78) -> Updater.update_single "
        "(pkg/builder.py:19) -> `x.max().item()`",
        "Impl.capture_update (pkg/builder.py:59) -> Updater.update_single "
        "(pkg/builder.py:19) -> `x.max().item()`",
    ]


def test_a_function_installed_as_an_object_s_method_is_followed_with_the_object_bound(
    tmp_path,
):
    source = (
        "from functools import partial\n"
        "\n"
        "\n"
        "def fast_plan(self, on_host, lens):\n"
        "    if on_host:\n"
        "        return lens.cpu()\n"
        "    return lens\n"
        "\n"
        "\n"
        "def other_plan(self, lens):\n"
        "    return lens.cpu()\n"
        "\n"
        "\n"
        "def install(wrappers, w):\n"
        "    for i in range(2):\n"
        # the scan for installations reads past a line break inside brackets
        "        wrappers[i].begin_forward = (\n"
        "            partial(fast_plan, wrappers[i])\n"
        "        )\n"
        "    w.end_forward = partial(other_plan, wrappers[0])\n"
        "    w.made = build(other_plan, w)\n"
        "    w.alone = partial(other_plan)\n"
        "\n"
        "\n"
        "class Updater:\n"
        "    def capture_host(self, wrapper, lens):\n"
        "        wrapper.begin_forward(True, lens)\n"
        "\n"
        "    def capture_device(self, wrapper, lens):\n"
        "        wrapper.begin_forward(False, lens)\n"
        "\n"
        "    def capture_other(self, wrapper, lens):\n"
        "        wrapper.end_forward(True, lens)\n"
        "\n"
        "    def capture_elsewhere(self, wrapper, lens):\n"
        "        wrapper.plan(lens)\n"
        "\n"
        "    def capture_built(self, wrapper, lens):\n"
        "        wrapper.made(lens), wrapper.alone(wrapper, lens)\n"
        "\n"
        "    def capture_element(self, wrappers, lens):\n"
        "        wrappers[0].begin_forward(True, lens)\n"
        "\n"
        "    def capture_named(self, lens):\n"
        "        from pkg import other\n"
        "\n"
        "        begin_forward(True, lens)\n"
        "        other.run(True, lens)\n"
        "\n"
        "    def capture_one_line(self, w, lens):\n"
        "        w.solo(True, lens)\n"
        "\n"
        "\n"
        "def install_solo(w): w.solo = partial(fast_plan, w)\n"
        "\n"
        "\n"
        "def install_run(w):\n"
        "    w.run = partial(fast_plan, w)\n"
    )
    # Another module installs `plan` on the objects it makes.
    elsewhere = (
        "import types\n"
        "\n"
        "\n"
        "def host_plan(self, lens):\n"
        "    return lens.cpu()\n"
        "\n"
        "\n"
        "def install(w):\n"
        "    w.plan = types.MethodType(host_plan, w)\n"
    )
    params = {"entries": ["*.capture_*"], "forbidden": {"*.cpu": "a copy to the host"}}
    files = {
        **TREE,
        "pkg/plans.py": elsewhere,
        "pkg/other.py": "def run(on_host, lens):\n    return lens\n",
    }
    found = check(tmp_path, source, params=params, files=files)
    # `True` and `False` bind `on_host`, the parameter after the object `partial` bound; a
    # `partial` of another object than the one assigned to, or of none, another call of the
    # object, and what another module installs (its own objects' method) install nothing.
    # An element is an object of no known class too; a function's name is no method, and a
    # method the call's spelling resolves (`other.run`) is that one.
    assert [f.message.split(": ", 1)[1].partition(" ->")[0] for f in found] == [
        "Updater.capture_host (pkg/builder.py:26)",
        "Updater.capture_element (pkg/builder.py:41)",
        "Updater.capture_one_line (pkg/builder.py:50)",
    ]
    assert _hops_only(found[0].message).endswith("-> fast_plan (pkg/builder.py:6) -> `lens.cpu()`")
    # The same installation in the module that calls it is followed.
    found = check(
        tmp_path,
        source.replace("wrapper.plan(lens)", "wrapper.plan(lens)\n\n\n" + elsewhere).replace(
            "def install(w)", "def install_plan(w)"
        ),
        params=params,
    )
    assert [f.line for f in found] == [26, 35, 53, 62]


def test_inside_a_method_it_installs_a_module_s_call_of_that_method_is_the_library_s(tmp_path):
    source = (
        "from functools import partial\n"
        "\n"
        "\n"
        "def decode_plan(self, lens):\n"
        "    return self._inner.plan(lens)\n"
        "\n"
        "\n"
        "def prefill_plan(self, lens):\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def install(d, p):\n"
        "    d.plan = partial(decode_plan, d)\n"
        "    p.plan = partial(prefill_plan, p)\n"
        "\n"
        "\n"
        "def capture_decode(d, lens):\n"
        "    return decode_plan(d, lens)\n"
        "\n"
        "\n"
        "def capture_any(w, lens):\n"
        "    return w.plan(lens)\n"
    )
    # A replacement's call of the method it replaces runs what it replaced: the library's.
    assert chains(tmp_path, source, TOLIST) == [
        "capture_any (pkg/builder.py:22) -> prefill_plan (pkg/builder.py:9) -> `lens.tolist()`"
    ]


def test_a_function_installed_on_self_is_followed_with_the_instance_bound(tmp_path):
    source = (
        "import types\n"
        "from functools import partial\n"
        "\n"
        "\n"
        "def plan(self, on_host, lens):\n"
        "    if on_host:\n"
        "        return lens.cpu()\n"
        "    return lens\n"
        "\n"
        "\n"
        "class Wrapper:\n"
        "    def __init__(self, fast):\n"
        "        self.begin = partial(plan, self)\n"
        "        self.end = types.MethodType(plan, self)\n"
        "        self.other = fast\n"
        "\n"
        "    def capture_begin(self, lens):\n"
        "        return self.begin(True, lens)\n"
        "\n"
        "    def capture_end(self, lens):\n"
        "        return self.end(False, lens)\n"
    )
    # `on_host` is the parameter after the instance: `True` takes the copy, `False` not.
    assert chains(tmp_path, source, {"*.cpu": "a copy to the host"}) == [
        "Wrapper.capture_begin (pkg/builder.py:18) -> plan (pkg/builder.py:7) -> `lens.cpu()`"
    ]


# Each way Python lets a method spell an assignment of an instance to `self.norm`. The
# resolution walks only the methods whose text may spell one; a spelling the scan misses
# loses the chain through `self.norm(x)`.
ASSIGNMENTS = {
    "plain": "    def __init__(self):\n        self.norm = RMSNorm()\n",
    "annotated": "    def __init__(self):\n        self.norm: RMSNorm = RMSNorm()\n",
    "chained": "    def __init__(self):\n        both = self.norm = RMSNorm()\n",
    "name-in-brackets": "    def __init__(self):\n        (self).norm = RMSNorm()\n",
    "target-in-brackets": "    def __init__(self):\n        (self.norm) = RMSNorm()\n",
    "blanks": "    def __init__(self):\n        self . norm = RMSNorm()\n",
    "continued": "    def __init__(self):\n        self \\\n            .norm = RMSNorm()\n",
    "comment": (
        "    def __init__(self):\n"
        "        (\n"
        "            self.norm  # the layer's own\n"
        "        ) = RMSNorm()\n"
    ),
    "crlf-endings": "    def __init__(self):\n        self.norm = RMSNorm()\n",
    "cr-endings": "    def __init__(self):\n        self.norm = RMSNorm()\n",
    "other-instance-name": "    def __init__(obj):\n        obj.norm = RMSNorm()\n",
    "one-line": "    def __init__(self): self.norm = RMSNorm()\n",
    "nested": (
        "    def __init__(self):\n"
        "        def build():\n"
        "            self.norm = RMSNorm()\n"
        "\n"
        "        build()\n"
    ),
    "nfkc": "    def __init__(self):\n        self.\uff4eorm = RMSNorm()\n",  # fullwidth n
}
LAYERS = "class RMSNorm:\n    def forward(self, x):\n        return x.norm().item()\n"


# In a module not being checked, a method whose instance is `self` is first skipped where the
# summary's module-wide `self.x =` scan (`Module.self_set`) names no such attribute: the
# base-class file is that case, and every spelling must survive the scan.
def _spellings():
    for spelling in sorted(ASSIGNMENTS):
        for where in ("checked-file", "base-class-file"):
            yield pytest.param(spelling, where, id=f"{spelling}-{where}")


@pytest.mark.parametrize(("spelling", "where"), list(_spellings()))
def test_every_spelling_of_an_attribute_s_assignment_is_followed(tmp_path, spelling, where):
    init = ASSIGNMENTS[spelling]
    # Above the assignment, a read an `=` or a `:` follows: the scan keeps every line, not
    # only its first.
    reader = "    def width(self):\n        return self.norm.weight, self.cache[self.norm:]\n\n"
    step = "    def capture_step(self, x):\n        return self.norm(x)\n"
    files = {**TREE, "pkg/layers.py": LAYERS}
    if where == "checked-file":
        source = f"from pkg.layers import RMSNorm\n\n\nclass Model:\n{reader}{init}\n{step}"
    else:
        files["pkg/model_base.py"] = (
            f"from pkg.layers import RMSNorm\n\n\nclass Base:\n{reader}{init}"
        )
        source = f"from pkg.model_base import Base\n\n\nclass Model(Base):\n{step}"
    # Every line of the class ends so: the lines counted to the assignment are Python's.
    ending = {"crlf-endings": "\r\n", "cr-endings": "\r"}.get(spelling, "\n")
    source = source.replace("\n", ending)
    files = {path: text.replace("\n", ending) for path, text in files.items()}
    if spelling == "one-line":  # and the file's first line blank: the first line break counts
        source = "\n" + source
        files = {path: "\n" + text for path, text in files.items()}
    (found,) = check(tmp_path, source, files=files)
    assert "pkg.layers.RMSNorm.forward" in found.message


@pytest.mark.parametrize("where", ["checked-file", "base-class-file"])
def test_only_a_method_that_may_assign_the_attribute_is_walked_to_learn_its_class(
    tmp_path, monkeypatch, where
):
    from checkers.analysis import program

    walked = []  # each body asked of, whole or for one facet (a method's carriers)
    detail, facet = program.Module.detail, program.Module.facet
    monkeypatch.setattr(
        program.Module, "detail", lambda self, qual: walked.append(qual) or detail(self, qual)
    )
    monkeypatch.setattr(
        program.Module, "facet", lambda self, qual, f: walked.append(qual) or facet(self, qual, f)
    )
    layers = LAYERS + "\n\nclass Pool:\n    def carve(self, x):\n        return x.sum().item()\n"
    readers = "".join(
        f"    def read_{i}(self):\n        return self.norm.weight, self.pool == {i}\n\n"
        for i in range(3)
    )
    init = "    def __init__(self):\n        self.norm = RMSNorm()\n        self.pool = Pool()\n\n"
    # Another class of the module assigns its own `self.norm`: not the one asked about.
    other = "\n\nclass Other:\n    def __init__(self):\n        self.norm = Pool()\n"
    step = "    def capture_step(self, x):\n        return self.norm(x)\n"
    # A second class asks again about the attribute, and about another, of the same module.
    second = "\n\nclass Second({}):\n    def capture_other(self, x):\n        return self.pool.carve(x), self.norm(x)\n"
    files = {**TREE, "pkg/layers.py": layers}
    head = "from pkg.layers import Pool, RMSNorm\n\n\n"
    if where == "checked-file":
        klass = "Model"
        source = f"{head}class Model:\n{readers}{init}{step}{other}{second.format(klass)}"
    else:
        klass = "Base"
        files["pkg/model_base.py"] = f"{head}class Base:\n{readers}{init}{other}"
        source = (
            f"from pkg.model_base import Base\n\n\nclass Model(Base):\n{step}{second.format(klass)}"
        )
    found = check(tmp_path, source, files=files)
    # Each entry's call through `self.norm` to the norm's `.item()`; the second's through
    # `self.pool` to the pool's as well.
    lines = [19, 29] if where == "checked-file" else [6, 11]
    norm = [
        f.line for f in found if "-> pkg.layers.RMSNorm.forward (pkg/layers.py:3) ->" in f.message
    ]
    pool = [f.line for f in found if "-> pkg.layers.Pool.carve (pkg/layers.py:" in f.message]
    assert (norm, pool, len(found)) == (lines, lines[1:], 3)
    # The entries, the one method assigning `self.norm` and `self.pool`, and the methods the
    # chains enter: the readers spell `self.norm` and `self.pool` with no `=` after them
    # (`==` is not one they can hide), and `Other.__init__` is of another class.
    assert sorted(set(walked)) == sorted(
        [
            "Model.capture_step",
            "Second.capture_other",
            f"{klass}.__init__",
            "RMSNorm.forward",
            "Pool.carve",
        ]
    )


def test_a_module_whose_text_is_not_at_hand_has_every_method_walked(tmp_path):
    from checkers.project import Project
    from checkers.source import SourceFile

    base = (
        "from pkg.layers import RMSNorm\n\n\n"
        "class Base:\n    def __init__(self):\n        self.norm = RMSNorm()\n"
    )
    files = {**TREE, "pkg/layers.py": LAYERS, "pkg/model_base.py": base}
    source = (
        "from pkg.model_base import Base\n\n\n"
        "class Model(Base):\n    def capture_step(self, x):\n        return self.norm(x)\n"
    )
    write_tree(tmp_path, files)
    project = Project(tmp_path, (tmp_path,))
    # The base's module is known by the tree of a file the run holds (parsed for its own
    # check), not by its text.
    held = SourceFile("pkg/model_base.py", base, abspath=str(tmp_path / "pkg/model_base.py"))
    assert held.tree is not None
    project.add_source(held)
    found = run_rule(ReachableCalls, source, PARAMS, path="pkg/builder.py", root=tmp_path,
                     files=files, project=project)  # fmt: skip
    assert [f.line for f in found] == [6]


def test_a_warm_run_reads_no_text_for_an_attribute_whose_bodies_the_cache_holds(
    tmp_path, monkeypatch
):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "no-item"\nkind = "reachable-calls"\nentries = ["*.capture_*"]\n'
        'forbidden = { "*.item" = "a host sync" }\n'
    )
    # A function never asked about: the cache holds some of the module's bodies, not all.
    base = (
        "from pkg.layers import RMSNorm\n\n\n"
        "class Base:\n    def __init__(self):\n        self.norm = RMSNorm()\n\n\n"
        "def unrelated():\n    return 0\n"
    )
    model = (
        "from pkg.model_base import Base\n\n\n"
        "class Model(Base):\n    def capture_step(self, x):\n        return self.norm(x)\n"
    )
    files = {"pkg/__init__.py": "", "pkg/layers.py": LAYERS, "pkg/model_base.py": base}
    write_tree(tmp_path, {**files, "pkg/builder.py": model})
    past = time.time() - 60  # older than the cache's racy window
    for rel in (*files, "pkg/builder.py"):
        os.utime(tmp_path / rel, (past, past))
    assert len(api.check([], cwd=tmp_path, jobs=1).findings) == 1
    from checkers.analysis import program

    read = []
    lines = program.Program._lines
    monkeypatch.setattr(
        program.Program,
        "_lines",
        lambda self, rel, *args: read.append(rel) or lines(self, rel, *args),
    )
    assert len(api.check(["pkg/builder.py"], cwd=tmp_path, jobs=1).findings) == 1
    # `Base.__init__`'s details are the cache's: no line of pkg/model_base.py is read.
    assert read == []


def test_a_few_module_texts_are_kept_for_the_assignment_scan(tmp_path):
    from checkers.analysis.program import program_of
    from checkers.project import Project

    files = {**TREE, "pkg/layers.py": LAYERS}
    for i in range(6):
        files[f"pkg/b{i}.py"] = (
            "from pkg.layers import RMSNorm\n\n\n"
            f"class B{i}:\n    def __init__(self):\n        self.norm = RMSNorm()\n"
        )
    imports = "".join(f"from pkg.b{i} import B{i}\n" for i in range(6))
    bases = ", ".join(f"B{i}" for i in range(6))
    source = f"{imports}\n\nclass Model({bases}):\n    def capture_step(self, x):\n        return self.norm(x)\n"
    project = Project(tmp_path, (tmp_path,))
    found = run_rule(ReachableCalls, source, PARAMS, path="pkg/builder.py", root=tmp_path,
                     files=files, project=project)  # fmt: skip
    assert len(found) == 1
    # Seven modules scanned (the class's and its six bases'), the last few texts kept.
    from checkers.analysis.resolution import _KEPT_TEXTS

    assert len(vars(program_of(project))["_texts"]) == min(1 + 6, _KEPT_TEXTS) < 1 + 6


def test_a_branch_a_literal_argument_rules_out_is_not_taken(tmp_path):
    source = (
        "def update(lens, use_ragged, *, strict=None):\n"
        "    if use_ragged:\n"
        "        return lens.sum().item()\n"
        "    if not strict:\n"
        "        return lens\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_replay(lens):\n"
        "    return update(lens, False, strict=None)\n"
        "\n"
        "\n"
        "def capture_prefill(lens):\n"
        "    return update(lens, True)\n"
    )
    params = WITH_TOLIST
    found = check(tmp_path, source, params=params)
    # replay rules out `if use_ragged:`, and `strict=None` returns at `if not strict:`, so
    # nothing past it runs; prefill takes `if use_ragged:` and returns there, so nothing
    # past it runs either: of the three calls, prefill's `.item()` alone is reached.
    assert sorted((f.line, f.message.rpartition("`")[0].rpartition("`")[2]) for f in found) == [
        (14, "lens.sum().item()"),
    ]


def test_a_literal_argument_binds_a_method_s_parameter_past_its_instance(tmp_path):
    source = (
        "def plain(use_ragged, lens):\n"
        "    if use_ragged:\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "class Updater:\n"
        "    def __init__(self, use_ragged, lens):\n"
        "        if use_ragged:\n"
        "            lens.tolist()\n"
        "\n"
        "    def update(self, use_ragged, lens):\n"
        "        if use_ragged:\n"
        "            return lens.tolist()\n"
        "\n"
        "    @staticmethod\n"
        "    def static(use_ragged, lens):\n"
        "        if use_ragged:\n"
        "            return lens.tolist()\n"
        "\n"
        "    def capture_method(self, lens):\n"
        "        return self.update(False, lens)\n"
        "\n"
        "    def capture_static(self, lens):\n"
        "        return Updater.static(False, lens)\n"
        "\n"
        "\n"
        "def capture_init(lens):\n"
        "    return Updater(False, lens)\n"
        "\n"
        "\n"
        "def capture_plain(lens):\n"
        "    return plain(False, lens)\n"
    )
    # `False` binds `use_ragged` in each: past `self` for a method called on `self` and for
    # a class's `__init__`, as the first parameter of a function and of a static method.
    assert chains(tmp_path, source, TOLIST) == []


COPIES = {"*.cpu": "a copy to the host", "*.tolist": "a host sync"}
SYNCS = {**COPIES, "*.item": "a host sync"}


def _last_hops(tmp_path, source, files=TREE) -> list[tuple[int, str]]:
    """Each finding's line and the forbidden call it ends at, sorted, with ``SYNCS``
    forbidden from the ``capture_*`` entries."""
    params = {"entries": ["*.capture_*"], "forbidden": SYNCS}
    found = check(tmp_path, source, params=params, files=files)
    return sorted((f.line, f.message.rpartition("-> ")[2]) for f in found)


def test_a_literal_argument_decides_a_comparison_of_its_parameter(tmp_path):
    source = (
        "from pkg.modes import Mode\n"
        "\n"
        "\n"
        "def plan(lens, page_size, mode, window=None):\n"
        "    if page_size == 1:\n"
        "        host = None\n"
        "    else:\n"
        "        host = lens.cpu()\n"
        "    if mode != 'decode':\n"
        "        lens.tolist()\n"
        "    if window is not None:\n"
        "        lens.max().item()\n"
        "    if mode == Mode.DRAFT:\n"
        "        lens.sum().item()\n"
        "    if window == 4:\n"
        "        lens.mean().item()\n"
        "    return host\n"
        "\n"
        "\n"
        "def capture_decode(lens):\n"
        "    return plan(lens, 1, 'decode')\n"
        "\n"
        "\n"
        "def capture_prefill(lens):\n"
        "    return plan(lens, 16, mode='prefill', window=4)\n"
        "\n"
        "\n"
        "def capture_extra(lens):\n"
        "    return plan(lens, 1, 'decode', None, True)\n"
    )
    files = {**TREE, "pkg/modes.py": "class Mode:\n    DRAFT = 'draft'\n"}
    found = _last_hops(tmp_path, source, files)
    # Decode's `1` and `'decode'` rule out the `.cpu()` and the `.tolist()`, and the window
    # it does not pass holds its default, `None`; a comparison with a name's value
    # (`Mode.DRAFT`) is undecided from every entry. A literal past the parameters binds
    # nothing.
    assert found == [
        (21, "`lens.sum().item()`"),
        (25, "`lens.cpu()`"),
        (25, "`lens.max().item()`"),
        (25, "`lens.mean().item()`"),
        (25, "`lens.sum().item()`"),
        (25, "`lens.tolist()`"),
        (29, "`lens.sum().item()`"),
    ]


def test_a_parameter_a_call_does_not_pass_holds_its_default(tmp_path):
    source = (
        "def inner(lens, check=False, *, strict=None, mode='decode'):\n"
        "    if check:\n"
        "        lens.sum().item()\n"
        "    if strict is not None:\n"
        "        lens.max().item()\n"
        "    if mode != 'decode':\n"
        "        lens.tolist()\n"
        "    return lens\n"
        "\n"
        "\n"
        "def middle(lens, check=False):\n"
        "    return inner(lens, check)\n"
        "\n"
        "\n"
        "class Runner:\n"
        "    def plan(self, lens, check=False):\n"
        "        if check:\n"
        "            return lens.cpu()\n"
        "\n"
        "    def capture_method(self, lens):\n"
        "        return self.plan(lens)\n"
        "\n"
        "\n"
        "def capture_plain(lens):\n"
        "    inner(lens)\n"
        "    return middle(lens)\n"
        "\n"
        "\n"
        "def capture_passed(lens):\n"
        "    inner(lens, True)\n"
        "    return inner(lens, strict=1, mode='prefill')\n"
        "\n"
        "\n"
        "def capture_starred(lens, args):\n"
        "    return inner(lens, *args)\n"
        "\n"
        "\n"
        "def capture_keywords(lens, kwargs):\n"
        "    return inner(lens, **kwargs)\n"
        "\n"
        "\n"
        "def probe(lens=None, check=False):\n"
        "    if check:\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_bare():\n"
        "    return probe()\n"
    )
    # What a call leaves out holds its default, in the callee and in what the callee hands
    # it on to; a starred argument may fill any parameter, so it binds none.
    found = _last_hops(tmp_path, source)
    assert found == [
        (30, "`lens.sum().item()`"),
        (31, "`lens.max().item()`"),
        (31, "`lens.tolist()`"),
        (35, "`lens.max().item()`"),
        (35, "`lens.sum().item()`"),
        (35, "`lens.tolist()`"),
        (39, "`lens.max().item()`"),
        (39, "`lens.sum().item()`"),
        (39, "`lens.tolist()`"),
    ]


def test_a_kwargs_handed_on_holds_the_keywords_its_caller_passed(tmp_path):
    source = (
        "def inner(lens, out=None, check_input_valid=False):\n"
        "    if check_input_valid:\n"
        "        lens.tolist()\n"
        "    return out\n"
        "\n"
        "\n"
        "def outer(lens, out=None, **kwargs):\n"
        "    return inner(lens, out=out, **kwargs)\n"
        "\n"
        "\n"
        "def twice(lens, **kw):\n"
        "    return outer(lens, **kw)\n"
        "\n"
        "\n"
        "def filled(lens, **kwargs):\n"
        "    kwargs['check_input_valid'] = True\n"
        "    return inner(lens, **kwargs)\n"
        "\n"
        "\n"
        "def renamed(lens, **kwargs):\n"
        "    options = kwargs\n"
        "    return inner(lens, **options)\n"
        "\n"
        "\n"
        "def mixed(lens, opts, **kwargs):\n"
        "    kwargs['check_input_valid'] = True\n"
        "    print(**opts)\n"
        "    return inner(lens, **kwargs)\n"
        "\n"
        "\n"
        "def capture_plain(lens):\n"
        "    return outer(lens, out=lens, sm_scale=0.5)\n"
        "\n"
        "\n"
        "def capture_twice(lens):\n"
        "    return twice(lens, sm_scale=0.5)\n"
        "\n"
        "\n"
        "def capture_off(lens):\n"
        "    return twice(lens, check_input_valid=False)\n"
        "\n"
        "\n"
        "def capture_checked(lens):\n"
        "    return outer(lens, check_input_valid=True)\n"
        "\n"
        "\n"
        "def capture_options(lens, opts):\n"
        "    return outer(lens, **opts)\n"
        "\n"
        "\n"
        "def capture_filled(lens):\n"
        "    return filled(lens)\n"
        "\n"
        "\n"
        "def capture_renamed(lens):\n"
        "    return renamed(lens)\n"
        "\n"
        "\n"
        "def capture_mixed(lens):\n"
        "    return mixed(lens, {})\n"
        "\n"
        "\n"
        "def capture_named(lens, scale):\n"
        "    return twice(lens, sm_scale=scale)\n"
    )
    # What a caller passes by keywords a function does not name is what its `**kwargs`
    # holds, and handing `**kwargs` on unchanged hands exactly those on: a callee's
    # default is bound where none of them names it. Keywords not known (`**opts`), a
    # `**kwargs` the function adds to, or one it hands on under another name say nothing.
    assert _entries_reaching_tolist(tmp_path, source) == [
        "capture_checked (pkg/builder.py:44)",
        "capture_options (pkg/builder.py:48)",
        "capture_filled (pkg/builder.py:52)",
        "capture_renamed (pkg/builder.py:56)",
        "capture_mixed (pkg/builder.py:60)",
    ]


def test_what_a_kwargs_holds_is_bound_only_where_it_is_handed_on(tmp_path, monkeypatch):
    entered = []
    edges = ReachableCalls._edges

    def counted(self, program, mod, node):
        entered.append((node[1], node[2]))
        return edges(self, program, mod, node)

    monkeypatch.setattr(ReachableCalls, "_edges", counted)
    source = (
        "def sink(lens, **kwargs):\n"
        "    print(lens, kwargs.get('x'))\n"
        "    return lens.item()\n"
        "\n"
        "\n"
        "def plain(lens):\n"
        "    return lens.item()\n"
        "\n"
        "\n"
        "def capture_a(lens, opts):\n"
        "    sink(lens, x=opts)\n"
        "    return plain(lens, **opts)\n"
        "\n"
        "\n"
        "def capture_b(lens, opts):\n"
        "    sink(lens, y=opts)\n"
        "    return plain(lens)\n"
    )
    # Each entry reaches `sink`'s `.item()` and `plain`'s: two entries, two chains each.
    assert len(check(tmp_path, source)) == 2 * 2
    # Which keywords a `**kwargs` holds decides something only where the function hands it
    # on: anywhere else, calls passing different keywords enter one search node.
    assert {q: len({b for n, b in entered if n == q}) for q in ("sink", "plain")} == {
        "sink": 1,
        "plain": 1,
    }


def test_an_or_is_ruled_out_where_each_of_its_operands_is(tmp_path):
    source = (
        "def inner(lens, meta=None, n=None, flag=False):\n"
        "    if meta is not None or n is not None:\n"
        "        lens.sum().item()\n"
        "    if (meta is not None or n is not None) and flag:\n"
        "        lens.max().item()\n"
        "    if not (meta is None and n is None):\n"
        "        lens.mean().item()\n"
        "    if meta is not None or lens.is_cuda:\n"
        "        lens.min().item()\n"
        "    if meta is not None or (n is not None and flag):\n"
        "        lens.std().item()\n"
        "    return lens\n"
        "\n"
        "\n"
        "def capture_none(lens):\n"
        "    return inner(lens, None)\n"
        "\n"
        "\n"
        "def capture_some(lens):\n"
        "    return inner(lens, None, 4, True)\n"
    )
    # An `or` holds only where one of its operands does (and an `and` fails only where one
    # of its operands does): where the caller's values rule out every operand, the branch
    # is off. An operand no value decides (`lens.is_cuda`), or one that says two things
    # (`n is not None and flag`), leaves it on.
    found = _last_hops(tmp_path, source)
    assert found == [
        (16, "`lens.min().item()`"),
        (16, "`lens.std().item()`"),
        (20, "`lens.max().item()`"),
        (20, "`lens.mean().item()`"),
        (20, "`lens.min().item()`"),
        (20, "`lens.std().item()`"),
        (20, "`lens.sum().item()`"),
    ]


def test_a_parameter_passed_on_unchanged_carries_its_caller_s_literal(tmp_path):
    source = (
        "def inner(lens, use_ragged):\n"
        "    if use_ragged:\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "def middle(lens, use_ragged):\n"
        "    return inner(lens, use_ragged=use_ragged)\n"
        "\n"
        "\n"
        "def rebinding(lens, use_ragged):\n"
        "    use_ragged = not use_ragged\n"
        "    return inner(lens, use_ragged)\n"
        "\n"
        "\n"
        "def capture_passed(lens):\n"
        "    return middle(lens, False)\n"
        "\n"
        "\n"
        "def capture_rebound(lens):\n"
        "    return rebinding(lens, False)\n"
        "\n"
        "\n"
        "def keyword_only(lens, *, use_ragged):\n"
        "    return inner(lens, use_ragged)\n"
        "\n"
        "\n"
        "def capture_keyword(lens):\n"
        "    return keyword_only(lens, use_ragged=False)\n"
    )
    # `middle` hands its caller's `False` on as it came, and so does `keyword_only` its
    # keyword-only parameter's; `rebinding` hands on a value of its own, which no literal
    # decides.
    assert chains(tmp_path, source, TOLIST) == [
        "capture_rebound (pkg/builder.py:20) -> rebinding (pkg/builder.py:12)"
        " -> inner (pkg/builder.py:3) -> `lens.tolist()`"
    ]


def test_past_a_use_none_does_not_support_a_parameter_bound_to_none_is_not(tmp_path):
    source = (
        "def update(lens, prefix_lens, window):\n"
        "    kernel_lens = lens + window - prefix_lens\n"
        "    return kernel_lens.sum().item()\n"
        "\n"
        "\n"
        "def tested(lens, meta):\n"
        "    if meta.is_decode:\n"
        "        lens = lens + 1\n"
        "    return lens.max().item()\n"
        "\n"
        "\n"
        "def guarded(lens, prefix_lens):\n"
        "    extra = prefix_lens.sum() if prefix_lens is not None else 0\n"
        "    return (lens + extra).tolist()\n"
        "\n"
        "\n"
        "def rebound(lens, prefix_lens):\n"
        "    if prefix_lens is None:\n"
        "        prefix_lens = lens\n"
        "    total = lens + prefix_lens\n"
        "    return total.cpu()\n"
        "\n"
        "\n"
        "def capture_verify(lens):\n"
        "    update(lens, None, 4)\n"
        "    tested(lens, None)\n"
        "    guarded(lens, None)\n"
        "    rebound(lens, None)\n"
        "\n"
        "\n"
        "def capture_extend(lens, prefix):\n"
        "    return update(lens, prefix, 4)\n"
    )
    # `None - x` and `None.is_decode` raise, so nothing after them runs with a `None`
    # passed; a conditional expression's way runs only where its test holds, and a
    # parameter the function rebinds holds its own value, not the caller's.
    assert chains(tmp_path, source, SYNCS) == [
        "capture_verify (pkg/builder.py:27) -> guarded (pkg/builder.py:14) -> `.tolist()`",
        "capture_verify (pkg/builder.py:28) -> rebound (pkg/builder.py:21) -> `total.cpu()`",
        "capture_extend (pkg/builder.py:32) -> update (pkg/builder.py:3)"
        " -> `kernel_lens.sum().item()`",
    ]


def test_what_a_caller_s_tests_say_of_a_value_it_hands_on_holds_in_the_callee(tmp_path):
    source = (
        "class Base:\n"
        "    def capture(self, lens, mode, spec):\n"
        "        if mode.is_decode_or_idle():\n"
        "            lens.sum().item()\n"
        "        if spec is not None:\n"
        "            return spec.lens.tolist()\n"
        "        return self.verify(lens, mode)\n"
        "\n"
        "    def verify(self, lens, mode):\n"
        "        if mode.is_decode_or_idle():\n"
        "            return lens.max().item()\n"
        "        return lens.cpu()\n"
        "\n"
        "\n"
        "class Derived(Base):\n"
        "    def capture_graph(self, lens, mode, spec):\n"
        "        if mode.is_decode_or_idle():\n"
        "            return lens\n"
        "        return super().capture(lens, mode, spec)\n"
        "\n"
        "    def capture_swapped(self, lens, mode):\n"
        "        if not mode.is_decode_or_idle():\n"
        "            mode = self.decode_mode\n"
        "            return super().capture(lens, mode, None)\n"
    )
    # Past `if mode.is_decode_or_idle(): return`, the base is called with a mode that is
    # not: its decode branch is off the path, and so is `verify`'s, which `capture` hands
    # `mode` on to unasked; `spec is not None` is not known there, so its `.tolist()`
    # stays. A mode rebound before it is handed on is another value: what the test said of
    # the first says nothing of it.
    assert chains(tmp_path, source, SYNCS) == [
        "Derived.capture_graph (pkg/builder.py:19) -> Base.capture (pkg/builder.py:6)"
        " -> `spec.lens.tolist()`",
        "Derived.capture_graph (pkg/builder.py:19) -> Base.capture (pkg/builder.py:7)"
        " -> Base.verify (pkg/builder.py:12) -> `lens.cpu()`",
        "Derived.capture_swapped (pkg/builder.py:24) -> Base.capture (pkg/builder.py:4)"
        " -> `lens.sum().item()`",
        "Derived.capture_swapped (pkg/builder.py:24) -> Base.capture (pkg/builder.py:7)"
        " -> Base.verify (pkg/builder.py:11) -> `lens.max().item()`",
        "Derived.capture_swapped (pkg/builder.py:24) -> Base.capture (pkg/builder.py:7)"
        " -> Base.verify (pkg/builder.py:12) -> `lens.cpu()`",
    ]


def test_what_a_caller_s_tests_say_of_a_local_it_hands_on_holds_in_the_callee(tmp_path):
    source = (
        "def kernel(query, lens):\n"
        "    if query.dim() == 4:\n"
        "        b, q = query.shape[:2]\n"
        "        flat = query.reshape(b * q, *query.shape[2:])\n"
        "    else:\n"
        "        flat = query\n"
        "    if not flat.is_cuda:\n"
        "        return lens.tolist()\n"
        "    return flat\n"
        "\n"
        "\n"
        "def kernel_moved(query, lens):\n"
        "    flat = query.to(lens.device)\n"
        "    if not flat.is_cuda:\n"
        "        return lens.tolist()\n"
        "    return flat\n"
        "\n"
        "\n"
        "def capture_tested(x, lens):\n"
        "    query = x.float()\n"
        "    query = query * 2\n"
        "    if query.is_cuda and lens is not None:\n"
        "        return kernel(query, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_rebound(x, y, lens):\n"
        "    query = x.float() * y\n"
        "    if query.is_cuda:\n"
        "        query = query.cpu()\n"
        "        return kernel(query, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_other(x, y, lens):\n"
        "    query = x.float()\n"
        "    if query.is_cuda:\n"
        "        return kernel(y, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_moved(x, lens):\n"
        "    query = x.float()\n"
        "    if query.is_cuda:\n"
        "        return kernel_moved(query, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_walrus(x, y, lens):\n"
        "    query = x.float() * y\n"
        "    if query.is_cuda:\n"
        "        (query := query.cpu())\n"
        "        return kernel(query, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_each(x, y, lens, others):\n"
        "    query = x.float() * y\n"
        "    if query.is_cuda:\n"
        "        return [kernel(query, lens) for query in others]\n"
        "    return None\n"
    )
    # A local tested and handed on unchanged carries what the test said of it, as a
    # parameter does; a callee's local computed from the parameter by operations that keep
    # its device (a reshape, itself) is on the parameter's device. Rebound after the test,
    # the local is another value (so is a comprehension's variable of that name); moved,
    # the callee's local may be anywhere; and what was tested of one value says nothing of
    # another handed on.
    assert _entries_reaching_tolist(tmp_path, source) == [
        "capture_rebound (pkg/builder.py:31)",
        "capture_other (pkg/builder.py:38)",
        "capture_moved (pkg/builder.py:45)",
        "capture_walrus (pkg/builder.py:53)",
        "capture_each (pkg/builder.py:60)",
    ]


def test_a_local_computed_from_a_parameter_alone_is_on_its_device(tmp_path):
    source = (
        "def kernel(query, lens):\n"
        "    if not query.is_cuda:\n"
        "        return lens.tolist()\n"
        "    return query\n"
        "\n"
        "\n"
        "def capture_cast(x, lens):\n"
        "    query = x.float()\n"
        "    if query.is_cuda:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_mixed(x, y, lens):\n"
        "    query = x + y\n"
        "    if query.is_cuda:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_shape(x, lens):\n"
        "    query = x.float()\n"
        "    if query.is_contiguous:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "class Layer:\n"
        "    def capture_attribute(self, x, lens):\n"
        "        query = self.x.float()\n"
        "        if query.is_cuda:\n"
        "            return kernel(x, lens)\n"
        "        return None\n"
        "\n"
        "\n"
        "def capture_either(x, y, lens, c):\n"
        "    if c:\n"
        "        query = y\n"
        "    else:\n"
        "        query = x\n"
        "    if query.is_cuda:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_twice(x, lens):\n"
        "    query = x.float()\n"
        "    flat = query.reshape(-1)\n"
        "    if flat.is_cuda:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_rebound(x, lens):\n"
        "    x = x * 2\n"
        "    query = x\n"
        "    if query.is_cuda:\n"
        "        return kernel(x, lens)\n"
        "    return None\n"
    )
    # `x.float()` is where `x` is, so its test is `x`'s, and so is a view of that; a sum of
    # two parameters may be on either's device, an attribute other than the device says
    # nothing of it, an attribute of `self` named as a parameter is not that parameter, a
    # local bound to one parameter or another is neither, and a parameter rebound is not
    # the value its caller passed.
    assert _entries_reaching_tolist(tmp_path, source) == [
        "capture_mixed (pkg/builder.py:17)",
        "capture_shape (pkg/builder.py:24)",
        "Layer.capture_attribute (pkg/builder.py:32)",
        "capture_either (pkg/builder.py:42)",
        "capture_rebound (pkg/builder.py:58)",
    ]


# What runs before `lens.tolist()` in a callee passed `None` for `p`, and whether the
# `.tolist()` is still reached: past a use of `p` that `None` does not support, it is not.
NONE_USES = (
    ("x = p + 1", False),
    ("x = -p", False),
    ("x = p.shape", False),
    ("x = p[0]", False),
    ("p()", False),
    ("x = foo(1, p.size)", False),  # an argument among others
    ("x = (lens, p.size)", False),
    ("x = 1 if p.ok else 2", False),  # a conditional expression's test always runs
    ("x = p.ok and lens", False),  # an `and`'s first operand too
    ("if p.ok:\n        pass", False),  # an `if` test, past both ways
    ("x = p | lens", True),  # `int | None` is a type
    ("x = not p", True),
    ("x = p is None", True),
    ("x = lens + 1 if p is None else p + 1", True),  # only one way runs
    ("x = lens and p.ok", True),
    ("x = [y + p.z for y in lens]", True),
    ("f = lambda: p.x", True),
    ("for y in lens:\n        x = p + 1", True),  # the loop may not run
    ("p = lens\n    x = p + 1", True),  # another value, rebound first
    ("(p := lens)\n    x = p + 1", True),
    ("try:\n        pass\n    except ValueError as p:\n        pass\n    x = p.args", True),
    ("import os as p\n    x = p.path", True),
    ("import p.sub\n    x = p.sub", True),
    ("x = p + 1\n    p = lens", False),  # the caller's `None` was used before the rebinding
)


def _reached_with_none(tmp_path, body: str) -> list[str]:
    """The chains by which ``capture_it`` reaches a ``.tolist()`` through ``callee(lens,
    None)``, ``body`` being the callee's."""
    source = (
        f"def callee(lens, p):\n{body}\n\ndef capture_it(lens):\n    return callee(lens, None)\n"
    )
    return chains(tmp_path, source, TOLIST)


@pytest.mark.parametrize(("statement", "reached"), NONE_USES)
def test_what_a_none_parameter_cannot_survive_rules_out_what_follows(tmp_path, statement, reached):
    body = f"    {statement}\n    return lens.tolist()\n"
    assert bool(_reached_with_none(tmp_path, body)) is reached


# A call of a method of a parameter bound to `None`, or of what it gives, raises before it
# runs: whether `callee`'s forbidden call is still reached with `p=None` passed.
NONE_RECEIVERS = (
    ("return p.tolist()", False),
    ("return p.max().tolist()", False),
    ("return p[0].tolist()", False),
    ("return lens.tolist() if p is None else p.tolist()", True),  # its own way, `lens`'s
    ("return (p or lens).tolist()", True),
    ("return helper(p).tolist()", True),
    ("p = lens\n    return p.tolist()", True),  # another value by then
)


@pytest.mark.parametrize(("statement", "reached"), NONE_RECEIVERS)
def test_a_method_of_a_parameter_bound_to_none_is_never_called(tmp_path, statement, reached):
    found = _reached_with_none(tmp_path, f"    {statement}\n")
    assert bool(found) is reached, found


# An assert before `lens.tolist()` in a callee passed `p=None`: past an assert, its test
# holds, as past `if not test: raise`; an assert that fails for `None` ends the path.
ASSERTS = (
    ("assert p is not None", False),
    ("assert p", False),
    ("assert p.ok", False),  # `None.ok` raises first
    ("assert p is not None, 'given'", False),
    ("assert p is None", True),
    ("assert not p", True),
    ("assert lens is not None, p.why", True),  # the message runs only where it fails
    ("assert p is not None or lens", True),
    ("if lens:\n        assert p is not None", True),  # only inside the `if`
)


@pytest.mark.parametrize(("statement", "reached"), ASSERTS)
def test_past_an_assert_its_test_holds(tmp_path, statement, reached):
    body = f"    {statement}\n    return lens.tolist()\n"
    assert bool(_reached_with_none(tmp_path, body)) is reached


# An argument, and whether the callee's `if p is None:` body is still reached from it: a
# value that cannot be None by its form rules that body out; one that may be None does not.
NOT_NONE_ARGUMENTS = (
    ("lens.cpu()", False),  # a copy to the host is a tensor
    ("lens.to('cpu')", False),
    ("lens.pin_memory()", False),
    ("lens.numpy()", False),
    ("lens.max().item()", False),
    ("lens + 1", False),
    ("-lens", False),
    ("lens > 0", False),
    ("[lens]", False),
    ("(lens, lens)", False),
    ("{'a': lens}", False),
    ("{lens}", False),
    ("[y for y in lens]", False),
    ("f'{lens}'", False),
    ("0.5", False),
    ("b'x'", False),
    ("None", True),
    ("lens", True),  # a name may hold None
    ("make(lens)", True),  # a function may return None
    ("lens.get(0)", True),  # so may a method other than a tensor's copy or move
    ("lens or None", True),
    ("lens if lens else None", True),
    ("lens.cpu() if lens else None", True),
)


@pytest.mark.parametrize(("argument", "reached"), NOT_NONE_ARGUMENTS)
def test_an_argument_that_cannot_be_none_rules_out_the_callee_s_none_branch(
    tmp_path, argument, reached
):
    source = (
        "def callee(lens, p):\n"
        "    if p is None:\n"
        "        return lens.tolist()\n"
        "    return p\n"
        "\n"
        "\n"
        "def capture_it(lens):\n"
        f"    return callee(lens, {argument})\n"
    )
    assert bool(chains(tmp_path, source, TOLIST)) is reached


def test_a_local_bound_to_a_parameter_hands_that_parameter_on(tmp_path):
    source = (
        "def inner(lens, meta):\n"
        "    if meta is None:\n"
        "        return lens.tolist()\n"
        "    return meta\n"
        "\n"
        "\n"
        "def capture_alias(lens, values):\n"
        "    pixels = values.pop('pixels')\n"
        "    meta = values\n"
        "    return inner(pixels, meta)\n"
        "\n"
        "\n"
        "def capture_rebound(lens, values):\n"
        "    values.pop('pixels')\n"
        "    values = lens.get('meta')\n"
        "    meta = values\n"
        "    return inner(lens, meta)\n"
    )
    # Past `values.pop(...)`, `values` is not None, and `meta` is another name for it; a
    # parameter rebound first holds a value of the function's own, which may be None.
    assert chains(tmp_path, source, TOLIST) == [
        "capture_rebound (pkg/builder.py:17) -> inner (pkg/builder.py:3) -> `lens.tolist()`"
    ]


def test_a_value_known_only_not_to_be_none_decides_no_other_test_and_is_handed_on(tmp_path):
    source = (
        "def inner(lens, p):\n"
        "    if p:\n"
        "        lens.sum().item()\n"
        "    else:\n"
        "        lens.min().item()\n"
        "    if p == 0:\n"
        "        lens.max().item()\n"
        "    if p is not None:\n"
        "        return p\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def middle(lens, p):\n"
        "    return inner(lens, p)\n"
        "\n"
        "\n"
        "def capture_copy(lens):\n"
        "    return middle(lens, lens.cpu())\n"
    )
    # A host copy is not None, so past `if p is not None: return p` nothing runs; whether
    # it is true or equal to 0 is its value's, which is not known.
    syncs = {"*.item": "a host sync", "*.tolist": "a host sync"}
    assert chains(tmp_path, source, syncs) == [
        "capture_copy (pkg/builder.py:18) -> middle (pkg/builder.py:14)"
        " -> inner (pkg/builder.py:3) -> `lens.sum().item()`",
        "capture_copy (pkg/builder.py:18) -> middle (pkg/builder.py:14)"
        " -> inner (pkg/builder.py:5) -> `lens.min().item()`",
        "capture_copy (pkg/builder.py:18) -> middle (pkg/builder.py:14)"
        " -> inner (pkg/builder.py:7) -> `lens.max().item()`",
    ]


def test_a_literal_of_any_type_decides_a_truth_and_a_comparison(tmp_path):
    source = (
        "def inner(lens, scale):\n"
        "    if scale:\n"
        "        lens.sum().item()\n"
        "    if scale == 0.5:\n"
        "        lens.max().item()\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_zero(lens):\n"
        "    return inner(lens, 0.0)\n"
    )
    # `0.0` is false and is not 0.5: neither body runs from it.
    assert chains(tmp_path, source, SYNCS) == [
        "capture_zero (pkg/builder.py:10) -> inner (pkg/builder.py:6) -> `lens.tolist()`"
    ]


def test_a_question_asked_with_arguments_tells_nothing_of_the_next_asking(tmp_path):
    source = (
        "def callee(lens, mode):\n"
        "    if mode.is_kind(1):\n"
        "        return lens.tolist()\n"
        "    if mode.is_decode():\n"
        "        return lens.cpu()\n"
        "\n"
        "\n"
        "def capture_it(lens, mode):\n"
        "    if mode.is_kind(1) or mode.is_decode():\n"
        "        return lens\n"
        "    return callee(lens, mode)\n"
    )
    # `is_decode()` asked with nothing passed is the object's answer, handed on; asked
    # with an argument, the answer may be another for another argument.
    assert chains(tmp_path, source, COPIES) == [
        "capture_it (pkg/builder.py:11) -> callee (pkg/builder.py:3) -> `lens.tolist()`"
    ]


def test_a_function_a_call_may_run_is_followed_only_where_its_arguments_fit(tmp_path):
    source = (
        "from functools import partial\n"
        "\n"
        "\n"
        "def fast_plan(self, indptr, page_size, *, non_blocking=True):\n"
        "    return indptr.cpu()\n"
        "\n"
        "\n"
        "def loose_plan(self, *args, **kwargs):\n"
        "    return args[0].tolist()\n"
        "\n"
        "\n"
        "def install(w, v):\n"
        "    w.plan = partial(fast_plan, w)\n"
        "    v.run = partial(loose_plan, v)\n"
        "\n"
        "\n"
        "def capture_decode(w, indptr):\n"
        "    return w.plan(indptr, 1, non_blocking=False)\n"
        "\n"
        "\n"
        "def capture_prefill(w, qo, indptr):\n"
        "    return w.plan(qo, indptr, 1)\n"
        "\n"
        "\n"
        "def capture_masked(w, v, indptr, mask):\n"
        "    w.plan(indptr, 1, custom_mask=mask)\n"
        "    return v.run(indptr, 1, 2, 3, custom_mask=mask)\n"
    )
    # Past the bound `w`, `fast_plan` takes two positional arguments and no `custom_mask`:
    # prefill's three and the masked call's keyword are another object's `plan`. A
    # function taking `*args` and `**kwargs` fits any call.
    assert chains(tmp_path, source, COPIES) == [
        "capture_decode (pkg/builder.py:18) -> fast_plan (pkg/builder.py:5) -> `indptr.cpu()`",
        "capture_masked (pkg/builder.py:27) -> loose_plan (pkg/builder.py:9)"
        " -> `args[...].tolist()`",
    ]


def test_a_function_held_in_an_attribute_fits_with_self_bound_only_for_a_method(tmp_path):
    source = (
        "def plain_kernel(q, k, v):\n"
        "    return q.tolist()\n"
        "\n"
        "\n"
        "class Backend:\n"
        "    def __init__(self, fast):\n"
        "        if fast:\n"
        "            self.fwd = self._fast\n"
        "        else:\n"
        "            self.fwd = plain_kernel\n"
        "\n"
        "    def _fast(self, q, k):\n"
        "        return q.cpu()\n"
        "\n"
        "    def capture_three(self, q, k, v):\n"
        "        return self.fwd(q, k, v)\n"
        "\n"
        "    def capture_two(self, q, k):\n"
        "        return self.fwd(q, k)\n"
    )
    # The method is called with `self` bound, so it takes two arguments and not three; the
    # plain function takes the three as they come (and two: a default is not known here).
    assert chains(tmp_path, source, COPIES) == [
        "Backend.capture_three (pkg/builder.py:16) -> plain_kernel (pkg/builder.py:2)"
        " -> `q.tolist()`",
        "Backend.capture_two (pkg/builder.py:19) -> Backend._fast (pkg/builder.py:13) -> `q.cpu()`",
        "Backend.capture_two (pkg/builder.py:19) -> plain_kernel (pkg/builder.py:2)"
        " -> `q.tolist()`",
    ]


def test_a_boundary_context_s_block_runs_outside_the_entry_s_region(tmp_path):
    files = {
        **TREE,
        "pkg/sync_debug.py": (
            "import contextlib\n\n\n@contextlib.contextmanager\ndef sync_allowed(first=False):\n"
            "    yield\n"
        ),
    }
    source = (
        "import contextlib\n"
        "\n"
        "import torch\n"
        "\n"
        "from pkg.sync_debug import sync_allowed\n"
        "\n"
        "\n"
        "def helper(lens):\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_inside(lens):\n"
        "    with sync_allowed():\n"
        "        helper(lens)\n"
        "        lens.tolist()\n"
        "    return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_either(lens, gloo):\n"
        "    with contextlib.nullcontext() if gloo else sync_allowed():\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_both(lens, gloo):\n"
        "    with sync_allowed(first=True) if gloo else sync_allowed():\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_among(lens):\n"
        "    with torch.no_grad(), sync_allowed():\n"
        "        return lens.tolist()\n"
        "\n"
        "\n"
        "def capture_other(lens):\n"
        "    with torch.no_grad():\n"
        "        return lens.tolist()\n"
    )
    params = {"entries": ["*.capture_*"], "forbidden": TOLIST}
    declared = {**params, "boundary-contexts": ["pkg.sync_debug.sync_allowed"]}

    def reached(params):
        found = check(tmp_path, source, params=params, files=files)
        return [f.message.split(": ", 1)[1] for f in found]

    # Where the engine says a sync is deliberate, the chain stops; where only one way of
    # a conditional context says so, the other way still runs the block in the region.
    assert reached(declared) == [
        "capture_inside (pkg/builder.py:16) -> `lens.tolist()`",
        "capture_either (pkg/builder.py:21, where (inside `with contextlib.nullcontext()`"
        " or inside `with pkg.sync_debug.sync_allowed()`)) -> `lens.tolist()`",
        "capture_other (pkg/builder.py:36, where inside `with torch.no_grad()`) -> `lens.tolist()`",
    ]
    # Undeclared, every `.tolist()` is reached: capture_inside's three (the helper's, the
    # block's, the one after it) and one each of the other four entries, 3 + 4.
    assert len(reached(params)) == 3 + 4


def test_a_cycle_of_calls_and_of_bases_ends(tmp_path):
    source = (
        "class A(B):\n"
        "    pass\n"
        "\n"
        "\n"
        "class B(A):\n"
        "    def capture_x(self):\n"
        "        return self.missing()\n"
        "\n"
        "\n"
        "def capture_y():\n"
        "    return f()\n"
        "\n"
        "\n"
        "def f():\n"
        "    return capture_y()\n"
    )
    assert check(tmp_path, source) == []


def test_a_function_s_calls_are_resolved_once_for_every_entry_that_reaches_it(
    tmp_path, monkeypatch
):
    from checkers.analysis import program

    asked = []
    resolve = program.Program.resolve_call
    monkeypatch.setattr(
        program.Program,
        "resolve_call",
        lambda self, module, outline, spelling: (
            asked.append((outline[0], spelling)) or resolve(self, module, outline, spelling)
        ),
    )
    source = (
        "def leaf(x):\n    return x.item()\n\n\n"
        "def helper(x):\n    return leaf(x) + len(x)\n\n\n"
        + "".join(f"def capture_{i}(x):\n    return helper(x)\n\n\n" for i in range(3))
    )
    found = check(tmp_path, source)
    # Each entry names its own chain through the helper ...
    assert [f.line for f in found] == [10, 14, 18]
    assert all(f.message.endswith("leaf (pkg/builder.py:2) -> `x.item()`") for f in found)
    # ... and each call of the helper and the leaf was resolved once, not once an entry
    # (`x.item()`, forbidden as spelled, not at all).
    assert sorted(asked) == sorted(
        [(f"capture_{i}", "helper") for i in range(3)] + [("helper", "leaf"), ("helper", "len")]
    )


def test_a_body_not_at_hand_is_not_entered_and_asked_again_later(tmp_path, monkeypatch):
    from checkers.analysis import program

    detail = program.Module.detail
    unread = ["helper"]  # the first question about the helper's body finds it unreadable

    def flaky(self, qual):
        if qual in unread:
            unread.remove(qual)
            return None
        return detail(self, qual)

    monkeypatch.setattr(program.Module, "detail", flaky)
    source = (
        "def helper(x):\n    return x.item()\n\n\n"
        "def capture_a(x):\n    return helper(x)\n\n\n"
        "def capture_b(x):\n    return helper(x)\n"
    )
    assert [f.line for f in check(tmp_path, source)] == [10]


def test_a_call_is_forbidden_by_the_function_it_resolves_to(tmp_path):
    params = {"entries": ["*.capture_*"], "forbidden": {"pkg.staging.publish_batch_ids": "staging"}}
    # Spelled through the package's re-export, it is `pkg.publish_batch_ids`.
    source = "from pkg import publish_batch_ids\n\n\ndef capture_x(b, ids):\n    return publish_batch_ids(b, ids)\n"
    (found,) = check(tmp_path, source, params=params)
    assert found.message.endswith("-> `pkg.publish_batch_ids()`")


def test_two_contracts_of_the_kind_search_one_program_with_their_own_patterns(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "no-item"\nkind = "reachable-calls"\nentries = ["*.capture_*"]\n'
        'forbidden = { "*.item" = "a host sync" }\n'
        "[[tool.atom-contracts.contracts]]\n"
        'id = "no-tolist"\nkind = "reachable-calls"\nentries = ["*.capture_*"]\n'
        'forbidden = { "*.tolist" = "a host sync" }\n'
    )
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "def helper(x):\n    return x.item(), x.tolist()\n\n\n"
                "def capture_a(x):\n    return helper(x)\n"
            ),
        },
    )
    result = api.check(["pkg/a.py"], cwd=tmp_path, jobs=1, use_cache=False)
    assert sorted((f.code, f.message.rpartition("`")[0][-8:]) for f in result.findings) == [
        ("AC821", "tolist()"),
        ("AC821", "x.item()"),
    ]


def test_a_noqa_on_the_entry_call_suppresses_with_its_reason(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "no-sync"\nkind = "reachable-calls"\nentries = ["*.capture_*"]\n'
        'forbidden = { "*.item" = "a host sync" }\n'
    )
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": (
                "def helper(x):\n    return x.item()\n\n\n"
                "def capture_a(x):\n"
                "    return helper(x)  # noqa: AC821 -- runs once, before capture starts\n"
            ),
        },
    )
    result = api.check(["pkg/a.py"], cwd=tmp_path, jobs=1, use_cache=False)
    assert result.findings == []


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"forbidden": {"*.item": "x"}}, "needs `entries`, `entry-decorators` or"),
        (
            {**PARAMS, "unless-keyword": {"*.tolist": "output_size"}},
            "`unless-keyword` names '*.tolist', which is not in `forbidden`",
        ),
        (
            {**PARAMS, "unless-keyword": {"*.repeat_interleave": "output size"}},
            "must be a keyword name",
        ),
        ({"entries": ["*.f"]}, "requires `forbidden`"),
    ],
)
def test_a_declaration_that_cannot_work_is_refused_by_name(params, said):
    with pytest.raises(ConfigError, match="contract `t`") as err:
        ReachableCalls.from_table({"id": "t", **params}, "contract `t`")
    assert said in str(err.value)


# -- a run over some files ----------------------------------------------------------------------

PROJECT = {
    "pyproject.toml": (
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "decode-no-sync"\nkind = "reachable-calls"\nentries = ["*.prepare_mtp_decode"]\n'
        'forbidden = { "*.item" = "a host sync", "*.publish_batch_ids" = "host staging" }\n'
    ),
    "pkg/__init__.py": "",
    "pkg/helpers.py": "def rows(ids):\n    return ids.clone()\n",
    "pkg/builder.py": (
        "from pkg.helpers import rows\n"
        "\n"
        "\n"
        "class Builder:\n"
        "    def prepare_mtp_decode(self, ids):\n"
        "        return rows(ids)\n"
    ),
    "pkg/other.py": "from pkg.helpers import rows\n\n\ndef prefill(ids):\n    return rows(ids)\n",
}


@pytest.fixture
def project(tmp_path):
    write_tree(tmp_path, PROJECT)
    past = time.time() - 60  # older than the cache's racy window
    for folder, _, files in os.walk(tmp_path):
        for name in files:
            os.utime(os.path.join(folder, name), (past, past))
    return tmp_path


@pytest.mark.parametrize("warm", [True, False], ids=["cache-filled", "no-cache"])
def test_an_edit_to_a_helper_fails_the_entry_that_reaches_it(project, warm):
    if warm:
        assert api.check([], cwd=project, jobs=1).findings == []
    (project / "pkg/helpers.py").write_text("def rows(ids):\n    return ids.max().item()\n")
    local = api.check(["pkg/helpers.py"], cwd=project, jobs=1, use_cache=warm)
    assert [(f.path, f.line, f.code) for f in local.findings] == [("pkg/builder.py", 6, "AC821")]
    assert local.findings[0].message.endswith("(reached through pkg/helpers.py, edited)")
    whole = api.check([], cwd=project, jobs=1, use_cache=False)
    assert local.findings[0].message.startswith(whole.findings[0].message)


@pytest.mark.parametrize("held", ["function", "instance"])
def test_an_edit_to_what_a_base_class_assigns_rechecks_the_entry_that_calls_it(project, held):
    value = {"function": "rows", "instance": "Rows()"}[held]
    write_tree(
        project,
        {
            "pkg/base.py": (
                "from pkg.helpers import Rows, rows\n"
                "\n"
                "\n"
                "class Base:\n"
                "    def __init__(self):\n"
                f"        self.fill = {value}\n"
            ),
            "pkg/helpers.py": (
                "def rows(ids):\n"
                "    return ids.clone()\n"
                "\n"
                "\n"
                "def syncing(ids):\n"
                "    return ids.max().item()\n"
                "\n"
                "\n"
                "class Rows:\n"
                "    def __call__(self, ids):\n"
                "        return ids\n"
                "\n"
                "\n"
                "class Syncing:\n"
                "    def __call__(self, ids):\n"
                "        return ids.max().item()\n"
            ),
            "pkg/sub.py": (
                "from pkg.base import Base\n"
                "\n"
                "\n"
                "class Sub(Base):\n"
                "    def prepare_mtp_decode(self, ids):\n"
                "        return self.fill(ids)\n"
            ),
        },
    )
    assert api.check([], cwd=project, jobs=1).findings == []
    edited = project / "pkg/base.py"
    edited.write_text(
        edited.read_text()
        .replace("import Rows, rows", "import Syncing, syncing")
        .replace(value, {"function": "syncing", "instance": "Syncing()"}[held])
    )
    # The edited file holds no hop of the chain, but what it assigns decides one.
    local = api.check(["pkg/base.py"], cwd=project, jobs=1)
    assert [(f.path, f.line, f.code) for f in local.findings] == [("pkg/sub.py", 6, "AC821")]
    assert local.findings[0].message.endswith("(reached through pkg/base.py, edited)")


def test_a_warm_local_run_reads_unchanged_files_from_their_summaries(project, record_parses):
    api.check([], cwd=project, jobs=1)
    (project / "pkg/helpers.py").write_text("def rows(ids):\n    return ids.max().item()\n")
    parsed = record_parses()
    local = api.check(["pkg/helpers.py"], cwd=project, jobs=1)
    assert len(local.findings) == 1
    # The edit is parsed; the entry's file is parsed to report on its line. pkg/other.py holds
    # no entry and is never read past its text.
    assert sorted(parsed) == ["pkg/builder.py", "pkg/helpers.py"]


def test_an_edit_that_reaches_nothing_forbidden_rechecks_nothing(project):
    (project / "pkg/helpers.py").write_text("def rows(ids):\n    return ids[:2]\n")
    assert api.check(["pkg/helpers.py"], cwd=project, jobs=1).findings == []


@pytest.mark.parametrize(
    ("path", "wanted"),
    [
        ("pkg/backends/mla.py", True),
        ("src/pkg/backends/mla.py", True),  # under a src root
        ("pkg/backends/sub/mla.py", True),
        ("pkg/backends/__init__.py", True),
        ("pkg/backends.py", True),
        ("pkg/__init__.py", True),  # `pkg` itself: `backends.MlaImpl` may be its class's path
        ("pkg/backends/mla.pyi", True),
        ("pkg/models/mla.py", False),
        ("pkg/backend/mla.py", False),
        ("other/mla.py", False),
        ("pkg/backendsx/mla.py", False),
    ],
)
def test_a_file_is_read_only_where_its_module_can_hold_a_dotted_entry(path, wanted):
    from checkers.source import SourceFile

    contract = ReachableCalls.from_table(
        {"id": "t", "entries": ["pkg.backends.*Impl.forward"], "forbidden": {"*.item": "sync"}},
        "contract `t`",
    )
    text = "class MlaImpl:\n    def forward(self, x):\n        return x.item()\n"
    assert contract.wants(SourceFile(path, text)) is wanted
    # Without the spelled name, no path is enough.
    assert contract.wants(SourceFile(path, text.replace("Impl", "Imp"))) is False


def test_an_entry_in_a_module_outside_the_dotted_prefix_is_no_entry(tmp_path):
    """What ``wants`` skips is what the check would not have reported."""
    source = "class MlaImpl:\n    def forward(self, x):\n        return x.item()\n"
    params = {"entries": ["pkg.backends.*Impl.forward"], "forbidden": {"*.item": "sync"}}
    files = {"pkg/__init__.py": "", "pkg/backends/__init__.py": "", "pkg/models/__init__.py": ""}
    inside = run_rule(ReachableCalls, source, params, path="pkg/backends/mla.py", root=tmp_path,
                      files=files)  # fmt: skip
    assert [f.code for f in inside] == ["AC821"]
    outside = run_rule(ReachableCalls, source, params, path="pkg/models/mla.py", root=tmp_path,
                       files=files)  # fmt: skip
    assert outside == []


def test_a_run_s_memo_of_the_calls_it_went_through_is_let_go_with_its_program(tmp_path):
    """The calls a search went through are kept with the run's program: a run entering a
    neighbour's function (a module known by its summary, which refers to the program)
    leaves no program alive once it is over, as a language server runs one a keystroke."""
    import gc

    from checkers.analysis.program import Program

    def programs() -> int:
        gc.collect()
        return sum(type(o) is Program for o in gc.get_objects())

    source = (
        "from pkg.base import Base\n"
        "\n"
        "\n"
        "class B(Base):\n"
        "    def prepare_mtp_decode(self, ids):\n"
        "        return self.width(ids)\n"
    )
    before = programs()
    for run in range(3):
        where = tmp_path / str(run)
        where.mkdir()
        (found,) = check(where, source)
        assert "-> pkg.base.Base.width (pkg/base.py:3) ->" in found.message
        del found
    assert programs() == before


SPLIT = (
    "def split_flags(meta):\n"
    "    if meta.is_decoding:\n"
    "        return meta.q_start_loc.numel()\n"
    "    else:\n"
    "        return meta.q_start_loc.item()\n"
    "\n"
    "\n"
    "def prefill_only(meta):\n"
    "    if not meta.is_decoding:\n"
    "        meta.q_start_loc.repeat_interleave(meta.q_seqlens)\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, meta):\n"
    "        prefill_only(meta)\n"
    "        return split_flags(meta)\n"
)


@pytest.mark.parametrize(
    ("conditions", "lines"),
    [
        ((), [15, 16]),  # path-insensitive: both branches count
        (("*.is_decoding",), []),  # the entry runs decoding: the prefill branches are off its path
        (("not *.is_decoding",), [15, 16]),  # it runs prefill: those branches are its own
        (("meta.is_prefill",), [15, 16]),  # a condition no test spells rules nothing out
    ],
)
def test_a_declared_entry_condition_rules_out_the_branches_that_need_it_false(
    tmp_path, conditions, lines
):
    params = {**PARAMS, "entry-conditions": list(conditions)} if conditions else PARAMS
    assert [f.line for f in check(tmp_path, SPLIT, params=params)] == lines


@pytest.mark.parametrize(("conditions", "reached"), [((), True), (("not *.is_decoding",), False)])
def test_a_negated_entry_condition_rules_out_the_branch_that_needs_it_true(
    tmp_path, conditions, reached
):
    source = SPLIT.replace("numel()", "tolist()")
    params = {**WITH_TOLIST}
    if conditions:
        params["entry-conditions"] = list(conditions)
    found = check(tmp_path, source, params=params)
    assert any("`*.tolist`" in f.message for f in found) is reached
    assert any("`*.item`" in f.message for f in found)  # the else branch is still reached


MORE_FORBIDDEN = {
    "*.cpu": "a copy to the host",
    "*.tolist": "a host sync",
    "*.nonzero": "a host sync",
    "*.numpy": "a copy to the host",
}


def reached_under(tmp_path, source, conditions, files=TREE):
    """The forbidden patterns an entry of ``source`` reaches with ``conditions`` declared."""
    params = {**PARAMS, "forbidden": {**PARAMS["forbidden"], **MORE_FORBIDDEN}}
    if conditions:
        params["entry-conditions"] = list(conditions)
    found = check(tmp_path, source, params=params, files=files)
    return {f.message.split("reaches `")[1].split("`")[0] for f in found}


BOOLEAN_TESTS = (
    "def last_rows(meta, x):\n"
    "    if meta.is_prefill and meta.is_token_healing:\n"
    "        return x.cpu()\n"
    "    if not (meta.is_prefill or meta.is_mixed):\n"
    "        return x.numel()\n"
    "    return x.tolist()\n"
    "\n"
    "\n"
    "def first_rows(meta, x):\n"
    "    if meta.is_prefill or meta.is_mixed:\n"
    "        return x.numel()\n"
    "    else:\n"
    "        return x.item()\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, meta, x):\n"
    "        first_rows(meta, x)\n"
    "        return last_rows(meta, x)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.cpu", "*.tolist", "*.item"}),
        # `a and b` holds only where `a` does: with `a` false its body is off the path; the
        # `or`'s else (both false) and `not (a or b)` stay on it
        (("not *.is_prefill",), {"*.tolist", "*.item"}),
        # with `a` true, `a or b`'s else and `not (a or b)`'s body are off it
        (("*.is_prefill",), {"*.cpu", "*.tolist"}),
        # one operand holding rules out only what needs it false: the `or`'s else
        (("*.is_mixed", "*.is_token_healing"), {"*.cpu", "*.tolist"}),
        # every operand false: what needs the `or` true (past `if not (a or b): return`) is
        # off it too
        (("not *.is_prefill", "not *.is_mixed"), {"*.item"}),
    ],
)
def test_an_entry_condition_reads_each_operand_of_a_boolean_test(tmp_path, conditions, reached):
    assert reached_under(tmp_path, BOOLEAN_TESTS, conditions) == reached


EARLY_EXITS = (
    "def fused(ctx, meta, x):\n"
    "    if ctx.capturing:\n"
    "        return x.numel()\n"
    "    lens = meta.lens.tolist()\n"
    "    if not ctx.capturing:\n"
    "        pass\n"
    "    else:\n"
    "        raise RuntimeError('replayed')\n"
    "    return x.nonzero()\n"
    "\n"
    "\n"
    "def graph_only(ctx, x):\n"
    "    if not ctx.capturing:\n"
    "        if x is None:\n"
    "            raise ValueError('x')\n"
    "        return x.cpu()\n"
    "    return x.item()\n"
    "\n"
    "\n"
    "def falls_through(ctx, x):\n"
    "    if ctx.capturing:\n"
    "        x = x + 1\n"
    "    torch.cuda.synchronize()\n"
    "\n"
    "\n"
    "def loop_exit(ctx, xs, x):\n"
    "    for _ in xs:\n"
    "        if ctx.capturing:\n"
    "            return None\n"
    "    return x.numpy()\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, ctx, meta, x):\n"
    "        graph_only(ctx, x)\n"
    "        falls_through(ctx, x)\n"
    "        loop_exit(ctx, meta, x)\n"
    "        return fused(ctx, meta, x)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.cpu", "*.tolist", "*.nonzero", "*.item", "torch.cuda.synchronize", "*.numpy"}),
        # past `if c: return`, `c` is false: what follows is off a path where it holds; a
        # way that falls through (`if not c: pass ... else: raise`) says the same of `c`;
        # past an `if` neither of whose ways leaves, or a loop that may not run, nothing is
        # known of `c`
        (("*.capturing",), {"*.item", "torch.cuda.synchronize", "*.numpy"}),
        (
            ("not *.capturing",),
            {"*.cpu", "*.tolist", "*.nonzero", "torch.cuda.synchronize", "*.numpy"},
        ),
    ],
)
def test_past_an_if_whose_one_way_leaves_the_other_ways_test_holds(tmp_path, conditions, reached):
    assert reached_under(tmp_path, EARLY_EXITS, conditions) == reached


HELD_IN_DATA = (
    "from pkg.states import State\n"
    "\n"
    "\n"
    "def fia_params(meta, x):\n"
    "    if meta.attn_state == State.PrefillNoCache:\n"
    "        return x.tolist()\n"
    "    elif meta.attn_state == State.DecodeOnly:\n"
    "        return x.item()\n"
    "    return x.cpu()\n"
    "\n"
    "\n"
    "def new_meta(meta, lens):\n"
    "    return sum(lens.numpy()) if meta.kv_flatten_size is not None else None\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, meta, x, lens):\n"
    "        new_meta(meta, lens)\n"
    "        return fia_params(meta, x)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.tolist", "*.item", "*.cpu", "*.numpy"}),
        # a value the entry's path holds: another constant's branch is off it, and so is
        # what follows a branch on this one that returns
        (("*.attn_state == *.DecodeOnly",), {"*.item", "*.numpy"}),
        (("*.attn_state != *.PrefillNoCache",), {"*.item", "*.cpu", "*.numpy"}),
        # a None the entry's path holds, tested in a conditional expression
        (("*.kv_flatten_size is None",), {"*.tolist", "*.item", "*.cpu"}),
        (("*.kv_flatten_size is not None",), {"*.tolist", "*.item", "*.cpu", "*.numpy"}),
        # a plain attribute condition reads no comparison
        (("*.attn_state",), {"*.tolist", "*.item", "*.cpu", "*.numpy"}),
    ],
)
def test_an_entry_condition_names_a_value_or_a_none_the_path_holds(tmp_path, conditions, reached):
    files = {**TREE, "pkg/states.py": "class State:\n    PrefillNoCache = 0\n    DecodeOnly = 1\n"}
    assert reached_under(tmp_path, HELD_IN_DATA, conditions, files=files) == reached


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), True),
        (("*.mode == 'decode'",), False),
        (('*.mode != "prefill"',), False),
        (("*.mode == 'prefill'",), True),
        (("*.mode != 'decode'",), True),  # another value than one the branch does not need
        (("*.step == 0",), True),  # a condition on another attribute rules nothing out
    ],
)
def test_a_literal_the_entry_holds_is_matched_as_the_code_spells_it(tmp_path, conditions, reached):
    source = 'def capture_x(meta, x):\n    if meta.mode == "prefill":\n        return x.item()\n'
    params = {**PARAMS, "entry-conditions": list(conditions)} if conditions else PARAMS
    assert bool(check(tmp_path, source, params=params)) is reached


TESTS_OF_OTHER_SHAPES = (
    "def shapes(meta, x, expected):\n"
    "    if len(x) == 0:\n"  # a test of no parameter or attribute: it says nothing
    "        x.cpu()\n"
    "    if meta.ready():\n"
    "        x.tolist()\n"
    "    if meta.n < 3 or meta.mode == expected:\n"  # an `or` with a local's value
    "        x.numpy()\n"
    "    y = x.numel() if meta.is_prefill else x.item()\n"
    "    z = x.sum().item() if not meta.is_prefill else x.size()\n"
    "    return torch.cuda.synchronize()\n"  # after both, whatever they tested
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, meta, x):\n"
    "        return shapes(meta, x, 1)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.cpu", "*.tolist", "*.numpy", "*.item", "torch.cuda.synchronize"}),
        # each way of a conditional expression has its own test's truth, and loses it after
        (("*.is_prefill",), {"*.cpu", "*.tolist", "*.numpy", "torch.cuda.synchronize"}),
        (
            ("not *.is_prefill",),
            {"*.cpu", "*.tolist", "*.numpy", "*.item", "torch.cuda.synchronize"},
        ),
        (
            ("*.n == 5", "*.mode == 2"),
            {"*.cpu", "*.tolist", "*.numpy", "*.item", "torch.cuda.synchronize"},
        ),
    ],
)
def test_a_test_of_another_shape_rules_nothing_out_and_a_ways_truth_ends_with_it(
    tmp_path, conditions, reached
):
    source = "import torch\n\n\n" + TESTS_OF_OTHER_SHAPES
    assert reached_under(tmp_path, source, conditions) == reached


PARAMETER_TESTS = (
    "def attention(x, cu_seqlen_prefill, decoding):\n"
    "    if cu_seqlen_prefill is not None:\n"
    "        return x.tolist()\n"
    "    if not decoding:\n"
    "        return x.numpy()\n"
    "    return x.numel()\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, x, cu_seqlen_prefill, decoding):\n"
    "        return attention(x, cu_seqlen_prefill, decoding)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.tolist", "*.numpy"}),
        # a parameter the captured step is called with, by its name in the functions it reaches
        (("cu_seqlen_prefill is None",), {"*.numpy"}),
        (("cu_seqlen_*", "decoding"), {"*.tolist"}),
        (("*.cu_seqlen_prefill is None",), {"*.tolist", "*.numpy"}),  # an attribute, not it
    ],
)
def test_an_entry_condition_may_name_a_parameter(tmp_path, conditions, reached):
    assert reached_under(tmp_path, PARAMETER_TESTS, conditions) == reached


LINKED_VALUES = (
    "def coordinate(lens):\n"
    "    return lens.max().item()\n"
    "\n"
    "\n"
    "def set_context(config, lens, counts=None):\n"
    "    if config.parallel.dp_size > 1:\n"
    "        if counts is None:\n"
    "            coordinate(lens)\n"
    "    if counts is None:\n"
    "        return lens.tolist()\n"
    "\n"
    "\n"
    "def verify(spec, lens):\n"
    "    if spec is None:\n"
    "        return lens.sum().cpu()\n"
    "\n"
    "\n"
    "class Runner:\n"
    "    def capture_step(self, config, mode, spec, lens, counts):\n"
    "        set_context(config, lens, counts)\n"
    "        if mode.is_target_verify():\n"
    "            verify(spec, lens)\n"
    "        verify(spec, lens)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        # one finding per forbidden call, by the first chain to it: the verify branch's
        ((), {"*.item", "*.tolist", "*.cpu@22"}),
        # holds where its test does, on the call's own line: the `.tolist()` outside it stays
        (("counts is not None when *.dp_size > 1",), {"*.tolist", "*.cpu@22"}),
        # ... or on a call the path went through before (the caller's `if`): the `.cpu()` is
        # reached by the other call only
        (("spec is not None when mode.is_target_verify()",), {"*.item", "*.tolist", "*.cpu@23"}),
        # the test as printed, not another: an order against another number holds nothing
        (("counts is not None when *.dp_size > 2",), {"*.item", "*.tolist", "*.cpu@22"}),
        # a test the path never passes holds nothing
        (("spec is not None when mode.is_decode()",), {"*.item", "*.tolist", "*.cpu@22"}),
        # without `when`, it holds everywhere
        (("counts is not None",), {"*.cpu@22"}),
    ],
)
def test_an_entry_condition_with_when_holds_only_on_a_path_through_its_test(
    tmp_path, conditions, reached
):
    params = {"entries": ["*.capture_*"], "forbidden": {**TOLIST, "*.item": "a", "*.cpu": "b"}}
    if conditions:
        params["entry-conditions"] = list(conditions)
    found = check(tmp_path, LINKED_VALUES, params=params)
    got = set()
    for finding in found:
        pattern = finding.message.split("reaches `", 1)[1].split("`", 1)[0]
        got.add(f"{pattern}@{finding.line}" if pattern == "*.cpu" else pattern)
    assert got == reached


@pytest.mark.parametrize(
    "good",
    [
        "*.x is None",
        "not *.x",
        "*.x is not None",
        "*.state == *.Decode",
        "*.s != State.A",
        "*.n == 1",
        "*.mode == 'decode'",
        "n is not None when *.dp_size > 1",
        "*.is_decoding when not *.is_prefill",
        "spec is not None when mode.is_target_verify()",
    ],
)
def test_an_entry_condition_may_compare_with_a_constant_or_none(good):
    ReachableCalls.from_table({"id": "t", **PARAMS, "entry-conditions": [good]}, "t")


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "not ",
        "*",
        "not *",
        "* is None",
        "*.is decoding",
        "meta..x",
        "not not *.x",
        "*.x ==",
        "*.x is",
        "not *.x is None",
        "*.x == a b",
        "*.x < 3",
        "*.x == *.y == *.z",
        "*.x when",
        "*.x when ",
        "*.x when *",
        "when *.x",
        "*.x  when *.y",
    ],
)
def test_an_entry_condition_that_names_no_attribute_is_refused_by_name(bad):
    with pytest.raises(ConfigError, match="entry-conditions") as err:
        ReachableCalls.from_table({"id": "t", **PARAMS, "entry-conditions": [bad]}, "t")
    assert repr(bad) in str(err.value)


def test_each_hop_names_the_tests_its_call_runs_under(tmp_path):
    source = (
        "import contextlib\n"
        "\n"
        "\n"
        "def step(lens, mode, meta, flag, other, p):\n"
        "    if mode != 'decode' and meta.kv_size is None:\n"
        "        if not flag or other:\n"
        "            if p is not None and meta.buf is not None:\n"
        "                with contextlib.nullcontext():\n"
        "                    return lens.tolist()\n"
        "    return None\n"
        "\n"
        "\n"
        "def capture_x(lens, mode, meta, flag, other, p):\n"
        "    if meta.is_decoding:\n"
        "        return step(lens, mode, meta, flag, other, p)\n"
        "    return None\n"
    )
    # That a parameter is not None is said of every call past a use of it, so it is not
    # printed; that an attribute is, is a test the code made.
    (chain,) = chains_with_tests(tmp_path, source)
    assert chain == (
        "capture_x (pkg/builder.py:15, where meta.is_decoding) -> step (pkg/builder.py:9, where"
        " mode != 'decode', meta.kv_size is None, (not flag or other), meta.buf is not None,"
        " inside `with contextlib.nullcontext()`) -> `lens.tolist()`"
    )
    # ... and read back one test at a time, as `--statistics` tallies them
    assert assumed_tests(chain) == [
        "meta.is_decoding",
        "mode != 'decode'",
        "meta.kv_size is None",
        "(not flag or other)",
        "meta.buf is not None",
        "inside `with contextlib.nullcontext()`",
    ]


# The step's state, reached through accessors that take nothing: a test of what they answer
# is a guard like any attribute's; with an argument or a subscript on the way it is none.
ACCESSED = (
    "from pkg.ctx import get_ctx, get_group\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, lens):\n"
    "        if get_ctx().current().enable_microbatch:\n"
    "            lens.tolist()\n"
    "        if not self.mgr.current().is_decoding:\n"
    "            lens.sum().tolist()\n"
    "        if get_ctx().mode.is_prefill():\n"
    "            lens.max().tolist()\n"
    "        if get_group(0).is_last_rank:\n"
    "            lens.min().tolist()\n"
    "        if get_ctx().stack[0].flag:\n"
    "            lens.mean().tolist()\n"
)
ACCESSORS = {**TREE, "pkg/ctx.py": "def get_ctx():\n    pass\n\n\ndef get_group(i):\n    pass\n"}


def test_a_test_of_what_an_accessor_answers_is_printed_and_may_be_declared(tmp_path):
    params = {"entries": ["*.capture_*"], "forbidden": TOLIST}
    found = check(tmp_path, ACCESSED, params=params, files=ACCESSORS)
    assert [f.message.split(": ", 1)[1] for f in found] == [
        "Model.capture_step (pkg/builder.py:7, where get_ctx().current().enable_microbatch)"
        " -> `lens.tolist()`",
        "Model.capture_step (pkg/builder.py:9, where not self.mgr.current().is_decoding)"
        " -> `lens.sum().tolist()`",
        "Model.capture_step (pkg/builder.py:11, where get_ctx().mode.is_prefill())"
        " -> `lens.max().tolist()`",
        "Model.capture_step (pkg/builder.py:13) -> `lens.min().tolist()`",
        "Model.capture_step (pkg/builder.py:15) -> `lens.mean().tolist()`",
    ]
    params["entry-conditions"] = ["not *.enable_microbatch", "*.is_decoding"]
    found = check(tmp_path, ACCESSED, params=params, files=ACCESSORS)
    assert [f.line for f in found] == [11, 13, 15]


# An order against a number is a test too: a caller's literal decides it, and so does an
# entry condition that the path holds one value (`*.num_prefills == 0`: a captured decode
# step has no prefills, so `if meta.num_prefills > 0:` is off its path).
ORDERED = (
    "def step(x, n, meta):\n"
    "    if n > 0:\n"
    "        x.tolist()\n"
    "    if 1 <= n:\n"
    "        x.numpy()\n"
    "    if n < 0:\n"
    "        x.nonzero()\n"
    "    if meta.num_prefills > 0:\n"
    "        x.cpu()\n"
    "    if meta.max_query_len <= 1:\n"
    "        return x.numel()\n"
    "    return x.item()\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, x, meta, n):\n"
    "        return step(x, {n}, meta)\n"
)


@pytest.mark.parametrize(
    ("n", "conditions", "reached"),
    [
        ("n", (), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"}),
        ("0", (), {"*.cpu", "*.item"}),
        ("-2", (), {"*.nonzero", "*.cpu", "*.item"}),
        ("1", (), {"*.tolist", "*.numpy", "*.cpu", "*.item"}),
        ("0.5", (), {"*.tolist", "*.cpu", "*.item"}),
        (
            "None",
            (),
            {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"},
        ),  # not a number: undecided
        ("True", (), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"}),
        ("n", ("*.num_prefills == 0",), {"*.tolist", "*.numpy", "*.nonzero", "*.item"}),
        ("n", ("*.num_prefills == 3",), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"}),
        ("n", ("*.num_prefills != 0",), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"}),
        ("n", ("*.max_query_len == 1",), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu"}),
        ("n", ("*.max_query_len == 2",), {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"}),
        (
            "n",
            ("*.max_query_len == *.ONE",),
            {"*.tolist", "*.numpy", "*.nonzero", "*.cpu", "*.item"},
        ),
    ],
)
def test_an_order_against_a_number_is_decided_by_a_literal_or_a_held_value(
    tmp_path, n, conditions, reached
):
    source = ORDERED.replace("{n}", n)
    assert reached_under(tmp_path, source, conditions) == reached


def test_an_order_prints_as_the_way_it_holds(tmp_path):
    source = (
        "def capture_x(lens, meta):\n"
        "    if 0 < meta.num_prefills:\n"
        "        return lens.tolist()\n"
        "    if meta.max_query_len > -1:\n"
        "        return None\n"
        "    return lens.tolist()\n"
    )
    assert sorted(c.split(" -> ")[0] for c in chains_with_tests(tmp_path, source)) == [
        "capture_x (pkg/builder.py:3, where meta.num_prefills > 0)",
        "capture_x (pkg/builder.py:6, where meta.num_prefills <= 0, meta.max_query_len <= -1)",
    ]


@pytest.mark.parametrize(
    "test", ["1 == n", "len(lens) > n", "n is 1", "n > m", "n > 0 > m", "n > True", "'a' < n"]
)
def test_a_comparison_that_is_no_order_against_a_number_says_nothing(tmp_path, test):
    source = f"def capture_x(lens, n, m):\n    if {test}:\n        return lens.tolist()\n"
    assert chains_with_tests(tmp_path, source) == [
        "capture_x (pkg/builder.py:3) -> `lens.tolist()`"
    ]


# A local bound to an attribute, and bound to nothing else, is tested as that attribute
# (`n = attn_metadata.num_prefills; if n > 0:`), until the local or the attribute's object
# is bound again.
ATTRIBUTE_LOCALS = (
    "def step(x, meta, other):\n"
    "    n = meta.num_prefills\n"
    "    if n > 0:\n"
    "        x.tolist()\n"
    "    flag = meta.is_prefill\n"
    "    if flag:\n"
    "        x.numpy()\n"
    "    m = meta.num_prefills\n"
    "    m = 0 if other else m\n"
    "    if m > 0:\n"
    "        x.cpu()\n"
    "    k = meta.num_prefills\n"
    "    meta = other\n"
    "    if k > 0:\n"
    "        x.nonzero()\n"
    "    return x.item()\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, x, meta, other):\n"
    "        return step(x, meta, other)\n"
)


@pytest.mark.parametrize(
    ("conditions", "reached"),
    [
        ((), {"*.tolist", "*.numpy", "*.cpu", "*.nonzero", "*.item"}),
        (("*.num_prefills == 0",), {"*.numpy", "*.cpu", "*.nonzero", "*.item"}),
        (("not *.is_prefill",), {"*.tolist", "*.cpu", "*.nonzero", "*.item"}),
    ],
)
def test_a_local_bound_to_an_attribute_is_tested_as_it(tmp_path, conditions, reached):
    assert reached_under(tmp_path, ATTRIBUTE_LOCALS, conditions) == reached


@pytest.mark.parametrize(
    ("binding", "test", "printed"),
    [
        # a local bound to an attribute tests as the attribute
        ("n = meta.num_prefills", "n > 0", "meta.num_prefills > 0"),
        # a local bound to one way of a choice is there only where its test held
        (
            "n = meta.decode if meta.num_decodes > 0 else None",
            "n is not None",
            "meta.num_decodes > 0",
        ),
    ],
)
def test_what_a_local_s_test_says_is_printed(tmp_path, binding, test, printed):
    source = (
        f"def capture_x(lens, meta):\n    {binding}\n    if {test}:\n"
        "        return lens.tolist()\n    return None\n"
    )
    assert chains_with_tests(tmp_path, source) == [
        f"capture_x (pkg/builder.py:4, where {printed}) -> `lens.tolist()`"
    ]


@pytest.mark.parametrize(
    ("body", "conditions", "reached"),
    [
        # bound to a parameter: a caller's literal decides it
        ("n = flag\n    if n:\n        x.cpu()", (), False),
        ("flag = 1\n    n = flag\n    if n:\n        x.cpu()", (), True),  # rebound first
        # bound to a local that is an attribute: the attribute, through it
        (
            "k = meta.num_prefills\n    n = k\n    if n > 0:\n        x.cpu()",
            ("*.num_prefills == 0",),
            False,
        ),
        ("k = meta.num_prefills\n    n = k\n    if n > 0:\n        x.cpu()", (), True),
        # bound again by `:=`: no longer the attribute
        (
            "n = meta.num_prefills\n    if (n := other):\n        pass\n    if n > 0:\n        x.cpu()",
            ("*.num_prefills == 0",),
            True,
        ),
        # an attribute of no name's chain is no attribute a condition names
        (
            "n = meta.get().num_prefills\n    if n > 0:\n        x.cpu()",
            ("*.num_prefills == 0",),
            True,
        ),
        ("n = meta.num_prefills\n    if n > 0:\n        x.cpu()", ("*.num_prefills == 0",), False),
    ],
)
def test_what_a_local_is_tested_as(tmp_path, body, conditions, reached):
    source = (
        f"def step(x, meta, other, flag):\n    {body}\n    return None\n\n\n"
        "def capture_x(x, meta, other):\n    return step(x, meta, other, False)\n"
    )
    assert bool(reached_under(tmp_path, source, conditions)) is reached


# A local bound to one way of a conditional expression whose other way is nothing (`None`,
# `[]`) is there only where the test chose it: past `if decode is not None:`, `decode = ...
# if meta.num_decodes > 0 else None` says `meta.num_decodes > 0`.
CHOSEN_LOCALS = (
    "import torch\n"
    "\n"
    "\n"
    "def step(x, meta, flag, other_meta):\n"
    "    decode = meta.decode if meta.num_decodes > 0 else None\n"
    "    if decode is not None:\n"
    "        x.tolist()\n"
    "    rows = meta.rows if flag else []\n"
    "    if rows:\n"
    "        x.numpy()\n"
    "    if not rows:\n"
    "        x.cpu()\n"
    "    if rows is not None:\n"
    "        x.nonzero()\n"  # `[]` is not None either: nothing is said
    "    other = None if meta.is_prefill else meta.decode\n"
    "    if other is not None:\n"
    "        x.item()\n"
    "    stale = meta.decode if meta.num_decodes > 0 else None\n"
    "    meta = other_meta\n"
    "    if stale is not None:\n"
    "        torch.cuda.synchronize()\n"
    "    return None\n"
    "\n"
    "\n"
    "class Model:\n"
    "    def capture_step(self, x, meta, other_meta):\n"
    "        return step(x, meta, {flag}, other_meta)\n"
)
EVERY = {"*.tolist", "*.numpy", "*.cpu", "*.nonzero", "*.item", "torch.cuda.synchronize"}


@pytest.mark.parametrize(
    ("flag", "conditions", "reached"),
    [
        ("meta.flag", (), EVERY),
        ("False", (), EVERY - {"*.numpy"}),
        ("meta.flag", ("*.is_prefill",), EVERY - {"*.item"}),
        # the object its test read was bound again before: the later test says nothing
        ("meta.flag", ("*.num_decodes == 0",), EVERY - {"*.tolist"}),
    ],
)
def test_a_local_bound_to_one_way_of_a_choice_is_there_only_where_its_test_chose_it(
    tmp_path, flag, conditions, reached
):
    source = CHOSEN_LOCALS.replace("{flag}", flag)
    assert reached_under(tmp_path, source, conditions) == reached


@pytest.mark.parametrize(
    ("binding", "test", "reached"),
    [
        ("meta.d if flag else {}", "rows", False),
        ("meta.d if flag else {'a': 1}", "rows", True),  # something, not nothing
        ("meta.d if flag else ()", "rows", False),
        ("meta.d if flag else 0", "rows", False),
        ("None if not flag else meta.d", "rows is not None", False),
        ("meta.d if (flag or meta.p) else None", "rows is not None", True),  # an `or`'s ways
        ("meta.d if flag else helper()", "rows", True),
    ],
)
def test_what_a_choice_s_nothing_is(tmp_path, binding, test, reached):
    source = (
        "def helper():\n    return None\n\n\n"
        f"def step(x, meta, flag):\n    rows = {binding}\n    if {test}:\n        x.cpu()\n"
        "\n\n"
        "def capture_x(x, meta):\n    return step(x, meta, False)\n"
    )
    assert bool(reached_under(tmp_path, source, ())) is reached
