"""docs/contracts.md is generated from the rule classes and must match them."""

from __future__ import annotations

from pathlib import Path

from checkers.rule_docs import all_entries, render_markdown, render_text

DOC = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"


def test_the_committed_reference_is_up_to_date():
    expected = render_markdown(all_entries())
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/contracts.md is stale: run `atom-contracts rules --output-format markdown > docs/contracts.md`"
    )


def test_every_rule_renders_every_section_and_its_examples():
    for entry in all_entries():
        text = render_text(entry)
        for section in (
            "What it does",
            "Why is this bad?",
            "Example",
            "Use instead",
            "Fix safety",
            "Options",
        ):
            assert f"\n{section}\n" in text, (entry.rule.code, section)
        assert entry.invalid is not None and entry.valid is not None, entry.rule.code
        first_invalid_line = entry.invalid.source.strip().splitlines()[0]
        assert first_invalid_line in text


def test_codes_are_unique_and_flake8_shaped():
    import re

    codes = [e.rule.code for e in all_entries()]
    assert len(codes) == len(set(codes))
    assert all(re.fullmatch(r"[A-Z]{1,3}[0-9]{3}", c) for c in codes), codes


def test_the_adoption_example_is_refused_and_then_accepted_as_the_guide_says(tmp_path):
    """docs/adoption.md's declaration, with its deliberate mistake, behaves as printed there."""
    from checkers.api import load_config
    from contracts.fields import ConfigError

    guide = (DOC.parent / "adoption.md").read_text(encoding="utf-8")
    declaration = guide.split("```toml\n", 1)[1].split("```", 1)[0]
    printed = guide.split("atom-contracts: error: ", 1)[1].splitlines()[0]
    for package in ("vllm", "vllm/v1", "vllm/v1/kv_cache"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text(declaration)
    try:
        load_config(tmp_path, use_cache=False)
    except ConfigError as exc:
        assert str(exc) == printed
    else:
        raise AssertionError("the guide's mistake was accepted")
    fixed = "\n".join(line for line in declaration.splitlines() if "exclude-from" not in line)
    (tmp_path / "pyproject.toml").write_text(fixed)
    kinds = {c.KIND for c in load_config(tmp_path, use_cache=False).contracts}
    assert len(kinds) == 7


def test_the_adoption_guide_s_tally_counts_the_tests_chains_assume(tmp_path):
    """docs/adoption.md's command, run as the guide prints it, lists under AC821's count each
    test the reachable-calls chains print, with how many chains assume it."""
    import shlex
    import subprocess
    import sys

    from ..scaffold import pyproject, write_tree

    guide = (DOC.parent / "adoption.md").read_text(encoding="utf-8")
    recipe = guide.split("tally the tests they assume", 1)[1].split("```sh\n", 1)[1]
    command = shlex.split(recipe.split("\n", 1)[0])
    assert command[:2] == ["atom-contracts", "check"]
    table = {
        "id": "no-sync",
        "kind": "reachable-calls",
        "entries": ["*.capture_*"],
        "forbidden": {"*.item": "a host sync", "*.tolist": "a host sync"},
    }
    write_tree(
        tmp_path,
        {
            "pyproject.toml": pyproject(table),
            "pkg/__init__.py": "",
            "pkg/step.py": (
                "def step(x, meta):\n"
                "    if meta.num_prefills > 0:\n"
                "        x.tolist()\n"
                "        if meta.mode == 'eager':\n"
                "            x.item()\n"
                "\n"
                "\n"
                "def capture_a(x, meta):\n"
                "    return step(x, meta)\n"
                "\n"
                "\n"
                "def capture_b(x, meta):\n"
                "    return step(x, meta)\n"
            ),
        },
    )
    tally = subprocess.run(
        [sys.executable, "-m", "checkers", *command[1:], "--no-cache"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    # Two entries, each reaching both calls: 4 chains under the order, 2 under the mode too.
    assert [line.split("\t") for line in tally.splitlines()[:3]] == [
        ["4", "AC821", "reachable-forbidden-call"],
        [" ", "", "4 where meta.num_prefills > 0"],
        [" ", "", "2 where meta.mode == 'eager'"],
    ]


def test_every_entry_condition_the_adoption_guide_shows_is_accepted():
    """A condition the guide tells a maintainer to write is one the contract takes: an
    example that drifts from the grammar fails here, not in an adopter's first run."""
    import re
    import tomllib

    from checkers.rules.reachable_calls import ReachableCalls

    guide = (DOC.parent / "adoption.md").read_text(encoding="utf-8")
    shown = [
        tomllib.loads(line)["entry-conditions"]
        for line in re.findall(r"^entry-conditions = \[.*\]", guide, flags=re.M)
    ]
    assert any(" when " in c for conditions in shown for c in conditions)
    table = {"id": "t", "entries": ["*.capture_*"], "forbidden": {"*.item": "a host sync"}}
    for conditions in shown:
        ReachableCalls.from_table({**table, "entry-conditions": conditions}, "t")
