"""The PostToolUse hook, driven with real payloads against real ruff.

Each test runs the hook as Claude Code does (a process, a JSON payload on
stdin) in a throwaway project, then reads the edited file, every other file's
bytes, stderr and the exit status. 2 means "show stderr to the model"; 0 with
one line on stderr is the hook declining or failing without blocking.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

AC101_LINE = re.compile(r"^pkg/mod\.py:5:41: AC101 .*contract `blocks-keyword-only`", re.M)


def _unchanged_except(before: dict[str, bytes], after: dict[str, bytes], edited: str) -> None:
    assert set(after) == set(before), f"files appeared or vanished: {set(after) ^ set(before)}"
    changed = {name for name in before if before[name] != after[name]}
    assert changed <= {edited}, f"files other than {edited} changed: {changed - {edited}}"


def _one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {stderr!r}"
    assert "Traceback" not in stderr
    return lines[0]


# -- the edit tools ----------------------------------------------------------


def test_write_applies_safe_fix_and_reports_what_is_left(project) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    before = project.snapshot()

    run = project.run_hook(project.payload("Write", mod, content=project.VIOLATING))

    assert run.returncode == 2, run.stderr
    assert run.stdout == ""
    text = mod.read_text()
    # F401's safe fix removed `import os`; F841's fix is unsafe, so `unused` stays.
    assert text == project.VIOLATING.replace("import os\n", "")
    assert "unused = 1" in text
    _unchanged_except(before, project.snapshot(), "pkg/mod.py")
    # Positions are of the fixed file: with `import os` gone the def is on line 5.
    assert AC101_LINE.search(run.stderr), run.stderr
    assert re.search(r"^pkg/mod\.py:6:9: F841 Local variable `unused`", run.stderr, re.M)
    # Fixed, so not reported as a problem, but named as what the rewrite did.
    assert not re.search(r"^pkg/mod\.py:\d+:\d+: F401", run.stderr, re.M)
    assert "ruff rewrote the file (fixed F401)" in run.stderr
    assert "# noqa: CODE -- reason" in run.stderr


def test_a_rewrite_that_leaves_the_file_clean_is_still_reported(project) -> None:
    # The agent's copy of the file is stale once ruff rewrote it: exit 2 (stderr shown to
    # the model) naming the file and what ruff fixed, even with nothing left to fix.
    mod = project.write("pkg/mod.py", "import os\nimport json\n" + project.CLEAN)
    before = project.snapshot()

    run = project.run_hook(
        project.payload("Edit", mod, old_string="x", new_string="y", replace_all=False)
    )

    assert (run.returncode, run.stdout) == (2, ""), run.stderr
    assert mod.read_text() == project.CLEAN
    _unchanged_except(before, project.snapshot(), "pkg/mod.py")
    lines = run.stderr.splitlines()
    assert lines[0].startswith("pkg/mod.py: ruff rewrote the file"), run.stderr
    assert "F401 x2" in lines[0] and "read it again" in lines[0]
    assert "0 problems" not in run.stderr and "noqa" not in run.stderr


def test_a_clean_file_ruff_did_not_touch_exits_0_silently(project) -> None:
    mod = project.write("pkg/mod.py", project.CLEAN)
    run = project.run_hook(project.payload("Write", mod))
    assert (run.returncode, run.stderr, run.stdout) == (0, "", "")


def test_multiedit_reports_findings_already_in_the_file(project) -> None:
    # Nothing here is safely fixable: the file must come back byte-identical
    # and every finding, old or new, be listed.
    source = project.VIOLATING.replace("import os\n", "")
    mod = project.write("pkg/mod.py", source)
    before = project.snapshot()

    run = project.run_hook(
        project.payload("MultiEdit", mod, edits=[{"old_string": "a", "new_string": "b"}])
    )

    assert run.returncode == 2
    assert project.snapshot() == before
    assert AC101_LINE.search(run.stderr), run.stderr
    assert "F841" in run.stderr
    assert "ruff rewrote" not in run.stderr
    assert "already in the file before this edit" in run.stderr


def test_clean_file_with_a_reasoned_noqa_passes(project) -> None:
    source = project.CLEAN.replace(
        "def allocate_kv_cache_tensors(self, *, blocks):",
        "def allocate_kv_cache_tensors(self, blocks):  # noqa: AC101 -- legacy caller passes it positionally",
    )
    mod = project.write("pkg/mod.py", source)

    run = project.run_hook(project.payload("Write", mod))

    # external = ["AC"] in the project's ruff config keeps RUF100 off it, and
    # the contract honours the suppression.
    assert (run.returncode, run.stderr) == (0, "")
    assert mod.read_text() == source


def test_single_ruff_run_reports_what_a_second_check_would(project) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)

    run = project.run_hook(project.payload("Write", mod), "--no-contracts")

    again = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format=json", str(mod)],
        capture_output=True,
        cwd=project.root,
    )
    expected = {
        f"pkg/mod.py:{d['location']['row']}:{d['location']['column']}: {d['code']}"
        for d in json.loads(again.stdout)
    }
    reported = set(re.findall(r"^(pkg/mod\.py:\d+:\d+: [A-Z]+\d+)", run.stderr, re.M))
    assert expected and reported == expected


def test_notebook_gets_ruff_fixes_and_no_contracts(project) -> None:
    cells = [
        ["import os\n", "import sys\n"],
        [
            "def allocate_kv_cache_tensors(self, blocks):\n",
            "    unused = 1\n",
            "    return sys.argv\n",
        ],
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": src,
            }
            for i, src in enumerate(cells)
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    nb = project.write("analysis.ipynb", json.dumps(notebook, indent=1))
    before = project.snapshot()

    run = project.run_hook(project.payload("NotebookEdit", nb, new_source="x", cell_id="c1"))

    assert run.returncode == 2, run.stderr
    fixed = json.loads(nb.read_text())
    assert fixed["cells"][0]["source"] == ["import sys\n"]
    # F841 in the second cell, located by cell; the AC101 shape in a notebook
    # is not reported, because the contracts parse .py files only.
    assert re.search(r"^analysis\.ipynb:cell 2:2:5: F841", run.stderr, re.M), run.stderr
    assert "AC101" not in run.stderr
    _unchanged_except(before, project.snapshot(), "analysis.ipynb")


# -- payloads the hook declines ------------------------------------------------


def test_non_python_file_is_left_alone_silently(project) -> None:
    before = project.snapshot()
    run = project.run_hook(project.payload("Write", project.root / "README.md"))
    assert (run.returncode, run.stderr) == (0, "")
    assert project.snapshot() == before


def test_tool_that_does_not_edit_gets_no_fix(project) -> None:
    # A `*` matcher would send Read payloads too; a file merely read must not be rewritten.
    before = project.snapshot()
    run = project.run_hook(project.payload("Read", project.root / "pkg/other.py"))
    assert (run.returncode, run.stderr) == (0, "")
    assert project.snapshot() == before
    assert (project.root / "pkg/other.py").read_text() == project.OTHER


def test_path_outside_the_project_is_not_touched(project, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.py"
    outside.write_text(project.VIOLATING)
    before = project.snapshot()

    run = project.run_hook(project.payload("Write", outside))

    assert run.returncode == 0
    assert "outside the project" in _one_line(run.stderr)
    assert outside.read_text() == project.VIOLATING
    assert project.snapshot() == before


def test_symlink_out_of_the_project_counts_as_outside(project, tmp_path: Path) -> None:
    target = tmp_path / "target.py"
    target.write_text(project.VIOLATING)
    link = project.root / "pkg" / "link.py"
    link.symlink_to(target)

    run = project.run_hook(project.payload("Edit", link))

    assert run.returncode == 0
    assert "outside the project" in _one_line(run.stderr)
    assert target.read_text() == project.VIOLATING


def test_relative_path_resolves_against_payload_cwd(project) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    payload = project.payload("Write", mod)
    payload["tool_input"]["file_path"] = "pkg/mod.py"
    payload["tool_response"] = {}
    env = project.env()
    del env["CLAUDE_PROJECT_DIR"]  # the payload's cwd is then the project

    run = project.run_hook(payload, env=env, cwd=project.root.parent)

    assert run.returncode == 2
    assert AC101_LINE.search(run.stderr), run.stderr


def test_garbage_stdin(project) -> None:
    run = project.run_hook(b"{not json at all")
    assert run.returncode == 0
    assert "not JSON" in _one_line(run.stderr)


def test_payload_nested_too_deeply(project) -> None:
    # json recurses per level: 100,000 of them was a RecursionError, and the
    # hook's last-resort "internal error". It is a bad payload like any other.
    run = project.run_hook(b"[" * 100_000 + b"]" * 100_000)
    assert run.returncode == 0
    line = _one_line(run.stderr)
    assert "nested too deeply" in line
    assert "internal error" not in line and "Traceback" not in run.stderr


def test_empty_stdin(project) -> None:
    run = project.run_hook(b"")
    assert run.returncode == 0
    assert "empty stdin" in _one_line(run.stderr)


def test_payload_that_is_not_an_object(project) -> None:
    run = project.run_hook(b'["Write", "pkg/mod.py"]')
    assert run.returncode == 0
    assert "JSON list" in _one_line(run.stderr)


def test_payload_naming_no_file(project) -> None:
    run = project.run_hook({"tool_name": "Write", "tool_input": {"content": "x"}})
    assert run.returncode == 0
    assert "names no file" in _one_line(run.stderr)


def test_file_deleted_before_the_hook_ran(project) -> None:
    gone = project.root / "pkg" / "gone.py"
    run = project.run_hook(project.payload("Write", gone))
    assert run.returncode == 0
    assert "no longer exists" in _one_line(run.stderr)
    assert not gone.exists()


def test_bad_argument_does_not_block(project) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    run = project.run_hook(project.payload("Write", mod), "--frobnicate")
    assert run.returncode == 0
    assert "--frobnicate" in _one_line(run.stderr)
    assert mod.read_text() == project.VIOLATING


# -- ruff missing, failing or slow ---------------------------------------------


def _path_without_ruff(tmp_path: Path) -> str:
    """A PATH that still has the shell tools but no ruff executable."""
    empty = tmp_path / "bin-without-ruff"
    empty.mkdir(exist_ok=True)
    dirs = [str(empty)] + [d for d in ("/usr/bin", "/bin") if not Path(d, "ruff").exists()]
    return os.pathsep.join(dirs)


def _python_without_ruff(tmp_path: Path) -> str:
    """A PYTHONPATH under which `python -m ruff` fails as it does when ruff is not installed.

    A `ruff` package with no `__main__` shadows the real one, and runpy then
    refuses it with one line and exit 1, as it does for a missing module.
    """
    shadow = tmp_path / "shadow"
    (shadow / "ruff").mkdir(parents=True, exist_ok=True)
    (shadow / "ruff" / "__init__.py").write_text("")
    return str(shadow)


def test_ruff_found_through_the_interpreter_when_not_on_path(project, tmp_path: Path) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    run = project.run_hook(
        project.payload("Write", mod), env=project.env(PATH=_path_without_ruff(tmp_path))
    )
    assert run.returncode == 2, run.stderr
    assert "import os" not in mod.read_text()
    assert "F841" in run.stderr


def test_ruff_missing_on_a_clean_file_is_one_line(project, tmp_path: Path) -> None:
    mod = project.write("pkg/mod.py", project.CLEAN)
    env = project.env(PATH=_path_without_ruff(tmp_path), PYTHONPATH=_python_without_ruff(tmp_path))

    run = project.run_hook(project.payload("Write", mod), env=env)

    assert run.returncode == 0
    line = _one_line(run.stderr)
    assert "-m ruff exited 1" in line and "not linted by ruff" in line
    assert mod.read_text() == project.CLEAN


def test_ruff_missing_still_reports_contracts(project, tmp_path: Path) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    before = project.snapshot()
    env = project.env(PATH=_path_without_ruff(tmp_path), PYTHONPATH=_python_without_ruff(tmp_path))

    run = project.run_hook(project.payload("Write", mod), env=env)

    assert run.returncode == 2
    assert project.snapshot() == before  # no ruff, so no fix
    assert re.search(r"^pkg/mod\.py:6:41: AC101 ", run.stderr, re.M), run.stderr
    assert "after ruff's safe fixes" not in run.stderr
    assert "not linted by ruff" in run.stderr


def test_ruff_config_error_is_reported_not_raised(project) -> None:
    mod = project.write("pkg/mod.py", project.CLEAN)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace("line-length = 100", "line-length = -3"))

    run = project.run_hook(project.payload("Write", mod))

    assert run.returncode == 0
    line = _one_line(run.stderr)
    assert "exited 2" in line and "not linted by ruff" in line


def test_ruff_output_nested_too_deeply_is_reported_not_raised(project, tmp_path: Path) -> None:
    # json recurses per level, as for a deep payload: the ruff the user named
    # (ATOM_CONTRACTS_RUFF) printing 100,000-deep JSON was the hook's
    # last-resort "internal error"; it is one line like any ruff that fails.
    script = tmp_path / "deep-ruff"
    script.write_text(
        "#!/bin/sh\ncat > /dev/null\npython3 -c \"print('[' * 100000 + ']' * 100000)\"\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    mod = project.write("pkg/mod.py", project.VIOLATING)

    run = project.run_hook(
        project.payload("Write", mod), env=project.env(ATOM_CONTRACTS_RUFF=str(script))
    )

    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert "nested too deeply" in run.stderr and "not linted by ruff" in run.stderr, run.stderr
    assert re.search(r"^pkg/mod\.py:6:41: AC101 ", run.stderr, re.M), run.stderr
    assert run.returncode == 2


def test_ruff_fixed_codes_nested_too_deeply_leave_the_report_whole(project, tmp_path: Path) -> None:
    # The second ruff, which reads what the rewrite fixed, answering with JSON
    # too deep for json: the report goes out without the fixed codes.
    script = tmp_path / "deep-second-ruff"
    script.write_text(
        "#!/bin/sh\n"
        "for last; do :; done\n"
        'case " $* " in\n'
        "  *' --no-fix '*) cat > /dev/null;"
        " python3 -c \"print('[' * 100000 + ']' * 100000)\"; exit 1;;\n"
        "esac\n"
        'printf "# rewritten\\n" >> "$last"\n'
        "echo '[]'\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    mod = project.write("pkg/mod.py", project.VIOLATING)

    run = project.run_hook(
        project.payload("Write", mod), env=project.env(ATOM_CONTRACTS_RUFF=str(script))
    )

    assert "internal error" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert mod.read_text().endswith("# rewritten\n")
    assert re.search(r"^pkg/mod\.py:6:41: AC101 ", run.stderr, re.M), run.stderr
    assert run.returncode == 2


def _slow_ruff(tmp_path: Path) -> Path:
    bindir = tmp_path / "slow-bin"
    bindir.mkdir()
    script = bindir / "ruff"
    script.write_text("#!/bin/sh\nsleep 30\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bindir


def test_timeout_exits_0_with_one_line(project, tmp_path: Path) -> None:
    mod = project.write("pkg/mod.py", project.VIOLATING)
    env = project.env(PATH=os.pathsep.join([str(_slow_ruff(tmp_path)), os.environ["PATH"]]))

    # The slow ruff is a shell whose `sleep` child holds the pipes: the hook
    # must kill the whole group, or this run would last the full 30 s and hit
    # the harness's own timeout.
    run = project.run_hook(project.payload("Write", mod), "--timeout", "0.5", env=env)

    assert run.returncode == 0
    assert "did not finish within 0.5 s" in _one_line(run.stderr)
    assert mod.read_text() == project.VIOLATING


def _ruff_script(tmp_path: Path, body: str) -> Path:
    """A stand-in ruff named ``ruff`` on PATH; ``$last`` is the file it fixes."""
    bindir = tmp_path / "script-bin"
    bindir.mkdir()
    script = bindir / "ruff"
    script.write_text("#!/bin/sh\nfor last; do :; done\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return bindir


def test_a_ruff_stopped_mid_rewrite_at_the_timeout_leaves_the_edit_whole(project, tmp_path):
    # ruff --fix truncates the file, then writes (File::create): one killed
    # between the two at the timeout left the file empty or cut short, and the
    # hook said only "was not checked".
    mod = project.write("pkg/mod.py", project.VIOLATING)
    bindir = _ruff_script(tmp_path, 'printf "import os\\n" > "$last"\nexec sleep 30\n')
    env = project.env(PATH=os.pathsep.join([str(bindir), os.environ["PATH"]]))

    run = project.run_hook(project.payload("Write", mod), "--timeout", "0.3", env=env)

    assert run.returncode == 0
    line = _one_line(run.stderr)
    assert "did not finish within 0.3 s" in line and "put back as the edit left it" in line, line
    assert mod.read_text() == project.VIOLATING


def test_a_ruff_that_finishes_its_rewrite_in_the_grace_keeps_it_and_says_so(project, tmp_path):
    # Past the timeout, ruff gets the same grace to finish writing as on a
    # Ctrl-C; a rewrite it completes there is its fix, and the agent is told
    # to read the file again rather than that nothing happened.
    mod = project.write("pkg/mod.py", project.VIOLATING)
    bindir = _ruff_script(
        tmp_path,
        'fixed=$(cat "$last")\n: > "$last"\nsleep 0.35\n'
        'printf "%s\\n# rewritten\\n" "$fixed" > "$last"\necho \'[]\'\n',
    )
    env = project.env(PATH=os.pathsep.join([str(bindir), os.environ["PATH"]]))

    run = project.run_hook(project.payload("Write", mod), "--timeout", "0.3", env=env)

    assert run.returncode == 2  # the agent's copy of the file is stale: it must see the line
    line = _one_line(run.stderr)
    assert "did not finish within 0.3 s" in line and "read it again" in line, line
    assert mod.read_text() == project.VIOLATING + "# rewritten\n"


def test_contract_config_error_does_not_block(project) -> None:
    mod = project.write("pkg/mod.py", project.CLEAN)
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('kind = "keyword-only"', 'kind = "no-such-kind"')
    )

    run = project.run_hook(project.payload("Write", mod))

    assert run.returncode == 0
    line = _one_line(run.stderr)
    assert "contracts not checked" in line and "no-such-kind" in line


def test_lint_external_is_what_keeps_a_contract_noqa_alive(project) -> None:
    # ruff's RUF102 (invalid code in a noqa) has a safe fix: delete the comment.
    # The project's `external = ["AC"]` is what stops the hook's `--fix` from
    # deleting a contract suppression -- and the finding then coming back.
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"W", "B"]', '"W", "B", "RUF"]'))
    suppressed = project.CLEAN.replace(
        "def allocate_kv_cache_tensors(self, *, blocks):",
        "def allocate_kv_cache_tensors(self, blocks):  # noqa: AC101 -- legacy caller",
    )
    mod = project.write("pkg/mod.py", suppressed)

    kept = project.run_hook(project.payload("Edit", mod))
    assert (kept.returncode, kept.stderr) == (0, "")
    assert mod.read_text() == suppressed

    pyproject.write_text(pyproject.read_text().replace('external = ["AC"]\n', ""))
    lost = project.run_hook(project.payload("Edit", mod))
    assert "# noqa" not in mod.read_text()
    assert lost.returncode == 2
    assert AC101_LINE.search(lost.stderr), lost.stderr


def test_declared_exclude_keeps_contracts_off_the_file(project) -> None:
    pyproject = project.root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace('src = ["."]', 'src = ["."]\nexclude = ["pkg/generated/"]')
    )
    source = project.VIOLATING.replace("import os\n", "").replace("        unused = 1\n", "")
    mod = project.write("pkg/generated/mod.py", source)

    run = project.run_hook(project.payload("Write", mod))

    assert (run.returncode, run.stderr) == (0, "")


def test_a_builtin_finding_names_its_documentation_not_an_empty_contract(project) -> None:
    mod = project.write("pkg/mod.py", "def allocate_kv_cache_tensors(self, blocks:\n    pass\n")
    run = project.run_hook(project.payload("Write", mod), "--no-ruff")
    assert run.returncode == 2, run.stderr
    (line,) = [x for x in run.stderr.splitlines() if ": AC001 " in x]
    assert "contract ``" not in line
    assert line.endswith("(see `atom-contracts explain AC001`)"), line


def test_an_edit_that_fails_a_test_elsewhere_is_reported_with_the_test(make_project) -> None:
    # `import triton` added to a module a test imports: the AC601 lands on the test, which
    # the edit did not touch. `atom-contracts check pkg/ops.py` reports it; so does the hook,
    # naming the file it sits in and the edit that caused it.
    from .conftest import RUFF, Project

    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": "def rope():\n    return 1\n",
        "tests/__init__.py": "",
        "tests/test_ops.py": "from pkg.ops import rope\n\n\ndef test_rope():\n    assert rope()\n",
    }
    laid = make_project("skip-triton", at="consumer", name="consumer", before=RUFF, files=files)
    project = Project(laid.root)
    edit = "import triton\n\nKERNEL = triton.jit\n\n\ndef rope():\n    return 1\n"
    ops = project.write("pkg/ops.py", edit)
    before = project.snapshot()
    run = project.run_hook(project.payload("Write", ops, content=edit))
    assert run.returncode == 2, run.stderr
    lines = [line for line in run.stderr.splitlines() if ": AC601 " in line]
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("tests/test_ops.py:1:1: AC601 tests/test_ops.py imports pkg.ops")
    assert "reached through pkg/ops.py" in lines[0]
    assert "caused by this edit" in lines[0]
    assert (
        "pkg/ops.py: 1 problem left after ruff's safe fixes, 1 of them in other files this edit breaks."
        in run.stderr
    )
    assert project.snapshot() == before  # the test is reported, never touched
    # A clean edit of the same module says nothing of the test.
    ops.write_text("def rope():\n    return 2\n")
    quiet = project.run_hook(project.payload("Write", ops, content=ops.read_text()))
    assert quiet.returncode == 0 and "AC601" not in quiet.stderr, quiet.stderr
