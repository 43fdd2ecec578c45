"""Worker processes for the CPU-heavy part of I/O stages (`offload`): one piece of work each at a time.

(`Aside` runs one piece of work in a worker of its own while the caller goes on, the same way.)

Parsers such as lxml, trafilatura and htmldate are not safe on several threads of one process, and a
page can make them crash or spin. So each piece of work runs alone in a spawned worker process, the
event loop waits on the worker's pipe (it stays free), and:

- a worker that dies fails its work with `WorkerCrashed` (after one retry on a fresh worker) and a
  worker past the time limit is killed, failing its work with `WorkTimedOut`; either is replaced;
- a caller that is cancelled (the build stops) kills the worker running its work at once;
- workers ignore SIGINT (Ctrl-C reaches the whole process group; the parent stops them), and exit by
  themselves when their parent is gone, even SIGKILLed (`watch_parent`).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from irbgen.pipeline.stage import WorkerCrashed, WorkTimedOut

PARENT_POLL_SECONDS = 0.5
CRASH_ATTEMPTS = 2  # a worker that dies may have died of something else (the OOM killer): try once more


def watch_parent(parent: int) -> None:
    """Exit this process (from a daemon thread) as soon as PARENT is no longer its parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="irbgen-watch-parent", daemon=True).start()


def serve(conn: Connection, parent: int) -> None:
    """A worker's loop: run each pickled callable received, send back (True, result) or (False, error)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(parent)
    conn.send_bytes(b"")  # ready: the time limit of the first piece of work starts now, not at spawn
    while True:
        try:
            payload = conn.recv_bytes()
        except (EOFError, OSError):  # the parent closed the pool, or is gone
            return
        try:
            outcome: tuple[bool, Any] = (True, pickle.loads(payload)())
        except Exception as error:  # raised in the caller, as itself
            outcome = (False, error)
        try:
            reply = pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            failure = RuntimeError(f"the result could not be sent back: {type(error).__name__}: {error}")
            reply = pickle.dumps((False, failure), protocol=pickle.HIGHEST_PROTOCOL)
        conn.send_bytes(reply)


@dataclass(eq=False)  # compared and hashed by identity
class _Worker:
    process: BaseProcess
    conn: Connection
    ready: bool = False  # it said so (a spawned interpreter takes a while to start)

    def kill(self) -> None:
        """Stop the process now and reap it."""
        self.conn.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)

    def death(self) -> str:
        """How the process ended, for a reject's detail."""
        self.process.join(1)
        code = self.process.exitcode
        if code is None:
            return "its pipe closed"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"


class WorkerPool:
    """Up to SIZE worker processes, started on first use and kept until `close`; work runs one per worker.

    `run` is awaited on an event loop; one pool may serve several loops one after another (one per
    stage), never two at once.
    """

    def __init__(self, size: int, timeout: float) -> None:
        if size < 1 or not timeout > 0:
            raise ValueError("a worker pool needs at least 1 worker and a positive time limit")
        self.size, self.timeout = size, timeout
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None

    async def run(self, work: Callable[[], Any]) -> Any:
        """WORK's result computed on a worker; its exception raised here, or WorkerCrashed/WorkTimedOut."""
        payload = pickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL)
        for attempt in range(1, CRASH_ATTEMPTS + 1):
            async with self._semaphore():
                worker = self._idle.pop() if self._idle else self._start()
                self._busy.add(worker)
                try:
                    ok, value = await self._call(worker, payload)
                except WorkerCrashed:
                    self._discard(worker)
                    if attempt == CRASH_ATTEMPTS:
                        raise
                    continue
                except BaseException:  # WorkTimedOut, or cancelled: the work is abandoned with its worker
                    self._discard(worker)
                    raise
                self._busy.discard(worker)
                self._idle.append(worker)
            if ok:
                return value
            raise value
        raise AssertionError("unreachable")

    def pids(self) -> list[int]:
        """The process ids of the workers alive now."""
        return [worker.process.pid for worker in [*self._idle, *self._busy] if worker.process.pid is not None]

    def close(self) -> None:
        """Stop every worker now: a worker holds nothing to save, and a stopping build must not wait."""
        for worker in [*self._busy, *self._idle]:
            worker.kill()
        self._idle, self._busy = [], set()

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._loop, self._slots = loop, asyncio.Semaphore(self.size)
        return self._slots

    def _start(self) -> _Worker:
        spawn = multiprocessing.get_context("spawn")
        ours, theirs = spawn.Pipe()
        process = spawn.Process(target=serve, args=(theirs, os.getpid()), name="irbgen-worker", daemon=True)
        process.start()
        theirs.close()  # only the worker holds its end: its death reads as EOF here
        return _Worker(process, ours)

    def _discard(self, worker: _Worker) -> None:
        self._busy.discard(worker)
        worker.kill()

    async def _call(self, worker: _Worker, payload: bytes) -> tuple[bool, Any]:
        """Send PAYLOAD to WORKER and wait for its reply without blocking the loop."""
        try:
            if not worker.ready:
                await self._receive(worker, None)
                worker.ready = True
            worker.conn.send_bytes(payload)
            reply = await self._receive(worker, self.timeout)
        except TimeoutError:
            raise WorkTimedOut(f"still running after {self.timeout:g} s; its worker was stopped") from None
        except (EOFError, OSError):
            raise WorkerCrashed(f"the worker process died ({worker.death()})") from None
        return pickle.loads(reply)

    @staticmethod
    async def _receive(worker: _Worker, timeout: float | None) -> bytes:
        """The next message from WORKER, waited for on the loop; TimeoutError past TIMEOUT seconds."""
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        fd = worker.conn.fileno()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait_for(readable, timeout)
        finally:
            loop.remove_reader(fd)
        return worker.conn.recv_bytes()


class Aside:
    """One piece of WORK run in a spawned worker process of its own while the caller goes on.

    `result` waits for it (its exception is raised here, WorkerCrashed if the worker died); `done` asks
    without waiting. Leaving the `with` block stops the worker, finished or not.
    """

    def __init__(self, work: Callable[[], Any], name: str = "irbgen-aside") -> None:
        spawn = multiprocessing.get_context("spawn")
        ours, theirs = spawn.Pipe()
        process = spawn.Process(target=serve, args=(theirs, os.getpid()), name=name, daemon=True)
        process.start()
        theirs.close()
        self._worker = _Worker(process, ours)
        self._outcome: tuple[bool, Any] | None = None
        ours.send_bytes(pickle.dumps(work, protocol=pickle.HIGHEST_PROTOCOL))  # read once it is ready

    def __enter__(self) -> Aside:
        return self

    def __exit__(self, *exc: object) -> None:
        self._worker.kill()

    def done(self) -> bool:
        """Whether the result is there (or the worker died): `result` would not wait."""
        if self._outcome is not None:
            return True
        worker = self._worker
        try:
            if not worker.ready and worker.conn.poll():
                worker.conn.recv_bytes()
                worker.ready = True
            return worker.ready and worker.conn.poll()
        except (EOFError, OSError):
            return True

    def result(self) -> Any:
        """WORK's result, waited for; its exception raised here, or WorkerCrashed."""
        if self._outcome is None:
            worker = self._worker
            try:
                if not worker.ready:
                    worker.conn.recv_bytes()
                    worker.ready = True
                self._outcome = pickle.loads(worker.conn.recv_bytes())
            except (EOFError, OSError):
                self._outcome = (False, WorkerCrashed(f"the worker process died ({worker.death()})"))
            worker.kill()  # its one piece of work is done
        ok, value = self._outcome
        if ok:
            return value
        raise value
