"""Which executor runs a build's stages: the options a build config shares, and the executor they make.

`local` is this machine (LocalExecutor: an asyncio loop, `processes` processes for CPU stages and for
the CPU-heavy part of I/O stages, kept for the whole build). `ray` runs
the stages on a Ray cluster (irbgen.pipeline.ray_executor), a local one started for the build by default.
None of these options changes what a build writes, only where and how fast it runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from irbgen.pipeline.runner import LocalExecutor

# The fields below: kept out of run fingerprints and recorded configs (they never change outputs).
EXECUTOR_FIELDS = frozenset({"executor", "ray_address", "ray_io_actors", "ray_max_retries", "shared_dir"})


class ExecutorOptions(BaseModel):
    """Where a build's stages run."""

    model_config = ConfigDict(extra="forbid")

    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # None: start a local Ray instance; "auto" or HOST:PORT: join a cluster
    ray_io_actors: int = Field(0, ge=0)  # 0: I/O stages in the driver; N: on N async actors (see RayExecutor)
    ray_max_retries: int = Field(3, ge=0)  # reruns of a task whose worker died, before the item is a reject
    shared_dir: Path | None = None  # a folder every node can write, for worker files (None: the run dir)


def worker_files(run_dir: Path, shared_dir: Path | None) -> Path:
    """Where workers read and write a run's files: dump block indexes, the old dump's entity list, the
    saved knowledge bases (which workers map), the checkpoint shards they write (irbgen.pipeline.shards).

    The run directory, or with --shared-dir (a folder every node of a cluster can read and write) this
    run's own folder there, named from the run directory's path, so a rerun finds what the first run made.
    """
    if shared_dir is None:
        return run_dir
    digest = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:16]
    return Path(shared_dir).resolve() / f"{run_dir.name}-{digest}"


@contextmanager
def executor_for(options: Any, given: Any = None) -> Iterator[Any]:
    """The executor `options` ask for, or GIVEN when one is passed in.

    The executor is started here and shut down on exit: a local pool's processes, or a Ray connection
    (a Ray instance it started stops with it).
    """
    if given is not None:
        yield given
        return
    if getattr(options, "executor", "local") == "local":
        with LocalExecutor(processes=getattr(options, "processes", 1)) as local:
            yield local
        return
    from irbgen.extras import require

    require("ray", "--executor ray")
    from irbgen.pipeline.ray_executor import RayExecutor

    with RayExecutor(
        address=options.ray_address, io_actors=options.ray_io_actors, max_retries=options.ray_max_retries
    ) as executor:
        yield executor
