"""The perturbation engine (ToolMaze §3.4): deterministic faults on a task's victim tool.

A task's :class:`~replan.core.task.PerturbationProfile` names the victim — a tool, or an
alternative group whose *first tool the agent calls* becomes the victim (no other tool of that
group is ever perturbed) — and the mode:

========  =========================  ===============================================
mode      manifestation              persistence
========  =========================  ===============================================
P1        explicit (404/429/503/…)   transient: only the victim's first invocation
P2        explicit                   permanent: every invocation of the victim
P3        implicit (wrong data)      transient
P4        implicit                   permanent
========  =========================  ===============================================

Explicit faults are machine-readable errors: nothing runs and no state changes (the call itself
was valid, so it is not a verdict against the agent). Implicit faults return output that is
valid per the tool's ``returns`` schema but semantically wrong (a price ×1000, a negative stock,
a date decades away, a tampered identifier); the corrupted value is the **sentinel**, unique to
the task instance, so a scorer can prove whether it propagated into a later call or the answer.

Everything an injected response contains is derived from the task (its id, mode and the
generation-time clean output of each possible victim), never from the agent: every agent meets
identical faults. Only *which* tool of a group becomes the victim depends on the agent's choice,
which is the activation rule itself.
"""

from __future__ import annotations

import copy
import datetime as _dt
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replan.core import linre
from replan.core.task import PerturbationProfile, Task, mode_flags
from replan.core.tools import ToolSpec
from replan.core.trace import Perturbation
from replan.env.corpus import load_corpus
from replan.env.world import lookup_path, stable_seed

#: Explicit fault kinds, in the order the generator draws from.
EXPLICIT_KINDS: tuple[str, ...] = ("http_404", "http_429", "http_503", "timeout", "empty")

_EXPLICIT_TEXT = {
    "http_404": (404, "Not Found", "the requested resource does not exist on {tool}"),
    "http_429": (429, "Too Many Requests", "rate limit of {tool} exceeded; retry later"),
    "http_503": (503, "Service Unavailable", "{tool} is temporarily unavailable"),
}


def explicit_observation(kind: str, tool: str) -> Any:
    """The machine-readable error an explicit fault returns instead of an output."""
    if kind in _EXPLICIT_TEXT:
        status, reason, msg = _EXPLICIT_TEXT[kind]
        return {
            "error": kind,
            "status": status,
            "reason": reason,
            "message": f"HTTP {status} {reason}: " + msg.format(tool=tool),
        }
    if kind == "timeout":
        return {"error": "timeout", "message": f"{tool} timed out after 30 s with no response"}
    if kind == "empty":
        return {}
    raise ValueError(f"unknown explicit fault kind {kind!r}; expected one of {EXPLICIT_KINDS}")


@dataclass(frozen=True)
class ImplicitSpec:
    """How an implicit fault corrupts one tool's output: set ``field`` to ``value``.

    ``value`` is the sentinel (unique to the task instance); ``kind`` names the corruption.
    """

    field: str
    kind: str
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "kind": self.kind, "value": self.value}

    @classmethod
    def from_any(cls, data: ImplicitSpec | Mapping[str, Any]) -> ImplicitSpec:
        if isinstance(data, ImplicitSpec):
            return data
        return cls(field=str(data["field"]), kind=str(data["kind"]), value=data["value"])


def set_path(value: Any, path: Sequence[str], new: Any) -> bool:
    """Set ``value.<path>`` in place (dicts and list indices); False when the path is absent."""
    cur = value
    for part in path[:-1]:
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return False
    last = path[-1]
    if isinstance(cur, dict) and last in cur:
        cur[last] = new
        return True
    if isinstance(cur, list) and last.isdigit() and int(last) < len(cur):
        cur[int(last)] = new
        return True
    return False


def corrupt(output: Any, spec: ImplicitSpec) -> Any:
    """A copy of ``output`` with the sentinel written into ``spec.field``."""
    out = copy.deepcopy(output)
    set_path(out, spec.field.split("."), spec.value)
    return out


_DATE = linre.compile(r"^(\d{4})(-\d{2}-\d{2})(.*)$")


def _salt(*parts: Any) -> int:
    return stable_seed("sentinel", *parts)


def _shift_date(text: str, years: int) -> str | None:
    m = _DATE.match(text)
    if not m:
        return None
    year = int(m.group(1)) + years
    if not 1 <= year <= 9999:
        year = int(m.group(1)) - years
    candidate = f"{year:04d}{m.group(2)}{m.group(3)}"
    try:
        _dt.date.fromisoformat(candidate[:10])
    except ValueError:  # 29 February in a non-leap year
        candidate = f"{year:04d}{m.group(2)[:4]}-28{m.group(3)}"
    return candidate


def _allows_negative(schema: Mapping[str, Any]) -> bool:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    return lo is None or lo < 0


def corruptions(value: Any, schema: Mapping[str, Any], salt: int) -> list[tuple[str, Any]]:
    """Semantically wrong replacements for ``value`` (most telling first), each a sentinel."""
    out: list[tuple[str, Any]] = []
    tag = salt % 97 + 1
    if isinstance(value, bool):
        return [("boolean_flip", not value)]
    if isinstance(value, int):
        if _allows_negative(schema):
            out.append(("negative_value", -(abs(value) * 1000 + 100 + tag)))
        out.append(("value_x1000", (abs(value) or 1) * 1000 + tag))
        return out
    if isinstance(value, float):
        base = abs(value) if value else 1.0
        out.append(("value_x1000", round(base * 1000 + tag / 100, 2)))
        if _allows_negative(schema):
            out.append(("negative_value", -round(base * 1000 + tag / 100, 2)))
        return out
    if isinstance(value, str):
        shifted = _shift_date(value, 60 + salt % 20)
        if shifted is not None:
            out.append(("date_decades_away", shifted))
        token = "".join(
            "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"[(salt >> (5 * i)) % 32] for i in range(5)
        )
        out.append(("value_swapped", f"{value}-{token}" if value else token))
        return out
    return out


def _scalar_fields(
    value: Any, prefix: tuple[str, ...] = (), depth: int = 0
) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            out.extend(_scalar_fields(v, (*prefix, str(k)), depth + 1))
    elif isinstance(value, list) and value and depth < 4:
        out.extend(_scalar_fields(value[0], (*prefix, "0"), depth + 1))
    elif prefix and value is not None:
        out.append(prefix)
    return out


def _field_rank(path: tuple[str, ...], value: Any, preferred: Sequence[str]) -> tuple:
    dotted = ".".join(path)
    pref = next(
        (i for i, p in enumerate(preferred) if dotted == p or dotted.startswith(p + ".")),
        len(preferred),
    )
    if isinstance(value, bool):
        typ = 4
    elif isinstance(value, (int, float)):
        typ = 0
    elif isinstance(value, str) and _DATE.match(value):
        typ = 1
    elif isinstance(value, str):
        typ = 2
    else:
        typ = 3
    return (pref, typ, "0" in path, len(path), dotted)


def fault_fields(clean_output: Any, preferred: Sequence[str] = ()) -> list[tuple[str, ...]]:
    """The scalar fields of an output in the order an implicit fault tries them: ``preferred``
    dotted paths first, then numbers, dates, other strings, then others; shallow before deep."""
    fields = _scalar_fields(clean_output)
    fields.sort(key=lambda p: _field_rank(p, lookup_path(clean_output, p), preferred))
    return fields


def plan_implicit(
    spec: ToolSpec, clean_output: Any, salt: int, preferred: Sequence[str] = ()
) -> ImplicitSpec | None:
    """Choose the field and sentinel of an implicit fault on ``spec``'s output.

    Fields in ``preferred`` (dotted paths, e.g. the ones a later call consumes) come first, then
    numbers, dates, other strings. The corrupted output must stay valid per ``spec.returns``;
    ``None`` when no field can be corrupted that way.
    """
    if not isinstance(clean_output, (Mapping, list)):
        return None
    for path in fault_fields(clean_output, preferred):
        value = lookup_path(clean_output, path)
        schema = spec.output_field_schema(list(path)) or {}
        for kind, new in corruptions(value, schema, salt):
            if new == value:
                continue
            cand = ImplicitSpec(field=".".join(path), kind=kind, value=new)
            if spec.check_output(corrupt(clean_output, cand)).ok:
                return cand
    return None


@dataclass(frozen=True)
class ExplicitFault:
    """An explicit fault: the service failed; ``observation`` ignores the clean output."""

    perturbation: Perturbation

    def observation(self, clean_output: Any) -> Any:
        return explicit_observation(self.perturbation.kind, self.perturbation.victim)


@dataclass(frozen=True)
class ImplicitFault:
    """An implicit fault: schema-valid output with the sentinel in one field."""

    perturbation: Perturbation
    spec: ImplicitSpec | None
    salt: int
    tool: ToolSpec

    def observation(self, clean_output: Any) -> Any:
        spec = self.spec
        if spec is None:
            # a group member the generator never ran: plan the corruption on this output
            # (still a pure function of the task and the output, never of the agent)
            spec = plan_implicit(self.tool, clean_output, self.salt)
            if spec is None:
                return clean_output
        return corrupt(clean_output, spec)


class Perturber:
    """The :class:`~replan.env.world.FaultInjector` of one episode of one task instance.

    Stateful (which group tool was activated, how often the victim was invoked): make one per
    episode. ``group_tools`` are the tools of the victim's alternative group (empty: the profile's
    ``victim`` tool is the victim). ``implicit`` maps a tool name to its corruption.
    """

    def __init__(
        self,
        profile: PerturbationProfile,
        *,
        group_tools: Iterable[str] = (),
        implicit: Mapping[str, ImplicitSpec | Mapping[str, Any]] | None = None,
        salt: int = 0,
    ):
        self.profile = profile
        self.explicit, self.permanent = mode_flags(profile.mode)
        self.group_tools = frozenset(group_tools)
        if profile.group is not None and not self.group_tools:
            raise ValueError(f"profile names group {profile.group!r} but no group tools were given")
        self.implicit = {k: ImplicitSpec.from_any(v) for k, v in (implicit or {}).items()}
        self.salt = salt
        self.victim: str | None = None if self.group_tools else profile.victim
        self.invocations: Counter[str] = Counter()

    def reset(self) -> None:
        """Forget activations and invocation counts (a fresh episode)."""
        self.victim = None if self.group_tools else self.profile.victim
        self.invocations.clear()

    def intercept(self, spec: ToolSpec, args: Mapping[str, Any]):  # -> Fault | None
        name = spec.name
        if self.victim is None:
            if name not in self.group_tools:
                return None
            self.victim = name  # activation: the first group tool the agent calls
        if name != self.victim:
            return None
        self.invocations[name] += 1
        n = self.invocations[name]
        if not self.permanent and n > 1:
            return None
        if self.explicit:
            kind = self.profile.kind
            pert = Perturbation(
                mode=self.profile.mode,
                explicit=True,
                permanent=self.permanent,
                kind=kind,
                victim=name,
                group=self.profile.group,
                invocation=n,
            )
            return ExplicitFault(pert)
        ispec = self.implicit.get(name)
        if ispec is None and name == self.profile.victim and self.profile.field is not None:
            ispec = ImplicitSpec(self.profile.field, self.profile.kind, self.profile.sentinel)
        pert = Perturbation(
            mode=self.profile.mode,
            explicit=False,
            permanent=self.permanent,
            kind=ispec.kind if ispec else "implicit",
            victim=name,
            group=self.profile.group,
            sentinel=ispec.value if ispec else None,
            invocation=n,
        )
        return ImplicitFault(pert, ispec, self.salt, spec)


def injector_for(task: Task, corpus: Any = None) -> Perturber | None:
    """The fault injector of a task instance (``None`` for NP or a task without a profile).

    Group tools come from ``task.faults.victim_tools`` when the suite declared them, else from
    the corpus group; implicit corruptions from ``task.faults.implicit``.
    """
    prof = task.perturbation
    if prof is None or task.mode == "NP":
        return None
    group_tools: list[str] = []
    if prof.group is not None:
        group_tools = list(task.faults.victim_tools)
        if not group_tools:
            if corpus is None:
                corpus = load_corpus()
            grp = corpus.groups.get(prof.group)
            if grp is None:
                raise ValueError(f"task {task.task_id}: unknown alternative group {prof.group!r}")
            group_tools = list(grp.tools)
    return Perturber(
        prof,
        group_tools=group_tools,
        implicit=task.faults.implicit,
        salt=_salt(task.base_id, task.mode),
    )


__all__ = [
    "EXPLICIT_KINDS",
    "ExplicitFault",
    "ImplicitFault",
    "ImplicitSpec",
    "Perturber",
    "corrupt",
    "corruptions",
    "explicit_observation",
    "injector_for",
    "plan_implicit",
]
