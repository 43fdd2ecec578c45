"""What a model call returns: text, parsed output, token usage, or a recorded failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from irbgen.errors import IrbgenError


@dataclass(frozen=True)
class Usage:
    """Tokens as the server reported them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Completion:
    """One model call's outcome. `error` is None on success; on failure `text` keeps the raw reply, if any."""

    text: str | None
    usage: Usage = field(default_factory=Usage)
    parsed: BaseModel | None = None
    cached: bool = False
    error: str | None = None
    attempts: int = 1

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready record for predictions and logs."""
        return {
            "text": self.text,
            "parsed": self.parsed.model_dump(mode="json") if self.parsed is not None else None,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
            "cached": self.cached,
            "error": self.error,
            "attempts": self.attempts,
        }


class BudgetExceeded(IrbgenError):
    """The --max-cost cap was reached; work done so far is kept and the run stops cleanly."""

    fatal = True  # the stage runner stops the run instead of rejecting the record
