"""The Python API: ``replan.run(...)``, ``replan.evaluate_agent(...)`` and their ``Results``.

``run`` takes every option of a run (:class:`~replan.runner.options.RunOptions`, the one
declaration; ``replan run`` maps its flags onto the same fields and calls ``run``). It sits
above the runner (which builds the backend, runs and stores the episodes) and the report (whose
numbers the summary is), as DESIGN §1 orders the layers."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replan.core.aio import run_sync
from replan.core.task import Task
from replan.core.trace import Episode
from replan.runner.options import DEFAULT_MODEL, DEFAULT_SUITE, RunOptions

if TYPE_CHECKING:
    from replan.runner.experiment import Backend, RunOutcome


@dataclass
class Results:
    """What a run produced: where it is stored, its counts, and (read from the store when first
    asked) every episode, its feedback and the per-design aggregates."""

    out_dir: Path
    experiment_id: str
    outcome: RunOutcome
    options: RunOptions

    @functools.cached_property
    def _stored(self) -> tuple[list[Episode], list[tuple[str, str, float | None, str]]]:
        from replan.runner.store import ResultsStore

        with ResultsStore(self.out_dir) as store:
            return store.episodes(), store.feedback()

    @property
    def episodes(self) -> list[Episode]:
        """Every episode in the store."""
        return self._stored[0]

    @property
    def feedback(self) -> list[tuple[str, str, float | None, str]]:
        """``(episode key, metric key, score, comment)`` of every stored episode."""
        return self._stored[1]

    @functools.cached_property
    def summary(self) -> dict[str, Any]:
        """The per-design aggregates, as the table and the report show them."""
        from replan.report.summary import summarize

        return summarize(self.out_dir)

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


def model_object_label(model: Any) -> str:
    """The label a chat model object is stored under (its class and model name; no key)."""
    from replan.nodes.llm import model_label

    cls, name = type(model).__name__, model_label(model)
    label = name if name == cls else f"{cls}:{name}"
    return label.replace("+", "-")  # '+' joins a model spec to its options


def run(
    suite: str = DEFAULT_SUITE,
    *,
    tasks: Sequence[Task] | None = None,
    make_agent: Callable[..., Any] | None = None,
    backend: Backend | None = None,
    progress: Callable[..., None] | None = None,
    warn: Callable[[str], None] | None = None,
    interruptible: bool = False,
    **options: Any,
) -> Results:
    """Run designs × models × seeds on a suite (or on ``tasks``), resumably, into ``out``.

    ``options`` are the fields of :class:`~replan.runner.options.RunOptions` (``agents``,
    ``models``, ``seeds``, ``limit``, ``filter``, ``concurrency``, ``workers``, ``backend``,
    ``out``, ``archive``, ``resume``, ``suite_options``, ``budgets``, ``base_url``, ...;
    ``agents`` empty: the suite's default designs). They are checked before anything runs: a
    mistake is one ``ValueError`` naming it. An episode still running after
    ``episode_timeout_s`` seconds is stored as ``timeout``. A chat model object among
    ``models`` is used as it is by every episode (never copied; stored under its class and
    model name, in this process only).

    ``make_agent`` is your agent factory as a live object (see :func:`evaluate_agent`);
    ``backend`` a ready backend object instead of the one the options name; ``progress(done,
    total, failures, call_stats)`` and ``warn(line)`` are called as the run goes;
    ``interruptible``: the first Ctrl-C cancels the run cleanly (``KeyboardInterrupt`` once the
    store is closed).
    """
    from replan.runner.backends import make_backend
    from replan.runner.experiment import arun

    if isinstance(backend, str):  # the backend's name is an option like any other
        options["backend"], backend = backend, None
    given: dict[str, Any] = {}
    if "models" in options:
        specs = []
        for m in options["models"]:
            if not isinstance(m, str):
                label = model_object_label(m)
                given[label], m = m, label
            specs.append(m)
        options["models"] = specs
    opts = RunOptions(suite=suite, **options)
    coro = arun(
        opts,
        tasks=tasks,
        backend=backend or make_backend(opts),
        progress=progress,
        agent=make_agent,
        warn=warn,
        models=given,
        # checked before anything is written, and only when there is something to run
        check=functools.partial(
            _check,
            opts,
            tasks=tasks,
            live_agent=make_agent,
            given=given,
            warn=warn if backend is None else None,
        ),
    )
    if interruptible:
        from replan.runner.safety import run_interruptibly

        outcome = run_interruptibly(coro)
    else:
        outcome = run_sync(coro)
    return Results(opts.out, outcome.experiment_id, outcome, opts)


def _check(options: RunOptions, warn: Callable[[str], None] | None = None, **kw: Any) -> None:
    """The run's checks (:func:`replan.runner.preflight.check_options`), loaded when needed;
    then ``warn`` gets how to use the cores, if the run asks one process for more than it can
    keep in flight (:func:`~replan.runner.preflight.concurrency_hint`)."""
    from replan.runner.preflight import check_options, concurrency_hint

    check_options(options, **kw)
    if warn is not None and (hint := concurrency_hint(options)):
        warn(hint)


def evaluate_agent(
    make_agent: Callable[..., Any] | str,
    suite: str = DEFAULT_SUITE,
    *,
    model: str | Any = DEFAULT_MODEL,
    name: str | None = None,
    tasks: Sequence[Task] | None = None,
    **options: Any,
) -> Results:
    """Evaluate your own LangGraph agent in place.

    ``make_agent(tools, model)`` returns a compiled graph with a ``messages`` state (for example
    ``langchain.agents.create_agent(model, tools)``); it receives the episode's world-bound tools,
    which record the trace, so your graph needs no change. ``make_agent`` may also be given as
    ``"module:function"``. Episodes are stored under the design name ``name`` (default: the
    factory's name) and scored like the built-in designs. An agent still running after
    ``episode_timeout_s`` seconds is abandoned and its episode stored as ``timeout``; one that
    raises (``SystemExit`` included) fails only its episode.

    ``model`` is a model spec (``"openai:gpt-4o-mini"``; ``base_url=`` for an OpenAI-compatible
    server) or a chat model object, used as it is by every episode (never copied; stored under
    its class and model name). ``options``: as :func:`run`.
    """
    spec = (
        make_agent
        if isinstance(make_agent, str)
        else f"{make_agent.__module__}:{make_agent.__qualname__}"
    )
    return run(
        suite,
        tasks=tasks,
        make_agent=make_agent if callable(make_agent) else None,
        agents=[name or spec.rsplit(":", 1)[-1]],
        models=[model],
        agent_factory=spec,
        **options,
    )
