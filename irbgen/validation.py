"""Validate a benchmark directory end to end: records, ids, cross-file agreement, counts and checksums.

The validator reads the files irbgen.benchmark writes, with the same parsers, but reports every problem
it finds instead of stopping at the first one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import ValidationError

from irbgen.benchmark import (
    CHUNK_BYTES,
    CORPUS,
    FILES,
    HOP_FILES,
    HOP_QRELS,
    HOP_QUERIES,
    MANIFEST,
    QRELS,
    QRELS_HEADER,
    QUERIES,
    SAMPLES,
    UnusualQrels,
    check_qrels_header,
    describe_error,
    hop_query_records,
    iter_lines,
    parse_qrels_line,
    parse_query,
    qrels_blocks,
    query_runs,
    run_directory_hint,
)
from irbgen.errors import BadInputError
from irbgen.schema import Document, Manifest, Sample

__all__ = ["ValidationReport", "validate_benchmark"]

MAX_LISTED_PROBLEMS = 50
EMPTY = "an empty benchmark"  # how the problem of a benchmark without samples or queries starts


@dataclass(frozen=True, slots=True)
class _Ids:
    """Distinct ids, none holding a line break, kept as one string: about 8 bytes an id instead of about 90
    in a set (a hop's evidence: 40 M ids over 1 M documents)."""

    count: int
    joined: str  # the ids in their order, joined by line breaks

    def __len__(self) -> int:
        return self.count

    def set(self) -> set[str]:
        return set(self.joined.split("\n")) if self.count else set()


IdSet = _Ids | frozenset[str]


def _id_set(ids: list[str]) -> IdSet:
    """Distinct IDS (a hop's evidence) kept compactly; as a frozenset if one of them holds a line break."""
    joined = "\n".join(ids)
    return _Ids(len(ids), joined) if joined.count("\n") == max(len(ids) - 1, 0) else frozenset(ids)


def _same_ids(expected: IdSet, ids: Collection[str]) -> bool:
    """Whether IDS are exactly the ids of EXPECTED, none twice."""
    if len(ids) != len(expected):
        return False
    if isinstance(expected, frozenset):
        return expected == set(ids)
    if isinstance(ids, list) and "\n".join(ids) == expected.joined:  # in the same order (as irbgen writes)
        return True
    return expected.set() == set(ids)


@dataclass
class ValidationReport:
    """What validate_benchmark found: the first problems, how many in all, and the counts on disk.

    `kept` holds what validate_benchmark's `keep` returned for each sample that parsed, in file order.
    """

    ok: bool
    problems: list[str]
    total_problems: int
    counts: dict[str, int]
    kept: list[Any] = field(default_factory=list)

    @property
    def only_empty(self) -> bool:
        """Whether the one thing wrong is that the benchmark holds no sample or no query."""
        return self.total_problems == 1 and self.problems[0].startswith(EMPTY)


def invalid_benchmark(path: Path, report: ValidationReport) -> BadInputError:
    """The one-line error for a benchmark that failed validation."""
    if report.only_empty:
        return BadInputError(f"{path}: {report.problems[0]}")
    more = report.total_problems - 1
    suffix = f" (and {more} more; run irbgen validate {path})" if more else ""
    return BadInputError(f"{path}: not a valid benchmark: {report.problems[0]}{suffix}")


def validate_benchmark(path: Path, keep: Callable[[Sample], Any] | None = None) -> ValidationReport:
    """Check a benchmark directory end to end and report every problem found (the first 50 listed).

    With `keep`, the report's `kept` holds keep(sample) for every sample that parsed, so a caller that
    needs something of each sample does not parse samples.jsonl a second time.
    """
    hint = run_directory_hint(path)
    if hint:  # not a broken benchmark but no benchmark at all: one line, not a list of what is missing
        raise BadInputError(f"{path}: {hint}")
    checker = _Checker(Path(path), keep)
    checker.run()
    return ValidationReport(
        ok=checker.total == 0,
        problems=checker.problems,
        total_problems=checker.total,
        counts=checker.counts,
        kept=checker.kept,
    )


class _Checker:
    """One validation run: streams each file once, hashing it on the way."""

    def __init__(self, path: Path, keep: Callable[[Sample], Any] | None = None) -> None:
        self.path = path
        self.keep = keep
        self.kept: list[Any] = []
        self.problems: list[str] = []
        self.total = 0
        self.counts: dict[str, int] = {}
        self.qrels_lines = 0  # data lines of the qrels file read last (qrels_pairs)
        self.digests: dict[str, str] = {}
        self.corpus_ids: set[str] | None = None
        self.sample_lines: list[tuple[str, str] | None] | None = None  # per samples.jsonl line
        self.sample_ids: set[str] | None = None
        # hop query id -> (text, evidence) expected from the samples' chains
        self.hop_expected: dict[str, tuple[str, IdSet]] | None = None
        self.hop_query_ids: set[str] | None = None

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
        hops_present = [name for name in HOP_FILES if (self.path / name).is_file()]
        if len(hops_present) == 1:
            missing = next(name for name in HOP_FILES if name not in hops_present)
            self.add(f"{missing}: missing, but {hops_present[0]} is there (the per-hop files come together)")
        if HOP_QUERIES in hops_present:
            self.check_hop_queries()
        if HOP_QRELS in hops_present:
            self.check_hop_qrels()
        if MANIFEST in present:
            self.check_manifest()
        self.check_not_empty()

    def lines(self, name: str) -> Iterator[tuple[int, bytes]]:
        hasher = hashlib.sha256()
        yield from iter_lines(self.path / name, hasher)
        self.digests[name] = hasher.hexdigest()

    def check_corpus(self) -> None:
        ids: set[str] = set()
        n = 0
        for lineno, raw in self.lines(CORPUS):
            n += 1
            try:
                doc = Document.model_validate_json(raw)
            except ValidationError as e:
                self.add(f"{CORPUS}:{lineno}: {describe_error(e)}")
                continue
            if doc.id in ids:
                self.add(f"{CORPUS}:{lineno}: duplicate _id {doc.id!r}")
            ids.add(doc.id)
        self.corpus_ids = ids
        self.counts["documents"] = n

    def check_samples(self) -> None:
        lines: list[tuple[str, str] | None] = []
        ids: set[str] = set()
        hop_expected: dict[str, tuple[str, IdSet]] = {}
        for lineno, raw in self.lines(SAMPLES):
            try:
                sample = Sample.model_validate_json(raw)
            except ValidationError as e:
                self.add(f"{SAMPLES}:{lineno}: {describe_error(e)}")
                lines.append(None)
                continue
            lines.append((sample.id, sample.question))
            if self.keep is not None:
                self.kept.append(self.keep(sample))
            try:
                hop_records = hop_query_records(sample)
            except BadInputError as e:
                self.add(f"{SAMPLES}:{lineno}: {e}")
                hop_records = []
            for record, evidence in hop_records:
                hop_expected[record["_id"]] = (record["text"], _id_set(evidence))
            if sample.id in ids:
                self.add(f"{SAMPLES}:{lineno}: duplicate id {sample.id!r}")
            ids.add(sample.id)
            corpus = self.corpus_ids
            if corpus is not None:  # each id is looked at one by one only if one is missing
                for doc_id in sample.evidence if not corpus.issuperset(sample.evidence) else ():
                    if doc_id not in corpus:
                        self.add(f"{SAMPLES}:{lineno}: evidence {doc_id!r} is not in {CORPUS}")
                for hop in sample.chain:
                    for doc_id in hop.evidence if not corpus.issuperset(hop.evidence) else ():
                        if doc_id not in corpus:
                            self.add(
                                f"{SAMPLES}:{lineno}: hop {hop.index} evidence {doc_id!r} is not in {CORPUS}"
                            )
        self.sample_lines = lines
        self.sample_ids = ids
        self.hop_expected = hop_expected
        self.counts["samples"] = len(lines)

    def check_queries(self) -> None:
        ids: set[str] = set()
        n = 0
        for lineno, raw in self.lines(QUERIES):
            n += 1
            try:
                query = parse_query(raw)
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

    def qrels_pairs(self, name: str, query_ids: set[str] | None, what: str) -> Iterator[tuple[int, str, str]]:
        """(line, query id, corpus id) of a qrels file with its header, each id known; counts its lines."""
        n = lineno = 0
        for lineno, raw in self.lines(name):
            try:
                line = raw.decode("utf-8")
                if lineno == 1:
                    check_qrels_header(line)
                    continue
                n += 1
                query_id, corpus_id, _ = parse_qrels_line(line)
            except ValueError as e:
                self.add(f"{name}:{lineno}: {e}")
                continue
            if query_ids is not None and query_id not in query_ids:
                self.add(f"{name}:{lineno}: unknown {what} {query_id!r}")
            if self.corpus_ids is not None and corpus_id not in self.corpus_ids:
                self.add(f"{name}:{lineno}: unknown corpus id {corpus_id!r}")
            yield lineno, query_id, corpus_id
        if lineno == 0:
            self.add(f"{name}: empty; expected the header {QRELS_HEADER!r}")
        self.qrels_lines = n

    def plain_qrels(self, name: str, query_ids: set[str]) -> Iterator[tuple[str, list[str]]]:
        """(query id, its corpus ids) per run of lines, for a qrels file that is plainly valid.

        The fast path: raises UnusualQrels as soon as anything would need the line-by-line check (a problem,
        a carriage return, a score other than -9..9, a query's lines not all together, ...), so the
        caller runs that check instead and reports exactly what it reports."""
        if self.corpus_ids is None:
            raise UnusualQrels
        corpus_ids = self.corpus_ids
        hasher = hashlib.sha256()
        seen: set[str] = set()
        current: tuple[str, list[str]] | None = None
        n = 0
        for queries, docs, _ in qrels_blocks(self.path / name, hasher):
            if not corpus_ids.issuperset(docs):
                raise UnusualQrels
            n += len(queries)
            for query_id, start, end in query_runs(queries):
                if current is not None and current[0] == query_id:  # a run that goes on past the block
                    current[1].extend(docs[start:end])
                    continue
                if current is not None:
                    yield current
                if query_id in seen or query_id not in query_ids:
                    raise UnusualQrels
                seen.add(query_id)
                current = (query_id, docs[start:end])
        if current is not None:
            yield current
        self.digests[name] = hasher.hexdigest()
        self.qrels_lines = n

    def check_qrels(self) -> None:
        if self.sample_ids is not None:
            try:
                for _, docs in self.plain_qrels(QRELS, self.sample_ids):
                    if len(set(docs)) != len(docs):
                        raise UnusualQrels
                self.counts["qrels"] = self.qrels_lines
                return
            except UnusualQrels:
                pass
        pairs: set[tuple[str, str]] = set()
        for lineno, query_id, corpus_id in self.qrels_pairs(QRELS, self.sample_ids, "query id"):
            if (query_id, corpus_id) in pairs:
                self.add(f"{QRELS}:{lineno}: duplicate pair ({query_id!r}, {corpus_id!r})")
            pairs.add((query_id, corpus_id))
        self.counts["qrels"] = self.qrels_lines

    def check_hop_queries(self) -> None:
        """Each line one hop of a sample's chain, in samples order, with the hop's sub-question as text."""
        ids: set[str] = set()
        n = 0
        expected = self.hop_expected
        for lineno, raw in self.lines(HOP_QUERIES):
            n += 1
            try:
                query = parse_query(raw)
            except ValueError as e:
                self.add(f"{HOP_QUERIES}:{lineno}: {e}")
                continue
            query_id, text = query["_id"], query["text"]
            if query_id in ids:
                self.add(f"{HOP_QUERIES}:{lineno}: duplicate _id {query_id!r}")
            ids.add(query_id)
            if expected is None:
                continue
            if query_id not in expected:
                self.add(f"{HOP_QUERIES}:{lineno}: _id {query_id!r} is not a hop of any sample's chain")
            elif text != expected[query_id][0]:
                self.add(f"{HOP_QUERIES}:{lineno}: text differs from the sub-question of hop {query_id!r}")
        self.hop_query_ids = ids
        self.counts["hop_queries"] = n
        if expected is not None:
            missing = [hop_id for hop_id in expected if hop_id not in ids]
            if missing:
                self.add(
                    f"{HOP_QUERIES}: {len(missing)} hop(s) of the samples' chains missing, "
                    f"e.g. {missing[0]!r}"
                )

    def check_hop_qrels(self) -> None:
        """The hop queries' qrels: exactly each hop's evidence, every id known."""
        if self.hop_query_ids is not None and self.hop_expected is not None:
            try:
                found_hops = set()
                for hop_id, docs in self.plain_qrels(HOP_QRELS, self.hop_query_ids):
                    expected = self.hop_expected.get(hop_id)
                    if expected is None or not _same_ids(expected[1], docs):
                        raise UnusualQrels
                    found_hops.add(hop_id)
                if any(
                    len(evidence)
                    for hop_id, (_, evidence) in self.hop_expected.items()
                    if hop_id not in found_hops
                ):
                    raise UnusualQrels
                self.counts["hop_qrels"] = self.qrels_lines
                return
            except UnusualQrels:
                pass
        found: dict[str, set[str]] = {}
        for lineno, query_id, corpus_id in self.qrels_pairs(HOP_QRELS, self.hop_query_ids, "hop query id"):
            docs = found.setdefault(query_id, set())
            if corpus_id in docs:
                self.add(f"{HOP_QRELS}:{lineno}: duplicate pair ({query_id!r}, {corpus_id!r})")
            docs.add(corpus_id)
        self.counts["hop_qrels"] = self.qrels_lines
        if self.hop_expected is None:
            return
        for hop_id, (_, evidence) in self.hop_expected.items():
            if not _same_ids(evidence, found.get(hop_id, set())):
                self.add(f"{HOP_QRELS}: the qrels of {hop_id!r} differ from that hop's evidence in {SAMPLES}")

    def check_not_empty(self) -> None:
        empty = [name for name in ("samples", "queries") if self.counts.get(name) == 0]
        if empty:
            self.add(
                f"{EMPTY}: no {' and no '.join(empty)}, nothing to evaluate (if a build wrote it, the "
                "rejects.jsonl of its run directory says why every record was dropped)"
            )

    def check_manifest(self) -> None:
        try:
            manifest = Manifest.model_validate_json((self.path / MANIFEST).read_bytes())
        except ValidationError as e:
            self.add(f"{MANIFEST}: {describe_error(e)}")
            return
        on_disk = {
            "documents": CORPUS,
            "samples": SAMPLES,
            "qrels": QRELS,
            "hop_queries": HOP_QUERIES,
            "hop_qrels": HOP_QRELS,
        }
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
        while chunk := f.read(CHUNK_BYTES):
            hasher.update(chunk)
    return hasher.hexdigest()
