"""Issue 26, round 12: a question word in an of-phrase after a name ("P. Tuan of which country"), or
"of whom" after a noun; a year asked of a lasting state; a number that counts nothing named; a date
moved before a ranking apposition. Examples are realdata tuning-half questions (even page ids), their
sample id in the comment, unless the comment says they are made up."""

from __future__ import annotations

import pytest

from irbgen.irb.gates import question_failure, unresolved_reference, wh_on_a_name, year_of_a_lasting_state
from irbgen.irb.rules.questions import _move_fronted


@pytest.mark.parametrize(
    ("question", "label", "detail"),
    [
        (  # s:664:59:0 (Asian Americans in space ... the Soyuz 37 sentence)
            "On July 23, 1980, P. Tuan of which country became the first Asian in space when he flew aboard "
            "Soyuz 37?",
            "GPE",
            "after the name 'P. Tuan'",
        ),
        (
            "Michael Rowe of which organization estimated that the loss was large?",
            "ORG",
            "'Michael Rowe'",
        ),  # made up
        ("The soldiers of whom held the fort in 1994?", "PERSON", "'of whom' after a noun"),  # made up
    ],
)
def test_a_question_word_on_a_name_fails(nlp, question, label, detail):
    found = wh_on_a_name(nlp(question))
    assert found is not None and detail in found, found
    assert question_failure(question, label, nlp(question)) is not None


@pytest.mark.parametrize(
    "question",
    [
        # s:738:...: the of-phrase of a common noun led by "the"
        "According to the 2011 Census results, the total population of which country is 2,821,977 with a low "
        "Fertility rate of 1.49 children born per woman?",
        "The Ministry of Health of which country announced a plan in 2010?",  # made up: a body led by "the"
        "Future President of which country A. Neto visited Vietnam in 1971?",  # made up: an office
        # s:52:276:0 (wtf set, United Kingdom): a name led by "a" and an adjective
        "A new Supreme Court of which country came into being 9 years ago to replace the Appellate Committee "
        "of the House of Lords?",
        "Most of which country's gold comes from the Lesser Caucasus?",  # made up
    ],
)
def test_an_of_phrase_a_reader_accepts_passes(nlp, question):
    assert wh_on_a_name(nlp(question)) is None


# --- a year asked of a state that may hold for many years ---------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        "Alaska had the highest number of pilots per capita of any U.S. state in what year?",  # s:624:327:0/2
        "Angola produced over three million carats of diamonds per year in what year?",  # s:706:64:0
        # m:706:91:0>706:64:0: the bridge's own date does not date the state
        "The country that became the main exporter of oil to China in the first quarter of 2008 produced "
        "over three million carats of diamonds per year in what year?",
    ],
)
def test_a_year_of_a_lasting_state_fails(nlp, question):
    found = year_of_a_lasting_state(nlp(question))
    assert found is not None and "may hold for many years" in found, found
    assert question_failure(question, "DATE", nlp(question), answer="2003", answer_type="Date") is not None


@pytest.mark.parametrize(
    "question",
    [
        "Azerbaijan saw migration of −1.14/1,000 people in what year?",  # s:746:399:0: an exact figure
        # m:52:lead:0>52:506:0 (wtf set): a boundary ("until what year")
        "The German immigrant community was the largest group in the United Kingdom until what year, when it "
        "became second only to Russian Jews?",
        # s:600:9:0: a report dates it
        "The people of Andorra had the highest life expectancy in the world at 81 years in what year, "
        "according to The Lancet?",
        # s:624:163:0/2: a rank from a census, read as an event
        "Alaska ranked as the 47th state by population, ahead of North Dakota, Vermont, and Wyoming (and "
        "Washington, D.C.) in what year?",
        # s:710:22:0/2: an event
        "Namibia signed a mutual defense pact with its northern neighbor Angola in what year?",
    ],
)
def test_a_year_that_one_event_or_figure_picks_passes(nlp, question):
    assert year_of_a_lasting_state(nlp(question)) is None


# --- a number standing alone; a date moved before a ranking apposition ---------------------------------


def test_a_number_that_counts_nothing_named_is_an_unresolved_reference(nlp):
    keypoint = "The Anchorage Daily News found ten set in Alaska in 2011."  # s:624:476:0
    assert unresolved_reference(nlp(keypoint)) == "'ten' counts something the text does not name"
    for named in (
        "Ten films were set in Alaska in 2011.",  # made up
        "Azerbaijan has two official languages.",  # made up
        # s:624:304:0, shortened
        "The U.S. Congress authorized $6 million to study the feasibility of a rail link in 2000.",
    ):
        assert unresolved_reference(nlp(named)) is None, named


def test_a_fronted_date_goes_before_a_ranking_apposition_or_a_cause():
    keypoint = (  # s:746:575:0
        "On 8 December 2012, Baku was selected to host the 2015 European Games, the first to be held in the "
        "competition's history."
    )
    assert _move_fronted(keypoint) == (
        "Baku was selected to host the 2015 European Games on 8 December 2012, the first to be held in the "
        "competition's history."
    )
    toronto = (  # s:68:226:0 (wtf set, Toronto)
        "In 2011, Toronto was rated the worst sports city in North America by ESPN, due to years of "
        "underperformance of Toronto's professional teams."
    )
    assert _move_fronted(toronto).startswith(
        "Toronto was rated the worst sports city in North America by ESPN in 2011, due to"
    )
    plain = "In 2010, Alaska ranked as the 47th state by population, ahead of North Dakota."  # s:624:163:0
    assert (
        _move_fronted(plain)
        == "Alaska ranked as the 47th state by population, ahead of North Dakota in 2010."
    )
