"""The model-kind registry: what the prefix of a model spec (``kind:rest``) builds.

A model kind is one file in this package (or a plugin, see :mod:`replan.core.registry`)::

    @model_kind("echo", example="echo:<text>")
    def build_echo(rest, *, spec, task, corpus, seed, base_url, **kw) -> BaseChatModel:
        ...

:func:`replan.models.make_model` and the preflight checks of ``replan run --model`` dispatch on
the kind; a spec whose prefix no kind claims goes to the kind registered with ``any_prefix``
(``<provider>:<model>`` through LangChain's ``init_chat_model``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from replan.core.registry import Registry

#: ``build(rest, *, spec, task, corpus, seed, base_url, **kw)`` -> a LangChain chat model
Build = Callable[..., Any]
#: ``check(rest, *, spec, base_url)``: raises ``ValueError`` naming what is missing; calls nothing
Check = Callable[..., None]


@dataclass(frozen=True)
class ModelKind:
    """A kind of model spec: how to build it, how to check it without calling it, an example
    spec for messages, whether its client takes a per-request ``timeout``, whether it claims
    every prefix no other kind claims, and whether one built model can serve every episode of a
    run (``shared``: it depends on neither the task nor the seed, as a provider's client)."""

    name: str
    build: Build
    check: Check | None = None
    example: str = ""
    takes_timeout: bool = False
    any_prefix: bool = False
    shared: bool = False


#: every model kind, built-in (``replan.models``' modules) and plugged in; listings name the
#: local and simulated kinds before the providers' catch-all
MODEL_KINDS: Registry[ModelKind] = Registry(
    "model kind", "replan.models", first=("local", "simulated")
)


def model_kind(
    name: str,
    *,
    example: str = "",
    check: Check | None = None,
    takes_timeout: bool = False,
    any_prefix: bool = False,
    shared: bool = False,
) -> Callable[[Build], Build]:
    """Register the decorated builder as model kind ``name`` (see :class:`ModelKind`)."""

    def deco(build: Build) -> Build:
        kind = ModelKind(
            name, build, check, example or f"{name}:...", takes_timeout, any_prefix, shared
        )
        MODEL_KINDS.register(name, kind, module=build.__module__)
        return build

    return deco


def kind_of(spec: str) -> ModelKind | None:
    """The kind that builds ``spec``: the one named by its prefix, else the catch-all one."""
    prefix = spec.strip().partition(":")[0].strip()
    found = MODEL_KINDS.find(prefix)
    if found is not None:
        return found
    return next((k for _, k in MODEL_KINDS.items() if k.any_prefix), None)


def spec_help() -> str:
    """``use 'simulated:<profile>', 'local:smollm2' or '<provider>:<model>'`` from the kinds."""
    examples = [f"'{k.example}'" for _, k in MODEL_KINDS.items()]
    head = ", ".join(examples[:-1])
    return f"use {head} or {examples[-1]}" if len(examples) > 1 else f"use {examples[0]}"


__all__ = ["MODEL_KINDS", "ModelKind", "kind_of", "model_kind", "spec_help"]
