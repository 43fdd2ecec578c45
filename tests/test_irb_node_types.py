"""Re-typing rules-graph nodes from page categories, name words and digits."""

from __future__ import annotations

import pytest

from irbgen.irb.node_types import category_type, digit_type, name_type, resolve_type, retype_graphs
from irbgen.irb.records import Fact, GroundedKeypoint, KnowledgeGraph, Triple


@pytest.mark.parametrize(
    ("categories", "expected"),
    [
        (["Towns in Vellshire", "Port cities and towns"], "Location"),
        (["Structural engineers", "People from Vellmouth"], "Person"),
        (["Robotics companies", "Companies based in Vellmouth"], "Organization"),
        (["Festivals in Vellshire"], "Event"),
        (["1990s novels"], "Work"),
        (["Living things"], None),
    ],
)
def test_category_type(categories, expected):
    assert category_type(categories) == expected


def test_name_and_digit_types():
    assert name_type("the River Vell") == "Location"
    assert name_type("the University of Northmere") == "Organization"
    assert name_type("The Vellmouth Orchid Festival") == "Event"
    assert name_type("Ilse Marrow") is None
    assert digit_type("2023", "Quantity") == "Date"
    assert digit_type("14.2 km2", "Organization") == "Quantity"
    assert digit_type("about 60,000", "Person") == "Quantity"
    assert digit_type("12 March 2024", "Person") == "Date"
    assert digit_type("2011 QZ14", "Quantity") == "Other"  # a designation, not a number
    assert digit_type("18 km", "Quantity") is None  # already right
    assert digit_type("Halden & Rusk", "Organization") is None


def fact(fact_id: str, title: str, categories: list[str], text: str) -> Fact:
    keypoint = GroundedKeypoint(keypoint_id=fact_id, text=text, documents=["d"])
    return Fact(
        id=fact_id,
        page_id=1,
        title=title,
        sentence=text,
        keypoints=[keypoint],
        citations=[],
        categories=categories,
    )


def test_page_titles_and_surnames_win_over_spacy_labels_for_rules_graphs_only():
    facts = [
        fact("a", "Vellmouth", ["Towns in Vellshire"], "Vellmouth had 18,400 people."),
        fact("b", "Ilse Marrow", ["Structural engineers"], "Marrow joined Halden & Rusk."),
    ]
    triple = Triple(
        head="Marrow", head_type="Organization", relation="was born in", tail="Vellmouth", tail_type="Person"
    )
    rules = KnowledgeGraph(fact_id="b", triples=[triple], coverage=1.0, method="rules")
    model = KnowledgeGraph(fact_id="a", triples=[triple], coverage=1.0, method="llm")
    fixed_rules, kept_model = retype_graphs([rules, model], facts)
    assert (fixed_rules.triples[0].head_type, fixed_rules.triples[0].tail_type) == ("Person", "Location")
    assert kept_model == model
    assert resolve_type("Zorbl", "Other", {}) == "Other"
