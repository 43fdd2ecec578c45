"""Keypoint documents: each keypoint with each of its cited pages that was fetched, the grounding stage's
inputs.

They are joined on the two checkpoints' JSON lines, never parsing a record whole (`pair_lines`). When the
workers can read the checkpoints, each joins its own shard of keypoints (`pairs_of_spans`), looking its
documents up in an index of the documents' checkpoint by URL (irbgen.pipeline.line_index) that the driver
makes once: the driver then reads no keypoint and holds no document.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

from irbgen.irb.grounding import KeypointDocument
from irbgen.pipeline.encoded import Encoded, Joinable, leading_fields
from irbgen.pipeline.line_index import LineIndex, build_index
from irbgen.pipeline.shards import Span, spans

_BY = "url"  # the field the documents are looked up by


def pairs(keypoints: Encoded, documents: Encoded) -> Encoded:
    """The KeypointDocument records as JSON lines (see `pair_lines`), or joined by the workers."""
    joinable = None
    if keypoints.path is not None and documents.path is not None:
        joinable = Joinable(functools.partial(pair_spans, keypoints.path, documents.path), pairs_of_spans)
    return Encoded(
        KeypointDocument,
        lambda: pair_lines(keypoints.lines(), documents.lines()),
        "keypoint documents",
        joinable=joinable,
    )


def pair_lines(keypoints: Iterable[bytes], documents: Iterable[bytes]) -> Iterator[bytes]:
    """In keypoint order, each keypoint with each fetched document of its cited URLs, in URL order; joined
    on the records' leading fields, never parsing a record whole."""
    by_url = {leading_fields(document, (_BY,))[_BY]: document for document in documents}
    for keypoint in keypoints:
        for url in leading_fields(keypoint, ("urls",))["urls"]:
            if url in by_url:
                yield _pair(keypoint, by_url[url])


def pair_spans(keypoints: Path, documents: Path, largest: int) -> list[tuple[Span, Span]] | None:
    """Each shard's span of the keypoints with the whole documents' checkpoint, once the documents are
    indexed by URL; None when the documents' lines are not as this irbgen writes them.

    A shard's keypoints are about a quarter of LARGEST bytes: each comes with its documents, so a shard's
    pairs are about LARGEST bytes.
    """
    whole = Span(documents, 0, documents.stat().st_size, 0)
    if not build_index(whole, _BY):
        return None
    return [(span, whole) for span in spans(keypoints, max(1, largest // 4))]


def pairs_of_spans(keypoints: Span, documents: Span) -> Iterator[bytes]:
    """The pair lines of one shard of keypoints, their documents looked up in the index."""
    with LineIndex(documents, _BY) as by_url:
        for keypoint in keypoints.lines():
            for url in leading_fields(keypoint, ("urls",))["urls"]:
                document = by_url.get(url)
                if document is not None:
                    yield _pair(keypoint, document)


def _pair(keypoint: bytes, document: bytes) -> bytes:
    return b'{"keypoint": ' + keypoint + b', "document": ' + document + b"}"
