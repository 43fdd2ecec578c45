"""facts.jsonl and documents.jsonl written from part 1's record lines give the bytes that parsing every
record, sorting and adding the lead facts gives (the way the build wrote them before, kept here as the
reference), while parsing at most the facts that may carry lead claims."""

from __future__ import annotations

from irbgen.io import json_line
from irbgen.irb import part1_files as module
from irbgen.irb.leads import lead_facts
from irbgen.irb.part1_files import part1_files
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


def test_the_files_from_lines_equal_the_files_from_parsed_records(monkeypatch) -> None:
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
    files = part1_files(
        [json_line(f).encode() for f in facts], [json_line(d).encode() for d in documents], "facts.jsonl"
    )
    want_facts, want_documents = reference(facts, documents)
    assert [line.decode() for line in files.facts] == want_facts
    assert [line.decode() for line in files.documents] == want_documents
    assert files.lead_facts == len(want_facts) - len(facts) == 3
    assert sorted(parsed) == [1, 3]  # one fact a page with claims; the claimless ones are not parsed
    kinds = [(f.page_id, f.source) for f in (decode(Fact, line, "facts", 1) for line in files.facts)]
    pages = [(7, "citation"), (12, "citation"), (12, "citation"), (12, "lead"), (12, "lead")]
    assert kinds == [*pages, (344, "citation"), (344, "citation"), (344, "lead")]


def test_a_fact_written_another_way_is_parsed_and_gives_the_same_files() -> None:
    facts = [fact("5:1:0", "Algeria", ALGIERS), fact("5:2:0", "Algeria", ALGIERS)]
    spaced = [line.replace(b'": ', b'":  ') for line in (json_line(f).encode() for f in facts)]
    files = part1_files(spaced, [], "facts.jsonl")
    want_facts, want_documents = reference(facts, [])
    assert len(files.facts) == 4 and [line.decode() for line in files.facts[2:]] == want_facts[2:]  # leads
    assert files.facts[:2] == spaced and [d.decode() for d in files.documents] == want_documents
