"""Records as JSON lines: the leading fields a join reads, the checkpoint line around a record, and the
Wikipedia build's two joins (keypoint documents, segment evidence) made on lines."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from irbgen.builds.wikipedia import cited_pages
from irbgen.errors import IrbgenError
from irbgen.irb.facts import AssembleFacts, SegmentEvidence, evidence, evidence_lines, evidence_spans
from irbgen.irb.grounding import KeypointDocument
from irbgen.irb.pairs import pair_lines, pair_spans, pairs, pairs_of_spans
from irbgen.irb.records import Grounding, Keypoint
from irbgen.pipeline.checkpoint import CheckpointStore, record_lines
from irbgen.pipeline.encoded import Encoded, leading_fields, unwrap
from irbgen.pipeline.line_index import id_lines, index_path
from irbgen.pipeline.runner import run_stage
from irbgen.pipeline.stage import StageContext
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
    assert leading_fields('{"id": "é"}'.encode(), ("id",)) == {"id": "é"}


def test_leading_fields_jump_to_a_field_only_where_it_cannot_be_another_ones() -> None:
    def read(value: dict, *names: str) -> dict:
        return leading_fields(json.dumps(value, ensure_ascii=False).encode(), names)

    assert read({"title": 'say "urls": [1]', "urls": ["u"]}, "urls") == {"urls": ["u"]}  # in a string
    assert read({"meta": {"urls": ["inner"]}, "urls": ["outer"]}, "urls") == {"urls": ["outer"]}
    assert read({"title": "ends in a backslash \\", "urls": ["u"]}, "urls") == {"urls": ["u"]}
    long = ["é" * 37 + str(number) for number in range(300)]  # far past the first window, cut mid-character
    assert read({"id": "x", "urls": long, "after": 1}, "urls", "id") == {"urls": long, "id": "x"}
    digits = int("7" * 600)  # a number the first window would cut short
    assert read({"text": "t", "n": digits, "z": 0}, "n") == {"n": digits}
    assert read({"text": "t", "n": digits}, "n") == {"n": digits}


def test_record_lines_cut_the_checkpoint_line_and_name_a_corrupt_one(tmp_path) -> None:
    store = CheckpointStore(tmp_path, "stage")
    with store:
        store.add('k"1', [{"id": "a", "text": 'quote " and }\n'}, {"id": "b"}])
    records = [json.loads(record) for record in store.record_lines()]
    assert records == [{"id": "a", "text": 'quote " and }\n'}, {"id": "b"}]
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


def test_cited_pages_are_each_url_once_in_first_use_order_from_keypoints_old_and_new() -> None:
    def cited(number: int, *names: str) -> list[Citation]:
        return [Citation(url=f"http://example.test/{name}", date=str(number)) for name in names]

    segments = [segment(number) for number in range(4)]
    for number, names in ((1, "ba"), (2, "ac"), (3, "ca")):
        segments[number].citations = cited(number, *names)
    kept = [segments[1], segments[3]]  # segments 0 and 2 made no keypoint
    new = [keypoint(int(s.id.split(":")[1]), [c.url for c in s.citations]) for s in kept]
    for made, source in zip(new, kept, strict=True):
        made.citations = source.citations
    older = [{k: v for k, v in json.loads(line(made)).items() if k != "citations"} for made in new]
    segment_lines = Encoded(Segment, lambda: map(line, segments), "segments")
    expected = [*cited(1, "b", "a"), *cited(3, "c")]  # a's date is its first use's; segment 2 is not used
    assert cited_pages(Encoded(Keypoint, lambda: map(line, new), "kp"), segment_lines) == expected
    written = Encoded(Keypoint, lambda: (json.dumps(record).encode() for record in older), "kp")
    assert cited_pages(written, segment_lines) == expected  # keypoints an earlier irbgen wrote


def checkpoint(run_dir, stage: str, records: list) -> Encoded:
    """RECORDS written as STAGE's finished checkpoint, one key each, as its `records()` would give them;
    reading the lines in this process fails the test (the workers read the file)."""
    store = CheckpointStore(run_dir, stage)
    with store:
        for record in records:
            store.add(record.key, [record.model_dump(mode="json")])
    unread = lambda: pytest.fail(f"the driver read {stage}'s lines")  # noqa: E731
    return Encoded(type(records[0]), unread, str(store.outputs_path), path=store.outputs_path)


def joined_by_driver(model, join, inputs: tuple[Encoded, ...]) -> Encoded:
    """What JOIN makes of the whole checkpoints of INPUTS, as the driver joins them (no spans)."""
    return Encoded(model, lambda: join(*(record_lines(encoded.path) for encoded in inputs)), "joined here")


def evidence_inputs(run_dir) -> tuple[Encoded, Encoded, Encoded]:
    """60 segments; a keypoint for two in three; two groundings for every other keypoint, one for some."""
    segments = [segment(number) for number in range(60)]
    keypoints = [keypoint(number, []) for number in range(60) if number % 3]
    groundings = [
        grounding(int(point.id.split(":")[1]), document, supported=index % 4 == 0)
        for index, point in enumerate(keypoints)
        for document in (["da", "db"] if index % 2 == 0 else ["dc"] if index % 5 == 0 else [])
    ]
    return (
        checkpoint(run_dir, "citing_segments", segments),
        checkpoint(run_dir, "keypoints", keypoints),
        checkpoint(run_dir, "grounding", groundings),
    )


@pytest.mark.parametrize("largest", [1, 200, 1 << 20])
def test_evidence_spans_join_shard_by_shard_into_the_whole_join(tmp_path, largest: int) -> None:
    inputs = evidence_inputs(tmp_path)
    paths = [encoded.path for encoded in inputs]
    whole = list(evidence_lines(*(record_lines(path) for path in paths)))
    cuts = evidence_spans(*paths, largest)
    assert cuts is not None and len(cuts) > 1
    sharded = [
        line
        for spans in cuts
        for line in evidence_lines(*(record_lines(span.path, span.start, span.end) for span in spans))
    ]
    assert sharded == whole and len(whole) == 40


def test_evidence_spans_leave_a_checkpoint_written_another_way_to_the_driver(tmp_path) -> None:
    inputs = evidence_inputs(tmp_path)
    groundings = inputs[2].path
    lines = groundings.read_text().splitlines(keepends=True)
    lines[1] = json.dumps(json.loads(lines[1]), indent=None, separators=(",", ":")) + "\n"
    groundings.write_text("".join(lines))
    assert evidence_spans(*(encoded.path for encoded in inputs), 200) is None


def inline_and_pooled(tmp_path, stage, model, join_lines, joined, inputs):
    """STAGE over the driver's join (JOIN_LINES of INPUTS, inline) and over JOINED (a pool of 2 that joins
    its shards itself), each in a run directory of its own: (inline result, pooled result)."""
    inline_dir, pool_dir = tmp_path / "inline", tmp_path / "pool"
    by_driver = joined_by_driver(model, join_lines, inputs(inline_dir))
    inline = run_stage(stage, by_driver, StageContext(run_dir=inline_dir))
    pooled = run_stage(stage, joined(*inputs(pool_dir)), StageContext(run_dir=pool_dir), processes=2)
    return inline, pooled


def test_a_pool_joins_segment_evidence_itself_and_makes_the_facts_the_driver_join_makes(tmp_path) -> None:
    inline_dir, pool_dir = tmp_path / "inline", tmp_path / "pool"
    made = (AssembleFacts(), SegmentEvidence, evidence_lines, evidence, evidence_inputs)
    inline, pooled = inline_and_pooled(tmp_path, *made)
    assert list(pooled.rows()) == list(inline.rows()) and len(list(inline.rows())) == 10
    assert list(pooled.rejects()) == list(inline.rejects())
    assert pooled.totals.inputs == inline.totals.inputs == 40
    assert (pool_dir / "rejects.jsonl").read_bytes() == (inline_dir / "rejects.jsonl").read_bytes()


def pair_inputs(run_dir) -> tuple[Encoded, Encoded]:
    """30 keypoints citing 1 to 3 of 8 URLs (URLs shared across keypoints); 6 of the URLs were fetched."""
    urls = [f"http://example.test/{letter}" for letter in "abcdefgh"]
    cited = [[urls[(number * step) % 8] for step in range(1, 2 + number % 3)] for number in range(30)]
    keypoints = [keypoint(number, urls) for number, urls in enumerate(cited)]
    documents = [document(url) for url in urls[:6]]
    return checkpoint(run_dir, "keypoints", keypoints), checkpoint(run_dir, "fetch_cited", documents)


@pytest.mark.parametrize("largest", [4, 800, 1 << 20])
def test_pair_spans_join_shard_by_shard_into_the_whole_join(tmp_path, largest: int) -> None:
    keypoints, documents = (encoded.path for encoded in pair_inputs(tmp_path))
    whole = list(pair_lines(record_lines(keypoints), record_lines(documents)))
    cuts = pair_spans(keypoints, documents, largest)
    assert cuts is not None and (len(cuts) > 1 or largest > 800)
    assert [line for spans in cuts for line in pairs_of_spans(*spans)] == whole and len(whole) > 30


def test_the_documents_index_follows_the_documents_file(tmp_path) -> None:
    keypoints, documents = (encoded.path for encoded in pair_inputs(tmp_path))
    cuts = pair_spans(keypoints, documents, 1 << 20)
    assert cuts is not None
    index = index_path(documents, "url")
    made = index.stat().st_mtime_ns
    assert pair_spans(keypoints, documents, 1 << 20) is not None and index.stat().st_mtime_ns == made
    changed = documents.read_bytes().replace(b"Text of", b"Page of")
    (tmp_path / "new.jsonl").write_bytes(changed)
    (tmp_path / "new.jsonl").replace(documents)  # a redone stage: another file
    with pytest.raises(IrbgenError, match="does not index"):
        list(pairs_of_spans(*cuts[0]))  # a shard cut before the change is refused, never read wrong
    again = pair_spans(keypoints, documents, 1 << 20)
    assert again is not None and b"Page of" in b"".join(pairs_of_spans(*again[0]))
    documents.write_text(documents.read_text() + '{"record": {"id": "dz", "url": "u"}, "key": "u"}\n')
    assert pair_spans(keypoints, documents, 1 << 20) is None  # a line written another way
    assert not index.exists()


class Pair(BaseModel):
    id: str


class PairIds:
    """A CPU stage over keypoint documents: the pair's ids."""

    name = "pair_ids"
    input_model = KeypointDocument
    output_model = Pair

    def key(self, record: KeypointDocument) -> str:
        return record.key

    def process(self, record: KeypointDocument, context: StageContext) -> list[Pair]:
        return [Pair(id=record.key)]


def test_a_pool_joins_keypoint_documents_itself_as_the_driver_would(tmp_path) -> None:
    inline, pooled = inline_and_pooled(tmp_path, PairIds(), KeypointDocument, pair_lines, pairs, pair_inputs)
    assert list(pooled.rows()) == list(inline.rows()) and len(list(inline.rows())) > 30
    assert pooled.totals.inputs == inline.totals.inputs


def test_id_lines_find_each_record_forward_and_only_a_records_own_id(tmp_path) -> None:
    store = CheckpointStore(tmp_path, "stage")
    records = [{"id": "a", "text": 'quotes the next: , "record": {"id": "b", '}, {"id": "b"}, {"id": "c"}]
    with store:
        for record in records:
            store.add(record["id"], [record])
    lines = store.outputs_path.read_bytes().splitlines(keepends=True)
    found = id_lines(store.outputs_path, ["a", "b", "c"])
    assert found is not None
    assert [store.outputs_path.read_bytes()[start:end] for start, end in found] == lines
    assert id_lines(store.outputs_path, ["b", "a"]) is None  # searched forward only
    assert id_lines(store.outputs_path, ["z"]) is None
