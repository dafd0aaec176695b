"""Lazy exports: a package names what it offers without importing it (issue 32 §3: ``replan
--help`` loads no heavy library).

A package lists ``_LAZY = {"name": ("replan.module", "attribute")}`` and sets
``__getattr__ = lazy_exports(__name__, _LAZY)``; ``package.name`` then imports the module on
first use. The import-layer check (``tests/test_layers.py``) reads every ``_LAZY`` table as
imports. This module imports nothing of replan, so any layer may use it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, table: Mapping[str, tuple[str, str]]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: a name in ``table`` loads
    ``getattr(import_module(module), attribute)``; any other name raises ``AttributeError``
    naming the package, as a missing module attribute does."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = table[name]
        return getattr(importlib.import_module(module), attribute)

    return __getattr__
