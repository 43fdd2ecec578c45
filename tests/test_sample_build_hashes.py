"""The three bundled sample builds give byte-identical benchmarks, checked against committed hashes.

A change that alters a sample build on purpose updates the hashes here in the same commit, and says why.
The per-hop files (queries_hops.jsonl, qrels/hops.tsv) are checked too, and each build is scored per hop.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import ir_measures
import pytest
import pytrec_eval
from click.testing import CliRunner
from test_eval_hops import check_against_pytrec_eval

from irbgen.cli import main
from irbgen.eval.retrieval import evaluate_retrieval

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"

BUILDS = {
    "phantom": ["phantom", "--n", "50", "--seed", "1"],
    "wikipedia": [
        "build", "--source", "wikipedia-dump", "--offline",
        "--dump", str(SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"),
        "--warc", str(SAMPLES / "web" / "cited-pages.warc.gz"),
    ],
    "wikidata": [
        "build", "--source", "wikidata-dump", "--offline",
        "--dump", str(SAMPLES / "wikidata" / "wikidata-new.json.bz2"),
        "--old-dump", str(SAMPLES / "wikidata" / "wikidata-old.json.gz"),
    ],
}

EXPECTED = {
    "phantom": {
        "samples.jsonl": "a181e39bef0d265dd63dcd70b5c9ddd522ce2dd050d9b6732d899b01c7d1628a",
        "corpus.jsonl": "7bb61ae0916f438f71baef1f08659e80a3d3750c40553d2f6f9f42595c247797",
        "queries.jsonl": "6df71589428103a778359daff7f060727c9b8638349ac6febc0933b628ee6500",
        "qrels/test.tsv": "243794847dfa12e0b4797962e29d4213f8262f397bf24a195297466fb5fe1d2f",
        "manifest.json": "65f5882bcb345740dafe33ffa51706b99e435b616079bb1e760d9d89bb31b0dd",
        "README.md": "fd1c498e03f3a394ebf4035148ff1867d8542607d754446ae656eada763eab5d",
        "queries_hops.jsonl": "f593ce91d0c20cccf2501ab4a7dff1bcfd645833e53ca5b8979662e37c203459",
        "qrels/hops.tsv": "e1c3b53201d6a0d12c6400e4db94b6bf2fcb61fe5ac1609fbc65ed4fd823dfb4",
    },
    "wikipedia": {
        "samples.jsonl": "05dd2cf478540ae3cbc46d381574acc53aef7316464ac343baf714e9ee076951",
        "corpus.jsonl": "69930d7de7db4c14267c39dbf3bf29399ea64c5ca86b4e37fad6302cd73dc254",
        "queries.jsonl": "f8002e78226b5f5d3f4c2adb6d0fb6fc1f6b5f6a72af27e4e49f05122cb91892",
        "qrels/test.tsv": "2479a850ac46723f267bf1f167cd508d39abbf9adc417d92068491143810b2aa",
        "manifest.json": "b9f70f3aacdcc0263e536f6d54c6b54da6803dac3e0fe698f70e09c23416a1c2",
        "README.md": "06e780e0357bb14909e2099c4737bcfe072157b6110198bb70eea39c8d75e2e3",
        "queries_hops.jsonl": "a72d70b1f620d3379ab13f1502690e9b8fbdafd22398c84fd5e3c55255f5f499",
        "qrels/hops.tsv": "b19e496e1d473f01bfb770673f2c03961ba0962c65cd1871ab61f1f9774028ee",
        "../rejects.jsonl": "29ea1204d42a70d7404e405a1d20daf51198819a109a2b4bd382333359d00bf1",
    },
    "wikidata": {
        "samples.jsonl": "4939143d3836a2e2e39904e6da5c129ee22df7edbc9d08bd72a9af4b791a2701",
        "corpus.jsonl": "22bcf66a47c234483e6052eab3fa0141b3437d6e457655c1bacd2d785dc883a7",
        "queries.jsonl": "688603acb2b9e122f1b628490838e1ea47157cc572c37743f9efad60eb311ac8",
        "qrels/test.tsv": "5ff6f028e2310eea7267aa4a1520f2029b9665f6557412d0a89cc68c71c0071d",
        "manifest.json": "eb66a62ce41946b53090100d9b69ab62f4036c6476cf1d1bd329c4d6ae17537d",
        "README.md": "959570c89a62d8fe01797ed9cdd45626eece3f8ad48d06fa5926a7d41f17c79b",
        "queries_hops.jsonl": "a5c8ec2d2f2ac8f466d506a18004af64e6c73bc4771fbc416ed3bb1a5a2193a0",
        "qrels/hops.tsv": "2ccbbf8e7c4735c35edc841fe51c0c35d5f41f84604dd974954474224017ada7",
        "../rejects.jsonl": "2facd65bb43ffb0fb7f4ac7a809b80c30a010e04654a42891a7c72b30f689408",
    },
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module", params=sorted(BUILDS))
def build(request, tmp_path_factory) -> tuple[str, Path]:
    """(name, benchmark directory) of each sample build, built once for the tests below."""
    name = request.param
    root = tmp_path_factory.mktemp(name)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(root)
        result = CliRunner().invoke(main, [*BUILDS[name], "--out", name])
    assert result.exit_code == 0, result.output
    return name, root / name if name == "phantom" else root / name / "benchmark"


def test_sample_build_is_byte_identical_to_the_committed_hashes(build):
    name, benchmark = build
    changed = {
        file: sha256(benchmark / file)
        for file, expected in EXPECTED[name].items()
        if sha256(benchmark / file) != expected
    }
    assert not changed, f"{name} sample build changed: {changed}"


def test_sample_build_scores_per_hop(build, tmp_path):
    """Each generator's hops carry a sub-question and evidence; per-hop nDCG is trec_eval's on them."""
    name, benchmark = build
    queries = [json.loads(line) for line in (benchmark / "queries_hops.jsonl").read_text().splitlines()]
    assert queries and all(query["metadata"]["question_from"] == "hop" for query in queries)
    metrics = evaluate_retrieval(benchmark, tmp_path / "eval", per_hop=True)
    hops = metrics["per_hop"]
    assert hops["queries"] == len(queries) and hops["unjudged_queries"] == 0
    assert 0.0 < hops["evidence_chain_recall"]["overall"] <= 1.0
    assert set(hops["by_hops"]) == {str(q["metadata"]["hops"]) for q in queries}
    check_against_pytrec_eval(benchmark, tmp_path / "eval", 10)


def test_shards_and_processes_do_not_change_the_wikipedia_benchmark(tmp_path, monkeypatch):
    """A dump read in two round-robin shards yields its pages in another order; the benchmark is the same
    (the manifest and the card record --shards 2; the run's rejects file lists its rejects in shard order)."""
    monkeypatch.chdir(tmp_path)
    args = [*BUILDS["wikipedia"], "--shards", "2", "--processes", "2", "--out", "w"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    recorded = ("README.md", "manifest.json", "../rejects.jsonl")
    data = {file: want for file, want in EXPECTED["wikipedia"].items() if file not in recorded}
    assert {file: sha256(tmp_path / "w" / "benchmark" / file) for file in data} == data


def test_workers_writing_their_shards_in_a_shared_dir_keep_the_pinned_hashes(tmp_path, monkeypatch):
    """With --processes 2 the CPU stages' workers write their own checkpoint shards (here in --shared-dir),
    which the driver merges: the benchmark and the run's rejects are the pinned ones, and no shard is left
    (the manifest and the card record --processes 2)."""
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "shared"
    args = [*BUILDS["wikipedia"], "--processes", "2", "--shared-dir", str(shared), "--out", "w"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    recorded = ("README.md", "manifest.json")
    data = {file: want for file, want in EXPECTED["wikipedia"].items() if file not in recorded}
    assert {file: sha256(tmp_path / "w" / "benchmark" / file) for file in data} == data
    assert [path.name for path in (next(shared.iterdir()) / "stages").iterdir()]  # the shards went there
    assert not [path for path in shared.rglob("*") if path.is_file()]  # merged into the run, then deleted
    assert not list((tmp_path / "w" / "stages").glob("*/shards*"))


ASKED = "nDCG@10 R@100 P@5 AP RR@10 RR Judged@10"
# trec_eval's name of each measure it computes; RR@10 is its recip_rank over the run's first 10 lines.
TREC_EVAL = {"nDCG@10": "ndcg_cut_10", "R@100": "recall_100", "P@5": "P_5", "AP": "map", "RR": "recip_rank"}
TREC_NAMES = {"ndcg_cut.10", "recall.100", "P.5", "map", "recip_rank"}


def recompute(benchmark: Path, out: Path, measures: list[str]) -> dict[str, dict[str, float]]:
    """Every measure of every judged query, by ir_measures from run.trec and qrels/test.tsv alone."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (benchmark / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc_id, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc_id] = int(grade)
    run = [line.split() for line in (out / "run.trec").read_text(encoding="utf-8").splitlines()]
    scored = {}
    for qid, _, doc_id, _, score, _ in run:
        scored.setdefault(qid, {})[doc_id] = float(score)
    # The file is in trec_eval's order and has no ties, so no tool can read another order from it.
    for qid, docs in scored.items():
        rows = [(float(score), doc_id) for q, _, doc_id, _, score, _ in run if q == qid]
        assert rows == sorted(rows, reverse=True) and len(set(docs.values())) == len(docs)
    values = {qid: {} for qid in qrels}
    for metric in ir_measures.iter_calc([ir_measures.parse_measure(m) for m in measures], qrels, scored):
        values[metric.query_id][str(metric.measure)] = metric.value
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_NAMES)
    by_trec_eval = evaluator.evaluate(scored)
    first_10 = {qid: dict(list(docs.items())[:10]) for qid, docs in scored.items()}
    rr_at_10 = evaluator.evaluate(first_10)
    for qid, row in values.items():  # pytrec_eval agrees with ir_measures on each measure trec_eval has
        for name, trec_name in TREC_EVAL.items():
            if name in row and qid in by_trec_eval:
                assert row[name] == by_trec_eval[qid][trec_name], (qid, name)
        if "RR@10" in row and qid in rr_at_10:
            assert row["RR@10"] == rr_at_10[qid]["recip_rank"], qid
    return values


@pytest.mark.parametrize("args", [["--k", "5"], ["--measures", ASKED]], ids=["default-k5", "asked"])
def test_printed_measures_are_recomputed_from_run_trec(build, args, tmp_path):
    """ir_measures and pytrec_eval on run.trec and the qrels give every value irbgen printed and wrote."""
    name, benchmark = build
    retrievers = ["bm25", "dense", "hybrid"] if name == "phantom" else ["bm25"]  # hybrid: many ties
    for retriever in retrievers:
        out = tmp_path / retriever
        cli = ["eval", "retrieval", "--benchmark", str(benchmark), "--retriever", retriever, *args]
        result = CliRunner().invoke(main, [*cli, "--out", str(out), "-q"])
        assert result.exit_code == 0, result.output
        metrics = json.loads((out / "metrics.json").read_text())
        asked = list(metrics["overall"])
        assert asked == (ASKED.split() if "--measures" in args else ["nDCG@5", "R@5", "RR@5", "AP"])
        values = recompute(benchmark, out, asked)
        lines = (out / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
        rows = {row["query_id"]: row for row in map(json.loads, lines) if row["judged"]}
        assert set(rows) == set(values)
        for qid, row in rows.items():  # a judged query the run misses scores 0 (trec_eval's -c)
            assert row["metrics"] == {m: values[qid].get(m, 0.0) for m in asked}, (retriever, qid)
        printed = result.output.splitlines()[0].split(": ", 1)[1].split(" (written")[0]
        for measure, text in (pair.rsplit(" ", 1) for pair in printed.split(", ")):
            mean = sum(values[qid].get(measure, 0.0) for qid in rows) / len(rows)
            assert metrics["overall"][measure] == pytest.approx(mean, abs=1e-12)
            assert text == f"{mean:.4f}", (retriever, measure)
