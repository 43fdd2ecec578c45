"""write_report: read the evaluation directories, assemble the report's sections, write every file."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# The benchmark writer's own replace-in-place helpers, so every irbgen output directory is swapped alike.
from irbgen.benchmark import check_output, staged_directory
from irbgen.errors import BadInputError
from irbgen.eval.qa.judge import judged_text
from irbgen.eval.report.charts import (
    answers_section,
    evidence_chart,
    qa_charts,
    report_colours,
    retrieval_charts,
)
from irbgen.eval.report.document import Block, Bullets, Heading, Paragraph
from irbgen.eval.report.necessity import hop_necessity_section
from irbgen.eval.report.render import render_html, render_markdown
from irbgen.eval.report.runs import EvalRun, answer_histograms, benchmark_groups, read_eval, unique_labels
from irbgen.eval.report.tables import (
    attribute_tables,
    comparison_table,
    depths_note,
    interval_table,
    overall_table,
    runs_table,
    significance_note,
)
from irbgen.eval.significance import RESAMPLES, Comparison, Interval, RunScores, as_json, compare_runs
from irbgen.io import write_json

SIGNIFICANCE = "significance.json"


def write_report(
    eval_dirs: list[Path], out: Path, force: bool = False, seed: int = 0, resamples: int = RESAMPLES
) -> Path:
    """Write OUT/ with report.md, report.html, significance.json and the PNG charts for these evaluation
    directories; SEED seeds the randomization tests and bootstrap intervals, each of RESAMPLES resamples."""
    if resamples < 1 or seed < 0:
        raise BadInputError(
            f"--resamples must be at least 1 and --seed at least 0, not {resamples} and {seed}"
        )
    out = Path(out)
    if not eval_dirs:
        raise BadInputError("no evaluation directories given")
    check_output(out, force, "report", {"EVAL_DIRS": eval_dirs})
    runs = [read_eval(Path(path)) for path in eval_dirs]
    unique_labels(runs)
    histograms, missing = answer_histograms(runs)
    groups = benchmark_groups(runs)
    scores = [RunScores(run.label, run.kind, groups[run.label], run.scores, _depth(run)) for run in runs]
    intervals, comparisons = compare_runs(scores, seed, resamples)
    tested = _Tested(intervals, comparisons, seed, resamples)
    with staged_directory(out, force, "report") as tmp:
        blocks = _sections(runs, histograms, missing, tmp, tested)
        write_json(tmp / SIGNIFICANCE, as_json(intervals, comparisons, seed, resamples))
        (tmp / "report.md").write_bytes(render_markdown(blocks).encode())
        (tmp / "report.html").write_bytes(render_html(blocks, "irbgen evaluation report").encode())
    return out


def _depth(run: EvalRun) -> int | None:
    """How many documents a retrieval run ranked per query (its config's k), else None."""
    depth = run.config.get("k") if run.kind == "retrieval" else None
    return depth if isinstance(depth, int) and not isinstance(depth, bool) else None


@dataclass(frozen=True)
class _Tested:
    intervals: list[Interval]
    comparisons: list[Comparison]
    seed: int
    resamples: int

    def blocks(self, runs: list[EvalRun], kind: str) -> list[Block]:
        """The intervals of these runs, then their paired comparisons with the footnote."""
        labels = {run.label for run in runs}
        intervals = [i for i in self.intervals if i.run in labels]
        comparisons = [c for c in self.comparisons if c.kind == kind]
        blocks: list[Block] = []
        if intervals:
            blocks += [Heading(3, "Means with 95% bootstrap intervals"), interval_table(runs, intervals)]
        if comparisons:
            blocks += [Heading(3, "Paired comparisons"), comparison_table(comparisons)]
        if intervals or comparisons:
            blocks.append(Paragraph(significance_note(len(self.comparisons), self.seed, self.resamples)))
        if depths_note(comparisons):
            blocks.append(Paragraph(depths_note(comparisons)))
        return blocks


def _sections(
    runs: list[EvalRun], histograms: dict[str, Counter[int]], missing: list[str], tmp: Path, tested: _Tested
) -> list[Block]:
    """The report in order: runs, retrieval, question answering, benchmarks, notes; charts drawn into TMP."""
    notes: list[str] = []
    colours = report_colours(runs, list(histograms))  # one colour per run (and benchmark) in every chart
    retrieval = [run for run in runs if run.kind == "retrieval"]
    qa = [run for run in runs if run.kind == "qa"]
    blocks: list[Block] = [
        Heading(1, "irbgen evaluation report"),
        Paragraph(f"{_plural(len(runs), 'run')}: {len(retrieval)} retrieval, {len(qa)} question answering."),
        Heading(2, "Runs"),
        runs_table(runs),
    ]
    if retrieval:
        blocks += [Heading(2, "Retrieval"), Heading(3, "Overall"), overall_table(retrieval)]
        blocks += tested.blocks(retrieval, "retrieval")
        blocks += retrieval_charts(retrieval, tmp, notes, colours)
        blocks += attribute_tables(retrieval)
    if qa:
        blocks += [Heading(2, "Question answering"), Heading(3, "Overall"), overall_table(qa)]
        judged = [f"{run.label}: {judged_text(run.judge)}" for run in qa if run.judge is not None]
        if judged:
            blocks.append(Bullets(tuple(judged)))
        blocks += tested.blocks(qa, "qa")
        blocks += qa_charts(qa, tmp, colours)
        blocks += evidence_chart(qa, tmp)
        blocks += attribute_tables(qa)
        blocks += hop_necessity_section(qa)
    if histograms:
        blocks += answers_section(histograms, tmp, colours)
    notes += [f"Benchmark not found for {text}; its answer-count histogram is left out." for text in missing]
    notes += [f"{run.label}: {note}" for run in runs for note in run.notes]
    if any(tmp.glob("*.png")):
        notes.append(
            "Numbers above bars count the queries behind each value; a hatched bar or an open marker "
            "stands on fewer than 5 queries, so read it with care."
        )
    if notes:
        blocks += [Heading(2, "Notes"), Bullets(tuple(notes))]
    return blocks


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
