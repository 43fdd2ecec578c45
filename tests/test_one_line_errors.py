"""Every case the run-integrity issue found with a traceback or a late refusal: one line, exit 2, early."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.errors import redact
from irbgen.testing.openai_server import OpenAIStubServer

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
DUMP = SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def one_line(result, code: int = 2) -> str:
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == code, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("irbgen: error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bench"
    assert run("phantom", "--n", 30, "--depth", 4, "--out", out, "-q").exit_code == 0
    return out


@pytest.fixture(scope="module")
def server():
    with OpenAIStubServer() as stub:
        yield stub


def qa(bench: Path, out: Path, url: str, *extra: object):
    args = ["--benchmark", bench, "--method", "closed-book", "--model", "m", "--base-url", url, "--out", out]
    return run("eval", "qa", *args, *extra)


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--concurrency", 0, "--concurrency: "),
        ("--timeout", 0, "--timeout: "),
        ("--timeout", -1, "--timeout: "),
        ("--max-cost", -1, "--max-cost: "),
    ],
)
def test_eval_qa_bad_limits(bench, server, tmp_path, flag, value, says):
    assert says in one_line(qa(bench, tmp_path / "out", server.base_url, flag, value))
    assert server.requests == 0


def test_eval_qa_cache_dir_that_is_a_file(bench, server, tmp_path):
    file = tmp_path / "file"
    file.write_text("x")
    line = one_line(qa(bench, tmp_path / "out", server.base_url, "--cache-dir", file))
    assert "exists and is not a directory (--cache-dir)" in line


def test_eval_qa_unknown_retriever_leaves_nothing_behind(bench, server, tmp_path):
    out = tmp_path / "out"
    result = run("eval", "qa", "--benchmark", bench, "--method", "rag", "--model", "m",
                 "--base-url", server.base_url, "--retriever", "foo", "--out", out)  # fmt: skip
    assert result.exit_code == 2  # click lists the choices
    assert result.output.splitlines()[-1].endswith("'foo' is not one of 'bm25', 'dense', 'hybrid'.")
    assert not out.exists()


@pytest.mark.parametrize("command", ["build", "export"])
def test_out_that_is_a_file(bench, tmp_path, command):
    file = tmp_path / "file"
    file.write_text("mine")
    if command == "build":
        result = run("build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--out", file)
    else:
        result = run("export", bench, "--format", "parquet", "--out", file)
    assert str(file) in one_line(result)
    assert file.read_text() == "mine"


def read_only_dir(tmp_path: Path) -> Path:
    """A folder this process cannot write in: a 0555 folder, or /sys when running as root."""
    if os.geteuid() == 0:
        return Path("/sys")
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    return folder


@pytest.mark.parametrize("command", ["phantom", "build", "export", "eval retrieval", "eval qa"])
def test_a_read_only_output_folder(bench, server, tmp_path, command):
    out = read_only_dir(tmp_path) / "irbgen-out"
    args = {
        "phantom": ["phantom", "--n", 20, "--depth", 3, "-q", "--out", out],
        "build": ["build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--out", out],
        "export": ["export", bench, "--format", "parquet", "--out", out],
        "eval retrieval": ["eval", "retrieval", "--benchmark", bench, "--out", out],
    }
    result = qa(bench, out, server.base_url) if command == "eval qa" else run(*args[command])
    assert str(out.parent) in one_line(result)


def test_eval_retrieval_huge_k(bench, tmp_path):
    result = run(
        "eval", "retrieval", "--benchmark", bench, "--k", "99999999999999999999999", "--out", tmp_path / "o"
    )
    assert "k must be at most 1,000,000" in one_line(result)


def test_phantom_impossible_requests_are_refused_by_arithmetic(tmp_path):
    assert "--depth 100000: at most" in one_line(run("phantom", "--depth", 100000, "--out", tmp_path / "a"))
    line = one_line(run("phantom", "--n", 50, "--questions-per-template", 10000, "--out", tmp_path / "b"))
    assert "--questions-per-template 10000: template" in line and "distinct questions" in line
    line = one_line(run("phantom", "--n", 50, "--questions-per-template", 1_000_000, "--out", tmp_path / "c"))
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()


def test_phantom_binary_config_and_vocabulary(tmp_path):
    binary = tmp_path / "config.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage\x81")
    assert "not UTF-8 text" in one_line(run("phantom", "--config", binary, "--out", tmp_path / "a"))
    vocab = tmp_path / "vocab"
    vocab.mkdir()
    for name in ("first_names_female", "first_names_male", "surnames", "occupations", "hobbies"):
        (vocab / f"{name}.txt").write_bytes(b"\xff\xfe\x00\x81")
    assert "not UTF-8 text" in one_line(run("phantom", "--vocab-dir", vocab, "--out", tmp_path / "b"))


def test_compare_a_benchmark_without_samples(bench, tmp_path):
    from irbgen.benchmark import read_documents, read_manifest, write_benchmark

    empty = tmp_path / "empty"  # a build no longer writes one (it fails), but an older one may exist
    manifest = read_manifest(bench).model_copy(update={"counts": {}, "files": {}, "sizes": {}})
    write_benchmark(empty, list(read_documents(bench)), [], manifest)
    assert "an empty benchmark: no samples and no queries" in one_line(run("compare", empty))  # no BM25 run
    result = run("compare", "--no-bm25", empty)
    assert result.exit_code == 0, result.output
    assert "hops (mean)" in result.output and "n/a" in result.output


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/v1", "file:///etc/passwd", "127.0.0.1:8000"])
def test_a_base_url_that_is_not_http_is_refused_before_any_work(bench, tmp_path, url):
    assert "only http and https" in one_line(qa(bench, tmp_path / "qa", url))
    result = run("build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--base-url", url,
                 "--model", "m", "--out", tmp_path / "run")  # fmt: skip
    assert "only http and https" in one_line(result)
    assert not (tmp_path / "qa").exists() and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("flag", "value", "says"),
    [
        ("--reference-date", "2020-13-45", "--reference-date '2020-13-45': expected YYYY-MM-DD"),
        ("--created-after", "yesterday", "--created-after: not an ISO 8601 date"),
        ("--titles", "missing.txt", "missing.txt: cannot read --titles"),
    ],
)
def test_bad_values_are_refused_before_the_first_stage(tmp_path, flag, value, says):
    out = tmp_path / "run"
    result = run(
        "build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", flag, value, "--out", out
    )
    assert says in one_line(result)
    assert not out.exists()  # no stage ran, no directory was made


@pytest.mark.parametrize("damage", ["random", "truncated"])
def test_a_corrupt_warc_is_refused(tmp_path, damage):
    warc = tmp_path / "pages.warc.gz"
    good = (SAMPLES / "web" / "cited-pages.warc.gz").read_bytes()
    warc.write_bytes(os.urandom(5000) if damage == "random" else good[: len(good) // 2])
    out = tmp_path / "run"
    result = run(
        "build", "--source", "wikipedia-dump", "--dump", DUMP, "--offline", "--warc", warc, "--out", out
    )
    assert f"{warc}: " in one_line(result) and "WARC" in one_line(result)
    assert not out.exists()


def test_a_key_inside_the_base_url_is_never_printed(bench, tmp_path):
    with socket.socket() as closed:  # a loopback port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://user:SECRETKEY@127.0.0.1:{port}/v1"
    result = qa(bench, tmp_path / "qa", url)
    line = one_line(result, 1)
    assert "cannot reach http://[redacted]@127.0.0.1" in line and "SECRETKEY" not in result.output
    assert redact("see https://a:b@h/x and ftp://k@h") == "see https://[redacted]@h/x and ftp://[redacted]@h"


def test_a_key_inside_a_url_is_not_published_in_the_benchmark(tmp_path):
    from irbgen.benchmark import read_manifest, write_benchmark
    from irbgen.schema import Manifest

    manifest = Manifest(tool_version="t", source="phantom", name="n", command="c",
                        config={"base_url": "https://user:SECRETKEY@llm.example/v1"})  # fmt: skip
    write_benchmark(tmp_path / "b", [], [], manifest)
    assert "SECRETKEY" not in (tmp_path / "b" / "manifest.json").read_text()
    assert read_manifest(tmp_path / "b").config["base_url"] == "https://[redacted]@llm.example/v1"
    assert "an empty benchmark" in one_line(run("validate", tmp_path / "b"))  # its only problem


def test_a_key_inside_a_url_never_reaches_a_run_manifest(tmp_path):
    from irbgen.builds.output import BuildOutput, RunManifest, write_output

    for source in ("wikipedia", "wikidata"):
        manifest = RunManifest(
            source=source, config={"base_url": "https://user:SECRETKEY@llm.example/v1"}, counts={}
        )
        write_output(BuildOutput([], [], manifest, card=None), tmp_path / "benchmark", tmp_path)
        text = (tmp_path / "manifest.json").read_text()
        assert "SECRETKEY" not in text and "https://[redacted]@llm.example/v1" in text
