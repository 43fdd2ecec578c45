"""The Wikidata stages that read the knowledge base: the passages, per range of items, and over one
`Batch` each, triple counts from Wikipedia (REBEL), chain sampling and samples.

Each wraps a pure function of its input, so it is checkpointed and resumed like any other stage, and
its rejects and counts are recorded by the runner. The passages stage runs on the executor's workers,
which map the saved base (a loaded `KnowledgeBase` pickles as its directory); the runner writes each
range's passages to the checkpoint as they come, so no process holds the corpus.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from irbgen.pipeline.stage import Batch, StageContext
from irbgen.records import Record, Reject
from irbgen.schema import Document, Sample
from irbgen.spread import NO_KIND, SUBJECT_KIND
from irbgen.wikidata.chains import PropertyCaps, over_caps, sample_chains
from irbgen.wikidata.corpus import item_rows, rows_passages
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import Newness
from irbgen.wikidata.records import Chain
from irbgen.wikidata.relations import INSTANCE_OF
from irbgen.wikidata.rules.grammar import node_noun
from irbgen.wikidata.samples import chain_sample

PASSAGE_RANGE = 1000  # items per work item of the passages stage


class ItemRange(Record):
    """A run of items, as rows of the base, from position `start` of the corpus's item order."""

    start: int
    rows: list[int]

    @property
    def key(self) -> str:
        return f"items {self.start}-{self.start + len(self.rows) - 1}"


def item_ranges(kb: KnowledgeBase, size: int = PASSAGE_RANGE) -> Iterator[ItemRange]:
    """The base's items in the corpus's order (`corpus.item_rows`), `size` at a time."""
    rows = item_rows(kb)
    for start in range(0, len(rows), size):
        yield ItemRange(start=start, rows=rows[start : start + size].tolist())


class WritePassages:
    """ItemRange -> the passages of its items, in order (`corpus.entity_passages`)."""

    name = "passages"
    input_model = ItemRange
    output_model = Document

    def __init__(self, kb: KnowledgeBase, old_kb: KnowledgeBase | None, chunk_tokens: int) -> None:
        self.kb = kb
        self.old_kb = old_kb
        self.chunk_tokens = chunk_tokens

    def key(self, record: ItemRange) -> str:
        return record.key

    def process(self, record: ItemRange, context: StageContext) -> Iterator[Document]:
        """The passages, made one item at a time."""
        return rows_passages(record.rows, self.kb, self.old_kb, self.chunk_tokens)


class TripleCounts(Record):
    """How many Wikipedia passages state each statement of the base, and what the count met on the way."""

    counts: dict[str, int]
    stats: dict[str, int]

    @property
    def key(self) -> str:
        return "wikipedia_frequency"


class ChainSampling(Record):
    """The sampled chains, and how many candidates were passed over for each reason."""

    chains: list[Chain]
    passed_over: dict[str, int]
    threshold: float  # the popularity threshold the chains were labelled with

    @property
    def key(self) -> str:
        return "chains"


class CountTriples:
    """Batch(kb) -> TripleCounts over the base's entities' Wikipedia articles, read with a REBEL model."""

    name = "wikipedia_frequency"
    input_model = Batch
    output_model = TripleCounts

    def __init__(self, wikipedia_dump: Path, rebel_model: Path) -> None:
        self.wikipedia_dump = wikipedia_dump
        self.rebel_model = rebel_model

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> Iterator[BaseModel]:
        """The rejects of the dump reader and the parser, then the counts."""
        from irbgen.wikidata.linking import EntityLinker, wikipedia_frequencies
        from irbgen.wikidata.rebel import RebelExtractor
        from irbgen.wikipedia.dumps import PageFilter, read_dump

        kb = record.parts["kb"]
        linker = EntityLinker(kb)
        rejects: list[Reject] = []
        pages = read_dump(self.wikipedia_dump, filters=PageFilter(titles=linker.titles()))
        counts, stats = wikipedia_frequencies(
            pages, RebelExtractor(self.rebel_model), linker, kb, on_reject=rejects.append
        )
        yield from rejects
        yield TripleCounts(counts=dict(counts), stats=stats.as_dict())


class SampleChains:
    """Batch(kb, old_kb, popularity, threshold) -> one ChainSampling: chains of 1-4 statements, seeded."""

    name = "chains"
    input_model = Batch
    output_model = ChainSampling

    def __init__(
        self,
        *,
        hops: tuple[int, int],
        per_hop: int,
        mix: str | None,
        seed: int,
        property_caps: PropertyCaps | None = None,
    ) -> None:
        self.hops = hops
        self.property_caps = property_caps
        self.per_hop = per_hop
        self.mix = mix
        self.seed = seed

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> list[ChainSampling]:
        """The sampled chains, with the counts of candidates passed over."""
        parts = record.parts
        passed_over: Counter = Counter()
        chains = sample_chains(
            parts["kb"],
            hops=self.hops,
            per_hop=self.per_hop,
            mix=self.mix,
            popularity=parts["popularity"],
            threshold=parts["threshold"],
            newness=Newness(parts["old_kb"]),
            rng=random.Random(self.seed),
            property_caps=self.property_caps,
            stats=passed_over,
        )
        passed = dict(sorted(passed_over.items()))
        return [ChainSampling(chains=chains, passed_over=passed, threshold=parts["threshold"])]


class MakeChainSamples:
    """Batch(chains, questions, kb, documents) -> one benchmark sample per chain with a question."""

    name = "samples"
    input_model = Batch
    output_model = Sample

    def __init__(self, *, seed: int, property_caps: PropertyCaps | None = None) -> None:
        self.seed = seed
        self.property_caps = property_caps or PropertyCaps()

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> Iterator[Sample | Reject]:
        """Samples in chain order; a chain over a property cap (`chains.over_caps`) is a reject."""
        parts = record.parts
        written = {question.chain_id: question for question in parts["questions"]}
        asked = [chain for chain in parts["chains"] if chain.id in written]
        dropped = over_caps(asked, self.property_caps, self.seed)
        for chain in asked:
            if chain.id in dropped:
                detail = f"{dropped[chain.id]} is over its share (--property-share, --trivial-share)"
                yield Reject(stage=self.name, reason="property_cap", key=chain.id, detail=detail)
            else:
                kb = parts["kb"]
                sample = chain_sample(chain, written[chain.id], kb, parts["documents"], seed=self.seed)
                sample.attributes.extra[SUBJECT_KIND] = subject_kind(kb, chain.hops[0].statement.head)
                yield sample


def subject_kind(kb: KnowledgeBase, entity_id: str) -> str:
    """The label of the entity's first labelled instance-of class, else what the wording calls it
    (`grammar.node_noun`: "person" for an instance of Q5 whose item the dump lacks, "event", "place"),
    else "(none)": the card's entity kind, never a bare Q-id."""
    classes = [s.tail.id for s in kb.tails(entity_id, INSTANCE_OF) if s.tail.type == "entity" and s.tail.id]
    labelled = [class_id for class_id in classes if kb.has_label(class_id)]
    if labelled:
        return kb.label(labelled[0])
    return node_noun(kb, entity_id) or NO_KIND
