"""A CPU stage may make a chunk's results together (`process_many`): the runner hands it chunks, inline
and in worker-written shards, and the checkpoint is the one `process` alone writes. The keypoint stage
uses it to parse a chunk's texts in one spaCy batch, with the same keypoints and rejects."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from irbgen.irb import keypoints
from irbgen.irb.keypoints import MakeKeypoints
from irbgen.pipeline.runner import INLINE_CHUNK, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.wikipedia.dumps import read_dump
from irbgen.wikipedia.records import Page, Segment
from irbgen.wikipedia.stages import CitingSegments
from tests.test_pipeline import SplitWords, Text, Word, context, rows, texts, without_wall

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
DUMP = REALDATA / "enwiki-2016-pages-articles-106.xml.bz2"


class SplitWordsMany(SplitWords):
    """SplitWords that makes a chunk's results in one call, noting each chunk's size in a file."""

    name = "split_many"

    def process_many(self, records: Sequence[Text], context: StageContext) -> list[Iterator[Word | Reject]]:
        with open(context.options["chunks"], "a", encoding="utf-8") as log:
            log.write(f"{len(records)}\n")
        made = []
        for record in records:
            try:
                made.append(iter(list(self.process(record, context))))
            except ValueError:  # its results raise it again, where the runner makes it a reject
                made.append(self.process(record, context))
        return made


def test_chunks_inline_and_in_shards_write_what_process_writes(tmp_path: Path) -> None:
    records = texts(80) + [Text(id="t005", text="a repeated key")]
    options = {"fail_on": {"t010"}}
    plain = run_stage(SplitWords(), records, context(tmp_path / "plain", **options))
    for processes in (1, 2):
        chunks = tmp_path / f"chunks{processes}"
        many = run_stage(
            SplitWordsMany(),
            records,
            context(tmp_path / f"many{processes}", chunks=str(chunks), **options),
            processes=processes,
            chunk_size=8,
        )
        assert rows(many) == rows(plain)
        assert [r.model_dump(exclude={"stage"}) for r in many.rejects()] == [
            r.model_dump(exclude={"stage"}) for r in plain.rejects()
        ]
        assert any(r.reason == "error:ValueError" and r.key == "t010" for r in many.rejects())
        assert any(r.reason == "duplicate_key" and r.key == "t005" for r in many.rejects())
        assert without_wall(many.stats) | {"stage": ""} == without_wall(plain.stats) | {"stage": ""}
        sizes = [int(size) for size in chunks.read_text().split()]
        assert sum(sizes) == 80  # every record once; the repeated key never reaches the stage
        assert max(sizes) == (INLINE_CHUNK if processes == 1 else 8)


def _segments(pages: int) -> list[Segment]:
    """Citing segments of the first PAGES tuning-half (even id) articles of the realdata dump."""
    found: list[Segment] = []
    chosen = [page for page in read_dump(DUMP) if isinstance(page, Page) and page.page_id % 2 == 0]
    for page in chosen[:pages]:
        found += [r for r in CitingSegments().process(page) if isinstance(r, Segment)]
    return found


@pytest.mark.skipif(not DUMP.exists(), reason=f"the real dump is not at {DUMP}")
def test_keypoints_of_a_chunk_are_those_made_one_by_one() -> None:
    segments = _segments(3)[:96]
    assert len(segments) == 96
    alone = [[r.model_dump() for r in MakeKeypoints().process(s, None)] for s in segments]  # type: ignore[arg-type]
    keypoints.PARSES.clear()
    stage = MakeKeypoints()
    together = [
        [r.model_dump() for r in results]
        for start in range(0, len(segments), 32)
        for results in stage.process_many(segments[start : start + 32], None)  # type: ignore[arg-type]
    ]
    assert together == alone
    assert keypoints.PARSES.misses == 0  # every parse was made in a batch
    kinds = {("reject" if "reason" in made[0] else "keypoint") for made in alone}
    assert kinds == {"reject", "keypoint"}
    changed = [s for s, made in zip(segments, alone, strict=True) if made[0].get("text", s.text) != s.text]
    assert changed  # keypoints whose text the rules changed, so the stage had texts to parse itself
