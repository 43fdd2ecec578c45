"""Tests for retrieval measures: agreement with pytrec_eval, hand-worked values, names and run files."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from irbgen.errors import BadInputError
from irbgen.eval.metrics import (
    default_measures,
    format_run,
    format_score,
    mean,
    parse_measures,
    per_query,
    read_run,
    run_depth,
    run_from_rankings,
    trec_order,
    write_run,
)

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = ["nDCG@10", "R@10", "RR@10", "AP"]


# ------------------------------------------------------------------------------ agreement with trec_eval


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """30 judged queries with grades 0-3; runs with ties, unjudged documents and missing queries."""
    rng = random.Random(seed)
    docs = [f"d{i:02d}" for i in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        qid = f"q{q:02d}"
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[qid] = {doc: rng.randint(0, 3) for doc in judged}
        if q % 7 == 3:
            continue  # judged but missing from the run: counts 0
        depth = rng.randint(0, 25)  # deeper than 10 exercises the cutoffs; 0 is an empty ranking
        # Few distinct scores, so many documents tie; documents outside the qrels are unjudged.
        run[qid] = {doc: float(rng.randint(0, 4)) / 2 for doc in rng.sample(docs, depth)}
    run["unjudged-query"] = {"d00": 1.0, "d01": 0.5}  # trec_eval ignores a query without qrels
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_values_equal_pytrec_eval(seed: int) -> None:
    qrels, run = random_case(seed)
    ours = per_query(qrels, run, MEASURES)
    names = {"ndcg_cut_10", "recall_10", "recip_rank", "map"}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    assert list(ours) == list(qrels)
    for qid in qrels:
        expected = theirs.get(qid, dict.fromkeys(names, 0.0))
        assert ours[qid]["nDCG@10"] == pytest.approx(expected["ndcg_cut_10"], abs=1e-9)
        assert ours[qid]["R@10"] == pytest.approx(expected["recall_10"], abs=1e-9)
        assert ours[qid]["AP"] == pytest.approx(expected["map"], abs=1e-9)
        # trec_eval's recip_rank has no cutoff: RR@10 is recip_rank when the first relevant document is in
        # the top 10 (recip_rank >= 1/10) and 0 otherwise, with trec_eval's own order of tied scores.
        rr = expected["recip_rank"]
        assert ours[qid]["RR@10"] == pytest.approx(rr if rr >= 0.1 - 1e-12 else 0.0, abs=1e-9)


def test_the_random_cases_cover_what_they_claim() -> None:
    qrels, run = random_case(0)
    assert set(qrels) - set(run)  # judged queries missing from the run
    assert any(len(docs) > 10 for docs in run.values())
    assert any(len(set(docs.values())) < len(docs) for docs in run.values())  # ties
    assert any(set(docs) - set(qrels.get(qid, {})) for qid, docs in run.items())  # unjudged documents
    assert {rel for docs in qrels.values() for rel in docs.values()} == {0, 1, 2, 3}


def test_rr_with_cutoff_really_cuts() -> None:
    qrels = {"q": {"rel": 1}}
    run = {"q": {f"x{i:02d}": 20.0 - i for i in range(12)} | {"rel": 1.0}}  # rel is 13th
    values = per_query(qrels, run, ["RR@10", "RR@20", "RR"])["q"]
    assert values == {"RR@10": 0.0, "RR@20": pytest.approx(1 / 13), "RR": pytest.approx(1 / 13)}


def test_mean_is_the_mean_of_per_query_over_judged_queries() -> None:
    qrels, run = random_case(7)
    rows = per_query(qrels, run, MEASURES)
    means = mean(qrels, run, MEASURES)
    for name in MEASURES:
        assert means[name] == pytest.approx(sum(row[name] for row in rows.values()) / len(qrels), abs=1e-12)


# ------------------------------------------------------------------------------ hand-worked values

QRELS = {
    "q1": {"d1": 2, "d2": 1, "d3": 0},
    "q2": {"d4": 1},
    "q3": {"d5": 1},  # no hits at all: absent from the run
}
RUN = {
    "q1": {"dx": 3.0, "d2": 2.0, "d1": 1.0},  # dx is unjudged
    "q2": {"d4": 1.0},
}


def test_hand_worked_values() -> None:
    values = per_query(QRELS, RUN, MEASURES)
    # q1: relevant d2 (grade 1) at rank 2 and d1 (grade 2) at rank 3. Linear gain, not 2^rel - 1:
    # DCG = 1/log2(3) + 2/log2(4); ideal = 2/log2(2) + 1/log2(3).
    dcg = 1 / math.log2(3) + 2 / 2
    ideal = 2 + 1 / math.log2(3)
    assert values["q1"]["nDCG@10"] == pytest.approx(dcg / ideal, abs=1e-12)
    assert values["q1"]["nDCG@10"] == pytest.approx(0.6199062332840657, abs=1e-12)
    assert values["q1"]["R@10"] == 1.0
    assert values["q1"]["RR@10"] == 0.5
    assert values["q1"]["AP"] == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-12)
    assert values["q2"] == {"nDCG@10": 1.0, "R@10": 1.0, "RR@10": 1.0, "AP": 1.0}
    assert values["q3"] == {"nDCG@10": 0.0, "R@10": 0.0, "RR@10": 0.0, "AP": 0.0}


def test_a_query_with_no_hits_counts_zero_in_the_mean() -> None:
    means = mean(QRELS, RUN, ["RR@10", "R@10"])
    assert means == {"RR@10": pytest.approx((0.5 + 1.0 + 0.0) / 3), "R@10": pytest.approx(2 / 3)}
    # An empty ranking is the same as a missing one.
    assert mean(QRELS, RUN | {"q3": {}}, ["RR@10", "R@10"]) == means


def test_ideal_dcg_counts_every_judged_relevant_document() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 1.0}}  # only one of three relevant documents retrieved, at rank 1
    value = per_query(qrels, run, ["nDCG@10"])["q"]["nDCG@10"]
    assert value == pytest.approx(1 / (1 + 1 / math.log2(3) + 1 / math.log2(4)), abs=1e-12)


def test_ties_are_ordered_as_trec_eval_orders_them() -> None:
    # Equal scores: trec_eval puts the larger document id first, whatever order the run lists them in.
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 1.0, "b": 1.0}}
    assert per_query(qrels, run, ["RR@10", "RR@1"])["q"] == {"RR@10": 0.5, "RR@1": 0.0}


def test_queries_without_judgements_are_not_evaluated() -> None:
    assert list(per_query(QRELS, RUN | {"q9": {"d1": 1.0}}, ["AP"])) == ["q1", "q2", "q3"]
    assert per_query({}, RUN, ["AP"]) == {}
    assert mean({}, RUN, ["AP"]) == {"AP": 0.0}


# ------------------------------------------------------------------------------------------ names


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("nDCG@10", "nDCG@10"),
        ("ndcg_cut.10", "nDCG@10"),
        ("ndcg_cut_10", "nDCG@10"),
        ("R@10", "R@10"),
        ("recall.100", "R@100"),
        ("recall_5", "R@5"),
        ("RR@10", "RR@10"),
        ("MRR@10", "RR@10"),
        ("RR", "RR"),
        ("recip_rank", "RR"),
        ("AP", "AP"),
        ("map", "AP"),
        ("AP@100", "AP@100"),
        ("map_cut.100", "AP@100"),
        ("P@5", "P@5"),
        ("P.5", "P@5"),
        ("P(rel=2)@10", "P(rel=2)@10"),
        ("Rprec", "Rprec"),
        (" nDCG@20 ", "nDCG@20"),
    ],
)
def test_measure_names_parse_and_round_trip(name: str, canonical: str) -> None:
    (measure,) = parse_measures([name])
    assert str(measure) == canonical
    assert parse_measures([str(measure)]) == [measure]


def test_repeated_measures_are_kept_once_in_order() -> None:
    assert [str(m) for m in parse_measures(["AP", "ndcg_cut.10", "nDCG@10", "map"])] == ["AP", "nDCG@10"]


def test_bad_measures_are_reported_together() -> None:
    with pytest.raises(BadInputError) as error:
        parse_measures(["nDCG@10", "foo", "nDCG@x", ""])
    message = str(error.value)
    assert "'foo'" in message and "'nDCG@x'" in message and "''" in message
    assert "nDCG@10" in message  # the hint names a correct spelling
    with pytest.raises(BadInputError, match="no measures"):
        parse_measures([])


@pytest.mark.parametrize(
    ("name", "canonical"), [("Judged@10", "Judged@10"), ("Compat(p=0.8)", "Compat(p=0.8)")]
)
def test_measures_trec_eval_lacks_are_computed_by_ir_measures(name: str, canonical: str) -> None:
    (measure,) = parse_measures([name])
    assert str(measure) == canonical
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d9": 2}}
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0, "d4": 0.5}}
    values = per_query(qrels, run, ["nDCG@10", name])
    ir_measures = pytest.importorskip("ir_measures")
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    assert values["q1"][canonical] == expected["q1"] and values["q2"][canonical] == 0.0
    if name == "Judged@10":
        assert values["q1"]["Judged@10"] == 0.5  # d1 and d2 of 4 retrieved are judged


def test_a_backend_that_fails_on_the_run_is_one_line_naming_the_measure() -> None:
    # gdeval (ERR@k) wants numeric query ids; irbgen's are not.
    with pytest.raises(BadInputError, match=r"^measure\(s\) ERR@10: ir_measures could not compute") as error:
        per_query({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, ["ERR@10"])
    assert "\n" not in str(error.value)


def test_an_unknown_or_malformed_measure_is_one_line_naming_it() -> None:
    for bad in ["Foo@10", "nDCG@ten", "P@-1", "alpha_nDCG@10"]:
        with pytest.raises(BadInputError) as error:
            parse_measures(["nDCG@10", bad])
        assert repr(bad) in str(error.value) and "\n" not in str(error.value)


def test_the_run_is_as_deep_as_the_deepest_cutoff() -> None:
    assert run_depth(10, parse_measures(["nDCG@10", "R@100", "AP"])) == 100
    assert run_depth(10, parse_measures(["P@5", "AP"])) == 10


def test_default_measures() -> None:
    assert default_measures(10) == ["nDCG@10", "R@10", "RR@10", "AP"]
    assert [str(m) for m in parse_measures(default_measures(5))] == ["nDCG@5", "R@5", "RR@5", "AP"]


def test_per_query_keys_use_canonical_names() -> None:
    values = per_query(QRELS, RUN, ["ndcg_cut.10", "recip_rank"])
    assert list(values["q1"]) == ["nDCG@10", "RR"]


# ------------------------------------------------------------------------------------------ run files


RANKINGS = {
    "q2": [("d4", 1.0)],
    "q1": [("dx", 3.0), ("d2", 2.0000004), ("d1", -0.0000001)],
}


def test_run_file_format() -> None:
    assert format_run(RANKINGS, tag="bm25") == (
        "q2 Q0 d4 1 1.000000 bm25\n"
        "q1 Q0 dx 1 3.000000 bm25\n"
        "q1 Q0 d2 2 2.000000 bm25\n"
        "q1 Q0 d1 3 0.000000 bm25\n"
    )
    assert format_score(-0.0) == "0.000000"


def test_ties_take_trec_eval_order_and_become_distinct_scores() -> None:
    rankings = {"q": [("a", 2.0), ("b", 1.0), ("c", 1.0), ("e", 1.0000004), ("d", 0.999999), ("f", 0.5)]}
    ordered = trec_order(rankings)
    # score (as written, six decimals) descending, then id descending; each tie 0.000001 below the last
    assert ordered == {
        "q": [("a", 2.0), ("e", 1.0), ("c", 0.999999), ("b", 0.999998), ("d", 0.999997), ("f", 0.5)]
    }
    assert trec_order(ordered) == ordered  # already distinct and ordered: unchanged
    assert trec_order({"q": [("x", -0.0000001), ("y", -0.0000001)]}) == {"q": [("y", 0.0), ("x", -0.000001)]}
    assert format_run(rankings).splitlines()[1:4] == [
        "q Q0 e 2 1.000000 irbgen",
        "q Q0 c 3 0.999999 irbgen",
        "q Q0 b 4 0.999998 irbgen",
    ]


def test_tied_runs_score_the_same_in_every_tool() -> None:
    """trec_eval breaks a tie by id descending, ir_measures' RR@k and Judged@k by id ascending: on the
    written run, which has no ties left, both give the value irbgen computes."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = {"q": {"a": 1}}
    rankings = {"q": [("a", 1.0), ("b", 1.0), ("c", 0.5)]}  # trec_eval ranks b first, then a
    tied = {qid: dict(ranking) for qid, ranking in rankings.items()}
    measure = ir_measures.parse_measure("RR@10")
    assert next(ir_measures.iter_calc([measure], qrels, tied)).value == 1.0  # id ascending: a first
    assert per_query(qrels, tied, ["RR@10"])["q"]["RR@10"] == 0.5  # trec_eval's order: b first
    run = run_from_rankings(rankings)
    assert run == {"q": {"b": 1.0, "a": 0.999999, "c": 0.5}}
    assert next(ir_measures.iter_calc([measure], qrels, run)).value == 0.5
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"] == 0.5
    assert per_query(qrels, run, ["RR@10"])["q"]["RR@10"] == 0.5


def test_run_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    write_run(path, RANKINGS)
    first = path.read_bytes()
    write_run(path, RANKINGS)
    assert path.read_bytes() == first
    back = read_run(path)
    assert list(back) == ["q2", "q1"]
    assert back["q1"] == [("dx", 3.0), ("d2", 2.0), ("d1", 0.0)]
    # The run that is evaluated is the run as written.
    assert {qid: dict(ranking) for qid, ranking in back.items()} == run_from_rankings(RANKINGS)


def test_run_files_refuse_bad_fields(tmp_path: Path) -> None:
    with pytest.raises(BadInputError, match="whitespace"):
        format_run({"q 1": [("d1", 1.0)]})
    with pytest.raises(BadInputError, match="whitespace"):
        format_run({"q1": [("d\t1", 1.0)]})
    with pytest.raises(BadInputError, match="finite"):
        format_run({"q1": [("d1", math.nan)]})
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 d1 1 1.0 tag\nq1 Q0 d2 2 tag\n")
    with pytest.raises(BadInputError, match=r"bad.trec:2"):
        read_run(bad)
    bad.write_text("q1 Q0 d1 1 high tag\n")
    with pytest.raises(BadInputError, match="not a number"):
        read_run(bad)
