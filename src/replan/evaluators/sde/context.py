"""The replan under evaluation: which plan version is scored, what it saw (the steps before
it, the last wave) and the tools of its task (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from replan.core.plan import ParseFailure, Plan
from replan.core.task import Task
from replan.core.tools import ToolSpec
from replan.core.trace import FAILURE_END_REASONS, Episode, PlanVersion, Step
from replan.env.corpus import load_corpus


# ----------------------------------------------------------------------------------------------
# the replan under evaluation
@dataclass
class ReplanContext:
    """Everything the rubric looks at for one replan of one episode."""

    episode: Episode
    task: Task | None
    target: PlanVersion
    previous: PlanVersion | None
    before: list[Step]  # steps that ran before the replan was written
    window: list[Step]  # the last wave before the replan
    parsed: Plan | ParseFailure
    prev_plan: Plan | None
    tools: dict[str, ToolSpec]

    @property
    def failed_steps(self) -> list[Step]:
        """Steps of the last wave that failed or met an injected fault."""
        return [s for s in self.window if not s.verdict.ok or s.perturbation is not None]

    @property
    def failed_nodes(self) -> set[str]:
        return {s.call.node_id for s in self.failed_steps if s.call.node_id}


def parse_version(pv: PlanVersion) -> Plan | ParseFailure:
    return Plan.parse(pv.text if pv.text.strip() else pv.plan)


def _counts_waves_before(episode: Episode) -> bool:
    """True when a plan's round counts the waves run before it (see the module docstring)."""
    if not episode.steps:
        return True
    first_wave = min(s.round for s in episode.steps)
    return all(pv.round > first_wave for pv in episode.plans if pv.source == "replanner")


def _steps_before(episode: Episode, pv: PlanVersion, waves_before: bool) -> list[Step]:
    if waves_before:
        return [s for s in episode.steps if s.round < pv.round]
    return [s for s in episode.steps if s.round <= pv.round]


def _step_failed(s: Step) -> bool:
    return not s.verdict.ok or s.perturbation is not None


def is_replanner_output(episode: Episode, pv: PlanVersion) -> bool:
    """Whether ``pv`` is something the replanner wrote. In a run that failed for the
    infrastructure (model error, crash, timeout) an empty replanner version is the failure, not
    an output: it never counts as an invalid DAG."""
    if pv.source != "replanner":
        return False
    return bool(pv.text.strip()) or episode.end_reason.value not in FAILURE_END_REASONS


def select_replan(episode: Episode) -> int | None:
    """Index (in ``episode.plans``) of the replan to score: the first replanner output after
    the first failing step, else the first replanner output; ``None`` without one."""
    replans = [i for i, pv in enumerate(episode.plans) if is_replanner_output(episode, pv)]
    if not replans:
        return None
    waves_before = _counts_waves_before(episode)
    for i in replans:
        if any(_step_failed(s) for s in _steps_before(episode, episode.plans[i], waves_before)):
            return i
    return replans[0]


def task_tools(task: Task | None, episode: Episode | None = None) -> dict[str, ToolSpec]:
    """Tool specs for a task: corpus tools it names, plus the ParaRecover ``tool_list`` it carries
    (``task.tool_specs``). Without a task: corpus tools the episode uses."""

    corpus = load_corpus()
    out: dict[str, ToolSpec] = {}
    if task is not None:
        out.update({t: corpus.tools[t] for t in task.tools if t in corpus.tools})
        if task.tool_specs:
            out.update({t.name: t for t in ToolSpec.from_pararecover(task.tool_specs)})
    elif episode is not None:
        names = {s.call.tool for s in episode.steps}
        for pv in episode.plans:
            if isinstance(pv.plan, Mapping):
                for n in pv.plan.get("tasks", []) or []:
                    if isinstance(n, Mapping) and n.get("name"):
                        names.add(str(n["name"]))
        out.update({t: corpus.tools[t] for t in names if t in corpus.tools})
    return out


def replan_context(
    episode: Episode, task: Task | None = None, plan_index: int | None = None
) -> ReplanContext | None:
    """The replan to score with its inputs; ``None`` when the episode has no replanner output."""
    idx = select_replan(episode) if plan_index is None else plan_index
    if idx is None:
        return None
    if not 0 <= idx < len(episode.plans):
        raise ValueError(
            f"episode {episode.episode_id}: no plan version {idx} (it has {len(episode.plans)})"
        )
    target = episode.plans[idx]
    previous = episode.plans[idx - 1] if idx > 0 else None
    before = _steps_before(episode, target, _counts_waves_before(episode))
    last = max((s.round for s in before), default=None)
    window = [s for s in before if s.round == last] if last is not None else []
    prev_plan = parse_version(previous) if previous is not None else None
    return ReplanContext(
        episode=episode,
        task=task,
        target=target,
        previous=previous,
        before=before,
        window=window,
        parsed=parse_version(target),
        prev_plan=prev_plan if isinstance(prev_plan, Plan) else None,
        tools=task_tools(task, episode),
    )
