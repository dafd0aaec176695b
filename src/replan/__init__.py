"""replan: process-level evaluation of tool-using LangGraph agents.

Where does the first invalid call happen, does the agent notice a broken or lying tool, how does
it replan, and what does recovery cost? ``replan.run`` runs agent designs on a suite with injected
faults; ``replan.evaluate_agent`` does the same for your own graph; ``replan.score`` scores saved
Episodes with nothing running.
"""

from __future__ import annotations

from replan.lazy import lazy_exports

__version__ = "0.1.0"

_LAZY = {
    "Call": ("replan.core.trace", "Call"),
    "Episode": ("replan.core.trace", "Episode"),
    "ParseFailure": ("replan.core.plan", "ParseFailure"),
    "Plan": ("replan.core.plan", "Plan"),
    "PlanNode": ("replan.core.plan", "PlanNode"),
    "Step": ("replan.core.trace", "Step"),
    "Task": ("replan.core.task", "Task"),
    "ToolSpec": ("replan.core.tools", "ToolSpec"),
    "Verdict": ("replan.core.trace", "Verdict"),
    "World": ("replan.env.world", "World"),
    "run": ("replan.api", "run"),
    "evaluate_agent": ("replan.api", "evaluate_agent"),
    "Results": ("replan.api", "Results"),
    "score": ("replan.evaluators", "score"),
    "score_episode": ("replan.evaluators", "score_episode"),
    "load_suite": ("replan.suites", "load_suite"),
    "load_corpus": ("replan.env.corpus", "load_corpus"),
    "make_model": ("replan.models", "make_model"),
    "run_episode": ("replan.graphs", "run_episode"),
    "FaultInjectionMiddleware": ("replan.inplace.middleware", "FaultInjectionMiddleware"),
    "evaluate_in_place": ("replan.inplace.evaluate", "evaluate_in_place"),
    "wrap_tools": ("replan.env.tool_wrapper", "wrap_tools"),
}


#: everything loads on first use: ``import replan`` (and so ``replan --help``) loads none of
#: the data model, LangGraph, LangChain, networkx or the corpus (``tests/test_layers.py`` checks it)
__getattr__ = lazy_exports(__name__, _LAZY)


__all__ = [*_LAZY]
