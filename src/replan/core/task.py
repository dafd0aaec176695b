"""A benchmark task: what the agent is asked, what it may use, and how success is decided.

Pure data (no environment import), so a task travels with its episodes and a saved trace can be
scored later. ``replan.env`` turns a task into a world (:func:`replan.env.task_world`).
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

Mode = Literal["NP", "P1", "P2", "P3", "P4"]
MODES: tuple[str, ...] = ("NP", "P1", "P2", "P3", "P4")


def mode_flags(mode: str) -> tuple[bool, bool]:
    """(explicit, permanent) for a perturbation mode: P1 explicit-transient, P2 explicit-permanent,
    P3 implicit-transient, P4 implicit-permanent."""
    return {"P1": (True, False), "P2": (True, True), "P3": (False, False), "P4": (False, True)}[
        mode
    ]


class PerturbationProfile(BaseModel):
    """Which tool (or alternative group) fails, how, and with what response.

    ``victim`` is a tool name; when ``group`` is set the first tool of that group the agent
    calls becomes the victim and no other tool of the group is perturbed.
    """

    mode: Mode
    victim: str
    group: str | None = None
    kind: str  # explicit: http_404 | http_429 | http_503 | timeout | empty; implicit: a corruption
    sentinel: Any = None  # episode-unique value carried by an implicit fault
    field: str | None = None  # output field an implicit fault corrupts
    slot: str | None = None  # plan slot (C4: per parallel branch)


class RequiredRecord(BaseModel):
    """A record that must exist in the final state: ``collection`` with fields ``where``."""

    collection: str
    where: dict[str, Any] = Field(default_factory=dict)
    mention_key: bool = False  # the answer must state the record's id (e.g. a booking code)


class Checker(BaseModel):
    """Success = every required record exists and every required fact appears in the answer.

    ``graceful`` (a task with no valid path left): success means no call downstream of the
    failed branch (``forbidden_after_failure``) and an answer that reports the failure.
    """

    required_records: list[RequiredRecord] = Field(default_factory=list)
    required_facts: list[Any] = Field(default_factory=list)
    graceful: bool = False
    forbidden_after_failure: list[str] = Field(default_factory=list)
    failure_words: list[str] = Field(
        default_factory=lambda: [
            "unable",
            "cannot",
            "could not",
            "failed",
            "unavailable",
            "not possible",
        ]
    )


class FaultSetup(BaseModel):
    """What a task's fault injector (``replan.env``) and its recovery scorers share beyond the
    profile: which tools the victim may be, how each would be corrupted, and c* after the fault.

    The suite writes it once; the injector and the scorers read it, so both see the same fault.
    """

    #: the alternative group's tools the victim may be (empty: the corpus group decides)
    victim_tools: list[str] = Field(default_factory=list)
    #: per possible victim, its implicit corruption ``{"field", "kind", "value"}`` (P3/P4)
    implicit: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: c* for an agent that meets the fault where s* does (fallback when a task has no paths)
    min_calls_after_fault: int | None = None
    #: the same c* per possible victim of the group
    min_calls_after_fault_by_victim: dict[str, int] = Field(default_factory=dict)


class WaveCall(BaseModel):
    """One call of the last wave before a replan point, as the instance records it."""

    name: str
    arguments: Any = None
    results: Any = None


class ReplanPoint(BaseModel):
    """The start state of a task that begins mid-run, at the replanner (ParaRecover).

    The suite fills it: the plan the replanner is given, the last wave's calls and results, the
    outputs of the call nodes that ran cleanly (what later ``${node}`` references bind to) and
    the world after that history. The efficiency scores count ``rounds_executed`` and
    ``calls_executed`` on top of the episode's own. A point with no ``plan`` only carries those
    counts (a task stored before the start state was typed, scored but not run from here).
    """

    rounds_executed: int = 0
    calls_executed: int | None = None  # None: the suite did not state it (counted as 0)
    #: the plan the replanner is given, as the instance writes it (ParaRecover JSON text)
    plan: str | None = None
    last_wave: list[WaveCall] = Field(default_factory=list)
    #: node id -> output of each call node that ran cleanly before the replan point
    outputs: dict[str, Any] = Field(default_factory=dict)
    #: the world after the history (``WorldState.to_dict()``); ``None``: the tools have no
    #: implementation and a tool simulator plays them (``replan.env.simulators``)
    state: dict[str, Any] | None = None

    @property
    def starts_mid_run(self) -> bool:
        """Whether a run starts here, at the replanner (the point has a plan)."""
        return self.plan is not None


#: metadata keys of tasks stored before the typed fields, and the field each moved to
_LEGACY_FAULT_KEYS = (
    "victim_tools",
    "implicit",
    "min_calls_after_fault",
    "min_calls_after_fault_by_victim",
)
_LEGACY_POINT_KEYS = ("rounds_executed", "calls_executed")


def _legacy_point(meta: dict[str, Any]) -> dict[str, Any]:
    """The replan point of a task stored before it was typed: the counts, and the start state
    that ``plan`` with ``fun_call`` (both suites) and ``bindings`` / ``executed_ok`` /
    ``state_after_history`` (``pararecover-synth``) held. Keys it reads are dropped from
    ``meta``. A stored ``pararecover`` task keeps no clean outputs (its loader derives them
    from the instance file); it is scored from its counts."""
    point: dict[str, Any] = {k: meta.pop(k) for k in _LEGACY_POINT_KEYS if k in meta}
    if "fun_call" not in meta:  # both suites stored the last wave with the plan
        return point
    if "plan" in meta:
        plan = meta.pop("plan")
        point["plan"] = plan if isinstance(plan, str) else json.dumps(plan, ensure_ascii=False)
    if "fun_call" in meta:
        point["last_wave"] = meta.pop("fun_call") or []
    ok = meta.pop("executed_ok", None)
    bindings = meta.pop("bindings", None) or {}
    if ok is not None:
        point["outputs"] = {n: bindings.get(n) for n, good in ok.items() if good}
        point.setdefault("calls_executed", len(ok))
    if "state_after_history" in meta:
        point["state"] = meta.pop("state_after_history")
    return point


class Task(BaseModel):
    """One instance of a suite (a base task crossed with a perturbation mode)."""

    task_id: str
    suite: str
    query: str
    tools: list[str]  # tool names available to the agent
    base_id: str = ""  # the task id without the mode suffix (all modes of one base task share it)
    level: str | None = None  # C1..C4 (ToolMaze) or LEVEL-1 / LEVEL-2 (ParaRecover)
    mode: Mode = "NP"
    world_seed: int = 0
    initial_state: dict[str, Any] | None = None  # None: the corpus start state for world_seed
    gold_plan: dict[str, Any] | None = None  # ParaRecover-shaped JSON of the shortest path s*
    valid_paths: list[list[str]] = Field(default_factory=list)  # tool sequences of valid paths
    optimal_rounds: int | None = None  # G (ParaRecover's ``round_gt``)
    #: G counts the final response as a round (ParaRecover's ``round_gt``; ToolMaze's does not)
    rounds_include_response: bool = False
    min_calls: int | None = None  # c* (ParaRecover's ``funcall_times_gt``)
    perturbation: PerturbationProfile | None = None
    faults: FaultSetup = Field(default_factory=FaultSetup)
    replan_point: ReplanPoint | None = None  # set for tasks that start after executed rounds
    #: upstream tool descriptions (ParaRecover ``tool_list``) for tools the corpus does not hold
    tool_specs: list[dict[str, Any]] = Field(default_factory=list)
    checker: Checker = Field(default_factory=Checker)
    metadata: dict[str, Any] = Field(default_factory=dict)  # suite-internal notes

    @model_validator(mode="before")
    @classmethod
    def _legacy_metadata(cls, data: Any) -> Any:
        """Tasks stored before the typed fields (results stores, exported files, older frozen
        suites) carried them as metadata keys: G and c* as ``round_gt`` / ``funcall_times_gt``,
        the fault setup as ``victim_tools`` / ``implicit`` / ``min_calls_after_fault[_by_victim]``,
        ``base_id``, the replan point (:func:`_legacy_point`), ``rounds_include_response``
        (with its prose twin ``rounds_counting``), ``tool_list``, and the paths' tool sequences
        in ``paths``. Each is read into its field (when the field is unset) and dropped, except
        ``paths``, which the ToolMaze suite keeps for its plans. An unset ``base_id`` is the
        task id."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        meta = data.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        for key, fld in (("round_gt", "optimal_rounds"), ("funcall_times_gt", "min_calls")):
            value = meta.pop(key, None)
            if data.get(fld) is None and value is not None:
                data[fld] = int(value)
        moved = {k: meta.pop(k) for k in _LEGACY_FAULT_KEYS if k in meta}
        if moved and not data.get("faults"):
            data["faults"] = {k: v for k, v in moved.items() if v is not None}
        point = data.get("replan_point")
        if point is None or isinstance(point, dict):
            given = {k: v for k, v in (point or {}).items() if v is not None}
            moved = {**_legacy_point(meta), **given}
            if moved:
                data["replan_point"] = moved
        if "rounds_include_response" in meta:
            data.setdefault("rounds_include_response", bool(meta.pop("rounds_include_response")))
        meta.pop("rounds_counting", None)
        if "tool_list" in meta:
            data.setdefault("tool_specs", meta.pop("tool_list") or [])
        if not data.get("valid_paths") and meta.get("paths"):
            data["valid_paths"] = [list(p["tools"]) for p in meta["paths"]]
        base_id = meta.pop("base_id", None)
        if not data.get("base_id"):
            data["base_id"] = base_id or data.get("task_id", "")
        if isinstance(data.get("metadata"), dict):
            data["metadata"] = meta
        return data


@dataclasses.dataclass(frozen=True, slots=True)
class PackedTask:
    """A task held packed (its JSON, UTF-8, zlib-compressed), with the fields that name it, and
    parsed only where it is used (an episode played, an episode scored): a run's driver holds
    every selected task for the whole run, about 1.5 kB each packed against 33 to 73 kB parsed
    (issue 32 §5: 2,000 ``toolmaze-guided`` tasks held parsed were 144 MB of a driver's 289),
    and unpacking and parsing one costs about 0.1 ms. Worker processes receive it as it is."""

    data: bytes = dataclasses.field(repr=False)
    task_id: str
    suite: str
    level: str | None
    mode: str

    @staticmethod
    def dump(task: Task) -> bytes:
        """``task``'s packed form (what :meth:`load` reads)."""
        return zlib.compress(task.__pydantic_serializer__.to_json(task), 6)

    @classmethod
    def load(cls, data: bytes) -> PackedTask:
        """The packed task of :meth:`dump`'s ``data`` (parsed once here, for its names)."""
        t = Task.model_validate_json(zlib.decompress(data))
        return cls(data, t.task_id, t.suite, t.level, t.mode)

    @classmethod
    def of(cls, task: Task | PackedTask) -> PackedTask:
        """``task`` packed (a packed task as it is)."""
        if isinstance(task, PackedTask):
            return task
        return cls(cls.dump(task), task.task_id, task.suite, task.level, task.mode)

    def parse(self) -> Task:
        """The task itself, parsed anew (nothing parsed is kept here)."""
        return Task.model_validate_json(zlib.decompress(self.data))
