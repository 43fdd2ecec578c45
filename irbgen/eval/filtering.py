"""`irbgen filter`: a benchmark without the samples a model answered closed-book (from memory), or
without the multi-hop samples it answered with a hop's evidence left out.

A closed-book QA evaluation (`irbgen eval qa --method closed-book`) marks each sample it scored
`closed_book_correct`; a hop-ablation evaluation (`--method hop-ablation`) marks each multi-hop sample
`needs_every_hop`. Filtering drops the samples marked closed-book correct, or marked as not needing
every hop, and writes a new benchmark with the writer every generator uses: the corpus unchanged, the
samples kept in their order, and the filter (the evaluation, its model, rule and counts) recorded in the
manifest's config and in the card. Samples without a mark (not evaluated, a failed call, not ablated)
are kept.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
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
from irbgen.eval.qa.ablation import hop_ablation_summary, share_text
from irbgen.eval.qa.outdir import PREDICTIONS
from irbgen.validation import invalid_benchmark, validate_benchmark

log = logging.getLogger(__name__)

FILTER_KEY = "filter"  # the manifest config key that records the filter


@dataclass(frozen=True)
class Probe:
    """An evaluation a benchmark can be filtered by: its method, the mark it writes and what is dropped."""

    flag: str  # the option of `irbgen filter` that takes it
    method: str
    rule: str  # the config.json key of its rule
    mark: str  # the predictions.jsonl field of its mark
    drop: bool  # the mark's value that drops a sample
    name: str  # the filter's record key, the dropped count is "dropped_<name>"
    suffix: str  # added to the benchmark's name


CLOSED_BOOK = Probe(
    "--drop-closed-book", "closed-book", "closed_book", "closed_book_correct", True, "closed_book",
    "-no-closed-book",
)  # fmt: skip
HOP_SHORTCUTS = Probe(
    "--drop-hop-shortcuts", "hop-ablation", "hop_ablation", "needs_every_hop", False, "hop_shortcuts",
    "-every-hop",
)  # fmt: skip


def probe_marks(eval_dir: Path, probe: Probe) -> tuple[dict[str, Any], dict[str, bool | None]]:
    """(config.json, {sample id: mark}) of an evaluation directory of the probe's method."""
    eval_dir = Path(eval_dir)
    config_file, predictions = eval_dir / CONFIG, eval_dir / PREDICTIONS
    if not config_file.is_file() or not predictions.is_file():
        raise BadInputError(f"{eval_dir}: not a QA evaluation directory (no {CONFIG} or {PREDICTIONS})")
    try:
        config = json.loads(config_file.read_bytes())
    except ValueError as e:
        raise BadInputError(f"{config_file}: invalid JSON: {e}") from None
    if not isinstance(config, dict) or config.get("kind") != "qa" or config.get("method") != probe.method:
        raise BadInputError(
            f"{eval_dir}: not a {probe.method} evaluation (irbgen eval qa --method {probe.method})"
        )
    if not config.get(probe.rule):
        raise BadInputError(
            f"{eval_dir}: has no {probe.mark} marks (written by an older irbgen); "
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
                marks[row["id"]] = row.get(probe.mark)
    return config, marks


def closed_book_marks(eval_dir: Path) -> tuple[dict[str, Any], dict[str, bool | None]]:
    """(config.json, {sample id: closed_book_correct}) of a closed-book evaluation directory."""
    return probe_marks(eval_dir, CLOSED_BOOK)


def filter_closed_book(
    benchmark_dir: Path, eval_dir: Path, out: Path, force: bool = False, carry: Carry | None = None
) -> dict[str, Any]:
    """Write OUT: BENCHMARK_DIR without the samples EVAL_DIR marks closed_book_correct; return the filter."""
    return filter_benchmark(benchmark_dir, eval_dir, out, CLOSED_BOOK, force, carry)


def filter_hop_shortcuts(
    benchmark_dir: Path, eval_dir: Path, out: Path, force: bool = False, carry: Carry | None = None
) -> dict[str, Any]:
    """Write OUT: BENCHMARK_DIR without the samples a hop-ablation EVAL_DIR found not to need every hop."""
    return filter_benchmark(benchmark_dir, eval_dir, out, HOP_SHORTCUTS, force, carry)


def filter_benchmark(
    benchmark_dir: Path,
    eval_dir: Path,
    out: Path,
    probe: Probe,
    force: bool = False,
    carry: Carry | None = None,
) -> dict[str, Any]:
    """Write OUT: BENCHMARK_DIR without the samples EVAL_DIR marks to drop under PROBE; return the filter."""
    benchmark_dir, eval_dir, out = Path(benchmark_dir), Path(eval_dir), Path(out)
    check_output(out, force, "benchmark", {"BENCHMARK": benchmark_dir, probe.flag: eval_dir})
    config, marks = probe_marks(eval_dir, probe)
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
        dropped = [sample.id for sample in samples if marks.get(sample.id) is probe.drop]
        kept = [sample for sample in samples if marks.get(sample.id) is not probe.drop]
        evaluated = sum(sample.id in marks for sample in samples)
        unscored = sum(sample.id in marks and marks[sample.id] is None for sample in samples)
        rule = config[probe.rule]
        record: dict[str, Any] = {
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
        if probe is HOP_SHORTCUTS:
            evaluated_marks = [(s.hops, marks[s.id], None) for s in samples if s.id in marks]
            summary = hop_ablation_summary(evaluated_marks, rule)
            by_hops = summary["by_hops"].items()
            shown = ("samples", "ablated", "needs_every_hop", "share")
            record["needs_every_hop"] = {
                h: {k: cell[k] for k in shown} for h, cell in by_hops if cell["ablated"]
            }
        if evaluated < len(samples):
            log.warning(
                "%s: evaluated %d of %d samples; the other %d are kept unchecked",
                eval_dir,
                evaluated,
                len(samples),
                len(samples) - evaluated,
            )
        filtered = manifest.model_copy(
            update={
                "name": f"{manifest.name}{probe.suffix}",
                "command": f"irbgen filter {benchmark_dir.name} {probe.flag} {eval_dir.name} --out OUT",
                "config": {**manifest.config, FILTER_KEY: {f"drop_{probe.name}": record}},
                "counts": {**manifest.counts, f"dropped_{probe.name}": len(dropped)},
            }
        )
        stats: BenchmarkStats = write_benchmark(
            out,
            read_documents(benchmark_dir),
            kept,
            filtered,
            force=force,
            description=_description(manifest.name, probe, record, rule),
            licence=_licence(benchmark_dir / CARD),
            carry=carry,
        )
    return record | {"kept": stats.samples}


def _description(name: str, probe: Probe, record: dict[str, Any], rule: dict[str, Any]) -> str:
    """The filtered card's opening paragraph: what was dropped, by which model and rule."""
    dropped, evaluated, model = record["dropped"], record["evaluated"], record["model"]
    if probe is HOP_SHORTCUTS:
        what = (
            f"{name} without the {dropped:,} of {evaluated:,} evaluated samples that {model} still answered "
            f"with one hop's evidence documents left out ({rule.get('by')} >= {rule.get('threshold'):g}), "
            "so that every multi-hop question left needs each of its hops. Samples that need every hop, "
            f"by hop count: {share_text({'by_hops': record['needs_every_hop']})}."
        )
    else:
        what = (
            f"{name} without the {dropped:,} of {evaluated:,} evaluated samples that {model} answered "
            f"closed-book (no retrieval; {rule.get('by')} >= {rule.get('threshold'):g}), which a model may "
            "know from memory rather than find."
        )
    return f"{what} Made by `irbgen filter` from {name}; the corpus is unchanged."


def _licence(card: Path) -> str:
    """The licence statement of the original card, so the filtered one states the same."""
    try:
        text = card.read_text(encoding="utf-8")
    except OSError:
        return ""
    if "\n## Licence\n" not in text:
        return ""
    return text.split("\n## Licence\n", 1)[1].split("\n## ", 1)[0].strip()
