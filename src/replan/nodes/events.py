"""Progress events on LangGraph's custom stream (``graph.stream(..., stream_mode="custom")``).

Every event is a dict with an ``event`` key:

- ``round_started``: ``round``, ``nodes`` (frontier call nodes of a wave) or ``turn`` (ReAct)
- ``call``: ``round``, ``index``, ``tool``, ``node``, ``args``
- ``verdict``: ``round``, ``index``, ``tool``, ``node``, ``code``, ``ok``, ``perturbation``
- ``plan``: ``index``, ``source``, ``round``, ``parse_ok``, ``findings``, ``approved``
- ``answer``: ``source`` (``model`` or ``plan_results``)
- ``end``: ``reason``, ``error``

The runner turns them into a progress display. Outside a graph (a tool invoked directly) the
events go nowhere.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer


def emit(event: str, **data: Any) -> None:
    """Write one progress event to the custom stream of the running graph, if any."""
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError, AttributeError):  # not inside a graph run
        return
    writer({"event": event, **data})
