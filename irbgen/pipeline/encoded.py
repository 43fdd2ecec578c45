"""Input records that travel as their JSON, decoded only where a stage processes them.

A stage's inputs are often an earlier stage's checkpoint, or a join of several. Parsing every such
record in the driver only to pickle it to a worker made the driver the bound of a large build (issue 29).
`Encoded` inputs are the records' JSON, one bytes line each: a sharded stage hands the lines to its
workers, which decode them (`irbgen.pipeline.runner.shard_items`); inline, iterating them decodes them.
Joins read just the leading fields they join on (`leading_fields`), never the whole record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from irbgen.errors import IrbgenError

Lines = Callable[[], Iterator[bytes]]  # records' JSON lines, given anew on each call (one pass each)

JSON_STRING = rb'"(?:[^"\\\n]|\\.)*"'  # a JSON string, as a pattern (on one line)
CHECKPOINT_LINE = rb'\{"key": ' + JSON_STRING + rb', "record": '  # how the checkpoint starts a line
_WRAPPED = re.compile(CHECKPOINT_LINE)
_FIELD = re.compile(r'\s*[{,]\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*')
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Joinable:
    """How workers make a join's lines themselves from spans of finished checkpoints, so that the driver
    neither reads nor sends them.

    `cut(largest)` gives each shard's spans (`irbgen.pipeline.shards.Span`, one per checkpoint, about
    LARGEST bytes a shard), or None when the checkpoints are not as this irbgen writes them (the driver
    then joins the lines itself); `join` makes a shard's lines from its spans, in order, and must be a
    module-level function (it travels by name).
    """

    cut: Callable[[int], list[tuple[Any, ...]] | None]
    join: Callable[..., Iterator[bytes]]  # join(*spans) -> the shard's lines


@dataclass(frozen=True)
class Encoded:
    """Records of MODEL as JSON lines, read anew from `lines()` on each pass; `source` names them in
    errors (a file, or how a join made them) and `length`, when known, is their count (a progress total).

    `path`, when set, is the finished checkpoint whose record lines `lines()` gives: a worker that can read
    the run directory reads its shard's lines from it, so the driver hands it only where they are.
    `joinable`, when set, says how workers make the lines of a join themselves (see `Joinable`)."""

    model: type[BaseModel]
    lines: Lines
    source: str
    length: int | None = None
    path: Path | None = None
    joinable: Joinable | None = None

    def __iter__(self) -> Iterator[BaseModel]:
        for number, line in enumerate(self.lines(), start=1):
            yield decode(self.model, line, self.source, number)


def decode(model: type[BaseModel], line: bytes, source: str, number: int) -> BaseModel:
    """Record NUMBER of SOURCE: its JSON parsed, then validated as MODEL (as a checkpoint reads it)."""
    try:
        value = json.loads(line)
    except ValueError as error:
        raise IrbgenError(f"{source}:{number}: corrupt record ({error})") from None
    return model.model_validate(value)


def unwrap(line: bytes) -> bytes | None:
    """The record's JSON in a checkpoint output line, as the checkpoint writes it; None for another shape."""
    found = _WRAPPED.match(line)
    if found is None or not line.endswith(b"}\n"):
        return None
    return line[found.end() : -2]


def leading_fields(record: bytes, names: tuple[str, ...]) -> dict[str, Any]:
    """The fields NAMES of a record's JSON, decoding the record only as far as the last of them.

    Records are written with their fields in declaration order, so the fields a join needs (ids, URLs),
    declared first, cost a few microseconds where parsing a whole page costs a millisecond. A record of
    another shape is parsed whole.
    """
    jumped = _jump_to_fields(record, names)
    if jumped is not None:
        return jumped
    text = record.decode("utf-8")
    wanted, found, position = set(names), {}, 0
    while wanted - found.keys():
        field = _FIELD.match(text, position)
        if field is None:
            whole = json.loads(text)
            return {name: whole.get(name) for name in names}
        value, position = _DECODER.raw_decode(text, field.end())
        found[field.group(1)] = value
    return {name: found[name] for name in names}


def _jump_to_fields(record: bytes, names: tuple[str, ...]) -> dict[str, Any] | None:
    """The fields NAMES, each decoded where its key first appears, without decoding the fields before it;
    None unless that is sure to be the record's own field.

    It is when no `{` comes before it but the record's first (no nested object, where a field of the same
    name could be) and its quote is not escaped (inside a string). Only a window after the key is decoded,
    grown until the value fits.
    """
    if not record.startswith(b"{"):
        return None
    found: dict[str, Any] = {}
    for name in names:
        key = b'"' + name.encode() + b'": '
        at = record.find(key)
        if at < 0 or record.find(b"{", 1, at) >= 0 or _escaped(record, at):
            return None
        start, size = at + len(key), 512
        while True:
            window = record[start : start + size].decode("utf-8", "ignore")  # a cut last character dropped
            try:
                value, end = _DECODER.raw_decode(window)
            except ValueError:
                end = len(window)
            if end < len(window):  # something follows, so a number was not cut short either
                found[name] = value
                break
            if start + size >= len(record):
                return None
            size *= 8
    return found


def _escaped(record: bytes, at: int) -> bool:
    """Whether the character at AT follows an odd number of backslashes."""
    before = at
    while before > 0 and record[before - 1] == 92:  # a backslash
        before -= 1
    return (at - before) % 2 == 1
