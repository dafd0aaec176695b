"""Benchmark task suites: ``load_suite(name, **options) -> list[Task]`` and ``list_suites()``.

- ``toolmaze``: C1–C4 × {NP, P1–P4}, generated from the corpus (options: ``levels``, ``modes``,
  ``limit`` base tasks per level, ``seed``, ``per_level``).
- ``pararecover``: the upstream ParaRecover files (option ``path``: a ``.jsonl`` file or a
  directory, e.g. one filled by ``replan data pararecover``; ``levels``, ``limit``).
- ``pararecover-synth``: ParaRecover-style instances with exact ground truth, injected into
  ToolMaze gold paths (options: ``n_level1``, ``n_level2``, ``levels``, ``limit``, ``seed``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from replan.core.task import MODES, Task

#: the pinned version and full-suite content digest of each generated suite (see ``suite_digest``)
VERSIONS_FILE = Path(__file__).with_name("versions.json")

_SUITES: dict[str, dict[str, Any]] = {
    "toolmaze": {
        "description": "ToolMaze-style C1–C4 tasks × NP, P1–P4 (400 base tasks, 2,000 instances)",
        "options": ["levels", "modes", "limit", "seed", "per_level"],
        "requires": None,
    },
    "pararecover": {
        "description": "ParaRecover LEVEL-1 / LEVEL-2 instances from the upstream .jsonl files",
        "options": ["path", "levels", "limit"],
        "requires": "path",
    },
    "pararecover-synth": {
        "description": "ParaRecover-style replan points with known errors, from ToolMaze gold paths",
        "options": ["n_level1", "n_level2", "levels", "limit", "seed"],
        "requires": None,
    },
}


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
    """The suites ``load_suite`` knows: name, description, options, required option."""
    return [{"name": k, **v} for k, v in _SUITES.items()]


def _check_options(name: str, options: dict[str, Any]) -> None:
    allowed = set(_SUITES[name]["options"])
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise ValueError(
            f"suite {name!r} has no option {unknown[0]!r}; its options are {sorted(allowed)}"
        )


def _norm(values: Iterable[str] | str | None) -> list[str] | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [v for v in values.split(",") if v.strip()]
    return [v.strip() for v in values]


def load_suite(name: str, **options: Any) -> list[Task]:
    """The task instances of suite ``name`` (see the module docstring for the options)."""
    if name not in _SUITES:
        raise ValueError(f"unknown suite {name!r}; known suites: {sorted(_SUITES)}")
    options = {k: v for k, v in options.items() if v is not None}
    _check_options(name, options)
    levels = _norm(options.get("levels"))
    limit = options.get("limit")
    if name == "toolmaze":
        # late: a suite's module (and what it generates from) loads only when that suite is asked for
        from replan.suites.toolmaze import LEVELS, PER_LEVEL, generate

        return generate(
            seed=int(options.get("seed", 0)),
            levels=[lv.upper() for lv in levels] if levels else LEVELS,
            modes=[m.upper() for m in _norm(options.get("modes")) or MODES],
            limit=int(limit) if limit is not None else None,
            per_level=int(options.get("per_level", PER_LEVEL)),
        )
    if name == "pararecover":
        # late: a suite's module (and what it generates from) loads only when that suite is asked for
        from replan.suites.pararecover import load_tasks

        if "path" not in options:
            raise ValueError(
                "suite 'pararecover' needs path=... (a ParaRecover .jsonl file or a directory; "
                "fetch the files with `replan data pararecover --dest DIR`)"
            )
        tasks = load_tasks(options["path"], levels)
        return tasks[: int(limit)] if limit is not None else tasks
    # late: a suite's module (and what it generates from) loads only when that suite is asked for
    from replan.suites.pararecover_synth import generate_synth

    tasks = generate_synth(
        seed=int(options.get("seed", 0)),
        n_level1=int(options.get("n_level1", 400)),
        n_level2=int(options.get("n_level2", 400)),
    )
    if levels:
        wanted = {lv.upper() for lv in levels}
        tasks = [t for t in tasks if (t.level or "").upper() in wanted]
    return tasks[: int(limit)] if limit is not None else tasks


__all__ = ["list_suites", "load_suite", "suite_digest", "suite_version", "suite_versions"]
