"""What `irbgen audit --score` and `irbgen review --score` print: the valid rates, and the review scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from irbgen.cli.support import reporting_errors

if TYPE_CHECKING:
    from irbgen.audit.records import AuditScore


def echo_rates(score: AuditScore, lead: str, drawn: str) -> None:
    """Print LEAD with the valid rate, the rate per kind (with Wilson intervals only if the score has them:
    a random sample), failures per criterion, and how the samples were DRAWN."""
    from irbgen.audit.publish import CRITERION_LABELS, KIND_LABELS, has_intervals, interval, percent
    from irbgen.audit.records import CRITERIA

    overall = score.overall
    if has_intervals(score):
        click.echo(f"{lead}: {overall.valid} valid, {percent(overall.rate)} {interval(overall)} (Wilson 95%)")
    else:
        click.echo(
            f"{lead}: {overall.valid} valid, {percent(overall.rate)} (not a random sample: no interval)"
        )
    for kind, rate in score.by_kind.items():
        share = f"{percent(rate.rate)} {interval(rate)}" if has_intervals(score) else percent(rate.rate)
        click.echo(f"  {KIND_LABELS[kind]}: {rate.judged} judged, {rate.valid} valid, {share}")
    failed = ", ".join(f"{CRITERION_LABELS[name]} {overall.failed[name]}" for name in CRITERIA)
    click.echo(f"failed: {failed}")
    click.echo(f"drawn: {drawn}")


def score_reviews_command(benchmark: Path) -> None:
    """Score BENCH/reviews, print the figures and write the card's Audit section."""
    from irbgen.review.scoring import publish_reviews, score_reviews

    with reporting_errors():
        result = score_reviews(benchmark)
        publish_reviews(benchmark, result)
    header = result.score.header
    reviewers = ", ".join(result.reviewers)
    echo_rates(
        result.score,
        f"reviewed {header.size} of {header.population} samples of {header.name} ({header.source}) "
        f"by {reviewers}",
        result.drawn.text,
    )
    for a in result.agreements:
        kappa = "undefined (one verdict throughout)" if a.kappa is None else f"{a.kappa:.2f}"
        click.echo(
            f"agreement {a.first} / {a.second}: {a.agreed} of {a.shared} shared samples, "
            f"Cohen's kappa {kappa}"
        )
    click.echo(f"wrote the Audit section of {Path(benchmark) / 'README.md'} (its checksum in manifest.json)")
