"""The base of every record irbgen passes between stages, and the reject a stage writes when it drops one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    """A typed record: unknown fields are an error, so a misspelt field never passes silently."""

    model_config = ConfigDict(extra="forbid")


class Reject(Record):
    """A record a stage dropped, and why. Written to rejects.jsonl and counted per (stage, reason)."""

    stage: str
    reason: str  # a short stable label, e.g. "redirect", "incomplete_segment", "http_404"
    key: str
    detail: str = ""
    extra: dict[str, Any] = Field(default_factory=dict)
