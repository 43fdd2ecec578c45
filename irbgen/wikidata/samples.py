"""A chain and its questions -> one benchmark sample, with per-hop knowledge labels as attributes.

`attributes.extra.hop_selection` says, per hop, which of its (head, property)'s values the chain took:
"only value", "latest point in time (<date>)" or "current value" (the only one without an end time).
`attributes.extra.as_of` gives, per hop, the date the question asks its value at (`dating.as_of`) in ISO
8601 at its precision ("2019", "2020-07-03"), or null for an undated value; `as_of_since`
says, per hop, whether the value holds from that date on ("since 3 July 2020") rather than at it.
"""

from __future__ import annotations

import re

from irbgen.errors import BadInputError
from irbgen.schema import Attributes, Document, Hop, Provenance, Sample
from irbgen.wikidata.answerable import select
from irbgen.wikidata.corpus import documents_by_entity, hop_evidence
from irbgen.wikidata.dating import AsOf
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import stratum
from irbgen.wikidata.questions import answer_texts, answer_type
from irbgen.wikidata.records import Chain, ChainQuestion, Statement

GENERATOR = "irbgen.wikidata"
MAX_HOPS = 4
_HOPS = re.compile(r"^\s*([1-9])\s*(?:-\s*([1-9]))?\s*$")


def parse_hops(text: str) -> tuple[int, int]:
    """'1-4' -> (1, 4); '2' -> (2, 2); BadInputError outside 1..4."""
    match = _HOPS.match(text or "")
    if not match:
        raise BadInputError(f"--hops {text!r}: expected N or N-M with 1 <= N <= M <= {MAX_HOPS}")
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if not 1 <= low <= high <= MAX_HOPS:
        raise BadInputError(f"--hops {text!r}: expected N or N-M with 1 <= N <= M <= {MAX_HOPS}")
    return low, high


def _selection_note(kb: KnowledgeBase, statement: Statement) -> str:
    """How the hop's value was picked among its (head, property)'s values: "only value", "latest point
    in time (2019)" or "current value" (`answerable.select`)."""
    selection = select(kb, statement.head, statement.property)
    if selection is None:
        return "not selected"
    return f"{selection.how} ({selection.when})" if selection.how == "latest point in time" else selection.how


def chain_sample(
    chain: Chain,
    question: ChainQuestion,
    kb: KnowledgeBase,
    documents: list[Document] | dict[str, list[Document]],
    *,
    seed: int,
) -> Sample:
    """The benchmark sample for one chain: answers with aliases, per-hop chain and knowledge labels."""
    grouped = documents if isinstance(documents, dict) else documents_by_entity(documents)
    evidence_per_hop = hop_evidence(chain, grouped)
    statements = [hop.statement for hop in chain.hops]
    last = statements[-1].tail
    hops = [
        Hop(
            index=index,
            operation="triple",
            predicate=kb.property_label(statement.property),
            question=question.sub_questions[index] if index < len(question.sub_questions) else "",
            answers=list(dict.fromkeys(answer_texts(kb, statement.tail))),
            evidence=list(dict.fromkeys(evidence_per_hop[index])),
        )
        for index, statement in enumerate(statements)
    ]
    evidence = sorted({doc for docs in evidence_per_hop for doc in docs})
    layer = stratum(chain)
    popularity_mix, _, newness_mix = layer.partition("-")
    selections = [select(kb, statement.head, statement.property) for statement in statements]
    dates = [AsOf(s.when, s.since) if s is not None and s.when else None for s in selections]
    popular = [hop.popular for hop in chain.hops]
    new = [hop.new for hop in chain.hops]
    extra = {
        "hop_popular": popular,
        "hop_new": new,
        "popular_share": sum(popular) / len(popular),
        "new_share": None if None in new else sum(bool(flag) for flag in new) / len(new),
        "hop_popularity": [hop.popularity for hop in chain.hops],
        "properties": [statement.property for statement in statements],
        "entities": [statements[0].head] + [s.tail.id for s in statements if s.tail.type == "entity"],
        "answer_type": answer_type(last),
        "hop_selection": [_selection_note(kb, statement) for statement in statements],
        "as_of": [date.iso if date else None for date in dates],
        "as_of_since": [bool(date and date.since) for date in dates],
        "stratum": layer,
        "popularity_composition": popularity_mix,
        "attempts": question.attempts,
    }
    attributes = Attributes(
        language="en",
        question_type=f"{len(statements)}_hop",
        popularity=min(hop.popularity for hop in chain.hops),
        newness=None if newness_mix == "unknown" else newness_mix,
        extra=extra,
    )
    provenance = Provenance(
        generator=GENERATOR,
        seed=seed,
        logical_form=[
            f"?x{index} wdt:{s.property} ?x{index + 1}" if index else f"wd:{s.head} wdt:{s.property} ?x1"
            for index, s in enumerate(statements)
        ],
        triple_chain=[[s.head, s.property, s.tail.id or s.tail.text] for s in statements],
        prompts=list(question.prompts),
        model=question.model,
    )
    return Sample(
        id=chain.id,
        question=question.question,
        answers=list(dict.fromkeys(answer_texts(kb, last))),
        hops=len(statements),
        source="wikidata",
        evidence=evidence,
        chain=hops,
        attributes=attributes,
        provenance=provenance,
    )
