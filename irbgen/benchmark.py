"""Write and read a benchmark directory (BEIR files plus samples, manifest and card).

The layout is described in DESIGN.md ("The benchmark directory"). Writing streams both inputs once,
validates as it goes, hashes every file while writing it and renames a finished temporary directory
into place, so a failed run leaves nothing behind and the same inputs give byte-identical files.
The dataset card and its statistics live in irbgen.card (importable from here too), the validator in
irbgen.validation and the Parquet / HF export in irbgen.export.
"""

from __future__ import annotations

import filecmp
import glob
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Container, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from irbgen.card import BenchmarkStats, Spread, render_card
from irbgen.commandline import base_command, reproducing_command
from irbgen.errors import BadInputError, IrbgenError, OutputExistsError, redact
from irbgen.io import manifest_text, move_file
from irbgen.outputs import FINGERPRINT, Inputs, check_inputs, check_replaceable, entries, real_output
from irbgen.schema import Document, Manifest, Sample

__all__ = [
    "BenchmarkStats",
    "Spread",
    "BenchmarkChanged",
    "check_output",
    "consistent_read",
    "CorpusPart",
    "parts_directory",
    "hop_query_id",
    "read_hop_qrels",
    "read_hop_queries",
    "iter_qrels",
    "read_documents",
    "read_manifest",
    "read_qrels",
    "read_queries",
    "read_samples",
    "staged_directory",
    "render_card",
    "write_benchmark",
    "write_corpus_part",
    "WrittenCorpus",
]

log = logging.getLogger(__name__)

CORPUS = "corpus.jsonl"
QUERIES = "queries.jsonl"
QRELS = "qrels/test.tsv"
SAMPLES = "samples.jsonl"
MANIFEST = "manifest.json"
CARD = "README.md"
FILES = (CORPUS, QUERIES, QRELS, SAMPLES, MANIFEST, CARD)
# Per-hop retrieval: one query per hop of a sample's chain, with that hop's evidence as its qrels. Not
# BEIR files; a benchmark written before they existed has neither, and is still valid.
HOP_QUERIES = "queries_hops.jsonl"
HOP_QRELS = "qrels/hops.tsv"
HOP_FILES = (HOP_QUERIES, HOP_QRELS)
REVIEWS = "reviews"  # judgments made with `irbgen review`: moved into a benchmark that replaces this one
HOP_SEPARATOR = "#h"
QRELS_HEADER = "query-id\tcorpus-id\tscore"
CHUNK_BYTES = 1 << 22  # hash and write in 4 MiB chunks rather than line by line
# One encoder reused for every record: json.dumps would build a new one per call. allow_nan=False gives
# the same bytes as json.dumps for every valid input and refuses NaN/Infinity, which are not JSON.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
_string = (
    json.encoder.c_encode_basestring or json.encoder.py_encode_basestring
)  # a str as JSON, as _encode writes it
_INTEGER = re.compile(r"-?[0-9]+")
SMALL_SCORES = {str(score): score for score in range(-9, 10)}  # scores _INTEGER reads as these
_TSV_UNSAFE = re.compile(r"[\t\n\r]")

M = TypeVar("M", bound=BaseModel)
Carry = Callable[[Path, Path], str]  # (the benchmark replaced, the staged one) -> a line on what was kept


# ---------------------------------------------------------------------------------------------- write


def check_output(out: Path, force: bool, kind: str = "benchmark", inputs: Inputs = None) -> None:
    """Fail early unless OUT may be written: absent, empty, or (with force) irbgen's own output of KIND.

    An OUT that is, lies inside or holds one of INPUTS ({flag: path}) is refused, and so is one that
    holds anything else (a user's files, another kind of output), with or without force; its nearest
    existing parent must be writable.
    """
    out = Path(out)
    if out.name in ("", ".", ".."):
        raise BadInputError(f"{out}: name a new directory for the output")
    check_inputs(out, inputs)
    out = real_output(out)
    if check_replaceable(out, kind):
        if not force:
            raise OutputExistsError(f"{out}: already exists; pass --force to replace it")
        if kind == "audit":
            _check_no_judgments(out)
    parent = out.parent
    while not _exists(parent):
        parent = parent.parent
    if not parent.is_dir():
        raise BadInputError(f"{parent}: not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInputError(f"{parent}: not writable")


def _check_no_judgments(sheet: Path) -> None:
    """Refuse to replace an audit sheet that holds judgments made by hand."""
    judged = 0
    try:
        for _, raw in iter_lines(sheet / "audit.jsonl"):
            judgment = json.loads(raw).get("judgment") or {}
            judged += any(value not in (None, "") for value in judgment.values())
    except (OSError, ValueError, AttributeError) as error:  # unreadable: it may hold judgments
        raise BadInputError(
            f"{sheet / 'audit.jsonl'}: cannot be read ({error}), so it may hold judgments made by hand; "
            "irbgen does not replace it: give --out another directory"
        ) from None
    if judged:
        raise BadInputError(
            f"{sheet}: holds {judged} judgment(s) made by hand, which irbgen does not replace; score them "
            f"(irbgen audit --score {sheet}) or give --out another directory"
        )


def write_benchmark(
    out: Path,
    documents: Iterable[Document] | WrittenCorpus,
    samples: Iterable[Sample],
    manifest: Manifest,
    *,
    force: bool = False,
    description: str = "",
    licence: str = "",
    carry: Carry | None = None,
) -> BenchmarkStats:
    """Write a benchmark directory atomically from streams of documents and samples.

    DOCUMENTS may also be a corpus written ahead in parts (`WrittenCorpus`), which is joined as it is.

    Replacing a benchmark moves its reviews/ into the new one and, after CARRY (see `staged_directory`),
    leaves it untouched when the new one has the same files.
    """
    out = Path(out)
    if manifest.command == base_command(manifest.source):  # a builder that named only its command
        command = reproducing_command(manifest.source, manifest.config)
        manifest = manifest.model_copy(update={"command": command})
    with staged_directory(out, force, carry=carry) as tmp:
        stats = _write_files(tmp, documents, samples, manifest, description, licence)
    log.info("wrote %s: %d documents, %d samples, %d qrels", out, stats.documents, stats.samples, stats.qrels)
    return stats


def _write_files(
    tmp: Path,
    documents: Iterable[Document] | WrittenCorpus,
    samples: Iterable[Sample],
    manifest: Manifest,
    description: str,
    licence: str,
) -> BenchmarkStats:
    stats = BenchmarkStats()
    files: dict[str, str] = {}
    doc_ids: Container[str]
    if isinstance(documents, WrittenCorpus):
        doc_ids = documents.ids
        files[CORPUS] = _place_corpus(documents.parts, tmp / CORPUS)
        for part in documents.parts:
            stats.documents += part.documents
            stats.document_tokens += part.tokens
    else:
        doc_ids = set()
        with _Sink(tmp / CORPUS) as corpus:
            _write_documents(corpus, documents, stats, doc_ids)
        files[CORPUS] = corpus.digest

    (tmp / "qrels").mkdir()
    sample_ids: set[str] = set()
    hop_queries_count = hop_qrels_count = 0
    with (
        _Sink(tmp / QUERIES) as queries,
        _Sink(tmp / QRELS) as qrels,
        _Sink(tmp / SAMPLES) as full,
        _Sink(tmp / HOP_QUERIES) as hop_queries,
        _Sink(tmp / HOP_QRELS) as hop_qrels,
    ):
        qrels.write(f"{QRELS_HEADER}\n".encode())
        hop_qrels.write(f"{QRELS_HEADER}\n".encode())
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
            for record, evidence in hop_query_records(sample):
                hop_id = record["_id"]
                hop_queries.write(_json_line(record, where))
                hop_queries_count += 1
                hop_qrels.write("".join(f"{hop_id}\t{doc_id}\t1\n" for doc_id in evidence).encode())
                hop_qrels_count += len(evidence)
            stats.add_sample(sample)
    files.update({QUERIES: queries.digest, QRELS: qrels.digest, SAMPLES: full.digest})
    files.update({HOP_QUERIES: hop_queries.digest, HOP_QRELS: hop_qrels.digest})

    counts = {
        **manifest.counts,
        "documents": stats.documents,
        "samples": stats.samples,
        "qrels": stats.qrels,
        "hop_queries": hop_queries_count,
        "hop_qrels": hop_qrels_count,
        "rejects": sum(manifest.rejects.values()),
    }
    filled = manifest.model_copy(update={"counts": counts, "files": {}})
    with _Sink(tmp / CARD) as card:
        card.write(redact(render_card(filled, stats, description, licence)).encode())
    files[CARD] = card.digest
    sizes = {name: (tmp / name).stat().st_size for name in files}
    filled = filled.model_copy(
        update={"files": dict(sorted(files.items())), "sizes": dict(sorted(sizes.items()))}
    )
    try:
        text = manifest_text(_dump(filled, "manifest"))  # a key given inside a URL is never published
    except ValueError as e:
        raise BadInputError(f"manifest: cannot be written as JSON: {e}") from None
    (tmp / MANIFEST).write_bytes(text.encode())
    return stats


def _write_documents(
    corpus: _Sink, documents: Iterable[Document], stats: BenchmarkStats, doc_ids: set[str], first: int = 0
) -> None:
    """Write each document's corpus.jsonl line, refusing a non-Document and a repeated id."""
    for n, doc in enumerate(documents, first):
        if not isinstance(doc, Document):
            raise BadInputError(f"documents[{n}]: expected a Document, got {type(doc).__name__}")
        doc_id = doc.id
        if doc_id in doc_ids:
            raise BadInputError(f"document {doc_id!r}: duplicate id")
        doc_ids.add(doc_id)
        corpus.write(_document_line(doc))
        stats.add_document(doc)


@dataclass(frozen=True)
class CorpusPart:
    """A run of corpus.jsonl lines written ahead of the benchmark (see `write_corpus_part`)."""

    path: Path
    documents: int
    tokens: int  # whitespace tokens over the part's document texts
    digest: str = ""  # the file's sha256


@dataclass(frozen=True)
class WrittenCorpus:
    """corpus.jsonl as parts written ahead (e.g. by other processes), joined in order by the writer.

    IDS holds every document id of the parts (the samples' evidence is checked against it); the parts
    must not repeat an id between them (each part refuses repeats within itself).
    """

    parts: list[CorpusPart]
    ids: Container[str]


def write_corpus_part(
    path: Path,
    documents: Iterable[Document],
    first: int = 0,
    then: Callable[[], Iterable[CorpusPart]] = tuple,
) -> CorpusPart:
    """Write DOCUMENTS as corpus.jsonl lines to PATH, with the writer's checks; FIRST numbers them.

    THEN, called once they are written, gives the parts that follow this one (written meanwhile by
    others): each is appended to PATH and removed, so PATH ends as their join.
    """
    stats = BenchmarkStats()
    with _Sink(path) as part:
        _write_documents(part, documents, stats, set(), first)
        for later in then():
            _append_file(part, later.path)
            later.path.unlink()
            stats.documents += later.documents
            stats.document_tokens += later.tokens
    return CorpusPart(Path(path), stats.documents, stats.document_tokens, part.digest)


def _place_corpus(parts: list[CorpusPart], path: Path) -> str:
    """Join PARTS into PATH; returns its sha256. A single part with its digest (already the whole
    corpus, joined by its writer) is moved there, not copied."""
    if len(parts) == 1 and parts[0].digest and move_file(parts[0].path, path):
        return parts[0].digest
    with _Sink(path) as corpus:
        for part in parts:
            _append_file(corpus, part.path)
    return corpus.digest


def _append_file(sink: _Sink, path: Path) -> None:
    with path.open("rb") as file:
        while chunk := file.read(CHUNK_BYTES):
            sink.write(chunk)


def _check_evidence(sample: Sample, doc_ids: Container[str]) -> None:
    sid = sample.id
    if _TSV_UNSAFE.search(sid):
        raise BadInputError(
            f"sample {sid!r}: id contains a tab or line break, which qrels/test.tsv cannot hold"
        )
    evidence = sample.evidence
    if _TSV_UNSAFE.search("".join(evidence)) or not all(map(doc_ids.__contains__, evidence)):
        for doc_id in evidence:  # the first problem, named
            if doc_id not in doc_ids:
                raise BadInputError(f"sample {sid!r}: evidence {doc_id!r} is not a document id")
            if _TSV_UNSAFE.search(doc_id):
                raise BadInputError(
                    f"sample {sid!r}: evidence {doc_id!r} contains a tab or line break, "
                    "which qrels/test.tsv cannot hold"
                )
    for hop in sample.chain:
        if not all(map(doc_ids.__contains__, hop.evidence)):
            missing = next(doc_id for doc_id in hop.evidence if doc_id not in doc_ids)
            raise BadInputError(f"sample {sid!r}: hop {hop.index} evidence {missing!r} is not a document id")


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


def hop_query_id(sample_id: str, index: int) -> str:
    """The id of a hop's query in queries_hops.jsonl and qrels/hops.tsv: `QID#h0`, `QID#h1`, ..."""
    return f"{sample_id}{HOP_SEPARATOR}{index}"


def hop_query_records(sample: Sample) -> list[tuple[dict[str, Any], list[str]]]:
    """(queries_hops.jsonl record, the hop's evidence for qrels/hops.tsv) per hop, in chain order.

    The text is the hop's sub-question; a hop without one is asked the sample's whole question
    (`metadata.question_from` says which).
    """
    records = []
    seen: set[int] = set()
    for hop in sample.chain:
        if hop.index in seen:
            raise BadInputError(f"sample {sample.id!r}: hop index {hop.index} appears twice in the chain")
        seen.add(hop.index)
        record = {
            "_id": hop_query_id(sample.id, hop.index),
            "text": hop.question or sample.question,
            "metadata": {
                "sample_id": sample.id,
                "hop": hop.index,
                "hops": sample.hops,
                "question_from": "hop" if hop.question else "sample",
                "operation": hop.operation,
                "predicate": hop.predicate,
                "answers": list(hop.answers),
            },
        }
        records.append((record, list(hop.evidence)))
    return records


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


def _document_line(doc: Document) -> bytes:
    """The corpus.jsonl line of a document; one without metadata skips the generic encoder (same bytes)."""
    if not doc.metadata:
        try:
            fields = f'"_id":{_string(doc.id)},"title":{_string(doc.title)},"text":{_string(doc.text)}'
            return f'{{{fields},"metadata":{{}}}}\n'.encode()
        except (TypeError, ValueError):  # not a string, or a lone surrogate: the generic encoder says which
            pass
    record = {"_id": doc.id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}
    return _json_line(record, f"document {doc.id!r}")


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
        if self._size >= CHUNK_BYTES:
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


@contextmanager
def staged_directory(
    out: Path, force: bool, kind: str = "benchmark", inputs: Inputs = None, carry: Carry | None = None
) -> Iterator[Path]:
    """A temporary sibling of OUT to fill; it replaces OUT when the block ends, and vanishes on error.

    OUT is checked first (see `check_output`: KIND is the kind of output written, INPUTS the command's
    inputs) and locked while this runs (a second writer exits 2); temporary siblings left by a killed
    writer of OUT are removed first. A symlink OUT keeps linking to its target, which is replaced.
    A benchmark that replaces another gets its reviews/; CARRY(OUT, staged) may copy more into the staged
    one first and returns a line to log once OUT is replaced. If the staged benchmark then has the same
    files as OUT, OUT is left as it was.
    """
    from irbgen.pipeline.rundir import lock_output

    check_output(out, force, kind, inputs)
    out = real_output(Path(out))
    with lock_output(out):
        check_output(out, force, kind)  # again: another writer may have finished while we waited
        remove_stale_siblings(out)
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        try:
            tmp.mkdir()
            yield tmp
            _move_into_place(tmp, out, force, kind, carry)
        except BaseException:
            _remove(tmp)
            raise


def remove_stale_siblings(out: Path) -> None:
    """Remove .OUT.tmp-PID, .OUT.old-PID and .OUT.parts-PID left by killed writers (with OUT's lock held).

    This process's own parts folder (see `parts_folder`) is kept: it holds the corpus about to be joined.
    """
    for sibling in out.parent.glob(f".{glob.escape(out.name)}.*-*"):
        found = re.fullmatch(rf"\.{re.escape(out.name)}\.(tmp|old|parts)-([0-9]+)", sibling.name)
        if found and sibling != parts_folder(out):
            log.info("removing %s, left by an interrupted writer", sibling)
            _remove(sibling)


def parts_folder(out: Path) -> Path:
    """Where this process writes the parts of OUT's corpus ahead of the benchmark (see WrittenCorpus)."""
    return out.parent / f".{out.name}.parts-{os.getpid()}"


@contextmanager
def parts_directory(out: Path) -> Iterator[Path]:
    """An empty `parts_folder` for OUT (call with OUT's lock held), removed when the block ends."""
    folder = parts_folder(real_output(Path(out)))
    _remove(folder)  # left by a killed process that had this pid
    folder.mkdir()
    try:
        yield folder
    finally:
        _remove(folder)


def _move_into_place(tmp: Path, out: Path, force: bool, kind: str, carry: Carry | None) -> None:
    if _exists(out) and out.is_dir() and not entries(out):
        out.rmdir()  # an empty folder holds nothing to lose
    if not _exists(out):
        os.rename(tmp, out)
        return
    if not force:  # someone created OUT while we were writing
        raise OutputExistsError(f"{out}: already exists; pass --force to replace it")
    line = ""
    if kind == "benchmark":
        line = carry(out, tmp) if carry is not None else ""
        if _same_files(tmp, out):
            _remove(tmp)
            log.info("%s: unchanged, left as it was", out)
            return
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    _remove(old)
    os.rename(out, old)
    reviews = _exists(old / REVIEWS) and kind == "benchmark"
    try:
        if reviews:  # a rename: a line a reviewer appends meanwhile is not lost
            os.rename(old / REVIEWS, tmp / REVIEWS)
        try:
            os.rename(tmp, out)
        except BaseException:
            if reviews:
                os.rename(tmp / REVIEWS, old / REVIEWS)
            raise
    except BaseException:
        os.rename(old, out)
        raise
    _remove(old)
    if line:
        log.warning("%s", line)


def _same_files(new: Path, old: Path) -> bool:
    """Whether every file of the benchmark NEW is in OLD with the same bytes, and OLD has no other."""
    names = [name for name in entries(old) if name != REVIEWS]
    if sorted(names) != entries(new):
        return False
    for name in names:
        a, b = new / name, old / name
        if a.is_dir() != b.is_dir():
            return False
        if a.is_dir():
            if not _same_files(a, b):
                return False
        elif not filecmp.cmp(a, b, shallow=False):
            return False
    return True


def _exists(path: Path) -> bool:
    return os.path.lexists(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif _exists(path):
        path.unlink()


# ----------------------------------------------------------------------------------------------- read


class BenchmarkChanged(IrbgenError):
    """A benchmark's files changed while a command was reading them (another process rewrote it)."""


def _file_states(path: Path) -> dict[str, tuple[int, ...] | None]:
    states: dict[str, tuple[int, ...] | None] = {}
    for name in FILES + HOP_FILES:
        try:
            info = os.stat(Path(path) / name)
        except OSError:
            states[name] = None
        else:
            states[name] = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    return states


@contextmanager
def consistent_read(path: Path) -> Iterator[None]:
    """Read a benchmark inside this block; exit 1 with "benchmark changed while reading" if it changed.

    The files' identity, size and mtime are taken before and compared after (also when the block fails,
    since a half-replaced benchmark looks invalid); the sizes the manifest lists are checked too.
    """
    before = _file_states(path)
    try:
        yield
        _check_sizes(Path(path), before)
    except BadInputError:
        if _file_states(path) != before:
            raise BenchmarkChanged(
                f"{path}: benchmark changed while reading; run the command again"
            ) from None
        raise
    if _file_states(path) != before:
        raise BenchmarkChanged(f"{path}: benchmark changed while reading; run the command again")


def _check_sizes(path: Path, states: dict[str, tuple[int, ...] | None]) -> None:
    try:
        sizes = json.loads((path / MANIFEST).read_bytes()).get("sizes") or {}
    except (OSError, ValueError, AttributeError):
        return  # the validator reports an unreadable manifest
    for name, size in sizes.items():
        state = states.get(name)
        if state is not None and state[2] != size:
            raise BenchmarkChanged(
                f"{path}: benchmark changed while reading ({name} is {state[2]} bytes, "
                f"the manifest says {size}); run the command again"
            )


def read_documents(path: Path) -> Iterator[Document]:
    """Stream the documents of a benchmark directory."""
    return _read_models(Path(path), CORPUS, Document)


def read_samples(path: Path) -> Iterator[Sample]:
    """Stream the samples of a benchmark directory."""
    return _read_models(Path(path), SAMPLES, Sample)


def read_manifest(path: Path) -> Manifest:
    """Read and validate manifest.json of a benchmark directory."""
    hint = run_directory_hint(path)
    if hint:  # a run directory has a manifest.json too, of another kind
        raise BadInputError(f"{path}: {hint}")
    file = _existing(Path(path), MANIFEST)
    try:
        return Manifest.model_validate_json(file.read_bytes())
    except ValidationError as e:
        raise BadInputError(f"{MANIFEST}: {describe_error(e)}") from None


def read_queries(path: Path, name: str = QUERIES) -> Iterator[dict[str, Any]]:
    """Stream queries.jsonl (or NAME, e.g. queries_hops.jsonl) as {"_id", "text", "metadata"} dicts."""
    for lineno, raw in iter_lines(_existing(Path(path), name)):
        try:
            query = parse_query(raw)
        except ValueError as e:
            raise BadInputError(f"{name}:{lineno}: {e}") from None
        yield query


def read_qrels(path: Path, name: str = QRELS) -> dict[str, dict[str, int]]:
    """Read qrels/test.tsv (or NAME, e.g. qrels/hops.tsv) as {query id: {corpus id: score}}."""
    qrels: dict[str, dict[str, int]] = {}
    try:  # the fast path, for a plain file; anything else is read line by line
        for queries, docs, scores in qrels_blocks(_existing(Path(path), name)):
            for query_id, start, end in query_runs(queries):
                grades = map(SMALL_SCORES.__getitem__, scores[start:end])
                qrels.setdefault(query_id, {}).update(zip(docs[start:end], grades, strict=True))
        return qrels
    except UnusualQrels:
        qrels = {}
    for query_id, corpus_id, score in iter_qrels(path, name):
        qrels.setdefault(query_id, {})[corpus_id] = score
    return qrels


QRELS_BLOCK = 1 << 24  # bytes of a qrels file qrels_blocks reads at a time


def query_runs(queries: list[str]) -> Iterator[tuple[str, int, int]]:
    """(query id, start, end) of each run of equal ids in a block's query column."""
    start = 0
    for query_id, group in groupby(queries):
        end = start + len(list(group))
        yield query_id, start, end
        start = end


class UnusualQrels(Exception):
    """A qrels file qrels_blocks leaves to the line-by-line reader (a problem or an unusual line)."""


def qrels_blocks(file: Path, hasher: Any = None) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """(query ids, corpus ids, scores) of the lines of each block of a plain qrels file, split in C.

    Plain: UTF-8, the header, then lines of three non-empty tab-separated fields with a score from -9 to
    9, each ending in a line break, no carriage return. Raises UnusualQrels at anything else, so the
    caller can read the file line by line and report what that reports."""
    rest, header = b"", True
    with file.open("rb") as f:
        while block := f.read(QRELS_BLOCK):
            if hasher is not None:
                hasher.update(block)
            data = rest + block
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise UnusualQrels from None
            lines = text.split("\n")
            lines.pop()  # what follows the block's last line break
            if header and lines:
                if lines[0] != QRELS_HEADER:
                    raise UnusualQrels
                lines, header = lines[1:], False
            tabs = list(map(str.count, lines, ["\t"] * len(lines)))
            if "\r" in text or tabs.count(2) != len(lines):
                raise UnusualQrels
            fields = "\t".join(lines).split("\t") if lines else []
            if "" in fields or not SMALL_SCORES.keys() >= set(fields[2::3]):
                raise UnusualQrels
            yield fields[0::3], fields[1::3], fields[2::3]
    if rest or header:  # a last line without a line break, or no header
        raise UnusualQrels


def has_hop_files(path: Path) -> bool:
    """Whether a benchmark directory has the per-hop files (benchmarks written before them do not)."""
    return all((Path(path) / name).is_file() for name in HOP_FILES)


def read_hop_queries(path: Path) -> Iterator[dict[str, Any]]:
    """Stream queries_hops.jsonl as {"_id", "text", "metadata"} dicts (metadata: sample_id, hop, ...)."""
    return read_queries(path, HOP_QUERIES)


def read_hop_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read qrels/hops.tsv as {hop query id: {corpus id: score}}."""
    return read_qrels(path, HOP_QRELS)


def iter_qrels(path: Path, name: str = QRELS) -> Iterator[tuple[str, str, int]]:
    """Stream qrels/test.tsv (or NAME) of a benchmark directory as (query id, corpus id, score), in order."""
    for lineno, raw in iter_lines(_existing(Path(path), name)):
        try:
            line = raw.decode("utf-8")
            if lineno == 1:
                check_qrels_header(line)
                continue
            row = parse_qrels_line(line)
        except ValueError as e:
            raise BadInputError(f"{name}:{lineno}: {e}") from None
        yield row


def _read_models(path: Path, name: str, model: type[M]) -> Iterator[M]:
    for lineno, raw in iter_lines(_existing(path, name)):
        try:
            record = model.model_validate_json(raw)
        except ValidationError as e:
            raise BadInputError(f"{name}:{lineno}: {describe_error(e)}") from None
        yield record


def parse_query(raw: bytes) -> dict[str, Any]:
    """Parse one queries.jsonl line; ValueError unless it has string _id and text and object metadata."""
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


def check_qrels_header(line: str) -> None:
    """Raise ValueError unless LINE is the qrels/test.tsv header."""
    header = line.rstrip("\r\n")
    if header != QRELS_HEADER:
        raise ValueError(f"header is {header!r}, expected {QRELS_HEADER!r}")


def parse_qrels_line(line: str) -> tuple[str, str, int]:
    """Parse one qrels/test.tsv data line into (query id, corpus id, integer score); ValueError if bad."""
    fields = line.rstrip("\n").removesuffix("\r").split("\t")
    if len(fields) == 3 and fields[0] and fields[1] and fields[2] in SMALL_SCORES:  # the common line, fast
        return fields[0], fields[1], SMALL_SCORES[fields[2]]
    if len(fields) != 3:
        raise ValueError(f"expected 3 tab-separated fields, got {len(fields)}")
    query_id, corpus_id, score = fields
    if not query_id or not corpus_id:
        raise ValueError("empty query-id or corpus-id")
    if not _INTEGER.fullmatch(score):
        raise ValueError(f"score {score!r} is not an integer")
    return query_id, corpus_id, int(score)


def iter_lines(file: Path, hasher: Any = None) -> Iterator[tuple[int, bytes]]:
    """Yield (1-based line number, raw line) pairs; split on b"\\n" only, as JSON lines are."""
    with file.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            if hasher is not None:
                hasher.update(raw)
            yield lineno, raw


def _existing(path: Path, name: str) -> Path:
    file = path / name
    if not file.is_file():
        hint = run_directory_hint(path)
        raise BadInputError(f"{path}: {hint}" if hint else f"{file}: no such file")
    return file


def run_directory_hint(path: Path) -> str:
    """For a build's run directory given where a benchmark is wanted: the benchmark inside it; else ''.

    A run directory holds fingerprint.json (see irbgen.pipeline.rundir) and, once built, benchmark/.
    """
    path = Path(path)
    inner = path / "benchmark"
    run_dir = (path / FINGERPRINT).is_file()
    if run_dir and not inner.is_dir():
        return (
            f"a build's run directory that holds no benchmark (the build did not finish; its {MANIFEST} "
            "says why if it failed)"
        )
    if run_dir or (not (path / MANIFEST).is_file() and (inner / MANIFEST).is_file()):  # or an older run
        return f"a build's run directory, not a benchmark: {inner} is the benchmark"
    return ""


def describe_error(error: ValidationError) -> str:
    """A one-line summary of a pydantic error: the first three problems with their locations."""
    parts = []
    for item in error.errors()[:3]:
        loc = ".".join(str(part) for part in item["loc"])
        parts.append(f"{loc}: {item['msg']}" if loc else item["msg"])
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
