"""Competence profiles: the named ones, custom ones from dicts and YAML, and clear errors."""

from __future__ import annotations

import pytest

from replan.core.taxonomy import ErrorType
from replan.models import make_model
from replan.models.simulated.profiles import (
    PROFILES,
    SIMULATED_CAVEAT,
    STATIC_ERROR_TYPES,
    assumptions_line,
    context_assumptions,
    load_profile,
    model_notes,
    override,
    spec_with_overrides,
)

from .conftest import booking_task


def test_named_profiles_are_ordered_by_competence() -> None:
    nov, comp, exp = PROFILES["novice"], PROFILES["competent"], PROFILES["expert"]
    for et in STATIC_ERROR_TYPES:
        assert nov.rate(et) > comp.rate(et) > exp.rate(et) > 0, et
    for field in ("notice_explicit", "notice_implicit", "fix_invalid_call"):
        assert getattr(nov, field) < getattr(comp, field) < getattr(exp, field), field
    assert nov.uptake() < comp.uptake() < exp.uptake()
    assert nov.on_fault.press_on > comp.on_fault.press_on > exp.on_fault.press_on


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_built_in_profiles_keep_every_context_knob_neutral(name: str) -> None:
    prof = PROFILES[name]
    assert context_assumptions(prof) == {}
    assert assumptions_line(prof) is None
    assert prof.guided_error_factor is None and prof.replan_rewrite == 0.0
    assert prof.malformed_plan == 0.0
    # acting on a verifier finding is the decision of fixing a call from an error message
    assert prof.uptake() == prof.fix_invalid_call


def test_a_non_neutral_knob_is_named_wherever_the_model_is() -> None:
    prof = override(PROFILES["competent"], ["verifier_uptake=1.0", "on_fault.retry=0"])
    assert prof.name == "competent[verifier_uptake=1.0,on_fault.retry=0]"
    assert prof.verifier_uptake == 1.0 and prof.on_fault.retry == 0
    assert context_assumptions(prof) == {"verifier_uptake": 1.0}
    spec = spec_with_overrides("simulated:competent", ["verifier_uptake=1.0"])
    assert spec == "simulated:competent[verifier_uptake=1.0]"
    model = make_model(spec, task=booking_task())
    assert model.model_name == spec and model.profile.verifier_uptake == 1.0
    notes = model_notes([spec, "openai:gpt-4o-mini"])
    assert notes[0] == SIMULATED_CAVEAT
    assert notes[1].endswith("verifier_uptake=1.0")
    assert model_notes(["simulated:competent"]) == [SIMULATED_CAVEAT]
    assert model_notes(["openai:gpt-4o-mini", "local:smollm2"]) == []
    scaled = override(PROFILES["competent"], ["error_scale=0"])
    assert all(r == 0 for r in scaled.error_rates.values())


@pytest.mark.parametrize(
    ("spec", "sets", "needle"),
    [
        ("simulated:competent", ["colour=blue"], "colour"),
        ("simulated:competent", ["verifier_uptake"], "KEY=VALUE"),
        ("simulated:competent", ["verifier_uptake=2"], "verifier_uptake"),
        ("simulated:competent", ["on_fault.hope=1"], "hope"),
        ("openai:gpt-4o-mini", ["verifier_uptake=1"], "simulated"),
    ],
)
def test_bad_profile_overrides_are_named(spec: str, sets: list[str], needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        spec_with_overrides(spec, sets)


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


def test_replan_run_varies_one_parameter_from_the_command_line(tmp_path) -> None:
    import json

    from typer.testing import CliRunner

    from replan.cli import app

    args = ["run", "--agents", "dual_loop", "--limit", "1", "--out", str(tmp_path), "--json"]
    res = CliRunner().invoke(app, [*args, "--profile-set", "verifier_uptake=0"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert list(out["designs"]) == ["dual_loop"]
    assert any("verifier_uptake=0" in n for n in out["notes"])
    from replan.runner.store import ResultsStore

    with ResultsStore(tmp_path) as store:
        assert {e.model for e in store.episodes()} == {"simulated:competent[verifier_uptake=0]"}
    bad = CliRunner().invoke(app, [*args, "--profile-set", "verifier_uptake=7"])
    assert bad.exit_code == 2 and "verifier_uptake" in bad.output
