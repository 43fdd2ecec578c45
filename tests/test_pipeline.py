"""The local stage runner: input order, rejects with reasons, resume after Ctrl-C and SIGKILL, pool, stats."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from irbgen.errors import IrbgenError
from irbgen.llm.types import BudgetExceeded
from irbgen.pipeline.checkpoint import KEY_BUFFER_LINES, CheckpointStore
from irbgen.pipeline.runner import LocalExecutor, StageResult, run_one, run_stage
from irbgen.pipeline.stage import StageContext, offload
from irbgen.pipeline.stats import StageStats, reject_counts
from irbgen.pipeline.steps import Step, run_steps
from irbgen.pipeline.workers import PARENT_POLL_SECONDS
from irbgen.records import Reject

# -- toy records and stages ---------------------------------------------------------------------------


class Text(BaseModel):
    id: str
    text: str

    @property
    def key(self) -> str:
        return self.id


class Word(BaseModel):
    id: str
    word: str

    @property
    def key(self) -> str:
        return self.id


class StopRun(IrbgenError):
    fatal = True


class SplitWords:
    """CPU stage: one Word per whitespace-separated word; an empty text is rejected."""

    name = "split"
    input_model = Text
    output_model = Word

    def key(self, record: Text) -> str:
        return record.id

    def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
        options = context.options
        if "calls" in options:
            options["calls"].append(record.id)
        if "log" in options:
            with open(options["log"], "a", encoding="utf-8") as log:
                log.write(record.id + "\n")
        if "pids" in options:
            with open(options["pids"], "a", encoding="utf-8") as pids:
                pids.write(f"{os.getpid()}\n")
        if record.id in options.get("fail_on", ()):
            raise ValueError(f"bad record {record.id}")
        if record.id in options.get("budget_on", ()):
            raise BudgetExceeded("spent 1.00 of 1.00 USD")
        if record.id in options.get("stop_on", ()):
            raise StopRun("a fatal stage error")
        if not record.text.strip():
            yield Reject(stage=self.name, reason="empty_text", key=record.id)
            return
        for number, word in enumerate(record.text.split()):
            yield Word(id=f"{record.id}:{number}", word=word)


class SlowWords(SplitWords):
    """SplitWords that sleeps before each record, for the SIGKILL test."""

    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
        time.sleep(self.delay)
        yield from super().process(record, context)


class AsyncSplit(SplitWords):
    """I/O stage: SplitWords after a random short sleep, so calls finish out of input order."""

    name = "asplit"

    def __init__(self, max_delay: float = 0.004, head_delay: float = 0.0) -> None:
        self.max_delay = max_delay
        self.head_delay = head_delay

    async def aprocess(self, record: Text, context: StageContext) -> list[Word | Reject]:
        options = context.options
        options.setdefault("started", []).append(record.id)
        active = options.setdefault("active", Counter())
        active["now"] += 1
        active["max"] = max(active["max"], active["now"])
        try:
            if self.head_delay and record.id == "t000":
                await asyncio.sleep(self.head_delay)
                options["started_when_head_done"] = len(options["started"])
            else:
                await asyncio.sleep(random.uniform(0, self.max_delay))
        finally:
            active["now"] -= 1
        options.setdefault("completed", []).append(record.id)
        return list(self.process(record, context))


class Upper:
    """I/O stage over words: the word in capitals."""

    name = "upper"
    input_model = Word
    output_model = Word

    def key(self, record: Word) -> str:
        return record.id

    async def aprocess(self, record: Word, context: StageContext) -> list[Word | Reject]:
        await asyncio.sleep(random.uniform(0, 0.002))
        return [Word(id=record.id, word=record.word.upper())]


class WhichProcess:
    """CPU stage that holds each item a while and says which process it ran in."""

    name = "which_process"
    input_model = Text
    output_model = Text

    def key(self, record: Text) -> str:
        return record.id

    def process(self, record: Text, context: StageContext) -> list[Text]:
        time.sleep(0.5)  # long enough that one process could not take both items first
        return [Text(id=record.id, text=str(os.getpid()))]


def texts(n: int = 60) -> list[Text]:
    """Inputs with an empty text every 7th record."""
    rng = random.Random(7)
    vocabulary = ["alpha", "beta", "gamma", "delta", "eps"]
    return [
        Text(id=f"t{i:03d}", text="" if i % 7 == 3 else " ".join(rng.choices(vocabulary, k=1 + i % 4)))
        for i in range(n)
    ]


def expected_words(records: Iterable[Text]) -> list[dict]:
    return [
        {"id": f"{r.id}:{n}", "word": w}
        for r in records
        if r.text.strip()
        for n, w in enumerate(r.text.split())
    ]


def interrupted(records: list[Text], after: int) -> Iterator[Text]:
    """An input iterator that raises KeyboardInterrupt after `after` items, like Ctrl-C."""
    for number, record in enumerate(records):
        if number == after:
            raise KeyboardInterrupt
        yield record


def context(run_dir: Path, **options) -> StageContext:
    return StageContext(run_dir=run_dir, options=dict(options))


def rows(result: StageResult) -> list[dict]:
    return list(result.rows())


def run_rejects(run_dir: Path) -> list[dict]:
    path = run_dir / "rejects.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def without_wall(stats: StageStats) -> dict:
    data = stats.to_dict()
    data.pop("wall_seconds")
    return data


# -- order, rejects, errors ---------------------------------------------------------------------------


def test_cpu_stage_outputs_rejects_and_files(tmp_path: Path) -> None:
    records = texts()
    seen: list[tuple] = []
    result = run_stage(SplitWords(), records, context(tmp_path), progress=lambda *a: seen.append(a))
    assert rows(result) == expected_words(records)
    assert all(isinstance(word, Word) for word in result.outputs())
    empty = [r.id for r in records if not r.text]
    assert [(r.stage, r.reason, r.key) for r in result.rejects()] == [
        ("split", "empty_text", k) for k in empty
    ]
    assert [(r["stage"], r["reason"], r["key"]) for r in run_rejects(tmp_path)] == [
        ("split", "empty_text", k) for k in empty
    ]
    assert result.stats.rejects == {"empty_text": len(empty)}
    assert result.stats.inputs == result.stats.processed == len(records)
    assert result.stats.outputs == len(expected_words(records))
    assert without_wall(result.totals) == without_wall(result.stats)
    folder = tmp_path / "stages" / "split"
    assert sorted(p.name for p in folder.iterdir()) == [
        "complete",
        "done.jsonl",
        "outputs.jsonl",
        "rejects.jsonl",
        "stats.json",
    ]
    first = json.loads((folder / "outputs.jsonl").read_text().splitlines()[0])
    assert first == {"key": "t000", "record": expected_words(records)[0]}
    assert json.loads((folder / "stats.json").read_text())["rejects"] == {"empty_text": len(empty)}
    assert seen[-1] == ("split", len(records), len(records))


def test_exception_becomes_error_reject(tmp_path: Path) -> None:
    records = texts(20)
    result = run_stage(SplitWords(), records, context(tmp_path, fail_on={"t005", "t011"}))
    errors = [r for r in result.rejects() if r.reason.startswith("error:")]
    assert [(r.reason, r.key, r.detail) for r in errors] == [
        ("error:ValueError", "t005", "bad record t005"),
        ("error:ValueError", "t011", "bad record t011"),
    ]
    assert errors[0].extra["where"].startswith("test_pipeline.py:")
    assert rows(result) == expected_words(r for r in records if r.id not in {"t005", "t011"})
    assert result.stats.errors == 2
    assert result.stats.rejects["error:ValueError"] == 2
    assert result.store.complete


class YieldsText(SplitWords):
    """A stage that yields a plain dict for record "t002": a bug the runner must turn into a reject."""

    name = "bad_yield"

    def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
        yield from super().process(record, context)
        if record.id == "t002":
            yield {"id": record.id}  # type: ignore[misc]


@pytest.mark.parametrize("processes", [1, 2])
def test_a_result_that_is_not_a_record_rejects_its_item(tmp_path: Path, processes: int) -> None:
    records = texts(6)
    result = run_stage(YieldsText(), records, context(tmp_path), processes=processes)
    assert [(r.reason, r.key) for r in result.rejects() if r.reason.startswith("error:")] == [
        ("error:TypeError", "t002")
    ]
    assert "dict, not a record or Reject" in next(r.detail for r in result.rejects() if r.key == "t002")
    assert rows(result) == expected_words(r for r in records if r.id != "t002")


def test_repeated_key_is_rejected(tmp_path: Path) -> None:
    records = texts(5)
    result = run_stage(SplitWords(), [*records, records[1]], context(tmp_path))
    assert rows(result) == expected_words(records)
    assert [(r.reason, r.key) for r in result.rejects()][-1] == ("duplicate_key", "t001")
    assert result.stats.inputs == 6 and result.stats.processed == 5


def test_io_stage_writes_in_input_order_despite_scrambled_completion(tmp_path: Path) -> None:
    records = texts(80)
    ctx = context(tmp_path)
    result = run_stage(AsyncSplit(), records, ctx, concurrency=8)
    assert ctx.options["completed"] != [r.id for r in records]  # calls did finish out of order
    assert sorted(ctx.options["completed"]) == [r.id for r in records]
    assert rows(result) == expected_words(records)
    assert [r.key for r in result.rejects()] == [r.id for r in records if not r.text]
    assert 1 < ctx.options["active"]["max"] <= 8


def test_io_reorder_buffer_is_bounded(tmp_path: Path) -> None:
    records = texts(100)
    ctx = context(tmp_path)
    result = run_stage(AsyncSplit(max_delay=0, head_delay=0.2), records, ctx, concurrency=2)
    # While the first record is slow, later results wait for it: at most 4 x concurrency are held.
    assert ctx.options["started_when_head_done"] <= 8
    assert rows(result) == expected_words(records)


def test_process_pool_matches_in_process(tmp_path: Path) -> None:
    records = texts(50)
    options = {"fail_on": {"t010"}}
    inline = run_stage(SplitWords(), records, context(tmp_path / "one", **options))
    pids = tmp_path / "pids"
    pooled = run_stage(
        SplitWords(), records, context(tmp_path / "two", pids=str(pids), **options), processes=2, chunk_size=4
    )
    assert str(os.getpid()) not in pids.read_text().split()  # the records ran in the pool's processes
    assert rows(pooled) == rows(inline)
    assert list(pooled.rejects()) == list(inline.rejects())
    assert any(r.reason == "error:ValueError" and r.key == "t010" for r in pooled.rejects())
    assert without_wall(pooled.stats) == without_wall(inline.stats)


def test_an_executor_can_be_swapped_in(tmp_path: Path) -> None:
    records = texts(12)
    order: list[int] = []

    def backwards(stage, items, context, sink, concurrency) -> None:  # computes last-first, in order out
        items = list(items)
        results = [run_one(stage, item, context) for item in reversed(items)][::-1]
        for item, outcome in zip(items, results, strict=True):
            order.append(item.index)
            sink(item, outcome)

    result = run_stage(SplitWords(), records, context(tmp_path), executor=backwards)
    assert rows(result) == expected_words(records) and order == list(range(12))


def test_unpicklable_stage_is_refused_for_a_pool(tmp_path: Path) -> None:
    stage = SplitWords()
    stage.hook = lambda: None  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="must pickle"):
        run_stage(stage, texts(3), context(tmp_path), processes=2)


# -- keys with many outputs stream -------------------------------------------------------------------


class ManyWords(SplitWords):
    """One Word per number below `count` for a record whose text is "many"; it watches the checkpoint."""

    name = "many"

    def __init__(self, count: int, fail_after: int | None = None) -> None:
        self.count = count
        self.fail_after = fail_after

    def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
        if record.text != "many":
            yield from super().process(record, context)
            return
        folder = context.run_dir / "stages" / self.name
        for number in range(self.count):
            if number == self.count - 1 and "watch" in context.options:  # what reached disk before the end
                with open(context.options["watch"], "a", encoding="utf-8") as log:
                    mark = f'"{record.id}:'.encode()
                    streamed = sum(path.read_bytes().count(mark) for path in folder.glob("outputs.jsonl"))
                    shards = sum(
                        path.read_bytes().count(mark) for path in folder.glob("shards/*/outputs.jsonl")
                    )
                    log.write(f"{record.id} {streamed} {shards}\n")
            if number == self.fail_after:
                raise ValueError(f"failed after {number} outputs")
            yield Word(id=f"{record.id}:{number}", word=str(number))


MANY = 1000  # outputs of one key


def many_texts() -> list[Text]:
    return [Text(id="a", text="one two"), Text(id="b", text="many"), Text(id="c", text="three")]


def test_a_key_with_many_outputs_streams_to_the_checkpoint(tmp_path: Path) -> None:
    log = tmp_path / "log"
    result = run_stage(
        ManyWords(3 * KEY_BUFFER_LINES), many_texts(), context(tmp_path / "run", watch=str(log))
    )
    key, streamed, _ = log.read_text().split()
    assert key == "b" and int(streamed) >= 2 * KEY_BUFFER_LINES  # on disk before the key finished
    assert [row["id"] for row in rows(result)] == [
        "a:0",
        "a:1",
        *(f"b:{n}" for n in range(3 * KEY_BUFFER_LINES)),
        "c:0",
    ]
    assert result.stats.outputs == 3 + 3 * KEY_BUFFER_LINES


def test_a_long_key_reports_its_records_as_it_goes(tmp_path: Path) -> None:
    seen: list[tuple] = []
    run_stage(ManyWords(2 * MANY), many_texts(), context(tmp_path), progress=lambda *a: seen.append(a))
    assert ("many records", 1000, None) in seen  # the first report inside key "b"
    assert seen[-1] == ("many", 3, 3)


@pytest.mark.parametrize("processes", [1, 2])
def test_a_failure_midway_through_a_streamed_key_rejects_the_whole_key(
    tmp_path: Path, processes: int
) -> None:
    stage = ManyWords(3 * MANY, fail_after=2 * MANY + 5)
    result = run_stage(stage, many_texts(), context(tmp_path), processes=processes)
    assert [row["id"] for row in rows(result)] == ["a:0", "a:1", "c:0"]
    assert [(r.reason, r.key, r.detail) for r in result.rejects()] == [
        ("error:ValueError", "b", f"failed after {2 * MANY + 5} outputs")
    ]
    assert result.stats.outputs == 3 and result.stats.errors == 1
    assert [r["key"] for r in run_rejects(tmp_path)] == ["b"]
    assert not (tmp_path / "stages" / "many" / "shards").exists()


def test_a_pool_worker_streams_a_key_with_many_outputs_to_its_own_shard(tmp_path: Path) -> None:
    stage = ManyWords(2 * MANY + 7)
    inline = run_stage(stage, many_texts(), context(tmp_path / "one"))
    log = tmp_path / "log"
    pooled = run_stage(stage, many_texts(), context(tmp_path / "two", watch=str(log)), processes=2)
    key, in_stage, in_shard = log.read_text().split()
    assert key == "b" and in_stage == "0" and int(in_shard) >= MANY  # the worker wrote, as it went
    assert rows(pooled) == rows(inline) and len(rows(pooled)) == 2 * MANY + 10
    assert without_wall(pooled.stats) == without_wall(inline.stats)
    folder = tmp_path / "two" / "stages" / "many"
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        path.name for path in (tmp_path / "one" / "stages" / "many").iterdir()
    )  # the shards were merged into the stage's own files, then deleted
    for name in ("outputs.jsonl", "rejects.jsonl", "done.jsonl"):
        assert (folder / name).read_bytes() == (tmp_path / "one" / "stages" / "many" / name).read_bytes()


def test_a_fatal_error_inside_a_streamed_key_leaves_it_to_be_redone(tmp_path: Path) -> None:
    class StopMidway(ManyWords):
        def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
            for number, word in enumerate(super().process(record, context)):
                if record.id == "b" and number == 2 * KEY_BUFFER_LINES and context.options.get("stop"):
                    raise StopRun("stopped")
                yield word

    records = many_texts()
    with pytest.raises(StopRun):
        run_stage(StopMidway(3 * KEY_BUFFER_LINES), records, context(tmp_path, stop=True))
    assert CheckpointStore(tmp_path, "many").finished_keys() == {"a"}
    assert (tmp_path / "stages" / "many" / "outputs.jsonl").read_text().count('"b:') == 0
    resumed = run_stage(StopMidway(3 * KEY_BUFFER_LINES), records, context(tmp_path))
    assert [row["id"] for row in rows(resumed)][-2:] == [f"b:{3 * KEY_BUFFER_LINES - 1}", "c:0"]
    assert resumed.totals.outputs == 3 + 3 * KEY_BUFFER_LINES


# -- resume -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", [SplitWords(), AsyncSplit()], ids=["cpu", "io"])
def test_resume_after_interrupt_redoes_nothing(tmp_path: Path, stage: SplitWords) -> None:
    records = texts()
    clean = run_stage(stage, records, context(tmp_path / "clean"))
    calls: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        run_stage(stage, interrupted(records, 25), context(tmp_path / "run", calls=calls), concurrency=4)
    store = CheckpointStore(tmp_path / "run", stage.name)
    assert not store.complete
    assert store.finished_keys() == {r.id for r in records[:25]}
    resumed = run_stage(stage, records, context(tmp_path / "run", calls=calls), concurrency=4)
    assert rows(resumed) == rows(clean)
    assert run_rejects(tmp_path / "run") == run_rejects(tmp_path / "clean")
    assert sorted(calls) == [r.id for r in records]  # every record processed exactly once
    assert resumed.stats.skipped == 25 and resumed.stats.processed == len(records) - 25
    assert without_wall(resumed.totals) == without_wall(clean.totals)


def test_complete_stage_is_only_read_back(tmp_path: Path) -> None:
    records = texts(10)
    first = run_stage(SplitWords(), records, context(tmp_path))
    calls: list[str] = []
    again = run_stage(SplitWords(), iter(()), context(tmp_path, calls=calls))
    assert again.reused and calls == []
    assert rows(again) == rows(first)
    assert without_wall(again.totals) == without_wall(first.totals)


@pytest.mark.parametrize("trigger", ["budget_on", "stop_on"])
def test_fatal_error_stops_the_run_and_keeps_finished_keys(tmp_path: Path, trigger: str) -> None:
    records = texts(30)
    with pytest.raises((BudgetExceeded, StopRun)):
        run_stage(SplitWords(), records, context(tmp_path, **{trigger: {"t012"}}))
    store = CheckpointStore(tmp_path, "split")
    assert store.finished_keys() == {r.id for r in records[:12]}
    assert not any(r["reason"].startswith("error:") for r in run_rejects(tmp_path))
    calls: list[str] = []
    resumed = run_stage(SplitWords(), records, context(tmp_path, calls=calls))
    assert calls == [r.id for r in records[12:]]
    assert rows(resumed) == expected_words(records)


def test_torn_lines_and_unfinished_keys_are_repaired(tmp_path: Path) -> None:
    records = texts(40)
    clean = run_stage(SplitWords(), records, context(tmp_path / "clean"))
    run_stage(SplitWords(), records, context(tmp_path / "run"))
    folder = tmp_path / "run" / "stages" / "split"
    # As if killed mid-write after 15 keys: later outputs flushed but their done lines never written,
    # and a half-written line at the end of every file.
    (folder / "complete").unlink()
    done = (folder / "done.jsonl").read_text().splitlines(keepends=True)
    (folder / "done.jsonl").write_text("".join(done[:15]) + '{"key": "t01')
    for name in ("outputs.jsonl", "rejects.jsonl"):
        with open(folder / name, "a") as file:
            file.write('{"key": "t039", "record": {"id": "t0')
    with open(tmp_path / "run" / "rejects.jsonl", "a") as file:
        file.write('{"stage": "split", "rea')
    calls: list[str] = []
    resumed = run_stage(SplitWords(), records, context(tmp_path / "run", calls=calls))
    assert calls == [r.id for r in records[15:]]
    assert rows(resumed) == rows(clean)
    assert run_rejects(tmp_path / "run") == run_rejects(tmp_path / "clean")
    for name in ("outputs.jsonl", "rejects.jsonl", "done.jsonl"):
        assert (folder / name).read_bytes() == (tmp_path / "clean" / "stages" / "split" / name).read_bytes()


def test_open_drops_outputs_of_a_key_missing_from_done(tmp_path: Path) -> None:
    folder = tmp_path / "stages" / "s"
    folder.mkdir(parents=True)
    (folder / "outputs.jsonl").write_text(
        "".join(json.dumps({"key": k, "record": {"v": k}}) + "\n" for k in ["a", "b", "c"])
    )
    (folder / "done.jsonl").write_text('{"key": "a"}\n{"key": "c"}\n')
    store = CheckpointStore(tmp_path, "s").open()
    store.close()
    assert list(store.outputs()) == [{"v": "a"}, {"v": "c"}]
    assert store.finished_keys() == {"a", "c"}


def test_open_keeps_other_stages_rejects_and_drops_stale_ones(tmp_path: Path) -> None:
    other = {"stage": "other", "reason": "http_404", "key": "u", "detail": "", "extra": {}}
    stale = {"stage": "s", "reason": "empty_text", "key": "x", "detail": "", "extra": {}}
    (tmp_path / "rejects.jsonl").write_text(json.dumps(stale) + "\n" + json.dumps(other) + "\n")
    CheckpointStore(tmp_path, "s").open().close()
    assert run_rejects(tmp_path) == [other]


def test_corrupt_middle_line_names_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "stages" / "s"
    folder.mkdir(parents=True)
    (folder / "done.jsonl").write_text('{"key": "a"}\nnot json\n{"key": "b"}\n')
    with pytest.raises(IrbgenError, match=r"done\.jsonl:2: corrupt checkpoint line"):
        CheckpointStore(tmp_path, "s").open()


SIGKILL_SCRIPT = """
import sys
from pathlib import Path
from test_pipeline import SlowWords, texts
from irbgen.pipeline.runner import run_stage
from irbgen.pipeline.stage import StageContext
context = StageContext(run_dir=Path(sys.argv[1]), options={"log": sys.argv[2]})
run_stage(SlowWords(delay=0.04), texts(), context, sync_seconds=0)
"""


def kill_midway(script: str, run_dir: Path, log: Path, *args: str, timeout: float = 15) -> set[str]:
    """Run SCRIPT (SlowWords over texts(), logging calls to LOG) in a child and SIGKILL it once 12 keys
    are done; the keys done at the kill (in the stage's done.jsonl, or in the shards its manifest lists)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    child = subprocess.Popen([sys.executable, "-c", script, str(run_dir), str(log), *args], env=env)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(keys_done(run_dir / "stages" / "slow")) >= 12:
                break
            assert child.poll() is None, "the child exited before it could be killed"
            time.sleep(0.01)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    done_at_kill = keys_done(run_dir / "stages" / "slow")
    assert 12 <= len(done_at_kill) < len(texts())
    return done_at_kill


def keys_done(folder: Path) -> set[str]:
    """The input keys a stage's checkpoint holds as done: its own done.jsonl, or its recorded shards'."""
    paths = [folder / "done.jsonl"]
    manifest = folder / "shards.jsonl"
    if manifest.exists():
        lines = manifest.read_text().splitlines(keepends=True)
        shards = [json.loads(line)["folder"] for line in lines if line.endswith("\n")]
        paths += [folder / "shards" / name / "done.jsonl" for name in shards]
    return {
        json.loads(line)["key"]
        for path in paths
        if path.exists()
        for line in path.read_text().splitlines(keepends=True)
        if line.endswith("\n")
    }


def assert_resumed(
    resumed: StageResult, clean: StageResult, log: Path, done_at_kill: set[str], redone: int
) -> None:
    """The resumed run wrote what a clean one did, redid no finished key and at most REDONE others."""
    assert rows(resumed) == rows(clean)
    assert run_rejects(resumed.store.run_dir) == run_rejects(clean.store.run_dir)
    calls = Counter(log.read_text().split())
    assert set(calls) == {r.id for r in texts()}
    assert all(calls[key] == 1 for key in done_at_kill)  # finished keys were not processed again
    assert sum(calls.values()) - len(texts()) <= redone  # at most the records in flight at the kill


def test_resume_after_sigkill(tmp_path: Path) -> None:
    clean = run_stage(SlowWords(delay=0), texts(), context(tmp_path / "clean"))
    run_dir, log = tmp_path / "run", tmp_path / "calls.log"
    done_at_kill = kill_midway(SIGKILL_SCRIPT, run_dir, log)
    resumed = run_stage(SlowWords(delay=0), texts(), context(run_dir, log=str(log)))
    assert_resumed(resumed, clean, log, done_at_kill, redone=1)


def test_recorded_shards_are_reused_only_for_the_same_inputs_and_a_complete_folder(tmp_path: Path) -> None:
    records = texts(30)
    clean = run_stage(SplitWords(), records, context(tmp_path / "clean"))
    run_dir, log = tmp_path / "run", tmp_path / "calls.log"
    with pytest.raises(KeyboardInterrupt):  # shards of 1, 2, 4, 4, 4, 4 items complete: t000-t018
        run_stage(
            SplitWords(), interrupted(records, 20), context(run_dir, log=str(log)), processes=2, chunk_size=4
        )
    folder = run_dir / "stages" / "split"
    recorded = [json.loads(line) for line in (folder / "shards.jsonl").read_text().splitlines()]
    assert [entry["shard"] for entry in recorded] == [0, 1, 2, 3, 4, 5]
    shutil.rmtree(folder / "shards" / recorded[1]["folder"])  # as if the shared folder lost it
    # Cut in shards of at most 2: shard 0 (t000) holds the same input as before, shard 1 lost its
    # folder, and from shard 2 on the shards hold other inputs than the recorded ones.
    resumed = run_stage(SplitWords(), records, context(run_dir, log=str(log)), processes=2, chunk_size=2)
    calls = Counter(log.read_text().split())
    assert calls["t000"] == 1
    assert all(calls[f"t{number:03d}"] == 2 for number in range(1, 19))
    assert all(calls[f"t{number:03d}"] == 1 for number in range(19, 30))
    assert rows(resumed) == rows(clean)
    assert (run_dir / "rejects.jsonl").read_bytes() == (tmp_path / "clean" / "rejects.jsonl").read_bytes()
    assert not (folder / "shards").exists() and not (folder / "shards.jsonl").exists()


def test_a_stage_merged_halfway_drops_its_stale_rejects_before_it_runs_in_shards(tmp_path: Path) -> None:
    clean = run_stage(SplitWords(), texts(20), context(tmp_path / "clean"), processes=2)
    other = {"stage": "other", "reason": "r", "key": "k", "detail": "", "extra": {}}
    stale = {**other, "stage": "split"}  # as if a killed merge had appended this stage's rejects
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "rejects.jsonl").write_text(json.dumps(other) + "\n" + json.dumps(stale) + "\n")
    result = run_stage(SplitWords(), texts(20), context(tmp_path / "run"), processes=2)
    assert rows(result) == rows(clean)
    assert run_rejects(tmp_path / "run") == [other, *run_rejects(tmp_path / "clean")]


def test_a_corrupt_shard_manifest_line_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "stages" / "split"
    folder.mkdir(parents=True)
    (folder / "shards.jsonl").write_text('{"shard": 0, "folder": "x", "digest": "y"}\nnot json\n')
    with pytest.raises(IrbgenError, match=r"shards.jsonl:2: corrupt shard manifest line"):
        run_stage(SplitWords(), texts(3), context(tmp_path), processes=2)


POOL_SIGKILL_SCRIPT = SIGKILL_SCRIPT.replace("sync_seconds=0", "processes=2, chunk_size=4")


def test_resume_after_sigkill_of_a_driver_whose_workers_write_the_shards(tmp_path: Path) -> None:
    clean = run_stage(SlowWords(delay=0), texts(), context(tmp_path / "clean"))
    run_dir, log = tmp_path / "run", tmp_path / "calls.log"
    done_at_kill = kill_midway(POOL_SIGKILL_SCRIPT, run_dir, log)
    # the killed driver's pool workers exit once they see it gone; until then one may still open a shard
    # folder, which would outlive the resumed run's clean-up (a race CI hit once)
    time.sleep(3 * PARENT_POLL_SECONDS)
    assert not (run_dir / "stages" / "slow" / "done.jsonl").exists()  # the driver wrote no record
    resumed = run_stage(
        SlowWords(delay=0), texts(), context(run_dir, log=str(log)), processes=2, chunk_size=4
    )
    assert_resumed(resumed, clean, log, done_at_kill, redone=2 * 4 * 4)  # shards in flight at the kill
    folder = run_dir / "stages" / "slow"
    assert sorted(path.name for path in folder.iterdir()) == sorted(
        path.name for path in (tmp_path / "clean" / "stages" / "slow").iterdir()
    )
    for name in ("outputs.jsonl", "rejects.jsonl", "done.jsonl"):
        assert (folder / name).read_bytes() == (tmp_path / "clean" / "stages" / "slow" / name).read_bytes()
    assert (run_dir / "rejects.jsonl").read_bytes() == (tmp_path / "clean" / "rejects.jsonl").read_bytes()


# -- pipeline, progress, stats ------------------------------------------------------------------------


def test_declared_steps_chain_stages_and_name_their_results(tmp_path: Path) -> None:
    records = texts(20)
    steps = [
        Step("split", SplitWords(), lambda done: records),
        Step("upper", Upper(), lambda done: done["split"].outputs(), concurrency=4),
    ]
    done = run_steps(steps, context(tmp_path))
    assert list(done) == ["split", "upper"]
    assert rows(done["upper"]) == [{**w, "word": w["word"].upper()} for w in expected_words(records)]
    assert done["split"].stats.outputs == done["upper"].stats.inputs
    with pytest.raises(ValueError, match="runs a stage named"):
        run_steps([Step("other", SplitWords(), lambda done: records)], context(tmp_path / "bad"))


def test_shard_stats_merge_to_a_one_shard_run(tmp_path: Path) -> None:
    records = texts(42)
    options = {"fail_on": {"t004", "t030"}}
    whole = run_stage(SplitWords(), records, context(tmp_path / "whole", **options)).stats
    shards = [
        run_stage(SplitWords(), records[start::3], context(tmp_path / f"shard{start}", **options)).stats
        for start in range(3)
    ]
    merged = shards[0] + shards[1] + shards[2]
    assert without_wall(merged) == without_wall(whole)
    assert without_wall(sum(shards)) == without_wall(whole)
    assert merged.wall_seconds == pytest.approx(sum(s.wall_seconds for s in shards))
    assert merged.rejects == {"empty_text": 6, "error:ValueError": 2}
    assert StageStats.from_dict(merged.to_dict()).to_dict() == merged.to_dict()
    other = StageStats(stage="upper", rejects=Counter({"http_404": 1}))
    assert reject_counts([merged, other]) == {
        ("split", "empty_text"): 6,
        ("split", "error:ValueError"): 2,
        ("upper", "http_404"): 1,
    }
    with pytest.raises(ValueError, match="cannot merge"):
        merged + other  # noqa: B018


class WaitsForAnother(WhichProcess):
    """WhichProcess whose item waits (up to 60 s) until another process holds the other item, so a slow
    machine cannot let one process take both."""

    def __init__(self, meeting: Path) -> None:
        self.meeting = meeting

    def process(self, record: Text, context: StageContext) -> list[Text]:
        (self.meeting / record.id).write_text(str(os.getpid()))
        deadline = time.monotonic() + 60
        while len(list(self.meeting.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        return [Text(id=record.id, text=str(os.getpid()))]


def test_two_heavy_items_run_on_two_processes(tmp_path: Path) -> None:
    shards = [Text(id="shard-0", text=""), Text(id="shard-1", text="")]  # like a dump read in two shards
    meeting = tmp_path / "meeting"
    meeting.mkdir()
    result = run_stage(WaitsForAnother(meeting), shards, context(tmp_path / "run"), processes=2)
    assert len({row["text"] for row in rows(result)}) == 2


def test_a_local_executor_keeps_its_processes_for_every_stage(tmp_path: Path) -> None:
    shards = [Text(id="shard-0", text=""), Text(id="shard-1", text="")]
    with LocalExecutor(processes=2) as executor:
        first = run_stage(WhichProcess(), shards, context(tmp_path / "a"), executor=executor)
        second = run_stage(WhichProcess(), shards, context(tmp_path / "b"), executor=executor)
    pids = {row["text"] for row in rows(first)}
    assert len(pids) == 2 and {row["text"] for row in rows(second)} <= pids  # what a process loaded stays


def _pid_of_work() -> str:
    return str(os.getpid())


def _failing_work() -> str:
    raise ValueError("this page cannot be read")


class OffloadsWork:
    """I/O stage whose CPU part is offloaded (stage.offload): says where that part ran; fails on t003."""

    name = "offloads"
    input_model = Text
    output_model = Text

    def key(self, record: Text) -> str:
        return record.id

    async def aprocess(self, record: Text, context: StageContext) -> list[Text]:
        work = _failing_work if record.id == "t003" else _pid_of_work
        return [Text(id=record.id, text=await offload(context, work))]


@pytest.mark.parametrize("processes", [1, 2])
def test_an_io_stage_offloads_its_cpu_part_to_the_executors_processes(tmp_path: Path, processes: int) -> None:
    with LocalExecutor(processes=processes) as executor:
        result = run_stage(OffloadsWork(), texts(6), context(tmp_path), executor=executor)
    where = {row["text"] for row in rows(result)}
    assert str(os.getpid()) not in where and len(where) <= processes  # worker processes, never a thread here
    (failed,) = run_rejects(tmp_path)
    assert (failed["key"], failed["reason"]) == ("t003", "error:ValueError")  # raised as itself
