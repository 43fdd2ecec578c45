"""The retrieval corpus of a Wikidata build: entity passages, optional article text, and per-hop evidence.

One passage per item linearises its own truthy statements (its 1-hop subgraph, outgoing edges) into
sentences: the ones the reader kept (no identifier, URL or media file unless the build keeps every
statement, `--keep-all-statements`), less those it cannot state in words (a property with no label, an
item outside the base): the label with its description and aliases, then "The <property> of <X> is
<Y>." per statement, with qualifiers in brackets ("(as of 2020)"), less the qualifiers it cannot state
in words either. No passage shows a raw id in place of a label. Each statement is written once, in
its head's passage; an entity that is only ever a tail still gets a passage with its label and
description.

With an older knowledge base, a (head, property) that has tails in both snapshots but not the same set
is a conflict: the old statements whose tail is no longer there go into a separate passage of the head,
marked in its text as from an older snapshot (ids "Q1#old0", metadata snapshot "old"), so a reader
never sees the stale and the current fact side by side.

Passages are chunked to at most `chunk_tokens` whitespace tokens, cutting between sentences (a single
sentence longer than the limit is cut inside). Ids are "<Q-id>#<chunk>"; items come in numeric id order.
Metadata: entity, source ("wikidata" or "wikipedia"), snapshot ("new" or "old"), chunk, and for
passages the keys of the statements they hold, which `hop_evidence` reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from irbgen.errors import BadInputError
from irbgen.schema import Document
from irbgen.wikidata.dating import END_TIME, POINT_IN_TIME, START_TIME
from irbgen.wikidata.entity_ids import NO_CODE
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Chain, Statement, Value, WikidataEntity
from irbgen.wikidata.rules.questions import value_phrase
from irbgen.wikidata.units import Labels, label_or_none, unit_name

DEFAULT_CHUNK_TOKENS = 512
_ENTITY_ID = re.compile(r"^[QPL]\d+$")
RAW_ID = re.compile(r"\b[PQ]\d+\b")  # an item or property id inside a text
_BRACKETS_WITH_ID = re.compile(r"\s*\([^()]*\b[PQ]\d+\b[^()]*\)")
_SENTENCE_END = re.compile(r"(?<=[.;])\s+")
_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
# Qualifiers read as time spans (`dating`); every other qualifier is written "<property>: <values>".
_TIME_QUALIFIERS = frozenset({POINT_IN_TIME, START_TIME, END_TIME})  # worded without their labels


class _Fallback:
    """Labels from one base, falling back to another (old statements may name entities gone from new)."""

    def __init__(self, first: KnowledgeBase, second: KnowledgeBase) -> None:
        self.first, self.second = first, second

    def label(self, entity_id: str) -> str:
        return self.first.label(entity_id) if entity_id in self.first else self.second.label(entity_id)


def id_order(entity_id: str) -> tuple[str, int, str]:
    """Sort key of entity ids: Q2 before Q10."""
    digits = entity_id[1:]
    return (entity_id[:1], int(digits), "") if digits.isdigit() else (entity_id[:1], -1, entity_id)


# --- text ---------------------------------------------------------------------------------------------


def number_text(amount: str) -> str:
    """A quantity amount for reading: "+697010" -> "697,010", "+1234.5" as written."""
    text = amount.lstrip("+")
    whole, point, decimals = text.partition(".")
    digits = whole.lstrip("-")
    if digits.isdigit() and len(digits) > 4:
        return f"{int(whole):,}{point}{decimals}"
    return text


def value_text(labels: Labels, value: Value) -> str:
    """A value as a reader sees it: an entity's label, or the literal (a quantity with its unit)."""
    if value.type == "entity" and value.id:
        return labels.label(value.id)
    if value.type != "quantity":
        return value.text
    text = number_text(value.raw or value.text)
    unit = unit_name(labels, value.unit, value.raw or value.text) if value.unit else ""
    if unit == "percent":
        return f"{text}%"
    return f"{text} {unit}" if unit else text


def _readable(labels: Labels, text: str) -> str | None:
    """A qualifier value in words: an entity's label (None without one), else the text as it is."""
    return label_or_none(labels, text) if _ENTITY_ID.match(text) else text


def _readable_qualifiers(labels: Labels, qualifiers: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The qualifiers a reader can read: a time span, or a property with a label; and their values that
    are not raw ids."""
    readable = {}
    for prop, items in qualifiers.items():
        texts = [text for item in items if (text := _readable(labels, item)) is not None]
        if texts and (prop in _TIME_QUALIFIERS or label_or_none(labels, prop) is not None):
            readable[prop] = texts
    return readable


def qualifier_text(labels: Labels, qualifiers: Mapping[str, list[str]]) -> str:
    """Qualifiers in brackets, time spans first: "(as of 2020)", "(from 2010 to 2015; <p>: <v>)", or "".

    A qualifier whose property has no label, and an entity value with no label, are left out: the text
    never shows a raw id."""
    values = _readable_qualifiers(labels, qualifiers)
    parts = []
    start, end = values.pop(START_TIME, None), values.pop(END_TIME, None)
    if start and end:
        parts.append(f"from {start[0]} to {end[0]}")
    elif start:
        parts.append(f"from {start[0]}")
    elif end:
        parts.append(f"until {end[0]}")
    point = values.pop(POINT_IN_TIME, None)
    if point:
        parts.append(f"as of {point[0]}")
    for prop in sorted(values, key=id_order):
        parts.append(f"{labels.label(prop)}: {', '.join(values[prop])}")
    return f"({'; '.join(parts)})" if parts else ""


def statement_sentence(labels: Labels, statement: Statement) -> str:
    """One statement as a sentence, worded as its questions are: "The capital of Germany is Berlin",
    "The territory whose capital is Lisbon is Portugal" (not "The capital of of Lisbon")."""
    head = labels.label(statement.head)
    qualifiers = qualifier_text(labels, statement.qualifiers)
    tail = value_text(labels, statement.tail) + (f" {qualifiers}" if qualifiers else "")
    subject = value_phrase(statement.property, labels.label(statement.property), head)
    return f"{subject[:1].upper()}{subject[1:]} is {tail}."


def readable_description(description: str) -> str:
    """A description without the editors' notes that name ids: brackets holding one are cut ("health care
    facility (for organizations use medical organization (Q4287745))" -> "health care facility"), then
    any sentence still holding one. A description with no id is returned as it is."""
    if not RAW_ID.search(description):
        return description
    text, previous = description, None
    while text != previous:
        previous, text = text, _BRACKETS_WITH_ID.sub("", text)
    return " ".join(part for part in _SENTENCE_END.split(text.strip()) if not RAW_ID.search(part))


def entity_header(entity: WikidataEntity) -> list[str]:
    """The opening sentences of a passage: label and description (`readable_description`), then the
    aliases."""
    description = readable_description(entity.description).strip().rstrip(".")
    sentences = [f"{entity.label}: {description}." if description else f"{entity.label}."]
    aliases = [alias for alias in entity.aliases if alias and alias != entity.label]
    if aliases:
        sentences.append(f"{entity.label} is also known as {', '.join(aliases)}.")
    return sentences


def old_header(label: str) -> str:
    """The sentence that marks a passage of stale statements."""
    return f"{label}: statements from an older snapshot of Wikidata, since changed."


# --- chunking -----------------------------------------------------------------------------------------


def pack_units(units: Sequence[str], chunk_tokens: int = DEFAULT_CHUNK_TOKENS) -> list[tuple[str, list[int]]]:
    """Sentences (or paragraphs) packed into texts of at most `chunk_tokens` whitespace tokens, in order,
    each with the indexes of the units it holds a part of."""
    if chunk_tokens < 1:
        raise BadInputError(f"--chunk-tokens must be at least 1, got {chunk_tokens}")
    chunks: list[tuple[list[str], list[int]]] = []
    tokens: list[str] = []
    held: list[int] = []
    for index, unit in enumerate(units):
        words = unit.split()
        if tokens and len(tokens) + len(words) > chunk_tokens:
            chunks.append((tokens, held))
            tokens, held = [], []
        while len(words) > chunk_tokens:  # only a unit longer than a whole chunk is cut inside
            chunks.append((words[:chunk_tokens], [index]))
            words = words[chunk_tokens:]
        tokens.extend(words)
        held.append(index)
    if tokens:
        chunks.append((tokens, held))
    return [(" ".join(words), held) for words, held in chunks]


def chunk_units(units: Sequence[str], chunk_tokens: int = DEFAULT_CHUNK_TOKENS) -> list[str]:
    """Sentences (or paragraphs) packed into texts of at most `chunk_tokens` whitespace tokens, in order."""
    return [text for text, _ in pack_units(units, chunk_tokens)]


# --- entity passages ----------------------------------------------------------------------------------


def conflicting_old_statements(entity_id: str, kb: KnowledgeBase, old_kb: KnowledgeBase) -> list[Statement]:
    """Old statements of the entity whose (head, property) has other tails in the new base."""
    old_statements = old_kb.by_head.get(entity_id, [])
    old_tails: dict[str, set[str]] = {}
    for statement in old_statements:
        old_tails.setdefault(statement.property, set()).add(statement.tail.key)
    new_tails = {prop: {s.tail.key for s in kb.tails(entity_id, prop)} for prop in old_tails}
    return [
        statement
        for statement in old_statements
        if (tails := new_tails[statement.property])
        and tails != old_tails[statement.property]
        and statement.tail.key not in tails
    ]


def _passage_documents(
    entity: WikidataEntity,
    header: list[str],
    statements: Sequence[Statement],
    labels: Labels,
    snapshot: str,
    chunk_tokens: int,
) -> list[Document]:
    sentences = [*header, *(statement_sentence(labels, statement) for statement in statements)]
    prefix = "" if snapshot == "new" else snapshot
    documents = []
    for index, (text, held) in enumerate(pack_units(sentences, chunk_tokens)):
        keys = [statements[i - len(header)].key for i in held if i >= len(header)]
        metadata = {
            "entity": entity.id,
            "source": "wikidata",
            "snapshot": snapshot,
            "chunk": index,
            "statements": keys,
        }
        documents.append(
            Document(id=f"{entity.id}#{prefix}{index}", title=entity.label, text=text, metadata=metadata)
        )
    return documents


def is_readable(labels: Labels, statement: Statement) -> bool:
    """Whether a passage can state the statement in words: its property and an entity value have
    labels, and a literal value is not an id (a property's, kept by `--keep-all-statements`); a raw id
    would stand in for either."""
    if label_or_none(labels, statement.property) is None:
        return False
    tail = statement.tail
    if tail.type == "entity":
        return bool(tail.id) and label_or_none(labels, tail.id or "") is not None
    return not _ENTITY_ID.match(tail.text)


def entity_passages(
    entity: WikidataEntity,
    kb: KnowledgeBase,
    old_kb: KnowledgeBase | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> list[Document]:
    """One item's documents: its current passage in chunks, then any older-snapshot passage."""
    statements = [s for s in kb.by_head.get(entity.id, []) if is_readable(kb, s)]
    documents = _passage_documents(entity, entity_header(entity), statements, kb, "new", chunk_tokens)
    if old_kb is not None:
        labels = _Fallback(kb, old_kb)
        stale = [s for s in conflicting_old_statements(entity.id, kb, old_kb) if is_readable(labels, s)]
        if stale:
            header = [old_header(entity.label)]
            documents += _passage_documents(entity, header, stale, labels, "old", chunk_tokens)
    return documents


def item_rows(kb: KnowledgeBase) -> np.ndarray:
    """The rows of the base's items in the corpus's order: numeric id order (`id_order`), from the ids'
    codes without making a record; sorted by `id_order` itself when an item's id has no Q code."""
    columns = kb.columns
    order = np.asarray(columns.order)
    rows = order[columns.kind[order] == 1]
    codes = columns.codes[rows]
    if np.all((codes != NO_CODE) & (codes % 2 == 0)):  # every id is Q<n>: its code is 2n
        return rows[np.argsort(codes, kind="stable")]
    return np.asarray(sorted(rows.tolist(), key=lambda row: id_order(kb.id_of(row))), dtype=np.int64)


def rows_passages(
    rows: Iterable[int],
    kb: KnowledgeBase,
    old_kb: KnowledgeBase | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> Iterator[Document]:
    """The passages of the items at these rows of the base, one item after the other, made as asked."""
    for row in rows:
        yield from entity_passages(kb.entity(int(row)), kb, old_kb, chunk_tokens)


def entity_documents(
    kb: KnowledgeBase, old_kb: KnowledgeBase | None = None, chunk_tokens: int = DEFAULT_CHUNK_TOKENS
) -> list[Document]:
    """The passages of every item of the base, in numeric id order (the passages stage writes them per
    range instead; tests compare against this single pass)."""
    return list(rows_passages(item_rows(kb), kb, old_kb, chunk_tokens))


def evidence_passages(
    chains: Iterable[Chain],
    kb: KnowledgeBase,
    old_kb: KnowledgeBase | None = None,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> dict[str, list[Document]]:
    """The passages `hop_evidence` reads for these chains (every hop's head and an entity answer), by
    entity: what `documents_by_entity` of the whole corpus gives for them, without the whole corpus."""
    wanted = {entity_id for chain in chains for entity_id in _evidence_entities(chain)}
    return {
        entity_id: entity_passages(kb.entities[entity_id], kb, old_kb, chunk_tokens)
        for entity_id in sorted(wanted, key=id_order)
        if kb.kind(entity_id) == "item"
    }


# --- Wikipedia articles -------------------------------------------------------------------------------


def _title_key(title: str) -> str:
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def link_articles(texts: Mapping[str, str], kb: KnowledgeBase) -> dict[str, tuple[str, str]]:
    """Entity id -> (title, text) for the keys that are item ids or enwiki titles of the base's items."""
    by_title = {_title_key(item.enwiki): item.id for item in kb.items() if item.enwiki}
    linked: dict[str, tuple[str, str]] = {}
    for key in sorted(texts):
        entity_id = key if key in kb else by_title.get(_title_key(key))
        if entity_id is None or entity_id in linked or not texts[key].strip():
            continue
        entity = kb.entities[entity_id]
        title = _title_key(key) if entity_id != key else (entity.enwiki or entity.label)
        linked[entity_id] = (title, texts[key])
    return linked


def article_documents(
    texts: Mapping[str, str], kb: KnowledgeBase, chunk_tokens: int = DEFAULT_CHUNK_TOKENS
) -> list[Document]:
    """Article text as further documents ("Q1#wiki0"), keyed by item id or enwiki title; others skipped.

    The text is plain (render wikitext first); it is chunked at paragraph breaks like passages.
    """
    documents = []
    linked = link_articles(texts, kb)
    for entity_id in sorted(linked, key=id_order):
        title, text = linked[entity_id]
        paragraphs = [p for p in _PARAGRAPH_BREAK.split(text) if p.strip()]
        for index, chunk in enumerate(chunk_units(paragraphs, chunk_tokens)):
            metadata = {"entity": entity_id, "source": "wikipedia", "snapshot": "new", "chunk": index}
            documents.append(
                Document(id=f"{entity_id}#wiki{index}", title=title, text=chunk, metadata=metadata)
            )
    return documents


# --- evidence -----------------------------------------------------------------------------------------


def documents_by_entity(documents: Iterable[Document]) -> dict[str, list[Document]]:
    """Documents grouped by the entity they are about, in their given order."""
    grouped: dict[str, list[Document]] = {}
    for document in documents:
        entity_id = document.metadata.get("entity")
        if entity_id:
            grouped.setdefault(str(entity_id), []).append(document)
    return grouped


def _passages(by_entity: Mapping[str, Sequence[Document]], entity_id: str) -> list[Document]:
    """An entity's current Wikidata passages (not older-snapshot ones, not articles)."""
    return [
        document
        for document in by_entity.get(entity_id, [])
        if document.metadata.get("source") == "wikidata" and document.metadata.get("snapshot") == "new"
    ]


def hop_evidence(chain: Chain, by_entity: Mapping[str, Sequence[Document]]) -> list[list[str]]:
    """Per hop, the ids of the passages that support it.

    A hop's evidence is the head's current passages that hold the hop's statement (metadata
    "statements"; a sentence cut at a chunk limit is held by every chunk it spans), or all of the
    head's current passages when none does. The last hop also gets the passages of the answer entity
    when the answer is an entity. Older-snapshot passages and articles are never evidence: they do not
    state the current fact, or nothing says they do.
    """
    evidence = []
    for hop in chain.hops:
        passages = _passages(by_entity, hop.statement.head)
        key = hop.statement.key
        holding = [document.id for document in passages if key in document.metadata.get("statements", [])]
        evidence.append(holding or [document.id for document in passages])
    answer = _entity_answer(chain)
    if answer is not None:
        last = evidence[-1]
        last.extend(document.id for document in _passages(by_entity, answer) if document.id not in last)
    return evidence


def _entity_answer(chain: Chain) -> str | None:
    """The id of the chain's answer when it is an entity, else None."""
    answer = chain.hops[-1].statement.tail if chain.hops else None
    return answer.id if answer is not None and answer.type == "entity" and answer.id else None


def _evidence_entities(chain: Chain) -> list[str]:
    """The entities whose passages `hop_evidence` reads: every hop's head, and an entity answer."""
    answer = _entity_answer(chain)
    return [hop.statement.head for hop in chain.hops] + ([answer] if answer is not None else [])


def union(evidence: Iterable[Iterable[str]]) -> list[str]:
    """The ids of every hop's evidence, each once, in first-seen order: a sample's qrels."""
    return list(dict.fromkeys(doc_id for hop in evidence for doc_id in hop))
