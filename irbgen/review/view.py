"""What one review screen shows of a sample: facts, evidence with the passage to highlight, attributes.

The facts and passages come from the audit modules, so a review page and an audit sheet show the same
keypoints, triples or chain steps and the same best-matching windows of the evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from irbgen.audit.facts import changes_of, facts_of, hops_of, kind_of, premise_answer_of
from irbgen.audit.passages import IndexedDocument, best_passage
from irbgen.audit.records import AuditHop, Fact, Kind, Passage
from irbgen.audit.sheet import entity_labels
from irbgen.review.index import BenchmarkIndex
from irbgen.schema import Document, Sample

CONTEXT_CHARS = 280  # text shown on each side of the highlighted passage


@dataclass(frozen=True)
class Evidence:
    """One qrel document: where it came from, and its passage split around the highlight."""

    doc_id: str
    title: str
    url: str | None  # an http(s) address only; anything else is not linked
    shown_url: str
    before: str
    passage: str
    after: str
    overlap: float | None
    missing: bool = False


@dataclass(frozen=True)
class SampleView:
    """Everything one screen shows about a sample."""

    sample: Sample
    kind: Kind
    hops: list[AuditHop]
    facts: list[Fact]
    evidence: list[Evidence]
    attributes: list[tuple[str, str]]
    premise_answer: str | None
    changes: list[str]


def build_view(index: BenchmarkIndex, sample_id: str) -> SampleView:
    """Read the sample and its evidence documents and find the passage of each document to highlight."""
    sample = index.sample(sample_id)
    ids = evidence_order(sample)
    documents = {doc_id: index.document(doc_id) for doc_id in ids}
    found = {doc_id: doc for doc_id, doc in documents.items() if doc is not None}
    indexed = {doc_id: IndexedDocument.of(doc) for doc_id, doc in found.items()}
    facts = facts_of(sample, entity_labels(found.values()))
    evidence = [_evidence(doc_id, found.get(doc_id), indexed.get(doc_id), sample, facts) for doc_id in ids]
    facts = [
        fact.model_copy(update={"passage": best_passage(fact.text, _cited(fact, indexed))}) for fact in facts
    ]
    return SampleView(
        sample=sample,
        kind=kind_of(sample),
        hops=hops_of(sample),
        facts=facts,
        evidence=evidence,
        attributes=attributes_of(sample),
        premise_answer=premise_answer_of(sample),
        changes=changes_of(sample),
    )


def evidence_order(sample: Sample) -> list[str]:
    """The sample's evidence ids, then any a hop adds, each once."""
    ids = dict.fromkeys(sample.evidence)
    for hop in sample.chain:
        ids.update(dict.fromkeys(hop.evidence))
    return list(ids)


def attributes_of(sample: Sample) -> list[tuple[str, str]]:
    """The attributes a reviewer weighs, as (label, value) rows; unset values are shown as a dash."""
    attributes = sample.attributes

    def shown(value: object) -> str:
        return "–" if value is None or value == "" else str(value)

    return [
        ("hops", str(sample.hops)),
        ("false premise", "yes" if sample.false_premise else "no"),
        ("freshness", shown(attributes.freshness)),
        ("popularity", shown(attributes.popularity)),
        ("newness", shown(attributes.newness)),
        ("question type", shown(attributes.question_type)),
        ("topic", shown(attributes.topic)),
        ("difficulty", shown(sample.difficulty)),
        ("source", sample.source),
    ]


def web_address(metadata: dict) -> tuple[str | None, str]:
    """(link target or None, text to show) from a document's url: only http and https are linked."""
    url = metadata.get("url") or metadata.get("final_url")
    if not isinstance(url, str) or not url:
        return None, ""
    scheme = urlsplit(url.strip()).scheme.lower()
    return (url if scheme in ("http", "https") else None), url


def _cited(fact: Fact, indexed: dict[str, IndexedDocument]) -> list[IndexedDocument]:
    return [indexed[doc_id] for doc_id in fact.evidence if doc_id in indexed]


def _evidence(
    doc_id: str,
    document: Document | None,
    indexed: IndexedDocument | None,
    sample: Sample,
    facts: list[Fact],
) -> Evidence:
    if document is None or indexed is None:
        return Evidence(doc_id, "", None, "", "", "", "", None, missing=True)
    url, shown_url = web_address(document.metadata)
    passage = _best_for(indexed, sample, facts)
    text = " ".join(indexed.sentences)
    before, marked, after = _split_around(text, passage)
    overlap = passage.overlap if passage else None
    return Evidence(doc_id, document.title, url, shown_url, before, marked, after, overlap)


def _best_for(indexed: IndexedDocument, sample: Sample, facts: list[Fact]) -> Passage | None:
    """The window of this document that best matches a fact citing it (or else the question)."""
    texts = [fact.text for fact in facts if indexed.doc_id in fact.evidence]
    if not texts:
        texts = [" ".join([sample.question, *sample.answers])]
    passages = [best_passage(text, [indexed]) for text in texts]
    return max((p for p in passages if p is not None), key=lambda p: p.overlap, default=None)


def _split_around(text: str, passage: Passage | None) -> tuple[str, str, str]:
    """TEXT cut into (context before, passage, context after); no passage gives the text's start."""
    if passage is None or passage.overlap == 0:
        return "", "", _clip_end(text)
    core = passage.text.strip("…")
    at = text.find(core)
    if at < 0:
        return "", passage.text, ""
    return _clip_start(text[:at]), core, _clip_end(text[at + len(core) :])


def _clip_start(text: str) -> str:
    if len(text) <= CONTEXT_CHARS:
        return text
    cut = text[-CONTEXT_CHARS:]
    return "…" + cut[cut.find(" ") + 1 :] if " " in cut else "…" + cut


def _clip_end(text: str) -> str:
    if len(text) <= CONTEXT_CHARS:
        return text
    cut = text[:CONTEXT_CHARS]
    return (cut[: cut.rfind(" ")] if " " in cut else cut) + "…"
