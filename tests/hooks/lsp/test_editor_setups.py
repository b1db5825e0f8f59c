"""docs/editors.md's set-ups: each parses, each launches `atom-contracts server`, which speaks LSP.

What can be checked without an editor is checked for every one: the block's
syntax (with the parser its editor uses where that is on PATH), the command
it launches, and that command started and initialized over stdio as an
editor would. Where the editor is installed it runs the server itself:
Neovim through its built-in client, headless; Emacs through eglot in batch
(Emacs 29's own eglot, or Debian's elpa-eglot on Emacs 28), loaded with the
page's own block, showing what a user is shown -- the diagnostics, the hover,
the code actions on a statement, a setting changed at run time, and a file
eglot cannot send. Where they are not, those tests skip and say which package
to install (.ci/run installs Emacs where it can).
"""

from __future__ import annotations

import functools
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
EGLOT = REPO / "docs" / "editors" / "emacs_eglot.el"


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


@functools.cache
def eglot_missing() -> str | None:
    """Why the eglot tests cannot run here, or None: Emacs is installed and loads eglot."""
    if shutil.which("emacs") is None:
        return "emacs is not installed (Debian: apt-get install emacs-nox elpa-eglot)"
    done = emacs("--eval", "(progn (require 'eglot) (princ emacs-version))")
    if done.returncode != 0:
        return "this emacs has no eglot (built in since Emacs 29; on Emacs 28, Debian's elpa-eglot)"
    return None


def needs_eglot() -> None:
    reason = eglot_missing()
    if reason is not None:
        pytest.skip(reason)


def emacs(*args: str, cwd: Path | None = None, env=None) -> subprocess.CompletedProcess:
    """Emacs in batch, started as a user's Emacs starts before their init file runs: the
    site's files, then the installed packages activated (their autoloads: Debian's
    elpa-eglot is one, and ``eglot-ensure`` is void until then), then ``args``."""
    return subprocess.run(
        ["emacs", "--batch", "-q", "--eval", "(package-activate-all)", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_emacs_block_makes_eglot_launch_the_server(tmp_path):
    needs_eglot()
    (elisp,) = blocks("elisp")
    init = tmp_path / "init.el"
    init.write_text(elisp, encoding="utf-8")
    # Loaded, then eglot: the command eglot would start for a Python buffer (the first
    # entry of eglot-server-programs whose modes include python-mode, as eglot picks).
    done = emacs(
        "-l",
        str(init),
        "--eval",
        "(progn (require 'eglot)"
        ' (princ (format "%S %S" (memq #\'eglot-ensure python-mode-hook)'
        " (cdr (seq-find (lambda (e) (and (listp (car e)) (memq 'python-mode (car e))))"
        " eglot-server-programs))))))",
    )
    assert done.returncode == 0, done.stderr
    hooked, _, contact = done.stdout.partition(" ")
    assert hooked != "nil"
    assert contact == '("atom-contracts" "server")'


# AC301 on the condition (line 2, column 12); the statement runs to line 4.
POOL = """\
def max_block(max_model_len, block_size):
    assert max_model_len % block_size == 0, (
        "block size must divide the length"
    )
    return max_model_len // block_size
"""
AC301 = (
    "AC301 `assert` validates input (parameter `max_model_len` of `max_block`); `python -O` "
    "strips it and the bad value goes through silently: raise ValueError naming the value "
    "instead (contract `no-input-asserts`)"
)
AC301_ACTIONS = (
    "Unsafe fix: Raise ValueError instead of asserting (AC301) -- review the change"
    " | Suppress AC301 on this line, with a reason"
)


def test_emacs_eglot_shows_what_the_server_says(tmp_path):
    """eglot, started by the page's block, as a user meets it: each line is one thing shown."""
    needs_eglot()
    (elisp,) = blocks("elisp")
    (tmp_path / "init.el").write_text(elisp, encoding="utf-8")
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.atom-contracts]\nsrc = ["."]\n\n[[tool.atom-contracts.contracts]]\n'
        'id = "no-input-asserts"\nkind = "input-assert"\n',
        encoding="utf-8",
    )
    (root / "pool.py").write_text(POOL, encoding="utf-8")
    (root / "blob.py").write_bytes(b"x = 1\n\xff\xfe\x00binary\x80\n")
    bin_dir = str(Path(console_script()).parent)  # this environment's atom-contracts first
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = emacs(
        "-l", str(tmp_path / "init.el"), "-l", str(EGLOT), "pool.py", "blob.py", cwd=root, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        f"diagnostic 2:12 {AC301}",
        # Plain text, which eglot asks for where markdown-mode is not installed.
        "hover plaintext AC301 input-assert -- contract no-input-asserts",
        # The cursor on `assert`, and eglot's own bounds at the statement's end: both
        # outside the condition the diagnostic underlines.
        f"actions keyword: {AC301_ACTIONS}",
        f"actions end: {AC301_ACTIONS}",
        # debounceMs 10000 sent: the edit's check waits; 0 sent: it runs, and the one
        # held back with it (each edit adds an AC301).
        "settings debounceMs 10000: 1",
        "settings debounceMs 0: 3",
        # eglot cannot send a buffer of raw bytes; the server reads the file's.
        "undecodable 1:1 AC001 cannot be decoded: line 2: byte b'\\xff' is not valid utf-8"
        " (the default)",
    ]


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
