"""Find the passage of an evidence document that best supports a fact, by word overlap."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from irbgen.audit.records import Passage
from irbgen.schema import Document

MAX_CHARS = 600
MAX_SENTENCES = 3
STEM_CHARS = 5  # "awarded" and "awards" meet at "award"; numbers are kept whole
_WORD = re.compile(r"\w+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_STOPWORDS = frozenset(
    "a an and are as at be been but by did do does for from had has have he her his how in is it its "
    "of on or she that the their them they this to was were what when where which who whom whose why "
    "with".split()
)


def content_words(text: str) -> frozenset[str]:
    """Lower-cased word stems of TEXT without stopwords; the unit of overlap."""
    words = (word for word in _WORD.findall(text.lower()) if word not in _STOPWORDS)
    return frozenset(word if word.isdigit() else word[:STEM_CHARS] for word in words)


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of TEXT, whitespace collapsed, without Markdown heading lines."""
    parts = (" ".join(part.split()) for part in _SENTENCE_BREAK.split(text))
    return [part for part in parts if part and not part.startswith("#")]


@dataclass(frozen=True)
class IndexedDocument:
    """A document cut into sentences, with each sentence's content words."""

    doc_id: str
    title: str
    sentences: tuple[str, ...]
    words: tuple[frozenset[str], ...]

    @classmethod
    def of(cls, document: Document) -> IndexedDocument:
        """Index one corpus document."""
        sentences = tuple(split_sentences(document.text))
        return cls(document.id, document.title, sentences, tuple(content_words(s) for s in sentences))


def best_passage(fact: str, documents: Iterable[IndexedDocument]) -> Passage | None:
    """The window of up to three sentences, among all DOCUMENTS, sharing the most words with FACT."""
    wanted = content_words(fact)
    best: Passage | None = None
    for document in documents:
        passage = _best_in(wanted, document)
        if passage is not None and (best is None or passage.overlap > best.overlap):
            best = passage
    return best


def _best_in(wanted: frozenset[str], document: IndexedDocument) -> Passage | None:
    if not wanted or not document.sentences:
        return None
    start, end = _core(wanted, document)
    start, end = _widen(document.sentences, start, end)
    text = _clip(" ".join(document.sentences[start:end]), wanted)
    found = len(wanted & frozenset().union(*document.words[start:end]))
    return Passage(
        doc_id=document.doc_id, title=document.title, text=text, overlap=round(found / len(wanted), 3)
    )


def _core(wanted: frozenset[str], document: IndexedDocument) -> tuple[int, int]:
    """The sentence range with the most overlap; ties go to the shorter, then the earlier range."""
    best_key: tuple[int, int, int] | None = None
    best = (0, 1)
    count = len(document.sentences)
    for start in range(count):
        words: frozenset[str] = frozenset()
        length = -1
        for end in range(start + 1, min(start + MAX_SENTENCES, count) + 1):
            words |= document.words[end - 1]
            length += len(document.sentences[end - 1]) + 1
            if end - start > 1 and length > MAX_CHARS:
                break
            key = (-len(wanted & words), length, start)
            if best_key is None or key < best_key:
                best_key, best = key, (start, end)
    return best


def _widen(sentences: tuple[str, ...], start: int, end: int) -> tuple[int, int]:
    """Add the sentence before, then the one after, while the window stays short."""
    for step in (-1, 1):
        candidate = (start - 1, end) if step < 0 else (start, end + 1)
        inside = 0 <= candidate[0] and candidate[1] <= len(sentences)
        if inside and candidate[1] - candidate[0] <= MAX_SENTENCES:
            if len(" ".join(sentences[candidate[0] : candidate[1]])) <= MAX_CHARS:
                start, end = candidate
    return start, end


def _clip(text: str, wanted: frozenset[str]) -> str:
    """TEXT cut to MAX_CHARS around its first wanted word, with an ellipsis where it was cut."""
    if len(text) <= MAX_CHARS:
        return text
    first = next((m.start() for m in _WORD.finditer(text) if content_words(m.group()) & wanted), 0)
    begin = max(0, min(first - MAX_CHARS // 4, len(text) - (MAX_CHARS - 2)))
    cut = text[begin : begin + MAX_CHARS - 2]
    return ("…" if begin > 0 else "") + cut + ("…" if begin + len(cut) < len(text) else "")
