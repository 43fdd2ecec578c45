"""The keypoint stage: each citing segment becomes one self-contained statement, or a reject.

Two backends (`irbgen.llm.stage.LLMStage`): "rules" (offline, `irbgen.irb.rules.keypoints`) and "llm"
(the irb_keypoint prompt). Either way the keypoint must pass the quality gates of irb/gates.py.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from irbgen.errors import BadInputError
from irbgen.irb.gates import keypoint_failure
from irbgen.irb.records import Keypoint
from irbgen.irb.rules.keypoints import decontextualize, page_of, page_person, page_person_name
from irbgen.irb.rules.referents import (
    Reference,
    Resolution,
    Resolver,
    situate,
    unresolved_description,
)
from irbgen.llm.stage import LLMStage
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL, unpack_parse
from irbgen.text import clean
from irbgen.wikipedia.records import Segment
from irbgen.wikipedia.stages import CONTEXT_SENTENCES

KEYPOINT_PROMPT = "irb_keypoint"
MAX_LEAD_CHARS = 2000  # the lead is context, not evidence; a long one only costs tokens


class KeypointReply(BaseModel):
    """The model's structured reply: a statement, or null and why the segment has no checkable claim."""

    model_config = ConfigDict(extra="ignore")

    keypoint: str | None
    reason: str = ""


MAX_PARSE_ROUNDS = 4  # batches of parses per chunk of segments; what is still missing is parsed alone


class ParseCache:
    """The last `size` parses, by pipeline and text: the segments of a sentence share the sentences
    before them. `misses` counts the texts parsed alone."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.docs: OrderedDict[tuple[Any, str], Any] = OrderedDict()  # (pipeline, text): it stays alive
        self.misses = 0

    def find(self, nlp: Any, text: str) -> Any | None:
        doc = self.docs.get((nlp, text))
        if doc is not None:
            self.docs.move_to_end((nlp, text))
        return doc

    def add(self, nlp: Any, text: str, doc: Any) -> None:
        self.docs[nlp, text] = doc
        self.docs.move_to_end((nlp, text))
        if len(self.docs) > self.size:
            self.docs.popitem(last=False)

    def parse(self, nlp: Any, text: str) -> Any:
        """The parse of `text`: remembered, else parsed alone."""
        doc = self.find(nlp, text)
        if doc is None:
            self.misses += 1
            doc = nlp(text)
            self.add(nlp, text, doc)
        return doc

    def clear(self) -> None:
        self.docs.clear()
        self.misses = 0


PARSES = ParseCache(512)  # one per process (the pipelines are too)


class _Wanted(Exception):
    """A parse not made yet, met while a chunk gathers the texts to parse together."""


class _Gathering:
    """The texts a chunk's segments want parsed, by pipeline; they are parsed with `nlp.pipe`, which
    costs a text about a third of a parse on its own (and gives the same parse)."""

    def __init__(self) -> None:
        self.wanted: dict[Any, list[str]] = {}

    def get(self, nlp: Any, text: str) -> Any:
        """The remembered parse of `text`, or `_Wanted` after noting it."""
        doc = PARSES.find(nlp, text)
        if doc is None:
            self.wanted.setdefault(nlp, []).append(text)
            raise _Wanted(text)
        return doc

    def parse_wanted(self) -> bool:
        """Parse what was wanted, one batch per pipeline, into PARSES; False when nothing was."""
        for nlp, texts in self.wanted.items():
            unique = list(dict.fromkeys(texts))
            for text, doc in zip(unique, nlp.pipe(unique), strict=True):
                PARSES.add(nlp, text, doc)
        found, self.wanted = bool(self.wanted), {}
        return found


def _context_before(segment: Segment) -> list[str]:
    """The sentences before the segment and, when it continues a sentence, the part of the sentence
    before it ("In 2025 Brightwater raised £18 million, | and the company said ...")."""
    start = segment.sentence.find(segment.text.strip()[:40])
    prefix = segment.sentence[:start] if start > 0 else ""
    return [*segment.before, prefix] if any(ch.isalpha() for ch in prefix) else list(segment.before)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


class MakeKeypoints(LLMStage):
    """Segment -> Keypoint (or Reject). The "rules" backend runs in `process`, "llm" in `aprocess`."""

    name = "keypoints"
    input_model = Segment
    output_model = Keypoint
    prompts = {KEYPOINT_PROMPT: KeypointReply}
    what = "keypoint"
    _gathering: _Gathering | None = None  # set while `process_many` gathers texts to parse together

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
        super().__init__(backend, temperature=temperature, prompt_dir=prompt_dir)
        self.max_ratio = max_ratio
        self.parser_model = parser_model  # spaCy tagger and parser for the gates

    def key(self, record: Segment) -> str:
        """The segment id."""
        return record.id

    def process_many(self, segments: Sequence[Segment], context: StageContext) -> list[Iterator[Any]]:
        """Each segment's results, as `process` gives them, with the parses the rules need made in batches:
        every segment runs until it needs a parse not made yet; those are parsed together, and the
        segments run again (MAX_PARSE_ROUNDS times at most; a segment's error is raised by its results)."""
        if self.backend != "rules":
            raise TypeError(f"backend {self.backend!r} is asynchronous: call aprocess")
        results: dict[int, list[Any]] = {}
        todo = list(range(len(segments)))
        for _ in range(MAX_PARSE_ROUNDS):
            gathering = self._gathering = _Gathering()
            waiting = []
            try:
                for index in todo:
                    try:
                        results[index] = self.process(segments[index], context)
                    except _Wanted:
                        waiting.append(index)
                    except Exception:  # raised again by its results, where the runner makes it a reject
                        pass
            finally:
                self._gathering = None
            todo = waiting
            if not gathering.parse_wanted():
                break
        return [
            iter(results[index]) if index in results else self._later(segment, context)
            for index, segment in enumerate(segments)
        ]

    def _later(self, segment: Segment, context: StageContext) -> Iterator[Any]:
        yield from self.process(segment, context)

    def _parse(self, nlp: Any, text: str) -> Any:
        gathering: _Gathering | None = getattr(self, "_gathering", None)
        return PARSES.parse(nlp, text) if gathering is None else gathering.get(nlp, text)

    def _keypoint(self, segment: Segment, text: str) -> Keypoint:
        return Keypoint(
            id=segment.id,
            page_id=segment.page_id,
            title=segment.title,
            text=text,
            segment=segment.text,
            urls=[citation.url for citation in segment.citations],
            citations=segment.citations,
            method=self.backend,
        )

    def gate(self, segment: Segment, keypoint: Keypoint) -> Reject | None:
        """A reject naming the first quality gate the keypoint fails (irb/gates.py), or None."""
        doc = self._doc(segment, keypoint.text)
        person = page_person(segment.title, segment.lead, [*segment.before, segment.sentence, *segment.after])
        failure = keypoint_failure(keypoint.text, doc, segment.title, person)
        if failure is None:
            description = unresolved_description(doc)
            failure = None if description is None else ("unresolved_referent", description)
        if failure is None:
            return None
        return self.reject(segment, failure[0], f"{failure[1]}: {keypoint.text}")

    def rules(self, segment: Segment) -> Keypoint | Reject:
        """The offline backend: `decontextualize` the segment, its references resolved in context."""
        result = decontextualize(
            segment.text, segment.sentence, segment.title, segment.lead, self._resolver(segment)
        )
        if result.text is None:
            return self.reject(segment, result.reason or "not_self_contained", result.detail)
        page = page_of(segment.title, segment.lead)
        context = [segment.lead, *segment.before, segment.sentence, *segment.after]
        person = page_person_name(segment.title, segment.lead, context[1:])
        situated = situate(self._doc(segment, result.text), page, context, person)
        if situated.text is None:
            return self.reject(segment, situated.reason, f"{situated.detail}: {result.text}")
        return self._keypoint(segment, situated.text)

    def _doc(self, segment: Segment, text: str) -> Any:
        """The parse of `text` (tagger and parser): the segment's own from the citing stage when `text` is
        the segment unchanged, else parsed here."""
        from irbgen.wikipedia.stages import load_parser

        nlp = load_parser(self.parser_model)
        if segment.parse is not None and text == segment.text:
            doc = unpack_parse(nlp, self.parser_model, text, segment.parse)
            if doc is not None:
                return doc
        return self._parse(nlp, text)

    def _resolver(self, segment: Segment) -> Callable[[Reference], Resolution]:
        """Resolves a reference of `segment` from the sentences before it, its heading and its page; the
        parse (with named entities) runs only when a reference needs it, once per sentence."""
        from irbgen.irb.rules.graph import load_graph_nlp

        resolver = Resolver(
            page=page_of(segment.title, segment.lead),
            section=segment.section,
            nearby=[segment.sentence, *segment.before, *segment.after],
            parse=lambda text: self._parse(load_graph_nlp(self.parser_model), text),
            opened=len(segment.before) < CONTEXT_SENTENCES,
        )
        return lambda reference: resolver.resolve(reference, _context_before(segment))

    def values(self, segment: Segment) -> dict[str, str]:
        """The irb_keypoint placeholders for one segment."""
        return {
            "title": segment.title,
            "lead": _shorten(clean(segment.lead), MAX_LEAD_CHARS) or "(none)",
            "section": " > ".join(segment.section) or "(lead section)",
            "before": " ".join(segment.before) or "(none)",
            "sentence": segment.sentence,
            "after": " ".join(segment.after) or "(none)",
            "segment": segment.text,
        }

    def max_length(self, segment: Segment) -> int:
        """The longest keypoint accepted: max_ratio times the segment, plus room for the title."""
        return int(self.max_ratio * len(segment.text)) + len(segment.title)

    def accept(self, segment: Segment, reply: KeypointReply, raw: str) -> Keypoint | Reject:
        """The reply's keypoint, one line; "no_claim" when the model found none, "bad_keypoint" when it
        is empty or longer than `max_length`."""
        if reply.keypoint is None:
            why = reply.reason.strip() or "the model found no checkable claim"
            return self.reject(segment, "no_claim", why)
        text = re.sub(r"\s+", " ", reply.keypoint).strip()
        if not text:
            return self.reject(segment, "bad_keypoint", "empty keypoint", raw=raw)
        limit = self.max_length(segment)
        if len(text) > limit:
            detail = f"keypoint of {len(text)} characters exceeds {limit} ({self.max_ratio:g}x the segment)"
            return self.reject(segment, "bad_keypoint", detail, raw=text)
        return self._keypoint(segment, text)
