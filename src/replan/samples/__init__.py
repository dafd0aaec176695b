"""Data shipped inside the package, so examples and tests work from any checkout or install.

``pararecover-sample/`` is an unchanged excerpt of the ParaRecover benchmark (MIT; see its
``SOURCE.md`` for the upstream commit, how lines were selected, and the license text).
"""

from __future__ import annotations

from pathlib import Path

PARARECOVER_SAMPLE: Path = Path(__file__).resolve().parent / "pararecover-sample"
"""Directory of the shipped ParaRecover excerpt (``LEVEL-1/``, ``LEVEL-2/``, ``SOURCE.md``)."""

PARARECOVER_SAMPLE_FILES: tuple[Path, ...] = (
    PARARECOVER_SAMPLE / "LEVEL-1" / "LEVEL-1_real_rollout.jsonl",
    PARARECOVER_SAMPLE / "LEVEL-1" / "LEVEL-1_augmented.jsonl",
    PARARECOVER_SAMPLE / "LEVEL-2" / "LEVEL-2_real_rollout.jsonl",
)
"""The three sample files, in the order the tests and notebooks use them."""
