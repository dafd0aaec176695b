"""The design registry: each agent design is a graph builder that registers itself.

A design is one file in this package (or a plugin, see :mod:`replan.core.registry`)::

    @design("my_design")
    def build_my_design(model, tools, config, *, checkpointer=None) -> CompiledStateGraph:
        ...

``replan run --agents``, :func:`replan.graphs.build_graph` and the preflight checks read the
registry; nothing else lists the designs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replan.core.registry import Registry
from replan.core.trace import EndReason

#: ``build(model, tools, config, *, checkpointer)`` -> a compiled LangGraph graph (``model`` and
#: ``tools`` as :func:`replan.graphs.inputs.agent_inputs` takes them)
Builder = Callable[..., Any]


@dataclass(frozen=True)
class Design:
    """An agent design: its name, its graph builder, the end reason of a run that exhausts its
    budget (steps, or rounds for a design that counts plan waves), and whether it has a
    replanner, so that it can start mid-run at a replan point (ParaRecover instances), its
    ``order`` in listings (ties keep the registration order), and whether its graph can be
    ``compiled_once`` per run and shared by the run's episodes: its builder, given
    :data:`~replan.nodes.episode.RUNNING_EPISODE` for ``model`` and ``tools``, reads them in
    its nodes through :func:`replan.graphs.inputs.input_source` (a plugin design that closes
    over its model or tools is compiled for each episode, the default)."""

    name: str
    build: Builder
    budget_reason: EndReason = EndReason.STEP_BUDGET
    replans: bool = False
    order: int = 100
    compiled_once: bool = False


#: every design, built-in (``replan.graphs``' modules) and plugged in
DESIGN_REGISTRY: Registry[Design] = Registry("design", "replan.graphs")


def design(
    name: str,
    *,
    budget_reason: EndReason = EndReason.STEP_BUDGET,
    replans: bool = False,
    order: int = 100,
    compiled_once: bool = False,
) -> Callable[[Builder], Builder]:
    """Register the decorated graph builder as design ``name`` (see :class:`Design`)."""

    def deco(build: Builder) -> Builder:
        DESIGN_REGISTRY.register(
            name,
            Design(name, build, budget_reason, replans, order, compiled_once),
            module=build.__module__,
        )
        return build

    return deco


def design_names() -> list[str]:
    """Every registered design, by ``order``, then in registration order."""
    return [d.name for d in sorted((d for _, d in DESIGN_REGISTRY.items()), key=lambda d: d.order)]


def get_design(name: str) -> Design:
    """The design named ``name``; an unknown name is a ``ValueError`` naming the known ones."""
    found = DESIGN_REGISTRY.find(name)
    if found is None:
        raise ValueError(
            f"unknown agent design {name!r}; choose one of {', '.join(design_names())}"
        )
    return found


__all__ = ["DESIGN_REGISTRY", "Design", "design", "design_names", "get_design"]
