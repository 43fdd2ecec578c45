"""False premises (irb/premises.py, plans.false_premise_plans): only a Date or a Quantity changed by a
clear margin, only where the change makes the claim false, never nonsense. Every sentence is a keypoint
of the tuning half (even page ids) of the 106 realdata articles; the fact id is beside it."""

from __future__ import annotations

import random
import re
from datetime import date
from decimal import Decimal

import pytest

from irbgen.irb.plans import _false_change, false_premise_plans
from irbgen.irb.premises import (
    Refusal,
    clear_margin,
    date_margin,
    perturb,
    roundings,
    wrong_relative_time,
)
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import NodeChange, PlanHop, QuestionPlan, Triple

REFERENCE = date(2016, 5, 1)  # the realdata builds' reference date
SEEDS = range(120)
BORN = (  # 736:21:0
    "Albert Einstein was born in Ulm, in the Kingdom of Württemberg in the German Empire on 14 March 1879."
)
BORN_ROWS = [
    ("Albert Einstein", "Person", "was born in", "Ulm", "Location"),
    ("Albert Einstein", "Person", "was born in", "the Kingdom of Württemberg", "Location"),
    ("Albert Einstein", "Person", "was born in", "the German Empire", "Location"),
    ("Albert Einstein", "Person", "was born on", "14 March 1879", "Date"),
]
US = (  # 572:29:0/2 was "Public expenditures on agricultural research in Ethiopia exceeded ..."
    "After 1906, public expenditures on agricultural research in the US exceeded private expenditures for "
    "the next 44 years."
)


def false_values(node: str, node_type: str, sentence: str) -> list[NodeChange | Refusal]:
    return [perturb(node, node_type, REFERENCE, random.Random(seed), [sentence]) for seed in SEEDS]


def number(text: str) -> Decimal:
    return Decimal(re.search(r"\d[\d,]*(?:\.\d+)?", text).group(0).replace(",", ""))


# --- quantities ---------------------------------------------------------------------------------------

DEFENCE = (  # 358:254:0
    "Algeria has the second largest military in North Africa with the largest defence budget in Africa "
    "($10 billion)."
)


def test_an_exact_number_moves_by_at_least_30_percent_and_never_to_a_rounding_of_it():
    for change in false_values("$10 billion", "Quantity", DEFENCE):
        factor = number(change.replacement) / 10
        assert factor <= Decimal("0.7") or factor >= Decimal("1.4"), change.replacement
    # 466 merchant ships (358:119:0) may not become 500 or 470; 145 may not become 100 (a 0.69x move)
    assert roundings(Decimal(466)) == {Decimal(500), Decimal(470), Decimal(466)}
    assert not clear_margin(Decimal(145), Decimal(100), "exact")
    assert clear_margin(Decimal(145), Decimal(90), "exact")


def test_a_hedged_number_moves_by_at_least_half_so_about_2_percent_never_becomes_about_1():
    sentence = "Algeria's external debt is extremely low at about 2% of GDP."  # 358:282:0
    said = {change.replacement for change in false_values("about 2%", "Quantity", sentence)}
    assert "about 1%" not in said and said
    for replacement in said:
        factor = number(replacement) / 2
        assert factor <= Decimal("0.4") or factor >= 2, replacement
    sentence = (  # 738:420:0: a hedged value keeps its precision ("roughly 4,000,000", not 3,575,420)
        "Between 1991 and 2004, roughly 900,000 people have migrated out of Albania, about 600,000 of them "
        "settling in Greece."
    )
    for change in false_values("roughly 900,000 people", "Quantity", sentence):
        assert re.fullmatch(r"roughly \d,?000,000 people|roughly [1-3]00,000 people", change.replacement)


def test_a_lower_bound_only_rises_and_an_upper_bound_only_falls_by_a_clear_margin():
    sentence = (  # 358:150:0
        "The number of European Pied-Noirs who fled Algeria totaled more than 900,000 between 1962 and 1964."
    )
    for change in false_values("more than 900,000", "Quantity", sentence):
        assert number(change.replacement) >= Decimal("1.5") * 900_000, change.replacement
    sentence = "Shah Deniz is expected to produce up to 296 billion cubic meters of natural gas per year."
    for change in false_values("up to 296 billion cubic meters", "Quantity", sentence):  # 746:372:0
        assert 0 < number(change.replacement) <= Decimal("0.6") * 296, change.replacement


@pytest.mark.parametrize(
    ("node", "sentence", "reason"),
    [
        (  # 600:4:0: "559 metres (3,356 ft)" contradicts itself
            "1,023 metres",
            "Andorra's capital Andorra la Vella is the highest capital city in Europe, at an elevation of "
            "1,023 metres (3,356 ft) above sea level.",
            "quantity_with_conversion",
        ),
        (  # 600:3:0: the unit "km2" holds a digit
            "468 km2",
            "Andorra is the sixth-smallest nation in Europe, having an area of 468 km2 (181 sq mi) and a "
            "population of approximately 85,000.",
            "quantity_with_conversion",
        ),
        (  # 358:146:0
            "30,000",
            "Historians have estimated that between 30,000 and 150,000 Harkis and their dependents were "
            "killed by the Front de Libération Nationale (FLN) or by lynch mobs in Algeria.",
            "quantity_in_range",
        ),
        (
            "9",
            "9 out of 11 existing climate zones are present in Azerbaijan.",
            "quantity_in_ratio",
        ),  # 746:149:0
        ("181 BC", "Teuta was succeeded by Gentius in 181 BC.", "quantity_is_a_year"),  # 738:43:0
        (  # 358:123:0: "In 3256 pirate ships from Algeria raided ..."
            "1629 pirate ships",
            "In 1629 pirate ships from Algeria raided the Faroe Islands.",
            "quantity_is_a_year",
        ),
        (  # 700:138:0: "Schopenhauer's 3304 essay" is no essay; a year names it
            "1851 essay",
            "In Schopenhauer's 1851 essay On Women, he expressed his opposition to what he called "
            '"Teutonico-Christian stupidity" of reflexive unexamined reverence.',
            "quantity_is_a_year",
        ),
        (  # 704:1:0: the 2014 census, not a count of censuses ("census" ends in s but is one)
            "2014 census data",
            "According to 2014 census data, Angola had a population of 24.3 million inhabitants in 2014.",
            "quantity_is_a_year",
        ),
        (  # 664:78:0: "the Apollo 32 emergency" names nothing
            "the Apollo 13 emergency",
            "The farthest distance from Earth an astronaut has traveled was 401056 km, when Jim Lovell, Jack "
            "Swigert, and Fred Haise went around the Moon during the Apollo 13 emergency.",
            "quantity_in_name",
        ),
        (  # 624:304:0: "the lower 92"
            "the lower 48",
            "In 2000, the U.S. Congress authorized $6 million to study the feasibility of a rail link "
            "between Alaska, Canada, and the lower 48.",
            "quantity_in_name",
        ),
    ],
)
def test_a_number_whose_change_would_be_nonsense_is_refused(node, sentence, reason):
    refusal = perturb(node, "Quantity", REFERENCE, random.Random(0), [sentence])
    assert isinstance(refusal, Refusal) and refusal.reason == reason, refusal


def test_a_changed_number_keeps_its_article_right():
    sentence = (  # 738:315:0
        "In February 2009 Italian company Enel announced plans to build an 800 MW coal-fired power plant in "
        "Albania, to diversify electricity sources."
    )
    for change in false_values("an 800 MW coal-fired power plant", "Quantity", sentence):
        article = "an" if change.replacement.split()[1].startswith(("8", "11 ", "18 ")) else "a"
        assert change.replacement.split()[0] == article, change.replacement


# --- dates --------------------------------------------------------------------------------------------


def test_a_date_of_an_event_moves_by_at_least_three_years_and_a_tenth_of_its_age():
    said = {change.replacement for change in false_values("14 March 1879", "Date", BORN)}  # 137 years
    years = {int(re.match(r"\d+", phrase).group(0)) for phrase in said}
    assert years and all(abs(n - 137) >= 14 for n in years) and date_margin(137.1) == 14
    sentence = "In April 1985, Taylor Wang became the first ethnic Chinese person in space."  # 664:61:0
    said = {change.replacement for change in false_values("April 1985", "Date", sentence)}
    assert said and not said & {f"{n} years ago" for n in range(28, 35)}  # 31 years before


@pytest.mark.parametrize(
    ("node", "sentence", "reason"),
    [
        (  # 690:37:0: a bound moved may keep the claim true
            "1954",
            "By 1954, the Charter of the Kingdom of the Netherlands was established, providing a framework "
            "for relations between Aruba and the rest of the Kingdom.",
            "date_not_when",
        ),
        (  # 738:67:0
            "1415",
            "The Ottomans erected their garrisons throughout southern Albania by 1415 and occupied most of "
            "Albania by 1431.",
            "date_not_when",
        ),
        (  # 710:69:0: "since the end of the civil war 18 years ago"
            "2002",
            "The PRC has invested heavily in Angola since the end of the civil war in 2002.",
            "date_under_bound",
        ),
        (  # 624:316:0
            "2012",
            "Anchorage recently completed extensive remodeling and construction at Ted Stevens Anchorage "
            "International Airport to help accommodate the upsurge in tourism (in 2012-2013, Alaska received "
            "almost 2 million visitors).",
            "date_in_span",
        ),
        (  # 572:29:0
            "the next 44 years",
            US,
            "date_unparsed",
        ),
    ],
)
def test_a_date_that_is_a_bound_or_a_span_is_refused(node, sentence, reason):
    refusal = perturb(node, "Date", REFERENCE, random.Random(0), [sentence])
    assert isinstance(refusal, Refusal) and refusal.reason == reason, refusal


def test_wrong_relative_time_keeps_its_margin_from_every_day_the_date_may_mean():
    said = {wrong_relative_time("2014", REFERENCE, random.Random(seed)) for seed in SEEDS}  # 1.3-2.3 years
    assert said and all(int(phrase.split()[0]) >= 6 for phrase in said)


# --- plans --------------------------------------------------------------------------------------------


def hop(keypoint: str, rows, answer: str, answer_type: str, label: str | None, bridge=None) -> PlanHop:
    triples = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in rows]
    return PlanHop(
        fact_id="x",
        keypoints=[keypoint],
        triples=triples,
        answer=answer,
        answer_type=answer_type,
        answer_label=label,
        bridge=bridge,
        documents=["d"],
    )


US_ROWS = [
    ("public expenditures", "Other", "on", "agricultural research", "Other"),
    ("agricultural research", "Other", "in", "the US", "Country"),
    ("public expenditures", "Other", "exceeded after", "1906", "Date"),
    ("public expenditures", "Other", "exceeded", "private expenditures", "Other"),
    ("public expenditures", "Other", "exceeded for", "the next 44 years", "Date"),
]


def test_people_and_countries_are_never_swapped():
    """s:736:21:0/2 became "A. Triantafyllou was born in Ulm ...", s:572:29:0/2 put Ethiopia for the US."""
    born = QuestionPlan(
        id="s:736:21:0/2", kind="single_hop", hops=[hop(BORN, BORN_ROWS, "14 March 1879", "Date", "DATE")]
    )
    us = QuestionPlan(id="s:572:29:0/2", kind="single_hop", hops=[hop(US, US_ROWS, "1906", "Date", "DATE")])
    for plan in (born, us):
        for seed in range(20):
            refusals = _false_change(plan, REFERENCE, seed)
            assert isinstance(refusals, list), refusals
    assert [r.reason for r in _false_change(born, REFERENCE, 0)] == ["no_date_or_quantity"]
    assert [r.reason for r in _false_change(us, REFERENCE, 0)] == ["date_unparsed"]
    plans, rejects = false_premise_plans([born, us], 0.5, REFERENCE, 0)
    assert plans == [] and [r.reason for r in rejects] == ["false_premise_short"]
    assert rejects[0].extra["refused"] == {"date_unparsed": 1, "no_date_or_quantity": 1}
    assert "no_date_or_quantity: 1" in rejects[0].detail


def test_a_multi_hop_plan_gets_no_false_premise():
    """m:736:21:0>736:80:0/2 became "The person who was born in Ulm ... 135 years ago was appointed ..."."""
    first = hop(BORN, BORN_ROWS, "Albert Einstein", "Person", "PERSON")
    rows = [
        ("Einstein", "Person", "was appointed", "associate professor", "Other"),
        ("Einstein", "Person", "was appointed in", "1909", "Date"),
    ]
    second = hop(
        "Einstein was appointed associate professor in 1909.", rows, "1909", "Date", "DATE", "Einstein"
    )
    plan = QuestionPlan(id="m:736:21:0>736:80:0/2", kind="multi_hop", hops=[first, second])
    assert [r.reason for r in _false_change(plan, REFERENCE, 0)] == ["not_single_hop"]


def test_a_value_and_its_time_are_never_moved_apart():
    """s:706:95:0 "Trade ... exceeded what amount 1 year ago?" asks about another year: no false premise."""
    rows = [
        ("Trade", "Other", "between", "Angola", "Country"),
        ("Trade", "Other", "exceeded", "USD 300 million", "Quantity"),
        ("Trade", "Other", "exceeded in", "2007", "Date"),
    ]
    keypoint = "Trade between Angola and South Africa exceeded USD 300 million in 2007."
    plan = QuestionPlan(
        id="s:706:95:0", kind="single_hop", hops=[hop(keypoint, rows, "USD 300 million", "Quantity", "MONEY")]
    )
    assert [r.reason for r in _false_change(plan, REFERENCE, 0)] == ["value_and_time"]


DWAN_ROWS = [
    ("Allan Dwan", "Person", "directed", "his last movie", "Other"),
    ("Allan Dwan", "Person", "directed in", "1961", "Date"),
]


def test_a_false_premise_question_passes_every_gate_of_its_true_question():
    """f:s:344:17:0: the question without its false premise is rejected by the question gates, and so is
    the false premise, by the gate the true question fails."""
    base = hop("Allan Dwan directed his last movie in 1961.", DWAN_ROWS, "Allan Dwan", "Person", "PERSON")
    plan = QuestionPlan(id="s:344:17:0", kind="single_hop", hops=[base])
    change = _false_change(plan, REFERENCE, 0)
    assert isinstance(change, NodeChange) and change.node == "1961"
    false = QuestionPlan(id="f:s:344:17:0", kind="false_premise", hops=[base], changes=[change])
    reject = WriteQuestions("rules").rules(false)
    assert reject.reason == "question_unanchored" and reject.detail.startswith("without its false premise")


def single(plan_id: str, keypoint: str, rows, answer: str, answer_type: str, label: str) -> QuestionPlan:
    return QuestionPlan(id=plan_id, kind="single_hop", hops=[hop(keypoint, rows, answer, answer_type, label)])


FOREIGN_MEMBER = single(  # f:s:736:92:0 "Who became Foreign Member of ... 84 years ago?": many did
    "s:736:92:0",
    "In 1920, Albert Einstein became Foreign Member of the Royal Netherlands Academy of Arts and Sciences.",
    [
        ("Albert Einstein", "Person", "became in", "1920", "Date"),
        (
            "Albert Einstein",
            "Person",
            "became",
            "Foreign Member of the Royal Netherlands Academy of Arts and Sciences",
            "Organization",
        ),
    ],  # fmt: skip
    "Albert Einstein",
    "Person",
    "PERSON",
)
CITIZEN = single(  # f:s:736:12:0 "Who settled in the U.S., becoming an American citizen 86 years ago?"
    "s:736:12:0",
    "Albert Einstein settled in the U.S., becoming an American citizen in 1940.",
    [
        ("Albert Einstein", "Person", "settled in", "the U.S.", "Country"),
        ("Albert Einstein", "Person", "becoming", "an American citizen", "Other"),
        ("Albert Einstein", "Person", "becoming in", "1940", "Date"),
    ],
    "Albert Einstein",
    "Person",
    "PERSON",
)
FIRST = single(  # one of a kind: in another year nobody became the first
    "s:664:61:0",
    "In April 1985, Taylor Wang became the first ethnic Chinese person in space.",
    [
        ("Taylor Wang", "Person", "became in", "April 1985", "Date"),
        ("Taylor Wang", "Person", "became", "the first ethnic Chinese person", "Other"),
    ],
    "Taylor Wang",
    "Person",
    "PERSON",
)
TAX = single(  # f:s:624:372:0: the index comes out every year
    "s:624:372:0",
    'In 2014 the Tax Foundation ranked Alaska as having the fourth most "business friendly" tax policy, '
    "behind only Wyoming, South Dakota, and Nevada.",
    [
        ("the Tax Foundation", "Organization", "ranked in", "2014", "Date"),
        ("the Tax Foundation", "Organization", "ranked", "Alaska", "Location"),
    ],
    "Alaska",
    "Location",
    "GPE",
)


def test_a_date_is_not_moved_where_another_may_have_done_the_same_then_or_a_ranking_recurs():
    assert [r.reason for r in _false_change(FOREIGN_MEMBER, REFERENCE, 0)] == ["date_of_a_common_event"]
    assert [r.reason for r in _false_change(CITIZEN, REFERENCE, 0)] == ["date_of_a_common_event"]
    assert [r.reason for r in _false_change(TAX, REFERENCE, 0)] == ["date_of_a_ranking"]
    assert isinstance(_false_change(FIRST, REFERENCE, 0), NodeChange)
    # asking for the country, the premise is Einstein's own: "A. Einstein settled in which country, ..."
    country = CITIZEN.model_copy(update={"id": "s:736:12:0/2"})
    country.hops[0] = country.hops[0].model_copy(update={"answer": "the U.S.", "answer_type": "Country"})
    assert isinstance(_false_change(country, REFERENCE, 0), NodeChange)


NISSEN = single(  # f:s:736:227:0 read "... reinforced surgically by R. Nissen 81 years ago on 17 April 1955?"
    "s:736:227:0",
    "On 17 April 1955, Albert Einstein experienced internal bleeding caused by the rupture of an abdominal "
    "aortic aneurysm, which had previously been reinforced surgically by Rudolph Nissen in 1948.",
    [
        ("Albert Einstein", "Person", "experienced on", "17 April 1955", "Date"),
        ("Albert Einstein", "Person", "experienced", "internal bleeding", "Other"),
        (
            "an abdominal aortic aneurysm",
            "Other",
            "had been reinforced surgically by",
            "Rudolph Nissen",
            "Person",
        ),
        ("an abdominal aortic aneurysm", "Other", "had been reinforced surgically in", "1948", "Date"),
    ],
    "Albert Einstein",
    "Person",
    "PERSON",
)


def test_a_date_beside_another_date_is_not_moved():
    refusals = _false_change(NISSEN, REFERENCE, 0)
    assert isinstance(refusals, list) and {r.reason for r in refusals} == {"date_beside_another_date"}


LITERACY = single(  # f:s:746:429:0 "... the literacy rate in which country is 32.7 percent?": others may be
    "s:746:429:0",
    "According to the United Nations Development Program Report 2009, the literacy rate in Azerbaijan is "
    "99.5 percent.",
    [
        ("the literacy rate", "Other", "in", "Azerbaijan", "Country"),
        ("the literacy rate", "Other", "is", "99.5 percent", "Quantity"),
    ],
    "Azerbaijan",
    "Country",
    "GPE",
)
DEBT = single(  # f:s:358:282:0 "Which country's external debt is extremely low at about 7% of GDP?"
    "s:358:282:0",
    "Algeria's external debt is extremely low at about 2% of GDP.",
    [
        ("Algeria", "Country", "has", "external debt", "Other"),
        ("external debt", "Other", "is at", "about 2%", "Quantity"),
    ],
    "Algeria",
    "Country",
    "GPE",
)
BUDGET = single(  # "the largest defence budget in Africa" is one of a kind
    "s:358:254:0",
    DEFENCE,
    [
        ("Algeria", "Country", "has with", "$10 billion", "Quantity"),
        ("$10 billion", "Quantity", "is", "the largest defence budget", "Other"),
    ],
    "Algeria",
    "Country",
    "GPE",
)
CONVERTS = single(  # a new exact value of 4 or more digits is no other country's
    "s:358:358:0/2",
    "A 2015 study estimates 380,000 Muslims converted to Christianity in Algeria.",
    [
        ("A 2015 study", "Other", "estimates", "380,000 Muslims", "Quantity"),
        ("380,000 Muslims", "Quantity", "converted in", "Algeria", "Country"),
    ],
    "Algeria",
    "Country",
    "GPE",
)


RELIGION = single(  # f:s:746:417:0 "Only 59% of respondents from which country stated ...?"
    "s:746:417:0",
    "In a 2006–2008 Gallup poll, only 21% of respondents from Azerbaijan stated that religion is an "
    "important part of their daily lives.",
    [
        ("only 21%", "Quantity", "of", "respondents", "Other"),
        ("respondents", "Other", "from", "Azerbaijan", "Country"),
        ("only 21%", "Quantity", "stated in", "a 2006–2008 Gallup poll", "Other"),
    ],
    "Azerbaijan",
    "Country",
    "GPE",
)


def test_a_value_the_answer_holds_changes_only_where_no_other_may_hold_it():
    for plan in (LITERACY, DEBT, RELIGION):
        for seed in range(10):
            refusals = _false_change(plan, REFERENCE, seed)
            assert [r.reason for r in refusals] == ["value_of_the_answer"], refusals
    for plan in (BUDGET, CONVERTS):
        for seed in range(10):
            assert isinstance(_false_change(plan, REFERENCE, seed), NodeChange)


def test_a_date_beside_the_asked_date_or_after_an_apposition_is_not_changed():
    """Round 10, realdata tuning half: f:s:738:312:0/2 read "IMF predicted 2.6% growth for Albania in what
    year and 3.2% 14 years ago?"; f:s:746:575:0 "... the 2015 European Games, the first to be held in
    competition's history 7 years ago?", where the false date seemed to date the apposition."""
    imf = "International Monetary Fund (IMF) predicted 2.6% growth for Albania in 2010 and 3.2% in 2011."
    imf_rows = [
        ("International Monetary Fund", "Organization", "predicted growth in", "2010", "Date"),
        ("International Monetary Fund", "Organization", "predicted growth in", "2011", "Date"),
    ]
    asked = QuestionPlan(
        id="s:738:312:0/2", kind="single_hop", hops=[hop(imf, imf_rows, "2010", "Date", "DATE")]
    )
    assert "date_beside_asked_date" in [r.reason for r in _false_change(asked, REFERENCE, 0)]
    baku = (
        "On 8 December 2012, Baku was selected to host the 2015 European Games, the first to be held in "
        "competition's history."
    )
    baku_rows = [("Baku", "Location", "was selected on", "8 December 2012", "Date")]
    games = QuestionPlan(
        id="s:746:575:0", kind="single_hop", hops=[hop(baku, baku_rows, "Baku", "Location", "GPE")]
    )
    assert [r.reason for r in _false_change(games, REFERENCE, 0)] == ["fronted_date"]
    # a fronted date before a plain clause still changes: Astronaut (page 664)
    briton = "In 1991, Helen Sharman became the first Briton to fly in space."
    briton_rows = [("Helen Sharman", "Person", "became in", "1991", "Date")]
    plan = QuestionPlan(
        id="s:664:69:0",
        kind="single_hop",
        hops=[hop(briton, briton_rows, "Helen Sharman", "Person", "PERSON")],
    )
    assert not isinstance(_false_change(plan, REFERENCE, 0), list)
