"""Extracted triples -> Wikidata statement keys, and their counts over Wikipedia (`wikipedia-frequency`).

Surface spans link to items through enwiki sitelink titles first (MediaWiki-normalised: underscores,
spacing, first letter), then English labels, then aliases (both case-insensitive); the first tier that
knows the surface decides, and a surface it maps to two different items is not linked. Relation labels
link to properties through their labels, then aliases. A linked triple counts only when the knowledge
base has it; a literal tail (date, quantity, string) matches the statement's readable or raw value.
Each triple counts once per passage it is found in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from irbgen.records import Reject
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.rebel import MAX_WORDS, ExtractedTriple, Extractor, page_passages
from irbgen.wikidata.records import Statement, Value
from irbgen.wikipedia.dumps import normalize_title
from irbgen.wikipedia.records import Page
from irbgen.wikipedia.wikitext import UnparsableWikitext

STAGE = "wikipedia_frequency"
PASSAGES_PER_CALL = 256  # passages handed to the extractor at once: bounds memory, keeps batches full


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _index(pairs: Iterable[tuple[str, str]]) -> dict[str, str | None]:
    """surface -> id, or None where the surface names two different ids."""
    ids: dict[str, set[str]] = {}
    for surface, entity_id in pairs:
        if surface:
            ids.setdefault(surface, set()).add(entity_id)
    return {surface: next(iter(found)) if len(found) == 1 else None for surface, found in ids.items()}


def _lookup(tiers: list[dict[str, str | None]], keys: list[str]) -> str | None:
    for tier, key in zip(tiers, keys, strict=True):
        if key in tier:
            return tier[key]
    return None


class EntityLinker:
    """Surface strings -> item Q-ids and relation labels -> P-ids, from a knowledge base's names."""

    def __init__(self, kb: KnowledgeBase) -> None:
        items = [e for e in kb.entities.values() if e.kind == "item"]
        properties = [e for e in kb.entities.values() if e.kind == "property"]
        self._titles = _index((normalize_title(e.enwiki), e.id) for e in items if e.enwiki)
        self._labels = _index((_fold(e.label), e.id) for e in items)
        self._aliases = _index((_fold(a), e.id) for e in items for a in e.aliases)
        self._property_labels = _index((_fold(p.label), p.id) for p in properties)
        self._property_aliases = _index((_fold(a), p.id) for p in properties for a in p.aliases)

    def entity(self, surface: str) -> str | None:
        """The Q-id a surface names, or None when unknown or ambiguous."""
        surface = surface.strip()
        if not surface:
            return None
        tiers = [self._titles, self._labels, self._aliases]
        return _lookup(tiers, [normalize_title(surface), _fold(surface), _fold(surface)])

    def relation(self, label: str) -> str | None:
        """The P-id a relation label names (property label, then alias), or None."""
        key = _fold(label)
        return _lookup([self._property_labels, self._property_aliases], [key, key]) if key else None

    def titles(self) -> frozenset[str]:
        """Every linked enwiki title, normalised as `PageFilter(titles=...)` expects."""
        return frozenset(title for title, entity_id in self._titles.items() if entity_id is not None)


@dataclass
class FrequencyStats:
    """Manifest counts: pages and passages read, triples extracted, linked and kept. Merge with `+`."""

    pages: int = 0
    passages: int = 0
    extracted: int = 0  # triples parsed from generations, duplicates within a passage included
    linked: int = 0  # head, relation and tail all linked (tail: an item or a literal of the statement)
    kept: int = 0  # linked and present in the knowledge base, once per passage
    unlinked: Counter[str] = field(default_factory=Counter)  # "head" / "relation" / "tail" -> count
    not_in_kb: int = 0
    repeated_in_passage: int = 0
    rejected: Counter[str] = field(default_factory=Counter)  # page reject reason -> count

    def __add__(self, other: FrequencyStats) -> FrequencyStats:
        return FrequencyStats(
            self.pages + other.pages,
            self.passages + other.passages,
            self.extracted + other.extracted,
            self.linked + other.linked,
            self.kept + other.kept,
            self.unlinked + other.unlinked,
            self.not_in_kb + other.not_in_kb,
            self.repeated_in_passage + other.repeated_in_passage,
            self.rejected + other.rejected,
        )

    def as_dict(self) -> dict[str, int]:
        """Flat counts for the manifest, keys sorted, with `unlinked_<part>` and `rejected_<reason>`."""
        flat = {
            "pages": self.pages,
            "passages": self.passages,
            "extracted": self.extracted,
            "linked": self.linked,
            "kept": self.kept,
            "not_in_kb": self.not_in_kb,
            "repeated_in_passage": self.repeated_in_passage,
            **{f"unlinked_{part}": self.unlinked[part] for part in ("head", "relation", "tail")},
            **{f"rejected_{reason}": count for reason, count in self.rejected.items()},
        }
        return dict(sorted(flat.items()))


def _literal_forms(value: Value) -> set[str]:
    """The spellings of a literal tail a passage may use: its text, its raw form, the year of a year."""
    raw = value.raw.lstrip("+")
    forms = {_fold(value.text), _fold(raw)}
    if value.type == "time" and value.precision is not None and value.precision <= 9 and raw[:1].isdigit():
        forms.add(raw[:4].lstrip("0"))
    return {form for form in forms if form}


def _find_statement(
    kb: KnowledgeBase, head: str, prop: str, tail: str, tail_id: str | None
) -> Statement | None:
    """The base's statement (head, prop, tail): an item tail by id, a literal tail by its spellings."""
    spellings = {_fold(tail), _fold(tail).replace(",", "")}
    for statement in kb.tails(head, prop):
        value = statement.tail
        if value.type == "entity":
            if tail_id is not None and value.id == tail_id:
                return statement
        elif spellings & _literal_forms(value):
            return statement
    return None


def count_triples(
    extracted: Iterable[list[ExtractedTriple]], linker: EntityLinker, kb: KnowledgeBase
) -> tuple[Counter[str], FrequencyStats]:
    """Statement key -> number of passages stating it, for linked triples the base has; with stats."""
    counts: Counter[str] = Counter()
    stats = FrequencyStats()
    for triples in extracted:
        stats.passages += 1
        seen: set[str] = set()
        for triple in triples:
            stats.extracted += 1
            key = _link(triple, linker, kb, stats)
            if key is None:
                continue
            if key in seen:
                stats.repeated_in_passage += 1
                continue
            seen.add(key)
            stats.kept += 1
            counts[key] += 1
    return counts, stats


def _link(
    triple: ExtractedTriple, linker: EntityLinker, kb: KnowledgeBase, stats: FrequencyStats
) -> str | None:
    head = linker.entity(triple.head)
    if head is None:
        stats.unlinked["head"] += 1
        return None
    prop = linker.relation(triple.relation)
    if prop is None:
        stats.unlinked["relation"] += 1
        return None
    tail_id = linker.entity(triple.tail)
    statement = _find_statement(kb, head, prop, triple.tail, tail_id)
    if statement is None and tail_id is None:
        stats.unlinked["tail"] += 1
        return None
    stats.linked += 1
    if statement is None:
        stats.not_in_kb += 1
        return None
    return statement.key


def wikipedia_frequencies(
    pages: Iterable[Page | Reject],
    extractor: Extractor,
    linker: EntityLinker,
    kb: KnowledgeBase,
    *,
    max_words: int = MAX_WORDS,
    on_reject: Callable[[Reject], None] | None = None,
) -> tuple[Counter[str], FrequencyStats]:
    """Count, over the pages of a Wikipedia dump, how many passages state each statement of the base.

    Rejects from the dump reader and pages the wikitext parser refuses go to `on_reject` and are counted.
    """
    counts: Counter[str] = Counter()
    stats = FrequencyStats()
    pending: list[str] = []

    def run() -> None:
        nonlocal stats
        found, batch_stats = count_triples(extractor.extract(pending), linker, kb)
        counts.update(found)
        stats += batch_stats
        pending.clear()

    for page in pages:
        if isinstance(page, Reject):
            _reject(stats, on_reject, page)
            continue
        stats.pages += 1
        try:
            pending.extend(page_passages(page, max_words))
        except UnparsableWikitext as exc:
            _reject(stats, on_reject, Reject(stage=STAGE, reason=exc.reason, key=page.key, detail=str(exc)))
        if len(pending) >= PASSAGES_PER_CALL:
            run()
    if pending:
        run()
    return counts, stats


def _reject(stats: FrequencyStats, on_reject: Callable[[Reject], None] | None, reject: Reject) -> None:
    stats.rejected[reject.reason] += 1
    if on_reject is not None:
        on_reject(reject)
