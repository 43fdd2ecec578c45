"""Per-hop retrieval: the hop files a benchmark carries, their validation, and `eval retrieval --per-hop`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import pytrec_eval
from click.testing import CliRunner

from irbgen.benchmark import read_hop_qrels, write_benchmark
from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.eval.hops import chain_recall, hop_found, summarise, top_k
from irbgen.eval.metrics import read_run
from irbgen.eval.report import write_report
from irbgen.eval.retrieval import evaluate_retrieval
from irbgen.io import manifest_text
from irbgen.schema import Document, Hop, Manifest, Provenance, Sample
from irbgen.validation import validate_benchmark

PROVENANCE = Provenance(generator="test")
DOCUMENTS = [
    Document(_id="a", text="alpha apple"),
    Document(_id="b", text="beta banana"),
    Document(_id="c", text="gamma cherry"),
    Document(_id="d", text="delta date"),
]


def sample(sid: str, question: str, chain: list[Hop]) -> Sample:
    evidence = list(dict.fromkeys(doc for hop in chain for doc in hop.evidence))
    return Sample(id=sid, question=question, answers=["x"], hops=len(chain), source="phantom",
                  evidence=evidence, chain=chain, provenance=PROVENANCE)  # fmt: skip


def hop(index: int, question: str, evidence: list[str]) -> Hop:
    return Hop(index=index, operation="relation", question=question, answers=[f"h{index}"], evidence=evidence)


SAMPLES = [
    # both hops found in the top 2: a for hop 0, b and c (tied) for hop 1
    sample("s1", "alpha beta?", [hop(0, "alpha apple", ["a"]),
                                 hop(1, "beta banana gamma cherry", ["b", "c"])]),  # fmt: skip
    # no sub-question: the hop is asked the whole question
    sample("s2", "delta date", [hop(0, "", ["d"])]),
    # hop 0 asks for alpha but its evidence is d: not found, so the chain is not found
    sample("s4", "alpha then beta", [hop(0, "alpha", ["d"]), hop(1, "beta", ["b"])]),
    # a hop without evidence: listed, not judged; the sample counts nowhere in chain recall
    sample("s5", "nothing", [hop(0, "nothing at all", [])]),
]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    manifest = Manifest(tool_version="0", source="phantom", name="hops", command="t")
    write_benchmark(out, DOCUMENTS, SAMPLES, manifest)
    return out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------------------------------------- files


def test_the_writer_adds_one_query_and_qrels_per_hop(bench: Path) -> None:
    queries = lines(bench / "queries_hops.jsonl")
    assert [(q["_id"], q["text"], q["metadata"]["question_from"]) for q in queries] == [
        ("s1#h0", "alpha apple", "hop"),
        ("s1#h1", "beta banana gamma cherry", "hop"),
        ("s2#h0", "delta date", "sample"),
        ("s4#h0", "alpha", "hop"),
        ("s4#h1", "beta", "hop"),
        ("s5#h0", "nothing at all", "hop"),
    ]
    assert queries[1]["metadata"] == {
        "sample_id": "s1", "hop": 1, "hops": 2, "question_from": "hop",
        "operation": "relation", "predicate": "", "answers": ["h1"],
    }  # fmt: skip
    assert (bench / "qrels" / "hops.tsv").read_text() == (
        "query-id\tcorpus-id\tscore\n"
        "s1#h0\ta\t1\ns1#h1\tb\t1\ns1#h1\tc\t1\ns2#h0\td\t1\ns4#h0\td\t1\ns4#h1\tb\t1\n"
    )
    assert read_hop_qrels(bench)["s1#h1"] == {"b": 1, "c": 1}
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["counts"]["hop_queries"] == 6 and manifest["counts"]["hop_qrels"] == 6
    assert {"queries_hops.jsonl", "qrels/hops.tsv"} <= set(manifest["files"])
    # the BEIR files do not mention hops
    assert "#h" not in (bench / "qrels" / "test.tsv").read_text() + (bench / "queries.jsonl").read_text()
    report = validate_benchmark(bench)
    assert report.ok, report.problems
    assert report.counts["hop_queries"] == 6 and report.counts["hop_qrels"] == 6


def test_a_chain_with_a_repeated_hop_index_is_refused(tmp_path: Path) -> None:
    bad = sample("s", "q", [hop(0, "a", ["a"]), hop(0, "b", ["b"])])
    with pytest.raises(BadInputError, match="hop index 0 appears twice"):
        write_benchmark(tmp_path / "b", DOCUMENTS, [bad], Manifest(tool_version="0", source="phantom",
                                                                     name="x", command="t"))  # fmt: skip


def rewrite_manifest(bench: Path, drop: tuple[str, ...] = (), counts: tuple[str, ...] = ()) -> None:
    """Change files by hand and make the manifest agree, so only the change under test is a problem."""
    manifest = json.loads((bench / "manifest.json").read_text())
    for name in list(manifest["files"]):
        if name in drop:
            del manifest["files"][name], manifest["sizes"][name]
        else:
            data = (bench / name).read_bytes()
            manifest["files"][name] = hashlib.sha256(data).hexdigest()
            manifest["sizes"][name] = len(data)
    for key in counts:
        del manifest["counts"][key]
    (bench / "manifest.json").write_text(manifest_text(manifest))


def test_a_benchmark_without_hop_files_is_still_valid(bench: Path) -> None:
    (bench / "queries_hops.jsonl").unlink()
    (bench / "qrels" / "hops.tsv").unlink()
    hop_files = ("queries_hops.jsonl", "qrels/hops.tsv")
    rewrite_manifest(bench, drop=hop_files, counts=("hop_queries", "hop_qrels"))
    report = validate_benchmark(bench)
    assert report.ok, report.problems
    assert "hop_queries" not in report.counts
    with pytest.raises(BadInputError, match="has no queries_hops.jsonl and qrels/hops.tsv"):
        evaluate_retrieval(bench, bench.parent / "e", per_hop=True)
    assert not (bench.parent / "e").exists()


def test_validate_checks_the_hop_files(bench: Path) -> None:
    hop_qrels = bench / "qrels" / "hops.tsv"
    hop_qrels.write_text(hop_qrels.read_text().replace("s1#h1\tc\t1\n", "s1#h1\tzz\t1\ns9#h0\ta\t1\n"))
    queries = bench / "queries_hops.jsonl"
    queries.write_text(queries.read_text().replace('"text":"alpha apple"', '"text":"changed"'))
    rewrite_manifest(bench)
    problems = validate_benchmark(bench).problems
    assert problems == [
        "queries_hops.jsonl:1: text differs from the sub-question of hop 's1#h0'",
        "qrels/hops.tsv:4: unknown corpus id 'zz'",
        "qrels/hops.tsv:5: unknown hop query id 's9#h0'",
        "qrels/hops.tsv: the qrels of 's1#h1' differ from that hop's evidence in samples.jsonl",
        "manifest.json: counts.hop_qrels is 6 but qrels/hops.tsv has 7",
    ]


def test_validate_wants_both_hop_files_and_every_hop(bench: Path) -> None:
    queries = bench / "queries_hops.jsonl"
    queries.write_text("".join(queries.read_text().splitlines(keepends=True)[:-1]))
    (bench / "qrels" / "hops.tsv").unlink()
    problems = validate_benchmark(bench).problems
    together = "qrels/hops.tsv: missing, but queries_hops.jsonl is there (the per-hop files come together)"
    assert together in problems
    assert "queries_hops.jsonl: 1 hop(s) of the samples' chains missing, e.g. 's5#h0'" in problems
    assert "manifest.json: counts.hop_queries is 6 but queries_hops.jsonl has 5" in problems


# ------------------------------------------------------------------------------------------- measures


def test_top_k_is_trec_eval_order() -> None:
    run = {"a": 1.0, "b": 2.0, "c": 2.0, "d": 0.5}
    assert top_k(run, 2) == ["c", "b"]  # a tie goes to the larger id, as trec_eval orders it
    assert top_k(run, 10) == ["c", "b", "a", "d"]
    assert hop_found(["b", "c"], run, 2) and not hop_found(["a", "b"], run, 2)
    assert hop_found([], run, 1)


def test_chain_recall_and_summary_on_hand_made_rows() -> None:
    def row(sid: str, index: int, hops: int, found: bool | None, ndcg: float = 0.0) -> dict:
        judged = found is not None
        return {"query_id": f"{sid}#h{index}", "sample_id": sid, "hop": index, "hops": hops, "judged": judged,
                "metrics": {"nDCG@2": ndcg} if judged else {}, "found_at_k": found}  # fmt: skip

    rows = [
        row("x", 0, 2, True, 1.0), row("x", 1, 2, True, 0.5),   # every hop found: 1
        row("y", 0, 2, True, 1.0), row("y", 1, 2, False, 0.0),  # one hop missed: 0
        row("z", 0, 1, True, 0.25),                             # one hop, found: 1
        row("w", 0, 1, None),                                   # no evidence: not counted
    ]  # fmt: skip
    assert chain_recall(rows) == {"x": {"hops": 2, "found": 1}, "y": {"hops": 2, "found": 0},
                                  "z": {"hops": 1, "found": 1}}  # fmt: skip
    summary = summarise(rows, ["nDCG@2"], 2)
    assert summary["queries"] == 5 and summary["unjudged_queries"] == 1
    assert summary["overall"] == {"nDCG@2": pytest.approx((1.0 + 0.5 + 1.0 + 0.0 + 0.25) / 5)}
    assert summary["by_hop"] == {"0": {"nDCG@2": pytest.approx(2.25 / 3), "count": 3},
                                 "1": {"nDCG@2": 0.25, "count": 2}}  # fmt: skip
    assert summary["by_hops"]["1"] == {"nDCG@2": 0.25, "count": 1}
    assert summary["by_hops"]["2"] == {"nDCG@2": 0.625, "count": 4}
    chain = summary["evidence_chain_recall"]
    assert chain == {"k": 2, "samples": 3, "overall": pytest.approx(2 / 3), "by_hops": {"1": 1.0, "2": 0.5},
                     "counts_by_hops": {"1": 1, "2": 2}}  # fmt: skip


def test_per_hop_evaluation_end_to_end(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "eval"
    metrics = evaluate_retrieval(bench, out, k=2, measures=["nDCG@2", "R@2"], per_hop=True)
    assert {p.name for p in out.iterdir()} >= {"run_hops.trec", "per_hop.jsonl"}
    rows = lines(out / "per_hop.jsonl")
    assert [(r["query_id"], r["judged"], r["found_at_k"]) for r in rows] == [
        ("s1#h0", True, True),
        ("s1#h1", True, True),
        ("s2#h0", True, True),
        ("s4#h0", True, False),
        ("s4#h1", True, True),
        ("s5#h0", False, None),
    ]
    assert rows[0]["metrics"] == {"nDCG@2": 1.0, "R@2": 1.0}
    assert rows[3]["metrics"] == {"nDCG@2": 0.0, "R@2": 0.0}
    hops = metrics["per_hop"]
    assert hops["evidence_chain_recall"]["overall"] == pytest.approx(2 / 3)  # s1 and s2 of s1, s2, s4
    assert hops["evidence_chain_recall"]["by_hops"] == {"1": 1.0, "2": 0.5}
    assert hops["by_hop"]["1"]["R@2"] == 1.0 and hops["by_hop"]["0"]["count"] == 3
    assert json.loads((out / "config.json").read_text())["per_hop"] is True
    # trec_eval itself on the per-hop qrels and run_hops.trec as written gives the same values
    check_against_pytrec_eval(bench, out, 2)
    # the report reads an evaluation with the per-hop section like any other
    assert (write_report([out], tmp_path / "report") / "report.md").is_file()


def check_against_pytrec_eval(bench: Path, out: Path, k: int) -> None:
    qrels = read_hop_qrels(bench)
    run = {qid: dict(ranking) for qid, ranking in read_run(out / "run_hops.trec").items()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {f"ndcg_cut.{k}", f"recall.{k}"})
    expected = evaluator.evaluate(run)
    rows = [row for row in lines(out / "per_hop.jsonl") if row["judged"]]
    assert rows
    for row in rows:
        values = expected.get(row["query_id"], {f"ndcg_cut_{k}": 0.0, f"recall_{k}": 0.0})
        assert row["metrics"][f"nDCG@{k}"] == pytest.approx(values[f"ndcg_cut_{k}"], abs=1e-12)
        assert row["metrics"][f"R@{k}"] == pytest.approx(values[f"recall_{k}"], abs=1e-12)


def test_cli_per_hop_prints_the_chain_recall(bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = CliRunner().invoke(main, ["eval", "retrieval", "--benchmark", str(bench), "--k", "2",
                                       "--per-hop", "--out", str(out), "-q"])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "per hop on 5 sub-questions" in result.output
    assert "evidence chain recall@2 0.6667 over 3 samples" in result.output
