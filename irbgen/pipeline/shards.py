"""Checkpoint shards that workers write themselves; the driver only records which ones are complete.

A CPU stage that runs on other processes (a local pool, Ray) cuts its work items into shards (chunks of
1, 2, 4 ... up to the executor's chunk size, numbered in input order). A worker runs a shard and writes
its outputs, rejects, done keys and stats into the shard's own folder, in the stage's checkpoint format
(a CheckpointStore there), fsyncs them and returns the shard's stats. Only then does the driver append
the shard's number to the stage's manifest:

    RUN_DIR/stages/<stage>/shards.jsonl        {"shard": 12, "folder": "00000012.<token>", "digest": ...}
    SHARD_DIR/stages/<stage>/shards/<folder>/  outputs.jsonl rejects.jsonl done.jsonl run-rejects.jsonl
                                               stats.json complete

SHARD_DIR is the run directory, or a folder every node can write (`--shared-dir`). Each submission of a
shard gets a new folder (a random token), so a worker left running by a killed driver never writes into
the folder a later run records. The digest is of the shard's input keys: a resumed run reuses a recorded
shard only if it holds the same inputs and its folder is complete, and otherwise runs it again.

When every shard is complete, the driver concatenates their files, in shard order, into the stage's own
outputs.jsonl, rejects.jsonl and done.jsonl (bytes copied, nothing parsed), appends their rejects to
RUN_DIR/rejects.jsonl, and deletes the shards: the finished stage looks exactly as if one writer had
written it. Shards that do not hold consecutive inputs (an I/O stage's shards by host, see
irbgen.pipeline.host_shards) also write how many lines each input gave (`LINE_COUNTS`), and their lines
are merged back into input order from those counts (still nothing parsed).
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from irbgen.errors import IrbgenError
from irbgen.io import atomic_path
from irbgen.pipeline.checkpoint import (
    CheckpointStore,
    inputs_seen,
    read_stats,
    record_lines,
    truncate_torn_tail,
)
from irbgen.pipeline.stats import StageStats

MANIFEST = "shards.jsonl"
SHARDS = "shards"
RUN_REJECTS = "run-rejects.jsonl"  # a shard's lines for RUN_DIR/rejects.jsonl
LINE_COUNTS = "line-counts.json"  # [[outputs, rejects, done], ...]: the lines each input of a shard gave


@dataclass(frozen=True)
class Span:
    """Lines START to END (bytes, whole lines) of a finished checkpoint's outputs file, COUNT of them (0
    in a span joined with others, whose count no one needs)."""

    path: Path
    start: int
    end: int
    count: int

    def lines(self, first: int = 1) -> Iterator[bytes]:
        """The records' JSON in the span's lines, undecoded (FIRST: the first line's number, for errors)."""
        return record_lines(self.path, self.start, self.end, first)

    def identity(self) -> str:
        """The span and its file's identity. A finished checkpoint's file is never written in place (a redone
        stage replaces it: a new inode and time), so the same identity means the same lines."""
        state = os.stat(self.path)
        return f"{self.path}\t{self.start}\t{self.end}\t{state.st_ino}\t{state.st_size}\t{state.st_mtime_ns}"


@dataclass(frozen=True)
class Shard:
    """One shard: its number, its inputs and the folder its worker writes.

    The inputs are work items (WorkItem), or, when `model` is set, records' JSON lines (bytes): the
    worker decodes them into MODEL records and keys them itself, so the driver never parses them
    (`irbgen.pipeline.runner.shard_items`). With `spans` the lines are not carried at all: the worker
    reads them from earlier stages' checkpoints: the lines of one span, or what `join` makes of several
    spans (a module-level function, so it pickles by name). `first` is the input position of
    the first line, and `source` what the lines come from (for error messages).
    """

    number: int
    items: list[Any]
    folder: Path
    model: type[BaseModel] | None = None
    first: int = 0
    source: str = ""
    spans: tuple[Span, ...] = ()
    join: Callable[..., Iterator[bytes]] | None = None

    @property
    def size(self) -> int | None:
        """How many inputs the shard holds; None for a join, until its worker has counted them."""
        if not self.spans:
            return len(self.items)
        return self.spans[0].count if self.join is None else None

    def lines(self) -> Iterator[bytes]:
        """The shard's records' JSON lines (`model` set): carried, read from its span, or joined."""
        if not self.spans:
            return iter(self.items)
        if self.join is None:
            (span,) = self.spans
            return span.lines(self.first + 1)
        return self.join(*self.spans)

    @property
    def digest(self) -> str:
        """A hash of the shard's inputs: its spans (and join), its lines, or its input keys (and which
        repeat a key)."""
        if self.spans:
            join = "" if self.join is None else f"{self.join.__module__}.{self.join.__qualname__}"
            described = "\n".join([join, *(span.identity() for span in self.spans)])
            return hashlib.sha256(described.encode()).hexdigest()[:32]
        if self.model is not None:
            lines = hashlib.sha256()
            for line in self.items:
                lines.update(line + b"\n")  # no line holds a newline, so the joins are unambiguous
            return lines.hexdigest()[:32]
        keys = "\n".join(f"{item.key}\t{item.record is None}" for item in self.items)
        return hashlib.sha256(keys.encode()).hexdigest()[:32]


def spans(path: Path, largest: int) -> Iterator[Span]:
    """PATH's lines in spans of 1, 2, 4 ... lines, each ending with the line that brings it to LARGEST
    bytes (like `irbgen.pipeline.runner.chunked_lines`), found without reading the lines one by one."""
    with mapped(path) as view:
        size, start, most = len(view), 0, 1
        while start < size:
            end = _line_end(view, start + largest - 1, size)
            count = line_count(view, start, end)
            if count > most:
                end = start
                for _ in range(most):
                    end = _line_end(view, end, size)
                count = most
            yield Span(path, start, end, count)
            start, most = end, most * 2


def line_count(view: mmap.mmap | bytes, start: int = 0, end: int | None = None) -> int:
    """How many lines VIEW holds from START to END (whole lines; the last may lack its newline)."""
    end = len(view) if end is None else end
    return 0 if end <= start else view[start:end].count(b"\n") + (view[end - 1] != 10)


@contextmanager
def mapped(path: Path) -> Iterator[mmap.mmap | bytes]:
    """PATH's bytes, mapped (an empty file cannot be)."""
    if path.stat().st_size == 0:
        yield b""
        return
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as view:
        yield view


def _line_end(view: mmap.mmap | bytes, position: int, size: int) -> int:
    """Where the line holding byte POSITION ends (after its newline), or SIZE."""
    if position >= size:
        return size
    newline = view.find(b"\n", position)
    return size if newline < 0 else newline + 1


def shard_root(run_dir: Path, stage: str, shard_dir: Path | None = None) -> Path:
    """The folder under which the shards of STAGE are written."""
    return Path(shard_dir or run_dir) / "stages" / stage / SHARDS


def new_shard(root: Path, number: int, items: list[Any], **lines: Any) -> Shard:
    """A shard to submit, in a folder of its own; LINES: `model`, `first`, `source` (and `spans`, `join`)
    of encoded inputs."""
    return Shard(number, items, root / f"{number:08d}.{uuid.uuid4().hex[:12]}", **lines)


def done_lines(folder: Path) -> set[bytes]:
    """The done lines of a complete shard as written: one line a key, the same key the same line."""
    path = folder / "done.jsonl"
    return set(path.read_bytes().splitlines()) if path.exists() else set()


def keys_of(lines: Iterable[bytes]) -> set[str]:
    """The keys of done lines (see `done_lines`)."""
    return {json.loads(line)["key"] for line in lines}


def shard_store(stage: str, folder: Path) -> CheckpointStore:
    """The checkpoint a worker writes for one shard (fsynced when it finishes, not before)."""
    return CheckpointStore(folder, stage, folder=folder, run_rejects=folder / RUN_REJECTS, sync_seconds=1e9)


class ShardManifest:
    """The driver's record of a stage's complete shards: one appended line per shard, in shard order."""

    def __init__(self, store: CheckpointStore) -> None:
        self.path = store.folder / MANIFEST
        self._handle: IO[str] | None = None

    def open(self) -> dict[int, tuple[str, str]]:
        """The shards recorded by earlier runs ({number: (folder name, digest)}); then open for appending."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        truncate_torn_tail(self.path)
        recorded: dict[int, tuple[str, str]] = {}
        if self.path.exists():
            for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
                try:
                    entry = json.loads(line)
                    recorded[int(entry["shard"])] = (str(entry["folder"]), str(entry["digest"]))
                except (ValueError, TypeError, KeyError):
                    raise IrbgenError(
                        f"{self.path}:{number}: corrupt shard manifest line; delete it to redo the stage"
                    ) from None
        self._handle = open(self.path, "a", encoding="utf-8", newline="\n")
        return recorded

    def add(self, shard: Shard) -> None:
        """Record SHARD as complete (its worker fsynced its files before returning)."""
        assert self._handle is not None, "open() first"
        entry = {"shard": shard.number, "folder": shard.folder.name, "digest": shard.digest}
        self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None


def reusable(recorded: dict[int, tuple[str, str]], shard: Shard) -> Path | None:
    """The folder of an earlier run's complete copy of SHARD (same inputs), or None to run it again."""
    folder, digest = recorded.get(shard.number, ("", ""))
    path = shard.folder.parent / folder
    if folder and digest == shard.digest and (path / "complete").is_file():
        return path
    return None


def merge(
    store: CheckpointStore, folders: Iterable[Path], shard_of: Sequence[int] | None = None
) -> StageStats:
    """Concatenate the shards' files in order into the stage's checkpoint; their summed stats.

    SHARD_OF, when given, is the shard (its position in FOLDERS) of each input in input order: the lines
    are then interleaved back into input order, from each shard's `LINE_COUNTS`.

    The stage's files are replaced atomically; the shards' rejects are appended to RUN_DIR/rejects.jsonl
    (a run killed after that finds them there and drops them, see `CheckpointStore.clear_for_shards`).
    """
    folders = list(folders)

    def copy(name: str, column: int, target: IO[bytes]) -> None:
        if shard_of is None:
            _concatenate((folder / name for folder in folders), target)
        else:
            _interleave(folders, shard_of, name, column, target)

    for column, (name, path) in enumerate(
        (
            ("outputs.jsonl", store.outputs_path),
            ("rejects.jsonl", store.rejects_path),
            ("done.jsonl", store.done_path),
        )
    ):
        with atomic_path(path, durable=True) as tmp, open(tmp, "wb") as target:
            copy(name, column, target)
    with open(store.run_rejects_path, "ab") as target:
        copy(RUN_REJECTS, 1, target)
        target.flush()
        os.fsync(target.fileno())
    totals = StageStats(stage=store.stage)
    for folder in folders:
        totals = totals + read_stats(folder / "stats.json")
    totals.inputs = inputs_seen(totals)
    totals.skipped = 0
    return totals


def clean_up(store: CheckpointStore, root: Path) -> None:
    """Delete the shards and their manifest once the stage's own files hold them."""
    shutil.rmtree(root, ignore_errors=True)
    (store.folder / MANIFEST).unlink(missing_ok=True)


def _concatenate(paths: Iterable[Path], target: IO[bytes]) -> None:
    for path in paths:
        if path.exists():
            with open(path, "rb") as source:
                shutil.copyfileobj(source, target, 1 << 20)


def _interleave(
    folders: list[Path], shard_of: Sequence[int], name: str, column: int, target: IO[bytes]
) -> None:
    """The NAME files of FOLDERS written to TARGET in input order: input i takes the next COLUMN count of
    lines (see `LINE_COUNTS`) from the file of shard SHARD_OF[i]. A shard's file and counts are held only
    while some of its inputs are still to come."""
    shards: dict[int, _ShardLines | None] = {}  # None: every input of the shard taken
    try:
        for shard in shard_of:
            if shard not in shards:
                shards[shard] = _ShardLines(folders[shard], name)
            lines = shards[shard]
            if lines is None:
                raise IrbgenError(f"{folders[shard] / LINE_COUNTS}: fewer inputs than the shard was given")
            lines.copy_next(column, target)
            if lines.taken == len(lines.counts):
                lines.close()
                shards[shard] = None
    finally:
        for lines in shards.values():
            if lines is not None:
                lines.close()


class _ShardLines:
    """One shard's file of NAME, read input by input as `LINE_COUNTS` says."""

    def __init__(self, folder: Path, name: str) -> None:
        self.path = folder / name
        self.counts: list[list[int]] = json.loads((folder / LINE_COUNTS).read_bytes())
        self.taken = 0
        self.handle: IO[bytes] | None = open(self.path, "rb")

    def copy_next(self, column: int, target: IO[bytes]) -> None:
        """Copy the lines of the shard's next input to TARGET."""
        wanted = self.counts[self.taken][column]
        self.taken += 1
        for _ in range(wanted):
            line = self.handle.readline() if self.handle is not None else b""
            if not line.endswith(b"\n"):
                raise IrbgenError(f"{self.path}: fewer lines than {LINE_COUNTS} says")
            target.write(line)

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()
            self.handle = None
