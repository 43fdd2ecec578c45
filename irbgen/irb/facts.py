"""Facts: keypoints that at least one cited document supports, linked to every document that does.

A pure function over the records of the earlier stages, so it runs the same on a laptop or after a
distributed build. A keypoint no document supports becomes a reject "not_grounded" (stage "facts").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from irbgen.irb.records import Fact, GroundedKeypoint, Grounding, Keypoint
from irbgen.records import Reject
from irbgen.wikipedia.records import Page, Segment

STAGE = "facts"


def assemble_facts(
    segments: Iterable[Segment],
    keypoints: Iterable[Keypoint],
    groundings: Iterable[Grounding],
    pages: Mapping[int, Page] | None = None,
) -> tuple[list[Fact], list[Reject]]:
    """(facts, rejects) in segment order; created, popularity, topics and wikidata_id come from `pages`."""
    by_segment = {keypoint.id: keypoint for keypoint in keypoints}
    checked: dict[str, set[str]] = {}
    supporting: dict[str, set[str]] = {}
    for grounding in groundings:
        checked.setdefault(grounding.keypoint_id, set()).add(grounding.document_id)
        if grounding.supported:
            supporting.setdefault(grounding.keypoint_id, set()).add(grounding.document_id)

    facts: list[Fact] = []
    rejects: list[Reject] = []
    seen: set[str] = set()
    for segment in segments:
        keypoint = by_segment.get(segment.id)
        if keypoint is None or segment.id in seen:
            continue  # no keypoint: the keypoint stage already wrote its reject
        seen.add(segment.id)
        documents = sorted(supporting.get(keypoint.id, ()))
        if not documents:
            tried = len(checked.get(keypoint.id, ()))
            detail = f"none of {tried} checked documents supports it" if tried else "no document was checked"
            rejects.append(Reject(stage=STAGE, reason="not_grounded", key=keypoint.id, detail=detail))
            continue
        page = (pages or {}).get(segment.page_id)
        grounded = GroundedKeypoint(keypoint_id=keypoint.id, text=keypoint.text, documents=documents)
        facts.append(
            Fact(
                id=segment.id,
                page_id=segment.page_id,
                title=segment.title,
                section=list(segment.section),
                sentence=segment.sentence,
                keypoints=[grounded],
                citations=list(segment.citations),
                created=page.created if page is not None else None,
                popularity=page.popularity if page is not None else None,
                topics=list(page.topics) if page is not None else [],
                wikidata_id=page.wikidata_id if page is not None else None,
                categories=list(page.categories) if page is not None else [],
                revised=page.revision_timestamp if page is not None else None,
            )
        )
    for keypoint_id in sorted(set(by_segment) - seen):
        detail = "its segment is not among the segments given"
        rejects.append(Reject(stage=STAGE, reason="missing_segment", key=keypoint_id, detail=detail))
    return facts, rejects
