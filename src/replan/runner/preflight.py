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
import inspect
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from replan.core.task import MODES
from replan.runner.options import RunOptions, cpu_workers, remote_models


class PreflightError(ValueError):
    """A setting that would make every episode fail; the message names it and the fix."""


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def check_suite(suite: str, options: Mapping[str, Any] | None = None) -> None:
    """The suite exists, and has every option its loader needs (``-S KEY=VALUE``); a data file
    (option ``path``) exists."""
    from replan.suites import SUITES

    known = SUITES.find(suite)
    if known is None:
        names = SUITES.names()
        raise PreflightError(
            f"unknown suite {suite!r}: {_did_you_mean(suite, names)}"
            f"choose one of {', '.join(names)} (`replan suites list`)"
        )
    options = options or {}
    for opt in known.requires:
        help_ = f" ({known.requires_help})" if known.requires_help else ""
        if options.get(opt) is None:
            how = "--path FILE_OR_DIR" if opt == "path" else f"-S {opt}=..."
            raise PreflightError(f"--suite {suite} needs {how}{help_}")
    path = options.get("path")
    if path is not None and not Path(path).exists():
        raise PreflightError(f"--path {path}: no such file or directory")
    takes_any = any(
        p.kind is p.VAR_KEYWORD for p in inspect.signature(known.load).parameters.values()
    )
    unknown = [] if takes_any else sorted(set(options) - set(known.options))
    if unknown:
        raise PreflightError(
            f"--suite {suite} has no option {unknown[0]!r}: "
            f"{_did_you_mean(unknown[0], known.options)}its options are "
            f"{', '.join(known.options) or 'none'}"
        )


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
    from replan.models.simulated.profiles import check_profile as check

    try:
        check(profile)
    except ValueError as exc:
        raise PreflightError(str(exc)) from None


def check_model(spec: str, *, base_url: str | None = None) -> None:
    """The model can be built (its kind's check: a profile, a local model file, a provider
    package and key); nothing is called."""
    from replan.models.registry import kind_of

    kind = kind_of(spec)
    if kind is None:
        raise PreflightError(f"--model {spec}: no model kind builds it")
    if kind.check is None:
        return
    _, _, rest = spec.strip().partition(":")
    try:
        kind.check(rest.strip(), spec=spec, base_url=base_url)
    except ValueError as exc:
        raise PreflightError(f"--model {spec}: {exc}") from None


def import_spec(spec: str, option: str, example: str) -> Any:
    """The object a ``module:name`` option names, None when the module has no such name (the
    working directory is importable); a mistake is one :class:`PreflightError` naming ``option``."""
    mod_name, sep, attr = spec.partition(":")
    if not sep or not mod_name or not attr:
        raise PreflightError(f"{option} {spec!r} must look like module:name, e.g. {example}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        raise PreflightError(
            f"{option} {spec}: no module named {exc.name!r}; run from the directory that holds "
            f"{mod_name.replace('.', '/')}.py or install its package"
        ) from None
    except Exception as exc:
        raise PreflightError(
            f"{option} {spec}: importing {mod_name} failed ({type(exc).__name__}: {exc}); fix "
            "the module"
        ) from None
    return getattr(mod, attr, None)


def load_agent_factory(spec: str) -> Any:
    """Import the user's ``module:function`` factory; a mistake is one :class:`PreflightError`."""
    fn = import_spec(spec, "--agent", "my_agents:make_agent")
    if not callable(fn):
        mod_name, _, attr = spec.partition(":")
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


def check_budgets(budgets: Mapping[str, Any]) -> None:
    """The budgets are fields of the agent configuration with valid values."""
    from pydantic import ValidationError

    from replan.nodes.config import AgentConfig

    try:
        AgentConfig(**budgets)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "budgets"
        raise PreflightError(f"-B {where}: {first['msg']}") from None


def check_workers(workers: int, backend: str) -> None:
    """Worker processes are the local backend's; Ray places the work itself."""
    if workers != 1 and backend != "local":
        raise PreflightError(
            f"--workers {workers} is for --backend local; Ray places the work itself "
            "(drop --workers)"
        )


#: episodes in flight above which a provider's run in one process is told how to use the cores:
#: one process plays about 100 model calls a second (about 10 ms of its CPU each, measured with
#: ``benchmarks/bench_llm_concurrency.py``), so more in flight needs a model slower than 1/3 s
ONE_PROCESS_CONCURRENCY = 32


def concurrency_hint(options: RunOptions) -> str | None:
    """One line saying how to spread a provider model's run over the cores when it asks one
    process for more episodes in flight than it can keep busy; ``None`` when there is nothing
    to say (worker processes or Ray already, a simulated or local model, one core)."""
    if options.backend != "local" or options.workers != 1:
        return None
    if options.concurrency <= ONE_PROCESS_CONCURRENCY:
        return None
    cores = cpu_workers()
    if cores < 2 or not remote_models(options):
        return None
    each = -(-options.concurrency // cores)
    return (
        f"note: --concurrency {options.concurrency} runs in one process, which plays about 100 "
        f"model calls a second; to keep them in flight use the {cores} cores: --workers 0 "
        f"--concurrency {each} (each worker keeps --concurrency episodes in flight)"
    )


def check_options(
    options: RunOptions,
    *,
    tasks: Sequence[Any] | None = None,
    live_agent: Any = None,
    given: Mapping[str, Any] | None = None,
) -> RunOptions:
    """Every check of a run (:func:`replan.run`, ``replan run``); returns the options. With
    ``tasks`` given the suite only names them (nothing is loaded); with
    a ``live_agent`` its factory is not imported; a model in ``given`` (a chat model object, by
    its label) is used as it is, not checked."""
    if tasks is None:
        check_suite(options.suite, options.suite_options)
        check_filter(options.suite, options.filter)
    if options.agent_factory:
        if live_agent is None:
            load_agent_factory(options.agent_factory)
    else:
        check_designs(options.agents)
    for m in options.models:
        if m not in (given or {}):
            check_model(m, base_url=options.base_url)
    check_budgets(options.budgets)
    check_backend(options.backend)
    check_workers(options.workers, options.backend)
    if options.archive is not None:
        from replan.runner.archive import ArchiveError, check_archive

        try:
            check_archive(options.archive)
        except ArchiveError as exc:
            raise PreflightError(str(exc)) from None
    if (live_agent is not None or given) and (options.workers != 1 or options.backend != "local"):
        what = "an agent" if live_agent is not None else f"a model ({', '.join(given or {})})"
        raise PreflightError(
            f"{what} given as an object runs in this process only: give a module:function "
            "or a model spec string to use worker processes or Ray"
        )
    return options
