"""Which statements make questions, and which one statement stands for a (head, property).

A statement makes a hop or an answer when:

- its property is not denied (`irbgen/resources/wikidata/denied_properties.txt`, meta and maintenance
  properties) and its datatype is not excluded (external ids, URLs, media, coordinates, shapes, tabular
  data, math, musical notation, lexemes). The datatype is the property entity's, else the statement's own
  `mainsnak.datatype`, so a dump without property entities keeps identifiers out too;
- an entity value names an item of the base (which has an English label);
- a date has year, month or day precision (a decade or a century is not asked for);
- a quantity has no unit or a unit `irbgen/resources/wikidata/units.tsv` (or the unit's item in the base)
  names;
- a string or monolingual text belongs to a property whose wording allows text (official name, motto,
  native label, ...) and has letters (not a flag emoji); a monolingual text is English unless the
  wording takes any language (`any_language`: an official or native name, a title, a motto), so a
  demonym is never asked in Finnish.

The reader drops what can never make a hop or an answer before it reaches the knowledge base
(`never_asked`): denied properties and excluded datatypes, the datatype being the statement's own
`mainsnak.datatype` (a shard may not have read the property entity yet). Qualifiers go through the
same filter (`never_qualifies`, by each qualifier snak's own datatype), so a passage never states
"described by source" or an identifier in brackets. `why_unusable` still checks
both, so a property entity's datatype excludes too. Three denied properties are kept all the same,
`KEPT_FOR_WORDING`: the rules wording reads them to tell a person or a place (`rules.questions.
entity_kind`: "Who ...?", "Which place ...?") and a class from a thing (`relations.is_class`).
`--keep-all-statements` keeps everything.

Ranks are settled by the reader: deprecated statements never arrive, and where a property has
preferred statements only those do. `select` then picks the statement a question asks about: the
only value; else, among values that each carry a point in time, the one with the latest (the question
says "in 2019"); else, among entity values, the only one without an end time (the current one). A
statement qualified by "applies to part" or "criterion used" describes a part and is never picked.
Anything else has several current values and is not asked ("many_values"). The selection carries the
date its statement is asked at (`dating.as_of`: "in 2019", "since 3 July 2020"), if it has one.
"""

from __future__ import annotations

from dataclasses import dataclass

from irbgen.wikidata.dating import END_TIME, POINT_IN_TIME, as_of, time_key
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Statement
from irbgen.wikidata.units import unit_name
from irbgen.wikidata.vocabulary import load_denied, load_wordings

EXCLUDED_DATATYPES: frozenset[str] = frozenset(
    "external-id url globe-coordinate commonsMedia geo-shape tabular-data math musical-notation "
    "wikibase-lexeme wikibase-form wikibase-sense entity-schema wikibase-property".split()
)
# Denied, yet read by the rules wording (`rules.questions.entity_kind`: instance of human, coordinates)
# and by `relations.is_class` (subclass of, instance of a Wikimedia category or a metaclass).
KEPT_FOR_WORDING: frozenset[str] = frozenset({"P31", "P279", "P625"})
TEXT_TYPES = frozenset({"string", "monolingualtext"})
PART_QUALIFIERS = frozenset({"P518", "P1013", "P642"})  # applies to part, criterion used, of
YEAR_PRECISION = 9


def never_asked(property_id: str, datatype: str) -> bool:
    """Whether no question can use a statement of this property and datatype, so the reader drops it:
    a denied property or an excluded datatype, except the properties in `KEPT_FOR_WORDING`."""
    if property_id in KEPT_FOR_WORDING:
        return False
    return never_qualifies(property_id, datatype)


def never_qualifies(property_id: str, datatype: str) -> bool:
    """Whether the reader drops a qualifier of this property and datatype: a denied property or an
    excluded datatype, as for statements but with no exception (the wording reads no qualifier's class)."""
    return property_id in load_denied() or datatype in EXCLUDED_DATATYPES


def datatype(kb: KnowledgeBase, statement: Statement) -> str:
    """The property entity's datatype, else the statement's own."""
    return kb.entity_datatype(statement.property) or statement.datatype


def why_unusable(kb: KnowledgeBase, statement: Statement) -> str | None:
    """Why the statement makes no hop and no answer (a short reason), or None when it may."""
    if statement.property in load_denied():
        return "denied_property"
    if datatype(kb, statement) in EXCLUDED_DATATYPES:
        return "excluded_datatype"
    tail = statement.tail
    if tail.type == "entity":
        labelled = kb.kind(tail.id or "") == "item" and kb.has_label(tail.id or "")
        return None if labelled else "unlabelled_entity"
    if tail.type == "time":
        return None if (tail.precision or 0) >= YEAR_PRECISION and tail.raw[:1] != "-" else "coarse_date"
    if tail.type == "quantity":
        return None if tail.unit is None or unit_name(kb, tail.unit, "2") else "no_unit_label"
    if tail.type in TEXT_TYPES:
        wording = load_wordings().get(statement.property)
        if wording is None or not wording.text:
            return "text_not_allowed"
        if tail.type == "monolingualtext" and not (wording.any_language or tail.is_english):
            return "text_not_english"
        return None if any(char.isalpha() for char in tail.text) else "text_without_words"
    return "excluded_value"


@dataclass(frozen=True)
class Selection:
    """The statement a question asks about, how it was picked, and the date the question names."""

    statement: Statement
    how: str  # "only value", "latest point in time", "current value"
    when: str = ""  # the date the value holds at, as text ("2019"), or ""
    since: bool = False  # the value holds from `when` on ("since 3 July 2020"), not only at it


def _dated(statement: Statement, how: str) -> Selection:
    """The selection of the statement, with the date `dating.as_of` gives it."""
    date = as_of(statement)
    return Selection(statement, how, date.when, date.since) if date else Selection(statement, how)


def _date_key(statement: Statement) -> tuple[int, int, int]:
    date = as_of(statement)
    return time_key(date.when) if date else (-(10**9), 0, 0)


def _point_in_time(statement: Statement) -> str:
    values = statement.qualifiers.get(POINT_IN_TIME, [])
    return values[0] if len(values) == 1 else ""


def select(kb: KnowledgeBase, head: str, property_id: str) -> Selection | None:
    """The one statement that answers (head, property), or None when there are several current values."""
    candidates = [s for s in kb.tails(head, property_id) if not PART_QUALIFIERS & s.qualifiers.keys()]
    tails = {s.tail.key for s in candidates}
    if len(tails) == 1:  # the same value more than once: the one with the latest date
        return _dated(max(candidates, key=_date_key), "only value")
    if len(tails) < 1:
        return None
    if all(_point_in_time(s) for s in candidates):
        latest = max(time_key(_point_in_time(s)) for s in candidates)
        newest = [s for s in candidates if time_key(_point_in_time(s)) == latest]
        if len({s.tail.key for s in newest}) == 1 and latest[0] > 0:
            return _dated(newest[0], "latest point in time")
    if all(s.tail.type == "entity" for s in candidates):
        current = [s for s in candidates if END_TIME not in s.qualifiers]
        if len({s.tail.key for s in current}) == 1:
            return _dated(current[0], "current value")
    return None


def is_selected(kb: KnowledgeBase, statement: Statement) -> bool:
    """Whether the statement is the one `select` picks for its (head, property)."""
    selection = select(kb, statement.head, statement.property)
    return selection is not None and selection.statement.tail.key == statement.tail.key
