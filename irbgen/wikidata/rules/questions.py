"""Rules wording of chain questions: a property's template, or a generic pattern from its label.

A hop asks for the value of (subject, property). `irbgen/resources/wikidata/properties.toml` gives the
properties that matter most a question ("In which country is {x} located?") and a noun phrase ("the
country where {x} is located"); dates get their question word from their precision ("In which year was {x}
founded?"). Any other property reads through `describe` (its label as a noun phrase) with a question
word that follows the answer's type: who for a person, which place, which organisation, what else.
A value that changes over time is asked at its date (`irbgen.wikidata.dating`): "In 2019, what was the
population of Oslo?", "Since 3 July 2020, who has been the head of government of France?".

A multi-hop question names each later subject by a noun phrase of the hops before it, as MINTQA does
("What is the capital of the country where Potsdam is located?"): `rules.grammar` composes them.
Questions longer than `MAX_QUESTION_WORDS` are not written.
"""

from __future__ import annotations

import re

from irbgen.wikidata.answerable import Selection
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Value
from irbgen.wikidata.vocabulary import Wording, load_wordings

MAX_QUESTION_WORDS = 30
HUMAN = "Q5"
ORGANISATION_PROPERTIES = frozenset({"P159", "P112", "P452", "P1128", "P169"})
PLACE_PROPERTIES = frozenset({"P625", "P17", "P131", "P30"})
# Own statements of an event: a point in time, participants, deaths; or a start time on an item with no
# coordinates (a war, not a ghetto or a museum, which have a start time and a place on the map).
EVENT_PROPERTIES = frozenset({"P585", "P710", "P1120"})
START_TIME, COORDINATES = "P580", "P625"
# A work: it has a creator, author, director, composer, performer or screenwriter, or a publication date.
WORK_PROPERTIES = frozenset({"P170", "P50", "P57", "P86", "P175", "P58", "P577"})
# Where a property's usual wording does not fit the subject's kind: an event takes place somewhere, a
# work is created, not founded.
KIND_WORDINGS: dict[tuple[str, str], Wording] = {
    ("event", "P17"): Wording(
        phrase="the country where {x} took place", question="In which country did {x} take place?"
    ),
    ("event", "P276"): Wording(phrase="the place where {x} took place", question="Where did {x} take place?"),
    ("event", "P131"): Wording(
        phrase="the administrative region where {x} took place",
        question="In which administrative region did {x} take place?",
    ),
    ("work", "P571"): Wording(event="was {x} created"),
}

# Property labels that are not plain nouns, as a phrase for "the value of the property for {x}".
# Checked in order; our own wording. Anything else falls through to the preposition and verb rules.
LABEL_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^instance of$"), "the class that {x} is an instance of"),
    (re.compile(r"^subclass of$"), "the class that {x} is a subclass of"),
    (re.compile(r"^located (in or next to|in/on|in|on|at|next to) (?:the )?(.+)$"),
     "the {1} that {x} is located {0}"),
    (re.compile(r"^member of (.+)$"), "the {0} that {x} is a member of"),
    (re.compile(r"^has (?:a |an |the )?(.+)$"), "the {0} of {x}"),
    (re.compile(r"^(.+ (?:received|held|signed|won))$"), "the {0} by {x}"),
)  # fmt: skip
PREPOSITIONS = frozenset("of in at by after on to from with for as into".split())
VERBS = frozenset("follows replaces contains shares depicts uses owns describes includes operates".split())
DATE_LEADS = {11: "On what date", 10: "In which month", 9: "In which year"}


def describe(property_label: str, subject: str) -> str:
    """A noun phrase for "the value of this property for the subject", from the property's label."""
    label = " ".join(property_label.split())
    for pattern, template in LABEL_PATTERNS:
        match = pattern.match(label)
        if match:
            return template.format(*match.groups(), x=subject)
    words = label.split()
    if words and words[0] in VERBS:
        return f"the entity that {subject} {label}"
    if len(words) > 1 and words[-1] in PREPOSITIONS:
        return f"the entity that {subject} is {label}"
    return f"the {label} of {subject}"


def entity_kind(kb: KnowledgeBase, entity_id: str) -> str:
    """ "person", "event", "work", "organisation", "place" or "thing", from the item's own statements."""
    properties = {statement.property for statement in kb.by_head.get(entity_id, ())}
    if any(s.tail.id == HUMAN for s in kb.tails(entity_id, "P31")):
        return "person"
    if properties & EVENT_PROPERTIES or (START_TIME in properties and COORDINATES not in properties):
        return "event"
    if properties & WORK_PROPERTIES:
        return "work"
    if properties & ORGANISATION_PROPERTIES:
        return "organisation"
    if properties & PLACE_PROPERTIES:
        return "place"
    return "thing"


def when_text(when: str, since: bool = False) -> str:
    """ "in 2019", "in March 2019", "on 1 January 2019", or with `since` "since 2019"."""
    if since:
        return f"since {when}"
    return f"on {when}" if re.match(r"^\d{1,2} [A-Z]", when) else f"in {when}"


def wording_for(kb: KnowledgeBase, property_id: str, head: str) -> Wording | None:
    """How to ask for the property's value of the item `head`: the wording for its kind
    (`KIND_WORDINGS`), else the property's own."""
    kinded = KIND_WORDINGS.get((entity_kind(kb, head), property_id)) if head else None
    return kinded or load_wordings().get(property_id)


def value_phrase(property_id: str, property_label: str, subject: str, wording: Wording | None = None) -> str:
    """The noun phrase for the value of (subject, property): its template's (`wording`, else the
    property's own), else `describe`'s."""
    wording = wording or load_wordings().get(property_id)
    if wording is not None and wording.phrase:
        return wording.phrase.format(x=subject)
    return describe(property_label, subject)


def phrase(kb: KnowledgeBase, selection: Selection, subject: str) -> str:
    """The noun phrase for the selected value of (subject, property), with its date."""
    property_id = selection.statement.property
    wording = wording_for(kb, property_id, selection.statement.head)
    text = value_phrase(property_id, kb.property_label(property_id), subject, wording)
    return f"{text} {when_text(selection.when, selection.since)}" if selection.when else text


def _date_question(kb: KnowledgeBase, selection: Selection, subject: str) -> str:
    value = selection.statement.tail
    wording = wording_for(kb, selection.statement.property, selection.statement.head)
    if wording is not None and wording.event:
        lead = DATE_LEADS.get(min(value.precision or 9, 11), "In which year")
        return f"{lead} {wording.event.format(x=subject)}?"
    return f"What is {phrase(kb, selection, subject)}?"


def _question_word(kb: KnowledgeBase, value: Value) -> str:
    if value.type != "entity":
        return "What"
    kind = entity_kind(kb, value.id or "")
    if kind == "person":
        return "Who"
    return f"Which {kind}" if kind in ("place", "organisation") else "What"


def question(kb: KnowledgeBase, selection: Selection, subject: str) -> str:
    """The question asking for the selected value of (subject, property).

    A dated value opens with its date: "In 2019, what was the population of Oslo?", "Since 3 July 2020,
    who has been the head of government of France?".
    """
    value = selection.statement.tail
    if value.type == "time":
        return _date_question(kb, selection, subject)
    wording = wording_for(kb, selection.statement.property, selection.statement.head)
    if not selection.when:
        if wording is not None and wording.question:
            return wording.question.format(x=subject)
        return f"{_question_word(kb, value)} is {phrase(kb, selection, subject)}?"

    opening = when_text(selection.when, selection.since)
    opening = opening[0].upper() + opening[1:]
    dated = dated_template(wording.question, selection.since) if wording is not None else None
    if dated is not None:
        text = dated.format(x=subject)
        return f"{opening}, {text[0].lower()}{text[1:]}"
    undated = Selection(selection.statement, selection.how)
    word = _question_word(kb, value)
    verb = "has been" if selection.since else "was"
    return f"{opening}, {word[0].lower()}{word[1:]} {verb} {phrase(kb, undated, subject)}?"


def dated_template(template: str, since: bool = False) -> str | None:
    """A present-tense question template in the past ("Who was the head of government of {x}?") or, with
    `since`, the present perfect ("Who has been ...", "Which organisation has {x} been a member of?");
    a template already in the past ("Which award did {x} receive?") stays; None when it has no single
    " is " to change."""
    if " did " in template and " is " not in template:
        return None if since else template
    if template.count(" is ") != 1:
        return None
    if not since:
        return template.replace(" is ", " was ")
    if " is {x} " in template:
        return template.replace(" is {x} ", " has {x} been ")
    return template.replace(" is ", " has been ")


def too_long(text: str) -> bool:
    """Whether a question is longer than a reader takes in at once."""
    return len(text.split()) > MAX_QUESTION_WORDS
