"""The report's charts (PNG, drawn by irbgen.eval.plots), each with the blocks that show it.

Retrieval nDCG per attribute value (grouped bars), QA measures against difficulty and hops (line panels),
evidence recall against answer F1 per hop count for QA runs that retrieve (a panel per run), and the
answers-per-question histogram of the benchmarks (bars and a table). COLOURS (see `report_colours`) gives
each run and each benchmark its colour in every chart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from irbgen.eval.breakdown import ordered
from irbgen.eval.evaldir import METRICS
from irbgen.eval.plots import Panel, Series, bar_chart, colour_map, line_chart
from irbgen.eval.report.document import Block, Heading, Image, Table
from irbgen.eval.report.runs import EvalRun
from irbgen.eval.report.tables import top_values

QA_MEASURES = {"f1": "F1", "em": "EM", "judge": "judge"}  # plotted when a run has them, in this order
QA_AXES = ("difficulty", "hops")
RETRIEVAL_ATTRIBUTES = (
    "hops",
    "difficulty",
    "question_type",
    "false_premise",
    "language",
    "freshness",
    "topic",
)
MAX_PLOT_VALUES = 30  # bar groups per chart; the values with the most queries are kept
ANSWER_BINS = 20  # answer counts from this value up share the last histogram bar
EMPTY = "(empty)"  # the histogram bar of samples without an answer (false premises, or only blank answers)
EVIDENCE_COLOURS = {"evidence recall": "#000000", "answer F1": "#7f7f7f"}  # no run's colour


def report_colours(runs: list[EvalRun], benchmarks: list[str]) -> dict[str, str]:
    """A colour per run label and per benchmark label: runs first, then benchmarks, each in sorted order."""
    colours = colour_map(run.label for run in runs)
    return {**colours, **colour_map(benchmarks, start=len(colours))}


def retrieval_charts(
    runs: list[EvalRun], tmp: Path, notes: list[str], colours: dict[str, str] | None = None
) -> list[Block]:
    """nDCG per attribute value: a bar chart per attribute with two or more values; notes what is left out."""
    measure_of = {run.label: _ndcg(run) for run in runs}
    for run in runs:
        if measure_of[run.label] is None:
            notes.append(f"{run.label}: no nDCG measure in {METRICS}; left out of the retrieval charts.")
    names = sorted({measure for measure in measure_of.values() if measure})
    ylabel = names[0] if len(names) == 1 else "nDCG@k"
    blocks: list[Block] = []
    for attribute in RETRIEVAL_ATTRIBUTES:
        values, dropped = top_values(runs, attribute, MAX_PLOT_VALUES)
        if len(values) < 2:
            continue
        series = []
        for run in runs:
            measure = measure_of[run.label]
            cells = run.by.get(attribute, {})
            points = _points(cells, measure, values) if measure else ()
            if points:
                label = run.label if len(names) < 2 else f"{run.label} ({measure})"
                series.append(Series(label, points, _counts(cells, "count", points), _colour(colours, run)))
        if not series:
            continue
        name = f"retrieval-by-{attribute}.png"
        panel = Panel(f"{ylabel} by {attribute}", attribute, ylabel, tuple(series))
        bar_chart(tmp / name, panel, ylim=_ylim(series))
        blocks += [Heading(3, f"{ylabel} by {attribute}"), Image(name, f"{ylabel} by {attribute}")]
        if dropped:
            notes.append(f"{name}: the {MAX_PLOT_VALUES} {attribute} values with most queries are drawn.")
    return blocks


def _ndcg(run: EvalRun) -> str | None:
    preferred = f"nDCG@{run.config.get('k')}"
    if preferred in run.overall:
        return preferred
    return next((measure for measure in run.measures if measure.startswith("nDCG@")), None)


def qa_charts(runs: list[EvalRun], tmp: Path, colours: dict[str, str] | None = None) -> list[Block]:
    """F1, EM and the judge against difficulty and against hops: one chart of line panels per axis."""
    measures = [measure for measure in QA_MEASURES if any(measure in run.overall for run in runs)]
    blocks: list[Block] = []
    for attribute in QA_AXES:
        panels = []
        for measure in measures:
            series = []
            for run in runs:
                cells = run.by.get(attribute, {})
                points = _points(cells, measure, ordered(cells))
                if points:
                    counted = "judge_count" if measure == "judge" else "count"
                    counts = _counts(cells, counted, points)
                    series.append(Series(run.label, points, counts, _colour(colours, run)))
            if series:
                name = QA_MEASURES[measure]
                panels.append(Panel(f"{name} by {attribute}", attribute, name, tuple(series)))
        if not panels:
            continue
        name = f"qa-by-{attribute}.png"
        ylim = _ylim([series for panel in panels for series in panel.series])
        line_chart(tmp / name, panels, ylim=ylim)
        title = ", ".join(panel.ylabel for panel in panels) + f" by {attribute}"
        blocks += [Heading(3, title), Image(name, title)]
    return blocks


def evidence_chart(runs: list[EvalRun], tmp: Path) -> list[Block]:
    """Per run that retrieves: its evidence recall and its answer F1 per hop count, on one panel.

    Recall high and F1 low at a hop count: the evidence was found but not used; both low: not found.
    Runs without evidence recall (closed-book, or evaluated before it existed) are left out.
    """
    panels = []
    for run in runs:
        cells = run.by.get("hops", {})
        recall = _points(cells, "evidence_recall", ordered(cells))
        f1 = _points(cells, "f1", ordered(cells))
        if not recall or not f1:
            continue
        series = tuple(
            Series(label, points, _counts(cells, "count", points), EVIDENCE_COLOURS[label])
            for label, points in (("evidence recall", recall), ("answer F1", f1))
        )
        panels.append(Panel(run.label, "hops", "evidence recall / F1", series))
    if not panels:
        return []
    name = "qa-evidence-recall-vs-f1.png"
    line_chart(tmp / name, panels, ylim=(0.0, 1.05))
    title = "Evidence recall and F1 by hops"
    return [Heading(3, title), Image(name, title)]


def _colour(colours: dict[str, str] | None, run: EvalRun) -> str | None:
    return (colours or {}).get(run.label)


def _points(
    cells: dict[str, dict[str, float | None]], measure: str, values: list[str]
) -> tuple[tuple[str, float], ...]:
    points = []
    for value in values:
        number = cells.get(value, {}).get(measure)
        if number is not None:
            points.append((value, number))
    return tuple(points)


def _counts(
    cells: dict[str, dict[str, float | None]], key: str, points: tuple[tuple[str, float], ...]
) -> tuple[tuple[str, int], ...]:
    """The number of queries behind each point, where the cell says."""
    found = ((value, cells.get(value, {}).get(key)) for value, _ in points)
    return tuple((value, int(n)) for value, n in found if n is not None)


def _ylim(series: Sequence[Series]) -> tuple[float, float]:
    top = max((y for one in series for _, y in one.points), default=1.0)
    return (0.0, max(1.0, top) * 1.05)


def answers_section(
    histograms: dict[str, Counter[int]], tmp: Path, colours: dict[str, str] | None = None
) -> list[Block]:
    """The Benchmarks section: the answers-per-question histogram as a chart and as a table; samples with
    no answer are counted in the first bar, (empty)."""

    def bin_of(n: int) -> str:
        return EMPTY if n == 0 else str(n) if n < ANSWER_BINS else f"{ANSWER_BINS}+"

    binned: dict[str, Counter[str]] = {label: Counter() for label in histograms}
    for label, histogram in histograms.items():
        for n, count in histogram.items():
            binned[label][bin_of(n)] += count
    series = tuple(
        Series(label, tuple((x, float(c)) for x, c in counts.items()), colour=(colours or {}).get(label))
        for label, counts in binned.items()
    )
    name = "answers-histogram.png"
    panel = Panel("Answers per question", "answers", "samples", series, order=(EMPTY,))
    bar_chart(tmp / name, panel, integer_y=True)
    bins = panel.xs()
    labels = list(binned)
    rows = tuple((x, *(str(binned[label].get(x, 0)) for label in labels)) for x in bins)
    return [
        Heading(2, "Benchmarks"),
        Heading(3, "Answers per question"),
        Image(name, "Answers per question"),
        Table(("answers", *labels), rows),
    ]
