"""Competence profiles of the simulated agent: how often it errs and how it handles faults.

A profile is plain data (a pydantic model). Error rates are *per call* (per plan node when
planning) and use the names of ParaRecover's static error types; the two tool-response types
(``Null_Error``, ``Timeout_Error``) are not rates, they are what happens when the agent does not
notice an explicit fault, so they are governed by ``notice_explicit``.

Three named profiles ship (``novice``, ``competent``, ``expert``); a custom one comes from a
dict or a YAML file, optionally starting from a named base::

    base: competent
    name: careless-competent
    error_rates: {Type_Error: 0.1}
    notice_implicit: 0.2
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from replan.core import linre
from replan.core.taxonomy import ErrorType

#: Error types the simulated agent can commit by itself, in the order a per-call draw tries
#: them (the order matters only when several rates are non-zero).
STATIC_ERROR_TYPES: tuple[ErrorType, ...] = (
    ErrorType.TOOL_NAME_ERROR,
    ErrorType.TOOL_SELECT_ERROR,
    ErrorType.PARAMETER_ERROR,
    ErrorType.PARAMETER_MISSING,
    ErrorType.TYPE_ERROR,
    ErrorType.PARAMETER_INVALID,
    ErrorType.DEPENDENCE_NULL,
    ErrorType.DEPENDENCE_ERROR,
    ErrorType.PARALLELISM_ERROR,
    ErrorType.SERIAL_ERROR,
    ErrorType.TOOLCALL_MISSING,
    ErrorType.TOOLCALL_REDUNDANCY,
)

#: Errors that corrupt one call (drawn together, at most one per call, with exact rates).
CALL_ERROR_TYPES: tuple[ErrorType, ...] = STATIC_ERROR_TYPES[:8]


class FaultPolicy(BaseModel):
    """Relative weights of what the agent does once it has noticed a faulty tool result.

    ``retry`` calls the same tool again, ``reroute`` switches to an alternative tool or chain
    of the same alternative group, ``abort`` stops and answers that the task cannot be done.
    An alternative exists in the task's solution space, but the agent sees it only with
    probability ``find_alternative`` each time it looks (ToolMaze: failing agents "do not
    explore any alternative path"). When the drawn move is not available: a retry beyond ``max_retries`` is made anyway with
    probability ``stubborn`` (a futile loop), else it becomes a reroute; a reroute with no
    alternative left becomes a retry while retries remain, and then, with probability
    ``press_on``, the agent carries on as if the step had worked (calls downstream with
    made-up values) instead of stopping and saying the task cannot be done.
    """

    model_config = ConfigDict(extra="forbid")

    retry: float = Field(0.5, ge=0)
    reroute: float = Field(0.4, ge=0)
    abort: float = Field(0.1, ge=0)
    max_retries: int = Field(1, ge=0, le=10)
    stubborn: float = Field(0.2, ge=0, le=1)
    press_on: float = Field(0.2, ge=0, le=1)
    find_alternative: float = Field(0.8, ge=0, le=1)

    @model_validator(mode="after")
    def _some_weight(self) -> FaultPolicy:
        if self.retry + self.reroute + self.abort <= 0:
            raise ValueError("fault policy: retry, reroute and abort weights are all zero")
        return self


class CompetenceProfile(BaseModel):
    """Everything that makes one simulated agent better or worse than another.

    All probabilities are in [0, 1]. ``error_rates`` maps ParaRecover error type names to the
    probability per call (per plan node when planning) of committing that error; call-level
    types (tool name/selection, parameter name/missing/type/invalid, missing and wrong
    dependency) are exclusive within one call, so their sum must not exceed 1.

    A rate belongs to a *decision*, not to the design that asks for it: choosing the next tool
    and its arguments in ReAct is the same decision as writing that node into a plan, and draws
    the same error. Knobs that treat contexts differently are listed in ``CONTEXT_KNOBS``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    def uptake(self) -> float:
        """Probability of acting on one verifier finding (``fix_invalid_call`` when unset)."""
        return self.fix_invalid_call if self.verifier_uptake is None else self.verifier_uptake

    name: str = "custom"
    description: str = ""
    error_rates: dict[ErrorType, float] = Field(default_factory=dict)
    malformed_plan: float = Field(0.0, ge=0, le=1)  # a plan text that does not parse (S5 = 0)
    # context knobs (see CONTEXT_KNOBS): None / 0 is neutral, the built-in profiles keep them so
    guided_error_factor: float | None = Field(None, ge=0, le=1)
    fix_invalid_call: float = Field(0.9, ge=0, le=1)  # corrects a call from an error message
    max_attempts: int = Field(3, ge=1, le=20)  # invalid attempts per step before giving up
    notice_explicit: float = Field(0.95, ge=0, le=1)  # sees an error / 404 / timeout / empty
    # checks a result for plausibility, and traces a value a later tool rejects back to the
    # result it came from (implicit faults); what a check can see is in models/simulated/observe.py
    notice_implicit: float = Field(0.5, ge=0, le=1)
    on_fault: FaultPolicy = Field(default_factory=FaultPolicy)
    verifier_uptake: float | None = Field(None, ge=0, le=1)
    replan_rewrite: float = Field(0.0, ge=0, le=1)

    @field_validator("error_rates", mode="before")
    @classmethod
    def _known_types(cls, v: Any) -> Any:
        if not isinstance(v, Mapping):
            raise ValueError(f"error_rates must be a mapping, got {type(v).__name__}")
        out: dict[Any, Any] = {}
        names = {e.value.lower(): e for e in ErrorType}
        for key, rate in v.items():
            et = key if isinstance(key, ErrorType) else names.get(str(key).lower())
            if et is None:
                raise ValueError(
                    f"error_rates: unknown error type {key!r}; known: "
                    f"{[e.value for e in STATIC_ERROR_TYPES]}"
                )
            if et not in STATIC_ERROR_TYPES:
                raise ValueError(
                    f"error_rates: {et.value} is how the agent reacts to a tool fault, not a "
                    "rate; set notice_explicit instead"
                )
            if not isinstance(rate, (int, float)) or isinstance(rate, bool) or not 0 <= rate <= 1:
                raise ValueError(
                    f"error_rates[{et.value}] must be a number in [0, 1], got {rate!r}"
                )
            out[et] = float(rate)
        return out

    @model_validator(mode="after")
    def _exclusive_sum(self) -> CompetenceProfile:
        total = sum(self.error_rates.get(e, 0.0) for e in CALL_ERROR_TYPES)
        if total > 1 + 1e-9:
            raise ValueError(
                f"profile {self.name!r}: call-level error rates sum to {total:.3f} > 1"
            )
        return self

    def rate(self, error: ErrorType) -> float:
        return self.error_rates.get(error, 0.0)

    def with_only(self, **rates: float) -> CompetenceProfile:
        """A copy whose only non-zero error rates are ``rates`` (keys are type names)."""
        return CompetenceProfile.model_validate(
            {**self.model_dump(exclude={"error_rates"}), "error_rates": rates}
        )


def _rates(scale: float) -> dict[ErrorType, float]:
    base = {
        ErrorType.TOOL_NAME_ERROR: 0.02,
        ErrorType.TOOL_SELECT_ERROR: 0.015,
        ErrorType.PARAMETER_ERROR: 0.04,
        ErrorType.PARAMETER_MISSING: 0.035,
        ErrorType.TYPE_ERROR: 0.04,
        ErrorType.PARAMETER_INVALID: 0.03,
        ErrorType.DEPENDENCE_NULL: 0.025,
        ErrorType.DEPENDENCE_ERROR: 0.015,
        ErrorType.PARALLELISM_ERROR: 0.03,
        ErrorType.SERIAL_ERROR: 0.05,
        ErrorType.TOOLCALL_MISSING: 0.03,
        ErrorType.TOOLCALL_REDUNDANCY: 0.04,
    }
    return {k: round(v * scale, 5) for k, v in base.items()}


PROFILES: dict[str, CompetenceProfile] = {
    "novice": CompetenceProfile(
        name="novice",
        description="a small model: frequent call errors, notices loud failures, trusts data",
        error_rates=_rates(1.0),
        fix_invalid_call=0.6,
        max_attempts=3,
        notice_explicit=0.7,
        notice_implicit=0.1,
        on_fault=FaultPolicy(
            retry=0.6,
            reroute=0.15,
            abort=0.25,
            max_retries=2,
            stubborn=0.5,
            press_on=0.5,
            find_alternative=0.5,
        ),
    ),
    "competent": CompetenceProfile(
        name="competent",
        description="a capable model: occasional errors, retries then reroutes, some checks",
        error_rates=_rates(0.35),
        fix_invalid_call=0.85,
        max_attempts=3,
        notice_explicit=0.93,
        notice_implicit=0.4,
        on_fault=FaultPolicy(
            retry=0.5,
            reroute=0.4,
            abort=0.1,
            max_retries=1,
            stubborn=0.25,
            press_on=0.3,
            find_alternative=0.75,
        ),
    ),
    "expert": CompetenceProfile(
        name="expert",
        description="a strong model: rare errors, checks values, reroutes deliberately",
        error_rates=_rates(0.08),
        fix_invalid_call=0.98,
        max_attempts=4,
        notice_explicit=0.99,
        notice_implicit=0.8,
        on_fault=FaultPolicy(
            retry=0.45,
            reroute=0.5,
            abort=0.05,
            max_retries=1,
            stubborn=0.1,
            press_on=0.15,
            find_alternative=0.92,
        ),
    ),
}


#: Knobs that treat one decision differently by the context it is made in (a plan in the
#: prompt, a verifier's message, a replanning request). Each is an *assumption* about models,
#: not a measurement, and each one alone can make one agent design look better than another.
#: The built-in profiles keep every one neutral, so that a difference between designs comes
#: from what the designs do; a run whose profile sets one prints it
#: (:func:`context_assumptions`). name -> (neutral value, meaning).
CONTEXT_KNOBS: dict[str, tuple[Any, str]] = {
    "guided_error_factor": (
        None,
        "extra per-call error rate (x the profile's rates) when an executor transcribes a node "
        "of a written plan; neutral (unset): the call is the plan's node as written, because "
        "the decision (tool and arguments, with its errors) was made when the plan was written",
    ),
    "verifier_uptake": (
        None,
        "probability of acting on one verifier finding; neutral (unset): fix_invalid_call, "
        "because correcting a node from a verifier's message is the same decision as "
        "correcting a call from a tool's error message",
    ),
    "replan_rewrite": (
        0.0,
        "after a failure the replanner redraws every pending step instead of fixing the failed "
        "one; neutral 0: pending steps keep the decisions already made, as in ReAct",
    ),
    "malformed_plan": (
        0.0,
        "a plan text that does not parse (only designs that write plans can suffer it); "
        "neutral 0 -- a real model's rate is measured with local:smollm2",
    ),
}


def context_assumptions(profile: CompetenceProfile) -> dict[str, Any]:
    """The context knobs ``profile`` sets away from neutral (empty for the built-in ones)."""
    return {
        k: getattr(profile, k)
        for k, (neutral, _) in CONTEXT_KNOBS.items()
        if getattr(profile, k) != neutral
    }


def assumptions_line(profile: CompetenceProfile) -> str | None:
    """One line naming the non-neutral context knobs of ``profile``, or ``None``."""
    got = context_assumptions(profile)
    if not got:
        return None
    return f"profile {profile.name!r} sets design-sensitive assumptions: " + ", ".join(
        f"{k}={v}" for k, v in got.items()
    )


#: What a table made with a ``simulated:*`` model can and cannot show (printed beside it).
SIMULATED_CAVEAT = (
    "simulated:* models are parametric policies, not language models: a table made with one "
    "illustrates the metrics and the harness, and its differences between designs follow from "
    "the profile's rates; design rankings need a real model (local:smollm2 offline, or "
    "--model openai:NAME --base-url URL)."
)


def model_notes(models: Iterable[str]) -> list[str]:
    """Lines a table of ``models`` must carry: the caveat for simulated models and every
    non-neutral context knob of their profiles (model labels as episodes record them)."""
    notes: list[str] = []
    for label in models:
        label = str(label)
        if not label.startswith("simulated:"):
            continue
        if SIMULATED_CAVEAT not in notes:
            notes.insert(0, SIMULATED_CAVEAT)
        spec = label.split(":", 1)[1].rsplit("+", 1)[0].strip() or "competent"
        try:
            line = assumptions_line(load_profile(spec))
        except ValueError:
            continue
        if line and line not in notes:
            notes.append(line)
    return notes


def spec_with_overrides(spec: str, assignments: Sequence[str]) -> str:
    """A ``simulated:<profile>`` model spec with ``key=value`` overrides folded into it.

    ``simulated:competent`` + ``["verifier_uptake=1.0"]`` gives
    ``simulated:competent[verifier_uptake=1.0]``, which ``load_profile`` reads back, so the
    change travels with the spec and every episode's model label says what was changed.
    Raises ``ValueError`` for a spec that is not simulated or an override that does not apply.
    """
    if not assignments:
        return spec
    kind, _, rest = spec.partition(":")
    if kind != "simulated":
        raise ValueError(f"--profile-set applies to simulated:* models only, not {spec!r}")
    base = rest.strip() or "competent"
    items = [a.strip() for a in assignments if a.strip()]
    for a in items:
        if "," in a or "[" in a or "]" in a:
            raise ValueError(f"--profile-set {a!r}: one KEY=VALUE per option, no ',' or brackets")
    override(load_profile(base), items)  # validate now, with a clear message
    return f"simulated:{base}[{','.join(items)}]"


def _coerce(text: str) -> Any:
    low = text.strip().lower()
    if low in ("none", "null", "unset"):
        return None
    if low in ("true", "false"):
        return low == "true"
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text


def override(profile: CompetenceProfile, assignments: Iterable[str]) -> CompetenceProfile:
    """``profile`` with fields set from ``key=value`` strings (``replan run --profile-set``).

    Keys are profile fields (``verifier_uptake``), ``on_fault.<field>``,
    ``error_rates.<Type>``, or ``error_scale`` (every error rate multiplied by the value).
    The copy is named ``<name>[key=value,...]`` so that its episodes say what was changed.
    Raises ``ValueError`` naming the assignment that cannot be applied.
    """
    data = profile.model_dump()
    data["error_rates"] = {k.value: v for k, v in profile.error_rates.items()}
    done: list[str] = []
    for item in assignments:
        key, sep, raw = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--profile-set {item!r}: expected KEY=VALUE")
        value = _coerce(raw.strip())
        if key == "error_scale":
            if not isinstance(value, int | float) or value < 0:
                raise ValueError(f"--profile-set {item!r}: error_scale must be a number >= 0")
            data["error_rates"] = {k: min(1.0, v * value) for k, v in data["error_rates"].items()}
        elif key.startswith("on_fault."):
            sub = key.split(".", 1)[1]
            if sub not in FaultPolicy.model_fields:
                raise ValueError(
                    f"--profile-set {item!r}: unknown on_fault field {sub!r}; known: "
                    f"{sorted(FaultPolicy.model_fields)}"
                )
            data["on_fault"] = {**data["on_fault"], sub: value}
        elif key.startswith("error_rates."):
            data["error_rates"] = {**data["error_rates"], key.split(".", 1)[1]: value}
        elif key in CompetenceProfile.model_fields and key not in ("name", "description"):
            data[key] = value
        else:
            fields = sorted(set(CompetenceProfile.model_fields) - {"name", "description"})
            raise ValueError(
                f"--profile-set {item!r}: unknown profile field {key!r}; known: {fields}, "
                "on_fault.<field>, error_rates.<Type>, error_scale"
            )
        done.append(f"{key}={raw.strip()}")
    if not done:
        return profile
    data["name"] = f"{profile.name}[{','.join(done)}]"
    try:
        return CompetenceProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(profile)"
        raise ValueError(f"--profile-set: field {loc}: {first['msg']}") from exc


def load_profile(spec: str | Path | Mapping[str, Any] | CompetenceProfile) -> CompetenceProfile:
    """A profile from a name (``expert``), a YAML path, a dict, or a profile.

    A dict or file may name a ``base`` profile whose fields it overrides. Raises ``ValueError``
    naming the profile, file and field when the input is wrong.
    """
    if isinstance(spec, CompetenceProfile):
        return spec
    where = "profile dict"
    if isinstance(spec, Path) or (
        isinstance(spec, str)
        and not spec.strip().endswith("]")
        and (spec.endswith((".yaml", ".yml", ".json")) or "/" in spec or "\\" in spec)
    ):
        path = Path(spec)
        where = str(path)
        if not path.exists():
            raise ValueError(f"profile file {path} does not exist")
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ValueError(f"profile file {path} is not valid YAML: {exc}") from exc
        if not isinstance(data, Mapping):
            raise ValueError(f"profile file {path} must hold a mapping, got {type(data).__name__}")
        data = dict(data)
        data.setdefault("name", path.stem)
        spec = data
    if isinstance(spec, str):
        m = linre.fullmatch(r"(.+?)\[(.*)\]", spec.strip())
        if m:  # ``competent[verifier_uptake=1.0,on_fault.retry=0]`` (replan run --profile-set)
            return override(load_profile(m.group(1)), [a for a in m.group(2).split(",") if a])
        if spec not in PROFILES:
            raise ValueError(f"unknown profile {spec!r}; named profiles: {sorted(PROFILES)}")
        return PROFILES[spec]
    data = dict(spec)
    base_name = data.pop("base", None)
    if base_name is not None:
        if base_name not in PROFILES:
            raise ValueError(
                f"{where}: unknown base profile {base_name!r}; named: {sorted(PROFILES)}"
            )
        base = PROFILES[base_name].model_dump()
        if "error_rates" in data and isinstance(data["error_rates"], Mapping):
            rates = {k.value: v for k, v in PROFILES[base_name].error_rates.items()}
            rates.update({str(k): v for k, v in data["error_rates"].items()})
            data["error_rates"] = rates
        if "on_fault" in data and isinstance(data["on_fault"], Mapping):
            data["on_fault"] = {**base["on_fault"], **data["on_fault"]}
        data = {**base, **data}
    try:
        return CompetenceProfile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(profile)"
        raise ValueError(f"{where}: field {loc}: {first['msg']}") from exc


__all__ = [
    "CALL_ERROR_TYPES",
    "CONTEXT_KNOBS",
    "PROFILES",
    "SIMULATED_CAVEAT",
    "STATIC_ERROR_TYPES",
    "CompetenceProfile",
    "FaultPolicy",
    "assumptions_line",
    "check_profile",
    "context_assumptions",
    "load_profile",
    "model_notes",
    "override",
    "spec_with_overrides",
]


# ---------------------------------------------------------------------------------------------
# the model kind ``simulated:`` (a profile name, a YAML file, a profile with overrides)
def check_profile(profile: str) -> None:
    """A named competence profile or a readable profile file; the ``ValueError`` names the
    closest named profile or the file's problem."""
    try:
        load_profile(profile)
    except ValueError as exc:
        named = ", ".join(PROFILES)
        if profile in PROFILES or any(c in profile for c in "/\\.:"):  # a file or a field
            raise ValueError(f"{exc}; use one of {named} or a YAML file path") from None
        close = difflib.get_close_matches(profile, list(PROFILES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(
            f"unknown profile {profile!r}: {hint}use one of {named} or a YAML file path"
        ) from None
