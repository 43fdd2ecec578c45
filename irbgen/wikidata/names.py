"""How a question names an entity: its label, with its description in brackets when the label alone does
not say which thing it is ("Republican Party (major political party in the United States)").

A label needs its description when
- another item of the base goes by it (its label or an alias, case and accents aside): "Amsterdam" is
  the Dutch capital, a town in New York and a city in Missouri; or
- it is too generic to pick out its entity (`Names.is_generic`), whatever the base holds:
  - a label of at most three words, one of which is the head noun of what the entity is (of a class it
    is an instance of, or of its description), and none of the others the name of an item of the base:
    "Republican Party" (a political party), "Department of Biochemistry" (a faculty): many things are
    called so, while "University of Oxford" is named by its place;
  - a label that is the name of a class of the base ("village", "painting");
  - the one-word title of a work (it has a creator, author, director, composer or performer): "Totem"
    and "Stilleven" are the titles of many paintings;
  - it names a person: the base may hold one Steve Bullock, the world holds several, so a person always
    gets their description ("Steve Bullock (American politician)") unless it is missing or gives an
    answer away, when the bare name stays. When the chain asks for a country (a place with a demonym or
    a capital) the description loses the nationality it opens with: "Steve Bullock (politician)".

The description is not used when it gives away an answer of the chain (`gives_away`: an answer's label,
alias or demonym, a number or year of a literal answer, a proper-noun word of the answer's label or an
adjective made from one: "Halvorian" for Halvoria, "American" for United States of America), nor when
another item that goes by the label has the same description. The entity then has no name and its
chain is rejected "ambiguous".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from irbgen.text import contains_answer, fold, normalize, stem
from irbgen.wikidata.corpus import readable_description, value_text
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Value
from irbgen.wikidata.rules.questions import HUMAN

GENERIC_MAX_WORDS = 3  # a longer label ("Department of Computer Science, University of Oxford") says more
WORK_TITLE_MAX_WORDS = 1
WORK_PROPERTIES = ("P170", "P50", "P57", "P86", "P175", "P58")  # creator, author, director, composer, ...
CLASS_PROPERTIES = ("P31", "P279")
DEMONYM = "P1549"
_WORD = re.compile(r"[^\W\d_]+")
_LINKS = frozenset("of the and for in at on de".split())
# where a description's or class label's head noun phrase ends: "political party| in the United States"
_HEAD_END = re.compile(r",|\b(?:in|of|from|by|for|at|on|with|that|which|who|and|located|based|founded)\b")


def head_noun(phrase: str) -> str:
    """The stemmed head noun of a kind phrase: "major political party in the United States" -> "party"."""
    words = _WORD.findall(fold(_HEAD_END.split(phrase, maxsplit=1)[0]))
    return stem(words[-1]) if words else ""


def _pieces(label: str) -> list[str]:
    """The proper-noun words of an answer's label a description must not hold ("America", "Halvoria")."""
    return [word for word in _WORD.findall(label) if len(word) >= 4 and word[0].isupper()]


_NATIONALITY = re.compile(r"^[A-Z][a-z]+(?:an|ish|ese|ch|i|ic)\s+(?=[a-z])")


def without_nationality(description: str) -> str:
    """A description without the nationality adjective it opens with: "American politician" ->
    "politician", "Scottish association football player" -> "association football player"."""
    return _NATIONALITY.sub("", description, count=1)


def _is_derived(word: str, piece: str) -> bool:
    """Whether a capitalised word is the piece or made from it ("American" from "America")."""
    if not word[0].isupper():
        return False
    shared = 0
    for a, b in zip(fold(word), fold(piece), strict=False):
        if a != b:
            break
        shared += 1
    return shared == len(piece) == len(word) or shared >= max(4, len(piece) - 2)


def name_key(text: str) -> str:
    """How names are compared: normalised (case, accents and punctuation aside)."""
    return normalize(text) or fold(text).strip()


def _hash(key: str) -> int:
    return int.from_bytes(
        hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
    )


def _item_names(c: Any) -> tuple[np.ndarray, np.ndarray]:
    """(term, row) for each label and alias of the base's items: two arrays."""
    order = np.asarray(c.order)
    rows = order[np.asarray(c.kind)[order] == 1]  # the items, in reading order
    offsets = np.asarray(c.alias_offsets)
    starts, counts = offsets[rows], offsets[rows + 1] - offsets[rows]
    ends = np.cumsum(counts)
    at = (
        np.arange(int(ends[-1]) if len(ends) else 0)
        - np.repeat(ends - counts, counts)
        + np.repeat(starts, counts)
    )
    terms = np.concatenate([np.asarray(c.label)[rows], np.asarray(c.aliases)[at]]).astype(np.int64)
    owners = np.concatenate([rows, np.repeat(rows, counts)]).astype(np.int32)
    return terms, owners


def _name_hashes(terms: np.ndarray, table: Any) -> tuple[np.ndarray, np.ndarray]:
    """(the `_hash` of each term's `name_key`, whether the term names anything: an empty one does not);
    each distinct term is read and normalised once."""
    by_term = np.argsort(terms, kind="stable")
    ordered = terms[by_term]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if len(terms) else by_term
    hashes = np.zeros(len(starts), dtype=np.uint64)
    named = np.zeros(len(starts), dtype=bool)
    for number, term in enumerate(ordered[starts].tolist()):
        text = table[term]
        if text:
            hashes[number], named[number] = _hash(name_key(text)), True
    runs = np.diff(np.append(starts, len(terms)))
    spread_hashes, spread_named = np.empty_like(terms, dtype=np.uint64), np.empty_like(terms, dtype=bool)
    spread_hashes[by_term], spread_named[by_term] = np.repeat(hashes, runs), np.repeat(named, runs)
    return spread_hashes, spread_named


class NameIndex:
    """Which items go by a name (their label or an alias, compared by `name_key`).

    Held as two sorted arrays, a 64-bit hash of each item's name and the item's row, about 12 bytes a
    name: a dict of sets, or the items themselves, would take gigabytes in each worker on a large base.
    A hash found is checked against the item's own names, so a collision never counts.
    """

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        terms, owners = _item_names(kb.columns)
        hashes, named = _name_hashes(terms, kb.columns.tables["terms"])
        hashes, owners = hashes[named], owners[named]
        order = np.lexsort((owners, hashes))
        self._hashes, self._rows = hashes[order], owners[order]

    def _rows_named(self, key: str) -> list[int]:
        wanted = np.uint64(_hash(key))
        low, high = (
            np.searchsorted(self._hashes, wanted, "left"),
            np.searchsorted(self._hashes, wanted, "right"),
        )
        return [row for row in dict.fromkeys(self._rows[low:high].tolist()) if key in self._keys_of(row)]

    def _keys_of(self, row: int) -> set[str]:
        entity = self.kb.entity(row)
        return {name_key(name) for name in (entity.label, *entity.aliases) if name}

    def ids(self, key: str) -> set[str]:
        """The ids of the items that go by KEY (a `name_key`)."""
        return {self.kb.id_of(row) for row in self._rows_named(key)}

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and bool(self._rows_named(key))


class Names:
    """Entity names for questions (see the module's docstring)."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._index: NameIndex | None = None
        self._classes: frozenset[str] | None = None

    _key = staticmethod(name_key)

    def index(self) -> NameIndex:
        """Normalised label or alias -> the items that go by it (built on first use)."""
        if self._index is None:
            self._index = NameIndex(self.kb)
        return self._index

    def class_names(self) -> frozenset[str]:
        """The normalised labels of the base's classes: the values of its instance-of and subclass-of
        statements, and the items that are a subclass of something."""
        if self._classes is None:
            c, kb = self.kb.columns, self.kb
            rows = [kb.row(pid) for pid in CLASS_PROPERTIES if kb.row(pid) >= 0]
            mask = np.isin(np.asarray(c.property), rows)
            tails = np.asarray(c.value_entity)[np.unique(np.asarray(c.value)[mask])]
            subclasses = np.asarray(c.head)[np.asarray(c.property) == kb.row("P279")] if rows else []
            ids = {kb.id_of(row) for row in [*tails[tails >= 0].tolist(), *np.unique(subclasses).tolist()]}
            self._classes = frozenset(self._key(label) for i in ids if (label := kb.label(i)) != i)
        return self._classes

    def kinds(self, entity_id: str) -> list[str]:
        """What the entity is, in words: the labels of its classes, and its description unless it is one
        word (a description such as "college" says no more than "Corran College" does)."""
        kb = self.kb
        classes = [
            kb.label(s.tail.id) for s in kb.tails(entity_id, "P31") if s.tail.id and kb.has_label(s.tail.id)
        ]
        entity = kb.entities.get(entity_id)
        described = entity is not None and len(_WORD.findall(entity.description)) > 1
        return [*classes, *([entity.description] if described else [])]

    def is_generic(self, entity_id: str) -> str:
        """Why the entity's label is too generic to name it alone ("" when it is not)."""
        label = self.kb.label(entity_id)
        words = _WORD.findall(fold(label))
        if self._key(label) in self.class_names():
            return "is the name of a class"
        if len(words) <= WORK_TITLE_MAX_WORDS and any(self.kb.tails(entity_id, p) for p in WORK_PROPERTIES):
            return "is the short title of a work"
        if len(words) <= GENERIC_MAX_WORDS:
            heads = {head_noun(kind) for kind in self.kinds(entity_id)} - {""}
            shared = heads & {stem(word) for word in words}
            rest = [word for word in words if stem(word) not in shared and word not in _LINKS]
            if shared and not any(word in self.index() for word in rest):
                return f"names a kind of thing ({', '.join(sorted(shared))})"
        return ""

    def _spellings(self, value: Value) -> list[str]:
        """How a text may write the value: its text, and an entity's aliases and demonyms, a date's year."""
        kb = self.kb
        spellings = [value_text(kb, value), value.text]
        if value.type == "entity" and value.id:
            entity = kb.entities.get(value.id)
            spellings += [
                *(entity.aliases if entity else []),
                *(s.tail.text for s in kb.tails(value.id, DEMONYM)),
            ]
        elif value.type == "time" and len(value.raw) > 5:
            spellings.append(value.raw[1:5].lstrip("0"))  # the year
        return [spelling for spelling in spellings if len(normalize(spelling)) >= 2]

    def gives_away(self, text: str, value: Value) -> bool:
        """Whether a text (a description) gives an answer away: see the module's docstring."""
        if any(contains_answer(text, spelling) for spelling in self._spellings(value)):
            return True
        pieces = _pieces(self.kb.label(value.id)) if value.type == "entity" and value.id else []
        return any(_is_derived(word, piece) for word in _WORD.findall(text) for piece in pieces)

    def name_gives_away(self, name: str, value: Value) -> bool:
        """Whether an entity's name gives a value away: one of its spellings, or a word made from a
        one-word label ("Australian head" for Australia). Unlike a description, a name may share a word
        with another ("1980 Summer Games" does not give away "1984 Summer Games")."""
        if any(contains_answer(name, spelling) for spelling in self._spellings(value)):
            return True
        label = self.kb.label(value.id) if value.type == "entity" and value.id else ""
        single = _pieces(label) if len(label.split()) == 1 else []
        return any(_is_derived(word, piece) for word in _WORD.findall(name) for piece in single)

    def resolve(self, entity_id: str, answers: Sequence[Value] = ()) -> tuple[str | None, str]:
        """(how a question names the entity, "") or (None, why it cannot be named): `answers` are the
        values the question asks for, which the name must not give away."""
        label = self.kb.label(entity_id)
        others = self.index().ids(self._key(label)) - {entity_id}
        generic = self.is_generic(entity_id)
        if not others and not generic:  # a person still gets a description: see the module's docstring
            if not self._is_person(entity_id):
                return label, ""
            description = self._description(entity_id, answers)
            if not description or self._gives_away_any(description, answers):
                return label, ""
            return f"{label} ({description})", ""
        description = self._description(entity_id, answers)
        why = f"{label!r} names more than one item" if others else f"{label!r} {generic}"
        if not description:
            return None, f"{why} and has no description"
        if any(fold(self._description(other, answers)) == fold(description) for other in others):
            return None, f"{why}, with the same description"
        if self._gives_away_any(description, answers):
            return None, f"{why} and its description {description!r} gives an answer away"
        return f"{label} ({description})", ""

    def _gives_away_any(self, text: str, answers: Sequence[Value]) -> bool:
        """Whether the text gives any of the answers away (`gives_away`)."""
        return any(self.gives_away(text, answer) for answer in answers)

    def _description(self, entity_id: str, answers: Sequence[Value]) -> str:
        """The entity's readable description; a person's without the nationality it opens with when the
        chain asks for a place with a demonym or a capital ("English footballer" would tell the country
        of citizenship, "footballer" does not)."""
        entity = self.kb.entities.get(entity_id)
        description = readable_description(entity.description).strip() if entity else ""
        if description and self._is_person(entity_id) and any(self._has_people(a) for a in answers):
            return without_nationality(description)
        return description

    def _is_person(self, entity_id: str) -> bool:
        return any(s.tail.id == HUMAN for s in self.kb.tails(entity_id, "P31"))

    def _has_people(self, value: Value) -> bool:
        """Whether the value is a place with a demonym or a capital, whose people a nationality names."""
        if value.type != "entity" or not value.id:
            return False
        return bool(self.kb.tails(value.id, DEMONYM) or self.kb.tails(value.id, "P36"))

    def name(self, entity_id: str, answers: Sequence[Value] = ()) -> str | None:
        """How a question names the entity, or None when nothing tells it apart (`resolve`)."""
        return self.resolve(entity_id, answers)[0]
