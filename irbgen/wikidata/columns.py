"""The knowledge base as numpy columns: interned ids, statement columns, CSR adjacency, string tables.

Layout (one array per name, saved as `NAME.npy` in a directory and memory-mapped back):

- entity rows, one per id the base met (heads, tails, properties, qualifier properties): `ids` (a
  string table), `kind` (0 only mentioned, 1 item, 2 property), `sitelinks`, `label`, `description`,
  `enwiki`, `datatype` (indexes into `terms` or the datatype list, -1 for none), `alias_offsets` into
  `aliases` (term indexes); `order`: the rows of the read entities, in reading order;
- values, one per distinct value key (the first value read for a key stands for all, as before):
  `value_type`, `value_entity` (row, -1 for literals), `value_text` (-1: the entity id), `value_raw`,
  `value_precision` (-1: none), `value_unit` (indexes into `literals`, -1 for none);
- statements, in reading order (grouped by head): `head`, `property` (rows), `value`, `rank`
  (0 normal, 1 preferred), `statement_datatype`, `qualifier_offsets` into `qualifier_property` (rows)
  and `qualifier_value` (indexes into `qualifier_texts`);
- adjacency: `head_start`/`head_count` per row (a head's statements are contiguous), and by tail
  `tail_offsets` per row into `tail_statements`.

Strings sit in four tables (`ids`, `terms`, `literals`, `qualifier_texts`); everything else is fixed
width, so `resident_bytes` is what the base costs beyond its strings.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from irbgen.wikidata.entity_ids import NO_CODE, IdIndex, id_code
from irbgen.wikidata.strings import StringTable, StringTableBuilder, as_plain

FORMAT = 1
VALUE_TYPES = ("entity", "time", "quantity", "string", "monolingualtext", "globecoordinate", "other")
RANKS = ("normal", "preferred")
KINDS = ("", "item", "property")
TABLES = ("ids", "terms", "literals", "qualifier_texts")
ENTITY_ARRAYS = (
    "kind",
    "sitelinks",
    "label",
    "description",
    "enwiki",
    "datatype",
    "alias_offsets",
    "aliases",
)
VALUE_ARRAYS = ("value_type", "value_entity", "value_text", "value_raw", "value_precision", "value_unit")
STATEMENT_ARRAYS = (
    "head", "property", "value", "rank", "statement_datatype",
    "qualifier_offsets", "qualifier_property", "qualifier_value",
)  # fmt: skip
INDEX_ARRAYS = ("order", "head_start", "head_count", "tail_offsets", "tail_statements", "codes")
ARRAYS = ENTITY_ARRAYS + VALUE_ARRAYS + STATEMENT_ARRAYS + INDEX_ARRAYS
_TYPE_INDEX = {name: index for index, name in enumerate(VALUE_TYPES)}


def value_key(value_type: str, entity_id: str | None, text: str, raw: str, unit: str | None) -> str:
    """`Value.key` from its fields: the entity id, or type + raw literal (+ a quantity's unit)."""
    if value_type == "entity" and entity_id:
        return entity_id
    suffix = f"@{unit}" if value_type == "quantity" and unit else ""
    return f"{value_type}:{raw or text}{suffix}"


def _get(record: Any, name: str, default: Any = None) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def _index_dtype(size: int) -> type:
    return np.int32 if size < 2**31 else np.int64


@dataclass
class KnowledgeColumns:
    """Every array and string table of one base, plus the small datatype vocabulary."""

    arrays: dict[str, np.ndarray]
    tables: dict[str, StringTable]
    datatypes: list[str]
    ids: IdIndex = field(init=False)

    def __post_init__(self) -> None:
        self.__dict__.update(self.arrays)  # columns as attributes, found without __getattr__
        others = {self.tables["ids"][row]: row for row in np.flatnonzero(self.arrays["codes"] == NO_CODE)}
        self.ids = IdIndex(self.arrays["codes"], others)

    def __getattr__(self, name: str) -> np.ndarray:
        arrays = self.__dict__.get("arrays", {})
        if name in arrays:
            return arrays[name]
        raise AttributeError(name)

    @property
    def statement_count(self) -> int:
        return len(self.arrays["head"])

    def resident_bytes(self) -> int:
        """Bytes of every fixed-width array (the string tables excluded), with the id index."""
        index = self.ids.order.nbytes + self.ids.sorted_codes.nbytes
        return int(sum(array.nbytes for array in self.arrays.values()) + index)

    def string_bytes(self) -> int:
        return sum(table.nbytes for table in self.tables.values())

    def save(self, directory: Path, meta: Mapping[str, Any] | None = None) -> None:
        """Write every array and table into `directory`; `meta.json` last, so its presence means complete."""
        directory.mkdir(parents=True, exist_ok=True)
        for name, values in self.arrays.items():
            np.save(directory / f"{name}.npy", values)
        for name, table in self.tables.items():
            table.save(directory, name)
        record = {"format": FORMAT, "datatypes": self.datatypes, "statements": self.statement_count}
        (directory / "meta.json").write_text(json.dumps({**record, **(meta or {})}, sort_keys=True))

    @classmethod
    def load(cls, directory: Path, mmap: bool = True) -> KnowledgeColumns:
        """Map a saved base (read-only); `meta.json` says whether one was saved whole."""
        meta = read_meta(directory)
        if meta is None or meta.get("format") != FORMAT:
            raise FileNotFoundError(f"{directory}: no complete knowledge base")
        mode = "r" if mmap else None
        arrays = {name: as_plain(np.load(directory / f"{name}.npy", mmap_mode=mode)) for name in ARRAYS}
        tables = {name: StringTable.load(directory, name, mmap) for name in TABLES}
        return cls(arrays, tables, list(meta["datatypes"]))


def read_meta(directory: Path) -> dict[str, Any] | None:
    """The saved base's meta.json, None when there is none."""
    path = directory / "meta.json"
    return json.loads(path.read_text()) if path.is_file() else None


class ColumnsBuilder:
    """Collects entities (records or their JSON rows) into growing arrays; `finish` makes the columns."""

    def __init__(self) -> None:
        self._rows: dict[str, int] = {}
        self._ids = StringTableBuilder()
        self._terms = StringTableBuilder(shared=True)
        self._literals = StringTableBuilder(shared=True)
        self._qualifier_texts = StringTableBuilder(shared=True)
        self._datatypes: dict[str, int] = {}
        self._entity = {name: array("i") for name in ("sitelinks", "label", "description", "enwiki")}
        self._entity["kind"], self._entity["datatype"] = array("b"), array("h")
        self._alias_spans: dict[int, list[int]] = {}
        self._order = array("i")
        self._values: dict[str, int] = {}  # literal values by key (`value_key`)
        self._value = {name: array("q") for name in VALUE_ARRAYS}
        # rows fit int32 (ids are far fewer than 2**31); indexes into what grows with statements do not
        self._statement = {
            "head": array("i"),
            "property": array("i"),
            "value": array("q"),
            "rank": array("b"),
            "statement_datatype": array("h"),
        }
        self._qualifier_counts = array("i")
        self._qualifier_property = array("i")
        self._qualifier_value = array("q")
        self._row_value = array("q")  # per row, the index of the entity value naming it (-1: none yet)

    def _row(self, entity_id: str) -> int:
        row = self._rows.get(entity_id)
        if row is None:
            row = self._rows[entity_id] = len(self._rows)
            self._ids.add(entity_id)
            self._row_value.append(-1)
            for column in self._entity.values():
                column.append(
                    0 if column is self._entity["kind"] or column is self._entity["sitelinks"] else -1
                )
        return row

    def _datatype(self, name: str) -> int:
        index = self._datatypes.get(name)
        if index is None:
            index = self._datatypes[name] = len(self._datatypes)
        return index

    def is_mentioned(self, entity_id: str) -> bool:
        """Whether an entity, statement or qualifier read so far names the id."""
        return entity_id in self._rows

    def is_read(self, entity_id: str) -> bool:
        row = self._rows.get(entity_id)
        return row is not None and self._entity["kind"][row] != 0

    def add_entity(self, entity: Any) -> None:
        """One item or property with its statements (a WikidataEntity or its JSON row)."""
        row = self._row(_get(entity, "id"))
        columns = self._entity
        if columns["kind"][row] == 0:
            self._order.append(row)
        columns["kind"][row] = KINDS.index(_get(entity, "kind"))
        columns["sitelinks"][row] = int(_get(entity, "sitelinks", 0) or 0)
        columns["label"][row] = self._terms.add(_get(entity, "label", "") or "")
        columns["description"][row] = self._terms.add(_get(entity, "description", "") or "")
        enwiki = _get(entity, "enwiki")
        columns["enwiki"][row] = -1 if enwiki is None else self._terms.add(enwiki)
        datatype = _get(entity, "datatype")
        columns["datatype"][row] = -1 if datatype is None else self._datatype(datatype)
        aliases = [self._terms.add(alias) for alias in _get(entity, "aliases", ()) or ()]
        if aliases:  # most entities have none: no list kept for them
            self._alias_spans[row] = aliases
        else:
            self._alias_spans.pop(row, None)
        for statement in _get(entity, "statements", ()) or ():
            self._add_statement(statement)

    def _add_value(self, tail: Any) -> int:
        value_type, entity_id = _get(tail, "type"), _get(tail, "id")
        text, raw, unit = _get(tail, "text", ""), _get(tail, "raw", "") or "", _get(tail, "unit")
        columns = self._value
        if value_type == "entity" and entity_id:  # its key is the id: found through the id's row
            row = self._row(entity_id)
            if self._row_value[row] >= 0:
                return self._row_value[row]
            index = self._row_value[row] = len(columns["value_type"])
        else:
            key = value_key(value_type, entity_id, text, raw, unit)
            index = self._values.get(key, -1)
            if index >= 0:
                return index
            index = self._values[key] = len(columns["value_type"])
        columns["value_type"].append(_TYPE_INDEX[value_type])
        columns["value_entity"].append(self._row(entity_id) if entity_id is not None else -1)
        columns["value_text"].append(
            -1 if entity_id is not None and text == entity_id else self._literals.add(text)
        )
        columns["value_raw"].append(self._literals.add(raw))
        precision = _get(tail, "precision")
        columns["value_precision"].append(-1 if precision is None else int(precision))
        columns["value_unit"].append(-1 if unit is None else self._literals.add(unit))
        return index

    def _add_statement(self, statement: Any) -> None:
        columns = self._statement
        columns["head"].append(self._row(_get(statement, "head")))
        columns["property"].append(self._row(_get(statement, "property")))
        columns["value"].append(self._add_value(_get(statement, "tail")))
        columns["rank"].append(RANKS.index(_get(statement, "rank")))
        columns["statement_datatype"].append(self._datatype(_get(statement, "datatype", "") or ""))
        count = 0
        for property_id, texts in (_get(statement, "qualifiers") or {}).items():
            property_row = self._row(property_id)
            for text in texts:
                self._qualifier_property.append(property_row)
                self._qualifier_value.append(self._qualifier_texts.add(text))
                count += 1
        self._qualifier_counts.append(count)

    def finish(self) -> KnowledgeColumns:
        """The columns, with the adjacency indexes; the builder is spent."""
        rows = len(self._rows)
        row_type = _index_dtype(rows)
        arrays: dict[str, np.ndarray] = {}
        entity = self._entity
        arrays["kind"] = np.asarray(entity["kind"], dtype=np.int8)
        arrays["sitelinks"] = np.asarray(entity["sitelinks"], dtype=np.int32)
        for name in ("label", "description", "enwiki"):
            arrays[name] = np.asarray(entity[name], dtype=np.int64).astype(_index_dtype(len(self._terms)))
        arrays["datatype"] = np.asarray(entity["datatype"], dtype=np.int16)
        alias_counts = np.zeros(rows, dtype=np.int64)
        for row, span in self._alias_spans.items():
            alias_counts[row] = len(span)
        arrays["alias_offsets"] = np.concatenate([[0], np.cumsum(alias_counts)]).astype(np.int64)
        flat = [index for row in sorted(self._alias_spans) for index in self._alias_spans[row]]
        arrays["aliases"] = np.asarray(flat, dtype=np.int64).astype(_index_dtype(len(self._terms)))
        arrays["order"] = np.asarray(self._order, dtype=row_type)
        for name, column in self._value.items():
            arrays[name] = np.asarray(column, dtype=np.int64)
        arrays["value_type"] = arrays["value_type"].astype(np.int8)
        arrays["value_entity"] = arrays["value_entity"].astype(row_type)
        arrays["value_precision"] = arrays["value_precision"].astype(np.int8)
        literal_type = _index_dtype(len(self._literals))
        for name in ("value_text", "value_raw", "value_unit"):
            arrays[name] = arrays[name].astype(literal_type)
        arrays["codes"] = np.fromiter(
            (id_code(entity_id) for entity_id in self._rows), dtype=np.int64, count=rows
        )
        values, texts = len(self._value["value_type"]), len(self._qualifier_texts)
        self._rows, self._values, self._row_value = {}, {}, array("q")  # freed before the adjacency
        tables = {
            "ids": self._ids.finish(),
            "terms": self._terms.finish(),
            "literals": self._literals.finish(),
            "qualifier_texts": self._qualifier_texts.finish(),
        }
        self._statement_arrays(arrays, rows, values, texts)
        datatypes = sorted(self._datatypes, key=self._datatypes.__getitem__)
        return KnowledgeColumns(arrays, tables, datatypes)

    def _statement_arrays(self, arrays: dict[str, np.ndarray], rows: int, values: int, texts: int) -> None:
        """Statement columns grouped by head (reading order unless an id was read twice), and the CSRs.

        The columns are views of the builder's arrays where their type is already the saved one, so
        finishing copies no statement column it need not."""
        statement = {name: np.asarray(column) for name, column in self._statement.items()}
        head = statement["head"]
        n = len(head)
        counts = np.asarray(self._qualifier_counts)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        qualifier_property = np.asarray(self._qualifier_property)
        qualifier_value = np.asarray(self._qualifier_value)
        run_heads = head[np.flatnonzero(np.concatenate([[True], head[1:] != head[:-1]]))] if n else head
        if len(np.unique(run_heads)) < len(run_heads):  # a head read twice: group its statements
            first = np.full(rows, n, dtype=np.int64)
            np.minimum.at(first, head, np.arange(n))
            order = np.argsort(first[head], kind="stable")
            picks = _ranges(offsets[:-1][order], counts[order].astype(np.int64))
            qualifier_property, qualifier_value = qualifier_property[picks], qualifier_value[picks]
            offsets[1:] = np.cumsum(counts[order])
            statement = {name: column[order] for name, column in statement.items()}
        row_type = _index_dtype(rows)
        arrays["head"] = statement["head"].astype(row_type, copy=False)
        arrays["property"] = statement["property"].astype(row_type, copy=False)
        arrays["value"] = statement["value"].astype(_index_dtype(values), copy=False)
        arrays["rank"] = statement["rank"]
        arrays["statement_datatype"] = statement["statement_datatype"]
        arrays["qualifier_offsets"] = offsets.astype(_index_dtype(int(offsets[-1]) + 1))
        arrays["qualifier_property"] = qualifier_property.astype(row_type, copy=False)
        arrays["qualifier_value"] = qualifier_value.astype(_index_dtype(texts), copy=False)
        grouped = arrays["head"]
        head_count = np.bincount(grouped, minlength=rows).astype(np.int32)
        head_start = np.zeros(rows, dtype=np.int64)
        if n:
            starts = np.flatnonzero(np.concatenate([[True], grouped[1:] != grouped[:-1]]))
            head_start[grouped[starts]] = starts
        arrays["head_start"], arrays["head_count"] = head_start.astype(_index_dtype(n + 1)), head_count
        tail_row = arrays["value_entity"][arrays["value"]]
        with_entity = np.flatnonzero(tail_row >= 0)
        by_tail = with_entity[np.argsort(tail_row[with_entity], kind="stable")]
        arrays["tail_statements"] = by_tail.astype(_index_dtype(n))
        tail_counts = np.bincount(tail_row[with_entity], minlength=rows)
        arrays["tail_offsets"] = np.concatenate([[0], np.cumsum(tail_counts)]).astype(_index_dtype(n + 1))


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenation of range(start, start + count) for every pair, vectorised."""
    total = int(counts.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    shifts = np.repeat(starts - (ends - counts), counts)
    return np.arange(total, dtype=np.int64) + shifts


def build_columns(
    entities: Iterable[Any], properties: Iterable[Any] = (), table: Iterable[Any] = ()
) -> KnowledgeColumns:
    """Columns from the entities a reader yields, then the properties a properties-only dump adds, then
    the rows of a property table (`irbgen.wikidata.property_table`) for properties the base names but
    has not read; the first to give a property wins."""
    builder = ColumnsBuilder()
    for entity in entities:
        builder.add_entity(entity)
    for prop in properties:
        if _get(prop, "kind") == "property" and not builder.is_read(_get(prop, "id")):
            builder.add_entity(prop)
    for prop in table:
        if builder.is_mentioned(prop["id"]) and not builder.is_read(prop["id"]):
            builder.add_entity(prop)
    return builder.finish()
