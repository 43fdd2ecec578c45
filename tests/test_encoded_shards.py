"""A sharded stage over an earlier stage's records: its workers get the checkpoint lines and decode them.

The driver never parses those records; what the stage writes is what it writes inline, including the
keys that repeat within a shard, across shards and after a resume.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from irbgen.errors import IrbgenError
from irbgen.pipeline import shards as sharding
from irbgen.pipeline.checkpoint import CheckpointStore
from irbgen.pipeline.encoded import Encoded
from irbgen.pipeline.runner import StageResult, run_stage
from irbgen.pipeline.shards import Shard
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from tests.test_pipeline import SplitWords, StopRun, Word, context, rows, texts, without_wall


class Shout:
    """CPU stage over words: the word in capitals; a word named in `reject` is rejected."""

    name = "shout"
    input_model = Word
    output_model = Word

    def key(self, record: Word) -> str:
        return record.id

    def process(self, record: Word, context: StageContext) -> Iterator[Word | Reject]:
        options = context.options
        if "log" in options:
            with open(options["log"], "a", encoding="utf-8") as log:
                log.write(record.id + "\n")
        if record.id in options.get("stop_on", ()):
            raise StopRun("a fatal stage error")
        if record.word in options.get("reject", ()):
            yield Reject(stage=self.name, reason="rejected_word", key=record.id)
            return
        yield Word(id=record.id, word=record.word.upper())


class ShoutOncePerWord(Shout):
    """Keyed by the word itself, so most keys repeat: within a shard and across shards."""

    name = "shout_once"

    def key(self, record: Word) -> str:
        return record.word


def words(run_dir: Path, n: int = 40) -> StageResult:
    """The earlier stage: words of N texts (some texts empty, so some rejects)."""
    return run_stage(SplitWords(), texts(n), context(run_dir))


def rejects_file(run_dir: Path) -> bytes:
    return (run_dir / "rejects.jsonl").read_bytes()


@pytest.mark.parametrize("stage", [Shout(), ShoutOncePerWord()], ids=["unique_keys", "repeated_keys"])
def test_a_pool_over_records_writes_what_inline_writes(
    tmp_path: Path, stage: Shout, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = {"reject": {"gamma"}}
    inline_dir, pool_dir = tmp_path / "inline", tmp_path / "pool"
    inline = run_stage(stage, words(inline_dir).records(), context(inline_dir, **options))
    earlier = words(pool_dir)
    monkeypatch.setattr(Encoded, "__iter__", lambda self: pytest.fail("the driver decoded the records"))
    pooled = run_stage(stage, earlier.records(), context(pool_dir, **options), processes=2, chunk_size=4)
    assert rows(pooled) == rows(inline)
    assert list(pooled.rejects()) == list(inline.rejects())
    assert without_wall(pooled.stats) == without_wall(inline.stats)
    assert without_wall(pooled.totals) == without_wall(inline.totals)
    assert rejects_file(pool_dir) == rejects_file(inline_dir)
    for name in ("outputs.jsonl", "rejects.jsonl", "done.jsonl"):
        folder = f"stages/{stage.name}/{name}"
        assert (pool_dir / folder).read_bytes() == (inline_dir / folder).read_bytes()
    if stage.name == "shout_once":  # keys repeat, within shards and across them
        assert Counter(reject.reason for reject in pooled.rejects())["duplicate_key"] > 10


def test_a_resumed_pool_over_records_reuses_complete_shards_and_ends_as_a_clean_run(tmp_path: Path) -> None:
    clean_dir, run_dir, log = tmp_path / "clean", tmp_path / "run", tmp_path / "calls.log"
    clean = run_stage(ShoutOncePerWord(), words(clean_dir).records(), context(clean_dir), processes=2)
    earlier = words(run_dir)
    lines = earlier.store.outputs_path.read_text().splitlines()
    assert len(lines) > 64  # shards of 1, 2, 4 ... 32 lines end at line 63: stop on the next shard's first
    stop_at = json.loads(lines[63])["record"]["id"]
    with pytest.raises(StopRun):
        run_stage(
            ShoutOncePerWord(), earlier.records(), context(run_dir, stop_on={stop_at}, log=str(log)),
            processes=2, chunk_size=4,
        )  # fmt: skip
    first = Counter(log.read_text().split())
    resumed = run_stage(
        ShoutOncePerWord(), earlier.records(), context(run_dir, log=str(log)), processes=2, chunk_size=4
    )
    again = Counter(log.read_text().split()) - first
    assert first and resumed.stats.skipped > 0
    assert sum(again.values()) < earlier.totals.outputs  # the complete shards ran once
    assert rows(resumed) == rows(clean)
    assert list(resumed.rejects()) == list(clean.rejects())
    assert without_wall(resumed.totals) == without_wall(clean.totals)
    assert rejects_file(run_dir) == rejects_file(clean_dir)


@pytest.mark.parametrize("processes", [1, 2])
def test_a_corrupt_line_of_the_earlier_stage_is_named(tmp_path: Path, processes: int) -> None:
    earlier = words(tmp_path, 10)
    path = earlier.store.outputs_path
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = '{"key": "t001", "record": {"id": \n'
    path.write_text("".join(lines))
    with pytest.raises(IrbgenError, match=r"stages/split/outputs.jsonl:3: corrupt checkpoint line"):
        run_stage(Shout(), earlier.records(), context(tmp_path), processes=processes)


def submitted_shards(monkeypatch: pytest.MonkeyPatch) -> list[Shard]:
    """The shards the driver cuts from now on, as they are cut."""
    submitted: list[Shard] = []
    new_shard = sharding.new_shard

    def recorded(*args, **kwargs) -> Shard:  # type: ignore[no-untyped-def]
        submitted.append(new_shard(*args, **kwargs))
        return submitted[-1]

    monkeypatch.setattr(sharding, "new_shard", recorded)
    return submitted


def test_the_driver_hands_workers_spans_of_the_earlier_checkpoint_not_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline_dir, pool_dir = tmp_path / "inline", tmp_path / "pool"
    inline = run_stage(Shout(), words(inline_dir).records(), context(inline_dir))
    earlier = words(pool_dir)
    submitted = submitted_shards(monkeypatch)
    unread = lambda self: pytest.fail("the driver read the lines")  # noqa: E731
    monkeypatch.setattr(CheckpointStore, "record_lines", unread)
    pooled = run_stage(Shout(), earlier.records(), context(pool_dir), processes=2)
    assert rows(pooled) == rows(inline) and without_wall(pooled.totals) == without_wall(inline.totals)
    assert submitted and all(len(shard.spans) == 1 and shard.items == [] for shard in submitted)
    assert sum(shard.size for shard in submitted) == earlier.totals.outputs


def test_with_a_shared_dir_the_workers_get_the_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inline_dir, pool_dir = tmp_path / "inline", tmp_path / "pool"
    inline = run_stage(Shout(), words(inline_dir).records(), context(inline_dir))
    earlier = words(pool_dir)
    submitted = submitted_shards(monkeypatch)
    shared = StageContext(run_dir=pool_dir, shard_dir=tmp_path / "shared")
    pooled = run_stage(Shout(), earlier.records(), shared, processes=2)
    assert rows(pooled) == rows(inline)
    assert submitted and all(not shard.spans and shard.items for shard in submitted)  # the lines travel
    assert sum(len(shard.items) for shard in submitted) == earlier.totals.outputs


def test_a_redone_earlier_stage_is_never_read_through_a_reused_shard(tmp_path: Path) -> None:
    """A shard of spans is reused only while the earlier checkpoint is the same file, unchanged."""
    earlier = words(tmp_path)
    with pytest.raises(StopRun):
        stop_at = json.loads(earlier.store.outputs_path.read_text().splitlines()[40])["record"]["id"]
        run_stage(Shout(), earlier.records(), context(tmp_path, stop_on={stop_at}), processes=2, chunk_size=4)
    path = earlier.store.outputs_path
    changed = path.read_bytes().replace(b'"word": "beta"', b'"word": "zeta"')
    (tmp_path / "new.jsonl").write_bytes(changed)
    (tmp_path / "new.jsonl").replace(path)  # as a redone stage is written: a new file, same size
    resumed = run_stage(Shout(), earlier.records(), context(tmp_path), processes=2, chunk_size=4)
    written = [row["word"] for row in rows(resumed)]
    assert "ZETA" in written and "BETA" not in written


@pytest.mark.parametrize("largest", [1, 10, 64, 1 << 20])
@pytest.mark.parametrize("ending", [b"\n", b""], ids=["newline", "no_last_newline"])
def test_spans_cut_whole_lines_1_2_4_at_a_time_until_they_hold_enough_bytes(
    tmp_path: Path, largest: int, ending: bytes
) -> None:
    lines = [b"x" * (1 + number % 23) + b"\n" for number in range(300)]
    lines[-1] = lines[-1].rstrip(b"\n") + ending
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(lines))
    cut = list(sharding.spans(path, largest))
    assert cut[0].start == 0 and cut[-1].end == path.stat().st_size
    assert sum(span.count for span in cut) == len(lines)
    first = 0
    for number, span in enumerate(cut):
        held = lines[first : first + span.count]
        assert b"".join(held) == path.read_bytes()[span.start : span.end]
        full = span.count == 2**number or len(b"".join(held)) >= largest > len(b"".join(held[:-1]))
        assert full or span is cut[-1]
        first += span.count
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert list(sharding.spans(tmp_path / "empty.jsonl", largest)) == []
