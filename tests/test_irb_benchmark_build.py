"""`irbgen build --source wikipedia-dump` part 2 end to end: the sample dump to a benchmark, then eval."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.irb.transforms import relative_time
from irbgen.text import contains_answer

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DUMP = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
SAMPLE_WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"
BUILD = ["build", "--source", "wikipedia-dump", "--warc", SAMPLE_WARC, "--offline"]


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("irb") / "run"
    result = run(*BUILD, "--dump", SAMPLE_DUMP, "--out", out)
    assert result.exit_code == 0, result.output
    assert "single-hop" in result.output and "false premise" in result.output
    return out


def test_sample_dump_gives_a_valid_benchmark_with_all_three_kinds(sample_run):
    bench = sample_run / "benchmark"
    assert run("validate", bench).exit_code == 0
    samples = lines(bench / "samples.jsonl")
    corpus = {doc["_id"] for doc in lines(bench / "corpus.jsonl")}
    kinds = {sample["attributes"]["question_type"] for sample in samples}
    assert kinds == {"single_hop", "multi_hop", "false_premise"}
    for sample in samples:
        assert sample["evidence"] and set(sample["evidence"]) <= corpus
        assert sample["hops"] == len(sample["chain"]) and 1 <= sample["hops"] <= 2
        for hop in sample["chain"]:
            assert hop["question"] and set(hop["evidence"]) <= set(sample["evidence"])
        answer = sample["attributes"]["extra"].get("premise_answer") or sample["answers"][0]
        assert not contains_answer(sample["question"], answer), sample["question"]
        if sample["false_premise"]:
            assert sample["answers"] == []
            assert any(
                change["kind"] == "false_premise" for change in sample["attributes"]["extra"]["changes"]
            )
    # The 20% share is set on plans; the question gates then reject some of each kind, and with about
    # 25 samples one question moves the share by 4 points.
    share = sum(sample["false_premise"] for sample in samples) / len(samples)
    assert 0.12 <= share <= 0.3
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["source"] == "wikipedia" and manifest["counts"]["samples"] == len(samples)
    assert manifest["counts"]["documents"] == manifest["counts"]["documents_fetched"]  # every fetched page
    assert "plans:no_maskable_node" in manifest["rejects"]
    assert str(REPO) not in (bench / "manifest.json").read_text()  # file names, not local paths


def test_run_manifest_accounts_for_every_graph_plan_and_question(sample_run):
    manifest = json.loads((sample_run / "manifest.json").read_text())
    counts, rejects = manifest["counts"], manifest["rejects"]
    graph_rejects = sum(v for k, v in rejects.items() if k.startswith("knowledge_graph:"))
    assert counts["knowledge_graphs"] + graph_rejects == counts["facts"]
    question_rejects = sum(v for k, v in rejects.items() if k.startswith("questions:"))
    assert counts["questions"] + question_rejects == counts["plans"] == counts["samples"] + question_rejects
    assert counts["rejects"] == len(lines(sample_run / "rejects.jsonl"))


def test_the_reference_date_is_in_every_sample_and_in_the_card(sample_run, tmp_path):
    """A model can be told the date the relative dates count from: each sample's attributes, the card's
    text and settings, and the benchmark manifest (which `irbgen eval qa` reads) give it."""
    as_of = json.loads((sample_run / "manifest.json").read_text())["reference_date"]
    bench = sample_run / "benchmark"
    samples = lines(bench / "samples.jsonl")
    assert {sample["attributes"]["extra"]["as_of"] for sample in samples} == {as_of} == {"2025-06-18"}
    card = (bench / "README.md").read_text()
    assert f"from the reference date {as_of}" in card and f"| `reference_date` | {as_of} |" in card
    assert f"--reference-date {as_of} " in card  # the rebuild keeps the date, whatever revisions come later
    assert json.loads((bench / "manifest.json").read_text())["config"]["reference_date"] == as_of
    changes = [
        c for s in samples for c in s["attributes"]["extra"]["changes"] if c["rule"] == "relative_date"
    ]
    assert changes and all(
        relative_time(c["node"], date.fromisoformat(as_of)) == c["replacement"] for c in changes
    )

    dated = tmp_path / "dated"
    args = ["--from-facts", sample_run, "--reference-date", "2021-12-01", "--out", dated]
    assert run("build", "--source", "wikipedia-dump", *args).exit_code == 0
    samples = lines(dated / "benchmark" / "samples.jsonl")
    assert {sample["attributes"]["extra"]["as_of"] for sample in samples} == {"2021-12-01"}
    assert "from the reference date 2021-12-01" in (dated / "benchmark" / "README.md").read_text()


def test_eval_retrieval_runs_on_the_built_benchmark(sample_run, tmp_path):
    out = tmp_path / "eval"
    result = run(
        "eval", "retrieval", "--benchmark", sample_run / "benchmark", "--retriever", "bm25", "--out", out
    )
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output
    assert (out / "metrics.json").exists() or any(out.iterdir())


def test_restart_from_facts_gives_the_same_benchmark_and_seed_changes_it(sample_run, tmp_path):
    again = tmp_path / "again"
    result = run("build", "--source", "wikipedia-dump", "--from-facts", sample_run, "--out", again)
    assert result.exit_code == 0, result.output
    assert "facts and" in result.output  # part 1 was skipped
    for name in ("samples.jsonl", "corpus.jsonl", "qrels/test.tsv"):
        assert (again / "benchmark" / name).read_bytes() == (sample_run / "benchmark" / name).read_bytes()

    other = tmp_path / "other"
    seeded = run(
        "build", "--source", "wikipedia-dump", "--from-facts", sample_run, "--seed", "7", "--out", other
    )
    assert seeded.exit_code == 0, seeded.output
    first = (sample_run / "benchmark" / "samples.jsonl").read_bytes()
    assert (other / "benchmark" / "samples.jsonl").read_bytes() != first


def test_max_hops_and_false_premise_share_and_facts_only(sample_run, tmp_path):
    out = tmp_path / "deep"
    args = ["--from-facts", sample_run, "--max-hops", "3", "--false-premise-share", "0", "--out", out]
    assert run("build", "--source", "wikipedia-dump", *args).exit_code == 0
    samples = lines(out / "benchmark" / "samples.jsonl")
    assert 2 <= max(sample["hops"] for sample in samples) <= 3  # the sample's gates leave no 3-hop question
    assert not any(sample["false_premise"] for sample in samples)

    facts_only = tmp_path / "facts-only"
    result = run(*BUILD, "--dump", SAMPLE_DUMP, "--facts-only", "--out", facts_only)
    assert result.exit_code == 0, result.output
    assert (facts_only / "facts.jsonl").exists() and not (facts_only / "benchmark").exists()


def test_processes_do_not_change_the_output(sample_run, tmp_path):
    pooled = tmp_path / "pooled"
    result = run(*BUILD, "--dump", SAMPLE_DUMP, "--processes", "2", "--out", pooled)
    assert result.exit_code == 0, result.output
    for name in ("samples.jsonl", "corpus.jsonl", "qrels/test.tsv"):
        assert (pooled / "benchmark" / name).read_bytes() == (sample_run / "benchmark" / name).read_bytes()
    assert (pooled / "facts.jsonl").read_bytes() == (sample_run / "facts.jsonl").read_bytes()


def test_multi_hop_answers_are_not_in_a_first_hop_document(sample_run, tmp_path):
    """The shortcut filter end to end; which plans it drops is tested on plans (test_irb_transforms.py),
    since the sample's gates leave it no shortcut candidates."""
    documents = {doc["_id"]: doc["text"] for doc in lines(sample_run / "benchmark" / "corpus.jsonl")}
    multi = [s for s in lines(sample_run / "benchmark" / "samples.jsonl") if s["hops"] > 1]
    assert multi
    for sample in multi:  # no kept multi-hop answer stands in a document of its first hop
        first_hop = sample["chain"][0]["evidence"]
        answer = sample["attributes"]["extra"].get("premise_answer") or sample["answers"][0]
        assert not any(contains_answer(documents[doc], answer) for doc in first_hop), sample["id"]

    kept = tmp_path / "kept"
    args = ["--from-facts", sample_run, "--keep-shortcuts", "--out", kept]
    assert run("build", "--source", "wikipedia-dump", *args).exit_code == 0
    assert json.loads((kept / "manifest.json").read_text())["config"]["keep_shortcuts"] is True
    assert not any(r["reason"] == "multi_hop_shortcut" for r in lines(kept / "rejects.jsonl"))


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--max-hops", "5"], "--max-hops: Input should be less than or equal to 4"),
        (["--false-premise-share", "1"], "--false-premise-share: Input should be less than 1"),
        (["--reference-date", "29/09/2025"], "--reference-date"),
    ],
)
def test_bad_part2_options_exit_2(sample_run, tmp_path, args, needle):
    result = run(
        "build", "--source", "wikipedia-dump", "--from-facts", sample_run, *args, "--out", tmp_path / "o"
    )
    assert result.exit_code == 2, result.output
    assert needle in result.output


def test_from_facts_names_a_broken_line(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "facts.jsonl").write_text('{"id": "1"}\n')
    (bad / "documents.jsonl").write_text("")
    result = run("build", "--source", "wikipedia-dump", "--from-facts", bad, "--out", tmp_path / "o")
    assert result.exit_code == 2 and "facts.jsonl:1" in result.output
    missing = run("build", "--source", "wikipedia-dump", "--out", tmp_path / "o2")
    assert missing.exit_code == 2 and "--dump" in missing.output


def test_a_flag_of_another_source_is_refused(tmp_path):
    result = run(*BUILD, "--dump", SAMPLE_DUMP, "--hops", "2", "--out", tmp_path / "o")
    assert result.exit_code == 2 and "--hops does not apply to --source wikipedia-dump" in result.output
