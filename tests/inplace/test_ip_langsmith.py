"""The in-place run through ``langsmith.evaluate``, offline (upload_results=False, a client that
points at a port nothing listens on)."""

from __future__ import annotations

import socket
import uuid
from datetime import UTC, datetime

import ip_shop as shop
import pytest
from langsmith import Client
from langsmith.schemas import Example

from replan.inplace.langsmith import evaluate_in_langsmith


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _examples() -> list[Example]:
    ds = uuid.uuid4()
    return [
        Example(
            id=uuid.uuid4(),
            dataset_id=ds,
            inputs={"question": t["input"]},
            outputs={"answer": t["expected"]},
            created_at=datetime.now(UTC),
        )
        for t in shop.TASKS
    ]


@pytest.mark.filterwarnings("ignore:'upload_runs' parameter is in beta")
@pytest.mark.parametrize(("retry", "expected"), [(True, 1.0), (False, 0.0)])
def test_langsmith_evaluate_offline(retry: bool, expected: float) -> None:
    client = Client(
        api_url=f"http://127.0.0.1:{_unused_port()}", api_key="test", auto_batch_tracing=False
    )
    results = evaluate_in_langsmith(
        shop.agent(retry=retry),
        shop.TOOLS,
        _examples(),
        mode="P1",
        target="list_orders",
        kind="http_503",
        client=client,
        upload_results=False,
    )
    rows = list(results)
    assert len(rows) == 2
    for row in rows:
        fb = {r.key: r.score for r in row["evaluation_results"]["results"]}
        assert fb["toolmaze.exposed"] == 1.0
        assert fb["toolmaze.recovered"] == expected
        assert fb["toolmaze.success"] == expected  # judged against the example's reference
    summary = {r.key: r.score for r in results._summary_results["results"]}
    assert summary["inplace.tsr.P1"] == expected and summary["inplace.prr.P1"] == expected
