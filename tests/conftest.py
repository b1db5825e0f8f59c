"""Suite-wide settings: hypothesis profiles and the shared schema folder.

The "ci" profile (selected when CI=true) keeps the whole property suite
inside its budget on two cores; "dev" runs more examples locally. Deadlines
are off in both: these shared machines make per-example timing noise, and
timing is measured in bench/, never asserted.
"""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings

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
# A suite started from a pre-commit hook inherits PRE_COMMIT=1, which turns the
# CLI's summary off (tests/checkers/test_cli.py says why); tests that want it set it.
os.environ.pop("PRE_COMMIT", None)
