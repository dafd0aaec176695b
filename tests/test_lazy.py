"""One lazy-export helper (``replan/lazy.py``) serves every package that names what it offers
without importing it (issue 31 §3: the ``__getattr__`` table was written five times)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from replan.lazy import lazy_exports

SRC = Path(__file__).resolve().parents[1] / "src" / "replan"


def test_a_name_loads_its_module_on_first_use() -> None:
    get = lazy_exports("pkg", {"dumps": ("json", "dumps"), "Path": ("pathlib", "Path")})
    assert get("Path") is Path
    import json

    assert get("dumps") is json.dumps


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    get = lazy_exports("replan.pkg", {})
    with pytest.raises(AttributeError, match=r"module 'replan.pkg' has no attribute 'nope'"):
        get("nope")
    assert not hasattr(__import__("replan.report").report, "nope")


def test_every_lazy_table_is_served_by_the_helper() -> None:
    """A module with a ``_LAZY`` table sets ``__getattr__ = lazy_exports(...)`` and writes no
    ``__getattr__`` of its own."""
    own = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        if "_LAZY" not in names:
            continue
        defined = any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body)
        if defined or "__getattr__" not in names:
            own.append(str(path.relative_to(SRC)))
    assert not own, own


def test_the_lazy_packages_still_load_lazily() -> None:
    code = (
        "import sys, replan, replan.models, replan.report, replan.inplace\n"
        "before = 'replan.models.local' in sys.modules or 'replan.report.write' in sys.modules\n"
        "replan.models.smollm2_path, replan.report.write_report, replan.inplace.load_tasks\n"
        "after = all(m in sys.modules for m in ('replan.models.local', 'replan.report.write',"
        " 'replan.inplace.tasks'))\n"
        "print(before, after, replan.Task.__module__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "replan.core.task"]
