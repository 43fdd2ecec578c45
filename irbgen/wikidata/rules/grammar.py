"""The grammar of a chain question: every inner hop is a noun phrase, only the last hop asks.

Hop i of a chain names its tail, the next hop's subject, by a noun phrase built from the relation's
direction and the tail's type: "the successor of {x}" (followed by), "the predecessor of {x}" (follows),
"the parliament that replaced {x}" (replaced by, the tail being a parliament), "the person {x} is named
after" (named after, the tail a human). A property without an entry here takes the noun phrase of its
wording in properties.toml when that is one ("the capital of {x}"), else its label's (`describe`), with
"entity" made the tail's type. Phrases nest ("the successor of the successor of the 1988 Summer
Olympics"); the last hop is asked with the single-hop question of its property, so a question holds
one question word.

A chain is not written (`NotWritable`, the stage's reject "chain_not_writable") when:

- a property has no wording and its label reads as no noun ("languages spoken, written or signed");
- an inner hop's date has no place: it follows the subject when that is a name ("the head of government
  of Estmarch since 2021"), else it goes before a closing " of " or " by " ("the head of government since
  2021 of the country where Kiel is located", "the award received in 1987 by the director of ..."); after
  a phrase of earlier hops it would date them instead;
- clauses stack at the end past `MAX_OPEN_CLAUSES` ("... where the school where X was educated is
  located founded"), or one clause closes on the word the next begins with ("... is located located").

`question_words` finds the words that ask, so a gate rejects any question with two of them
("two_question_words"), whatever wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irbgen.wikidata.answerable import Selection
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.relations import CLASS_MARKERS, INSTANCE_OF
from irbgen.wikidata.rules.questions import describe, entity_kind, question, when_text, wording_for

MAX_OPEN_CLAUSES = 2
# Inner-hop noun phrases, by the direction of the relation; {noun} is the tail's type, else the default.
BRIDGES: dict[str, tuple[str, str]] = {
    "P155": ("the predecessor of {x}", ""),  # follows
    "P156": ("the successor of {x}", ""),  # followed by
    "P1365": ("the {noun} that {x} replaced", "thing"),  # replaces
    "P1366": ("the {noun} that replaced {x}", "thing"),  # replaced by
    "P138": ("the {noun} {that}{x} is named after", "thing"),  # named after
    "P463": ("the {noun} {that}{x} is a member of", "organisation"),  # member of
    "P361": ("the {noun} {that}{x} is part of", "whole"),  # part of
    "P177": ("the {noun} {that}{x} crosses", "thing"),  # crosses
}  # {that}: "that " before a subject that is itself a phrase, nothing before a name
# What a tail is, by its class: the noun a bridge names it with.
CLASS_NOUNS: dict[str, str] = {
    "Q5": "person",
    "Q6256": "country",
    "Q3624078": "country",
    "Q3024240": "country",  # historical country
    "Q7275": "state",
    "Q515": "city",
    "Q1549591": "city",
    "Q5119": "city",  # capital
    "Q486972": "settlement",
    "Q532": "village",
    "Q3957": "town",
    "Q7278": "party",  # political party
    "Q35749": "parliament",
    "Q11204": "legislature",
    "Q43229": "organisation",
    "Q4830453": "company",
    "Q783794": "company",
    "Q891723": "company",  # public company
    "Q3918": "university",
    "Q875538": "university",  # public university
    "Q3914": "school",
    "Q33506": "museum",
    "Q207694": "museum",  # art museum
    "Q3305213": "painting",
    "Q11424": "film",
    "Q482994": "album",
    "Q7366": "song",
    "Q7725634": "novel",
    "Q571": "book",
    "Q159821": "Olympic Games",  # Summer Olympic Games
    "Q82414": "Olympic Games",  # Winter Olympic Games
    "Q198": "war",
    "Q178561": "battle",
    "Q8502": "mountain",
    "Q4022": "river",
    "Q23397": "lake",
    "Q5107": "continent",
    "Q1248784": "airport",
    "Q12280": "bridge",
    "Q483110": "stadium",
    "Q16917": "hospital",
}
QUESTION_WORDS = frozenset("what which who whom whose where when how".split())
_PUNCTUATION = frozenset(",;:(")
_PREPOSITIONS = frozenset(
    "of in on at by to from with for about after before into during since under within than".split()
)
_AUXILIARIES = frozenset(
    "is was are were be been does did do has have had can could will would should".split()
)
_WORD = re.compile(r"[\w'’-]+|[,;:(]")


class NotWritable(Exception):
    """A chain whose question cannot be written naturally; the message says why."""


@dataclass(frozen=True)
class Phrase:
    """A noun phrase naming a node, and how many clauses stand open at its end ("where X is located")."""

    text: str
    open_clauses: int = 0
    is_name: bool = True  # an entity's name, not a phrase of earlier hops


def question_words(text: str, names: tuple[str, ...] = ()) -> list[str]:
    """The words of `text` that ask. "What" always asks (it opens no relative clause: "the name of what
    replaced X", "What follows what follows X"); another question word at the start, after a comma, an
    auxiliary or a question word ("What does which ..."), and after a preposition that opens the question
    ("In which country"); after a noun it opens a relative clause ("the age at which ...", "the country
    where ..."). `names` (entity names the text holds, "What a Wonderful World") are left out first."""
    for name in sorted(names, key=len, reverse=True):
        if name:
            text = text.replace(name, " NAME ")
    words = [word.lower() for word in _WORD.findall(text)]
    asking = []
    for index, word in enumerate(words):
        before = words[index - 1] if index else ","
        if word not in QUESTION_WORDS:
            continue
        opens = before in _PREPOSITIONS and (index == 1 or words[index - 2] in _PUNCTUATION)
        if word == "what" or opens or before in _PUNCTUATION | _AUXILIARIES | QUESTION_WORDS:
            asking.append(word)
    return asking


def has_two_question_words(text: str, names: tuple[str, ...] = ()) -> bool:
    """The gate: whether the question asks twice ("On what date did what X is named after die?")."""
    return len(question_words(text, names)) > 1


def node_noun(kb: KnowledgeBase, entity_id: str) -> str:
    """What the item is, as a common noun ("person", "party", "city"), or "" when nothing says.

    Its classes in `CLASS_NOUNS` first, then a class of the base whose label is a short lower-case noun
    ("political party"), then `entity_kind` ("organisation", "place")."""
    classes = [s.tail.id or "" for s in kb.tails(entity_id, INSTANCE_OF)]
    for class_id in classes:
        if class_id in CLASS_NOUNS:
            return CLASS_NOUNS[class_id]
    for class_id in classes:
        label = kb.label(class_id) if class_id in kb and class_id not in CLASS_MARKERS else ""
        if label and label[0].islower() and len(label.split()) <= 2 and label.replace(" ", "").isalpha():
            return label
    kind = entity_kind(kb, entity_id)
    return "" if kind == "thing" else kind


def _natural_label(label: str) -> bool:
    """Whether a property label reads as a noun or a verb phrase: no commas, slashes or brackets."""
    return bool(label) and not re.search(r"[,/()]", label) and len(label.split()) <= 5


def _place(template: str, subject: Phrase) -> Phrase:
    """The template with the subject put in; a clause closing after the subject stays open."""
    before, _, after = template.partition("{x}")
    trailing = after.strip(" ?")
    if trailing and not subject.is_name and subject.text.split()[-1].lower() == trailing.split()[0].lower():
        raise NotWritable(f"'{subject.text}' runs into '{trailing}'")
    opened = subject.open_clauses + (1 if trailing else 0)
    if opened > MAX_OPEN_CLAUSES:
        raise NotWritable(f"{opened} clauses close at the end of '{before}{subject.text}{after}'")
    return Phrase(f"{before}{subject.text}{after}", opened, is_name=False)


def _is_noun_phrase(text: str) -> bool:
    return text.split(maxsplit=1)[0] in ("the", "a", "an") and not question_words(text.replace("{x}", "X"))


def bridge_template(
    kb: KnowledgeBase, property_id: str, tail_id: str, after_name: bool = True, head_id: str = ""
) -> str:
    """The noun phrase template ({x}: the subject, the item `head_id`) naming the tail of (subject,
    property, tail); `after_name`: the subject is a name ("the person X is named after"), not a phrase
    ("... that the city ... is named after")."""
    if property_id in BRIDGES:
        template, default = BRIDGES[property_id]
        noun = node_noun(kb, tail_id) or default
        return template.replace("{noun}", noun).replace("{that}", "" if after_name else "that ")
    wording = wording_for(kb, property_id, head_id)
    if wording is not None and wording.phrase and _is_noun_phrase(wording.phrase):
        return wording.phrase
    label = " ".join(kb.property_label(property_id).split())
    if not _natural_label(label):
        raise NotWritable(f"{property_id} ({label!r}) has no noun phrase")
    text = describe(label, "{x}")
    if text.startswith("the entity "):
        text = f"the {node_noun(kb, tail_id) or 'thing'} {text[len('the entity ') :]}"
    return text


def bridge(kb: KnowledgeBase, selection: Selection, subject: Phrase) -> Phrase:
    """The noun phrase for the selected tail of (subject, property), with its date ("the head of
    government of France since 3 July 2020")."""
    statement = selection.statement
    tail = statement.tail.id or ""
    template = bridge_template(kb, statement.property, tail, subject.is_name, statement.head)
    if selection.when:
        date = when_text(selection.when, selection.since)
        if subject.is_name:
            template = f"{template} {date}"
        elif template.endswith((" of {x}", " by {x}")):
            template = f"{template[: -len(' of {x}')]} {date}{template[-len(' of {x}') :]}"
        else:
            raise NotWritable(f"no place for the date of {statement.property} ({date}) in '{template}'")
    return _place(template, subject)


def _asks(kb: KnowledgeBase, selection: Selection, subject: Phrase) -> str:
    """The last hop's question about the subject phrase; NotWritable when it reads badly."""
    property_id = selection.statement.property
    wording = wording_for(kb, property_id, selection.statement.head)
    if wording is None or not (wording.question or wording.event or wording.phrase):
        label = " ".join(kb.property_label(property_id).split())
        if not _natural_label(label):
            raise NotWritable(f"{property_id} ({label!r}) has no question")
    marker = "\x00"
    template = question(kb, selection, marker)
    _place(template.replace(marker, "{x}"), subject)  # checks the clauses the question closes
    return template.replace(marker, subject.text)


def compose(kb: KnowledgeBase, selections: list[Selection], heads: list[str]) -> tuple[str, list[str]]:
    """(main question, one sub-question per hop): hop i asks about heads[i]; the main question names
    only the first head, each later node by the noun phrase of the hops before it. NotWritable when a
    hop has no natural form."""
    pairs = zip(selections, heads, strict=True)
    sub_questions = [_asks(kb, selection, Phrase(head)) for selection, head in pairs]
    subject = Phrase(heads[0])
    for selection in selections[:-1]:
        subject = bridge(kb, selection, subject)
    return _asks(kb, selections[-1], subject), sub_questions
