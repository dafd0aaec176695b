"""ToolMaze levels, their sizes and the generator's limits."""

from __future__ import annotations

SUITE = "toolmaze"
#: the step-list variant (the queries before goal-level ones), kept so old results compare
GUIDED = "toolmaze-guided"
LEVELS: tuple[str, ...] = ("C1", "C2", "C3", "C4")
PER_LEVEL = 100
#: base tasks per level of the frozen goal-level suite (``toolmaze`` v3)
GOAL_PER_LEVEL = 50
#: query styles: ``goal`` states the goals and the given facts (the ``toolmaze`` suite);
#: ``guided`` lists the steps in tool-description words (``toolmaze-guided``, the old queries)
QUERIES: tuple[str, ...] = ("goal", "guided")

#: target s* lengths (tool calls) and their weights, after ToolMaze Table 1
LENGTHS: dict[str, dict[int, float]] = {
    "C1": {5: 0.72, 6: 0.2, 7: 0.08},
    "C2": {5: 0.5, 6: 0.3, 7: 0.12, 8: 0.05, 9: 0.03},
    "C3": {6: 0.5, 7: 0.3, 8: 0.12, 9: 0.05, 10: 0.03},
}
#: C4 s* lengths of step-list (guided) tasks and their weights
C4_TOTAL = {9: 0.12, 10: 0.22, 11: 0.26, 12: 0.2, 13: 0.12, 14: 0.05, 15: 0.03}
#: C4 s* lengths of goal-level tasks (two goals with a group each, and more goals to length)
C4_GOAL_TOTAL = {8: 0.3, 9: 0.3, 10: 0.25, 11: 0.15}
C4_MAX = 15  # longest C4 s* (ToolMaze Table 1: 8–15)
#: most alternative valid paths the generator enumerates for one task
MAX_PATHS = 64
#: highest mean pairwise Jaccard similarity of the tool sets within a level, per query style
#: (ToolMaze §3.3 reports <= 0.06 on every level): once DIVERSE_FROM tasks of a level stand, a
#: task that would lift the level's mean above it is regenerated, for the first half of the
#: attempts. Goal-level tasks have none: they need tools whose results a reader can tell
#: apart, and the generator already spends most attempts finding those
MAX_MEAN_JACCARD: dict[str, float | None] = {"guided": 0.055, "goal": None}
DIVERSE_FROM = 10


def instance_id(level: str, index: int, mode: str | None = None) -> str:
    """``toolmaze-C2-007`` (base task ``index`` of ``level``), ``toolmaze-C2-007-P3`` with a mode:
    the ids the generator gives and the frozen suite is read by."""
    base = f"{SUITE}-{level}-{index:03d}"
    return f"{base}-{mode}" if mode else base


class GenerationError(RuntimeError):
    """The corpus cannot yield a task of the requested shape (names the level and index)."""
