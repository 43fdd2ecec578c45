"""The knowledge base a Wikidata build works on: entities, their truthy statements, and indexes.

Built once from the entities a dump reader yields (items and properties), into numpy columns
(`irbgen.wikidata.columns`): ids interned to rows, statements as fixed-width columns, adjacency by head
and by tail as compressed sparse rows, strings in separate tables. It can be saved and memory-mapped
back (`save`, `load`), so a resumed build maps it instead of reading the dump again.

Everything later reads it through the record API below: chain sampling walks `by_head`, question
realisation reads labels, uniqueness checks count tails. Records (`Statement`, `Value`,
`WikidataEntity`) are made on demand and never kept; the base's entities carry no statements (ask
`by_head`). Hot paths ask `kind`, `sitelinks` and `entity_datatype` without making records.

Property labels and datatypes come from the property entities of the dump, then from those of a
properties-only dump (`properties`), then from a property table (`table`: the rows of
`irbgen.wikidata.property_table`), then, for labels only, from `irbgen/resources/wikidata/properties.toml`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from irbgen.wikidata.columns import KINDS, RANKS, VALUE_TYPES, KnowledgeColumns, build_columns
from irbgen.wikidata.property_table import shipped_labels
from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikidata.vocabulary import load_wordings


class KnowledgeBase:
    """Entities by id, with statements indexed by head, by (head, property) and by entity tail."""

    def __init__(
        self,
        entities: Iterable[Any] = (),
        properties: Iterable[Any] = (),
        *,
        table: Iterable[Any] = (),
        columns: KnowledgeColumns | None = None,
    ) -> None:
        self.columns = columns if columns is not None else build_columns(entities, properties, table)
        self.directory: Path | None = None  # where the base was loaded from, if it was
        self.entities = _Entities(self)
        self.statements = _Statements(self)
        self.by_head = _ByHead(self)
        self.by_tail = _ByTail(self)
        self.by_head_property = _ByHeadProperty(self)

    @classmethod
    def load(cls, directory: Path, mmap: bool = True) -> KnowledgeBase:
        """A base saved with `save`, memory-mapped."""
        kb = cls(columns=KnowledgeColumns.load(directory, mmap))
        kb.directory = Path(directory)
        return kb

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A loaded base pickles as its directory, so a worker process maps the saved files instead of
        receiving a copy of every column; a base built in memory pickles its columns."""
        if self.directory is not None:
            return KnowledgeBase.load, (self.directory,)
        return _from_columns, (self.columns,)

    def save(self, directory: Path, meta: Mapping[str, Any] | None = None) -> None:
        self.columns.save(directory, meta)

    # --- rows and their fields, without records ---------------------------------------------------

    def row(self, entity_id: str) -> int:
        """The id's row, -1 when the base never met it."""
        return self.columns.ids.row(entity_id)

    def entity_row(self, entity_id: str) -> int:
        """The row of a read entity (item or property), -1 otherwise."""
        row = self.row(entity_id)
        return row if row >= 0 and self.columns.kind[row] else -1

    def kind(self, entity_id: str) -> str | None:
        """ "item" or "property" for a read entity, None otherwise."""
        row = self.entity_row(entity_id)
        return KINDS[self.columns.kind[row]] if row >= 0 else None

    def sitelinks(self, entity_id: str) -> int:
        """A read entity's sitelink count, 0 otherwise."""
        row = self.entity_row(entity_id)
        return int(self.columns.sitelinks[row]) if row >= 0 else 0

    def has_label(self, entity_id: str) -> bool:
        """Whether the read entity has a non-empty English label."""
        return bool(self._label_of_row(self.entity_row(entity_id)))

    def entity_datatype(self, entity_id: str) -> str | None:
        """A read property's datatype, None otherwise."""
        row = self.entity_row(entity_id)
        index = int(self.columns.datatype[row]) if row >= 0 else -1
        return self.columns.datatypes[index] if index >= 0 else None

    def id_of(self, row: int) -> str:
        return self.columns.tables["ids"][int(row)]

    def _term(self, index: int) -> str:
        return self.columns.tables["terms"][int(index)]

    def _label_of_row(self, row: int) -> str:
        return self._term(self.columns.label[row]) if row >= 0 else ""

    # --- records, made on demand ------------------------------------------------------------------

    def entity(self, row: int) -> WikidataEntity:
        """The read entity at `row`, without its statements."""
        c = self.columns
        start, end = int(c.alias_offsets[row]), int(c.alias_offsets[row + 1])
        enwiki, datatype = int(c.enwiki[row]), int(c.datatype[row])
        return WikidataEntity.model_construct(
            id=self.id_of(row),
            kind=KINDS[c.kind[row]],
            label=self._term(c.label[row]),
            aliases=[self._term(index) for index in c.aliases[start:end]],
            description=self._term(c.description[row]),
            enwiki=self._term(enwiki) if enwiki >= 0 else None,
            sitelinks=int(c.sitelinks[row]),
            datatype=c.datatypes[datatype] if datatype >= 0 else None,
            statements=[],
        )

    def value(self, index: int) -> Value:
        c = self.columns
        literals = c.tables["literals"]
        entity_row, text = int(c.value_entity[index]), int(c.value_text[index])
        entity_id = self.id_of(entity_row) if entity_row >= 0 else None
        precision, unit = int(c.value_precision[index]), int(c.value_unit[index])
        return Value.model_construct(
            type=VALUE_TYPES[c.value_type[index]],
            id=entity_id,
            text=entity_id if text < 0 else literals[text],
            raw=literals[int(c.value_raw[index])],
            precision=None if precision < 0 else precision,
            unit=None if unit < 0 else literals[unit],
        )

    def statement(self, index: int) -> Statement:
        c = self.columns
        texts = c.tables["qualifier_texts"]
        qualifiers: dict[str, list[str]] = {}
        start, end = int(c.qualifier_offsets[index]), int(c.qualifier_offsets[index + 1])
        for property_row, text in zip(
            c.qualifier_property[start:end], c.qualifier_value[start:end], strict=True
        ):
            qualifiers.setdefault(self.id_of(property_row), []).append(texts[int(text)])
        return Statement.model_construct(
            head=self.id_of(c.head[index]),
            property=self.id_of(c.property[index]),
            tail=self.value(int(c.value[index])),
            rank=RANKS[c.rank[index]],
            qualifiers=qualifiers,
            datatype=c.datatypes[c.statement_datatype[index]],
        )

    def statements_at(self, indexes: Iterable[int]) -> list[Statement]:
        return [self.statement(int(index)) for index in indexes]

    def head_indexes(self, entity_id: str) -> np.ndarray:
        """The statement indexes whose head is the entity, in reading order."""
        row = self.row(entity_id)
        if row < 0:
            return np.zeros(0, dtype=np.int64)
        start = int(self.columns.head_start[row])
        return np.arange(start, start + int(self.columns.head_count[row]))

    def tail_indexes(self, entity_id: str) -> np.ndarray:
        """The statement indexes whose tail is the entity, in reading order."""
        row = self.row(entity_id)
        if row < 0:
            return np.zeros(0, dtype=np.int64)
        offsets = self.columns.tail_offsets
        return np.asarray(self.columns.tail_statements[int(offsets[row]) : int(offsets[row + 1])])

    def tail_indexes_of(self, head: str, property_id: str) -> np.ndarray:
        indexes = self.head_indexes(head)
        prop = self.row(property_id)
        if prop < 0 or not len(indexes):
            return indexes[:0]
        return indexes[self.columns.property[indexes] == prop]

    # --- the record API -----------------------------------------------------------------------------

    def __contains__(self, entity_id: str) -> bool:
        return self.entity_row(entity_id) >= 0

    def items(self) -> list[WikidataEntity]:
        """The items (Q-ids), in reading order."""
        order = self.columns.order
        return [self.entity(int(row)) for row in np.asarray(order)[self.columns.kind[order] == 1]]

    def label(self, entity_id: str) -> str:
        """The English label of an item or property, or the id itself when unknown."""
        label = self._label_of_row(self.entity_row(entity_id))
        return label or self.property_label(entity_id) or entity_id

    def property_label(self, property_id: str) -> str:
        """A property's English label from its entity (or a table's row), irbgen's property table or its
        wording table, "" when none has one."""
        label = self._label_of_row(self.entity_row(property_id)) or shipped_labels().get(property_id)
        if label:
            return label
        wording = load_wordings().get(property_id)
        return wording.label if wording is not None else ""

    def text(self, value: Value) -> str:
        """A value as a reader sees it: an entity's label, or the literal's text."""
        if value.type == "entity" and value.id:
            return self.label(value.id)
        return value.text

    def tails(self, head: str, property_id: str) -> list[Statement]:
        """Every truthy statement (head, property, *)."""
        return self.statements_at(self.tail_indexes_of(head, property_id))

    def has(self, statement: Statement) -> bool:
        """Whether this exact (head, property, tail) is in the base."""
        key = statement.tail.key
        values = self.columns.value[self.tail_indexes_of(statement.head, statement.property)]
        return any(self.value(int(index)).key == key for index in np.unique(values))

    def about(self, entity_id: str) -> list[Statement]:
        """Statements whose head is the entity, then those whose tail is."""
        return [*self.by_head.get(entity_id, []), *self.by_tail.get(entity_id, [])]

    def properties_used(self) -> set[str]:
        """The properties of the base's statements."""
        return {self.id_of(row) for row in np.unique(self.columns.property)}


def _from_columns(columns: KnowledgeColumns) -> KnowledgeBase:
    return KnowledgeBase(columns=columns)


class _Entities(Mapping[str, WikidataEntity]):
    """Read entities by id, in reading order, made on demand."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def __getitem__(self, entity_id: str) -> WikidataEntity:
        row = self.kb.entity_row(entity_id)
        if row < 0:
            raise KeyError(entity_id)
        return self.kb.entity(row)

    def __contains__(self, entity_id: object) -> bool:
        return isinstance(entity_id, str) and self.kb.entity_row(entity_id) >= 0

    def __iter__(self) -> Iterator[str]:
        return (self.kb.id_of(row) for row in self.kb.columns.order)

    def __len__(self) -> int:
        return len(self.kb.columns.order)


class _Statements(Sequence[Statement]):
    """Every statement, in reading order, made on demand."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def __len__(self) -> int:
        return self.kb.columns.statement_count

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return self.kb.statements_at(range(*index.indices(len(self))))
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.kb.statement(index)

    def __iter__(self) -> Iterator[Statement]:
        return (self.kb.statement(index) for index in range(len(self)))


class _StatementIndex(Mapping):
    """Statements by a key, as lists made on demand; a missing key reads as no statements."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def indexes(self, key: Any) -> np.ndarray:
        raise NotImplementedError

    def __getitem__(self, key: Any) -> list[Statement]:
        return self.kb.statements_at(self.indexes(key))

    def get(self, key: Any, default: Any = None) -> Any:
        indexes = self.indexes(key)
        return self.kb.statements_at(indexes) if len(indexes) else default

    def __contains__(self, key: object) -> bool:
        return bool(len(self.indexes(key)))


class _ByHead(_StatementIndex):
    def indexes(self, key: Any) -> np.ndarray:
        return self.kb.head_indexes(key) if isinstance(key, str) else np.zeros(0, dtype=np.int64)

    def __iter__(self) -> Iterator[str]:
        columns = self.kb.columns
        rows = np.flatnonzero(columns.head_count)
        rows = rows[np.argsort(np.asarray(columns.head_start)[rows], kind="stable")]
        return (self.kb.id_of(row) for row in rows)

    def __len__(self) -> int:
        return int(np.count_nonzero(self.kb.columns.head_count))


class _ByTail(_StatementIndex):
    def indexes(self, key: Any) -> np.ndarray:
        return self.kb.tail_indexes(key) if isinstance(key, str) else np.zeros(0, dtype=np.int64)

    def __iter__(self) -> Iterator[str]:
        columns = self.kb.columns
        rows = np.flatnonzero(np.diff(columns.tail_offsets))
        first = np.asarray(columns.tail_statements)[np.asarray(columns.tail_offsets)[rows]]
        return (self.kb.id_of(row) for row in rows[np.argsort(first, kind="stable")])

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self.kb.columns.tail_offsets)))


class _ByHeadProperty(_StatementIndex):
    def indexes(self, key: Any) -> np.ndarray:
        if not (isinstance(key, tuple) and len(key) == 2):
            return np.zeros(0, dtype=np.int64)
        return self.kb.tail_indexes_of(*key)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        columns = self.kb.columns
        pairs = dict.fromkeys(zip(columns.head.tolist(), columns.property.tolist(), strict=True))
        return ((self.kb.id_of(head), self.kb.id_of(prop)) for head, prop in pairs)

    def __len__(self) -> int:
        return sum(1 for _ in self)
