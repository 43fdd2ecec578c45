"""Write, read and validate a benchmark directory (BEIR files plus samples, manifest and card).

The layout is described in DESIGN.md ("The benchmark directory"). Writing streams both inputs once,
validates as it goes, hashes every file while writing it and renames a finished temporary directory
into place, so a failed run leaves nothing behind and the same inputs give byte-identical files.
The dataset card and its statistics live in irbgen.card, the Parquet / HF export in irbgen.export;
both are importable from here too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from irbgen.card import BenchmarkStats, Spread, render_card
from irbgen.errors import BadInputError, OutputExistsError
from irbgen.schema import Document, Manifest, Sample

__all__ = [
    "BenchmarkStats",
    "Spread",
    "ValidationReport",
    "check_output",
    "iter_qrels",
    "read_documents",
    "read_manifest",
    "read_qrels",
    "read_queries",
    "read_samples",
    "render_card",
    "validate_benchmark",
    "write_benchmark",
]

log = logging.getLogger(__name__)

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels/test.tsv"
SAMPLES = "samples.jsonl"
MANIFEST = "manifest.json"
CARD = "README.md"
FILES = (CORPUS, QUERIES, QRELS, SAMPLES, MANIFEST, CARD)
QRELS_HEADER = "query-id\tcorpus-id\tscore"
MAX_LISTED_PROBLEMS = 50

_CHUNK_BYTES = 1 << 22  # hash and write in 4 MiB chunks rather than line by line
# One encoder reused for every record: json.dumps would build a new one per call. allow_nan=False gives
# the same bytes as json.dumps for every valid input and refuses NaN/Infinity, which are not JSON.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_INTEGER = re.compile(r"-?[0-9]+")
_TSV_UNSAFE = re.compile(r"[\t\n\r]")

M = TypeVar("M", bound=BaseModel)
_EXPORTS = ("export_hf", "export_parquet", "to_hf_datasets")


def __getattr__(name: str) -> Any:
    """Resolve the export functions lazily: irbgen.export imports this module, so no import at the top."""
    if name in _EXPORTS:
        from irbgen import export

        return getattr(export, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------------------------- write


def check_output(out: Path, force: bool) -> None:
    """Fail early if OUT exists (without force) or its nearest existing parent is not writable."""
    out = Path(out)
    if out.name in ("", ".", ".."):
        raise BadInputError(f"{out}: name a new directory for the benchmark")
    if _exists(out):
        if not force:
            raise OutputExistsError(f"{out}: already exists; pass --force to replace it")
        if not out.is_dir():
            raise BadInputError(f"{out}: exists and is not a directory; refusing to replace it")
    parent = out.parent
    while not _exists(parent):
        parent = parent.parent
    if not parent.is_dir():
        raise BadInputError(f"{parent}: not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInputError(f"{parent}: not writable")


def write_benchmark(
    out: Path,
    documents: Iterable[Document],
    samples: Iterable[Sample],
    manifest: Manifest,
    *,
    force: bool = False,
    description: str = "",
    licence: str = "",
) -> BenchmarkStats:
    """Write a benchmark directory atomically from streams of documents and samples."""
    out = Path(out)
    check_output(out, force)
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    try:
        _remove(tmp)  # a leftover of a killed run that had the same pid
        tmp.mkdir(parents=True)
        stats = _write_files(tmp, documents, samples, manifest, description, licence)
        _move_into_place(tmp, out, force)
    except BaseException:
        _remove(tmp)
        raise
    log.info("wrote %s: %d documents, %d samples, %d qrels", out, stats.documents, stats.samples, stats.qrels)
    return stats


def _write_files(
    tmp: Path,
    documents: Iterable[Document],
    samples: Iterable[Sample],
    manifest: Manifest,
    description: str,
    licence: str,
) -> BenchmarkStats:
    stats = BenchmarkStats()
    files: dict[str, str] = {}
    doc_ids: set[str] = set()
    with _Sink(tmp / CORPUS) as corpus:
        for n, doc in enumerate(documents):
            if not isinstance(doc, Document):
                raise BadInputError(f"documents[{n}]: expected a Document, got {type(doc).__name__}")
            doc_id = doc.id
            if doc_id in doc_ids:
                raise BadInputError(f"document {doc_id!r}: duplicate id")
            doc_ids.add(doc_id)
            record = {"_id": doc_id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}
            corpus.write(_json_line(record, f"document {doc_id!r}"))
            stats.add_document(doc)
    files[CORPUS] = corpus.digest

    (tmp / "qrels").mkdir()
    sample_ids: set[str] = set()
    with _Sink(tmp / QUERIES) as queries, _Sink(tmp / QRELS) as qrels, _Sink(tmp / SAMPLES) as full:
        qrels.write(f"{QRELS_HEADER}\n".encode())
        for n, sample in enumerate(samples):
            if not isinstance(sample, Sample):
                raise BadInputError(f"samples[{n}]: expected a Sample, got {type(sample).__name__}")
            sid = sample.id
            if sid in sample_ids:
                raise BadInputError(f"sample {sid!r}: duplicate id")
            sample_ids.add(sid)
            _check_evidence(sample, doc_ids)
            where = f"sample {sid!r}"
            queries.write(_json_line(_query_record(sample), where))
            full.write(_json_line(_dump(sample, where), where))
            if sample.evidence:
                qrels.write("".join(f"{sid}\t{doc_id}\t1\n" for doc_id in sample.evidence).encode())
            stats.add_sample(sample)
    files.update({QUERIES: queries.digest, QRELS: qrels.digest, SAMPLES: full.digest})

    counts = {
        **manifest.counts,
        "documents": stats.documents,
        "samples": stats.samples,
        "qrels": stats.qrels,
        "rejects": sum(manifest.rejects.values()),
    }
    filled = manifest.model_copy(update={"counts": counts, "files": {}})
    with _Sink(tmp / CARD) as card:
        card.write(render_card(filled, stats, description, licence).encode())
    files[CARD] = card.digest
    filled = filled.model_copy(update={"files": dict(sorted(files.items()))})
    try:
        text = json.dumps(_dump(filled, "manifest"), ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    except ValueError as e:
        raise BadInputError(f"manifest: cannot be written as JSON: {e}") from None
    (tmp / MANIFEST).write_bytes(text.encode())
    return stats


def _check_evidence(sample: Sample, doc_ids: set[str]) -> None:
    sid = sample.id
    if _TSV_UNSAFE.search(sid):
        raise BadInputError(
            f"sample {sid!r}: id contains a tab or line break, which qrels/test.tsv cannot hold"
        )
    for doc_id in sample.evidence:
        if doc_id not in doc_ids:
            raise BadInputError(f"sample {sid!r}: evidence {doc_id!r} is not a document id")
        if _TSV_UNSAFE.search(doc_id):
            raise BadInputError(
                f"sample {sid!r}: evidence {doc_id!r} contains a tab or line break, "
                "which qrels/test.tsv cannot hold"
            )
    for hop in sample.chain:
        for doc_id in hop.evidence:
            if doc_id not in doc_ids:
                raise BadInputError(
                    f"sample {sid!r}: hop {hop.index} evidence {doc_id!r} is not a document id"
                )


def _query_record(sample: Sample) -> dict[str, Any]:
    attributes = sample.attributes
    return {
        "_id": sample.id,
        "text": sample.question,
        "metadata": {
            "source": sample.source,
            "hops": sample.hops,
            "difficulty": sample.difficulty,
            "question_type": attributes.question_type,
            "template_id": attributes.template_id,
            "aggregation": attributes.aggregation,
            "false_premise": sample.false_premise,
            "answers": list(sample.answers),
        },
    }


def _dump(model: BaseModel, where: str) -> dict[str, Any]:
    try:
        return model.model_dump(mode="json")
    except ValueError as e:  # PydanticSerializationError: a value of unknown type, e.g. a numpy scalar
        raise BadInputError(f"{where}: cannot be written as JSON: {e}") from None


def _json_line(record: dict[str, Any], where: str) -> bytes:
    try:
        return (_encode(record) + "\n").encode()
    except (TypeError, ValueError) as e:  # unserialisable metadata, NaN, lone surrogates
        raise BadInputError(f"{where}: cannot be written as JSON: {e}") from None


class _Sink:
    """A binary file written in large chunks while its sha256 is computed."""

    def __init__(self, path: Path) -> None:
        self._file = path.open("wb")
        self._hash = hashlib.sha256()
        self._chunks: list[bytes] = []
        self._size = 0
        self.digest = ""

    def write(self, data: bytes) -> None:
        self._chunks.append(data)
        self._size += len(data)
        if self._size >= _CHUNK_BYTES:
            self._flush()

    def _flush(self) -> None:
        data = b"".join(self._chunks)
        self._hash.update(data)
        self._file.write(data)
        self._chunks.clear()
        self._size = 0

    def __enter__(self) -> _Sink:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            if exc_type is None:
                self._flush()
                self.digest = self._hash.hexdigest()
        finally:
            self._file.close()


def _move_into_place(tmp: Path, out: Path, force: bool) -> None:
    if not _exists(out):
        os.rename(tmp, out)
        return
    if not force:  # someone created OUT while we were writing
        raise OutputExistsError(f"{out}: already exists; pass --force to replace it")
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    _remove(old)
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    _remove(old)


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif _exists(path):
        path.unlink()


# ----------------------------------------------------------------------------------------------- read


def read_documents(path: Path) -> Iterator[Document]:
    """Stream the documents of a benchmark directory."""
    return _read_models(Path(path), CORPUS, Document)


def read_samples(path: Path) -> Iterator[Sample]:
    """Stream the samples of a benchmark directory."""
    return _read_models(Path(path), SAMPLES, Sample)


def read_manifest(path: Path) -> Manifest:
    """Read and validate manifest.json of a benchmark directory."""
    file = _existing(Path(path), MANIFEST)
    try:
        return Manifest.model_validate_json(file.read_bytes())
    except ValidationError as e:
        raise BadInputError(f"{MANIFEST}: {_describe(e)}") from None


def read_queries(path: Path) -> Iterator[dict[str, Any]]:
    """Stream queries.jsonl of a benchmark directory as {"_id", "text", "metadata"} dicts."""
    for lineno, raw in _iter_lines(_existing(Path(path), QUERIES)):
        try:
            query = _parse_query(raw)
        except ValueError as e:
            raise BadInputError(f"{QUERIES}:{lineno}: {e}") from None
        yield query


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read qrels/test.tsv of a benchmark directory as {query id: {corpus id: score}}."""
    qrels: dict[str, dict[str, int]] = {}
    for query_id, corpus_id, score in iter_qrels(path):
        qrels.setdefault(query_id, {})[corpus_id] = score
    return qrels


def iter_qrels(path: Path) -> Iterator[tuple[str, str, int]]:
    """Stream qrels/test.tsv of a benchmark directory as (query id, corpus id, score), in file order."""
    for lineno, raw in _iter_lines(_existing(Path(path), QRELS)):
        try:
            line = raw.decode("utf-8")
            if lineno == 1:
                _check_qrels_header(line)
                continue
            row = _parse_qrels_line(line)
        except ValueError as e:
            raise BadInputError(f"{QRELS}:{lineno}: {e}") from None
        yield row


def _read_models(path: Path, name: str, model: type[M]) -> Iterator[M]:
    for lineno, raw in _iter_lines(_existing(path, name)):
        try:
            record = model.model_validate_json(raw)
        except ValidationError as e:
            raise BadInputError(f"{name}:{lineno}: {_describe(e)}") from None
        yield record


def _parse_query(raw: bytes) -> dict[str, Any]:
    try:
        query = json.loads(raw)
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"invalid JSON: {e}") from None
    if not (
        isinstance(query, dict)
        and isinstance(query.get("_id"), str)
        and isinstance(query.get("text"), str)
        and isinstance(query.get("metadata"), dict)
    ):
        raise ValueError("expected an object with string _id and text and object metadata")
    return query


def _check_qrels_header(line: str) -> None:
    header = line.rstrip("\r\n")
    if header != QRELS_HEADER:
        raise ValueError(f"header is {header!r}, expected {QRELS_HEADER!r}")


def _parse_qrels_line(line: str) -> tuple[str, str, int]:
    fields = line.rstrip("\n").removesuffix("\r").split("\t")
    if len(fields) != 3:
        raise ValueError(f"expected 3 tab-separated fields, got {len(fields)}")
    query_id, corpus_id, score = fields
    if not query_id or not corpus_id:
        raise ValueError("empty query-id or corpus-id")
    if not _INTEGER.fullmatch(score):
        raise ValueError(f"score {score!r} is not an integer")
    return query_id, corpus_id, int(score)


def _iter_lines(file: Path, hasher: Any = None) -> Iterator[tuple[int, bytes]]:
    """Yield (1-based line number, raw line) pairs; split on b"\\n" only, as JSON lines are."""
    with file.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if hasher is not None:
                hasher.update(raw)
            yield lineno, raw


def _existing(path: Path, name: str) -> Path:
    file = path / name
    if not file.is_file():
        raise BadInputError(f"{file}: no such file")
    return file


def _describe(error: ValidationError) -> str:
    """A one-line summary of a pydantic error: the first three problems with their locations."""
    parts = []
    for item in error.errors()[:3]:
        loc = ".".join(str(part) for part in item["loc"])
        parts.append(f"{loc}: {item['msg']}" if loc else item["msg"])
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


# ------------------------------------------------------------------------------------------- validate


@dataclass
class ValidationReport:
    """What validate_benchmark found: the first problems, how many in all, and the counts on disk."""

    ok: bool
    problems: list[str]
    total_problems: int
    counts: dict[str, int]


def validate_benchmark(path: Path) -> ValidationReport:
    """Check a benchmark directory end to end and report every problem found (the first 50 listed)."""
    checker = _Checker(Path(path))
    checker.run()
    return ValidationReport(
        ok=checker.total == 0, problems=checker.problems, total_problems=checker.total, counts=checker.counts
    )


class _Checker:
    """One validation run: streams each file once, hashing it on the way."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[str] = []
        self.total = 0
        self.counts: dict[str, int] = {}
        self.digests: dict[str, str] = {}
        self.corpus_ids: set[str] | None = None
        self.sample_lines: list[tuple[str, str] | None] | None = None  # per samples.jsonl line
        self.sample_ids: set[str] | None = None

    def add(self, problem: str) -> None:
        self.total += 1
        if len(self.problems) < MAX_LISTED_PROBLEMS:
            self.problems.append(problem)

    def run(self) -> None:
        if not self.path.is_dir():
            self.add(f"{self.path}: not a directory")
            return
        present = {name for name in FILES if (self.path / name).is_file()}
        for name in FILES:
            if name not in present:
                self.add(f"{name}: missing")
        if CORPUS in present:
            self.check_corpus()
        if SAMPLES in present:
            self.check_samples()
        if QUERIES in present:
            self.check_queries()
        if QRELS in present:
            self.check_qrels()
        if MANIFEST in present:
            self.check_manifest()

    def lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        hasher = hashlib.sha256()
        yield from _iter_lines(self.path / name, hasher)
        self.digests[name] = hasher.hexdigest()

    def check_corpus(self) -> None:
        ids: set[str] = set()
        n = 0
        for lineno, raw in self.lines(CORPUS):
            n += 1
            try:
                doc = Document.model_validate_json(raw)
            except ValidationError as e:
                self.add(f"{CORPUS}:{lineno}: {_describe(e)}")
                continue
            if doc.id in ids:
                self.add(f"{CORPUS}:{lineno}: duplicate _id {doc.id!r}")
            ids.add(doc.id)
        self.corpus_ids = ids
        self.counts["documents"] = n

    def check_samples(self) -> None:
        lines: list[tuple[str, str] | None] = []
        ids: set[str] = set()
        for lineno, raw in self.lines(SAMPLES):
            try:
                sample = Sample.model_validate_json(raw)
            except ValidationError as e:
                self.add(f"{SAMPLES}:{lineno}: {_describe(e)}")
                lines.append(None)
                continue
            lines.append((sample.id, sample.question))
            if sample.id in ids:
                self.add(f"{SAMPLES}:{lineno}: duplicate id {sample.id!r}")
            ids.add(sample.id)
            if self.corpus_ids is not None:
                for doc_id in sample.evidence:
                    if doc_id not in self.corpus_ids:
                        self.add(f"{SAMPLES}:{lineno}: evidence {doc_id!r} is not in {CORPUS}")
                for hop in sample.chain:
                    for doc_id in hop.evidence:
                        if doc_id not in self.corpus_ids:
                            self.add(
                                f"{SAMPLES}:{lineno}: hop {hop.index} evidence {doc_id!r} is not in {CORPUS}"
                            )
        self.sample_lines = lines
        self.sample_ids = ids
        self.counts["samples"] = len(lines)

    def check_queries(self) -> None:
        ids: set[str] = set()
        n = 0
        for lineno, raw in self.lines(QUERIES):
            n += 1
            try:
                query = _parse_query(raw)
            except ValueError as e:
                self.add(f"{QUERIES}:{lineno}: {e}")
                continue
            query_id, text = query["_id"], query["text"]
            if query_id in ids:
                self.add(f"{QUERIES}:{lineno}: duplicate _id {query_id!r}")
            ids.add(query_id)
            if self.sample_lines is None or lineno > len(self.sample_lines):
                continue
            expected = self.sample_lines[lineno - 1]
            if expected is None:
                continue
            if query_id != expected[0]:
                self.add(
                    f"{QUERIES}:{lineno}: _id {query_id!r} but {SAMPLES}:{lineno} has id {expected[0]!r}"
                )
            elif text != expected[1]:
                self.add(f"{QUERIES}:{lineno}: text differs from the question in {SAMPLES}:{lineno}")
        self.counts["queries"] = n
        if self.sample_lines is not None and n != len(self.sample_lines):
            self.add(f"{QUERIES}: {n} lines but {SAMPLES} has {len(self.sample_lines)}")

    def check_qrels(self) -> None:
        pairs: set[tuple[str, str]] = set()
        n = 0
        lineno = 0
        for lineno, raw in self.lines(QRELS):
            try:
                line = raw.decode("utf-8")
                if lineno == 1:
                    _check_qrels_header(line)
                    continue
                n += 1
                query_id, corpus_id, _ = _parse_qrels_line(line)
            except ValueError as e:
                self.add(f"{QRELS}:{lineno}: {e}")
                continue
            if self.sample_ids is not None and query_id not in self.sample_ids:
                self.add(f"{QRELS}:{lineno}: unknown query id {query_id!r}")
            if self.corpus_ids is not None and corpus_id not in self.corpus_ids:
                self.add(f"{QRELS}:{lineno}: unknown corpus id {corpus_id!r}")
            if (query_id, corpus_id) in pairs:
                self.add(f"{QRELS}:{lineno}: duplicate pair ({query_id!r}, {corpus_id!r})")
            pairs.add((query_id, corpus_id))
        if lineno == 0:
            self.add(f"{QRELS}: empty; expected the header {QRELS_HEADER!r}")
        self.counts["qrels"] = n

    def check_manifest(self) -> None:
        try:
            manifest = Manifest.model_validate_json((self.path / MANIFEST).read_bytes())
        except ValidationError as e:
            self.add(f"{MANIFEST}: {_describe(e)}")
            return
        on_disk = {"documents": CORPUS, "samples": SAMPLES, "qrels": QRELS}
        for key, name in on_disk.items():
            if key not in self.counts:
                continue
            if key not in manifest.counts:
                self.add(f"{MANIFEST}: counts has no {key!r}")
            elif manifest.counts[key] != self.counts[key]:
                self.add(
                    f"{MANIFEST}: counts.{key} is {manifest.counts[key]} but {name} has {self.counts[key]}"
                )
        rejects = sum(manifest.rejects.values())
        if manifest.counts.get("rejects") != rejects:
            self.add(
                f"{MANIFEST}: counts.rejects is {manifest.counts.get('rejects')} but rejects sum to {rejects}"
            )
        for name in FILES:
            if name != MANIFEST and name not in manifest.files:
                self.add(f"{MANIFEST}: files has no sha256 for {name}")
        for name, digest in sorted(manifest.files.items()):
            self.check_digest(name, digest)

    def check_digest(self, name: str, digest: str) -> None:
        rel = PurePosixPath(name)
        if not name or "\\" in name or rel.is_absolute() or ".." in rel.parts or name == MANIFEST:
            self.add(f"{MANIFEST}: files lists {name!r}, which is not a file inside the benchmark")
            return
        file = self.path / rel
        if name not in self.digests:
            if not file.is_file():
                if name not in FILES:  # the six files were reported missing already
                    self.add(f"{name}: listed in {MANIFEST} but missing")
                return
            self.digests[name] = _sha256(file)
        if self.digests[name] != digest:
            self.add(f"{name}: sha256 {self.digests[name]} does not match {MANIFEST} ({digest})")


def _sha256(file: Path) -> str:
    hasher = hashlib.sha256()
    with file.open("rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            hasher.update(chunk)
    return hasher.hexdigest()
