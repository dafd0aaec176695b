"""Any hosted or self-served chat model, through LangChain's ``init_chat_model``.

``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku-latest``, ``ollama:llama3.1`` ... and any
OpenAI-compatible server (vLLM, llama.cpp server, LM Studio) with ``base_url``. Retries are not
the client's business here: the client's own retries are turned off where the client has them,
so that every transient failure (429, 5xx, timeouts, dropped connections) goes through the one
bounded backoff-with-jitter policy of :func:`replan.nodes.llm.call_model`, and an episode whose
model keeps failing ends with ``model_error`` instead of hanging in nested retries.

Every call is also bounded in time: clients that take a ``timeout`` get one (default
:data:`DEFAULT_TIMEOUT_S`, or ``$REPLAN_MODEL_TIMEOUT``, or ``timeout=`` / ``replan run
--model-timeout``), so a server that accepts the connection and never answers raises a
timeout, which is retried like any transient failure and then ends the episode.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from replan.core.redact import redact, redact_logs

#: Providers whose LangChain client accepts ``max_retries`` (set to 0: replan retries).
CLIENT_RETRIES = frozenset(
    {"openai", "azure_openai", "anthropic", "mistralai", "groq", "deepseek", "xai"}
)

#: Providers whose LangChain client accepts ``timeout`` (seconds per request).
CLIENT_TIMEOUT = CLIENT_RETRIES | {"fireworks", "together"}

#: seconds a model request may take when nothing else is said
DEFAULT_TIMEOUT_S = 60.0
#: the environment variable that overrides :data:`DEFAULT_TIMEOUT_S`
TIMEOUT_ENV = "REPLAN_MODEL_TIMEOUT"


def default_timeout() -> float:
    """Seconds per model request: ``$REPLAN_MODEL_TIMEOUT`` when set (and positive), else 60."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{TIMEOUT_ENV}={raw!r} is not a number of seconds") from None
        if value > 0:
            return value
        raise ValueError(f"{TIMEOUT_ENV}={raw!r} must be a positive number of seconds")
    return DEFAULT_TIMEOUT_S


#: The LangChain package each common provider needs (for a helpful error).
PACKAGES = {
    "openai": "langchain-openai",
    "azure_openai": "langchain-openai",
    "anthropic": "langchain-anthropic",
    "ollama": "langchain-ollama",
    "google_genai": "langchain-google-genai",
    "google_vertexai": "langchain-google-vertexai",
    "mistralai": "langchain-mistralai",
    "groq": "langchain-groq",
    "bedrock": "langchain-aws",
    "bedrock_converse": "langchain-aws",
    "huggingface": "langchain-huggingface",
    "deepseek": "langchain-deepseek",
    "xai": "langchain-xai",
    "fireworks": "langchain-fireworks",
    "together": "langchain-together",
}


def provider_model(spec: str, *, base_url: str | None = None, **kwargs: Any) -> BaseChatModel:
    """A chat model for ``"<provider>:<model>"`` (``base_url`` for OpenAI-compatible servers).

    Extra keyword arguments go to the provider's client (``temperature``, ``api_key``,
    ``timeout``, ...). With ``base_url`` and no key anywhere (``api_key`` or the provider's
    environment variable), a placeholder key is sent, as local servers expect one but ignore it.
    """
    provider, sep, name = spec.partition(":")
    provider, name = provider.strip(), name.strip()
    if not sep or not provider or not name:
        raise ValueError(
            f"model spec {spec!r} must be '<provider>:<model>', e.g. 'openai:gpt-4o-mini'"
        )
    from langchain.chat_models import init_chat_model

    kw = dict(kwargs)
    if base_url:
        kw["base_url"] = base_url
        redact_logs()  # the HTTP client logs the URL it calls, credentials and all
        if provider == "openai" and "api_key" not in kw and not os.environ.get("OPENAI_API_KEY"):
            kw["api_key"] = "not-needed"
    if provider in CLIENT_RETRIES:
        kw.setdefault("max_retries", 0)
    if provider in CLIENT_TIMEOUT and kw.get("timeout") is None:
        kw["timeout"] = default_timeout()
    try:
        return init_chat_model(name, model_provider=provider, **kw)
    except ImportError as exc:
        pkg = PACKAGES.get(provider, f"langchain-{provider.replace('_', '-')}")
        raise ValueError(
            f"model {spec!r}: provider {provider!r} needs the package {pkg} (pip install {pkg})"
        ) from exc
    except ValueError as exc:
        raise ValueError(redact(f"model {spec!r}: {exc}")) from exc


__all__ = [
    "CLIENT_RETRIES",
    "CLIENT_TIMEOUT",
    "DEFAULT_TIMEOUT_S",
    "PACKAGES",
    "TIMEOUT_ENV",
    "default_timeout",
    "provider_model",
]
