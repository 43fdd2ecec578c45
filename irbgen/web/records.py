"""A fetched web page, reduced to its main text."""

from __future__ import annotations

from irbgen.records import Record


class WebDocument(Record):
    """A fetched page, reduced to its main text, with where it came from."""

    id: str  # "d" + first 16 hex of sha256(url)
    url: str  # the cited URL
    final_url: str  # after redirects
    status: int
    content_type: str = ""
    title: str = ""
    text: str
    published: str | None = None  # YYYY-MM-DD from htmldate
    language: str | None = None
    language_score: float | None = None
    fetched: str  # WARC-Date of the response record (not the wall clock of this run)
    warc_record_id: str | None = None
    via_wayback: bool = False

    @property
    def key(self) -> str:
        return self.url
