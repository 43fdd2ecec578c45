"""Records as JSON lines: the leading fields a join reads, the checkpoint line around a record, and the
Wikipedia build's two joins (keypoint documents, segment evidence) made on lines."""

from __future__ import annotations

import json

import pytest

from irbgen.builds.wikipedia import pair_lines
from irbgen.errors import IrbgenError
from irbgen.irb.facts import SegmentEvidence, evidence_lines
from irbgen.irb.grounding import KeypointDocument
from irbgen.irb.records import Grounding, Keypoint
from irbgen.pipeline.checkpoint import CheckpointStore
from irbgen.pipeline.encoded import Encoded, leading_fields, unwrap
from irbgen.web.records import WebDocument
from irbgen.wikipedia.records import Citation, Segment


def line(record) -> bytes:
    """The record's JSON as a checkpoint writes it."""
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False).encode()


def test_leading_fields_reads_only_as_far_as_it_needs_and_falls_back_on_other_shapes() -> None:
    record = json.dumps({"id": "a", "urls": ["u1", "u2"], "text": 'x"}{,', "nested": {"id": "no"}}).encode()
    assert leading_fields(record, ("id",)) == {"id": "a"}
    assert leading_fields(record, ("urls", "id")) == {"urls": ["u1", "u2"], "id": "a"}
    broken_after = record[:30]  # the fields before the cut are all a join reads
    assert leading_fields(broken_after, ("id",)) == {"id": "a"}
    spaced = b'{ "id" :"b" ,"url":  "http://x"}'
    assert leading_fields(spaced, ("url",)) == {"url": "http://x"}
    compact = json.dumps({"z": [1, {"url": "inner"}], "url": "outer"}, separators=(",", ":")).encode()
    assert leading_fields(compact, ("url",)) == {"url": "outer"}
    assert leading_fields(json.dumps({"other": 1}).encode(), ("url",)) == {"url": None}
    assert leading_fields("{\"id\": \"é\"}".encode(), ("id",)) == {"id": "é"}


def test_record_lines_cut_the_checkpoint_line_and_name_a_corrupt_one(tmp_path) -> None:
    store = CheckpointStore(tmp_path, "stage")
    with store:
        store.add("k\"1", [{"id": "a", "text": "quote \" and }\n"}, {"id": "b"}])
    records = [json.loads(record) for record in store.record_lines()]
    assert records == [{"id": "a", "text": "quote \" and }\n"}, {"id": "b"}]
    assert unwrap(b'{"key": "k", "record": {"id": 1}}\n') == b'{"id": 1}'
    assert unwrap(b'{"record": {"id": 1}, "key": "k"}\n') is None
    path = store.outputs_path
    path.write_text(path.read_text() + '{"record": {"id": "c"}, "key": "k2"}\n{"key": "k3", "record": \n')
    with pytest.raises(IrbgenError, match=r"outputs.jsonl:4: corrupt checkpoint line"):
        assert [json.loads(record)["id"] for record in store.record_lines()][:3] == ["a", "b", "c"]
    encoded = Encoded(Keypoint, lambda: iter([b'{"id": "x", "page_id": }']), "made up")
    with pytest.raises(IrbgenError, match=r"made up:1: corrupt record"):
        list(encoded)


def segment(number: int) -> Segment:
    return Segment(
        id=f"7:{number}:0", page_id=7, title="Page", lead="Lead.", sentence=f"S{number}.", text=f"S{number}.",
        citations=[Citation(url=f"http://example.test/{number}")],
    )  # fmt: skip


def keypoint(number: int, urls: list[str]) -> Keypoint:
    return Keypoint(
        id=f"7:{number}:0", page_id=7, title="Page", text=f"K{number}.", segment=f"S{number}.", urls=urls,
        method="rules",
    )  # fmt: skip


def grounding(number: int, document: str, supported: bool) -> Grounding:
    return Grounding(
        keypoint_id=f"7:{number}:0", document_id=document, supported=supported, score=0.5, method="rules"
    )


def document(url: str) -> WebDocument:
    return WebDocument(
        id="d" + url[-1], url=url, final_url=url, status=200, text="Text of " + url, fetched="2020-01-01"
    )


def test_segment_evidence_joins_each_segment_with_a_keypoint_once_in_segment_order() -> None:
    segments = [segment(0), segment(1), segment(2), segment(1)]  # 1 repeats; 0 has no keypoint
    keypoints = [keypoint(2, []), keypoint(1, [])]
    groundings = [grounding(1, "da", True), grounding(2, "db", False), grounding(1, "dc", False)]
    joined = [
        SegmentEvidence.model_validate(json.loads(record))
        for record in evidence_lines(map(line, segments), map(line, keypoints), map(line, groundings))
    ]
    assert [record.segment.id for record in joined] == ["7:1:0", "7:2:0"]
    assert joined[0] == SegmentEvidence(
        segment=segments[1], keypoint=keypoints[1], groundings=[groundings[0], groundings[2]]
    )
    assert joined[1].groundings == [groundings[1]]


def test_keypoint_documents_pair_each_keypoint_with_its_fetched_cited_pages_in_url_order() -> None:
    urls = ["http://example.test/a", "http://example.test/b", "http://example.test/c"]
    keypoints = [keypoint(0, [urls[2], urls[0]]), keypoint(1, [urls[1]])]
    documents = [document(urls[0]), document(urls[2])]  # b was not fetched
    joined = [
        KeypointDocument.model_validate(json.loads(record))
        for record in pair_lines(map(line, keypoints), map(line, documents))
    ]
    assert [(pair.keypoint.id, pair.document.url) for pair in joined] == [
        ("7:0:0", urls[2]),
        ("7:0:0", urls[0]),
    ]
    assert joined[0].document == documents[1]
