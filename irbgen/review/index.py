"""Byte-offset indexes of samples.jsonl and corpus.jsonl: one streaming pass at start, one seek per read.

A review page needs one sample and its few evidence documents, so nothing is loaded whole: the index
keeps each record's id and where its line starts, and a read seeks there and parses that line only.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

from irbgen.benchmark import CORPUS, SAMPLES, describe_error
from irbgen.errors import BadInputError, IrbgenError
from irbgen.schema import Document, Sample

# The writer puts the id first ({"id":"..." and {"_id":"...); any other layout falls back to json.loads.
_SAMPLE_ID = re.compile(rb'^\{"id":("(?:[^"\\]|\\.)*")')
_DOCUMENT_ID = re.compile(rb'^\{"_id":("(?:[^"\\]|\\.)*")')


class ChangedError(IrbgenError):
    """An indexed file changed while the app was running; its offsets no longer hold."""


@dataclass(frozen=True)
class _Stamp:
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, file: Path) -> _Stamp:
        stat = file.stat()
        return cls(stat.st_size, stat.st_mtime_ns)


class LineIndex:
    """Record id -> byte offset of its line in one JSONL file, in file order."""

    def __init__(self, file: Path, key: str) -> None:
        self.file = Path(file)
        self.key = key
        self.ids: list[str] = []
        self.offsets: dict[str, int] = {}
        self.stamp = _Stamp.of(self.file)

    @classmethod
    def build(cls, file: Path, key: str, pattern: re.Pattern[bytes]) -> LineIndex:
        """Index FILE in one pass; a line without a readable id or a repeated id is bad input."""
        if not Path(file).is_file():
            raise BadInputError(f"{file}: no such file")
        index = cls(file, key)
        for lineno, offset, raw in _lines(index.file):
            record_id = _record_id(raw, key, pattern)
            if record_id is None:
                raise BadInputError(f"{file}:{lineno}: no {key!r} string in this line")
            if record_id in index.offsets:
                raise BadInputError(f"{file}:{lineno}: {key} {record_id!r} appears twice")
            index.offsets[record_id] = offset
            index.ids.append(record_id)
        return index

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, record_id: object) -> bool:
        return record_id in self.offsets

    def raw(self, record_id: str) -> bytes:
        """The line of RECORD_ID, read with one seek; KeyError for an id not in the file."""
        offset = self.offsets[record_id]
        if _Stamp.of(self.file) != self.stamp:
            raise ChangedError(f"{self.file}: changed since it was indexed; restart irbgen review")
        with self.file.open("rb") as handle:
            handle.seek(offset)
            return handle.readline()


def _lines(file: Path) -> Iterator[tuple[int, int, bytes]]:
    """(1-based line number, byte offset, line) of every non-blank line."""
    offset = 0
    with file.open("rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            if raw.strip():
                yield lineno, offset, raw
            offset += len(raw)


def _record_id(raw: bytes, key: str, pattern: re.Pattern[bytes]) -> str | None:
    match = pattern.match(raw)
    if match:
        return json.loads(match.group(1))
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, str) else None


def sample_digest(line: bytes) -> str:
    """The sha256 of a sample's line in samples.jsonl, without its newline."""
    return hashlib.sha256(line.rstrip(b"\r\n")).hexdigest()


class BenchmarkIndex:
    """The samples and documents of one benchmark directory, readable one at a time."""

    def __init__(self, benchmark: Path, samples: LineIndex, documents: LineIndex | None) -> None:
        self.benchmark = Path(benchmark)
        self.samples = samples
        self.documents = documents

    @classmethod
    def build(cls, benchmark: Path) -> BenchmarkIndex:
        """Index samples.jsonl and corpus.jsonl of BENCHMARK."""
        benchmark = Path(benchmark)
        return cls(
            benchmark,
            LineIndex.build(benchmark / SAMPLES, "id", _SAMPLE_ID),
            LineIndex.build(benchmark / CORPUS, "_id", _DOCUMENT_ID),
        )

    @classmethod
    def samples_only(cls, benchmark: Path) -> BenchmarkIndex:
        """Index samples.jsonl alone (scoring needs no documents)."""
        benchmark = Path(benchmark)
        return cls(benchmark, LineIndex.build(benchmark / SAMPLES, "id", _SAMPLE_ID), None)

    def digest(self, sample_id: str) -> str:
        """The sha256 of the sample's line as it is now (what a judgment of it records)."""
        return sample_digest(self.samples.raw(sample_id))

    def sample(self, sample_id: str) -> Sample:
        """The sample with this id; KeyError if there is none."""
        return _parse(self.samples, sample_id, Sample)

    def document(self, doc_id: str) -> Document | None:
        """The corpus document with this id, or None if the corpus lacks it."""
        if self.documents is None or doc_id not in self.documents:
            return None
        return _parse(self.documents, doc_id, Document)


def _parse(index: LineIndex, record_id: str, model: type[BaseModel]):
    raw = index.raw(record_id)
    try:
        return model.model_validate_json(raw)
    except ValidationError as e:
        raise BadInputError(f"{index.file}: {index.key} {record_id!r}: {describe_error(e)}") from None
