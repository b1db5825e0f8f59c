"""The command line as users and CI meet it: exit codes, formats, help, laziness."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkers.cli import main

from ..scaffold import contract, pyproject

SETTINGS = {"exclude": ["build/**"], "per-file-ignores": {"tests/**": ["AC101"]}}
BAD = "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        pass\n"
GOOD = "class B:\n    def allocate_kv_cache_tensors(self, *, blocks):\n        pass\n"


@pytest.fixture
def project(make_project):
    files = {
        "pkg/bad.py": BAD,
        "pkg/good.py": GOOD,
        "build/lib/pkg/bad.py": BAD,
        "tests/test_bad.py": BAD,
        ".venv/lib/bad.py": BAD,
    }
    declared = make_project(
        "blocks-keyword-only", files=files, src=None, settings=SETTINGS, chdir=True
    )
    return declared.root


def test_findings_exit_1_and_print_concise(project, capsys):
    assert main(["check", "--no-cache"]) == 1
    out = capsys.readouterr().out.splitlines()
    # build/ is excluded, tests/ per-file-ignores AC101, .venv is hidden.
    assert out[0] == "pkg/bad.py:2:41: AC101 " + out[0].split(" AC101 ", 1)[1]
    assert out[1:] == ["Found 1 finding."]


def test_clean_exits_0(project, capsys):
    assert main(["check", "pkg/good.py", "--no-cache"]) == 0
    assert capsys.readouterr().out == "All contracts hold.\n"
    assert main(["check", "pkg/good.py", "-q"]) == 0
    assert capsys.readouterr().out == ""


def test_exit_zero_and_select(project, capsys):
    assert main(["check", "--exit-zero", "--no-cache"]) == 0
    assert main(["check", "--select", "AC9", "--no-cache"]) == 0
    assert main(["check", "--ignore", "AC1", "--no-cache"]) == 0
    capsys.readouterr()


def test_an_explicitly_named_excluded_file_stays_excluded(project, capsys):
    assert main(["check", "build/lib/pkg/bad.py", "--no-cache"]) == 0
    capsys.readouterr()


def test_configuration_errors_exit_2_with_one_line(project, capsys):
    misspelled = contract("blocks-keyword-only", kind="keyword-onyl")
    (project / "pyproject.toml").write_text(pyproject(misspelled, src=None, settings=SETTINGS))
    assert main(["check", "--no-cache"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "keyword-onyl" in err[0] and "#1" in err[0] and "`kind`" in err[0]


def test_bad_selection_and_missing_path_exit_2(project, capsys):
    assert main(["check", "--select", "ac1"]) == 2
    assert "'ac1'" in capsys.readouterr().err
    assert main(["check", "nowhere.py"]) == 2
    assert "nowhere.py" in capsys.readouterr().err


def test_json_output(project, capsys):
    assert main(["check", "--output-format", "json", "--no-cache"]) == 1
    (finding,) = json.loads(capsys.readouterr().out)
    assert (finding["path"], finding["code"], finding["line"], finding["column"]) == (
        "pkg/bad.py",
        "AC101",
        2,
        41,
    )
    assert finding["contract"] == "blocks-keyword-only"
    assert finding["kind"] == "keyword-only"
    assert finding["fix"] is None


def test_statistics(project, capsys):
    assert main(["check", "--statistics", "--no-cache", "-q"]) == 1
    assert capsys.readouterr().out.split("\t")[:3] == ["1", "AC101", "keyword-only-parameter\n"]


def test_rules_and_explain(capsys):
    from checkers.rules import KIND_PATHS

    assert main(["explain", "AC901"]) == 0
    text = capsys.readouterr().out
    for section in (
        "What it does",
        "Why is this bad?",
        "Example",
        "Use instead",
        "Fix safety",
        "Options",
    ):
        assert section in text
    assert main(["explain", "AC999"]) == 2
    capsys.readouterr()
    # Every code the checker reports of its own accord is documented, AC000 included.
    from checkers import codes

    for code in (codes.CONFIG_ERROR, codes.UNCHECKABLE, codes.CHECKER_FAILED):
        assert main(["explain", code]) == 0, code
        assert capsys.readouterr().out.startswith(f"{code} ("), code
    try:
        code = main(["rules", "--output-format", "json"])
    except ModuleNotFoundError:
        pytest.skip("a registered kind's module is missing")
    rules = json.loads(capsys.readouterr().out)
    if code != 0:
        pytest.skip("a registered kind's module is missing")
    assert {r["kind"] for r in rules} == {*KIND_PATHS, None}
    assert {"AC001", "AC901", "AC902", "AC101"} <= {r["code"] for r in rules}


def _run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "checkers", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["check", "--help"],
        ["rules", "--help"],
        ["explain", "--help"],
        ["hook", "--help"],
    ],
)
def test_help_answers_at_every_level(args):
    proc = _run(*args)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout


def test_no_command_prints_help_and_exits_2():
    proc = _run()
    assert proc.returncode == 2
    assert "usage:" in proc.stdout


def test_an_internal_error_is_one_line_unless_verbose(project):
    (project / "pkg" / "bad.py").write_text(BAD)
    env_args = ["check", "--no-cache", "--diff-base", "HEAD"]  # not a git repository
    proc = _run(*env_args, cwd=project)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr
    verbose = _run(*env_args, "--verbose", cwd=project)
    assert verbose.returncode == 2
    assert "Traceback" in verbose.stderr


HEAVY = ("torch", "atom", "libcst", "pathspec", "json", "hooks")


@pytest.mark.parametrize("run_check", [False, True], ids=["import", "import-and-check"])
def test_the_cli_loads_no_engine_torch_or_libcst(project, run_check):
    code = (
        "import sys, checkers.cli\n"
        + ("checkers.cli.main(['check', '--no-cache', '-q'])\n" if run_check else "")
        + f"heavy = sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})\n"
        + "print('LOADED:' + ','.join(heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=project, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "LOADED:", proc.stdout


def test_layout_and_models_are_dispatched_lazily(monkeypatch, capsys):
    import types

    calls = []
    fake = types.ModuleType("atom.layout_command")
    fake.layout_main = lambda argv: calls.append(("layout", argv)) or 0
    fake.models_main = lambda argv: calls.append(("models", argv)) or 3
    monkeypatch.setitem(sys.modules, "atom.layout_command", fake)
    assert main(["layout", "--model", "llama-3.1-8b"]) == 0
    assert main(["models"]) == 3
    assert calls == [("layout", ["--model", "llama-3.1-8b"]), ("models", [])]


def test_an_unknown_hook_exits_2(capsys):
    assert main(["hook", "no-such-hook"]) == 2
    assert "no-such-hook" in capsys.readouterr().err


def test_the_repository_passes_its_own_contracts():
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "checkers", "check", "--no-cache"],
        capture_output=True,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_cache_gives_the_same_output_as_no_cache(project, capsys):
    outputs = []
    for args in (["--no-cache"], [], [], ["--no-cache"]):
        assert main(["check", "--output-format", "json", *args]) == 1
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] == outputs[2] == outputs[3]
    assert any(p.suffix == ".marshal" for p in (project / ".atom-contracts-cache").rglob("*"))


def test_fix_from_the_command_line(make_project, capsys):
    source = "from vllm.triton_utils import triton\n\n\ndef f():\n    return triton\n"
    declared = make_project("plain-triton-imports", files={"k.py": source}, src=None, chdir=True)
    tmp_path = declared.root
    assert main(["check", "--fix"]) == 1  # banned-import's fix is unsafe: not applied
    assert (tmp_path / "k.py").read_text() == source
    capsys.readouterr()
    code = main(["check", "--fix", "--unsafe-fixes"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Fixed 1 finding." in out
    assert (tmp_path / "k.py").read_text().startswith("import triton\n")


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["a.py", "pkg/"],
        ["--output-format", "json", "-q", "a.py"],
        ["--output-format=sarif", "--select", "AC3,AC4", "--ignore=AC9", "--fix", "--unsafe-fixes"],
        ["--diff-base", "origin/main", "--no-cache", "--jobs", "3", "--statistics", "--exit-zero"],
        ["--config", "x/pyproject.toml", "-v", "--", "--weird-name.py"],
    ],
)
def test_the_fast_path_reads_check_arguments_exactly_as_argparse_does(argv):
    from checkers.check_command import fast_args as _fast_check_args
    from checkers.cli import _parser

    fast = _fast_check_args(argv)
    assert fast is not None
    assert vars(fast) == vars(_parser().parse_args(["check", *argv]))


@pytest.mark.parametrize(
    "argv",
    [
        ["-h"],
        ["--output-format", "xml"],
        ["--jobs", "many"],
        ["--jobs", "0"],
        ["--select"],
        ["-qv"],
        ["--fix=1"],
    ],
)
def test_anything_unusual_goes_to_argparse(argv):
    from checkers.check_command import fast_args as _fast_check_args

    assert _fast_check_args(argv) is None


def test_a_worker_count_below_one_is_refused_by_value(capsys):
    from checkers.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["check", "--jobs", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "--jobs" in err and "'0'" in err


def test_no_summary_inside_a_pre_commit_batch(project, capsys, monkeypatch):
    # pre-commit sets PRE_COMMIT=1 and prints batches one after another: a batch's
    # "All contracts hold." beside another batch's findings would contradict it.
    monkeypatch.setenv("PRE_COMMIT", "1")
    assert main(["check", "pkg/good.py", "--no-cache"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["check", "pkg/bad.py", "--no-cache"]) == 1
    out = capsys.readouterr().out
    assert "AC101" in out and "Found" not in out and "All contracts hold" not in out
    monkeypatch.setenv("PRE_COMMIT", "0")
    assert main(["check", "pkg/good.py", "--no-cache"]) == 0
    assert capsys.readouterr().out == "All contracts hold.\n"


def test_the_cli_names_neither_the_engine_nor_the_hooks():
    # Dispatch goes through entry points: no import of, and no dotted string into,
    # `atom` or `hooks`, so a consumer's own `hooks/` package cannot be what runs.
    import ast

    import checkers.cli as cli

    tree = ast.parse(Path(cli.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not any(n.split(".")[0] in ("atom", "hooks") for n in names), ast.dump(node)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            assert not node.value.startswith(("atom.", "hooks.")), node.value


def test_commands_and_hooks_are_entry_points_of_the_distribution():
    from checkers.cli import COMMANDS_GROUP, HOOKS_GROUP, entry_points

    assert entry_points(COMMANDS_GROUP) == {
        "layout": "atom.layout_command:layout_main",
        "models": "atom.layout_command:models_main",
        "server": "hooks.lsp:main",
    }
    assert entry_points(HOOKS_GROUP) == {"post-tool-use": "hooks.post_tool_use:main"}
    from importlib.metadata import entry_points as scan

    assert {ep.name: ep.value for ep in scan(group=HOOKS_GROUP)} == entry_points(HOOKS_GROUP)


def test_entry_points_txt_is_read_as_importlib_reads_it():
    from checkers.cli import _parse_entry_points

    text = "[a.b]\nx = m.n:f\n# c\n; d\n\n[console_scripts]\ny=p:q\n"
    assert _parse_entry_points(text) == {"a.b": {"x": "m.n:f"}, "console_scripts": {"y": "p:q"}}


@pytest.mark.parametrize("command", [["models"], ["layout", "deepseek-r1"]])
def test_engine_commands_without_torch_name_the_extra(command):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from checkers.cli import main; sys.exit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *command], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    assert "needs torch" in proc.stderr and "`engine` extra" in proc.stderr
