"""Each output format, and rdjson / SARIF validated against their published schemas.

The schemas are read from ``<repo>/../shared/schemas`` (never copied in);
without them the schema tests skip, visibly, naming the path they looked for.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from checkers.reporters import FORMATS, render, statistics
from contracts.finding import Edit, Finding, Fix

SCHEMAS = Path(__file__).resolve().parents[2] / ".." / "shared" / "schemas"

FIX = Fix(
    message="import triton directly",
    edits=(Edit(1, 1, 1, 41, "import triton"),),
    applicability="unsafe",
)
FINDINGS = [
    Finding(
        "AC501",
        "plain-triton-imports",
        "banned-import",
        "atom/k.py",
        1,
        1,
        1,
        41,
        "banned: `vllm.triton_utils`",
        FIX,
    ),
    Finding(
        "AC301",
        "no-input-asserts",
        "input-assert",
        "atom/ü.py",
        2,
        12,
        2,
        20,
        "assert validates `config`, 50%: x,y",
    ),
]
SOURCES = {
    "atom/k.py": "from vllm.triton_utils import triton, tl\n",
    "atom/ü.py": "x = 1\ns = 'éé'; assert config\n",
}


@pytest.fixture
def root(tmp_path):
    for rel, text in SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return tmp_path


def _validator(schema_file: Path):
    jsonschema = pytest.importorskip("jsonschema")
    referencing = pytest.importorskip("referencing")
    if not schema_file.exists():
        pytest.skip(
            f"schema not found at {schema_file.resolve()} (shared/ is laid beside the clone in CI)"
        )
    folder = schema_file.parent
    # Resources keyed by file name, so a $ref to a sibling file resolves from the folder.
    resources = []
    for path in folder.glob("*.json"):
        contents = json.loads(path.read_text())
        spec = referencing.jsonschema.specification_with(
            contents.get("$schema", "http://json-schema.org/draft-07/schema#"),
            default=referencing.jsonschema.DRAFT7,
        )
        resources.append((path.name, referencing.Resource(contents=contents, specification=spec)))
    registry = referencing.Registry().with_resources(resources)
    schema = json.loads(schema_file.read_text())
    cls = jsonschema.validators.validator_for(schema)
    # Every draft's formats, not the schema's draft's alone: SARIF's schema is draft-04, whose
    # checker knows no "uri-reference", so its URIs would go unchecked. The test extra installs
    # rfc3986-validator, which jsonschema checks "uri" and "uri-reference" with.
    formats = jsonschema.FormatChecker()
    assert {"uri", "uri-reference"} <= set(formats.checkers), "rfc3986-validator is missing"
    return cls(schema, registry=registry, format_checker=formats)


def test_rdjson_validates_and_counts_columns_in_utf8_bytes(root):
    validator = _validator(SCHEMAS / "reviewdog" / "DiagnosticResult.json")
    doc = json.loads(render(FINDINGS, "rdjson", root=root))
    validator.validate(doc)
    for diagnostic in doc["diagnostics"]:  # the Diagnostic definition on its own too
        _validator(SCHEMAS / "reviewdog" / "Diagnostic.json").validate(diagnostic)
    second = doc["diagnostics"][1]["location"]["range"]
    # "s = 'éé'; " is 10 characters but 12 UTF-8 bytes: character column 12 is byte column 14.
    assert second["start"] == {"line": 2, "column": 14}
    assert second["end"] == {"line": 2, "column": 22}
    assert doc["diagnostics"][0]["suggestions"][0]["text"] == "import triton"
    assert doc["diagnostics"][0]["code"]["value"] == "AC501"


def test_sarif_validates(root):
    validator = _validator(SCHEMAS / "sarif" / "sarif-schema-2.1.0.json")
    doc = json.loads(render(FINDINGS, "sarif", root=root))
    validator.validate(doc)
    run = doc["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
    assert [r["ruleId"] for r in run["results"]] == ["AC501", "AC301"]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert [ids[r["ruleIndex"]] for r in run["results"]] == ["AC501", "AC301"]
    assert run["results"][1]["locations"][0]["physicalLocation"]["region"]["startColumn"] == 12


def test_sarif_of_no_findings_validates(root):
    validator = _validator(SCHEMAS / "sarif" / "sarif-schema-2.1.0.json")
    validator.validate(json.loads(render([], "sarif", root=root)))
    _validator(SCHEMAS / "reviewdog" / "DiagnosticResult.json").validate(
        json.loads(render([], "rdjson", root=root))
    )


def test_json_carries_every_field_and_the_fix(root):
    doc = json.loads(render(FINDINGS, "json", root=root))
    first = doc[0]
    assert {
        k: first[k]
        for k in ("code", "contract", "kind", "path", "line", "column", "end_line", "end_column")
    } == {
        "code": "AC501",
        "contract": "plain-triton-imports",
        "kind": "banned-import",
        "path": "atom/k.py",
        "line": 1,
        "column": 1,
        "end_line": 1,
        "end_column": 41,
    }
    assert first["fix"] == {
        "message": "import triton directly",
        "applicability": "unsafe",
        "edits": [
            {
                "content": "import triton",
                "location": {"row": 1, "column": 1},
                "end_location": {"row": 1, "column": 41},
            }
        ],
    }
    assert doc[1]["fix"] is None


def test_concise_and_github(root):
    assert (
        render(FINDINGS[:1], "concise", root=root)
        == "atom/k.py:1:1: AC501 banned: `vllm.triton_utils`\n"
    )
    github = render(FINDINGS, "github", root=root).splitlines()
    assert (
        github[0]
        == "::error file=atom/k.py,line=1,col=1,endLine=1,endColumn=41,title=AC501::banned: `vllm.triton_utils`"
    )
    # Message data escapes % and newlines; properties also escape : and ,
    assert github[1].endswith("title=AC301::assert validates `config`, 50%25: x,y")


def test_full_shows_the_line_and_carets(root):
    text = render(FINDINGS[1:], "full", root=root)
    assert "2 | s = 'éé'; assert config" in text
    assert "  |            ^^^^^^^^ AC301" in text


def test_every_format_renders_nothing_cleanly(root):
    for fmt in FORMATS:
        out = render([], fmt, root=root)
        assert out in ("", "[]\n") or json.loads(out)


def test_statistics_counts_per_code():
    import dataclasses

    safe = dataclasses.replace(FINDINGS[1], fix=dataclasses.replace(FIX, applicability="safe"))
    rows = statistics([FINDINGS[0], FINDINGS[0], safe]).splitlines()
    assert rows[0].split("\t") == ["2", "AC501", "banned-import"]  # unsafe fixes: no [*]
    assert rows[1].split("\t") == ["1", "AC301", "[*] input-assert"]


def _chain(*hops: str) -> Finding:
    """A reachable-calls finding whose chain runs through ``hops`` (each ``name (place)``)."""
    message = "`E.f` is an entry and reaches `*.item` (a host sync): " + " -> ".join(hops)
    return Finding("AC821", "no-sync", "reachable-calls", "p.py", 1, 1, 1, 9, message + " -> `x()`")


CHAINS = [
    _chain("E.f (p.py:3, where meta.is_prefill, n > 0)", "g (q.py:9, where mode == 'a, b')"),
    _chain("E.f (p.py:4, where meta.is_prefill)", "g (q.py:8, where meta.is_prefill)"),
    _chain("E.f (p.py:5, where (not m.ok() or k is None), n > 0)", "h (q.py:2)"),
]


def test_statistics_tally_the_tests_a_code_s_chains_assume():
    rows = statistics([FINDINGS[0], *CHAINS]).splitlines()
    assert rows[0].split("\t") == ["3", "AC821", "reachable-forbidden-call"]
    # each test once per chain that assumes it, most shared first; a string's comma and an
    # `or`'s ways stay inside their test
    assert [r.split("\t")[2] for r in rows[1:5]] == [
        "2 where meta.is_prefill",
        "2 where n > 0",
        "1 where mode == 'a, b'",
        "1 where (not m.ok() or k is None)",
    ]
    assert rows[5].split("\t") == ["1", "AC501", "banned-import"]


def test_statistics_list_ten_assumed_tests_and_say_how_many_more_as_text_and_all_as_json():
    from checkers.reporters import ASSUMED_SHOWN, statistics_json

    many = [_chain(f"E.f (p.py:{i}, where t{i})") for i in range(ASSUMED_SHOWN + 2)]
    rows = statistics(many).splitlines()
    assert len(rows) == 1 + ASSUMED_SHOWN + 1 and rows[-1].split("\t")[2].strip() == "and 2 more"
    (row,) = json.loads(statistics_json(many))
    assert len(row["assumes"]) == ASSUMED_SHOWN + 2
    assert row["assumes"][0] == {"test": "t0", "chains": 1}
    (plain,) = json.loads(statistics_json([FINDINGS[0]]))
    assert "assumes" not in plain
    # exactly as many as are shown: nothing more to say
    exact = statistics(many[:ASSUMED_SHOWN]).splitlines()
    assert len(exact) == 1 + ASSUMED_SHOWN and "more" not in exact[-1]


def test_sarif_names_a_file_outside_the_root_by_its_own_uri(root):
    import dataclasses

    outside = dataclasses.replace(FINDINGS[1], path="/srv/vendored/x.py")
    doc = json.loads(render([outside], "sarif", root=root))
    location = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "file:///srv/vendored/x.py"}
    _validator(SCHEMAS / "sarif" / "sarif-schema-2.1.0.json").validate(doc)


@pytest.mark.parametrize(
    "path",
    [
        "a b#c.py",  # '#' would start a fragment, ' ' is no URI character
        "pkg/50%.py",  # '%' would start an escape
        "x:y.py",  # a ':' in the first segment would read as a scheme
        "pkg/q?.py",  # '?' would start a query
        "pkg/[v].py",
        "atom/ü.py",
        "/srv/vendored dir/a#b.py",  # outside the root: an absolute file URI
    ],
)
def test_sarif_uris_are_rfc_3986_references_that_name_the_file(root, path):
    import dataclasses
    from urllib.parse import unquote, urljoin, urlsplit

    finding = dataclasses.replace(FINDINGS[0], path=path)
    doc = json.loads(render([finding], "sarif", root=root))
    _validator(SCHEMAS / "sarif" / "sarif-schema-2.1.0.json").validate(doc)
    run = doc["runs"][0]
    result = run["results"][0]
    for location in (
        result["locations"][0]["physicalLocation"]["artifactLocation"],
        result["fixes"][0]["artifactChanges"][0]["artifactLocation"],
    ):
        base = (
            run["originalUriBaseIds"][location["uriBaseId"]]["uri"]
            if "uriBaseId" in location
            else ""
        )
        resolved = urlsplit(urljoin(base, location["uri"]))
        # Resolved against its base, the reference is the file: no fragment or query cut off.
        assert resolved.scheme == "file" and not resolved.fragment and not resolved.query
        expected = path if path.startswith("/") else f"{root.resolve()}/{path}"
        assert unquote(resolved.path) == expected
