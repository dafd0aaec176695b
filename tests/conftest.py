"""Shared fixtures: paths to the ParaRecover sample shipped beside the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO.parent / "shared" / "datasets" / "pararecover-sample"
SAMPLE_FILES = [
    SAMPLE / "LEVEL-1" / "LEVEL-1_real_rollout.jsonl",
    SAMPLE / "LEVEL-1" / "LEVEL-1_augmented.jsonl",
    SAMPLE / "LEVEL-2" / "LEVEL-2_real_rollout.jsonl",
]


@pytest.fixture(scope="session")
def sample_files() -> list[Path]:
    missing = [p for p in SAMPLE_FILES if not p.exists()]
    if missing:
        pytest.skip(f"ParaRecover sample not found beside the repository: {missing[0]}")
    return SAMPLE_FILES
