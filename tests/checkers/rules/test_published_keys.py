"""published-keys (AC811): a function reads a dict in a shape no return path of its producer has."""

from __future__ import annotations

import ast
import os
import time

import pytest

from checkers import api
from checkers.analysis.functions import D_DICTS, P_DEFINITE, P_MAYBE, P_OPEN, summarise_module
from checkers.rules.published_keys import PublishedKeys

from ...scaffold import write_tree
from ..rule_harness import run_rule


def check(tmp_path, source, params=None, files=None, path="pkg/reader.py"):
    files = {"pkg/__init__.py": "", **(files or {})}
    return run_rule(PublishedKeys, source, params or {}, path=path, root=tmp_path, files=files)


def shapes(source: str) -> list[tuple]:
    """(definite keys, maybe keys, open) per return path of the module's only function."""
    summary = summarise_module(ast.parse(source), "pkg")
    (detail,) = summary[4]
    return [
        (sorted(p[P_DEFINITE]), sorted(k for k, _ in p[P_MAYBE]), p[P_OPEN])
        for p in detail[D_DICTS]
    ]


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ('    return {"a": 1, "b": 2}', [(["a", "b"], [], False)]),
        ("    return dict(a=1, b=x)", [(["a", "b"], [], False)]),
        (
            '    d = {}\n    d["a"] = 1\n    d.setdefault("b", 2)\n    return d',
            [(["a", "b"], [], False)],
        ),
        (
            '    d = {"a": 1}\n    d.update({"b": 2}, c=3)\n    d |= {"e": 5}\n    return d',
            [(["a", "b", "c", "e"], [], False)],
        ),
        (
            '    d = {"a": 1, "b": 2}\n    d.pop("a")\n    del d["b"]\n    return d',
            [([], [], False)],
        ),
        ('    d = {}\n    if x:\n        d["a"] = 1\n    return d', [([], ["a"], False)]),
        ('    d = {}\n    for i in x:\n        d["a"] = i\n    return d', [([], ["a"], False)]),
        ('    d = {}\n    with lock(x):\n        d["a"] = 1\n    return d', [(["a"], [], False)]),
        (
            '    d = {}\n    try:\n        d["a"] = f()\n    except E:\n        pass\n    return d',
            [([], ["a"], False)],
        ),
        (
            '    if x:\n        return {"a": 1}\n    return {"b": 2}',
            [(["a"], [], False), (["b"], [], False)],
        ),
        ("    return {**x, 'a': 1}", [(["a"], [], True)]),
        ("    return {k: 1 for k in x}", [([], [], True)]),
        ("    d = {}\n    d.update(x)\n    return d", [([], [], True)]),
        ("    d = {}\n    d[x] = 1\n    return d", [([], [], True)]),
        ('    if x:\n        return None\n    return {"a": 1}', [(["a"], [], False)]),
        (
            '    if x:\n        return g()\n    return {"a": 1}',
            [([], [], True), (["a"], [], False)],
        ),
        ("    return g()", []),  # no dict of its own: not a producer
    ],
)
def test_the_keys_each_return_path_publishes(body, want):
    assert shapes(f"def f(x):\n{body}\n") == want


_TAGGED = (
    "def build(mode, entry):\n"
    "    if mode == 'mean_std':\n"
    "        return {'mode': mode, 'mean': entry[0], 'std': entry[1]}\n"
    "    return {'mode': mode, 'min': entry[0], 'max': entry[1]}\n"
    "\n"
    "\n"
)
# A reader, and the reads it makes: each `if`'s two ways are exclusive, and so are two
# tests of one name against two constants; a run of the reader makes the reads of one way
# of each, and only a run whose reads no return path publishes together is a finding.
EXCLUSIVE_READS = (
    # A dict tagged by a value, read under tests of the tag.
    (
        "    kind = stats['mode']\n"
        "    if kind == 'mean_std':\n"
        "        return stats['mean'] / stats['std']\n"
        "    if kind == 'min_max':\n"
        "        return stats['min'] / stats['max']\n"
        "    return kind\n",
        [],
    ),
    (
        "    if stats['mode'] != 'min_max':\n"
        "        x = stats['mean'] / stats['std']\n"
        "    else:\n"
        "        x = stats['min'] / stats['max']\n",
        [],
    ),
    (
        "    kind = stats['mode']\n"
        "    if kind == 'mean_std':\n"
        "        x = stats['mean']\n"
        "    if kind != 'mean_std':\n"
        "        x = stats['min']\n",
        [],
    ),
    ("    if scaled:\n        return stats['mean']\n    else:\n        return stats['min']\n", []),
    ("    return stats['mean'] if scaled else stats['min']\n", []),
    (
        "    if scaled:\n        x = stats['mean']\n    elif x:\n        x = stats['min']\n"
        "    return x\n",
        [],
    ),
    (
        "    kind = stats['mode']\n    if kind == 'mean_std':\n        x = stats['mean']\n"
        "    if kind == 'min_max':\n        x = stats['min']\n",
        [],
    ),
    (
        "    if scaled:\n        if x:\n            return stats['mean']\n    else:\n"
        "        x = stats['min']\n",
        [],  # the inner `if`'s exit ends with the body it is in
    ),
    (
        "    if scaled:\n        x = stats['mean']\n    else:\n        return stats['min']\n"
        "    return stats['std']\n",
        [],  # past an `else` that leaves, the body's truth holds
    ),
    # One run may make both reads: two tests that can both hold, or one read under none.
    ("    if scaled:\n        x = stats['mean']\n    if not x:\n        x = stats['min']\n", [12]),
    ("    if scaled == x:\n        x = stats['mean']\n    x = stats['min']\n", [11]),
    (
        "    try:\n        x = stats['mean']\n    except ValueError:\n        x = stats['min']\n",
        [12],
    ),
    ("    try:\n        x = stats['mean']\n    finally:\n        x = stats['min']\n", [12]),
    (
        "    match x:\n        case 1:\n            x = stats['mean']\n    return stats['min']\n",
        [12],
    ),
    ("    if scaled:\n        x = x * stats['std']\n    return x + stats['min']\n", [11]),
    ("    if scaled:\n        x = stats['mean']\n    if x:\n        x = stats['min']\n", [12]),
    (
        "    if scaled == 1:\n        x = stats['mean']\n    if x == 2:\n"
        "        x = stats['min']\n",
        [12],
    ),
    # Past `if kind == ...: return`, the rest runs only where the test is false.
    (
        "    if stats['mode'] == 'mean_std':\n        return stats['mean']\n    return stats['min']\n",
        [],
    ),
    (
        "    for e in entry:\n        if e:\n            x = stats['mean']\n            continue\n"
        "        x = stats['min']\n",
        [],
    ),
    ("    if scaled:\n        x = stats['mean']\n    return stats['min']\n", [11]),  # stays
    (
        "    if scaled:\n        if x:\n            return stats['mean']\n    return stats['min']\n",
        [12],  # the inner `if`'s exit holds inside the outer body only
    ),
    (
        "    if scaled:\n        return stats['mean']\n    else:\n        x = stats['max']\n"
        "    return stats['min']\n",
        [],
    ),
)


@pytest.mark.parametrize(("body", "lines"), EXCLUSIVE_READS)
def test_reads_no_run_of_the_reader_makes_together_are_judged_apart(tmp_path, body, lines):
    source = _TAGGED + "def apply(x, entry, mode, scaled):\n    stats = build(mode, entry)\n" + body
    assert [f.line for f in check(tmp_path, source)] == lines


@pytest.mark.parametrize(("tests", "lines"), [(7, []), (8, [12])])
def test_past_eight_tests_a_reader_s_reads_are_one_run(tmp_path, tests, lines):
    # `mean` and `min` in the two ways of one test, and `mode` under each of the others:
    # 1 + 7 = 8 tests are judged apart (no finding); 1 + 8 = 9 are one run, whose reads
    # `mode`, `mean`, `min` each path publishes two of, so the first path is closest and
    # `min` is flagged, on line 6 + 2 + 3 + 1 = 12 (the producer's six lines, `def` and
    # `stats`, then `if`, its body and `else`).
    others = "".join(f"    if t{i}:\n        y = stats['mode']\n" for i in range(tests))
    body = "    if scaled:\n        x = stats['mean']\n    else:\n        x = stats['min']\n"
    source = (
        _TAGGED
        + f"def apply(x, entry, mode, scaled, {', '.join(f't{i}' for i in range(8))}):\n"
        + "    stats = build(mode, entry)\n"
        + body
        + others
    )
    assert [f.line for f in check(tmp_path, source)] == lines


def test_a_run_whose_reads_a_larger_run_makes_is_not_judged_again(tmp_path):
    # Runs: `mean`, `min` (with `scaled` false) and `mean`, `min`, `max`. The larger one is
    # closest to the min/max path, which lacks `mean`; the smaller, tied, to the first
    # path, which lacks `min`: only what the larger run says is reported.
    body = "    x = stats['mean']\n    y = stats['min']\n    if scaled:\n        x = stats['max']\n"
    source = _TAGGED + "def apply(x, entry, mode, scaled):\n    stats = build(mode, entry)\n" + body
    assert [f.line for f in check(tmp_path, source)] == [9]
    # A smaller run that is no part of a larger one is judged on its own.
    body = (
        "    if scaled:\n        x = stats['mean']\n        y = stats['min']\n    else:\n"
        "        x = stats['max']\n        y = stats['min']\n        z = stats['mode']\n"
    )
    source = _TAGGED + "def apply(x, entry, mode, scaled):\n    stats = build(mode, entry)\n" + body
    assert [f.line for f in check(tmp_path, source)] == [11]


def test_a_while_true_without_break_leaves_only_through_its_returns():
    source = 'def f(x):\n    d = {}\n    while True:\n        d["a"] = 1\n        return d\n'
    assert shapes(source) == [(["a"], [], False)]


def test_the_record_shape_the_decode_reader_of_a_prefill_key_is_flagged_once(tmp_path):
    producer = (
        "def build(decode):\n"
        "    if decode:\n"
        "        meta = {}\n"
        '        meta["n"] = 1\n'
        '        meta["win"] = 2\n'
        "        return meta\n"
        '    return {"n": 1, "rows": 2, "starts": 3}\n'
    )
    reader = (
        "from pkg.builder import build\n"
        "\n"
        "\n"
        "def decode_scorer():\n"
        "    meta = build(True)\n"
        '    return meta["rows"], meta["win"], meta["rows"]\n'
        "\n"
        "\n"
        "def prefill_scorer():\n"
        "    meta = build(False)\n"
        '    return meta["rows"], meta["starts"]\n'
    )
    found = check(
        tmp_path, reader, files={"pkg/builder.py": producer}, params={"producers": ["*.build"]}
    )
    # Only the decode scorer: its keys are no one path's; the prefill scorer's are prefill's.
    assert [(f.line, f.column) for f in found] == [(6, 12)]
    assert "the return at pkg/builder.py:6 (the dict from line 3) publishes `win` but not " in (
        found[0].message
    )
    assert "which only the return at line 7 does" in found[0].message


def test_a_callee_that_fills_the_dict_adds_its_keys(tmp_path):
    source = (
        "class B:\n"
        "    def build(self, decode):\n"
        "        if decode:\n"
        '            meta = {"n": 1}\n'
        "            self._refresh(meta)\n"
        "            return meta\n"
        '        return {"n": 1, "rows": 2}\n'
        "\n"
        "    def _refresh(self, meta):\n"
        '        meta["win"] = 3\n'
        "\n"
        "    def score(self):\n"
        "        meta = self.build(True)\n"
        '        return meta["win"], meta["n"]\n'
    )
    assert check(tmp_path, source) == []


def test_a_dict_handed_to_a_callee_nobody_resolves_is_open(tmp_path):
    source = (
        "def build(decode, helper):\n"
        "    if decode:\n"
        '        meta = {"n": 1}\n'
        "        helper.fill(meta)\n"
        "        return meta\n"
        '    return {"n": 1, "rows": 2}\n'
        "\n"
        "\n"
        "def score():\n"
        "    meta = build(True, None)\n"
        '    return meta["win"], meta["rows"]\n'
    )
    assert check(tmp_path, source) == []


# A producer whose two paths publish apart (`win` on one, `rows` on the other), and the two
# blank lines after it: what follows starts on line 7.
_BUILD = (
    'def build(decode):\n    if decode:\n        return {"win": 1}\n    return {"rows": 2}\n\n\n'
)


def test_self_attribute_assigned_in_a_base_class_links_the_reader(tmp_path):
    base = (
        _BUILD + "class Base:\n    def prepare(self, decode):\n        self.meta = build(decode)\n"
    )
    reader = (
        "from pkg.base import Base\n"
        "\n"
        "\n"
        "class Sub(Base):\n"
        "    def forward(self):\n"
        '        return self.meta["win"] + self.meta["rows"]\n'
    )
    (found,) = check(
        tmp_path, reader, files={"pkg/base.py": base}, params={"producers": ["pkg.base.build"]}
    )
    assert found.line == 6 and "`build`" in found.message
    # Undeclared, a producer is looked for in the reader's own module only.
    assert check(tmp_path, reader, files={"pkg/base.py": base}) == []


@pytest.mark.parametrize("owner", ["self", "other"])
def test_only_the_instances_own_attribute_links_a_self_read(tmp_path, owner):
    source = (
        _BUILD + "class Step:\n"
        "    def reset(self):\n"
        "        self.meta = None\n"
        "\n"
        "    def prepare(self, other, decode):\n"
        f"        {owner}.meta = build(decode)\n"
        "\n"
        "    def forward(self):\n"
        '        return self.meta["win"] + self.meta["rows"]\n'
    )
    found = check(tmp_path, source)
    # Another object's `meta` is not the one this instance reads.
    assert [f.line for f in found] == ([15] if owner == "self" else [])


@pytest.mark.parametrize(
    "reading",
    [
        '    if "rows" in meta:\n        return meta["win"] + meta["rows"]\n',
        '    rows = meta.get("rows")\n    return meta["win"] + meta["rows"]\n',
        '    try:\n        return meta["win"] + meta["rows"]\n    except KeyError:\n        return 0\n',
    ],
)
def test_a_guarded_read_copes_with_the_missing_key(tmp_path, reading):
    source = _BUILD + "def read():\n    meta = build(True)\n" + reading
    assert check(tmp_path, source) == []


def test_a_key_no_path_publishes_is_flagged_on_a_direct_link_only(tmp_path):
    source = (
        _BUILD + "def direct():\n"
        '    return build(True)["wins"]\n'
        "\n"
        "\n"
        "def through(meta):\n"
        '    return meta["other"]\n'
        "\n"
        "\n"
        "def caller():\n"
        "    return through(build(True))\n"
    )
    (found,) = check(tmp_path, source)
    assert found.line == 8 and "did you mean `win`?" in found.message


# `_BUILD`, and a method that builds its dict and hands it to its own helpers (`meta` bound
# on line 9).
SCORER = _BUILD + ("class Scorer:\n    def score(self, decode):\n        meta = build(decode)\n")


def test_a_parameter_is_linked_through_the_modules_own_callers(tmp_path):
    source = (
        SCORER + "        return self._decode(1, meta=meta) + self._prefill(meta, 2)\n"
        "\n"
        "    def _decode(self, q, meta):\n"
        '        return meta["win"] + meta["rows"]\n'
        "\n"
        "    def _prefill(self, meta, q):\n"
        '        return meta["rows"]\n'
    )
    (found,) = check(tmp_path, source)
    assert found.line == 13


@pytest.mark.parametrize(
    ("alias", "flagged"),
    [
        ("        m = meta\n", True),  # another name for the caller's dict
        ("        meta = dict(meta)\n        m = meta\n", False),  # a copy of it, rebound
        ("        m = meta if q else {}\n", False),  # not the parameter alone
    ],
)
def test_a_local_bound_to_a_parameter_is_that_parameter(tmp_path, alias, flagged):
    source = (
        SCORER + "        return self._decode(1, meta)\n"
        "\n"
        "    def _decode(self, q, meta):\n" + alias + '        return m["win"] + m["rows"]\n'
    )
    assert bool(check(tmp_path, source)) is flagged


def test_declared_producers_follow_any_objects_attribute_and_no_other_function(tmp_path):
    builder = (
        "class Builder:\n"
        "    def attach(self, md):\n"
        "        md.indexer_meta = self._build_meta(md)\n"
        "        md.other = self._build_other(md)\n"
        "\n"
        "    def _build_meta(self, md):\n"
        "        if md.decode:\n"
        '            return {"win": 1}\n'
        '        return {"rows": 2}\n'
        "\n"
        "    def _build_other(self, md):\n"
        "        if md.decode:\n"
        '            return {"win": 1}\n'
        '        return {"rows": 2}\n'
    )
    reader = (
        "def forward(fc):\n"
        "    meta = fc.md.indexer_meta\n"
        "    other = fc.md.other\n"
        '    return meta["win"] + meta["rows"] + other["win"] + other["rows"]\n'
    )
    params = {"producers": ["*._build_meta"]}
    found = check(tmp_path, reader, params=params, files={"pkg/builder.py": builder})
    assert [(f.line, f.column) for f in found] == [(4, 26)]
    # Undeclared, another object's attribute is not followed at all.
    assert check(tmp_path, reader, files={"pkg/builder.py": builder}) == []


PROJECT = {
    "pyproject.toml": (
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "keys"\nkind = "published-keys"\nproducers = ["pkg.builder.*"]\n'
    ),
    "pkg/__init__.py": "",
    "pkg/builder.py": (
        'def build(decode):\n    if decode:\n        return {"win": 1, "rows": 2}\n'
        '    return {"rows": 2}\n'
    ),
    "pkg/reader.py": (
        "from pkg.builder import build\n\n\ndef read():\n"
        '    meta = build(True)\n    return meta["win"] + meta["rows"]\n'
    ),
    "pkg/unrelated.py": 'def f(d):\n    return d["x"]\n',
}


@pytest.fixture
def project(tmp_path):
    write_tree(tmp_path, PROJECT)
    past = time.time() - 60
    for folder, _, files in os.walk(tmp_path):
        for name in files:
            os.utime(os.path.join(folder, name), (past, past))
    return tmp_path


@pytest.mark.parametrize("warm", [True, False], ids=["cache-filled", "no-cache"])
def test_an_edit_to_the_producer_fails_the_reader_elsewhere(project, warm):
    if warm:
        assert api.check([], cwd=project, jobs=1).findings == []
    (project / "pkg/builder.py").write_text(
        'def build(decode):\n    if decode:\n        return {"win": 1}\n    return {"rows": 2}\n'
    )
    local = api.check(["pkg/builder.py"], cwd=project, jobs=1, use_cache=warm)
    assert [(f.path, f.line, f.code) for f in local.findings] == [("pkg/reader.py", 6, "AC811")]
    assert local.findings[0].message.endswith("(reached through pkg/builder.py, edited)")


def _asked(tmp_path, files, path, edited, producers=("pkg.builder.*",)):
    """``dependent_lines`` of ``path`` for an edit of ``edited`` (module -> path), and the
    modules the program summarised to answer."""
    from checkers.analysis.program import program_of
    from checkers.project import Project

    write_tree(tmp_path, files)
    project = Project(tmp_path, (tmp_path,))
    params = {"id": "t"} if producers is None else {"id": "t", "producers": list(producers)}
    contract = PublishedKeys.from_table(params, "contract `t`")
    lines = contract.dependent_lines(path, project, edited)
    loaded = {name for name, m in program_of(project)._modules.items() if m}
    return lines, loaded


def test_an_edit_of_the_producer_asks_the_reads_of_its_result(tmp_path):
    files = {k: v for k, v in PROJECT.items() if k != "pyproject.toml"}
    lines, _ = _asked(tmp_path, files, "pkg/reader.py", {"pkg.builder": "pkg/builder.py"})
    assert lines == {6: ("pkg/builder.py",)}


def test_an_edit_of_a_module_defining_no_producer_reads_no_other_module(tmp_path):
    files = {
        **{k: v for k, v in PROJECT.items() if k != "pyproject.toml"},
        # Calls the producer, defines none: its edit changes no dict a reader reads.
        "pkg/runner.py": "from pkg.builder import build\n\n\ndef run():\n    return build(1)\n",
    }
    edited = {"pkg.runner": "pkg/runner.py"}
    lines, loaded = _asked(tmp_path, files, "pkg/reader.py", edited)
    assert lines == {}
    assert loaded == {"pkg.runner"}


def test_a_reader_that_spells_no_producer_is_not_read(tmp_path):
    files = {k: v for k, v in PROJECT.items() if k != "pyproject.toml"}
    edited = {"pkg.builder": "pkg/builder.py"}
    producers = ("pkg.builder.build",)
    lines, loaded = _asked(tmp_path, files, "pkg/unrelated.py", edited, producers)
    assert lines == {}
    assert "pkg.unrelated" not in loaded
    lines, loaded = _asked(tmp_path, files, "pkg/reader.py", edited, producers)
    assert lines == {6: ("pkg/builder.py",)}
    assert "pkg.reader" in loaded


def test_undeclared_producers_are_the_readers_own_so_no_edit_elsewhere_reaches_a_read(tmp_path):
    files = {k: v for k, v in PROJECT.items() if k != "pyproject.toml"}
    edited = {"pkg.builder": "pkg/builder.py"}
    lines, loaded = _asked(tmp_path, files, "pkg/reader.py", edited, producers=None)
    assert (lines, loaded) == ({}, set())
    # The whole-tree run agrees: undeclared, the reader's `build` is not followed.
    write_tree(
        tmp_path,
        {
            "pyproject.toml": PROJECT["pyproject.toml"].replace(
                'producers = ["pkg.builder.*"]\n', ""
            )
        },
    )
    (tmp_path / "pkg/builder.py").write_text(
        'def build(decode):\n    if decode:\n        return {"win": 1}\n    return {"rows": 2}\n'
    )
    assert api.check([], cwd=tmp_path, jobs=1, use_cache=False).findings == []


def test_undeclared_an_imported_producer_is_not_followed_beside_one_of_the_module(tmp_path):
    """The reader builds and reads a dict of its own (so its bodies are walked), and reads an
    imported builder's result too: undeclared, only the module's own producer is judged."""
    files = {
        "pyproject.toml": '[tool.atom-contracts]\n[[tool.atom-contracts.contracts]]\nid = "keys"\nkind = "published-keys"\n',
        "pkg/__init__.py": "",
        "pkg/builder.py": (
            'def build(decode):\n    if decode:\n        return {"win": 1}\n    return {"rows": 2}\n'
        ),
        "pkg/reader.py": (
            "from pkg.builder import build\n\n\ndef own(decode):\n    if decode:\n"
            '        return {"a": 1}\n    return {"b": 2}\n\n\ndef read():\n'
            "    meta = build(True)\n    mine = own(True)\n"
            '    return meta["win"] + meta["rows"] + mine["a"] + mine["b"]\n'
        ),
    }
    write_tree(tmp_path, files)
    found = api.check([], cwd=tmp_path, jobs=1, use_cache=False).findings
    assert [(f.path, f.line, f.code, f.message.split("`")[1]) for f in found] == [
        ("pkg/reader.py", 13, "AC811", 'mine["b"]')
    ]


# Links through a module's own functions that no single function spells whole.


def test_a_parameter_two_callers_up_from_the_producer_is_linked(tmp_path):
    """``score`` and ``relay`` spell no producer; ``run``, two callers up, does -- below a
    function nested in it, so the line is ``run``'s own, not the nested one's."""
    source = _BUILD + (
        "def score(meta):\n"
        '    return meta["win"] + meta["rows"]\n'
        "\n"
        "\n"
        "def relay(meta):\n"
        "    return score(meta)\n"
        "\n"
        "\n"
        "def run(decode):\n"
        "    def inner():\n"
        "        return decode\n"
        "\n"
        "    return relay(build(inner()))\n"
    )
    (found,) = check(tmp_path, source)
    assert found.line == 8


@pytest.mark.parametrize(
    "assign",
    [
        "self.meta = build(decode)",
        "self.meta: dict = build(decode)",
        "if decode is not None:\n            self.meta = build(decode)",
    ],
)
def test_self_attribute_a_base_assigns_links_methods_that_spell_no_producer(tmp_path, assign):
    """``Sub``'s methods spell no producer: its base's method assigns the attribute they read,
    one directly, one through a helper's parameter."""
    source = _BUILD + (
        "class Base:\n"
        "    def prepare(self, decode):\n"
        f"        {assign}\n"
        "\n"
        "\n"
        "class Sub(Base):\n"
        "    def direct(self):\n"
        '        return self.meta["win"] + self.meta["rows"]\n'
        "\n"
        "    def forward(self):\n"
        "        return self._score(self.meta)\n"
        "\n"
        "    def _score(self, meta):\n"
        '        return meta["win"] + meta["rows"]\n'
    )
    shift = assign.count("\n")
    assert [f.line for f in check(tmp_path, source)] == [14 + shift, 20 + shift]


def test_a_call_of_a_class_is_linked_to_the_init_it_runs(tmp_path):
    """The module's own ``__init__`` or one a base in another module defines: the call
    spells the class, not ``__init__``."""
    base = (
        "class Base:\n"
        "    def __init__(self, decode):\n"
        "        if decode:\n"
        '            return {"win": 1}\n'
        '        return {"rows": 2}\n'
    )
    source = (
        "from pkg.base import Base\n"
        "\n"
        "\n"
        "class Sub(Base):\n"
        "    pass\n"
        "\n"
        "\n"
        "def read():\n"
        '    return Sub(True)["win"] + Sub(True)["rows"]\n'
        "\n"
        "\n" + _BUILD + "def use():\n"
        '    return build(True)["win"]\n'
    )
    (found,) = check(tmp_path, source, files={"pkg/base.py": base})
    assert found.line == 9 and "`Base.__init__`" in found.message
    # The module's own `__init__`, whose class's name the reading function spells alone.
    own = source.replace("from pkg.base import Base\n", base).replace("(Base)", "(Base, Mixin)")
    (found,) = check(tmp_path, own)
    assert found.line == 13 and "`Base.__init__`" in found.message


def test_each_producer_question_is_asked_once_however_often_the_dict_is_read(tmp_path, monkeypatch):
    """``score`` reads its parameter's keys five times, from two callers: the question
    "which producers reach this parameter" is answered once, and so is each caller's own."""
    asked = []
    ask = PublishedKeys._ask

    def counting(self, program, module, outline, origin, depth):
        asked.append((outline[0], origin, depth))
        return ask(self, program, module, outline, origin, depth)

    monkeypatch.setattr(PublishedKeys, "_ask", counting)
    source = _BUILD + (
        "def score(meta):\n"
        '    a = meta["win"] + meta["rows"] + meta["win"]\n'
        '    return a + meta["rows"] + meta["win"]\n'
        "\n"
        "\n"
        "def run(decode):\n"
        "    return score(build(decode)) + score(build(not decode))\n"
    )
    (found,) = check(tmp_path, source)
    assert found.line == 8
    # One question for the parameter, one for the call each argument of `run` spells.
    assert sorted(asked) == [("run", ("c", "build"), 1), ("score", ("p", 0), 0)]


# A producer whose dict lacks `delta`, and the head of a function that binds a name to it.
DUMMY = 'def dummy():\n    return {"inputs": None}\n\n\ndef step(fetch, use):\n'


@pytest.mark.parametrize(
    ("branch", "flagged"),
    [
        # The `elif` test runs only when the `if` body did not: its binding cannot reach it.
        ('    elif inputs["delta"] is None:\n        pass\n', []),
        ('    else:\n        use(inputs["delta"])\n', []),
        # After the statement either binding may reach the read.
        ('    use(inputs["delta"])\n', [9]),
        ('    else:\n        pass\n    use(inputs["delta"])\n', [11]),
        ('    else:\n        inputs = fetch()\n    use(inputs["delta"])\n', []),
    ],
)
def test_a_binding_in_an_if_body_does_not_reach_its_else(tmp_path, branch, flagged):
    source = (
        DUMMY + "    inputs = fetch()\n    if inputs is None:\n        inputs = dummy()\n" + branch
    )
    assert [f.line for f in check(tmp_path, source)] == flagged


@pytest.mark.parametrize(
    "head",
    [
        "    for x in fetch():\n        pass\n",
        "    try:\n        fetch()\n    except OSError:\n        pass\n",
    ],
)
def test_a_read_in_a_loop_or_try_else_is_read(tmp_path, head):
    source = DUMMY + "    inputs = dummy()\n" + head + '    else:\n        use(inputs["delta"])\n'
    (found,) = check(tmp_path, source)
    assert source.splitlines()[found.line - 1].strip() == 'use(inputs["delta"])'


@pytest.mark.parametrize(
    "rebinding",
    [
        "    for chunk in fetch():\n        use(chunk['words'])\n",
        "    with fetch() as chunk:\n        use(chunk['words'])\n",
        "    chunk: dict = fetch()\n    use(chunk['words'])\n",
        "    n, *chunk = fetch()\n    use(chunk['words'])\n",
        "    n, chunk = fetch()\n    use(chunk['words'])\n",
    ],
)
def test_a_name_rebound_other_than_by_a_plain_assignment_is_no_longer_the_producers(
    tmp_path, rebinding
):
    source = (
        "def new_chunk():\n"
        '    return {"text": ""}\n'
        "\n"
        "\n"
        "def collect(fetch, use):\n"
        "    chunk = new_chunk()\n"
        "    use(chunk)\n" + rebinding
    )
    assert check(tmp_path, source) == []
    # ... while the plain binding is still read.
    assert len(check(tmp_path, source.replace(rebinding, "    use(chunk['words'])\n"))) == 1


@pytest.mark.parametrize(
    ("read", "flagged"),
    [
        # A comprehension's own variable is its own: it holds the iterable's items.
        ("    use([chunk['words'] for chunk in fetch()])\n", False),
        ("    use({chunk['words'] for chunk in fetch()})\n", False),
        ("    use({k: chunk['words'] for k, chunk in fetch()})\n", False),
        ("    use(sum(chunk['words'] for chunk in fetch()))\n", False),
        ("    use([c for x in fetch() for chunk in x if chunk['words'] for c in chunk])\n", False),
        ("    use([[chunk['words'] for chunk in x] for x in fetch()])\n", False),
        # ... while the function's own is read where the comprehension does not bind it: in
        # its first iterable, which runs in the function, and beside another variable.
        ("    use([w for w in chunk['words']])\n", True),
        ("    use([chunk['words'] for x in fetch()])\n", True),
        ("    use([[x for chunk in x] for x in chunk['words']])\n", True),
        ("    use({k: chunk['words'] for k in fetch()})\n", True),
        ("    use([c for x in fetch() for c in chunk['words']])\n", True),
        ("    use([x for x in fetch() if chunk['words']])\n", True),
        ("    use([1 for box[chunk['words']] in fetch()])\n", True),  # binds no name
        # Past the comprehension the name is the function's again, in the same statement
        # (walked after it here) and the next.
        ("    use(chunk['words'], [chunk for chunk in fetch()])\n", True),
        ("    use(chunk['words'], [[chunk for chunk in x] for chunk in fetch()])\n", True),
        ("    use([chunk for chunk in fetch()])\n    use(chunk['words'])\n", True),
    ],
)
def test_a_comprehension_s_variable_is_not_the_function_s_local_of_that_name(
    tmp_path, read, flagged
):
    source = (
        "def new_chunk():\n"
        '    return {"text": ""}\n'
        "\n"
        "\n"
        "def collect(fetch, use, box):\n"
        "    chunk = new_chunk()\n" + read
    )
    assert bool(check(tmp_path, source)) is flagged


CHOSEN = (
    "def full():\n"
    '    return {"inputs": 1, "delta": 2}\n'
    "\n"
    "\n"
    "def dummy():\n"
    '    return {"inputs": None}\n'
    "\n"
    "\n"
    "def step(paged, use, other):\n"
    "    if paged:\n"
    "        inputs = full()\n"
    "    else:\n"
    "        inputs = dummy()\n"
)


@pytest.mark.parametrize(
    ("read", "flagged"),
    [
        # Under the test that chose the producer, only that producer's dict reaches the read.
        ('    use(inputs["delta"] if paged else None)\n', False),
        ('    if paged:\n        use(inputs["delta"])\n', False),
        ('    if not paged:\n        pass\n    else:\n        use(inputs["delta"])\n', False),
        ('    use(None if not paged else inputs["delta"])\n', False),
        # Under its other value, the other producer's.
        ('    if not paged:\n        use(inputs["delta"])\n', True),
        ('    use(None if paged else inputs["delta"])\n', True),
        # Anywhere else, either may.
        ('    use(inputs["delta"])\n', True),
        ('    use(inputs["delta"] if other else None)\n', True),
        # The test's value or the dict rebound since: the choice no longer tells.
        ('    paged = other\n    use(inputs["delta"] if paged else None)\n', True),
        ('    inputs = dummy()\n    use(inputs["delta"] if paged else None)\n', True),
        ('    paged, n = other\n    use(inputs["delta"] if paged else None)\n', True),
        # A test read before the read, and done with, holds there no more.
        ('    if paged:\n        pass\n    use(inputs["delta"])\n', True),
        ('    n = other["k"] if not paged else 2\n    use(inputs["delta"])\n', True),
    ],
)
def test_a_read_under_the_test_that_chose_its_producer_reads_that_producers_dict(
    tmp_path, read, flagged
):
    assert bool(check(tmp_path, CHOSEN + read)) is flagged


def test_a_conditional_expression_on_a_call_keeps_the_enclosing_test(tmp_path):
    # `x if f() else y` matches no test, and the `if paged:` around it still holds.
    read = '    if paged:\n        use(inputs["delta"] if other() else inputs["delta"])\n'
    assert check(tmp_path, CHOSEN + read) == []


@pytest.mark.parametrize(
    ("choice", "flagged"),
    [
        # `if not paged:` chooses the dummy when `paged` is false.
        (
            "    if not paged:\n        inputs = dummy()\n    else:\n        inputs = full()\n",
            False,
        ),
        # Without an else, `paged` false leaves the binding before the `if`.
        ("    inputs = full()\n    if not paged:\n        inputs = dummy()\n", False),
        # Only the else binds it: with `paged` true nothing here bound it.
        ("    if paged:\n        pass\n    else:\n        inputs = dummy()\n", False),
    ],
)
def test_the_choice_follows_the_test_as_written_and_a_way_that_binds_nothing(
    tmp_path, choice, flagged
):
    head = CHOSEN.split("    if paged:\n")[0]
    source = head + choice + '    use(inputs["delta"] if paged else None)\n'
    assert bool(check(tmp_path, source)) is flagged


@pytest.mark.parametrize(
    "read",
    [
        '    use(inputs["delta"] if paged else None)\n',
        '    if not paged:\n        use(inputs["delta"])\n',
        '    use(inputs["delta"])\n',
        '    paged, n = other\n    use(inputs["delta"] if paged else None)\n',
        '    paged = other\n    use(inputs["delta"] if paged else None)\n',
        '    if other:\n        inputs = full()\n    use(inputs["delta"] if not other else 1)\n',
        '    if paged:\n        n = 1\n    elif other:\n        use(inputs["delta"])\n',
        '    if other:\n        inputs = full()\n    else:\n        use(inputs["delta"])\n',
        "    for inputs in other:\n        use(inputs['delta'])\n",
        "    use([inputs['delta'] for inputs in other])\n",
        "    use([x for x in inputs['delta']])\n",
        "    o = other\n    use(o['delta'])\n",
        "    other = full()\n    o = other\n    use(o['delta'])\n",
        # The tests a read runs under are the same in both, past an early exit too.
        '    if other:\n        return 1\n    use(inputs["delta"])\n',
        '    for x in other:\n        if x:\n            continue\n        use(inputs["delta"])\n',
        "    try:\n        n = 1\n    except E:\n        if other:\n            raise\n"
        '        use(inputs["delta"])\n    finally:\n        use(inputs["delta"])\n',
        "    match other:\n        case 1:\n            if x:\n                return\n"
        '            use(inputs["delta"])\n',
    ],
)
def test_the_reads_pass_and_the_full_walk_link_a_read_to_one_producer(read):
    # A check reads a function's reads alone; a run on some files asks the full details
    # which reads an edited producer reaches. They must name the same producer.
    from checkers.analysis.functions import D_READS, Outliner

    source = CHOSEN + read
    outliner = Outliner(ast.parse(source), "pkg", source)
    index = len(outliner.outlines) - 1
    every_line = frozenset(range(1, source.count("\n") + 2))
    alone, _guards = outliner.reads(index, every_line)
    assert alone == outliner.detail(index)[D_READS]
