"""Every option of a run, declared once.

``replan.run(**options)`` takes these fields, ``replan run`` maps one flag onto each (its help
text and default come from here), and the runner builds the backend from them: a new option is
one field here plus one line in ``replan/cli/run.py``. Which fields define the experiment (and
so its id, which resume relies on) and which only say how fast or where it runs is said by
:data:`OPERATIONAL_FIELDS` and :data:`CONTROL_FIELDS`.

This module loads pydantic only, so that ``replan --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from replan.runner.limits import Limits

DEFAULT_SUITE = "toolmaze"
DEFAULT_MODEL = "simulated:competent"
#: seconds one episode may take before it is abandoned and recorded as ``timeout``
DEFAULT_EPISODE_TIMEOUT_S = 900.0
#: episodes in flight at once (per worker process)
DEFAULT_CONCURRENCY = 4
DEFAULT_OUT = Path("replan-results")

#: options that do not change results: left out of the experiment id (recorded with it)
OPERATIONAL_FIELDS = (
    "concurrency",
    "episode_timeout_s",
    "model_timeout_s",
    "max_in_flight",
    "requests_per_minute",
    "tokens_per_minute",
)
#: options that say where and how this invocation runs: neither in the id nor in the record
CONTROL_FIELDS = ("out", "backend", "workers", "address", "archive", "resume", "retry_failed")

Prompt = Literal["standard", "hint"]
BackendName = Literal["local", "ray"]


class RunOptions(BaseModel):
    """Everything a run takes: what defines the experiment, how fast it may go, where it runs."""

    model_config = ConfigDict(extra="forbid")

    # -- what is run (the experiment's identity) ----------------------------------------------
    suite: str = Field(DEFAULT_SUITE, description="suite name (see `replan suites list`)")
    agents: list[str] = Field(
        default_factory=list,
        description="designs to run [default: the suite's designs, see `replan suites list`]",
    )
    models: list[str] = Field(
        default_factory=lambda: [DEFAULT_MODEL], description="model specs, one run each"
    )
    seeds: int = Field(1, ge=1, description="seeds per task")
    limit: int | None = Field(None, ge=1, description="at most N tasks (after the filter)")
    filter: list[str] = Field(
        default_factory=list, description="levels and/or modes of the suite, e.g. C2, P3"
    )
    per_cell: int = Field(
        3,
        ge=0,
        description="tasks per level x mode cell in the default toolmaze subset (without a limit)",
    )
    prompt: Prompt = Field("standard", description="standard | hint (failure-aware prompt)")
    suite_options: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the suite's loader, KEY=VALUE (e.g. path=FILE_OR_DIR; "
        "`replan suites list` shows each suite's)",
    )
    budgets: dict[str, Any] = Field(
        default_factory=dict,
        description="agent budgets, KEY=VALUE: max_steps, max_rounds, max_plan_iterations, max_replans, "
        "max_wall_s, max_parallel, plan_format (replan.nodes.config.AgentConfig)",
    )
    base_url: str | None = Field(None, description="OpenAI-compatible endpoint for provider models")
    agent_factory: str | None = Field(
        None, description="your agent factory, module:function (make_agent(tools, model))"
    )
    # -- how fast and how long (operational: not in the experiment id) ------------------------
    concurrency: int = Field(
        DEFAULT_CONCURRENCY,
        ge=1,
        description="episodes in flight (each waits on its own model calls)",
    )
    episode_timeout_s: float | None = Field(
        DEFAULT_EPISODE_TIMEOUT_S,
        ge=0,
        description="seconds an episode (agent code included) may take; past it the episode is "
        "recorded as timeout and the run goes on (0 or none: no limit)",
    )
    model_timeout_s: float | None = Field(
        None,
        ge=0,
        description="seconds per model request (default $REPLAN_MODEL_TIMEOUT, else 60)",
    )
    max_in_flight: int | None = Field(
        None, ge=1, description="at most N model calls at once per model endpoint, for the run"
    )
    requests_per_minute: float | None = Field(
        None, ge=1, description="at most N model requests per minute per endpoint"
    )
    tokens_per_minute: float | None = Field(
        None, ge=1, description="at most N model tokens per minute per endpoint"
    )
    # -- where and on what (control) -------------------------------------------------------------
    out: Path = Field(DEFAULT_OUT, description="output directory (results store)")
    backend: BackendName = Field("local", description="local | ray")
    workers: int = Field(
        1,
        ge=0,
        description="worker processes for the local backend, each with `concurrency` episodes "
        "in flight (0: one per core); 1 runs in this process",
    )
    address: str | None = Field(None, description="Ray address (with backend ray)")
    archive: Path | None = Field(
        None,
        description="also append every finished episode to this Episode JSON Lines file, and "
        "take the episodes it already holds from it instead of running them (a long run goes "
        "on in another checkout or on another machine)",
    )
    resume: bool = Field(
        True,
        description="skip the selected episodes already stored (default), or run them again; "
        "other episodes in the store are kept either way (`replan clear DIR` empties a store)",
    )
    retry_failed: bool = Field(
        True,
        description="on resume, run infrastructure failures (model error, crash, timeout) again "
        "(default); an agent's own failure is a result and is kept",
    )

    @model_validator(mode="after")
    def _settle(self) -> RunOptions:
        """0 means no deadline; filter tokens are upper-cased; no designs named means the user
        agent's name (with an agent factory), else the suite's own choice."""
        self.filter = [t.strip().upper() for t in self.filter if t.strip()]
        if not self.episode_timeout_s:
            self.episode_timeout_s = None
        if not self.model_timeout_s:
            self.model_timeout_s = None
        if not self.agents and self.agent_factory:
            self.agents = [self.agent_factory.rsplit(":", 1)[-1]]
        elif not self.agents:
            # an unknown suite: the preflight (or loading it) says so
            with contextlib.suppress(ValueError):
                self.agents = default_designs(self.suite)
        return self

    def record(self) -> dict[str, Any]:
        """The experiment's record: every option but the control ones (JSON-ready)."""
        return self.model_dump(mode="json", exclude=set(CONTROL_FIELDS))

    def experiment_id(self) -> str:
        """What the results depend on, hashed: not how fast or how long they may take, nor a
        credential inside ``base_url``."""
        from replan.core.redact import redact_url, redact_value

        ident = {k: v for k, v in self.record().items() if k not in OPERATIONAL_FIELDS}
        ident = redact_value(ident, redact_url)  # not environment-dependent
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]

    def limits(self) -> Limits:
        """The per-endpoint limits every model endpoint of this run is held to."""
        from replan.runner.limits import Limits

        return Limits(self.max_in_flight, self.requests_per_minute, self.tokens_per_minute)


def cpu_workers() -> int:
    """The cores this process may use (its CPU affinity where the platform says): what
    ``workers`` 0 means."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def remote_models(options: RunOptions) -> bool:
    """Whether a model of the run is served over the network (a provider's), whose server may
    ask every caller to wait (``Retry-After``)."""
    from replan.models.registry import kind_of

    return any((k := kind_of(m)) is not None and k.takes_timeout for m in options.models)


def default_designs(suite: str) -> list[str]:
    """The designs a run of ``suite`` runs when none are named: the suite's own choice, else
    every registered design."""
    from replan.graphs import design_names
    from replan.suites import get_suite

    return list(get_suite(suite).default_designs) or design_names()


def parse_pairs(pairs: list[str] | None, flag: str) -> dict[str, Any]:
    """``["k=v", ...]`` (``-S``/``-B``) as a dict; a value that reads as JSON (a number,
    ``true``, a list) is taken as that, else as the text. A pair without ``=`` is a
    ``ValueError`` naming the flag."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag} {pair!r}: use KEY=VALUE")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        out[key.strip()] = value
    return out


__all__ = [
    "CONTROL_FIELDS",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_EPISODE_TIMEOUT_S",
    "DEFAULT_MODEL",
    "DEFAULT_OUT",
    "DEFAULT_SUITE",
    "OPERATIONAL_FIELDS",
    "RunOptions",
    "cpu_workers",
    "default_designs",
    "parse_pairs",
    "remote_models",
]
