"""The simulated agent: a deterministic chat model that plays a tool-using agent.

**This is not a language model, and its tables are not evidence about agent designs.** It is a
parametric policy that reads a request the way a careful model would and makes mistakes at the
rates of a :class:`~replan.models.simulated.profiles.CompetenceProfile`. It exists so that every design
runs offline and reproducibly, and so that tests can inject known error rates and check that the
metrics recover them. Design rankings need a real model (``local:smollm2``, or any
OpenAI-compatible endpoint).

**It knows only what a model is shown** (:mod:`replan.models.simulated.visible`): the query, the tool list
of the request (schemas with their ``x-kind`` annotations) and the observations in the
conversation. It never reads the task's gold plan, valid paths, checker or fault schedule: the
plan it means to follow is read from the query and the tool list; a fix after a tool's or a
verifier's message uses only that message and the visible context (a value it cannot find there
stays missing, and the fix fails); a reroute picks only listed tools whose input and output kinds
fit.

**The same noise applies to the same decision wherever it is made.** Choosing a step's tool and
arguments draws from one random stream keyed by (task, seed, step, attempt), whether ReAct
chooses the call or a planner writes the node; correcting a step from an error message (a tool's
rejection or a verifier finding) draws from one stream keyed by (step, fix number) with the same
probability ``fix_invalid_call``. An executor that follows a written plan issues the plan's node
as written: the decision was made (with its errors) when the plan was written. Knobs that treat
contexts differently are ``CONTEXT_KNOBS`` of the profile, neutral in the built-in profiles.

What it answers is decided by the request's tag (:func:`replan.core.wire.request_kind`: the
system message's, or a revision's findings message), never by which agent design sent the
request:

- ``[replan:plan]`` -- a ``<thought>`` and a ParaRecover JSON DAG: the plan read from the request
  with each node's decision drawn (wrong names, missing or mistyped parameters, missing / wrong /
  extra dependencies, missing and redundant calls).
- ``[replan:revise]`` -- the previous plan with each verifier finding acted on (the node written
  again from the request) with probability ``uptake()``.
- ``[replan:replan]`` -- the current plan with executed nodes unchanged; failed or faulty steps
  retried, rerouted to listed tools that fit, or the plan cut short with an honest response
  node, as the profile draws it. The replanner keeps its memory in the plan, as a model would:
  ``[retry k]`` and ``[instead of <tools>]`` at the end of a node's ``desc``.
- ``[replan:act]`` with tools bound -- tool calls (``AIMessage.tool_calls``), all ready steps of
  its plan (the plan in the instructions, else the one it reads from the request) in one turn,
  then a plain-text answer stating every value it obtained or saying that the task could not be
  done. The responder's request (an acting request that says not to call tools) gets the
  answer directly.

Faults are *discovered* from observations: a rejected call is the agent's own mistake (fixed with
``fix_invalid_call``); an error, an HTTP status, a timeout or an empty result is an explicit fault
(noticed with ``notice_explicit``); a well-formed result that fails a plausibility check
(:mod:`replan.models.simulated.observe`) is an implicit one (``notice_implicit``), and so is a value that a
later tool rejects as unknown or invalid. Then it retries, reroutes, aborts, or trusts the value,
per ``on_fault``.

Randomness comes from SHA-256 (never ``hash()``) over the task's base id, the seed and the
decision's key, so the same request always gives the same reply, in every process, and the model
keeps no state between calls: what it "remembers" it reads back from the conversation.

The package along its seams: ``model`` (the LangChain chat-model surface), ``turn`` (one request:
plan, revise, replan, the noise per decision), ``actor`` (ReAct play from the messages),
``plan_memory`` (what it keeps in the plan it writes, the final answer's wording), ``common``
(digests, value conversions, structured output), ``profiles`` (competence profiles: the error
rates and fault handling), ``visible`` (what a request shows: the query, the tools, their kinds),
``observe`` (plausibility checks on observations). Its mistakes come from
:mod:`replan.env.mistakes` (the ``AGENT`` style).
"""

from __future__ import annotations

from replan.lazy import lazy_exports
from replan.models.simulated import kind  # noqa: F401  (registers ``simulated:``)

#: loaded on first use: the model kind (and the profiles) load without LangChain
_LAZY = {
    "SimulatedChatModel": ("replan.models.simulated.model", "SimulatedChatModel"),
    "rewrite_refs": ("replan.models.simulated.common", "rewrite_refs"),
    "unresolved_ref": ("replan.models.simulated.plan_memory", "unresolved_ref"),
}


__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = ["SimulatedChatModel", "rewrite_refs", "unresolved_ref"]
