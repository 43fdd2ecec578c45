"""The knowledge base a Wikidata build works on: entities, their truthy statements, and indexes.

Built once from the entities a dump reader yields (items and properties). Everything later reads it:
chain sampling walks `by_head`, question realisation reads labels, uniqueness checks count tails.
It holds the selected entities in memory; restrict a large dump before building it.

Property labels come from the property entities of the dump, then from those of a properties-only
dump (`properties`), then from irbgen's own table (`irbgen/resources/wikidata/properties.toml`).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Iterable

from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikidata.vocabulary import load_wordings


class KnowledgeBase:
    """Entities by id, with statements indexed by head, by (head, property) and by entity tail."""

    def __init__(self, entities: Iterable[WikidataEntity], properties: Iterable[WikidataEntity] = ()) -> None:
        self.entities: dict[str, WikidataEntity] = {}
        self.statements: list[Statement] = []
        self.by_head: dict[str, list[Statement]] = defaultdict(list)
        self.by_head_property: dict[tuple[str, str], list[Statement]] = defaultdict(list)
        self.by_tail: dict[str, list[Statement]] = defaultdict(list)
        values: dict[str, Value] = {}  # one shared Value per distinct tail
        no_qualifiers: dict[str, list[str]] = {}
        for entity in entities:
            self.entities[entity.id] = entity
            for statement in entity.statements:
                _compact(statement, values, no_qualifiers)
                self.statements.append(statement)
                self.by_head[statement.head].append(statement)
                self.by_head_property[(statement.head, statement.property)].append(statement)
                if statement.tail.type == "entity" and statement.tail.id:
                    self.by_tail[statement.tail.id].append(statement)
        for prop in properties:  # a properties-only dump fills in what the main dump lacks
            if prop.kind == "property" and prop.id not in self.entities:
                self.entities[prop.id] = prop

    def __contains__(self, entity_id: str) -> bool:
        return entity_id in self.entities

    def items(self) -> list[WikidataEntity]:
        """The items (Q-ids), in reading order."""
        return [entity for entity in self.entities.values() if entity.kind == "item"]

    def label(self, entity_id: str) -> str:
        """The English label of an item or property, or the id itself when unknown."""
        entity = self.entities.get(entity_id)
        if entity is not None and entity.label:
            return entity.label
        return self.property_label(entity_id) or entity_id

    def property_label(self, property_id: str) -> str:
        """A property's English label from its entity or irbgen's table, "" when neither has one."""
        entity = self.entities.get(property_id)
        if entity is not None and entity.label:
            return entity.label
        wording = load_wordings().get(property_id)
        return wording.label if wording is not None else ""

    def text(self, value: Value) -> str:
        """A value as a reader sees it: an entity's label, or the literal's text."""
        if value.type == "entity" and value.id:
            return self.label(value.id)
        return value.text

    def tails(self, head: str, property_id: str) -> list[Statement]:
        """Every truthy statement (head, property, *)."""
        return self.by_head_property.get((head, property_id), [])

    def has(self, statement: Statement) -> bool:
        """Whether this exact (head, property, tail) is in the base."""
        key = statement.tail.key
        return any(other.tail.key == key for other in self.tails(statement.head, statement.property))

    def about(self, entity_id: str) -> list[Statement]:
        """Statements whose head is the entity, then those whose tail is."""
        return [*self.by_head.get(entity_id, []), *self.by_tail.get(entity_id, [])]


# One shared "fields set" per record type instead of a set of up to 728 B per record. Every field then
# counts as set, which only matters to model_dump(exclude_unset=True); irbgen never dumps that way.
_ALL_FIELDS = set(Statement.model_fields)
_VALUE_FIELDS = set(Value.model_fields)


def _compact(statement: Statement, values: dict[str, Value], no_qualifiers: dict[str, list[str]]) -> None:
    """Share what statements repeat: interned ids, one Value per tail, one empty qualifier map, and
    one set of set fields (pydantic keeps a set per record).

    The base holds every statement of the dump it reads, so this decides how large a dump fits in memory.
    The records are the base's own (read from a checkpoint) and are never changed afterwards. Fields are
    replaced through __dict__: pydantic's setattr would also grow each record's set of fields set.
    """
    fields = statement.__dict__
    object.__setattr__(statement, "__pydantic_fields_set__", _ALL_FIELDS)
    fields["head"] = sys.intern(statement.head)
    fields["property"] = sys.intern(statement.property)
    fields["datatype"] = sys.intern(statement.datatype)
    tail = values.get(statement.tail.key)
    if tail is None:
        tail = values[statement.tail.key] = statement.tail
        object.__setattr__(tail, "__pydantic_fields_set__", _VALUE_FIELDS)
    fields["tail"] = tail
    if not statement.qualifiers:
        fields["qualifiers"] = no_qualifiers
