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

import difflib
import importlib.util
import os
from typing import Any

from langchain_core.language_models import BaseChatModel

from replan.core.redact import redact, redact_logs
from replan.models.registry import model_kind

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


#: the environment variable holding each provider's key (providers absent here need none, or
#: authenticate another way, e.g. cloud credentials or a local server)
CREDENTIALS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "azure_openai": "AZURE_OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "google_genai": "GOOGLE_API_KEY",
    "mistralai": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "xai": "XAI_API_KEY",
    "fireworks": "FIREWORKS_API_KEY",
    "together": "TOGETHER_API_KEY",
}

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


def _langchain_providers() -> set[str]:
    """The providers ``init_chat_model`` knows, when this LangChain version lists them."""
    try:
        from langchain.chat_models import base
    except ImportError:  # pragma: no cover - langchain is a dependency
        return set()
    known = getattr(base, "_SUPPORTED_PROVIDERS", None) or getattr(base, "_BUILTIN_PROVIDERS", None)
    return set(known or ())


def check_provider(rest: str, *, spec: str, base_url: str | None = None) -> None:
    """The provider is known, its LangChain package installed and its key set (or a
    ``base_url`` for an OpenAI-compatible server); nothing is called."""
    kind, sep, rest = spec.strip().partition(":")
    kind, rest = kind.strip(), rest.strip()
    if not sep or not kind or not rest:
        raise ValueError(
            "a model spec must look like simulated:PROFILE, local:smollm2 or PROVIDER:MODEL "
            "(e.g. openai:gpt-4o-mini)"
        )
    providers = set(PACKAGES) | _langchain_providers()
    if kind not in providers:
        close = difflib.get_close_matches(kind, sorted(providers), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(
            f"unknown provider {kind!r}; {hint}use simulated:PROFILE, local:smollm2 or one of "
            f"{', '.join(sorted(PACKAGES))}"
        )
    pkg = PACKAGES.get(kind, f"langchain-{kind.replace('_', '-')}")
    if importlib.util.find_spec(pkg.replace("-", "_")) is None:
        raise ValueError(f"provider {kind!r} needs {pkg}; pip install {pkg}")
    var = CREDENTIALS.get(kind)
    if var and not os.environ.get(var) and not (base_url and kind == "openai"):
        extra = " (or --base-url URL for an OpenAI-compatible server)" if kind == "openai" else ""
        raise ValueError(f"no API key; set {var} in the environment{extra}")
    default_timeout()  # a bad $REPLAN_MODEL_TIMEOUT would otherwise fail every episode


@model_kind(
    "provider",
    example="<provider>:<model>",
    check=check_provider,
    takes_timeout=True,
    any_prefix=True,
    shared=True,  # one client (and its connection pool) for every episode of a run
)
def build_provider(
    rest: str,
    *,
    spec: str,
    base_url: str | None = None,
    task: Any = None,
    corpus: Any = None,
    seed: int = 0,
    **kw: Any,
) -> BaseChatModel:
    """Any other ``<provider>:<model>`` spec: :func:`provider_model`."""
    if not rest.strip():
        raise ValueError(f"model spec {spec!r} names no model after the provider")
    return provider_model(spec, base_url=base_url, **kw)


__all__ = [
    "CLIENT_RETRIES",
    "CLIENT_TIMEOUT",
    "CREDENTIALS",
    "DEFAULT_TIMEOUT_S",
    "PACKAGES",
    "TIMEOUT_ENV",
    "default_timeout",
    "provider_model",
]
