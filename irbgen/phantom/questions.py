"""Questions over a world: fill templates by random walks, then answer them exactly by set algebra.

A walk starts at the innermost predicate (a name, or "the person whose <attribute> is <value>") and steps
outward along existing (relation, person) pairs, so every question has an answer. Answering runs the
filled template forward over whole sets of people (every branch, not only the walked one), then backward
to keep, per hop, the people on some path to an answer: their articles are the evidence.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from irbgen.errors import BadInputError
from irbgen.phantom.articles import DocumentIds
from irbgen.phantom.grammar import Template
from irbgen.phantom.relations import ATTRIBUTES, RELATIONS, RelationIndex
from irbgen.phantom.universe import Universe
from irbgen.schema import Attributes, Hop, Provenance, Sample


@dataclass(frozen=True)
class Walk:
    """A filled template: where it starts, the relations outward, and what it finally asks."""

    template: Template
    start_person: int
    start_attribute: str | None  # None when the question starts from a name
    relations: tuple[str, ...]  # innermost first
    final_attribute: str | None = None  # for "What is the <attribute> of ...?"
    counted: str | None = None  # for "How many <relation_plural> does ... have?"


class AttributeTable:
    """Attribute values of every person, as codes (for set lookups) and as text."""

    def __init__(self, universe: Universe):
        self.universe = universe
        self.codes = {"dob": universe.dob, "job": universe.occupation, "hobby": universe.hobby}
        self._dob_text: list[str] | None = None

    @property
    def dob_text(self) -> list[str]:
        if self._dob_text is None:
            self._dob_text = self.universe.dob_text()
        return self._dob_text

    def text(self, attribute: str, person: int) -> str:
        vocabulary = self.universe.vocabulary
        if attribute == "dob":
            return self.dob_text[person]
        if attribute == "job":
            return vocabulary.occupations[self.universe.occupation[person]]
        return vocabulary.hobbies[self.universe.hobby[person]]

    def holders(self, attribute: str, person: int) -> np.ndarray:
        """Everyone who shares `person`'s value of `attribute`."""
        codes = self.codes[attribute]
        return np.flatnonzero(codes == codes[person]).astype(np.int32)


def _subjects(walk: Walk, universe: Universe, attributes: AttributeTable) -> list[str]:
    """The noun phrase after each step, a name or "the person whose ...", then "the R of ..."."""
    if walk.start_attribute is None:
        subjects = [universe.names[walk.start_person]]
    else:
        value = attributes.text(walk.start_attribute, walk.start_person)
        subjects = [f"the person whose {ATTRIBUTES[walk.start_attribute]} is {value}"]
    for relation in walk.relations:
        subjects.append(f"the {RELATIONS[relation].text} of {subjects[-1]}")
    return subjects


def _ask(walk: Walk, subject: str) -> str:
    if walk.template.form == "who":
        return f"Who is {subject}?"
    if walk.template.form == "what":
        return f"What is the {ATTRIBUTES[walk.final_attribute]} of {subject}?"
    return f"How many {RELATIONS[walk.counted].plural} does {subject} have?"


def render(walk: Walk, universe: Universe, attributes: AttributeTable) -> str:
    """The question text of a walk."""
    return _ask(walk, _subjects(walk, universe, attributes)[-1])


def sub_questions(walk: Walk, universe: Universe, attributes: AttributeTable) -> list[str]:
    """One question per hop, innermost first; the last is the question itself."""
    subjects = _subjects(walk, universe, attributes)
    people = subjects if walk.start_attribute is not None else subjects[1:]
    asked = [f"Who is {subject}?" for subject in people]
    if walk.template.form != "who":
        asked.append(_ask(walk, subjects[-1]))
    return asked


class Sampler:
    """Fills templates with random walks over one world."""

    def __init__(self, index: RelationIndex, relation_bank: tuple[str, ...]):
        self.index = index
        self.relation_bank = relation_bank
        self._pairs: dict[int, list[tuple[str, int]]] = {}

    def pairs(self, person: int) -> list[tuple[str, int]]:
        if person not in self._pairs:
            self._pairs[person] = self.index.pairs(person, self.relation_bank)
        return self._pairs[person]

    def walk(self, template: Template, rng: random.Random) -> Walk | None:
        """One random walk for `template`, or None at a dead end."""
        person = rng.randrange(self.index.size)
        start_person = person
        start_attribute = rng.choice(tuple(ATTRIBUTES)) if template.start == "attribute" else None
        relations = []
        for _ in range(template.relations):
            pairs = self.pairs(person)
            if not pairs:
                return None
            relation, person = pairs[rng.randrange(len(pairs))]
            relations.append(relation)
        if template.form == "what":
            return Walk(
                template,
                start_person,
                start_attribute,
                tuple(relations),
                final_attribute=rng.choice(tuple(ATTRIBUTES)),
            )
        if template.form == "how_many":
            pairs = self.pairs(person)
            if not pairs:
                return None
            counted, _ = pairs[rng.randrange(len(pairs))]
            return Walk(template, start_person, start_attribute, tuple(relations), counted=counted)
        return Walk(template, start_person, start_attribute, tuple(relations))

    def sample(
        self,
        template: Template,
        count: int,
        rng: random.Random,
        attempts_per_question: int,
        universe: Universe,
        attributes: AttributeTable,
    ) -> list[tuple[Walk, str]]:
        """`count` walks with distinct question texts, or BadInputError if the world cannot give them."""
        found: list[tuple[Walk, str]] = []
        seen: set[str] = set()
        for _ in range(count * attempts_per_question):
            walk = self.walk(template, rng)
            if walk is None:
                continue
            question = render(walk, universe, attributes)
            if question in seen:
                continue
            seen.add(question)
            found.append((walk, question))
            if len(found) == count:
                return found
        raise BadInputError(
            f"template {template.id} ({template.text!r}) gave only {len(found)} distinct questions of the "
            f"{count} asked in {count * attempts_per_question:,} attempts on a world of {universe.size:,} "
            "people; lower --questions-per-template or --depth, or raise --n"
        )


@dataclass
class Solution:
    """Answers of one question and of each hop's sub-question, and the evidence of each hop.

    Lists run innermost first, one entry per predicate. `on_path` has one entry per person-valued hop
    (the lookup, then each relation): those of the sub-question's answers that lead to a final answer.
    """

    answers: list[str]
    hop_answers: list[list[str]]
    on_path: list[np.ndarray]
    hop_evidence: list[np.ndarray]


def _names(universe: Universe, people: np.ndarray) -> list[str]:
    return sorted(set(map(universe.names.__getitem__, people.tolist())))


def solve(
    walk: Walk,
    index: RelationIndex,
    attributes: AttributeTable,
    people_named: dict[str, np.ndarray] | None = None,
) -> Solution:
    """Answer a walk exactly over the whole world; `people_named` maps shared names to their people."""
    universe = index.universe
    if walk.start_attribute is not None:
        start = attributes.holders(walk.start_attribute, walk.start_person)
    else:
        name = universe.names[walk.start_person]
        start = (people_named or {}).get(name, np.array([walk.start_person], dtype=np.int32))
    levels = [start]
    for relation in walk.relations:
        levels.append(index.image(relation, levels[-1]))

    last = levels[-1]
    final_evidence: list[np.ndarray] = []
    if walk.template.form == "who":
        answers = _names(universe, last)
    elif walk.template.form == "what":
        answers = sorted({attributes.text(walk.final_attribute, person) for person in last.tolist()})
        final_evidence = [last]
    else:
        counts = index.counts(walk.counted, last)
        answers = [str(value) for value in sorted(set(counts.tolist()))]
        counted = index.image(walk.counted, last)
        final_evidence = [np.unique(np.concatenate([last, index.via(walk.counted, last, counted), counted]))]

    # Backward: keep at each level only those who lead to the last level.
    useful = [last]
    for relation, level in zip(reversed(walk.relations), reversed(levels[:-1]), strict=True):
        useful.append(index.sources(relation, level, useful[-1]))
    useful.reverse()

    first = 0 if walk.start_attribute is not None else 1
    hop_evidence: list[np.ndarray] = [useful[0]] if first == 0 else []
    for position, relation in enumerate(walk.relations):
        sources, targets = useful[position], useful[position + 1]
        hop_evidence.append(
            np.unique(np.concatenate([sources, index.via(relation, sources, targets), targets]))
        )
    hop_answers = [_names(universe, level) for level in levels[first:]]
    if walk.template.form == "who":
        hop_answers[-1] = answers
    else:
        hop_answers.append(answers)
    return Solution(answers, hop_answers, useful[first:], hop_evidence + final_evidence)


def difficulty(walk: Walk) -> int:
    """PhantomWiki's reasoning-step count: relation weights, +1 per attribute, +1 for counting."""
    steps = sum(RELATIONS[relation].weight for relation in walk.relations)
    steps += walk.start_attribute is not None
    steps += walk.template.form in ("what", "how_many")
    return int(steps)


def logical_form(walk: Walk, universe: Universe, attributes: AttributeTable) -> tuple[list[str], str]:
    """Prolog goals for the walk, innermost first, and the variable that holds the answer."""
    goals: list[str] = []
    if walk.start_attribute is not None:
        value = attributes.text(walk.start_attribute, walk.start_person)
        goals.append(f'{walk.start_attribute}(Y0, "{value}")')
        subject = "Y0"
    else:
        subject = f'"{universe.names[walk.start_person]}"'
    for position, relation in enumerate(walk.relations, start=1):
        goals.append(f"{relation}({subject}, Y{position})")
        subject = f"Y{position}"
    if walk.template.form == "what":
        goals.append(f"{walk.final_attribute}({subject}, Answer)")
        return goals, "Answer"
    if walk.template.form == "how_many":
        goals.append(f"aggregate_all(count, distinct(Z, {walk.counted}({subject}, Z)), Count)")
        return goals, "Count"
    return goals, subject


def _plan(walk: Walk, goals: list[str], answer: str) -> list[dict]:
    plan: list[dict] = []
    if walk.start_attribute is not None:
        plan.append({"op": "lookup", "attribute": walk.start_attribute})
    else:
        plan.append({"op": "name"})
    plan.extend({"op": "relation", "relation": relation} for relation in walk.relations)
    if walk.final_attribute is not None:
        plan.append({"op": "attribute", "attribute": walk.final_attribute})
    if walk.counted is not None:
        plan.append({"op": "count", "relation": walk.counted})
    plan.append({"op": "answer", "variable": answer})
    return plan


def _hop_predicates(walk: Walk) -> list[tuple[str, str]]:
    hops = []
    if walk.start_attribute is not None:
        hops.append(("lookup", walk.start_attribute))
    hops.extend(("relation", relation) for relation in walk.relations)
    if walk.final_attribute is not None:
        hops.append(("attribute", walk.final_attribute))
    if walk.counted is not None:
        hops.append(("count", walk.counted))
    return hops


def to_sample(
    sample_id: str,
    walk: Walk,
    question: str,
    solution: Solution,
    universe: Universe,
    attributes: AttributeTable,
    doc_ids: DocumentIds,
    seed: int,
) -> Sample:
    """The shared Sample record of one answered question."""
    chain = []
    predicates = _hop_predicates(walk)
    asked = sub_questions(walk, universe, attributes)
    for position, ((operation, predicate), answers, evidence, sub_question) in enumerate(
        zip(predicates, solution.hop_answers, solution.hop_evidence, asked, strict=True)
    ):
        chain.append(
            Hop(
                index=position,
                operation=operation,
                predicate=predicate,
                question=sub_question,
                answers=answers,
                evidence=doc_ids.of(evidence),
            )
        )
    all_evidence = np.unique(np.concatenate(solution.hop_evidence))
    goals, answer_variable = logical_form(walk, universe, attributes)
    template = walk.template
    return Sample(
        id=sample_id,
        question=question,
        answers=solution.answers,
        hops=len(chain),
        difficulty=difficulty(walk),
        source="phantom",
        evidence=doc_ids.of(all_evidence),
        chain=chain,
        attributes=Attributes(
            template=template.text,
            template_id=template.id,
            question_type=template.form,
            aggregation=template.form == "how_many",
            extra={"start": template.start, "relations": template.relations},
        ),
        provenance=Provenance(
            generator="irbgen.phantom",
            seed=seed,
            query_plan=_plan(walk, goals, answer_variable),
            logical_form=goals,
        ),
    )
