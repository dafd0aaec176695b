"""Checks a run's settings before anything runs: suite, filter, designs, models, agent factory and
backend.

A mistake here would otherwise become hundreds of stored ``crashed`` / ``model_error`` episodes
and a table of dashes. Each check raises :class:`PreflightError` with one line naming the problem
and the fix. Nothing here calls a model provider: a provider model is checked by importing its
LangChain package and looking for its credential in the environment.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from replan.core.task import MODES


class PreflightError(ValueError):
    """A setting that would make every episode fail; the message names it and the fix."""


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


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def check_suite(suite: str, path: str | Path | None = None) -> None:
    """The suite exists, and a suite that needs a data file (option ``path``) has one that
    exists; a suite needing another option is run from Python (``replan.run(suite_options=...)``).
    """
    from replan.suites import SUITES

    known = SUITES.find(suite)
    if known is None:
        names = SUITES.names()
        raise PreflightError(
            f"unknown suite {suite!r}: {_did_you_mean(suite, names)}"
            f"choose one of {', '.join(names)} (`replan suites list`)"
        )
    for opt in known.requires:
        help_ = f" ({known.requires_help})" if known.requires_help else ""
        if opt != "path":
            raise PreflightError(f"--suite {suite} needs the option {opt}=...{help_}")
        if path is None:
            raise PreflightError(f"--suite {suite} needs --path FILE_OR_DIR{help_}")
        if not Path(path).exists():
            raise PreflightError(f"--path {path}: no such file or directory")


def check_filter(suite: str, tokens: Sequence[str]) -> list[str]:
    """The ``--filter`` tokens, upper-cased; each must be a level of the suite or a mode."""
    from replan.suites import get_suite

    levels = get_suite(suite).levels
    out = []
    for tok in tokens:
        t = tok.strip().upper()
        if t in MODES or t in levels:
            out.append(t)
            continue
        what = f"levels {', '.join(levels)}; " if levels else ""
        raise PreflightError(
            f"--filter {tok!r} is neither a level nor a mode of suite {suite!r}: "
            f"{_did_you_mean(t, (*levels, *MODES))}use {what}modes {', '.join(MODES)}"
        )
    return out


def check_designs(designs: Sequence[str]) -> None:
    """Every design is a registered one (a user agent comes with ``--agent module:function``)."""
    from replan.graphs import design_names

    known = design_names()
    if not designs:
        raise PreflightError(f"--agents is empty: choose from {', '.join(known)}")
    for d in designs:
        if d not in known:
            raise PreflightError(
                f"unknown design {d!r} in --agents: {_did_you_mean(d, known)}choose from "
                f"{', '.join(known)} (or pass your own with --agent module:function)"
            )


def check_profile(profile: str) -> None:
    """A named competence profile or a readable profile file."""
    from replan.models.profiles import PROFILES, load_profile

    try:
        load_profile(profile)
    except ValueError as exc:
        named = ", ".join(PROFILES)
        if profile in PROFILES or any(c in profile for c in "/\\.:"):  # a file or a field
            raise PreflightError(f"{exc}; use one of {named} or a YAML file path") from None
        raise PreflightError(
            f"unknown profile {profile!r}: {_did_you_mean(profile, PROFILES)}use one of {named} "
            "or a YAML file path"
        ) from None


def check_model(spec: str, *, base_url: str | None = None) -> None:
    """The model can be built: its profile, local model file, or provider package and key."""
    kind, sep, rest = spec.strip().partition(":")
    rest = rest.strip()
    if kind == "simulated":
        try:
            check_profile(rest or "competent")
        except PreflightError as exc:
            raise PreflightError(f"--model {spec}: {exc}") from None
        return
    if kind == "local":
        from replan.models.local import LocalModelUnavailable, llama_available, smollm2_path

        if rest in ("", "smollm2"):
            try:
                smollm2_path()
            except LocalModelUnavailable as exc:
                raise PreflightError(f"--model {spec}: {exc}") from None
        elif rest.endswith(".gguf"):
            if not Path(rest).is_file():
                raise PreflightError(f"--model {spec}: model file {rest} does not exist")
        else:
            raise PreflightError(
                f"--model {spec}: unknown local model {rest!r}; use local:smollm2 or "
                "local:/path/to/model.gguf"
            )
        if not llama_available():
            raise PreflightError(
                f"--model {spec}: llama-cpp-python is not installed; run "
                "`pip install 'replan[local]'` (it builds llama.cpp, a few minutes)"
            )
        return
    if not sep or not kind or not rest:
        raise PreflightError(
            f"--model {spec!r} must look like simulated:PROFILE, local:smollm2 or "
            "PROVIDER:MODEL (e.g. openai:gpt-4o-mini)"
        )
    from replan.models.providers import PACKAGES

    providers = set(PACKAGES) | _langchain_providers()
    if kind not in providers:
        raise PreflightError(
            f"--model {spec}: unknown provider {kind!r}; {_did_you_mean(kind, providers)}"
            f"use simulated:PROFILE, local:smollm2 or one of {', '.join(sorted(PACKAGES))}"
        )
    pkg = PACKAGES.get(kind, f"langchain-{kind.replace('_', '-')}")
    if importlib.util.find_spec(pkg.replace("-", "_")) is None:
        raise PreflightError(f"--model {spec}: provider {kind!r} needs {pkg}; pip install {pkg}")
    var = CREDENTIALS.get(kind)
    if var and not os.environ.get(var) and not (base_url and kind == "openai"):
        extra = " (or --base-url URL for an OpenAI-compatible server)" if kind == "openai" else ""
        raise PreflightError(f"--model {spec}: no API key; set {var} in the environment{extra}")
    from replan.models.providers import default_timeout

    try:  # a bad $REPLAN_MODEL_TIMEOUT would otherwise fail every episode, one by one
        default_timeout()
    except ValueError as exc:
        raise PreflightError(f"--model {spec}: {exc}") from None


def _langchain_providers() -> set[str]:
    """The providers ``init_chat_model`` knows, when this LangChain version lists them."""
    try:
        from langchain.chat_models import base
    except ImportError:  # pragma: no cover - langchain is a dependency
        return set()
    known = getattr(base, "_SUPPORTED_PROVIDERS", None) or getattr(base, "_BUILTIN_PROVIDERS", None)
    return set(known or ())


def load_agent_factory(spec: str) -> Any:
    """Import the user's ``module:function`` factory; a mistake is one :class:`PreflightError`."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise PreflightError(
            f"--agent {spec!r} must look like module:function, e.g. my_agents:make_agent"
        )
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        raise PreflightError(
            f"--agent {spec}: no module named {exc.name!r}; run from the directory that holds "
            f"{mod_name.replace('.', '/')}.py or install its package"
        ) from None
    except Exception as exc:
        raise PreflightError(
            f"--agent {spec}: importing {mod_name} failed ({type(exc).__name__}: {exc}); fix the "
            "module"
        ) from None
    fn = getattr(mod, attr, None)
    if not callable(fn):
        raise PreflightError(
            f"--agent {spec}: module {mod_name} has no function {attr!r}; define "
            f"{attr}(tools, model) returning a compiled graph"
        )
    return fn


def check_backend(backend: str) -> None:
    """``local``, or ``ray`` with Ray installed."""
    if backend == "local":
        return
    if backend != "ray":
        raise PreflightError(f"--backend {backend!r}: use local or ray")
    if importlib.util.find_spec("ray") is None:
        raise PreflightError(
            "--backend ray needs Ray; pip install 'replan[ray]' (or use --backend local)"
        )


def check_run(
    *,
    suite: str,
    designs: Sequence[str],
    models: Sequence[str],
    filter: Sequence[str] = (),
    path: str | Path | None = None,
    agent_factory: str | None = None,
    backend: str = "local",
    base_url: str | None = None,
) -> list[str]:
    """Every check of a ``replan run``; returns the normalised filter tokens."""
    check_suite(suite, path)
    tokens = check_filter(suite, filter)
    if agent_factory:
        load_agent_factory(agent_factory)
    else:
        check_designs(designs)
    for m in models:
        check_model(m, base_url=base_url)
    check_backend(backend)
    return tokens
