"""The Python API: ``replan.run(...)``, ``replan.evaluate_agent(...)`` and their ``Results``.

It sits above the runner (which runs and stores the episodes) and the report (whose numbers the
summary is), as DESIGN §1 orders the layers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replan.core.aio import run_sync
from replan.core.task import Task
from replan.core.trace import Episode
from replan.report.summary import summarize
from replan.runner.experiment import (
    DEFAULT_EPISODE_TIMEOUT_S,
    DEFAULT_MODEL,
    DEFAULT_SUITE,
    Backend,
    RunConfig,
    RunOutcome,
    arun,
)
from replan.runner.store import ResultsStore


@dataclass
class Results:
    """What a run produced: every episode, its feedback, and the per-design aggregates."""

    out_dir: Path
    experiment_id: str
    outcome: RunOutcome
    episodes: list[Episode] = field(default_factory=list)
    feedback: list[tuple[str, str, float | None, str]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)

    def records(self) -> list[dict[str, Any]]:
        """One flat row per episode: identity, outcome, and every per-episode metric score."""
        scores: dict[str, dict[str, float | None]] = {}
        for key, metric, value, _ in self.feedback:
            scores.setdefault(key, {})[metric] = value
        rows = []
        for e in self.episodes:
            key = e.episode_id
            rows.append(
                {
                    "episode": key,
                    "task_id": e.task_id,
                    "design": e.design,
                    "model": e.model,
                    "seed": e.seed,
                    "mode": e.mode,
                    "success": e.success,
                    "end_reason": e.end_reason.value,
                    "calls": len(e.steps),
                    "rounds": e.rounds,
                    **scores.get(key, {}),
                }
            )
        return rows

    def to_pandas(self) -> Any:
        """The records as a DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pandas is optional
            raise ImportError("Results.to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.records())


def _collect(out_dir: Path, outcome: RunOutcome) -> Results:
    with ResultsStore(out_dir) as store:
        episodes, feedback = store.episodes(), store.feedback()
    return Results(
        out_dir=out_dir,
        experiment_id=outcome.experiment_id,
        outcome=outcome,
        episodes=episodes,
        feedback=feedback,
        summary=summarize(out_dir),
    )


def run(
    suite: str = DEFAULT_SUITE,
    *,
    agents: Sequence[str] = (),
    models: Sequence[str] = (DEFAULT_MODEL,),
    seeds: int = 1,
    limit: int | None = None,
    filter: Sequence[str] = (),
    per_cell: int = 3,
    prompt: str = "standard",
    out: str | Path = "replan-results",
    concurrency: int = 4,
    tasks: Sequence[Task] | None = None,
    backend: Backend | None = None,
    suite_options: dict[str, Any] | None = None,
    budgets: dict[str, Any] | None = None,
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT_S,
    base_url: str | None = None,
) -> Results:
    """Run designs × models × seeds on a suite (or on ``tasks``), resumably, into ``out``.

    ``agents`` empty: the suite's default designs. An episode still running after
    ``episode_timeout`` seconds is stored as ``timeout``. ``base_url``: an OpenAI-compatible
    server for provider model specs."""
    cfg = RunConfig(
        suite=suite,
        agents=list(agents),
        models=list(models),
        seeds=seeds,
        limit=limit,
        filter=list(filter),
        per_cell=per_cell,
        prompt=prompt,
        suite_options=dict(suite_options or {}),
        budgets=dict(budgets or {}),
        concurrency=concurrency,
        episode_timeout_s=episode_timeout,
        base_url=base_url,
    )
    outcome = run_sync(arun(cfg, out, tasks=tasks, backend=backend))
    return _collect(Path(out), outcome)


def model_object_label(model: Any) -> str:
    """The label a chat model object is stored under (its class and model name; no key)."""
    from replan.nodes.llm import model_label

    cls, name = type(model).__name__, model_label(model)
    label = name if name == cls else f"{cls}:{name}"
    return label.replace("+", "-")  # '+' joins a model spec to its options


def evaluate_agent(
    make_agent: Callable[..., Any] | str,
    suite: str = DEFAULT_SUITE,
    *,
    model: str | Any = DEFAULT_MODEL,
    base_url: str | None = None,
    seeds: int = 1,
    limit: int | None = None,
    filter: Sequence[str] = (),
    per_cell: int = 3,
    out: str | Path = "replan-results",
    concurrency: int = 4,
    tasks: Sequence[Task] | None = None,
    name: str | None = None,
    episode_timeout: float | None = DEFAULT_EPISODE_TIMEOUT_S,
) -> Results:
    """Evaluate your own LangGraph agent in place.

    ``make_agent(tools, model)`` returns a compiled graph with a ``messages`` state (for example
    ``langchain.agents.create_agent(model, tools)``); it receives the episode's world-bound tools,
    which record the trace, so your graph needs no change. ``make_agent`` may also be given as
    ``"module:function"``. Episodes are stored under the design name ``name`` (default: the
    factory's name) and scored like the built-in designs. An agent still running after
    ``episode_timeout`` seconds is abandoned and its episode stored as ``timeout``; one that
    raises (``SystemExit`` included) fails only its episode.

    ``model`` is a model spec (``"openai:gpt-4o-mini"``; ``base_url`` for an OpenAI-compatible
    server) or a chat model object, used as it is by every episode (never copied; stored under
    its class and model name).
    """
    given: dict[str, Any] = {}
    if not isinstance(model, str):
        label = model_object_label(model)
        given[label] = model
        model = label
    spec = (
        make_agent
        if isinstance(make_agent, str)
        else f"{make_agent.__module__}:{make_agent.__qualname__}"
    )
    label = name or spec.rsplit(":", 1)[-1]
    cfg = RunConfig(
        suite=suite,
        agents=[label],
        models=[model],
        seeds=seeds,
        limit=limit,
        filter=list(filter),
        per_cell=per_cell,
        concurrency=concurrency,
        agent_factory=spec,
        episode_timeout_s=episode_timeout,
        base_url=base_url,
    )
    agent = make_agent if callable(make_agent) else None
    outcome = run_sync(arun(cfg, out, tasks=tasks, agent=agent, models=given))
    return _collect(Path(out), outcome)
