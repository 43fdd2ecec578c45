"""--max-cost holds: each request reserves its worst-case cost before it is sent, so what a server could
bill never passes the budget, at any concurrency. The server is a loopback stub that bills the worst
case: a token per byte of the prompt and every token max_tokens allows."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from irbgen.llm.client import LLMClient
from irbgen.llm.ledger import Ledger
from irbgen.llm.settings import LLMSettings, ModelPrice
from irbgen.llm.types import BudgetExceeded, Completion
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
        max_retries=0,
        **extra,
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
