"""Issue 26, round 7: a person named by surname alone, abbreviations that end a name, multi-hop heads and
repeated questions. Examples are real sentences of a tuning half (even page ids): of the realdata build,
or of the unseen set of bench/audits/wikipedia-wtf-cache-unseen/ where a comment says so."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from plan_hops import plan_hop

from irbgen.irb.gates import keypoint_failure, lone_surname
from irbgen.irb.records import Fact, GeneratedQuestion, GroundedKeypoint, KnowledgeGraph, QuestionPlan
from irbgen.irb.rules.graph import load_graph_nlp, rules_triples
from irbgen.irb.rules.keypoints import page_of, page_person_name
from irbgen.irb.rules.questions import ANSWER, realize_plan, realize_text
from irbgen.irb.rules.referents import situate
from irbgen.irb.stages import MakeSamples
from irbgen.language import foreign_language
from irbgen.pipeline.stage import Batch, StageContext
from irbgen.records import Reject
from irbgen.wikipedia.subjects import defining_noun

GILBERT_LEAD = (
    "Elizabeth Gilbert (born July 18, 1969) is an American author. She is best known for her 2006 memoir, "
    "Eat, Pray, Love."
)  # the unseen set's page 22, shortened
HUXLEY_LEAD = (
    "Aldous Leonard Huxley (26 July 1894 – 22 November 1963) was an English writer, novelist, "
    "philosopher, and prominent member of the Huxley family."
)  # realdata page 628 (Aldous Huxley), shortened


def situated(nlp, text, title, lead, person):
    return situate(nlp(text), page_of(title, lead), [lead], person).text


@pytest.mark.parametrize(
    "text, title, lead, person, expected",
    [
        (  # the unseen set's 22:49:0: the answer was "Gilbert", a piece of her name
            "Gilbert was married to Michael Cooper, whom she met while working at the Coyote Ugly Saloon, "
            "from 1994 to 2002.",
            "Elizabeth Gilbert",
            GILBERT_LEAD,
            "Elizabeth Gilbert",
            "Elizabeth Gilbert was married to Michael Cooper, whom she met while working at the Coyote Ugly "
            "Saloon, from 1994 to 2002.",
        ),
        (  # Aldous Huxley: "Leonard Huxley" in the lead is his own middle name, not another Huxley
            "In a 1958 televised interview conducted by journalist Mike Wallace, Huxley outlined several "
            "major concerns.",
            "Aldous Huxley",
            HUXLEY_LEAD,
            "Aldous Huxley",
            "In a 1958 televised interview conducted by journalist Mike Wallace, Aldous Huxley outlined "
            "several major concerns.",
        ),
    ],
)
def test_a_lone_surname_of_the_pages_person_takes_the_whole_name(nlp, text, title, lead, person, expected):
    assert situated(nlp, text, title, lead, person) == expected


def test_a_surname_another_person_on_the_page_shares_stays_as_it_is(nlp):
    # made up beside the unseen set's Jodie Emery (page 60): her husband Marc Emery is named around
    lead = "Jodie Emery (born 1985) is a Canadian activist. She is married to Marc Emery."
    text = "Emery ran as a candidate for the BC Green Party in the May 2009 election."
    assert situated(nlp, text, "Jodie Emery", lead, "Jodie Emery") == text


def test_a_person_whose_lead_gives_a_birth_is_the_pages_person():
    # the unseen set's Altimont Butler (page 6): his lead's pronouns leave the gender open
    lead = (
        "Altimont \u201cFreddie\u201d Butler (born 21 July 1968 in Kingston, Jamaica) is a former Jamaica "
        "football (soccer) striker."
    )
    assert page_person_name("Altimont Butler", lead) == "Altimont Butler"
    assert (
        page_person_name("Alabama", "Alabama is a state in the southeastern region of the United States.")
        is None
    )


@pytest.mark.parametrize(
    "text, title",
    [
        ("Morgan was the founder of the Houston Holocaust Museum.", "Allen R. Morris"),  # unseen set, page 4
        (  # Anarchism (realdata page 12)
            'Fiercely anti-clerical, Ferrer believed in "freedom in education", education free from the '
            "authority of church and state.",
            "Anarchism",
        ),
    ],
)
def test_a_surname_alone_that_is_not_the_pages_is_unresolved(nlp, text, title):
    assert "alone: which" in lone_surname(nlp(text), title)
    assert keypoint_failure(text, nlp(text), title)[0] == "unresolved_reference"


def test_a_faith_or_the_pages_own_name_is_no_lone_surname(nlp):
    # Algeria (realdata page 358)
    text = "Islam is the predominant religion with 99% of the population of Algeria."
    assert lone_surname(nlp(text), "Algeria") is None
    assert lone_surname(nlp("Butler was named as an assistant coach."), "Altimont Butler") is None


def test_an_abbreviation_that_ends_a_name_keeps_its_full_stop():
    # the unseen set's Clint Murchison Sr. (page 18): the question read "Who. owned several ranches ..."
    doc = load_graph_nlp()(
        "Clint Murchison Sr. owned several ranches, one in northeastern Mexico, where he hosted the Duke "
        "and Duchess of Windsor in 1950."
    )
    assert rules_triples(doc)[0].head == "Clint Murchison Sr."


def test_a_participle_before_the_bridge_is_no_head_noun():
    # the unseen set's 52:545:0 > 52:536:0: "the immigrants entering that trails only ..." lost its head
    first = plan_hop(
        "52:545:0",
        "The United Kingdom trails only the United States in terms of representation on lists of top 100 "
        "universities.",
        "The United Kingdom",
        "Country",
        answer_noun="sovereign country",
    )
    second = plan_hop(
        "52:536:0",
        "In 2011, citizens of the new EU member states made up 13% of the immigrants entering the United "
        "Kingdom.",
        "13%",
        "Quantity",
        bridge="the United Kingdom",
    )
    plan = QuestionPlan(id="m:52:545:0>52:536:0", kind="multi_hop", hops=[first, second])
    assert "the immigrants entering the sovereign country that trails only" in realize_plan(plan).question


def test_a_question_asked_twice_with_the_same_answer_is_kept_once():
    # Albert Einstein (realdata page 736) says in two places that his papers were released
    text = "On 5 December 2014, universities and archives announced the release of Albert Einstein's papers."
    question = "Universities and archives announced the release of A. Einstein's papers on what date?"
    plans, written = [], []
    for fact_id in ("736:19:0", "736:240:0"):
        plans.append(
            QuestionPlan(
                id=f"s:{fact_id}/1",
                kind="single_hop",
                hops=[plan_hop(fact_id, text, "5 December 2014", "Date")],
            )
        )
        written.append(
            GeneratedQuestion(
                plan_id=f"s:{fact_id}/1", question=question, sub_questions=[question], method="rules"
            )
        )
    graphs = {
        plan.hops[0].fact_id: KnowledgeGraph(
            fact_id=plan.hops[0].fact_id, triples=[], coverage=1.0, method="rules"
        )
        for plan in plans
    }
    facts = {fact_id: _fact(fact_id, text) for fact_id in graphs}
    parts = {
        "plans": plans,
        "questions": written,
        "facts": facts,
        "documents": {},
        "graphs": graphs,
        "reference_date": date(2016, 5, 1),
    }
    out = list(
        MakeSamples(seed=0).process(Batch(name="samples", parts=parts), StageContext(run_dir=Path(".")))
    )
    assert [record.id for record in out if not isinstance(record, Reject)] == ["s:736:19:0/1"]
    (reject,) = [record for record in out if isinstance(record, Reject)]
    assert reject.reason == "duplicate_question" and reject.key == "s:736:240:0/1"


def _fact(fact_id, text):
    return Fact(
        id=fact_id,
        page_id=736,
        title="Albert Einstein",
        section=[],
        sentence=text,
        keypoints=[GroundedKeypoint(keypoint_id=fact_id, text=text, documents=["d"])],
        citations=[],
    )


def test_a_birth_date_without_on_is_asked_with_on():
    # the unseen set's Clint Murchison Sr. (page 18): "was born what date in Tyler, Texas?" before
    text = (
        "Murchison, the third child of John Weldon and Clara Lee Murchison, was born "
        + ANSWER
        + " in Tyler, Texas."
    )
    question = realize_text(text, "April 11, 1895", "Date")
    assert question.endswith("was born on what date in Tyler, Texas?")
    assert (
        realize_text("Clint was born " + ANSWER + " in Tyler.", "1895", "Date")
        == "Clint was born in what year in Tyler?"
    )


# --- found reading the unseen set's test half (reading 2); examples from tuning halves or made up -------


@pytest.mark.parametrize(
    "title, lead",
    [  # made up in the shape of the leads that hid the page's person: an initial, or "Jr." before the bracket
        ("K. Ellen Marsh", "K. Ellen Marsh (born 1967) is a United States Magistrate Judge."),
        (
            "K. Ellen Marsh",
            "K. Ellen Marsh (full name: Katie Ellen Marsh) is a United States Magistrate Judge.",
        ),
        (
            "Harold Quint",
            "Harold Dane Quint Jr. (August 22, 1929 – February 16, 2012) was an American lawyer and "
            "speechwriter.",
        ),
    ],
)
def test_a_birth_after_an_initial_or_a_suffix_still_names_the_pages_person(title, lead):
    assert page_person_name(title, lead) == title


def test_a_fronted_date_before_the_subject_leaves_who_as_the_subject():
    # made up: "On May 13, 2013, <answer> rejoined Nike." asks "who", not "whom"
    question = realize_text("On May 13, 2013, " + ANSWER + " rejoined Nike.", "Dale Orton", "Person")
    assert question == "On May 13, 2013, who rejoined Nike?"
    no_comma = realize_text("On July 25, 2005 " + ANSWER + " left Nike.", "Dale Orton", "Person")
    assert no_comma == "On July 25, 2005 who left Nike?"


def test_a_defining_noun_the_parser_split_is_not_taken(nlp):
    # made up in the shape of a lead whose compound the parser cut ("football" taken for the head)
    lead = nlp("Dale Orton (born December 15, 1982) is a former American football wide receiver.")
    assert defining_noun(lead) is None
    # Allan Dwan (realdata page 344)
    lead = "Allan Dwan was a pioneering Canadian-born American motion picture director, producer."
    assert defining_noun(nlp(lead)) == "motion picture director"


@pytest.mark.parametrize(
    "text, language",
    [  # the unseen set's Keilwelle (page 32), a German page among English ones
        ("Die Nuten der Wellen werden mit einem scheibenförmigen Formfräser gefräst.", "de"),
        # Algeria (realdata page 358): an English sentence with a long French name stays
        (
            "The Groupe Salafiste pour la Prédication et le Combat (GSPC), a splinter group of the Group "
            "Islamic Armée, continued a terrorist campaign.",
            None,
        ),
    ],
)
def test_a_segment_in_another_language_is_not_english(text, language):
    assert foreign_language(text) == language


def test_a_shorter_form_of_the_pages_own_name_is_no_other_person(nlp):
    # made up in the shape of the unseen set's K. Nicole Mitchell (page 31): "Nicole Mitchell" is her too
    lead = "K. Ellen Marsh (full name: Katie Ellen Marsh, also known as Ellen Marsh) is a judge."
    text = "Marsh was sworn in as a U.S. Magistrate Judge on August 16, 2013."
    expected = "K. Ellen Marsh was sworn in as a U.S. Magistrate Judge on August 16, 2013."
    assert situated(nlp, text, "K. Ellen Marsh", lead, "K. Ellen Marsh") == expected
