"""The grounding stage (rules on a hand-written document; llm end to end through a real loopback
server) and the pure fact assembly."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from irbgen.errors import BadInputError
from irbgen.irb.facts import SegmentEvidence, evidence_lines, fact_from
from irbgen.irb.grounding import CheckGrounding, GroundingVerdict, KeypointDocument
from irbgen.irb.records import Fact, Grounding, Keypoint
from irbgen.irb.rules.grounding import dates, entities, excerpt, numbers, split_sentences, support
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.testing import OpenAIStubServer
from irbgen.testing.stages import replies, run_llm_stage
from irbgen.web.records import WebDocument
from irbgen.wikipedia.records import Citation, Page, PageMeta, Segment

DOCUMENT_TEXT = """The Golden Gate Bridge was designed by Joseph Strauss and opened to vehicular traffic \
on May 28, 1937, after four years of construction. At the time, its main span of 4,200 feet (1,280 m) was \
the longest of any suspension bridge in the world.

The bridge carries about 112,000 vehicles a day. It is painted in a colour called International Orange.

Elsewhere in the city, the cable cars remain a popular attraction for tourists visiting Nob Hill."""

SUPPORTED = "The Golden Gate Bridge opened to traffic on 28 May 1937."
WRONG_NUMBER = "The Golden Gate Bridge carries about 150,000 vehicles a day."
ELSEWHERE = "Ada Lovelace published a translation of Menabrea's paper on the Analytical Engine in 1843."


def document(text: str = DOCUMENT_TEXT, **fields: Any) -> WebDocument:
    values: dict[str, Any] = {
        "id": "d0123456789abcdef",
        "url": "https://example.org/ggb",
        "final_url": "https://example.org/ggb",
        "status": 200,
        "title": "Golden Gate Bridge: a history",
        "text": text,
        "published": "2020-05-01",
        "language": "en",
        "fetched": "2025-09-30T00:00:00Z",
    }
    values.update(fields)
    return WebDocument(**values)


def keypoint(text: str, kid: str = "7:3:0") -> Keypoint:
    return Keypoint(
        id=kid, page_id=7, title="Golden Gate Bridge", text=text, segment=text,
        urls=["https://example.org/ggb"], method="rules",
    )  # fmt: skip


def pair(text: str, doc: WebDocument | None = None, kid: str = "7:3:0") -> KeypointDocument:
    return KeypointDocument(keypoint=keypoint(text, kid), document=doc or document())


def check(text: str, doc: WebDocument | None = None, **config: Any) -> Grounding:
    (out,) = CheckGrounding("rules", **config).process(pair(text, doc), StageContext(run_dir=Path(".")))
    assert isinstance(out, Grounding)
    return out


# --- normalisation helpers ---------------------------------------------------------------------------


def test_numbers_dates_entities_and_sentences():
    assert numbers("1,200 cars, 1200 bikes, 1.2 million people, 45% and three boats in 2024") == {
        "1200": "1,200", "1200000": "1.2 million", "45": "45", "3": "three", "2024": "2024",
    }  # fmt: skip
    found, blanked = dates("on 28 May 1937, May 28, 1937, 2024-11-30, in November 2024 and on 5 June")
    assert set(found) == {(1937, 5, 28), (2024, 11, 30), (2024, 11), (0, 6, 5)}
    assert "1937" not in blanked and "June" not in blanked
    assert list(entities("In 1937 the Golden Gate Bridge met the University of Oxford and NASA.")) == [
        ("golden", "gate", "bridge"), ("university", "of", "oxford"), ("nasa",),
    ]  # fmt: skip
    assert list(entities("Construction began in 1933.")) == []  # a capital at the start is the sentence's
    assert len(split_sentences(DOCUMENT_TEXT)) == 5
    assert len(split_sentences(" ".join(["word"] * 130))) == 3  # long runs are cut at 60 words


# --- rules backend -----------------------------------------------------------------------------------


def test_rules_supported_keypoint():
    out = check(SUPPORTED)
    assert out.supported and out.score == 1.0 and out.method == "rules"
    assert (out.keypoint_id, out.document_id) == ("7:3:0", "d0123456789abcdef")
    assert "score 1.00 >= threshold 0.60" in out.reason and "everything matched" in out.reason


def test_rules_wrong_number_is_not_supported():
    out = check(WRONG_NUMBER)
    assert not out.supported and out.score == 0.0
    assert "missing numbers: 150,000" in out.reason
    assert "missing words" not in out.reason  # the best window holds every word; only the number differs


def test_rules_document_about_something_else():
    out = check(ELSEWHERE)
    assert not out.supported and out.score < 0.2
    assert "missing numbers: 1843" in out.reason
    assert "missing entities: Ada Lovelace, Menabrea, Analytical Engine" in out.reason
    assert "missing words: ada, lovelace, published, translation" in out.reason


def test_rules_score_formula_and_threshold():
    # 5 content words (golden gate bridge design strauss) + 2 entities of weight 2; "Joseph Strauss"
    # found in full, "Golden Gate Bridge" too: score 1. Drop a word the document lacks ("Brooklyn"):
    partial = support("The Golden Gate Bridge was designed by Joseph Strauss in Brooklyn.", DOCUMENT_TEXT)
    # words: golden gate bridge designed joseph strauss brooklyn (7, 6 found); entities 3 (2 found) ->
    # (6 + 2 * 2) / (7 + 2 * 3) = 10 / 13
    assert partial.score == round(10 / 13, 4) and partial.missing_entities == ["Brooklyn"]
    brooklyn = "The Golden Gate Bridge was designed by Joseph Strauss in Brooklyn."
    assert check(brooklyn).supported is True
    assert check(brooklyn, threshold=0.8).supported is False


def test_rules_title_counts_and_other_languages_are_noted():
    doc = document("Die Brücke wurde am 28. Mai 1937 eröffnet.", title="Golden Gate Bridge", language="de")
    out = check(SUPPORTED, doc)
    assert not out.supported and "lexical rules only match English" in out.reason
    empty = check(SUPPORTED, document("   "))
    assert (empty.supported, empty.score, empty.reason) == (False, 0.0, "the document has no text")


def test_excerpt_keeps_the_best_sentences_within_budget():
    filler = " ".join(f"Paragraph {i} talks about the weather in the bay area." for i in range(200))
    text = f"{filler} The bridge carries about 112,000 vehicles a day. {filler}"
    cut = excerpt(text, WRONG_NUMBER, 400, title="Golden Gate Bridge")
    assert len(cut) <= 400 + 12 and "112,000 vehicles" in cut
    assert cut.startswith("[...] ") and cut.endswith(" [...]")
    assert excerpt("Short text.", WRONG_NUMBER, 400) == "Short text."


def test_stage_contract_and_config_errors():
    stage = CheckGrounding()
    record = pair(SUPPORTED)
    assert (stage.name, stage.input_model, stage.output_model) == ("grounding", KeypointDocument, Grounding)
    assert stage.key(record) == record.key == "7:3:0|d0123456789abcdef"
    assert isinstance(asyncio.run(stage.aprocess(record, StageContext(run_dir=Path("."))))[0], Grounding)
    with pytest.raises(BadInputError, match="choose from: llm, rules"):
        CheckGrounding("bm25")
    with pytest.raises(BadInputError, match="threshold"):
        CheckGrounding(threshold=1.5)
    with pytest.raises(TypeError, match="aprocess"):
        CheckGrounding("llm").process(record, StageContext(run_dir=Path(".")))


# --- llm backend through a real loopback server ------------------------------------------------------


def run_llm(server: OpenAIStubServer, record: KeypointDocument, **config: Any) -> Grounding | Reject:
    return run_llm_stage(CheckGrounding("llm", **config), record, server.base_url)


SUPPORTED_REPLY = json.dumps(
    {"label": "supported", "evidence": "opened to vehicular traffic on May 28, 1937"}
)


def test_llm_supported_with_quote_and_provenance():
    with OpenAIStubServer(replies(SUPPORTED_REPLY)) as server:
        out = run_llm(server, pair(SUPPORTED))
        user = server.bodies[0]["messages"][-1]["content"]
    assert isinstance(out, Grounding) and out.supported and out.score == 1.0
    assert out.reason == "supported: 'opened to vehicular traffic on May 28, 1937'"
    assert (out.method, out.model, out.prompt.name) == ("llm", "stub", "irb_grounding")
    assert (
        f"Statement: {SUPPORTED}" in user and "Published: 2020-05-01" in user and "112,000 vehicles" in user
    )


def test_verdict_labels_are_normalised():
    assert GroundingVerdict.model_validate_json('{"label": "Not Supported"}').label == "not_supported"
    assert GroundingVerdict.model_validate_json('{"label": " Contradicted"}').label == "contradicted"
    with pytest.raises(ValueError):
        GroundingVerdict.model_validate_json('{"label": "maybe"}')


def test_llm_contradicted_and_invented_quote():
    reply = json.dumps({"label": "contradicted", "evidence": "carries about 500 trucks"})
    with OpenAIStubServer(replies(reply)) as server:
        out = run_llm(server, pair(WRONG_NUMBER))
    assert isinstance(out, Grounding) and not out.supported and out.score == 0.0
    assert out.reason == "contradicted: 'carries about 500 trucks' (the quote is not in the document)"


def test_llm_long_document_is_cut_around_the_best_window():
    filler = " ".join(f"Paragraph {i} talks about the weather in the bay area." for i in range(400))
    doc = document(f"{filler} The bridge carries about 112,000 vehicles a day. {filler}")
    with OpenAIStubServer(replies(json.dumps({"label": "not_supported"}))) as server:
        out = run_llm(server, pair(WRONG_NUMBER, doc), max_document_tokens=200)
        user = server.bodies[0]["messages"][-1]["content"]
    assert isinstance(out, Grounding) and out.reason == "not_supported"
    assert "112,000 vehicles" in user and "[...]" in user and len(user) < 1200


def test_llm_malformed_json_then_repaired():
    with OpenAIStubServer(replies('{"label": "maybe"}', SUPPORTED_REPLY)) as server:
        out = run_llm(server, pair(SUPPORTED))
        assert server.requests == 2
    assert isinstance(out, Grounding) and out.supported


def test_llm_429_then_success():
    with OpenAIStubServer(replies(SUPPORTED_REPLY)) as server:
        server.inject("429", retry_after=0.2)
        start = time.perf_counter()
        out = run_llm(server, pair(SUPPORTED))
        assert server.requests == 2 and time.perf_counter() - start >= 0.2
    assert isinstance(out, Grounding) and out.supported


def test_llm_persistent_500_is_an_llm_error_reject():
    with OpenAIStubServer(replies(SUPPORTED_REPLY)) as server:
        server.inject("500", times=3)
        out = run_llm(server, pair(SUPPORTED))
    assert isinstance(out, Reject)
    assert (out.stage, out.reason, out.key) == ("grounding", "llm_error", "7:3:0|d0123456789abcdef")
    assert "http 500" in out.detail


def test_llm_skips_the_call_for_an_empty_document():
    with OpenAIStubServer(replies(SUPPORTED_REPLY)) as server:
        out = run_llm(server, pair(SUPPORTED, document("")))
        assert server.requests == 0
    assert isinstance(out, Grounding) and not out.supported and out.reason == "the document has no text"


# --- facts -------------------------------------------------------------------------------------------


def make_segment(index: int, page_id: int = 7) -> Segment:
    return Segment(
        id=f"{page_id}:1:{index}", page_id=page_id, title="Golden Gate Bridge", lead="...",
        section=["History"],
        sentence="The bridge opened in 1937 and carries 112,000 vehicles a day.", text=f"piece {index}",
        citations=[Citation(url=f"https://example.org/{index}")],
    )  # fmt: skip


def grounding(kid: str, doc: str, supported: bool) -> Grounding:
    return Grounding(
        keypoint_id=kid, document_id=doc, supported=supported, score=float(supported), method="rules"
    )


def assemble_facts(
    segments: list[Segment], keypoints: list[Keypoint], groundings: list[Grounding]
) -> tuple[list[Fact], list[Reject]]:
    """The facts stage's join and assembly, as the build runs them on the checkpoints' JSON lines."""
    def lines(records: list) -> list[bytes]:
        return [json.dumps(record.model_dump(mode="json"), ensure_ascii=False).encode() for record in records]

    made = [
        fact_from(SegmentEvidence.model_validate(json.loads(line)))
        for line in evidence_lines(lines(segments), lines(keypoints), lines(groundings))
    ]
    return [m for m in made if isinstance(m, Fact)], [m for m in made if isinstance(m, Reject)]


def test_assemble_facts():
    segments = [make_segment(0), make_segment(1), make_segment(2), make_segment(3)]
    keypoints = [keypoint("The bridge opened in 1937.", "7:1:0"), keypoint("It carries cars.", "7:1:1"),
                 keypoint("Unchecked.", "7:1:2"), keypoint("Orphan.", "9:9:9")]  # fmt: skip
    groundings = [
        grounding("7:1:0", "dB", True), grounding("7:1:0", "dA", True), grounding("7:1:0", "dC", False),
        grounding("7:1:0", "dA", True), grounding("7:1:1", "dA", False), grounding("7:1:1", "dB", False),
    ]  # fmt: skip
    page = Page(page_id=7, title="Golden Gate Bridge", wikitext="", created="2024-01-02T00:00:00Z",
                popularity=0.5, topics=["STEM.Engineering"], wikidata_id="Q44440")  # fmt: skip
    with_page = [segment.model_copy(update={"page": PageMeta.of(page)}) for segment in segments]
    facts, rejects = assemble_facts(with_page, keypoints, groundings)
    assert "9:9:9" not in {fact.id for fact in facts} | {reject.key for reject in rejects}  # no segment

    assert [fact.id for fact in facts] == ["7:1:0"]
    (fact,) = facts
    assert isinstance(fact, Fact)
    assert [(k.keypoint_id, k.text, k.documents) for k in fact.keypoints] == [
        ("7:1:0", "The bridge opened in 1937.", ["dA", "dB"])
    ]
    assert (fact.created, fact.popularity, fact.topics, fact.wikidata_id) == (
        "2024-01-02T00:00:00Z", 0.5, ["STEM.Engineering"], "Q44440",
    )  # fmt: skip
    assert fact.citations == segments[0].citations and fact.section == ["History"]
    assert [(r.stage, r.reason, r.key, r.detail) for r in rejects] == [
        ("facts", "not_grounded", "7:1:1", "none of 2 checked documents supports it"),
        ("facts", "not_grounded", "7:1:2", "no document was checked"),
    ]

    bare, _ = assemble_facts(segments[:1], keypoints[:1], groundings)  # no page metadata: left empty
    assert (bare[0].created, bare[0].topics, bare[0].wikidata_id) == (None, [], None)
