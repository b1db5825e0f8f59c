"""A file written for a newer Python than the checker runs on says so in its AC001.

The checker parses with the grammar of the interpreter it runs on (``ast``, never the code's
own Python). A 3.12 file under a 3.11 checker -- a PEP 695 type parameter, a PEP 701 f-string
-- does not parse, and "expected '('" alone sends its reader looking for a typo that is not
there. The AC001 names the construct, the Python it needs and the Python the checker runs on;
where the project's ``requires-python`` asks for a newer Python than the checker's, it says
that too, whatever the syntax.
"""

from __future__ import annotations

import sys

import pytest

from checkers import api

RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"

NEWER = [
    # (source, the Python it needs, the words naming the construct)
    ("def first[T](xs: list[T]) -> T:\n    return xs[0]\n", (3, 12), "type parameters, PEP 695"),
    ("class Box[T]:\n    item: T\n", (3, 12), "type parameters, PEP 695"),
    ("async def run[T](x: T) -> T:\n    return x\n", (3, 12), "type parameters, PEP 695"),
    ("type Pair = tuple[int, int]\n", (3, 12), "a `type` statement, PEP 695"),
    ('d = {}\ns = f"{d["k"]}"\n', (3, 12), "an f-string as PEP 701 reads it"),
    ("s = f\"{'\\n'.join(x)}\"\n", (3, 12), "an f-string as PEP 701 reads it"),
    (
        "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n",
        (3, 14),
        "exception types without parentheses, PEP 758",
    ),
    ("name = 'x'\ns = t\"hello {name}\"\n", (3, 14), "a template string, PEP 750"),
]


def _ac001(make_project, text: str, **layout) -> str:
    # input-assert parses only a file that holds an assert: this one does, after the error.
    text += "\n\ndef g(x):\n    assert x\n"
    project = make_project("no-input-asserts", files={"mod.py": text}, **layout)
    result = api.check(cwd=project.root, use_cache=False, jobs=1)
    [finding] = [f for f in result.findings if f.code == "AC001"]
    return finding.message


@pytest.mark.parametrize(("text", "needs", "construct"), NEWER)
def test_newer_syntax_is_named_with_the_python_it_needs(make_project, text, needs, construct):
    if sys.version_info >= needs:
        pytest.skip(f"Python {RUNNING} parses Python {needs[0]}.{needs[1]} syntax")
    message = _ac001(make_project, text)
    version = f"{needs[0]}.{needs[1]}"
    assert f"Python {version} syntax ({construct})" in message
    assert f"this checker runs on Python {RUNNING}: run it on Python {version} or newer" in message


@pytest.mark.parametrize(
    "text",
    [
        "def f(:\n    pass\n",
        "x = (1,\n",
        "s = f'{'\n",  # an f-string that no Python reads
        "d = [1, 2\ntype = 3\n",  # `type` as a name, in a file broken elsewhere
        "class C(:\n    pass\n",
    ],
)
def test_a_plain_syntax_error_blames_no_python(make_project, text):
    message = _ac001(make_project, text)
    assert "syntax (" not in message and "runs on Python" not in message


def test_a_project_requiring_a_newer_python_says_so_on_any_parse_error(make_project):
    newer = f"{sys.version_info.major}.{sys.version_info.minor + 1}"
    message = _ac001(
        make_project, "def f(:\n    pass\n", before=f'[project]\nrequires-python = ">={newer}"\n'
    )
    assert (
        f"the project requires Python >={newer}; this checker runs on Python {RUNNING}" in message
    )
    assert f"run it on Python {newer} or newer" in message


def test_a_project_the_checker_satisfies_is_not_mentioned(make_project):
    message = _ac001(
        make_project, "def f(:\n    pass\n", before='[project]\nrequires-python = ">=3.8"\n'
    )
    assert "requires Python" not in message


def test_requires_python_is_read_once_per_version_of_the_pyproject(tmp_path, monkeypatch):
    """The language server asks on every keystroke that leaves its buffer unparsable: the
    pyproject is parsed again only when its bytes change."""
    import os
    import tomllib

    from checkers.newer_python import newer_python_note

    parsed: list[str] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(text) or real(text))
    newer = f"{sys.version_info.major}.{sys.version_info.minor + 1}"
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(f'[project]\nrequires-python = ">={newer}"\n', encoding="utf-8")
    error = SyntaxError("invalid syntax", ("mod.py", 1, 7, "def f(:\n"))
    for _ in range(3):
        assert f"the project requires Python >={newer}" in newer_python_note(error, pyproject)
    assert len(parsed) == 1
    pyproject.write_text('[project]\nrequires-python = ">=3.8"\n', encoding="utf-8")
    os.utime(pyproject, ns=(1_000_000_000, 1_000_000_000))  # a new mtime whatever the clock
    assert "requires Python" not in newer_python_note(error, pyproject)
    assert len(parsed) == 2
