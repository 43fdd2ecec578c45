"""Run stages locally: skip finished keys, write results in input order, turn failures into rejects.

`run_stage` owns the orchestration (checkpoint, resume, rejects, stats, progress); an *executor* only maps
work items to results and hands them to a sink in input order. The local executors are an in-process
loop, a process pool for CPU stages and an asyncio loop for I/O stages; a Ray executor can be passed in
with the same signature without touching any stage. A stage that has both methods runs `aprocess`
(unless it says `io_bound = False`);
`processes` applies to stages that have only `process`.

An executor that runs a CPU stage on other processes (`executor.shards(stage)`: the local pool, Ray)
does not send results back: its workers write the stage's checkpoint in shards, and the driver only
records which shards are complete, then concatenates them in order (irbgen.pipeline.shards). A rerun
skips complete shards instead of finished keys. Inputs given as `Encoded` JSON lines (an earlier stage's
records, or a join of them) are decoded by the workers (irbgen.pipeline.encoded): when the workers can
read the run directory, a shard is a span of the earlier checkpoint (or spans of the joined ones, which
the worker joins), about SHARD_BYTES, and the driver never reads the lines; otherwise the lines travel.
The local pool also runs an I/O stage over URLs that says `by_host` (the fetch stage) in shards its
processes write, a host on each (irbgen.pipeline.host_shards).

A stage's exception for one record becomes a Reject "error:<ExceptionType>" with the message. Fatal
errors stop the run instead: BaseExceptions (KeyboardInterrupt, SystemExit) and any exception
whose class sets `fatal = True` (such as BudgetExceeded). Keys finished before the stop stay finished.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import pickle
import shutil
import time
import traceback
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from itertools import islice
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from irbgen.io import write_json
from irbgen.pipeline import shards as sharding
from irbgen.pipeline.checkpoint import CheckpointStore, read_stats
from irbgen.pipeline.encoded import Encoded, decode
from irbgen.pipeline.host_shards import fetch_shares, group_of, host_shards, spreads_by_host, worker_job
from irbgen.pipeline.shards import Shard, Span
from irbgen.pipeline.stage import Stage, StageContext, is_batch_stage, is_io_stage
from irbgen.pipeline.stats import DUPLICATE_KEY, ERROR_PREFIX, StageStats
from irbgen.pipeline.workers import WorkerPool, watch_parent
from irbgen.progress import Progress
from irbgen.records import Reject

logger = logging.getLogger(__name__)


_DETAIL_LIMIT = 2000
_PROGRESS_SECONDS = 0.1
_RECORDS_EVERY = 1000  # results of one key between progress reports inside it
INLINE_CHUNK = 32  # the most items a stage with `process_many` gets at once in this process
SHARD_BYTES = 1 << 20  # the most input a shard of checkpoint lines carries (past its first line)
OFFLOAD_SECONDS = 120.0  # at most this long for one piece of an I/O stage's offloaded work (one page)


@dataclass(frozen=True)
class WorkItem:
    """One input to process: its position, its key, and the record (None for a repeated key)."""

    index: int
    key: str
    record: BaseModel | None


Sink = Callable[[WorkItem, Iterable[BaseModel]], None]
ShardSink = Callable[[Shard, StageStats], None]  # a shard written by its worker, with its stats


class Executor(Protocol):
    """Calls the sink once per item, in item order; if `items` raises, finishes what it started, re-raises.

    The sink takes an item's results as any iterable, consumed once: a list, or a lazy iterator (the
    inline executor streams a stage's generator straight to the checkpoint, so memory stays flat).
    `concurrency` bounds the calls of an I/O stage in flight at once.

    An executor may also run CPU stages in worker-written shards: `shards(stage)` says whether it does
    for STAGE, and `run_shards(stage, shards, context, done)` runs them (see LocalExecutor.run_shards).
    """

    def __call__(
        self, stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink, concurrency: int
    ) -> None:
        """Process every item and hand its results to the sink in input order."""
        ...


@dataclass
class LocalExecutor:
    """This machine: an asyncio loop for I/O stages; CPU stages inline or on `processes` spawned processes.

    The processes start on first use and serve every stage until `shutdown` (or the end of a `with`
    block), so what a stage loads once per process (a spaCy model) is loaded once per build. An I/O stage
    offloads its CPU-heavy part (`stage.offload`) to `processes` worker processes of its own (one piece
    of work per process, `offload_seconds` at most each: see irbgen.pipeline.workers), never to threads.
    A stage over one `Batch` runs inline. Every process exits with this one, even if it is SIGKILLed.
    """

    processes: int = 1
    chunk_size: int = 32  # inputs per task sent to a pool process
    offload_seconds: float = OFFLOAD_SECONDS
    _pool: ProcessPoolExecutor | None = field(default=None, init=False, repr=False)
    _host_pools: list[ProcessPoolExecutor] = field(default_factory=list, init=False, repr=False)
    _workers: WorkerPool | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.processes < 1 or self.chunk_size < 1:
            raise ValueError("processes and chunk_size must be at least 1")

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, error_type: object, *exc: object) -> None:
        self.shutdown(kill=error_type is not None)

    def shutdown(self, kill: bool = False) -> None:
        """Stop the processes, if any started: KILL stops them at once (the build is stopping), else
        the pool's processes finish their running work first."""
        if self._workers is not None:
            self._workers.close()
            self._workers = None
        pools = [self._pool] if self._pool is not None else []
        for pool in [*pools, *self._host_pools]:
            if kill:
                for process in list(pool._processes.values()):  # no public way before Python 3.14
                    process.kill()
            pool.shutdown(wait=not kill, cancel_futures=True)
        self._pool, self._host_pools = None, []

    def __call__(
        self, stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink, concurrency: int
    ) -> None:
        """Run the stage's items here, the way its kind asks."""
        if is_io_stage(stage):
            context = replace(context, offload=self._offload_workers().run)
            asyncio.run(run_async(stage, items, context, sink, concurrency))
        elif not callable(getattr(stage, "process", None)):
            raise TypeError(f"stage {stage.name!r} has neither process() nor aprocess()")
        else:  # a stage the pool runs goes through run_shards
            _run_inline(stage, items, context, sink)

    def shards(self, stage: Stage) -> bool:
        """Whether STAGE runs on the pool's processes, each writing its own checkpoint shards."""
        return self.processes > 1 and (is_sharded_kind(stage) or spreads_by_host(stage))

    def host_shares(self, stage: Stage, context: StageContext) -> list[int]:
        """A stage spread by host: each process's share of the fetcher's requests in flight."""
        return fetch_shares(stage, context, self.processes)

    def run_shards(
        self, stage: Stage, shards: Iterator[Shard], context: StageContext, done: ShardSink
    ) -> None:
        """Each shard run and written by a pool process (at most 4 per process in flight); `done` is
        called with each shard's stats in shard order. A stage spread by host runs each group's shards
        on the group's own process (see irbgen.pipeline.host_shards)."""
        if spreads_by_host(stage):
            self._run_host_shards(stage, shards, context, done)
            return
        job = pickled_job(stage, context)
        pool = self._processes()
        in_order(
            ([shard] for shard in shards),
            self.processes * 4,
            submit=lambda chunk: pool.submit(_process_shard, job, chunk[0]),
            collect=lambda chunk, future: [future.result()],
            cancel=lambda future: future.cancel(),
            sink=done,
        )

    def _run_host_shards(
        self, stage: Stage, shards: Iterator[Shard], context: StageContext, done: ShardSink
    ) -> None:
        shares = self.host_shares(stage, context)
        jobs = [worker_job(stage, context, share) for share in shares]
        spawn = multiprocessing.get_context("spawn")
        while len(self._host_pools) < len(shares):  # one process a group, kept for the executor's life
            pool = ProcessPoolExecutor(1, mp_context=spawn, initializer=watch_parent, initargs=(os.getpid(),))
            self._host_pools.append(pool)
        pools = self._host_pools[: len(shares)]

        def submit(chunk: list[Shard]) -> Any:
            group = group_of(chunk[0], len(shares))
            return pools[group].submit(run_host_shard, jobs[group], self.offload_seconds, chunk[0])

        in_order(
            ([shard] for shard in shards),
            len(shares) * 2,
            submit=submit,
            collect=lambda chunk, future: [future.result()],
            cancel=lambda future: future.cancel(),
            sink=done,
        )
        for pool in pools:  # each fetcher's WARC file complete, its index up to date
            pool.submit(close_host_worker).result()

    def _processes(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                self.processes, mp_context=spawn, initializer=watch_parent, initargs=(os.getpid(),)
            )
        return self._pool

    def _offload_workers(self) -> WorkerPool:
        if self._workers is None:
            self._workers = WorkerPool(self.processes, self.offload_seconds)
        return self._workers


@dataclass
class StageResult:
    """A finished stage: its checkpoint, this call's stats and the stage's totals over every run."""

    stage: str
    output_model: type[BaseModel]
    store: CheckpointStore
    stats: StageStats  # this call only (skipped counts keys finished by earlier runs)
    totals: StageStats  # the whole stage, counted from its checkpoint; wall time of the completing run
    reused: bool  # the stage was already complete, nothing ran

    def rows(self) -> Iterator[dict[str, Any]]:
        """Output records as JSON dicts, in input order, read from the checkpoint."""
        return self.store.outputs()

    def outputs(self) -> Iterator[BaseModel]:
        """Output records parsed into the stage's output model, in input order."""
        return (self.output_model.model_validate(row) for row in self.store.outputs())

    def rejects(self) -> Iterator[Reject]:
        """This stage's rejects, in input order."""
        return (Reject.model_validate(row) for row in self.store.rejects())

    def records(self) -> Encoded:
        """The outputs as JSON lines, with their count: decoded when iterated, or by the workers of a
        sharded stage (see irbgen.pipeline.encoded)."""
        store = self.store
        path = store.outputs_path
        return Encoded(self.output_model, store.record_lines, str(path), self.totals.outputs, path=path)


def is_fatal(error: BaseException) -> bool:
    """True for errors that stop a run rather than reject one record."""
    if not isinstance(error, Exception):
        return True
    return bool(getattr(error, "fatal", False))  # BudgetExceeded (--max-cost) is one


def run_stage(
    stage: Stage,
    inputs: Iterable[BaseModel],
    context: StageContext,
    *,
    concurrency: int = 16,
    processes: int = 1,
    progress: Progress | None = None,
    sync_seconds: float = 1.0,
    chunk_size: int = 32,
    executor: Executor | None = None,
) -> StageResult:
    """Run one stage over its inputs with checkpoint and resume; a complete stage is only read back.

    Synchronous (I/O stages get their own event loop), so call it outside a running loop.

    Args:
        concurrency: I/O stages: `aprocess` calls at once; at most 4x as many results wait to be written.
        processes: CPU stages: >1 runs `process` in a pool of spawned processes (the stage must pickle).
        progress: called as progress(stage name, inputs handled, total or None).
        sync_seconds: at most this much finished work is redone after a SIGKILL (one fsync per period).
        chunk_size: inputs per task sent to a pool process.
        executor: runs the work items; default LocalExecutor(processes, chunk_size).
    """
    if concurrency < 1 or processes < 1 or chunk_size < 1:
        raise ValueError("concurrency, processes and chunk_size must be at least 1")
    store = CheckpointStore(Path(context.run_dir), stage.name, sync_seconds=sync_seconds)
    stats = StageStats(stage=stage.name)
    if store.complete:
        logger.info("%s: complete in an earlier run; reading its outputs", stage.name)
        totals = store.load_stats() or store.summary()
        if progress is not None:
            progress(stage.name, totals.inputs, totals.inputs)
        return StageResult(stage.name, stage.output_model, store, stats, totals, reused=True)

    owned = LocalExecutor(processes, chunk_size) if executor is None else None  # made here: shut down here
    run = executor or owned
    total = _count(inputs)
    started = time.perf_counter()
    writer = _Writer(stage.name, store, stats, progress, total)
    root = sharding.shard_root(store.run_dir, stage.name, context.shard_dir)
    in_shards = callable(getattr(run, "shards", None)) and run.shards(stage)
    stopped = True
    try:
        if in_shards:
            totals = _run_sharded(stage, inputs, context, run, writer, root)
        else:
            store.open()
            try:
                finished = store.finished_keys()
                if finished:
                    logger.info("%s: resuming; %d input keys already finished", stage.name, len(finished))
                run(stage, _plan(stage, inputs, finished, writer), context, writer.write, concurrency)
            finally:
                store.close()
            totals = store.summary()
        stopped = False
    finally:
        stats.wall_seconds = time.perf_counter() - started
        if owned is not None:
            owned.shutdown(kill=stopped)
    totals.wall_seconds = stats.wall_seconds
    store.finish(totals)
    sharding.clean_up(store, root)
    writer.report(force=True)
    logger.info("%s: %s", stage.name, stats.to_dict())
    return StageResult(stage.name, stage.output_model, store, stats, totals, reused=False)


def _count(inputs: Iterable[BaseModel]) -> int | None:
    """How many inputs there are, when that is known without reading them (a progress total)."""
    if isinstance(inputs, Encoded):
        return inputs.length
    return len(inputs) if hasattr(inputs, "__len__") else None  # type: ignore[arg-type]


# -- planning and writing ----------------------------------------------------------------------------


class _Writer:
    """The sink: checkpoints each item's results in the order it receives them, counts and reports."""

    def __init__(
        self,
        stage: str,
        store: CheckpointStore,
        stats: StageStats,
        progress: Progress | None,
        total: int | None,
    ) -> None:
        self.stage = stage
        self.store = store
        self.stats = stats
        self.progress = progress
        self.total = total
        self.handled = 0
        self.line_counts: list[tuple[int, int, int]] | None = None  # per item: outputs, rejects, done lines
        self._reported = 0.0
        self._records_reported = 0.0

    def skip(self) -> None:
        self.stats.skipped += 1
        self.handled += 1
        self.report()

    def write(self, item: WorkItem, results: Iterable[BaseModel]) -> None:
        """Checkpoint one item's results as they come; a non-fatal error midway rejects the whole item."""
        self.store.begin(item.key)
        outputs = 0
        reasons: list[str] = []
        try:
            for produced, result in enumerate(results, start=1):
                if produced % _RECORDS_EVERY == 0:  # a long key (a dump shard): show that it moves
                    self.report_records(produced)
                if isinstance(result, Reject):
                    if result.stage != self.stage:
                        result = result.model_copy(update={"stage": self.stage})
                    self.store.write(result.model_dump(mode="json"), reject=True)
                    reasons.append(result.reason)
                elif isinstance(result, BaseModel):
                    self.store.write(result.model_dump(mode="json"))
                    outputs += 1
                else:
                    raise TypeError(f"a stage yielded {type(result).__name__}, not a record or Reject")
        except Exception as error:
            if is_fatal(error):
                raise
            self.store.discard()
            reject = _error_reject(self.stage, item.key, error)
            self.store.begin(item.key)
            self.store.write(reject.model_dump(mode="json"), reject=True)
            outputs, reasons = 0, [reject.reason]
        self.store.end(finished=item.record is not None)
        if self.line_counts is not None:
            self.line_counts.append((outputs, len(reasons), int(item.record is not None)))
        self.stats.outputs += outputs
        for reason in reasons:
            self.stats.add_reject(reason)
        if item.record is not None:
            self.stats.processed += 1
        self.handled += 1
        self.report()

    def report_records(self, produced: int) -> None:
        """Progress inside one long key: progress("<stage> records", records so far, None)."""
        now = time.monotonic()
        if self.progress is not None and now - self._records_reported >= _PROGRESS_SECONDS:
            self._records_reported = now
            self.progress(f"{self.stage} records", produced, None)

    def report(self, force: bool = False) -> None:
        if self.progress is None:
            return
        now = time.monotonic()
        if force or now - self._reported >= _PROGRESS_SECONDS:
            self._reported = now
            self.progress(self.stage, self.handled, self.total)


def _plan(
    stage: Stage, inputs: Iterable[BaseModel], finished: set[str], writer: _Writer
) -> Iterator[WorkItem]:
    """Work items for inputs not finished yet; a key repeated within the input becomes a reject."""
    seen: set[str] = set()
    for index, record in enumerate(inputs):
        writer.stats.inputs += 1
        key = stage.key(record)
        if key in finished:
            writer.skip()
        elif key in seen:
            yield WorkItem(index, key, None)
        else:
            seen.add(key)
            yield WorkItem(index, key, record)


def _run_sharded(
    stage: Stage, inputs: Iterable[BaseModel], context: StageContext, run: Any, writer: _Writer, root: Path
) -> StageStats:
    """Run the stage in shards its workers write (irbgen.pipeline.shards); the stage's totals.

    Shards are cut from every input, finished or not, so that a rerun cuts the same ones; a shard an
    earlier run completed (same inputs) is skipped whole. `Encoded` inputs travel as their JSON lines,
    or, when the workers can read the run directory, as spans of the checkpoints they are read or joined
    from; the workers decode and key them, each refusing the keys its shard repeats, and the keys a shard
    repeats from earlier shards are found here once every shard is written (`_refuse_repeats`).
    """
    store, stats = writer.store, writer.stats
    store.clear_for_shards()
    manifest = sharding.ShardManifest(store)
    recorded = manifest.open()
    folders: list[Path] = []
    encoded = isinstance(inputs, Encoded)
    ran: set[int] = set()  # the numbers of the shards this call runs
    joins: dict[int, Shard] = {}  # the shards whose worker joins its lines, for `_refuse_repeats`
    shard_of: Sequence[int] | None = None  # a stage spread by host: each input's shard, for the merge

    def cut() -> Iterator[Shard]:
        nonlocal shard_of
        if spreads_by_host(stage):
            items = list(_plan(stage, inputs, set(), writer))
            by_host, shard_of = host_shards(root, items, run.host_shares(stage, context))
            yield from by_host
            return
        if not encoded:
            items = _plan(stage, inputs, set(), writer)
            for number, chunk in enumerate(chunked(items, getattr(run, "chunk_size", 32))):
                yield sharding.new_shard(root, number, chunk)
            return
        readable = _workers_read_run_dir(context)
        if readable and inputs.path is not None:
            yield from _span_shards(root, inputs, inputs.path)
            return
        cuts = inputs.joinable.cut(SHARD_BYTES) if readable and inputs.joinable is not None else None
        if cuts is not None:
            for number, spans in enumerate(cuts):
                joins[number] = _joined_shard(root, number, inputs, tuple(spans))
                yield joins[number]
            return
        first = 0
        for number, lines in enumerate(chunked_lines(inputs.lines(), SHARD_BYTES)):
            yield _encoded_shard(root, number, lines, inputs, first)
            first += len(lines)

    def counted(shard: Shard, shard_stats: StageStats | None) -> int:
        """The shard's inputs (a joined shard's as its worker counted them), now added to the stage's."""
        size = shard.size
        if size is None:
            size = shard_stats.inputs if shard_stats is not None else 0
        stats.inputs += size if encoded else 0
        return size

    def todo() -> Iterator[Shard]:
        for shard in cut():
            earlier = sharding.reusable(recorded, shard)
            if earlier is not None:
                folders.append(earlier)
                size = counted(shard, read_stats(earlier / "stats.json") if shard.size is None else None)
                stats.skipped += size
                writer.handled += size
                continue
            folders.append(shard.folder)
            ran.add(shard.number)
            yield shard

    def done(shard: Shard, shard_stats: StageStats) -> None:
        manifest.add(shard)
        _tally(stats, shard_stats)
        writer.handled += counted(shard, shard_stats)
        writer.report()

    if recorded:
        logger.info("%s: resuming; %d shards complete in an earlier run", stage.name, len(recorded))
    root.mkdir(parents=True, exist_ok=True)
    try:
        run.run_shards(stage, todo(), context, done)
        if encoded:
            _refuse_repeats(stage, inputs, context, folders, ran, manifest, stats, root, joins)
    finally:
        manifest.close()
    return sharding.merge(store, folders, shard_of)


def _tally(stats: StageStats, shard: StageStats, sign: int = 1) -> None:
    """Add a shard's counts to this call's stats (SIGN -1: take a redone shard's first counts away)."""
    stats.processed += sign * shard.processed
    stats.outputs += sign * shard.outputs
    stats.errors += sign * shard.errors
    for reason, count in shard.rejects.items():
        stats.rejects[reason] += sign * count
    stats.rejects = +stats.rejects  # drops the reasons that went to zero


def _span_shards(root: Path, inputs: Encoded, path: Path) -> Iterator[Shard]:
    """Shards of spans of the checkpoint PATH whose record lines INPUTS are."""
    first = 0
    for number, span in enumerate(sharding.spans(path, SHARD_BYTES)):
        yield sharding.new_shard(root, number, [], **_lines_of(inputs, first), spans=(span,))
        first += span.count


def _joined_shard(root: Path, number: int, inputs: Encoded, spans: tuple[Span, ...]) -> Shard:
    """A shard whose worker joins its lines from SPANS (see `Joinable`); its lines are numbered from 1."""
    assert inputs.joinable is not None
    lines = {"model": inputs.model, "first": 0, "source": f"{inputs.source} (shard {number})"}
    return sharding.new_shard(root, number, [], **lines, spans=spans, join=inputs.joinable.join)


def _encoded_shard(root: Path, number: int, lines: list[bytes], inputs: Encoded, first: int) -> Shard:
    return sharding.new_shard(root, number, lines, **_lines_of(inputs, first))


def _lines_of(inputs: Encoded, first: int) -> dict[str, Any]:
    return {"model": inputs.model, "first": first, "source": inputs.source}


def _workers_read_run_dir(context: StageContext) -> bool:
    """Whether the workers can read the run directory: they write their shards in it (no --shared-dir)."""
    shared = context.shard_dir
    return shared is None or Path(shared).resolve() == Path(context.run_dir).resolve()


def _refuse_repeats(
    stage: Stage,
    inputs: Encoded,
    context: StageContext,
    folders: list[Path],
    ran: set[int],
    manifest: sharding.ShardManifest,
    stats: StageStats,
    root: Path,
    joins: dict[int, Shard],
) -> None:
    """Redo, here, each shard (in order) whose worker finished a key an earlier shard already had: its
    repeats become duplicate-key rejects, as when the driver keys every input. Real inputs rarely repeat.

    The shard's lines are read again: a joined shard's from its spans, any other's from the inputs. The
    shards' done lines are compared as written (one key, one line), and decoded only for a shard redone."""
    seen: set[bytes] = set()
    first = 0
    for number, folder in enumerate(folders):
        before = read_stats(folder / "stats.json")
        count = before.inputs
        done = sharding.done_lines(folder)
        if not seen.isdisjoint(done):
            if number in joins:
                shard = sharding.new_shard(root, number, list(joins[number].lines()), **_lines_of(inputs, 0))
            else:
                lines = list(islice(inputs.lines(), first, first + count))
                shard = _encoded_shard(root, number, lines, inputs, first)
            items = shard_items(stage, shard, earlier=sharding.keys_of(seen))
            again = write_shard(stage, shard, items, shard_results(stage, items, context))
            if number in ran:
                _tally(stats, before, sign=-1)
            else:  # reused from an earlier run, so counted as skipped
                stats.skipped -= len(items)
            _tally(stats, again)
            manifest.add(shard)
            folders[number] = shard.folder
            done = sharding.done_lines(shard.folder)
        seen.update(done)
        first += count


def write_shard(
    stage: Stage,
    shard: Shard,
    items: Sequence[WorkItem],
    results: Iterable[Iterable[BaseModel]],
    *,
    line_counts: bool = False,
) -> StageStats:
    """Write one shard's results (one iterable per item of ITEMS, in order) to its folder, durably; its
    stats. LINE_COUNTS: also write how many lines each item gave (`sharding.LINE_COUNTS`), for a shard
    whose items are not consecutive inputs.

    Runs where the results are made (a pool process, a Ray worker). A non-fatal error of an item rejects
    the item; a fatal one leaves the shard incomplete (it is run again).
    """
    shutil.rmtree(shard.folder, ignore_errors=True)  # an earlier attempt of this submission
    store = sharding.shard_store(stage.name, shard.folder)
    stats = StageStats(stage=stage.name, inputs=len(items))
    writer = _Writer(stage.name, store, stats, None, None)
    writer.line_counts = [] if line_counts else None
    store.open()
    try:
        for item, item_results in zip(items, results, strict=True):
            writer.write(item, item_results)
    finally:
        store.close()
    if writer.line_counts is not None:
        write_json(shard.folder / sharding.LINE_COUNTS, writer.line_counts, durable=True)
    store.finish(stats)
    return stats


def shard_items(stage: Stage, shard: Shard, earlier: Collection[str] = ()) -> list[WorkItem]:
    """The shard's work items: as cut, or decoded from its JSON lines and keyed here.

    A key the shard repeats, or one in EARLIER (keys of earlier shards), becomes an item without a record:
    a duplicate-key reject.
    """
    if shard.model is None:
        return shard.items
    items: list[WorkItem] = []
    seen: set[str] = set()
    for offset, line in enumerate(shard.lines()):
        index = shard.first + offset
        record = decode(shard.model, line, shard.source, index + 1)
        key = stage.key(record)
        repeated = key in seen or key in earlier
        seen.add(key)
        items.append(WorkItem(index, key, None if repeated else record))
    return items


def shard_results(
    stage: Stage, items: Sequence[WorkItem], context: StageContext
) -> Iterator[Iterable[BaseModel]]:
    """Each item's results, made lazily as `write_shard` writes them (see `chunk_results`)."""
    return iter(chunk_results(stage, items, context))


def chunk_results(
    stage: Stage, items: Sequence[WorkItem], context: StageContext
) -> list[Iterable[BaseModel]]:
    """Each item's results: from the stage's `process_many` when it has one (it makes a chunk's results
    together, batching their work; a record's error is raised by its results, never by the call), else
    from `process` one item at a time, lazily."""
    many = getattr(stage, "process_many", None)
    if not callable(many):
        return [iter_one(stage, item, context) for item in items]
    made = iter(many([item.record for item in items if item.record is not None], context))
    return [iter_one(stage, item, context) if item.record is None else next(made) for item in items]


def is_sharded_kind(stage: Stage) -> bool:
    """A stage that can run in worker-written shards: a CPU stage that does not join every record."""
    return not is_io_stage(stage) and not is_batch_stage(stage) and callable(getattr(stage, "process", None))


def pickled_job(stage: Stage, context: StageContext) -> bytes:
    """The stage and its context, pickled once for every task of the stage."""
    try:
        return pickle.dumps((stage, context), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        raise TypeError(
            f"stage {stage.name!r} and its context must pickle to run with processes > 1 "
            f"(constructors hold configuration only): {error}"
        ) from error


_job: tuple[bytes, Any] = (b"", None)  # this pool process's current stage and context


def _process_shard(job: bytes, shard: Shard) -> StageStats:
    """Run and write one shard on a pool process; JOB is unpickled once per stage, not per shard."""
    global _job
    if _job[0] != job:
        _job = (job, pickle.loads(job))
    stage, context = _job[1]
    items = shard_items(stage, shard)
    return write_shard(stage, shard, items, shard_results(stage, items, context))


# -- a group's process of a stage spread by host (irbgen.pipeline.host_shards) -----------------------


class _HostWorker:
    """A group process's stage, context (with its own fetcher and extraction worker) and concurrency."""

    def __init__(self, job: bytes, offload_seconds: float) -> None:
        stage, context, share = pickle.loads(job)
        self.job = job
        self.extractors = WorkerPool(1, offload_seconds)
        fetcher = context.fetcher()
        self.stage: Stage = stage
        self.context: StageContext = replace(context, fetcher=fetcher, offload=self.extractors.run)
        self.share: int = share

    def close(self) -> None:
        """Close the fetcher (its WARC file and index) and stop the extraction worker."""
        try:
            self.context.fetcher.close()
        finally:
            self.extractors.close()


_host_worker: _HostWorker | None = None  # this process's current stage


def run_host_shard(job: bytes, offload_seconds: float, shard: Shard) -> StageStats:
    """Run and write one shard of a stage spread by host on its group's process (JOB, from
    `host_shards.worker_job`, unpickled once per stage); its stats."""
    global _host_worker
    if _host_worker is None or _host_worker.job != job:
        close_host_worker()
        _host_worker = _HostWorker(job, offload_seconds)
    worker = _host_worker
    return asyncio.run(write_io_shard(worker.stage, shard, worker.context, worker.share))


async def write_io_shard(stage: Stage, shard: Shard, context: StageContext, concurrency: int) -> StageStats:
    """Run one shard of an I/O stage spread by host (CONCURRENCY calls at once) and write it with its line
    counts (its inputs are not consecutive); its stats. On a group's process or a Ray I/O actor."""
    items = shard_items(stage, shard)
    results: list[Iterable[BaseModel]] = []
    await run_async(stage, iter(items), context, lambda _, made: results.append(made), concurrency)
    return write_shard(stage, shard, items, results, line_counts=True)


def close_host_worker() -> None:
    """Close this process's stage, if any: its WARC file is complete and its index up to date."""
    global _host_worker
    if _host_worker is not None:
        worker, _host_worker = _host_worker, None
        worker.close()


# -- what every executor calls per item --------------------------------------------------------------


def iter_one(stage: Stage, item: WorkItem, context: StageContext) -> Iterator[BaseModel]:
    """A CPU stage's results for one item, lazily; exceptions reach the caller (the sink rejects them)."""
    if item.record is None:
        yield _duplicate(stage.name, item)
        return
    yield from stage.process(item.record, context)  # type: ignore[attr-defined]


def run_one(stage: Stage, item: WorkItem, context: StageContext) -> list[BaseModel]:
    """A CPU stage's results for one item; a non-fatal exception becomes an "error:<Type>" reject."""
    if item.record is None:
        return [_duplicate(stage.name, item)]
    try:
        return list(stage.process(item.record, context))  # type: ignore[attr-defined]
    except Exception as error:
        if is_fatal(error):
            raise
        return [_error_reject(stage.name, item.key, error)]


async def arun_one(stage: Stage, item: WorkItem, context: StageContext) -> list[BaseModel]:
    """An I/O stage's results for one item; a non-fatal exception becomes an "error:<Type>" reject."""
    if item.record is None:
        return [_duplicate(stage.name, item)]
    try:
        return list(await stage.aprocess(item.record, context))  # type: ignore[attr-defined]
    except Exception as error:
        if is_fatal(error):
            raise
        return [_error_reject(stage.name, item.key, error)]


def _duplicate(stage: str, item: WorkItem) -> Reject:
    return Reject(
        stage=stage, reason=DUPLICATE_KEY, key=item.key, detail=f"input #{item.index} repeats an earlier key"
    )


def _error_reject(stage: str, key: str, error: Exception) -> Reject:
    frames = traceback.extract_tb(error.__traceback__)
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    return Reject(
        stage=stage,
        reason=f"{ERROR_PREFIX}{type(error).__name__}",
        key=key,
        detail=str(error)[:_DETAIL_LIMIT],
        extra={"where": where} if where else {},
    )


# -- local executors ---------------------------------------------------------------------------------


def _run_inline(stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink) -> None:
    if not callable(getattr(stage, "process_many", None)):
        for item in items:
            sink(item, iter_one(stage, item, context))
        return
    for chunk in chunked(items, INLINE_CHUNK):
        for item, results in zip(chunk, chunk_results(stage, chunk, context), strict=True):
            sink(item, results)


async def run_async(
    stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink, concurrency: int
) -> None:
    """At most `concurrency` calls at once, at most 4x that many results held for in-order writing."""
    limit = asyncio.Semaphore(concurrency)
    window = concurrency * 4
    pending: deque[tuple[WorkItem, asyncio.Task[list[BaseModel]]]] = deque()
    stopping = False
    input_error: BaseException | None = None

    async def bounded(item: WorkItem) -> list[BaseModel]:
        nonlocal stopping
        async with limit:
            try:
                return await arun_one(stage, item, context)
            except BaseException:
                stopping = True  # a fatal error: launch nothing more
                raise

    try:
        while True:
            while not stopping and len(pending) < window:
                try:
                    item = next(items)
                except StopIteration:
                    stopping = True
                    break
                except BaseException as error:  # re-raised below, once started work is written
                    input_error, stopping = error, True
                    break
                pending.append((item, asyncio.create_task(bounded(item))))
            if not pending:
                break
            item, task = pending.popleft()
            sink(item, await task)
    finally:
        for _, task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*(task for _, task in pending), return_exceptions=True)
    if input_error is not None:
        raise input_error


def chunked(items: Iterator[WorkItem], largest: int) -> Iterator[list[WorkItem]]:
    """Items in chunks of 1, 2, 4 ... up to LARGEST: a few heavy items (dump shards) still spread over
    every worker, while many light ones travel together."""
    size = 1
    while chunk := list(islice(items, size)):
        yield chunk
        size = min(size * 2, largest)


def chunked_lines(lines: Iterator[bytes], largest: int) -> Iterator[list[bytes]]:
    """Lines in chunks of 1, 2, 4 ... lines, each chunk ending once it holds LARGEST bytes: a shard
    carries about as much input, and so work, as the next, whether its records are pages or sentences."""
    size, chunk, held = 1, [], 0
    for line in lines:
        chunk.append(line)
        held += len(line)
        if len(chunk) == size or held >= largest:
            yield chunk
            size, chunk, held = size * 2, [], 0
    if chunk:
        yield chunk


def in_order(
    chunks: Iterator[list[Any]],
    window: int,
    *,
    submit: Callable[[list[Any]], Any],
    collect: Callable[[list[Any], Any], list[Any]],
    cancel: Callable[[Any], Any],
    sink: Callable[[Any, Any], None],
) -> None:
    """Keep up to WINDOW chunks submitted; hand each item's results to the sink in input order.

    The items are work items (their results: records) or shards (their results: stats).

    `submit` starts a chunk and returns its handle; `collect` waits for it and returns each item's
    results. If `chunks` raises, the work already submitted is written first, then the error is
    re-raised; on any other error, chunks not yet collected are cancelled.
    """
    pending: deque[tuple[list[WorkItem], Any]] = deque()
    input_error: BaseException | None = None
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < window:
                try:
                    chunk = next(chunks, None)
                except BaseException as error:  # re-raised below, once started work is written
                    input_error, chunk = error, None
                if chunk is None:
                    exhausted = True
                    break
                pending.append((chunk, submit(chunk)))
            if not pending:
                break
            chunk, handle = pending.popleft()
            for item, results in zip(chunk, collect(chunk, handle), strict=True):
                sink(item, results)
    finally:
        for _, handle in pending:
            cancel(handle)
    if input_error is not None:
        raise input_error
