"""Verdict codes and their mapping onto the 14 ParaRecover error types.

A *verdict* is what the world (or the static verifier) says about one call or one plan node.
An *error type* is ParaRecover's label for the mistake an agent made. The two vocabularies are
kept apart on purpose: verdicts are precise and mechanical, error types are what papers and
datasets report. This module is the one place that translates between them.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorType(StrEnum):
    """The 14 ParaRecover error types (Appendix C of the ParaRecover paper)."""

    # structural
    DEPENDENCE_ERROR = "Dependence_Error"
    DEPENDENCE_NULL = "Dependence_Null"
    PARALLELISM_ERROR = "Parallelism_Error"
    SERIAL_ERROR = "Serial_Error"
    # parameter-related
    PARAMETER_ERROR = "Parameter_Error"
    PARAMETER_INVALID = "Parameter_Invalid"
    PARAMETER_MISSING = "Parameter_Missing"
    TYPE_ERROR = "Type_Error"
    # tool-related
    NULL_ERROR = "Null_Error"
    TIMEOUT_ERROR = "Timeout_Error"
    TOOL_NAME_ERROR = "Tool_name_Error"
    TOOL_SELECT_ERROR = "Tool_select_Error"
    TOOLCALL_MISSING = "Toolcall_Missing"
    TOOLCALL_REDUNDANCY = "Toolcall_Redundancy"

    @property
    def dimension(self) -> str:
        """ParaRecover's grouping: ``structural``, ``parameter`` or ``tool``."""
        return _DIMENSION[self]


_DIMENSION = {
    ErrorType.DEPENDENCE_ERROR: "structural",
    ErrorType.DEPENDENCE_NULL: "structural",
    ErrorType.PARALLELISM_ERROR: "structural",
    ErrorType.SERIAL_ERROR: "structural",
    ErrorType.PARAMETER_ERROR: "parameter",
    ErrorType.PARAMETER_INVALID: "parameter",
    ErrorType.PARAMETER_MISSING: "parameter",
    ErrorType.TYPE_ERROR: "parameter",
    ErrorType.NULL_ERROR: "tool",
    ErrorType.TIMEOUT_ERROR: "tool",
    ErrorType.TOOL_NAME_ERROR: "tool",
    ErrorType.TOOL_SELECT_ERROR: "tool",
    ErrorType.TOOLCALL_MISSING: "tool",
    ErrorType.TOOLCALL_REDUNDANCY: "tool",
}


class VerdictCode(StrEnum):
    """What the world or the verifier concluded about one call or plan node."""

    OK = "ok"
    # call-level, decided by executing against the world
    UNKNOWN_TOOL = "unknown_tool"
    MISSING_PARAM = "missing_param"
    UNKNOWN_PARAM = "unknown_param"
    TYPE_MISMATCH = "type_mismatch"
    INVALID_VALUE = "invalid_value"
    PRECONDITION_FAILED = "precondition_failed"
    UNBOUND_REFERENCE = "unbound_reference"
    # plan-level, decided by the static verifier
    DEPENDENCY_MISSING = "dependency_missing"
    WRONG_DEPENDENCY = "wrong_dependency"
    UNNEEDED_DEPENDENCY = "unneeded_dependency"
    PARALLEL_CONFLICT = "parallel_conflict"
    REDUNDANT_CALL = "redundant_call"
    MISSING_CALL = "missing_call"
    WRONG_TOOL = "wrong_tool"
    # plan-level, decided by the agent graphs (no ParaRecover error type: S5 and plan history)
    INVALID_PLAN = "invalid_plan"  # the planner's text is not a valid DAG (S5 = 0)
    EXECUTED_NODE_CHANGED = "executed_node_changed"  # a replan altered a node that already ran
    # observed outcomes of a call that are the tool's fault, not the agent's
    EMPTY_RESULT = "empty_result"
    TIMEOUT = "timeout"

    @property
    def is_agent_error(self) -> bool:
        """True when the code blames the agent (environment faults and ``ok`` do not)."""
        return self not in (VerdictCode.OK, VerdictCode.EMPTY_RESULT, VerdictCode.TIMEOUT)

    @property
    def error_type(self) -> ErrorType | None:
        """The ParaRecover error type this code counts as (``None`` for ``ok``)."""
        return VERDICT_TO_ERROR.get(self)


VERDICT_TO_ERROR: dict[VerdictCode, ErrorType] = {
    VerdictCode.UNKNOWN_TOOL: ErrorType.TOOL_NAME_ERROR,
    VerdictCode.MISSING_PARAM: ErrorType.PARAMETER_MISSING,
    VerdictCode.UNKNOWN_PARAM: ErrorType.PARAMETER_ERROR,
    VerdictCode.TYPE_MISMATCH: ErrorType.TYPE_ERROR,
    VerdictCode.INVALID_VALUE: ErrorType.PARAMETER_INVALID,
    # A well-typed value that names something the world does not hold in the needed state
    # (an unknown or already used quote id) is an invalid value in ParaRecover's terms.
    VerdictCode.PRECONDITION_FAILED: ErrorType.PARAMETER_INVALID,
    # A reference to an output the call cannot see means its dependency is missing.
    VerdictCode.UNBOUND_REFERENCE: ErrorType.DEPENDENCE_NULL,
    VerdictCode.DEPENDENCY_MISSING: ErrorType.DEPENDENCE_NULL,
    VerdictCode.WRONG_DEPENDENCY: ErrorType.DEPENDENCE_ERROR,
    VerdictCode.UNNEEDED_DEPENDENCY: ErrorType.SERIAL_ERROR,
    VerdictCode.PARALLEL_CONFLICT: ErrorType.PARALLELISM_ERROR,
    VerdictCode.REDUNDANT_CALL: ErrorType.TOOLCALL_REDUNDANCY,
    VerdictCode.MISSING_CALL: ErrorType.TOOLCALL_MISSING,
    VerdictCode.WRONG_TOOL: ErrorType.TOOL_SELECT_ERROR,
    VerdictCode.EMPTY_RESULT: ErrorType.NULL_ERROR,
    VerdictCode.TIMEOUT: ErrorType.TIMEOUT_ERROR,
}

ERROR_TO_VERDICTS: dict[ErrorType, frozenset[VerdictCode]] = {
    et: frozenset(code for code, e in VERDICT_TO_ERROR.items() if e is et) for et in ErrorType
}

#: Tag names used in the Chinese-language ParaRecover real-rollout files. ``异常应对错误``
#: ("wrong reaction to an exception") is the real data's umbrella tag for the two tool-response
#: errors; it maps to both, and :func:`error_types_for_tag` returns the pair.
CHINESE_TAGS: dict[str, tuple[ErrorType, ...]] = {
    "参数类型错误": (ErrorType.TYPE_ERROR,),
    "参数名称错误": (ErrorType.PARAMETER_ERROR,),
    "参数值非法": (ErrorType.PARAMETER_INVALID,),
    "必要参数缺失": (ErrorType.PARAMETER_MISSING,),
    "必要工具缺失": (ErrorType.TOOLCALL_MISSING,),
    "工具调用冗余": (ErrorType.TOOLCALL_REDUNDANCY,),
    "异常应对错误": (ErrorType.NULL_ERROR, ErrorType.TIMEOUT_ERROR),
    "工具选择错误": (ErrorType.TOOL_SELECT_ERROR,),
    "工具名称错误": (ErrorType.TOOL_NAME_ERROR,),
    "错误串行": (ErrorType.SERIAL_ERROR,),
    "错误并行": (ErrorType.PARALLELISM_ERROR,),
    "依赖关系错误": (ErrorType.DEPENDENCE_ERROR,),
    "依赖关系缺失": (ErrorType.DEPENDENCE_NULL,),
    "返回结果为空": (ErrorType.NULL_ERROR,),
    "超时错误": (ErrorType.TIMEOUT_ERROR,),
}

_BY_LOWER = {e.value.lower(): e for e in ErrorType}


def error_types_for_tag(tag: str | None) -> tuple[ErrorType, ...]:
    """Map a dataset tag (English name, any case, or Chinese tag) to error types.

    Returns an empty tuple for ``None`` or an empty tag; raises ``ValueError`` naming the tag
    for anything unknown, so a new tag in a dataset is noticed rather than dropped.
    """
    if tag is None or not str(tag).strip():
        return ()
    t = str(tag).strip()
    if t in CHINESE_TAGS:
        return CHINESE_TAGS[t]
    e = _BY_LOWER.get(t.lower())
    if e is not None:
        return (e,)
    raise ValueError(f"unknown ParaRecover error tag {t!r}")
