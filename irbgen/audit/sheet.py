"""Make an audit sheet: draw samples at random, find their evidence passages, write the three files."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from irbgen.audit.facts import changes_of, facts_of, hops_of, kind_of, premise_answer_of
from irbgen.audit.markdown import render_markdown
from irbgen.audit.passages import IndexedDocument, best_passage
from irbgen.audit.records import AuditHeader, AuditItem
from irbgen.benchmark import (
    SAMPLES,
    describe_error,
    iter_lines,
    read_documents,
    read_manifest,
    run_directory_hint,
    staged_directory,
)
from irbgen.errors import BadInputError
from irbgen.io import write_json, write_jsonl
from irbgen.schema import Document, Sample

HEADER = "audit.json"
SHEET = "audit.jsonl"
MARKDOWN = "audit.md"


@dataclass
class Sheet:
    """An audit sheet: where its samples came from, and one item per drawn sample."""

    header: AuditHeader
    items: list[AuditItem]


def make_sheet(benchmark: Path, size: int, seed: int) -> Sheet:
    """Draw SIZE samples of BENCHMARK with SEED (all of them if it has fewer) and build their items."""
    benchmark = Path(benchmark)
    check_benchmark(benchmark)
    manifest = read_manifest(benchmark)
    population, digest = scan_samples(benchmark)
    if population == 0:
        raise BadInputError(f"{benchmark / SAMPLES}: no samples to audit")
    samples = read_chosen(benchmark, draw(population, size, seed))
    documents = load_documents(benchmark, evidence_ids(samples))
    labels = entity_labels(documents.values())
    indexed = {doc_id: IndexedDocument.of(doc) for doc_id, doc in documents.items()}
    header = AuditHeader(
        benchmark=str(benchmark.resolve()),
        name=manifest.name,
        source=manifest.source,
        seed=seed,
        requested=size,
        size=len(samples),
        population=population,
        samples_sha256=digest,
    )
    return Sheet(header, [audit_item(sample, indexed, labels) for sample in samples])


def write_sheet(out: Path, sheet: Sheet, force: bool = False) -> None:
    """Write audit.json, audit.jsonl and audit.md into OUT atomically (never over the benchmark)."""
    inputs = {"BENCHMARK": Path(sheet.header.benchmark)}
    with staged_directory(Path(out), force, "audit", inputs) as tmp:
        write_json(tmp / HEADER, sheet.header)
        write_jsonl(tmp / SHEET, sheet.items)  # the judgment near the start of a line, easy to find
        (tmp / MARKDOWN).write_text(render_markdown(sheet.header, sheet.items), encoding="utf-8")


def check_benchmark(benchmark: Path) -> None:
    """Fail with a clear message unless BENCHMARK looks like a benchmark directory."""
    if not benchmark.is_dir():
        raise BadInputError(f"{benchmark}: not a directory")
    if not (benchmark / SAMPLES).is_file():
        hint = run_directory_hint(benchmark)
        raise BadInputError(f"{benchmark}: {hint or f'not a benchmark directory (no {SAMPLES})'}")


def scan_samples(benchmark: Path) -> tuple[int, str]:
    """The number of lines of samples.jsonl and its sha256."""
    hasher = hashlib.sha256()
    count = sum(1 for _ in iter_lines(benchmark / SAMPLES, hasher))
    return count, hasher.hexdigest()


def draw(population: int, size: int, seed: int) -> list[int]:
    """Line indices (0-based) of SIZE samples drawn without replacement, in draw order."""
    return random.Random(seed).sample(range(population), min(size, population))


def read_chosen(benchmark: Path, chosen: list[int]) -> list[Sample]:
    """The samples on the CHOSEN lines (0-based), in the order chosen."""
    position = {index: n for n, index in enumerate(chosen)}
    found: list[Sample | None] = [None] * len(chosen)
    for lineno, raw in iter_lines(benchmark / SAMPLES):
        if lineno - 1 in position:
            try:
                found[position[lineno - 1]] = Sample.model_validate_json(raw)
            except ValidationError as e:
                raise BadInputError(f"{benchmark / SAMPLES}:{lineno}: {describe_error(e)}") from None
    return [sample for sample in found if sample is not None]


def evidence_ids(samples: Iterable[Sample]) -> set[str]:
    """Every document id the samples or their hops cite."""
    ids: set[str] = set()
    for sample in samples:
        ids.update(sample.evidence)
        for hop in sample.chain:
            ids.update(hop.evidence)
    return ids


def load_documents(benchmark: Path, ids: set[str]) -> dict[str, Document]:
    """The corpus documents with these ids, read in one pass over corpus.jsonl."""
    return {doc.id: doc for doc in read_documents(benchmark) if doc.id in ids}


def entity_labels(documents: Iterable[Document]) -> dict[str, str]:
    """Entity id -> label, from documents that name their entity (Wikidata's linearised subgraphs)."""
    labels: dict[str, str] = {}
    for doc in documents:
        entity = doc.metadata.get("entity")
        if isinstance(entity, str) and doc.title:
            labels.setdefault(entity, doc.title)
    return labels


def audit_item(sample: Sample, documents: dict[str, IndexedDocument], labels: dict[str, str]) -> AuditItem:
    """One sample on the sheet, each fact with its best evidence passage, judgments empty."""
    facts = [
        fact.model_copy(
            update={
                "passage": best_passage(fact.text, (documents[i] for i in fact.evidence if i in documents))
            }
        )
        for fact in facts_of(sample, labels)
    ]
    return AuditItem(
        id=sample.id,
        kind=kind_of(sample),
        source=sample.source,
        question_type=sample.attributes.question_type,
        question=sample.question,
        answers=sample.answers,
        false_premise=sample.false_premise,
        premise_answer=premise_answer_of(sample),
        changes=changes_of(sample),
        hops=hops_of(sample),
        facts=facts,
    )
