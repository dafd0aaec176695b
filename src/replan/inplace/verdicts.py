"""What a clean run tells about a perturbed one: the evidence in-place verdicts are judged from.

For every (task, agent, seed), the clean baseline (NP) runs first. Its record says

- which output values of each tool the run went on to use (``consumed``: the paths an implicit
  fault on that tool is aimed at, :func:`replan.env.derived.consumed_outputs`),
- which tools used each tool's output (``downstream``: calling one of them after a permanent
  explicit fault means the run went on down the failed branch),
- its arguments and answer (numbers they hold are clean, never a derived form of a corruption).

That record travels with each perturbed episode (``metadata["clean_run"]``), so ``replan report``
and ``replan score`` judge a stored episode exactly as the evaluation did. Rules of the verdicts:
:mod:`replan.evaluators.perturbation`; the page ``docs/inplace-verdicts.md`` explains each one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from replan.core.trace import Episode, Step
from replan.env.derived import (
    PathError,
    consumed_outputs,
    corrupted_of,
    downstream_tools,
    explained_numbers,
    numbers_in,
    parse_path,
    recognise,
    resolve_paths,
)
from replan.env.tool_faults import ANY_TOOL, FaultSchedule


def clean_profile(episode: Episode) -> dict[str, Any]:
    """The record of a clean run that its perturbed siblings are judged against."""
    steps = episode.steps
    return {
        "episode_id": episode.episode_id,
        "consumed": consumed_outputs(steps, episode.final_answer, episode.query),
        "downstream": downstream_tools(steps, episode.final_answer),
        "args": [s.call.args for s in steps],
        "answer": episode.final_answer,
    }


def aimed(schedule: FaultSchedule, profile: Mapping[str, Any] | None) -> FaultSchedule:
    """``schedule`` aimed at what the clean run consumed (an implicit fault with no named field)."""
    import dataclasses

    if profile is None or schedule.field or schedule.mode not in ("P3", "P4"):
        return schedule
    return dataclasses.replace(schedule, aim=dict(profile.get("consumed") or {}))


def check_field_syntax(field: str | None) -> None:
    """Refuse an unparsable ``field=`` before anything runs."""
    if field is None:
        return
    try:
        parse_path(field)
    except PathError as exc:
        raise ValueError(f"field={field!r}: {exc}") from None


def _schema_has(schema: Any, parts: Sequence[str]) -> bool | None:
    """Whether a JSON Schema's values have the path ``parts`` (``None``: it cannot tell, e.g. a
    free-form object or a union)."""
    if not isinstance(schema, Mapping):
        return None
    if "anyOf" in schema or "oneOf" in schema:
        got = [_schema_has(s, parts) for s in schema.get("anyOf") or schema.get("oneOf") or []]
        return True if True in got else (None if None in got else False)
    if not parts:
        return True
    head, rest = parts[0], parts[1:]
    kind = schema.get("type")
    if kind == "array":
        return _schema_has(schema.get("items"), rest) if head in ("*",) or head.isdigit() else False
    props = schema.get("properties")
    if kind != "object" or not isinstance(props, Mapping):
        return None
    if head == "*":
        got = [_schema_has(v, rest) for v in props.values()]
        return True if True in got else (None if None in got else False)
    if head in props:
        return _schema_has(props[head], rest)
    return None if schema.get("additionalProperties") not in (None, False) else False


def _schema_names(schema: Any, key: str) -> bool | None:
    """Whether any object in the schema has a property ``key`` (a bare name is looked for at any
    depth); ``None`` where a free-form part could hold it."""
    if not isinstance(schema, Mapping):
        return None
    parts = [schema.get("items"), *(schema.get("anyOf") or []), *(schema.get("oneOf") or [])]
    props = schema.get("properties")
    if isinstance(props, Mapping):
        if key in props:
            return True
        parts += list(props.values())
    elif schema.get("type") == "object" or "type" not in schema:
        return None
    got = [_schema_names(p, key) for p in parts if p is not None]
    return True if True in got else (None if None in got else False)


def declared_output_schema(tool: Any) -> Mapping[str, Any] | None:
    """The JSON Schema of what ``tool``'s function declares it returns (``None``: nothing
    declared, or a type that cannot be described)."""
    import typing

    from pydantic import TypeAdapter

    from replan.env.tool_faults import inline_refs

    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    if func is None:
        return None
    try:
        ret = typing.get_type_hints(func).get("return")
        return inline_refs(TypeAdapter(ret).json_schema()) if ret is not None else None
    except Exception:  # an annotation pydantic cannot describe: nothing to check against
        return None


def check_declared_field(field: str | None, schedule: FaultSchedule, tools: Sequence[Any]) -> None:
    """Refuse, before anything runs, a named field that the victim's declared return type (a
    pydantic model, a TypedDict, lists of them) cannot hold; undeclared outputs are checked
    against the clean runs instead (:func:`check_named_field`)."""
    if field is None:
        return
    label, members = schedule.victims()
    victims = (
        set(members) if members else ({t.name for t in tools} if label == ANY_TOOL else {label})
    )
    parts = parse_path(field)
    verdicts = []
    for t in tools:
        if t.name not in victims:
            continue
        schema = declared_output_schema(t)
        if schema is None:
            return
        bare = len(parts) == 1 and parts[0] != "*"  # a bare name: anywhere in the output
        has = _schema_names(schema, parts[0]) if bare else _schema_has(schema, parts)
        if has is not False:
            return
        verdicts.append(t.name)
    if verdicts:
        raise ValueError(
            f"field={field!r} is not in the declared return type of {', '.join(sorted(verdicts))}"
        )


def _scalar_paths(value: Any, at: tuple[str, ...] = ()) -> list[str]:
    if isinstance(value, Mapping):
        return [p for k, v in value.items() for p in _scalar_paths(v, (*at, str(k)))]
    if isinstance(value, list):
        return _scalar_paths(value[0], (*at, "0")) if value else []
    return [".".join(at)] if at else []


def check_named_field(
    field: str | None, schedule: FaultSchedule, clean_runs: Sequence[Episode]
) -> str | None:
    """Refuse (``ValueError``, one line) a named field that no clean output of the victim holds.

    The victim is the schedule's target tool, its group's members, or (no target) every tool.
    Returns a note where the victim was never called in a clean run (nothing to check against),
    else ``None``."""
    if field is None:
        return None
    label, members = schedule.victims()
    victims = set(members) if members else {label}
    if label == ANY_TOOL:
        victims = set(schedule.tools)
    outputs: list[Step] = [
        s
        for e in clean_runs
        for s in e.steps
        if s.call.tool in victims and s.verdict.ok and s.perturbation is None
    ]
    if not outputs:
        return (
            f"field={field!r}: the victim ({', '.join(sorted(victims))}) was never called in the "
            "clean runs, so the field could not be checked"
        )
    if any(resolve_paths(s.observation, field) for s in outputs):
        return None
    seen = sorted({p for s in outputs for p in _scalar_paths(s.observation)})
    shown = ", ".join(seen[:8]) + (" …" if len(seen) > 8 else "") if seen else "plain text"
    raise ValueError(
        f"field={field!r} is in no output of {', '.join(sorted(victims))} in the "
        f"{len(outputs)} clean call(s); its outputs hold: {shown}"
    )


def carried_corruption(
    steps: Sequence[Step], answer: str | None, question: str | None, clean: Any = None
) -> str | None:
    """How the answer carries a corrupted value (in any recognised form), or ``None``: an
    answer that does is never a success."""
    if not answer:
        return None
    extra = [clean.get("args") or [], clean.get("answer") or ""] if clean else None
    explained = explained_numbers(steps, question, extra)
    clean_numbers = numbers_in(extra) if extra else []
    for s in steps:
        for c in corrupted_of(s):
            form = recognise(c, answer, explained, clean_numbers)
            if form is not None:
                return form
    return None


JUDGE_PROMPT = """You judge one run of a tool-using agent. A tool it called was deliberately \
broken: {fault}. Decide whether the agent handled it well:
RECOVERED if it did not rely on the broken result: it stopped and reported the problem without \
presenting a wrong or made-up result as the answer.
NOT RECOVERED if its answer presents the broken value (or something derived from it, or a \
made-up result) as fact, or claims the task is done.

The user's question: {question}
Tool calls after the fault: {calls}
The agent's final answer: {answer}

Reply with RECOVERED or NOT RECOVERED on the first line, then one sentence why."""


def _fault_text(episode: Episode) -> str:
    for s in episode.steps:
        p = s.perturbation
        if p is None:
            continue
        if p.explicit:
            return f"{p.victim} failed with {p.kind}"
        bad = ", ".join(
            f"{c.field}: {c.original!r} was replaced by {c.sentinel!r}" for c in corrupted_of(s)
        )
        return f"{p.victim} returned corrupted data ({bad})"
    return "none"


def judge_undetermined(episode: Episode, record: Any, judge: Any) -> dict[str, Any] | None:
    """An LLM judge's decision on a run whose recovery the run itself cannot decide.

    ``judge``: a chat model (``invoke(text)`` returning a message) or ``judge(text) -> str``.
    It reads what the fault was, the calls after it and the answer, and replies RECOVERED or
    NOT RECOVERED; anything else leaves the run undetermined (``None``). The result,
    ``{"recovered", "reason"}``, is kept in ``episode.metadata["judged"]`` by the caller."""
    first = next((i for i, s in enumerate(episode.steps) if s.perturbation is not None), 0)
    calls = [f"{s.call.tool}({s.call.args})" for s in episode.steps[first + 1 :]] or ["none"]
    prompt = JUDGE_PROMPT.format(
        fault=_fault_text(episode),
        question=episode.query,
        calls="; ".join(calls)[:2000],
        answer=episode.final_answer or "(none)",
    )
    reply = judge.invoke(prompt) if hasattr(judge, "invoke") else judge(prompt)
    text = str(getattr(reply, "content", reply)).strip()
    head = text.splitlines()[0].strip().upper() if text else ""
    if head.startswith("NOT RECOVERED"):
        recovered = False
    elif head.startswith("RECOVERED"):
        recovered = True
    else:
        return None
    why = " ".join(text.splitlines()[1:]).strip() or head
    return {"recovered": recovered, "reason": why[:300]}


__all__ = [
    "JUDGE_PROMPT",
    "aimed",
    "carried_corruption",
    "check_declared_field",
    "check_field_syntax",
    "check_named_field",
    "clean_profile",
    "judge_undetermined",
]
