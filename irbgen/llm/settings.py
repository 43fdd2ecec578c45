"""How to reach a model: endpoint, model name, limits, budget, cache folder and prices.

The API key is not a setting. Only the *name* of the environment variable that holds it is; the key is
read when a client starts and handed straight to the HTTP client, so it cannot end up in a config
dump, a manifest, a cache or a log.
"""

from __future__ import annotations

import ipaddress
import json
import math
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from irbgen.errors import BadInputError
from irbgen.llm.types import Usage

OPENAI_BASE_URL = "https://api.openai.com/v1"

# The key sent to a local server (vLLM, llama.cpp, Ollama) when the key variable is unset; such
# servers ignore it, but the openai package refuses to run without one.
LOCAL_PLACEHOLDER_KEY = "unused"


class ModelPrice(BaseModel):
    """USD per one million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


# Standard (non-batch, uncached-input) list prices from openai.com/api/pricing, USD per 1M tokens,
# as published in 2025. Override with `prices` when they change; a model not listed costs 0 and is
# reported as "unpriced" in the ledger.
DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o": ModelPrice(prompt=2.50, completion=10.00),
    "gpt-4o-mini": ModelPrice(prompt=0.15, completion=0.60),
    "gpt-4.1": ModelPrice(prompt=2.00, completion=8.00),
    "gpt-4.1-mini": ModelPrice(prompt=0.40, completion=1.60),
    "gpt-4.1-nano": ModelPrice(prompt=0.10, completion=0.40),
    "gpt-3.5-turbo": ModelPrice(prompt=0.50, completion=1.50),
    "o3-mini": ModelPrice(prompt=1.10, completion=4.40),
}


# Under a budget, the reply cap sent with a call that sets none: without one a reply's cost is unbounded.
BUDGET_MAX_TOKENS = 4096
# Tokens a chat template may add beyond the messages' own (a default system header, say).
TEMPLATE_TOKENS = 64


def prompt_token_bound(messages: list[dict[str, Any]]) -> int:
    """At most this many prompt tokens, without a tokenizer: one per UTF-8 byte of the messages as JSON
    (no tokenizer makes a token of less than a byte, and the JSON's keys, quotes and braces outnumber the
    few tokens a chat format adds per message), plus TEMPLATE_TOKENS."""
    return len(json.dumps(messages, ensure_ascii=False).encode()) + TEMPLATE_TOKENS


class LLMSettings(BaseModel):
    """Endpoint, model, limits and prices for one LLM client (no secrets: the key stays in the env)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None  # None: the OpenAI API
    model: str = Field(min_length=1)
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    concurrency: int = Field(default=8, ge=1)
    max_retries: int = Field(default=6, ge=0)  # retries after the first attempt
    timeout: float = Field(default=60.0, gt=0)  # seconds, per HTTP request
    backoff_base: float = Field(default=0.5, ge=0)  # seconds; the n-th retry waits U(0, base * 2**n)
    backoff_max: float = Field(default=30.0, ge=0)  # cap on one backoff wait
    max_retry_after: float = Field(default=300.0, ge=0)  # a longer Retry-After is cut to this
    max_cost: float | None = Field(default=None, ge=0)  # USD; None: no cap
    budget_max_tokens: int = Field(default=BUDGET_MAX_TOKENS, ge=1)  # with max_cost: a call's default cap
    cache_dir: Path | None = None
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))

    @property
    def endpoint(self) -> str:
        """The base URL requests go to."""
        return self.base_url or OPENAI_BASE_URL

    @property
    def reply_cap_field(self) -> str:
        """The request field that caps a reply's tokens: OpenAI's API wants max_completion_tokens (its
        reasoning models refuse max_tokens); other OpenAI-compatible servers know max_tokens."""
        host = (urlsplit(self.endpoint).hostname or "").lower()
        return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"

    @property
    def is_local(self) -> bool:
        """True when the endpoint is on this machine (localhost or a loopback address)."""
        host = (urlsplit(self.endpoint).hostname or "").lower()
        if host == "localhost" or host.endswith(".localhost"):
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return address.is_loopback or address.is_unspecified

    def api_key(self) -> str:
        """Read the API key from the environment now; a local endpoint without one gets a placeholder."""
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if self.is_local:
            return LOCAL_PLACEHOLDER_KEY
        raise BadInputError(
            f"environment variable {self.api_key_env} is not set; it must hold the API key for "
            f"{self.endpoint} (choose another variable with --api-key-env)"
        )

    def price(self, model: str | None = None) -> ModelPrice | None:
        """The price of `model` (default: this model), or None if unpriced."""
        return self.prices.get(model or self.model)

    def cost(self, usage: Usage, model: str | None = None) -> float | None:
        """USD for these tokens, or None when the model has no price."""
        price = self.price(model)
        if price is None:
            return None
        return (usage.prompt_tokens * price.prompt + usage.completion_tokens * price.completion) / 1_000_000

    def worst_cost(self, messages: list[dict[str, Any]], max_tokens: int) -> float | None:
        """USD a request could cost at most (None when the model has no price): the bound on its prompt
        tokens and a reply of MAX_TOKENS, which a server never exceeds."""
        return self.cost(Usage(prompt_token_bound(messages), max_tokens))


def priced(settings: LLMSettings, per_1k_input: float | None, per_1k_output: float | None) -> LLMSettings:
    """SETTINGS with the price given on the command line for a model irbgen has no price for.

    A budget (--max-cost) on a model with no price is refused: its spending could not be counted.
    """
    if (per_1k_input is None) != (per_1k_output is None):
        raise BadInputError("--price-per-1k-input and --price-per-1k-output go together; give both")
    if per_1k_input is not None and per_1k_output is not None:
        if not all(math.isfinite(price) and price >= 0 for price in (per_1k_input, per_1k_output)):
            raise BadInputError("--price-per-1k-input and --price-per-1k-output must be numbers, 0 or more")
        if settings.price() is None:
            price = ModelPrice(prompt=per_1k_input * 1000, completion=per_1k_output * 1000)
            settings = settings.model_copy(update={"prices": {**settings.prices, settings.model: price}})
    if settings.max_cost is not None and settings.price() is None:
        raise BadInputError(
            f"--max-cost: irbgen has no price for model {settings.model!r}, so it could not count what is "
            "spent; give --price-per-1k-input and --price-per-1k-output (USD per 1,000 tokens)"
        )
    return settings


def check_endpoint_url(url: str | None, flag: str = "--base-url") -> None:
    """An http(s) URL with a host, or BadInputError (the URL is never echoed: it may hold a key)."""
    if url is None:
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as error:
        raise BadInputError(f"{flag}: not a URL ({error})") from None
    if parts.scheme not in ("http", "https"):
        raise BadInputError(f"{flag}: scheme {parts.scheme or 'none'!r}; only http and https are supported")
    if not parts.hostname:
        raise BadInputError(f"{flag}: no host in the URL")
