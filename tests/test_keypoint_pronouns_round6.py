"""Issue 26, round 6: referents and places in keypoints, the round's question gates, uniqueness and
multi-hop rules. Examples are real keypoints or questions of the tuning half (even page ids) of the
realdata build, their page in the comment, unless a comment says otherwise."""

from __future__ import annotations

from datetime import date

import pytest
from plan_hops import plan_hop

from irbgen.irb.gates import (
    garbled,
    keypoint_failure,
    one_of_many_members,
    participle_without_verb,
    two_sentences,
    unplaced_institution,
    unresolved_reference,
)
from irbgen.irb.plans import paraphrase_changes
from irbgen.irb.questions import UniquenessIndex
from irbgen.irb.records import KnowledgeGraph, QuestionPlan, Triple
from irbgen.irb.rules.keypoints import page_of, page_person
from irbgen.irb.rules.questions import BridgeNotWritable, realize_plan
from irbgen.irb.rules.referents import situate
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.wikipedia.stages import load_parser
from irbgen.wikipedia.subjects import links_in


@pytest.mark.parametrize(
    "text, person, detail",
    [  # 736:218:0 (Albert Einstein): the main clause's "he" is the page's person, never named
        (
            "In 1931, while engaged in research at the California Institute of Technology, he visited the "
            "Zoellner family conservatory in Los Angeles.",
            ("Albert Einstein", "m"),
            "'he' means Albert Einstein",
        ),
        # 344:7:0 (Allan Dwan): "New York" is a place, not someone "he" can mean
        (
            "While still in New York, in 1917 he was the founding president of the East Coast chapter of "
            "the Motion Picture Directors Association.",
            ("Allan Dwan", "m"),
            "'he' means Allan Dwan",
        ),
        # 700:22:0 and 700:36:0 (Arthur Schopenhauer): "she" is not the page's man; whom?
        (
            "In a fit of temper Arthur Schopenhauer told her that his work would be read long after the "
            '"rubbish" she wrote would have been totally forgotten.',
            ("Arthur Schopenhauer", "m"),
            "pronoun 'her' refers outside the text",
        ),
        (
            "According to Schopenhauer's court testimony, she deliberately annoyed him by raising her voice "
            "while standing right outside his door.",
            ("Arthur Schopenhauer", "m"),
            "pronoun 'she' refers outside the text",
        ),
    ],
)
def test_a_personal_pronoun_without_its_person_is_rejected(nlp, text, person, detail):
    assert detail in unresolved_reference(nlp(text), person)


@pytest.mark.parametrize(
    "text",
    [  # 324:58:0 and 324:161:0 (Academy Awards), 308:336:1 (a page on sleep): the noun in the fronted
        # phrase is not what "it" or "they" means
        "On December 20, 2011, it sold in an online auction for US$861,542.",
        "Due to continuous insufficient eligibility each year, it has not been awarded since 1984 (when "
        "Purple Rain won).",
        "Due to the senses not functioning normally during sleep, they are unable to help a person judge "
        "what is happening in their dream.",
    ],
)
def test_a_pronoun_whose_only_noun_is_in_a_fronted_phrase_is_rejected(nlp, text):
    assert "refers outside the text" in unresolved_reference(nlp(text))


@pytest.mark.parametrize(
    "text, person",
    [
        # 700:138:0: the possessor in the fronted phrase is the one meant
        (
            "In Schopenhauer's 1851 essay On Women, he expressed his opposition to what he called "
            '"Teutonico-Christian stupidity".',
            ("Arthur Schopenhauer", "m"),
        ),
        # 746:70:0 (Azerbaijan): "it" is Qajar Iran, the possessor
        (
            "Following Qajar Iran's loss in the 1804-1813 war, it was forced to concede suzerainty over most "
            "of the khanates (alongside Georgia and Dagestan) to the Russian Empire per the Gulistan treaty.",
            None,
        ),
        # 736 (Albert Einstein): the page's person is named, so "his" has him
        ("Marić collaborated with Einstein on his celebrated 1905 papers.", ("Albert Einstein", "m")),
        # 620:224:0 (Animal Farm, not a person): "her" and "his" have the names before them
        (
            'In the ninth episode of the fourth season of Sex and the City, "Sex and the Country", Carrie '
            "goes with her new boyfriend Aidan to his cottage.",
            None,
        ),
        # 738:235:0 stays out for its own "It", but an "it" that stands for a clause passes
        (
            "Rather than a definition in terms of the force between two current-carrying wires, it has been "
            "proposed to define the ampere in terms of the rate of flow of elementary charges.",
            None,
        ),
    ],
)
def test_a_pronoun_with_its_referent_in_the_text_passes(nlp, text, person):
    assert unresolved_reference(nlp(text), person) is None


def test_an_object_pronoun_may_mean_another_person_before_it(nlp):
    # 307:547:0 (Abraham Lincoln's page): "him" is Rathbone, not the page's man
    text = "Major Henry Rathbone momentarily grappled with Booth, but Booth stabbed him and escaped."
    assert keypoint_failure(text, nlp(text), "Abraham Lincoln", ("Abraham Lincoln", "m")) is None


def test_an_it_invited_to_join_is_no_clause_it(nlp):
    text = "It was invited to join NATO on 3 April 2008, and it became a full member on 2 April 2009."
    assert "'It' refers outside the text" in unresolved_reference(nlp(text))


def test_page_person_reads_the_gender_from_the_lead_or_the_sentences_around():
    lead = (
        "Allan Dwan (3 April 1885 – 28 December 1981) was a pioneering Canadian-born American motion "
        "picture director, producer and screenwriter."
    )
    around = ["Dwan began his career in 1909.", "In 1917 he was the founding president.", "He died in 1981."]
    assert page_person("Allan Dwan", lead, around) == ("Allan Dwan", "m")
    assert page_person("Allan Dwan", lead) is None  # the lead alone says no gender
    astronaut = "An astronaut is a person trained to command or serve aboard a spacecraft; his or her ..."
    assert page_person("Astronaut", astronaut, around) is None  # a kind of person, not one person


# --- a place's measure named without the place -------------------------------------------------------

ALGERIA = "Algeria is a sovereign state in North Africa on the Mediterranean coast."
ALASKA = "Alaska is a U.S. state in the northwest extremity of the United States West Coast."
AZERBAIJAN = "Azerbaijan, officially the Republic of Azerbaijan, is a country in the Transcaucasian region."


def situated(title: str, lead: str, text: str) -> str | None:
    return situate(load_parser(DEFAULT_MODEL)(text), page_of(title, lead), [lead]).text


@pytest.mark.parametrize(
    "title, lead, text, expected",
    [
        (  # 358:354:0
            "Algeria", ALGERIA, "Islam is the predominant religion with 99% of the population.",
            "Islam is the predominant religion with 99% of the population of Algeria.",
        ),
        (  # 624:168:0
            "Alaska", ALASKA, "Hispanics or Latinos of any race made up 5.5% of the population.",
            "Hispanics or Latinos of any race made up 5.5% of the population of Alaska.",
        ),
        (  # 746:334:0
            "Azerbaijan", AZERBAIJAN,
            "Pushed up by spending and demand growth, the 2007 Q1 inflation rate reached 16.6%.",
            "Pushed up by spending and demand growth, the 2007 Q1 inflation rate in Azerbaijan reached "
            "16.6%.",
        ),
        (  # written for the test: a people's population on a country's page is the one in the country
            "Algeria", ALGERIA, "The Muslim population grew by 2% in 1990.",
            "The Muslim population of Algeria grew by 2% in 1990.",
        ),
        (  # "Economy of Angola" is about Angola (an odd page id, kept here for the title's form only)
            "Economy of Angola", "The economy of Angola remains heavily influenced by the civil war.",
            "Due to the global recession the economy contracted an estimated −0.3% in 2009.",
            "Due to the global recession the economy of Angola contracted an estimated −0.3% in 2009.",
        ),
    ],
)  # fmt: skip
def test_a_measure_of_the_page_place_gets_the_place(title, lead, text, expected):
    assert situated(title, lead, text) == expected


@pytest.mark.parametrize(
    "text",
    [  # 358: the population is of a place already named, or says whose
        "Descendants of Andalusian refugees are present in the population of Algiers and other cities.",
        "Many Europeans settled in Oran and Algiers, and by the early 20th century they formed a majority "
        "of the population in both cities.",
        # 358:253:0: "GDP" in brackets spells out the words before it
        "The military expenditure was 4.3% of the gross domestic product (GDP) in 2012.",
        # the rate of what is not a measure of the place
        "The rate reached 16.6% in 2007.",
        # 358 (tuning half): the country's own demonym says whose
        "The Algerian economy became increasingly dependent on oil.",
    ],
)
def test_a_measure_already_placed_or_not_of_the_place_is_left(text):
    assert situated("Algeria", ALGERIA, text) == text


def test_a_bridge_owning_a_possessive_is_not_written_across_it(nlp):
    # 746:568:0 (Azerbaijan): "the women of the country whose capital is Baku's national team" is garbled
    start = plan_hop("746:lead:0", "Azerbaijan's capital is Baku.", "Azerbaijan", "Location")
    second = plan_hop(
        "746:568:0",
        "Azerbaijan's women's national team came fourth at the 2005 European Championship.",
        "the 2005 European Championship",
        "Event",
        bridge="Azerbaijan",
    )
    with pytest.raises(BridgeNotWritable, match="a possessive after"):
        realize_plan(QuestionPlan(id="m:", kind="multi_hop", hops=[start, second]), parse=nlp)


def test_a_page_name_is_the_page_itself_whatever_one_link_with_its_text_says():
    # 594:103:0 and 594:293:0 (Apollo): one "[[Apollo program|Apollo]]" on the page linked every "Apollo"
    links = {"Apollo": "Apollo program", "plague": "Plague (disease)", "Apollo Medicus": "Apollo Medicus"}
    text = 'Some common epithets of Apollo as a healer are "paion".'
    assert links_in(text, links, "Apollo") == {}
    assert links_in(text, links) == {"Apollo": "Apollo program"}  # without the page's name
    text = "The first temple was dedicated to Apollo Medicus (the doctor), after a plague of 433 BC."
    assert links_in(text, links, "Apollo") == {
        "Apollo Medicus": "Apollo Medicus",
        "plague": "Plague (disease)",
    }


def test_a_fragment_glued_on_by_a_semicolon_is_two_sentences(nlp):
    # s:690:131:0/2 (Aruba): a verbless fragment after ";" (a clause after it was caught already)
    question = (
        "The GDP per capita for Aruba was estimated to be $28,924 in what year; among the highest in the "
        "Caribbean and the Americas?"
    )
    assert "glued on by ';'" in two_sentences(nlp(question))
    assert two_sentences(nlp("Which element (symbol K; atomic number 19) burns with a lilac flame?")) is None


def test_a_passive_participle_with_no_auxiliary_is_no_question(nlp):
    # s:738:120:0/2 (Albania): "joined by" has no "was": nothing is asserted
    question = (
        "In May and June 1914 the International Gendarmerie joined by I. Boletini and his men, mostly from "
        "which place?"
    )
    assert "no finite verb" in participle_without_verb(nlp(question))
    # s:595:325:0/2-like misparse of a finite past verb with an object stays
    assert participle_without_verb(nlp("The Clash used an image from which animated movie?")) is None


@pytest.mark.parametrize(
    "question",
    [  # s:358:345:0 (Algeria) and s:710:69:0/2 (Foreign relations of Angola)
        'Berber has been recognized as a "national language" by the constitutional amendment of what date?',
        "The PRC has invested heavily in which country since the end of the civil war 14 years ago?",
    ],
)
def test_what_many_countries_have_must_say_whose(nlp, question):
    assert "of which country is not said" in unplaced_institution(nlp(question))


@pytest.mark.parametrize(
    "question",
    [  # tuning-half questions that say whose
        "Algeria emerged as a bilingual state after what year?",
        "The constitutional amendment of Algeria recognized Berber as a national language on what date?",
        "What was the first modern parliamentary republic in the Muslim world?",  # s:746 (Azerbaijan)
    ],
)
def test_a_placed_or_named_institution_passes(nlp, question):
    assert unplaced_institution(nlp(question)) is None


def test_two_facts_tied_by_a_common_word_are_no_second_answer():
    # s:746:413:0 (Azerbaijan) against 303:239:0 (Alabama): "(46.6%; of; population)" is no second answer to
    # "What percentage of the population of Azerbaijan are Muslims?"; a named end still is
    def graph(fact_id, head, relation, tail):
        triple = Triple(head=head, head_type="Other", relation=relation, tail=tail, tail_type="Other")
        return KnowledgeGraph(fact_id=fact_id, triples=[triple], coverage=1.0, entities=[], method="rules")

    index = UniquenessIndex([graph("303:239:0", "46.6%", "of", "population")])
    asked = Triple(head="Around 95%", head_type="Other", relation="of", tail="population", tail_type="Other")
    assert index.conflicts("746:413:0", asked, "head") == []
    index = UniquenessIndex([graph("303:239:0", "46.6%", "of", "the Alabama population")])
    named = asked.model_copy(update={"tail": "the Alabama population"})
    assert [clash.node for clash in index.conflicts("746:413:0", named, "head")] == ["46.6%"]


def test_two_dates_side_by_side_are_garbled():
    # s:736:227:0 (Albert Einstein): the fronted date moved to the end lands after another
    question = (
        "Who experienced internal bleeding caused by the rupture of an abdominal aortic aneurysm, which had "
        "previously been reinforced surgically by R. Nissen in 1948 on 17 April 1955?"
    )
    assert "in 1948 on 17 April" in garbled(question)
    assert "in 1948 61 years ago" in garbled(
        "Who had been reinforced surgically by R. Nissen in 1948 61 years ago?"
    )
    assert garbled("Who won the Nobel Prize in 1921 on the strength of the photoelectric effect?") is None


@pytest.mark.parametrize(
    "question",
    [  # s:736:92:0 and s:736:12:0 (Albert Einstein): many became members and citizens that year
        "Who became Foreign Member of the Royal Netherlands Academy of Arts and Sciences 96 years ago?",
        "Who settled in the U.S., becoming an American citizen 76 years ago?",
    ],
)
def test_a_person_asked_by_a_membership_many_share_is_not_unique(nlp, question):
    assert "many became a" in one_of_many_members(nlp(question))


def test_a_ranked_membership_picks_one_out(nlp):
    # s:664:63:0-like: a rank makes one
    assert one_of_many_members(nlp("Who became the first Arab member of the crew in 1985?")) is None


def test_a_full_date_that_picks_a_person_out_is_not_made_relative():
    # s:736:21:0 (Albert Einstein): "born in Ulm ... 137 years ago" fits a thousand people
    text = (
        "Albert Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March "
        "1879."
    )
    triples = [
        Triple(
            head="Albert Einstein",
            head_type="Person",
            relation="was born in",
            tail="Ulm",
            tail_type="Location",
        ),
        Triple(
            head="Albert Einstein",
            head_type="Person",
            relation="born on",
            tail="14 March 1879",
            tail_type="Date",
        ),
    ]
    asks_person = plan_hop("736:21:0", text, "Albert Einstein", "Person", triples=triples)
    plan = QuestionPlan(id="s:736:21:0", kind="single_hop", hops=[asks_person])
    assert not [c for c in paraphrase_changes(plan, date(2016, 5, 1)) if c.rule == "relative_date"]
    asks_place = plan_hop("736:21:0", text, "Ulm", "Location", triples=triples)
    plan = QuestionPlan(id="s:736:21:0/2", kind="single_hop", hops=[asks_place])
    relative = [
        c.replacement for c in paraphrase_changes(plan, date(2016, 5, 1)) if c.rule == "relative_date"
    ]
    assert relative == ["137 years ago"]  # asking for the place, the date may stay relative


ALBANIA = "Albania is a country in Southeastern Europe."


@pytest.mark.parametrize(
    "title, lead, text, expected",
    [
        (  # 738:16:0
            "Albania", ALBANIA,
            "Albania is an upper-middle income economy with the service sector dominating the country's "
            "economy, followed by the industrial sector and agriculture.",
            "Albania is an upper-middle income economy with the service sector dominating Albania's economy, "
            "followed by the industrial sector and agriculture.",
        ),
        (  # 746:145:0
            "Azerbaijan", AZERBAIJAN,
            "Azerbaijan's diverse landscape affects the ways air masses enter the country.",
            "Azerbaijan's diverse landscape affects the ways air masses enter Azerbaijan.",
        ),
    ],
)  # fmt: skip
def test_the_place_named_again_by_its_kind_takes_its_name(title, lead, text, expected):
    assert situated(title, lead, text) == expected


def test_a_person_page_kind_named_again_is_left():
    # 628:12:0 (Aldous Huxley): "the writer" is his father
    lead = "Aldous Leonard Huxley was an English writer, novelist and philosopher."
    text = "Aldous Huxley was the third son of the writer and schoolmaster Leonard Huxley."
    assert situated("Aldous Huxley", lead, text) == text


def test_a_common_word_capitalised_as_the_first_word_is_no_place_name():
    # made up in the form of 746:334:0: "Youth" is tagged a proper noun only because it opens the sentence
    assert (
        situated("Azerbaijan", AZERBAIJAN, "Youth unemployment reached 30% in 2012.")
        == "Youth unemployment in Azerbaijan reached 30% in 2012."
    )
    text = "Kabul population grew in 2012."  # a name stays a name
    assert situated("Azerbaijan", AZERBAIJAN, text) == text
