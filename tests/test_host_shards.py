"""The fetch stage on a local pool: each host's URLs on one process, which fetches and writes its own
shards; the driver merges them back into input order, so the stage's files are those of one loop."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from irbgen.errors import IrbgenError
from irbgen.pipeline.host_shards import SHARD_ITEMS_PER_SLOT, host_group, host_shards
from irbgen.pipeline.runner import LocalExecutor, StageResult, WorkItem, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.web.extract import extract_document
from irbgen.web.fetch import Fetcher
from irbgen.web.stages import FetchCited
from irbgen.wikipedia.records import Citation

REPO = Path(__file__).resolve().parents[1]
SAMPLE_WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"
STAGE_FILES = ("outputs.jsonl", "rejects.jsonl", "done.jsonl")


def sample_urls() -> list[str]:
    with open(SAMPLE_WARC, "rb") as stream:
        return [
            record.rec_headers.get_header("WARC-Target-URI")
            for record in ArchiveIterator(stream)
            if record.rec_type == "response"
        ]


def citations() -> list[Citation]:
    """Every page of the sample WARC, two it lacks (rejects), and one URL twice (a duplicate-key reject)."""
    urls = sample_urls()
    urls[10:10] = ["https://missing.example.org/a", "https://news.example.org/never-archived"]
    urls.append(urls[3])
    return [Citation(url=url) for url in urls]


def fetch(run_dir: Path, processes: int, stage: FetchCited | None = None, **options: Any) -> StageResult:
    fetcher = Fetcher(run_dir=run_dir, offline=True, warc_files=(SAMPLE_WARC,), **options)
    context = StageContext(run_dir=run_dir, fetcher=fetcher)
    try:
        with LocalExecutor(processes=processes) as executor:
            return run_stage(stage or FetchCited(), citations(), context, executor=executor)
    finally:
        assert not fetcher.stats or processes == 1  # spread by host, the driver fetched nothing itself
        asyncio.run(fetcher.aclose())


def stage_bytes(run_dir: Path) -> dict[str, bytes]:
    folder = run_dir / "stages" / "fetch_cited"
    files = {name: (folder / name).read_bytes() for name in STAGE_FILES}
    return files | {"run rejects": (run_dir / "rejects.jsonl").read_bytes()}


def test_shards_hold_one_host_group_each_in_input_order(tmp_path: Path) -> None:
    items = [WorkItem(index, citation.url, citation) for index, citation in enumerate(citations())]
    shards, shard_of = host_shards(tmp_path, items, [3, 1])
    assert sorted(item.index for shard in shards for item in shard.items) == list(range(len(items)))
    groups = []
    for number, shard in enumerate(shards):
        assert shard.number == number
        (group,) = {host_group(item.key, 2) for item in shard.items}
        groups.append(group)
        indexes = [item.index for item in shard.items]
        assert indexes == sorted(indexes) and all(shard_of[index] == number for index in indexes)
        assert len(indexes) <= (3 if group == 0 else 1) * SHARD_ITEMS_PER_SLOT
    assert groups[:4] == [0, 1, 0, 1]  # in turn, so that both processes have work
    for group in (0, 1):  # a group's shards follow each other in input order
        mine = [item.index for shard in shards if groups[shard.number] == group for item in shard.items]
        assert mine == sorted(mine)


def test_a_pool_writes_the_stage_one_loop_writes(tmp_path: Path) -> None:
    one = fetch(tmp_path / "one", processes=1)
    two = fetch(tmp_path / "two", processes=2, concurrency=4)
    assert stage_bytes(tmp_path / "one") == stage_bytes(tmp_path / "two")
    assert one.totals.to_dict() | {"wall_seconds": 0} == two.totals.to_dict() | {"wall_seconds": 0}
    assert two.totals.rejects == Counter({"not_in_warc": 2, "duplicate_key": 1, "http_404": 1})
    assert not (tmp_path / "two" / "stages" / "fetch_cited" / "shards").exists()


class Stop(Exception):
    fatal = True  # stops the build instead of rejecting the page


STOP_AT = "https://tvrs.example.org/news/2025/annual-report"


def stopping_extract(url: str, *args: Any, **kwargs: Any) -> Any:
    """extract_document, except that one page stops the build while the file STOP names exists."""
    if url == STOP_AT and Path(os.environ["IRBGEN_TEST_STOP"]).exists():
        raise Stop(url)
    return extract_document(url, *args, **kwargs)


class StoppingFetchCited(FetchCited):
    extract = staticmethod(stopping_extract)


def test_a_stopped_stage_resumes_from_its_complete_shards(tmp_path: Path, monkeypatch: Any) -> None:
    flag = tmp_path / "stop"
    flag.touch()
    monkeypatch.setenv("IRBGEN_TEST_STOP", str(flag))  # the workers inherit it
    run_dir = tmp_path / "two"
    with pytest.raises(Stop):
        fetch(run_dir, processes=2, stage=StoppingFetchCited(), concurrency=2)
    recorded = (run_dir / "stages" / "fetch_cited" / "shards.jsonl").read_text().splitlines()
    assert recorded and not (run_dir / "stages" / "fetch_cited" / "complete").exists()

    flag.unlink()
    again = fetch(run_dir, processes=2, stage=StoppingFetchCited(), concurrency=2)
    assert again.stats.skipped >= len(recorded)  # the complete shards were not run again
    fetch(tmp_path / "one", processes=1)
    assert stage_bytes(run_dir) == stage_bytes(tmp_path / "one")


# -- over the network (loopback) ---------------------------------------------------------------------


class _Pages(ThreadingHTTPServer):
    """A page server on one loopback address that counts requests in flight per Host header."""

    daemon_threads = True

    def __init__(self, address: str) -> None:
        self.lock = threading.Lock()
        self.in_flight: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.requests = 0
        super().__init__((address, 0), _PageHandler)


class _PageHandler(BaseHTTPRequestHandler):
    server: _Pages

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        host = self.headers.get("Host", "")
        with self.server.lock:
            self.server.requests += 1
            self.server.in_flight[host] += 1
            self.server.most[host] = max(self.server.most[host], self.server.in_flight[host])
        time.sleep(0.05)  # requests overlap, so a broken per-host limit shows
        body = (
            f"<html><head><title>{self.path}</title></head><body><article><p>"
            + (f"The page at {self.path} on {host} says something worth citing. " * 20)
            + "</p></article></body></html>"
        )
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with self.server.lock:
            self.server.in_flight[host] -= 1


@pytest.fixture
def two_hosts() -> Iterator[list[_Pages]]:
    """Servers on 127.0.0.1 and 127.0.0.2, whose hosts fall in different groups of two."""
    assert host_group("http://127.0.0.1/", 2) != host_group("http://127.0.0.2/", 2)
    servers = [_Pages(address) for address in ("127.0.0.1", "127.0.0.2")]
    threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


def test_each_host_is_fetched_by_one_process_within_its_limit(
    tmp_path: Path, two_hosts: list[_Pages]
) -> None:
    urls = [
        f"http://{host}:{server.server_port}/page/{n}"
        for n in range(12)
        for host, server in (("127.0.0.1", two_hosts[0]), ("127.0.0.2", two_hosts[1]))
    ]

    def run() -> StageResult:
        fetcher = Fetcher(
            run_dir=tmp_path, allow_private_hosts=True, per_host=2, host_delay=0.0, concurrency=8
        )
        context = StageContext(run_dir=tmp_path, fetcher=fetcher)
        try:
            with LocalExecutor(processes=2) as executor:
                return run_stage(
                    FetchCited(), [Citation(url=url) for url in urls], context, executor=executor
                )
        finally:
            asyncio.run(fetcher.aclose())

    first = run()
    assert first.totals.outputs == len(urls)
    assert [server.requests for server in two_hosts] == [12, 12]
    assert all(most <= 2 for server in two_hosts for most in server.most.values())
    warcs = sorted((tmp_path / "warc").glob("*.warc.gz"))
    writers = {path.name.split("-")[-2] for path in warcs}  # irbgen-<stamp>-<pid>-<serial>.warc.gz
    assert len(writers) == 2 and str(os.getpid()) not in writers
    documents = [json.loads(line)["key"] for line in first.store.outputs_path.read_text().splitlines()]
    assert documents == urls  # in input order, though two processes wrote them

    written = stage_bytes(tmp_path)
    for name in (*STAGE_FILES, "complete", "stats.json"):
        (tmp_path / "stages" / "fetch_cited" / name).unlink()
    run()  # the stage again: every page replayed from the WARCs the two processes wrote
    assert [server.requests for server in two_hosts] == [12, 12]
    assert stage_bytes(tmp_path) == written


def test_a_stage_spread_by_host_without_a_fetcher_is_a_clear_error(tmp_path: Path) -> None:
    with (
        LocalExecutor(processes=2) as executor,
        pytest.raises(IrbgenError, match="fetch_cited .*needs a fetcher"),
    ):
        run_stage(FetchCited(), citations(), StageContext(run_dir=tmp_path), executor=executor)


_LOADS_THE_FETCHER = """
import sys
from irbgen.cli import main
main(sys.argv[1:], standalone_mode=False)
print("fetcher loaded:", "irbgen.web.fetch" in sys.modules)
"""


@pytest.mark.parametrize(("processes", "loaded"), [(2, False), (1, True)])
def test_the_main_process_loads_the_http_stack_only_when_it_fetches(
    tmp_path: Path, processes, loaded
) -> None:
    import subprocess
    import sys

    dump = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
    args = ["build", "--source", "wikipedia-dump", "--offline", "--facts-only", "--dump", str(dump)]
    args += ["--warc", str(SAMPLE_WARC), "--processes", str(processes), "--out", str(tmp_path / "run")]
    done = subprocess.run([sys.executable, "-c", _LOADS_THE_FETCHER, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"fetcher loaded: {loaded}" in done.stdout
    assert (tmp_path / "run" / "documents.jsonl").read_text().count("\n") > 5  # the pages were fetched
