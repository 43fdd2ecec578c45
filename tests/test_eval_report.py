"""Tests for the evaluation report: files, tables, charts, escaping and errors, on literal eval dirs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from irbgen.benchmark import write_benchmark
from irbgen.errors import BadInputError, MissingExtraError, OutputExistsError
from irbgen.eval.plots import Panel, Series, bar_chart, line_chart
from irbgen.eval.report import read_eval, write_report
from irbgen.schema import Document, Manifest, Provenance, Sample

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def make_benchmark(path: Path) -> Path:
    """Three documents; answer counts 1, 2, 1 and one false premise (0 answers)."""
    provenance = Provenance(generator="test")
    documents = [
        Document(_id="d1", title="Ada", text="Ada Lovelace wrote the first program."),
        Document(_id="d2", title="Babbage", text="Babbage designed the Analytical Engine."),
        Document(_id="d3", title="Zoe", text="Zoe is a friend of Ada."),
    ]
    samples = [
        Sample(
            id="q1", question="Who wrote the first program?", answers=["Ada Lovelace"], hops=1,
            difficulty=1, source="phantom", evidence=["d1"], provenance=provenance,
        ),
        Sample(
            id="q2", question="Who are the friends of Ada?", answers=["Zoe", "Babbage"], hops=2,
            difficulty=2, source="phantom", evidence=["d3", "d2"], provenance=provenance,
        ),
        Sample(
            id="q3", question="What did Babbage design?", answers=["the Analytical Engine"], hops=1,
            difficulty=1, source="phantom", evidence=["d2"], provenance=provenance,
        ),
        Sample(
            id="q4", question="Who is the cat of Zoe?", answers=[], false_premise=True, hops=1,
            difficulty=3, source="phantom", provenance=provenance,
        ),
    ]  # fmt: skip
    manifest = Manifest(tool_version="0.1.0", source="phantom", name="tiny", command="test")
    write_benchmark(path, documents, samples, manifest)
    return path


def make_eval(
    path: Path,
    config: dict[str, Any],
    metrics: dict[str, Any],
    rows: list[dict[str, Any]] | None = None,
) -> Path:
    path.mkdir(parents=True)
    write_json(path / "config.json", config)
    write_json(path / "metrics.json", metrics)
    lines = "".join(json.dumps(row) + "\n" for row in rows or [])
    (path / "per_query.jsonl").write_text(lines, encoding="utf-8")
    return path


def retrieval_eval(path: Path, bench: Path | str, retriever: str, scale: float) -> Path:
    """A retrieval run over q1..q3: nDCG by hops 1 -> 0.25*scale (2 queries), 2 -> 1.0*scale (1 query)."""
    config = {
        "kind": "retrieval",
        "benchmark": str(bench),
        "benchmark_name": "tiny",
        "retriever": retriever,
        "k": 10,
        "irbgen_version": "0.1.0",
        "notes": [f"{retriever} ran on whole documents"],
    }
    metrics = {
        "queries": 3,
        "overall": {"nDCG@10": 0.5 * scale, "Recall@10": 0.75},
        "by": {
            "hops": {
                "1": {"nDCG@10": 0.25 * scale, "Recall@10": 0.5, "count": 2},
                "2": {"nDCG@10": 1.0 * scale, "Recall@10": 1.0, "count": 1},
            },
            "question_type": {"who": {"nDCG@10": 0.5 * scale, "Recall@10": 0.75, "count": 3}},
            "topic": {
                "<b>art</b>": {"nDCG@10": 0.1 * scale, "Recall@10": 0.5, "count": 1},
                "science|math": {"nDCG@10": 0.7 * scale, "Recall@10": 0.875, "count": 2},
            },
        },
        "notes": [],
    }
    return make_eval(path, config, metrics)


def qa_eval(path: Path, bench: Path | str) -> Path:
    config = {
        "kind": "qa",
        "benchmark": str(bench),
        "benchmark_name": "tiny",
        "method": "rag",
        "model": "gpt-x",
        "k": 4,
        "irbgen_version": "0.1.0",
        "notes": [],
    }
    metrics = {
        "queries": 4,
        "overall": {"f1": 0.625, "em": 0.5, "judge": 0.75},
        "by": {
            "difficulty": {
                "1": {"f1": 0.75, "em": 0.5, "judge": 1.0, "count": 2},
                "2": {"f1": 0.5, "em": 0.5, "judge": 0.5, "count": 1},
                "3": {"f1": 0.5, "em": 0.5, "judge": 0.5, "count": 1},
            },
            "hops": {
                "1": {"f1": 0.6666, "em": 0.3333, "judge": 0.6666, "count": 3},
                "2": {"f1": 0.5, "em": 1.0, "judge": 1.0, "count": 1},
            },
        },
        "notes": ["judge: one model"],
    }
    return make_eval(path, config, metrics)


@pytest.fixture()
def runs(tmp_path: Path) -> list[Path]:
    bench = make_benchmark(tmp_path / "bench")
    return [
        retrieval_eval(tmp_path / "eval-bm25", bench, "bm25", 1.0),
        retrieval_eval(tmp_path / "eval-dense", bench, "dense", 0.5),
        qa_eval(tmp_path / "eval-qa", bench),
    ]


def test_report_writes_markdown_html_and_charts(tmp_path: Path, runs: list[Path]) -> None:
    out = write_report(runs, tmp_path / "report")
    assert out == tmp_path / "report"
    names = sorted(path.name for path in out.iterdir())
    assert names == [
        "answers-histogram.png",
        "qa-by-difficulty.png",
        "qa-by-hops.png",
        "report.html",
        "report.md",
        "retrieval-by-hops.png",
        "retrieval-by-topic.png",
        "significance.json",
    ]  # question_type has one value only: no chart
    for name in names:
        if name.endswith(".png"):
            data = (out / name).read_bytes()
            assert data.startswith(PNG_SIGNATURE)
            assert len(data) > 5000
            assert b"Software" not in data
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report")]


def test_report_tables_hold_the_numbers(tmp_path: Path, runs: list[Path]) -> None:
    md = (write_report(runs, tmp_path / "report") / "report.md").read_text(encoding="utf-8")
    # overall: retrieval measures, then answer measures, then the judge
    assert "| run | queries | nDCG@10 | Recall@10 |" in md
    assert "| bm25 | 3 | 0.5000 | 0.7500 |" in md
    assert "| dense | 3 | 0.2500 | 0.7500 |" in md
    assert "| run | queries | f1 | em | judge |" in md
    assert "| rag/gpt-x | 4 | 0.6250 | 0.5000 | 0.7500 |" in md
    # per attribute value per run, with counts
    assert "| hops | run | queries | nDCG@10 | Recall@10 |" in md
    assert "| 1 | bm25 | 2 | 0.2500 | 0.5000 |" in md
    assert "| 1 | dense | 2 | 0.1250 | 0.5000 |" in md
    assert "| 2 | bm25 | 1 | 1.0000 | 1.0000 |" in md
    assert "| difficulty | run | queries | f1 | em | judge |" in md
    assert "| 3 | rag/gpt-x | 1 | 0.5000 | 0.5000 | 0.5000 |" in md
    # answer-count histogram of the benchmark: no answer (the false premise) once, 1 twice, 2 once
    assert "| answers | tiny |" in md
    assert "| (empty) | 1 |\n| 1 | 2 |\n| 2 | 1 |" in md
    # images and notes
    assert "![F1, EM, judge by difficulty](qa-by-difficulty.png)" in md
    assert "- bm25: bm25 ran on whole documents" in md
    assert "- rag/gpt-x: judge: one model" in md
    # values in numeric order: hops 1 before 2
    assert md.index("| 1 | bm25 | 2 |") < md.index("| 2 | bm25 | 1 |")


def test_report_escapes_markdown_and_html(tmp_path: Path, runs: list[Path]) -> None:
    out = write_report(runs, tmp_path / "report")
    md = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "\\<b\\>art\\</b\\>" in md and "<b>art</b>" not in md
    assert "science\\|math" in md
    assert "&lt;b&gt;art&lt;/b&gt;" in page and "<b>art</b>" not in page
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<td>0.6250</td>" in page  # the same numbers as the Markdown
    assert '<img src="qa-by-hops.png"' in page
    assert "http" not in page  # self-contained: no external style sheet or script


def test_report_is_deterministic(tmp_path: Path, runs: list[Path]) -> None:
    first = write_report(runs, tmp_path / "a")
    second = write_report(runs, tmp_path / "b")
    for path in sorted(first.iterdir()):
        assert path.read_bytes() == (second / path.name).read_bytes(), path.name


def test_report_of_a_non_eval_dir_names_it(tmp_path: Path, runs: list[Path]) -> None:
    bench = tmp_path / "bench"
    with pytest.raises(BadInputError, match="config.json: no such file"):
        write_report([runs[0], bench], tmp_path / "report")
    with pytest.raises(BadInputError, match="not a directory"):
        write_report([tmp_path / "missing"], tmp_path / "report")
    assert not (tmp_path / "report").exists()


def test_report_rejects_bad_eval_files(tmp_path: Path) -> None:
    bad_kind = make_eval(tmp_path / "kind", {"kind": "ranking"}, {"overall": {}})
    with pytest.raises(BadInputError, match=r"kind\W+config.json: kind is 'ranking'"):
        read_eval(bad_kind)
    bad_number = make_eval(tmp_path / "num", {"kind": "qa"}, {"overall": {"f1": "high"}})
    with pytest.raises(BadInputError, match=r"metrics.json: overall.f1: 'high' is not a finite number"):
        read_eval(bad_number)
    broken = make_eval(tmp_path / "json", {"kind": "qa"}, {})
    (broken / "metrics.json").write_text("{", encoding="utf-8")
    with pytest.raises(BadInputError, match="metrics.json: invalid JSON"):
        read_eval(broken)


def test_report_refuses_existing_out_without_force(tmp_path: Path, runs: list[Path]) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "keep.txt").write_text("x", encoding="utf-8")
    for force in (False, True):  # a folder irbgen did not write is never replaced
        with pytest.raises(BadInputError, match=r"holds files that are not a report \(keep.txt\)"):
            write_report(runs, out, force=force)
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    (out / "keep.txt").unlink()
    write_report(runs, out)  # an empty folder may be used
    with pytest.raises(OutputExistsError):
        write_report(runs, out)
    (out / "report.md").write_text("old", encoding="utf-8")
    write_report(runs, out, force=True)
    assert (out / "report.md").read_text(encoding="utf-8") != "old"
    with pytest.raises(BadInputError, match="--out is the input EVAL_DIRS"):
        write_report(runs, runs[0], force=True)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_report_without_the_benchmark_says_so(tmp_path: Path) -> None:
    run = retrieval_eval(tmp_path / "eval", tmp_path / "gone", "bm25", 1.0)
    out = write_report([run], tmp_path / "report")
    md = (out / "report.md").read_text(encoding="utf-8")
    assert not (out / "answers-histogram.png").exists()
    assert "Benchmark not found for bm25" in md


def test_report_finds_a_benchmark_relative_to_the_run(tmp_path: Path) -> None:
    make_benchmark(tmp_path / "bench")
    run = qa_eval(tmp_path / "eval", "../bench")
    cwd = os.getcwd()
    try:
        os.chdir("/")
        out = write_report([run], tmp_path / "report")
    finally:
        os.chdir(cwd)
    assert (out / "answers-histogram.png").is_file()


def test_report_groups_per_query_when_metrics_have_no_breakdown(tmp_path: Path) -> None:
    rows = [
        {"query_id": "a", "attributes": {"hops": "1"}, "metrics": {"f1": 1.0}},
        {"query_id": "b", "attributes": {"hops": "1"}, "metrics": {"f1": 0.0}},
        {"query_id": "c", "attributes": {"hops": "2"}, "metrics": {"f1": 0.5}},
    ]
    config = {"kind": "qa", "method": "closed-book", "model": "m"}
    run = make_eval(tmp_path / "eval", config, {"queries": 3, "overall": {"f1": 0.5}}, rows)
    md = (write_report([run], tmp_path / "report") / "report.md").read_text(encoding="utf-8")
    assert "| 1 | closed-book/m | 2 | 0.5000 |" in md
    assert "| 2 | closed-book/m | 1 | 0.5000 |" in md


def test_report_labels_collide_then_differ(tmp_path: Path) -> None:
    bench = make_benchmark(tmp_path / "bench")
    first = retrieval_eval(tmp_path / "one", bench, "bm25", 1.0)
    second = retrieval_eval(tmp_path / "two", bench, "bm25", 0.5)
    (tmp_path / "x").mkdir()
    third = retrieval_eval(tmp_path / "x" / "one", bench, "bm25", 0.25)
    out = write_report([first, second, third], tmp_path / "report")
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| bm25 (one) \\#1 | 3 | 0.5000 | 0.7500 |" in md
    assert "| bm25 (two) | 3 | 0.2500 | 0.7500 |" in md
    assert "| bm25 (one) \\#2 | 3 | 0.1250 | 0.7500 |" in md


def test_plots_show_text_literally(tmp_path: Path) -> None:
    series = (
        Series("_underscore", (("$5 bill", 0.5), ("a_b", 0.25))),
        Series("costs $3 and $4", (("$5 bill", 1.0),)),
    )
    panel = Panel("price in $", "$x$", "share", series)
    for path in (line_chart(tmp_path / "l.png", [panel]), bar_chart(tmp_path / "b.png", panel)):
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 5000


def test_plots_without_matplotlib_say_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    panel = Panel("t", "x", "y", (Series("a", (("1", 1.0),)),))
    with pytest.raises(MissingExtraError, match=r"module 'matplotlib' is missing.*pip install -e '\.'"):
        bar_chart(tmp_path / "b.png", panel)


def test_report_reads_a_real_retrieval_run(tmp_path: Path) -> None:
    retrieval = pytest.importorskip("irbgen.eval.retrieval")
    bench = make_benchmark(tmp_path / "bench")
    metrics = retrieval.evaluate_retrieval(bench, tmp_path / "eval", retriever="bm25", k=10)
    md = (write_report([tmp_path / "eval"], tmp_path / "report") / "report.md").read_text(encoding="utf-8")
    assert f"| {metrics['overall']['nDCG@10']:.4f} |" in md
    assert (tmp_path / "report" / "retrieval-by-hops.png").is_file()
