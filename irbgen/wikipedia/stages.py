"""Build stages over Wikipedia pages: `CitingSegments` turns a Page into citing Segment records."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from irbgen.language import foreign_language
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL, load_spacy, pack_parse
from irbgen.wikipedia.dumps import PageFilter, load_titles, read_dump
from irbgen.wikipedia.leads import lead_claims, read_infobox, subject_name
from irbgen.wikipedia.records import LeadClaim, Page, PageMeta, Segment
from irbgen.wikipedia.subjects import defining_noun, links_in
from irbgen.wikipedia.wikitext import (
    MAX_WIKITEXT_CHARS,
    Article,
    CandidateSegment,
    UnparsableWikitext,
    missing_roles,
    parse_article,
    split_segments,
)

# Only the tagger (for VB* tags) and the parser (for dependencies) are needed; the rest is not loaded.
_EXCLUDE = ("ner", "lemmatizer", "attribute_ruler", "senter")

LEAD_CHARS = 600  # the lead is parsed this far for its first sentence
CONTEXT_SENTENCES = 2  # sentences a segment carries before and after it
_FIRST_HEADING = re.compile(r"^==", re.M)


def load_parser(model: str) -> Any:
    """The spaCy pipeline `model` with only tok2vec, tagger and parser; loaded once per process."""
    return load_spacy(model, _EXCLUDE)


def _lead_claims(page: Page, article: Article, noun: str | None) -> list[LeadClaim]:
    """What the page's lead section and infobox say that picks its subject out (wikipedia/leads.py)."""
    heading = _FIRST_HEADING.search(page.wikitext)
    infobox = read_infobox(page.wikitext[: heading.start() if heading else None])
    lead = [sentence.text for sentence in article.sentences if not sentence.section]
    return lead_claims(page.title, lead, noun, infobox)


class CitingSegments:
    """Page -> Segment per citing segment that is syntactically complete and cites at least one URL.

    Rejects (reason, key): "unparsable"/"too_large" (page id) when the wikitext cannot be parsed safely,
    "markup_residue" (page id) for a paragraph dropped because markup survived parsing, "no_citations"
    (page id) when no sentence carries a ref, "no_url" (segment id) when none of a segment's refs has a
    URL, "too_long" (segment id) past `max_segment_chars`, "cut_mid_clause" (segment id) when the
    sentence goes on with a word right after the citation ("Rome declared war<ref/> on Illyria"),
    "incomplete_segment" (segment id) when the parse lacks a subject, a verbal predicate or an
    object/complement (see wikitext.missing_roles), "not_english" (segment id) when its lowercase words
    are another language (spaCy's English model reads them as noise).
    """

    name = "citing_segments"
    input_model = Page
    output_model = Segment

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        context_sentences: int = CONTEXT_SENTENCES,
        batch_size: int = 64,
        max_wikitext_chars: int = MAX_WIKITEXT_CHARS,
        max_segment_chars: int = 1000,
        check_complete: bool = True,
    ) -> None:
        if context_sentences < 0 or batch_size < 1 or max_segment_chars < 1 or max_wikitext_chars < 1:
            raise ValueError("context_sentences >= 0, batch_size >= 1 and the size limits >= 1 are required")
        self.model = model
        self.context_sentences = context_sentences
        self.batch_size = batch_size
        self.max_wikitext_chars = max_wikitext_chars
        self.max_segment_chars = max_segment_chars
        self.check_complete = check_complete

    def key(self, record: BaseModel) -> str:
        """The page id."""
        return self._page(record).key

    def process(self, record: BaseModel, context: StageContext | None = None) -> list[BaseModel | Reject]:
        """Segments (and rejects) of one page."""
        page = self._page(record)
        try:
            article = parse_article(page.wikitext, max_chars=self.max_wikitext_chars)
        except UnparsableWikitext as exc:
            return [self._reject(exc.reason, page.key, str(exc))]
        out: list[BaseModel | Reject] = [self._reject(r, page.key, d) for r, d in article.problems]
        if not any(s.groups for s in article.sentences) and not article.problems:
            out.append(self._reject("no_citations", page.key, "no sentence carries a <ref>"))
        slots: list[BaseModel | Reject | None] = []  # document order; None waits for the parse
        candidates: list[tuple[CandidateSegment, str]] = []
        for sentence in article.sentences:
            for segment in split_segments(sentence):
                sid = f"{page.page_id}:{segment.sentence}:{segment.index}"
                text = segment.text
                if not segment.citations:
                    slots.append(self._reject("no_url", sid, f"no cited URL: {text[:200]}"))
                elif len(text) > self.max_segment_chars:
                    slots.append(self._reject("too_long", sid, f"{len(text)} chars: {text[:200]}"))
                elif segment.mid_clause:
                    detail = f"the citation sits inside a clause: {text[:200]}"
                    slots.append(self._reject("cut_mid_clause", sid, detail))
                elif not any(ch.isalpha() for ch in text):
                    slots.append(self._reject("incomplete_segment", sid, f"no words: {text!r}"))
                elif (language := foreign_language(text)) is not None:
                    slots.append(self._reject("not_english", sid, f"written in {language}: {text[:200]}"))
                else:
                    slots.append(None)
                    candidates.append((segment, sid))
        lead = article.lead[:LEAD_CHARS] if candidates and article.lead.strip() else None
        texts = [c.text for c, _ in candidates] if self.check_complete else []
        docs = self._parse([lead, *texts] if lead is not None else texts)
        noun = defining_noun(docs.pop(0)) if lead is not None else None
        claims = _lead_claims(page, article, noun) if candidates else []
        parses = iter(docs if self.check_complete else [None] * len(candidates))
        pending = iter(candidates)
        for slot in slots:
            if slot is not None:
                out.append(slot)
                continue
            segment, sid = next(pending)
            doc = next(parses)
            missing = [] if doc is None else missing_roles(doc)
            if missing:
                detail = f"missing {', '.join(missing)}: {segment.text[:200]}"
                out.append(self._reject("incomplete_segment", sid, detail))
            else:
                update = {"page_noun": noun, "lead_claims": claims}
                if doc is not None:
                    update["parse"] = pack_parse(doc, self.model)
                out.append(self._segment(page, article, segment, sid).model_copy(update=update))
        return out

    def _segment(self, page: Page, article: Article, segment: CandidateSegment, sid: str) -> Segment:
        sentence = article.sentences[segment.sentence]
        before, after = article.context(sentence, self.context_sentences)
        return Segment(
            id=sid,
            page_id=page.page_id,
            title=page.title,
            lead=article.lead,
            section=list(sentence.section),
            sentence=sentence.text,
            text=segment.text,
            before=before,
            after=after,
            citations=list(segment.citations),
            page=PageMeta.of(page),
            links=links_in(segment.text, article.links, subject_name(page.title)),
        )

    def _page(self, record: BaseModel) -> Page:
        if not isinstance(record, Page):
            raise TypeError(f"{self.name} takes Page records, got {type(record).__name__}")
        return record

    def _parse(self, texts: list[str]) -> list[Any]:
        """The page's texts (the lead's start, then the segments) parsed in one `nlp.pipe` run."""
        if not texts:
            return []
        return list(load_parser(self.model).pipe(texts, batch_size=self.batch_size))

    def _reject(self, reason: str, key: str, detail: str) -> Reject:
        return Reject(stage=self.name, reason=reason, key=key, detail=detail)


class DumpShard(BaseModel):
    """One shard of a dump to read: the unit the read stage checkpoints."""

    model_config = ConfigDict(extra="forbid")

    path: str
    index: str | None = None  # a multistream dump's index
    shard: int
    shards: int
    filters: dict[str, Any] = Field(default_factory=dict)
    size: int | None = None  # read by byte ranges: the XML's uncompressed size
    seek_index: str | None = None  # ... and, compressed, its saved block index (irbgen.seekable)

    @property
    def key(self) -> str:
        """The file's name, "#<shard>/<shards>", and "@<size>" when the shard is a byte range."""
        key = f"{Path(self.path).name}#{self.shard}/{self.shards}"
        return key if self.size is None else f"{key}@{self.size}"


class ReadPages:
    """DumpShard -> Page for every kept article; skipped pages become rejects with their reason."""

    name = "read"
    input_model = DumpShard
    output_model = Page

    def key(self, record: DumpShard) -> str:
        """The shard's name."""
        return record.key

    def process(self, record: DumpShard, context: StageContext) -> Iterator[Page | Reject]:
        """Stream the shard's pages."""
        filters = dict(record.filters)
        if filters.get("titles"):
            filters["titles"] = load_titles(filters["titles"])
        options: dict[str, Any] = {"filters": PageFilter(**filters), "emit_skipped": True}
        if record.index is not None:
            options["index"] = record.index
        if record.size is not None:
            options |= {"size": record.size, "seek_index": record.seek_index}
        yield from read_dump(record.path, record.shard, record.shards, **options)
