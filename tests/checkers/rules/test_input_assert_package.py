"""input-assert with ``package-callers``: a module-level function's parameter read from its
calls anywhere in the package."""

from __future__ import annotations

import os

import pytest

from checkers import api
from checkers.rules import input_assert, kind_class
from checkers.rules.input_assert import InputAssert
from contracts.config import parse_table
from contracts.fields import ConfigError

from ...scaffold import write_tree
from ..rule_harness import run_rule

ON = {"package-callers": True}

KERNEL = (
    "def launch(x, block=64):\n    assert x.dim() == 2\n    assert block % 16 == 0\n    return x\n"
)


# A caller that hands the kernel a buffer it allocated, sized by its own parameter.
ALLOCATING = (
    "import torch\nfrom pkg.kernels import launch\ndef run(n):\n    launch(torch.empty(n, 4))\n"
)


def flagged(tmp_path, callers: dict[str, str], params=ON, kernel: str = KERNEL) -> list[int]:
    files = {"pkg/__init__.py": "", **callers}
    found = run_rule(InputAssert, kernel, params, path="pkg/kernels.py", root=tmp_path, files=files)
    return [f.line for f in found]


def test_every_caller_building_the_value_settles_the_assert(tmp_path):
    callers = {"pkg/moe.py": ALLOCATING + "    launch(torch.zeros(2, 2), block=32)\n"}
    assert flagged(tmp_path, callers) == []
    assert flagged(tmp_path, callers, params={}) == [2, 3]  # one module read: the letter


def test_one_caller_handing_on_its_own_parameter_keeps_the_finding(tmp_path):
    callers = {"pkg/moe.py": ALLOCATING + "def forward(x):\n    launch(x, block=32)\n"}
    assert flagged(tmp_path, callers) == [2]  # `block` is a literal in both calls


def test_a_caller_passing_config_keeps_the_finding(tmp_path):
    callers = {
        "pkg/moe.py": (
            "from pkg.kernels import launch\n"
            "def run(buf, config):\n"
            "    launch(buf.new_empty(2, 2), block=config.block)\n"
        )
    }
    assert flagged(tmp_path, callers) == [3]


def test_a_caller_that_tested_the_value_settles_the_assert(tmp_path):
    callers = {
        "pkg/moe.py": (
            "from pkg.kernels import launch\n"
            "def run(x, block):\n"
            "    if block not in (32, 64):\n"
            "        raise ValueError(block)\n"
            "    launch(x.new_empty(2, 2), block)\n"
        )
    }
    assert flagged(tmp_path, callers) == []


def test_the_function_handed_on_as_a_value_has_callers_nobody_can_list(tmp_path):
    callers = {
        "pkg/moe.py": (
            "import torch\n"
            "from pkg.kernels import launch\n"
            "OPS = {'launch': launch}\n"
            "def run(n):\n"
            "    launch(torch.empty(n, 4))\n"
        )
    }
    assert flagged(tmp_path, callers) == [2, 3]


def test_no_caller_in_the_package_leaves_the_parameter_input(tmp_path):
    assert flagged(tmp_path, {"pkg/moe.py": "def unrelated(launch):\n    return launch\n"}) == [
        2,
        3,
    ]


@pytest.mark.parametrize(
    "caller",
    [
        "from pkg import kernels\ndef run(x):\n    kernels.launch(x)\n",
        "from pkg.kernels import launch as go\ndef run(x):\n    go(x)\n",
        "import pkg.kernels\ndef run(x):\n    pkg.kernels.launch(x)\n",
        "from pkg import launch\ndef run(x):\n    launch(x)\n",
    ],
    ids=["module-attribute", "alias", "dotted", "re-export"],
)
def test_calls_are_found_through_every_spelling_of_the_import(tmp_path, caller):
    init = "from pkg.kernels import launch\n" if "from pkg import launch" in caller else ""
    found = flagged(tmp_path, {"pkg/__init__.py": init, "pkg/moe.py": caller})
    assert found == [2]  # x is the caller's parameter; the default block is the kernel's own


def test_a_same_named_method_of_another_object_is_not_a_call_of_the_function(tmp_path):
    callers = {
        "pkg/moe.py": (
            "import torch\n"
            "from pkg.kernels import launch\n"
            "def run(n, runner):\n"
            "    runner.launch(n)\n"
            "    launch(torch.empty(n, 4))\n"
        )
    }
    assert flagged(tmp_path, callers) == []


def test_a_caller_in_the_functions_own_module_is_read_there(tmp_path):
    kernel = KERNEL + "\ndef run(n):\n    return launch(n.new_empty(2, 2))\n"
    assert flagged(tmp_path, {}, kernel=kernel) == []
    kernel = KERNEL + "\ndef run(x):\n    return launch(x)\n"
    assert flagged(tmp_path, {}, kernel=kernel) == [2]


def test_a_callers_parameter_is_asked_of_its_own_callers(tmp_path):
    callers = {
        "pkg/moe.py": (
            "import torch\n"
            "from pkg.kernels import launch\n"
            "def stage(x):\n"
            "    return launch(x)\n"
            "def run(n):\n"
            "    return stage(torch.empty(n, 4))\n"
        )
    }
    # `stage` hands on its `x`, and its one caller allocates it: the rank is run's own.
    assert flagged(tmp_path, callers) == []
    handed_on = (
        callers["pkg/moe.py"]
        .replace("def run(n):", "def run(buf):")
        .replace("torch.empty(n, 4)", "buf")
    )
    assert flagged(tmp_path, {"pkg/moe.py": handed_on}) == [2]


def test_a_parameter_is_followed_no_further_than_the_levels(tmp_path, monkeypatch):
    relay = (
        "import torch\n"
        "from pkg.kernels import launch\n"
        "def stage(x):\n"
        "    return launch(x)\n"
        "def relay(y):\n"
        "    return stage(y)\n"
        "def run(n):\n"
        "    return relay(torch.empty(n, 4))\n"
    )
    # Three callers up the allocation settles it, past the two levels asked: input.
    assert flagged(tmp_path / "two", {"pkg/moe.py": relay}) == [2]
    monkeypatch.setattr(input_assert, "CALLER_LEVELS", 3)
    assert flagged(tmp_path / "three", {"pkg/moe.py": relay}) == []
    monkeypatch.setattr(input_assert, "CALLER_LEVELS", 1)  # the function's own callers only
    assert flagged(
        tmp_path / "one", {"pkg/moe.py": relay.replace("relay(torch", "stage(torch")}
    ) == [2]


def test_what_the_assert_asks_travels_to_a_caller_further_up(tmp_path):
    callers = {
        "pkg/moe.py": (
            "import torch\n"
            "from pkg.kernels import launch\n"
            "def stage(x, b):\n"
            "    return launch(x, block=b)\n"
            "def run(n):\n"
            "    return stage(torch.empty(n, 4), n + 16)\n"
        )
    }
    # An allocation fixes `x`'s rank (a form); `n + 16` is made from run's `n`, which
    # settles nothing of `block`'s value (a size).
    assert flagged(tmp_path, callers) == [3]


def test_a_method_stays_read_by_the_letter(tmp_path):
    kernel = "class K:\n    def launch(self, x):\n        assert x.dim() == 2\n"
    callers = {
        "pkg/moe.py": "from pkg.kernels import K\ndef run(n):\n    K().launch(n.new_empty(2))\n"
    }
    assert flagged(tmp_path, callers, kernel=kernel) == [3]


def test_the_field_makes_the_findings_depend_on_other_files():
    on = InputAssert.from_table({"id": "t", "package-callers": True}, "t")
    off = InputAssert.from_table({"id": "t"}, "t")
    assert (on.CACHEABLE, off.CACHEABLE) == (False, True)


def test_the_field_refuses_what_is_not_a_boolean():
    with pytest.raises(ConfigError, match="package-callers"):
        InputAssert.from_table({"id": "t", "package-callers": "yes"}, "t")


def test_a_cached_whole_tree_run_sees_an_edit_to_a_caller(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernels.py": KERNEL,
            "pkg/moe.py": (
                "import torch\nfrom pkg.kernels import launch\n"
                "def run(n):\n    launch(torch.empty(n, 4))\n"
            ),
        },
    )
    table = {"id": "a", "kind": "input-assert", **ON}
    config = parse_table({"contracts": [table]}, root=tmp_path, registry=kind_class)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:

        def lines():
            result = api.check([tmp_path / "pkg"], config=config, jobs=1)
            return sorted((f.path, f.line) for f in result.findings)

        assert lines() == []
        assert lines() == []  # the warm run, from the cache
        (tmp_path / "pkg/moe.py").write_text(
            "from pkg.kernels import launch\ndef run(x):\n    launch(x)\n", encoding="utf-8"
        )
        assert lines() == [("pkg/kernels.py", 2)]  # the kernel's bytes did not change
    finally:
        os.chdir(cwd)


def check_edited(root, files: dict[str, str], edited: str, monkeypatch) -> list:
    """The findings of a run on the one file ``edited`` of a package written under ``root``,
    input-assert declared with the field on, as a pre-commit hook runs it."""
    write_tree(root, {"pkg/__init__.py": "", **files})
    table = {"id": "a", "kind": "input-assert", **ON}
    config = parse_table({"contracts": [table]}, root=root, registry=kind_class)
    monkeypatch.chdir(root)
    return api.check([root / edited], config=config, jobs=1, use_cache=False).findings


def test_a_run_on_the_edited_caller_reports_what_it_changed_in_the_kernel(tmp_path, monkeypatch):
    files = {
        "pkg/kernels.py": (
            "def launch(\n    x,\n):\n    assert x.dim() == 2\n    return x\n\n"
            "def other(y):\n    assert y > 0\n"
        ),
        "pkg/moe.py": "from pkg.kernels import launch\ndef run(x):\n    launch(x)\n",
    }
    findings = check_edited(tmp_path, files, "pkg/moe.py", monkeypatch)
    found = [(f.path, f.line) for f in findings]
    assert found == [("pkg/kernels.py", 4)]  # `other` is not called from the edit
    assert "pkg/moe.py" in findings[0].message


def test_dependent_lines_are_those_of_the_functions_an_edit_names(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernels.py": (
                "def launch(\n    x,\n):\n    assert x.dim() == 2\n\n"
                "@jit\ndef other(y):\n    assert y > 0\n"
            ),
            "pkg/moe.py": "from pkg.kernels import launch, other\n",
        },
    )
    from checkers.project import Project

    project = Project(tmp_path, (tmp_path,))
    on = InputAssert.from_table({"id": "t", **ON}, "t")
    off = InputAssert.from_table({"id": "t"}, "t")
    edited = {"pkg.moe": "pkg/moe.py"}
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {
        4: ("pkg/moe.py",),
        8: ("pkg/moe.py",),
    }
    assert off.dependent_lines("pkg/kernels.py", project, edited) == {}
    assert on.dependent_lines("pkg/kernels.py", project, {"pkg.kernels": "pkg/kernels.py"}) == {}
    (tmp_path / "pkg/moe.py").write_text("from pkg.kernels import other\n", encoding="utf-8")
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {8: ("pkg/moe.py",)}


def test_a_caller_importing_the_function_over_several_lines_is_found(tmp_path):
    callers = {
        "pkg/__init__.py": "from pkg.kernels import launch\n",
        "pkg/moe.py": "from pkg import (\n    launch,\n)\ndef run(x):\n    launch(x)\n",
        "pkg/dense.py": ALLOCATING,
    }
    assert flagged(tmp_path, callers) == [2]


SIZED = "def launch(x):\n    assert x.dim() == 2\n    assert x.shape[-1] % 64 == 0\n    return x\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    buf = torch.empty(4, n)\n    launch(buf)\n", [3]),  # the width is the caller's n
        ("    buf = torch.empty(4, 64)\n    launch(buf)\n", []),  # every size its own
        ("    w = n * 2\n    launch(torch.empty(4, w))\n", [3]),  # through a local, steps back
        ("    launch(torch.empty(4, 64).to(n))\n", [3]),  # an operand of a method call
        ("    buf = torch.empty(4, n)\n    launch(buf.float())\n", [3]),  # its receiver
        ("    launch(torch.empty(size=(4, n)))\n", [3]),  # a keyword, a tuple inside it
        ("    launch(torch.empty((4, n)))\n", [3]),  # a tuple
        ("    launch(torch.stack([torch.empty(64) for _ in range(n)], 1))\n", [3]),
    ],
    ids=[
        "sized-by-input",
        "sized-by-literals",
        "through-a-local",
        "method-argument",
        "method-receiver",
        "keyword",
        "tuple",
        "comprehension",
    ],
)
def test_an_allocation_settles_its_form_and_its_sizes_only_when_they_are_its_own(
    tmp_path, body, expected
):
    callers = {"pkg/moe.py": "import torch\nfrom pkg.kernels import launch\ndef run(n):\n" + body}
    assert flagged(tmp_path, callers, kernel=SIZED) == expected


@pytest.mark.parametrize(
    ("test", "form"),
    [
        ("x.dim() == 2", True),
        ("x.ndim == 2 and x.is_contiguous()", True),
        ("len(x.shape) == 3", True),
        ("x.dtype in (torch.float16, torch.bfloat16)", True),
        ("x.device.type == 'cuda'", True),
        ("isinstance(x, list)", True),
        ("not x.is_contiguous()", True),
        ("x.dim() == 2 and x.shape[0] > 0", False),
        ("x.shape == y.shape", False),
        ("x.size(0) == 2", False),
        ("x is not None", False),
        ("x == y.dtype", False),
        ("x.dtype == y.kind", False),
        ("2 == 2", False),
        ("callable(x)", False),
        ("x", False),
        ("x.shape[0]", False),
    ],
)
def test_which_asserts_ask_only_a_values_form(test, form):
    import ast

    from checkers.analysis.origins import _asks_form

    assert _asks_form(ast.parse(test, mode="eval").body) is form


def test_a_nested_function_of_a_module_level_name_is_read_by_the_letter(tmp_path):
    kernel = (
        "def launch(x):\n    return x\n\n"
        "def outer():\n    def launch(y):\n        assert y.dim() == 2\n\n"
        "class K:\n    def launch(self, z):\n        assert z.dim() == 2\n"
    )
    callers = {
        "pkg/moe.py": "from pkg.kernels import launch\ndef run(n):\n    launch(n.new_empty(2))\n"
    }
    assert flagged(tmp_path, callers, kernel=kernel) == [6, 10]


def test_a_name_a_star_import_may_have_bound_leaves_the_callers_unlisted(tmp_path):
    callers = {
        "pkg/__init__.py": "from pkg.kernels import launch\n",
        "pkg/moe.py": "from pkg import *\ndef run(x):\n    launch(x)\n",
        "pkg/dense.py": ALLOCATING,
    }
    assert flagged(tmp_path, callers) == [2, 3]


@pytest.mark.parametrize(
    "broken",
    [
        b"from pkg import kernels\ndef run(x:\n    kernels.launch(x)\n",
        b"# kernels\n\xff launch(x)\n",
    ],
    ids=["does-not-parse", "does-not-decode"],
)
def test_a_caller_file_that_cannot_be_read_leaves_the_callers_unlisted(tmp_path, broken):
    callers = {"pkg/dense.py": ALLOCATING}
    (tmp_path / "pkg").mkdir(parents=True, exist_ok=True)
    (tmp_path / "pkg/moe.py").write_bytes(broken)
    assert flagged(tmp_path, callers) == [2, 3]


@pytest.mark.parametrize(
    "kernel",
    [
        "def launch(x, depth=0):\n    assert x.dim() == 2\n"
        "    if depth < 2:\n        launch(x[1:], depth + 1)\n    return x\n",
        "def launch(x):\n    assert x.dim() == 2\n"
        "    def again(part):\n        return launch(part)\n    return again(x[1:])\n",
    ],
    ids=["recursive", "from-a-closure"],
)
def test_a_call_from_inside_the_function_hands_on_what_it_already_had(tmp_path, kernel):
    assert flagged(tmp_path, {"pkg/moe.py": ALLOCATING}, kernel=kernel) == []


def test_a_call_in_the_callers_module_body_is_read_there(tmp_path):
    callers = {
        "pkg/moe.py": "import torch\nfrom pkg.kernels import launch\n"
        "WARM = launch(torch.empty(4, 64))\n"
    }
    assert flagged(tmp_path, callers, kernel=SIZED) == []


def test_a_name_the_caller_imports_itself_is_no_value_it_computed(tmp_path):
    callers = {
        "pkg/moe.py": "from pkg.kernels import launch\n"
        "def run(n):\n    import torch\n    launch(torch.empty(4, 64))\n"
    }
    assert flagged(tmp_path, callers, kernel=SIZED) == []


@pytest.mark.parametrize(
    ("kernel", "line"),
    [
        # line 3 is the module's, whoever imports the function
        ("def launch(x):\n    assert x.dim() == 2\nX = 1; assert X\n", 2),
        ("def launch(x): assert x.dim() == 2\n", 1),  # the def's own line
    ],
    ids=["body-ends-at-column-zero", "on-the-def-line"],
)
def test_a_functions_dependent_lines_are_its_asserts_from_def_to_end(tmp_path, kernel, line):
    from checkers.project import Project

    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernels.py": kernel,
            "pkg/moe.py": "from pkg.kernels import launch\n",
        },
    )
    on = InputAssert.from_table({"id": "t", **ON}, "t")
    found = on.dependent_lines("pkg/kernels.py", Project(tmp_path), {"pkg.moe": "pkg/moe.py"})
    assert found == {line: ("pkg/moe.py",)}


def test_callers_analyses_are_kept_for_the_run_within_a_byte_budget(tmp_path, monkeypatch):
    """Two kernels share their callers: each caller module is read once while the budget
    holds them, read again once it cannot, and the findings are the same either way."""
    from checkers.analysis import origins, package_callers

    kernels = (
        "def launch(x):\n    assert x.dim() == 2\n    return x\n"
        "def gather(y):\n    assert y.dim() == 1\n    return y\n"
    )
    callers = {
        f"pkg/caller{i}.py": (
            "import torch\nfrom pkg.kernels import launch, gather\n"
            f"def run{i}(n):\n    launch(torch.empty(n, 4))\n    gather(torch.zeros(n))\n"
        )
        for i in range(3)
    }
    made: list[str] = []

    class Counted(origins.InputOrigins):
        def __init__(self, tree, inputs, source=None):
            made.append(source.path if source is not None else "")
            super().__init__(tree, inputs, source)

    monkeypatch.setattr(origins, "InputOrigins", Counted)
    kept = flagged(tmp_path / "kept", callers, kernel=kernels)
    read_kept = sorted(p for p in made if "caller" in p)
    made.clear()
    monkeypatch.setattr(package_callers, "_KEPT_BYTES", 1)  # room for the last one only
    dropped = flagged(tmp_path / "dropped", callers, kernel=kernels)
    read_dropped = sorted(p for p in made if "caller" in p)
    assert kept == dropped == []  # every caller allocates what it passes
    assert read_kept == [f"pkg/caller{i}.py" for i in range(3)]
    assert read_dropped == sorted([f"pkg/caller{i}.py" for i in range(3)] * 2)


def test_the_least_recently_asked_analysis_goes_first_once_the_budget_is_full(
    tmp_path, monkeypatch
):
    from checkers.analysis import origins, package_callers
    from checkers.analysis.program import program_of
    from checkers.project import Project

    sources = {f"pkg/{m}.py": f"def {m}(x):\n    return x\n" for m in "abc"}
    write_tree(tmp_path, {"pkg/__init__.py": "", **sources})
    program = program_of(Project(tmp_path, (tmp_path,)))
    made: list[str] = []

    class Counted(origins.InputOrigins):
        def __init__(self, tree, inputs, source=None):
            made.append(source.path)
            super().__init__(tree, inputs, source)

    monkeypatch.setattr(origins, "InputOrigins", Counted)
    # Room for exactly two of the three modules' source.
    monkeypatch.setattr(package_callers, "_KEPT_BYTES", 2 * len(sources["pkg/a.py"]))
    asker = package_callers.PackageCallers(program, "pkg.a", None, frozenset(), 1)
    for rel in ("pkg/a.py", "pkg/b.py", "pkg/a.py", "pkg/c.py", "pkg/a.py", "pkg/b.py"):
        assert asker._analysis(rel) is not None
    # a and b fit; a asked again is kept longest, so c's arrival lets b go, not a.
    assert made == ["pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/b.py"]
    kept = sum(len(o._source.text) for o, _ in program.package_analyses.values())
    assert kept <= package_callers._KEPT_BYTES


def test_a_callers_parameter_asked_at_two_depths_is_answered_at_each(tmp_path):
    # `stage`'s `x` is asked one level up for `launch` (where `run`'s allocation settles
    # it) and at the last level for `deep`, through `f` (where nothing is asked further).
    kernel = (
        "def launch(x):\n    assert x.dim() == 2\n    return x\n"
        "def deep(w):\n    assert w.dim() == 2\n    return w\n"
    )
    callers = {
        "pkg/mid.py": "from pkg.kernels import deep\ndef f(v):\n    return deep(v)\n",
        "pkg/moe.py": (
            "import torch\n"
            "from pkg.kernels import launch\n"
            "from pkg.mid import f\n"
            "def stage(x):\n"
            "    f(x)\n"
            "    return launch(x)\n"
            "def run(n):\n"
            "    return stage(torch.empty(n, 4))\n"
        ),
    }
    assert flagged(tmp_path, callers, kernel=kernel) == [5]


def test_a_run_on_a_caller_two_levels_up_reports_the_kernel_it_reaches(tmp_path, monkeypatch):
    files = {
        "pkg/kernels.py": "def launch(x):\n    assert x.dim() == 2\n    return x\n",
        "pkg/moe.py": "from pkg.kernels import launch\ndef stage(x):\n    return launch(x)\n",
        # The edit: `run` now hands `stage` its own parameter, not a buffer it made.
        "pkg/model.py": "from pkg.moe import stage\ndef run(buf):\n    return stage(buf)\n",
    }
    findings = check_edited(tmp_path, files, "pkg/model.py", monkeypatch)
    assert [(f.path, f.line) for f in findings] == [("pkg/kernels.py", 2)]


def test_dependent_lines_follow_an_edit_through_the_body_of_the_function_it_names(
    tmp_path, monkeypatch
):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernels.py": (
                "def launch(x):\n    assert x.dim() == 2\n\ndef other(y):\n    assert y > 0\n"
            ),
            "pkg/moe.py": (
                "from pkg.kernels import launch, other\n"
                "def stage(x):\n    return launch(x)\n"
                "def unrelated(y):\n    return other(y)\n"
            ),
            "pkg/model.py": "from pkg.moe import stage\ndef run(buf):\n    return stage(buf)\n",
        },
    )
    from checkers.project import Project

    project = Project(tmp_path, (tmp_path,))
    on = InputAssert.from_table({"id": "t", **ON}, "t")
    edited = {"pkg.model": "pkg/model.py"}
    # `run` names `stage`, whose body names `launch`: `other` is two levels from nothing.
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {2: ("pkg/model.py",)}
    # Asked again of the same edit with nothing changed: the same answer (worked out once).
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {2: ("pkg/model.py",)}
    # A change to `stage` itself, outside the edited set, is read at the next question.
    moe = (tmp_path / "pkg/moe.py").read_text(encoding="utf-8")
    (tmp_path / "pkg/moe.py").write_text(
        moe.replace("return launch(x)", "return other(launch(x))"), encoding="utf-8"
    )
    os.utime(tmp_path / "pkg/moe.py", ns=(1, 1))  # a stat no earlier write had
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {
        2: ("pkg/model.py",),
        5: ("pkg/model.py",),
    }
    monkeypatch.setattr(input_assert, "CALLER_LEVELS", 1)  # the edited file's own calls only
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {}


def test_a_file_rewritten_within_one_mtime_tick_at_its_size_is_read_again(tmp_path):
    # An editor saves `stage` twice in one clock tick, at the same size: the stat cannot
    # tell the two apart, so what the edit reaches is worked out again, not remembered.
    from checkers.project import Project

    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernels.py": (
                "def launch(x):\n    assert x.dim() == 2\n\ndef other(y):\n    assert y > 0\n"
            ),
            "pkg/moe.py": "from pkg.kernels import launch, other\ndef stage(x):\n"
            "    return launch(x)\n",
            "pkg/model.py": "from pkg.moe import stage\ndef run(buf):\n    return stage(buf)\n",
        },
    )
    project = Project(tmp_path, (tmp_path,))
    on = InputAssert.from_table({"id": "t", **ON}, "t")
    edited = {"pkg.model": "pkg/model.py"}
    moe = tmp_path / "pkg/moe.py"
    tick = moe.stat().st_mtime_ns
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {2: ("pkg/model.py",)}
    rewritten = moe.read_text(encoding="utf-8").replace("return launch(x)", "return  other(x)")
    assert len(rewritten) == len(moe.read_text(encoding="utf-8"))
    moe.write_text(rewritten, encoding="utf-8")
    os.utime(moe, ns=(tick, tick))  # the same tick as the first save
    assert on.dependent_lines("pkg/kernels.py", project, edited) == {5: ("pkg/model.py",)}
