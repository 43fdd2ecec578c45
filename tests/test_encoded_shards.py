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
from irbgen.pipeline.encoded import Encoded
from irbgen.pipeline.runner import StageResult, run_stage
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
