"""Statement keys as 64-bit hashes, so two bases are compared column against column.

`statement_hashes(kb)` hashes every statement's (head, property, tail key) from the columns: ids by
their integer codes, each distinct value once by its `Value.key`. `new_statements(new, old)` marks the
statements of `new` whose key `old` lacks (`Newness.is_new` for every statement at once), with one
sorted array of the old hashes and no record per statement. Two different keys share a hash with
probability about n^2 / 2^65 over n statements (about 5% for a whole dump of 1.4 billion).
"""

from __future__ import annotations

import hashlib

import numpy as np

from irbgen.wikidata.columns import VALUE_TYPES, KnowledgeColumns, value_key
from irbgen.wikidata.entity_ids import NO_CODE

_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix(values: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, vectorised over uint64."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _text_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def _row_hashes(columns: KnowledgeColumns) -> np.ndarray:
    """One hash per entity row, from its id code (an id without a code: from its text)."""
    codes = np.asarray(columns.codes)
    hashes = _mix(codes.view(np.uint64) if codes.dtype == np.int64 else codes.astype(np.uint64))
    for row in np.flatnonzero(codes == NO_CODE):
        hashes[row] = np.uint64(_text_hash("id:" + columns.tables["ids"][int(row)]))
    return hashes


def _value_hashes(columns: KnowledgeColumns, rows: np.ndarray) -> np.ndarray:
    """One hash per distinct value: its entity row's hash, else the hash of its key."""
    entity = np.asarray(columns.value_entity)
    hashes = np.zeros(len(entity), dtype=np.uint64)
    has_entity = entity >= 0
    hashes[has_entity] = rows[entity[has_entity]]
    literals = columns.tables["literals"]
    types, texts, raws, units = (np.asarray(getattr(columns, name)) for name in
                                 ("value_type", "value_text", "value_raw", "value_unit"))  # fmt: skip
    for index in np.flatnonzero(~has_entity):
        text, unit = int(texts[index]), int(units[index])
        key = value_key(
            VALUE_TYPES[types[index]], None, literals[text] if text >= 0 else "",
            literals[int(raws[index])], literals[unit] if unit >= 0 else None,
        )  # fmt: skip
        hashes[index] = np.uint64(_text_hash(key))
    return hashes


def statement_hashes(columns: KnowledgeColumns) -> np.ndarray:
    """A uint64 hash of every statement's key (head, property, tail key), in statement order."""
    rows = _row_hashes(columns)
    values = _value_hashes(columns, rows)
    with np.errstate(over="ignore"):
        head = rows[np.asarray(columns.head)]
        prop = _mix(rows[np.asarray(columns.property)] ^ head)
        return _mix(values[np.asarray(columns.value)] ^ prop)


def new_statements(new: KnowledgeColumns, old: KnowledgeColumns) -> np.ndarray:
    """A bool per statement of `new`: True when `old` has no statement with its key."""
    old_hashes = np.unique(statement_hashes(old))
    return ~np.isin(statement_hashes(new), old_hashes, assume_unique=False)
