"""`irbgen build --source wikidata-dump` end to end: the sample dumps to a benchmark, eval, the LLM path."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.testing.openai_server import OpenAIStubServer
from irbgen.text import contains_answer

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples" / "wikidata"
NEW = SAMPLES / "wikidata-new.json.bz2"
OLD = SAMPLES / "wikidata-old.json.gz"
BUILD = ["build", "--source", "wikidata-dump", "--dump", NEW, "--old-dump", OLD, "--offline"]


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wd") / "run"
    result = run(*BUILD, "--out", out)
    assert result.exit_code == 0, result.output
    assert "chains" in result.output and "4-hop" in result.output
    return out


def test_sample_dumps_give_1_to_4_hop_questions_with_sub_questions(sample_run):
    bench = sample_run / "benchmark"
    assert run("validate", bench).exit_code == 0
    samples = lines(bench / "samples.jsonl")
    corpus = {doc["_id"] for doc in lines(bench / "corpus.jsonl")}
    assert {sample["hops"] for sample in samples} == {1, 2, 3, 4}
    for sample in samples:
        assert sample["source"] == "wikidata" and sample["answers"]
        assert len(sample["chain"]) == sample["hops"] == len(sample["provenance"]["triple_chain"])
        assert all(hop["question"] and hop["answers"] for hop in sample["chain"])
        assert sample["evidence"] and set(sample["evidence"]) <= corpus
        assert not contains_answer(sample["question"], sample["answers"][0]), sample["question"]
        extra = sample["attributes"]["extra"]
        assert len(extra["hop_popular"]) == len(extra["hop_new"]) == sample["hops"]
        assert all(isinstance(flag, bool) for flag in extra["hop_new"])  # an old dump was given
        assert extra["answer_type"] in ("entity", "date", "quantity", "string")
    newness = {sample["attributes"]["newness"] for sample in samples}
    assert "new" in newness and "old" in newness
    popular = {flag for sample in samples for flag in sample["attributes"]["extra"]["hop_popular"]}
    assert popular == {True, False}


def test_malformed_dump_lines_are_per_line_rejects_and_counted(sample_run):
    rejects = lines(sample_run / "rejects.jsonl")
    bad = [reject for reject in rejects if reject["stage"] == "read" and reject["reason"] == "bad_line"]
    assert bad and all(re.search(r":\d+$", reject["key"]) for reject in bad)
    manifest = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["rejects"]["read:bad_line"] == len(bad)
    assert manifest["counts"]["rejects"] == len(rejects)
    assert manifest["counts"]["samples"] == len(lines(sample_run / "benchmark" / "samples.jsonl"))


def test_rerun_resumes_and_gives_identical_files_and_eval_runs(sample_run, tmp_path):
    before = (sample_run / "benchmark" / "samples.jsonl").read_bytes()
    again = run(*BUILD, "--out", sample_run)
    assert again.exit_code == 0, again.output
    assert (sample_run / "benchmark" / "samples.jsonl").read_bytes() == before
    fresh = tmp_path / "fresh"
    assert run(*BUILD, "--out", fresh).exit_code == 0
    assert (fresh / "benchmark" / "samples.jsonl").read_bytes() == before

    result = run(
        "eval",
        "retrieval",
        "--benchmark",
        sample_run / "benchmark",
        "--retriever",
        "bm25",
        "--out",
        tmp_path / "e",
    )
    assert result.exit_code == 0, result.output
    assert "nDCG@10" in result.output


def test_passages_state_identifiers_only_with_keep_all_statements(sample_run, tmp_path):
    """The reader drops identifiers, URLs and media; --keep-all-statements puts them back in the passages
    and changes nothing else: no question can use them."""
    out = tmp_path / "all"
    assert run(*BUILD, "--keep-all-statements", "--out", out).exit_code == 0
    texts = {doc["_id"]: doc["text"] for doc in lines(sample_run / "benchmark" / "corpus.jsonl")}
    everything = {doc["_id"]: doc["text"] for doc in lines(out / "benchmark" / "corpus.jsonl")}
    assert texts.keys() == everything.keys()
    for label in ("VIAF ID", "IMDb ID", "official website"):
        assert not any(label in text for text in texts.values())
        assert any(label in text for text in everything.values())
    for name in ("samples.jsonl", "queries.jsonl", "qrels/test.tsv"):
        assert (out / "benchmark" / name).read_bytes() == (sample_run / "benchmark" / name).read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["keep_all_statements"] is True


def test_the_corpus_is_streamed_from_the_passages_checkpoint(sample_run):
    """Passages are made per range of items and checkpointed; the benchmark's corpus is that checkpoint."""
    checkpoint = lines(sample_run / "stages" / "passages" / "outputs.jsonl")
    corpus = lines(sample_run / "benchmark" / "corpus.jsonl")
    assert [row["record"]["id"] for row in checkpoint] == [document["_id"] for document in corpus]
    items = sum(1 for row in checkpoint if row["record"]["id"].endswith("#0"))  # one first passage per item
    assert {row["key"] for row in checkpoint} == {f"items 0-{items - 1}"}  # the sample's items fit one range
    manifest = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["stages"]["passages"]["outputs"] == len(corpus)


def test_processes_do_not_change_the_output(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert run(*BUILD, "--hops", "1-2", "--shards", "2", "--out", one).exit_code == 0
    result = run(*BUILD, "--hops", "1-2", "--shards", "2", "--processes", "2", "--out", two)
    assert result.exit_code == 0, result.output
    for name in ("samples.jsonl", "corpus.jsonl", "qrels/test.tsv"):
        assert (two / "benchmark" / name).read_bytes() == (one / "benchmark" / name).read_bytes()
    assert (two / "rejects.jsonl").read_bytes() == (one / "rejects.jsonl").read_bytes()


def test_a_sitelink_filter_or_an_entity_list_restricts_both_dumps(sample_run, tmp_path):
    out = tmp_path / "popular"
    result = run(*BUILD, "--min-sitelinks", "3", "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    full = json.loads((sample_run / "manifest.json").read_text())
    assert manifest["counts"]["entities"] < full["counts"]["entities"]
    assert manifest["rejects"]["read:few_sitelinks"] > 0 and manifest["rejects"]["read_old:not_listed"] > 0
    kept = set((out / "kept-entities.txt").read_text().split())
    assert len(kept) == manifest["counts"]["entities"]
    assert manifest["counts"]["old_entities"] <= manifest["counts"]["entities"]
    samples = lines(out / "benchmark" / "samples.jsonl")
    assert samples and all(set(s["attributes"]["extra"]["entities"]) <= kept for s in samples)
    assert run("validate", out / "benchmark").exit_code == 0

    listed = tmp_path / "ids.txt"
    listed.write_text("\n".join(sorted(kept)[:40]) + "\n", encoding="utf-8")
    subset = tmp_path / "subset"
    few = run(*BUILD, "--entities", listed, "--hops", "1-2", "--out", subset)
    assert few.exit_code == 1 and "0 samples from " in few.output  # 40 items chain into no question
    subset_items = {i for i in (subset / "kept-entities.txt").read_text().split() if i.startswith("Q")}
    assert subset_items == {i for i in sorted(kept)[:40] if i.startswith("Q")}
    subset_manifest = json.loads((subset / "manifest.json").read_text())
    assert subset_manifest["config"]["entities"] == "ids.txt"  # a file name, not a local path
    listed.write_text("Q1\nnot-an-id\n", encoding="utf-8")
    bad = run(*BUILD, "--entities", listed, "--out", tmp_path / "bad")
    assert bad.exit_code == 2 and "ids.txt:2" in bad.output


def test_hops_and_bad_options(tmp_path):
    out = tmp_path / "two"
    assert run(*BUILD, "--hops", "2", "--per-hop", "5", "--out", out).exit_code == 0
    samples = lines(out / "benchmark" / "samples.jsonl")
    assert samples and {sample["hops"] for sample in samples} == {2} and len(samples) <= 5
    assert run(*BUILD, "--hops", "0-5", "--out", tmp_path / "x").exit_code == 2
    assert run(*BUILD, "--warc", NEW, "--out", tmp_path / "y").exit_code == 2  # a Wikipedia flag
    missing = run(
        "build", "--source", "wikidata-dump", "--dump", tmp_path / "nope.json", "--out", tmp_path / "z"
    )
    assert missing.exit_code == 2 and "nope.json" in missing.output


_FACT = re.compile(r"^\d+\. \((.+?); (.+?); (.+?)\)", re.MULTILINE)


def _llm_reply(request: dict) -> str:
    """A careful writer and checker: sub-questions from the facts, answers looked up in them."""
    text = request["messages"][-1]["content"]
    facts = _FACT.findall(text)
    if "Question:" in text and "Name the first subject" not in text:
        question = text.rsplit("Question:", 1)[1].strip()
        for head, prop, tail in facts:
            if question == f"What is the {prop} of {head}?":
                return json.dumps({"answer": tail})
        return json.dumps({"answer": facts[-1][2]})
    start = text.split("Name the first subject as:", 1)[1].split("\n", 1)[0].strip()
    subs = [{"question": f"What is the {prop} of {head}?", "answer": tail} for head, prop, tail in facts]
    main = start
    for _, prop, _ in facts:
        main = f"the {prop} of {main}"
    return json.dumps({"question": f"What is {main}?", "sub_questions": subs})


def test_llm_path_through_a_loopback_server(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "llm"
    with OpenAIStubServer(responder=_llm_reply) as server:
        args = [*BUILD, "--hops", "1-2", "--per-hop", "4", "--base-url", server.base_url, "--model", "stub"]
        result = run(*args, "--out", out)
        assert result.exit_code == 0, result.output
        calls = server.requests
        assert calls > 0
        assert run(*args, "--out", out).exit_code == 0
        assert server.requests == calls  # the rerun asks nothing again
    samples = lines(out / "benchmark" / "samples.jsonl")
    assert samples and all(sample["provenance"]["model"] == "stub" for sample in samples)
    names = {p["name"] for sample in samples for p in sample["provenance"]["prompts"]}
    assert names >= {"mintqa_question", "mintqa_answer"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["llm_usage"]["stages"]["questions"]["calls"] == calls


def test_rebel_frequencies_and_counts_file_reach_the_popularity_labels(tmp_path):
    from test_wikidata_rebel import build_checkpoint

    model = build_checkpoint(tmp_path / "rebel", train_steps=0)
    wiki = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
    out = tmp_path / "rebel-run"
    args = [*BUILD, "--hops", "1", "--per-hop", "5", "--wikipedia-dump", wiki, "--rebel-model", model]
    result = run(*args, "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["popularity"]["kind"] == "wikipedia-frequency"
    assert manifest["counts"]["rebel_pages"] > 0 and manifest["counts"]["rebel_passages"] > 0

    counts = tmp_path / "counts.tsv"
    counts.write_text("".join(f"Q{9000001 + n}\t{n}\n" for n in range(400)))
    out = tmp_path / "counts-run"
    args = [*BUILD, "--hops", "1", "--per-hop", "8", "--popularity", "counts-file", "--counts-file", counts]
    assert run(*args, "--popular-threshold", "100", "--out", out).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["popularity"] == {"kind": "counts-file", "threshold": 100.0}
    assert run(*BUILD, "--popularity", "counts-file", "--out", tmp_path / "bad").exit_code == 2
