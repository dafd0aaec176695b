"""Benchmark task suites: ``load_suite(name, **options) -> list[Task]`` and ``list_suites()``.

Each suite is one module of this package (or a plugin, see :mod:`replan.core.registry`) whose
loader registers it with :func:`~replan.suites.suite.suite`: ``toolmaze`` (C1–C4 × {NP, P1–P4},
generated from the corpus), ``pararecover`` (the upstream ParaRecover files, option ``path``),
``pararecover-synth`` (ParaRecover-style replan points injected into ToolMaze gold paths).
``replan suites list`` shows each one's options.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replan.core.task import Task
from replan.suites.suite import SUITES, StatsTable, Suite, get_suite, suite

#: the pinned version and full-suite content digest of each generated suite (see ``suite_digest``)
VERSIONS_FILE = Path(__file__).with_name("versions.json")


def suite_versions() -> dict[str, dict[str, str]]:
    """``{suite: {"version", "digest"}}`` as pinned in ``versions.json``.

    The digest there is of the whole default suite (``toolmaze``: all 2,000 instances;
    ``pararecover-synth``: all 799). A change to the corpus or a generator changes it; a test
    regenerates each suite and fails until the version is bumped and the new digest pinned, so
    results from before and after a change are never taken for the same suite.
    """
    return json.loads(VERSIONS_FILE.read_text(encoding="utf-8"))


def suite_version(name: str) -> str:
    """The pinned version of suite ``name`` (``"1"`` for a suite with no entry)."""
    return suite_versions().get(name, {}).get("version", "1")


def suite_digest(tasks: Iterable[Task]) -> str:
    """Content digest of task instances: sha256 (first 16 hex digits) over each task's canonical
    JSON, in task-id order. Two runs whose tasks share a digest asked the agents the same thing,
    with the same tools, faults and checker; different digests are not comparable silently."""
    h = hashlib.sha256()
    for t in sorted(tasks, key=lambda t: t.task_id):
        h.update(json.dumps(t.model_dump(mode="json"), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def list_suites() -> list[dict[str, Any]]:
    """The suites ``load_suite`` knows: name, description, options, required option, where
    their instances start and their default designs."""
    return [s.describe() for _, s in SUITES.items()]


def load_suite(name: str, **options: Any) -> list[Task]:
    """The task instances of suite ``name`` (options ``None`` count as not given)."""
    s = get_suite(name)
    options = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(options) - set(s.options))
    if unknown:
        raise ValueError(
            f"suite {name!r} has no option {unknown[0]!r}; its options are {sorted(s.options)}"
        )
    for opt in s.requires:
        if opt not in options:
            help_ = f" ({s.requires_help})" if s.requires_help else ""
            raise ValueError(f"suite {name!r} needs {opt}=...{help_}")
    return s.load(**options)


__all__ = [
    "SUITES",
    "StatsTable",
    "Suite",
    "get_suite",
    "list_suites",
    "load_suite",
    "suite",
    "suite_digest",
    "suite_version",
    "suite_versions",
]
