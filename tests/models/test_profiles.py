"""Competence profiles: the named ones, custom ones from dicts and YAML, and clear errors."""

from __future__ import annotations

import pytest

from replan.core.taxonomy import ErrorType
from replan.models import make_model
from replan.models.profiles import PROFILES, STATIC_ERROR_TYPES, load_profile

from .conftest import booking_task


def test_named_profiles_are_ordered_by_competence() -> None:
    nov, comp, exp = PROFILES["novice"], PROFILES["competent"], PROFILES["expert"]
    for et in STATIC_ERROR_TYPES:
        assert nov.rate(et) > comp.rate(et) > exp.rate(et) > 0, et
    for field in ("notice_explicit", "notice_implicit", "verifier_uptake", "fix_invalid_call"):
        assert getattr(nov, field) < getattr(comp, field) < getattr(exp, field), field
    assert nov.on_fault.press_on > comp.on_fault.press_on > exp.on_fault.press_on


def test_yaml_profile_overrides_a_named_base(tmp_path) -> None:
    path = tmp_path / "careless.yaml"
    path.write_text(
        "base: competent\n"
        "error_rates:\n  Type_Error: 0.2\n  parameter_missing: 0.0\n"
        "notice_implicit: 0.05\n"
        "on_fault: {abort: 0.9}\n"
    )
    prof = load_profile(str(path))
    base = PROFILES["competent"]
    assert prof.name == "careless"
    assert prof.rate(ErrorType.TYPE_ERROR) == 0.2
    assert prof.rate(ErrorType.PARAMETER_MISSING) == 0.0
    assert prof.rate(ErrorType.SERIAL_ERROR) == base.rate(ErrorType.SERIAL_ERROR)
    assert prof.notice_implicit == 0.05
    assert prof.on_fault.abort == 0.9 and prof.on_fault.retry == base.on_fault.retry
    model = make_model(f"simulated:{path}", task=booking_task(), seed=1)
    assert model.profile == prof
    assert model.model_name == "simulated:careless"


def test_profile_from_dict_and_only_rates() -> None:
    prof = load_profile({"name": "typo", "error_rates": {"Type_Error": 0.3}})
    assert prof.error_rates == {ErrorType.TYPE_ERROR: 0.3}
    only = PROFILES["novice"].with_only(Parameter_Missing=0.5)
    assert only.error_rates == {ErrorType.PARAMETER_MISSING: 0.5}
    assert only.notice_explicit == PROFILES["novice"].notice_explicit


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("error_rates: {Typo_Error: 0.1}\n", "Typo_Error"),
        ("error_rates: {Type_Error: 1.5}\n", "Type_Error"),
        ("error_rates: {Null_Error: 0.1}\n", "notice_explicit"),
        ("error_rates: {Type_Error: 0.6, Parameter_Missing: 0.6}\n", "sum"),
        ("notice_explicit: 2\n", "notice_explicit"),
        ("colour: blue\n", "colour"),
        ("base: wizard\n", "wizard"),
        ("- a list\n", "mapping"),
        ("error_rates: [\n", "YAML"),
    ],
)
def test_bad_profile_files_name_the_problem(tmp_path, content: str, needle: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ValueError) as exc:
        load_profile(path)
    assert needle in str(exc.value)
    assert "bad.yaml" in str(exc.value)


def test_unknown_names_and_missing_files() -> None:
    with pytest.raises(ValueError, match="unknown profile 'wizard'"):
        load_profile("wizard")
    with pytest.raises(ValueError, match="does not exist"):
        load_profile("/nowhere/profile.yaml")
    with pytest.raises(ValueError, match="pass task"):
        make_model("simulated:novice")
