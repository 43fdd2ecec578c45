"""What a Wikipedia dump gives: pages, the sentences that cite web pages, and their citations."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from irbgen.records import Record


class Page(Record):
    """One article from a dump (namespace 0, not a redirect)."""

    page_id: int
    title: str
    wikitext: str
    revision_timestamp: str | None = None  # ISO 8601, as the dump gives it
    created: str | None = None  # creation timestamp, where the dump has one (CirrusSearch)
    popularity: float | None = None  # CirrusSearch popularity_score
    topics: list[str] = Field(default_factory=list)  # ORES topic tags
    wikidata_id: str | None = None
    categories: list[str] = Field(default_factory=list)
    dump: str = ""  # file name the page came from

    @property
    def key(self) -> str:
        return str(self.page_id)


class PageMeta(Record):
    """What a page tells about itself beyond its text; it travels with each of the page's segments."""

    revision_timestamp: str | None = None
    created: str | None = None
    popularity: float | None = None
    topics: list[str] = Field(default_factory=list)
    wikidata_id: str | None = None
    categories: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, page: Page) -> PageMeta:
        """The metadata of `page`."""
        return cls(
            revision_timestamp=page.revision_timestamp,
            created=page.created,
            popularity=page.popularity,
            topics=list(page.topics),
            wikidata_id=page.wikidata_id,
            categories=list(page.categories),
        )


class LeadClaim(Record):
    """What a page's lead or infobox says of its subject that picks it out ("born on 14 March 1879"), as a
    keypoint about the subject (see wikipedia/leads.py)."""

    kind: Literal["born", "capital", "definite"]
    keypoint: str  # "Albert Einstein was born on 14 March 1879." (the page's noun says "physicist")
    evidence: str  # the lead sentence that says it, or the infobox line ("Capital: Tirana")


class Citation(Record):
    """One cited source: its URL(s) and what the citation template says about it."""

    url: str
    archive_url: str | None = None
    date: str | None = None  # the citation's own date (date= / access-date= as written)
    title: str | None = None
    ref_name: str | None = None


class Segment(Record):
    """A piece of a sentence that ends at a citation group, with the context a reader needs."""

    id: str  # "<page_id>:<sentence index>:<segment index>"
    page_id: int
    title: str
    lead: str  # the article's first paragraph, plain text
    section: list[str] = Field(default_factory=list)  # heading path, [] for the lead
    sentence: str
    text: str
    before: list[str] = Field(default_factory=list)  # up to two preceding sentences
    after: list[str] = Field(default_factory=list)  # up to two following sentences
    citations: list[Citation]
    page: PageMeta | None = None  # the page's metadata, for the facts made from this segment
    links: dict[str, str] = Field(default_factory=dict)  # link text in `text` -> the page it links to
    page_noun: str | None = None  # what the page's subject is, from its lead ("tennis player")
    lead_claims: list[LeadClaim] = Field(default_factory=list)  # what picks the page's subject out
    parse: str | None = None  # spaCy's parse of `text` (spacy_models.pack_parse), so it is parsed once

    @property
    def key(self) -> str:
        return self.id
