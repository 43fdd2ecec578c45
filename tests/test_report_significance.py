"""Paired significance in `irbgen report`: the tests against scipy and hand computations, Holm on a known
example, and a report over three retrieval runs and two QA runs (against the loopback stub) on a phantom
benchmark."""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from irbgen.benchmark import read_samples
from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.eval.qa.run import QAOptions, run_qa
from irbgen.eval.report import write_report
from irbgen.eval.report.tables import comparison_table, depths_note
from irbgen.eval.retrieval import evaluate_retrieval
from irbgen.eval.significance import (
    RESAMPLES,
    RunScores,
    bootstrap_interval,
    compare_runs,
    depths_differ,
    holm,
    randomization_p,
    t_test_p,
)
from irbgen.llm.settings import LLMSettings
from irbgen.testing.openai_server import OpenAIStubServer, stub_reply

A = [0.9, 0.4, 0.7, 1.0, 0.3, 0.8, 0.6, 0.5, 0.9, 0.2, 0.7, 0.65]
B = [0.5, 0.5, 0.4, 0.6, 0.1, 0.9, 0.2, 0.5, 0.3, 0.2, 0.6, 0.35]


def test_randomization_p_is_scipys_paired_permutation_test() -> None:
    expected = stats.permutation_test(
        (np.array(A), np.array(B)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=999,
        random_state=np.random.default_rng(7),
    ).pvalue
    assert randomization_p(A, B, seed=7, resamples=999) == expected
    assert 0.001 < expected < 0.05  # a difference this size on 12 queries is rare under swapping
    assert randomization_p(A, A, seed=7) == 1.0


def test_randomization_p_is_exact_by_hand_on_four_queries() -> None:
    # Differences 1, 2, 3, 4: of the 16 sign flips only all-plus and all-minus reach |mean| >= 2.5.
    assert randomization_p([1, 2, 3, 4], [0, 0, 0, 0], seed=0) == pytest.approx(2 / 16)


def test_t_test_p_matches_scipy_and_a_hand_computation() -> None:
    assert t_test_p(A, B) == stats.ttest_rel(A, B).pvalue
    # Differences 1, 2, 3, 4: mean 2.5, sd sqrt(5/3), t = 2.5 / (sd / 2); with 3 degrees of freedom
    # P(|T| >= t) = 1 - (2 / pi) * (x / (1 + x^2) + atan(x)) for x = t / sqrt(3).
    t = 2.5 / (math.sqrt(5 / 3) / 2)
    x = t / math.sqrt(3)
    by_hand = 1 - (2 / math.pi) * (x / (1 + x * x) + math.atan(x))
    assert t_test_p([1, 2, 3, 4], [0, 0, 0, 0]) == pytest.approx(by_hand, rel=1e-12)
    assert t_test_p(A, A) == 1.0  # scipy gives nan when every difference is 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no precision warning reaches the report's user
        assert t_test_p([0.1, 0.2, 0.3], [0.0, 0.1, 0.2]) < 1e-10  # one difference, 0.1, every time


def test_bootstrap_interval_is_scipys_percentile_interval() -> None:
    expected = stats.bootstrap(
        (np.array(A),), np.mean, n_resamples=2000, method="percentile", random_state=np.random.default_rng(3)
    ).confidence_interval
    low, high = bootstrap_interval(A, seed=3, resamples=2000)
    assert (low, high) == (expected.low, expected.high)
    assert low < np.mean(A) < high
    assert bootstrap_interval([0.5, 0.5], seed=0) == (0.5, 0.5)


def test_holm_on_a_hand_checked_example() -> None:
    # Sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> raised to 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_compare_runs_pairs_runs_of_one_kind_and_benchmark_on_shared_queries() -> None:
    one = {q: v for q, v in zip("abcdefghijkl", A, strict=True)}
    two = {q: v for q, v in zip("abcdefghijkl", B, strict=True)}
    runs = [
        RunScores("x", "retrieval", "tiny", {"AP": one, "nDCG@10": one}),
        RunScores("y", "retrieval", "tiny", {"AP": two | {"z": 1.0}}),  # z: only y has it
        RunScores("w", "retrieval", "other", {"AP": two}),
        RunScores("q", "qa", "tiny", {"AP": two}),
    ]
    intervals, comparisons = compare_runs(runs, seed=0, resamples=999)
    assert [(c.run_a, c.run_b, c.measure, c.queries) for c in comparisons] == [("x", "y", "AP", 12)]
    (c,) = comparisons
    assert c.difference == pytest.approx(np.mean(A) - np.mean(B))
    assert c.p_randomization_holm == c.p_randomization  # one comparison: Holm leaves it
    assert c.significant
    assert [(i.run, i.measure, i.n) for i in intervals] == [
        ("x", "AP", 12), ("x", "nDCG@10", 12), ("y", "AP", 13), ("w", "AP", 12), ("q", "AP", 12)
    ]  # fmt: skip


# ------------------------------------------------------------------------------- a report over real runs

KEY_ENV = "IRBGEN_TEST_SIGNIFICANCE_KEY"


class Reader:
    """Judges by the stub's rules; a reader gives the gold answers when the documents it was shown hold
    every one of them, else it does not know (so closed-book never answers)."""

    def __init__(self, bench: Path) -> None:
        self.gold = {sample.question: sample.answers for sample in read_samples(bench)}

    def __call__(self, request: dict[str, Any]) -> str:
        if request.get("response_format"):
            return stub_reply(request)
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        answers = self.gold[re.search(r"^Question: (.*)$", user, re.M).group(1)]
        shown = user.split("Question:")[0].lower()
        return ", ".join(answers) if all(a.lower() in shown for a in answers) else "I don't know"


@pytest.fixture(scope="module")
def evals(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Three BM25 runs and two QA runs (rag with a judge, closed-book) on one phantom benchmark."""
    root = tmp_path_factory.mktemp("significance")
    bench = root / "bench"
    args = ["phantom", "--n", "60", "--seed", "1", "--depth", "6", "--questions-per-template", "2"]
    result = CliRunner().invoke(main, [*args, "--out", str(bench), "--quiet"])
    assert result.exit_code == 0, result.output
    paths = []
    for name, options in (("bm25", {}), ("bm25-flat", {"k1": 0.2, "b": 0.0}), ("bm25-long", {"b": 1.0})):
        evaluate_retrieval(bench, root / name, k=5, **options)
        paths.append(root / name)
    mp = pytest.MonkeyPatch()
    mp.setenv(KEY_ENV, "sk-test")
    try:
        with OpenAIStubServer(Reader(bench)) as server:
            llm = {"base_url": server.base_url, "api_key_env": KEY_ENV, "max_retries": 1, "backoff_base": 0.0}
            reader, judge = LLMSettings(model="stub", **llm), LLMSettings(model="judge", **llm)
            run_qa(bench, root / "rag", QAOptions("rag", reader, judge_settings=judge))
            run_qa(bench, root / "closed", QAOptions("closed-book", reader, judge_settings=judge))
    finally:
        mp.undo()
    return [*paths, root / "rag", root / "closed"]


def per_query(path: Path, measure: str) -> dict[str, float]:
    rows = [json.loads(line) for line in (path / "per_query.jsonl").read_text().splitlines()]
    return {
        row["query_id"]: row["metrics"][measure]
        for row in rows
        if row.get("judged", True) and row["metrics"].get(measure) is not None
    }


def test_report_tests_every_pair_and_matches_scipy(evals: list[Path], tmp_path: Path) -> None:
    out = write_report(evals, tmp_path / "report", seed=5)
    data = json.loads((out / "significance.json").read_text())
    assert data["seed"] == 5 and data["resamples"] == RESAMPLES and data["alpha"] == 0.05
    comparisons = data["comparisons"]
    retrieval = [c for c in comparisons if c["kind"] == "retrieval"]
    qa = [c for c in comparisons if c["kind"] == "qa"]
    measures = json.loads((evals[0] / "config.json").read_text())["measures"]
    assert len(retrieval) == 3 * len(measures) and {c["measure"] for c in retrieval} == set(measures)
    assert sorted(c["measure"] for c in qa) == ["em", "f1", "judge"]
    labels = {c["run_a"] for c in retrieval} | {c["run_b"] for c in retrieval}
    assert labels == {"bm25 (bm25)", "bm25 (bm25-flat)", "bm25 (bm25-long)"}

    # Every p-value is scipy's on the per-query scores the evaluations wrote; Holm over all of them.
    paths = {"bm25 (bm25)": evals[0], "bm25 (bm25-flat)": evals[1], "bm25 (bm25-long)": evals[2]}
    paths |= {"rag/stub": evals[3], "closed-book/stub": evals[4]}
    for c in comparisons:
        a, b = per_query(paths[c["run_a"]], c["measure"]), per_query(paths[c["run_b"]], c["measure"])
        queries = sorted(set(a) & set(b))
        x, y = np.array([a[q] for q in queries]), np.array([b[q] for q in queries])
        assert c["queries"] == len(queries) == 16
        assert c["difference"] == pytest.approx(np.mean(x - y))
        assert c["p_t"] == pytest.approx(1.0 if np.all(x == y) else stats.ttest_rel(x, y).pvalue)
        if not np.all(x == y):
            expected = stats.permutation_test(
                (x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
                vectorized=True, n_resamples=RESAMPLES, random_state=np.random.default_rng(5),
            ).pvalue  # fmt: skip
            assert c["p_randomization"] == expected
    assert [c["p_randomization_holm"] for c in comparisons] == holm(
        [c["p_randomization"] for c in comparisons]
    )
    assert [c["p_t_holm"] for c in comparisons] == holm([c["p_t"] for c in comparisons])
    rag_vs_closed = {c["measure"]: c for c in qa}
    assert rag_vs_closed["judge"]["significant"] is (rag_vs_closed["judge"]["p_randomization_holm"] < 0.05)

    # Intervals hold each run's mean, which is the overall table's number.
    for interval in data["intervals"]:
        mean = json.loads((paths[interval["run"]] / "metrics.json").read_text())["overall"][
            interval["measure"]
        ]
        assert interval["mean"] == pytest.approx(mean)
        assert interval["low"] <= interval["mean"] <= interval["high"]

    md = (out / "report.md").read_text()
    assert md.count("### Paired comparisons") == 2 and md.count("### Means with 95% bootstrap intervals") == 2
    assert (
        "| benchmark | measure | run A | run B | queries | A | B | A - B | p randomization | p t-test |" in md
    )
    footnote = f"Holm-corrected over all {len(comparisons)} comparisons of this report"
    assert footnote in md and "alpha 0.05" in md and "10,000 resamples, seed 5" in md
    marked = [c for c in comparisons if c["significant"]]
    assert md.count("\u2020 |") == len(marked) > 0  # a dagger after each significant difference
    for c in marked:
        assert f"{c['difference']:+.4f}\u2020" in md
    assert f"<td>{marked[0]['difference']:+.4f}\u2020</td>" in (out / "report.html").read_text()


def test_report_significance_is_byte_identical_and_seeded_from_the_cli(
    evals: list[Path], tmp_path: Path
) -> None:
    outputs = []
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        result = CliRunner().invoke(
            main, ["report", *map(str, evals), "--out", str(tmp_path / name), "--seed", seed]
        )
        assert result.exit_code == 0, result.output
        outputs.append((tmp_path / name / "significance.json").read_bytes())
    assert outputs[0] == outputs[1]
    assert (tmp_path / "a" / "report.md").read_bytes() == (tmp_path / "b" / "report.md").read_bytes()
    assert outputs[2] != outputs[0]  # another seed, other resamples


def test_report_rejects_bad_resamples_and_seed_with_one_line(evals: list[Path], tmp_path: Path) -> None:
    for option, value in (("--resamples", "0"), ("--seed", "-1")):
        args = ["report", str(evals[0]), "--out", str(tmp_path / "r"), option, value]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and option in result.output and "Traceback" not in result.output
    with pytest.raises(BadInputError, match="--resamples must be at least 1"):
        write_report(evals[:1], tmp_path / "r", resamples=0)
    assert not (tmp_path / "r").exists()


def test_a_per_query_value_that_is_not_a_number_is_named(evals: list[Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("config.json", "metrics.json"):
        (broken / name).write_bytes((evals[0] / name).read_bytes())
    row = {"query_id": "q9", "attributes": {}, "judged": True, "metrics": {"AP": "high"}}
    (broken / "per_query.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"per_query.jsonl: q9: AP: 'high' is not a finite number"):
        write_report([broken], tmp_path / "r")


def test_runs_ranked_to_different_depths_are_marked_where_the_measure_reads_past_one():
    shallow = {"AP": {"q1": 0.1, "q2": 0.2}, "nDCG@10": {"q1": 0.3, "q2": 0.4}}
    deep = {"AP": {"q1": 0.2, "q2": 0.4}, "nDCG@10": {"q1": 0.3, "q2": 0.5}}
    a = RunScores("a", "retrieval", "b", shallow, 10)
    b = RunScores("b", "retrieval", "b", deep, 100)
    _, comparisons = compare_runs([a, b], seed=0, resamples=100)
    depths = {c.measure: c.depths for c in comparisons}
    assert depths == {"AP": (10, 100), "nDCG@10": None}  # nDCG@10 reads 10 documents of both runs
    assert depths_differ("R@100", a, b) == (10, 100) and depths_differ("P@5", a, b) is None
    assert depths_differ("AP", a, replace(b, depth=10)) is None
    assert depths_differ("AP", a, replace(b, depth=None)) is None
    row = next(row for row in comparison_table(comparisons).rows if row[1] == "AP")
    assert row[7].endswith("\u2021")
    assert "different depths (10 and 100 documents a query)" in depths_note(comparisons)
