"""The question word attaches to the main clause (issue 26 point 2): a whitelist read from the parse.

Questions marked with a sample id ("s:674:277:0", page 674 = Anatomy) are what the offline build of
../shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 wrote for a page with an even page id (the
tuning half). In FAILING, the first group passed every question gate before `wh_outside_main_clause`
(they were samples of that build), the second was rejected by the gates it replaces (wh_in_parsed_clause,
wh_in_modifier); "invented" questions stand for a class the tuning half has no instance of.
"""

from __future__ import annotations

import pytest

from irbgen.irb.gates import question_failure, wh_outside_main_clause
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import GeneratedQuestion, NodeChange, PlanHop, QuestionPlan, Triple

REASON = "question_wh_outside_main_clause"

FAILING = [
    # --- samples the earlier gates let through
    ("Prudhoe Bay on which place's North Slope is still the second highest-yielding oil field in the United "
     "States, typically producing about 400000 oilbbl/d, although by early 2014 North Dakota's Bakken "
     "Formation was producing over 900000 oilbbl/d?",
     "the modifier \"on which place's North Slope\" after 'Bay'"),  # s:624:231:0/2
    ("A. Vesalius (1514–1564) (Latinized from Andries van Wezel), professor of anatomy at which "
     "organization, is considered the founder of modern human anatomy?",
     "the appositive 'professor of anatomy at which organization'"),  # s:674:277:0
    ("The Alaska Native Language Center at which organization claims that at least 20 Alaskan native "
     "languages exist and there are also some languages with different dialects?", "'at which organization"),
    # s:624:174:0
    ("Einstein became a full professor at the German Charles-Ferdinand University in which place 105 years "
     "ago?", "the name 'German Charles-Ferdinand University in which place'"),  # s:736:81:0/2, shortened
    ("The Ottomans erected their garrisons throughout southern Albania by 1415 and occupied most of Albania "
     "by what year?", "the conjunct 'occupied most of Albania by what year'"),  # s:738:67:0/2
    ("The number of European Pied-Noirs who fled which country totaled more than 900,000 between 1962 and "
     "1964?", "clause"),  # s:358:150:0
    ("Average daily consumption in which country is about 37000 LT?",
     "the modifier 'in which country' after 'consumption'"),  # s:690:174:0
    ("In 1629 pirate ships from which country raided the Faroe Islands?",
     "the modifier 'from which country' after 'ships'"),  # s:358:123:0
    ("The first person born in which place to fly in space was P. Baudry (France), 31 years ago?",
     "the modifier 'born in which place to fly in space'"),  # s:664:62:0
    ("Namibia signed a mutual defense pact with its northern neighbor which country 17 years ago?",
     "'which country'"),  # s:710:22:0/2
    ("Alaska has an independence movement favoring a vote on secession from which country, with the "
     "Alaskan Independence Party?", "the modifier 'favoring a vote on secession from which country'"),
    # s:624:355:0/2
    ("The prominent Italian anarchist C. Berneri, who volunteered to fight against Franco was killed instead "
     "in Spain by gunmen associated with which organization?",
     "the modifier 'associated with which organization'"),  # s:12:166:0/2
    ("Azerbaijan holds observer status in the Non-Aligned Movement and World Trade Organization and is a "
     "correspondent at what?", "the conjunct 'is a correspondent at what'"),  # s:746:207:0
    ("A. Tarkovsky was in the same class as Irma Raush whom he married in what month and year?",
     "the relative clause 'whom he married in what month and year'"),  # s:676:26:0/2
    ("Many Russians and Armenians left the country whose defense budget for 2011 was set at US$3.1 billion "
     "when?", "the relative clause 'whose defense budget"),  # m:746:324:0>746:107:0/2, its final question
    ("The Albanian republic is a parliamentary democracy established under a constitution renewed in what "
     "year?", "the modifier 'established under a constitution renewed in what year'"),  # s:738:204:0
    # --- rejected before by the gates this one replaces
    ("The Groupe Salafiste pour la Prédication et le Combat (GSPC), a splinter group of which organization, "
     "continued a terrorist campaign against the Government?",
     "the appositive 'a splinter group of which organization'"),  # s:358:177:0
    ("João Manuel Bernardo, the current ambassador of which country to China, visited the PRC 8 years ago?",
     "the appositive"),  # s:710:70:0/2
    ("The Academy Awards, first presented in what year at the Hollywood Roosevelt Hotel, are overseen by "
     "A.M.P.A.S?", "the modifier 'first presented in what year at the Hollywood Roosevelt Hotel'"),
    # s:324:2:0/2 (the parser makes "presented" the root: read from the tags)
    ("A secret German facility, apparently the largest of the Third Reich, covering how many acres in an "
     "underground complex, was being re-excavated in Austria 1 year ago?", "'covering how many acres"),
    # s:736:176:0/2
    ("Demographic and Health Surveys completed a survey 7 years ago, detailing various health statistics in "
     "which country, including male circumcision, abortion and more?", "'detailing various health"),
    # s:738:550:0/2
    ("The Provisional Government of Albania was a government of ten members, led by whom until his "
     "resignation 102 years ago?", "the modifier 'led by whom"),  # s:738:106:0/2
    ("Algeria's crude oil production stands at around 1.1 million barrels/day, but it is also a major gas "
     "producer and exporter, with important links to which place?", "two coordinated main clauses"),
    # s:358:291:0/2
    ("As a quintessentially Greek god, Apollo had no direct Roman equivalent, although later Roman poets "
     "often referred to him as what?", "the adverbial clause 'although later Roman poets"),  # s:594:586:0
    ("P. Tuan of Vietnam became the first Asian in space when he flew aboard Soyuz 37 on what date?",
     "the adverbial clause 'when he flew aboard Soyuz 37 on what date'"),  # s:664:59:0/2
    ("The Academy sent a letter advising its 6,000 or so voting members that an online system for Oscar "
     "voting will be implemented in 2013 in what month and year?", "'that an online system"),
    # s:324:83:0
    # --- invented
    ("Rowe sat on the board of Tessel Bank, a regional bank in which place, in 2007?", "the appositive"),
    ("The North is hilly, with which river cutting a valley through it?", "the absolute phrase"),
    ("After the 2011 death of the founder in which country, the firm moved to Paris?", "'in which country"),
    # the wtf set's United Kingdom (page 52): "Prior to the Fixed-term Parliaments Act 2011, the ..."
    ("Prior to the Fixed-term Parliaments Act of what year, the Parliament Acts 1911 and 1949 required "
     "that a new election must be called within five years?", "'Prior to the Fixed-term Parliaments Act"),
    ("Prior to independence in what year, the colony had a community of about 10,000 settlers?",
     "'Prior to independence in what year'"),  # invented: "Prior" is tagged an adverb
    ("Whilst education in which place is the responsibility of the Department, the day-to-day "
     "administration is local?", "the relative clause 'in which place is the responsibility"),
]  # fmt: skip


@pytest.mark.parametrize(("question", "inside"), FAILING)
def test_a_question_word_outside_the_main_clause_fails(nlp, question, inside):
    detail = wh_outside_main_clause(nlp(question))
    assert detail is not None and inside in detail, detail


PASSING = [
    # the main verb's subject, object or prepositional object, or one possessor or of-phrase on it
    "Einstein was appointed associate professor in what year?",  # s:736:80:0/2
    "Which country's educational system is patterned after the Dutch system of education?",
    "Algiers, Oran, Constantine, and Annaba are which country's main cities?",  # s:358:...
    "According to the 2011 Census results, the total population of which country is 2,821,977 with a low "
    "Fertility rate of 1.49 children born per woman?",
    "Who was born in Ulm, in the Kingdom of Württemberg in the German Empire 137 years ago?",
    'The Tax Foundation ranked which place as having the fourth most "business friendly" tax policy, behind '
    "only Wyoming, South Dakota, and Nevada 2 years ago?",  # s:624:372:0/2
    "The Ottomans erected their garrisons throughout southern Albania by what year and occupied most of "
    "Albania by 1431?",  # s:738:67:0: the first conjunct is the main clause
    "As of November 2014, which place's unemployment rate was 6.6%?",  # s:624:165:0
    "Teuta was eventually succeeded by whom in 181 BC?",  # s:738:...
    "How many people live in the Faroe Islands?",  # invented
    "When did Algeria join OPEC?",  # invented
    "Michael Rowe of which organization estimated that the loss was large?",  # invented
    "Which country's oldest mosque, the X Mosque, is located in Y?",  # invented
    # where the parser hangs the wh-phrase elsewhere, read as a reader would
    "Taylor Wang became the first ethnic Chinese person in space in what month and year?",  # s:664:...
    "Azerbaijan has deployed 151 of its Peacekeeping Forces in Iraq and another 184 in which country?",
    "The sovereign state that has the second largest military in North Africa with the largest defence "
    "budget in Africa ($10 billion) is classified as an upper middle income country by which organization?",
    "Azerbaijan was cited as one of the top 10 reformers by which organization 8 years ago?",  # s:746:338:0/2
    "According to the Albanian Institute of Statistics, the population of Albania is what amount as of 1 "
    "January 2015?",  # s:738:423:0/2 ("what amount" parsed as a clause)
    "According to a 2013 study by Phoenix Marketing International, which place had the fifth-largest "
    "number of millionaires per capita in the United States, with a ratio of 6.75 percent?",  # s:624:217:0
    "The Paleolithic finds of which country show great similarities with objects of the same era found at "
    "C. Stijena in Montenegro and north-western Greece?",  # s:738:32:0/1 (the parser's root: "finds")
    # s:746:92:0: the parser takes "carried out by" for the main verb
    "Operation Edelweiss carried out by the German Wehrmacht targeted which place because of its importance "
    "as the energy (petroleum) dynamo of the USSR?",
    "Under the pretext of a slight to their consul, the French invaded and captured which place 186 years "
    "ago?",  # s:358:130:0: two verbs share the object
    "Roughly 900,000 people have migrated out of which country, about 600,000 of them settling in Greece "
    "between 1991 and 2004?",  # s:738:420:0
    "The region of the Lesser Caucasus accounts for most of which country's gold, silver, iron, copper?",
    "A. A. Mohmand became the first Afghan to reach space, spending nine days aboard the Mir space station "
    "in what year?",  # s:664:64:0/2
    "Einstein applied the general theory of relativity to model the large-scale structure of the universe "
    "in what year?",  # s:736:10:0/2
    'Who describes how, with "virtually no audible protest being raised by their colleagues," thousands of '
    "Jewish scientists were suddenly forced to give up their university positions?",  # s:736:144:0
    "Who studied continuum mechanics, the molecular theory of heat, and the problem of gravitation, on which "
    "he worked with mathematician and his friend M. Grossmann?",  # s:736:85:0: ", on which" relates
    "Which place was formerly the only state in which possession of one ounce or less of marijuana in one's "
    "home was completely legal under state law?",  # s:624:354:0: "in which" relates
    "While ferries on Lake Orin were run by Orin County, which company began a service in 1962?",  # invented
    # multi-hop: the bridge is described by a relative clause, the question word is in the main clause
    "The state that has the largest Quaker population (by percentage) of any state has an independence "
    "movement favoring a vote on secession from the United States, with which organization?",
    "The person who was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March 1879 was "
    "appointed associate professor in what year?",  # m:736:21:0>736:80:0/2
    # m:358:254:0>358:123:0/2
    "In 1629 pirate ships from the sovereign state that has the second largest military in North Africa "
    "with the largest defence budget in Africa ($10 billion) raided which country?",
]


@pytest.mark.parametrize("question", PASSING)
def test_a_question_word_in_the_main_clause_passes(nlp, question):
    assert wh_outside_main_clause(nlp(question)) is None


def test_question_failure_names_the_gate(nlp):
    question = FAILING[1][0]
    failure = question_failure(question, "ORG", nlp(question), answer="University of Padua")
    assert failure is not None and failure[0] == REASON, failure
    assert failure[1] == "question word inside the appositive 'professor of anatomy at which organization'"


# --- the stage: single-hop, multi-hop and false-premise questions --------------------------------------

BORN = PlanHop(
    fact_id="736:21:0",
    keypoints=["Albert Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 "
               "March 1879."],
    triples=[Triple(head="Albert Einstein", head_type="Person", relation="was born in", tail="Ulm",
                    tail_type="Location")],
    answer="Albert Einstein",
    answer_type="Person",
    answer_label="PERSON",
    documents=["d1"],
)  # fmt: skip
BORN_ASKED = "Who was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March 1879?"


def _hop(fact_id: str, keypoint: str, answer: str, answer_type: str, label: str) -> PlanHop:
    triple = Triple(head="Einstein", head_type="Person", relation="has", tail=answer, tail_type=answer_type)
    return PlanHop(
        fact_id=fact_id,
        keypoints=[keypoint],
        triples=[triple],
        answer=answer,
        answer_type=answer_type,
        answer_label=label,
        bridge="Einstein",
        documents=["d2"],
    )


def _gate(plan: QuestionPlan, sub_questions: list[str]) -> str | None:
    question = GeneratedQuestion(
        plan_id=plan.id, question=sub_questions[-1], sub_questions=sub_questions, method="rules"
    )
    reject = WriteQuestions("rules").gate(plan, question)
    return None if reject is None else reject.reason


def test_the_stage_rejects_a_multi_hop_question_whose_question_word_is_in_a_modifier():
    affiliation = _hop(
        "736:166:0",
        "Einstein's affiliation with the Institute for Advanced Study would last until his death in 1955.",
        "the Institute for Advanced Study",
        "Organization",
        "ORG",
    )
    plan = QuestionPlan(id="m:736:21:0>736:166:0", kind="multi_hop", hops=[BORN, affiliation])
    final = (
        "The affiliation of the person who was born in Ulm, in the Kingdom of Württemberg in the German "
        "Empire on 14 March 1879 with which organization would last until his death in 1955?"
    )  # m:736:21:0>736:166:0
    assert _gate(plan, [BORN_ASKED, final]) == REASON


def test_the_stage_keeps_a_multi_hop_question_whose_bridge_is_a_relative_clause():
    appointed = _hop(
        "736:80:0", "Einstein was appointed associate professor in 1909.", "1909", "Date", "DATE"
    )
    plan = QuestionPlan(id="m:736:21:0>736:80:0/2", kind="multi_hop", hops=[BORN, appointed])
    final = (
        "The person who was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March 1879 "
        "was appointed associate professor in what year?"
    )  # m:736:21:0>736:80:0/2
    assert _gate(plan, [BORN_ASKED, final]) is None


def test_the_stage_rejects_a_false_premise_question_whose_question_word_is_in_a_modifier():
    hop = PlanHop(
        fact_id="736:399:0",
        keypoints=[
            "Barbara Wolff, of The Hebrew University's Albert Einstein Archives, told the BBC that there are "
            "about 3,500 pages of private correspondence written between 1912 and 1955."
        ],
        triples=[Triple(head="Barbara Wolff", head_type="Person", relation="of", tail="The Hebrew University",
                        tail_type="Organization")],
        answer="The Hebrew University",
        answer_type="Organization",
        answer_label="ORG",
        documents=["d3"],
    )  # fmt: skip
    change = NodeChange(
        node="Barbara Wolff", node_type="Person", replacement="B. Hussein", kind="false_premise",
        rule="other_surname",
    )  # fmt: skip
    plan = QuestionPlan(id="f:s:736:399:0/2", kind="false_premise", hops=[hop], changes=[change])
    question = (
        "B. Hussein, of which organization's Albert Einstein Archives, told the BBC that there are about "
        "3,500 pages of private correspondence written between 1912 and 1955?"
    )  # f:s:736:399:0/2
    assert _gate(plan, [question]) == REASON
