"""The progress line of a long run: every 200 files checked, then the total with a newline."""

from __future__ import annotations

from checkers import api
from checkers.linter import Linter

from ..scaffold import write_tree

PYPROJECT = (
    "[tool.atom-contracts]\n"
    "[[tool.atom-contracts.contracts]]\n"
    'id = "blocks-keyword-only"\nkind = "keyword-only"\n'
    'functions = ["allocate_kv_cache_tensors"]\nparameters = ["blocks"]\n'
)


def test_a_run_in_one_process_reports_every_200_files_and_the_total(tmp_path, capsys):
    files = {f"pkg/m{i:03}.py": f"X = {i}\n" for i in range(401)}
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", **files})
    config = api.load_config(tmp_path, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    todo = [(rel, str(tmp_path / rel)) for rel in sorted(files)]
    results = linter.check_files(todo, jobs=1, progress=True)
    assert len(results) == 401
    assert capsys.readouterr().err == (
        "\ratom-contracts: 200/401 files"
        "\ratom-contracts: 400/401 files"
        "\ratom-contracts: 401/401 files\n"
    )


def test_no_progress_line_unless_asked(tmp_path, capsys):
    write_tree(tmp_path, {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "", "pkg/a.py": ""})
    config = api.load_config(tmp_path, use_cache=False)
    linter = Linter(config, api.selection_for(config))
    linter.check_files([("pkg/a.py", str(tmp_path / "pkg/a.py"))], jobs=1)
    assert capsys.readouterr().err == ""
