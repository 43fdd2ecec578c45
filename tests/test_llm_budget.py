"""--max-cost holds: each request reserves its worst-case cost before it is sent, so what a server could
bill never passes the budget, at any concurrency. The server is a loopback stub that bills the worst
case: a token per byte of the prompt and every token max_tokens allows."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.llm.client import LLMClient
from irbgen.llm.ledger import JOURNAL, Ledger
from irbgen.llm.settings import LLMSettings, ModelPrice
from irbgen.llm.types import BudgetExceeded, Completion, Usage
from irbgen.testing import OpenAIStubServer

MODEL = "priced-model"
PRICE = ModelPrice(prompt=10.0, completion=40.0)  # USD per 1M tokens
MAX_TOKENS = 125  # a reply costs at most $0.005
UNBOUNDED_REPLY = 16_384  # what the worst-case server bills for a request without max_tokens


def worst_usage(request: dict[str, Any], text: str) -> tuple[int, int]:
    """The most a server could bill: a token per byte of each message, 4 per message and 3 to start
    the reply (OpenAI's chat format), and a reply as long as max_tokens allows."""
    messages = request["messages"]
    prompt = sum(len(m["content"].encode()) + 4 for m in messages) + 3
    return prompt, request.get("max_tokens") or UNBOUNDED_REPLY


def billed(server: OpenAIStubServer) -> float:
    """USD the server billed: every request it received, at the worst case it reported."""
    total = 0.0
    for body in server.bodies:
        prompt, completion = worst_usage(body, "")
        total += (prompt * PRICE.prompt + completion * PRICE.completion) / 1_000_000
    return total


def settings(server: OpenAIStubServer, max_cost: float, concurrency: int, **extra: Any) -> LLMSettings:
    return LLMSettings(
        base_url=server.base_url,
        model=MODEL,
        prices={MODEL: PRICE},
        max_cost=max_cost,
        concurrency=concurrency,
        **{"max_retries": 0, **extra},
    )


def spend(config: LLMSettings, calls: int, ledger: Ledger | None = None, **options: Any) -> list[Any]:
    """CALLS completions at once through one client (results or the BudgetExceeded each one raised)."""

    async def go() -> list[Any]:
        async with LLMClient(config, ledger=ledger) as client:
            asks = (client.complete([{"role": "user", "content": f"question {i}"}], stage="s", **options)
                    for i in range(calls))  # fmt: skip
            return await asyncio.gather(*asks, return_exceptions=True)

    return asyncio.run(go())


@pytest.mark.parametrize("concurrency", [1, 16, 64])
@pytest.mark.parametrize("budget", [0.01, 0.05, 2.00])
def test_spend_never_passes_the_budget(budget: float, concurrency: int) -> None:
    ledger = Ledger()
    with OpenAIStubServer(usage=worst_usage) as server:
        config = settings(server, budget, concurrency)
        results = spend(config, int(budget / 0.005) + 50, ledger, max_tokens=MAX_TOKENS)
    done = [r for r in results if isinstance(r, Completion)]
    assert all(r.ok for r in done)
    assert all(isinstance(r, BudgetExceeded) for r in results if not isinstance(r, Completion))
    assert len(done) < len(results)  # the budget ran out
    assert billed(server) <= budget
    assert ledger.cost == pytest.approx(billed(server))  # the ledger counts what the server billed
    # The budget is used: the run stops when a call's worst case does not fit beside those in flight.
    worst = config.worst_cost([{"role": "user", "content": f"question {len(results)}"}], MAX_TOKENS)
    assert worst is not None and ledger.cost > budget - concurrency * worst
    assert server.max_in_flight <= concurrency


def test_a_call_without_max_tokens_is_capped_and_reserved_under_a_budget() -> None:
    # Without a cap the worst-case server bills 16,384 reply tokens ($0.66) a call: with one, $0.016.
    with OpenAIStubServer(usage=worst_usage) as server:
        config = settings(server, 0.05, 16, budget_max_tokens=400)
        results = spend(config, 40)
    assert server.bodies and all(body["max_tokens"] == 400 for body in server.bodies)
    assert billed(server) <= 0.05
    stopped = [r for r in results if isinstance(r, BudgetExceeded)]
    assert stopped and "allowed by --max-cost; the next call could cost up to $0.0171" in str(stopped[0])


def test_a_call_that_cannot_fit_is_not_sent() -> None:
    with OpenAIStubServer(usage=worst_usage) as server:
        (result,) = spend(settings(server, 0.01, 1), 1)  # the default cap: 4,096 tokens, $0.164
    assert isinstance(result, BudgetExceeded) and server.requests == 0
    assert str(result) == (
        "LLM budget reached: $0.0000 spent of the $0.0100 allowed by --max-cost; "
        "the next call could cost up to $0.1649"
    )


# --- what the ledger keeps of a reservation ---------------------------------------------------------


def test_a_reservation_is_replaced_by_the_real_cost_or_kept_when_the_reply_never_came(tmp_path) -> None:
    path = tmp_path / JOURNAL
    ledger = Ledger.open(path)
    settled = ledger.reserve("s", "m", 0.5, max_cost=2.0)
    ledger.record_usage("s", "m", Usage(10, 5), 0.125, settled)
    released = ledger.reserve("s", "m", 0.5, max_cost=2.0, retry=True)
    ledger.release("s", "m", released)  # an error answer
    ledger.reserve("s", "m", 0.75, max_cost=2.0)  # then the process dies before the reply
    assert (ledger.cost, ledger.total().unsettled, ledger.total().calls) == (0.875, 1, 3)
    with pytest.raises(BudgetExceeded, match=r"\$0.1250 spent and \$0.7500 reserved for 1 call in flight"):
        ledger.reserve("s", "m", 1.5, max_cost=2.0)
    os.close(ledger._journal)  # no sync, no close: as a kill leaves it
    again = Ledger.open(path)
    total = again.total()
    assert (total.calls, total.retries, total.unsettled, total.cost) == (3, 1, 1, 0.875)
    assert again.summary()["stages"]["s"]["unsettled"] == 1
    assert again.spent_note("RUN", 2.0) == (
        "RUN: $0.875000 spent so far on 3 model requests (1 of them with no reply, counted at their worst "
        "case), $1.125000 of --max-cost $2 left"
    )
    saved = tmp_path / "ledger.json"
    again.save(saved)
    assert Ledger.load(saved).summary() == again.summary()  # the summary keeps it, at its reserved cost
    again.close()


def test_an_error_answer_releases_and_a_timeout_keeps_its_reservation() -> None:
    ledger = Ledger()
    with OpenAIStubServer(usage=worst_usage) as server:
        server.inject("500")
        config = settings(server, 1.0, 1, max_retries=1, backoff_base=0.0)
        (ok,) = spend(config, 1, ledger, max_tokens=MAX_TOKENS)
        assert ok.ok and len(server.bodies) == 2
        assert ledger.cost == pytest.approx(billed(server) / 2)  # the 500 cost nothing
        assert ledger.total().unsettled == 0
        before = ledger.cost
        server.inject("timeout", seconds=5)
        (late,) = spend(config.model_copy(update={"timeout": 0.3, "max_retries": 0}), 1, ledger, max_tokens=1)
    assert late.error == "timeout after 1 attempts"
    # The server may have billed it: it counts at its worst case.
    assert ledger.total().unsettled == 1
    assert ledger.cost == pytest.approx(before + config.worst_cost(server.bodies[-1]["messages"], 1))


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bench"
    result = CliRunner().invoke(main, ["phantom", "--n", "40", "--depth", "4", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    return out


def test_calls_in_flight_at_a_kill_are_in_the_ledger_at_their_reserved_cost(bench, tmp_path) -> None:
    out = tmp_path / "qa"
    with OpenAIStubServer(usage=worst_usage, latency=60) as server:  # every reply is held past the kill
        command = [sys.executable, "-m", "irbgen", "eval", "qa", "--benchmark", str(bench)]
        command += ["--method", "closed-book", "--model", "gpt-4o-mini", "--base-url", server.base_url]
        command += ["--concurrency", "4", "--max-cost", "1", "--out", str(out)]
        env = {**os.environ, "OPENAI_API_KEY": "unused"}
        victim = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        # the bodies, not the request count: a request is counted before its body is read and recorded
        while len(server.bodies) < 4 and victim.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        victim.send_signal(signal.SIGKILL)
        assert victim.wait(timeout=30) == -signal.SIGKILL
        bodies = server.bodies
    assert len(bodies) == 4
    ledger = Ledger.open(out / JOURNAL)
    total = ledger.total()
    assert (total.calls, total.unsettled, total.prompt_tokens) == (4, 4, 0)
    # What the provider could bill for the four requests it received, each at the most it could be.
    price = LLMSettings(model="gpt-4o-mini").price()
    assert price is not None
    bill = sum(p * price.prompt + c * price.completion for p, c in (worst_usage(b, "") for b in bodies)) / 1e6
    assert bill <= total.cost <= 1.0
    ledger.close()


def test_openai_s_own_api_gets_the_cap_it_takes_from_every_model():
    assert LLMSettings(model="o3-mini").reply_cap_field == "max_completion_tokens"
    assert (
        LLMSettings(model="m", base_url="https://API.openai.com/v1").reply_cap_field
        == "max_completion_tokens"
    )
    assert LLMSettings(model="m", base_url="http://127.0.0.1:8000/v1").reply_cap_field == "max_tokens"
