"""The keypoint stage: each citing segment becomes one self-contained statement, or a reject.

Two backends, chosen by name: "rules" (offline, `irbgen.irb.rules.keypoints.decontextualize`) and "llm" (the
irb_keypoint prompt through the injected LLM client). A failed model call becomes a reject
"llm_error"; a rerun asks again, and the response cache makes the calls that did succeed free.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from irbgen.errors import BadInputError
from irbgen.irb.gates import keypoint_failure
from irbgen.irb.records import Keypoint
from irbgen.irb.rules.keypoints import decontextualize
from irbgen.llm.backends import MAX_RAW_CHARS, check_backend, model_name
from irbgen.llm.prompts import Prompt, load_prompt
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.text import clean
from irbgen.wikipedia.records import Segment

KEYPOINT_PROMPT = "irb_keypoint"
MAX_LEAD_CHARS = 2000  # the lead is context, not evidence; a long one only costs tokens


class KeypointReply(BaseModel):
    """The model's structured reply: a statement, or null and why the segment has no checkable claim."""

    model_config = ConfigDict(extra="ignore")

    keypoint: str | None
    reason: str = ""


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class MakeKeypoints:
    """Segment -> Keypoint (or Reject). The "rules" backend runs in `process`, "llm" in `aprocess`."""

    name = "keypoints"
    input_model = Segment
    output_model = Keypoint

    def __init__(
        self,
        backend: str = "rules",
        *,
        max_ratio: float = 3.0,
        temperature: float = 0.0,
        prompt_dir: Path | str | None = None,
        parser_model: str = DEFAULT_MODEL,
    ) -> None:
        if max_ratio <= 0:
            raise BadInputError(f"max_ratio must be positive, got {max_ratio}")
        self.backend = check_backend(backend)
        self.max_ratio = max_ratio
        self.temperature = temperature
        self.prompt_dir = prompt_dir
        self.parser_model = parser_model  # spaCy tagger and parser for the gates
        self._prompt: Prompt | None = None  # loaded on first use: constructing does no I/O

    def __repr__(self) -> str:
        return f"MakeKeypoints(backend={self.backend!r})"

    def key(self, record: Segment) -> str:
        """The segment id."""
        return record.id

    def process(self, record: Segment, context: StageContext) -> list[Keypoint | Reject]:
        """The rules backend (the llm backend is asynchronous: use `aprocess`)."""
        if self.backend != "rules":
            raise TypeError(f"backend {self.backend!r} is asynchronous: call aprocess")
        return [self._rules(record)]

    async def aprocess(self, record: Segment, context: StageContext) -> list[Keypoint | Reject]:
        """Either backend; the llm one calls `context.llm`."""
        if self.backend == "rules":
            return [self._rules(record)]
        return [await self._llm(record, context)]

    # --- backends ----------------------------------------------------------------------------------

    def _keypoint(
        self, segment: Segment, text: str, prompt: Prompt | None = None, model: str | None = None
    ) -> Keypoint:
        return Keypoint(
            id=segment.id,
            page_id=segment.page_id,
            title=segment.title,
            text=text,
            segment=segment.text,
            urls=[citation.url for citation in segment.citations],
            method=self.backend,
            prompt=prompt.ref if prompt is not None else None,
            model=model,
        )

    def _reject(self, segment: Segment, reason: str, detail: str, raw: str | None = None) -> Reject:
        extra = {"raw": raw[:MAX_RAW_CHARS]} if raw else {}
        return Reject(stage=self.name, reason=reason, key=segment.id, detail=detail, extra=extra)

    def _gated(self, segment: Segment, keypoint: Keypoint) -> Keypoint | Reject:
        """The keypoint, or a reject naming the first quality gate it fails (irb/gates.py)."""
        from irbgen.wikipedia.stages import load_parser

        failure = keypoint_failure(
            keypoint.text, load_parser(self.parser_model)(keypoint.text), segment.title
        )
        if failure is None:
            return keypoint
        return self._reject(segment, failure[0], f"{failure[1]}: {keypoint.text}")

    def _rules(self, segment: Segment) -> Keypoint | Reject:
        previous = segment.before[-1] if segment.before else None
        result = decontextualize(segment.text, segment.sentence, segment.title, segment.lead, previous)
        if result.text is None:
            return self._reject(segment, result.reason or "not_self_contained", result.detail)
        return self._gated(segment, self._keypoint(segment, result.text))

    def prompt(self) -> Prompt:
        """The irb_keypoint prompt with its output model, loaded once."""
        if self._prompt is None:
            models = {"KeypointReply": KeypointReply}
            self._prompt = load_prompt(KEYPOINT_PROMPT, self.prompt_dir, models=models)
        return self._prompt

    def messages(self, segment: Segment) -> list[dict[str, str]]:
        """The chat messages for one segment."""
        return self.prompt().render(
            title=segment.title,
            lead=_shorten(clean(segment.lead), MAX_LEAD_CHARS) or "(none)",
            section=" > ".join(segment.section) or "(lead section)",
            before=" ".join(segment.before) or "(none)",
            sentence=segment.sentence,
            after=" ".join(segment.after) or "(none)",
            segment=segment.text,
        )

    def max_length(self, segment: Segment) -> int:
        """The longest keypoint accepted: max_ratio times the segment, plus room for the title."""
        return int(self.max_ratio * len(segment.text)) + len(segment.title)

    async def _llm(self, segment: Segment, context: StageContext) -> Keypoint | Reject:
        client = context.llm
        if client is None:
            raise BadInputError("the llm keypoint backend needs an LLM client (context.llm is None)")
        prompt = self.prompt()
        completion = await client.complete(
            self.messages(segment),
            stage=self.name,
            response_model=prompt.output_model or KeypointReply,
            temperature=self.temperature,
        )
        model = model_name(client)
        if not completion.ok:
            return self._reject(segment, "llm_error", completion.error or "no reply", raw=completion.text)
        reply = completion.parsed
        if not isinstance(reply, KeypointReply):
            return self._reject(segment, "llm_error", "reply is not a KeypointReply", raw=completion.text)
        if reply.keypoint is None:
            why = reply.reason.strip() or "the model found no checkable claim"
            return self._reject(segment, "no_claim", why)
        text = re.sub(r"\s+", " ", reply.keypoint).strip()
        if not text:
            return self._reject(segment, "bad_keypoint", "empty keypoint", raw=completion.text)
        limit = self.max_length(segment)
        if len(text) > limit:
            detail = f"keypoint of {len(text)} characters exceeds {limit} ({self.max_ratio:g}x the segment)"
            return self._reject(segment, "bad_keypoint", detail, raw=text)
        return self._gated(segment, self._keypoint(segment, text, prompt=prompt, model=model))
