"""The SDE rubric's items and dimensions, and the verifier codes sde-auto reads as S2 / S3."""

from __future__ import annotations

from replan.core.taxonomy import VerdictCode

S_ITEMS = ("S1", "S2", "S3", "S4", "S5")
D_ITEMS = ("D1", "D2", "D3", "D4", "D5")
E_ITEMS = ("E1", "E2", "E3", "E4", "E5")
DIMENSIONS: dict[str, tuple[str, ...]] = {"SI": S_ITEMS, "DR": D_ITEMS, "ES": E_ITEMS}
ITEMS = S_ITEMS + D_ITEMS + E_ITEMS
SCRIPT_ITEMS = ("S5", "E5")
JUDGED_ITEMS = tuple(i for i in ITEMS if i not in SCRIPT_ITEMS)
AUTO_ITEMS = ("S2", "S3", "S4", "E1", "E3", "D4")
ALLOWED = (0.0, 0.5, 1.0)

#: verifier codes that are dependency problems (S2) and tool/parameter problems (S3)
S2_CODES = frozenset(
    {
        VerdictCode.DEPENDENCY_MISSING,
        VerdictCode.WRONG_DEPENDENCY,
        VerdictCode.UNNEEDED_DEPENDENCY,
        VerdictCode.PARALLEL_CONFLICT,
        VerdictCode.MISSING_CALL,
    }
)
S3_CODES = frozenset(
    {
        VerdictCode.UNKNOWN_TOOL,
        VerdictCode.MISSING_PARAM,
        VerdictCode.UNKNOWN_PARAM,
        VerdictCode.TYPE_MISMATCH,
        VerdictCode.INVALID_VALUE,
        VerdictCode.PRECONDITION_FAILED,
        VerdictCode.UNBOUND_REFERENCE,
        VerdictCode.WRONG_TOOL,
    }
)
