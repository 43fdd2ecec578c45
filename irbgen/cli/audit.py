"""`irbgen audit`: draw a sheet of samples for a human audit, or score a filled one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from irbgen.cli.scores import echo_rates, score_reviews_command
from irbgen.cli.support import benchmark_input, reporting_errors

DEFAULT_SAMPLE = 100
MAX_LISTED_PROBLEMS = 50


@click.command()
@benchmark_input(required=False)
@click.option(
    "--sample", "size", type=click.IntRange(min=1), help=f"Samples to draw.  [default: {DEFAULT_SAMPLE}]"
)
@click.option("--seed", type=int, help="Seed of the draw.  [default: 0]")
@click.option("--out", type=click.Path(path_type=Path), help="Folder to write the sheet to.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option(
    "--score",
    "score_dir",
    type=click.Path(path_type=Path),
    help="Score the filled sheet in this folder (BENCHMARK, if given, overrides the path it records).",
)
def audit(
    benchmark: Path | None,
    size: int | None,
    seed: int | None,
    out: Path | None,
    force: bool,
    score_dir: Path | None,
) -> None:
    """Audit a benchmark by hand: draw a sheet of samples to judge, or score a filled sheet."""
    if score_dir is not None:
        if out is not None or size is not None or seed is not None or force:
            raise click.UsageError("--score takes no --out, --sample, --seed or --force")
        _score(score_dir, benchmark)
    elif benchmark is None or out is None:
        raise click.UsageError("give BENCHMARK and --out to make a sheet, or --score DIR to score one")
    else:
        _sheet(benchmark, DEFAULT_SAMPLE if size is None else size, 0 if seed is None else seed, out, force)


def _sheet(benchmark: Path, size: int, seed: int, out: Path, force: bool) -> None:
    from irbgen.audit.publish import KIND_LABELS
    from irbgen.audit.records import KINDS
    from irbgen.audit.sheet import HEADER, MARKDOWN, SHEET, check_benchmark, make_sheet, write_sheet
    from irbgen.benchmark import check_output

    with reporting_errors():
        check_benchmark(benchmark)
        check_output(out, force, "audit", {"BENCHMARK": benchmark})
        sheet = make_sheet(benchmark, size, seed)
        write_sheet(out, sheet, force)
    header = sheet.header
    kinds = Counter(item.kind for item in sheet.items)
    mix = ", ".join(f"{kinds[kind]} {KIND_LABELS[kind]}" for kind in KINDS if kinds[kind])
    if header.size < size:
        click.echo(f"{benchmark} has only {header.size} samples; the sheet holds all of them: {mix}")
    else:
        click.echo(f"drew {header.size} of {header.population} samples (seed {seed}): {mix}")
    click.echo(
        f"wrote {SHEET}, {MARKDOWN} and {HEADER} to {out}; fill in the judgments in {SHEET}, "
        f"then run: irbgen audit --score {out}"
    )


def _score(directory: Path, benchmark: Path | None) -> None:
    from irbgen.audit.publish import random_draw
    from irbgen.audit.score import SCORE, SheetError, read_sheet, score_sheet
    from irbgen.review.audits import keep_judgments, sheet_judgments

    reviewed = (directory / "reviews").is_dir() and (directory / "samples.jsonl").is_file()
    if benchmark is None and reviewed:  # a benchmark judged in irbgen review
        score_reviews_command(directory)
        return

    with reporting_errors():
        try:
            header, items, bench = read_sheet(directory, benchmark)
            judgments = sheet_judgments(directory, bench, header, items)  # checked before anything is written
            score = score_sheet(directory, bench, header, items)
            keep_judgments(bench, header, judgments)
        except SheetError as error:
            for problem in error.problems[:MAX_LISTED_PROBLEMS]:
                click.echo(problem, err=True)
            hidden = len(error.problems) - MAX_LISTED_PROBLEMS
            if hidden > 0:
                click.echo(f"({hidden} more not shown)", err=True)
            raise
    header = score.header
    drawn = random_draw(header.size, header.seed)
    echo_rates(score, f"audited {score.overall.judged} samples of {header.name} ({header.source})", drawn)
    card = bench / "README.md"
    click.echo(f"wrote {directory / SCORE} and the Audit section of {card} (its checksum in manifest.json)")


