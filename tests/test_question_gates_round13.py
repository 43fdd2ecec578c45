"""Issue 26, round 13: "by what year" asked of what a place had, and an institution many countries had
described by a shared capitalised adjective ("the new Communist regime"). Examples are tuning-half
questions (realdata even page ids; the 2019 set's even ids), their sample id in the comment, unless the
comment says they are made up."""

from __future__ import annotations

import pytest

from irbgen.irb.gates import question_failure, unplaced_institution, year_of_a_lasting_state


def test_by_what_year_asked_of_a_possession_fails(nlp):
    # s:738:399:0/2 (Albania): any year after 1991 fits "had ... but no regular domestic air service" too
    question = (
        "Albania had air links with many major European cities, including Paris, Rome, Zürich, Vienna and "
        "Budapest, but no regular domestic air service by what year?"
    )
    found = year_of_a_lasting_state(nlp(question))
    assert found is not None and "'by what year' asked of what something 'had'" in found, found
    assert question_failure(question, "DATE", nlp(question), answer="1991", answer_type="Date") is not None


@pytest.mark.parametrize(
    "question",
    [
        "The GDP of Azerbaijan increased 20-fold relative to its 1995 level by what year?",  # s:746:341:0/2
        "Plan's donor countries had increased to 21 by what year?",  # s:3046582:10:0/2 ("had" an auxiliary)
        "The Ottomans erected their garrisons throughout southern Albania by what year?",  # s:738:67:0, cut
    ],
)
def test_by_what_year_asked_of_a_change_passes(nlp, question):
    assert year_of_a_lasting_state(nlp(question)) is None


def test_a_regime_many_countries_had_must_say_whose(nlp):
    # s:12:171:0 (Anarchism): which country's new Communist regime is not said
    question = (
        "Which organization reemerged as part of a factory and workplace committee movement, but was "
        "repressed by the new Communist regime from 1944 to 1947?"
    )
    assert unplaced_institution(nlp(question)) == "'the new Communist regime' of which country is not said"


@pytest.mark.parametrize(
    "question",
    [
        "The group was repressed by the Soviet regime from 1944 to 1947?",  # made up: a people says whose
        "The group was repressed by the Communist regime of Bulgaria from 1944 to 1947?",  # made up
    ],
)
def test_a_regime_that_says_whose_passes(nlp, question):
    assert unplaced_institution(nlp(question)) is None
