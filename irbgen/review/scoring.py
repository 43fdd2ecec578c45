"""Score BENCH/reviews: validity with Wilson intervals, agreement between reviewers, the card's Audit section.

Rates come from audit/score.py and the card is written by audit/publish.py, so a review and a filled
audit sheet report the same figures the same way. Where several reviewers fully judged a sample, a
criterion holds only if every one of them said it holds (a sample is valid when all agree it is). The
rates carry intervals only when the judged samples are a random sample (see draws.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from irbgen.audit.facts import kind_of
from irbgen.audit.publish import HEADING, how_drawn, publish_section, rate_tables
from irbgen.audit.records import CRITERIA, AuditHeader, AuditItem, AuditScore, Judgment
from irbgen.audit.score import score_items
from irbgen.audit.sheet import check_benchmark, scan_samples
from irbgen.benchmark import read_manifest
from irbgen.errors import BadInputError
from irbgen.review.draws import Drawn, describe
from irbgen.review.index import BenchmarkIndex
from irbgen.review.store import AUDITS, REVIEWS, Review, read_reviews

Reviews = Mapping[str, Mapping[str, Review]]  # reviewer -> sample id -> latest review


@dataclass(frozen=True)
class Agreement:
    """How two reviewers' valid / not valid verdicts agree on the samples both fully judged."""

    first: str
    second: str
    shared: int
    agreed: int
    kappa: float | None  # None when chance agreement is 1 (both gave one verdict throughout)


@dataclass(frozen=True)
class ReviewScore:
    """The scored reviews: rates overall and per kind, who judged, pairwise agreement, how drawn."""

    score: AuditScore
    reviewers: list[str]
    agreements: list[Agreement]
    drawn: Drawn


def complete(reviews: Reviews) -> dict[str, dict[str, Judgment]]:
    """Reviewer -> sample id -> judgment, keeping only judgments of all three criteria."""
    return {
        reviewer: {sample: review.judgment() for sample, review in samples.items() if not review.missing()}
        for reviewer, samples in reviews.items()
    }


def combine(judged: Mapping[str, Mapping[str, Judgment]]) -> dict[str, Judgment]:
    """Sample id -> one judgment: a criterion holds only if every reviewer of the sample said it holds."""
    by_sample: dict[str, list[Judgment]] = {}
    for samples in judged.values():
        for sample, judgment in samples.items():
            by_sample.setdefault(sample, []).append(judgment)
    return {
        sample: Judgment(
            **{name: all(getattr(j, name) for j in judgments) for name in CRITERIA},
            note=" | ".join(j.note for j in judgments if j.note),
        )
        for sample, judgments in by_sample.items()
    }


def cohen_kappa(first: Sequence[bool], second: Sequence[bool]) -> float | None:
    """Cohen's kappa of two raters' yes/no labels of the same items; None if chance agreement is 1."""
    if len(first) != len(second) or not first:
        raise ValueError(f"need two equally long, non-empty label lists, got {len(first)} and {len(second)}")
    n = len(first)
    observed = sum(a == b for a, b in zip(first, second, strict=True)) / n
    yes_first, yes_second = sum(first) / n, sum(second) / n
    expected = yes_first * yes_second + (1 - yes_first) * (1 - yes_second)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def agreements(judged: Mapping[str, Mapping[str, Judgment]]) -> list[Agreement]:
    """Cohen's kappa on the valid verdict for every pair of reviewers who judged samples in common."""
    found = []
    for first, second in combinations(sorted(judged), 2):
        shared = sorted(set(judged[first]) & set(judged[second]))
        if not shared:
            continue
        a = [judged[first][sample].valid for sample in shared]
        b = [judged[second][sample].valid for sample in shared]
        kappa = cohen_kappa(a, b)
        agreed = sum(x == y for x, y in zip(a, b, strict=True))
        found.append(
            Agreement(first, second, len(shared), agreed, None if kappa is None else round(kappa, 4))
        )
    return found


def score_reviews(benchmark: Path) -> ReviewScore:
    """Score every fully judged sample in BENCH/reviews (nothing is written)."""
    benchmark = Path(benchmark)
    check_benchmark(benchmark)
    manifest = read_manifest(benchmark)
    reviews = read_reviews(benchmark)
    index = BenchmarkIndex.samples_only(benchmark)
    check_current(benchmark, reviews, index)
    judged = {reviewer: samples for reviewer, samples in complete(reviews).items() if samples}
    if not judged:
        raise BadInputError(
            f"{benchmark / REVIEWS}: no fully judged sample; judge some with: irbgen review {benchmark}"
        )
    combined = combine(judged)
    unknown = sorted(set(combined) - set(index.samples.ids))
    if unknown:
        raise BadInputError(
            f"{benchmark / REVIEWS}: {len(unknown)} judged sample(s) not in samples.jsonl (first "
            f"{unknown[0]!r}); the reviews belong to another build of this benchmark"
        )
    counted = [
        review.draw for samples in reviews.values() for review in samples.values() if not review.missing()
    ]
    drawn = describe(counted, set(combined), index.samples.ids)
    population, digest = scan_samples(benchmark)
    header = AuditHeader(
        benchmark=str(benchmark.resolve()),
        name=manifest.name,
        source=manifest.source,
        seed=drawn.seed,
        requested=len(combined),
        size=len(combined),
        population=population,
        samples_sha256=digest,
    )
    order = [sample for sample in index.samples.ids if sample in combined]
    items = [_item(index, sample, combined[sample]) for sample in order]
    score = score_items(header, items, intervals=drawn.random)
    return ReviewScore(score, sorted(judged), agreements(judged), drawn)


def check_current(benchmark: Path, reviews: Reviews, index: BenchmarkIndex) -> None:
    """BadInputError if a judgment was made on a sample that has changed since (its line's sha256)."""
    digests: dict[str, str] = {}
    stale = []
    for reviewer, samples in reviews.items():
        for sample, review in samples.items():
            if sample not in index.samples:
                continue  # reported as a sample of another build by the caller
            if sample not in digests:
                digests[sample] = index.digest(sample)
            if not review.is_of(digests[sample]):
                stale.append((reviewer, sample))
    if stale:
        reviewer, sample = stale[0]
        raise BadInputError(
            f"{Path(benchmark) / REVIEWS}: {len(stale)} judgment(s) of samples that changed since they were "
            f"judged (first {sample!r} by {reviewer}); judge them again with: irbgen review {benchmark}"
            + (" (or score a new irbgen audit sheet)" if reviewer.startswith(f"{AUDITS}/") else "")
        )


def valid_ids(benchmark: Path) -> set[str]:
    """Ids of the samples judged valid in BENCH/reviews, by `irbgen review` and by scored audit sheets
    (by every reviewer and sheet that fully judged them)."""
    audits = {f"{AUDITS}/{name}": samples for name, samples in read_reviews(benchmark, AUDITS).items()}
    reviews = {**read_reviews(benchmark), **audits}
    check_current(benchmark, reviews, BenchmarkIndex.samples_only(benchmark))
    judged = complete(reviews)
    return {sample for sample, judgment in combine(judged).items() if judgment.valid}


def render_review_section(result: ReviewScore) -> str:
    """The card's Audit section for reviews: who judged how many samples, rates, failures, agreement."""
    header = result.score.header
    names = ", ".join(result.reviewers)
    who = (
        f"One reviewer ({names})"
        if len(result.reviewers) == 1
        else f"{len(result.reviewers)} reviewers ({names})"
    )
    several = (
        " (for a sample judged by several reviewers: when every one of them found all three to hold)"
        if len(result.reviewers) > 1
        else ""
    )
    intro = (
        f"{who} judged {header.size} of the {header.population} samples of `samples.jsonl` (sha256 "
        f"`{header.samples_sha256[:12]}`) with `irbgen review`, on three criteria: the question is well "
        "formed, the gold answer is correct (for a false premise: the premise really is false), and the "
        f"evidence supports it. A sample is valid when all three hold{several}.\n"
    )
    drawn = how_drawn(result.drawn.text, result.drawn.random)
    lines = [f"{HEADING}\n", intro, drawn, *rate_tables(result.score)]
    if result.agreements:
        lines += ["", "| reviewers | judged by both | agreed on valid | Cohen's kappa |", "|---|---|---|---|"]
        lines += [
            f"| {a.first}, {a.second} | {a.shared} | {a.agreed} | {_kappa(a.kappa)} |"
            for a in result.agreements
        ]
    return "\n".join(lines) + "\n"


def publish_reviews(benchmark: Path, result: ReviewScore) -> None:
    """Write the review's Audit section into the card and its sha256 into manifest.json."""
    publish_section(Path(benchmark), render_review_section(result))


def _kappa(value: float | None) -> str:
    return "– (one verdict throughout)" if value is None else f"{value:.2f}"


def _item(index: BenchmarkIndex, sample_id: str, judgment: Judgment) -> AuditItem:
    sample = index.sample(sample_id)
    return AuditItem(
        id=sample.id,
        kind=kind_of(sample),
        judgment=judgment,
        source=sample.source,
        question=sample.question,
        answers=sample.answers,
        false_premise=sample.false_premise,
    )
