"""A build as a declared list of steps, handed to the stage runner one after the other.

A step is a stage and the pure function that gives its inputs from the outputs of the steps before it
(in the spirit of datatrove: the pipeline is data, the executor runs it). A stage that needs every record
at once, such as fact assembly or question planning, takes one `Batch` record, so it too is checkpointed,
resumed, and has its rejects and stats recorded by the runner like every other stage.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from pydantic import BaseModel

from irbgen.pipeline.runner import Executor, StageResult, run_stage
from irbgen.pipeline.stage import Stage, StageContext, is_io_stage
from irbgen.progress import Progress

Done = Mapping[str, StageResult]  # the finished steps so far, by name


@dataclass(frozen=True)
class Step:
    """One step: a stage (or a function that makes it from earlier outputs) and where its inputs come from.

    `inputs` must be a pure function of earlier outputs and the build's configuration: a resumed run calls
    it again. I/O stages run `concurrency` calls at once (None: the pipeline's default).
    """

    name: str
    stage: Stage | Callable[[Done], Stage]
    inputs: Callable[[Done], Iterable[BaseModel]]
    concurrency: int | None = None


def run_steps(
    steps: Sequence[Step],
    context: StageContext,
    *,
    executor: Executor | None = None,
    processes: int = 1,
    concurrency: int = 16,
    progress: Progress | None = None,
    done: Done | None = None,
) -> dict[str, StageResult]:
    """Run each step over its inputs, in order; a step whose stage completed earlier is only read back.

    `done` holds the results of steps run before (by an earlier list), for these steps' inputs; the
    returned mapping has this list's results only.

    CPU stages get a context without clients, so they can run on other processes or machines; I/O stages
    (those with `aprocess`) get the context's LLM client and fetcher.
    """
    names = [step.name for step in steps]
    if len(set(names)) != len(names):
        raise ValueError(f"step names repeat: {names}")
    earlier = dict(done or {})
    results: dict[str, StageResult] = {}
    for step in steps:
        done_so_far = {**earlier, **results}
        stage = step.stage if isinstance(step.stage, Stage) else step.stage(done_so_far)
        if stage.name != step.name:
            raise ValueError(f"step {step.name!r} runs a stage named {stage.name!r}")
        io_stage = is_io_stage(stage)
        results[step.name] = run_stage(
            stage,
            step.inputs(done_so_far),
            context if io_stage else replace(context, llm=None, fetcher=None),
            concurrency=step.concurrency or concurrency,
            processes=processes,
            progress=progress,
            executor=executor,
        )
    return results
