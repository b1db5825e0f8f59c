"""`atom-contracts layout` / `models`: goldens through the command, errors without tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from atom.layout_command import layout_main, main, models_main
from atom.models.registry import model_names


def _json(capsys, argv):
    assert layout_main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_deepseek_r1_fp8_golden_through_the_command(capsys):
    report = _json(capsys, ["deepseek-r1", "--kv-dtype", "fp8"])
    # 62 rows (61 + 1 MTP) x 16 tokens x (512 + 64) x 1 B.
    assert report["entry_classes"]["page"]["entry_bytes"] == 62 * 16 * 576 == 571392
    assert report["rows"] == {"mla": 62}
    assert "state" not in report["entry_classes"]
    (pool,) = report["pools"]
    (kv,) = pool["fields"]
    assert (kv["name"], kv["rows"], kv["shape"], kv["dtype"], kv["bytes"]) == (
        "kv",
        62,
        [16, 1, 576],
        "float8_e4m3fn",
        571392,
    )


def test_qwen35_tp2_fp8_golden_through_the_command(capsys):
    report = _json(capsys, ["qwen3.5-27b", "--tp", "2", "--kv-dtype", "fp8"])
    page = 2 * (16 * 16 * 2 * 256) + 2 * (16 * 16 * 2 * 4)  # K, V + fp32 scales
    state = 48 * (3 * 5120 * 2 + 24 * 128 * 128 * 2)  # conv + ssm, bf16
    assert report["entry_classes"]["page"]["entry_bytes"] == page == 266240
    assert report["entry_classes"]["state"]["entry_bytes"] == state == 39223296
    assert report["rows"] == {"linear_state": 48, "h2d256": 16}
    fields = {f["name"]: f for p in report["pools"] for f in p["fields"]}
    assert fields["k"]["bytes"] == 131072 and fields["k_scale"]["bytes"] == 2048
    assert fields["recurrent"]["shape"] == [24, 128, 128]


def test_goldens_through_a_subprocess():
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    out = subprocess.run(
        [sys.executable, "-m", "atom.layout_command", "layout", "qwen3.5-27b", "--tp", "2",
         "--kv-dtype", "fp8", "--format", "json"],
        capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    report = json.loads(out.stdout)
    assert report["entry_classes"]["page"]["entry_bytes"] == 266240
    assert report["entry_classes"]["state"]["entry_bytes"] == 39223296


@pytest.mark.skipif(shutil.which("atom-contracts") is None, reason="console script not installed")
def test_goldens_through_the_console_script():
    out = subprocess.run(
        ["atom-contracts", "layout", "deepseek-r1", "--kv-dtype", "fp8", "--format", "json"],
        capture_output=True, text=True,
    )  # fmt: skip
    if out.returncode != 0 and "layout" not in out.stdout + out.stderr:
        pytest.skip(f"this install's atom-contracts does not dispatch layout: {out.stderr[-200:]}")
    assert out.returncode == 0, out.stderr
    # Nothing on stderr: torch's import-time warning about a missing numpy is no user's concern.
    assert out.stderr == ""
    report = json.loads(out.stdout)
    assert report["entry_classes"]["page"]["entry_bytes"] == 571392
    assert report["rows"] == {"mla": 62}


#: Models whose kernels page at a block larger than the default scheduler block (16): at the
#: default they are refused by both numbers (pinned below), so they lay out at their own block.
OWN_BLOCK = {"minimax-m3": 128, "deepseek-v4-flash-dspark": 256}


@pytest.mark.parametrize("name", model_names())
def test_every_model_lays_out_with_padding_under_one_percent_at_defaults(capsys, name):
    block = ["--block-size", str(OWN_BLOCK[name])] if name in OWN_BLOCK else []
    report = _json(capsys, [name, *block])
    for pool in report["pools"]:
        assert pool["padding_pct"] < 1.0, pool["name"]
        assert (
            sum(f["bytes"] for f in pool["fields"]) + pool["padding_bytes"] == pool["entry_bytes"]
        )
        for f in pool["fields"]:
            assert set(f) >= {"name", "rows", "shape", "dtype", "bytes"}
    for ec in report["entry_classes"].values():
        assert ec["padding_pct"] < 1.0


def test_a_model_paging_above_the_default_block_is_refused_at_the_default_by_both_numbers(capsys):
    assert layout_main(["minimax-m3"]) == 2
    err = capsys.readouterr().err
    assert "scheduler block size 16" in err and "128-token blocks" in err
    assert "Traceback" not in err


def test_text_table_shows_human_sizes_padding_percent_and_offsets(capsys):
    assert layout_main(["qwen3.5-27b", "--tp", "2", "--kv-dtype", "fp8"]) == 0
    text = capsys.readouterr().out
    assert "260.0 KiB" in text and "37.4 MiB" in text
    assert "0.00%" in text
    assert "rows: linear_state 48, h2d256 16" in text
    # v starts where k's 16 rows x 8192 B end.
    assert "131072" in text


def test_an_unseen_config_json_lays_out(tmp_path, capsys):
    """A synthetic HF config: 6 layers, GQA 12 heads over 4 KV heads, head_dim from hidden_size,
    wrapped as a multimodal model (text_config)."""
    text = {
        "model_type": "brand_new_lm",
        "num_hidden_layers": 6,
        "hidden_size": 1536,
        "num_attention_heads": 12,
        "num_key_value_heads": 4,
    }
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"model_type": "brand_new_vl", "text_config": text, "torch_dtype": "bfloat16"})
    )
    report = _json(capsys, ["--config", str(path), "--tp", "2"])
    # 6 rows x 16 tokens x 2 heads x 128 (1536 / 12) x 2 B, for K and for V.
    assert report["entry_classes"]["page"]["entry_bytes"] == 2 * 6 * 16 * 2 * 128 * 2
    assert report["rows"] == {"h2d128": 6}
    assert report["family"] == "mha"


def test_an_unpriceable_config_names_the_field_exit_2_no_traceback(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "x", "num_hidden_layers": 4, "kv_lora_rank": 512}))
    assert layout_main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'qk_rope_head_dim' is missing" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["llama-3.1-8b", "--tp", "3"], "does not divide across tp 3"),
        (["llama-3.1-8b", "--block-size", "8"], "scheduler block size 8"),
        (["no-such-model"], "no model 'no-such-model'"),
        (["llama-3.1-8"], "; did you mean `llama-3.1-8b`?"),
        (["my/config.json"], "; a config file is given as --config my/config.json"),
        (["minimax-m2", "--no-spec", "--draft", "eagle3-draft-llama"], "--no-spec"),
        (["minimax-m2", "--draft", "/nonexistent/config.json"], "does not exist"),
    ],
)
def test_refusals_exit_2_with_the_value_named(capsys, argv, needle):
    assert layout_main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and "Traceback" not in err
    if argv == ["no-such-model"]:
        assert "did you mean" not in err and "--config" not in err


def test_a_config_nested_too_deeply_is_a_refusal_not_an_internal_error(tmp_path, capsys):
    deep = tmp_path / "config.json"
    deep.write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for argv in (["--config", str(deep)], ["minimax-m2", "--draft", str(deep)]):
        assert layout_main(argv) == 2
        err = capsys.readouterr().err
        assert f"{deep}" in err and "nested too deeply" in err, err


def test_a_bad_command_line_is_argparse_exit_2_and_help_is_0(capsys):
    assert layout_main(["deepseek-r1", "--kv-dtype", "fp4"]) == 2
    assert layout_main(["--help"]) == 0
    assert "atom-contracts layout" in capsys.readouterr().out
    assert models_main(["--help"]) == 0


def test_mtp_default_and_no_spec(capsys):
    assert _json(capsys, ["minimax-m2"])["rows"] == {"h8d128": 65}
    assert _json(capsys, ["minimax-m2", "--no-spec"])["rows"] == {"h8d128": 62}


def test_draft_attaches_a_sibling_pool_blocked_at_the_targets_block(capsys):
    report = _json(capsys, ["minimax-m2", "--draft", "eagle3-draft-llama", "--block-size", "256"])
    assert report["draft"]["owns_pool"] is True
    assert report["rows"]["draft.h8d128"] == 1
    draft_pool = next(p for p in report["pools"] if p["builder"] == "draft")
    assert draft_pool["backend_block_size"] == report["backend_block_size"] == 256
    pages = [p["entry_bytes"] for p in report["pools"] if p["entry_class"] == "page"]
    assert report["entry_classes"]["page"]["entry_bytes"] == sum(pages)


def test_models_lists_the_registry(capsys):
    assert models_main(["--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == model_names()
    by_name = {r["name"]: r for r in rows}
    assert by_name["deepseek-r1"]["mtp_layers"] == 1
    assert by_name["eagle3-draft-llama"]["draft_head"] is True
    assert models_main([]) == 0
    assert "qwen3.5-27b" in capsys.readouterr().out


def test_module_main_dispatches_both_commands(capsys):
    assert main(["models", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["layout", "llama-3.1-8b", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"] == {"h8d128": 32}


def test_padding_is_reported_where_alignment_costs_bytes(capsys):
    """A one-row draft at tp 8 with fp8: each scale field is 1 row x 16 tokens x 1 head x 4 B =
    64 B, placed on 256 B, so its group walks 64 + 192 + 64 + 192 = 512 B for 128 of data."""
    report = _json(
        capsys, ["minimax-m2", "--draft", "eagle3-draft-llama", "--tp", "8", "--kv-dtype", "fp8"]
    )
    draft = next(p for p in report["pools"] if p["builder"] == "draft")
    assert draft["padding_bytes"] == 512 - 2 * 64
    assert draft["padding_pct"] == round(100 * 384 / draft["entry_bytes"], 4)
    assert draft["entry_bytes"] == 2 * (16 * 1 * 128) + 512


def test_a_pipeline_stage_prices_only_its_own_rows(capsys):
    first = _json(capsys, ["deepseek-r1", "--pp", "2", "--pp-rank", "0"])
    last = _json(capsys, ["deepseek-r1", "--pp", "2", "--pp-rank", "1"])
    # 61 layers over 2 stages: 31 + 30, and the MTP layer on the last.
    assert (first["rows"], last["rows"]) == ({"mla": 31}, {"mla": 31})
    assert (first["mtp_layers"], last["mtp_layers"]) == (0, 1)
    assert layout_main(["deepseek-r1", "--pp", "2", "--pp-rank", "2"]) == 2
    assert "pp_rank 2" in capsys.readouterr().err


def test_every_flag_reaches_its_engine_config_field_and_none_is_left_at_its_default():
    """Each engine flag, set away from its default, lands on the EngineConfig field it names:
    a flag parsed but dropped on the way (or sent to the wrong field) fails here."""
    import dataclasses

    from atom.engine_config import EngineConfig
    from atom.layout_command import _layout_parser, engine_config

    argv = ["deepseek-r1", "--tp", "2", "--pp", "3", "--pp-rank", "2", "--kv-dtype", "fp8_e5m2"]
    argv += ["--block-size", "64", "--no-spec", "--mha-backend", "triton"]
    argv += ["--num-speculative-tokens", "2", "--index-cache-dtype", "fp8"]
    got = engine_config(_layout_parser().parse_args(argv))
    assert dataclasses.asdict(got) == {
        **dataclasses.asdict(EngineConfig()),
        "tp_size": 2,
        "pp_size": 3,
        "pp_rank": 2,
        "kv_dtype": "fp8_e5m2",
        "scheduler_block_size": 64,
        "include_mtp": False,
        "mha_backend": "triton",
        "num_speculative_tokens": 2,
        "index_cache_dtype": "fp8",
    }
    # the defaults, and --help's text of them, are EngineConfig's own
    assert engine_config(_layout_parser().parse_args(["deepseek-r1"])) == EngineConfig()
    help_text = " ".join(_layout_parser().format_help().split("options:", 1)[1].split())
    for flag, value in (("--tp N", 1), ("--kv-dtype", "bf16"), ("--block-size N", 16)):
        assert f"default {value}" in help_text.split(flag, 1)[1].split("--", 1)[0], flag


# -- --manifest ---------------------------------------------------------------------------------


def test_manifest_json_lists_every_region_with_the_digest(capsys):
    assert layout_main(["llama-3.1-8b", "--kv-dtype", "fp8", "--manifest", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["header"]["kv_dtype"] == "fp8" and doc["header"]["scheduler_block_size"] == 16
    (page,) = doc["sets"]
    # 32 layers x (k, v, k_scale, v_scale): 128 regions; a block of K is 16 x 8 x 128 x 1 B.
    assert len(page["regions"]) == 128 and page["regions"][0] == {
        "role": "target.h8d128/k/0",
        "dtype": "float8_e4m3fn",
        "span": 16384,
        "stride": 16384,
        "units": 1,
        "offset": 0,
    }
    assert page["block_bytes"] == 64 * 16384 + 64 * 512
    assert doc["digest"].startswith("sha256:")


def test_manifest_text_matches_the_json_digest(capsys):
    assert layout_main(["qwen3.5-27b", "--tp", "2", "--manifest"]) == 0
    text = capsys.readouterr().out
    doc = _json(capsys, ["qwen3.5-27b", "--tp", "2", "--manifest"])
    assert text.splitlines()[0] == f"wire manifest v1  {doc['digest']}"
    assert "state regions: 1, one unit a request slot" in text


def test_manifest_of_a_refused_transfer_is_an_error_naming_why(capsys):
    argv = ["deepseek-v4-flash-dspark", "--block-size", "256", "--manifest"]
    assert layout_main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot describe this configuration's transfer" in err
    assert "index_cache_dtype 'fp4' is refused" in err and "Traceback" not in err
    assert layout_main([*argv, "--index-cache-dtype", "fp8"]) == 0


# -- --block-sizes ------------------------------------------------------------------------------


def test_block_sizes_of_minimax_m3_and_its_eagle3_draft(capsys):
    argv = ["minimax-m3", "--draft", "minimax-m3-eagle3", "--block-sizes"]
    doc = _json(capsys, argv)
    # The target pages at its sparse_block_size 128: every power of two from 128 to 1024.
    assert doc["accepted"] == [128, 256, 512, 1024]
    assert doc["tried"] == [2**i for i in range(11)]
    assert {r["side"] for r in doc["refused"]} == {"target"}
    assert "128 tokens" in doc["rules"]["target minimax-m3"]
    assert "blocked at the target builder's block" in doc["rules"]["draft minimax-m3-eagle3"]
    assert layout_main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith(
        "minimax-m3 + minimax-m3-eagle3: scheduler block sizes accepted by both: 128, 256, 512, 1024"
    )


def test_a_pair_accepting_none_says_so_with_each_sides_rule_and_exits_1(capsys):
    # An MLA target pages at 1 token, so it takes every block; an MHA draft blocked at that
    # 1-token block cannot carve its SHUFFLE V at any of them.
    argv = ["deepseek-r1", "--draft", "eagle3-draft-llama", "--block-sizes"]
    assert layout_main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("deepseek-r1 + eagle3-draft-llama: none of the scheduler block sizes")
    assert "target deepseek-r1: pages at 1 token" in out
    assert "refused by the draft: SHUFFLE V needs block_size divisible by x=8" in out


def test_manifest_and_block_sizes_json_are_indented_by_two_spaces(capsys):
    # What a reader (and a diff of two ends' manifests) sees: one field a line, two spaces a
    # level, as the layout report's JSON.
    for flag in ("--manifest", "--block-sizes"):
        assert layout_main(["llama-3.1-8b", flag, "--format", "json"]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == "{" and lines[1].startswith('  "') and lines[-1] == "}", flag


def test_a_budget_with_manifest_or_block_sizes_is_refused_by_name(capsys):
    for flag in ("--manifest", "--block-sizes"):
        argv = [
            "llama-3.1-8b",
            flag,
            "--budget",
            "1GiB",
            "--max-model-len",
            "8",
            "--max-num-seqs",
            "1",
        ]
        assert layout_main(argv) == 2
        assert f"{flag} prints instead of the layout report" in capsys.readouterr().err
