"""Question gates, round 2 (issue 26): the failure classes a held-out audit still found.

Questions marked with a sample id ("s:358:177:0", page 358 = Algeria) are what the offline build of
../shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 (or "mixed196" for enwiki-mixed-196) wrote
for a page with an even page id (the tuning half), before these gates; keypoints are that build's.
Where the tuning half has no instance of a class, the example is invented and says so.
"""

from __future__ import annotations

import pytest

from irbgen.irb.gates import (
    date_of_a_state,
    garbled_amount,
    person_word_for_thing,
    question_failure,
    two_sentences,
)
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import GeneratedQuestion, NodeChange, PlanHop, QuestionPlan, Triple

# --- 2. a garbled wh-phrase for an amount -------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer"),
    [  # invented (the audit's wording; no tuning instance)
        ("The campaign forced what surrender of local leaders?", "dozens"),
        ("What amount ordered in 1975 from the Soviet Union?", "12"),
        ("What amount bought the new rifles in 1990?", "about 3,000"),
    ],
)
def test_an_amount_asked_with_a_garbled_phrase_fails(nlp, question, answer):
    assert garbled_amount(nlp(question), answer, "CARDINAL", "Quantity") is not None


@pytest.mark.parametrize(
    ("question", "answer", "label", "answer_type"),
    [
        ("The number of South Koreans living in Angola 5 years ago was what amount?", "279", "CARDINAL",
         "Quantity"),
        ("Trade between Angola and South Africa exceeded what amount 9 years ago?", "USD 300 million",
         "MONEY", "Quantity"),
        ("The number of European Pied-Noirs who fled Algeria totaled what amount between 1962 and 1964?",
         "more than 900,000", "CARDINAL", "Quantity"),
        ("A secret German facility covering how many acres was being re-excavated in Austria?", "75 acres",
         "QUANTITY", "Quantity"),
        ("Einstein predicted gravitational waves in what year?", "1916", "DATE", "Date"),  # s:736:304:0/2
        ("More than 57.25 million viewers tuned to the telecast for which organization 18 years ago?",
         "the 70th Academy Awards", None, "Organization"),  # s:324:140:0/2: an ordinal is no amount
    ],
)  # fmt: skip
def test_an_amount_asked_properly_passes(nlp, question, answer, label, answer_type):
    # s:710:83:0/2, s:706:95:0, s:358:150:0/2 (shortened s:736:176:0/2), s:736:304:0/2, s:324:140:0/2
    assert garbled_amount(nlp(question), answer, label, answer_type) is None


# --- 3. "who" for a work or a place -------------------------------------------------------------------

CRVENA = (  # s:738:32:0
    "The Paleolithic finds of Albania show great similarities with objects of the same era found at "
    "Crvena Stijena in Montenegro and north-western Greece."
)


def test_who_for_a_place_labelled_as_a_person_fails(nlp):
    question = (  # s:738:32:0, answer "Crvena Stijena" (a cave) typed Person
        "The Paleolithic finds of Albania show great similarities with objects of the same era found at "
        "whom in Montenegro and north-western Greece?"
    )
    detail = person_word_for_thing(nlp(question), "Crvena Stijena", "Person", "PERSON", [CRVENA])
    assert detail is not None and "at whom" in detail


@pytest.mark.parametrize(
    "keypoint",
    [  # invented: the audit's "Who outsells ...?" for a novel (no tuning instance)
        "The novel Harbour Lights outsells every other book of the series.",
        'In 2004 "Harbour Lights" outsells every other book of the series.',
        "Harbour Lights, a 2003 novel, outsells every other book of the series.",
    ],
)
def test_who_for_a_work_fails(nlp, keypoint):
    question = "Who outsells every other book of the series?"
    detail = person_word_for_thing(nlp(question), "Harbour Lights", "Person", "PERSON", [keypoint])
    assert detail is not None and "written as a work" in detail


def test_who_for_a_person_passes(nlp):
    question = "Who sent S. Littlefeather to read a 15-page speech detailing his criticisms?"  # s:324:193:0
    keypoint = "Brando sent Sacheen Littlefeather to read a 15-page speech detailing his criticisms."
    assert person_word_for_thing(nlp(question), "Brando", "Person", "PERSON", [keypoint]) is None
    work = "Who boycotted the 8th Academy Awards ceremony?"  # s:324:189:0 (a quoted title elsewhere is fine)
    assert (
        person_word_for_thing(nlp(work), "Nichols", "Person", "PERSON", ['Nichols wrote "The Informer".'])
        is None
    )


# --- 4. two clauses glued with "and" ------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [  # invented (the audit's example; no tuning instance)
        "Who renewed his contract in 1999 and in November 2003, he signed a new deal?",
        "Who renewed his contract in 1999 and he signed a new deal in 2003?",
    ],
)
def test_a_second_clause_glued_with_and_fails(nlp, question):
    detail = two_sentences(nlp(question))
    assert detail is not None and "glued with 'and'" in detail


@pytest.mark.parametrize(
    "question",
    [
        "Who soon became a member of the Prussian Academy of Sciences, and in 1916 was appointed president "
        "of the German Physical Society (1916–1918)?",  # s:736:87:0: one subject for both verbs
        "Who was in the same class as Irma Raush whom he married 59 years ago?",  # s:676:26:0
        "The Ottomans erected their garrisons throughout southern Albania by 1415 and occupied most of "
        "Albania by what year?",  # s:738:67:0/2
    ],
)
def test_one_clause_with_two_verbs_passes(nlp, question):
    assert two_sentences(nlp(question)) is None


# --- 5a. a date moved on a state ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "replacement"),
    [
        (  # f:m:624:327:0>624:355:0/2 (keypoint "In 2006 Alaska had the highest number of pilots ...")
            "The state that had the highest number of pilots per capita of any U.S. state 5 years ago has an "
            "independence movement favoring a vote on secession from which country, with the Alaskan "
            "Independence Party?",
            "5 years ago",
        ),
        ("The value of assessed property in Marlow was what amount 2 years ago?", "2 years ago"),  # invented
        (  # f:s:624:163:0 (a rebuild with the first round of these gates wrote it)
            "Which place ranked as the 47th state by population, ahead of North Dakota, Vermont, and Wyoming "
            "(and Washington, D.C.) 10 years ago?",
            "10 years ago",
        ),
    ],
)
def test_a_date_moved_on_a_state_fails(nlp, question, replacement):
    assert "dates a state" in date_of_a_state(nlp(question), replacement)


@pytest.mark.parametrize(
    ("question", "replacement"),
    [
        ("Who became Foreign Member of the Royal Netherlands Academy of Arts and Sciences 94 years ago?",
         "94 years ago"),  # f:s:736:92:0
        ("What was formed 68 years ago by members of the dissolved Anarchist Federation of Britain?",
         "68 years ago"),  # f:s:12:181:0
        ("Which place was selected to host the 2015 European Games, the first to be held in competition's "
         "history 5 years ago?", "5 years ago"),  # f:s:746:574:0
        ("The most recent country to recognize Azerbaijan was which country, 16 years ago?",
         "16 years ago"),  # f:s:746:203:0/2: "to recognize" is the event
        ('Which organization ranked Alaska as having the fourth most "business friendly" tax policy, behind '
         "only Wyoming, South Dakota, and Nevada 7 years ago?", "7 years ago"),  # f:s:624:372:0
    ],
)  # fmt: skip
def test_a_date_moved_on_an_event_passes(nlp, question, replacement):
    assert date_of_a_state(nlp(question), replacement) is None


# --- 5b. a country swapped into nonsense ----------------------------------------------------------------


# --- wiring: the stage rejects with each reason ---------------------------------------------------------


def test_question_failure_names_the_round_two_gates(nlp):
    modifier = "The Marlow Clinic, completed in what year, serves the north of Marlow?"  # invented
    assert question_failure(modifier, "DATE", nlp(modifier), answer="1990", answer_type="Date")[0] == (
        "question_wh_outside_main_clause"
    )
    amount = "The 1921 Rif campaign forced what surrender of Riffian leaders?"  # invented
    failure = question_failure(amount, "CARDINAL", nlp(amount), answer="dozens", answer_type="Quantity")
    assert failure[0] == "question_garbled_wh"
    glued = "Who renewed his contract in 1999 and in November 2003, he signed a new deal?"
    assert question_failure(glued, "PERSON", nlp(glued), answer="Rowe", answer_type="Person")[0] == (
        "question_two_sentences"
    )


def _false_premise_plan(keypoint: str, change: NodeChange) -> QuestionPlan:
    hop = PlanHop(
        fact_id="624:327:0",
        keypoints=[keypoint],
        triples=[Triple(head="Alaska", head_type="Location", relation="had", tail="x", tail_type="Other")],
        answer="Alaska",
        answer_type="Location",
        answer_label="GPE",
        documents=["d"],
    )
    return QuestionPlan(id="f:s:624:327:0", kind="false_premise", hops=[hop], changes=[change])


@pytest.mark.parametrize(
    ("node", "replacement", "rule", "question", "reason"),
    [
        ("2006", "5 years ago", "wrong_relative_date",
         "Which place had the highest number of pilots per capita of any U.S. state 5 years ago?",
         "false_premise_state_date"),  # s:624:327:0 with its date moved
    ],
)  # fmt: skip
def test_the_stage_rejects_a_premise_that_is_nonsense(nlp, node, replacement, rule, question, reason):
    node_type = "Date" if rule == "wrong_relative_date" else "Country"
    change = NodeChange(
        node=node, node_type=node_type, replacement=replacement, kind="false_premise", rule=rule
    )
    plan = _false_premise_plan(
        "In 2006 Alaska had the highest number of pilots per capita of any U.S. state.", change
    )
    written = GeneratedQuestion(plan_id=plan.id, question=question, sub_questions=[question], method="rules")
    reject = WriteQuestions().gate(plan, written)
    assert reject is not None and reject.reason == reason
