"""IRB question plans and their written questions -> benchmark samples; fetched pages -> corpus documents.

Pure functions: the build hands in every record they read. A sample's evidence (its qrels) is the union
of the documents that support the facts of its hops, for false premises too; each hop of `chain` keeps
its own sub-question, answer and documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import date

from irbgen.irb.attributes import evidence_attributes, topic_group
from irbgen.irb.records import Fact, GeneratedQuestion, KnowledgeGraph, QuestionPlan
from irbgen.schema import Attributes, Document, Hop, PromptRef, Provenance, Sample
from irbgen.web.records import WebDocument

GENERATOR = "irbgen.irb"


def corpus_documents(documents: Iterable[WebDocument]) -> Iterator[Document]:
    """One corpus document per fetched page: its main text, with URL, date and language as metadata."""
    for document in documents:
        metadata = {
            "url": document.url,
            "final_url": document.final_url,
            "published": document.published,
            "language": document.language,
            "fetched": document.fetched,
            "via_wayback": document.via_wayback,
        }
        yield Document(id=document.id, title=document.title, text=document.text, metadata=metadata)


def _unique_prompts(prompts: Iterable[PromptRef | None]) -> list[PromptRef]:
    seen: dict[tuple[str, str], PromptRef] = {}
    for prompt in prompts:
        if prompt is not None:
            seen.setdefault((prompt.name, prompt.version), prompt)
    return list(seen.values())


def _masked_relation(plan_hop) -> str:
    """The relation of the first triple holding the hop's masked node."""
    for triple in plan_hop.triples:
        if plan_hop.answer in (triple.head, triple.tail):
            return triple.relation
    return ""


def make_sample(
    plan: QuestionPlan,
    question: GeneratedQuestion,
    facts: Mapping[str, Fact],
    documents: Mapping[str, WebDocument],
    graphs: Mapping[str, KnowledgeGraph],
    *,
    as_of: date,
    seed: int,
    part1_prompts: Iterable[PromptRef] = (),
) -> Sample:
    """The benchmark sample for one plan and its question; `as_of` is the reference date its relative dates
    count from, kept as attributes.extra["as_of"] (YYYY-MM-DD)."""
    false_premise = plan.kind == "false_premise"
    evidence = sorted({doc for hop in plan.hops for doc in hop.documents})
    chain = [
        Hop(
            index=index,
            operation="masked_node",
            predicate=_masked_relation(hop),
            question=question.sub_questions[index] if index < len(question.sub_questions) else "",
            answers=[] if false_premise else [hop.answer],
            evidence=list(hop.documents),
        )
        for index, hop in enumerate(plan.hops)
    ]
    hop_facts = [facts[hop.fact_id] for hop in plan.hops]
    last = hop_facts[-1]
    topic, topic_source = topic_group(last.topics, last.categories, last.section, last.title)
    found = evidence_attributes(documents[doc] for doc in evidence if doc in documents)
    extra = {
        **{key: value for key, value in found.items() if key != "freshness"},
        "answer_type": plan.answer_type,
        "topic_source": topic_source,
        "pages": list(dict.fromkeys(fact.title for fact in hop_facts)),
        "page_created": last.created,
        "changes": [change.model_dump(mode="json") for change in plan.changes],
        "as_of": as_of.isoformat(),
    }
    if false_premise:
        extra["premise_answer"] = plan.answer
    attributes = Attributes(
        language="en",
        question_type=plan.kind,
        freshness=found["freshness"],
        topic=topic,
        popularity=last.popularity,
        extra=extra,
    )
    graph_prompts = [graphs[hop.fact_id].prompt for hop in plan.hops if graphs[hop.fact_id].prompt]
    prompts = _unique_prompts([*part1_prompts, *graph_prompts, *question.prompts])
    provenance = Provenance(
        generator=GENERATOR,
        seed=seed,
        query_plan=[
            {
                "fact": hop.fact_id,
                "masked": hop.answer,
                "masked_type": hop.answer_type,
                "bridge": hop.bridge,
            }
            for hop in plan.hops
        ],
        knowledge_graph=[[t.head, t.relation, t.tail] for hop in plan.hops for t in hop.triples],
        keypoints=[text for hop in plan.hops for text in hop.keypoints],
        prompts=prompts,
        model=question.model,
    )
    return Sample(
        id=plan.id,
        question=question.question,
        answers=[] if false_premise else [plan.answer],
        false_premise=false_premise,
        hops=len(plan.hops),
        source="wikipedia",
        evidence=evidence,
        chain=chain,
        attributes=attributes,
        provenance=provenance,
    )
