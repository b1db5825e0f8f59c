"""The CI contract job runs commands our CLI accepts, and their output parses.

A workflow is only checked by GitHub once it is pushed; a flag renamed in the
CLI would otherwise surface as a red job on the next pull request. So every
``atom-contracts`` command in ``.github/workflows/contracts.yml`` is lifted
out of its step and run for real, in a throwaway repository with a contract,
a base branch and a violation committed after it, and what it prints is
parsed in the format the next step (reviewdog, the SARIF upload, GitHub's
annotations) expects.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_SCHEMAS = REPO_ROOT.parent / "shared" / "schemas"
WORKFLOW = REPO_ROOT / ".github" / "workflows" / "contracts.yml"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _steps() -> list[dict]:
    return [step for job in _workflow()["jobs"].values() for step in job["steps"]]


def _shell_commands() -> list[str]:
    """Each pipeline stage of every `run:` script, line continuations joined."""
    out = []
    for step in _steps():
        script = step.get("run", "").replace("\\\n", " ")
        for line in script.splitlines():
            out.extend(stage.strip() for stage in line.split("|") if stage.strip())
    return out


def _contract_commands() -> list[tuple[list[str], str | None]]:
    """(argv after `atom-contracts`, the file stdout is redirected to, if any)."""
    found = []
    for command in _shell_commands():
        if not command.startswith("atom-contracts "):
            continue
        redirect = None
        if ">" in command:
            command, _, redirect = command.partition(">")
            redirect = redirect.strip()
        argv = shlex.split(command)[1:]
        found.append((argv, redirect))
    return found


def test_triggers_and_jobs() -> None:
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert "pull_request" in triggers and "push" in triggers
    runs = " ".join(_shell_commands())
    assert "--diff-base" in runs
    assert "pytest tests/atom" in runs
    assert (REPO_ROOT / "tests" / "atom").is_dir()


def test_reviewdog_reads_rdjson_filtered_to_diff_context() -> None:
    reviewdog = [c for c in _shell_commands() if c.startswith("reviewdog ")]
    assert len(reviewdog) == 1
    flags = shlex.split(reviewdog[0])
    for flag in ("-f=rdjson", "-reporter=github-pr-review", "-filter-mode=diff_context"):
        assert flag in flags
    producer = [argv for argv, _ in _contract_commands() if "rdjson" in argv]
    assert producer and "--diff-base" in producer[0]


def test_sarif_upload_reads_the_file_the_check_writes() -> None:
    uploads = [
        s for s in _steps() if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")
    ]
    assert len(uploads) == 1
    written = [redirect for argv, redirect in _contract_commands() if "sarif" in argv]
    assert written == [uploads[0]["with"]["sarif_file"]]


@pytest.fixture
def repo(make_project) -> Path:
    """A repository whose `origin/main` is clean and whose HEAD adds a violation."""
    old = "def allocate_kv_cache_tensors(self, blocks):\n    pass\n"
    files = {"pkg/__init__.py": "", "pkg/old.py": old}
    project = make_project("blocks-keyword-only", at="repo", src=None, files=files)
    project.git("init", "-q", "-b", "main")
    project.commit_all("base")
    project.git("update-ref", "refs/remotes/origin/main", "HEAD")
    project.write("pkg/new.py", "def allocate_kv_cache_tensors(blocks):\n    pass\n")
    project.commit_all("violation")
    return project.root


def _run_cli(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    # BASE_REF is the step's env: the pull request's base branch.
    argv = [a.replace("$BASE_REF", "main") for a in argv]
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from checkers.cli import main; sys.exit(main())",
            *argv,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _validate(document: dict, schema_file: Path, missing: list[str]) -> None:
    """Validate against a shared schema; note it as missing (to skip at the end) when absent,
    so the format's other checks still run."""
    if not schema_file.exists():
        missing.append(str(schema_file))
        return
    import jsonschema

    # Every draft's formats (SARIF's draft-04 checker knows no "uri-reference"): its URIs
    # are checked as RFC 3986 references, by the test extra's rfc3986-validator.
    formats = jsonschema.FormatChecker()
    assert "uri-reference" in formats.checkers, "rfc3986-validator is missing"
    jsonschema.validate(document, json.loads(schema_file.read_text()), format_checker=formats)


def test_every_contract_command_runs_and_its_output_parses(repo: Path) -> None:
    commands = _contract_commands()
    assert len(commands) >= 3
    missing: list[str] = []
    for argv, _ in commands:
        run = _run_cli(argv, repo)
        label = shlex.join(argv)
        assert "Traceback" not in run.stderr, label + run.stderr
        fmt = argv[argv.index("--output-format") + 1] if "--output-format" in argv else "concise"
        if "--exit-zero" in argv:
            assert run.returncode == 0, label + run.stderr
        else:
            assert run.returncode == 1, label + run.stdout + run.stderr  # the tree has findings
        if fmt == "rdjson":
            document = json.loads(run.stdout)
            _validate(document, SHARED_SCHEMAS / "reviewdog" / "DiagnosticResult.json", missing)
            paths = {d["location"]["path"] for d in document["diagnostics"]}
            # --diff-base origin/main: only the file the branch added.
            assert paths == {"pkg/new.py"}, label
        elif fmt == "sarif":
            document = json.loads(run.stdout)
            assert document["version"] == "2.1.0"
            _validate(document, SHARED_SCHEMAS / "sarif" / "sarif-schema-2.1.0.json", missing)
            results = document["runs"][0]["results"]
            assert {r["ruleId"] for r in results} == {"AC101"}
            assert len(results) == 2, label  # the whole tree: old and new
        elif fmt == "github":
            lines = run.stdout.splitlines()
            assert len(lines) == 2 and all(re.match(r"::(error|warning) ", ln) for ln in lines), (
                run.stdout
            )
        else:
            pytest.fail(f"no parser for the output of {label}")
    if missing:
        pytest.skip(f"outputs parsed, but not schema-validated: {', '.join(missing)} absent")
