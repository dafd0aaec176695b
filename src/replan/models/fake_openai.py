"""A fake OpenAI-compatible chat server on 127.0.0.1 that answers after a fixed latency.

For measuring a run's throughput and checking its limits without a provider (and without
spending anything): ``python -m replan.models.fake_openai --latency 0.2`` prints its base URL,
then ``replan run --model openai:fake --base-url URL --concurrency 32``. It counts requests in
flight on the server side — the number that a provider's concurrency quota sees — and reports
the most at once at ``GET /stats``; in-process, ``arrivals`` holds when each request came (a
rate limit's check) and ``throttle`` answers chosen requests with a 429 and ``Retry-After``.

Every reply is a well-formed chat completion: a call of the first tool the request offers (with
no arguments) until the conversation holds ``tool_turns`` tool results, then a plain answer; a
request that offers no tools gets the answer at once. The calls are wrong for any real task, and
are scored as such: the server exists to put a known latency behind every model call.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """The server, started on a free port in a background thread (``with FakeOpenAI() as s``)."""

    def __init__(
        self,
        latency_s: float = 0.2,
        *,
        tool_turns: int = 2,
        port: int = 0,
        throttle: dict[int, float] | None = None,
    ):
        self.latency_s = latency_s
        self.tool_turns = tool_turns
        #: request number (1 = the first) -> seconds: that request gets a 429 at once, with
        #: ``Retry-After`` asking for that long (as a provider over its quota answers)
        self.throttle = dict(throttle or {})
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.requests = 0
        #: when each request arrived (``time.monotonic``; the last 100,000)
        self.arrivals: deque[float] = deque(maxlen=100_000)
        #: when each 429 was sent
        self.throttled: list[float] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as real servers
            # TCP_NODELAY, as real servers: a reply's headers and body are two writes, and
            # with Nagle's algorithm the body waits for the client's delayed ACK (~40 ms a call)
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests += 1
                    fake.arrivals.append(time.monotonic())
                    retry_after = fake.throttle.get(fake.requests)
                    if retry_after is not None:
                        fake.throttled.append(time.monotonic())
                    else:
                        fake.in_flight += 1
                        fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                if retry_after is not None:
                    self._send(
                        {"error": {"message": "rate limited", "type": "rate_limit_exceeded"}},
                        status=429,
                        headers={"retry-after": f"{retry_after:g}"},
                    )
                    return
                try:
                    time.sleep(fake.latency_s)
                    self._send(fake.reply(body))
                finally:
                    with fake._lock:
                        fake.in_flight -= 1

            def do_GET(self) -> None:
                self._send(fake.stats())

            def _send(
                self,
                payload: dict[str, Any],
                status: int = 200,
                headers: dict[str, str] | None = None,
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # quiet
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 1024  # the default 5 would drop a burst of connections

        self.server = Server(("127.0.0.1", port), Handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion for a request: a tool call while turns remain, then an answer."""
        tools = body.get("tools") or []
        done = sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")
        if tools and done < self.tool_turns:
            name = tools[0].get("function", {}).get("name", "tool")
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{self.requests}",
                        "type": "function",
                        "function": {"name": name, "arguments": "{}"},
                    }
                ],
            }
        else:
            message = {"role": "assistant", "content": "done"}
        return {
            "id": f"chatcmpl-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "requests": self.requests,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
                "latency_s": self.latency_s,
            }

    def reset(self) -> None:
        """Forget the counts (between two measurements on one server)."""
        with self._lock:
            self.requests = self.max_in_flight = 0
            self.arrivals.clear()
            self.throttled.clear()

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted; prints the base URL first (a line to read by a caller)."""
    ap = argparse.ArgumentParser(prog="python -m replan.models.fake_openai")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds before each reply")
    ap.add_argument("--tool-turns", type=int, default=2, help="tool calls before the answer")
    ap.add_argument("--port", type=int, default=0, help="0: a free port")
    args = ap.parse_args(argv)
    server = FakeOpenAI(args.latency, tool_turns=args.tool_turns, port=args.port)
    print(server.base_url, flush=True)
    try:
        server.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()


if __name__ == "__main__":
    main()
