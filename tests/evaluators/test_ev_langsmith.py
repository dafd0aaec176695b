"""LangSmith adapters: ``langsmith.evaluate`` fully offline, and feedback posted to a local
server that records what the installed client really sends (``/feedback`` or the batched
``/runs/multipart``)."""

from __future__ import annotations

import json
import socket
import threading
import uuid
from datetime import UTC, datetime
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import ev_travel as tv
import pytest
from langsmith import Client, evaluate
from langsmith.schemas import Example

from replan.evaluators import score, score_episode
from replan.evaluators.langsmith import (
    EVALUATORS,
    SUMMARY_EVALUATORS,
    example_payload,
    send_feedback,
)

BOOKED = "Booked {booking}"


@pytest.fixture(autouse=True)
def _no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        monkeypatch.setenv(var, "false")


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _episodes() -> list[tuple[Any, Any]]:
    t = tv.task("t-ls", mode="P1")
    clean = tv.run(
        t,
        [tv.search(fault="explicit"), tv.search(), tv.quote(), tv.book()],
        answer=BOOKED,
        episode_id="ok",
    )
    broken = tv.run(
        t,
        [tv.search(), tv.Act("quote_flight", {"passengers": 2}, "2")],
        answer="failed",
        episode_id="bad",
    )
    gave_up = tv.run(t, [tv.search(fault="explicit")], answer="unavailable", episode_id="gave-up")
    return [(clean, t), (broken, t), (gave_up, t)]


@pytest.mark.filterwarnings("ignore:'upload_runs' parameter is in beta")
def test_evaluate_offline() -> None:
    pairs = _episodes()
    examples = []
    for ep, t in pairs:
        payload = example_payload(ep, t)
        examples.append(
            Example(
                id=uuid.uuid4(),
                dataset_id=uuid.uuid4(),
                inputs={**payload["inputs"], **payload["outputs"]},  # the target echoes it
                outputs={},
                created_at=datetime.now(UTC),
            )
        )
    # nothing listens on the port, and no background batching thread is started
    client = Client(
        api_url=f"http://127.0.0.1:{_unused_port()}", api_key="test", auto_batch_tracing=False
    )
    results = evaluate(
        lambda inputs: {"episode": inputs["episode"]},
        data=examples,
        evaluators=EVALUATORS,
        summary_evaluators=SUMMARY_EVALUATORS,
        upload_results=False,
        client=client,
        max_concurrency=0,
    )
    rows = list(results)
    assert len(rows) == 3
    by_episode: dict[str, dict[str, Any]] = {}
    for row in rows:
        ep_id = json.loads(json.dumps(row["run"].outputs["episode"]))["episode_id"]
        by_episode[ep_id] = {
            r.key: (r.score, r.value) for r in row["evaluation_results"]["results"]
        }
    assert by_episode["ok"]["prefix.clean"][0] == 1.0
    assert by_episode["ok"]["toolmaze.recovered"][0] == 1.0
    assert by_episode["bad"]["prefix.fed"][0] == 2.0
    assert by_episode["bad"]["prefix.first_error_type"][1] == "Parameter_Missing"
    assert by_episode["gave-up"]["toolmaze.recovered"][0] == 0.0
    summary = {r.key: r.score for r in results._summary_results["results"]}
    expected = score([ep for ep, _ in pairs], [pairs[0][1]])
    assert summary["prefix.ter"] == pytest.approx(expected["prefix.ter"]["value"])  # 2/3
    assert summary["prefix.ter"] == pytest.approx(2 / 3)
    assert summary["prefix.rr"] == 0.0
    assert summary["toolmaze.prr.P1"] == pytest.approx(1 / 2)  # "bad" never met the fault
    assert summary["sde.pass@1"] == pytest.approx(1 / 3)
    assert "prefix.pec.1" in summary and "prefix.cpec.2" in summary


class _Recorder(BaseHTTPRequestHandler):
    """Answers /info and records every POST body (JSON or multipart)."""

    posts: ClassVar[list[tuple[str, str, bytes]]] = []

    def _reply(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._reply(
            {
                "version": "0.10.0",
                "batch_ingest_config": {
                    "use_multipart_endpoint": True,
                    "size_limit": 100,
                    "size_limit_bytes": 20_971_520,
                    "scale_up_qsize_trigger": 1000,
                    "scale_up_nthreads_limit": 2,
                    "scale_down_nempty_trigger": 4,
                },
            }
        )

    def do_POST(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        self.posts.append((self.path, self.headers.get("Content-Type", ""), self.rfile.read(n)))
        self._reply({})

    def log_message(self, *args: Any) -> None:
        pass


def _feedback_payloads(posts: list[tuple[str, str, bytes]]) -> list[dict[str, Any]]:
    out = []
    for path, ctype, body in posts:
        if path == "/feedback":
            out.append(json.loads(body))
        elif path == "/runs/multipart":
            msg = BytesParser(policy=HTTP).parsebytes(
                f"Content-Type: {ctype}\r\n\r\n".encode() + body
            )
            for part in msg.iter_parts():
                if (part.get_param("name", header="content-disposition") or "").startswith(
                    "feedback."
                ):
                    out.append(json.loads(part.get_content()))
    return out


def test_feedback_reaches_the_server() -> None:
    _Recorder.posts = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    client = Client(api_url=f"http://127.0.0.1:{server.server_address[1]}", api_key="test")
    try:
        (ep_ok, t), (ep_bad, _), _ = _episodes()
        run_a, run_b, project = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        fb_a = score_episode(ep_ok, t)
        fb_b = score_episode(ep_bad, t)
        send_feedback(client, run_a, fb_a, session_id=project)  # direct POST /feedback
        send_feedback(client, run_b, fb_b, trace_id=run_b, session_id=project)  # batched
        client.flush(timeout=20)
    finally:
        client.cleanup() if hasattr(client, "cleanup") else None
        server.shutdown()
        server.server_close()
    got = _feedback_payloads(_Recorder.posts)
    paths = {p for p, _, _ in _Recorder.posts}
    assert "/feedback" in paths and "/runs/multipart" in paths
    sent = {(str(run_a), f.key): f for f in fb_a} | {(str(run_b), f.key): f for f in fb_b}
    received = {(p["run_id"], p["key"]): p for p in got}
    assert set(received) == set(sent)
    for k, f in sent.items():
        p = received[k]
        assert p.get("score") == f.score
        assert p.get("value") == f.value
        assert p["session_id"] == str(project)
    assert received[(str(run_b), "prefix.fed")]["score"] == 2.0
    assert received[(str(run_b), "prefix.first_error_type")]["value"] == "Parameter_Missing"
