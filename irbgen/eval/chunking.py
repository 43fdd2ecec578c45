"""Split documents into overlapping windows of whitespace tokens, the unit every retriever indexes.

A document no longer than one window stays one chunk and keeps its text as written; a longer one is cut
into windows of `chunk_tokens` tokens, each sharing `overlap` tokens with the one before, and each
window keeps the original spacing between its first and last token. Retrievers index `index_text`,
which puts the document title in front of every chunk so a window far from the title still matches it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from irbgen.errors import BadInputError
from irbgen.schema import Document

_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class Chunk:
    """One window of a document: its id and title, the window's text and its position in the document."""

    doc_id: str
    title: str
    text: str
    index: int

    @property
    def index_text(self) -> str:
        """The text a retriever indexes: the title, a line break, then the chunk's text."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def check_chunking(chunk_tokens: int, overlap: int) -> None:
    """Raise BadInputError unless windows of chunk_tokens tokens can advance with this overlap."""
    if isinstance(chunk_tokens, bool) or not isinstance(chunk_tokens, int) or chunk_tokens < 1:
        raise BadInputError(f"--chunk-tokens must be a positive integer, got {chunk_tokens!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise BadInputError(f"--chunk-overlap must be 0 or more, got {overlap!r}")
    if overlap >= chunk_tokens:
        raise BadInputError(
            f"--chunk-overlap ({overlap}) must be smaller than --chunk-tokens ({chunk_tokens})"
        )


def chunk_documents(documents: Iterable[Document], chunk_tokens: int = 512, overlap: int = 32) -> list[Chunk]:
    """Cut each document into windows of chunk_tokens whitespace tokens sharing `overlap` tokens."""
    check_chunking(chunk_tokens, overlap)
    chunks: list[Chunk] = []
    for doc in documents:
        chunks.extend(_chunk_one(doc, chunk_tokens, overlap))
    return chunks


def _chunk_one(doc: Document, chunk_tokens: int, overlap: int) -> list[Chunk]:
    text = doc.text
    # Counting with split() first keeps the common case (a short document) free of regex matching.
    if len(text.split()) <= chunk_tokens:
        return [Chunk(doc.id, doc.title, text.strip(), 0)]
    spans = [match.span() for match in _TOKEN.finditer(text)]
    step = chunk_tokens - overlap
    chunks = []
    start = 0
    while True:
        end = min(start + chunk_tokens, len(spans))
        chunks.append(Chunk(doc.id, doc.title, text[spans[start][0] : spans[end - 1][1]], len(chunks)))
        if end == len(spans):
            return chunks
        start += step
