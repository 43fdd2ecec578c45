"""Paired significance between runs on the same queries, and bootstrap intervals of a run's mean.

The tests are scipy.stats's: a paired randomization (permutation) test of the mean difference
(`permutation_test` with permutation_type "samples", which swaps the two runs' scores of a query) and the
paired t-test (`ttest_rel`); `bootstrap` gives the percentile interval of a mean. Every resampling is
seeded, so the same scores and seed give the same p-values. `holm` adjusts p-values over a family of
comparisons (Holm's step-down rule). Everything here is pure: numbers in, numbers out.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np
from scipy import stats

ALPHA = 0.05
CONFIDENCE = 0.95
RESAMPLES = 10_000
BATCH_VALUES = 4_000_000  # resampled values held at once (about 32 MB), so memory stays bounded


@dataclass(frozen=True)
class Interval:
    """A run's mean of one measure over N queries, with its bootstrap interval [low, high]."""

    run: str
    kind: str
    group: str
    measure: str
    n: int
    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class Comparison:
    """Run A against run B on one measure, over the queries both have a value for."""

    kind: str
    group: str
    measure: str
    run_a: str
    run_b: str
    queries: int
    mean_a: float
    mean_b: float
    difference: float  # mean of A - B
    p_randomization: float
    p_t: float
    p_randomization_holm: float = math.nan
    p_t_holm: float = math.nan
    depths: tuple[int, int] | None = None  # the runs' depths when they differ and the measure looks past one

    @property
    def significant(self) -> bool:
        """Whether the Holm-adjusted randomization p-value is below ALPHA."""
        return self.p_randomization_holm < ALPHA


@dataclass(frozen=True)
class RunScores:
    """One run's per-query scores: measure -> query id -> value. Runs pair when kind and group match."""

    run: str
    kind: str
    group: str
    scores: Mapping[str, Mapping[str, float]]
    depth: int | None = None  # documents ranked per query (a retrieval run's k), when known


def depths_differ(measure: str, first: RunScores, second: RunScores) -> tuple[int, int] | None:
    """The two runs' depths when they differ and the measure reads past the shallower one: AP, R or RR
    with no cutoff, or a cutoff deeper than one run ranked, compare different rankings, not only systems."""
    if first.depth is None or second.depth is None or first.depth == second.depth:
        return None
    _, _, cutoff = measure.partition("@")
    if cutoff.isdigit() and int(cutoff) <= min(first.depth, second.depth):
        return None
    return first.depth, second.depth


def _mean_difference(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(a - b, axis=axis)


def randomization_p(a: Sequence[float], b: Sequence[float], seed: int, resamples: int = RESAMPLES) -> float:
    """Two-sided p-value of the paired randomization test of mean(a - b) (exact when 2^n <= resamples)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if np.all(x == y):
        return 1.0
    result = stats.permutation_test(
        (x, y),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        batch=_batch(x.size),
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return min(float(result.pvalue), 1.0)


def t_test_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test; 1.0 when every difference is 0 (scipy gives nan).

    Differences that are nearly all the same give scipy's (tiny) p-value without its precision warning.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(stats.ttest_rel(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).pvalue)
    return 1.0 if math.isnan(p) else p


def bootstrap_interval(
    values: Sequence[float], seed: int, resamples: int = RESAMPLES, confidence: float = CONFIDENCE
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean; one value, or all values equal, give [v, v]."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    if np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    result = stats.bootstrap(
        (data,),
        np.mean,
        n_resamples=resamples,
        confidence_level=confidence,
        method="percentile",
        vectorized=True,
        batch=_batch(data.size),
        random_state=np.random.default_rng(seed),
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


def _batch(n: int) -> int:
    return max(1, BATCH_VALUES // max(n, 1))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: the i-th smallest p times (m - i), kept non-decreasing, at most 1."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: (p_values[i], i))):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def compare_runs(
    runs: Sequence[RunScores], seed: int = 0, resamples: int = RESAMPLES
) -> tuple[list[Interval], list[Comparison]]:
    """Every run's interval per measure, and every pair of runs of a kind and group on each measure both have.

    A pair is scored over the queries both runs have a value for (in query id order); pairs with fewer
    than 2 such queries are left out. Holm's correction runs over all the comparisons returned, once for
    the randomization p-values and once for the t-test's.
    """
    intervals = []
    for run in runs:
        for measure in sorted(run.scores):
            values = [run.scores[measure][query] for query in sorted(run.scores[measure])]
            if values:
                low, high = bootstrap_interval(values, seed, resamples)
                mean = float(np.mean(values))
                intervals.append(
                    Interval(run.run, run.kind, run.group, measure, len(values), mean, low, high)
                )
    raw = []
    for first, second in combinations(runs, 2):
        if (first.kind, first.group) != (second.kind, second.group):
            continue
        for measure in sorted(set(first.scores) & set(second.scores)):
            a_scores, b_scores = first.scores[measure], second.scores[measure]
            queries = sorted(set(a_scores) & set(b_scores))
            if len(queries) < 2:
                continue
            a = [a_scores[query] for query in queries]
            b = [b_scores[query] for query in queries]
            mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
            raw.append(
                Comparison(
                    first.kind, first.group, measure, first.run, second.run, len(queries), mean_a, mean_b,
                    float(np.mean(np.subtract(a, b))), randomization_p(a, b, seed, resamples), t_test_p(a, b),
                    depths=depths_differ(measure, first, second),
                )
            )  # fmt: skip
    by_randomization = holm([c.p_randomization for c in raw])
    by_t = holm([c.p_t for c in raw])
    comparisons = [
        Comparison(**(asdict(c) | {"p_randomization_holm": p_r, "p_t_holm": p_t}))
        for c, p_r, p_t in zip(raw, by_randomization, by_t, strict=True)
    ]
    return intervals, comparisons


def as_json(
    intervals: Sequence[Interval], comparisons: Sequence[Comparison], seed: int, resamples: int = RESAMPLES
) -> dict[str, Any]:
    """The intervals and comparisons with what produced them, for a machine-readable file."""
    return {
        "tests": {
            "randomization": "scipy.stats.permutation_test, paired (permutation_type='samples'), "
            "statistic mean(A - B), two-sided",
            "t_test": "scipy.stats.ttest_rel, two-sided",
            "correction": "Holm, over all comparisons, separately for each test",
            "significant": f"Holm-adjusted randomization p < {ALPHA}",
            "interval": f"scipy.stats.bootstrap, percentile, {CONFIDENCE:.0%} of the mean",
        },
        "alpha": ALPHA,
        "resamples": resamples,
        "seed": seed,
        "intervals": [asdict(interval) for interval in intervals],
        "comparisons": [asdict(c) | {"significant": c.significant} for c in comparisons],
    }
