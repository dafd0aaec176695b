import json

import pytest

from replan.core.taxonomy import VerdictCode
from replan.core.tools import ToolSpec

SPEC = ToolSpec(
    name="create_invoice",
    parameters={
        "properties": {
            "customer_email": {"type": "string", "format": "email"},
            "due_date": {"type": "string", "format": "date"},
            "currency": {"enum": ["USD", "EUR"]},
            "lines": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "pattern": "^SKU-\\d+$"},
                        "qty": {"type": "integer", "minimum": 1},
                    },
                    "required": ["sku", "qty"],
                },
                "minItems": 1,
            },
            "discount_pct": {"type": "number", "minimum": 0, "maximum": 100},
            "paid": {"type": "boolean"},
        },
        "required": ["customer_email", "due_date", "lines"],
    },
)
GOOD = {
    "customer_email": "a@b.org",
    "due_date": "2027-01-31",
    "lines": [{"sku": "SKU-1", "qty": 2}],
    "currency": "EUR",
    "discount_pct": 5,
    "paid": False,
}


@pytest.mark.parametrize(
    ("change", "code", "param"),
    [
        ({}, VerdictCode.OK, None),
        ({"discount": 5}, VerdictCode.UNKNOWN_PARAM, "discount"),
        ({"customer_email": None}, VerdictCode.TYPE_MISMATCH, "customer_email"),
        ({"customer_email": "not-an-email"}, VerdictCode.INVALID_VALUE, "customer_email"),
        ({"due_date": "2027/01/31"}, VerdictCode.INVALID_VALUE, "due_date"),
        ({"due_date": "2026-02-30"}, VerdictCode.INVALID_VALUE, "due_date"),
        ({"currency": "GBP"}, VerdictCode.INVALID_VALUE, "currency"),
        ({"lines": []}, VerdictCode.INVALID_VALUE, "lines"),
        ({"lines": [{"sku": "SKU-1", "qty": "2"}]}, VerdictCode.TYPE_MISMATCH, "lines"),
        ({"lines": [{"sku": "1", "qty": 2}]}, VerdictCode.INVALID_VALUE, "lines"),
        ({"lines": [{"sku": "SKU-1", "qty": 0}]}, VerdictCode.INVALID_VALUE, "lines"),
        ({"discount_pct": 101}, VerdictCode.INVALID_VALUE, "discount_pct"),
        ({"paid": "no"}, VerdictCode.TYPE_MISMATCH, "paid"),
        ({"discount_pct": True}, VerdictCode.TYPE_MISMATCH, "discount_pct"),
    ],
)
def test_check_args(change, code, param):
    args = {k: v for k, v in {**GOOD, **change}.items()}
    res = SPEC.check_args(args)
    assert res.code is code
    assert res.param == param


def test_missing_required():
    args = dict(GOOD)
    del args["due_date"]
    res = SPEC.check_args(args)
    assert (res.code, res.param) == (VerdictCode.MISSING_PARAM, "due_date")


def test_unknown_reported_before_missing():
    args = dict(GOOD)
    args["customer_mail"] = args.pop("customer_email")
    assert SPEC.check_args(args).code is VerdictCode.UNKNOWN_PARAM


def test_non_object_arguments():
    assert SPEC.check_args(["a@b.org"]).code is VerdictCode.TYPE_MISMATCH


def test_from_pararecover_sample(sample_files):
    n = 0
    for path in sample_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            tools = ToolSpec.from_pararecover(rec["tool_list"])
            raw = (
                json.loads(rec["tool_list"])
                if isinstance(rec["tool_list"], str)
                else rec["tool_list"]
            )
            assert [t.name for t in tools] == [t["name"] for t in raw]
            for t, r in zip(tools, raw, strict=True):
                assert set(t.required) == set(r.get("required", [])) & set(t.param_names)
            n += len(tools)
    assert n > 200


def test_from_pararecover_enum_and_loose_types():
    tools = ToolSpec.from_pararecover(
        [
            {
                "name": "set_mode",
                "parameters": {
                    "mode": {"type": "enum", "enum": ["eco", "boost"]},
                    "level": {"type": "int"},
                },
                "required": ["mode"],
            }
        ]
    )
    t = tools[0]
    assert t.check_args({"mode": "eco", "level": 2}).ok
    assert t.check_args({"mode": "turbo"}).code is VerdictCode.INVALID_VALUE
    assert t.check_args({"mode": "eco", "level": "2"}).code is VerdictCode.TYPE_MISMATCH


def test_from_pararecover_bad_input_names_the_entry():
    with pytest.raises(ValueError, match=r"tool_list\[1\]"):
        ToolSpec.from_pararecover([{"name": "ok"}, {"description": "no name"}])
    with pytest.raises(ValueError, match="not valid JSON"):
        ToolSpec.from_pararecover("[{")


def test_bind_positional_keeps_extras():
    t = ToolSpec.from_pararecover([{"name": "f", "parameters": {"a": {"type": "string"}}}])[0]
    assert t.bind_positional(["x", "y"]) == {"a": "x", "_arg1": "y"}
