"""Running one episode of one design: compile (or share) the design's graph, run it, record it.

``build_graph(design, model, world)`` compiles a registered design (:mod:`.registry`;
:func:`design_names` lists them); ``run_episode`` builds the task's world, runs the design's
graph (compiled once per design and configuration when the design allows it, see
:func:`shared_graph`) and returns a scored :class:`~replan.core.trace.Episode` — it never
raises for what happens inside the run: a model that keeps failing ends with ``model_error``,
a node that crashes with ``crashed`` (and the error text), the budgets with their end reasons.

Every graph takes ``{"query": str, "world": WorldState}`` as input (a task that starts mid-run,
run by a design that replans, adds its ``replan_point``: :func:`mid_run`) and keeps the whole trace in
its state (see :mod:`replan.nodes.state`), so with a checkpointer an interrupted episode
resumes from its last superstep: call ``run_episode`` again with the same ``checkpointer`` and
``thread_id``. Progress events of the custom stream reach ``on_event``.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphRecursionError
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer

from replan.core.aio import run_sync
from replan.core.task import Task
from replan.core.trace import EndReason, Episode, Usage
from replan.env import replan_point_world, task_world
from replan.env.checker import check
from replan.env.world import FaultInjector, World
from replan.graphs.inputs import agent_inputs
from replan.graphs.registry import DESIGN_REGISTRY, get_design
from replan.nodes.config import AgentConfig
from replan.nodes.episode import RUNNING_EPISODE, EpisodeInputs, episode_inputs
from replan.nodes.executor import bound_model
from replan.nodes.frontier import WAVE_THREADS
from replan.nodes.llm import describe_error, model_label
from replan.nodes.tools import ToolsLike

EventHandler = Callable[[dict[str, Any]], None]


def build_graph(
    design: str,
    model: str | BaseChatModel,
    world: ToolsLike,
    config: AgentConfig | None = None,
    *,
    checkpointer: Checkpointer = None,
) -> CompiledStateGraph:
    """Compile ``design`` for ``model`` over ``world`` (the query comes in the graph input).

    ``world`` is a World or tools, and ``model`` a chat model or a spec string, as a design's
    builder takes them (:mod:`replan.graphs.inputs`)."""
    build = get_design(design).build
    return build(model, world, config or AgentConfig(), checkpointer=checkpointer)


#: compiled graphs shared by episodes, by (design, builder, configuration)
_SHARED: OrderedDict[tuple[str, Callable[..., Any], str], CompiledStateGraph] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 64


def shared_graph(design: str, config: AgentConfig | None = None) -> CompiledStateGraph | None:
    """The graph of ``design`` compiled once for every episode with this configuration (its
    nodes read the running episode's model and world, see :mod:`replan.nodes.episode`), or
    ``None`` for a design compiled per episode (``Design.compiled_once`` false, as a plugin
    design is unless it says otherwise).

    The key holds the builder itself, so a design registered again under the same name gets its
    own graph; the least recently used of more than 64 entries is dropped. Graphs with a
    checkpointer are not shared (:func:`run_episode` compiles those per episode, as before).
    """
    found = get_design(design)
    if not found.compiled_once:
        return None
    cfg = config or AgentConfig()
    key = (design, found.build, cfg.model_dump_json())
    with _SHARED_LOCK:
        graph = _SHARED.get(key)
        if graph is not None:
            _SHARED.move_to_end(key)
            return graph
    # compiled outside the lock (a builder may ask for another shared graph); a race compiles
    # twice and keeps the first
    graph = found.build(RUNNING_EPISODE, RUNNING_EPISODE, cfg)
    with _SHARED_LOCK:
        graph = _SHARED.setdefault(key, graph)
        _SHARED.move_to_end(key)
        while len(_SHARED) > _SHARED_MAX:
            _SHARED.popitem(last=False)
        return graph


def mid_run(design: str, task: Task) -> bool:
    """Whether ``design`` runs ``task`` from its replan point (a design that replans, a task
    that starts mid-run); any other run starts from the query."""
    point = task.replan_point
    return point is not None and point.starts_mid_run and get_design(design).replans


def graph_input(query: str, world: World) -> dict[str, Any]:
    """The input of every agent graph: the user's request and the world's current state."""
    return {"query": query, "world": world.state}


def runnable_config(cfg: AgentConfig, thread_id: str | None = None) -> RunnableConfig:
    """LangGraph run config: a recursion limit above our budgets, the checkpoint thread, and a
    thread pool wide enough for a frontier wave (``cfg.max_parallel`` limits a wave itself)."""
    out: RunnableConfig = {
        "recursion_limit": cfg.recursion_limit(),
        # LangGraph's pool (sync runs) also hosts its stream waiter: one more than a wave
        "max_concurrency": WAVE_THREADS + 1,
    }
    if thread_id is not None:
        out["configurable"] = {"thread_id": thread_id}
    return out


@dataclass
class _Run:
    """One prepared episode: the graph, its world, its input and how to record the result."""

    design: str
    model: str
    task: Task
    world: World
    graph: CompiledStateGraph
    shared: EpisodeInputs | None  # a shared graph's nodes read these (this episode's)
    cfg: AgentConfig
    config: RunnableConfig
    seed: int
    episode_id: str
    thread_id: str | None
    inputs: dict[str, Any] | None
    values: dict[str, Any]
    finished: bool  # a checkpointed run of this thread already ended

    def watch(self, mode: str, chunk: Any, on_event: EventHandler | None) -> None:
        if mode == "values" and isinstance(chunk, dict):
            self.values = chunk
        elif mode == "custom" and on_event is not None and isinstance(chunk, dict):
            on_event(chunk)

    def bound_inputs(self) -> contextlib.AbstractContextManager[Any]:
        """The block the graph runs in: a shared graph's nodes get this episode's inputs."""
        if self.shared is not None:
            return episode_inputs(self.shared)
        return contextlib.nullcontext()

    def budget_reason(self) -> EndReason:
        found = DESIGN_REGISTRY.find(self.design)
        return found.budget_reason if found else EndReason.STEP_BUDGET

    def episode(
        self, wall_s: float, *, reason: EndReason | None = None, error: str | None = None
    ) -> Episode:
        return episode_from_state(
            self.values,
            task=self.task,
            world=self.world,
            design=self.design,
            model=self.model,
            seed=self.seed,
            cfg=self.cfg,
            wall_s=wall_s,
            episode_id=self.episode_id,
            end_reason=reason,
            error=error,
            metadata={"thread_id": self.thread_id} if self.thread_id else None,
        )


def _prepare(
    design: str,
    model: BaseChatModel,
    task: Task,
    *,
    faults: FaultInjector | None,
    config: AgentConfig | None,
    checkpointer: Checkpointer,
    seed: int,
    world: World | None,
    thread_id: str | None,
    episode_id: str | None,
) -> _Run:
    cfg = config or AgentConfig()
    point = task.replan_point if mid_run(design, task) else None
    if world is None:
        world = replan_point_world(task, seed) if point is not None else task_world(task, faults)
    elif faults is not None:
        raise ValueError("give the faults to the World you pass (World(..., faults=...))")
    graph = shared_graph(design, cfg) if checkpointer is None else None
    shared: EpisodeInputs | None = None
    if graph is None:
        graph = build_graph(design, model, world, cfg, checkpointer=checkpointer)
    else:
        shared = EpisodeInputs(*agent_inputs(model, world))
        bound_model(shared)  # a model without tool calling fails here, as compiling did
    if checkpointer is not None and thread_id is None:
        thread_id = uuid.uuid4().hex
    run_cfg = runnable_config(cfg, thread_id)
    inputs: dict[str, Any] | None = graph_input(task.query, world)
    if point is not None:
        inputs["replan_point"] = point
    values: dict[str, Any] = {}
    finished = False
    if checkpointer is not None:
        snapshot = graph.get_state(run_cfg)
        if snapshot.values:
            values = dict(snapshot.values)
            inputs = None  # resume from the last superstep
            finished = not snapshot.next
    return _Run(
        design=design,
        model=model_label(model),
        task=task,
        world=world,
        graph=graph,
        shared=shared,
        cfg=cfg,
        config=run_cfg,
        seed=seed,
        episode_id=episode_id or uuid.uuid4().hex,
        thread_id=thread_id,
        inputs=inputs,
        values=values,
        finished=finished,
    )


def run_episode(
    design: str,
    model: BaseChatModel,
    task: Task,
    *,
    faults: FaultInjector | None = None,
    config: AgentConfig | None = None,
    checkpointer: Checkpointer = None,
    seed: int = 0,
    world: World | None = None,
    thread_id: str | None = None,
    episode_id: str | None = None,
    on_event: EventHandler | None = None,
) -> Episode:
    """Run one episode of ``design`` on ``task`` and return its scored Episode.

    The world is ``replan.env.task_world(task, faults)`` unless ``world`` is given (custom tool
    sets: build a :class:`~replan.env.world.World` over your own ToolSpecs). ``seed`` is the
    episode's seed as recorded (seed the model itself when you build it). With a
    ``checkpointer`` and the ``thread_id`` of an interrupted run, the run resumes.
    """
    return run_sync(
        arun_episode(
            design,
            model,
            task,
            faults=faults,
            config=config,
            checkpointer=checkpointer,
            seed=seed,
            world=world,
            thread_id=thread_id,
            episode_id=episode_id,
            on_event=on_event,
        )
    )


async def arun_episode(
    design: str,
    model: BaseChatModel,
    task: Task,
    *,
    faults: FaultInjector | None = None,
    config: AgentConfig | None = None,
    checkpointer: Checkpointer = None,
    seed: int = 0,
    world: World | None = None,
    thread_id: str | None = None,
    episode_id: str | None = None,
    on_event: EventHandler | None = None,
) -> Episode:
    """:func:`run_episode` on the running event loop (``graph.astream``; sync nodes run in
    worker threads). The one implementation: :func:`run_episode` runs this to completion."""
    run = _prepare(
        design,
        model,
        task,
        faults=faults,
        config=config,
        checkpointer=checkpointer,
        seed=seed,
        world=world,
        thread_id=thread_id,
        episode_id=episode_id,
    )
    t0 = time.perf_counter()
    if run.finished:
        return run.episode(0.0)
    # progress events only for a listener: each is a hop from a node's thread to the loop
    modes = ["values", "custom"] if on_event is not None else ["values"]
    try:
        with run.bound_inputs():
            async for mode, chunk in run.graph.astream(run.inputs, run.config, stream_mode=modes):
                run.watch(mode, chunk, on_event)
    except GraphRecursionError as exc:
        return run.episode(time.perf_counter() - t0, reason=run.budget_reason(), error=str(exc))
    except Exception as exc:
        return run.episode(
            time.perf_counter() - t0, reason=EndReason.CRASHED, error=describe_error(exc)
        )
    return run.episode(time.perf_counter() - t0)


def episode_from_state(
    values: dict[str, Any],
    *,
    task: Task,
    world: World,
    design: str,
    model: str,
    seed: int,
    cfg: AgentConfig,
    wall_s: float,
    episode_id: str,
    end_reason: EndReason | None = None,
    error: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Episode:
    """The Episode of a run from its final (or last seen) graph state, scored by the checker.

    ``world`` ends in the run's final state (the checker reads it from there).
    """
    steps = list(values.get("steps") or [])
    usage: Usage = values.get("usage") or Usage()
    reason = end_reason or values.get("end_reason")
    if reason is None:
        reason, error = EndReason.CRASHED, error or "the graph stopped before the episode ended"
    if "world" in values:
        world.restore(values["world"])
    episode = Episode(
        episode_id=episode_id,
        task_id=task.task_id,
        suite=task.suite,
        design=design,
        model=model,
        seed=seed,
        mode=task.mode,
        query=task.query,
        steps=steps,
        plans=list(values.get("plans") or []),
        final_answer=values.get("final_answer"),
        end_reason=reason,
        error=error if error is not None else values.get("error"),
        usage=usage.model_copy(update={"tool_calls": len(steps), "wall_time_s": wall_s}),
        budgets=cfg.budgets(),
        metadata={**(values.get("meta") or {}), **(metadata or {})},
    )
    if values.get("replan_point") is not None:
        # ParaRecover's Pass@1 (seed 000, Appendix B): the replanned plan completes the task in
        # the following rounds, i.e. the run reaches the response (a give-up ends gave_up)
        episode.success = reason is EndReason.ANSWERED
        return episode
    try:
        episode.success = check(task, world.state, episode.final_answer, episode).success
    except Exception as exc:  # a checker bug must not lose the episode
        episode.metadata["checker_error"] = describe_error(exc)
    return episode


__all__ = [
    "EventHandler",
    "arun_episode",
    "build_graph",
    "episode_from_state",
    "graph_input",
    "mid_run",
    "run_episode",
    "runnable_config",
    "shared_graph",
]
