"""The declaration is refused by name: every bad key says table, key and value."""

from __future__ import annotations

import pytest

from checkers.api import load_config
from checkers.rules import kind_class
from contracts.config import find_pyproject, parse_table
from contracts.fields import ConfigError

KW = {
    "id": "allocate-takes-blocks",
    "kind": "keyword-only",
    "functions": ["allocate_kv_cache_tensors"],
    "parameters": ["blocks"],
    "paths": ["atom/**"],
}


def parse(table, tmp_path):
    return parse_table(table, root=tmp_path, registry=kind_class)


def test_a_valid_declaration_builds_its_contracts(tmp_path):
    config = parse(
        {
            "src": ["."],
            "exclude": ["build/**"],
            "per-file-ignores": {"tests/**": ["AC301"]},
            "select": ["AC"],
            "ignore": ["AC9"],
            "contracts": [KW],
        },
        tmp_path,
    )
    (contract,) = config.contracts
    assert contract.id == "allocate-takes-blocks"
    assert contract.parameters == ("blocks",)
    assert contract.applies_to("atom/runner/model_runner.py")
    assert not contract.applies_to("tests/test_x.py")
    assert config.ignored_codes("tests/a/test_b.py") == ("AC301",)
    assert config.ignored_codes("atom/x.py") == ()
    assert config.exclude_spec().match_file("build/lib/x.py")


@pytest.mark.parametrize(
    ("table", "names"),
    [
        ({"srcs": ["."]}, ["[tool.atom-contracts]", "srcs"]),
        ({"src": "."}, ["`src`", "'.'"]),
        ({"src": ["nowhere"]}, ["`src`", "'nowhere'"]),
        ({"exclude": ["build/[**"]}, ["`exclude`", "build/[**"]),
        ({"select": ["AC3x"]}, ["`select`", "'AC3x'"]),
        ({"ignore": "AC3"}, ["`ignore`", "'AC3'"]),
        (
            {"per-file-ignores": {"tests/**": ["ac301"]}},
            ["per-file-ignores", "tests/**", "'ac301'"],
        ),
        ({"per-file-ignores": ["tests/**"]}, ["per-file-ignores", "['tests/**']"]),
        ({"contracts": {"id": "x"}}, ["[[tool.atom-contracts.contracts]]", "{'id': 'x'}"]),
        (
            {"contracts": [{**KW, "kind": "keyword-onyl"}]},
            ["#1", "allocate-takes-blocks", "`kind`", "keyword-onyl"],
        ),
        ({"contracts": [{k: v for k, v in KW.items() if k != "kind"}]}, ["#1", "`kind`", "None"]),
        (
            {"contracts": [{k: v for k, v in KW.items() if k != "parameters"}]},
            ["#1", "`parameters`", "missing"],
        ),
        ({"contracts": [{**KW, "parameters": "blocks"}]}, ["#1", "`parameters`", "'blocks'"]),
        ({"contracts": [{**KW, "allow-default": "no"}]}, ["#1", "`allow-default`", "'no'"]),
        ({"contracts": [{**KW, "paths": ["atom/[x"]}]}, ["#1", "`paths`", "atom/[x"]),
        ({"contracts": [{**KW, "functionz": ["f"]}]}, ["#1", "`functionz`", "keyword-only"]),
        ({"contracts": [{**KW, "id": ""}]}, ["#1", "`id`", "''"]),
        ({"contracts": [KW, {**KW, "parameters": ["n"]}]}, ["#2", "allocate-takes-blocks", "#1"]),
    ],
    ids=lambda v: None,
)
def test_each_bad_key_is_named(table, names, tmp_path):
    with pytest.raises(ConfigError) as info:
        parse(table, tmp_path)
    message = str(info.value)
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"


def test_found_upward_past_a_pyproject_without_the_table(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.atom-contracts]\nexclude = ["build/**"]\n')
    nested = tmp_path / "pkg" / "sub"
    nested.mkdir(parents=True)
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    path, table = find_pyproject(nested)
    assert path == tmp_path / "pyproject.toml"
    assert table == {"exclude": ["build/**"]}
    config = load_config(nested)
    assert config.root == tmp_path.resolve()
    assert config.exclude == ("build/**",)


def test_no_declaration_means_no_contracts_rooted_where_the_check_starts(tmp_path):
    config = load_config(tmp_path)
    assert config.contracts == ()
    assert config.root == tmp_path.resolve()


def test_the_parsed_table_is_memoised_by_content(tmp_path):
    (tmp_path / ".atom-contracts-cache").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.atom-contracts]\nexclude = ["a/**"]\n')
    assert load_config(tmp_path).exclude == ("a/**",)
    assert (tmp_path / ".atom-contracts-cache" / "pyproject.marshal").exists()
    assert load_config(tmp_path).exclude == ("a/**",)
    # Same size, same second: only the content says the file changed.
    (tmp_path / "pyproject.toml").write_text('[tool.atom-contracts]\nexclude = ["b/**"]\n')
    assert load_config(tmp_path).exclude == ("b/**",)
    assert load_config(tmp_path, use_cache=False).exclude == ("b/**",)


def test_invalid_toml_names_the_file(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.atom-contracts\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not valid TOML"):
        load_config(tmp_path)


def test_a_byte_order_mark_is_named_not_reported_as_an_invalid_statement(tmp_path):
    # An editor that saves UTF-8 "with BOM": tomllib (and pip, which reads pyproject.toml
    # through it) stops at line 1 column 1 with "Invalid statement", which names nothing.
    table = '[[tool.atom-contracts.contracts]]\r\nid = "x"\r\nkind = "input-assert"\r\n'
    (tmp_path / "pyproject.toml").write_bytes(b"\xef\xbb\xbf" + table.encode())
    with pytest.raises(ConfigError, match=r"pyproject\.toml: starts with a UTF-8 byte-order mark"):
        load_config(tmp_path)


def test_fingerprint_follows_the_parameters(tmp_path):
    one = parse({"contracts": [KW]}, tmp_path)
    same = parse({"contracts": [dict(reversed(KW.items()))]}, tmp_path)
    other = parse({"contracts": [{**KW, "parameters": ["blocks", "n"]}]}, tmp_path)
    assert one.fingerprint == same.fingerprint
    assert one.fingerprint != other.fingerprint


def test_this_repository_declares_every_kind(tmp_path):
    from pathlib import Path

    from checkers.rules import KIND_PATHS

    config = load_config(Path(__file__).resolve().parents[2])
    assert {c.KIND for c in config.contracts} == set(KIND_PATHS) - _missing_kinds()


def _missing_kinds() -> set[str]:
    from checkers.rules import KIND_PATHS

    out = set()
    for kind in KIND_PATHS:
        try:
            kind_class(kind)
        except ModuleNotFoundError:
            out.add(kind)
    return out


DEEP = 100_000  # tomllib recurses per level: far past Python's recursion limit


@pytest.mark.parametrize(
    "value",
    ["[" * DEEP + "]" * DEEP, "{a = " * DEEP + "1" + "}" * DEEP],
    ids=["array", "inline-table"],
)
def test_a_value_nested_too_deeply_names_the_file(tmp_path, value):
    # Another tool's table, even: the file as a whole is what tomllib cannot read.
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.other]\nx = {value}\n\n[tool.atom-contracts]\nsrc = ["."]\n'
    )
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not readable TOML: .*nested too deep"):
        load_config(tmp_path)
    with pytest.raises(ConfigError, match="nested too deep"):
        load_config(tmp_path, config_file=tmp_path / "pyproject.toml")


def test_an_undeclaring_pyproject_nested_too_deeply_is_passed_over_for_near_misses(tmp_path):
    # No "atom-contracts" in its text: discovery skips it unparsed, and the
    # no-declaration error's near-miss search parses it; unreadable, it is passed over.
    from contracts.config import missing_declaration

    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = " + "[" * DEEP + "]" * DEEP)
    (tmp_path / "sub").mkdir()
    assert load_config(tmp_path / "sub").contracts == ()
    error = missing_declaration(tmp_path / "sub")
    assert "no [tool.atom-contracts] table" in str(error) and "near" not in str(error)
