"""The contamination probe: closed-book marks, `irbgen filter --drop-closed-book`, and compare's share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irbgen.benchmark import read_manifest, read_samples, write_benchmark
from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.eval.compare import compare_benchmarks, render_table
from irbgen.eval.filtering import filter_closed_book
from irbgen.eval.qa.run import QAOptions, closed_book_correct, run_qa
from irbgen.llm.settings import LLMSettings
from irbgen.schema import Document, Hop, Manifest, Provenance, Sample
from irbgen.testing.openai_server import OpenAIStubServer
from irbgen.validation import validate_benchmark

KEY_ENV = "IRBGEN_TEST_CONTAMINATION_KEY"
PROVENANCE = Provenance(generator="test")
OTHER = Manifest(tool_version="0", source="phantom", name="o", command="t")
DOCS = [Document(_id=f"d{n}", title=f"T{n}", text=f"text {n}") for n in range(3)]


def sample(sid: str, question: str, answers: list[str], doc: str) -> Sample:
    hop = Hop(index=0, operation="lookup", question=question, answers=answers, evidence=[doc])
    return Sample(id=sid, question=question, answers=answers, hops=1, source="phantom", evidence=[doc],
                  chain=[hop], provenance=PROVENANCE)  # fmt: skip


SAMPLES = [
    sample("known", "What is the capital of France?", ["Paris"], "d0"),
    sample("partly", "Which cities are in France?", ["Paris", "Lyon"], "d1"),
    sample("unknown", "Who is the friend of Zorblax?", ["Quimby"], "d2"),
]
# What the closed-book model replies: right, half the answer set (F1 2/3), wrong.
REPLIES = {"capital": "Paris", "cities": "Paris", "Zorblax": "Bob"}


def responder(request: dict[str, Any]) -> str:
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    if request.get("response_format"):  # the judge: only "Bob" is correct (to tell judge from F1)
        return json.dumps({"label": "correct" if "Response: Bob" in user else "incorrect"})
    return next(reply for word, reply in REPLIES.items() if word in user)


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    manifest = Manifest(tool_version="0", source="phantom", name="probe", command="t", config={"n": 3})
    write_benchmark(out, DOCS, SAMPLES, manifest, licence="CC0-1.0 for the test.")
    return out


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with OpenAIStubServer(responder) as stub:
        yield stub


def settings(server: OpenAIStubServer, model: str = "memory-model") -> LLMSettings:
    return LLMSettings(base_url=server.base_url, model=model, api_key_env=KEY_ENV, max_retries=1,
                       backoff_base=0.0, timeout=10.0)  # fmt: skip


def marks(out: Path) -> dict[str, Any]:
    rows = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return {row["id"]: row["closed_book_correct"] for row in rows}


def test_closed_book_correct_by_hand() -> None:
    rule = {"by": "f1", "threshold": 0.5}
    assert closed_book_correct({"error": None, "metrics": {"f1": 0.5}}, rule) is True
    assert closed_book_correct({"error": None, "metrics": {"f1": 0.49}}, rule) is False
    assert closed_book_correct({"error": "timeout", "metrics": {"f1": None}}, rule) is None
    judge = {"by": "judge", "threshold": 1.0}
    assert closed_book_correct({"error": None, "metrics": {"f1": 1.0, "judge": 0.5}}, judge) is False
    assert closed_book_correct({"error": None, "metrics": {"f1": 0.0, "judge": 1.0}}, judge) is True
    assert closed_book_correct({"error": None, "metrics": {"f1": 1.0}}, judge) is None  # judge failed


def test_closed_book_marks_by_f1_threshold_and_by_judge(bench: Path, server, tmp_path: Path) -> None:
    out = tmp_path / "closed"
    run_qa(bench, out, QAOptions("closed-book", settings(server)))
    assert marks(out) == {"known": True, "partly": True, "unknown": False}  # F1 1, 2/3, 0 against 0.5
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["closed_book"] == {"by": "f1", "threshold": 0.5, "correct": 2, "scored": 3,
                                      "share": pytest.approx(2 / 3)}  # fmt: skip
    calls = server.requests
    # a stricter threshold is a rerun into the same directory: marks recomputed, no new calls
    run_qa(bench, out, QAOptions("closed-book", settings(server), closed_book_threshold=1.0))
    assert server.requests == calls
    assert marks(out) == {"known": True, "partly": False, "unknown": False}

    judged = tmp_path / "judged"
    options = QAOptions("closed-book", settings(server), judge_settings=settings(server, "judge"),
                        closed_book_by="judge")  # fmt: skip
    run_qa(bench, judged, options)
    assert marks(judged) == {"known": False, "partly": False, "unknown": True}


def test_closed_book_options_are_checked(bench: Path, server, tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="--closed-book-by judge needs --judge-model"):
        run_qa(bench, tmp_path / "a", QAOptions("closed-book", settings(server), closed_book_by="judge"))
    with pytest.raises(BadInputError, match="--closed-book-threshold must be between 0 and 1"):
        run_qa(bench, tmp_path / "b", QAOptions("closed-book", settings(server), closed_book_threshold=2.0))
    assert server.requests == 0


def test_filter_drops_the_closed_book_correct_samples(bench: Path, server, tmp_path: Path) -> None:
    evaluation = tmp_path / "closed"
    run_qa(bench, evaluation, QAOptions("closed-book", settings(server)))
    out = tmp_path / "filtered"
    result = CliRunner().invoke(main, ["filter", str(bench), "--drop-closed-book", str(evaluation),
                                       "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output == (
        f"dropped 2 of 3 evaluated samples that memory-model answered closed-book (f1 >= 0.5); "
        f"wrote 1 samples to {out}\n"
    )
    assert [s.id for s in read_samples(out)] == ["unknown"]
    assert validate_benchmark(out).ok
    assert (out / "corpus.jsonl").read_bytes() == (bench / "corpus.jsonl").read_bytes()
    assert (out / "queries_hops.jsonl").read_text().count("\n") == 1
    manifest = read_manifest(out)
    record = manifest.config["filter"]["drop_closed_book"]
    assert record["model"] == "memory-model" and record["by"] == "f1" and record["threshold"] == 0.5
    assert (record["samples"], record["evaluated"], record["dropped"]) == (3, 3, 2)
    assert manifest.config["n"] == 3 and manifest.counts["dropped_closed_book"] == 2
    assert manifest.name == "probe-no-closed-book" and record["benchmark_command"] == "t"
    assert manifest.command == "irbgen filter bench --drop-closed-book closed --out OUT"
    card = (out / "README.md").read_text()
    assert "memory-model answered closed-book" in card and "`filter`" in card
    assert "CC0-1.0 for the test." in card  # the original card's licence
    # the same inputs give the same bytes
    again = tmp_path / "again"
    filter_closed_book(bench, evaluation, again)
    assert all((again / f).read_bytes() == (out / f).read_bytes() for f in ("manifest.json", "README.md"))


def test_filter_refuses_what_it_cannot_use(bench: Path, server, tmp_path: Path) -> None:
    rag = tmp_path / "rag"
    run_qa(bench, rag, QAOptions("rag", settings(server), k=1))
    with pytest.raises(BadInputError, match="not a closed-book evaluation"):
        filter_closed_book(bench, rag, tmp_path / "x")
    closed = tmp_path / "closed"
    run_qa(bench, closed, QAOptions("closed-book", settings(server)))
    other = tmp_path / "other"
    write_benchmark(other, DOCS, SAMPLES[:2], OTHER)
    with pytest.raises(BadInputError, match="evaluated another benchmark"):
        filter_closed_book(other, closed, tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_compare_shows_the_closed_book_share(bench: Path, server, tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    run_qa(bench, closed, QAOptions("closed-book", settings(server)))
    other = tmp_path / "other"
    write_benchmark(other, DOCS, SAMPLES[2:], OTHER)
    result = compare_benchmarks([bench, other], None, bm25=False, closed_book=[closed])
    shares = [profile["closed_book"] for profile in result["benchmarks"]]
    assert shares[0][0]["share"] == pytest.approx(2 / 3) and shares[0][0]["model"] == "memory-model"
    assert shares[1] == []
    table = render_table(result)
    assert "closed-book share" in table and "0.667 (memory-model)" in table and "n/a" in table
    assert "closed-book share" not in render_table(compare_benchmarks([bench], None, bm25=False))
    with pytest.raises(BadInputError, match="none of the benchmarks given"):
        compare_benchmarks([other], None, bm25=False, closed_book=[closed])
    cli = CliRunner().invoke(main, ["compare", str(bench), "--no-bm25", "--closed-book", str(closed)])
    assert cli.exit_code == 0, cli.output
    assert "0.667 (memory-model)" in cli.output
