"""One report over several evaluation directories: report.md and report.html with the same content, plus PNGs.

An evaluation directory holds config.json, metrics.json and per_query.jsonl (see irbgen.eval). The report
shows overall metrics per run, metrics per attribute value per run with counts, QA measures against
difficulty and hops, retrieval nDCG per attribute value, and the answer-count histogram of every
benchmark the runs name. The same inputs give the same files.
"""

from __future__ import annotations

import html
import json
import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The benchmark writer's own replace-in-place helpers, so every irbgen output directory is swapped alike.
from irbgen.benchmark import check_output, read_samples, staged_directory
from irbgen.errors import BadInputError
from irbgen.eval.breakdown import aggregate
from irbgen.eval.plots import Panel, Series, bar_chart, line_chart, ordered, value_order
from irbgen.eval.qa.judge import judged_text

CONFIG = "config.json"
METRICS = "metrics.json"
PER_QUERY = "per_query.jsonl"
EVAL_FILES = (CONFIG, METRICS, PER_QUERY)
KINDS = ("qa", "retrieval")
QA_MEASURES = {"f1": "F1", "em": "EM", "judge": "judge"}  # plotted when a run has them, in this order
QA_AXES = ("difficulty", "hops")
# Table columns: retrieval measures (in this order of families), then answer measures, then the judge.
RETRIEVAL_FAMILIES = ("nDCG", "R", "Recall", "P", "RR", "MRR", "AP", "MAP")
ANSWER_ORDER = ("f1", "em", "precision", "recall", "contains", "false_premise_detection_rate")
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
MAX_TABLE_VALUES = 100  # attribute values per table; likewise
ANSWER_BINS = 20  # answer counts from this value up share the last histogram bar
MISSING = "n/a"

# ------------------------------------------------------------------------------------- read a run


@dataclass
class EvalRun:
    """One evaluation directory as the report sees it."""

    path: Path
    kind: str
    label: str
    config: dict[str, Any]
    queries: int
    overall: dict[str, float | None]
    by: dict[str, dict[str, dict[str, float | None]]]
    notes: list[str] = field(default_factory=list)
    judge: dict[str, Any] | None = None  # metrics.json's judge summary: how many samples were judged

    @property
    def measures(self) -> list[str]:
        """The run's measure names, sorted."""
        return sorted(self.overall)


def read_eval(path: Path) -> EvalRun:
    """Read one evaluation directory; BadInputError names the directory or file that is not right."""
    path = Path(path)
    if not path.is_dir():
        raise BadInputError(f"{path}: not an evaluation directory (not a directory)")
    for name in EVAL_FILES:
        if not (path / name).is_file():
            raise BadInputError(f"{path / name}: no such file; {path} is not an evaluation directory")
    config = _json_object(path / CONFIG)
    kind = config.get("kind")
    if kind not in KINDS:
        expected = " or ".join(map(repr, KINDS))
        raise BadInputError(f"{path / CONFIG}: kind is {kind!r}, expected {expected}")
    metrics = _json_object(path / METRICS)
    where = path / METRICS
    overall = _measures(metrics.get("overall"), f"{where}: overall")
    if "by" in metrics:
        by = _by(metrics["by"], where)
    else:  # older or partial runs: group per_query.jsonl the way the evaluations do
        rows = list(_per_query(path / PER_QUERY))
        by = _by(aggregate(rows, sorted(overall))["by"], where)
    queries = metrics.get("queries", 0)
    if not isinstance(queries, int) or isinstance(queries, bool):
        raise BadInputError(f"{where}: queries is {queries!r}, expected an integer")
    notes = _notes(config.get("notes"), path / CONFIG)
    notes += [note for note in _notes(metrics.get("notes"), where) if note not in notes]  # QA runs write both
    judge = metrics.get("judge") if isinstance(metrics.get("judge"), dict) else None
    if judge is not None and not all(isinstance(judge.get(key), int) for key in ("samples", "judged")):
        judge = None  # an older run without the counts
    return EvalRun(path, kind, _label(config), config, queries, overall, by, notes, judge)


def _json_object(file: Path) -> dict[str, Any]:
    try:
        value = json.loads(file.read_bytes())
    except ValueError as e:
        raise BadInputError(f"{file}: invalid JSON: {e}") from None
    if not isinstance(value, dict):
        raise BadInputError(f"{file}: expected a JSON object")
    return value


def _per_query(file: Path) -> Iterator[dict[str, Any]]:
    with file.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as e:
                raise BadInputError(f"{file}:{lineno}: invalid JSON: {e}") from None
            if not isinstance(row, dict):
                raise BadInputError(f"{file}:{lineno}: expected a JSON object")
            yield row


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BadInputError(f"{where}: {value!r} is not a finite number")
    return float(value)


def _measures(value: Any, where: str) -> dict[str, float | None]:
    if not isinstance(value, dict):
        raise BadInputError(f"{where}: expected an object of measure -> number")
    return {str(key): _number(number, f"{where}.{key}") for key, number in value.items()}


def _by(value: Any, where: Path) -> dict[str, dict[str, dict[str, float | None]]]:
    if not isinstance(value, dict):
        raise BadInputError(f"{where}: by: expected an object of attribute -> value -> measures")
    by: dict[str, dict[str, dict[str, float | None]]] = {}
    for attribute, values in value.items():
        if not isinstance(values, dict):
            raise BadInputError(f"{where}: by.{attribute}: expected an object of value -> measures")
        by[str(attribute)] = {
            str(key): _measures(cell, f"{where}: by.{attribute}.{key}") for key, cell in values.items()
        }
    return by


def _notes(value: Any, where: Path) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInputError(f"{where}: notes: expected a list of strings")
    return [str(note) for note in value]


def _label(config: dict[str, Any]) -> str:
    if config["kind"] == "retrieval":
        return str(config.get("retriever") or "retriever")
    method, model = config.get("method"), config.get("model")
    return "/".join(str(part) for part in (method, model) if part) or "qa"


def _unique_labels(runs: list[EvalRun]) -> None:
    """Make run labels unique: add the directory name, then a number, to labels that collide."""
    for attempt in ("directory", "number"):
        counts = Counter(run.label for run in runs)
        seen: Counter[str] = Counter()
        for run in runs:
            if counts[run.label] < 2:
                continue
            seen[run.label] += 1
            if attempt == "directory":
                run.label = f"{run.label} ({run.path.resolve().name})"
            else:
                run.label = f"{run.label} #{seen[run.label]}"


# -------------------------------------------------------------------------------- a small document


@dataclass(frozen=True)
class Heading:
    """A section heading."""

    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of plain text items."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table of plain text cells."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    """A picture next to the document, by file name."""

    name: str
    alt: str


Block = Heading | Paragraph | Bullets | Table | Image


def render_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as Markdown; every text is escaped, so it shows literally."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {_md(block.text)}\n")
        elif isinstance(block, Paragraph):
            parts.append(_md(block.text) + "\n")
        elif isinstance(block, Bullets):
            parts.append("".join(f"- {_md(item)}\n" for item in block.items))
        elif isinstance(block, Table):
            lines = ["| " + " | ".join(_md(cell) for cell in block.header) + " |"]
            lines.append("|" + "|".join("---" for _ in block.header) + "|")
            lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in block.rows]
            parts.append("\n".join(lines) + "\n")
        else:
            parts.append(f"![{_md(block.alt)}]({block.name})\n")
    return "\n".join(parts)


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as one self-contained HTML page (pictures stay next to it); every text is escaped."""
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 1), 6)
            body.append(f"<h{level}>{_html(block.text)}</h{level}>")
        elif isinstance(block, Paragraph):
            body.append(f"<p>{_html(block.text)}</p>")
        elif isinstance(block, Bullets):
            items = "".join(f"<li>{_html(item)}</li>" for item in block.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_html(cell)}</th>" for cell in block.header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{_html(cell)}</td>" for cell in row) + "</tr>\n" for row in block.rows
            )
            body.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>")
        else:
            body.append(f'<figure><img src="{_html(block.name)}" alt="{_html(block.alt)}"></figure>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_html(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


_CSS = (
    "body{font-family:sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    "th{background:#f3f3f3}tbody tr:nth-child(even){background:#fafafa}"
    "img{max-width:100%}figure{margin:1em 0}"
)
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#!"})


def _md(text: str) -> str:
    return text.translate(_MD_SPECIAL).replace("\r", " ").replace("\n", " ")


def _html(text: str) -> str:
    return html.escape(text, quote=True)


# ------------------------------------------------------------------------------------ write a report


def write_report(eval_dirs: list[Path], out: Path, force: bool = False) -> Path:
    """Write OUT/ with report.md, report.html and the PNG charts for these evaluation directories."""
    out = Path(out)
    if not eval_dirs:
        raise BadInputError("no evaluation directories given")
    check_output(out, force)
    runs = [read_eval(Path(path)) for path in eval_dirs]
    for run in runs:
        if _same(run.path, out):
            raise BadInputError(f"{out}: is one of the evaluation directories; name a new directory")
    _unique_labels(runs)
    histograms, missing = _answer_histograms(runs)
    with staged_directory(out, force) as tmp:
        blocks = _report(runs, histograms, missing, tmp)
        (tmp / "report.md").write_bytes(render_markdown(blocks).encode())
        (tmp / "report.html").write_bytes(render_html(blocks, "irbgen evaluation report").encode())
    return out


def _report(
    runs: list[EvalRun], histograms: dict[str, Counter[int]], missing: list[str], tmp: Path
) -> list[Block]:
    notes: list[str] = []
    retrieval = [run for run in runs if run.kind == "retrieval"]
    qa = [run for run in runs if run.kind == "qa"]
    blocks: list[Block] = [
        Heading(1, "irbgen evaluation report"),
        Paragraph(f"{_plural(len(runs), 'run')}: {len(retrieval)} retrieval, {len(qa)} question answering."),
        Heading(2, "Runs"),
        _runs_table(runs),
    ]
    if retrieval:
        blocks += [Heading(2, "Retrieval"), Heading(3, "Overall"), _overall_table(retrieval)]
        blocks += _retrieval_charts(retrieval, tmp, notes)
        blocks += _attribute_tables(retrieval)
    if qa:
        blocks += [Heading(2, "Question answering"), Heading(3, "Overall"), _overall_table(qa)]
        judged = [f"{run.label}: {judged_text(run.judge)}" for run in qa if run.judge is not None]
        if judged:
            blocks.append(Bullets(tuple(judged)))
        blocks += _qa_charts(qa, tmp)
        blocks += _attribute_tables(qa)
    if histograms:
        blocks += _answers_section(histograms, tmp)
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


def _runs_table(runs: list[EvalRun]) -> Table:
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


def _overall_table(runs: list[EvalRun]) -> Table:
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


def _attribute_tables(runs: list[EvalRun]) -> list[Block]:
    measures = sorted({measure for run in runs for measure in run.overall}, key=measure_order)
    blocks: list[Block] = []
    for attribute in sorted({name for run in runs for name in run.by}):
        values, dropped = _top_values(runs, attribute, MAX_TABLE_VALUES)
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


def _top_values(runs: list[EvalRun], attribute: str, limit: int) -> tuple[list[str], int]:
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


def _retrieval_charts(runs: list[EvalRun], tmp: Path, notes: list[str]) -> list[Block]:
    measure_of = {run.label: _ndcg(run) for run in runs}
    for run in runs:
        if measure_of[run.label] is None:
            notes.append(f"{run.label}: no nDCG measure in {METRICS}; left out of the retrieval charts.")
    names = sorted({measure for measure in measure_of.values() if measure})
    ylabel = names[0] if len(names) == 1 else "nDCG@k"
    blocks: list[Block] = []
    for attribute in RETRIEVAL_ATTRIBUTES:
        values, dropped = _top_values(runs, attribute, MAX_PLOT_VALUES)
        if len(values) < 2:
            continue
        series = []
        for run in runs:
            measure = measure_of[run.label]
            cells = run.by.get(attribute, {})
            points = _points(cells, measure, values) if measure else ()
            if points:
                label = run.label if len(names) < 2 else f"{run.label} ({measure})"
                series.append(Series(label, points, _counts(cells, "count", points)))
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


def _qa_charts(runs: list[EvalRun], tmp: Path) -> list[Block]:
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
                    series.append(Series(run.label, points, _counts(cells, counted, points)))
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


def _answer_histograms(runs: list[EvalRun]) -> tuple[dict[str, Counter[int]], list[str]]:
    """Answers-per-sample histograms of the benchmarks the runs name (each once), and those not found."""
    found: dict[Path, str] = {}
    missing: list[str] = []
    for run in runs:
        given = run.config.get("benchmark")
        if not given:
            continue
        path = _benchmark_path(str(given), run.path)
        if path is None:
            missing.append(f"{run.label} ({given})")
        elif path not in found:
            found[path] = str(run.config.get("benchmark_name") or path.name)
    names = Counter(found.values())
    histograms: dict[str, Counter[int]] = {}
    for path, name in found.items():
        label = name if names[name] < 2 else f"{name} ({path})"
        histograms[label] = Counter(len(sample.answers) for sample in read_samples(path))
    return histograms, missing


def _benchmark_path(given: str, eval_dir: Path) -> Path | None:
    """The benchmark directory as written (relative to the working directory), else relative to the run."""
    for candidate in (Path(given), eval_dir / given):
        if (candidate / "samples.jsonl").is_file():
            return candidate.resolve()
    return None


def _answers_section(histograms: dict[str, Counter[int]], tmp: Path) -> list[Block]:
    def bin_of(n: int) -> str:
        return str(n) if n < ANSWER_BINS else f"{ANSWER_BINS}+"

    binned: dict[str, Counter[str]] = {label: Counter() for label in histograms}
    for label, histogram in histograms.items():
        for n, count in histogram.items():
            binned[label][bin_of(n)] += count
    series = tuple(Series(label, tuple((x, float(c)) for x, c in binned[label].items())) for label in binned)
    name = "answers-histogram.png"
    bar_chart(tmp / name, Panel("Answers per question", "answers", "samples", series), integer_y=True)
    bins = ordered(x for counts in binned.values() for x in counts)
    labels = list(binned)
    rows = tuple((x, *(str(binned[label].get(x, 0)) for label in labels)) for x in bins)
    return [
        Heading(2, "Benchmarks"),
        Heading(3, "Answers per question"),
        Image(name, "Answers per question"),
        Table(("answers", *labels), rows),
    ]


def _fmt(value: float | None) -> str:
    return MISSING if value is None else f"{value:.4f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


# ------------------------------------------------------------------------------- atomic output directory
