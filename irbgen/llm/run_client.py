"""The LLM client of a build run: None for the rules backend, else one client whose cache and ledger
live in the run directory, so a rerun asks nothing twice and keeps counting cost where it stopped."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from irbgen.errors import BadInputError
from irbgen.llm.backends import stage_backend

LEDGER = "ledger.json"  # the summary, rewritten at the end; ledger.jsonl beside it is appended per call

log = logging.getLogger(__name__)


class LLMOptions(BaseModel):
    """The model settings a build config shares: which backend, where, which model, how much."""

    model_config = ConfigDict(extra="forbid")

    llm: Literal["rules", "openai"] = "rules"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    llm_concurrency: int = Field(16, ge=1)
    max_cost: float | None = None
    price_per_1k_input: float | None = None
    price_per_1k_output: float | None = None


def run_settings(config: LLMOptions, run_dir: Path | None) -> Any:
    """The LLMSettings of a build config with --llm openai; a bad value is one line naming the flag."""
    from pydantic import ValidationError

    from irbgen.llm.settings import LLMSettings, priced

    if not config.model:
        raise BadInputError("--llm openai needs --model")
    try:
        settings = LLMSettings(
            base_url=config.base_url,
            model=config.model,
            api_key_env=config.api_key_env,
            concurrency=config.llm_concurrency,
            max_cost=config.max_cost,
            cache_dir=run_dir,
        )
    except ValidationError as error:
        flags = {"concurrency": "llm_concurrency"}
        problems = []
        for item in error.errors()[:3]:
            field = ".".join(str(part) for part in item["loc"])
            problems.append(f"--{flags.get(field, field).replace('_', '-')}: {item['msg']}")
        raise BadInputError("; ".join(problems)) from None
    return priced(settings, config.price_per_1k_input, config.price_per_1k_output)


def run_client(config: LLMOptions, run_dir: Path) -> Any:
    """An LLMClient for `config` (llm, base_url, model, api_key_env, llm_concurrency, max_cost), or None."""
    if stage_backend(config.llm) == "rules":
        return None
    from irbgen.llm.client import LLMClient, check_reachable
    from irbgen.llm.ledger import JOURNAL, Ledger

    settings = run_settings(config, run_dir)
    settings.api_key()
    check_reachable(settings)
    # One client for every LLM stage: it reconnects on each stage's event loop; the ledger resumes,
    # so --max-cost is a budget for the run directory across reruns.
    ledger = Ledger.open(run_dir / JOURNAL)
    note = ledger.spent_note(run_dir, config.max_cost)
    if note:
        log.warning("%s", note)
    return LLMClient(settings, ledger=ledger)
