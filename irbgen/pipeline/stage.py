"""The contract every build stage follows.

A stage is configured in its constructor (no I/O there) and maps one input record to zero or more
output records or `Reject`s. CPU-bound stages implement `process`; I/O-bound stages implement `aprocess`.
A CPU stage may also implement `process_many(records, context)`, each record's results as `process` gives
them, to batch work across a chunk of records (the keypoint stage's spaCy parses); the runner then hands
it chunks (see `irbgen.pipeline.runner.chunk_results`).
Side effects (HTTP, LLM, files) come in through the `StageContext`, never from globals, so the same stage
runs locally, in tests against loopback servers, or later on Ray.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from irbgen.records import Reject


@dataclass
class StageContext:
    """What a stage may touch: the run directory and the injected clients (None when unused)."""

    run_dir: Path
    llm: Any = None  # irbgen.llm.client.LLMClient, or a rules backend
    fetcher: Any = None  # irbgen.web.fetch.Fetcher
    options: dict[str, Any] = field(default_factory=dict)
    # Where workers write their checkpoint shards (a folder every node can write); None: the run directory.
    shard_dir: Path | None = None
    # Set by the executor for an I/O stage: runs a picklable no-argument callable on its CPU workers.
    offload: Callable[[Callable[[], Any]], Awaitable[Any]] | None = None


class WorkerCrashed(Exception):
    """Offloaded work whose process died (a parser crash, the OOM killer); its worker was replaced."""


class WorkTimedOut(Exception):
    """Offloaded work that ran past the executor's time limit; its worker was stopped and replaced."""


async def offload(context: StageContext, work: Callable[[], Any]) -> Any:
    """WORK's result, computed off the event loop on the executor's workers (processes, Ray tasks).

    For the CPU-heavy part of an I/O stage (HTML extraction). It may raise WorkerCrashed or WorkTimedOut.
    Without an executor's workers (a stage called directly) WORK runs here, one at a time: never on
    several threads at once, since parsers such as lxml are not safe that way.
    """
    if context.offload is None:
        return work()
    return await context.offload(work)


class Batch(BaseModel):
    """The one input of a stage that needs all its records at once; `parts` are the records it joins."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str
    parts: dict[str, Any]

    @property
    def key(self) -> str:
        return self.name


@runtime_checkable
class Stage(Protocol):
    """One step of a build. `name` names its checkpoint folder and its rejects."""

    name: str
    input_model: type[BaseModel]
    output_model: type[BaseModel]

    def key(self, record: BaseModel) -> str:
        """The input record's stable key; finished keys are skipped on resume."""
        ...


def is_io_stage(stage: Any) -> bool:
    """Whether the stage waits on I/O (runs `aprocess` on an event loop) rather than computing (`process`).

    A stage with both methods may say which it is by `io_bound`: a model-backed stage on its offline
    rules is CPU work and spreads over processes like any other.
    """
    return bool(getattr(stage, "io_bound", callable(getattr(stage, "aprocess", None))))


def is_batch_stage(stage: Any) -> bool:
    """Whether the stage joins every earlier record in one `Batch`: it runs where its records are (the
    driver), since sending them all to a worker costs a full copy and gains no parallelism."""
    return getattr(stage, "input_model", None) is Batch


class CpuStage(Stage, Protocol):
    def process(self, record: BaseModel, context: StageContext) -> Iterable[BaseModel | Reject]:
        """Outputs (or rejects) for one input record."""
        ...


class IoStage(Stage, Protocol):
    async def aprocess(self, record: BaseModel, context: StageContext) -> list[BaseModel | Reject]:
        """Outputs (or rejects) for one input record; many run concurrently."""
        ...
