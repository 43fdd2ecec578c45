"""Issue 26 point 4: wikilinks say which page a node is, a page's lead names it, and each second hop is
paired with the best-described first hop. Sentences are from tuning-half (even page id) realdata pages."""

from __future__ import annotations

import random

import pytest

from irbgen.irb.bridges import bridge_named_once, description_words, node_pages, picks_one_out
from irbgen.irb.gates import described_badly, identifies_one, question_failure
from irbgen.irb.masking import maskable_nodes
from irbgen.irb.plans import described_well, multi_hop_plans, single_hop_plans
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import Entity, Fact, GroundedKeypoint, KnowledgeGraph, PlanHop, QuestionPlan, Triple
from irbgen.irb.rules.questions import inner_question, realize_plan
from irbgen.wikipedia.subjects import defining_noun, links_in
from irbgen.wikipedia.wikitext import parse_article


def fact(fact_id: str, text: str, *, title: str = "T", links: dict[str, str] | None = None) -> Fact:
    keypoint = GroundedKeypoint(keypoint_id=fact_id, text=text, documents=[f"d{fact_id}"])
    return Fact(
        id=fact_id,
        page_id=1,
        title=title,
        sentence=text,
        keypoints=[keypoint],
        citations=[],
        links=links or {},
    )


def graph(fact_id: str, *triples: tuple[str, str, str, str, str]) -> KnowledgeGraph:
    edges = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in triples]
    labels = {
        "Person": "PERSON",
        "Organization": "ORG",
        "Location": "GPE",
        "Event": "EVENT",
        "Other": "WORK_OF_ART",
    }
    nodes = sorted({(e.head, e.head_type) for e in edges} | {(e.tail, e.tail_type) for e in edges})
    entities = [Entity(text=node, label=labels[kind]) for node, kind in nodes]
    return KnowledgeGraph(fact_id=fact_id, triples=edges, coverage=1.0, entities=entities, method="rules")


def plans_of(facts, graphs, **options):
    single, rejects = single_hop_plans(facts, graphs)
    assert not rejects
    keypoints = {f.id: [k.text for k in f.keypoints] for f in facts}
    maskable = {g.fact_id: maskable_nodes(g, keypoints[g.fact_id]) for g in graphs}
    return multi_hop_plans(single, 2, random.Random(0), maskable=maskable, **options)


# --- links and the defining noun ----------------------------------------------------------------------


def test_links_map_the_rendered_text_to_the_linked_page():
    # Albert Einstein (page 736), with its real links
    wikitext = (
        "'''Albert Einstein''' was a [[Germany|German]]-born [[theoretical physicist]]."
        "<ref>{{cite web |url=http://example.org/a |title=A}}</ref>\n\n"
        "He was born in [[Ulm]], in the [[Kingdom of Württemberg]] in the "
        "[[German_Empire#History|German Empire]] on 14 March 1879."
        "<ref>{{cite web |url=http://example.org/b |title=B}}</ref> [[File:Ulm.jpg|thumb|Ulm]]"
    )
    article = parse_article(wikitext)
    assert article.links == {
        "German": "Germany",
        "theoretical physicist": "Theoretical physicist",
        "Ulm": "Ulm",
        "Kingdom of Württemberg": "Kingdom of Württemberg",
        "German Empire": "German Empire",
    }
    sentence = article.sentences[-1].text
    assert links_in(sentence, article.links) == {
        "German Empire": "German Empire",
        "Kingdom of Württemberg": "Kingdom of Württemberg",
        "Ulm": "Ulm",
    }  # "German" is only a piece of "German Empire" here


@pytest.mark.parametrize(
    ("lead", "noun"),
    [  # first sentences of tuning-half leads
        (
            "Anarchism is a political philosophy that advocates self-governed societies.",
            "political philosophy",
        ),
        (
            "Aristotle (384–322 BC) was a Greek philosopher and scientist born in the city of Stagira.",
            "philosopher",
        ),
        (
            "Alain Connes (born 1 April 1947) is a French mathematician, currently Professor at the Collège.",
            "mathematician",
        ),
        ("Aberdeen is a city in Scotland, United Kingdom.", "city"),
        ("Andrei Tarkovsky (4 April 1932 – 29 December 1986) was a Soviet film-maker.", None),
        ("The alkali metals are a group (column) in the periodic table.", None),
        ("Ada may refer to:", None),
        ("Apollo 11 was the first spaceflight that landed humans on the Moon.", None),
    ],
)
def test_defining_noun_of_a_lead(nlp, lead, noun):
    assert defining_noun(nlp(lead)) == noun


# --- which page a node is -----------------------------------------------------------------------------


def test_node_pages_come_from_links_and_the_page_title():
    einstein = fact(
        "736:1:0", "Albert Einstein was born in Ulm.", title="Albert Einstein", links={"Ulm": "Ulm"}
    )
    assert node_pages(einstein, ["Albert Einstein", "Ulm", "14 March 1879", "Einstein", "March"]) == {
        "albert einstein": "Albert Einstein",
        "ulm": "Ulm",
        "einstein": "Albert Einstein",
    }


def test_nodes_linked_to_different_pages_never_bridge():
    facts = [
        fact("1:1:0", "Washington signed the Jay Treaty in 1795.", links={"Washington": "George Washington"}),
        fact("2:1:0", "Washington hosted the 1996 summit.", links={"Washington": "Washington, D.C."}),
    ]
    graphs = [
        graph("1:1:0", ("Washington", "Person", "signed", "Jay Treaty", "Other")),
        graph("2:1:0", ("Washington", "Person", "hosted", "the 1996 summit", "Event")),
    ]
    every = {"describe": lambda hop: 1}  # every node may start a chain
    assert plans_of(facts, graphs, **every) == []
    same = [facts[0], facts[1].model_copy(update={"links": {"Washington": "George Washington"}})]
    assert [plan.id for plan in plans_of(same, graphs, **every)] == ["m:1:1:0/1>2:1:0", "m:2:1:0/1>1:1:0"]


# --- the best description -----------------------------------------------------------------------------

ALASKA = [  # Alaska (page 624), keypoints as the build wrote them
    (
        "624:208:0",
        "Alaska has the largest Quaker population (by percentage) of any state.",
        ("Alaska", "Location", "has", "the largest Quaker population", "Other"),
    ),
    (
        "624:327:0",
        "In 2006 Alaska had the highest number of pilots per capita of any U.S. state.",
        ("Alaska", "Location", "had", "the highest number of pilots", "Other"),
    ),
    (
        "624:355:0",
        "Alaska has an independence movement favoring a vote on secession from the United States, with the "
        "Alaskan Independence Party.",
        ("Alaska", "Location", "has movement with", "the Alaskan Independence Party", "Organization"),
    ),
]


def alaska_inputs():
    facts = [fact(fid, text, title="Alaska") for fid, text, _ in ALASKA]
    graphs = [graph(fid, triple) for fid, _, triple in ALASKA]
    return facts, graphs


def test_each_second_hop_uses_the_shortest_description_of_its_bridge():
    facts, graphs = alaska_inputs()
    plans = plans_of(facts, graphs, describe=description_words)
    ids = [plan.id for plan in plans]
    # the party (2nd hop) is reached once, through the shorter of the two descriptions of Alaska
    party = [plan for plan in plans if plan.hops[-1].fact_id == "624:355:0"]
    assert [plan.hops[0].fact_id for plan in party] == ["624:208:0"]
    assert len(ids) == len(set(ids))
    assert realize_plan(party[0]).question == (
        "The place that has the largest Quaker population (by percentage) of any state has an independence "
        "movement favoring a vote on secession from the United States, with which party?"
    )


def test_a_start_the_keep_check_refuses_leaves_the_second_hop_to_the_next_description():
    facts, graphs = alaska_inputs()
    refused = "624:208:0"
    rejects = []

    def keep(chain):
        return ("refused", "a test refusal") if chain[0].fact_id == refused else None

    plans = plans_of(facts, graphs, describe=description_words, keep=keep, rejects=rejects)
    party = [plan for plan in plans if plan.hops[-1].fact_id == "624:355:0"]
    assert [plan.hops[0].fact_id for plan in party] == ["624:327:0"]
    refused_only = {(r.reason, r.detail.split("; ")[-1]) for r in rejects}  # second hops only it reaches
    assert refused_only == {("multi_hop_not_writable", "the last: refused: a test refusal")}


def test_the_page_noun_names_the_bridge_in_its_description():
    facts, graphs = alaska_inputs()
    plans = plans_of(facts, graphs, describe=description_words, nouns={"Alaska": "state"})
    party = next(plan for plan in plans if plan.hops[-1].fact_id == "624:355:0")
    assert party.hops[0].answer_noun == "state"
    assert realize_plan(party).question.startswith("The state that has the largest Quaker population")


def test_a_second_mention_of_the_bridge_leaks_it():
    inner = PlanHop(
        fact_id="a", keypoints=["x"], triples=[], answer="Alabama", answer_type="Location", documents=[]
    )
    text = "The University of Alabama is the largest employer in Alabama, with 23,000 staff."
    outer = inner.model_copy(update={"keypoints": [text], "answer": "23,000", "bridge": "Alabama"})
    assert not bridge_named_once(inner, outer)
    once = outer.model_copy(
        update={"keypoints": ["UAB is the largest employer in Alabama, with 23,000 staff."]}
    )
    assert bridge_named_once(inner, once)


def azerbaijan_hop(**update) -> PlanHop:
    # Azerbaijan (page 746), a keypoint of the build
    text = "The defense budget of Azerbaijan for 2011 was set at US$3.1 billion."
    hop = PlanHop(
        fact_id="746:1:0",
        keypoints=[text],
        triples=[],
        answer="Azerbaijan",
        answer_type="Country",
        documents=[],
    )
    return hop.model_copy(update=update)


def test_an_inner_hop_names_its_answer_as_the_owner_so_it_can_be_described():
    hop = azerbaijan_hop()
    assert inner_question(hop) == "Which country's defense budget for 2011 was set at US$3.1 billion?"
    assert description_words(hop) == 11
    chess = "Azerbaijan is one of the traditional powerhouses of world chess, according to FIDE."
    outer = hop.model_copy(
        update={
            "fact_id": "746:2:0",
            "keypoints": [chess],
            "answer": "FIDE",
            "answer_type": "Organization",
            "bridge": "Azerbaijan",
        }
    )
    question = realize_plan(QuestionPlan(id="m:", kind="multi_hop", hops=[hop, outer])).question
    assert question.startswith(
        "The country whose defense budget for 2011 was set at US$3.1 billion is one of"
    )


def test_a_bridge_only_called_a_thing_is_not_described():
    assert description_words(azerbaijan_hop(answer_type="Other")) is None


def test_an_inner_hop_needs_no_proper_name_the_final_question_does(nlp):
    # Albert Einstein (page 736): the inner hop of m:736:10:0>736:227:0/2, rejected before as unanchored
    inner = "Who predicted gravitational waves in 1916?"
    assert question_failure(inner, "PERSON", nlp(inner))[0] == "question_unanchored"
    assert question_failure(inner, "PERSON", nlp(inner), described=True) is None
    vague = "Who was appointed associate professor?"  # no date, number, rank or person: still refused
    assert described_badly(vague) is not None


@pytest.mark.parametrize(
    ("question", "picks"),
    [  # inner hops of tuning-half multi-hop samples
        ("Which place has the largest Quaker population (by percentage) of any state?", True),  # 624:208:0
        ("Which country's defense budget for 2011 was set at US$3.1 billion?", True),  # 746:324:0
        ("Who was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March 1879?", True),
        ("Which country became the main exporter of oil to China in the first quarter of 2008?", True),
        ("Who became Foreign Member of the Royal Netherlands Academy of Arts and Sciences in 1920?", False),
        ("Which country was recommended as a top travel destination, by Lonely Planet 5 years ago?", False),
        ("Which country emerged as a bilingual state after 1962?", False),  # 358:352:0
        ("Who directed his last movie 55 years ago?", False),  # 344:17:0
        ("Which place's slaves were freed by the 13th Amendment in 1865?", False),  # an ordinal in a name
    ],
)
def test_a_description_must_pick_one_thing_out(question, picks):
    hop = PlanHop(fact_id="x", keypoints=[], triples=[], answer="X", answer_type="Country", documents=[])
    assert picks_one_out(question, hop) is picks


def test_another_person_named_picks_one_out():
    # Andrei Tarkovsky (page 676)
    married = Triple(
        head="Andrei Tarkovsky", head_type="Person", relation="married", tail="Irma Raush", tail_type="Person"
    )
    hop = PlanHop(
        fact_id="676:26:0",
        keypoints=[],
        triples=[married],
        answer="Andrei Tarkovsky",
        answer_type="Person",
        documents=[],
    )
    assert picks_one_out("Who was in the same class as Irma Raush whom he married?", hop)
    assert not picks_one_out("Who was in the same class as his future wife?", hop)


@pytest.mark.parametrize(
    ("text", "identifies"),
    [
        (
            "Which country was nominated number 4 global touristic destination by the New York Times?",
            True,
        ),  # 738:337
        ("Who was appointed president of the German Physical Society (1916–1918)?", True),  # 736:87:0
        ("Who was mayor of Vellmouth from 1971 to 2001?", True),  # invented: a span of years
        ("Which firm operates terminals in Vellmouth, Tarnby, and Brill?", True),  # invented: three names
        ("Which state's income tax is among the highest in the country?", False),  # invented: many are
        ("Who emerged for the first round in a completely white outfit?", False),  # invented: no rank
    ],
)
def test_what_identifies_one_thing(text, identifies):
    assert identifies_one(text) is identifies


def _hop(fact_id, text, answer, answer_type, triples):
    edges = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in triples]
    return PlanHop(
        fact_id=fact_id,
        keypoints=[text],
        triples=edges,
        answer=answer,
        answer_type=answer_type,
        answer_label="GPE",
        documents=[f"d{fact_id}"],
    )


def test_a_description_must_be_a_question_the_build_keeps_on_its_own():
    # Algeria (page 358): "also" needs the sentence before, so "the country that is also building two
    # 636-type diesel submarines for Algeria" describes nothing, though it names a figure
    also = _hop(
        "358:257:0",
        "Russia is also building two 636-type diesel submarines for Algeria.",
        "Russia",
        "Country",
        [
            ("Russia", "Country", "is also building", "two 636-type diesel submarines", "Quantity"),
            ("Russia", "Country", "is also building for", "Algeria", "Country"),
        ],
    )
    military = _hop(
        "358:254:0",
        "Algeria has the second largest military in North Africa with the largest defence budget in Africa "
        "($10 billion).",
        "Algeria",
        "Country",
        [("Algeria", "Country", "has", "the second largest military", "Other")],
    )
    writer = WriteQuestions("rules")
    assert description_words(also) is not None  # the description alone would pass
    assert described_well(also, writer) is None
    assert described_well(military, writer) == description_words(military)


def test_the_bridges_people_named_beside_its_description_leak_it():
    # Albania (page 738): "the Albanian Institute of Statistics" gives the bridge away
    inner = PlanHop(
        fact_id="738:336:0",
        keypoints=["x"],
        triples=[],
        answer="Albania",
        answer_type="Country",
        documents=[],
    )
    text = (
        "According to the Albanian Institute of Statistics, the population of Albania is 2,893,005 as of "
        "1 January 2015."
    )
    outer = inner.model_copy(update={"keypoints": [text], "answer": "2,893,005", "bridge": "Albania"})
    assert not bridge_named_once(inner, outer)


def test_a_lead_fact_ends_chains_from_several_first_hops():
    # "The capital of the state that ... is which place?" from each description of Alaska (624, tuning half)
    facts, graphs = alaska_inputs()
    capital = (
        "624:lead:0",
        "Alaska's capital is Juneau.",
        ("Alaska", "Location", "'s capital is", "Juneau", "Location"),
    )
    facts.append(fact(capital[0], capital[1], title="Alaska"))
    graphs.append(graph(capital[0], capital[2]))
    plans = plans_of(facts, graphs, describe=description_words)
    to_capital = [plan.hops[0].fact_id for plan in plans if plan.hops[-1].fact_id == "624:lead:0"]
    assert to_capital == ["624:208:0", "624:327:0"]  # a non-lead second hop is still made once
    party = [plan for plan in plans if plan.hops[-1].fact_id == "624:355:0"]
    assert len(party) == 1
