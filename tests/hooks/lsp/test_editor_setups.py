"""docs/editors.md's set-ups: each parses, each launches `atom-contracts server`, which speaks LSP.

The editors themselves are mostly not installable here; what can be checked
without them is checked for every one: the block's syntax (with the parser
its editor uses where that is on PATH), the command it launches, and that
command started and initialized over stdio as an editor would. Neovim, where
installed, runs the server through its own LSP client, headless.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import make_test_lsp_client

REPO = Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "editors.md"
COMMAND = ["atom-contracts", "server"]
HEADLESS = REPO / "docs" / "editors" / "neovim_headless.lua"
EMACS = REPO / "docs" / "editors" / "emacs_jsonrpc.el"


def blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```$", text, flags=re.S | re.M)


def console_script() -> str:
    """The `atom-contracts` of this environment (the one the editors' PATH would name)."""
    here = Path(sys.executable).parent / "atom-contracts"
    found = str(here) if here.exists() else shutil.which("atom-contracts")
    if found is None:
        pytest.skip("no atom-contracts console script in this environment")
    return found


def test_every_editor_has_its_block():
    assert len(blocks("lua")) == 1
    assert len(blocks("toml")) == 1
    assert len(blocks("elisp")) == 1
    assert len(blocks("json")) == 2  # Zed, VS Code


def test_helix_block_parses_and_launches_the_server():
    (block,) = blocks("toml")
    config = tomllib.loads(block)
    server = config["language-server"]["atom-contracts"]
    assert [server["command"], *server["args"]] == COMMAND
    (python,) = [lang for lang in config["language"] if lang["name"] == "python"]
    assert "atom-contracts" in python["language-servers"]


def test_zed_and_vscode_blocks_parse_and_launch_the_server():
    zed, vscode = (json.loads(b) for b in blocks("json"))
    binary = zed["lsp"]["atom-contracts"]["binary"]
    assert [binary["path"], *binary["arguments"]] == COMMAND
    assert "atom-contracts" in zed["languages"]["Python"]["language_servers"]
    assert [vscode["glspc.server.command"], *vscode["glspc.server.commandArguments"]] == COMMAND
    assert vscode["glspc.server.languageId"] == ["python"]


def test_neovim_and_emacs_blocks_launch_the_server():
    (lua,) = blocks("lua")
    assert 'cmd = { "atom-contracts", "server" }' in lua
    (elisp,) = blocks("elisp")
    assert '("atom-contracts" "server")' in elisp


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed")
def test_neovim_block_is_valid_lua(tmp_path):
    (lua,) = blocks("lua")
    script = tmp_path / "config.lua"
    script.write_text(lua, encoding="utf-8")
    # Compiled by Neovim's own Lua, not run (0.7, Debian's, lacks vim.lsp.config).
    done = subprocess.run(
        [
            "nvim",
            "--headless",
            "-u",
            "NONE",
            "-c",
            f"lua assert(loadfile([[{script}]]))",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    broken = tmp_path / "broken.lua"
    broken.write_text(lua.replace("})", "}", 1), encoding="utf-8")
    done = subprocess.run(
        [
            "nvim",
            "--headless",
            "-u",
            "NONE",
            "-c",
            f"lua assert(loadfile([[{broken}]]))",
            "-c",
            "qa!",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 or "Error" in done.stderr + done.stdout  # the check can fail


@pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")
def test_emacs_block_loads(tmp_path):
    (elisp,) = blocks("elisp")
    init = tmp_path / "init.el"
    # Loaded, not only read: its forms run (eglot's part waits for eglot to load).
    init.write_text(
        elisp + '\n(princ (if (memq #\'eglot-ensure python-mode-hook) "hooked" "no"))\n'
    )
    done = subprocess.run(
        ["emacs", "--batch", "-Q", "-l", str(init)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hooked"


def project(root: Path) -> Path:
    """A declaration and one file with one AC101 (line 2, column 41)."""
    (root / "pyproject.toml").write_text(
        '[tool.atom-contracts]\nsrc = ["."]\n\n[[tool.atom-contracts.contracts]]\n'
        'id = "blocks-keyword-only"\nkind = "keyword-only"\n'
        'functions = ["allocate_kv_cache_tensors"]\nparameters = ["blocks"]\n',
        encoding="utf-8",
    )
    path = root / "builder.py"
    path.write_text(
        "class B:\n    def allocate_kv_cache_tensors(self, blocks):\n        return blocks\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.skipif(shutil.which("emacs") is None, reason="emacs is not installed")
def test_emacs_jsonrpc_the_library_eglot_is_built_on_gets_the_diagnostics(tmp_path):
    project(tmp_path)
    env = {**os.environ, "ATOM_CONTRACTS_SERVER": f"{console_script()} server"}
    done = subprocess.run(
        ["emacs", "--batch", "-Q", "-l", str(EMACS), "builder.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("diagnostic 2:41 AC101 ")


@pytest.mark.asyncio
@pytest.mark.parametrize("extra", [[], ["--stdio"]])
async def test_the_command_speaks_lsp_over_stdio(tmp_path, extra):
    client = make_test_lsp_client()
    await client.start_io(console_script(), *COMMAND[1:], *extra, cwd=str(tmp_path))
    try:
        result = await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=from_fs_path(str(tmp_path)),
            )
        )
        caps = result.capabilities
        assert result.server_info.name == "atom-contracts"
        assert caps.text_document_sync is not None
        assert caps.code_action_provider is not None
        assert caps.hover_provider
        assert caps.diagnostic_provider.workspace_diagnostics
    finally:
        await client.shutdown_session()
        await client.stop()
    assert client.error is None


@pytest.mark.skipif(shutil.which("nvim") is None, reason="nvim is not installed")
def test_neovim_runs_the_server_headless(tmp_path):
    project(tmp_path)
    env = {**os.environ, "ATOM_CONTRACTS_SERVER": f"{console_script()} server"}
    done = subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-c", f"luafile {HEADLESS}", "builder.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "diagnostic 2:41 AC101" in done.stdout
    assert "action quickfix Suppress AC101 on this line, with a reason" in done.stdout
