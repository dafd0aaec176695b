"""Fault-test your own agent with your own tools and tasks (issue 15).

- :mod:`replan.env.tool_faults` — seeded fault schedules (NP, P1–P4) on your tools, built on the
  perturbation engine; explicit faults raise, implicit faults corrupt outputs with an
  episode-unique sentinel.
- :mod:`replan.env.tool_wrapper` — the one tool wrapper (our designs' calls run through it too):
  records, judges against each tool's args schema (or the world), injects.
- :mod:`.middleware` — :class:`FaultInjectionMiddleware` for ``create_agent``.
- :mod:`.tasks` — your tasks and their checkers.
- :mod:`.evaluate` — :func:`evaluate_in_place` (store, score, table, assertions).
- :mod:`.langsmith` — the same through ``langsmith.evaluate``.
- :mod:`.traces` — score production transcripts with nothing running.
- :mod:`.scripted` — a scripted tool-calling model for offline tests.
- :mod:`.pytest_plugin` — the ``replan_chaos`` fixture.

Names load on first use, so ``import replan.inplace`` stays light.
"""

from __future__ import annotations

from replan.lazy import lazy_exports

_LAZY = {
    "FaultSchedule": "replan.env.tool_faults",
    "InjectedFault": "replan.env.tool_faults",
    "FaultSession": "replan.env.tool_wrapper",
    "InstrumentedTool": "replan.env.tool_wrapper",
    "wrap_tools": "replan.env.tool_wrapper",
    "FaultInjectionMiddleware": "replan.inplace.middleware",
    "InPlaceTask": "replan.inplace.tasks",
    "load_tasks": "replan.inplace.tasks",
    "InPlaceResults": "replan.inplace.evaluate",
    "EpisodeInfo": "replan.inplace.evaluate",
    "evaluate_in_place": "replan.inplace.evaluate",
    "ScriptedToolModel": "replan.inplace.scripted",
    "score_traces": "replan.inplace.traces",
    "score_thread": "replan.inplace.traces",
    "evaluate_in_langsmith": "replan.inplace.langsmith",
}


__getattr__ = lazy_exports(__name__, {name: (module, name) for name, module in _LAZY.items()})


__all__ = sorted(_LAZY)
