"""A fix leaves a file the formatter passed as the formatter would write it.

The end-to-end tests take a module holding one assert, format it with ``ruff format`` (the
state a formatted project is in), apply the input-assert fix with ``--fix --unsafe-fixes``
and ask ``ruff format --check`` again: it must still pass. The asserts are the shapes real
trees hold -- short and long, one line and several, ``and``/``or`` chains, comparison chains,
calls with many arguments, ``assert not (...)``, a message of their own -- at three depths
and two line lengths. Unit tests hold ``flat`` and ``body`` to their word.
"""

from __future__ import annotations

import shutil
import subprocess
import textwrap

import pytest

from checkers import fix_layout
from checkers.fix_layout import body, flat, group

RUFF = shutil.which("ruff") or None

ASSERTS = [
    "assert x > 0",
    "assert seq_lens.shape[0] == extend_prefix_lens.shape[0]",
    "assert x.shape == residual.shape and x.dtype == residual.dtype",
    "assert self.rmsnorm1.variance_epsilon == self.rmsnorm2.variance_epsilon",
    "assert isinstance(spec_info, EagleDraftInput) or isinstance(spec_info, EagleVerifyInput)",
    "assert isinstance(forward_batch.spec_info, EagleDraftInput)",
    "assert not (model_runner.sliding_window_size is not None and model_runner.model_config.is_encoder_decoder)",
    "assert len(req.temp_input_token_ids_logprobs_val) == len(req.temp_input_token_ids_logprobs_idx)",
    "assert x.shape[0] == y.shape[0] == z.shape[0] == wwwwwwwwwwwwwwwwwwww.shape[0] == 1234",
    "assert a_long_name_number_one(xxxxxxxxxxxxxxxxxxxxxx) and b_long_name_number_two(yyyyyyyyyyyyyyy) or c",
    "assert some.attribute.chain.that_is_long.and_longer.and_longer_still.and_more_and_more(x, 2)",
    "assert isinstance(x, VeryLongTypeNameNumberOne) or isinstance(x, VeryLongTypeNameNumberTwo) or x is None",
    "assert x in (1, 2, 3), f'bad value {x} for the thing we are checking here, which is long'",
    "assert key not in self._registry_of_everything_known_so_far_in_this_process, key",
    "assert value is not None, 'a message long enough that the raise line passes the limit for sure'",
    "assert check_shapes(query_tensor, key_tensor, value_tensor, block_table_tensor, seq_lens_tensor)",
    "assert x.dim() == 3 and x.size(0) == num_tokens and x.size(1) == num_heads and x.size(2) == head_dim",
    "assert (\n    len(hidden_states.shape) == 2\n    and hidden_states.shape[1] == gating_output.shape[1]\n), 'Number of tokens mismatch'",
    "assert logits.shape[0] == len(info), (\n    f'The batch size of logits ({logits.shape[0]}) does not match the batch size of '\n    f'sampling_batch_info ({len(info)})'\n)",
    "assert len(top_logprobs_nums) == logprobs.shape[0], (\n    len(top_logprobs_nums),\n    logprobs.shape[0],\n)",
    "assert args.backend == 'sglang-oai-chat'  # only support this now, and a long comment",
    "assert m.max_query_len <= reorder_batch_threshold  # noqa: S101 -- a pragma comment, not counted",
    "assert all(\n    t.device == mixed_qkvz.device\n    for t in (mixed_ba, conv_state, conv_weight, conv_state_indices)\n)",
    "assert all(\n    g.kv_cache_spec.block_size % hash_block_size == 0\n    for g in kv_cache_groups\n    if g.kv_cache_spec.prefix_cacheable\n)",
    "assert block_shape is None or triton.cdiv(\n    lora_a_stacked[0].size(-2), block_shape[0]\n) == lora_a_scale_stacked[0].size(-2)",
    "assert torch.all(\n    (full_page_representatives >= 0)\n    & (full_page_representatives < mapping.numel() // page_size * page_size)\n)",
    "assert num_external_tokens > 0 - self_load_specs[request.request_id].vllm_cached_tokens, (\n    f'Mismatch in number of tokens: {num_external_tokens} vs '\n    f'{self_load_specs[request.request_id].vllm_cached_tokens}'\n)",
    "assert topk_indices_buffer is None, 'topk_indices_buffer is not \\\n        supported for this attention backend'",
    "assert all(\n    model_config.max_model_len >= (request.prompt_len + request.expected_output_len)\n    for request in all_requests\n)",
    "assert all(\n    s is not None and s.data_ptr() == slots.data_ptr() and s.shape == slots.shape\n    for s in states\n)",
    "assert all(1 <= h <= self_max_height and 1 <= w <= self_max_width for h, w in grid_hws_list)",
    "assert topk_ids.shape[0] == num_tokens and topk_weights.shape == topk_ids.shape, (\n    f'{topk_ids.shape} {topk_weights.shape}'\n)",
]


def _module(statement: str, depth: int) -> str:
    """``statement`` ``depth`` functions deep, each name it reads a parameter of the innermost
    (so the assert validates input: input-assert's finding, with its fix)."""
    import ast
    import builtins

    names = sorted(
        {
            n.id
            for n in ast.walk(ast.parse(statement))
            if isinstance(n, ast.Name) and not hasattr(builtins, n.id)
        }
    )
    head = "".join("    " * i + f"def f{i}():\n" for i in range(depth - 1))
    head += "    " * (depth - 1) + f"def f{depth - 1}({', '.join(names)}):\n"
    return head + textwrap.indent(statement, "    " * depth) + "\n"


def _formatted_fixed_and_still_formatted(project, line_length: int) -> None:
    """Format ``mod.py`` with ruff, apply its one input-assert fix, and ask ruff again."""
    path = project.root / "mod.py"
    formatted = subprocess.run(
        [RUFF, "format", "--config", f"line-length = {line_length}", "-"],
        input=path.read_text(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path.write_text(formatted)
    from checkers import api

    result = api.check(cwd=project.root, use_cache=False, jobs=1, fix=True, unsafe_fixes=True)
    assert result.fixed == 1, (result.findings, result.warnings)
    fixed = path.read_text()
    assert "raise " in fixed and "assert" not in fixed
    after = subprocess.run(
        [RUFF, "format", "--diff", str(path)], cwd=project.root, capture_output=True, text=True
    )
    assert after.returncode == 0, after.stdout


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the test extra installs it)")
@pytest.mark.parametrize("line_length", [88, 100])
@pytest.mark.parametrize("depth", [1, 3, 5])
@pytest.mark.parametrize("statement", ASSERTS, ids=range(len(ASSERTS)))
def test_a_formatted_file_stays_formatted_after_the_fix(
    make_project, statement, depth, line_length
):
    project = make_project(
        "no-input-asserts",
        files={"mod.py": _module(statement, depth)},
        before=f"[tool.ruff]\nline-length = {line_length}\n",
    )
    _formatted_fixed_and_still_formatted(project, line_length)


ASSERT_FALSE = [
    "assert False",
    "assert 0, 'a message long enough that the raise line passes the limit for sure, it does'",
    "assert False, (\n    f'the first part of a message about {kind} and '\n    f'its second part'\n)",
    "assert False, f'unsupported kind {kind}: expected one of the two kinds this function knows'",
]


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (the test extra installs it)")
@pytest.mark.parametrize("line_length", [88, 100])
@pytest.mark.parametrize("depth", [1, 3, 5])
@pytest.mark.parametrize("statement", ASSERT_FALSE, ids=range(len(ASSERT_FALSE)))
def test_an_assert_false_fix_leaves_a_formatted_file_formatted(
    make_project, statement, depth, line_length
):
    # The branch a parameter chooses: `assert False` there is input-assert's finding.
    head = "".join("    " * i + f"def f{i}():\n" for i in range(depth - 1))
    pad = "    " * (depth - 1)
    head += f"{pad}def f{depth - 1}(kind):\n{pad}    if kind == 1:\n{pad}        return 1\n"
    project = make_project(
        "no-input-asserts",
        files={"mod.py": head + textwrap.indent(statement, pad + "    ") + "\n"},
        before=f"[tool.ruff]\nline-length = {line_length}\n",
    )
    _formatted_fixed_and_still_formatted(project, line_length)


def test_the_message_of_a_split_condition_is_the_condition_on_one_line(make_project):
    project = make_project(
        "no-input-asserts",
        files={
            "mod.py": "def f(a, b):\n    assert isinstance(a, int) or isinstance(\n        b, str\n    )\n"
        },
    )
    from checkers import api

    [finding] = api.check(cwd=project.root, use_cache=False, jobs=1).findings
    assert '"expected isinstance(a, int) or isinstance(b, str)"' in finding.fix.edits[0].content


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("a and\n    b", "a and b"),
        ("f(\n    x, y\n)", "f(x, y)"),
        ("isinstance(a, B) or isinstance(\n    c, D\n)", "isinstance(a, B) or isinstance(c, D)"),
        ("x[\n    1\n]  ==  y", "x[1]  ==  y"),  # spacing inside a line is the source's
        ("f(\n    x,\n)", "f(x,)"),  # a magic trailing comma, kept: see the next test
        ("f(x,  # why\n  y)", None),  # a comment
        ("a and \\\n    b", None),  # a backslash continuation
        ("'''a\nb''' == x", "'''a\nb''' == x"),  # a string over lines: kept, never fits
        ("f(\n    x", None),  # not an expression
    ],
)
def test_flat_joins_what_the_formatter_joins(text, joined):
    assert flat(text) == joined


@pytest.mark.parametrize(
    ("text", "stays", "quoted"),
    [
        ("f(x, y,)", False, "f(x, y)"),  # a magic trailing comma keeps its call exploded
        ("f(x, [y,])", False, "f(x, [y])"),
        ("(x,)", True, "(x,)"),  # a tuple of one needs its comma: no magic
        ("x in (y,)", True, "x in (y,)"),
        ("f((x,))", True, "f((x,))"),
        ("f(x, y)", True, "f(x, y)"),
        ("f('''a\nb''')", False, "f('''a\nb''')"),  # a string over two lines
    ],
)
def test_a_magic_trailing_comma_never_fits_and_is_not_quoted(text, stays, quoted):
    assert fix_layout.fits(text, 88) is stays
    assert fix_layout.plain(text) == quoted


def test_a_group_that_fits_stays_on_its_line_and_one_that_does_not_opens():
    # "    if not (x > 0):" is 19 columns.
    assert group("if not (", "x > 0", "):", "    ", 19) == ["    if not (x > 0):"]
    assert group("if not (", "x > 0", "):", "    ", 18) == [
        "    if not (",
        "        x > 0",
        "    ):",
    ]


@pytest.mark.parametrize(
    ("text", "line_length", "lines"),
    [
        ("a and b", 10, ["    a", "    and b"]),  # "    a and b" is 11 columns
        ("a and b or c", 10, ["    a", "    and b", "    or c"]),  # every and/or at once
        ("key not in registry", 20, ["    key", "    not in registry"]),
        ("a is not None", 12, ["    a", "    is not None"]),
        ("f(x) == g(y)", 15, ["    f(x)", "    == g(y)"]),
        # No operator: the last bracket opens; items that do not fit go one a line, each
        # ending in a comma.
        ("f(x, y)", 9, ["    f(", "        x,", "        y,", "    )"]),
        ("fff(x, y)", 12, ["    fff(", "        x, y", "    )"]),
        ("not (a and b)", 15, ["    not (", "        a and b", "    )"]),
        ("not (a and b)", 14, ["    not (", "        a", "        and b", "    )"]),
        ("'a long string'", 5, ["    'a long string'"]),  # nothing to split: left whole
        ("'one' f'two {x}' 'three'", 12, ["    'one'", "    f'two {x}'", "    'three'"]),
        ("(a, b,)", 88, ["    (", "        a,", "        b,", "    )"]),  # kept exploded
        ("[aa, bb]", 10, ["    [", "        aa,", "        bb,", "    ]"]),  # a display: one a line
        ("fff(aa, bb)", 14, ["    fff(", "        aa, bb", "    )"]),  # arguments may share one
        # What is not modelled is refused, never guessed.
        ("a + b", 6, ["    a", "    + b"]),
        ("-a * b + -c", 10, ["    -a * b", "    + -c"]),  # unary minus is no split
        ("x for x in y", 6, ["    x", "    for x in y"]),
        ("x for x in y if x", 6, ["    x", "    for x in y", "    if x"]),
        ("f(x) or g(y) == h(z)", 12, ["    f(x)", "    or g(y)", "    == h(z)"]),
        ("a if b else c", 6, None),
        ("lambda: a or b", 6, None),
        ("x[a:b] or y", 6, None),
        ("(y := f(x)) or z", 19, ["    (y := f(x))", "    or z"]),  # inside its own parens
        ("a**b or c", 8, ["    a**b", "    or c"]),
        ("a**bb", 4, None),
    ],
)
def test_body_splits_at_the_loosest_operator(text, line_length, lines):
    assert body(text, "    ", line_length) == lines


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({}, 88),
        ({"pyproject.toml": "[tool.ruff]\nline-length = 100\n"}, 100),
        ({"pyproject.toml": "[tool.ruff.lint]\nselect = []\n"}, 88),  # ruff's, its default
        ({"pyproject.toml": "[tool.black]\nline-length = 79\n"}, 79),
        (
            {
                "ruff.toml": "line-length = 120\n",
                "pyproject.toml": "[tool.ruff]\nline-length = 100\n",
            },
            120,
        ),
        ({"pyproject.toml": "[project]\nname = 'x'\n", "../ruff.toml": "line-length = 99\n"}, 99),
    ],
)
def test_the_line_length_is_the_projects(tmp_path, files, expected):
    fix_layout._line_length_in.cache_clear()
    root = tmp_path / "outer" / "project"
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text)
    assert fix_layout.line_length(str(root / "pkg" / "mod.py")) == expected


def test_a_layout_that_would_not_parse_is_never_written(monkeypatch):
    # The last guard: a layout that does not parse falls back to the plain text (here a
    # stand-in layout that loses the closing bracket).
    monkeypatch.setattr(
        fix_layout,
        "group",
        lambda head, inner, tail, indent, length, trailer="", **kw: [
            indent + head,
            indent + "    " + inner,
        ],
    )
    laid = fix_layout.laid_out(
        "m.py", "    ", "if not (", "x\n    and y", "):", "raise E(", "m", ")"
    )
    assert laid == "if not (x\n    and y):\n        raise E(m)"
