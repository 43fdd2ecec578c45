"""Relations on a hand-built family, the grammar's templates, difficulty, and sampled questions."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from irbgen.builds.phantom import build_phantom
from irbgen.errors import BadInputError
from irbgen.phantom.config import PhantomConfig
from irbgen.phantom.grammar import templates
from irbgen.phantom.questions import AttributeTable, Walk, difficulty, render, solve
from irbgen.phantom.relations import RELATIONS, RelationIndex
from irbgen.phantom.universe import Universe
from irbgen.phantom.vocabulary import load_vocabulary

PAPER_TEMPLATES = Path(__file__).parent / "data" / "paper_templates_depth20.txt"

#   Gus + Gina -> Al, Bea;  Al + Wen -> Cal, Dee;  Bea + Hal -> Eve;  friends: Cal-Xan, Eve-Xan
PEOPLE = ["Gus", "Gina", "Al", "Bea", "Wen", "Hal", "Cal", "Dee", "Eve", "Xan"]
FEMALE = {"Gina", "Bea", "Wen", "Dee", "Eve"}
PARENTS = {
    "Al": ("Gus", "Gina"),
    "Bea": ("Gus", "Gina"),
    "Cal": ("Al", "Wen"),
    "Dee": ("Al", "Wen"),
    "Eve": ("Hal", "Bea"),
}


@pytest.fixture(scope="module")
def family():
    vocabulary = load_vocabulary()
    position = {name: i for i, name in enumerate(PEOPLE)}
    father = [position[PARENTS[name][0]] if name in PARENTS else -1 for name in PEOPLE]
    mother = [position[PARENTS[name][1]] if name in PARENTS else -1 for name in PEOPLE]
    size = len(PEOPLE)
    universe = Universe(
        names=PEOPLE,
        female=np.array([name in FEMALE for name in PEOPLE]),
        father=np.array(father, dtype=np.int32),
        mother=np.array(mother, dtype=np.int32),
        dob=np.arange(700000, 700000 + size, dtype=np.int32),
        occupation=np.array([0, 1, 2, 3, 4, 5, 6, 7, 7, 9], dtype=np.int32),
        hobby=np.zeros(size, dtype=np.int32),
        friendships=np.array([[6, 9], [8, 9]], dtype=np.int32),
        tree=np.zeros(size, dtype=np.int32),
        vocabulary=vocabulary,
    )
    return RelationIndex(universe)


EXPECTED = [
    ("Cal", "aunt", ["Bea"]),
    ("Eve", "uncle", ["Al"]),
    ("Cal", "cousin", ["Eve"]),
    ("Cal", "female_cousin", ["Eve"]),
    ("Eve", "male_cousin", ["Cal"]),
    ("Dee", "male_cousin", []),
    ("Cal", "grandparent", ["Gus", "Gina"]),
    ("Cal", "grandmother", ["Gina"]),
    ("Cal", "sister", ["Dee"]),
    ("Dee", "brother", ["Cal"]),
    ("Al", "wife", ["Wen"]),
    ("Bea", "husband", ["Hal"]),
    ("Wen", "mother_in_law", ["Gina"]),
    ("Hal", "father_in_law", ["Gus"]),
    ("Gus", "son_in_law", ["Hal"]),
    ("Gina", "daughter_in_law", ["Wen"]),
    ("Wen", "sister_in_law", ["Bea"]),
    ("Hal", "brother_in_law", ["Al"]),
    ("Al", "niece", ["Eve"]),
    ("Bea", "nephew", ["Cal"]),
    ("Gus", "grandchild", ["Cal", "Dee", "Eve"]),
    ("Gina", "granddaughter", ["Dee", "Eve"]),
    ("Cal", "friend", ["Xan"]),
    ("Xan", "friend", ["Cal", "Eve"]),
    ("Cal", "parent", ["Al", "Wen"]),
    ("Al", "child", ["Cal", "Dee"]),
    ("Cal", "sibling", ["Dee"]),
    ("Gus", "great_grandchild", []),
    ("Wen", "sister", []),
]


@pytest.mark.parametrize(("person", "relation", "expected"), EXPECTED)
def test_relations_on_a_known_family(family, person, relation, expected):
    found = family.related(relation, PEOPLE.index(person))
    assert sorted(PEOPLE[i] for i in found) == sorted(expected)


def test_sets_map_through_relations_and_counts(family):
    people = np.array([PEOPLE.index(name) for name in ("Cal", "Dee", "Eve")])
    assert [PEOPLE[i] for i in family.image("aunt", people)] == ["Bea"]
    assert family.counts("aunt", people).tolist() == [1, 1, 0]
    assert family.counts("cousin", people).tolist() == [1, 1, 2]
    cousins = family.image("cousin", np.array([PEOPLE.index("Eve")]))
    via = family.via("cousin", np.array([PEOPLE.index("Eve")]), cousins)
    assert sorted(PEOPLE[i] for i in via) == ["Al", "Bea"]  # mother and uncle; father Hal has no sibling


def _template(form: str, start: str, relations: int):
    return next(t for t in templates(20) if (t.form, t.start, t.relations) == (form, start, relations))


def test_rendering_answers_hops_and_difficulty(family):
    attributes = AttributeTable(family.universe)
    occupation = family.universe.vocabulary.occupations[7]  # Dee's and Eve's
    walk = Walk(_template("who", "attribute", 2), PEOPLE.index("Dee"), "job", ("brother", "friend"))
    assert render(walk, family.universe, attributes) == (
        f"Who is the friend of the brother of the person whose occupation is {occupation}?"
    )
    solution = solve(walk, family, attributes)
    assert solution.answers == ["Xan"]
    assert solution.hop_answers == [["Dee", "Eve"], ["Cal"], ["Xan"]]
    # Eve shares the occupation but has no brother, so she is on no path to an answer.
    assert [[PEOPLE[i] for i in hop] for hop in solution.on_path] == [["Dee"], ["Cal"], ["Xan"]]
    assert sorted(PEOPLE[i] for i in np.unique(np.concatenate(solution.hop_evidence))) == [
        "Cal",
        "Dee",
        "Xan",
    ]
    assert difficulty(walk) == 1 + 1 + 1

    count = Walk(_template("how_many", "name", 1), PEOPLE.index("Eve"), None, ("uncle",), counted="son")
    assert render(count, family.universe, attributes) == "How many sons does the uncle of Eve have?"
    assert solve(count, family, attributes).answers == ["1"]
    assert difficulty(count) == 2 + 1  # uncle, plus the counting step; the counted relation adds nothing

    spread = Walk(
        _template("how_many", "name", 1), PEOPLE.index("Cal"), None, ("grandparent",), counted="son"
    )
    assert solve(spread, family, attributes).answers == ["1"]  # Gus and Gina each have one son, Al
    many = Walk(_template("how_many", "name", 1), PEOPLE.index("Cal"), None, ("sibling",), counted="cousin")
    assert solve(many, family, attributes).answers == ["1"]

    what = Walk(_template("what", "name", 1), PEOPLE.index("Xan"), None, ("friend",), final_attribute="job")
    assert render(what, family.universe, attributes) == "What is the occupation of the friend of Xan?"
    jobs = family.universe.vocabulary.occupations
    assert solve(what, family, attributes).answers == sorted({jobs[6], jobs[7]})  # Cal's and Eve's


def test_reference_difficulty_example():
    walk = Walk(_template("who", "attribute", 3), 0, "job", ("great_granddaughter", "friend", "parent"))
    assert difficulty(walk) == 6  # PhantomWiki: parent 1 + friend 1 + great-granddaughter 3 + attribute 1


def test_templates_match_the_paper():
    expected = PAPER_TEMPLATES.read_text(encoding="utf-8").splitlines()
    assert [t.text for t in templates(20)] == expected
    assert len(templates(6)) == 8 and len(templates(10)) == 20
    assert all(t.relations <= 8 for t in templates(20))


def test_every_relation_has_english_forms():
    assert len(RELATIONS) == 45
    assert RELATIONS["great_aunt"].text == "great-aunt"
    assert RELATIONS["mother_in_law"].text == "mother-in-law"
    assert RELATIONS["male_first_cousin_once_removed"].text == "male first cousin once removed"


@pytest.fixture(scope="module")
def built():
    return build_phantom(PhantomConfig(n=400, seed=4), load_vocabulary())


def test_sampled_questions_are_well_formed(built):
    samples = built.samples
    assert len(samples) == 500
    doc_ids = {f"p{i:07d}" for i in range(built.universe.size)}
    by_template: dict[int, set[str]] = {}
    for sample in samples:
        assert sample.answers
        assert "gender" not in sample.question
        assert sample.hops == len(sample.chain)
        assert set(sample.evidence) <= doc_ids
        assert set(sample.evidence) == {doc for hop in sample.chain for doc in hop.evidence}
        assert sample.chain[-1].answers == sample.answers
        if sample.attributes.question_type == "how_many":
            assert all(re.fullmatch(r"\d+", answer) for answer in sample.answers)
            assert sample.attributes.aggregation
        by_template.setdefault(sample.attributes.template_id, set()).add(sample.question)
    assert all(len(questions) == 10 for questions in by_template.values())
    assert len(by_template) == 50


def test_same_seed_same_questions(built):
    again = build_phantom(PhantomConfig(n=400, seed=4), load_vocabulary())
    assert [s.model_dump() for s in again.samples] == [s.model_dump() for s in built.samples]
    other = build_phantom(PhantomConfig(n=400, seed=5), load_vocabulary())
    assert [s.question for s in other.samples] != [s.question for s in built.samples]


def test_a_world_too_small_for_the_questions_is_bad_input():
    with pytest.raises(BadInputError, match=r"template \d+ .* gave only 0 distinct questions"):
        build_phantom(PhantomConfig(n=1, seed=0, questions_per_template=2), load_vocabulary())
    with pytest.raises(BadInputError, match=r"template \d+ .* has at most 3 distinct questions"):
        build_phantom(PhantomConfig(n=1, seed=0), load_vocabulary())  # refused by arithmetic, at once
