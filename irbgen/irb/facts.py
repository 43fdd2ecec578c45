"""Facts: keypoints that at least one cited document supports, linked to every document that does.

`evidence` joins each segment with its keypoint and the groundings of that keypoint (on the checkpoints'
JSON lines, so that the records are parsed where the stage runs); the `AssembleFacts`
stage turns one such record into a Fact, or a reject "not_grounded" when no document supports it. Page
metadata (creation date, popularity, topics, Wikidata id) comes with the segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from irbgen.irb.records import Fact, GroundedKeypoint, Grounding, Keypoint
from irbgen.pipeline.encoded import Encoded, Lines, leading_fields
from irbgen.pipeline.stage import StageContext
from irbgen.records import Record, Reject
from irbgen.wikipedia.records import Segment

STAGE = "facts"


class SegmentEvidence(Record):
    """One segment with its keypoint and every grounding checked for that keypoint."""

    segment: Segment
    keypoint: Keypoint
    groundings: list[Grounding]

    @property
    def key(self) -> str:
        return self.keypoint.id


def evidence(segments: Lines, keypoints: Lines, groundings: Lines) -> Encoded:
    """The SegmentEvidence records, as JSON lines joined from the three checkpoints' record lines (each
    function gives them anew for each pass); see `evidence_lines`."""
    return Encoded(
        SegmentEvidence, lambda: evidence_lines(segments(), keypoints(), groundings()), "segment evidence"
    )


def evidence_lines(
    segments: Iterable[bytes], keypoints: Iterable[bytes], groundings: Iterable[bytes]
) -> Iterator[bytes]:
    """In segment order, each segment that has a keypoint, once, with that keypoint and its groundings;
    segments without one were rejected. Joined on the records' leading ids, never parsing a record whole."""
    by_segment = {leading_fields(keypoint, ("id",))["id"]: keypoint for keypoint in keypoints}
    checked: dict[str, list[bytes]] = {}
    for grounding in groundings:
        checked.setdefault(leading_fields(grounding, ("keypoint_id",))["keypoint_id"], []).append(grounding)
    seen: set[str] = set()
    for segment in segments:
        segment_id = leading_fields(segment, ("id",))["id"]
        keypoint = by_segment.get(segment_id)
        if keypoint is None or segment_id in seen:
            continue
        seen.add(segment_id)
        found = b", ".join(checked.get(segment_id, []))
        yield b'{"segment": ' + segment + b', "keypoint": ' + keypoint + b', "groundings": [' + found + b"]}"


def fact_from(record: SegmentEvidence) -> Fact | Reject:
    """The fact of one grounded keypoint, or a reject saying how many documents were checked."""
    segment, keypoint = record.segment, record.keypoint
    documents = sorted({grounding.document_id for grounding in record.groundings if grounding.supported})
    if not documents:
        tried = len({grounding.document_id for grounding in record.groundings})
        detail = f"none of {tried} checked documents supports it" if tried else "no document was checked"
        return Reject(stage=STAGE, reason="not_grounded", key=keypoint.id, detail=detail)
    page = segment.page
    return Fact(
        id=segment.id,
        page_id=segment.page_id,
        title=segment.title,
        section=list(segment.section),
        sentence=segment.sentence,
        keypoints=[GroundedKeypoint(keypoint_id=keypoint.id, text=keypoint.text, documents=documents)],
        citations=list(segment.citations),
        created=page.created if page is not None else None,
        popularity=page.popularity if page is not None else None,
        topics=list(page.topics) if page is not None else [],
        wikidata_id=page.wikidata_id if page is not None else None,
        categories=list(page.categories) if page is not None else [],
        revised=page.revision_timestamp if page is not None else None,
        links=dict(segment.links),
        page_noun=segment.page_noun,
        lead_claims=list(segment.lead_claims),
    )


class AssembleFacts:
    """SegmentEvidence -> Fact, or a reject "not_grounded"."""

    name = STAGE
    input_model = SegmentEvidence
    output_model = Fact

    def key(self, record: SegmentEvidence) -> str:
        """The keypoint id (the segment id)."""
        return record.key

    def process(self, record: SegmentEvidence, context: StageContext) -> list[Fact | Reject]:
        """The fact, or why there is none."""
        return [fact_from(record)]
