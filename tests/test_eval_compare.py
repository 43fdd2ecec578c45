"""Tests for comparing benchmarks: counts on real phantom benchmarks, worked values on a literal one."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from irbgen.benchmark import write_benchmark
from irbgen.errors import BadInputError, OutputExistsError
from irbgen.eval.compare import answer_type, compare_benchmarks, content_tokens, render_table
from irbgen.schema import Attributes, Document, Manifest, Provenance, Sample

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def phantom(out: Path, n: int, seed: int, depth: int) -> Path:
    command = [sys.executable, "-m", "irbgen", "phantom", "--n", str(n), "--seed", str(seed)]
    command += ["--depth", str(depth), "--out", str(out), "--quiet"]
    subprocess.run(command, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def phantoms(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("phantoms")
    return [phantom(root / "a", 80, 1, 8), phantom(root / "b", 60, 2, 6)]


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def literal_benchmark(path: Path) -> Path:
    """One name, one date and one numeric answer, and a false premise; overlaps 1, 2/3 and 1."""
    provenance = Provenance(generator="test")
    documents = [
        Document(_id="d1", title="Ada", text="Ada Lovelace wrote the first program."),
        Document(_id="d2", title="Ada", text="Lovelace was born in London on 1815-12-10."),
        Document(_id="d3", title="Babbage", text="Babbage had 8 children."),
        Document(_id="d4", title="Unused", text="Nobody asks about this page."),
    ]
    samples = [
        Sample(
            id="s1", question="Who wrote the first program?", answers=["Ada Lovelace"], hops=1,
            difficulty=1, source="phantom", evidence=["d1"], provenance=provenance,
            attributes=Attributes(question_type="who"),
        ),
        Sample(
            id="s2", question="When was Ada Lovelace born?", answers=["1815-12-10"], hops=1,
            difficulty=2, source="phantom", evidence=["d2"], provenance=provenance,
            attributes=Attributes(question_type="when"),
        ),
        Sample(
            id="s3", question="How many children did Babbage have?", answers=["8"], hops=2,
            difficulty=3, source="phantom", evidence=["d3"], provenance=provenance,
            attributes=Attributes(question_type="how_many"),
        ),
        Sample(
            id="s4", question="Who is the wife of Babbage's cat?", answers=[], false_premise=True, hops=2,
            difficulty=3, source="phantom", provenance=provenance,
            attributes=Attributes(question_type="who"),
        ),
    ]  # fmt: skip
    manifest = Manifest(tool_version="0.1.0", source="phantom", name="literal", command="test")
    write_benchmark(path, documents, samples, manifest)
    return path


def test_compare_counts_two_phantom_benchmarks(tmp_path: Path, phantoms: list[Path]) -> None:
    result = compare_benchmarks(phantoms, tmp_path / "cmp", bm25=False)
    assert [profile["name"] for profile in result["benchmarks"]] == ["phantom-n80-s1", "phantom-n60-s2"]
    for bench, profile in zip(phantoms, result["benchmarks"], strict=True):
        samples = lines(bench / "samples.jsonl")
        assert profile["documents"] == len(lines(bench / "corpus.jsonl"))
        assert profile["samples"] == len(samples)
        qrels = (bench / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
        assert profile["qrels"] == len(qrels) - 1
        assert profile["hops"] == {str(k): v for k, v in sorted(Counter(s["hops"] for s in samples).items())}
        difficulty = Counter(s["difficulty"] for s in samples)
        assert profile["difficulty"] == {str(k): v for k, v in sorted(difficulty.items())}
        types = Counter(s["attributes"]["question_type"] for s in samples)
        assert profile["question_types"] == dict(sorted(types.items()))
        answers = [len(s["answers"]) for s in samples]
        assert profile["answers_per_question"]["mean"] == pytest.approx(sum(answers) / len(answers))
        assert profile["answers_per_question"]["max"] == max(answers)
        assert sum(profile["answer_types"].values()) == sum(answers)
        assert profile["answer_types"]["date"] > 0 and profile["answer_types"]["numeric"] > 0
        assert profile["false_premise_share"] == sum(s["false_premise"] for s in samples) / len(samples)
        lengths = [len(s["question"].split()) for s in samples]
        assert profile["question_tokens"]["mean"] == pytest.approx(sum(lengths) / len(lengths))
        overlap = profile["lexical_overlap"]
        assert 0.0 <= overlap["mean"] <= 1.0
        assert overlap["samples"] == sum(1 for s in samples if s["evidence"])
        assert profile["bm25_ndcg@10"] is None
    # different seeds and depths give different benchmarks
    first, second = result["benchmarks"]
    assert (first["documents"], first["samples"]) == (80, 140)
    assert first["hops"] != second["hops"]


def test_compare_writes_markdown_json_and_plot(tmp_path: Path, phantoms: list[Path]) -> None:
    out = tmp_path / "cmp"
    result = compare_benchmarks(phantoms, out, bm25=False)
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "compare.md", "distributions.png"]
    assert json.loads((out / "compare.json").read_text(encoding="utf-8")) == result
    md = (out / "compare.md").read_text(encoding="utf-8")
    assert "| measure | phantom\\-n80\\-s1 | phantom\\-n60\\-s2 |" not in md  # '-' needs no escape
    assert "| measure | phantom-n80-s1 | phantom-n60-s2 |" in md
    first, second = result["benchmarks"]
    assert f"| documents | {first['documents']} | {second['documents']} |" in md
    assert f"| samples | {first['samples']} | {second['samples']} |" in md
    assert "![hops and difficulty distributions](distributions.png)" in md
    data = (out / "distributions.png").read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 5000
    text = render_table(result)
    assert text.splitlines()[0].split() == ["phantom-n80-s1", "phantom-n60-s2"]
    assert "BM25 nDCG@10" in text and "n/a" in text
    # the same inputs give the same files
    again = tmp_path / "again"
    compare_benchmarks(phantoms, again, bm25=False)
    for name in ("compare.md", "compare.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_compare_literal_benchmark_worked_values(tmp_path: Path) -> None:
    bench = literal_benchmark(tmp_path / "bench")
    result = compare_benchmarks([bench], None, bm25=False)
    (profile,) = result["benchmarks"]
    assert profile["documents"] == 4
    assert profile["samples"] == 4
    assert profile["qrels"] == 3
    assert profile["answer_types"] == {"numeric": 1, "date": 1, "name_or_text": 1}
    assert profile["answers_per_question"] == {"mean": 0.75, "median": 1.0, "max": 1}
    assert profile["false_premise"] == 1
    assert profile["false_premise_share"] == 0.25
    assert profile["question_tokens"] == {"mean": 5.75, "median": 5.5}
    assert profile["hops"] == {"1": 2, "2": 2}
    assert profile["difficulty"] == {"1": 1, "2": 1, "3": 2}
    assert profile["question_types"] == {"how_many": 1, "when": 1, "who": 2}
    # s1 {wrote, first, program} all in d1; s2 {ada, lovelace, born}: 2 of 3 in d2; s3 {children, babbage}
    assert profile["lexical_overlap"]["samples"] == 3
    assert profile["lexical_overlap"]["mean"] == pytest.approx((1 + 2 / 3 + 1) / 3)
    assert not (tmp_path / "cmp").exists()


def test_answer_types_and_tokens() -> None:
    assert [answer_type(a) for a in ["3", "-1.5", "1,024", " 42 "]] == ["numeric"] * 4
    assert [answer_type(a) for a in ["1720-08-01", "2024-12-31"]] == ["date", "date"]
    assert [answer_type(a) for a in ["Ada Lovelace", "2024-13-01", "1.2.3", "12 apples", ""]] == [
        "name_or_text"
    ] * 5
    assert content_tokens("Who is the sibling of Zoë's friend, born 1720-08-01?") == {
        "sibling",
        "zoë",
        "friend",
        "born",
        "1720",
        "08",
        "01",
    }


def test_compare_refuses_existing_out_without_force(tmp_path: Path) -> None:
    bench = literal_benchmark(tmp_path / "bench")
    out = tmp_path / "cmp"
    out.mkdir()  # an empty folder may be used
    compare_benchmarks([bench], out, bm25=False)
    with pytest.raises(OutputExistsError):
        compare_benchmarks([bench], out, bm25=False)
    compare_benchmarks([bench], out, force=True, bm25=False)
    assert (out / "compare.md").is_file()
    for target in (bench, bench / "cmp", tmp_path):  # the input, inside it, around it
        with pytest.raises(BadInputError, match=r"--out (is|is inside|holds) the input BENCH_DIRS"):
            compare_benchmarks([bench], target, force=True, bm25=False)


def test_compare_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="no benchmark directories"):
        compare_benchmarks([], None, bm25=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInputError, match="manifest.json: no such file"):
        compare_benchmarks([tmp_path / "empty"], tmp_path / "cmp", bm25=False)
    assert not (tmp_path / "cmp").exists()


def test_compare_runs_bm25(tmp_path: Path) -> None:
    pytest.importorskip("irbgen.eval.retrieval")
    bench = literal_benchmark(tmp_path / "bench")
    (profile,) = compare_benchmarks([bench], None)["benchmarks"]
    assert 0.0 <= profile["bm25_ndcg@10"] <= 1.0
