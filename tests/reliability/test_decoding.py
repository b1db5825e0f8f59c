"""Every reader of source decodes as Python's import does.

A reader that tries UTF-8 before the cookie checks files Python refuses to
import as if valid; one that keeps a BOM on a neighbour module makes it "bind
nothing", so a cross-file chain through it vanishes; one that splits lines
otherwise than the tokenizer misses an assert after a lone CR or a form feed.
"""

from __future__ import annotations

import pytest

from checkers import api
from checkers.source import DecodeError, decode_source

from ..scaffold import contract, lay_out
from .conftest import ASSERT_LINES

REFUSED = {
    "unknown-codec": b"# coding: no-such-codec\nx = 1\n",
    "bom-under-latin-1": b"\xef\xbb\xbf# coding: latin-1\nx = 1\n",
    "ascii-over-utf-8": "# coding: ascii\nx = 'café'\n".encode(),
    "invalid-utf-8": b"x = '\xff'\n",
    "invalid-for-cookie": b"# coding: utf-8\nx = '\xc3'\n",
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_python_refuses_to_decode_is_refused(name):
    data = REFUSED[name]
    with pytest.raises(SyntaxError):
        compile(data, name, "exec")
    with pytest.raises(DecodeError):
        decode_source(data)


@pytest.mark.parametrize(
    "data",
    [
        b"x = 1\n",
        b"\xef\xbb\xbfx = 1\n",
        b"\xef\xbb\xbf# coding: utf-8\nx = 1\n",
        "# -*- coding: latin-1 -*-\nx = 'café'\n".encode("latin-1"),
        "#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\nx = '”'\n".encode("cp1252"),
        b"x = 1\n# coding: latin-1\n",  # after a line of code: not a cookie
    ],
)
def test_what_python_decodes_reads_as_python_reads_it(data):
    compile(data, "m.py", "exec")
    text = decode_source(data)
    assert "\ufeff" not in text
    exec_globals: dict = {}
    exec(compile(data, "m.py", "exec"), exec_globals)
    namespace: dict = {}
    exec(text, namespace)
    assert namespace.get("x") == exec_globals.get("x")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_file_is_one_ac001_and_the_others_are_checked(project, name):
    (project / "bad.py").write_bytes(
        REFUSED[name].replace(b"x = ", b"def f(x):\n    assert x\ny = ")
    )
    (project / "good.py").write_text("\n".join(ASSERT_LINES))
    result = api.check(use_cache=False, jobs=1, cwd=project)
    by_path = {(f.path, f.code) for f in result.findings}
    assert by_path == {("bad.py", "AC001"), ("good.py", "AC301")}
    (ac001,) = [f for f in result.findings if f.code == "AC001"]
    assert "cannot be decoded" in ac001.message


@pytest.mark.parametrize(
    "source",
    [
        "def f(x):\r    y = 1\r    assert x > 0\r    return x\r",
        "def f(x):\n\x0c    assert x > 0\n    return x\n",
        "def f(x):\n    y = 1\x0c\n    assert x > 0\n    return x\n",
        "def f(x):\r\n    y = 1\r    assert x > 0\r\n",
    ],
    ids=["lone-cr", "form-feed-at-line-start", "form-feed-at-line-end", "mixed"],
)
def test_asserts_after_odd_line_breaks_are_found_where_python_puts_them(project, source):
    import ast

    (project / "m.py").write_bytes(source.encode())
    (node,) = [n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Assert)]
    result = api.check(use_cache=False, jobs=1, cwd=project)
    assert [(f.code, f.line) for f in result.findings] == [("AC301", node.lineno)]


IMPORTORSKIP = ("skip-triton", "leaf")


@pytest.mark.parametrize("explicit", [False, True])
def test_a_bom_on_a_neighbour_keeps_the_cross_file_contracts(tmp_path, explicit):
    files = {
        "pkg/__init__.py": b"",
        "pkg/kernels.py": b"\xef\xbb\xbfimport triton\n",
        "pkg/leaf/__init__.py": b"\xef\xbb\xbfVALUE = 1\n",
        "pkg/leaf/member.py": b"from . import VALUE\n",
        "tests/test_k.py": b"from pkg.kernels import triton\n",
    }
    lay_out(tmp_path, *IMPORTORSKIP, files=files)
    paths = ["tests/test_k.py", "pkg/leaf/member.py"] if explicit else []
    result = api.check(paths, use_cache=False, jobs=1, cwd=tmp_path)
    codes = sorted((f.path, f.code) for f in result.findings)
    assert codes == [("tests/test_k.py", "AC601")]


def test_the_flake8_plugin_reports_an_undecodable_file(tmp_path):
    import ast

    from checkers.flake8_plugin import ContractsPlugin

    lay_out(tmp_path, contract("skip-triton", tests=["**"]), "leaf")
    path = tmp_path / "m.py"
    path.write_bytes(b"# coding: ascii\nimport triton  # caf\xc3\xa9\n")
    # flake8 falls back to latin-1 for what it cannot decode; the plugin must not.
    lines = path.read_bytes().decode("latin-1").splitlines(True)
    plugin = ContractsPlugin(ast.parse("import triton\n"), str(path), lines)
    reported = [message.split()[0] for _, _, message, _ in plugin.run()]
    assert reported == ["AC001"]


# What each reader must agree on: refused bytes are AC001 at line 1; accepted
# ones are read as Python reads them, so the assert is found on its own line.
AGREEMENT = {
    **{f"refused_{name.replace('-', '_')}": data for name, data in REFUSED.items()},
    "bom": b"\xef\xbb\xbfdef f(x):\n    assert x\n",
    "latin_1": "# -*- coding: latin-1 -*-\ndef f(x):\n    assert x, 'café'\n".encode("latin-1"),
    "cp1252": "# coding: cp1252\ndef f(x):\n    assert x, '”'\n".encode("cp1252"),
    "lone_cr": b"def f(x):\r    y = 1\r    assert x\r",
    "crlf": b"def f(x):\r\n    assert x\r\n",
    "form_feed": b"def f(x):\n\x0c    assert x\n",
}


def test_the_cli_the_hook_and_the_flake8_plugin_decode_alike(project):
    """One decoding for every reader -- the CLI's check, the
    agent hook (in process, as it runs) and the flake8 plugin under real flake8."""
    import os
    import re
    import subprocess
    import sys

    from hooks._payload import EditedFile
    from hooks.post_tool_use import _contract_problems

    for rel, data in AGREEMENT.items():
        (project / f"{rel}.py").write_bytes(data)
    cli: dict[str, set] = {rel: set() for rel in AGREEMENT}
    for f in api.check(use_cache=False, jobs=1, cwd=project).findings:
        cli[f.path.removesuffix(".py")].add((f.line, f.code))
    hook = {
        rel: {
            (p.line, p.code)
            for p in _contract_problems(
                EditedFile(
                    path=(project / f"{rel}.py").resolve(), project=project.resolve(), tool="Write"
                )
            )
        }
        for rel in AGREEMENT
    }
    from ..conftest import REPO_ROOT

    # The plugin from this checkout, not the editable install's (another checkout).
    run = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "AC", "."],
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        timeout=120,
    )
    flake8: dict[str, set] = {rel: set() for rel in AGREEMENT}
    for line in run.stdout.splitlines():
        m = re.match(r"\./(\w+)\.py:(\d+):\d+: (AC\d+) ", line)
        assert m, line
        flake8[m[1]].add((int(m[2]), m[3]))
    want = {
        rel: {(1, "AC001")} if rel.startswith("refused_") else {(_assert_line(data), "AC301")}
        for rel, data in AGREEMENT.items()
    }
    assert cli == want
    assert hook == want
    assert flake8 == want, run.stderr


def _assert_line(data: bytes) -> int:
    import ast

    (node,) = [n for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Assert)]
    return node.lineno


# stdin (`check - --stdin-filename PATH`, editors' and formatters' way in) was read
# as text in the terminal's encoding: refused bytes passed as "All contracts hold.",
# a cookie was ignored, and a fix came back re-encoded as UTF-8.
def _stdin(cwd, data: bytes, *flags: str):
    import os
    import subprocess
    import sys

    from ..conftest import REPO_ROOT

    cli = "import sys; from checkers.cli import main; sys.exit(main(sys.argv[1:]))"
    args = ["check", "--no-cache", "-", "--stdin-filename", "m.py", *flags]
    return subprocess.run(
        [sys.executable, "-c", cli, *args],
        cwd=cwd,
        input=data,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "PYTHONIOENCODING": "utf-8"},
        timeout=60,
    )


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_stdin_python_refuses_to_decode_is_ac001(project, name):
    done = _stdin(project, REFUSED[name])
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(b"m.py:1:1: AC001 cannot be decoded"), done.stdout


def test_a_fix_through_stdin_comes_back_in_the_input_s_own_bytes(project):
    latin = "# -*- coding: latin-1 -*-\ndef f(x):\n    assert x, 'café'\n    return x\n"
    done = _stdin(project, latin.encode("latin-1"), "--fix", "--unsafe-fixes")
    assert done.returncode == 0, done.stderr
    assert b"raise ValueError" in done.stdout and b"caf\xe9" in done.stdout, done.stdout
    compile(done.stdout, "m.py", "exec")
    bom = b"\xef\xbb\xbf" + "\n".join(ASSERT_LINES).encode()
    done = _stdin(project, bom, "--fix", "--unsafe-fixes")
    assert done.stdout.startswith(b"\xef\xbb\xbfdef f(x):\n    if not"), done.stdout
    assert done.returncode == 0, done.stderr


def test_stdin_that_python_decodes_is_checked_as_the_file_would_be(project):
    cp1252 = "# coding: cp1252\ndef f(x):\n    assert x, '”'\n".encode("cp1252")
    done = _stdin(project, cp1252)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(b"m.py:3:12: AC301"), done.stdout


def test_stdin_diff_is_the_fix_as_a_unified_diff_and_a_clean_input_none(project):
    done = _stdin(project, "\n".join(ASSERT_LINES).encode(), "--diff", "--unsafe-fixes")
    assert done.returncode == 1, done.stderr  # a diff shown, as ruff --diff exits
    lines = done.stdout.decode().splitlines()
    assert lines[:2] == ["--- m.py", "+++ m.py"], lines
    assert "-    assert x > 0" in lines and "+    if not (x > 0):" in lines, lines
    assert " def f(x):" in lines, lines  # context: the lines around it are not rewritten
    clean = b"def f(x):\n    return x\n"
    done = _stdin(project, clean, "--diff", "--unsafe-fixes")
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    done = _stdin(
        project, "\n".join(ASSERT_LINES).encode(), "--diff", "--unsafe-fixes", "--exit-zero"
    )
    assert done.returncode == 0 and b"+    if not (x > 0):" in done.stdout, done.stderr


def _api_stdin(project, data, **options):
    return api.check(["m.py"], stdin=data, cwd=project, use_cache=False, jobs=1, **options)


def test_stdin_as_text_through_the_api_is_checked_and_fixed_as_given(project):
    text = "\n".join(ASSERT_LINES)
    result = _api_stdin(project, text)
    assert [(f.line, f.code) for f in result.findings] == [(2, "AC301")]
    assert (result.files_checked, result.fixed_bytes, result.stdin_text) == (1, None, text)
    fixed = _api_stdin(project, text, fix=True, unsafe_fixes=True)
    assert (fixed.fixed, fixed.fixed_bytes, fixed.findings) == (1, None, [])
    assert "if not (x > 0):" in fixed.fixed_text


def test_a_fix_the_input_s_codec_cannot_spell_is_not_applied_and_says_why(make_project):
    root = make_project(
        contract("plain-triton-imports", replace={"tl": "trïton.language"}), chdir=True
    ).root
    data = b"# coding: ascii\nfrom vllm.triton_utils import tl\n"
    result = _api_stdin(root, data, fix=True, unsafe_fixes=True)
    assert result.warnings == ["m.py: not fixed: the fix writes 'ï', which ascii cannot encode"]
    assert (result.fixed, result.fixes, result.fixed_bytes) == (0, {}, data)
    assert result.fixed_text == data.decode()
    assert [f.code for f in result.findings] == ["AC501"]


def test_undecodable_stdin_is_ac001_unless_its_path_is_excluded(make_project):
    root = make_project("no-input-asserts", settings={"exclude": ["gen/**"]}, chdir=True).root
    data = REFUSED["invalid-utf-8"]
    kept = api.check(["m.py"], stdin=data, cwd=root, use_cache=False, jobs=1)
    assert [(f.path, f.code) for f in kept.findings] == [("m.py", "AC001")]
    excluded = api.check(["gen/m.py"], stdin=data, cwd=root, use_cache=False, jobs=1)
    assert excluded.findings == []


def test_stdin_s_fixed_bytes_follow_what_the_caller_printed_before(project):
    # main() in a process that has printed to a piped (block-buffered) stdout: the fixed
    # source's bytes go under the text layer, so that text is flushed first.
    import os
    import subprocess
    import sys

    from ..conftest import REPO_ROOT

    script = (
        "import sys; print('before'); from checkers.cli import main; "
        "sys.exit(main(['check', '--no-cache', '-', '--stdin-filename', 'm.py', '--fix']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=project,
        input=b"x = 1\n",
        capture_output=True,
        # Buffered as a pipe is by default (PYTHONUNBUFFERED would hide the order).
        env={
            **{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
            "PYTHONPATH": str(REPO_ROOT),
        },
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"before\nx = 1\n"), done.stderr
