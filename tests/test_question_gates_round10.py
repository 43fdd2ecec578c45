"""Issue 26, round 10: an office every country has, named without its country ("the President"), and a
country asked for beside the word for its people ("an American citizen"). Examples are questions of the
realdata tuning half (even page ids), their page in the comment, unless the comment says they are made
up."""

from __future__ import annotations

import pytest

from irbgen.irb.gates import answer_by_its_people, question_failure, unplaced_office
from irbgen.irb.places import names_its_people
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.wikipedia.stages import load_parser


@pytest.fixture(scope="module")
def nlp():
    return load_parser(DEFAULT_MODEL)


# --- an office without its country ---------------------------------------------------------------------


def test_an_office_no_country_is_named_beside(nlp):
    # Azerbaijan (page 746): "The Azerbaijan National Guard operates as a semi-independent entity of the
    # Special State Protection Service, an agency subordinate to the President."
    question = (
        "Which organization operates as a semi-independent entity of the Special State Protection Service, "
        "an agency subordinate to the President?"
    )
    assert unplaced_office(nlp(question)) == "'the President' of which country is not said"
    failure = question_failure(question, "ORG", nlp(question), answer="The Azerbaijan National Guard")
    assert failure is not None and failure[0] == "question_unresolved_reference"


def test_an_office_with_its_country_or_owner_stays(nlp):
    # the keypoint itself names the country (Azerbaijan, page 746)
    named = "The Azerbaijan National Guard is an agency subordinate to the President since what year?"
    assert unplaced_office(nlp(named)) is None
    # made up: an of-phrase, a nationality, or a question asking for the place say whose office it is
    assert unplaced_office(nlp("Who was appointed by the President of Angola in 2010?")) is None
    assert unplaced_office(nlp("Who was appointed by the Angolan President in 2010?")) is None
    assert unplaced_office(nlp("In which country did the President resign in 2010?")) is None
    # part of a longer name: "the Senate Armed Services Committee"
    assert unplaced_office(nlp("Who chaired the Senate Armed Services Committee in 1990?")) is None


# --- a country given away by its people -----------------------------------------------------------------


def test_a_country_is_given_away_by_the_word_for_its_people():
    # Albert Einstein (page 736): "Albert Einstein settled in the U.S., becoming an American citizen in 1940."
    question = "A. Einstein settled in which country, becoming an American citizen 76 years ago?"
    found = answer_by_its_people(question, "the U.S.", "Country")
    assert found == "'American' gives the answer 'the U.S.' away"
    # Algeria (page 358): "The largest concentration of Algerian migrants outside Algeria is in France ..."
    text = "The largest concentration of Algerian migrants is in France"
    assert names_its_people("Algeria", text) == "Algerian"


def test_a_continent_or_another_country_is_no_give_away():
    # Academy Awards (page 324): "... close to US$600 million at the North American box office"
    # made up in its form
    question = "Which country's box office took close to US$600 million, the North American record?"
    assert answer_by_its_people(question, "the United States", "Country") is None
    # Algeria (page 358): France asked for beside "Algerian migrants"
    asked = "The largest concentration of Algerian migrants outside Algeria is in which country?"
    assert answer_by_its_people(asked, "France", "Country") is None
    # only places: a person's name is not a country's
    person = "Who became an American citizen in 1940?"
    assert answer_by_its_people(person, "Albert Einstein", "Person") is None
    assert answer_by_its_people(asked, "", "Country") is None
