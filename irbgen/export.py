"""Export a benchmark directory to Parquet files or a Hugging Face `datasets.DatasetDict`.

Both exports are built from the same rows: corpus, queries, qrels, samples and, when the benchmark has
the per-hop files, hops (one row per hop query of queries_hops.jsonl with its qrels/hops.tsv judgments).
Nested objects (a sample's chain, attributes and provenance, and every metadata dict) become JSON strings
so the tables have flat, stable types. The card (README.md), manifest.json and reviews/ are copied as they
are, so nothing a benchmark holds is left behind. pyarrow and datasets are optional:
`pip install 'irbgen[export]'`.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irbgen.benchmark import (
    CARD,
    MANIFEST,
    REVIEWS,
    has_hop_files,
    iter_qrels,
    read_documents,
    read_hop_qrels,
    read_hop_queries,
    read_queries,
    read_samples,
)
from irbgen.extras import missing_extra
from irbgen.io import atomic_path
from irbgen.schema import Sample

if TYPE_CHECKING:
    import datasets
    import pyarrow

__all__ = ["copy_verbatim", "export_hf", "export_parquet", "to_hf_datasets"]

TABLES = ("corpus", "queries", "qrels", "samples", "hops")  # hops only when the benchmark has them
VERBATIM = (CARD, MANIFEST, REVIEWS)  # copied as they are; the card and manifest describe the whole benchmark
BATCH_ROWS = 10_000
BATCH_CHARS = 64 << 20  # also cut a batch at 64 Mi characters of text, so long documents stay bounded

_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def export_parquet(path: Path, out: Path, keep: set[str] | None = None) -> list[Path]:
    """Write a .parquet file per table into OUT (only samples in KEEP, if given), then the files copied as
    they are; return every path written, in that order."""
    pa, pq = _pyarrow()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (schema, rows) in _tables(pa, Path(path), keep).items():
        target = out / f"{name}.parquet"
        with atomic_path(target) as tmp, pq.ParquetWriter(tmp, schema) as writer:
            for batch in _batches(rows, schema.names):
                writer.write_table(pa.Table.from_pydict(batch, schema=schema))
        written.append(target)
    return written + copy_verbatim(Path(path), out)


def to_hf_datasets(path: Path, keep: set[str] | None = None) -> datasets.DatasetDict:
    """Load a benchmark directory as a DatasetDict with splits corpus, queries, qrels, samples and hops."""
    hf = _datasets()
    pa, _ = _pyarrow()
    splits = {}
    for name, (schema, rows) in _tables(pa, Path(path), keep).items():
        batches = [pa.RecordBatch.from_pydict(batch, schema=schema) for batch in _batches(rows, schema.names)]
        splits[name] = hf.Dataset(pa.Table.from_batches(batches, schema=schema))
    return hf.DatasetDict(splits)


def export_hf(path: Path, out: Path, keep: set[str] | None = None) -> Path:
    """Save a benchmark directory as a Hugging Face DatasetDict at OUT (datasets.save_to_disk), with the
    card, manifest and reviews beside it."""
    out = Path(out)
    hf = _datasets()
    # datasets draws its own progress bars even off a terminal; they show only with -v (INFO logging).
    shown = hf.is_progress_bar_enabled()
    if not logging.getLogger("irbgen").isEnabledFor(logging.INFO):
        hf.disable_progress_bars()
    try:
        to_hf_datasets(path, keep).save_to_disk(str(out))
    finally:
        if shown:
            hf.enable_progress_bars()
    copy_verbatim(Path(path), out)
    return out


def copy_verbatim(path: Path, out: Path) -> list[Path]:
    """Copy the card, manifest and reviews/ of benchmark PATH into OUT as they are; return what was copied."""
    copied = []
    for name in VERBATIM:
        source, target = path / name, out / name
        if source.is_dir():
            shutil.copytree(source, target)
        elif source.is_file():
            shutil.copyfile(source, target)
        else:
            continue
        copied.append(target)
    return copied


def _tables(
    pa: Any, path: Path, keep: set[str] | None = None
) -> dict[str, tuple[pyarrow.Schema, Iterator[tuple[Any, ...]]]]:
    """Schema and (lazy) rows of each table, in TABLES order; with KEEP, only those samples' queries,
    qrels, samples and hops (the corpus stays whole). No hops table for a benchmark without hop files."""

    def kept(sample_id: str) -> bool:
        return keep is None or sample_id in keep

    string = pa.string()
    strings = pa.list_(pa.string())
    plain = {  # Sample fields kept as they are; every other field is stored as a JSON string
        "id": string,
        "question": string,
        "answers": strings,
        "false_premise": pa.bool_(),
        "hops": pa.int64(),
        "difficulty": pa.float64(),
        "source": string,
        "evidence": strings,
    }
    sample_fields = list(Sample.model_fields)
    tables = {
        "corpus": (
            pa.schema([("_id", string), ("title", string), ("text", string), ("metadata", string)]),
            ((d.id, d.title, d.text, _json(d.metadata)) for d in read_documents(path)),
        ),
        "queries": (
            pa.schema([("_id", string), ("text", string), ("metadata", string)]),
            ((q["_id"], q["text"], _json(q["metadata"])) for q in read_queries(path) if kept(q["_id"])),
        ),
        "qrels": (
            pa.schema([("query_id", string), ("corpus_id", string), ("score", pa.int64())]),
            (row for row in iter_qrels(path) if kept(row[0])),
        ),
        "samples": (
            pa.schema([(name, plain.get(name, string)) for name in sample_fields]),
            (_sample_row(s, sample_fields, plain) for s in read_samples(path) if kept(s.id)),
        ),
    }
    if has_hop_files(path):
        hops = [("_id", string), ("text", string), ("metadata", string), ("corpus_ids", strings)]
        tables["hops"] = (
            pa.schema([*hops, ("scores", pa.list_(pa.int64()))]),
            _hop_rows(path, kept),
        )
    return tables


def _hop_rows(path: Path, kept: Callable[[str], bool]) -> Iterator[tuple[Any, ...]]:
    """A row per hop query: its id, text and metadata, and its judged documents with their scores."""
    qrels = read_hop_qrels(path)
    for query in read_hop_queries(path):
        if kept(query["metadata"].get("sample_id")):
            judged = qrels.get(query["_id"], {})
            yield query["_id"], query["text"], _json(query["metadata"]), list(judged), list(judged.values())


def _sample_row(sample: Sample, fields: list[str], plain: dict[str, Any]) -> tuple[Any, ...]:
    record = sample.model_dump(mode="json")
    return tuple(record[name] if name in plain else _json(record[name]) for name in fields)


def _batches(rows: Iterator[tuple[Any, ...]], names: list[str]) -> Iterator[dict[str, list[Any]]]:
    """Column-wise batches of at most BATCH_ROWS rows or about BATCH_CHARS characters of strings."""
    chunk: list[tuple[Any, ...]] = []
    chars = 0
    for row in rows:
        chunk.append(row)
        chars += sum(len(value) for value in row if isinstance(value, str))
        if len(chunk) >= BATCH_ROWS or chars >= BATCH_CHARS:
            yield dict(zip(names, map(list, zip(*chunk, strict=True)), strict=True))
            chunk, chars = [], 0
    if chunk:
        yield dict(zip(names, map(list, zip(*chunk, strict=True)), strict=True))


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as e:
        raise missing_extra(e.name or "pyarrow", "export") from None
    return pa, pq


def _datasets() -> Any:
    try:
        import datasets as hf
    except ImportError as e:
        raise missing_extra(e.name or "datasets", "export --format hf") from None
    return hf
