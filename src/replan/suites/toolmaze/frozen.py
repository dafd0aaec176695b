"""The pinned ToolMaze suites read from their frozen data files instead of generated.

``data/toolmaze-v<version>.jsonl.gz`` (goal-level queries) and
``data/toolmaze-guided-v<version>.jsonl.gz`` (step-list queries; see
:mod:`replan.suites.versions`) each hold the 2,000 instances the generator gives at seed 0; the generator is prefix-stable and each instance
depends only on its base task and mode, so any levels × modes × first-``n``-base-tasks subset is
those lines, read by id in generation order. ``python -m replan.suites freeze toolmaze`` rebuilds
the file; a slow test checks that regenerating reproduces its digest.
"""

from __future__ import annotations

from collections.abc import Sequence

from replan.core.task import MODES, Task
from replan.suites.toolmaze.levels import LEVELS, PER_LEVEL, SUITE, instance_id
from replan.suites.versions import frozen_file, read_frozen


def read_frozen_suite(
    seed: int,
    levels: Sequence[str],
    modes: Sequence[str],
    n: int,
    name: str = SUITE,
    per_level: int = PER_LEVEL,
    version: str | None = None,
) -> list[Task] | None:
    """The first ``n`` base tasks of each of ``levels``, crossed with ``modes``, in generation
    order (level, base task, mode), as :func:`~replan.suites.toolmaze.generate` would give them,
    from the frozen file of suite ``name`` (``toolmaze`` or ``toolmaze-guided``);
    ``None`` when the file cannot answer (not the pinned seed, an unknown level or mode, more
    base tasks than it holds, no file): the caller generates instead. ``version``: an earlier,
    kept version of the suite instead of the pinned one (a ``ValueError`` when the file cannot
    answer: the generator gives the pinned version only)."""
    path = frozen_file(name, {"seed": seed, "version": version})
    if version is not None and (
        path is None
        or n > per_level
        or not set(levels) <= set(LEVELS)
        or not set(modes) <= set(MODES)
    ):
        raise ValueError(
            f"{name} version {version} is kept as its frozen file only: seed 0, levels "
            f"{', '.join(LEVELS)}, modes {', '.join(MODES)}, at most {per_level} base tasks a level"
        )
    if (
        path is None
        or n > per_level
        or not set(levels) <= set(LEVELS)
        or not set(modes) <= set(MODES)
    ):
        return None
    return read_frozen(
        path, [instance_id(lv, i, m) for lv in levels for i in range(n) for m in modes]
    )
