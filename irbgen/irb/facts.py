"""Facts: keypoints that at least one cited document supports, linked to every document that does.

`evidence` joins each segment with its keypoint and the groundings of that keypoint (on the checkpoints'
JSON lines, so that the records are parsed where the stage runs); the `AssembleFacts`
stage turns one such record into a Fact, or a reject "not_grounded" when no document supports it. Page
metadata (creation date, popularity, topics, Wikidata id) comes with the segment.
"""

from __future__ import annotations

import functools
import json
import mmap
import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from pathlib import Path

from irbgen.irb.records import Fact, GroundedKeypoint, Grounding, Keypoint
from irbgen.pipeline.encoded import CHECKPOINT_LINE, JSON_STRING, Encoded, Joinable, leading_fields
from irbgen.pipeline.line_index import id_lines
from irbgen.pipeline.shards import Span, line_count, mapped, spans
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


def evidence(segments: Encoded, keypoints: Encoded, groundings: Encoded) -> Encoded:
    """The SegmentEvidence records, as JSON lines joined from the three checkpoints' record lines (see
    `evidence_lines`); workers that can read the checkpoints join their shard's lines themselves, from the
    spans `evidence_spans` cuts."""
    paths = (segments.path, keypoints.path, groundings.path)
    joinable = None
    if not any(path is None for path in paths):
        joinable = Joinable(functools.partial(evidence_spans, *paths), evidence_of_spans)
    return Encoded(
        SegmentEvidence,
        lambda: evidence_lines(segments.lines(), keypoints.lines(), groundings.lines()),
        "segment evidence",
        joinable=joinable,
    )


def evidence_of_spans(segments: Span, keypoints: Span, groundings: Span) -> Iterator[bytes]:
    """The evidence lines of one shard, joined from its spans of the three checkpoints."""
    return evidence_lines(segments.lines(), keypoints.lines(), groundings.lines())


def evidence_spans(
    segments: Path, keypoints: Path, groundings: Path, largest: int
) -> list[tuple[Span, Span, Span]] | None:
    """Spans of the three checkpoints that `evidence_lines` joins shard by shard into what it makes of the
    whole files; None when a file is not as this irbgen writes it.

    The keypoints are cut about LARGEST bytes a shard. The three stages wrote their records in one order
    (segments, their keypoints, the keypoints' groundings), so a shard's groundings start at the first one
    of a keypoint at or after the shard's first keypoint, and its segments at that keypoint's segment.
    """
    cuts = list(spans(keypoints, largest))
    with mapped(keypoints) as keypoint_view, mapped(groundings) as grounding_view:
        written = _KEYPOINT.findall(keypoint_view)  # each keypoint's id as written (JSON text), in order
        ordinal = dict(zip(written, range(len(written)), strict=True))
        if len(ordinal) != sum(span.count for span in cuts):
            return None
        numbers = list(map(ordinal.get, _GROUNDING.findall(grounding_view)))  # each grounding's keypoint's
        if len(numbers) != line_count(grounding_view) or None in numbers or numbers != sorted(numbers):
            return None
        firsts = [bisect_left(numbers, first) for first in _firsts(cuts)]  # each shard's first grounding
        grounding_starts = [*_line_starts(grounding_view, firsts), len(grounding_view)]
        first_ids = [_field(_KEYPOINT.match(keypoint_view, span.start)) for span in cuts]
    segment_starts = _segment_starts(segments, first_ids)
    if segment_starts is None:
        return None
    return [
        (
            Span(segments, segment_starts[number], segment_starts[number + 1], 0),
            cut,
            Span(groundings, grounding_starts[number], grounding_starts[number + 1], 0),
        )
        for number, cut in enumerate(cuts)
    ]


def _firsts(cuts: list[Span]) -> Iterator[int]:
    """The ordinal of each span's first line."""
    first = 0
    for span in cuts:
        yield first
        first += span.count


def _line_starts(view: mmap.mmap | bytes, numbers: list[int]) -> list[int]:
    """Where the lines NUMBERS (ascending, from 0; the line count for the end) of VIEW start."""
    starts, position, line = [], 0, 0
    for number in numbers:
        while line < number:
            end = view.find(b"\n", position)
            position, line = len(view) if end < 0 else end + 1, line + 1
        starts.append(position)
    return starts


def _segment_starts(segments: Path, first_ids: list[str]) -> list[int] | None:
    """Where, in the segments' checkpoint, each shard's segments start (the first shard's at 0), and its
    size last: at the segment of each shard's first keypoint."""
    found = id_lines(segments, first_ids[1:])
    if found is None:
        return None
    return [0, *(start for start, _ in found), segments.stat().st_size]


# How the checkpoint starts a keypoint's and a grounding's line. Inside a record the quotes of such text
# would be escaped, so the patterns match only where a line starts (unanchored, they are found faster).
_KEYPOINT = re.compile(CHECKPOINT_LINE + rb'\{"id": (' + JSON_STRING + rb")")
_GROUNDING = re.compile(CHECKPOINT_LINE + rb'\{"keypoint_id": (' + JSON_STRING + rb")")


def _field(found: re.Match[bytes] | None) -> str:
    """The JSON string a pattern above found."""
    assert found is not None
    raw = found[1]
    return json.loads(raw) if b"\\" in raw else raw[1:-1].decode("utf-8")


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
