"""The import rules of DESIGN §1, checked over every module of ``src/replan``.

Layers, lowest first: ``core`` (with ``samples``, data) ← ``env`` ← {``models``, ``suites``,
``evaluators``, ``nodes``} (peers: none imports another) ← ``graphs`` ← ``runner`` ← ``report`` ←
the Python API (``replan/__init__.py``, ``replan/api.py``) and ``inplace`` ← ``cli``. The one tool
wrapper and its fault schedules (``env/tool_wrapper.py``, ``env/tool_faults.py``) live in ``env``,
so our graphs and ``inplace`` both build on them and they stay usable without the runner.
``core``, ``env`` and ``evaluators`` never load LangGraph: a saved trace is scored with nothing
running.

Every import counts: module level, function-local, ``importlib.import_module("replan....")`` with
a literal name, and the lazy-attribute table of ``replan/__init__.py``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "replan"

#: layer of each top-level part of the package (a module's own layer comes from :func:`layer_of`)
RANK = {
    "samples": 0,
    "lazy": 0,  # the lazy-export helper every package's ``__getattr__`` is made by
    "core": 0,
    "env": 1,
    "models": 2,
    "suites": 2,
    "evaluators": 2,
    "nodes": 2,
    "graphs": 3,
    "runner": 4,
    "report": 5,
    "api": 6,
    "inplace": 6,
    "cli": 7,
}
#: parts of one layer never import each other, except these (the API exposes ``inplace``)
PEER_EXCEPTIONS = {("api", "inplace")}
#: parts that never import LangGraph
NO_LANGGRAPH = {"core", "env", "evaluators", "samples"}


def module_name(path: Path) -> str:
    """``src/replan/env/world.py`` -> ``env.world``; the package root is ``__init__``."""
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    """The part a module (``env.world``, ``api``, ``__init__``) belongs to."""
    head = module.split(".")[0]
    if head in ("__init__", "api"):
        return "api"
    if head == "__main__":  # ``python -m replan``: the command line's entry point
        return "cli"
    return head


def _lazy_table(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """``_LAZY = {"name": ("replan.x", "attr")}``: each target module with its line."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets
        ):
            for sub in ast.walk(node.value):
                text = sub.value if isinstance(sub, ast.Constant) else None
                if isinstance(text, str) and text.startswith("replan."):
                    yield sub.lineno, text


def imports(source: str, package: str) -> Iterator[tuple[int, str]]:
    """Every ``(line, absolute module)`` a module's source imports, wherever the import stands.

    ``package`` is the dotted package the module lives in (for relative imports). A
    ``from replan import X`` names the submodule ``replan.X`` when there is one, else the
    package root (the Python API)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            if mod == "replan":
                for alias in node.names:
                    sub = SRC / alias.name
                    known = sub.is_dir() or sub.with_suffix(".py").exists()
                    yield node.lineno, f"replan.{alias.name}" if known else "replan.__init__"
            else:
                yield node.lineno, mod
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "import_module" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield node.lineno, arg.value
                elif isinstance(arg, ast.JoinedStr) and arg.values:
                    first = arg.values[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        yield node.lineno, first.value.rstrip(".")
    yield from _lazy_table(tree)


def violations_of(module: str, source: str) -> list[str]:
    """What a module's imports break of the layer rules, one line each."""
    own = layer_of(module)
    is_package = module == "__init__" or (SRC / Path(*module.split("."))).is_dir()
    package = "replan" + ("" if module == "__init__" else "." + module)
    if not is_package:
        package = package.rsplit(".", 1)[0]
    shown = module.replace(".", "/") + (
        "/__init__.py" if is_package and module != "__init__" else ".py"
    )
    out = []
    for line, target in imports(source, package):
        where = f"{shown}:{line} imports {target}"
        top = target.split(".")[0]
        if top in ("langgraph",) and own in NO_LANGGRAPH:
            out.append(f"{where}: {own} never loads LangGraph")
            continue
        if top != "replan" or target == "replan":
            continue
        tmod = target.removeprefix("replan.")
        tlayer = layer_of(tmod)
        if tlayer == own:
            continue
        elif tlayer not in RANK:
            out.append(f"{where}: {tlayer!r} has no layer (add it to RANK)")
        elif RANK[tlayer] > RANK[own]:
            out.append(
                f"{where}: {own} (layer {RANK[own]}) is below {tlayer} (layer {RANK[tlayer]})"
            )
        elif RANK[tlayer] == RANK[own] and (own, tlayer) not in PEER_EXCEPTIONS:
            out.append(f"{where}: {own} and {tlayer} are peers")
    return out


def all_violations() -> list[str]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        out += violations_of(module_name(path), path.read_text(encoding="utf-8"))
    return out


def test_every_part_has_a_layer() -> None:
    parts = {p.name.removesuffix(".py") for p in SRC.iterdir() if p.name != "__pycache__"}
    parts = {p for p in parts if (SRC / p).is_dir() or (SRC / f"{p}.py").exists()}
    parts -= {"__init__", "__main__", "py"}  # the package root (api) and ``-m`` entry (cli)
    assert parts <= set(RANK), sorted(parts - set(RANK))


def test_imports_follow_the_layers() -> None:
    found = all_violations()
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("core.plan", "from replan.env.world import World\n", "core (layer 0) is below env"),
        ("evaluators.x", "def f():\n    from replan.runner.store import X\n", "below runner"),
        ("evaluators.x", "from replan.suites import checker\n", "evaluators and suites are peers"),
        ("models.x", "import replan.nodes.prompts\n", "models and nodes are peers"),
        ("runner.x", "from replan import report\n", "below report"),
        ("runner.x", "from replan import run\n", "below api"),
        ("core.x", "import importlib\nimportlib.import_module('replan.graphs')\n", "below graphs"),
        ("env.x", "from langgraph.graph import StateGraph\n", "never loads LangGraph"),
        ("env.tool_faults", "from replan.evaluators import score\n", "env (layer 1) is below"),
        ("env.tool_wrapper", "from replan.inplace.evaluate import x\n", "below inplace"),
        ("env.tool_wrapper", "from replan.nodes.events import emit\n", "below nodes"),
        ("inplace.evaluate", "from replan.api import run\n", "inplace and api are peers"),
        ("__init__", '_LAZY = {"x": ("replan.cli.run", "x")}\n', "below cli"),
    ],
)
def test_the_check_sees_a_wrong_import(module: str, source: str, expected: str) -> None:
    found = violations_of(module, source)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("graphs.x", "from replan.nodes.llm import x\nfrom replan.env.world import World\n"),
        (
            "env.tool_wrapper",
            "from replan.env.tool_faults import x\nfrom replan.env import world\n",
        ),
        ("inplace.evaluate", "from replan.runner.store import x\n"),
        ("cli.run", "from replan.api import run\nfrom replan.inplace import x\n"),
        ("api", "from replan.report import write_report\nfrom replan.inplace import x\n"),
        ("__init__", '_LAZY = {"x": ("replan.api", "run"), "y": ("replan.inplace", "y")}\n'),
        ("evaluators.sde", "def f():\n    from langchain_core.messages import HumanMessage\n"),
    ],
)
def test_the_check_allows_a_right_import(module: str, source: str) -> None:
    assert violations_of(module, source) == []


def test_import_replan_loads_only_the_data_model() -> None:
    code = (
        "import sys, replan\n"
        "heavy = ('langgraph', 'langchain_core', 'networkx', 'replan.env.corpus')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


# --- no import circles -----------------------------------------------------------------------
#: every module of the package, by dotted name (``replan.env.world``; a package by its own name)
MODULES = {
    ("replan." + module_name(p)).removesuffix(".__init__"): p
    for p in sorted(SRC.rglob("*.py"))
    if "__pycache__" not in p.parts
}


def _target(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ours an imported dotted name loads (its longest known prefix)."""
    while name not in modules:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """``module -> modules it imports`` (module level, function-local and under
    ``TYPE_CHECKING``: an import for annotations is still a module the reader must know), each
    import resolved to the module it loads: ``from a.b import c`` is ``a.b.c`` when that is a
    module, else ``a.b``. Implicit imports of parent packages are not edges."""
    modules = MODULES if modules is None else modules
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        out: set[str] = set()
        for node in ast.walk(tree):
            found: list[str] = []
            if isinstance(node, ast.Import):
                found = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                found = [f"{base}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Call):
                func = node.func
                fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if fname == "import_module" and node.args:
                    arg = node.args[0]
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        found = [arg.value]
            for imported in found:
                target = _target(imported, modules)
                if target is not None and target != name:
                    out.add(target)
        graph[name] = out
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of ``graph`` with more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_import_circle_between_modules() -> None:
    """No module imports, by any path, a module that imports it (inside a package or across
    packages): each part can be read, tested and moved on its own."""
    found = circles(import_graph())
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    """Write a toy ``replan`` package (module name -> source) and map its dotted names."""
    mods = {}
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
        mods["replan" if name == "__init__" else f"replan.{name}"] = tmp_path / f"{name}.py"
    return mods


def test_the_circle_check_sees_a_circle(tmp_path: Path) -> None:
    """a -> b (function-local) -> c -> a is a circle, and so is e -> f -> e where f imports e only
    under TYPE_CHECKING (an annotation still ties the two); a -> d alone is not."""
    mods = _package(
        tmp_path,
        {
            "__init__": "",
            "a": "import replan.d\n\ndef f():\n    from replan.b import x\n",
            "b": "import replan.c\n",
            "c": "from replan import a\n",
            "d": "x = 1\n",
            "e": "from replan.f import y\n",
            "f": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    import replan.e\n",
        },
    )
    assert circles(import_graph(mods)) == [
        ["replan.a", "replan.b", "replan.c"],
        ["replan.e", "replan.f"],
    ]


# --- no underscore name across modules ----------------------------------------------------------
def _private(name: str) -> bool:
    """``_x`` is private to its module; ``__x__`` (a dunder) is not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(modules: dict[str, Path] | None = None) -> list[str]:
    """Every use of another module's underscore name, one line each: ``from replan.x import _y``
    and ``x._y`` on a module of ours bound to ``x`` by an import (function-local imports and
    ``TYPE_CHECKING`` blocks included). A module's own names and dunders do not count."""
    modules = MODULES if modules is None else modules
    out: list[str] = []
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        bound: dict[str, str] = {}  # local name -> module of ours it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    if full in modules:
                        bound[alias.asname or alias.name] = full
                    if _private(alias.name) and _target(full, modules) not in (None, name):
                        out.append(f"{name}:{node.lineno} imports {full}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        local = alias.asname or alias.name.split(".")[0]
                        bound[local] = alias.name if alias.asname else local
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)):
                continue
            chain: list[str] = []
            value = node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in bound:
                continue
            owner = ".".join([bound[value.id], *chain])
            if owner in modules and owner != name:
                out.append(f"{name}:{node.lineno} uses {owner}.{node.attr}")
    return sorted(out)


def test_no_module_imports_another_modules_private_name() -> None:
    """A module uses another's public names only: what two modules share is an interface with
    a name and a docstring, not a reach into the other's underscores (issue 31 §3)."""
    found = private_imports()
    assert not found, f"{len(found)} private imports:\n" + "\n".join(found)


def test_the_private_import_check_sees_a_reach(tmp_path: Path) -> None:
    """``from replan.a import _x``, ``import replan.a as a; a._x`` and ``from replan import a;
    a._x`` count; ``a``'s own ``_x``, a dunder and another library's underscore do not."""
    mods = _package(
        tmp_path,
        {
            "__init__": "",
            "a": "_x = 1\n__all__ = ['y']\ny = _x\n",
            "b": "def f():\n    from replan.a import _x\n",
            "c": "import replan.a as a\n\nprint(a._x)\n",
            "d": "from replan import a\n\nprint(a._x, a.__all__)\n",
            "e": "from . import a\nimport os\n\nprint(a.y, os._exit)\n",
            "f": "from replan.a import __all__\n",
        },
    )
    assert private_imports(mods) == [
        "replan.b:2 imports replan.a._x",
        "replan.c:3 uses replan.a._x",
        "replan.d:3 uses replan.a._x",
    ]
