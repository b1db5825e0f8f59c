"""`import contracts` never reaches the runtime checks, torch or the engine; the layout command
answers --help without torch."""

from __future__ import annotations

import subprocess
import sys


def _loaded_after(statement: str) -> set[str]:
    probe = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_import_contracts_loads_neither_runtime_nor_torch_nor_atom():
    loaded = _loaded_after("import contracts")
    assert "contracts.runtime" not in loaded
    assert "torch" not in loaded
    assert not any(m == "atom" or m.startswith("atom.") for m in loaded)


def test_layout_command_module_imports_and_answers_help_without_torch():
    loaded = _loaded_after(
        "import atom.layout_command as c; c._layout_parser().format_help(); c.EngineConfig()"
    )
    assert "torch" not in loaded


def test_contracts_runtime_is_importable_explicitly():
    loaded = _loaded_after("import contracts.runtime")
    assert {"contracts.runtime.checks", "torch", "atom.runner.model_runner"} <= loaded
