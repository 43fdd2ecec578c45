"""facts.jsonl and documents.jsonl from part 1's checkpoints, as record lines.

The two files are the facts stage's and the fetch stage's outputs put in order, with each page's lead
facts and their documents added (irb/leads.py). Built from the checkpoints' record lines, the driver
parses one fact a page (the one whose lead claims make the lead facts) instead of every fact and every
fetched page (issue 29). A record line is the file's line as it is: the checkpoint writes a record as
`write_jsonl` does (`json_line`).

Neither file is held in memory: the lines are sorted `SORT_BUDGET` bytes at a time, and what does not fit
goes to sorted runs on disk that are merged as the files are written (a full dump's fetched pages are
hundreds of gigabytes).
"""

from __future__ import annotations

import heapq
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from irbgen.io import atomic_path, json_line
from irbgen.irb.leads import lead_facts
from irbgen.irb.records import Fact
from irbgen.pipeline.encoded import decode, leading_fields

SORT_BUDGET = 256 << 20  # bytes of lines sorted in memory at once

# How a citation fact without lead claims ends: its last two fields, as JSON writes them. A line ending so
# is not parsed; a line written another way is (and gives the same result, more slowly).
_NO_LEAD_CLAIMS = b'"lead_claims": [], "source": "citation"}'
_FETCHED, _LEAD = 0, 1  # a document's kind, in its sort key: a fetched page before a lead of the same id


@dataclass(frozen=True)
class Part1Counts:
    """How many lines facts.jsonl and documents.jsonl got, and how many facts are lead facts."""

    facts: int
    documents: int
    lead_facts: int


def write_part1_files(
    facts: Iterable[bytes],
    documents: Iterable[bytes],
    facts_path: Path,
    documents_path: Path,
    source: str = "facts",
    budget: int = SORT_BUDGET,
) -> Part1Counts:
    """Write facts in page-id order (a dump read in shards yields its pages shard by shard; the files must
    not depend on --shards or on the executor), each page's lead facts after its own; documents, the
    fetched ones and the lead ones, in id order (stable; a lead document once, as its first page made it).
    The same lines as sorting the parsed records would give; each file replaces its path when complete."""
    with tempfile.TemporaryDirectory(
        dir=facts_path.parent, prefix=f".{facts_path.name}.", suffix=".tmp"
    ) as folder:
        by_page = _Sorter(Path(folder) / "facts", budget)
        by_page.extend(
            ((leading_fields(line, ("page_id",))["page_id"], number), line)
            for number, line in enumerate(facts, start=1)
        )
        by_id = _Sorter(Path(folder) / "documents", budget)
        by_id.extend(
            ((leading_fields(line, ("id",))["id"], _FETCHED, number), line)
            for number, line in enumerate(documents)
        )
        written, leads, lead_documents_given = 0, 0, 0
        with atomic_path(facts_path) as temporary, open(temporary, "wb") as out:
            for _, page in groupby(by_page.merged(), key=lambda item: item[0][0]):
                lines = [(number, line) for (_, number), line in page]
                out.writelines(line + b"\n" for _, line in lines)
                written += len(lines)
                fact = _with_lead_claims(lines, source)
                if fact is None:
                    continue
                made, lead_documents = lead_facts([fact])
                out.writelines(json_line(lead).encode() + b"\n" for lead in made)
                by_id.extend(
                    ((document.id, _LEAD, lead_documents_given + number), json_line(document).encode())
                    for number, document in enumerate(lead_documents)
                )
                lead_documents_given += len(lead_documents)
                written, leads = written + len(made), leads + len(made)
        kept = 0
        with atomic_path(documents_path) as temporary, open(temporary, "wb") as out:
            write = out.write
            for line in _first_leads(by_id.merged()):
                write(line)
                kept += 1
    return Part1Counts(written, kept, leads)


def _first_leads(documents: Iterable[tuple[tuple[str, int, int], bytes]]) -> Iterator[bytes]:
    """The lines (newline-ended) of DOCUMENTS in id order, a lead document only where its id is first."""
    last_lead = None
    for (document_id, kind, _), line in documents:
        if kind == _LEAD:
            if document_id == last_lead:
                continue  # another page's lead sentence of the same title and words
            last_lead = document_id
        yield line + b"\n"


def _with_lead_claims(lines: list[tuple[int, bytes]], source: str) -> Fact | None:
    """A page's first citation fact that carries lead claims (all of them carry the page's), or None."""
    for number, line in lines:
        if line.endswith(_NO_LEAD_CLAIMS):
            continue
        fact = decode(Fact, line, source, number)
        if isinstance(fact, Fact) and fact.source == "citation" and fact.lead_claims:
            return fact
    return None


class _Sorter:
    """(key, line) pairs given back in key order (keys unique), at most BUDGET bytes of lines held: each
    time that much is held it is sorted and written to a run file in FOLDER, and the runs are merged."""

    def __init__(self, folder: Path, budget: int) -> None:
        self.folder, self.budget = folder, budget
        self.held: list[tuple[Any, bytes]] = []
        self.size = 0
        self.runs: list[Path] = []

    def extend(self, pairs: Iterable[tuple[Any, bytes]]) -> None:
        held, size, budget = self.held, self.size, self.budget
        for pair in pairs:
            held.append(pair)
            size += len(pair[1])
            if size >= budget:
                self._spill()
                held, size = self.held, 0
        self.size = size

    def merged(self) -> Iterator[tuple[Any, bytes]]:
        """Every pair given, in key order (once)."""
        self.held.sort(key=itemgetter(0))
        if not self.runs:
            yield from self.held
            return
        yield from heapq.merge(*map(_run, self.runs), self.held, key=itemgetter(0))

    def _spill(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{len(self.runs):06d}.pickle"
        self.held.sort(key=itemgetter(0))
        with open(path, "wb") as run:
            for pair in self.held:
                pickle.dump(pair, run, protocol=pickle.HIGHEST_PROTOCOL)
        self.runs.append(path)
        self.held, self.size = [], 0


def _run(path: Path) -> Iterator[tuple[Any, bytes]]:
    """The pairs of one sorted run file, in order."""
    with open(path, "rb") as run:
        while True:
            try:
                yield pickle.load(run)
            except EOFError:
                return
