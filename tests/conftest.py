"""Suite-wide settings: hypothesis profiles, the shared schema folder, the project scaffold.

The "ci" profile (selected when CI=true) keeps the whole property suite
inside its budget on two cores; "dev" runs more examples locally. Deadlines
are off in both: these shared machines make per-example timing noise, and
timing is measured in bench/, never asserted.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from .scaffold import lay_out

settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

REPO_ROOT = Path(__file__).resolve().parents[1]
# CI lays shared/ beside the clone; the schemas are read from there, never copied in.
SHARED_SCHEMAS = REPO_ROOT.parent / "shared" / "schemas"


def bench_module(name: str):
    """A script of ``bench/`` loaded as a module (``bench`` is no package), under
    ``bench_<name>`` in ``sys.modules``: dataclasses look their module up by name."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", REPO_ROOT / "bench" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# A suite started from a pre-commit hook inherits PRE_COMMIT=1, which turns the
# CLI's summary off (tests/checkers/test_cli.py says why); tests that want it set it.
os.environ.pop("PRE_COMMIT", None)


@pytest.fixture
def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A user's project on disk, laid out by ``tests/scaffold.py``'s ``lay_out``.

    ``make_project("blocks-keyword-only", files={...}, at="consumer", chdir=True)``
    writes the pyproject declaring those contracts and the files under
    ``tmp_path / at`` (``tmp_path`` itself without ``at``) and returns its
    ``ProjectDir``; ``chdir`` makes it the working directory for the test.
    """

    def make(*contracts, at: str | None = None, chdir: bool = False, **layout):
        project = lay_out(tmp_path / at if at else tmp_path, *contracts, **layout)
        if chdir:
            monkeypatch.chdir(project.root)
        return project

    return make


@pytest.fixture
def record_parses(monkeypatch: pytest.MonkeyPatch):
    """Call it to start recording the file name of every ``ast.parse`` from then on (what a
    test of "this file is not parsed" counts); it returns the list the names go to."""
    import ast

    def start() -> list[str]:
        seen: list[str] = []
        real = ast.parse

        def recording(text, filename="<unknown>", *args, **kwargs):
            seen.append(str(filename))
            return real(text, filename, *args, **kwargs)

        monkeypatch.setattr(ast, "parse", recording)
        return seen

    return start
