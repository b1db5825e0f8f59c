"""`layout MODEL --budget SIZE --max-model-len N --max-num-seqs S`: the plan, and its refusals."""

from __future__ import annotations

import json

import pytest

from atom.capacity_report import parse_bytes
from atom.layout_command import layout_main


@pytest.mark.parametrize(
    ("text", "nbytes"),
    [
        ("60GiB", 60 * 2**30),
        ("60 gib", 60 * 2**30),
        ("80GB", 80 * 10**9),
        ("1.5TiB", 3 * 2**39),
        ("4096", 4096),
        ("1.5B", 1),
    ],
)
def test_budget_sizes(text, nbytes):
    assert parse_bytes(text) == nbytes


@pytest.mark.parametrize("text", ["60 GiBs", "-1GiB", "GiB", "0.1B", ""])
def test_a_budget_that_is_not_a_size_is_refused_by_value(text):
    with pytest.raises(ValueError, match="budget"):
        parse_bytes(text)


def _run(capsys, argv):
    rc = layout_main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--budget", "1GiB"], "give --max-model-len and --max-num-seqs"),
        (["--budget", "1GiB", "--max-model-len", "8"], "give --max-num-seqs"),
        (["--max-num-seqs", "4"], "--max-num-seqs plan a budget; give --budget SIZE too"),
        (["--step-tokens", "4"], "give --budget SIZE too"),
        (
            ["--budget", "lots", "--max-model-len", "8", "--max-num-seqs", "1"],
            "'lots' is not a size",
        ),
        (
            ["--budget", "1GiB", "--max-model-len", "0", "--max-num-seqs", "1"],
            "max_model_len must be at least 1",
        ),
    ],
)
def test_flags_that_do_not_make_a_plan_are_refused_by_name(capsys, argv, said):
    rc, out, err = _run(capsys, ["llama-3.1-8b", *argv])
    assert rc == 2 and out == ""
    assert said in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("model", "budget", "what"),
    [
        ("qwen3.5-27b", "1MiB", "the STATE floor does not fit"),
        ("gemma-3-27b", "1GiB", "the window floor does not fit"),
        ("llama-3.1-8b", "1GiB", "one max_model_len request does not fit"),
    ],
)
def test_refusals_reach_the_user_by_name(capsys, model, budget, what):
    argv = [model, "--budget", budget, "--max-model-len", "131072", "--max-num-seqs", "16"]
    rc, out, err = _run(capsys, argv)
    assert rc == 2 and out == ""
    assert err.startswith("atom-contracts layout: error: cannot plan this budget: " + what)


def test_a_count_past_32_bit_offsets_is_refused_by_the_pool(capsys):
    argv = ["qwen3.5-27b", "--budget", "60GiB", "--max-model-len", "8192", "--max-num-seqs", "64"]
    rc, _, err = _run(capsys, argv)
    assert rc == 2
    assert "state field 'conv' at 64 request slots" in err and "at most 55 request slots" in err


def test_shared_pages_and_step_tokens_reach_the_plan(capsys):
    argv = ["gpt-oss-120b", "--budget", "8GiB", "--max-model-len", "4096", "--max-num-seqs", "8",
            "--step-tokens", "1", "--window-pages", "shared", "--format", "json"]  # fmt: skip
    rc, out, _ = _run(capsys, argv)
    assert rc == 0
    cap = json.loads(out)["capacity"]
    assert (cap["step_tokens"], cap["window_pages"]) == (1, "shared")
    # 18 + 18 layers: one group each, no padding; a one-token step holds ceil(127 / 16) + 1 = 9.
    assert [(g["reach"], g["groups"], g["padding_bytes"]) for g in cap["shared"]["groups"]] == [
        ("full", 1, 0),
        ("sliding128", 1, 0),
    ]
    assert {c["name"]: c["per_request"] for c in cap["classes"]} == {"full": 256, "sliding128": 9}


def test_help_answers_the_capacity_flags(capsys):
    assert layout_main(["--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--budget SIZE", "--max-model-len N", "--max-num-seqs S", "--step-tokens T",
                 "--window-pages {reserved,shared}"):  # fmt: skip
        assert flag in text


def test_without_a_budget_the_report_has_no_capacity(capsys):
    rc, out, _ = _run(capsys, ["llama-3.1-8b", "--format", "json"])
    assert rc == 0 and "capacity" not in json.loads(out)
