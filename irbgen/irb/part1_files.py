"""facts.jsonl and documents.jsonl from part 1's checkpoints, as record lines.

The two files are the facts stage's and the fetch stage's outputs put in order, with each page's lead
facts and their documents added (irb/leads.py). Built from the checkpoints' record lines, the driver
parses one fact a page (the one whose lead claims make the lead facts) instead of every fact and every
fetched page (issue 29). A record line is the file's line as it is: the checkpoint writes a record as
`write_jsonl` does (`json_line`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from irbgen.io import json_line
from irbgen.irb.leads import lead_facts
from irbgen.irb.records import Fact
from irbgen.pipeline.encoded import decode, leading_fields

# How a citation fact without lead claims ends: its last two fields, as JSON writes them. A line ending so
# is not parsed; a line written another way is (and gives the same result, more slowly).
_NO_LEAD_CLAIMS = b'"lead_claims": [], "source": "citation"}'


@dataclass(frozen=True)
class Part1Files:
    """The lines of facts.jsonl and documents.jsonl (no newlines), and how many facts are lead facts."""

    facts: list[bytes]
    documents: list[bytes]
    lead_facts: int


def part1_files(facts: Iterable[bytes], documents: Iterable[bytes], source: str = "facts") -> Part1Files:
    """Facts in page-id order (a dump read in shards yields its pages shard by shard; the files must not
    depend on --shards or on the executor), each page's lead facts after its own; documents, the fetched
    ones and the lead ones, in id order (stable). The same lines as sorting the parsed records would give."""
    by_page: dict[int, list[tuple[int, bytes]]] = {}  # page id -> (line number, line)
    for number, line in enumerate(facts, start=1):
        by_page.setdefault(leading_fields(line, ("page_id",))["page_id"], []).append((number, line))
    pages = sorted(by_page)
    made, lead_documents = lead_facts(
        fact for page in pages if (fact := _with_lead_claims(by_page[page], source)) is not None
    )
    leads_of: dict[int, list[bytes]] = {}
    for fact in made:
        leads_of.setdefault(fact.page_id, []).append(json_line(fact).encode())
    fact_lines: list[bytes] = []
    for page in pages:
        fact_lines += [line for _, line in by_page[page]]
        fact_lines += leads_of.get(page, [])
    keyed = [(leading_fields(line, ("id",))["id"], line) for line in documents]
    keyed += [(document.id, json_line(document).encode()) for document in lead_documents]
    keyed.sort(key=lambda pair: pair[0])
    return Part1Files(fact_lines, [line for _, line in keyed], len(made))


def _with_lead_claims(lines: list[tuple[int, bytes]], source: str) -> Fact | None:
    """A page's first citation fact that carries lead claims (all of them carry the page's), or None."""
    for number, line in lines:
        if line.endswith(_NO_LEAD_CLAIMS):
            continue
        fact = decode(Fact, line, source, number)
        if isinstance(fact, Fact) and fact.source == "citation" and fact.lead_claims:
            return fact
    return None

