"""Run stages on Ray: CPU stages as tasks that write their own checkpoint shards; I/O stages in the
driver, their CPU work on the cluster.

The executor has the runner's Executor signature (and `run_shards`), so no stage changes to run here.
What it does:

- CPU stages (`process`): one Ray task per shard of work items (shards of 1, 2, 4 ... up to
  `chunk_size`, so a few heavy items such as dump shards still spread, while Ray's few ms per task are
  shared by many light ones), at most `max_in_flight` tasks in flight (default twice the cluster's CPUs).
  The task writes the shard's records, rejects and stats itself (irbgen.pipeline.shards) and returns
  only its stats; the driver records the shard as complete. A task whose worker dies is rerun by Ray up
  to `max_retries` times; after that its items are run one per task, the driver writes the shard, and
  the item whose worker still dies becomes a Reject "error:<RayErrorType>" with the reason, and the
  stage goes on.
- I/O stages (`aprocess`), by default (`io_actors` 0): on the driver's event loop with the driver's own
  fetcher and model client, as locally, so the concurrency and per-host limits, the reply cache, the
  cost ledger and `--max-cost` are exactly the local ones, and only the driver writes their caches (the
  WARC of fetched pages, the reply cache, the ledger journal) to the run directory. The CPU-heavy part
  of a stage (extracting a fetched page) leaves the loop as Ray tasks (`stage.offload`), batched, so it
  spreads over the cluster.
- With `io_actors` N > 0, I/O stages run on N async actors instead (kept for the whole build), for when
  one event loop is the limit. A stage over URLs that says `by_host` (the fetch stage) runs there in
  shards by host (irbgen.pipeline.host_shards): each actor fetches a group of hosts, writes its shards
  of the checkpoint itself and sends back only their counts, and the driver merges them into input
  order; the driver does no per-URL work. Each actor builds its own fetcher and model client from the driver's
  (their configuration crosses, never a socket), with an equal part of the stage's concurrency, so the
  global limit holds. Fetches go to an actor by the host of the URL, so every host stays on one actor
  and the per-host limit holds as it is. A stage with a model client runs on one actor: one endpoint
  gains nothing from two, and one actor keeps the reply cache, the cost ledger and --max-cost exact.
  The actors run on the driver's node and write those caches to the run directory themselves: the one
  exception to "only the driver writes" (what lets a resumed run repeat no fetch or model call).
- A stage whose one input joins every earlier record (a `Batch`) runs in the driver: shipping every
  record to a worker costs a full copy and gains no parallelism.

The results of I/O and `Batch` stages come back to the driver, which writes them in input order. CPU
tasks need only their input, so the dump they read must be at a path every node can read (an NFS or
object-store mount), and the folder they write their shards in (the run directory, or the context's
`shard_dir`) one every node can write. Without a `shard_dir` the tasks also read the run directory: a
shard over earlier stages' checkpoints is a byte range of them that its task reads (see
irbgen.pipeline.runner); with one, the driver sends those lines instead.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from irbgen.pipeline.host_shards import fetch_shares, group_of, host_group, split, spreads_by_host
from irbgen.pipeline.runner import (
    ShardSink,
    Sink,
    WorkItem,
    arun_one,
    chunked,
    in_order,
    is_sharded_kind,
    iter_one,
    run_async,
    run_one,
    shard_items,
    shard_results,
    write_io_shard,
    write_shard,
)
from irbgen.pipeline.shards import Shard
from irbgen.pipeline.stage import Stage, StageContext, WorkerCrashed, is_io_stage
from irbgen.pipeline.stats import ERROR_PREFIX, StageStats
from irbgen.records import Reject

logger = logging.getLogger(__name__)

PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder that holds the irbgen package


def init_local(num_cpus: int | None = None, **options: Any) -> None:
    """Start a local Ray instance whose workers import this irbgen: no dashboard, loopback only."""
    paths = [PACKAGE_ROOT, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    with _environment(PYTHONPATH=os.pathsep.join(dict.fromkeys(paths))), _loopback(), _quiet_auth_notice():
        _init(num_cpus, options)


def join(address: str) -> None:
    """Connect to a running cluster ("auto" or HOST:PORT); a driver on loopback stays on loopback."""
    host = address.rsplit(":", 1)[0].strip("[]")
    near = _loopback() if host in ("127.0.0.1", "localhost", "::1") else nullcontext()
    with near:
        ray.init(address=address, logging_level=logging.WARNING, configure_logging=False)


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Set environment variables (inherited by the Ray processes started meanwhile), then restore them."""
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextmanager
def _loopback() -> Iterator[None]:
    """This process's Ray node address is 127.0.0.1 (Ray's single-machine mode): every port on loopback."""
    from ray._private import ray_constants

    clusters = ray_constants.ENABLE_RAY_CLUSTER
    ray_constants.ENABLE_RAY_CLUSTER = False  # read when this process picks its node's address
    try:
        with _environment(RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0"):
            yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = clusters


def _init(num_cpus: int | None, options: dict[str, Any]) -> None:
    ray.init(
        num_cpus=num_cpus,
        include_dashboard=False,
        logging_level=logging.WARNING,
        configure_logging=False,
        **options,
    )


@contextmanager
def _quiet_auth_notice() -> Iterator[None]:
    """Ray turns token authentication on for a new local instance and says so on stderr: keep it quiet."""
    notice = logging.getLogger("ray._private.authentication.authentication_token_setup")
    level = notice.level
    notice.setLevel(logging.ERROR)
    try:
        yield
    finally:
        notice.setLevel(level)


@dataclass
class RayExecutor:
    """Stages on a Ray cluster; use as a context manager (or call `start` and `shutdown`).

    `address` None starts a local Ray instance for the executor's lifetime (or uses the one this process
    already started); "auto" or "HOST:PORT" joins a running cluster.
    """

    address: str | None = None
    io_actors: int = 0  # 0: I/O stages run in the driver
    max_retries: int = 3
    max_in_flight: int | None = None  # CPU tasks in flight; None: twice the cluster's CPUs
    chunk_size: int = 32  # most work items in one CPU task
    num_cpus: int | None = None  # CPUs of a local instance started here (None: this machine's)
    _started: bool = field(default=False, init=False, repr=False)
    _actors: list[Any] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        if min(self.max_in_flight or 1, self.chunk_size) < 1 or min(self.io_actors, self.max_retries) < 0:
            raise ValueError("max_in_flight and chunk_size must be >= 1, io_actors and max_retries >= 0")

    def __enter__(self) -> RayExecutor:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def start(self) -> None:
        """Connect to Ray: the running instance of this process, a new local one, or `address`."""
        if ray.is_initialized():
            return
        if self.address is None:
            init_local(self.num_cpus)
        else:
            join(self.address)
        self._started = True

    def shutdown(self) -> None:
        """Stop the I/O actors, and the Ray connection if `start` made it."""
        for actor in self._actors:
            ray.kill(actor)
        self._actors.clear()
        if self._started:
            ray.shutdown()
            self._started = False

    def __call__(
        self, stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink, concurrency: int
    ) -> None:
        """Run the stage's items on the cluster and hand each item's results to the sink in order."""
        self.start()
        if is_io_stage(stage):
            self._run_io(stage, items, context, sink, concurrency)
        elif not callable(getattr(stage, "process", None)):
            raise TypeError(f"stage {stage.name!r} has neither process() nor aprocess()")
        else:  # a batch stage here, in the driver; every other CPU stage goes through run_shards
            for item in items:
                sink(item, iter_one(stage, item, context))

    # -- CPU stages ----------------------------------------------------------------------------------

    def shards(self, stage: Stage) -> bool:
        """Whether STAGE runs as Ray tasks (or, spread by host, on the I/O actors), each writing its own
        checkpoint shards."""
        return is_sharded_kind(stage) or (self.io_actors > 0 and spreads_by_host(stage))

    def host_shares(self, stage: Stage, context: StageContext) -> list[int]:
        """A stage spread by host: each actor's share of the fetcher's requests in flight."""
        return fetch_shares(stage, context, self.io_actors)

    def run_shards(
        self, stage: Stage, shards: Iterator[Shard], context: StageContext, done: ShardSink
    ) -> None:
        """One task per shard, which runs and writes it; `done` gets each shard's stats in shard order.

        A shard whose worker is lost past its retries is run again one item per task, and the driver
        writes it: only an item that loses its worker every time is a reject.
        """
        self.start()
        if spreads_by_host(stage):
            self._run_host_shards(stage, shards, context, done)
            return
        limit = self.max_in_flight or max(2, 2 * cluster_cpus())
        stage_ref, context_ref = ray.put(stage), ray.put(context)
        shard_task = _shard_task.options(max_retries=self.max_retries, retry_exceptions=False)
        task = _cpu_task.options(max_retries=self.max_retries, retry_exceptions=False)

        def item_results(item: WorkItem) -> list[Any]:
            results, lost = _get(task.remote(stage_ref, context_ref, [item]))
            return results[0] if lost is None else [_lost(stage, item, lost)]

        def collect(chunk: list[Shard], ref: Any) -> list[StageStats]:
            stats, lost = _get(ref)
            if lost is None:
                return [stats]
            (shard,) = chunk
            items = shard_items(stage, shard)
            return [write_shard(stage, shard, items, (item_results(item) for item in items))]

        in_order(
            ([shard] for shard in shards),
            limit,
            submit=lambda chunk: shard_task.remote(stage_ref, context_ref, chunk[0]),
            collect=collect,
            cancel=ray.cancel,
            sink=done,
        )

    # -- I/O stages ----------------------------------------------------------------------------------

    def _run_io(
        self, stage: Stage, items: Iterator[WorkItem], context: StageContext, sink: Sink, concurrency: int
    ) -> None:
        if self.io_actors == 0:  # the driver's own event loop and clients, its CPU work on the cluster
            offload = _Offloader(cluster_cpus())
            asyncio.run(run_async(stage, items, replace(context, offload=offload), sink, concurrency))
            return
        llm, fetcher = context.llm, context.fetcher
        count = 1 if llm is not None else min(self.io_actors, concurrency)
        actors = self._io_pool()[:count]
        stage_ref = ray.put(stage)
        env = {}
        name = getattr(getattr(llm, "settings", None), "api_key_env", None)
        if name and os.environ.get(name):  # the model client reads its key from the environment
            env[name] = os.environ[name]
        setups = []
        for actor, share in zip(actors, split(concurrency, count), strict=True):
            portable = replace(context, llm=_portable(llm, share), fetcher=_portable(fetcher, share))
            setups.append(actor.setup.remote(stage_ref, portable, share, env))
        ray.get(setups)
        by_host = fetcher is not None

        def submit(chunk: list[WorkItem]) -> Any:
            (item,) = chunk
            return actors[route(item, count, by_host)].run.remote(item)

        def collect(chunk: list[WorkItem], ref: Any) -> list[list[Any]]:
            results, lost = _get(ref)
            return [results if lost is None else [_lost(stage, chunk[0], lost)]]

        try:
            in_order(
                chunked(items, 1),
                concurrency * 4,
                submit=submit,
                collect=collect,
                cancel=ray.cancel,
                sink=sink,
            )
        finally:
            ray.get([actor.close.remote() for actor in actors])
            if callable(getattr(llm, "after_workers", None)):  # read the actor's calls into the ledger
                llm.after_workers()

    def _run_host_shards(
        self, stage: Stage, shards: Iterator[Shard], context: StageContext, done: ShardSink
    ) -> None:
        """Each group's shards on its own actor, which fetches, writes them and returns their stats."""
        shares = self.host_shares(stage, context)
        actors = self._io_pool()[: len(shares)]
        stage_ref = ray.put(stage)
        ray.get(
            [
                actor.setup.remote(
                    stage_ref,
                    replace(context, llm=None, fetcher=_portable(context.fetcher, share)),
                    share,
                    {},
                )
                for actor, share in zip(actors, shares, strict=True)
            ]
        )

        def submit(chunk: list[Shard]) -> Any:
            return actors[group_of(chunk[0], len(shares))].run_shard.remote(chunk[0])

        try:
            in_order(
                ([shard] for shard in shards),
                len(shares) * 2,
                submit=submit,
                collect=lambda chunk, ref: [ray.get(ref)],
                cancel=ray.cancel,
                sink=done,
            )
        finally:
            ray.get([actor.close.remote() for actor in actors])

    def _io_pool(self) -> list[Any]:
        """The I/O actors, started on first use on the driver's node and kept for the executor's life."""
        here = NodeAffinitySchedulingStrategy(node_id=ray.get_runtime_context().get_node_id(), soft=False)
        while len(self._actors) < self.io_actors:
            options: dict[str, Any] = {
                "scheduling_strategy": here,
                "max_restarts": self.max_retries,
                "max_task_retries": self.max_retries,
                "num_cpus": 0,
            }
            self._actors.append(_IoActor.options(**options).remote())
        return self._actors


def cluster_cpus() -> int:
    """The CPUs of the connected Ray cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def route(item: WorkItem, actors: int, by_host: bool) -> int:
    """The actor for an item: by the host of a URL key (so a host stays on one actor), else in turn."""
    group = host_group(item.key, actors) if by_host else None
    return item.index % actors if group is None else group


def _get(ref: Any) -> tuple[Any, RayError | None]:
    """(the task's result, None), or (None, the error) when its worker was lost past its retries.

    An error the stage raised is raised as itself (only fatal ones reach here: the others are rejects).
    """
    try:
        return ray.get(ref), None
    except RayTaskError as error:
        raise error.as_instanceof_cause() from None
    except RayError as error:
        return None, error


def _lost(stage: Stage, item: WorkItem, error: RayError) -> Reject:
    """The reject of an item whose worker was lost, and its retries too."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return Reject(
        stage=stage.name,
        reason=f"{ERROR_PREFIX}{type(error).__name__}",
        key=item.key,
        detail=f"the worker running this item was lost, and its retries too: {first}"[:2000],
    )


@ray.remote
def _shard_task(stage: Stage, context: StageContext, shard: Shard) -> StageStats:
    items = shard_items(stage, shard)
    return write_shard(stage, shard, items, shard_results(stage, items, context))


@ray.remote
def _cpu_task(stage: Stage, context: StageContext, chunk: list[WorkItem]) -> list[list[Any]]:
    return [run_one(stage, item, context) for item in chunk]


@ray.remote
def _offload_batch(works: list[Callable[[], Any]]) -> list[tuple[bool, Any]]:
    """(True, result) or (False, the exception) for each piece of work, in order."""
    outcomes: list[tuple[bool, Any]] = []
    for work in works:
        try:
            outcomes.append((True, work()))
        except Exception as error:  # raised in the actor, as locally
            outcomes.append((False, error))
    return outcomes


class _Offloader:
    """An I/O actor's `offload`: its CPU work as Ray tasks anywhere on the cluster, in batches.

    Ray costs a few ms per task, as much as extracting one page, so at most `in_flight` tasks run at
    once and the work that arrives meanwhile waits to go together in the next one (up to `largest`).
    """

    def __init__(self, in_flight: int, largest: int = 32) -> None:
        self.in_flight, self.largest = in_flight, largest
        self.waiting: list[tuple[Callable[[], Any], asyncio.Future[Any]]] = []
        self.running: set[asyncio.Task[None]] = set()

    async def __call__(self, work: Callable[[], Any]) -> Any:
        future = asyncio.get_running_loop().create_future()
        self.waiting.append((work, future))
        self._start()
        return await future

    def _start(self) -> None:
        while self.waiting and len(self.running) < self.in_flight:
            batch, self.waiting = self.waiting[: self.largest], self.waiting[self.largest :]
            task = asyncio.ensure_future(self._run(batch))
            self.running.add(task)
            task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.running.discard(task)
        self._start()

    async def _run(self, batch: list[tuple[Callable[[], Any], asyncio.Future[Any]]]) -> None:
        try:
            outcomes = await _offload_batch.remote([work for work, _ in batch])
        except RayError as error:  # the worker was lost past its retries: each piece fails with it
            lost = WorkerCrashed(f"its Ray worker was lost: {type(error).__name__}: {error}"[:2000])
            outcomes = [(False, lost)] * len(batch)
        for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)


# -- I/O actors ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Recipe:
    """A client to make on the actor: `make()` returns it (see Fetcher / LLMClient.worker_recipe)."""

    make: Any


def _portable(client: Any, share: int) -> Any:
    """What crosses to an actor for CLIENT: its recipe with SHARE of its concurrency, else the client."""
    if client is None:
        return None
    recipe = getattr(client, "worker_recipe", None)
    return _Recipe(recipe(share)) if callable(recipe) else client  # anything else must pickle


@ray.remote
class _IoActor:
    """Runs one I/O stage's calls at a time on its own event loop, with its own fetcher and model client."""

    def __init__(self) -> None:
        self.stage: Any = None
        self.context: Any = None
        self.limit: asyncio.Semaphore | None = None
        self.share = 1

    async def setup(self, stage: Stage, context: StageContext, share: int, env: dict[str, str]) -> None:
        """Take a stage, its context (client recipes in place of clients) and this actor's concurrency."""
        os.environ.update(env)
        llm, fetcher = (
            client.make() if isinstance(client, _Recipe) else client
            for client in (context.llm, context.fetcher)
        )
        offload = _Offloader(cluster_cpus())
        self.stage, self.context = stage, replace(context, llm=llm, fetcher=fetcher, offload=offload)
        self.limit, self.share = asyncio.Semaphore(share), share

    async def run(self, item: WorkItem) -> list[Any]:
        """One item's results (a non-fatal error is a reject, as locally)."""
        assert self.limit is not None, "setup() first"
        async with self.limit:
            return await arun_one(self.stage, item, self.context)

    async def run_shard(self, shard: Shard) -> StageStats:
        """Run and write one shard of a stage spread by host (irbgen.pipeline.host_shards); its stats."""
        assert self.limit is not None, "setup() first"
        return await write_io_shard(self.stage, shard, self.context, self.share)

    def pid(self) -> str:
        """This actor's process id (tests check where work ran)."""
        return str(os.getpid())

    async def close(self) -> None:
        """Close this stage's clients: WARC files, index, reply cache and ledger journal are flushed."""
        if self.context is None:
            return
        fetcher, llm = self.context.fetcher, self.context.llm
        if fetcher is not None and hasattr(fetcher, "aclose"):
            await fetcher.aclose()
        if llm is not None and hasattr(llm, "aclose"):
            await llm.aclose()
            if hasattr(llm, "ledger"):
                llm.ledger.close()
        self.stage = self.context = None
