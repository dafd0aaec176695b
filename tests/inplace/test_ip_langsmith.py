"""The in-place run through ``langsmith.evaluate``, offline (upload_results=False, a client that
points at a port nothing listens on)."""

from __future__ import annotations

import socket
import uuid
from datetime import UTC, datetime
from typing import Any

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


def _offline_p1(retry: bool) -> Any:
    """The shop agent under a P1 503 on list_orders, nothing uploaded (a client on a closed port)."""
    client = Client(
        api_url=f"http://127.0.0.1:{_unused_port()}", api_key="test", auto_batch_tracing=False
    )
    return evaluate_in_langsmith(
        shop.agent(retry=retry),
        shop.TOOLS,
        _examples(),
        mode="P1",
        target="list_orders",
        kind="http_503",
        client=client,
        upload_results=False,
    )


@pytest.mark.filterwarnings("ignore:'upload_runs' parameter is in beta")
@pytest.mark.parametrize(("retry", "expected"), [(True, 1.0), (False, 0.0)])
def test_langsmith_evaluate_offline(retry: bool, expected: float) -> None:
    results = _offline_p1(retry)
    rows = list(results)
    assert len(rows) == 2
    for row in rows:
        fb = {r.key: r.score for r in row["evaluation_results"]["results"]}
        assert fb["toolmaze.exposed"] == 1.0
        assert fb["toolmaze.recovered"] == expected
        assert fb["toolmaze.success"] == expected  # judged against the example's reference
    summary = {r.key: r.score for r in results._summary_results["results"]}
    assert summary["inplace.tsr.P1"] == expected and summary["inplace.prr.P1"] == expected


def _counting_agent() -> tuple[list[int], object]:
    """A factory ``make_agent(tools)`` that counts the agents it built (one per episode)."""
    calls: list[int] = []

    def make(tools: list) -> object:
        calls.append(1)
        return shop.agent(retry=True)

    return calls, make


@pytest.mark.parametrize("upload", [True, False])
def test_langsmith_unreachable_is_one_line_before_anything_runs(upload: bool) -> None:
    """A closed port: one line naming the endpoint, in well under LangSmith's own 3–6 s of
    retries, and no episode ran (nothing to lose). Without uploading, a dataset *name* still
    needs LangSmith; a list of Examples does not (the offline test above)."""
    import time

    from replan.inplace.langsmith import LangSmithUnreachable

    url = f"http://127.0.0.1:{_unused_port()}"
    client = Client(api_url=url, api_key="test", auto_batch_tracing=False)
    calls, make = _counting_agent()
    start = time.monotonic()
    with pytest.raises(LangSmithUnreachable) as info:
        evaluate_in_langsmith(
            make,
            shop.TOOLS,
            _examples() if upload else "my-dataset",
            mode="P1",
            client=client,
            upload_results=upload,
        )
    assert time.monotonic() - start < 2.0
    msg = str(info.value)
    assert "\n" not in msg and f"LangSmith at {url} is unreachable (connection refused)" in msg
    assert "nothing was run" in msg and info.value.episodes == [] and calls == []


@pytest.mark.filterwarnings("ignore:'upload_runs' parameter is in beta")
def test_langsmith_lost_mid_experiment_keeps_the_episodes(monkeypatch) -> None:
    """A connection that fails after episodes ran: they come back on the error, not lost."""
    import langsmith
    import requests

    from replan.inplace.langsmith import LangSmithUnreachable

    def evaluate(target: Any, *, data: list, **_kw: Any) -> None:  # langsmith.evaluate, faked
        target(dict(data[0].inputs))
        raise requests.ConnectionError("Connection aborted. RemoteDisconnected")

    monkeypatch.setattr(langsmith, "evaluate", evaluate)
    with pytest.raises(LangSmithUnreachable, match=r"lost during the experiment") as info:
        _offline_p1(retry=True)
    assert len(info.value.episodes) == 1 and info.value.episodes[0].steps
    assert "1 episode(s) that ran are kept" in str(info.value)
