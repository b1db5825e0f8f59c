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
        ("1b", 1),
        ("3KiB", 3 * 2**10),
        ("5MiB", 5 * 2**20),
        ("1TiB", 2**40),
        ("1KB", 10**3),
        ("7MB", 7 * 10**6),
        ("2TB", 2 * 10**12),
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


def _text(capsys, argv):
    rc, out, err = _run(capsys, argv)
    assert rc == 0, err
    return out[out.index("capacity  budget") :]


def test_the_text_of_a_shared_plan(capsys):
    # MiMo-V2-Flash: the 9 full layers' 40960 B page divides the window layers' 81920 B, so the
    # full group takes a 32-token block; 39 window layers in 5 groups of 9, 6 slots empty
    # (6 x 81920 = 491520 B a block, 13.33% of 5 x 737280). 4 GiB // 737280 = 5825 pages.
    argv = ["mimo-v2-flash", "--budget", "4GiB", "--max-model-len", "4096", "--max-num-seqs", "8",
            "--window-pages", "shared"]  # fmt: skip
    assert _text(capsys, argv) == (
        "capacity  budget 4.0 GiB (4294967296 B)  max_model_len 4096  max_num_seqs 8  step 16 "
        "tokens  windows shared\n"
        "reach: 9 full, 39 sliding128 rows (read from layer_types, sliding_window_size)\n"
        "\n"
        "class                  role     rows      entry   entries          per request  requests"
        "     tokens  padding\n"
        "full                   page        9  720.0 KiB      1024    128 x block of 32        32"
        "     173600    0.00%\n"
        "sliding128             window     39    3.5 MiB        80     10 x block of 16        32"
        "       1024   13.33%\n"
        "\n"
        "one pool of 5825 pages of 720.0 KiB (737280 B), vLLM's grouping:\n"
        "  full                 9 layers in 1 groups, 0 empty; block 32 tokens (x2); 0 B padding"
        " a block\n"
        "  sliding128           39 layers in 5 groups, 6 empty; no layer padding; 491520 B "
        "padding a block\n"
        "\n"
        "fits: 8 requests of 4096 tokens at once (bound by max_num_seqs); 173600 tokens in "
        "full-reach rows; 311296 B of the budget unused\n"
    )


def test_the_text_of_a_plan_with_state(capsys):
    # Qwen3.5-27B at tp 2: 4 slots of 39223296 B of GDN state, then 16 full rows of 32768 B a
    # block: (8 GiB - 4 x 39223296) // 524288 = 16084 blocks, 16084 // 256 = 62 requests.
    argv = ["qwen3.5-27b", "--tp", "2", "--budget", "8GiB", "--max-model-len", "4096",
            "--max-num-seqs", "4"]  # fmt: skip
    text = _text(capsys, argv)
    assert "reach: 16 full rows (read from full_attention_interval)\n" in text
    assert (
        "target.linear_state    state       0   37.4 MiB         4             1 x slot         4"
        " any length    0.00%\n"
    ) in text
    assert (
        "full                   page       16  512.0 KiB     16084    256 x block of 16        62"
        "     257344    0.00%\n"
    ) in text
    assert "vLLM" not in text


def test_the_text_of_a_padded_layer_page_and_of_a_note(capsys, tmp_path):
    padded = tmp_path / "padded.json"
    padded.write_text(json.dumps({
        "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 64, "swa_head_dim": 96, "sliding_window": 64, "torch_dtype": "bfloat16",
        "layer_types": ["sliding_attention", "full_attention"] * 2,
    }))  # fmt: skip
    # Full layers hold 16 x 2 x (64 + 64) x 2 = 8192 B a block, window layers 12288 B: 12288
    # is no multiple of 8192, so the full layers' page is padded by 4096 B, 2 x 4096 = 8192 B a
    # block of 2 x 12288 (33.33%).
    argv = ["--config", str(padded), "--budget", "1MiB", "--max-model-len", "64",
            "--max-num-seqs", "2", "--window-pages", "shared"]  # fmt: skip
    text = _text(capsys, argv)
    assert (
        "full                 2 layers in 1 groups, 0 empty; layer page padded by 4096 B; 8192"
        in text
    )
    assert "  33.33%\n" in text
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"num_hidden_layers": 2, "num_attention_heads": 4,
                                "num_key_value_heads": 2, "head_dim": 64,
                                "sliding_window": 4096}))  # fmt: skip
    text = _text(capsys, ["--config", str(bare), "--budget", "1MiB", "--max-model-len", "64",
                          "--max-num-seqs", "2"])  # fmt: skip
    assert text.splitlines()[1:3] == [
        "reach: 2 full rows",
        "  note: sliding_window = 4096 is stated without which layers use it (no layer_types, "
        "hybrid_layer_pattern, sliding_window_pattern, no_rope_layers or no_rope_layer_interval)"
        ": planned full",
    ]


def test_the_json_of_a_state_class_and_its_notes(capsys, tmp_path):
    rc, out, _ = _run(capsys, ["qwen3.5-27b", "--tp", "2", "--budget", "8GiB", "--max-model-len",
                               "4096", "--max-num-seqs", "4", "--format", "json"])  # fmt: skip
    assert rc == 0
    cap = json.loads(out)["capacity"]
    state = cap["classes"][0]
    assert (state["role"], state["reach"], state["tokens"], state["parts"]) == (
        "state",
        None,
        None,
        [],
    )
    full = cap["classes"][1]
    assert (full["reach"], full["padding_pct"], full["parts"]) == (
        "full",
        0.0,
        [{"name": "target.h2d256", "rows": 16, "entry_bytes": 16 * 32768}],
    )
    assert cap["reach"] == {
        "rows": {"full": 16},
        "sources": ["full_attention_interval"],
        "notes": [],
    }
    assert "shared" not in cap
    rc, out, _ = _run(capsys, ["gemma-3-27b", "--budget", "60GiB", "--max-model-len", "131072",
                               "--max-num-seqs", "4", "--window-pages", "shared",
                               "--format", "json"])  # fmt: skip
    assert rc == 0
    window = json.loads(out)["capacity"]["classes"][1]
    # 52 window layers in 6 groups of 10, 8 empty: 8 x 131072 of 6 x 1310720 B is padding.
    assert window["padding_pct"] == round(100 * 8 * 131072 / (6 * 1310720), 4) == 13.3333


def test_a_model_of_windows_only_prints_no_full_tokens(capsys, tmp_path):
    windows = tmp_path / "windows.json"
    windows.write_text(json.dumps({"num_hidden_layers": 2, "num_attention_heads": 4,
                                   "num_key_value_heads": 2, "head_dim": 64, "sliding_window": 32,
                                   "layer_types": ["sliding_attention"] * 2}))  # fmt: skip
    text = _text(capsys, ["--config", str(windows), "--budget", "1MiB", "--max-model-len", "4096",
                          "--max-num-seqs", "2"])  # fmt: skip
    # A window of 32 at a one-block step: ceil((32 + 14) / 16) + 1 = 4 blocks a slot, 2 slots of
    # 2 rows x 8192 B: 131072 B of the 1048576 bought, the rest unused.
    assert text.splitlines()[-1] == (
        "fits: 2 requests of 4096 tokens at once (bound by max_num_seqs); 917504 B of the budget "
        "unused"
    )


def test_one_class_under_shared_pages_reports_no_grouping(capsys):
    rc, out, _ = _run(capsys, ["llama-3.1-8b", "--budget", "8GiB", "--max-model-len", "4096",
                               "--max-num-seqs", "2", "--window-pages", "shared",
                               "--format", "json"])  # fmt: skip
    assert rc == 0
    cap = json.loads(out)["capacity"]
    assert cap["window_pages"] == "shared" and "shared" not in cap
