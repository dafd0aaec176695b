"""The N-N groups of ``replan.env.corpus.groups``: both chains reach the same fact."""

from __future__ import annotations

from typing import Any

import pytest

from replan.core.trace import Call
from replan.env.corpus import load_corpus

CORPUS = load_corpus()

#: group -> (literal inputs by kind, the field of the group's kind in each chain's last output)
CASES: dict[str, dict[str, Any]] = {
    "pth_vendor_remit_email": {"pth_vendor_name": "Fabrikam Logistics"},
    "pth_iban_holder": {"iban": "DE89370400440532013000"},
    "pth_city_country": {"city": "Krakow"},
    "pth_city_currency": {"city": "Hanoi"},
    "pth_barcode_sku": {"pth_ean13": "4006381333931"},
    "pth_first_free_slot": {"email": "kenji.mori@example.jp", "date": "2027-01-14"},
    "pth_station_high": {"pth_weather_station": "Balcony", "date": "2026-12-10"},
    "pth_next_business_day": {"country": "PT", "date": "2026-12-24"},
}


def _values_of_kind(schema: dict[str, Any], value: Any, kind: str) -> list[Any]:
    out = []
    if schema.get("x-kind") == kind:
        out.append(value)
    if isinstance(value, dict):
        for k, sub in (schema.get("properties") or {}).items():
            if k in value:
                out += _values_of_kind(sub, value[k], kind)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for v in value:
            out += _values_of_kind(schema["items"], v, kind)
    return out


def _run_chain(chain: tuple[str, ...], literals: dict[str, Any]) -> Any:
    world = CORPUS.world(seed=0)
    have = dict(literals)
    out: Any = None
    for name in chain:
        spec = CORPUS.tools[name]
        args = {}
        for p in spec.parameters["required"]:
            k = spec.param_schema(p).get("x-kind")
            assert k in have, (name, p, k)
            args[p] = have[k]
        res = world.execute(Call(tool=name, args=args))
        assert res.ok, (name, res.verdict)
        assert spec.check_output(res.observation).ok
        out = res.observation
        for k in {*CORPUS.kinds}:
            vals = _values_of_kind(spec.returns, out, k)
            if vals:
                have[k] = vals[0]
    return out, have


def test_every_paths_group_is_covered():
    ours = {g for g in CORPUS.groups if g.startswith("pth_")}
    assert ours == set(CASES)
    assert {CORPUS.tools[CORPUS.groups[g].tools[0]].domain for g in ours} == {
        "Financial",
        "Travel",
        "Shopping",
        "Office",
        "IoT",
        "General",
    }


@pytest.mark.parametrize("gid", sorted(CASES))
def test_chains_agree(gid):
    grp = CORPUS.groups[gid]
    assert grp.kind == "N-N" and all(len(c) == 2 for c in grp.members)
    facts = []
    for chain in grp.members:
        _, have = _run_chain(chain, CASES[gid])
        facts.append(have[grp.output_kind])
    assert len(set(map(str, facts))) == 1, (gid, facts)


def test_bad_inputs_are_rejected():
    world = CORPUS.world(seed=0)
    bad = [
        ("upcitemdb_lookup", {"upc": "4006381333932"}),  # wrong check digit
        ("ourairports_search", {"municipality": "Atlantis"}),
        ("quickbooks_read_vendor", {"vendor_id": "QBVnobody"}),
    ]
    for name, args in bad:
        res = world.execute(Call(tool=name, args=args))
        assert res.verdict.code.value == "invalid_value", (name, res.verdict)
