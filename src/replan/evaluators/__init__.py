"""Evaluators: score saved Episodes (plus their Tasks) with nothing running.

Three families (DESIGN §5): prefix executability (:mod:`.prefix`), ToolMaze recovery
(:mod:`.toolmaze`) and ParaRecover's SDE rubric with its execution metrics (:mod:`.sde`); every
aggregate comes with a 95% interval (:mod:`.stats`); every metric is also a LangSmith evaluator
(:mod:`.langsmith`).
Scoring itself is :mod:`.scoring`. Entry points:

- :func:`score_episode` — per-run :class:`Feedback` (what the runner stores per episode).
- :meth:`EpisodeScore.records` / :meth:`EpisodeScore.from_records` — the per-run records as
  data, stored beside the feedback with :func:`scoring_stamp`, so the summary, the report and
  compare aggregate stored runs without scoring them again.
- :func:`score` — every aggregate over many episodes, keyed by metric name
  (``{"value", "low", "high", "n", "method"}``), plus per-mode / per-level tables.
- :func:`compare` — two agents on the same (task, seed) pairs: McNemar and paired bootstrap.

The task of an episode comes from ``tasks`` (by ``task_id``) or, when the runner embedded it,
from ``episode.metadata["task"]``. Without a task the recorded verdicts are used (see
:mod:`.prefix`).
"""

from __future__ import annotations

from replan.core.trace import is_failure
from replan.evaluators.metric import METRICS, EpisodeContext, Metric, metric, metrics
from replan.evaluators.perturbation import RecoveryRecord, composite_avg, summarize_toolmaze
from replan.evaluators.prefix import PrefixRecord, summarize_prefix
from replan.evaluators.scoring import (
    EpisodeScore,
    compare,
    compare_scores,
    score,
    score_episode,
    score_one,
    score_records,
    scoring_stamp,
    task_of,
)
from replan.evaluators.sde import SDEJudge, SDERecord, calibrate, load_labels, summarize_sde
from replan.evaluators.stats import (
    N_BOOT,
    Estimate,
    Feedback,
    bootstrap_mean,
    mcnemar,
    paired_bootstrap,
    pass_hat_k,
    wilson,
)

__all__ = [
    "METRICS",
    "N_BOOT",
    "EpisodeContext",
    "EpisodeScore",
    "Estimate",
    "Feedback",
    "Metric",
    "PrefixRecord",
    "RecoveryRecord",
    "SDEJudge",
    "SDERecord",
    "bootstrap_mean",
    "calibrate",
    "compare",
    "compare_scores",
    "composite_avg",
    "is_failure",
    "load_labels",
    "mcnemar",
    "metric",
    "metrics",
    "paired_bootstrap",
    "pass_hat_k",
    "score",
    "score_episode",
    "score_one",
    "score_records",
    "scoring_stamp",
    "summarize_prefix",
    "summarize_sde",
    "summarize_toolmaze",
    "task_of",
    "wilson",
]
