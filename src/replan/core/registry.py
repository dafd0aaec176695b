"""Registries: what replan can run and score, each entry registered by the file that defines it.

A :class:`Registry` maps names to objects (a suite, a design's graph builder, a metric, a model
kind). A built-in entry registers itself with a decorator in its own module; the first lookup
imports every public module of the registry's package, so a new file there is found without
editing another, and ``import replan`` stays light. Entries from outside the package come from
plugins, imported before every lookup that has not seen them yet (as inspect-ai loads its
``inspect_ai`` entry points):

- every entry point of the group ``replan`` (``[project.entry-points.replan]`` in a package's
  ``pyproject.toml``: ``my_suite = "my_pkg.my_suite"``);
- every module named in ``$REPLAN_PLUGINS`` (comma separated; importable from the working
  directory), e.g. ``REPLAN_PLUGINS=my_metric replan run ...``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import os
import pkgutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")

#: environment variable naming plugin modules, comma separated
PLUGINS_ENV = "REPLAN_PLUGINS"
#: entry-point group of installed plugins
ENTRY_POINT_GROUP = "replan"

_imported_plugins: set[str] = set()
_entry_points_loaded = False


class PluginError(ValueError):
    """A plugin module that cannot be imported; the message names it and the cause."""


def _import_plugin(name: str, where: str) -> None:
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        importlib.import_module(name)
    except Exception as exc:
        raise PluginError(
            f"plugin {name!r} ({where}): import failed: {type(exc).__name__}: {exc}"
        ) from exc


@functools.cache
def _entry_points() -> tuple[importlib.metadata.EntryPoint, ...]:
    """The installed ``replan`` entry points, listed once per process (listing them reads every
    installed distribution's metadata: a tenth of a second)."""
    return tuple(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def load_plugins() -> None:
    """Import the ``replan`` entry points (once) and the modules of ``$REPLAN_PLUGINS`` not yet
    imported; each registers what it defines."""
    global _entry_points_loaded
    if not _entry_points_loaded:
        _entry_points_loaded = True
        for ep in _entry_points():
            if ep.value not in _imported_plugins:
                _imported_plugins.add(ep.value)
                _import_plugin(ep.value.partition(":")[0], f"entry point {ep.name}")
    for name in os.environ.get(PLUGINS_ENV, "").split(","):
        name = name.strip()
        if name and name not in _imported_plugins:
            _imported_plugins.add(name)
            _import_plugin(name, f"${PLUGINS_ENV}")


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def module_origin(module: str) -> dict[str, str | None]:
    """``{"module", "package", "version"}`` of a dotted module name: the distribution that
    installs its top-level package and that distribution's version (``None`` when no installed
    distribution holds it). replan's own modules name replan and its version."""
    top = module.split(".")[0]
    package = version = None
    if top == "replan":  # the parent package is loaded whenever one of its modules is
        package, version = "replan", getattr(sys.modules.get("replan"), "__version__", None)
    elif top:
        names = _distributions().get(top) or []
        if names:
            package = names[0]
            try:
                version = importlib.metadata.version(package)
            except importlib.metadata.PackageNotFoundError:
                version = None
    return {"module": module or None, "package": package, "version": version}


def plugin_stamp() -> list[list[str | None]]:
    """What the plugins in reach are, without importing them: every ``replan`` entry point with
    its distribution's version, and every ``$REPLAN_PLUGINS`` module with its file's size and
    modification time (a cache keyed by this goes stale when a plugin changes)."""
    out: list[list[str | None]] = []
    for ep in _entry_points():
        dist = getattr(ep, "dist", None)
        out.append([ep.name, ep.value, getattr(dist, "version", None)])
    for name in os.environ.get(PLUGINS_ENV, "").split(","):
        if not name.strip():
            continue
        try:
            spec = importlib.util.find_spec(name.strip())
        except (ImportError, ValueError):
            spec = None
        origin = getattr(spec, "origin", None)
        where = Path(origin) if origin else None
        state = (
            f"{where.stat().st_size}:{where.stat().st_mtime_ns}"
            if where and where.is_file()
            else None
        )
        out.append([name.strip(), origin, state])
    return out


class Registry(Generic[T]):
    """Named entries of one kind, in registration order.

    ``package`` is the dotted package whose public modules hold the built-in entries (imported
    on the first lookup, ``first`` before the others, so that listings lead with them). A name registered again from the same module replaces the entry (a
    reloaded module); from another module it is an error naming both.
    """

    def __init__(self, kind: str, package: str | None = None, first: Sequence[str] = ()) -> None:
        self.kind = kind
        self.package = package
        self.first = tuple(first)
        self._items: dict[str, T] = {}
        self._modules: dict[str, str] = {}
        self._loaded = False
        self._module_order: list[str] = []  # the package's modules, in the order imported
        #: :meth:`_ordered`'s last answer and what it was computed from (a scorer asks for the
        #: metric families twice per episode read back)
        self._order_cache: tuple[tuple[int, int, int], list[str]] | None = None
        self._changes = 0

    def register(self, name: str, obj: T, *, module: str) -> T:
        """Add ``obj`` under ``name`` (``module``: where it is defined); returns ``obj``."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"a {self.kind} needs a non-empty name, not {name!r}")
        before = self._modules.get(name)
        if before is not None and before != module:
            raise ValueError(
                f"{self.kind} {name!r} is registered twice: in {before} and in {module}"
            )
        self._items[name] = obj
        self._modules[name] = module
        self._changes += 1
        return obj

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a test's toy entry, a plugin being replaced)."""
        self._items.pop(name, None)
        self._changes += 1
        self._modules.pop(name, None)

    def _ensure(self) -> None:
        if not self._loaded and self.package:
            self._loaded = True  # first: a module that looks names up while importing
            try:
                pkg = importlib.import_module(self.package)
                found = [i.name for i in pkgutil.iter_modules(pkg.__path__)]
                order = [n for n in dict.fromkeys([*self.first, *found]) if not n.startswith("_")]
                self._module_order = order
                for name in order:
                    importlib.import_module(f"{self.package}.{name}")
            except BaseException:
                self._loaded = False
                raise
        load_plugins()

    def _ordered(self) -> list[str]:
        """Names in a fixed order: built-ins by their module (``first``, then the package's
        modules by name), then plugins as registered -- not in the order something happened
        to import a module."""
        state = (self._changes, len(self._items), id(self._module_order))
        if self._order_cache is not None and self._order_cache[0] == state:
            return list(self._order_cache[1])
        rank = {m: i for i, m in enumerate(self._module_order)}
        prefix = f"{self.package}."

        def key(item: tuple[int, str]) -> tuple[int, int]:
            i, name = item
            mod = self._modules.get(name, "")
            short = mod[len(prefix) :].split(".")[0] if mod.startswith(prefix) else None
            return (rank.get(short, len(rank)) if short is not None else len(rank), i)

        order = [name for _, name in sorted(enumerate(self._items), key=key)]
        self._order_cache = (state, order)
        return list(order)

    def names(self) -> list[str]:
        """Every registered name: built-ins in their modules' order, then plugins."""
        self._ensure()
        return self._ordered()

    def items(self) -> Iterator[tuple[str, T]]:
        """``(name, entry)`` pairs in the order of :meth:`names`."""
        self._ensure()
        return iter([(n, self._items[n]) for n in self._ordered()])

    def find(self, name: str) -> T | None:
        """The entry named ``name``, or ``None``."""
        self._ensure()
        return self._items.get(name)

    def get(self, name: str) -> T:
        """The entry named ``name``; an unknown name is a ``ValueError`` listing the known ones."""
        found = self.find(name)
        if found is None:
            raise ValueError(
                f"unknown {self.kind} {name!r}; known: {', '.join(self._items) or 'none'}"
            )
        return found

    def origin(self, name: str) -> dict[str, str | None]:
        """Where the entry ``name`` comes from: its module, and the installed package (with
        its version) that supplies the module (``None`` where none does: a module of the
        working directory)."""
        self._ensure()
        return module_origin(self._modules.get(name, ""))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.find(name) is not None


__all__ = [
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
    "PluginError",
    "Registry",
    "load_plugins",
    "module_origin",
    "plugin_stamp",
]
