"""`accepted_block_sizes`: which scheduler blocks a target and its draft accept together.

Every shipped model and every shipped target + draft pair must accept at least one: a pair that
accepts none cannot start at any ``--block-size`` (MiniMax-M3 + EAGLE3 once could not).
"""

from __future__ import annotations

import pytest

from atom.engine_config import EngineConfig
from atom.models.registry import load_model_config
from atom.runner.block_sizes import CANDIDATES, accepted_block_sizes
from contracts.runtime.strategies import DRAFT_PAIRS, case_names


def _configs(name):
    target, draft = DRAFT_PAIRS.get(name, (name, None))
    return load_model_config(target), (load_model_config(draft) if draft else None)


@pytest.mark.parametrize("name", case_names())
def test_every_shipped_model_and_pair_accepts_a_block_size(name):
    answer = accepted_block_sizes(*_configs(name))
    assert answer.accepted, answer.format_text()
    # Every candidate is answered once: accepted or refused, with a side and a reason.
    assert sorted([*answer.accepted, *(r.block_size for r in answer.refused)]) == list(CANDIDATES)
    assert all(r.reason and r.side in ("target", "draft") for r in answer.refused)


@pytest.mark.parametrize(
    ("name", "accepted"),
    [
        # MLA pages at 1 token: every block.
        ("deepseek-r1", CANDIDATES),
        # MHA pages at 16 tokens below 256: 16 and up.
        ("llama-3.1-8b", (16, 32, 64, 128, 256, 512, 1024)),
        # V4 pages at 256 tokens.
        ("deepseek-v4-flash-dspark", (256, 512, 1024)),
        # MiniMax-M3 pages at its sparse_block_size, 128; its EAGLE3 head is blocked at that.
        ("minimax-m3+minimax-m3-eagle3", (128, 256, 512, 1024)),
    ],
)
def test_the_accepted_sizes_follow_each_backends_block(name, accepted):
    assert accepted_block_sizes(*_configs(name)).accepted == accepted


def test_a_draft_refusal_is_attributed_to_the_draft():
    answer = accepted_block_sizes(
        load_model_config("deepseek-r1"), load_model_config("eagle3-draft-llama")
    )
    assert answer.accepted == ()
    assert {r.side for r in answer.refused} == {"draft"}
    assert "draft eagle3-draft-llama" in answer.rules
    assert answer.to_dict()["refused"][0]["side"] == "draft"


def test_other_engine_settings_are_kept_while_the_block_varies():
    # tp 3 is kept at every block: MiMo's 4 KV heads do not split three ways at any of them.
    answer = accepted_block_sizes(
        load_model_config("mimo-v2-flash"), engine=EngineConfig(tp_size=3)
    )
    assert answer.accepted == () and {r.side for r in answer.refused} == {"target"}
    assert {r.reason for r in answer.refused} == {
        "mimo-v2-flash: field 'num_key_value_heads' = 4 does not divide across tp 3"
    }


def test_an_answer_and_its_refusals_are_immutable():
    import dataclasses

    answer = accepted_block_sizes(
        load_model_config("deepseek-r1"), load_model_config("eagle3-draft-llama")
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.refused[0].side = "target"
    with pytest.raises(dataclasses.FrozenInstanceError):
        answer.accepted = (16,)
    assert hash(answer.refused[0]) == hash(dataclasses.replace(answer.refused[0]))


def test_the_text_names_a_model_alone_without_a_draft():
    text = accepted_block_sizes(load_model_config("llama-3.1-8b")).format_text()
    assert text.startswith("llama-3.1-8b: scheduler block sizes accepted by it: ")
    assert " + " not in text.splitlines()[0]
