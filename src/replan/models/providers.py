"""Any hosted or self-served chat model, through LangChain's ``init_chat_model``.

``openai:gpt-4o-mini``, ``anthropic:claude-3-5-haiku-latest``, ``ollama:llama3.1`` ... and any
OpenAI-compatible server (vLLM, llama.cpp server, LM Studio) with ``base_url``. Retries are not
the client's business here: the client's own retries are turned off where the client has them,
so that every transient failure (429, 5xx, timeouts, dropped connections) goes through the one
bounded backoff-with-jitter policy of :func:`replan.nodes.llm.call_model`, and an episode whose
model keeps failing ends with ``model_error`` instead of hanging in nested retries.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel

#: Providers whose LangChain client accepts ``max_retries`` (set to 0: replan retries).
CLIENT_RETRIES = frozenset(
    {"openai", "azure_openai", "anthropic", "mistralai", "groq", "deepseek", "xai"}
)

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
        if provider == "openai" and "api_key" not in kw and not os.environ.get("OPENAI_API_KEY"):
            kw["api_key"] = "not-needed"
    if provider in CLIENT_RETRIES:
        kw.setdefault("max_retries", 0)
    try:
        return init_chat_model(name, model_provider=provider, **kw)
    except ImportError as exc:
        pkg = PACKAGES.get(provider, f"langchain-{provider.replace('_', '-')}")
        raise ValueError(
            f"model {spec!r}: provider {provider!r} needs the package {pkg} (pip install {pkg})"
        ) from exc
    except ValueError as exc:
        raise ValueError(f"model {spec!r}: {exc}") from exc


__all__ = ["CLIENT_RETRIES", "PACKAGES", "provider_model"]
