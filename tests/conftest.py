"""Shared fixtures: paths to the ParaRecover sample shipped inside the package."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from replan.samples import PARARECOVER_SAMPLE, PARARECOVER_SAMPLE_FILES

REPO = Path(__file__).resolve().parents[1]
# helpers shared by test files in several folders (imported by module name: importlib mode)
if str(REPO / "tests" / "helpers") not in sys.path:
    sys.path.insert(0, str(REPO / "tests" / "helpers"))
SAMPLE = PARARECOVER_SAMPLE
SAMPLE_FILES = list(PARARECOVER_SAMPLE_FILES)


def require_data(path: Path) -> None:
    """Skip when a data file is absent; under ``CI=true`` a missing data file fails instead."""
    if path.exists():
        return
    msg = f"data file not found: {path}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(msg + " (CI=true: missing data is a failure, not a skip)")
    pytest.skip(msg)


@pytest.fixture(scope="session")
def sample_files() -> list[Path]:
    for p in SAMPLE_FILES:
        require_data(p)
    return SAMPLE_FILES
