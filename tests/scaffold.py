"""A user's project on disk: the one scaffold the hook, server, CLI and reliability tests run in.

Those tests run the checker as a user does -- a console script, a hook fed a
payload, a language server, pre-commit or flake8 in a project of its own -- so
each needs a throwaway project: a ``pyproject.toml`` declaring some contracts,
a package, perhaps tests and a git repository. They used to write that
project by hand, each its own copy of the same TOML and the same ``_git``
helper; here it is written once. The ``make_project`` fixture in
``tests/conftest.py`` lays one out under the test's ``tmp_path``.

The contracts a scaffold project may declare are named in ``CONTRACTS`` by
id, so a test that asserts ``contract `blocks-keyword-only``` and the project
it runs in agree on what that contract is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from checkers.rule_docs import toml_key, toml_value

# The contract tables scaffold projects declare, by id (each a real kind's table).
CONTRACTS: dict[str, dict] = {
    "blocks-keyword-only": {
        "kind": "keyword-only",
        "functions": ["allocate_kv_cache_tensors"],
        "parameters": ["blocks"],
    },
    "no-input-asserts": {"kind": "input-assert"},
    "plain-triton-imports": {
        "kind": "banned-import",
        "modules": {"vllm.triton_utils": "import triton directly"},
    },
    "skip-triton": {"kind": "importorskip", "module": "triton", "tests": ["tests/**"]},
    "leaf": {"kind": "leaf-package", "package": "pkg.leaf"},
    "retired": {"kind": "retired-name", "names": ["StateField"]},
    "decode-no-sync": {
        "kind": "reachable-calls",
        "entries": ["*"],
        "forbidden": {"*.item": "a host sync", "torch.cuda.synchronize": "a host sync"},
    },
    "published-keys": {"kind": "published-keys"},
    "units": {
        "kind": "units",
        "names": {"blocks": "block", "num_blocks": "page", "block_ratio": "page/block"},
    },
    "output-size": {
        "kind": "required-keyword",
        "calls": ["torch.repeat_interleave"],
        "keyword": "output_size",
    },
}

# `blocks` taken positionally: blocks-keyword-only's AC101 at line 2, column 41
# (1-based, on `blocks`).
BUILDER_VIOLATING = """\
class GdnBuilder:
    def allocate_kv_cache_tensors(self, blocks):
        return blocks
"""

# Commits in a scaffold repository never read the user's git configuration.
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "atom-contracts tests",
    "GIT_AUTHOR_EMAIL": "tests@atom-contracts.invalid",
    "GIT_COMMITTER_NAME": "atom-contracts tests",
    "GIT_COMMITTER_EMAIL": "tests@atom-contracts.invalid",
}


def contract(contract_id: str, **overrides) -> dict:
    """The table of ``CONTRACTS[contract_id]`` with its id, and ``overrides`` on top."""
    return {"id": contract_id, **CONTRACTS[contract_id], **overrides}


def pyproject(
    *contracts: str | Mapping,
    src: Iterable[str] | None = (".",),
    name: str | None = None,
    before: str = "",
    settings: Mapping | None = None,
) -> str:
    """A ``pyproject.toml`` declaring ``contracts`` (ids in ``CONTRACTS``, or whole tables).

    ``src=None`` leaves ``src`` out (the checker's default); ``settings`` are the
    table's other keys (``exclude``, ``per-file-ignores``, ``select``...); ``name``
    adds a ``[project]`` table; ``before`` is TOML put ahead of
    ``[tool.atom-contracts]`` (another tool's configuration).
    """
    parts = []
    if name is not None:
        parts.append(f'[project]\nname = "{name}"\nversion = "0"\n')
    if before:
        parts.append(before.rstrip("\n") + "\n")
    head = "[tool.atom-contracts]\n"
    if src is not None:
        head += f"src = {toml_value(list(src))}\n"
    head += "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in (settings or {}).items())
    parts.append(head)
    for entry in contracts:
        table = contract(entry) if isinstance(entry, str) else dict(entry)
        body = "".join(f"{toml_key(key)} = {toml_value(value)}\n" for key, value in table.items())
        parts.append("[[tool.atom-contracts.contracts]]\n" + body)
    return "\n".join(parts)


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    """Write each ``relpath: text`` under ``root`` (bytes as they are, text as UTF-8)."""
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with the scaffold's identity; its stdout, stripped."""
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_IDENTITY},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def pre_commit(cwd: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """``python -m pre_commit ARGS`` in ``cwd``, its environments under ``home``.

    The scaffold's git identity, and no inherited ``PRE_COMMIT`` (a suite run
    from a hook has it, and it turns the CLI's summary off)."""
    env = {**os.environ, **GIT_IDENTITY, "PRE_COMMIT_HOME": str(home)}
    env.pop("PRE_COMMIT", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@dataclass
class ProjectDir:
    """A scaffold project: its root, and the few things tests do to it."""

    root: Path

    def write(self, relpath: str, content: str | bytes) -> Path:
        write_tree(self.root, {relpath: content})
        return self.root / relpath

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the root and its bytes (new files, caches included)."""
        return {
            p.relative_to(self.root).as_posix(): p.read_bytes()
            for p in sorted(self.root.rglob("*"))
            if p.is_file()
        }

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def commit_all(self, message: str = "scaffold") -> str:
        """``git init`` (once), add everything, commit; the new commit's id."""
        if not (self.root / ".git").exists():
            self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")


def lay_out(
    root: Path,
    *contracts: str | Mapping,
    files: Mapping[str, str | bytes] | None = None,
    src: Iterable[str] | None = (".",),
    name: str | None = None,
    before: str = "",
    settings: Mapping | None = None,
) -> ProjectDir:
    """Write a ``pyproject.toml`` declaring ``contracts`` and ``files`` under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    project = ProjectDir(root.resolve())
    toml = pyproject(*contracts, src=src, name=name, before=before, settings=settings)
    write_tree(project.root, {"pyproject.toml": toml, **(files or {})})
    return project
