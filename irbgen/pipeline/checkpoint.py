"""A stage's checkpoint: its outputs, its rejects and the input keys it finished, as append-only JSONL.

Layout (RUN_DIR/stages/<stage>/):

    outputs.jsonl   {"key": <input key>, "record": {...}}   one line per output record, in input order
    rejects.jsonl   {"key": <input key>, "record": {...}}   this stage's Reject records (authoritative copy)
    done.jsonl      {"key": <input key>}                    one line per finished input key
    stats.json      the stage's totals, written when it completes
    complete        empty marker, written last; a rerun skips the stage and only reads its outputs

and RUN_DIR/rejects.jsonl, every stage's Reject records, appended as they happen.

Commit protocol: a key's output and reject lines are written first; its done line is written only after
those lines are flushed *and fsynced*. fsync is grouped: pending done lines are released at most every
`sync_seconds` (and at close), so one fsync covers many keys. A SIGKILL therefore loses at most the last
`sync_seconds` of work, and a power cut cannot leave a done key whose outputs never reached the disk (the
done line is written after its outputs were durable). Flush-only would be safe against SIGKILL but not
against a power cut, since two files reach the disk in no guaranteed order.

Streaming: a key's lines are held in memory only up to KEY_BUFFER_LINES, then stream to the files, so a
key with millions of outputs (a dump shard read as one key) needs no more memory than a small one. If the
stage fails midway through such a key, `discard` cuts the files back to where the key began; a SIGKILL
leaves its lines without a done line, and the repair below drops them (the whole key is redone).

Repair on open (a stage that is not complete): a torn last line (no trailing newline) is cut from every
file; output and reject lines of keys without a done line are dropped, so a rerun redoes exactly those
keys and never appends a second copy; this stage's lines in RUN_DIR/rejects.jsonl are made equal to its
own rejects.jsonl. One writer per run directory at a time.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from irbgen.errors import IrbgenError
from irbgen.io import write_atomic, write_json
from irbgen.pipeline.encoded import unwrap
from irbgen.pipeline.rundir import remove_stale_temps
from irbgen.pipeline.stats import DUPLICATE_KEY, StageStats

logger = logging.getLogger(__name__)

_STAGE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_KEY_PREFIX = '{"key": '
_KEY_STAGE = '{"stage": '  # how a line of RUN_DIR/rejects.jsonl starts (a Reject's first field)
_DECODER = json.JSONDecoder()
_BLOCK = 1 << 16
_SCAN_BLOCK = 1 << 24
SETTLED = "rejects.settled.json"  # RUN_DIR's: how long rejects.jsonl was when a stage last finished
KEY_BUFFER_LINES = 256  # lines of one key held in memory before they stream to disk


def read_stats(path: Path) -> StageStats:
    """The stage totals saved in a stats.json."""
    return StageStats.from_dict(json.loads(path.read_text(encoding="utf-8")))


def inputs_seen(stats: StageStats) -> int:
    """The inputs a stage saw: each key processed once, plus the repeated keys it refused."""
    return stats.processed + stats.rejects[DUPLICATE_KEY]


class CheckpointStore:
    """Append-only JSONL checkpoint of one stage under RUN_DIR/stages/<stage>/, with crash repair on open."""

    def __init__(
        self,
        run_dir: Path | str,
        stage: str,
        *,
        sync_seconds: float = 1.0,
        folder: Path | None = None,
        run_rejects: Path | None = None,
    ) -> None:
        """FOLDER and RUN_REJECTS, when given, replace RUN_DIR/stages/<stage>/ and RUN_DIR/rejects.jsonl
        (a worker's checkpoint shard, see irbgen.pipeline.shards)."""
        if not _STAGE_NAME.fullmatch(stage):
            raise ValueError(f"stage name {stage!r} is not a safe folder name (letters, digits, _ . -)")
        self.run_dir = Path(run_dir)
        self.stage = stage
        self.sync_seconds = sync_seconds
        self.folder = Path(folder) if folder is not None else self.run_dir / "stages" / stage
        self.outputs_path = self.folder / "outputs.jsonl"
        self.rejects_path = self.folder / "rejects.jsonl"
        self.done_path = self.folder / "done.jsonl"
        self.stats_path = self.folder / "stats.json"
        self.complete_path = self.folder / "complete"
        self.run_rejects_path = Path(run_rejects or self.run_dir / "rejects.jsonl")
        self.settled_path = self.run_dir / SETTLED if run_rejects is None else None
        self._handles: dict[str, IO[str]] = {}
        self._dirty: set[str] = set()
        self._pending: list[str] = []
        self._last_sync = 0.0
        self._key: str | None = None  # the input key being written
        self._buffer: dict[str, list[str]] = {"outputs": [], "rejects": [], "run_rejects": []}
        self._buffered = 0
        self._marks: dict[str, int] | None = None  # file sizes where the open key's streamed lines start

    # -- state ---------------------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """True once the whole stage finished; its files are final."""
        return self.complete_path.exists()

    def finished_keys(self) -> set[str]:
        """Input keys whose outputs and rejects are committed."""
        return set(done_keys(self.done_path))

    def outputs(self) -> Iterator[dict[str, Any]]:
        """Output records in the order they were written (the input order of the original run)."""
        for _, line in _tagged_lines(self.outputs_path):
            yield line["record"]

    def record_lines(self) -> Iterator[bytes]:
        """Each output record's JSON as written, undecoded: the line around it cut off."""
        if self.outputs_path.exists():
            yield from record_lines(self.outputs_path)

    def rejects(self) -> Iterator[dict[str, Any]]:
        """This stage's Reject records, in input order."""
        for _, line in _tagged_lines(self.rejects_path):
            yield line["record"]

    def summary(self) -> StageStats:
        """The stage's totals over every run that contributed, counted from the checkpoint files."""
        stats = StageStats(stage=self.stage)
        stats.processed = _count_lines(self.done_path)
        stats.outputs = _count_lines(self.outputs_path)  # counted, not parsed: outputs can be gigabytes
        for reject in self.rejects():
            stats.add_reject(reject.get("reason", ""))
        stats.inputs = inputs_seen(stats)
        return stats

    def load_stats(self) -> StageStats | None:
        """The totals saved when the stage completed, or None."""
        return read_stats(self.stats_path) if self.stats_path.exists() else None

    # -- writing -------------------------------------------------------------------------------------

    def open(self) -> CheckpointStore:
        """Repair what a crash left behind and open the files for appending (a complete stage: nothing)."""
        if self.complete or self._handles:
            return self
        self.folder.mkdir(parents=True, exist_ok=True)
        for path in (self.outputs_path, self.rejects_path, self.done_path, self.run_rejects_path):
            truncate_torn_tail(path)
        done = self.finished_keys()
        for path in (self.outputs_path, self.rejects_path):
            dropped = _drop_unfinished(path, done)
            if dropped:
                logger.info("%s: dropped %d lines of unfinished keys; they will be redone", path, dropped)
        self._sync_run_rejects()
        for name, path in (
            ("outputs", self.outputs_path),
            ("rejects", self.rejects_path),
            ("run_rejects", self.run_rejects_path),
            ("done", self.done_path),
        ):
            self._handles[name] = open(path, "a", encoding="utf-8", newline="\n")
        self._last_sync = time.monotonic()
        return self

    def add(
        self,
        key: str,
        outputs: Iterable[dict[str, Any]],
        rejects: Iterable[dict[str, Any]] = (),
        *,
        finished: bool = True,
    ) -> None:
        """Append one input key's outputs and rejects; its done line follows at the next commit."""
        self.begin(key)
        for record in outputs:
            self.write(record)
        for record in rejects:
            self.write(record, reject=True)
        self.end(finished=finished)

    def begin(self, key: str) -> None:
        """Start one input key's lines; `write` them as they come, then `end` (or `discard`) the key."""
        if not self._handles:
            raise RuntimeError(f"checkpoint of stage {self.stage!r} is not open for writing")
        if self._key is not None:
            raise RuntimeError(f"key {self._key!r} of stage {self.stage!r} was not ended")
        self._key = key

    def write(self, record: dict[str, Any], *, reject: bool = False) -> None:
        """Add an output (or reject) line of the current key; long keys stream to disk as they grow."""
        if self._key is None:
            raise RuntimeError(f"checkpoint of stage {self.stage!r}: write() outside begin()/end()")
        if reject:
            self._buffer["rejects"].append(_tagged(self._key, record))
            self._buffer["run_rejects"].append(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            self._buffer["outputs"].append(_tagged(self._key, record))
        self._buffered += 1
        if self._buffered >= KEY_BUFFER_LINES:
            if self._marks is None:  # where this key's lines start, so that discard() can cut them
                self._marks = {name: self._size(name) for name in self._buffer}
            self._write_buffer()

    def end(self, *, finished: bool = True) -> None:
        """Close the current key; a finished key's done line follows once its lines are durable."""
        self._write_buffer()
        if finished and self._key is not None:
            self._pending.append(self._key)
        self._key, self._marks = None, None
        if time.monotonic() - self._last_sync >= self.sync_seconds:
            self.commit()

    def discard(self) -> None:
        """Drop every line of the current key (a stage failed midway through it)."""
        for lines in self._buffer.values():
            lines.clear()
        self._buffered = 0
        if self._marks is not None:
            for name, size in self._marks.items():
                handle = self._handles[name]
                handle.flush()
                os.ftruncate(handle.fileno(), size)  # the files are opened for appending
        self._key, self._marks = None, None

    def _size(self, name: str) -> int:
        handle = self._handles[name]
        handle.flush()
        return os.fstat(handle.fileno()).st_size

    def _write_buffer(self) -> None:
        for name, lines in self._buffer.items():
            if lines:
                self._handles[name].write("".join(lines))
                self._dirty.add(name)
                lines.clear()
        self._buffered = 0
        if self._marks is not None and time.monotonic() - self._last_sync >= self.sync_seconds:
            self.commit()  # the open key's lines are durable too; its done line still waits for end()

    def commit(self) -> None:
        """Make written lines durable (flush + fsync), then release the pending done lines."""
        if not self._handles:
            return
        for name in ("outputs", "rejects", "run_rejects"):
            if name in self._dirty:
                handle = self._handles[name]
                handle.flush()
                os.fsync(handle.fileno())
        self._dirty.clear()
        if self._pending:
            done = self._handles["done"]
            done.write("".join(_tagged(key) for key in self._pending))
            done.flush()
            self._pending.clear()
        self._last_sync = time.monotonic()

    def close(self) -> None:
        """Commit what was written and close the files; the stage stays incomplete."""
        if not self._handles:
            return
        try:
            self.discard()  # a key left open by a fatal error is redone on the next run
            self.commit()
            os.fsync(self._handles["done"].fileno())
        finally:
            for handle in self._handles.values():
                handle.close()
            self._handles.clear()

    def finish(self, stats: StageStats) -> None:
        """Close, save the stage's totals, then write the completion marker, then how long
        RUN_DIR/rejects.jsonl is now that every line in it is a finished stage's (see `clear_for_shards`)."""
        self.close()
        write_json(self.stats_path, stats.to_dict(), durable=True)
        write_atomic(self.complete_path, b"", durable=True)
        if self.settled_path is not None:
            size = self.run_rejects_path.stat().st_size if self.run_rejects_path.exists() else 0
            write_json(self.settled_path, {"size": size}, durable=True)

    def clear_for_shards(self) -> None:
        """Before a run in worker-written shards (irbgen.pipeline.shards): drop what a per-key run or an
        interrupted merge of shards left in this stage's files and in RUN_DIR/rejects.jsonl."""
        self.folder.mkdir(parents=True, exist_ok=True)
        remove_stale_temps(self.folder)  # what an interrupted merge was writing
        for path in (self.outputs_path, self.rejects_path, self.done_path):
            path.unlink(missing_ok=True)
        path = self.run_rejects_path
        if not path.exists() or path.stat().st_size == self._settled_size():
            return  # nothing written since a stage finished: no stage that is not complete has a line
        if _only_others(path, self._own_reject_lines().encode()):
            return  # the usual case: no line of this stage (each line starts with its stage)
        write_atomic(path, self._other_stages_rejects(), durable=True)

    def _settled_size(self) -> int | None:
        """The size of RUN_DIR/rejects.jsonl when a stage last finished, if recorded."""
        if self.settled_path is None or not self.settled_path.exists():
            return None
        try:
            size = json.loads(self.settled_path.read_text(encoding="utf-8"))["size"]
        except (ValueError, KeyError, TypeError):
            return None
        return size if isinstance(size, int) else None

    def _other_stages_rejects(self) -> Iterator[str]:
        """The lines of RUN_DIR/rejects.jsonl that other stages wrote."""
        path = self.run_rejects_path
        if path.exists():
            with open(path, encoding="utf-8", newline="\n") as lines:
                for number, line in enumerate(lines, start=1):
                    if _parse(line, path, number).get("stage") != self.stage:
                        yield line

    def __enter__(self) -> CheckpointStore:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _own_reject_lines(self) -> str:
        """How this stage's lines of RUN_DIR/rejects.jsonl start, as written here."""
        return _KEY_STAGE + json.dumps(self.stage, ensure_ascii=False) + ","

    def _sync_run_rejects(self) -> None:
        """Make this stage's lines in RUN_DIR/rejects.jsonl equal its own (authoritative) rejects; streams."""
        path = self.run_rejects_path
        ours, own = self.rejects(), self._own_reject_lines()
        in_step = True
        if path.exists():
            with open(path, encoding="utf-8", newline="\n") as lines:
                for number, line in enumerate(lines, start=1):
                    if line.startswith(_KEY_STAGE) and not line.startswith(own):
                        continue  # another stage's line, as written here: not parsed
                    record = _parse(line, path, number)
                    if record.get("stage") == self.stage and next(ours, None) != record:
                        in_step = False
                        break
        if in_step and next(ours, None) is None:
            return
        logger.info("%s: rewriting the lines of stage %s to match its checkpoint", path, self.stage)

        def merged() -> Iterator[str]:
            yield from self._other_stages_rejects()
            for record in self.rejects():
                yield json.dumps(record, ensure_ascii=False) + "\n"

        write_atomic(path, merged(), durable=True)


# -- line helpers ------------------------------------------------------------------------------------


def _tagged(key: str, record: dict[str, Any] | None = None) -> str:
    head = _KEY_PREFIX + json.dumps(key, ensure_ascii=False)
    if record is None:
        return head + "}\n"
    return head + ', "record": ' + json.dumps(record, ensure_ascii=False) + "}\n"


def record_lines(path: Path, start: int = 0, end: int | None = None, first: int = 1) -> Iterator[bytes]:
    """The records' JSON in the checkpoint lines of PATH, undecoded: every line, or (END given) the lines
    from byte START to END, whose first is line number FIRST (for errors)."""
    with open(path, "rb") as file:
        if end is None:
            for number, line in enumerate(file, start=first):
                yield _record(line, path, number)
            return
        file.seek(start)
        block = file.read(end - start)
    for number, line in enumerate(block.removesuffix(b"\n").split(b"\n") if block else [], start=first):
        yield _record(line + b"\n", path, number)


def _record(line: bytes, path: Path, number: int) -> bytes:
    """The record's JSON in one checkpoint line: cut out as written, else parsed (a corrupt line is named)."""
    record = unwrap(line)
    if record is None:
        value = _parse(line.decode("utf-8"), path, number)
        if not isinstance(value.get("key"), str) or not isinstance(value.get("record"), dict):
            raise IrbgenError(f"{path}:{number}: corrupt checkpoint line (no key or no record)")
        record = json.dumps(value["record"], ensure_ascii=False).encode()
    return record


def _parse(line: str, path: Path, number: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        raise IrbgenError(
            f"{path}:{number}: corrupt checkpoint line ({error.msg}); delete {path.parent} to redo the stage"
        ) from error
    if not isinstance(value, dict):
        raise IrbgenError(f"{path}:{number}: corrupt checkpoint line (not an object)")
    return value


def _line_key(line: str, path: Path, number: int) -> str:
    """The key of a tagged line, decoding only the key when the line starts the way we write it."""
    if line.startswith(_KEY_PREFIX):
        try:
            key, _ = _DECODER.raw_decode(line, len(_KEY_PREFIX))
        except json.JSONDecodeError:
            key = None
        if isinstance(key, str):
            return key
    value = _parse(line, path, number)
    if not isinstance(value.get("key"), str):
        raise IrbgenError(f"{path}:{number}: corrupt checkpoint line (no string key)")
    return value["key"]


def _tagged_lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    if not path.exists():
        return
    with open(path, encoding="utf-8", newline="\n") as lines:
        for number, line in enumerate(lines, start=1):
            value = _parse(line, path, number)
            if not isinstance(value.get("key"), str):
                raise IrbgenError(f"{path}:{number}: corrupt checkpoint line (no string key)")
            yield value["key"], value


def _only_others(path: Path, ours: bytes) -> bool:
    """Whether every line of the run's rejects at PATH starts the way this irbgen writes another stage's
    (`{"stage": "<other>",`); searched block by block, no line decoded."""
    stage = _KEY_STAGE.encode()
    carry = b""
    with open(path, "rb") as source:
        while True:
            block = source.read(_SCAN_BLOCK)
            data = carry + block
            cut = len(data) if not block else data.rfind(b"\n") + 1  # whole lines, the last one at the end
            part, carry = data[:cut], data[cut:]
            lines = part.count(b"\n") + (bool(part) and not part.endswith(b"\n"))
            starts = part.startswith(stage) + part.count(b"\n" + stage)
            if starts != lines or part.startswith(ours) or b"\n" + ours in part:
                return False
            if not block:
                return True


def done_keys(path: Path) -> list[str]:
    """The keys of a done.jsonl, in order, decoding only the keys."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="\n") as lines:
        return [_line_key(line, path, number) for number, line in enumerate(lines, start=1)]


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    count = 0
    with open(path, "rb") as file:
        while block := file.read(_BLOCK * 16):
            count += block.count(b"\n")
    return count


def truncate_torn_tail(path: Path) -> int:
    """Cut a last line that has no newline (a write killed midway); returns the bytes removed."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with open(path, "rb+") as file:
        size = file.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - _BLOCK)
            file.seek(start)
            block = file.read(end - start)
            if end == size and block.endswith(b"\n"):
                return 0
            newline = block.rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        file.truncate(end)
    logger.warning("%s: cut a torn last line (%d bytes)", path, size - end)
    return size - end


def _drop_unfinished(path: Path, done: set[str]) -> int:
    """Remove lines whose key is not done; a tail is cut in place, anything else rewrites the file."""
    if not path.exists():
        return 0
    cut: int | None = None
    dropped = 0
    kept_after_cut = False
    offset = 0
    with open(path, "rb") as file:
        for number, raw in enumerate(file, start=1):
            if _line_key(raw.decode("utf-8"), path, number) in done:
                kept_after_cut = kept_after_cut or cut is not None
            else:
                dropped += 1
                if cut is None:
                    cut = offset
            offset += len(raw)
    if cut is None:
        return 0
    if not kept_after_cut:
        os.truncate(path, cut)
        return dropped

    def kept() -> Iterator[bytes]:
        with open(path, "rb") as source:
            for number, raw in enumerate(source, start=1):
                if _line_key(raw.decode("utf-8"), path, number) in done:
                    yield raw

    write_atomic(path, kept(), durable=True)
    return dropped


def replace_stage_rejects(run_dir: Path, stage: str, rejects: Iterable[Any]) -> None:
    """Set `stage`'s lines of RUN_DIR/rejects.jsonl to `rejects`: for a step computed whole each run.

    The new lines take the place of the old ones (at the end when there were none), so a rerun that
    replaces them leaves the file byte-identical.
    """
    path = run_dir / "rejects.jsonl"
    new = [json.dumps(reject.model_dump(mode="json"), ensure_ascii=False) for reject in rejects]
    kept: list[str] = []
    placed = False
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line:
                continue
            if json.loads(line).get("stage") != stage:
                kept.append(line)
            elif not placed:
                kept += new
                placed = True
    if not placed:
        kept += new
    write_atomic(path, (line + "\n" for line in kept), durable=True)
