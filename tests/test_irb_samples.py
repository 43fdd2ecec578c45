"""IRB sample assembly: attributes (topic, languages, dates, freshness) and plan + question -> Sample."""

from __future__ import annotations

from datetime import date

import pytest

from irbgen.irb.attributes import evidence_attributes, keyword_group, ores_group, topic_group
from irbgen.irb.records import (
    Fact,
    GeneratedQuestion,
    GroundedKeypoint,
    KnowledgeGraph,
    NodeChange,
    PlanHop,
    QuestionPlan,
    Triple,
)
from irbgen.irb.samples import corpus_documents, make_sample
from irbgen.schema import PromptRef
from irbgen.web.records import WebDocument


def document(doc_id: str, language: str | None = "en", published: str | None = None) -> WebDocument:
    return WebDocument(
        id=doc_id,
        url=f"https://example.org/{doc_id}",
        final_url=f"https://example.org/{doc_id}",
        status=200,
        text=f"text of {doc_id}",
        published=published,
        language=language,
        fetched="2025-01-01T00:00:00Z",
    )


@pytest.mark.parametrize(
    ("topic", "group"),
    [
        ("Geography.Regions.Europe.Northern Europe", "Geography"),
        ("History_and_Society.Transportation", "History and Society"),
        ("STEM.Engineering", "STEM"),
        ("Culture.Biography.Biography*", "Culture"),
        ("Unknown.Thing", None),
    ],
)
def test_ores_groups(topic, group):
    assert ores_group(topic) == group


def test_topic_prefers_ores_then_categories_then_sections_then_title():
    assert topic_group(["STEM.Space"], ["Festivals in X"], ["History"], "T") == ("STEM", "ores")
    assert topic_group([], ["Festivals in Vellshire"], ["History"], "T") == ("Culture", "category")
    assert topic_group([], [], ["Career", "Recognition"], "T") == ("Culture", "section")
    assert topic_group([], [], [], "Lake Orrin") == ("Geography", "title")
    assert topic_group([], [], [], "Zzyzx") == (None, "none")
    assert keyword_group("Structural engineers") == "STEM"
    assert keyword_group("Heritage railways in Vellshire") == "History and Society"


def test_evidence_attributes_languages_dates_and_freshness():
    found = evidence_attributes(
        [document("a", "en", "2024-03-01"), document("b", "de", "2025-01-02"), document("c", None)]
    )
    assert found == {
        "evidence_languages": ["de", "en", "unknown"],
        "evidence_dates": ["2024-03-01", "2025-01-02"],
        "cross_lingual": True,
        "freshness": "2025",
    }
    only_english = evidence_attributes([document("a", "en"), document("c", None)])
    assert only_english["cross_lingual"] is False and only_english["freshness"] is None


def fact(fact_id: str, text: str, docs: list[str], title: str = "Ilse Marrow") -> Fact:
    return Fact(
        id=fact_id,
        page_id=1,
        title=title,
        section=["Career"],
        sentence=text,
        keypoints=[GroundedKeypoint(keypoint_id=fact_id, text=text, documents=docs)],
        citations=[],
        categories=["Structural engineers"],
    )


def hop(fact_id: str, text: str, answer: str, answer_type: str, docs: list[str], bridge=None) -> PlanHop:
    triple = Triple(
        head="Ilse Marrow", head_type="Person", relation="joined", tail=answer, tail_type=answer_type
    )
    return PlanHop(
        fact_id=fact_id,
        keypoints=[text],
        triples=[triple],
        answer=answer,
        answer_type=answer_type,
        bridge=bridge,
        documents=docs,
    )


def graph(fact_id: str) -> KnowledgeGraph:
    prompt = PromptRef(name="irb_graph", version="1")
    return KnowledgeGraph(fact_id=fact_id, triples=[], coverage=1.0, method="llm", prompt=prompt)


def test_multi_hop_sample_unions_evidence_and_keeps_each_hop():
    facts = {
        "f1": fact("f1", "Ilse Marrow joined Halden & Rusk in 2007.", ["d1"]),
        "f2": fact("f2", "Halden & Rusk designed the bridge.", ["d2", "d3"], title="Halden & Rusk"),
    }
    documents = {"d1": document("d1", "en", "2021-06-01"), "d2": document("d2", "fr", "2024-03-12")}
    documents["d3"] = document("d3")
    plan = QuestionPlan(
        id="m:f1>f2",
        kind="multi_hop",
        hops=[
            hop("f1", "Ilse Marrow joined Halden & Rusk in 2007.", "Halden & Rusk", "Organization", ["d1"]),
            hop(
                "f2",
                "Halden & Rusk designed the bridge.",
                "the bridge",
                "Work",
                ["d2", "d3"],
                "Halden & Rusk",
            ),
        ],
    )
    question = GeneratedQuestion(
        plan_id=plan.id,
        question="What did the firm that Ilse Marrow joined in 2007 design?",
        sub_questions=["Which firm did Ilse Marrow join in 2007?", "What did the firm ... design?"],
        method="llm",
        prompts=[PromptRef(name="irb_question_step", version="1")],
        model="m",
    )
    graphs = {"f1": graph("f1"), "f2": graph("f2")}
    part1 = [PromptRef(name="irb_keypoint", version="1"), PromptRef(name="irb_keypoint", version="1")]
    sample = make_sample(
        plan, question, facts, documents, graphs, as_of=date(2025, 6, 18), seed=7, part1_prompts=part1
    )
    assert sample.id == "m:f1>f2" and sample.hops == 2 and sample.source == "wikipedia"
    assert sample.answers == ["the bridge"] and not sample.false_premise
    assert sample.evidence == ["d1", "d2", "d3"]
    assert [h.answers for h in sample.chain] == [["Halden & Rusk"], ["the bridge"]]
    assert [h.evidence for h in sample.chain] == [["d1"], ["d2", "d3"]]
    assert sample.chain[0].question == "Which firm did Ilse Marrow join in 2007?"
    assert sample.attributes.question_type == "multi_hop"
    assert sample.attributes.freshness == "2024"
    assert sample.attributes.extra["cross_lingual"] is True
    assert sample.attributes.topic == "STEM"  # from the category "Structural engineers"
    names = [(p.name, p.version) for p in sample.provenance.prompts]
    assert names == [("irb_keypoint", "1"), ("irb_graph", "1"), ("irb_question_step", "1")]
    assert sample.provenance.seed == 7 and sample.provenance.model == "m"
    assert sample.attributes.extra["as_of"] == "2025-06-18"


def test_false_premise_sample_has_no_answers_but_keeps_its_evidence():
    facts = {"f1": fact("f1", "Ilse Marrow joined Halden & Rusk in 2007.", ["d1"])}
    change = NodeChange(
        node="2007",
        node_type="Date",
        replacement="2 years ago",
        kind="false_premise",
        rule="wrong_relative_date",
    )
    plan = QuestionPlan(
        id="f:s:f1",
        kind="false_premise",
        hops=[
            hop("f1", "Ilse Marrow joined Halden & Rusk in 2007.", "Halden & Rusk", "Organization", ["d1"])
        ],
        changes=[change],
    )
    question = GeneratedQuestion(
        plan_id=plan.id,
        question="Which firm did Ilse Marrow join 2 years ago?",
        sub_questions=["Which firm did Ilse Marrow join 2 years ago?"],
        method="rules",
    )
    sample = make_sample(
        plan, question, facts, {"d1": document("d1")}, {"f1": graph("f1")}, as_of=date(2021, 12, 1), seed=0
    )
    assert sample.false_premise and sample.answers == [] and sample.evidence == ["d1"]
    assert sample.attributes.extra["premise_answer"] == "Halden & Rusk"
    assert sample.attributes.extra["changes"][0]["replacement"] == "2 years ago"
    assert sample.chain[0].answers == []
    assert sample.attributes.extra["as_of"] == "2021-12-01"  # the date "2 years ago" counts from


def test_corpus_documents_keep_url_date_and_language():
    (doc,) = corpus_documents([document("d9", "de", "2024-01-01")])
    assert doc.id == "d9" and doc.text == "text of d9"
    assert doc.metadata["url"] == "https://example.org/d9"
    assert doc.metadata["language"] == "de" and doc.metadata["published"] == "2024-01-01"
