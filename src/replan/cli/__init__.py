"""The ``replan`` command. Each command group lives in its own module under ``replan.cli``
and registers itself with ``register(app)``; ``--json`` commands print exactly one JSON object on
stdout and send progress to stderr."""

from __future__ import annotations

import importlib
from typing import Any

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


def tidy_help(command: Any) -> Any:
    """Plain metavars in ``--help``: ``OUT_DIR`` instead of ``{out_dir}`` in the usage line,
    nothing after a flag (Typer shows ``<bool>``), ``--out OUT`` instead of ``<path>``."""
    for param in command.params:
        if param.param_type_name == "argument":
            name = param.metavar = param.metavar or (param.name or "arg").upper()
            # Typer writes a required argument as {name} in the usage line
            usage = (name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else "")
            param._usage_display_name = lambda usage=usage: usage
        elif param.param_type_name == "option" and param.metavar is None:
            param.metavar = "" if param.is_flag else (param.name or "value").upper()
    help_option = command.get_help_option(command.context_class(command))  # made once, cached
    if help_option is not None:
        help_option.metavar = ""
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)
    return command


def main() -> None:
    tidy_help(typer.main.get_command(app))(prog_name="replan")
