"""The grounding stage: does one fetched document support one keypoint?

Two backends (`irbgen.llm.stage.LLMStage`): "rules" (offline lexical, entity, number and date support,
`irbgen.irb.rules.grounding`) and "llm" (the irb_grounding prompt over the document, cut to a token
budget around the sentences that best match the keypoint).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from irbgen.errors import BadInputError
from irbgen.irb.records import Grounding, Keypoint
from irbgen.irb.rules.grounding import excerpt, support
from irbgen.llm.stage import LLMStage
from irbgen.records import Reject
from irbgen.text import words
from irbgen.web.records import WebDocument

GROUNDING_PROMPT = "irb_grounding"
CHARS_PER_TOKEN = 4  # a rough English average; the budget is a cap on cost, not an exact count
MAX_RULES_CHARS = 500_000  # the rules backend reads at most this much of a document


class KeypointDocument(BaseModel):
    """One (keypoint, document) pair to judge."""

    model_config = ConfigDict(extra="forbid")

    keypoint: Keypoint
    document: WebDocument

    @property
    def key(self) -> str:
        return f"{self.keypoint.id}|{self.document.id}"


class GroundingVerdict(BaseModel):
    """The model's structured reply: a label and the short quote that decided it."""

    model_config = ConfigDict(extra="ignore")

    label: Literal["supported", "not_supported", "contradicted"]
    evidence: str = ""

    @field_validator("label", mode="before")
    @classmethod
    def _normalise_label(cls, value: object) -> object:
        """Accept "Supported" and "not supported" for the canonical labels."""
        if isinstance(value, str):
            return "_".join(value.strip().lower().replace("-", " ").split())
        return value


def _quoted_in(quote: str, text: str) -> bool:
    """True when the quote's words occur in order in the text (spacing, case and accents ignored)."""
    wanted = " ".join(words(quote))
    return bool(wanted) and wanted in " ".join(words(text))


class CheckGrounding(LLMStage):
    """KeypointDocument -> Grounding (or Reject). "rules" runs in `process`, "llm" in `aprocess`."""

    name = "grounding"
    input_model = KeypointDocument
    output_model = Grounding
    prompts = {GROUNDING_PROMPT: GroundingVerdict}
    what = "grounding"

    def __init__(
        self,
        backend: str = "rules",
        *,
        threshold: float = 0.6,
        window: int = 3,
        max_document_tokens: int = 8000,
        temperature: float = 0.0,
        prompt_dir: Path | str | None = None,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise BadInputError(f"threshold must be in [0, 1], got {threshold}")
        if window < 1:
            raise BadInputError(f"window must be at least 1 sentence, got {window}")
        if max_document_tokens < 100:
            raise BadInputError(f"max_document_tokens must be at least 100, got {max_document_tokens}")
        super().__init__(backend, temperature=temperature, prompt_dir=prompt_dir)
        self.threshold = threshold
        self.window = window
        self.max_document_tokens = max_document_tokens

    def __repr__(self) -> str:
        return f"CheckGrounding(backend={self.backend!r}, threshold={self.threshold})"

    def key(self, record: KeypointDocument) -> str:
        """The pair's key: "<keypoint id>|<document id>"."""
        return record.key

    def _grounding(self, record: KeypointDocument, supported: bool, score: float, reason: str) -> Grounding:
        return Grounding(
            keypoint_id=record.keypoint.id,
            document_id=record.document.id,
            supported=supported,
            score=score,
            method=self.backend,
            reason=reason,
        )

    def _empty(self, record: KeypointDocument) -> Grounding | None:
        if record.document.text.strip():
            return None
        return self._grounding(record, False, 0.0, "the document has no text")

    def rules(self, record: KeypointDocument) -> Grounding:
        """The offline backend: lexical `support` of the keypoint in the document."""
        empty = self._empty(record)
        if empty is not None:
            return empty
        document = record.document
        result = support(
            record.keypoint.text,
            document.text[:MAX_RULES_CHARS],
            title=document.title,
            window=self.window,
            threshold=self.threshold,
        )
        reason = result.reason
        if document.language and not document.language.lower().startswith("en"):
            reason += f"; note: document language {document.language!r}, lexical rules only match English"
        return self._grounding(record, result.supported, result.score, reason)

    def values(self, record: KeypointDocument) -> dict[str, str]:
        """The irb_grounding placeholders; the text is cut to the token budget around the best match."""
        document = record.document
        budget = self.max_document_tokens * CHARS_PER_TOKEN
        return {
            "statement": record.keypoint.text,
            "title": document.title or "(none)",
            "url": document.final_url or document.url,
            "published": document.published or "unknown",
            "text": excerpt(document.text, record.keypoint.text, budget, title=document.title),
        }

    async def llm(self, record: KeypointDocument, client: Any) -> Grounding | Reject:
        """An empty document is unsupported without asking; any other is judged by the model."""
        empty = self._empty(record)
        return empty if empty is not None else await super().llm(record, client)

    def accept(self, record: KeypointDocument, verdict: GroundingVerdict, raw: str) -> Grounding:
        """The verdict as a grounding; a quote that is not in the document is noted in the reason."""
        evidence = " ".join(verdict.evidence.split())
        reason = f"{verdict.label}: {evidence!r}" if evidence else verdict.label
        if evidence and not _quoted_in(evidence, record.document.text):
            reason += " (the quote is not in the document)"
        supported = verdict.label == "supported"
        return self._grounding(record, supported, 1.0 if supported else 0.0, reason)
