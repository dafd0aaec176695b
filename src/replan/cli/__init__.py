"""The ``replan`` command. Each command group lives in its own module under ``replan.cli``
and registers itself with ``register(app)``; ``--json`` commands print exactly one JSON object on
stdout and send progress to stderr."""

from __future__ import annotations

import importlib

import typer

app = typer.Typer(
    name="replan",
    help="Measure how tool-using agents fail and recover.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

#: command modules, in help order; each defines ``register(app: typer.Typer) -> None``
COMMAND_MODULES = ("run", "report", "score", "suites", "audit", "data", "export")

for _name in COMMAND_MODULES:
    try:
        _mod = importlib.import_module(f"replan.cli.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"replan.cli.{_name}":
            raise
        continue
    _mod.register(app)


def main() -> None:
    app()
