"""The report's tables: the runs, overall measures per run, and measures per attribute value per run."""

from __future__ import annotations

from collections import Counter
from typing import Any

from irbgen.eval.breakdown import ordered, value_order
from irbgen.eval.report.document import Block, Heading, Paragraph, Table
from irbgen.eval.report.runs import EvalRun
from irbgen.eval.significance import ALPHA, CONFIDENCE, Comparison, Interval

# Table columns: retrieval measures (in this order of families), then answer measures, then the judge.
RETRIEVAL_FAMILIES = ("nDCG", "R", "Recall", "P", "RR", "MRR", "AP", "MAP")
ANSWER_ORDER = ("f1", "em", "precision", "recall", "contains", "false_premise_detection_rate")
MAX_TABLE_VALUES = 100  # attribute values per table; likewise
MISSING = "n/a"
DAGGER = "\u2020"
DEPTHS = "\u2021"  # the runs ranked to different depths


def runs_table(runs: list[EvalRun]) -> Table:
    """One row per run: what it ran, on which benchmark, with which irbgen, and where it is."""
    rows = []
    for run in runs:
        config = run.config
        system = config.get("retriever") if run.kind == "retrieval" else config.get("model")
        rows.append(
            (
                run.label,
                run.kind,
                str(config.get("benchmark_name") or ""),
                str(run.queries),
                _text(config.get("k")),
                _text(config.get("method")) if run.kind == "qa" else "",
                _text(system),
                _text(config.get("irbgen_version")),
                str(run.path),
            )
        )
    header = ("run", "kind", "benchmark", "queries", "k", "method", "retriever or model", "irbgen", "path")
    return Table(header, tuple(rows))


def overall_table(runs: list[EvalRun]) -> Table:
    """One row per run: its queries and every measure any of the runs has (n/a where it has none)."""
    measures = sorted({measure for run in runs for measure in run.overall}, key=measure_order)
    rows = tuple(
        (run.label, str(run.queries), *(_fmt(run.overall.get(measure)) for measure in measures))
        for run in runs
    )
    return Table(("run", "queries", *measures), rows)


def measure_order(name: str) -> tuple[int, int, str]:
    """Sort key for table columns: retrieval measures, then answer measures, then judge, then the rest."""
    family = name.split("@")[0].split("(")[0]
    if family in RETRIEVAL_FAMILIES:
        return (0, RETRIEVAL_FAMILIES.index(family), name)
    if name in ANSWER_ORDER:
        return (1, ANSWER_ORDER.index(name), name)
    if name == "judge":
        return (2, 0, name)
    return (3, 0, name)


def attribute_tables(runs: list[EvalRun]) -> list[Block]:
    """Per attribute, a table of every value and run with its query count and measures."""
    measures = sorted({measure for run in runs for measure in run.overall}, key=measure_order)
    blocks: list[Block] = []
    for attribute in sorted({name for run in runs for name in run.by}):
        values, dropped = top_values(runs, attribute, MAX_TABLE_VALUES)
        rows = []
        for value in values:
            for run in runs:
                cell = run.by.get(attribute, {}).get(value)
                if cell is None:
                    continue
                count = cell.get("count")
                rows.append(
                    (
                        value,
                        run.label,
                        MISSING if count is None else str(int(count)),
                        *(_fmt(cell.get(measure)) for measure in measures),
                    )
                )
        header = (attribute, "run", "queries", *measures)
        blocks += [Heading(3, f"By {attribute}"), Table(header, tuple(rows))]
        if dropped:
            blocks.append(Paragraph(f"{dropped} more values with fewer queries are left out."))
    return blocks


def top_values(runs: list[EvalRun], attribute: str, limit: int) -> tuple[list[str], int]:
    """The attribute's values over all runs (in value order), capped at the `limit` with most queries."""
    totals: Counter[str] = Counter()
    for run in runs:
        for value, cell in run.by.get(attribute, {}).items():
            totals[value] += int(cell.get("count") or 0)
    values = ordered(totals)
    if len(values) <= limit:
        return values, 0
    kept = sorted(values, key=lambda value: (-totals[value], value_order(value)))[:limit]
    return ordered(kept), len(values) - limit


def interval_table(runs: list[EvalRun], intervals: list[Interval]) -> Table:
    """One row per run: every tested measure's mean with its bootstrap interval, "mean [low, high]"."""
    cells = {(i.run, i.measure): f"{i.mean:.4f} [{i.low:.4f}, {i.high:.4f}]" for i in intervals}
    labels = [run.label for run in runs]
    measures = sorted({i.measure for i in intervals if i.run in labels}, key=measure_order)
    rows = tuple((label, *(cells.get((label, measure), MISSING) for measure in measures)) for label in labels)
    return Table(("run", *measures), rows)


def comparison_table(comparisons: list[Comparison]) -> Table:
    """One row per pair of runs and measure: means, difference (dagger when significant), Holm p-values."""
    rows = tuple(
        (
            c.group,
            c.measure,
            c.run_a,
            c.run_b,
            str(c.queries),
            f"{c.mean_a:.4f}",
            f"{c.mean_b:.4f}",
            f"{c.difference:+.4f}" + (DAGGER if c.significant else "") + (DEPTHS if c.depths else ""),
            _p(c.p_randomization_holm),
            _p(c.p_t_holm),
        )
        for c in sorted(comparisons, key=lambda c: measure_order(c.measure))
    )
    header = ("benchmark", "measure", "run A", "run B", "queries", "A", "B", "A - B", "p randomization",
              "p t-test")  # fmt: skip
    return Table(header, rows)


def depths_note(comparisons: list[Comparison]) -> str:
    """The footnote for comparisons of runs ranked to different depths, or "" when there is none."""
    pairs = sorted({c.depths for c in comparisons if c.depths})
    if not pairs:
        return ""
    shown = ", ".join(f"{a} and {b}" for a, b in pairs)
    return (
        f"{DEPTHS} the two runs ranked to different depths ({shown} documents a query) and the measure "
        "reads past the shallower one, so the difference is partly the depth, not only the system."
    )


def significance_note(total: int, seed: int, resamples: int) -> str:
    """The footnote under the comparison tables: which tests, which correction, alpha, resamples."""
    return (
        f"{DAGGER} marks a difference significant at alpha {ALPHA} by the paired randomization test "
        f"(scipy.stats.permutation_test, {resamples:,} resamples, seed {seed}). Both p-values are "
        f"Holm-corrected over all {total} comparisons of this report, each test on its own; the paired "
        f"t-test is scipy.stats.ttest_rel. A pair is scored on the queries both runs have a value for. "
        f"Intervals are {CONFIDENCE:.0%} percentile bootstrap intervals of each run's mean "
        f"(scipy.stats.bootstrap, {resamples:,} resamples)."
    )


def _p(value: float) -> str:
    return "<0.0001" if value < 0.0001 else f"{value:.4f}"


def _fmt(value: float | None) -> str:
    return MISSING if value is None else f"{value:.4f}"


def _text(value: Any) -> str:
    return "" if value is None else str(value)
