"""`irbgen filter`: a benchmark without the samples a model answered closed-book (from memory).

A closed-book QA evaluation (`irbgen eval qa --method closed-book`) marks each sample it scored
`closed_book_correct`. Filtering drops the samples so marked and writes a new benchmark with the writer
every generator uses: the corpus unchanged, the samples kept in their order, and the filter (the
evaluation, its model, rule and counts) recorded in the manifest's config and in the card.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from irbgen.benchmark import (
    CARD,
    SAMPLES,
    Carry,
    check_output,
    consistent_read,
    read_documents,
    read_manifest,
    read_samples,
    write_benchmark,
)
from irbgen.card import BenchmarkStats
from irbgen.errors import BadInputError
from irbgen.eval.evaldir import CONFIG
from irbgen.eval.qa.outdir import PREDICTIONS
from irbgen.validation import invalid_benchmark, validate_benchmark

log = logging.getLogger(__name__)

FILTER_KEY = "filter"  # the manifest config key that records the filter


def closed_book_marks(eval_dir: Path) -> tuple[dict[str, Any], dict[str, bool | None]]:
    """(config.json, {sample id: closed_book_correct}) of a closed-book evaluation directory."""
    eval_dir = Path(eval_dir)
    config_file, predictions = eval_dir / CONFIG, eval_dir / PREDICTIONS
    if not config_file.is_file() or not predictions.is_file():
        raise BadInputError(f"{eval_dir}: not a QA evaluation directory (no {CONFIG} or {PREDICTIONS})")
    try:
        config = json.loads(config_file.read_bytes())
    except ValueError as e:
        raise BadInputError(f"{config_file}: invalid JSON: {e}") from None
    if not isinstance(config, dict) or config.get("kind") != "qa" or config.get("method") != "closed-book":
        raise BadInputError(f"{eval_dir}: not a closed-book evaluation (irbgen eval qa --method closed-book)")
    if not config.get("closed_book"):
        raise BadInputError(
            f"{eval_dir}: has no closed_book_correct marks (written by an older irbgen); "
            "rerun the same eval qa command into it to add them"
        )
    marks: dict[str, bool | None] = {}
    with predictions.open("rb") as file:
        for lineno, raw in enumerate(file, 1):
            try:
                row = json.loads(raw)
            except ValueError:
                raise BadInputError(f"{predictions}:{lineno}: invalid JSON") from None
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                marks[row["id"]] = row.get("closed_book_correct")
    return config, marks


def filter_closed_book(
    benchmark_dir: Path, eval_dir: Path, out: Path, force: bool = False, carry: Carry | None = None
) -> dict[str, Any]:
    """Write OUT: BENCHMARK_DIR without the samples EVAL_DIR marks closed_book_correct; return the filter."""
    benchmark_dir, eval_dir, out = Path(benchmark_dir), Path(eval_dir), Path(out)
    check_output(out, force, "benchmark", {"BENCHMARK": benchmark_dir, "--drop-closed-book": eval_dir})
    config, marks = closed_book_marks(eval_dir)
    with consistent_read(benchmark_dir):
        report = validate_benchmark(benchmark_dir)
        if not report.ok:
            raise invalid_benchmark(benchmark_dir, report)
        manifest = read_manifest(benchmark_dir)
        if config.get("samples_sha256") != manifest.files.get(SAMPLES):
            raise BadInputError(
                f"{eval_dir}: evaluated another benchmark ({config.get('benchmark_name')}, other "
                f"{SAMPLES}) than {benchmark_dir}"
            )
        samples = list(read_samples(benchmark_dir))
        dropped = [sample.id for sample in samples if marks.get(sample.id) is True]
        kept = [sample for sample in samples if marks.get(sample.id) is not True]
        evaluated = sum(sample.id in marks for sample in samples)
        unscored = sum(sample.id in marks and marks[sample.id] is None for sample in samples)
        rule = config["closed_book"]
        record = {
            "drop_closed_book": {
                "benchmark": manifest.name,
                "benchmark_command": manifest.command,  # how the unfiltered benchmark was made
                "evaluation": eval_dir.name,
                "model": config.get("model"),
                "base_url": config.get("base_url"),
                "prompt": config.get("prompt"),
                "by": rule.get("by"),
                "threshold": rule.get("threshold"),
                "samples": len(samples),
                "evaluated": evaluated,
                "unscored": unscored,
                "dropped": len(dropped),
            }
        }
        if evaluated < len(samples):
            log.warning(
                "%s: evaluated %d of %d samples; the other %d are kept unchecked",
                eval_dir, evaluated, len(samples), len(samples) - evaluated,
            )
        filtered = manifest.model_copy(
            update={
                "name": f"{manifest.name}-no-closed-book",
                "command": f"irbgen filter {benchmark_dir.name} --drop-closed-book {eval_dir.name} --out OUT",
                "config": {**manifest.config, FILTER_KEY: record},
                "counts": {**manifest.counts, "dropped_closed_book": len(dropped)},
            }
        )
        description = (
            f"{manifest.name} without the {len(dropped):,} of {evaluated:,} evaluated samples that "
            f"{config.get('model')} answered closed-book (no retrieval; {rule.get('by')} >= "
            f"{rule.get('threshold'):g}), which a model may know from memory rather than find. "
            f"Made by `irbgen filter` from {manifest.name}; the corpus is unchanged."
        )
        stats: BenchmarkStats = write_benchmark(
            out,
            read_documents(benchmark_dir),
            kept,
            filtered,
            force=force,
            description=description,
            licence=_licence(benchmark_dir / CARD),
            carry=carry,
        )
    return record["drop_closed_book"] | {"kept": stats.samples}


def _licence(card: Path) -> str:
    """The licence statement of the original card, so the filtered one states the same."""
    try:
        text = card.read_text(encoding="utf-8")
    except OSError:
        return ""
    if "\n## Licence\n" not in text:
        return ""
    return text.split("\n## Licence\n", 1)[1].split("\n## ", 1)[0].strip()
