"""facts.jsonl and documents.jsonl written from part 1's record lines give the bytes that parsing every
record, sorting and adding the lead facts gives (the way the build wrote them before, kept here as the
reference), while parsing at most the facts that may carry lead claims, and sorting through runs on disk
when the lines do not fit the budget."""

from __future__ import annotations

import pytest

from irbgen.io import json_line
from irbgen.irb import part1_files as module
from irbgen.irb.leads import lead_facts
from irbgen.irb.part1_files import Part1Counts, write_part1_files
from irbgen.irb.records import Fact, GroundedKeypoint
from irbgen.pipeline.encoded import decode
from irbgen.web.records import WebDocument
from irbgen.wikipedia.records import LeadClaim

DWAN = [LeadClaim(kind="born", keypoint="Allan Dwan was born on 3 April 1885.", evidence="Allan Dwan (1885)")]
ALGIERS = [
    LeadClaim(kind="capital", keypoint="The capital of Algeria is Algiers.", evidence="Capital: Algiers"),
    LeadClaim(kind="definite", keypoint="Algeria is the largest country in Africa.", evidence="Algeria is …"),
]


def fact(fact_id: str, title: str, claims: list[LeadClaim] | None = None) -> Fact:
    keypoint = GroundedKeypoint(keypoint_id=fact_id, text=f"{title} did this.", documents=[f"d{fact_id}"])
    return Fact(
        id=fact_id,
        page_id=int(fact_id.split(":")[0]),
        title=title,
        sentence=f"{title} did this — «quoted».",
        keypoints=[keypoint],
        citations=[],
        revised="2016-04-30T10:00:00Z",
        lead_claims=claims or [],
    )


def document(url: str) -> WebDocument:
    return WebDocument(id="d" + url[-6:], url=url, final_url=url, status=200, text=f"Of {url}", fetched="")


def reference(facts: list[Fact], documents: list[WebDocument]) -> tuple[list[str], list[str]]:
    """Every record parsed: facts sorted by page, each page's leads last, documents by id."""
    ordered = sorted(facts, key=lambda f: f.page_id)
    leads, lead_documents = lead_facts(ordered)
    ordered = sorted(ordered + leads, key=lambda f: f.page_id)
    documents = sorted([*documents, *lead_documents], key=lambda d: d.id)
    return [json_line(f) for f in ordered], [json_line(d) for d in documents]


def written(tmp_path, facts: list[bytes], documents: list[bytes], budget: int = 1 << 20):
    """The two files' lines, and the counts, as write_part1_files writes them."""
    paths = (tmp_path / "facts.jsonl", tmp_path / "documents.jsonl")
    counts = write_part1_files(facts, documents, *paths, "facts.jsonl", budget)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["documents.jsonl", "facts.jsonl"]  # no scratch
    fact_lines, document_lines = (path.read_bytes().splitlines() for path in paths)
    assert (counts.facts, counts.documents) == (len(fact_lines), len(document_lines))
    return fact_lines, document_lines, counts


@pytest.mark.parametrize("budget", [1 << 20, 1, 700])  # all held; every line a run; a few lines a run
def test_the_files_from_lines_equal_the_files_from_parsed_records(tmp_path, monkeypatch, budget) -> None:
    facts = [
        fact("344:17:0", "Allan Dwan", DWAN),
        fact("12:3:0", "Algeria"),  # a page whose first fact carries no claims ...
        fact("12:4:1", "Algeria", ALGIERS),  # ... and a later one does (the reference takes it)
        fact("344:2:0", "Allan Dwan", DWAN),  # the page's facts stay in their order, leads after them
        fact("7:1:0", "Nobody"),
    ]
    documents = [document("https://b.example/zz0003"), document("https://a.example/aa0001")]
    parsed: list[int] = []
    real_decode = module.decode

    def counting(model, line, source, number):  # type: ignore[no-untyped-def]
        parsed.append(number)
        return real_decode(model, line, source, number)

    monkeypatch.setattr(module, "decode", counting)
    fact_lines, document_lines, counts = written(
        tmp_path, [json_line(f).encode() for f in facts], [json_line(d).encode() for d in documents], budget
    )
    want_facts, want_documents = reference(facts, documents)
    assert [line.decode() for line in fact_lines] == want_facts
    assert [line.decode() for line in document_lines] == want_documents
    assert counts.lead_facts == len(want_facts) - len(facts) == 3
    assert sorted(parsed) == [1, 3]  # one fact a page with claims; the claimless ones are not parsed
    kinds = [(f.page_id, f.source) for f in (decode(Fact, line, "facts", 1) for line in fact_lines)]
    pages = [(7, "citation"), (12, "citation"), (12, "citation"), (12, "lead"), (12, "lead")]
    assert kinds == [*pages, (344, "citation"), (344, "citation"), (344, "lead")]


def test_a_fact_written_another_way_is_parsed_and_gives_the_same_files(tmp_path) -> None:
    facts = [fact("5:1:0", "Algeria", ALGIERS), fact("5:2:0", "Algeria", ALGIERS)]
    spaced = [line.replace(b'": ', b'":  ') for line in (json_line(f).encode() for f in facts)]
    fact_lines, document_lines, _ = written(tmp_path, spaced, [])
    want_facts, want_documents = reference(facts, [])
    assert len(fact_lines) == 4 and [line.decode() for line in fact_lines[2:]] == want_facts[2:]  # leads
    assert fact_lines[:2] == spaced and [d.decode() for d in document_lines] == want_documents


@pytest.mark.parametrize("budget", [1 << 20, 1])
def test_a_lead_document_two_pages_make_is_written_once_as_the_first_page_made_it(tmp_path, budget) -> None:
    first, second = fact("9:1:0", "Algeria", ALGIERS), fact("4:1:0", "Algeria", ALGIERS)  # a repeated title
    second = second.model_copy(update={"revised": "2016-05-30T10:00:00Z"})  # the lead's date differs
    documents = [document("https://a.example/w00001"), document("https://c.example/zz0003")]
    lines = [json_line(f).encode() for f in (first, second)]
    fact_lines, document_lines, counts = written(tmp_path, lines, [json_line(d).encode() for d in documents])
    want_facts, want_documents = reference([first, second], documents)
    assert [line.decode() for line in fact_lines] == want_facts
    assert [line.decode() for line in document_lines] == want_documents
    assert counts == Part1Counts(facts=6, documents=4, lead_facts=4)
    leads = [line for line in document_lines if b"(Wikipedia lead)" in line]
    assert len(leads) == 2 and all(b'"published": "2016-05-30"' in line for line in leads)  # page 4's
