"""The one client for every model call: OpenAI-compatible, async, limited, retried, cached and ledgered.

    async with LLMClient(settings, cache=ResponseCache(dir), ledger=ledger) as client:
        results = await asyncio.gather(*(client.complete(m, stage="keypoints") for m in batches))

Every call ends as a `Completion`, ok or with a reason; only `BudgetExceeded`, `EndpointRefused` (401,
403, 404: a bad key, no access, a wrong URL or model, which would fail every call) and cancellation are
raised. Retries are ours, not the openai package's: exponential backoff with full jitter, Retry-After
honoured, on 408/429/5xx, timeouts, dropped connections and unparseable replies. Other 4xx answers
are final for the call. A client may serve successive event loops (one `asyncio.run` per stage): it
reconnects on each. Under a budget (`max_cost`) every request reserves its worst-case cost in the ledger
before it is sent, and is not sent when that would pass the budget (see ledger.py).
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import hashlib
import json
import logging
import random
import socket
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError

from irbgen.errors import IrbgenError, MissingExtraError, redact
from irbgen.llm.cache import ResponseCache, cache_key
from irbgen.llm.ledger import Ledger
from irbgen.llm.settings import LOCAL_PLACEHOLDER_KEY, LLMSettings
from irbgen.llm.types import Completion, Usage

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

SCHEMA_NOTE = (
    "Reply with a single JSON object and nothing else. It must validate against this JSON schema "
    "(named {name}):\n{schema}"
)
REPAIR_REQUEST = (
    "Your reply is not valid for the required JSON schema: {problem}\n"
    "Reply again with only the corrected JSON object."
)


# Answers no retry can change: stop the whole run at the first one instead of failing every call.
UNRECOVERABLE = {
    401: "the API key was refused",
    403: "access is forbidden",
    404: "no such endpoint or model",
}


class EndpointRefused(IrbgenError):
    """The endpoint refused a call in a way no retry fixes (key, access, URL or model); stops the run."""

    fatal = True


def _retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date), or None."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if moment.tzinfo is None:
            return None
        seconds = moment.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


class UnparseableReply(ValueError):
    """A 200 reply that is not a chat completion we can read."""


def parse_chat_reply(content: bytes) -> tuple[str | None, Usage, str | None]:
    """(text, usage, finish_reason) from a chat.completion body; UnparseableReply if it is not one."""
    try:
        data = json.loads(content)
        choice = data["choices"][0]
        message = choice["message"]
        text = message.get("content")
        usage = data.get("usage") or {}
        tokens = Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise UnparseableReply(f"{type(error).__name__}: {error}") from error
    if text is not None and not isinstance(text, str):
        raise UnparseableReply(f"message content is {type(text).__name__}, not text")
    return text, tokens, choice.get("finish_reason")


def _strip_fences(text: str) -> str:
    """Drop a Markdown code fence around a JSON reply, which many models add despite instructions."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        body = stripped[3:-3]
        first, newline, rest = body.partition("\n")
        if newline and (not first.strip() or first.strip().isalnum()):  # ```json
            body = rest
        return body.strip()
    return stripped


def validate_reply(text: str, model: type[BaseModel]) -> tuple[BaseModel | None, str | None]:
    """(parsed, None) when the reply validates as `model`, else (None, a short reason without the input)."""
    try:
        return model.model_validate_json(_strip_fences(text)), None
    except ValidationError as error:
        problems = []
        for item in error.errors(include_input=False, include_url=False):
            where = ".".join(str(part) for part in item.get("loc", ())) or "reply"
            problems.append(f"{where}: {item.get('msg', 'invalid')}")
        reason = "; ".join(problems)
        return None, reason if len(reason) <= 500 else reason[:497] + "..."


@functools.lru_cache(maxsize=256)
def _schema_json(model: type[BaseModel]) -> str:
    return json.dumps(model.model_json_schema(), sort_keys=True)


def _schema_fingerprint(model: type[BaseModel]) -> dict[str, str]:
    return {"name": model.__name__, "sha256": hashlib.sha256(_schema_json(model).encode()).hexdigest()}


def _with_schema_note(messages: list[dict[str, Any]], model: type[BaseModel]) -> list[dict[str, Any]]:
    note = SCHEMA_NOTE.format(name=model.__name__, schema=_schema_json(model))
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{note}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


@functools.cache
def _response_class() -> type:
    """The HTTP response type of the installed openai package's transport (httpx2, or httpx before it)."""
    try:
        import httpx2

        return httpx2.Response
    except ImportError:
        import httpx

        return httpx.Response


def _add(a: Usage, b: Usage) -> Usage:
    return Usage(a.prompt_tokens + b.prompt_tokens, a.completion_tokens + b.completion_tokens)


@dataclass
class _Reply:
    """The outcome of one request with its retries."""

    text: str | None = None
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    error: str | None = None


class LLMClient:
    """Chat completions against an OpenAI-compatible endpoint; constructing one does no I/O."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        cache: ResponseCache | None = None,
        ledger: Ledger | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self._owns_cache = cache is None and settings.cache_dir is not None
        if cache is None and settings.cache_dir is not None:
            cache = ResponseCache(settings.cache_dir)
        self.cache = cache
        self.ledger = ledger if ledger is not None else Ledger()
        self._rng = rng or random.Random()  # backoff jitter only; never affects outputs
        self._openai: AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop the HTTP client belongs to
        self._closer: AsyncGenerator[None, None] | None = None  # closes the HTTP client (on its loop)
        self._semaphore = asyncio.Semaphore(settings.concurrency)  # remade on start, for the running loop

    def __repr__(self) -> str:
        s = self.settings
        endpoint = redact(s.endpoint)
        return f"LLMClient(model={s.model!r}, endpoint={endpoint!r}, concurrency={s.concurrency})"

    # --- lifecycle ---------------------------------------------------------------------------------

    async def _ensure_started(self) -> AsyncOpenAI:
        loop = asyncio.get_running_loop()
        if self._openai is not None and self._loop is loop:
            return self._openai
        # A new event loop (each asyncio.run, e.g. one per build stage): the previous loop's HTTP client
        # was closed as that loop shut down (see _closed_with_loop), so start a fresh one for this loop.
        # Cache and ledger carry over.
        api_key = self.settings.api_key()  # raises BadInputError naming the variable
        try:
            from openai import AsyncOpenAI
        except ImportError as error:
            raise MissingExtraError(
                "the LLM client needs the openai package (a dependency of irbgen): pip install openai"
            ) from error
        self._openai = AsyncOpenAI(
            api_key=api_key,
            base_url=self.settings.endpoint,
            timeout=self.settings.timeout,
            max_retries=0,  # retries are ours: one policy, counted in the ledger
        )
        self._loop = loop
        self._semaphore = asyncio.Semaphore(self.settings.concurrency)
        self._closer = _closed_with_loop(self._openai)
        await anext(self._closer)
        log.debug("LLM client for %s at %s", self.settings.model, self.settings.endpoint)
        return self._openai

    def worker_recipe(self, concurrency: int) -> Any:
        """How another process makes its own client like this one, with CONCURRENCY calls in flight.

        A picklable callable (settings only: the key is read from the environment there). The new client
        shares the reply cache and appends to the same ledger journal; call `after_workers` once they close.
        """
        settings = self.settings.model_copy(update={"concurrency": concurrency})
        return functools.partial(_worker_client, settings, self.ledger.journal_path)

    def after_workers(self) -> None:
        """Read back the ledger journal that clients made by `worker_recipe` appended to."""
        path = self.ledger.journal_path
        if path is not None:
            self.ledger.close()
            self.ledger = Ledger.open(path)

    async def start(self) -> LLMClient:
        """Read the key and open the HTTP client (also done on the first call)."""
        await self._ensure_started()
        return self

    async def aclose(self) -> None:
        """Close the HTTP connections (and the cache file if this client opened it)."""
        closer, self._closer, self._openai = self._closer, None, None
        # A client of an earlier, finished loop was closed as that loop shut down: only this loop's is open.
        if closer is not None and self._loop is asyncio.get_running_loop():
            await closer.aclose()
        if self._owns_cache and self.cache is not None:
            self.cache.close()
        self.ledger.sync()

    async def __aenter__(self) -> LLMClient:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- calls -------------------------------------------------------------------------------------

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        stage: str,
        response_model: type[BaseModel] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        """One chat completion from the cache or the server; validated, repaired once, if a model is given."""
        model = self.settings.model
        if max_tokens is None and self.settings.max_cost is not None:
            max_tokens = self.settings.budget_max_tokens  # a budget needs every reply's cost bounded
        sent = [dict(message) for message in messages]
        if response_model is not None:
            sent = _with_schema_note(sent, response_model)
        parameters = {
            "temperature": temperature,
            "max_tokens": max_tokens,
            "stop": stop,
            "response_schema": _schema_fingerprint(response_model) if response_model is not None else None,
        }
        key = cache_key(model, sent, parameters) if self.cache is not None else ""

        if self.cache is not None:
            hit = await self.cache.get(key)
            if hit is not None:
                parsed, problem = validate_reply(hit.text, response_model) if response_model else (None, None)
                if problem is None:
                    self.ledger.record_outcome(stage, model, ok=True, cached=True)
                    return Completion(text=hit.text, usage=hit.usage, parsed=parsed, cached=True, attempts=0)
                log.warning("stage %s: a cached reply no longer validates (%s); asking again", stage, problem)

        body: dict[str, Any] = {"model": model, "temperature": temperature}
        if max_tokens is not None:
            body[self.settings.reply_cap_field] = max_tokens
        if stop is not None:
            body["stop"] = stop
        if response_model is not None:
            body["response_format"] = {"type": "json_object"}
        reply = await self._request({**body, "messages": sent}, stage=stage)
        text, usage, attempts, error = reply.text, reply.usage, reply.attempts, reply.error
        parsed: BaseModel | None = None
        if text is not None and error is None and response_model is not None:
            parsed, problem = validate_reply(text, response_model)
            if problem is not None:
                log.info("stage %s: invalid structured output (%s); one repair call", stage, problem)
                repair = [*sent, {"role": "assistant", "content": text}]
                repair.append({"role": "user", "content": REPAIR_REQUEST.format(problem=problem)})
                fixed = await self._request({**body, "messages": repair}, stage=stage)
                usage, attempts = _add(usage, fixed.usage), attempts + fixed.attempts
                if fixed.text is None or fixed.error is not None:
                    error = f"invalid structured output: {problem}; the repair call failed: {fixed.error}"
                else:
                    text = fixed.text
                    parsed, problem = validate_reply(text, response_model)
                    if problem is not None:
                        error = f"invalid structured output: {problem}"

        if text is None or error is not None:
            log.warning("stage %s: call failed: %s", stage, error)
            self.ledger.record_outcome(stage, model, ok=False)
            return Completion(text=text, usage=usage, error=error or "no reply", attempts=attempts)
        if self.cache is not None:
            await self.cache.put(key, model, text, usage)
        self.ledger.record_outcome(stage, model, ok=True)
        return Completion(text=text, usage=usage, parsed=parsed, attempts=attempts)

    async def _request(self, body: dict[str, Any], *, stage: str) -> _Reply:
        """POST one chat completion, retrying transient failures; raises BudgetExceeded, EndpointRefused."""
        import openai

        client = await self._ensure_started()
        response_class = _response_class()
        settings, model = self.settings, self.settings.model
        total = settings.max_retries + 1
        last = "no attempt"
        for attempt in range(total):
            wait: float | None = None
            reservation: str | None = None
            try:
                async with self._semaphore:
                    # After the wait for a slot, so a reservation is held only while its request is.
                    reservation = self._reserve(body, stage, retry=attempt > 0)
                    # openai's documented raw-request path: its auth, headers and error types, but
                    # not its per-request body transform and model parsing (a third of its CPU cost,
                    # see bench/RESULTS-llm.md); we parse the reply ourselves.
                    # --timeout bounds the whole exchange, not each read: a server trickling bytes
                    # cannot hold a call open past it.
                    raw = await asyncio.wait_for(
                        client.post("/chat/completions", body=body, cast_to=response_class), settings.timeout
                    )
                text, usage, finish = parse_chat_reply(raw.content)
            except openai.APIStatusError as error:
                self.ledger.release(stage, model, reservation)  # an error answer is not billed
                status = error.status_code
                if status in UNRECOVERABLE:
                    self.ledger.record_outcome(stage, model, ok=False)
                    raise EndpointRefused(
                        f"{redact(settings.endpoint)} answered HTTP {status} for model {model!r} "
                        f"({self._server_message(error)}): {UNRECOVERABLE[status]}; stopped at the first "
                        f"such answer (check --base-url, --model and ${settings.api_key_env})"
                    ) from None
                # A 429 for an exhausted quota (OpenAI's code "insufficient_quota") will not clear by waiting.
                if not _retryable_status(status) or getattr(error, "code", None) == "insufficient_quota":
                    return _Reply(attempts=attempt + 1, error=f"http {status}: {self._server_message(error)}")
                last = f"http {status}"
                headers = error.response.headers
                wait = parse_retry_after(headers.get("retry-after"))
                if wait is None and headers.get("retry-after-ms"):
                    wait = (parse_retry_after(headers.get("retry-after-ms")) or 0.0) / 1000
            # No answer, or none we could read: the server may have billed the request, so its
            # reservation stays, counted at the worst case.
            except (openai.APITimeoutError, TimeoutError):
                last = "timeout"
            except openai.APIConnectionError as error:
                last = "connection error"
                log.debug("stage %s: connection error: %r", stage, error.__cause__)
            except (openai.APIResponseValidationError, UnparseableReply) as error:
                last = "unparseable response"
                log.debug("stage %s: unparseable response: %s", stage, self._redact(str(error)))
            else:
                self.ledger.record_usage(stage, model, usage, settings.cost(usage, model), reservation)
                if text is None:
                    error_text = f"empty reply (finish_reason={finish})"
                    return _Reply(usage=usage, attempts=attempt + 1, error=error_text)
                return _Reply(text=text, usage=usage, attempts=attempt + 1)

            if attempt + 1 < total:
                if wait is None:
                    wait = self._rng.uniform(0, min(settings.backoff_max, settings.backoff_base * 2**attempt))
                wait = min(wait, settings.max_retry_after)
                log.info("stage %s: %s; retry %d of %d in %.2fs", stage, last, attempt + 1, total - 1, wait)
                await asyncio.sleep(wait)
        return _Reply(attempts=total, error=f"{last} after {total} attempts")

    def _reserve(self, body: dict[str, Any], stage: str, *, retry: bool) -> str | None:
        """Count one request; under a budget, reserve its worst-case cost first (or raise BudgetExceeded)."""
        settings, model = self.settings, self.settings.model
        worst = None
        if settings.max_cost is not None:  # complete() then always sets a reply cap
            worst = settings.worst_cost(body["messages"], body[settings.reply_cap_field])
        if worst is None:  # no budget, or no price to count it with (the command line refuses that)
            self.ledger.record_request(stage, model, retry=retry)
            return None
        return self.ledger.reserve(stage, model, worst, settings.max_cost, retry=retry)

    # --- keeping the key out of messages -----------------------------------------------------------

    def _redact(self, text: str) -> str:
        key = self._openai.api_key if self._openai is not None else ""
        if key and key != LOCAL_PLACEHOLDER_KEY:
            text = text.replace(key, "[redacted]")
        return text

    def _server_message(self, error: Any) -> str:
        body = error.body
        message = None
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else inner
        if not isinstance(message, str) or not message:
            message = error.response.reason_phrase or str(error.message)
        message = " ".join(message.split())
        if len(message) > 300:
            message = message[:297] + "..."
        return self._redact(message)


async def _closed_with_loop(client: AsyncOpenAI) -> AsyncGenerator[None, None]:
    """Closes CLIENT when finalised: by `LLMClient.aclose`, or by asyncio.run as its loop shuts down.

    asyncio.run finalises every unfinished async generator before it closes the loop, so the client's
    connections are closed on the loop they belong to. Dropped unclosed, the openai client would schedule
    its own close on whatever loop runs next, which fails with "Event loop is closed".
    """
    try:
        yield
    finally:
        await client.close()


def check_reachable(settings: LLMSettings, timeout: float = 10.0) -> None:
    """Fail early, with one line, when nothing listens at the endpoint (a TCP connect, no HTTP request)."""
    parts = urlsplit(settings.endpoint)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=min(timeout, settings.timeout)):
            pass
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise IrbgenError(
            f"cannot reach {redact(settings.endpoint)} ({reason}); is the server running?"
        ) from None


def _worker_client(settings: LLMSettings, journal: Any) -> LLMClient:
    """A client made in another process from `LLMClient.worker_recipe`."""
    return LLMClient(settings, ledger=Ledger.open(journal) if journal is not None else None)
