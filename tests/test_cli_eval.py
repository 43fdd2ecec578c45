"""The evaluation commands end to end, as the README runs them: phantom -> eval -> report -> compare."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.testing.openai_server import OpenAIStubServer


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def benchmarks(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("benchmarks")
    first, second = root / "a", root / "b"
    assert run("phantom", "--n", 80, "--seed", 1, "--depth", 8, "--out", first, "-q").exit_code == 0
    assert run("phantom", "--n", 60, "--seed", 2, "--depth", 6, "--out", second, "-q").exit_code == 0
    return first, second


def _first_title(request: dict) -> str:
    """Answer with the first article title shown in the prompt, or say so."""
    text = request["messages"][-1]["content"]
    found = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
    return f"Answer: {found.group(1)}" if found else "Answer: I don't know"


def test_retrieval_qa_report_and_compare(benchmarks, tmp_path, monkeypatch):
    first, second = benchmarks
    bm25 = run(
        "eval",
        "retrieval",
        "--benchmark",
        first,
        "--retriever",
        "bm25",
        "--k",
        10,
        "--out",
        tmp_path / "bm25",
    )
    assert bm25.exit_code == 0, bm25.output
    assert "nDCG@10" in bm25.output and "trec_eval semantics" in bm25.output
    metrics = json.loads((tmp_path / "bm25" / "metrics.json").read_text())
    assert 0 < metrics["overall"]["nDCG@10"] <= 1 and metrics["queries"] == 140

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-written")
    with OpenAIStubServer(responder=_first_title) as server:
        args = ["--benchmark", first, "--model", "stub", "--base-url", server.base_url, "--limit", 12]
        rag = run("eval", "qa", "--method", "cot-rag", *args, "--out", tmp_path / "rag")
        assert rag.exit_code == 0, rag.output
        served = server.requests
        assert served == 12
        again = run("eval", "qa", "--method", "cot-rag", *args, "--out", tmp_path / "rag")
        assert again.exit_code == 0 and server.requests == served  # resumed: nothing asked twice
    predictions = (tmp_path / "rag" / "predictions.jsonl").read_text().splitlines()
    assert len(predictions) == 12
    assert not any(
        "sk-test-never-written" in p.read_text(errors="ignore")
        for p in (tmp_path / "rag").iterdir()
        if p.is_file()
    )

    report = run("report", tmp_path / "bm25", tmp_path / "rag", "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    assert {"report.md", "report.html"} <= {p.name for p in (tmp_path / "report").iterdir()}
    assert any(p.suffix == ".png" for p in (tmp_path / "report").iterdir())

    compared = run("compare", first, second, "--out", tmp_path / "compare")
    assert compared.exit_code == 0, compared.output
    assert "BM25 nDCG@10" in compared.output
    assert (tmp_path / "compare" / "compare.md").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "retrieval", "--retriever", "tfidf"], "'tfidf' is not one of 'bm25', 'dense', 'hybrid'."),
        (["eval", "qa", "--method", "guess", "--model", "m"], "'guess' is not one of 'closed-book', 'cot', "),
    ],
)
def test_unknown_names_exit_2(benchmarks, tmp_path, args, message):
    result = run(*args, "--benchmark", benchmarks[0], "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert message in result.output.splitlines()[-1]  # click's usage error, listing the choices
    assert not (tmp_path / "out").exists()


def test_measures_by_name(benchmarks, tmp_path):
    out = tmp_path / "asked"
    asked = "nDCG@10 R@100 P@5 AP RR@10 Judged@10"
    result = run("eval", "retrieval", "--benchmark", benchmarks[0], "--measures", asked, "--out", out, "-q")
    assert result.exit_code == 0, result.output
    metrics = json.loads((out / "metrics.json").read_text())
    assert list(metrics["overall"]) == asked.split()
    assert all(list(cells) == [*asked.split(), "count"] for cells in metrics["by"]["hops"].values())
    printed = result.output.split(": ", 1)[1].split(" (written")[0]
    assert [pair.split()[0] for pair in printed.split(", ")] == asked.split()
    config = json.loads((out / "config.json").read_text())
    assert config["measures"] == asked.split() and config["k"] == 100  # R@100 deepens the run
    report = run("report", out, "--out", tmp_path / "report")
    assert report.exit_code == 0, report.output
    table = (tmp_path / "report" / "report.md").read_text()
    assert all(name in table for name in asked.split())


@pytest.mark.parametrize("asked", ["nDCG@10 Foo@10", "nDCG@10 P@x", ""])
def test_an_unknown_measure_exits_2_in_one_line(benchmarks, tmp_path, asked):
    args = ["--benchmark", benchmarks[0], "--measures", asked, "--out", tmp_path / "o"]
    result = run("eval", "retrieval", *args)
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    bad = asked.split()[1] if asked else None
    assert (f"'{bad}'" if bad else "no measures given") in result.output
    assert not (tmp_path / "o").exists()


def test_not_a_benchmark_exits_2(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("eval", "retrieval", "--benchmark", tmp_path / "empty", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "empty" in result.output


def test_missing_key_and_unreachable_endpoint(benchmarks, tmp_path, monkeypatch):
    monkeypatch.delenv("IRBGEN_TEST_KEY", raising=False)
    missing = run(
        "eval",
        "qa",
        "--benchmark",
        benchmarks[0],
        "--method",
        "closed-book",
        "--model",
        "m",
        "--base-url",
        "https://api.example.invalid/v1",
        "--api-key-env",
        "IRBGEN_TEST_KEY",
        "--out",
        tmp_path / "k",
    )
    assert missing.exit_code == 2 and "IRBGEN_TEST_KEY" in missing.output

    unreachable = run(
        "eval",
        "qa",
        "--benchmark",
        benchmarks[0],
        "--method",
        "closed-book",
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--out",
        tmp_path / "u",
    )
    assert unreachable.exit_code == 1
    assert "cannot reach http://127.0.0.1:9/v1" in unreachable.output
    assert len(unreachable.output.strip().splitlines()) == 1
