"""Issue 26, round 12: a question word in an of-phrase after a name ("P. Tuan of which country"), or
"of whom" after a noun. Examples are realdata tuning-half questions (even page ids), their sample id in
the comment, unless the comment says they are made up."""

from __future__ import annotations

import pytest

from irbgen.irb.gates import question_failure, wh_on_a_name


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
