"""The model kind ``simulated:<profile>``: registered without loading the model (LangChain)
until one is built."""

from __future__ import annotations

from typing import Any

from replan.models.registry import model_kind
from replan.models.simulated.profiles import check_profile, load_profile


def _check_simulated(rest: str, *, spec: str, base_url: str | None = None) -> None:
    check_profile(rest.strip() or "competent")


@model_kind("simulated", example="simulated:<profile>", check=_check_simulated)
def build_simulated(
    rest: str, *, spec: str, task: Any = None, corpus: Any = None, seed: int = 0, **kw: Any
) -> Any:
    """A :class:`~replan.models.simulated.model.SimulatedChatModel` playing ``task`` with the
    profile ``rest`` (default ``competent``)."""
    from replan.models.simulated.model import SimulatedChatModel

    if task is None:
        raise ValueError(
            f"model {spec!r}: the simulated model plays one task; pass task=... "
            "(it is built per episode)"
        )
    kw.pop("base_url", None)
    profile = load_profile(rest.strip() or "competent")
    return SimulatedChatModel(task=task, corpus=corpus, profile=profile, seed=seed, **kw)


__all__ = ["build_simulated"]
