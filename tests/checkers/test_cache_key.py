"""The cache's key is the same on a fresh clone, so a CI cache restored by actions/cache hits.

Every clone gives every file a new mtime. A key made of the checker's module
stats (as it was) missed on every CI run, whatever the workflow restored.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from checkers import cache

REPO = Path(__file__).resolve().parents[2]


def _clone(tmp_path: Path, name: str) -> Path:
    """A copy of the checker's module folders, as a fresh checkout lays them out."""
    root = tmp_path / name
    shutil.copytree(
        REPO / "checkers", root / "checkers", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(
        REPO / "contracts", root / "contracts", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def _fingerprint(monkeypatch, root: Path, directory: Path | None = None) -> str:
    monkeypatch.setattr(cache, "__file__", str(root / "checkers" / "cache.py"))
    return cache.checker_fingerprint(directory)


def test_the_key_follows_the_modules_bytes_not_their_mtimes(tmp_path, monkeypatch):
    one, two = _clone(tmp_path, "one"), _clone(tmp_path, "two")
    for folder, _, files in os.walk(two):
        for name in files:
            os.utime(os.path.join(folder, name), (1_000_000_000, 1_000_000_000))
    assert _fingerprint(monkeypatch, one) == _fingerprint(monkeypatch, two)
    rule = two / "checkers" / "rules" / "importorskip.py"
    rule.write_bytes(rule.read_bytes() + b"\n")
    assert _fingerprint(monkeypatch, one) != _fingerprint(monkeypatch, two)


@pytest.mark.parametrize(
    "module",
    ["checkers/rules/importorskip.py", "checkers/analysis/unit_algebra.py", "contracts/fields.py"],
)
def test_an_edit_to_any_module_the_checker_runs_changes_the_key(tmp_path, monkeypatch, module):
    # A release that changes only how a kind analyses code must not be answered from the
    # findings and summaries an older analysis cached.
    root = _clone(tmp_path, "clone")
    before = _fingerprint(monkeypatch, root)
    edited = root / module
    edited.write_bytes(edited.read_bytes() + b"\n")
    assert _fingerprint(monkeypatch, root) != before


def test_what_is_no_module_of_a_package_leaves_the_key_alone(tmp_path, monkeypatch):
    root = _clone(tmp_path, "clone")
    before = _fingerprint(monkeypatch, root)
    (root / "checkers" / "notes.txt").write_text("a maintainer's scratch file\n")
    (root / "checkers" / "analysis" / "README").write_text("not Python\n")
    (root / "checkers" / "build-tmp").mkdir()  # no package: its name is no identifier
    (root / "checkers" / "build-tmp" / "copy.py").write_text("x = 1\n")
    (root / "contracts" / "__pycache__").mkdir(exist_ok=True)
    (root / "contracts" / "__pycache__" / "stray.py").write_text("x = 1\n")
    assert _fingerprint(monkeypatch, root) == before


def test_a_warm_run_reads_the_remembered_digest_instead_of_the_modules(tmp_path, monkeypatch):
    root = _clone(tmp_path, "clone")
    memo_dir = tmp_path / "cache"
    memo_dir.mkdir()
    real = _fingerprint(monkeypatch, root, memo_dir)
    memo = memo_dir / "checker.fingerprint"
    stat_key, digest = memo.read_text().split()
    assert digest == real
    # The same stats: the remembered digest is what comes back, modules unread.
    memo.write_text(f"{stat_key} {'0' * 32}\n")
    assert _fingerprint(monkeypatch, root, memo_dir) == "0" * 32
    # Another stat (an edit, a reinstall): the modules are read again.
    rule = root / "checkers" / "rules" / "importorskip.py"
    os.utime(rule, (1_000_000_000, 1_000_000_000))
    assert _fingerprint(monkeypatch, root, memo_dir) == real


def test_the_workflow_restores_and_saves_the_cache_keyed_on_config_and_checker():
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "contracts.yml").read_text())
    steps = workflow["jobs"]["contracts"]["steps"]
    names = [s.get("uses", "") for s in steps]
    at = next(i for i, uses in enumerate(names) if uses.startswith("actions/cache@"))
    first_check = next(i for i, s in enumerate(steps) if "atom-contracts check" in s.get("run", ""))
    assert at < first_check, "the cache must be restored before the first check"
    with_ = steps[at]["with"]
    assert with_["path"] == cache.CACHE_DIR
    for part in ("pyproject.toml", "checkers/**/*.py", "contracts/**/*.py", "github.sha"):
        assert part in with_["key"]
    assert with_["key"].rsplit("-", 1)[0] + "-" in with_["restore-keys"]
