"""Chat models for replan: the simulated agent (offline default), a local LLM, any provider.

``make_model(spec, ...)`` is the one entry point:

=================================  ==========================================================
``simulated:<profile>``            :class:`SimulatedChatModel` — a deterministic parametric
                                   policy (not a language model) that sees only what a model
                                   is shown; ``novice`` / ``competent`` / ``expert``, a YAML
                                   file (``simulated:/path/profile.yaml``), or a profile with
                                   overrides (``simulated:competent[verifier_uptake=0]``)
``local:smollm2``                  :class:`LocalChatModel` — SmolLM2-135M-Instruct on the CPU
                                   through llama.cpp (extra ``local``); ``local:/path/x.gguf``
                                   runs another ChatML GGUF
``<provider>:<model>``             ``langchain.chat_models.init_chat_model`` (``openai:...``,
                                   ``anthropic:...``, ``ollama:...``); ``base_url`` for
                                   OpenAI-compatible servers (vLLM, llama.cpp server)
=================================  ==========================================================

Transient failures of real models are retried by :func:`replan.nodes.llm.call_model` (bounded
exponential backoff with jitter); a model that keeps failing ends its episode with end reason
``model_error`` and the (redacted) error text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from replan.core.task import Task
from replan.models.local import LocalChatModel, LocalModelUnavailable, smollm2_path
from replan.models.profiles import PROFILES, CompetenceProfile, FaultPolicy, load_profile
from replan.models.providers import provider_model
from replan.models.simulated import SimulatedChatModel

SPEC_HELP = (
    "use 'simulated:<profile>' (novice, competent, expert, or a YAML file), 'local:smollm2', "
    "or '<provider>:<model>' such as 'openai:gpt-4o-mini'"
)


def make_model(
    spec: str | BaseChatModel,
    *,
    task: Task | None = None,
    corpus: Any = None,
    seed: int = 0,
    base_url: str | None = None,
    **kw: Any,
) -> BaseChatModel:
    """The chat model named by ``spec`` (a ready model is returned as is).

    ``task``, ``corpus`` and ``seed`` matter to the simulated model, which plays one task
    (it is built per episode); ``seed`` also seeds the local model. Other keyword arguments
    go to the model class (``temperature``, ``api_key``, ``timeout``, ...).
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty or invalid model spec {spec!r}; {SPEC_HELP}")
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "simulated":
        if task is None:
            raise ValueError(
                f"model {spec!r}: the simulated model plays one task; pass task=... "
                "(it is built per episode)"
            )
        profile = load_profile(rest.strip() or "competent")
        return SimulatedChatModel(task=task, corpus=corpus, profile=profile, seed=seed, **kw)
    if kind == "local":
        name = rest.strip()
        if name in ("", "smollm2"):
            return LocalChatModel(seed=seed, **kw)
        if name.endswith(".gguf"):
            return LocalChatModel(model_path=str(Path(name)), model_name=spec, seed=seed, **kw)
        raise ValueError(f"unknown local model {name!r}: use 'local:smollm2' or 'local:/path.gguf'")
    if not rest:
        raise ValueError(f"model spec {spec!r} names no provider; {SPEC_HELP}")
    return provider_model(spec, base_url=base_url, **kw)


__all__ = [
    "PROFILES",
    "CompetenceProfile",
    "FaultPolicy",
    "LocalChatModel",
    "LocalModelUnavailable",
    "SimulatedChatModel",
    "load_profile",
    "make_model",
    "provider_model",
    "smollm2_path",
]
