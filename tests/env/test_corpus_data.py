"""The corpus as data: the typed loader of ``tools.json`` / ``seeds.json`` and the module rules."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from replan.env.corpus import DOMAINS, load_corpus
from replan.env.corpus.data import DomainFile, SeedTables, as_type

CORPUS_DIR = Path(__file__).resolve().parents[2] / "src" / "replan" / "env" / "corpus"


def test_as_type_restores_what_json_cannot_say():
    raw = json.loads(json.dumps({"3": [["a", 1.5], ["b", 2.0]], "7": [["c", 0.25]]}))
    got = as_type(raw, dict[int, list[tuple[str, float]]])
    assert got == {3: [("a", 1.5), ("b", 2.0)], 7: [("c", 0.25)]}
    assert all(type(k) is int for k in got)
    assert type(got[3][0]) is tuple
    assert as_type(["x", "y", "x"], set[str]) == {"x", "y"}
    assert as_type([1, 2, 3], tuple[int, ...]) == (1, 2, 3)
    assert as_type({"a": None, "b": ["z"]}, dict[str, set[str] | None]) == {"a": None, "b": {"z"}}


@pytest.mark.parametrize(
    ("value", "type_"),
    [
        (1, float),  # an int where a float is declared would change outputs (1 vs 1.0)
        (1.0, int),
        (True, int),
        (["a", 1], tuple[str, int, int]),
        ({"a": 1}, list[int]),
        ("x", int | float),
    ],
)
def test_as_type_refuses_a_value_of_another_type(value: Any, type_: Any):
    with pytest.raises(TypeError):
        as_type(value, type_)


def test_as_type_says_where_inside_the_table():
    with pytest.raises(TypeError, match=r"rates\['EUR'\]\[1\]: expected float, got 'x'"):
        as_type({"EUR": [0.92, "x"]}, dict[str, list[float]], "rates")


def test_seed_tables_name_the_missing_table():
    seeds = SeedTables("demo/seeds.json", {"rates": {"EUR": 0.92}})
    assert seeds.table("rates", dict[str, float]) == {"EUR": 0.92}
    with pytest.raises(KeyError, match=r"demo/seeds\.json has no table 'fees'"):
        seeds.table("fees", dict[str, float])


def test_domain_file_refuses_unknown_and_missing_keys(monkeypatch):
    good = {"name": "t", "category": "source", "description": "d", "params": {}, "returns": {}}
    for doc, bad in [
        ({"domain": "General", "tools": [{**good, "paramz": {}}]}, "paramz"),
        (
            {"domain": "General", "tools": [{k: v for k, v in good.items() if k != "returns"}]},
            "returns",
        ),
        ({"domain": "General", "tool": []}, "tool"),
    ]:
        monkeypatch.setattr("replan.env.corpus.data.read_json", lambda package, name, d=doc: d)
        with pytest.raises(ValueError, match=bad):
            DomainFile.load("demo")


def test_every_spec_is_paired_with_its_implementation():
    corpus = load_corpus()
    for name, spec in corpus.tools.items():
        assert spec.implementation is not None and spec.implementation.__name__ == name


def _corpus_modules() -> list[Path]:
    return sorted(p for p in CORPUS_DIR.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_domain_imports_another_modules_private_helper():
    """Shared helpers live in a shared module under a public name (issue 14 §7)."""
    offenders = []
    for path in _corpus_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("replan.env"):
                offenders += [
                    f"{path.name}: {a.name}" for a in node.names if a.name.startswith("_")
                ]
    assert offenders == []


def test_every_domain_ships_its_data_beside_its_code():
    for name in DOMAINS:
        assert (CORPUS_DIR / name / "__init__.py").is_file()
        assert (CORPUS_DIR / name / "tools.json").is_file()
