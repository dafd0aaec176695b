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

Each kind is registered by its own module with :func:`~replan.models.registry.model_kind`
(``profiles``, ``local``, ``providers``); a new kind is one new file.

Transient failures of real models are retried by :func:`replan.nodes.llm.call_model` (bounded
exponential backoff with jitter); a model that keeps failing ends its episode with end reason
``model_error`` and the (redacted) error text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from replan.lazy import lazy_exports
from replan.models.registry import MODEL_KINDS, ModelKind, kind_of, model_kind

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from replan.core.task import Task

#: loaded on first use, so that the profiles (``replan run``'s notes) load without LangChain
_LAZY = {
    "LocalChatModel": ("replan.models.local", "LocalChatModel"),
    "LocalModelUnavailable": ("replan.models.local", "LocalModelUnavailable"),
    "smollm2_path": ("replan.models.local", "smollm2_path"),
    "provider_model": ("replan.models.providers", "provider_model"),
    "SimulatedChatModel": ("replan.models.simulated", "SimulatedChatModel"),
    "PROFILES": ("replan.models.simulated.profiles", "PROFILES"),
    "CompetenceProfile": ("replan.models.simulated.profiles", "CompetenceProfile"),
    "FaultPolicy": ("replan.models.simulated.profiles", "FaultPolicy"),
    "load_profile": ("replan.models.simulated.profiles", "load_profile"),
}


__getattr__ = lazy_exports(__name__, _LAZY)


SPEC_HELP = (
    "use 'simulated:<profile>' (novice, competent, expert, or a YAML file), 'local:smollm2', "
    "or '<provider>:<model>' such as 'openai:gpt-4o-mini' (or a registered model kind, "
    "replan.models.registry)"
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
    from langchain_core.language_models import BaseChatModel

    if isinstance(spec, BaseChatModel):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty or invalid model spec {spec!r}; {SPEC_HELP}")
    spec = spec.strip()
    kind = kind_of(spec)
    rest = spec.partition(":")[2]
    if kind is None or (kind.any_prefix and not rest.strip()):
        raise ValueError(f"model spec {spec!r} names no provider; {SPEC_HELP}")
    return kind.build(
        rest.strip(), spec=spec, task=task, corpus=corpus, seed=seed, base_url=base_url, **kw
    )


__all__ = [
    "MODEL_KINDS",
    "PROFILES",
    "CompetenceProfile",
    "FaultPolicy",
    "LocalChatModel",
    "LocalModelUnavailable",
    "ModelKind",
    "SimulatedChatModel",
    "kind_of",
    "load_profile",
    "make_model",
    "model_kind",
    "provider_model",
    "smollm2_path",
]
