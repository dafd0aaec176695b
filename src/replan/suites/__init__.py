"""Benchmark task suites: ``load_suite(name, **options) -> list[Task]`` and ``list_suites()``.

Each suite is one module of this package (or a plugin, see :mod:`replan.core.registry`) whose
loader registers it with :func:`~replan.suites.suite.suite`: ``toolmaze`` (C1–C4 × {NP, P1–P4},
generated from the corpus), ``pararecover`` (the upstream ParaRecover files, option ``path``),
``pararecover-synth`` (ParaRecover-style replan points injected into ToolMaze gold paths).
``replan suites list`` shows each one's options. Every suite has a version and a content digest
(:mod:`replan.suites.versions`); the generated suites load from their frozen data files.
"""

from __future__ import annotations

from typing import Any

from replan.core.task import Task
from replan.suites.suite import SUITES, StatsTable, Suite, get_suite, suite
from replan.suites.versions import suite_digest, suite_identity, suite_version, suite_versions


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
    "suite_identity",
    "suite_version",
    "suite_versions",
]
