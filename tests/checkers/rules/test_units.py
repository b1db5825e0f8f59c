"""units (AC801-AC803): quantities of different declared units mixed without a conversion."""

from __future__ import annotations

import os
import time

import pytest

from checkers import api
from checkers.analysis.unit_algebra import comparable
from checkers.project import Project
from checkers.rules.units import Units, compatible, fmt, parse_unit
from checkers.source import SourceFile
from contracts.fields import ConfigError

from ...scaffold import write_tree
from ..rule_harness import run_rule

NAMES = {
    "blocks": "block",
    "*_blocks": "block",
    "num_blocks": "page",
    "*_tokens": "token",
    "*_bytes": "byte",
    "*_block_bytes": "byte/block",
    "rows": "row",
    "*_layers": "layer",
    "block_ratio": "page/block",
    "block_size": "token/page",
    "scheduler_block_size": "token/block",
}
PARAMS = {"names": NAMES, "counts": ["layer"]}


def check(tmp_path, source, files=None, path="pkg/mod.py", params=PARAMS):
    files = {"pkg/__init__.py": "", **(files or {})}
    return run_rule(Units, source, params, path=path, root=tmp_path, files=files)


def found(tmp_path, body, **kw):
    """(code, line, column) of each finding in ``body``, the body of ``def f(...)``."""
    source = "def f(blocks, num_blocks, rows, n, x_tokens, seq_bytes):\n" + body
    return [(f.code, f.line, f.column) for f in check(tmp_path, source, **kw)]


@pytest.mark.parametrize(
    ("text", "parsed", "shown"),
    [
        ("byte/block", (("block", -1), ("byte", 1)), "byte/block"),
        ("1", (), "1"),
        ("byte * layer / block", (("block", -1), ("byte", 1), ("layer", 1)), "byte*layer/block"),
        ("1/page", (("page", -1),), "1/page"),
    ],
)
def test_units_parse_and_print(text, parsed, shown):
    assert parse_unit(text) == parsed
    assert fmt(parsed) == shown


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"names": {"blocks": "block/page/token"}}, "more than one `/`"),
        ({"names": {"blocks": "scheduler block"}}, "is not a unit"),
        ({"names": {"num-blocks": "page"}}, "is not a name glob"),
        ({"names": {"blocks": "block"}, "counts": ["layer"]}, "which no unit in `names` uses"),
    ],
)
def test_a_vocabulary_that_cannot_work_is_refused_by_name(params, said):
    with pytest.raises(ConfigError, match="contract `t`") as err:
        Units.from_table({"id": "t", **params}, "contract `t`")
    assert said in str(err.value)


def test_a_rate_and_a_count_of_its_numerator_are_one_unit_two_rates_are_not():
    token, per_block, per_page = (
        (("token", 1),),
        parse_unit("token/block"),
        parse_unit("token/page"),
    )
    assert compatible(token, per_block) and compatible(per_page, token)
    assert not compatible(per_block, per_page)
    assert not compatible(parse_unit("row"), parse_unit("layer"))


def test_two_rates_of_one_numerator_compare_and_do_not_mix():
    per_block, per_page = parse_unit("token/block"), parse_unit("token/page")
    assert comparable(per_block, per_page) and comparable(per_page, per_block)
    assert not compatible(per_block, per_page)
    assert not comparable(per_block, parse_unit("byte/page"))  # tokens against bytes
    assert not comparable(parse_unit("row"), parse_unit("layer"))  # two counts
    assert comparable((("token", 1),), per_block)  # as compatible
    assert not comparable((("token", 1),), parse_unit("byte/page"))


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ("    return blocks + num_blocks\n", [("AC801", 2, 12)]),
        ("    return rows - n\n", []),  # n declares nothing: unknown is silent
        ("    return blocks * n + num_blocks\n", []),  # a product with an unknown is unknown
        ("    return blocks + 1, rows * 2 - rows\n", []),  # numbers go with anything
        ("    if x_tokens > num_blocks:\n        pass\n", [("AC801", 2, 8)]),
        ("    if x_tokens > block_size:\n        pass\n", []),  # a block's worth of tokens
        # Two rates of one numerator compared: how the denominators relate, not a mix.
        ("    if scheduler_block_size != block_size:\n        pass\n", []),
        ("    return x_tokens >= scheduler_block_size > block_size\n", []),
        ("    return max(scheduler_block_size, block_size)\n", [("AC801", 2, 12)]),
        ("    return scheduler_block_size - block_size\n", [("AC801", 2, 12)]),
        ("    block_size = scheduler_block_size\n", [("AC801", 2, 18)]),
        ("    if n.k_block_bytes > block_size:\n        pass\n", [("AC801", 2, 8)]),
        ("    return max(blocks, num_blocks)\n", [("AC801", 2, 12)]),
        ("    return blocks if n else num_blocks\n", [("AC801", 2, 12)]),
        ("    m = int(blocks)\n    return m - num_blocks\n", [("AC801", 3, 12)]),
        ("    ids = blocks\n    ids = n\n    return ids - num_blocks\n", []),  # rebound
        ("    return blocks[:2] - num_blocks[1:]\n", [("AC801", 2, 12)]),
        ("    return blocks[0] - num_blocks[1]\n", []),  # an element may be anything
        ("    return n.x_bytes_for_tokens - x_tokens\n", []),  # a phrase: not its last word
        ("    row_bytes = n.k_block_bytes\n", [("AC801", 2, 17)]),  # a row's bytes: byte/row
        ("    num_row_bytes = n.k_block_bytes\n", []),  # counted bytes are not per row
        ("    num_blocks = blocks * block_ratio\n", []),
        ("    num_blocks = blocks\n", [("AC801", 2, 18)]),
        ("    num_blocks = blocks * 1\n", [("AC803", 2, 18)]),
        ("    num_blocks = blocks // 1\n", [("AC803", 2, 18)]),
        ("    x_tokens = num_blocks * block_size\n", []),
        ("    x_tokens += blocks\n", [("AC801", 2, 17)]),
        ("    rows -= a_layers * 2\n", [("AC801", 2, 13)]),
        ("    seq_bytes = a_layers * k_block_bytes * blocks\n", []),  # layers are a count
        ("    lo_blocks = num_blocks // block_ratio\n", []),
        ("    return rows * x_tokens - x_tokens\n", []),  # a count times a count: per what?
        ("    return cdiv(x_tokens, 256) - blocks\n", []),  # chunks of 256, not tokens
        ("    return (x_tokens + 255) // 256 - blocks\n", []),
        ("    return x_tokens // 2 - blocks\n", [("AC801", 2, 12)]),  # half the tokens
        ("    return cdiv(x_tokens, block_size) - num_blocks\n", []),  # token/(token/page)
        # A mix is reported where it is made; what is computed from it has no unit, so
        # one mistake is one finding, not one more at each later use.
        (
            "    m = min(blocks, x_tokens)\n    return x_tokens - m, m > x_tokens\n",
            [("AC801", 2, 9)],
        ),
        ("    m = blocks + num_blocks\n    return m - num_blocks\n", [("AC801", 2, 9)]),
        ("    m = blocks if n else num_blocks\n    return m - num_blocks\n", [("AC801", 2, 9)]),
        ("    m = blocks + 1\n    return m - num_blocks\n", [("AC801", 3, 12)]),  # no mix
        ("    m = blocks + blocks\n    return m - num_blocks\n", [("AC801", 3, 12)]),
        ("    m = x_tokens\n    m += blocks\n    return m - blocks\n", [("AC801", 3, 10)]),
        # Headers that spell no declared name, around a body that mixes two.
        (
            "    for i in n:\n        if i:\n            return blocks + num_blocks\n",
            [("AC801", 4, 20)],
        ),
        (
            "    with n:\n        try:\n            pass\n        finally:\n            rows -= blocks\n",
            [("AC801", 6, 21)],
        ),
    ],
)
def test_what_flows_and_what_mixes(tmp_path, body, want):
    assert found(tmp_path, body) == want


def test_a_declared_name_keeps_its_unit_and_a_declared_function_returns_it(tmp_path):
    source = (
        "def entry_bytes(layers, per_page_bytes):\n"
        "    return per_page_bytes\n"
        "\n"
        "\n"
        "def seq_block_bytes(k_block_bytes, block_ratio):\n"
        "    return k_block_bytes * block_ratio\n"
    )
    got = check(tmp_path, source)
    # entry_bytes is declared byte (a `*_bytes`), and returns byte; the second returns
    # byte*page/block^2 from a function declared byte/block.
    assert [(f.code, f.line) for f in got] == [("AC801", 6)]
    assert "drop `* block_ratio`" in got[0].message


def test_a_keyword_argument_names_its_parameter_and_a_position_resolves_its_callee(tmp_path):
    callee = (
        "class Pool:\n"
        "    def __init__(self, num_blocks, stride):\n"
        "        self.num_blocks = num_blocks\n"
        "\n"
        "    def carve(self, n, *, blocks):\n"
        "        self.kept_blocks = n\n"
        "        return blocks\n"
    )
    source = (
        "from pkg.pool import Pool\n"
        "\n"
        "\n"
        "def build(blocks, num_blocks):\n"
        "    pool = Pool(blocks, 4)\n"
        "    pool.carve(num_blocks, blocks=num_blocks)\n"
        "    return Pool(num_blocks, 4)\n"
    )
    got = check(tmp_path, source, files={"pkg/pool.py": callee})
    assert [(f.code, f.line, f.column) for f in got] == [
        ("AC802", 5, 17),  # Pool.__init__'s `num_blocks`, past `self`
        ("AC802", 6, 35),  # keyword `blocks`
    ]
    assert "declared page" in got[0].message


def test_a_function_an_attribute_holds_takes_its_units_only_where_it_is_the_only_one(tmp_path):
    callee = (
        "def carve(num_blocks, width):\n"
        "    return num_blocks * width\n"
        "\n"
        "\n"
        "def other(blocks, width):\n"
        "    return blocks * width\n"
    )
    source = (
        "from pkg.carving import carve, other\n"
        "\n"
        "\n"
        "class Pool:\n"
        "    def __init__(self, maybe):\n"
        "        self.cut = carve\n"
        "        self.either = carve\n"
        "        self.given = maybe\n"
        "\n"
        "    def later(self):\n"
        "        self.either = other\n"
        "\n"
        "    def build(self, blocks):\n"
        "        self.either(blocks, 4)\n"
        "        return self.cut(blocks, 4)\n"
        "\n"
        "    def again(self, blocks):\n"
        "        return self.cut(blocks, 4)\n"
    )
    got = check(tmp_path, source, files={"pkg/carving.py": callee})
    # `self.cut` holds `carve` alone, asked of from two methods: its `num_blocks` is
    # declared page, and scheduler blocks go in. Which of two functions `self.either` runs
    # is not known.
    assert [(f.code, f.line) for f in got] == [("AC802", 15), ("AC802", 18)]
    assert "declared page" in got[0].message


def test_an_undeclared_parameter_has_the_unit_of_the_name_it_is_stored_as(tmp_path):
    callee = "def keep(store, n):\n    store.num_blocks = n\n"
    source = "from pkg.store import keep\n\n\ndef f(s, blocks):\n    keep(s, blocks)\n"
    (got,) = check(tmp_path, source, files={"pkg/store.py": callee})
    assert got.code == "AC802" and "which it stores as `num_blocks`" in got.message


@pytest.mark.parametrize(
    "stored",
    [
        "store.num_blocks = (\n        n\n    )",
        "store.num_blocks = (  # backend pages\n        # of the store\n        (n)\n    )",
        "store.num_blocks = \\\n        n",
        "store.num_blocks: int = n",
        "kept = store.num_blocks = n",
        "(\n        store.num_blocks\n    ) = n",
    ],
)
def test_a_parameter_is_found_stored_however_the_assignment_is_spelled(tmp_path, stored):
    callee = f"def keep(store, n):\n    {stored}\n"
    source = "from pkg.store import keep\n\n\ndef f(s, blocks):\n    keep(s, blocks)\n"
    (got,) = check(tmp_path, source, files={"pkg/store.py": callee})
    assert got.code == "AC802" and "which it stores as `num_blocks`" in got.message


def test_a_parameter_stored_under_a_glob_too_short_to_search_for_is_still_found(tmp_path):
    # `*nb` has no literal run of three letters to look for in a file: every line is read.
    params = {"names": {"blocks": "block", "*nb": "page"}}
    callee = "def keep(store, n):\n    store.pages_nb = n\n"
    source = "from pkg.store import keep\n\n\ndef f(s, blocks):\n    keep(s, blocks)\n"
    (got,) = check(tmp_path, source, files={"pkg/store.py": callee}, params=params)
    assert got.code == "AC802" and "which it stores as `pages_nb`" in got.message


SIZES = (
    "def pages(blocks, block_ratio):\n"
    "    return blocks * block_ratio\n"
    "\n"
    "\n"
    "def take(n, blocks):\n"
    "    return n\n"
)


def test_a_call_passed_by_position_meets_the_parameter_in_the_unit_its_callee_returns(tmp_path):
    source = (
        "from pkg.sizes import pages, take\n"
        "\n"
        "\n"
        "class Runner:\n"
        "    def ratio(self):\n"
        "        return pages(4, 2)\n"
        "\n"
        "    def f(self, xs, blocks):\n"
        "        take(len(xs), pages(blocks, 2))\n"
        "        take(len(blocks), self.ratio())\n"
        "        take(*xs, pages(blocks, 2))\n"  # past `*xs` no position is known
        "        take(len(blocks), len(blocks))\n"
    )
    got = check(tmp_path, source, files={"pkg/sizes.py": SIZES})
    assert [(f.code, f.line, f.column) for f in got] == [("AC802", 9, 23), ("AC802", 10, 27)]
    assert "passes page" in got[0].message and "declared block" in got[0].message


def test_a_callee_is_not_looked_up_for_arguments_from_calls_into_no_project_function(
    tmp_path, record_parses
):
    parsed = record_parses()
    source = (
        "from pkg.sizes import take\n\n\ndef f(xs, blocks):\n"
        "    print(blocks, take(len(xs), max(xs)))\n"
    )
    assert check(tmp_path, source, files={"pkg/sizes.py": SIZES}) == []
    assert not any(p.endswith("sizes.py") for p in parsed)
    # ... where one is a project function's, its callee is.
    (tmp_path / "pkg/sizes.py").unlink()
    source = source.replace("max(xs)", "pages(xs, 2)").replace("take\n", "pages, take\n")
    check(tmp_path, source, files={"pkg/sizes.py": SIZES})
    assert any(p.endswith("sizes.py") for p in parsed)


def test_a_call_that_declares_nothing_has_the_unit_its_callee_returns(tmp_path):
    callee = (
        "def pages(blocks, block_ratio):\n"
        "    if not blocks:\n"
        "        return 0\n"
        "    return blocks * block_ratio\n"
        "\n"
        "\n"
        "def mixed(blocks, num_blocks, n):\n"
        "    if n:\n"
        "        return blocks\n"
        "    return num_blocks\n"
    )
    source = (
        "from pkg.sizes import mixed, pages\n"
        "\n"
        "\n"
        "def f(blocks, rows):\n"
        "    return pages(blocks, 2) - blocks, mixed(1, 2, 3) - blocks\n"
    )
    got = check(tmp_path, source, files={"pkg/sizes.py": callee})
    # pages() returns page on every path that returns a quantity; mixed() agrees on none.
    assert [(f.code, f.line, f.column) for f in got] == [("AC801", 5, 12)]


def test_a_callees_unit_flows_through_a_product_a_choice_and_a_slice(tmp_path):
    callee = (
        "def ratio(block_ratio):\n"
        "    return block_ratio\n"
        "\n"
        "\n"
        "def pages(blocks, block_ratio):\n"
        "    return blocks * block_ratio\n"
    )
    source = (
        "from pkg.sizes import pages, ratio\n"
        "\n"
        "\n"
        "def f(blocks, num_blocks, n):\n"
        "    a = blocks * ratio(2) - blocks\n"
        "    b = (n if n else pages(blocks, 2)) // block_ratio - num_blocks\n"
        "    c = pages(blocks, 2)[:1] // block_ratio - num_blocks\n"
        "    d = n * pages(blocks, 2) - num_blocks\n"  # a product with an unknown is unknown
        "    return a, b, c, d\n"
    )
    got = check(tmp_path, source, files={"pkg/sizes.py": callee})
    # blocks * (page/block) is page; page // (page/block) is block.
    assert [(f.code, f.line, f.column) for f in got] == [
        ("AC801", 5, 9),
        ("AC801", 6, 9),
        ("AC801", 7, 9),
    ]
    assert "subtracts block (`blocks`) from page" in got[0].message
    assert "subtracts page (`num_blocks`) from block" in got[1].message


def test_two_calls_that_declare_nothing_compared_or_chosen_between_ask_both_callees(tmp_path):
    callee = (
        "def pages(blocks, block_ratio):\n"
        "    return blocks * block_ratio\n"
        "\n"
        "\n"
        "def more(blocks):\n"
        "    return blocks + 1\n"
        "\n"
        "\n"
        "def other(blocks, block_ratio):\n"
        "    return block_ratio * blocks\n"
    )
    source = (
        "from pkg.sizes import more, other, pages\n"
        "\n"
        "\n"
        "def f(blocks, c):\n"
        "    a = pages(blocks, 2) if c else more(blocks)\n"
        "    b = pages(blocks, 2) if c else other(blocks, 2)\n"
        "    return more(blocks) < pages(blocks, 2), a, b\n"
    )
    got = check(tmp_path, source, files={"pkg/sizes.py": callee})
    # pages() returns page, more() block, other() page: the first choice and the comparison
    # mix them; the second choice is one unit either way.
    assert [(f.code, f.line, f.column) for f in got] == [("AC801", 5, 9), ("AC801", 7, 12)]


PROJECT = {
    "pyproject.toml": (
        "[tool.atom-contracts]\n"
        "[[tool.atom-contracts.contracts]]\n"
        'id = "units"\nkind = "units"\n'
        'names = { blocks = "block", num_blocks = "page" }\n'
    ),
    "pkg/__init__.py": "",
    "pkg/pool.py": "def carve(x):\n    return x\n",
    "pkg/user.py": "from pkg.pool import carve\n\n\ndef f(num_blocks):\n    return carve(num_blocks)\n",
    "pkg/other.py": "def g(num_blocks):\n    return num_blocks\n",
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
def test_renaming_a_callees_parameter_fails_its_caller_elsewhere(project, warm):
    if warm:
        assert api.check([], cwd=project, jobs=1).findings == []
    (project / "pkg/pool.py").write_text("def carve(blocks, x=0):\n    return blocks\n")
    local = api.check(["pkg/pool.py"], cwd=project, jobs=1, use_cache=warm)
    assert [(f.path, f.line, f.code) for f in local.findings] == [("pkg/user.py", 5, "AC802")]
    assert local.findings[0].message.endswith("(reached through pkg/pool.py, edited)")


def test_bodies_walked_before_their_file_is_checked_are_kept_for_the_next_run(project, monkeypatch):
    from checkers.analysis import program

    assert api.check([], cwd=project, jobs=1).findings == []
    (project / "pkg/pool.py").write_text("def carve(blocks, x=0):\n    return blocks\n")
    walked = []  # each body parsed alone: a module known by its summary asked of its calls
    body_details = program.body_details
    monkeypatch.setattr(
        program, "body_details", lambda *a, **k: walked.append(a[4]) or body_details(*a, **k)
    )
    for _ in range(2):
        local = api.check(["pkg/pool.py"], cwd=project, jobs=1)
        assert [(f.path, f.line) for f in local.findings] == [("pkg/user.py", 5)]
    # The whole run asked about `pkg/user.py`'s calls before it checked that file, and what
    # it made then went to the cache, though checking the file replaced the summary it was
    # made on: neither local run parses a body again.
    assert walked == []


def test_what_a_callee_stores_is_read_per_position_and_found_for_every_caller(
    tmp_path, monkeypatch
):
    # Asked once per callee and position in a run: each position keeps its own answer, and
    # a second caller of the same callee gets the answer the first found.
    scans = []
    may_store = Units.may_store
    monkeypatch.setattr(
        Units, "may_store", lambda self, *a: scans.append(a[-1]) or may_store(self, *a)
    )
    callee = "def keep(store, n, m):\n    store.num_blocks = n\n    store.rows = m\n"
    source = (
        "from pkg.store import keep\n"
        "\n"
        "\n"
        "def f(s, blocks):\n"
        "    keep(s, blocks, blocks)\n"
        "\n"
        "\n"
        "def g(s, x_tokens):\n"
        "    keep(s, x_tokens, x_tokens)\n"
    )
    got = check(tmp_path, source, files={"pkg/store.py": callee})
    assert [(f.code, f.line, f.column) for f in got] == [
        ("AC802", 5, 13),
        ("AC802", 5, 21),
        ("AC802", 9, 13),
        ("AC802", 9, 23),
    ]
    assert ["stores as `num_blocks`" in f.message for f in got] == [True, False, True, False]
    assert ["stores as `rows`" in f.message for f in got] == [False, True, False, True]
    assert scans == ["n", "m"]  # four calls of `keep` at two positions: its text read twice


def test_what_a_callees_returns_agree_on_is_kept_per_depth_and_found_for_every_caller(
    tmp_path, monkeypatch
):
    # `deep()` reaches `pages()` four calls down, past the depth returns are followed to; asked
    # once per callee and depth in a run, `pages()` asked first at the top does not lend its
    # unit to the chain, and every caller of `pages()` meets its unit.
    callee = (
        "def pages(blocks, block_ratio):\n"
        "    return blocks * block_ratio\n"
        "\n"
        "\n"
        "def one():\n"
        "    return pages(1, 2)\n"
        "\n"
        "\n"
        "def two():\n"
        "    return one()\n"
        "\n"
        "\n"
        "def three():\n"
        "    return two()\n"
        "\n"
        "\n"
        "def deep():\n"
        "    return three()\n"
    )
    source = (
        "from pkg.sizes import deep, pages, three\n"
        "\n"
        "\n"
        "def f(blocks):\n"
        "    return pages(blocks, 2) - blocks, three() - blocks, deep() - blocks\n"
        "\n"
        "\n"
        "def g(blocks):\n"
        "    return pages(blocks, 2) - blocks\n"
    )
    from checkers.analysis.unit_flow import Walker

    asked = []
    callee_returns = Walker._callee_returns
    monkeypatch.setattr(
        Walker,
        "_callee_returns",
        lambda self, target, depth: (
            asked.append((target[1], depth)) or callee_returns(self, target, depth)
        ),
    )
    got = check(tmp_path, source, files={"pkg/sizes.py": callee})
    assert [(f.code, f.line, f.column) for f in got] == [
        ("AC801", 5, 12),
        ("AC801", 5, 39),
        ("AC801", 9, 12),
    ]
    # `pages` at the top once for both callers, and again three calls down; `three` once at
    # the top and once for `deep`; nothing past the depth.
    top = [("pages", 0), ("three", 0), ("two", 1), ("one", 2), ("pages", 3)]
    assert sorted(asked) == sorted([*top, ("deep", 0), ("three", 1), ("two", 2), ("one", 3)])


def test_an_argument_whose_callee_returns_no_unit_looks_up_no_callee(tmp_path, record_parses):
    # `mixed()` was asked already in `f` and agrees on no unit: `take` is not looked up for
    # it. `pages()` was asked too, and agrees on page: `take`'s `blocks` meets it.
    sizes = (
        "def pages(blocks, block_ratio):\n"
        "    return blocks * block_ratio\n"
        "\n"
        "\n"
        "def mixed(blocks, num_blocks, n):\n"
        "    return blocks if n else num_blocks\n"
    )
    take = "def take(n, blocks):\n    return n\n"
    source = (
        "from pkg.sizes import mixed, pages\n"
        "from pkg.take import take\n"
        "\n"
        "\n"
        "def f(blocks):\n"
        "    a = mixed(1, 2, 3) - blocks\n"
        "    take(1, mixed(blocks, 2, 3))\n"  # spells a declared name: the statement is read
        "    return a\n"
    )
    parsed = record_parses()
    files = {"pkg/sizes.py": sizes, "pkg/take.py": take}
    assert check(tmp_path, source, files=files) == []
    assert any(p.endswith("sizes.py") for p in parsed)
    assert not any(p.endswith("take.py") for p in parsed)
    source = source.replace("mixed(1, 2, 3) - blocks", "pages(1, 2) - blocks").replace(
        "take(1, mixed(blocks, 2, 3))", "take(1, pages(blocks, 2))"
    )
    got = check(tmp_path, source, files=files)
    assert [(f.code, f.line, f.column) for f in got] == [("AC801", 6, 9), ("AC802", 7, 13)]


def test_a_callees_answers_are_kept_for_one_run_and_asked_again_in_the_next(tmp_path):
    # One contract, two runs over projects where the callees differ under the same names: a
    # sink or a return kept from the first run would be the second's answer.
    contract = Units.from_table({"id": "t", **PARAMS}, "contract `t`")
    source = (
        "from pkg.store import keep, pages\n"
        "\n"
        "\n"
        "def f(s, blocks):\n"
        "    keep(s, blocks)\n"
        "    return pages(blocks) - blocks\n"
    )
    runs = []
    for name, stored, returned in (
        ("one", "num_blocks", "blocks * block_ratio"),
        ("two", "kept_blocks", "blocks"),
    ):
        root = tmp_path / name
        callee = f"def keep(store, n):\n    store.{stored} = n\n\n\ndef pages(blocks):\n    return {returned}\n"
        write_tree(root, {"pkg/__init__.py": "", "pkg/store.py": callee, "pkg/mod.py": source})
        project = Project(root, (root,))
        src = SourceFile("pkg/mod.py", source, abspath=str(root / "pkg/mod.py"))
        project.add_source(src)
        runs.append([(f.code, f.line) for f in contract.check(src, project)])
    assert runs == [[("AC802", 5), ("AC801", 6)], []]


@pytest.mark.parametrize(
    ("name", "flagged"),
    [
        ("fit_tokens", True),  # a quantity of tokens, by its last word
        ("can_fit_tokens", False),  # a question: its answer is a truth, not tokens
        ("is_full_tokens", False),
        ("has_free_tokens", False),
        ("_should_evict_tokens", False),
        ("island_tokens", True),  # `is` only as a word of its own
    ],
)
def test_a_name_that_asks_a_question_is_not_read_by_its_last_word(tmp_path, name, flagged):
    source = f"def {name}(blocks):\n    return blocks\n"  # blocks returned as the name's unit
    assert bool(check(tmp_path, source)) is flagged


@pytest.mark.parametrize(
    ("body", "hint"),
    [
        # An assignment: the name may be what is wrong, so both ways out are named.
        (
            "    x_blocks = blocks * scheduler_block_size\n",
            "or, if `x_blocks` is meant to hold token, name it for that",
        ),
        ("    x_blocks = blocks * scheduler_block_size\n", "drop `* scheduler_block_size`"),
        # A parameter is the callee's contract, not this function's name to change.
        ("    g(blocks=x_tokens)\n", None),
    ],
)
def test_an_assignment_finding_names_the_rename_beside_the_conversion(tmp_path, body, hint):
    source = "def g(*, blocks):\n    return blocks\n\n\ndef f(blocks, x_tokens):\n" + body
    (finding,) = check(tmp_path, source)
    if hint is None:
        assert "name it for that" not in finding.message
    else:
        assert hint in finding.message


@pytest.mark.parametrize(
    ("body", "want"),
    [
        # What the if body binds does not reach the else: there `x` is still unknown.
        ("    if n:\n        x = num_blocks\n    else:\n        return x - blocks\n", []),
        ("    if n:\n        x = num_blocks\n    elif rows:\n        return x - blocks\n", []),
        # After the statement a local both branches agree on keeps its unit ...
        (
            "    if n:\n        x = num_blocks\n    else:\n        x = num_blocks\n"
            "    return x - blocks\n",
            [("AC801", 6, 12)],
        ),
        # ... one only the body binds may still be that ...
        ("    if n:\n        x = num_blocks\n    return x - blocks\n", [("AC801", 4, 12)]),
        # A header that spells a declared name is read, and so are both of its ways.
        (
            "    if x_tokens > num_blocks:\n        pass\n    else:\n        pass\n",
            [("AC801", 2, 8)],
        ),
        (
            "    if blocks:\n        pass\n    else:\n        return blocks + num_blocks\n",
            [("AC801", 5, 16)],
        ),
        # ... one the else forgets (binds to what no unit says) is unknown ...
        (
            "    x = num_blocks\n    if n:\n        pass\n    else:\n        x = g()\n"
            "    return x - blocks\n",
            [],
        ),
        # ... and one they bind to two units is unknown.
        (
            "    if n:\n        x = num_blocks\n    else:\n        x = blocks\n"
            "    return x - num_blocks\n",
            [],
        ),
    ],
)
def test_a_branch_binds_its_locals_for_itself_and_what_follows(tmp_path, body, want):
    assert found(tmp_path, body) == want
