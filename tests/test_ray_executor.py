"""The Ray executor on a real local Ray (2 CPUs, no dashboard, loopback): same results as the local one.

Both sample builds through `--executor ray` give the committed hashes; a raising task is a reject as
locally; a killed worker is retried, and past its retries the item is a reject; a driver killed with
SIGKILL resumes from the checkpoint without redoing finished keys.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

ray = pytest.importorskip("ray")

from test_host_shards import SAMPLE_WARC, citations, stage_bytes  # noqa: E402
from test_pipeline import (  # noqa: E402
    AsyncSplit,
    OffloadsWork,
    SlowWords,
    SplitWords,
    Text,
    Upper,
    Word,
    assert_resumed,
    context,
    kill_midway,
    rows,
    run_rejects,
    texts,
    without_wall,
)
from test_sample_build_hashes import BUILDS, EXPECTED, sha256  # noqa: E402

from irbgen.cli import main  # noqa: E402
from irbgen.pipeline.ray_executor import RayExecutor, init_local, route, split  # noqa: E402
from irbgen.pipeline.runner import WorkItem, run_stage  # noqa: E402
from irbgen.pipeline.stage import StageContext  # noqa: E402
from irbgen.records import Reject  # noqa: E402
from irbgen.web.fetch import Fetcher  # noqa: E402
from irbgen.web.stages import FetchCited  # noqa: E402

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local Ray with 2 CPUs whose workers can import these tests' stages; its GCS address."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TESTS), saved]))
    try:
        init_local(num_cpus=2)
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


@pytest.fixture
def executor(cluster: str) -> Iterator[RayExecutor]:
    with RayExecutor(max_retries=1) as running:
        yield running


@pytest.fixture(params=[0, 2], ids=["io-in-driver", "io-actors"])
def io_executor(cluster: str, request: pytest.FixtureRequest) -> Iterator[RayExecutor]:
    """A Ray executor whose I/O stages run in the driver (0 actors, the default) or on 2 actors."""
    with RayExecutor(io_actors=request.param) as running:
        yield running


class DiesOn(SplitWords):
    """SplitWords whose worker process is killed on some records: once (a marker file) or every time."""

    name = "dies"

    def process(self, record: Text, context: StageContext) -> Iterator[Word | Reject]:
        once = context.options.get("die_once", {})
        if record.id in once and not Path(once[record.id]).exists():
            Path(once[record.id]).touch()
            os.kill(os.getpid(), signal.SIGKILL)
        if record.id in context.options.get("die_always", ()):
            os.kill(os.getpid(), signal.SIGKILL)
        yield from super().process(record, context)


# -- stages ----------------------------------------------------------------------------------------------


def test_cpu_stage_matches_the_local_executor_rejects_included(tmp_path: Path, executor: RayExecutor) -> None:
    records = [*texts(40), texts(3)[1]]  # a repeated key too
    options = {"fail_on": {"t005", "t017"}}
    local = run_stage(SplitWords(), records, context(tmp_path / "local", **options))
    on_ray = run_stage(SplitWords(), records, context(tmp_path / "ray", **options), executor=executor)
    assert rows(on_ray) == rows(local)
    assert run_rejects(tmp_path / "ray") == run_rejects(tmp_path / "local")
    assert without_wall(on_ray.stats) == without_wall(local.stats)
    assert {r["reason"] for r in run_rejects(tmp_path / "ray")} >= {"error:ValueError", "duplicate_key"}


def test_io_stages_run_in_input_order(tmp_path: Path, io_executor: RayExecutor) -> None:
    executor = io_executor
    records = texts(50)
    local = run_stage(AsyncSplit(), records, context(tmp_path / "local"), concurrency=3)
    on_ray = run_stage(AsyncSplit(), records, context(tmp_path / "ray"), concurrency=3, executor=executor)
    assert rows(on_ray) == rows(local)
    words = list(local.outputs())
    assert rows(run_stage(Upper(), words, context(tmp_path / "up"), executor=executor)) == [
        {"id": word.id, "word": word.word.upper()} for word in words
    ]


def test_a_killed_worker_is_retried_then_its_item_is_a_reject(tmp_path: Path, executor: RayExecutor) -> None:
    records = texts(12)
    clean = run_stage(SplitWords(), records, context(tmp_path / "clean"))
    once = {"die_once": {"t004": str(tmp_path / "died-once")}}
    retried = run_stage(DiesOn(), records, context(tmp_path / "once", **once), executor=executor)
    assert (tmp_path / "died-once").exists()  # the worker did die, and Ray ran the task again
    assert rows(retried) == rows(clean)

    lost = run_stage(DiesOn(), records, context(tmp_path / "lost", die_always=["t002"]), executor=executor)
    (reject,) = [r for r in run_rejects(tmp_path / "lost") if r["key"] == "t002"]
    assert reject["reason"] == "error:WorkerCrashedError"
    assert "retries" in reject["detail"]
    assert [row for row in rows(clean) if not row["id"].startswith("t002:")] == rows(lost)


def test_split_and_route_keep_the_limits() -> None:
    assert split(16, 3) == [6, 5, 5] and sum(split(7, 7)) == 7
    item = WorkItem(3, "https://example.org/a", None)
    same_host = WorkItem(9, "https://example.org/b?c", None)
    assert route(item, 4, by_host=True) == route(same_host, 4, by_host=True)
    assert route(WorkItem(5, "k5", None), 4, by_host=False) == 1


# -- builds ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "io_actors"), [("wikipedia", "0"), ("wikipedia", "2"), ("wikidata", "0")])
def test_sample_builds_on_ray_give_the_committed_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str, name: str, io_actors: str
) -> None:
    # The inputs lie in one folder (standing for a shared mount), the run directory in another.
    shared, driver = tmp_path / "shared", tmp_path / "driver"
    shared.mkdir()
    driver.mkdir()
    args = []
    for arg in BUILDS[name]:
        if Path(arg).is_file():
            arg = str(shutil.copy(arg, shared))
        args.append(arg)
    monkeypatch.chdir(driver)
    ray_options = ["--executor", "ray", "--ray-io-actors", io_actors]
    result = CliRunner().invoke(main, [*args, *ray_options, "--out", name])
    assert result.exit_code == 0, result.output
    benchmark = driver / name / "benchmark"
    changed = {file: sha256(benchmark / file) for file, want in EXPECTED[name].items()}
    assert changed == EXPECTED[name]
    assert not list(shared.glob("*/**"))  # nothing was written next to the inputs


SIGKILL_SCRIPT = """
import sys
from pathlib import Path
from test_pipeline import SlowWords, texts
from irbgen.pipeline.ray_executor import RayExecutor
from irbgen.pipeline.runner import run_stage
from irbgen.pipeline.stage import StageContext
context = StageContext(run_dir=Path(sys.argv[1]), options={"log": sys.argv[2]})
with RayExecutor(address=sys.argv[3], max_in_flight=2, chunk_size=1) as executor:
    run_stage(SlowWords(delay=0.05), texts(), context, sync_seconds=0, executor=executor)
"""


def test_a_driver_killed_with_sigkill_resumes_from_the_checkpoint(tmp_path: Path, cluster: str) -> None:
    clean = run_stage(SlowWords(delay=0), texts(), context(tmp_path / "clean"))
    run_dir, log = tmp_path / "run", tmp_path / "calls.log"
    done_at_kill = kill_midway(SIGKILL_SCRIPT, run_dir, log, cluster, timeout=60)
    time.sleep(0.3)  # let tasks of the dead driver that were still running end
    with RayExecutor(chunk_size=1) as executor:  # the same shards (another size would redo them all)
        resumed = run_stage(SlowWords(delay=0), texts(), context(run_dir, log=str(log)), executor=executor)
    assert_resumed(resumed, clean, log, done_at_kill, redone=2)  # max_in_flight=2 tasks of one item
    assert not (run_dir / "stages" / "slow" / "shards").exists()  # merged, then deleted


def test_an_io_stage_offloads_its_cpu_part_to_ray_tasks(tmp_path: Path, io_executor: RayExecutor) -> None:
    executor = io_executor
    result = run_stage(OffloadsWork(), texts(6), context(tmp_path), executor=executor)
    actor_pids = set(ray.get([actor.pid.remote() for actor in executor._actors]))
    assert len(actor_pids) == executor.io_actors
    where = {row["text"] for row in rows(result)}
    assert where and not where & (actor_pids | {str(os.getpid())})  # neither an actor nor the driver
    (failed,) = run_rejects(tmp_path)
    assert (failed["key"], failed["reason"]) == ("t003", "error:ValueError")  # raised as itself


def test_the_fetch_stage_on_io_actors_is_written_by_them_by_host(tmp_path: Path, cluster: str) -> None:
    """Spread by host over 2 actors, which write their shards; the stage's files are those of one loop."""

    def fetch(run_dir: Path, executor: RayExecutor | None) -> Fetcher:
        fetcher = Fetcher(run_dir=run_dir, offline=True, warc_files=(SAMPLE_WARC,), concurrency=4)
        run_stage(
            FetchCited(), citations(), StageContext(run_dir=run_dir, fetcher=fetcher), executor=executor
        )
        fetcher.close()
        return fetcher

    fetch(tmp_path / "local", None)
    with RayExecutor(io_actors=2) as executor:
        assert not fetch(tmp_path / "ray", executor).stats  # the driver's fetcher fetched nothing
    assert stage_bytes(tmp_path / "ray") == stage_bytes(tmp_path / "local")


def test_a_wikidata_build_puts_what_workers_read_in_the_shared_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    """--shared-dir: the dump's block index and the old dump's entity list go there, not in the run."""
    monkeypatch.chdir(tmp_path)
    args = [*BUILDS["wikidata"], "--shards", "2", "--min-sitelinks", "1"]
    local = CliRunner().invoke(main, [*args, "--out", "local"])
    assert local.exit_code == 0, local.output
    on_ray = ["--executor", "ray", "--shared-dir", str(tmp_path / "shared"), "--out", "ray"]
    result = CliRunner().invoke(main, [*args, *on_ray])
    assert result.exit_code == 0, result.output
    (files,) = (tmp_path / "shared").iterdir()  # this run's own folder
    assert (files / "kept-entities.txt").is_file() and list((files / "dump-index").iterdir())
    assert not (tmp_path / "ray" / "kept-entities.txt").exists()
    assert not (tmp_path / "ray" / "dump-index").exists()
    for name in ("samples.jsonl", "corpus.jsonl", "qrels/test.tsv"):
        assert (tmp_path / "ray" / "benchmark" / name).read_bytes() == (
            tmp_path / "local" / "benchmark" / name
        ).read_bytes(), name
