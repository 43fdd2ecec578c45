"""The articles written to corpus.jsonl parts by forked processes while the parent asks the questions.

Each writer renders a contiguous range of people with the same code as the in-process path and writes
their lines with the benchmark writer's own `write_corpus_part`; the first writer then appends the
others' parts in order, so the file is byte-identical to one written in a single pass. Forking shares
the finished world (and the relation shapes the articles use) without copying or pickling it.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Iterator
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from irbgen.benchmark import CorpusPart, WrittenCorpus, write_corpus_part
from irbgen.errors import IrbgenError
from irbgen.phantom.articles import ARTICLE_SHAPES, DocumentIds, articles
from irbgen.phantom.relations import RelationIndex

WRITERS = 2  # processes rendering articles; the parent's question work runs beside them


def can_fork() -> bool:
    """Whether writer processes can share the world by forking (not on Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


class CorpusWriters:
    """WRITERS forked processes, each writing the articles of one range of people to a part file.

    The first writer, once its own part is written, appends the others' parts to it as they finish, so
    the corpus is joined (and hashed) while the parent still asks questions: `join` gets one part.
    """

    def __init__(self, index: RelationIndex, dob_text: list[str], folder: Path, writers: int = WRITERS):
        for shape in ARTICLE_SHAPES:  # built once, here, and shared with every writer
            index.shape(shape)
        size = index.size
        self.ids = DocumentIds(size)
        bounds = [size * number // writers for number in range(writers + 1)]
        ranges = list(zip(bounds, bounds[1:], strict=False))
        context = multiprocessing.get_context("fork")
        sys.stdout.flush()  # a forked child must not write out the parent's buffered text again
        sys.stderr.flush()
        self.writers: list[multiprocessing.Process] = []
        later: list[tuple[str, Connection]] = []  # the pipes from writers 1.. to writer 0
        for number in range(writers - 1, 0, -1):
            receive, send = context.Pipe(duplex=False)
            self._start(context, number, (index, dob_text, *ranges[number], folder, send, []))
            send.close()
            later.insert(0, (f"corpus-{number}", receive))
        self.receive, send = context.Pipe(duplex=False)
        self._start(context, 0, (index, dob_text, *ranges[0], folder, send, later))
        send.close()
        for _, receive in later:
            receive.close()

    def _start(self, context: Any, number: int, args: tuple) -> None:
        process = context.Process(target=_write, args=(number, *args), name=f"corpus-{number}")
        process.start()
        self.writers.append(process)

    def join(self) -> WrittenCorpus:
        """Wait for every writer; the joined corpus, or IrbgenError naming the writer that failed."""
        try:
            outcome, value = self.receive.recv()
        except EOFError:  # the first writer died without a word: killed, or out of memory
            outcome, value = "stopped", "corpus-0"
        for process in self.writers:
            process.join()
        if outcome == "stopped":
            (process,) = [process for process in self.writers if process.name == value]
            raise IrbgenError(
                f"article writer {process.name} stopped (exit code {process.exitcode}) before "
                "finishing its part of corpus.jsonl"
            )
        if outcome != "done":
            raise IrbgenError(f"article writer {value[0]}: {value[1]}")
        return WrittenCorpus([value], self.ids)

    def stop(self) -> None:
        """End the writers still running (the build failed meanwhile)."""
        for process in self.writers:
            if process.is_alive():
                process.terminate()
            process.join()
        self.receive.close()


def _write(
    number: int,
    index: RelationIndex,
    dob_text: list[str],
    first: int,
    end: int,
    folder: Path,
    send: Connection,
    later: list[tuple[str, Connection]],
) -> None:
    """In a forked writer: render people FIRST..END-1 to its part file, then (the first writer) append
    the LATER writers' parts as they come; send back the part, or the failure and whose it was."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends its writers
    name = f"corpus-{number}"
    try:
        path = Path(folder) / f"{name}.jsonl"
        part = write_corpus_part(path, articles(index, dob_text, first, end), first, lambda: _parts(later))
    except _LaterWriterFailed as failed:  # passed on as the later writer said it
        send.send((failed.outcome, failed.value))
    except Exception as error:  # reported by the parent in one line
        send.send(("failed", (name, str(error) or type(error).__name__)))
    else:
        send.send(("done", part))
    finally:
        send.close()


class _LaterWriterFailed(Exception):
    """A later writer's failure, as the parent reads it: ("stopped", its name) or ("failed", (its name,
    the message))."""

    def __init__(self, outcome: str, value: Any) -> None:
        self.outcome, self.value = outcome, value


def _parts(later: list[tuple[str, Connection]]) -> Iterator[CorpusPart]:
    """The later writers' parts, in order, as each finishes."""
    for name, receive in later:
        try:
            outcome, value = receive.recv()
        except EOFError:  # died without a word: killed, or out of memory
            raise _LaterWriterFailed("stopped", name) from None
        if outcome != "done":
            raise _LaterWriterFailed(outcome, value)
        yield value
