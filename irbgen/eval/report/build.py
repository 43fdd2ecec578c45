"""write_report: read the evaluation directories, assemble the report's sections, write every file."""

from __future__ import annotations

from collections import Counter
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
from irbgen.eval.report.render import render_html, render_markdown
from irbgen.eval.report.runs import EvalRun, answer_histograms, read_eval, unique_labels
from irbgen.eval.report.tables import attribute_tables, overall_table, runs_table


def write_report(eval_dirs: list[Path], out: Path, force: bool = False) -> Path:
    """Write OUT/ with report.md, report.html and the PNG charts for these evaluation directories."""
    out = Path(out)
    if not eval_dirs:
        raise BadInputError("no evaluation directories given")
    check_output(out, force, "report", {"EVAL_DIRS": eval_dirs})
    runs = [read_eval(Path(path)) for path in eval_dirs]
    unique_labels(runs)
    histograms, missing = answer_histograms(runs)
    with staged_directory(out, force, "report") as tmp:
        blocks = _sections(runs, histograms, missing, tmp)
        (tmp / "report.md").write_bytes(render_markdown(blocks).encode())
        (tmp / "report.html").write_bytes(render_html(blocks, "irbgen evaluation report").encode())
    return out


def _sections(
    runs: list[EvalRun], histograms: dict[str, Counter[int]], missing: list[str], tmp: Path
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
        blocks += retrieval_charts(retrieval, tmp, notes, colours)
        blocks += attribute_tables(retrieval)
    if qa:
        blocks += [Heading(2, "Question answering"), Heading(3, "Overall"), overall_table(qa)]
        judged = [f"{run.label}: {judged_text(run.judge)}" for run in qa if run.judge is not None]
        if judged:
            blocks.append(Bullets(tuple(judged)))
        blocks += qa_charts(qa, tmp, colours)
        blocks += evidence_chart(qa, tmp)
        blocks += attribute_tables(qa)
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
