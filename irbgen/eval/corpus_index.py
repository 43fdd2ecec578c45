"""A searchable corpus for evaluators that look things up (RAG, a ReAct agent): search, fetch, grep.

`SearchIndex` wraps a retriever over a benchmark's corpus and keeps the documents at hand, so a caller
can rank documents for a query, fetch one by id, find articles by title and scan for a phrase.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from irbgen.benchmark import read_documents
from irbgen.errors import BadInputError
from irbgen.eval.chunking import check_chunking, chunk_documents
from irbgen.eval.retrievers import Retriever, build_retriever
from irbgen.progress import Progress, silent
from irbgen.schema import Document


class SearchIndex:
    """Documents of one corpus, indexed by a retriever and by title."""

    def __init__(self, documents: list[Document], retriever: Retriever) -> None:
        self._documents = documents
        self._retriever = retriever
        self._by_id = {doc.id: doc for doc in documents}
        if len(self._by_id) != len(documents):
            raise BadInputError("documents: ids must be unique")
        self._by_title: dict[str, list[Document]] = {}
        for doc in documents:
            self._by_title.setdefault(_fold(doc.title), []).append(doc)
        self._folded: list[str] | None = None  # lower-cased title + text, made on the first scan

    @classmethod
    def build(
        cls,
        benchmark_dir: Path,
        retriever: str = "bm25",
        chunk_tokens: int = 512,
        overlap: int = 32,
        progress: Progress = silent,
        **options: Any,
    ) -> SearchIndex:
        """Read a benchmark directory's corpus and index it with the named retriever."""
        return cls.from_documents(
            read_documents(Path(benchmark_dir)), retriever, chunk_tokens, overlap, progress, **options
        )

    @classmethod
    def from_documents(
        cls,
        documents: Iterable[Document],
        retriever: str = "bm25",
        chunk_tokens: int = 512,
        overlap: int = 32,
        progress: Progress = silent,
        **options: Any,
    ) -> SearchIndex:
        """Index documents already in memory with the named retriever (PROGRESS hears the indexing)."""
        check_chunking(chunk_tokens, overlap)
        engine = build_retriever(retriever, **options)
        docs = list(documents)
        index = cls(docs, engine)
        engine.progress = progress
        engine.index(chunk_documents(docs, chunk_tokens, overlap))
        engine.progress = silent  # one query at a time from here: not worth a display
        return index

    def __len__(self) -> int:
        return len(self._documents)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The k best documents for a query as (document id, score), best first."""
        return self._retriever.search({"q": query}, k)["q"]

    def document(self, doc_id: str) -> Document:
        """The document with this id; KeyError if there is none."""
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise KeyError(f"no document with id {doc_id!r}") from None

    def by_title(self, title: str) -> list[Document]:
        """Documents whose title is this title, ignoring case and surrounding spaces, in corpus order."""
        return list(self._by_title.get(_fold(title), []))

    def documents_containing(self, text: str, limit: int) -> list[Document]:
        """Up to `limit` documents whose title or text contains `text` (ignoring case), in corpus order."""
        if not text:
            raise BadInputError("documents_containing: text must not be empty")
        if limit < 1:
            return []
        if self._folded is None:
            self._folded = [f"{doc.title}\n{doc.text}".casefold() for doc in self._documents]
        needle = text.casefold()
        found = []
        for doc, haystack in zip(self._documents, self._folded, strict=True):
            if needle in haystack:
                found.append(doc)
                if len(found) == limit:
                    break
        return found


def _fold(title: str) -> str:
    return title.strip().casefold()
