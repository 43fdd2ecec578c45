"""Node transforms (paraphrases, false premises, applying them) and whole question plans."""

from __future__ import annotations

import random
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irbgen.errors import BadInputError
from irbgen.irb.plans import false_premise_target, make_plans
from irbgen.irb.premises import Refusal, perturb, perturbed_value, wrong_relative_time
from irbgen.irb.records import Entity, Fact, GroundedKeypoint, KnowledgeGraph, NodeChange, Triple
from irbgen.irb.transforms import (
    apply_changes,
    country_code,
    flag_phrase,
    initials_and_surname,
    load_surnames,
    number_words,
    paraphrase,
    parse_date,
    relative_time,
)

REPO = Path(__file__).resolve().parents[1]
IRB_REFERENCE = date(2025, 9, 29)  # the IRB paper's dump date


# --- dates ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reference", "expected"),
    [
        ("30 Nov 2024", IRB_REFERENCE, "9 months ago"),  # 29 Sep is a day short of the 10th month
        ("12 March 2024", IRB_REFERENCE, "1 year ago"),  # 18 months: months only under a year
        ("March 2024", IRB_REFERENCE, "1 year ago"),  # month precision: 18 calendar months
        ("May 12, 2024", IRB_REFERENCE, "1 year ago"),
        ("2024-03-12", IRB_REFERENCE, "1 year ago"),
        ("2023-09", IRB_REFERENCE, "2 years ago"),
        ("2007", IRB_REFERENCE, "18 years ago"),
        ("1 January 2020", IRB_REFERENCE, "5 years ago"),  # 5.74 years: 5 completed, never rounded up
        ("29 Sep 2025", IRB_REFERENCE, "today"),
        ("28 Sept 2025", IRB_REFERENCE, "1 day ago"),
        ("15 August 2025", IRB_REFERENCE, "1 month ago"),
        # the example: May 2019 at 1 December 2021 is 2 years and 7 months ago
        ("May 2019", date(2021, 12, 1), "2 years ago"),
        ("2019", date(2021, 12, 1), "2 years ago"),  # a year alone: calendar years, as a reader subtracts
        ("June 2021", date(2021, 12, 1), "6 months ago"),
        ("December 2020", date(2021, 12, 1), "1 year ago"),
        ("January 2021", date(2021, 12, 1), "11 months ago"),
        # a year or a month is complete on the same day of a later year or month
        ("1 December 2019", date(2021, 12, 1), "2 years ago"),
        ("2 December 2019", date(2021, 12, 1), "1 year ago"),
        ("30 November 2020", date(2021, 12, 1), "1 year ago"),
        ("2 December 2020", date(2021, 12, 1), "11 months ago"),
        ("1 November 2021", date(2021, 12, 1), "1 month ago"),
        ("2 November 2021", date(2021, 12, 1), "4 weeks ago"),  # 29 days
        ("31 January 2025", date(2025, 2, 28), "4 weeks ago"),  # February has no 31st
        ("31 January 2025", date(2025, 3, 1), "1 month ago"),
        # leap days: 29 February completes a year on 1 March of a common year
        ("29 February 2020", date(2021, 2, 28), "11 months ago"),
        ("29 February 2020", date(2021, 3, 1), "1 year ago"),
        ("29 February 2020", date(2024, 2, 28), "3 years ago"),
        ("29 February 2020", date(2024, 2, 29), "4 years ago"),
        ("1 March 2023", date(2024, 2, 29), "11 months ago"),
        # under a month: days under two weeks, then completed weeks
        ("18 November 2021", date(2021, 12, 1), "13 days ago"),
        ("17 November 2021", date(2021, 12, 1), "2 weeks ago"),
        ("4 November 2021", date(2021, 12, 1), "3 weeks ago"),  # 27 days
        # across month and year boundaries
        ("28 December 2024", date(2025, 1, 5), "8 days ago"),
        ("20 December 2024", date(2025, 1, 5), "2 weeks ago"),
        ("1 December 2024", date(2025, 1, 5), "1 month ago"),
        ("December 2024", date(2025, 1, 5), "1 month ago"),
        ("2024", date(2025, 1, 5), "1 year ago"),
        ("2025", date(2025, 1, 5), "this year"),
        ("January 2025", date(2025, 1, 5), "this month"),
        # the future
        ("1 October 2025", IRB_REFERENCE, "in 2 days"),
        ("2025-12-25", IRB_REFERENCE, "in 2 months"),
        ("October 2025", IRB_REFERENCE, "in 1 month"),
        ("2026", IRB_REFERENCE, "in 1 year"),
        ("2029", IRB_REFERENCE, "in 4 years"),
    ],
)
def test_relative_time(text, reference, expected):
    assert relative_time(text, reference) == expected


REALDATA_REFERENCE = date(2016, 5, 1)  # newest revision of ../shared/realdata/enwiki-2016-pages-articles-106


@pytest.mark.parametrize(
    ("sentence", "node", "expected"),
    [
        # sentences of that dump; each date was rounded up before ("7 years ago", "3 months ago", ...)
        ("In October 2009, Algeria cancelled a weapons deal with France", "October 2009", "6 years ago"),
        ("Einstein's prediction was confirmed on 11 February 2016", "11 February 2016", "2 months ago"),
        (
            "The state's seasonally adjusted unemployment rate was 5.8% in April 2015.",
            "April 2015",
            "1 year ago",
        ),
        ("was being re-excavated in Austria in December 2014", "December 2014", "1 year ago"),
        ("General Clinton replaced Howe ... on May 24, 1778.", "May 24, 1778", "237 years ago"),
        (
            "until they were established as provinces on September 1, 1905.",
            "September 1, 1905",
            "110 years ago",
        ),
        ("the Albanian side was completed in June 2009", "June 2009", "6 years ago"),  # 6 years 11 months
        ("entitling Azerbaijan to host the contest in 2012, in Baku.", "2012", "4 years ago"),
    ],
)
def test_relative_time_on_real_sentences(sentence, node, expected):
    assert node in sentence and relative_time(node, REALDATA_REFERENCE) == expected


@pytest.mark.parametrize("text", ["last year", "31 February 2024", "the 1990s", "", "310 m", "Vellmouth"])
def test_relative_time_is_none_when_unparseable(text):
    assert relative_time(text, IRB_REFERENCE) is None


@pytest.mark.parametrize(
    ("text", "reference", "never"),
    [
        ("2019", date(2021, 12, 1), {1, 2, 3}),  # any day of 2019 is 1.9 to 2.9 years before
        ("May 2019", date(2021, 12, 1), {2, 3}),  # 2.5 to 2.6 years
        ("30 Nov 2024", IRB_REFERENCE, {1}),  # 0.8 years: "1 year ago" reads as roughly true
        ("2012", REALDATA_REFERENCE, {3, 4, 5}),  # "host the contest 5 years ago" was a false premise
    ],
)
def test_wrong_relative_time_is_three_years_away_from_every_day_the_date_may_mean(text, reference, never):
    said = {wrong_relative_time(text, reference, random.Random(seed)) for seed in range(200)}
    assert said and all(phrase.endswith(" years ago") or phrase == "1 year ago" for phrase in said)
    assert not said & {f"{n} year{'s' if n > 1 else ''} ago" for n in never}


def test_parse_date_precision():
    assert parse_date("12 March 2024") == (date(2024, 3, 12), "day")
    assert parse_date("Mar. 2024") == (date(2024, 3, 1), "month")
    assert parse_date("2024.") == (date(2024, 1, 1), "year")


# --- the four types ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("Cristiano Ronaldo", "C. Ronaldo"),
        ("John Ronald Reuel Tolkien", "J. R. R. Tolkien"),
        ("Ludwig van Beethoven", "L. van Beethoven"),
        ("Jean-Luc Picard", "J.-L. Picard"),
        ("Dr. Ilse Marrow", "Dr. I. Marrow"),
        ("Martin Luther King Jr.", "M. L. King Jr."),
        ("Marrow", None),
        ("C. Ronaldo", None),
    ],
)
def test_initials_and_surname(name, short):
    assert initials_and_surname(name) == short


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1.5", "one point five"),
        ("18,400", "eighteen thousand four hundred"),
        ("310 m", "three hundred and ten m"),
        ("£212 million", "two hundred and twelve million pounds"),
        ("$1", "one dollar"),
        ("about 60,000 visitors", "about sixty thousand visitors"),
        ("four years", None),
    ],
)
def test_number_words(text, words):
    assert number_words(text) == words


def test_flag_phrase():
    assert flag_phrase("France") == "the country whose flag is \U0001f1eb\U0001f1f7"
    assert flag_phrase("the Netherlands") == "the country whose flag is \U0001f1f3\U0001f1f1"
    assert country_code("UK") == country_code("United Kingdom") == "GB"
    assert country_code("Russia") == "RU"
    assert flag_phrase("Vellshire") is None


@pytest.mark.parametrize(
    ("node", "node_type", "replacement", "rule"),
    [
        ("Cristiano Ronaldo", "Person", "C. Ronaldo", "initials"),
        ("30 Nov 2024", "Date", "9 months ago", "relative_date"),
        ("5 children", "Quantity", "five children", "number_words"),
    ],
)
def test_paraphrase_each_type(node, node_type, replacement, rule):
    change = paraphrase(node, node_type, IRB_REFERENCE)
    assert change == NodeChange(
        node=node, node_type=node_type, replacement=replacement, kind="paraphrase", rule=rule
    )


def test_paraphrase_keeps_countries_and_numbers_a_careful_writer_keeps():
    assert paraphrase("France", "Country", IRB_REFERENCE) is None  # no flag emoji
    assert paraphrase("1.5", "Quantity", IRB_REFERENCE) is None
    assert paraphrase("54%", "Quantity", IRB_REFERENCE) is None
    assert paraphrase("Kupfergraben", "Person", IRB_REFERENCE, "FAC") is None


def test_paraphrase_is_none_for_other_types_and_no_change():
    assert paraphrase("Halden & Rusk", "Organization", IRB_REFERENCE) is None
    assert paraphrase("Marrow", "Person", IRB_REFERENCE) is None
    assert paraphrase("sometime", "Date", IRB_REFERENCE) is None


def test_perturb_never_swaps_a_person_or_a_country():
    for node, node_type in (
        ("Cristiano Ronaldo", "Person"),
        ("France", "Country"),
        ("Halden & Rusk", "Other"),
    ):
        refusal = perturb(node, node_type, IRB_REFERENCE, random.Random(0), [f"{node} won in 2004."])
        assert isinstance(refusal, Refusal) and refusal.reason == "false_premise_type"


@pytest.mark.parametrize("seed", range(20))
def test_perturb_date_is_at_least_three_years_off(seed):
    change = perturb("30 Nov 2024", "Date", IRB_REFERENCE, random.Random(seed), ["It opened on 30 Nov 2024."])
    match = re.fullmatch(r"(\d+) years? ago", change.replacement)
    assert match and change.rule == "wrong_relative_date"
    assert abs(int(match.group(1)) - 303 / 365.25) >= 3


def test_perturb_quantity():
    quantity = perturb("1.5", "Quantity", IRB_REFERENCE, random.Random(0), ["It grew 1.5 times."])
    assert quantity.rule == "perturbed_value" and re.fullmatch(r"\d+\.\d", quantity.replacement)
    assert quantity.replacement != "1.5"
    text = ["It cost £212 million."]
    assert perturb("£212 million", "Quantity", IRB_REFERENCE, random.Random(0), text).replacement.endswith(
        " million"
    )


@settings(max_examples=200, deadline=None)
@given(
    integer=st.integers(min_value=0, max_value=10**9),
    decimals=st.integers(min_value=0, max_value=3),
    grouped=st.booleans(),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_perturbed_quantity_always_differs_and_keeps_its_format(integer, decimals, grouped, seed):
    value = integer / 10**decimals
    text = f"{value:,.{decimals}f}" if grouped else f"{value:.{decimals}f}"
    changed = perturbed_value(f"{text} tonnes", random.Random(seed))
    if integer == 0:
        assert isinstance(changed, Refusal) and changed.reason == "quantity_no_clear_value"
        return
    assert changed != f"{text} tonnes" and changed.endswith(" tonnes")
    number = changed.removesuffix(" tonnes")
    assert ("." in number) == (decimals > 0) and len(number.partition(".")[2]) == decimals
    assert float(number.replace(",", "")) > 0


# --- applying changes -----------------------------------------------------------------------------------


def change(node, replacement, rule="initials", node_type="Person"):
    return NodeChange(node=node, node_type=node_type, replacement=replacement, kind="paraphrase", rule=rule)


def test_apply_changes_longest_first_whole_words_one_pass():
    changes = [change("Marrow", "Smith", "other_surname"), change("Ilse Marrow", "I. Marrow")]
    text = "Ilse Marrow met Marrowby's mayor; marrow later left."
    assert apply_changes(text, changes) == "I. Marrow met Marrowby's mayor; Smith later left."


def test_apply_changes_absorbs_the_and_date_prepositions():
    changes = [
        change("Netherlands", "the country whose flag is \U0001f1f3\U0001f1f1", "flag", "Country"),
        change("12 March 2024", "19 months ago", "relative_date", "Date"),
        change("2007", "in 2 years", "wrong_relative_date", "Date"),
    ]
    text = "The Netherlands opened it on 12 March 2024 and closed it in 2007."
    expected = (
        "The country whose flag is \U0001f1f3\U0001f1f1 opened it 19 months ago and closed it in 2 years."
    )
    assert apply_changes(text, changes) == expected
    assert apply_changes("2007 was dry.", changes) == "2007 was dry."  # only "in"/"on" dates are moved
    # Andre Agassi (page 595, test half): "finish 2002 as the oldest year-end world no. 2"
    assert (
        apply_changes("helped him finish 2007 as the oldest", changes)
        == "helped him finish 2007 as the oldest"
    )
    assert apply_changes("Nothing here.", changes) == "Nothing here."


def test_load_surnames(tmp_path):
    path = tmp_path / "names.txt"
    path.write_text("# comment\nSmith\n\n Okafor \nSmith\n", encoding="utf-8")
    assert load_surnames(path) == ["Okafor", "Smith"]
    real = load_surnames(REPO / "irbgen" / "resources" / "phantom" / "surnames.txt")
    assert len(real) > 1000 and "Abbott" in real


# --- plans ----------------------------------------------------------------------------------------------


SPACY_LABELS = {"Person": "PERSON", "Organization": "ORG", "Date": "DATE", "Location": "GPE"}


def dated_inputs(count: int):
    """`count` facts "Person_i first visited Town_i in <year>": one maskable head each, an unmasked date."""
    facts, graphs = [], []
    for i in range(count):
        person, town, year = f"Ann Bo{chr(97 + i)}", f"Vill{chr(97 + i)}", str(2000 + i)
        text = f"{person} first visited {town} in {year}."  # "first": one of a kind, so a moved date is false
        keypoint = GroundedKeypoint(keypoint_id=f"k{i}", text=text, documents=[f"d{i}"])
        facts.append(
            Fact(id=f"f{i}", page_id=i, title=town, sentence=text, keypoints=[keypoint], citations=[])
        )
        triples = [
            Triple(head=person, head_type="Person", relation="visited", tail=town, tail_type="Location"),
            Triple(head=person, head_type="Person", relation="visited in", tail=year, tail_type="Date"),
        ]
        entities = [Entity(text=person, label="PERSON"), Entity(text=year, label="DATE")]
        graphs.append(
            KnowledgeGraph(fact_id=f"f{i}", triples=triples, coverage=1.0, entities=entities, method="rules")
        )
    return facts, graphs


def plans_for(facts, graphs, **options):
    settings_ = {"reference_date": IRB_REFERENCE, "seed": 1} | options
    return make_plans(facts, graphs, **settings_)


@pytest.mark.parametrize(
    ("valid", "share", "target"), [(10, 0.2, 3), (8, 0.2, 2), (4, 0.2, 1), (10, 0.0, 0), (0, 0.2, 0)]
)
def test_false_premise_target_rounds_half_up(valid, share, target):
    assert false_premise_target(valid, share) == target


def test_make_plans_false_premise_share():
    facts, graphs = dated_inputs(10)
    plans, rejects = plans_for(facts, graphs)
    assert rejects == []
    valid = [plan for plan in plans if plan.kind != "false_premise"]
    false = [plan for plan in plans if plan.kind == "false_premise"]
    assert len(valid) == 10 and len(false) == 3  # 3 / 13 = 23%: round half up of 0.2 * 10 / 0.8 = 2.5
    assert [plan.id for plan in valid] == [f"s:f{i}" for i in range(10)]
    for plan in false:
        base = next(p for p in valid if plan.id == f"f:{p.id}")
        assert plan.hops == base.hops
        wrong = [c for c in plan.changes if c.kind == "false_premise"]
        assert len(wrong) == 1 and wrong[0].node == base.hops[0].triples[1].tail
        assert wrong[0].replacement != relative_time(wrong[0].node, IRB_REFERENCE)
        assert all(c.node != wrong[0].node for c in plan.changes if c.kind == "paraphrase")


def test_make_plans_paraphrases_unmasked_nodes_only():
    facts, graphs = dated_inputs(1)
    plans, _ = plans_for(facts, graphs, false_premise_share=0.0)
    (plan,) = plans
    assert plan.answer == "Ann Boa"
    assert [(c.node, c.replacement, c.rule) for c in plan.changes] == [
        ("2000", "25 years ago", "relative_date")
    ]


def test_make_plans_reports_too_few_false_premise_candidates():
    facts, graphs = dated_inputs(4)
    for graph in graphs:
        graph.triples[1] = graph.triples[1].model_copy(update={"tail": "recently", "tail_type": "Other"})
    plans, rejects = plans_for(facts, graphs, false_premise_share=0.5)
    assert [plan.kind for plan in plans] == ["single_hop"] * 4
    assert [(r.stage, r.reason, r.extra) for r in rejects] == [
        (
            "plans",
            "false_premise_short",
            {"wanted": 4, "made": 0, "short": 4, "refused": {"no_date_or_quantity": 4}},
        )
    ]


def chained_inputs() -> tuple[list[Fact], list[KnowledgeGraph]]:
    """Two facts that chain: x1 masks Alpha Corp, which x0 names (and the reverse); documents d0 and d1.
    (x1 has no date: "the organization that hired Ilse Marrow in 2001 in 1990" is garbled. Alpha Corp is
    x0's subject: "Ann Boa founded the organization that hired ... in what year?" reads the year as the
    hiring's.)"""
    texts = [
        "Alpha Corp was founded by Ann Boa in 1990.",
        "Alpha Corp hired Ilse Marrow as its first engineer.",
    ]
    facts = [
        Fact(
            id=f"x{i}",
            page_id=i,
            title="T",
            sentence=text,
            keypoints=[GroundedKeypoint(keypoint_id=f"x{i}", text=text, documents=[f"d{i}"])],
            citations=[],
        )
        for i, text in enumerate(texts)
    ]
    rows = [
        [
            ("Ann Boa", "Person", "founded", "Alpha Corp", "Organization"),
            ("Ann Boa", "Person", "founded in", "1990", "Date"),
        ],
        [
            ("Alpha Corp", "Organization", "hired", "Ilse Marrow", "Person"),
        ],
    ]
    graphs = [
        KnowledgeGraph(
            fact_id=f"x{i}",
            triples=[
                Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in row
            ],
            coverage=1.0,
            entities=[
                Entity(text=node, label=SPACY_LABELS[kind])
                for h, ht, _, t, tt in row
                for node, kind in ((h, ht), (t, tt))
            ],
            method="rules",
        )
        for i, row in enumerate(rows)
    ]
    return facts, graphs


def test_make_plans_multi_hop_keeps_answers_and_bridges_unchanged():
    facts, graphs = chained_inputs()
    plans, _ = plans_for(facts, graphs, false_premise_share=0.0)
    multi = [plan for plan in plans if plan.id.startswith("m:x1>")]
    # x1 masks Alpha Corp, named in x0, which masks Ann Boa (its own answer) or 1990 (its 3rd maskable node)
    assert [plan.id for plan in multi] == ["m:x1>x0", "m:x1>x0/3"]
    assert [plan.id for plan in plans if plan.kind == "multi_hop"] == ["m:x0/2>x1/2", *(p.id for p in multi)]
    first = multi[0]
    assert [(hop.answer, hop.bridge) for hop in first.hops] == [
        ("Alpha Corp", None),
        ("Ann Boa", "Alpha Corp"),
    ]
    assert {(c.node, c.replacement) for c in first.changes} == {
        ("Ilse Marrow", "I. Marrow"),
        ("1990", "35 years ago"),
    }
    # multi[1] asks for a year: no other date is made relative, so it has one question date only
    assert {c.node for c in multi[1].changes} == {"Ilse Marrow", "Ann Boa"}
    assert len(plans_for(facts, graphs, false_premise_share=0.0, max_hops=1)[0]) == 2
    capped, _ = plans_for(facts, graphs, false_premise_share=0.0, max_multi_hop=1)
    assert len([plan for plan in capped if plan.kind == "multi_hop"]) == 1


def test_make_plans_rejects_multi_hop_shortcuts():
    facts, graphs = chained_inputs()
    # m:x1>x0 asks for Ann Boa (x0's masked node) and m:x1>x0/3 for 1990, through Alpha Corp (x1, document d1)
    documents = {"d0": "Alpha Corp was founded by Ann Boa in 1990.", "d1": "Alpha Corp hired Ilse Marrow."}
    plans, rejects = plans_for(facts, graphs, false_premise_share=0.0, documents=documents)
    # m:x0/2>x1/2 asks whom Alpha Corp (described by x0, document d0) hired: never a shortcut here
    assert [p.id for p in plans if p.kind == "multi_hop"] == ["m:x0/2>x1/2", "m:x1>x0", "m:x1>x0/3"]
    assert rejects == []

    documents["d1"] = "Alpha Corp, founded in 1990 by Ann Boa, hired Ilse Marrow."
    plans, rejects = plans_for(facts, graphs, false_premise_share=0.0, documents=documents)
    assert [p.id for p in plans] == ["s:x0", "s:x1", "m:x0/2>x1/2"]  # single hops are never shortcuts
    assert [(r.stage, r.reason, r.key) for r in rejects] == [
        ("plans", "multi_hop_shortcut", "m:x1>x0"),
        ("plans", "multi_hop_shortcut", "m:x1>x0/3"),
    ]
    assert rejects[0].detail == "the answer 'Ann Boa' is in d1, a document of the first hop"

    documents["d1"] = "Alpha Corp hired Ilse Marrow; its founder, Boa, left in 1995."
    plans, rejects = plans_for(facts, graphs, false_premise_share=0.0, documents=documents)
    assert [r.key for r in rejects] == ["m:x1>x0"]  # a person's surname is enough; 1995 is not 1990
    assert [p.id for p in plans if p.kind == "multi_hop"] == ["m:x0/2>x1/2", "m:x1>x0/3"]


def test_make_plans_is_deterministic_per_seed():
    facts, graphs = dated_inputs(10)
    first, _ = plans_for(facts, graphs, seed=0)
    assert plans_for(facts, graphs, seed=0)[0] == first
    others = [plans_for(facts, graphs, seed=seed)[0] for seed in range(1, 6)]
    assert any(other != first for other in others)


def test_make_plans_rejects_bad_settings():
    facts, graphs = dated_inputs(1)
    with pytest.raises(BadInputError, match="false_premise_share"):
        plans_for(facts, graphs, false_premise_share=1.0)
    with pytest.raises(BadInputError, match="max_hops"):
        plans_for(facts, graphs, max_hops=5)
