"""A benchmark task: what the agent is asked, what it may use, and how success is decided.

Pure data (no environment import), so a task travels with its episodes and a saved trace can be
scored later. ``replan.env`` turns a task into a world (:func:`replan.env.task_world`).
"""

from __future__ import annotations

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


class Task(BaseModel):
    """One instance of a suite (a base task crossed with a perturbation mode)."""

    task_id: str
    suite: str
    query: str
    tools: list[str]  # tool names available to the agent
    level: str | None = None  # C1..C4 (ToolMaze) or LEVEL-1 / LEVEL-2 (ParaRecover)
    mode: Mode = "NP"
    world_seed: int = 0
    initial_state: dict[str, Any] | None = None  # None: the corpus start state for world_seed
    gold_plan: dict[str, Any] | None = None  # ParaRecover-shaped JSON of the shortest path s*
    valid_paths: list[list[str]] = Field(default_factory=list)  # tool sequences of valid paths
    optimal_rounds: int | None = None  # G (ParaRecover's ``round_gt``)
    min_calls: int | None = None  # c* (ParaRecover's ``funcall_times_gt``)
    perturbation: PerturbationProfile | None = None
    checker: Checker = Field(default_factory=Checker)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _legacy_ground_truth(cls, data: Any) -> Any:
        """G and c* live in the typed fields only. Tasks stored before that (results stores,
        exported files) carried them as ``metadata["round_gt"]`` / ``["funcall_times_gt"]``
        too: those keys are read into the fields (when the field is unset) and dropped."""
        if not isinstance(data, dict):
            return data
        meta = data.get("metadata")
        if not isinstance(meta, dict) or not ({"round_gt", "funcall_times_gt"} & set(meta)):
            return data
        meta = dict(meta)
        data = {**data, "metadata": meta}
        for key, fld in (("round_gt", "optimal_rounds"), ("funcall_times_gt", "min_calls")):
            value = meta.pop(key, None)
            if data.get(fld) is None and value is not None:
                data[fld] = int(value)
        return data

    @property
    def base_id(self) -> str:
        """The task id without the mode suffix (all modes of one base task share it)."""
        return self.metadata.get("base_id", self.task_id)
