"""Run one LLM-backed stage record against a loopback OpenAI-compatible server: for tests."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from irbgen.llm.client import LLMClient
from irbgen.llm.settings import LLMSettings
from irbgen.pipeline.stage import StageContext

FAST_RETRIES = {"timeout": 2.0, "max_retries": 2, "backoff_base": 0.01, "backoff_max": 0.02}


def run_llm_stage(stage: Any, record: Any, base_url: str, **settings: Any) -> Any:
    """The one output (or reject) of `stage.aprocess(record)` with a client for `base_url`."""
    options = {"base_url": base_url, "model": "stub", **FAST_RETRIES, **settings}

    async def go() -> list[Any]:
        async with LLMClient(LLMSettings(**options)) as client:
            return await stage.aprocess(record, StageContext(run_dir=Path("."), llm=client))

    (out,) = asyncio.run(go())
    return out


def replies(*texts: str) -> Callable[[dict[str, Any]], str]:
    """A responder that answers with the given texts in order (the last one repeats)."""
    queue = list(texts)

    def respond(request: dict[str, Any]) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond
