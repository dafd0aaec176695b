import pytest

from replan.core.taxonomy import (
    CHINESE_TAGS,
    ERROR_TO_VERDICTS,
    VERDICT_TO_ERROR,
    ErrorType,
    VerdictCode,
    error_types_for_tag,
)


def test_fourteen_types_each_reachable_from_a_verdict():
    assert len(ErrorType) == 14
    assert set(VERDICT_TO_ERROR.values()) == set(ErrorType)
    for et, codes in ERROR_TO_VERDICTS.items():
        assert all(VERDICT_TO_ERROR[c] is et for c in codes)


def test_every_tag_in_the_sample_maps(sample_files):
    import json

    seen = set()
    for path in sample_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            for k in ("tag", "tag_1", "tag_2", "tag_3"):
                if rec.get(k):
                    assert error_types_for_tag(rec[k])
                    seen.add(rec[k])
    assert "参数类型错误" in seen and "Parameter_Error" in seen


def test_tags():
    assert error_types_for_tag("参数类型错误") == (ErrorType.TYPE_ERROR,)
    assert error_types_for_tag("type_error") == (ErrorType.TYPE_ERROR,)
    assert len(CHINESE_TAGS["异常应对错误"]) == 2
    assert error_types_for_tag(None) == ()
    with pytest.raises(ValueError, match="unknown"):
        error_types_for_tag("Banana_Error")


def test_faults_are_not_agent_errors():
    assert not VerdictCode.TIMEOUT.is_agent_error
    assert not VerdictCode.OK.is_agent_error
    assert VerdictCode.TYPE_MISMATCH.is_agent_error
