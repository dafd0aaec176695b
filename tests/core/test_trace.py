from hypothesis import given
from hypothesis import strategies as st

from replan.core.taxonomy import VerdictCode
from replan.core.trace import (
    Call,
    EndReason,
    Episode,
    Finding,
    Perturbation,
    PlanVersion,
    Step,
    Usage,
    Verdict,
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=10,
)


@given(
    obs=json_values,
    args=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    code=st.sampled_from(list(VerdictCode)),
)
def test_episode_json_round_trip(obs, args, code):
    ep = Episode(
        episode_id="e1",
        task_id="t1",
        suite="toolmaze",
        design="dual_loop",
        model="simulated:competent",
        seed=3,
        mode="P3",
        query="book a flight",
        steps=[
            Step(
                index=0,
                round=1,
                call=Call(tool="search_flights", args=args, node_id="1"),
                verdict=Verdict(code=code, message="m", param="p"),
                observation=obs,
                perturbation=Perturbation(
                    mode="P3",
                    explicit=False,
                    permanent=False,
                    kind="price_x1000",
                    victim="search_flights",
                    sentinel=123456.78,
                ),
            )
        ],
        plans=[
            PlanVersion(
                index=0,
                text="{}",
                parse_ok=False,
                parse_error="no tasks",
                findings=[Finding(node="1", code=code, message="x")],
            )
        ],
        final_answer="done",
        end_reason=EndReason.STEP_BUDGET,
        usage=Usage(model_calls=2, tool_calls=1),
        budgets={"steps": 25},
        metadata={"k": obs},
    )
    again = Episode.from_json(ep.to_json())
    assert again == ep
    assert again.to_json() == ep.to_json()
