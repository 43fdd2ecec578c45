"""The articles written to corpus.jsonl parts by forked processes while the parent asks the questions.

Each writer renders a contiguous range of people with the same code as the in-process path and writes
their lines with the benchmark writer's own `write_corpus_part`; the writer joins the parts in order,
so the file is byte-identical to one written in a single pass. Forking shares the finished world (and
the relation shapes the articles use) without copying or pickling it.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from irbgen.benchmark import CorpusPart, WrittenCorpus, write_corpus_part
from irbgen.errors import IrbgenError
from irbgen.phantom.articles import ARTICLE_SHAPES, DocumentIds, articles
from irbgen.phantom.relations import RelationIndex

WRITERS = 2  # processes rendering articles; the parent's question work runs beside them


def can_fork() -> bool:
    """Whether writer processes can share the world by forking (not on Windows)."""
    return "fork" in multiprocessing.get_all_start_methods()


class CorpusWriters:
    """WRITERS forked processes, each writing the articles of one range of people to a part file."""

    def __init__(self, index: RelationIndex, dob_text: list[str], folder: Path, writers: int = WRITERS):
        for shape in ARTICLE_SHAPES:  # built once, here, and shared with every writer
            index.shape(shape)
        size = index.size
        self.ids = DocumentIds(size)
        bounds = [size * number // writers for number in range(writers + 1)]
        context = multiprocessing.get_context("fork")
        sys.stdout.flush()  # a forked child must not write out the parent's buffered text again
        sys.stderr.flush()
        self.writers: list[tuple[multiprocessing.Process, Connection]] = []
        for number, (first, end) in enumerate(zip(bounds, bounds[1:], strict=False)):
            receive, send = context.Pipe(duplex=False)
            path = Path(folder) / f"corpus-{number}.jsonl"
            process = context.Process(
                target=_write, args=(index, dob_text, first, end, path, send), name=f"corpus-{number}"
            )
            process.start()
            send.close()
            self.writers.append((process, receive))

    def join(self) -> WrittenCorpus:
        """Wait for every writer; the parts in order, or IrbgenError naming the writer that failed."""
        parts: list[CorpusPart] = []
        for process, receive in self.writers:
            try:
                outcome, value = receive.recv()
            except EOFError:  # died without a word: killed, or out of memory
                process.join()
                raise IrbgenError(
                    f"article writer {process.name} stopped (exit code {process.exitcode}) before "
                    "finishing its part of corpus.jsonl"
                ) from None
            process.join()
            if outcome != "done":
                raise IrbgenError(f"article writer {process.name}: {value}")
            parts.append(value)
        return WrittenCorpus(parts, self.ids)

    def stop(self) -> None:
        """End the writers still running (the build failed meanwhile)."""
        for process, receive in self.writers:
            if process.is_alive():
                process.terminate()
            process.join()
            receive.close()


def _write(
    index: RelationIndex, dob_text: list[str], first: int, end: int, path: Path, send: Connection
) -> None:
    """In the forked writer: render people FIRST..END-1 to PATH and send back the part or the failure."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the parent, which ends its writers
    try:
        part = write_corpus_part(path, articles(index, dob_text, first, end), first)
    except Exception as error:  # reported by the parent in one line
        send.send(("failed", str(error) or type(error).__name__))
    else:
        send.send(("done", part))
    finally:
        send.close()
