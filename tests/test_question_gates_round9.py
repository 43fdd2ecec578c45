"""Issue 26, round 9: a person asked by one word the page writes in full, a claim under a condition,
organizations and places asked by their name's head noun ("which sea"), bridge descriptions as the parser
reads them, and links that stop where a longer name goes on. Examples are keypoints and
questions of the realdata tuning half (even page ids), their page in the comment, unless the comment
says they are made up."""

from __future__ import annotations

import pytest
from plan_hops import plan_hop

from irbgen.irb.gates import conditional_claim, surname_alone, unresolved_reference
from irbgen.irb.node_types import name_noun
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import QuestionPlan, Triple
from irbgen.irb.rules.questions import generic_wh, realize_plan
from irbgen.wikipedia.subjects import links_in

# --- a person by one word ------------------------------------------------------------------------------


def test_a_one_word_person_linked_to_a_longer_name_is_a_piece_of_it():
    # Anarchism (page 12): "(as Robespierre did the Hébertists)", linked to Maximilien de Robespierre
    found = surname_alone("Robespierre", "Person", [], "Maximilien de Robespierre")
    assert found == "'Robespierre' alone links to the page 'Maximilien de Robespierre'"


def test_a_one_word_person_the_page_writes_in_full_is_a_piece_of_the_name():
    # Atlantic Ocean (page 698): "within 150 years of Columbus's arrival"; the page also has his full name
    page = [
        "Christopher Columbus reached the Americas in 1492.",
        "... within 150 years of Columbus's arrival.",
    ]
    assert "'Christopher Columbus'" in surname_alone("Columbus", "Person", page, None)
    # a rank before the name says the same: "General Howe" (made up page text)
    assert surname_alone("Howe", "Person", ["General Howe took Philadelphia."], None) is not None


def test_a_one_word_name_of_its_own_stays():
    # Anarchism (page 12): "Zhuangzi's philosophy ...", linked to Zhuang Zhou: another name, not a longer one
    assert surname_alone("Zhuangzi", "Person", [], "Zhuang Zhou") is None
    assert surname_alone("Plato", "Person", ["Plato founded the Academy."], "Plato") is None  # made up
    # not a person: a place keeps its one word
    assert surname_alone("Sitka", "Location", [], "Sitka, Alaska") is None


# --- a claim under a condition -------------------------------------------------------------------------


def test_a_claim_under_a_condition_is_no_fact(nlp):
    # made up in the form of a forecast: the tuning half has none
    text = "Should prices hold at their 2014 level, Tarvia's exports should exceed $40 billion by 2016."
    assert conditional_claim(nlp(text)).startswith("a condition, not a fact")
    text = "If the trend continues, the city will have a million people by 2030."  # made up
    assert conditional_claim(nlp(text)).startswith("a claim under a condition")


def test_a_reported_prediction_is_a_fact(nlp):
    # Anarchism (page 12): the condition is inside what Bakunin predicted; that he predicted it is a fact
    text = (
        "Bakunin characterised Marx's ideas as centralist and predicted that, if a Marxist party came to "
        "power, its leaders would simply take the place of the ruling class they had fought against."
    )
    assert conditional_claim(nlp(text)) is None


# --- the head noun of the answer's name ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "noun"),
    [
        ("the Caspian Sea", "sea"),  # Azerbaijan (page 746)
        ("the World Bank", "bank"),  # Algeria (page 358)
        ("the University of Alaska Fairbanks", "university"),  # Alaska (page 624)
        ("the Prussian Academy of Sciences", "academy"),  # Albert Einstein (page 736)
        ("NATO", None),
        ("the European Union", None),
        ("Bank", None),
    ],
)
def test_the_name_says_what_it_is(name, noun):
    assert name_noun(name) == noun


def test_a_sea_is_asked_as_a_sea(nlp):
    # Azerbaijan (page 746)
    text = "All the rivers drain into the Caspian Sea in the east of Azerbaijan."
    triples = [
        Triple(head="All the rivers", head_type="Other", relation="drain into", tail="the Caspian Sea",
               tail_type="Location"),
    ]  # fmt: skip
    hop = plan_hop("746:133:0", text, "the Caspian Sea", "Location", triples=triples)
    question = realize_plan(QuestionPlan(id="s:746:133:0", kind="single_hop", hops=[hop]), nlp).question
    assert question == "All the rivers drain into which sea in the east of Azerbaijan?"
    # the gates parse the wording they were written on
    assert generic_wh(question, "the Caspian Sea", "Location") == (
        "All the rivers drain into which place in the east of Azerbaijan?"
    )


def test_generic_wh_leaves_other_answers_alone():
    # Algeria (page 358): a bank is an organization
    question = "Algeria is classified as an upper middle income country by which bank?"
    assert generic_wh(question, "the World Bank", "Organization").endswith("by which organization?")
    assert generic_wh(question, "the World Bank", "Person") == question


# --- multi-hop: a bridge's description as the parser reads it -----------------------------------------


def _hop(fact_id, text, answer, answer_type, rows, **fields):
    triples = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in rows]
    return plan_hop(fact_id, text, answer, answer_type, triples=triples, **fields)


def _chain(lead, outer):
    return QuestionPlan(id=f"m:{lead.fact_id}>{outer.fact_id}", kind="multi_hop", hops=[lead, outer])


def test_a_description_with_its_clause_is_no_bare_reference(nlp):
    # Azerbaijan (page 746): the parser hangs "whose capital is Baku" elsewhere; the clause still says which
    question = (
        "According to the United Nations Development Program Report 2009, the literacy rate in the country "
        "whose capital is Baku is what percentage?"
    )
    assert unresolved_reference(nlp(question)) is None
    assert (
        unresolved_reference(nlp("The literacy rate in the country is 99.5 percent.")) is not None
    )  # made up


def test_a_question_word_read_into_the_description_is_no_clause_of_its_own():
    # Albania (page 738): "... for the country whose capital is Tirana in what year" reads as one clause
    lead = _hop(
        "738:lead:0", "Albania's capital is Tirana.", "Albania", "Country",
        [("Albania", "Country", "capital is", "Tirana", "Location")], answer_label="GPE",
    )  # fmt: skip
    text = "International Monetary Fund (IMF) predicted 2.6% growth for Albania in 2010 and 3.2% in 2011."
    rows = [
        ("International Monetary Fund", "Organization", "predicted", "2.6% growth", "Other"),
        ("2.6% growth", "Other", "for", "Albania", "Country"),
        ("2.6% growth", "Other", "in", "2010", "Date"),
    ]
    outer = _hop("738:312:0", text, "2010", "Date", rows, bridge="Albania", answer_label="DATE")
    writer = WriteQuestions("rules")
    assert writer.rules_failure(_chain(lead, outer)) is None
    assert writer.rules(_chain(lead, outer)).question == (
        "International Monetary Fund (IMF) predicted 2.6% growth for the country whose capital is Tirana in "
        "what year and 3.2% in 2011?"
    )


def test_a_question_word_in_a_clause_of_the_hop_itself_stays_rejected():
    # Algeria (page 358): the hop's own question already puts "in what year" inside "which stood at ..."
    lead = _hop(
        "358:lead:0", "Algeria's capital is Algiers.", "Algeria", "Country",
        [("Algeria", "Country", "capital is", "Algiers", "Location")], answer_label="GPE",
    )  # fmt: skip
    text = (
        "The population of Algeria, which stood at about 1.5 million in 1830, reached nearly 11 million in "
    )
    text += "1960."
    rows = [
        ("The population", "Other", "of", "Algeria", "Country"),
        ("Algeria", "Country", "stood in", "1830", "Date"),
    ]
    outer = _hop("358:133:0", text, "1830", "Date", rows, bridge="Algeria", answer_label="DATE")
    failure = WriteQuestions("rules").rules_failure(_chain(lead, outer))
    assert failure is not None and failure.reason == "question_wh_outside_main_clause"


# --- links: a name goes on in a capitalised word ------------------------------------------------------


def test_a_linked_name_before_a_capitalised_word_is_another_name():
    # Azerbaijan (page 746): "[[Socialist realism|Soviet]]" elsewhere on the page is not the Soviet Union
    links = {"Soviet": "Socialist realism", "Soviet Union": "Soviet Union", "NASA": "NASA"}
    assert links_in("It joined the Soviet Union in 1920.", links) == {"Soviet Union": "Soviet Union"}
    assert links_in("It was a Soviet republic.", links) == {"Soviet": "Socialist realism"}
    # made up: a common-noun link keeps its page before a name ("economic historian Angus Maddison")
    links = {"economic historian": "Economic historian", "Perry": "Fred Perry"}
    found = links_in("The economic historian Angus Maddison met Perry Rogers.", links)
    assert found == {"economic historian": "Economic historian"}
