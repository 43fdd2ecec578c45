"""What a report reads: evaluation directories, as EvalRun, and the answer counts of the benchmarks they name.

An evaluation directory holds config.json, metrics.json and per_query.jsonl (see irbgen.eval.evaldir); a
file that is missing or not as expected is a BadInputError that names it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irbgen.benchmark import read_samples
from irbgen.errors import BadInputError
from irbgen.eval.breakdown import aggregate
from irbgen.eval.evaldir import CONFIG, EVAL_FILES, METRICS, PER_QUERY

KINDS = ("qa", "retrieval")
QA_TESTED = ("f1", "em", "judge")  # the answer measures a report tests for significance


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
    hop_ablation: dict[str, Any] | None = None  # metrics.json's hop-ablation summary (hop-ablation runs)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # measure -> query id -> value

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
    rows = list(_per_query(path / PER_QUERY))
    if "by" in metrics:
        by = _by(metrics["by"], where)
    else:  # older or partial runs: group per_query.jsonl the way the evaluations do
        by = _by(aggregate(rows, sorted(overall))["by"], where)
    queries = metrics.get("queries", 0)
    if not isinstance(queries, int) or isinstance(queries, bool):
        raise BadInputError(f"{where}: queries is {queries!r}, expected an integer")
    notes = _notes(config.get("notes"), path / CONFIG)
    notes += [note for note in _notes(metrics.get("notes"), where) if note not in notes]  # QA runs write both
    judge = metrics.get("judge") if isinstance(metrics.get("judge"), dict) else None
    if judge is not None and not all(isinstance(judge.get(key), int) for key in ("samples", "judged")):
        judge = None  # an older run without the counts
    hops = metrics.get("hop_ablation") if isinstance(metrics.get("hop_ablation"), dict) else None
    if hops is not None and not isinstance(hops.get("by_hops"), dict):
        hops = None
    scores = _scores(rows, kind, path / PER_QUERY)
    return EvalRun(path, kind, _label(config), config, queries, overall, by, notes, judge, hops, scores)


def _scores(rows: list[dict[str, Any]], kind: str, file: Path) -> dict[str, dict[str, float]]:
    """Per-query values, as the means count them: a retrieval run's judged queries and every measure
    they hold; a QA run's F1, EM and judge where the sample has one (a failed call has none)."""
    scores: dict[str, dict[str, float]] = {}
    for row in rows:
        if kind == "retrieval" and row.get("judged") is False:
            continue
        metrics = row.get("metrics")
        if not isinstance(metrics, dict):
            continue
        query = str(row.get("query_id"))
        for measure, value in metrics.items():
            if kind == "qa" and measure not in QA_TESTED:
                continue
            number = _number(value, f"{file}: {query}: {measure}")
            if number is not None:
                scores.setdefault(str(measure), {})[query] = number
    return scores


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


def unique_labels(runs: list[EvalRun]) -> None:
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


def answer_histograms(runs: list[EvalRun]) -> tuple[dict[str, Counter[int]], list[str]]:
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
        histograms[label] = Counter(answer_count(sample.answers) for sample in read_samples(path))
    return histograms, missing


def benchmark_groups(runs: list[EvalRun]) -> dict[str, str]:
    """Run label -> the benchmark it ran on, by its name; two benchmarks of one name also get their path."""
    where: dict[str, tuple[str, str]] = {}
    for run in runs:
        given = str(run.config.get("benchmark") or "")
        path = _benchmark_path(given, run.path) if given else None
        where[run.label] = (str(run.config.get("benchmark_name") or given), str(path or given))
    places: dict[str, set[str]] = {}
    for name, place in where.values():
        places.setdefault(name, set()).add(place)
    return {
        label: name if len(places[name]) < 2 else f"{name} ({place})"
        for label, (name, place) in where.items()
    }


def answer_count(answers: list[str]) -> int:
    """The answers of a sample that say something: a blank answer is no answer."""
    return sum(1 for answer in answers if answer.strip())


def _benchmark_path(given: str, eval_dir: Path) -> Path | None:
    """The benchmark directory as written (relative to the working directory), else relative to the run."""
    for candidate in (Path(given), eval_dir / given):
        if (candidate / "samples.jsonl").is_file():
            return candidate.resolve()
    return None
