"""The LLM client against a real loopback OpenAI-compatible server: retries, cache, ledger, budget, key."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from irbgen.errors import BadInputError, IrbgenError
from irbgen.llm.cache import CACHE_FILENAME, ResponseCache, cache_key
from irbgen.llm.client import EndpointRefused, LLMClient, parse_retry_after, validate_reply
from irbgen.llm.ledger import Ledger
from irbgen.llm.settings import LLMSettings, ModelPrice
from irbgen.llm.types import BudgetExceeded, Completion, Usage
from irbgen.testing import OpenAIStubServer

MODEL = "stub-model"


@pytest.fixture
def server():
    with OpenAIStubServer() as stub:
        yield stub


def make_settings(server: OpenAIStubServer, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": MODEL,
        "timeout": 1.0,
        "max_retries": 3,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
    }
    values.update(overrides)
    return LLMSettings(**values)


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def ask(settings: LLMSettings, *prompts: str, **kwargs: Any) -> tuple[list[Completion], LLMClient, float]:
    """Run prompts concurrently through one client; return the completions, the client and the time."""

    async def go() -> tuple[list[Completion], LLMClient]:
        async with LLMClient(settings, **kwargs) as client:
            results = await asyncio.gather(*(client.complete(user(p), stage="test") for p in prompts))
        return list(results), client

    start = time.perf_counter()
    results, client = asyncio.run(go())
    return results, client, time.perf_counter() - start


# --- success and the request we send -----------------------------------------------------------------


def test_success_returns_text_usage_and_counts(server):
    (result,), client, _ = ask(make_settings(server), "Paris is the capital of France")
    assert result.ok and result.text == "Paris is the capital of France"
    assert result.usage == Usage(prompt_tokens=6, completion_tokens=6)
    assert (result.cached, result.attempts) == (False, 1)
    body = server.bodies[0]
    assert body["model"] == MODEL and body["temperature"] == 0.0
    assert body["messages"] == user("Paris is the capital of France")
    assert "response_format" not in body and "max_tokens" not in body
    stats = client.ledger.stats(stage="test")
    assert (stats.calls, stats.ok, stats.failures, stats.retries) == (1, 1, 0, 0)
    assert (stats.prompt_tokens, stats.completion_tokens) == (6, 6)
    assert client.ledger.summary()["stages"]["test"]["models"] == [MODEL]


def test_options_reach_the_server(server):
    async def go():
        async with LLMClient(make_settings(server)) as client:
            return await client.complete(user("a b"), stage="s", temperature=0.7, max_tokens=5, stop=["\n"])

    assert asyncio.run(go()).ok
    body = server.bodies[0]
    assert (body["temperature"], body["max_tokens"], body["stop"]) == (0.7, 5, ["\n"])


def test_models_endpoint(server):
    import urllib.request

    with urllib.request.urlopen(server.base_url + "/models", timeout=5) as response:
        assert json.load(response)["data"][0]["id"] == MODEL


# --- retried faults ----------------------------------------------------------------------------------


def test_429_retry_after_seconds_is_honoured(server):
    server.inject("429", retry_after=1)
    (result,), client, elapsed = ask(make_settings(server), "hello")
    assert result.ok and result.text == "hello" and result.attempts == 2
    assert elapsed >= 1.0
    assert server.requests == 2
    assert client.ledger.stats().retries == 1


def test_503_retry_after_http_date_is_honoured(server):
    server.inject("503", retry_after=email.utils.formatdate(time.time() + 2, usegmt=True))
    (result,), _, elapsed = ask(make_settings(server), "hello")
    assert result.ok and result.attempts == 2
    assert elapsed >= 0.9  # the date has one-second resolution: it is 1-2 s away


@pytest.mark.parametrize("fault", ["500", "502", "malformed", "cut"])
def test_transient_fault_then_success(server, fault):
    server.inject(fault)
    (result,), client, _ = ask(make_settings(server), "hello")
    assert result.ok and result.text == "hello" and result.attempts == 2
    assert server.requests == 2
    stats = client.ledger.stats()
    assert (stats.calls, stats.retries, stats.ok, stats.failures) == (2, 1, 1, 0)


def test_timeout_then_success(server):
    server.inject("timeout", seconds=5)
    (result,), _, elapsed = ask(make_settings(server, timeout=0.3), "hello")
    assert result.ok and result.text == "hello" and result.attempts == 2
    assert 0.3 <= elapsed < 3


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("500", "http 500 after 4 attempts"),
        ("timeout", "timeout after 4 attempts"),
        ("cut", "connection error after 4 attempts"),
        ("malformed", "unparseable response after 4 attempts"),
    ],
)
def test_persistent_fault_is_a_recorded_failure(server, fault, reason):
    server.inject(fault, times=10, seconds=5)
    (result,), client, _ = ask(make_settings(server, timeout=0.2), "hello")
    assert not result.ok and result.error == reason
    assert result.text is None and result.attempts == 4
    assert server.requests == 4
    stats = client.ledger.stats()
    assert (stats.calls, stats.retries, stats.ok, stats.failures) == (4, 3, 0, 1)


@pytest.mark.parametrize("status", ["400", "422"])
def test_client_errors_are_not_retried(server, status):
    server.inject(status, message="you sent something wrong")
    (result,), client, _ = ask(make_settings(server), "hello")
    assert result.error == f"http {status}: you sent something wrong"
    assert result.attempts == 1 and server.requests == 1
    stats = client.ledger.stats()
    assert (stats.calls, stats.retries, stats.failures) == (1, 0, 1)


@pytest.mark.parametrize("status", ["401", "403", "404"])
def test_answers_no_retry_can_fix_stop_the_run_at_the_first(server, status):
    server.add_rule(lambda request: True, status, message="key sk-{api_key} refused")
    with pytest.raises(EndpointRefused, match=f"answered HTTP {status} for model") as caught:
        ask(make_settings(server), "one", "two", "three")
    assert caught.value.fatal and caught.value.exit_code == 1
    assert server.requests <= 3  # the calls already in flight, and no retry of any


def test_quota_429_is_not_retried(server):
    server.add_rule(
        lambda request: True, "429", message="You exceeded your current quota.", code="insufficient_quota"
    )
    (result,), _, _ = ask(make_settings(server), "hello")
    assert result.error == "http 429: You exceeded your current quota." and server.requests == 1


def test_parse_retry_after():
    now = 1_000_000.0
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("0.5") == 0.5
    later, earlier = (email.utils.formatdate(now + d, usegmt=True) for d in (30, -30))
    assert parse_retry_after(later, now=now) == pytest.approx(30, abs=1)
    assert parse_retry_after(earlier, now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


# --- concurrency, batches and the cache ----------------------------------------------------------------


def test_concurrency_limit_is_respected():
    with OpenAIStubServer(latency=0.05) as server:
        results, _, _ = ask(make_settings(server, concurrency=4), *(f"q{i}" for i in range(20)))
        assert all(r.ok for r in results)
        assert server.max_in_flight == 4


def test_server_and_client_handle_64_concurrent_requests():
    # A long latency, so all 64 are in flight together even on a busy machine.
    with OpenAIStubServer(latency=1.5) as server:
        results, _, elapsed = ask(
            make_settings(server, concurrency=64, timeout=10.0), *(f"q{i}" for i in range(64))
        )
        assert all(r.ok for r in results) and server.requests == 64
        assert server.max_in_flight == 64
        assert elapsed < 6  # all 64 overlapped: about one latency, not 64 (96 s)


def _asks(text: str):
    return lambda request: request["messages"][-1]["content"] == text


def _script_faults(server: OpenAIStubServer) -> dict[int, str]:
    """Per-prompt faults for q0..q49; returns the expected failure reason per failing index."""
    transient = {0: ("429", {"retry_after": 0.2}), 1: ("500", {}), 2: ("timeout", {"seconds": 5})}
    transient |= {3: ("malformed", {}), 4: ("cut", {}), 7: ("503", {})}
    failures: dict[int, str] = {}
    for i in range(50):
        match = _asks(f"q{i}")
        if i % 10 in transient:
            kind, options = transient[i % 10]
            server.add_rule(match, kind, times=1 + (i % 3 == 0), **options)
        elif i % 10 == 5:
            server.add_rule(match, "500")
            failures[i] = "http 500 after 4 attempts"
        elif i % 10 == 6:
            server.add_rule(match, "400", message="bad request")
            failures[i] = "http 400: bad request"
    return failures


def test_batch_of_50_with_mixed_faults_then_cached_reruns(server, tmp_path):
    failures = _script_faults(server)
    prompts = [f"q{i}" for i in range(50)]
    settings = make_settings(server, concurrency=8, timeout=0.4, cache_dir=tmp_path)

    results, client, _ = ask(settings, *prompts)
    assert len(results) == 50
    for i, result in enumerate(results):
        if i in failures:
            assert result.error == failures[i], i
        else:
            assert result.ok and result.text == f"q{i}", (i, result)
    stats = client.ledger.stats()
    assert stats.ok + stats.failures + stats.cached == 50
    assert (stats.ok, stats.failures, stats.cached) == (40, 10, 0)
    assert stats.calls == sum(r.attempts for r in results) == server.requests
    assert stats.retries == stats.calls - 50
    assert server.max_in_flight <= 8
    assert len(ResponseCache(tmp_path)) == 40  # only successful replies are cached

    # Rerun with the faults gone: the 40 come from the cache, only the 10 failures are asked again.
    server.clear_faults()
    before = server.requests
    again, client2, _ = ask(settings, *prompts)
    assert all(r.ok for r in again)
    assert [r.cached for r in again] == [i not in failures for i in range(50)]
    assert server.requests - before == 10
    assert [r.text for r in again] == prompts
    stats2 = client2.ledger.stats()
    assert (stats2.cached, stats2.ok, stats2.calls) == (40, 10, 10)

    # A third run is served entirely from the cache: zero HTTP calls.
    before = server.requests
    third, client3, _ = ask(settings, *prompts)
    assert server.requests == before
    assert all(r.cached and r.ok and r.attempts == 0 for r in third)
    assert [r.text for r in third] == prompts
    assert client3.ledger.stats().calls == 0 and client3.ledger.stats().cached == 50


def test_cache_key_covers_model_messages_and_parameters(server, tmp_path):
    base = cache_key(MODEL, user("a"), {"temperature": 0.0})
    assert base == cache_key(MODEL, [{"content": "a", "role": "user"}], {"temperature": 0.0})
    assert base != cache_key("other", user("a"), {"temperature": 0.0})
    assert base != cache_key(MODEL, user("b"), {"temperature": 0.0})
    assert base != cache_key(MODEL, user("a"), {"temperature": 0.5})

    cache = ResponseCache(tmp_path)

    async def go(**options):
        async with LLMClient(make_settings(server), cache=cache) as client:
            return await client.complete(user("a"), stage="s", **options)

    assert not asyncio.run(go()).cached
    assert asyncio.run(go()).cached
    assert not asyncio.run(go(temperature=0.5)).cached
    assert not asyncio.run(go(max_tokens=3)).cached
    assert server.requests == 3
    assert (tmp_path / CACHE_FILENAME).exists()
    mode = cache._connect().execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


# --- structured outputs ------------------------------------------------------------------------------


class Keypoints(BaseModel):
    keypoints: list[str]


def structured_responder(request: dict[str, Any]) -> str:
    """Replies by the first user message: valid, fenced, invalid once (repairable), or always invalid."""
    first = next(m["content"] for m in request["messages"] if m["role"] == "user")
    repairing = request["messages"][-1]["content"].startswith("Your reply is not valid")
    if first == "valid":
        return '{"keypoints": ["a", "b"]}'
    if first == "fenced":
        return '```json\n{"keypoints": ["c"]}\n```'
    if first == "repairable":
        return '{"keypoints": ["fixed"]}' if repairing else "Sure! Here are the keypoints: a, b"
    return '{"wrong": 1}'


def test_structured_output_valid_repaired_and_failed(tmp_path):
    with OpenAIStubServer(responder=structured_responder) as server:
        settings = make_settings(server, cache_dir=tmp_path)

        async def go():
            async with LLMClient(settings) as client:
                names = ["valid", "fenced", "repairable", "hopeless"]
                calls = (client.complete(user(n), stage="kp", response_model=Keypoints) for n in names)
                return await asyncio.gather(*calls), client

        (valid, fenced, repaired, failed), client = asyncio.run(go())
        assert valid.ok and valid.parsed == Keypoints(keypoints=["a", "b"]) and valid.attempts == 1
        assert fenced.ok and fenced.parsed == Keypoints(keypoints=["c"])
        assert repaired.ok and repaired.parsed == Keypoints(keypoints=["fixed"]) and repaired.attempts == 2
        assert not failed.ok and failed.parsed is None and failed.attempts == 2
        assert failed.error == "invalid structured output: keypoints: Field required"
        assert failed.text == '{"wrong": 1}'  # the raw reply is kept
        stats = client.ledger.stats(stage="kp")
        assert (stats.ok, stats.failures, stats.calls) == (3, 1, 6)

        # What was sent: JSON mode, the schema in a system note, and the repair turn.
        body = server.bodies[0]
        assert body["response_format"] == {"type": "json_object"}
        assert body["messages"][0]["role"] == "system"
        note = body["messages"][0]["content"]
        assert "Keypoints" in note and '"keypoints"' in note
        repairs = [b for b in server.bodies if len(b["messages"]) == 4]
        repair = next(b for b in repairs if b["messages"][1]["content"] == "repairable")
        assert repair["messages"][2] == {"role": "assistant", "content": "Sure! Here are the keypoints: a, b"}
        assert "Invalid JSON" in repair["messages"][3]["content"]

        # Rerun: the three good ones (the repaired one included) come from the cache.
        before = server.requests
        (valid2, fenced2, repaired2, failed2), _ = asyncio.run(go())
        assert valid2.cached and fenced2.cached and repaired2.cached
        assert repaired2.parsed == Keypoints(keypoints=["fixed"])
        assert not failed2.ok and not failed2.cached
        assert server.requests - before == 2  # only the failed one is asked again (call + repair)


def test_schema_note_joins_an_existing_system_message(server):
    async def go():
        async with LLMClient(make_settings(server, max_retries=0)) as client:
            messages = [{"role": "system", "content": "Be terse."}, *user('{"keypoints": []}')]
            return await client.complete(messages, stage="kp", response_model=Keypoints)

    result = asyncio.run(go())
    assert result.ok and result.parsed == Keypoints(keypoints=[])
    sent = server.bodies[0]["messages"]
    assert len(sent) == 2 and sent[0]["content"].startswith("Be terse.\n\nReply with a single JSON object")


def test_validate_reply_gives_a_short_reason_without_the_input():
    parsed, problem = validate_reply('{"keypoints": "secret text"}', Keypoints)
    assert parsed is None and problem is not None
    assert problem.startswith("keypoints: Input should be a valid") and "secret" not in problem


# --- budget ------------------------------------------------------------------------------------------


def test_budget_cap_stops_the_run_and_keeps_the_ledger(tmp_path):
    with OpenAIStubServer(responder=lambda request: "one two") as server:
        # $1 per completion token: each call costs $2, and at most $2 with replies capped at 2 tokens.
        prices = {MODEL: ModelPrice(prompt=0, completion=1_000_000)}
        settings = make_settings(server, prices=prices, max_cost=5.0, budget_max_tokens=2)
        ledger = Ledger()
        done: list[Completion] = []

        async def go():
            async with LLMClient(settings, ledger=ledger) as client:
                for i in range(10):
                    done.append(await client.complete(user(f"q{i}"), stage="gen"))

        with pytest.raises(BudgetExceeded, match="\\$4.0000 spent of the \\$5.0000 allowed") as info:
            asyncio.run(go())
        assert str(info.value).endswith("the next call could cost up to $2.0000")
        assert isinstance(info.value, IrbgenError) and info.value.exit_code == 1
        assert len(done) == 2 and all(c.ok for c in done)
        assert server.requests == 2 and all(body["max_tokens"] == 2 for body in server.bodies)
        stats = ledger.stats()
        assert (stats.calls, stats.ok, stats.cost, stats.unsettled) == (2, 2, 4.0, 0)
        assert ledger.summary()["models"][MODEL]["priced"] is True and ledger.unpriced == []

        path = tmp_path / "ledger.json"
        ledger.save(path)
        assert Ledger.load(path).summary() == ledger.summary()


def test_budget_cap_holds_for_queued_concurrent_calls():
    with OpenAIStubServer(responder=lambda request: "one two", latency=0.05) as server:
        prices = {MODEL: {"prompt": 0, "completion": 1_000_000}}  # plain dicts work too: $2 per call
        settings = make_settings(server, prices=prices, max_cost=5.0, concurrency=2, budget_max_tokens=2)

        async def go():
            async with LLMClient(settings) as client:
                calls = (client.complete(user(f"q{i}"), stage="gen") for i in range(20))
                return await asyncio.gather(*calls, return_exceptions=True), client

        results, client = asyncio.run(go())
        done = [r for r in results if isinstance(r, Completion)]
        stopped = [r for r in results if isinstance(r, BudgetExceeded)]
        assert len(done) + len(stopped) == 20 and all(c.ok for c in done)
        # Each call reserves its worst case ($2) before it is sent: two fit in $5, whatever is in flight.
        assert len(done) == 2
        assert server.requests == len(done) == client.ledger.stats().calls
        assert client.ledger.cost == 2.0 * len(done)


def test_ledger_resume_merge_and_unpriced_models(server, tmp_path):
    path = tmp_path / "run" / "ledger.json"
    _, client, _ = ask(make_settings(server), "a b", "c")
    client.ledger.save(path)
    assert json.loads(path.read_text())["summary"]["unpriced"] == [MODEL]

    resumed = Ledger.load(path)
    _, client2, _ = ask(make_settings(server), "d", ledger=resumed)
    assert client2.ledger is resumed
    assert resumed.stats().ok == 3 and resumed.stats().calls == 3
    assert resumed.unpriced == [MODEL] and resumed.cost == 0.0

    other = Ledger()
    other.record_request("judge", "gpt-4o-mini")
    other.record_usage("judge", "gpt-4o-mini", Usage(1000, 100), cost=0.00021)
    other.record_outcome("judge", "gpt-4o-mini", ok=True)
    merged = Ledger().merge(resumed).merge(other)
    summary = merged.summary()
    assert summary["total"]["calls"] == 4 and summary["total"]["ok"] == 4
    assert summary["stages"]["judge"]["cost"] == pytest.approx(0.00021)
    assert summary["models"]["gpt-4o-mini"]["priced"] and not summary["models"][MODEL]["priced"]
    assert Ledger.load(tmp_path / "absent.json", missing_ok=True).stats().calls == 0
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(BadInputError, match="bad.json"):
        Ledger.load(tmp_path / "bad.json")


def test_settings_price_default_table():
    settings = LLMSettings(model="gpt-4o-mini")
    assert settings.cost(Usage(1_000_000, 1_000_000)) == pytest.approx(0.75)
    assert settings.cost(Usage(10, 10), model="my-local-llama") is None


# --- the API key -------------------------------------------------------------------------------------


def test_api_key_is_sent_but_never_written_or_logged(server, tmp_path, monkeypatch, caplog):
    secret = "sk-test-4f1b9c0e7d2a46b8a1c3e5f7d9b0a2c4"
    monkeypatch.setenv("IRBGEN_TEST_KEY", secret)
    caplog.set_level(logging.DEBUG)
    settings = make_settings(server, api_key_env="IRBGEN_TEST_KEY", cache_dir=tmp_path / "cache")
    server.inject("500")
    server.add_rule(lambda request: request["messages"][-1]["content"] == "deny", "401")  # echoes the key

    results, client, _ = ask(settings, "hello", "world")
    assert results[0].ok and results[1].ok
    with pytest.raises(EndpointRefused, match=r"\(Incorrect API key provided: \[redacted\]\.\)") as refused:
        ask(settings, "deny")
    assert secret not in str(refused.value)
    client.ledger.save(tmp_path / "ledger.json")

    assert set(server.auth_headers) == {f"Bearer {secret}"}
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == CACHE_FILENAME for p in written) and any(p.name == "ledger.json" for p in written)
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    assert secret not in caplog.text
    shown = [repr(settings), str(settings), settings.model_dump_json(), repr(client), repr(client.ledger)]
    assert all(secret not in text for text in shown)
    assert all(secret not in str(r.to_record()) for r in results)


def test_missing_key_is_reported_at_start_not_at_construction(monkeypatch):
    monkeypatch.delenv("IRBGEN_NO_SUCH_KEY", raising=False)
    url = "https://llm.example.invalid/v1"
    settings = LLMSettings(base_url=url, model="m", api_key_env="IRBGEN_NO_SUCH_KEY")
    client = LLMClient(settings)  # no I/O, no key needed yet

    async def go():
        async with client:
            pass

    with pytest.raises(BadInputError, match="IRBGEN_NO_SUCH_KEY") as info:
        asyncio.run(go())
    assert info.value.exit_code == 2


def test_local_server_without_a_key_gets_a_placeholder(server, monkeypatch):
    monkeypatch.delenv("IRBGEN_NO_SUCH_KEY", raising=False)
    (result,), _, _ = ask(make_settings(server, api_key_env="IRBGEN_NO_SUCH_KEY"), "hi")
    assert result.ok
    assert server.auth_headers == ["Bearer unused"]


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
    ],
)
def test_is_local(url, local):
    assert LLMSettings(base_url=url, model="m").is_local is local


def test_constructing_a_client_touches_nothing(tmp_path):
    cache_dir = tmp_path / "not-yet"
    LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", cache_dir=cache_dir))
    assert not cache_dir.exists()


def test_stub_server_rejects_unknown_faults(server):
    with pytest.raises(ValueError, match="unknown fault"):
        server.inject("slow")
    assert Path(server.base_url.removeprefix("http://")).parts[0].startswith("127.0.0.1:")


def test_one_client_serves_successive_event_loops():
    """Each build stage runs its own asyncio.run; the client reconnects and closes cleanly after."""
    with OpenAIStubServer() as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="m"))

        async def ask(text: str):
            return await client.complete([{"role": "user", "content": text}], stage="s")

        assert asyncio.run(ask("first")).text == "first"
        assert asyncio.run(ask("second")).text == "second"
        asyncio.run(client.aclose())  # from a third loop: nothing raised
        assert server.requests == 2
