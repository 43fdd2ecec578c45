"""A real OpenAI-compatible HTTP server on 127.0.0.1, with scripted faults, for tests and benchmarks.

    with OpenAIStubServer(latency=0.0) as server:
        server.inject("429", retry_after=1)     # the next request gets a 429 with Retry-After: 1
        server.inject("cut")                    # the one after that is cut off mid-response
        ... point a client at server.base_url ...
        assert server.requests == 3

Replies echo the last user message, except that a judge request (irbgen's qa_judge prompt, asking for
JSON) gets a verdict, so `eval qa --judge-model` runs offline end to end (see `stub_reply`).

Fault kinds: any HTTP status as a string ("400" .. "599"), "timeout" (hold the reply for `seconds`),
"malformed" (200 with a body that is not JSON) and "cut" (close the socket mid-response). Queued faults
are consumed one per request; rules (`add_rule`) apply to every request their predicate matches.
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], str]
Counter = Callable[[dict[str, Any], str], tuple[int, int]]  # (request, reply text) -> reported token usage
Predicate = Callable[[dict[str, Any]], bool]

SPECIAL_FAULTS = ("cut", "malformed", "timeout")

_DEFAULT_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided: {api_key}.",
    403: "You are not allowed to use this model.",
    404: "The model does not exist.",
    422: "Unprocessable request.",
    429: "Rate limit reached; please retry later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded.",
}


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: an HTTP status, "timeout", "malformed" or "cut"."""

    kind: str
    retry_after: float | str | None = None  # seconds, or an HTTP date
    message: str | None = None  # "{api_key}" is replaced by the bearer token the client sent
    seconds: float = 10.0  # how long a "timeout" holds the reply
    code: str | None = None  # the error's "code" field, e.g. "insufficient_quota"

    def __post_init__(self) -> None:
        if self.kind not in SPECIAL_FAULTS and not (self.kind.isdigit() and 400 <= int(self.kind) <= 599):
            raise ValueError(
                f"unknown fault {self.kind!r}: use a status 400-599 or one of {', '.join(SPECIAL_FAULTS)}"
            )


def _client_gone(connection: socket.socket) -> bool:
    """The client closed its side: the socket reads as end-of-file (or fails)."""
    try:
        readable, _, _ = select.select([connection], [], [], 0)
        return bool(readable) and connection.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


@dataclass
class _Rule:
    predicate: Predicate
    fault: Fault
    remaining: int | None


def echo_last_user_message(request: dict[str, Any]) -> str:
    """The default responder: the content of the last user message."""
    for message in reversed(request.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


# The user message of irbgen's qa_judge prompt: the question, the gold answers (" | " between them) and
# the response to grade.
_JUDGE_REQUEST = re.compile(
    r"\AQuestion: .*?\nGold answer\(s\): (?P<gold>[^\n]*)\nResponse: (?P<response>.*)\Z", re.S
)
_DECLINES = ("", "(empty)", "i don't know", "i do not know")


def judge_label(gold: str, response: str) -> str:
    """A judge's label by plain rules: correct when the response holds every gold answer (for a false
    premise, when it says "false premise"), not_attempted when it declines, else incorrect."""
    from irbgen.eval.qa.judge import FALSE_PREMISE_GOLD

    said = " ".join(response.lower().split())
    if said.rstrip(".") in _DECLINES:
        return "not_attempted"
    if gold == FALSE_PREMISE_GOLD:
        return "correct" if "false premise" in said else "incorrect"
    answers = [" ".join(answer.lower().split()) for answer in gold.split(" | ") if answer.strip()]
    return "correct" if answers and all(answer in said for answer in answers) else "incorrect"


def stub_reply(request: dict[str, Any]) -> str:
    """The default responder: a judge's JSON verdict for a judge request, else the last user message."""
    text = echo_last_user_message(request)
    if request.get("response_format"):
        judged = _JUDGE_REQUEST.match(text.strip())
        if judged is not None:
            return json.dumps({"label": judge_label(judged["gold"], judged["response"])})
    return text


def _count_tokens(request: dict[str, Any]) -> int:
    total = 0
    for message in request.get("messages") or []:
        content = message.get("content")
        total += len(content.split()) if isinstance(content, str) else 0
    return total


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 512  # the listen backlog; the default (5) refuses bursts of concurrent clients

    stub: OpenAIStubServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up (after its own timeout, say) is normal here, not an error to print.
        import sys

        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            return
        self.stub.errors.append(repr(error))
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    timeout = 60  # an idle keep-alive connection is dropped after this
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        return

    def setup(self) -> None:
        super().setup()
        # Nagle off: the body segment after the header segment would otherwise wait for the client's
        # delayed ACK, ~40 ms per request on Linux (see bench/RESULTS-llm.md).
        if self.server.stub.nodelay:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.stub._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.stub._track(self.connection, add=False)

    # --- endpoints ---------------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        stub = self.server.stub
        stub._count(self.headers.get("Authorization"))
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = [{"id": stub.model, "object": "model", "created": 0, "owned_by": "irbgen"}]
            self._send_json(200, {"object": "list", "data": data})
        else:
            self._send_error(404, f"no such path: {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        stub = self.server.stub
        stub._enter(self)
        try:
            self._post(stub)
        finally:
            stub._leave(self)

    def _post(self, stub: OpenAIStubServer) -> None:
        token = stub._count(self.headers.get("Authorization"))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._send_error(404, f"no such path: {self.path}")
            return
        try:
            request = json.loads(raw)
            if not isinstance(request, dict):
                raise ValueError("not an object")
        except ValueError:
            self._send_error(400, "the request body is not a JSON object")
            return
        stub._record(request)
        fault = stub._next_fault(request)
        if stub.latency:
            stub._stop.wait(stub.latency)
        if fault is not None and self._apply(fault, token):
            return
        try:
            text = stub.responder(request)
        except Exception as error:  # a broken responder is a test bug; report it as a 500 and keep it
            stub.errors.append(f"responder: {error!r}")
            self._send_error(500, f"responder failed: {error!r}")
            return
        if stub.usage is not None:
            prompt_tokens, completion_tokens = stub.usage(request, text)
        else:
            prompt_tokens, completion_tokens = _count_tokens(request), len(text.split())
        body = {
            "id": f"chatcmpl-stub-{stub.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or stub.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        self._send_json(200, body)

    # --- faults ------------------------------------------------------------------------------------

    def _apply(self, fault: Fault, token: str) -> bool:
        """Carry out a fault; False means "answer normally after all" (a timeout the client outlived)."""
        if fault.kind == "cut":
            # Headers promise a body that never fully arrives; then the socket closes.
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n"
                b'{"id": "chatcmpl-cut", "choices": [{"index": 0, "mess'
            )
            self._hang_up()
            return True
        if fault.kind == "malformed":
            self._send_bytes(200, b'{"id": "chatcmpl-malformed", "choices": [{"index": 0,,, "message": }')
            return True
        if fault.kind == "timeout":
            return not self._hold(fault.seconds)
        status = int(fault.kind)
        message = fault.message or _DEFAULT_MESSAGES.get(status, f"error {status}")
        headers = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = str(fault.retry_after)
        self._send_error(status, message.replace("{api_key}", token), headers, code=fault.code)
        return True

    def _hold(self, seconds: float) -> bool:
        """Hold the reply for `seconds`; False when the client hung up first (it gave up waiting)."""
        stub = self.server.stub
        with stub._lock:
            stub._held[id(self)] = self.connection
        try:
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and not stub._stop.is_set():
                if _client_gone(self.connection):
                    return False
                stub._stop.wait(0.01)
            return True
        finally:
            with stub._lock:
                stub._held.pop(id(self), None)

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # --- writing -----------------------------------------------------------------------------------

    def _send_error(
        self, status: int, message: str, headers: dict[str, str] | None = None, code: str | None = None
    ) -> None:
        kind = "invalid_request_error"
        if status == 429:
            kind = "rate_limit_error"
        elif status >= 500:
            kind = "server_error"
        error = {"message": message, "type": kind, "param": None, "code": code}
        self._send_json(status, {"error": error}, headers)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(body).encode(), headers)

    def _send_bytes(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class OpenAIStubServer:
    """An OpenAI-compatible chat server in a background thread; use it as a context manager."""

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        model: str = "stub-model",
        host: str = "127.0.0.1",
        port: int = 0,
        nodelay: bool = True,
        usage: Counter | None = None,
    ) -> None:
        self.responder: Responder = responder or stub_reply
        self.usage = usage  # the token counts to report; default: words of the messages and of the reply
        self.latency = latency
        self.model = model
        self.host = host
        self.requested_port = port  # 0: any free port
        self.nodelay = nodelay  # False only to measure what Nagle's algorithm costs
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._faults: deque[Fault] = deque()
        self._rules: list[_Rule] = []
        self._requests = 0
        self._in_flight = 0
        self._max_in_flight = 0
        self._held: dict[int, socket.socket] = {}  # handlers holding a "timeout" reply
        self._gone: set[int] = set()  # of those, the ones whose client hung up
        self._auth_headers: list[str] = []
        self._bodies: list[dict[str, Any]] = []
        self._connections: set[socket.socket] = set()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> OpenAIStubServer:
        """Bind a free port on the loopback interface and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stop.clear()
        httpd = _Server((self.host, self.requested_port), _Handler)
        httpd.stub = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake any held replies and drop open connections."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._stop.set()
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (the server must be running)."""
        if self._httpd is None:
            raise RuntimeError("the stub server is not running")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. http://127.0.0.1:PORT/v1."""
        return f"http://{self.host}:{self.port}/v1"

    # --- faults ------------------------------------------------------------------------------------

    def inject(
        self,
        kind: str,
        *,
        retry_after: float | str | None = None,
        message: str | None = None,
        seconds: float = 10.0,
        code: str | None = None,
        times: int = 1,
    ) -> None:
        """Queue a fault for the next `times` requests (faults are consumed in order, one per request)."""
        fault = Fault(kind, retry_after=retry_after, message=message, seconds=seconds, code=code)
        with self._lock:
            self._faults.extend([fault] * times)

    def add_rule(
        self,
        predicate: Predicate,
        kind: str,
        *,
        retry_after: float | str | None = None,
        message: str | None = None,
        seconds: float = 10.0,
        code: str | None = None,
        times: int | None = None,
    ) -> None:
        """Apply a fault to every request (up to `times`) for which predicate(request_json) is true."""
        fault = Fault(kind, retry_after=retry_after, message=message, seconds=seconds, code=code)
        with self._lock:
            self._rules.append(_Rule(predicate, fault, times))

    def clear_faults(self) -> None:
        """Drop queued faults and rules."""
        with self._lock:
            self._faults.clear()
            self._rules.clear()

    @property
    def pending_faults(self) -> int:
        """Queued faults not yet consumed."""
        with self._lock:
            return len(self._faults)

    # --- what the server saw -----------------------------------------------------------------------

    @property
    def requests(self) -> int:
        """HTTP requests received so far (all endpoints)."""
        with self._lock:
            return self._requests

    @property
    def max_in_flight(self) -> int:
        """The most POST requests that were being handled at the same time."""
        with self._lock:
            return self._max_in_flight

    @property
    def auth_headers(self) -> list[str]:
        """The Authorization header of every request, in arrival order ("" when absent)."""
        with self._lock:
            return list(self._auth_headers)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """The JSON body of every chat completion request, in arrival order."""
        with self._lock:
            return list(self._bodies)

    # --- called from handler threads ---------------------------------------------------------------

    def _count(self, authorization: str | None) -> str:
        with self._lock:
            self._requests += 1
            self._auth_headers.append(authorization or "")
        return (authorization or "").removeprefix("Bearer ").strip()

    def _enter(self, handler: object) -> None:
        with self._lock:
            # A held reply whose client hung up is no longer in flight: the client gave up on it
            # before it sent this request, so counting it would blame the client's concurrency.
            for key, connection in list(self._held.items()):
                if key not in self._gone and _client_gone(connection):
                    self._gone.add(key)
                    self._in_flight -= 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)

    def _leave(self, handler: object) -> None:
        with self._lock:
            if id(handler) in self._gone:
                self._gone.discard(id(handler))
            else:
                self._in_flight -= 1

    def _record(self, request: dict[str, Any]) -> None:
        with self._lock:
            self._bodies.append(request)

    def _next_fault(self, request: dict[str, Any]) -> Fault | None:
        with self._lock:
            rules = list(self._rules)
        for rule in rules:
            if rule.predicate(request):
                with self._lock:
                    if rule.remaining is not None:
                        if rule.remaining <= 0:
                            continue
                        rule.remaining -= 1
                return rule.fault
        with self._lock:
            return self._faults.popleft() if self._faults else None

    def _track(self, connection: socket.socket, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted: python -m irbgen.testing.openai_server --latency 0.2 (prints the base URL)."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(
        description="A loopback OpenAI-compatible stub server (echo replies; verdicts to judge requests)."
    )
    parser.add_argument("--latency", type=float, default=0.0, help="seconds to hold each reply")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    parser.add_argument("--no-nodelay", action="store_true", help="leave Nagle's algorithm on")
    args = parser.parse_args(argv)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with OpenAIStubServer(latency=args.latency, port=args.port, nodelay=not args.no_nodelay) as server:
        print(server.base_url, flush=True)
        try:
            stopped.wait()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
