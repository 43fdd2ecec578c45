"""`Aside`: one piece of work in a worker process of its own while the caller goes on."""

from __future__ import annotations

import functools
import os
import time

import pytest

from irbgen.pipeline.stage import WorkerCrashed
from irbgen.pipeline.workers import Aside


def wait_done(aside: Aside) -> None:
    deadline = time.monotonic() + 60
    while not aside.done():
        assert time.monotonic() < deadline, "the worker never finished"
        time.sleep(0.05)


def test_the_result_comes_from_another_process() -> None:
    with Aside(os.getpid) as aside:
        wait_done(aside)
        assert aside.result() != os.getpid()
        assert aside.result() == aside.result()  # asked twice, the same answer


def test_the_work_s_exception_is_raised_in_the_caller() -> None:
    with Aside(functools.partial(int, "ten")) as aside:
        with pytest.raises(ValueError, match="invalid literal"):
            aside.result()


def test_a_worker_that_dies_is_reported() -> None:
    with Aside(functools.partial(os._exit, 3)) as aside:
        wait_done(aside)
        with pytest.raises(WorkerCrashed, match="exit code 3"):
            aside.result()


def test_leaving_the_block_stops_a_worker_still_at_work() -> None:
    with Aside(functools.partial(time.sleep, 60)) as aside:
        process = aside._worker.process
        assert not aside.done()
    assert not process.is_alive()
