"""Page extraction runs on worker processes: a crash or a hang is a reject, and workers die with the build."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from irbgen.pipeline.runner import LocalExecutor, run_stage
from irbgen.pipeline.stage import StageContext, WorkerCrashed, WorkTimedOut
from irbgen.pipeline.workers import WorkerPool
from irbgen.web.extract import extract_document
from irbgen.web.fetch import Fetcher
from irbgen.web.stages import FetchCited
from irbgen.wikipedia.records import Citation

REPO = Path(__file__).resolve().parents[1]
SAMPLE_WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"
GOOD = [
    "https://angling.example.com/waters/lake-orrin",
    "https://birds.example.net/sightings/lake-orrin-2023",
]
CRASHES = "https://alumni.northmere.example.org/profiles/ilse-marrow"
HANGS = "https://business.example.net/2018/10/kelpie-crawler-harbour-trial"


def faulty_extract(url: str, *args, **kwargs):
    """extract_document, except that one page kills its process and another never ends."""
    if url == CRASHES:
        os._exit(3)
    if url == HANGS:
        time.sleep(600)
    return extract_document(url, *args, **kwargs)


class FaultyFetchCited(FetchCited):
    extract = staticmethod(faulty_extract)


def fetch_stage(tmp_path: Path, urls: list[str], executor: LocalExecutor):
    fetcher = Fetcher(run_dir=tmp_path, offline=True, warc_files=(SAMPLE_WARC,))
    context = StageContext(run_dir=tmp_path, fetcher=fetcher)
    try:
        return run_stage(FaultyFetchCited(), [Citation(url=url) for url in urls], context, executor=executor)
    finally:
        asyncio.run(fetcher.aclose())


def rejects(tmp_path: Path) -> dict[str, dict]:
    path = tmp_path / "stages" / "fetch_cited" / "rejects.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return {row["key"]: row["record"] for row in rows}


def test_a_page_that_kills_its_worker_is_a_reject_and_the_stage_goes_on(tmp_path: Path) -> None:
    with LocalExecutor(processes=1) as executor:
        result = fetch_stage(tmp_path, [GOOD[0], CRASHES, GOOD[1]], executor)
    assert [document.url for document in result.outputs()] == GOOD  # pages after the crash still extracted
    crashed = rejects(tmp_path)[CRASHES]
    assert crashed["reason"] == "extract_crashed"
    assert "exit code 3" in crashed["detail"]


def test_a_page_past_the_time_limit_is_a_reject(tmp_path: Path) -> None:
    with LocalExecutor(processes=1, offload_seconds=1) as executor:
        result = fetch_stage(tmp_path, [HANGS], executor)
    assert list(result.outputs()) == []
    assert rejects(tmp_path)[HANGS]["reason"] == "extract_timeout"


def extract_where(url: str, *args, **kwargs):
    """extract_document, with the id of the process it ran in as the title."""
    return extract_document(url, *args, **kwargs).model_copy(update={"title": str(os.getpid())})


class WhereFetchCited(FetchCited):
    extract = staticmethod(extract_where)


@pytest.mark.parametrize("processes", [1, 2])
def test_extraction_never_runs_in_the_builds_process(tmp_path: Path, processes: int) -> None:
    """Not on a thread of the build: lxml and trafilatura are unsafe on several threads of one process."""
    fetcher = Fetcher(run_dir=tmp_path, offline=True, warc_files=(SAMPLE_WARC,))
    context = StageContext(run_dir=tmp_path, fetcher=fetcher)
    try:
        citations = [Citation(url=url) for url in GOOD]
        result = run_stage(WhereFetchCited(), citations, context, processes=processes)
    finally:
        asyncio.run(fetcher.aclose())
    where = {document.title for document in result.outputs()}
    assert where and str(os.getpid()) not in where and len(where) <= processes


def test_a_dead_worker_is_replaced_and_a_hung_one_stopped() -> None:
    async def scenario(pool: WorkerPool) -> list[object]:
        first = await pool.run(os.getpid)
        outcomes: list[object] = []
        for work in (functools.partial(os._exit, 7), functools.partial(time.sleep, 600)):
            try:
                await pool.run(work)
            except (WorkerCrashed, WorkTimedOut) as error:
                outcomes.append(type(error))
        outcomes.append(await pool.run(os.getpid) != first)  # a fresh worker took over
        return outcomes

    pool = WorkerPool(1, timeout=1)
    try:
        assert asyncio.run(scenario(pool)) == [WorkerCrashed, WorkTimedOut, True]
        assert len(pool.pids()) == 1
    finally:
        pool.close()


# A process with busy workers of both kinds (the CPU pool's and the extraction pool's) that prints their
# pids and waits; the tests below kill it and look for its workers.
HOLDER = textwrap.dedent(
    """
    import asyncio, functools, time
    from irbgen.cli.support import reporting_errors
    from irbgen.pipeline.runner import LocalExecutor

    async def hold(executor):
        cpu = executor._processes()
        for _ in range(2):
            cpu.submit(time.sleep, 600)
        workers = executor._offload_workers()
        task = asyncio.ensure_future(workers.run(functools.partial(time.sleep, 600)))
        while len(cpu._processes) < 2 or not workers.pids():
            await asyncio.sleep(0.05)
        print(*cpu._processes, *workers.pids(), flush=True)
        await task

    with reporting_errors(), LocalExecutor(processes=2) as executor:
        asyncio.run(hold(executor))
    """
)


def alive(pid: int) -> bool:
    """Whether PID runs (a zombie waiting for a reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_workers_exit_with_their_parent(signum: int) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    pids: list[int] = []
    try:
        line = holder.stdout.readline()
        pids = [int(pid) for pid in line.split()]
        assert len(pids) == 3, holder.stderr.read()
        holder.send_signal(signum)
        holder.wait(timeout=60)
        deadline = time.monotonic() + 60  # a guard against hanging, not a timing
        while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in pids if alive(pid)]
        assert holder.returncode == (-signal.SIGKILL if signum == signal.SIGKILL else 128 + signal.SIGTERM)
    finally:
        holder.kill()
        holder.wait()
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("processes", ["1", "2"])  # 2: the fetches run on processes of their own, by host
def test_sigterm_while_pages_are_extracted_stops_the_build_and_a_rerun_resumes(
    tmp_path: Path, processes: str
) -> None:
    from test_sample_build_hashes import BUILDS, EXPECTED, sha256

    def build() -> subprocess.Popen:
        options = ["--quiet", "--processes", processes, "--out", "wikipedia"]
        command = [sys.executable, "-m", "irbgen", *BUILDS["wikipedia"], *options]
        return subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    victim = build()
    fetching = tmp_path / "wikipedia" / "stages" / "fetch_cited"
    deadline = time.monotonic() + 120
    while not fetching.exists() and victim.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    victim.send_signal(signal.SIGTERM)
    _, stderr = victim.communicate(timeout=60)  # a guard against hanging, not a timing
    assert victim.returncode == 128 + signal.SIGTERM, stderr.decode()
    assert not (fetching / "complete").exists()  # stopped inside the stage

    rerun = build()
    _, stderr = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, stderr.decode()
    recorded = ("README.md", "manifest.json")  # the card and the manifest record --processes
    expected = {
        file: hash for file, hash in EXPECTED["wikipedia"].items() if processes == "1" or file not in recorded
    }
    benchmark = tmp_path / "wikipedia" / "benchmark"
    assert {file: sha256(benchmark / file) for file in expected} == expected
