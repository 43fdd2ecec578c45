"""A build that got nothing fails loudly, and validate and eval refuse an empty benchmark."""

from __future__ import annotations

import json
import shutil
import sqlite3
from io import BytesIO
from pathlib import Path

import pytest
from click.testing import CliRunner
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from irbgen.builds import wikipedia
from irbgen.cli import main
from irbgen.web.fetch import Fetcher
from irbgen.web.guard import ResolveError

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
DUMP = SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"
CITED = SAMPLES / "web" / "cited-pages.warc.gz"


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def error_lines(result) -> list[str]:
    assert "Traceback" not in result.output, result.output
    return [line for line in result.output.splitlines() if line.startswith("irbgen: error: ")]


def unrelated_warc(path: Path) -> Path:
    """A WARC holding one page that no sample article cites."""
    with path.open("wb") as handle:
        writer = WARCWriter(handle, gzip=True)
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
        body = BytesIO(b"<html><body><p>Nothing cited here.</p></body></html>")
        writer.write_record(
            writer.create_warc_record(
                "https://unrelated.example/", "response", payload=body, http_headers=headers
            )
        )
    return path


def offline_build(warc: Path, out: Path, *extra: str):
    source = ["--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--warc", warc]
    return run("build", *source, "--out", out, "-q", *extra)


def test_offline_build_without_cited_pages_fails_and_reruns_once_fixed(tmp_path: Path) -> None:
    warc, out = unrelated_warc(tmp_path / "pages.warc.gz"), tmp_path / "run"
    result = offline_build(warc, out)
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.startswith("irbgen: error: 0 of 31 cited pages fetched: 31 not_in_warc; nothing to evaluate")
    assert f"{out / 'rejects.jsonl'}" in line and "rerun with --force" in line
    assert not (out / "benchmark").exists()  # nothing for validate or eval to mistake for a benchmark
    recorded = json.loads((out / "manifest.json").read_text())
    assert recorded["failed"] == line.removeprefix("irbgen: error: ")
    assert recorded["counts"]["documents_fetched"] == 0

    again = offline_build(warc, out)  # resuming repeats the verdict, it does not turn it into a success
    assert again.exit_code == 1 and error_lines(again) == [line]

    shutil.copyfile(CITED, warc)  # the WARC fixed in place: its fingerprint changed
    refused = offline_build(warc, out)
    assert refused.exit_code == 2 and "pass --force" in error_lines(refused)[0]
    fixed = offline_build(warc, out, "--force")
    assert fixed.exit_code == 0, fixed.output
    assert "30 of 31 cited pages fetched" in fixed.output
    assert "failed" not in json.loads((out / "manifest.json").read_text())
    assert run("validate", out / "benchmark").exit_code == 0


def test_online_build_whose_every_fetch_fails_on_dns_fails(tmp_path: Path, monkeypatch) -> None:
    lookups: list[str] = []

    async def no_dns(host: str, port: int) -> list[str]:
        lookups.append(host)
        raise ResolveError(f"{host}: name or service not known")

    made = wikipedia._make_fetcher

    def fetcher(config, run_dir):  # the build's own fetcher, with a resolver that knows no name
        return Fetcher(made(config, run_dir).config, resolver=no_dns, host_delay=0.0)

    monkeypatch.setattr(wikipedia, "_make_fetcher", fetcher)
    out = tmp_path / "run"
    args = ("build", "--source", "wikipedia-dump", "--dump", DUMP, "--out", out, "-q")
    result = run(*args)
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert "0 of 31 cited pages fetched: 31 dns; nothing to evaluate" in line
    assert len(set(lookups)) >= 10
    # The failures are not remembered, so a forced rerun (once the network is back) asks again.
    with sqlite3.connect(out / "warc" / "index.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM failures").fetchone() == (0,)
    lookups.clear()
    forced = run(*args, "--force")
    assert forced.exit_code == 1 and len(set(lookups)) >= 10


def test_a_build_with_no_sample_fails(tmp_path: Path) -> None:
    titles = tmp_path / "titles.txt"
    titles.write_text("No Such Article\n")
    out = tmp_path / "run"
    result = run("build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--warc", CITED,
                 "--titles", titles, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.startswith("irbgen: error: 0 samples from 0 grounded facts: ")
    assert "nothing to evaluate" in line
    facts_only = run("build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--warc", CITED,
                     "--titles", titles, "--facts-only", "--out", tmp_path / "part1", "-q")  # fmt: skip
    assert facts_only.exit_code == 1, facts_only.output
    (line,) = error_lines(facts_only)
    assert line.startswith("irbgen: error: 0 grounded facts: ") and "nothing to evaluate" in line


def test_a_wikidata_build_with_no_sample_fails(tmp_path: Path) -> None:
    wikidata = SAMPLES / "wikidata"
    out = tmp_path / "run"
    result = run("build", "--source", "wikidata-dump", "--dump", wikidata / "wikidata-new.json.bz2",
                 "--min-sitelinks", 1000000, "--out", out, "-q")  # fmt: skip
    assert result.exit_code == 1, result.output
    (line,) = error_lines(result)
    assert line.startswith("irbgen: error: 0 samples from ") and "read:few_sitelinks" in line
    assert "nothing to evaluate" in line and not (out / "benchmark").exists()


@pytest.fixture(scope="module")
def empty_benchmark(tmp_path_factory) -> Path:
    """A benchmark whose files are all well formed but that holds no sample and no query."""
    source = tmp_path_factory.mktemp("b") / "bench"
    assert run("phantom", "--n", 30, "--depth", 4, "--out", source, "-q").exit_code == 0
    from irbgen.benchmark import read_documents, read_manifest, write_benchmark

    empty = source.parent / "empty"
    manifest = read_manifest(source).model_copy(update={"counts": {}, "files": {}, "sizes": {}})
    write_benchmark(empty, list(read_documents(source)), [], manifest)
    return empty


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "{b}"],
        ["eval", "retrieval", "--benchmark", "{b}", "--out", "{out}"],
        ["eval", "qa", "--benchmark", "{b}", "--method", "closed-book", "--model", "m",
         "--base-url", "http://127.0.0.1:9/v1", "--out", "{out}"],
    ],
)  # fmt: skip
def test_an_empty_benchmark_is_refused(command: list[str], empty_benchmark: Path, tmp_path: Path) -> None:
    words = [word.format(b=empty_benchmark, out=tmp_path / "out") for word in command]
    result = CliRunner(env={"OPENAI_API_KEY": "x"}).invoke(main, words)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result)
    assert "no samples and no queries" in line and "nothing to evaluate" in line
    assert not (tmp_path / "out").exists()
