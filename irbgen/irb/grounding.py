"""The grounding stage: does one fetched document support one keypoint?

Two backends, chosen by name: "rules" (offline lexical, entity, number and date support,
`irbgen.irb.rules.grounding.support`) and "llm" (the irb_grounding prompt over the document, cut to a token
budget around the sentences that best match the keypoint). A failed model call becomes a reject
"llm_error"; a rerun asks again and the response cache makes finished calls free.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from irbgen.errors import BadInputError
from irbgen.irb.records import Grounding, Keypoint
from irbgen.irb.rules.grounding import excerpt, support
from irbgen.llm.backends import MAX_RAW_CHARS, check_backend
from irbgen.llm.prompts import Prompt, load_prompt
from irbgen.pipeline.stage import StageContext
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


class CheckGrounding:
    """KeypointDocument -> Grounding (or Reject). "rules" runs in `process`, "llm" in `aprocess`."""

    name = "grounding"
    input_model = KeypointDocument
    output_model = Grounding

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
        self.backend = check_backend(backend)
        self.threshold = threshold
        self.window = window
        self.max_document_tokens = max_document_tokens
        self.temperature = temperature
        self.prompt_dir = prompt_dir
        self._prompt: Prompt | None = None  # loaded on first use: constructing does no I/O

    def __repr__(self) -> str:
        return f"CheckGrounding(backend={self.backend!r}, threshold={self.threshold})"

    def key(self, record: KeypointDocument) -> str:
        """The pair's key: "<keypoint id>|<document id>"."""
        return record.key

    def process(self, record: KeypointDocument, context: StageContext) -> list[Grounding | Reject]:
        """The rules backend (the llm backend is asynchronous: use `aprocess`)."""
        if self.backend != "rules":
            raise TypeError(f"backend {self.backend!r} is asynchronous: call aprocess")
        return [self._rules(record)]

    async def aprocess(self, record: KeypointDocument, context: StageContext) -> list[Grounding | Reject]:
        """Either backend; the llm one calls `context.llm`."""
        if self.backend == "rules":
            return [self._rules(record)]
        return [await self._llm(record, context)]

    # --- backends ----------------------------------------------------------------------------------

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

    def _rules(self, record: KeypointDocument) -> Grounding:
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

    def prompt(self) -> Prompt:
        """The irb_grounding prompt with its output model, loaded once."""
        if self._prompt is None:
            models = {"GroundingVerdict": GroundingVerdict}
            self._prompt = load_prompt(GROUNDING_PROMPT, self.prompt_dir, models=models)
        return self._prompt

    def messages(self, record: KeypointDocument) -> list[dict[str, str]]:
        """The chat messages for one pair; the text is cut to the token budget around the best match."""
        document = record.document
        budget = self.max_document_tokens * CHARS_PER_TOKEN
        text = excerpt(document.text, record.keypoint.text, budget, title=document.title)
        return self.prompt().render(
            statement=record.keypoint.text,
            title=document.title or "(none)",
            url=document.final_url or document.url,
            published=document.published or "unknown",
            text=text,
        )

    async def _llm(self, record: KeypointDocument, context: StageContext) -> Grounding | Reject:
        empty = self._empty(record)
        if empty is not None:
            return empty
        client = context.llm
        if client is None:
            raise BadInputError("the llm grounding backend needs an LLM client (context.llm is None)")
        prompt = self.prompt()
        completion = await client.complete(
            self.messages(record),
            stage=self.name,
            response_model=prompt.output_model or GroundingVerdict,
            temperature=self.temperature,
        )
        if not completion.ok or not isinstance(completion.parsed, GroundingVerdict):
            extra = {"raw": completion.text[:MAX_RAW_CHARS]} if completion.text else {}
            detail = completion.error or "reply is not a GroundingVerdict"
            return Reject(stage=self.name, reason="llm_error", key=record.key, detail=detail, extra=extra)
        verdict = completion.parsed
        evidence = " ".join(verdict.evidence.split())
        reason = f"{verdict.label}: {evidence!r}" if evidence else verdict.label
        if evidence and not _quoted_in(evidence, record.document.text):
            reason += " (the quote is not in the document)"
        supported = verdict.label == "supported"
        grounding = self._grounding(record, supported, 1.0 if supported else 0.0, reason)
        settings = getattr(client, "settings", None)
        return grounding.model_copy(update={"prompt": prompt.ref, "model": getattr(settings, "model", None)})
