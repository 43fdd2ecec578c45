"""Where records are in a finished checkpoint, for readers that need a few of its lines, not all.

`id_lines` finds the lines of records with given ids, in the order they were written, by searching the
file forward (a byte search, no line decoded).

`build_index` and `LineIndex` look records up by one of their leading fields, for workers that read a few
records of a large checkpoint by value (the documents a shard's keypoints cite, irbgen.irb.pairs). The
index is an SQLite file beside the checkpoint (`outputs.by-<field>.sqlite`), made by the driver in one pass
over the lines (each read only as far as the field) and holding the checkpoint file's identity: an index
of another version of the file is made again. Workers open it read-only. A value that repeats points at
its last line, as a dict of the lines would.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from pathlib import Path

from irbgen.errors import IrbgenError
from irbgen.io import atomic_path
from irbgen.pipeline.encoded import leading_fields, unwrap
from irbgen.pipeline.shards import Span, mapped


def id_lines(path: Path, ids: Iterable[str]) -> list[tuple[int, int]] | None:
    """Where (start, end) the line of the record whose first field `id` is each of IDS is, each searched
    forward from the one before (IDS in the order the records were written); None if one is not found.

    The record's first field follows the checkpoint's `"record": ` at once; inside a string its quotes
    would be escaped, so only a record's own id matches.
    """
    found: list[tuple[int, int]] = []
    with mapped(path) as view:
        position = 0
        for value in ids:
            written = _JSON_TEXT(value).encode()
            at = view.find(b', "record": {"id": ' + written, position)  # the closing quote ends the id
            if at < 0:
                return None
            end = view.find(b"\n", at)
            position = len(view) if end < 0 else end + 1
            found.append((view.rfind(b"\n", 0, at) + 1, position))
    return found


_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps(..., ensure_ascii=False), made once


def index_path(path: Path, field: str) -> Path:
    """Where the index of PATH's records by FIELD is kept."""
    return path.with_name(f"{path.stem}.by-{field}.sqlite")


def build_index(span: Span, field: str) -> bool:
    """Index the records of SPAN (a whole finished checkpoint) by FIELD, unless an index of this version
    of the file exists; False when a line is not as this irbgen writes it (nothing is indexed)."""
    path, identity = span.path, span.identity()
    index = index_path(path, field)
    if _identity(index) == identity:
        return True
    try:
        with atomic_path(index) as temporary, closing(sqlite3.connect(temporary)) as database:
            database.execute("CREATE TABLE lines (value TEXT PRIMARY KEY, start INTEGER, end INTEGER)")
            database.execute("CREATE TABLE file (identity TEXT)")
            database.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?, ?)", _rows(path, field))
            database.execute("INSERT INTO file VALUES (?)", (identity,))
            database.commit()
    except _NotAsWritten:
        index.unlink(missing_ok=True)  # an index of an earlier version of the file (the partial one is gone)
        return False
    return True


class _NotAsWritten(Exception):
    """A line of the checkpoint is not as this irbgen writes it."""


def _rows(path: Path, field: str) -> Iterator[tuple[str, int, int]]:
    """(value, start, end) of each line of PATH."""
    start = 0
    with open(path, "rb") as lines:
        for line in lines:
            record = unwrap(line)
            value = None if record is None else leading_fields(record, (field,))[field]
            if not isinstance(value, str):
                raise _NotAsWritten
            yield value, start, start + len(line)
            start += len(line)


def _identity(index: Path) -> str | None:
    if not index.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{index}?mode=ro&immutable=1", uri=True)) as database:
            row = database.execute("SELECT identity FROM file").fetchone()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


class LineIndex:
    """Records of a finished checkpoint looked up by the field it was indexed by (see `build_index`); a
    worker's, read-only. Use as a context manager."""

    def __init__(self, span: Span, field: str) -> None:
        self.span, self.field = span, field
        index = index_path(span.path, field)
        if _identity(index) != span.identity():
            raise IrbgenError(f"{index} does not index {span.path} as it is now; run the stage again")
        self._database = sqlite3.connect(f"file:{index}?mode=ro&immutable=1", uri=True)
        self._file = open(span.path, "rb")

    def __enter__(self) -> LineIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self._database.close()
        self._file.close()

    def get(self, value: str) -> bytes | None:
        """The record's JSON whose FIELD is VALUE, undecoded; None if there is none."""
        row = self._database.execute("SELECT start, end FROM lines WHERE value = ?", (value,)).fetchone()
        if row is None:
            return None
        start, end = row
        self._file.seek(start)
        record = unwrap(self._file.read(end - start))
        if record is None:
            raise IrbgenError(f"{self.span.path}: the line at byte {start} is not the one indexed")
        return record
