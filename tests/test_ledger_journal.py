"""Money that is counted: a journal appended per call, a budget across reruns, runs that stop at a 401,
and a --timeout that bounds the whole call. Every server is a loopback stub."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.llm.client import LLMClient
from irbgen.llm.ledger import JOURNAL, Ledger
from irbgen.llm.settings import LLMSettings
from irbgen.llm.types import Usage
from irbgen.testing.openai_server import OpenAIStubServer


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bench"
    assert run("phantom", "--n", 60, "--depth", 6, "--out", out, "-q").exit_code == 0
    return out


def journal_calls(path: Path) -> int:
    return sum(json.loads(line).get("calls", 0) for line in path.read_text().splitlines() if line.strip())


def test_the_journal_sums_on_open_and_survives_a_torn_last_line(tmp_path):
    path = tmp_path / JOURNAL
    ledger = Ledger.open(path)
    ledger.record_request("s", "m")
    ledger.record_usage("s", "m", Usage(10, 5), 0.25)
    ledger.record_outcome("s", "m", ok=True)
    ledger.close()
    with path.open("a") as file:
        file.write('{"stage":"s","model":"m","cal')  # a write cut by a kill
    again = Ledger.open(path)
    assert (again.total().calls, again.total().ok, again.cost) == (1, 1, 0.25)
    again.close()


def test_a_ledger_json_from_before_journals_is_carried_over(tmp_path):
    old = Ledger()
    old.record_request("s", "m")
    old.record_usage("s", "m", Usage(1, 1), 0.5)
    old.save(tmp_path / "ledger.json")
    first = Ledger.open(tmp_path / JOURNAL)
    first.close()
    second = Ledger.open(tmp_path / JOURNAL)  # carried once, not twice
    assert (second.total().calls, second.cost) == (1, 0.5)
    second.close()


def test_eval_qa_killed_midway_has_counted_every_request(bench, tmp_path):
    out = tmp_path / "qa"
    with OpenAIStubServer(latency=0.05) as server:
        command = [sys.executable, "-m", "irbgen", "eval", "qa", "--benchmark", str(bench)]
        command += ["--method", "closed-book", "--model", "gpt-4o-mini", "--base-url", server.base_url]
        command += ["--concurrency", "4", "--out", str(out)]
        env = {**os.environ, "OPENAI_API_KEY": "unused"}
        victim = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while server.requests < 20 and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        assert victim.returncode == -signal.SIGKILL  # killed midway, before it could write ledger.json
        assert not (out / "ledger.json").exists()
        received = server.requests
    counted = journal_calls(out / JOURNAL)
    assert received <= counted <= received + 4  # only requests in flight may never have arrived
    assert Ledger.open(out / JOURNAL).cost > 0


def test_max_cost_is_a_budget_across_reruns(bench, tmp_path):
    out = tmp_path / "qa"
    # Every reply bills all the tokens it may use (4,096 at $0.60 per 1M): a few calls fit in $0.01.
    with OpenAIStubServer(usage=lambda request, text: (0, request["max_tokens"])) as server:
        args = ["eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "gpt-4o-mini"]
        args += ["--base-url", server.base_url, "--concurrency", 1, "--max-cost", 0.01, "--out", out]
        first = run(*args)
        assert first.exit_code == 1 and "budget" in first.output.lower()
        spent = server.requests
        assert 0 < spent
        for _ in range(3):
            again = run(*args)
            assert again.exit_code == 1 and "budget" in again.output.lower()
        assert server.requests == spent  # reruns spend nothing more
        assert Ledger.open(out / JOURNAL).cost <= 0.01  # never past the cap


def test_a_refused_key_stops_eval_qa_at_the_first_answer(bench, tmp_path):
    with OpenAIStubServer() as server:
        server.add_rule(lambda request: True, "401", message="Incorrect API key provided")
        result = run("eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "m",
                     "--base-url", server.base_url, "--concurrency", 1, "--out", tmp_path / "qa")  # fmt: skip
        assert result.exit_code == 1
        assert "answered HTTP 401" in result.output and "the API key was refused" in result.output
        assert server.requests == 1  # not one request per sample, and no retry


class _Trickle(BaseHTTPRequestHandler):
    """Answers a chat completion one byte at a time, each after a pause: slow, but never idle long."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps({"choices": [{"message": {"content": "late"}, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for byte in body:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(0.02)
        except OSError:
            pass  # the client gave up


def test_timeout_bounds_the_whole_call_not_each_read():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        # Each byte comes well within 0.5 s, the whole body (about 80 bytes) takes far longer.
        settings = LLMSettings(base_url=url, model="m", timeout=0.5, max_retries=0)

        async def ask():
            async with LLMClient(settings) as client:
                return await client.complete([{"role": "user", "content": "hi"}], stage="t")

        result = asyncio.run(ask())
    finally:
        server.shutdown()
    assert result.error == "timeout after 1 attempts"
