"""`irbgen eval retrieval`: rank a benchmark's corpus for every question and score it with trec_eval.

The evaluation directory holds config.json (what was run), run.trec (the ranking, TREC format),
per_query.jsonl (one row per sample, in samples order: its attributes and its value per measure) and
metrics.json (means overall and per attribute value), and with `negatives` negatives.jsonl (hard
negatives per query). With `per_hop`, every hop's sub-question is ranked too: run_hops.trec,
per_hop.jsonl (one row per hop) and metrics.json's `per_hop` section (see irbgen.eval.hops).
It is written to a temporary sibling and renamed into place, and the same inputs give byte-identical
files; stage timings go to the log only.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from irbgen import __version__
from irbgen.benchmark import (
    HOP_QRELS,
    HOP_QUERIES,
    check_output,
    consistent_read,
    has_hop_files,
    read_documents,
    read_hop_qrels,
    read_hop_queries,
    read_manifest,
    read_qrels,
    read_queries,
    staged_directory,
)
from irbgen.errors import BadInputError, IrbgenError
from irbgen.eval.breakdown import aggregate, sample_attributes
from irbgen.eval.chunking import check_chunking, chunk_documents
from irbgen.eval.evaldir import CONFIG, METRICS, PER_QUERY
from irbgen.eval.hops import hop_rows, summarise
from irbgen.eval.metrics import (
    default_measures,
    parse_measures,
    per_query,
    run_depth,
    run_from_rankings,
    write_run,
)
from irbgen.eval.negatives import NEGATIVES, check_negatives, mine_negatives, negative_rows
from irbgen.eval.retrievers import build_retriever, check_k
from irbgen.pipeline.stage import WorkerCrashed
from irbgen.pipeline.workers import Aside
from irbgen.progress import Progress, silent
from irbgen.schema import Sample
from irbgen.validation import ValidationReport, invalid_benchmark, validate_benchmark

log = logging.getLogger(__name__)

RUN = "run.trec"
HOP_RUN = "run_hops.trec"
PER_HOP = "per_hop.jsonl"
NOTES = [
    "trec_eval semantics: linear gain; ideal DCG from all judged-relevant documents; "
    "queries with no results count 0",
    "trec_eval orders documents with equal scores by id descending; run.trec holds that order, equal scores "
    "made distinct (0.000001 apart), so every tool reads the same ranking",
    "samples without qrels are listed in per_query.jsonl (judged: false) and left out of the means",
]
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def evaluate_retrieval(
    benchmark_dir: Path,
    out_dir: Path,
    retriever: str = "bm25",
    k: int = 10,
    chunk_tokens: int = 512,
    chunk_overlap: int = 32,
    measures: Iterable[str] | None = None,
    force: bool = False,
    negatives: int = 0,
    progress: Progress = silent,
    per_hop: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """Evaluate a retriever on a benchmark directory, write the evaluation directory, return its metrics.

    Args:
        k: documents ranked per query; a measure with a deeper cutoff (R@100) deepens the run to it.
        measures: ir_measures names such as nDCG@10 or ndcg_cut.10; default nDCG@k, R@k, RR@k and AP.
        negatives: also write negatives.jsonl with this many hard negatives per query (0: none).
        options: settings of the retriever (e.g. model_path for dense, k1 and b for bm25).
    """
    benchmark_dir, out_dir = Path(benchmark_dir), Path(out_dir)
    # Every setting is checked before the benchmark is read.
    check_k(k)
    check_chunking(chunk_tokens, chunk_overlap)
    check_negatives(negatives)
    parsed = parse_measures(default_measures(k) if measures is None else measures)
    names = [str(measure) for measure in parsed]
    k = run_depth(k, parsed)
    engine = build_retriever(retriever, **options)
    inputs = {"--benchmark": benchmark_dir, "--model-path": options.get("model_path")}
    check_output(out_dir, force, "retrieval", inputs)

    with consistent_read(benchmark_dir), Aside(partial(_validate, benchmark_dir), "irbgen-validate") as aside:
        # The benchmark is validated in a worker process (the second CPU) while this one reads, indexes and
        # searches; nothing is measured or written unless it is valid. A problem found on the way here (or
        # a progress report after validation failed) is reported as validation reports it.
        engine.progress = _stop_if_invalid(benchmark_dir, aside, progress)
        try:
            if per_hop and not has_hop_files(benchmark_dir):
                raise BadInputError(
                    f"{benchmark_dir}: has no {HOP_QUERIES} and {HOP_QRELS}, which --per-hop needs; "
                    "it was written by an older irbgen: rebuild it with its card's command"
                )
            with _stage("read"):
                chunks = chunk_documents(read_documents(benchmark_dir), chunk_tokens, chunk_overlap)
            with _stage("index"):
                engine.index(chunks)
                del chunks
            with _stage("search"):
                queries = {query["_id"]: query["text"] for query in read_queries(benchmark_dir)}
                rankings = engine.search(queries, k)
        except BadInputError:
            _valid(benchmark_dir, aside)
            raise
        with _stage("validate (waiting for the worker)"):
            report, seconds = _valid(benchmark_dir, aside)
        log.info("retrieval stage %s: %.3f s", "validate (in the worker)", seconds)
        engine.progress = progress
        manifest = read_manifest(benchmark_dir)
        with _stage("read qrels"):
            qrels = read_qrels(benchmark_dir)
        with _stage("measure"):
            # Evaluate the run as run.trec writes it, so trec_eval on that file gives the same values.
            values = per_query(qrels, run_from_rankings(rankings), parsed)
        with _stage("rows"):
            rows = [_row(sample_id, attributes, values) for sample_id, attributes in report.kept]
            judged = [row for row in rows if row["judged"]]
            metrics = aggregate(judged, names) | {"unjudged_queries": len(rows) - len(judged), "notes": NOTES}
        hops = None
        if per_hop:
            with _stage("per-hop"):
                hops = _per_hop(benchmark_dir, engine, k, parsed, names)
                metrics["per_hop"] = hops[2]
        mined = None
        if negatives:
            with _stage("negatives"):
                mined = negative_rows(mine_negatives(engine, queries, qrels, negatives))
    config = {
        "kind": "retrieval",
        "benchmark": str(benchmark_dir),
        "benchmark_name": manifest.name,
        "retriever": retriever,
        "retriever_options": engine.describe(),
        "k": k,
        "chunk_tokens": chunk_tokens,
        "chunk_overlap": chunk_overlap,
        "measures": names,
        "negatives": negatives,
        "per_hop": per_hop,
        "irbgen_version": __version__,
        "notes": NOTES,
    }
    with _stage("write"):
        _write(out_dir, force, config, rankings, rows, metrics, mined, hops)
    return metrics


def _per_hop(
    benchmark_dir: Path, engine: Any, k: int, parsed: list[Any], names: list[str]
) -> tuple[dict[str, list[tuple[str, float]]], list[dict[str, Any]], dict[str, Any]]:
    """Rank every hop query; return its rankings, the per_hop.jsonl rows and metrics.json's section."""
    hop_queries = list(read_hop_queries(benchmark_dir))
    rankings = engine.search({query["_id"]: query["text"] for query in hop_queries}, k)
    qrels = read_hop_qrels(benchmark_dir)
    run = run_from_rankings(rankings)
    values = per_query(qrels, run, parsed)
    rows = hop_rows(hop_queries, qrels, run, values, k)
    return rankings, rows, summarise(rows, names, k)


def _validate(benchmark_dir: Path) -> tuple[ValidationReport, float]:
    """validate_benchmark keeping each sample's id and attributes, and its seconds (the worker runs it)."""
    start = time.perf_counter()
    report = validate_benchmark(benchmark_dir, keep=_sample_row)
    return report, time.perf_counter() - start


def _sample_row(sample: Sample) -> tuple[str, dict[str, str]]:
    return sample.id, sample_attributes(sample)


def _valid(benchmark_dir: Path, aside: Aside) -> tuple[ValidationReport, float]:
    """The validation report and its seconds, waited for; the benchmark's one-line error unless it is
    valid."""
    try:
        report, seconds = aside.result()
    except WorkerCrashed as e:
        raise IrbgenError(f"{benchmark_dir}: validating the benchmark failed: {e}") from None
    if not report.ok:
        raise invalid_benchmark(benchmark_dir, report)
    return report, seconds


def _stop_if_invalid(benchmark_dir: Path, aside: Aside, progress: Progress) -> Progress:
    """PROGRESS that first raises the benchmark's error if validation has finished and found a problem."""

    def checked(stage: str, done: int, total: int | None) -> None:
        if aside.done():
            _valid(benchmark_dir, aside)
        progress(stage, done, total)

    return checked


def _row(sample_id: str, attributes: dict[str, str], values: dict[str, dict[str, float]]) -> dict[str, Any]:
    """A per_query.jsonl row; a sample without qrels is not judged and has no values (trec_eval skips it)."""
    judged = sample_id in values
    return {
        "query_id": sample_id,
        "attributes": attributes,
        "judged": judged,
        "metrics": values[sample_id] if judged else {},
    }


def _write(
    out: Path,
    force: bool,
    config: dict[str, Any],
    rankings: dict[str, list[tuple[str, float]]],
    rows: list[dict[str, Any]],
    metrics: dict[str, Any],
    negatives: list[dict[str, Any]] | None = None,
    hops: tuple[Any, list[dict[str, Any]], Any] | None = None,
) -> None:
    with staged_directory(out, force, "retrieval") as tmp:
        (tmp / CONFIG).write_text(_pretty(config), encoding="utf-8")
        write_run(tmp / RUN, rankings)
        with (tmp / PER_QUERY).open("w", encoding="utf-8") as file:
            file.writelines(_encode(row) + "\n" for row in rows)
        (tmp / METRICS).write_text(_pretty(metrics), encoding="utf-8")
        if hops is not None:
            write_run(tmp / HOP_RUN, hops[0])
            with (tmp / PER_HOP).open("w", encoding="utf-8") as file:
                file.writelines(_encode(row) + "\n" for row in hops[1])
        if negatives is not None:
            with (tmp / NEGATIVES).open("w", encoding="utf-8") as file:
                file.writelines(_encode(row) + "\n" for row in negatives)


def _pretty(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


@contextmanager
def _stage(name: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    log.info("retrieval stage %s: %.3f s", name, time.perf_counter() - start)
