"""`irbgen build --source wikipedia-dump`, part 1: a dump in, grounded facts with fetched evidence out.

    read pages -> citing segments -> keypoints -> fetch cited pages -> groundedness -> facts

Every stage goes through the stage runner, so a rerun resumes where the last run stopped, and every
dropped record is in RUN/rejects.jsonl with its stage and reason. The LLM client and the fetcher are
made here and handed to the stages; with `llm="rules"` no model is called.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from irbgen import __version__
from irbgen.errors import BadInputError, redact
from irbgen.irb.facts import assemble_facts
from irbgen.irb.grounding import CheckGrounding, KeypointDocument
from irbgen.irb.keypoints import MakeKeypoints
from irbgen.irb.records import Fact, Keypoint
from irbgen.llm.run_client import LEDGER, LLMOptions, run_client
from irbgen.pipeline.checkpoint import replace_stage_rejects
from irbgen.pipeline.runner import StageResult, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.progress import Progress
from irbgen.records import Reject
from irbgen.web.records import WebDocument
from irbgen.wikipedia.dumps import PageFilter, load_titles, read_dump
from irbgen.wikipedia.records import Citation, Page, Segment
from irbgen.wikipedia.stages import CitingSegments

FACTS = "facts.jsonl"
DOCUMENTS = "documents.jsonl"


class WikipediaBuildConfig(LLMOptions):
    """Everything that decides a Wikipedia build; recorded in the run manifest (never an API key)."""

    model_config = ConfigDict(extra="forbid")

    dump: Path | None = None  # None only with from_facts
    from_facts: Path | None = None  # a run directory whose facts.jsonl and documents.jsonl to start from
    facts_only: bool = False  # stop after part 1
    index: Path | None = None
    shards: int = Field(1, ge=1)
    created_after: str | None = None
    created_before: str | None = None
    min_citations: int = Field(0, ge=0)
    titles: Path | None = None
    limit: int | None = Field(None, ge=0)
    offline: bool = False
    warc: list[Path] = Field(default_factory=list)
    allow_private_hosts: bool = False
    wayback: bool = False
    fetch_concurrency: int = Field(16, ge=1)
    per_host: int = Field(2, ge=1)
    fetch_timeout: float = Field(15.0, gt=0)
    processes: int = Field(1, ge=1)
    grounding_threshold: float = Field(0.6, ge=0, le=1)
    kg_coverage: float = Field(0.85, ge=0, le=1)
    max_hops: int = Field(2, ge=1, le=4)
    false_premise_share: float = Field(0.2, ge=0, lt=1)
    keep_shortcuts: bool = False  # keep multi-hop plans whose answer is in a first-hop document
    answers_per_fact: int = Field(2, ge=1, le=4)  # single-hop questions a fact may give, each another answer
    reference_date: str | None = None  # YYYY-MM-DD; default: the newest page revision among the facts
    seed: int = 0


class DumpShard(BaseModel):
    """One shard of a dump to read: the unit the read stage checkpoints."""

    model_config = ConfigDict(extra="forbid")

    path: str
    index: str | None = None
    shard: int
    shards: int
    filters: dict[str, Any] = Field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{Path(self.path).name}#{self.shard}/{self.shards}"


class ReadPages:
    """DumpShard -> Page for every kept article; skipped pages become rejects with their reason."""

    name = "read"
    input_model = DumpShard
    output_model = Page

    def key(self, record: DumpShard) -> str:
        """The shard's name."""
        return record.key

    def process(self, record: DumpShard, context: StageContext) -> Iterator[Page | Reject]:
        """Stream the shard's pages."""
        filters = dict(record.filters)
        if filters.get("titles"):
            filters["titles"] = load_titles(filters["titles"])
        options: dict[str, Any] = {"filters": PageFilter(**filters), "emit_skipped": True}
        if record.index is not None:
            options["index"] = record.index
        yield from read_dump(record.path, record.shard, record.shards, **options)


def _citations(keypoints: Iterable[Keypoint], segments: Iterable[Segment]) -> list[Citation]:
    """One Citation per distinct cited URL, in first-use order, with the first date given for it.

    `segments` in stage order (the keypoints follow it): read once, never all held at once.
    """
    urls = {keypoint.id: keypoint.urls for keypoint in keypoints}
    seen: dict[str, Citation] = {}
    for segment in segments:
        if segment.id not in urls:  # its keypoint was rejected
            continue
        for citation in segment.citations:
            if citation.url in urls[segment.id] and citation.url not in seen:
                seen[citation.url] = citation
    return list(seen.values())


def _pairs(keypoints: Iterable[Keypoint], documents: dict[str, WebDocument]) -> Iterator[KeypointDocument]:
    for keypoint in keypoints:
        for url in keypoint.urls:
            if url in documents:
                yield KeypointDocument(keypoint=keypoint, document=documents[url])


def _write_jsonl(path: Path, records: Iterable[BaseModel]) -> int:
    """Write records atomically; returns how many."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n")
            count += 1
    os.replace(tmp, path)
    return count


def _make_fetcher(config: WikipediaBuildConfig, run_dir: Path):
    from irbgen.web.fetch import Fetcher

    return Fetcher(
        run_dir=run_dir,
        concurrency=config.fetch_concurrency,
        per_host=config.per_host,
        timeout=config.fetch_timeout,
        allow_private_hosts=config.allow_private_hosts,
        wayback=config.wayback,
        offline=config.offline,
        warc_files=tuple(config.warc),
    )


def _close(client: Any) -> None:
    """Close an async client (LLM or fetcher) once its stages are done."""
    asyncio.run(client.aclose())


def build_wikipedia(config: WikipediaBuildConfig, run_dir: Path, progress: Progress | None = None) -> dict:
    """Run (or resume) parts 1 and 2 into RUN_DIR: facts.jsonl, documents.jsonl, benchmark/, manifest.json."""
    if config.from_facts is None and config.dump is None:
        raise BadInputError("give --dump FILE, or --from-facts RUN to start from an earlier run's facts")
    if config.dump is not None and not config.dump.exists():
        raise BadInputError(f"{config.dump}: dump not found")
    for path in config.warc:
        if not path.exists():
            raise BadInputError(f"{path}: WARC file not found")
    if config.from_facts is not None:
        facts, documents = read_facts(config.from_facts)  # fail on bad input before any model is set up
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    llm = run_client(config, run_dir)
    backend = "rules" if llm is None else "llm"
    try:
        if config.from_facts is None:
            results, facts, documents = _facts_from_dump(config, run_dir, llm, progress)
        else:
            results = {}
        counts = {"facts": len(facts), "documents": len(documents)}
        outcome = None
        if not config.facts_only:
            from irbgen.irb.questions_build import build_questions

            part1_prompts = _part1_prompts() if backend == "llm" else []
            outcome = build_questions(
                config,
                run_dir,
                facts,
                documents,
                llm=llm,
                progress=progress,
                part1_prompts=part1_prompts,
            )
            results.update(outcome.results)
    finally:
        if llm is not None:
            _close(llm)
            llm.ledger.save(run_dir / LEDGER)
    manifest = _manifest(config, run_dir, results, counts, outcome, llm, time.perf_counter() - started)
    if outcome is not None:
        from irbgen.irb.questions_build import BENCHMARK, write_irb_benchmark

        stats = write_irb_benchmark(
            run_dir / BENCHMARK,
            outcome.samples,
            documents,
            config=_benchmark_config(config),
            seed=config.seed,
            counts={k: v for k, v in manifest["counts"].items() if k != "rejects"},
            rejects=manifest["rejects"],
            llm_usage=manifest["llm_usage"],
        )
        manifest["counts"]["benchmark_documents"] = stats.documents
        manifest["counts"]["benchmark_qrels"] = stats.qrels
    _write_manifest(run_dir / "manifest.json", manifest)
    return manifest


def _facts_from_dump(
    config: WikipediaBuildConfig, run_dir: Path, llm: Any, progress: Progress | None
) -> tuple[dict[str, StageResult], list[Fact], list[WebDocument]]:
    """Part 1: read, segment, keypoints, fetch, ground; writes facts.jsonl and documents.jsonl."""
    backend = "rules" if llm is None else "llm"
    options = {"concurrency": config.llm_concurrency, "progress": progress}
    results: dict[str, StageResult] = {}
    filters = {
        "created_after": config.created_after,
        "created_before": config.created_before,
        "min_citations": config.min_citations,
        "titles": str(config.titles) if config.titles else None,
        "limit": config.limit,
    }
    shards = [
        DumpShard(
            path=str(config.dump),
            index=str(config.index) if config.index else None,
            shard=number,
            shards=config.shards,
            filters=filters,
        )
        for number in range(config.shards)
    ]
    context = StageContext(run_dir=run_dir)
    results["read"] = run_stage(ReadPages(), shards, context, processes=config.processes, progress=progress)
    pages: dict[int, Page] = {}  # metadata only, for the facts; the wikitext is not kept

    def remembering(records: Iterable[Page]) -> Iterator[Page]:
        for page in records:
            pages[page.page_id] = page.model_copy(update={"wikitext": ""})
            yield page

    results["citing_segments"] = run_stage(
        CitingSegments(),
        remembering(results["read"].outputs()),
        context,
        processes=config.processes,
        progress=progress,
    )
    if results["citing_segments"].reused:  # a complete stage reads no inputs: take the metadata here
        for _ in remembering(results["read"].outputs()):
            pass
    segments = results["citing_segments"]  # read from its checkpoint each time: segments carry their context

    keypoint_context = StageContext(run_dir=run_dir, llm=llm)
    results["keypoints"] = run_stage(
        MakeKeypoints(backend=backend), segments.records(), keypoint_context, **options
    )
    keypoints = list(results["keypoints"].outputs())

    fetch_context = StageContext(run_dir=run_dir, fetcher=_make_fetcher(config, run_dir))
    from irbgen.web.stages import FetchCited

    results["fetch_cited"] = run_stage(
        FetchCited(),
        _citations(keypoints, segments.outputs()),
        fetch_context,
        concurrency=config.fetch_concurrency,
        progress=progress,
    )
    _close(fetch_context.fetcher)
    documents = {document.url: document for document in results["fetch_cited"].outputs()}

    grounding_context = StageContext(run_dir=run_dir, llm=llm)
    results["grounding"] = run_stage(
        CheckGrounding(backend=backend, threshold=config.grounding_threshold),
        _pairs(keypoints, documents),
        grounding_context,
        **options,
    )

    facts, fact_rejects = assemble_facts(
        segments.outputs(), keypoints, list(results["grounding"].outputs()), pages
    )
    replace_stage_rejects(run_dir, "facts", fact_rejects)
    _write_jsonl(run_dir / FACTS, facts)
    fetched = sorted(documents.values(), key=lambda document: document.id)
    _write_jsonl(run_dir / DOCUMENTS, fetched)
    return results, facts, fetched


def read_facts(run_dir: Path) -> tuple[list[Fact], list[WebDocument]]:
    """The facts.jsonl and documents.jsonl of an earlier run; BadInputError naming the file and line."""
    facts = list(_read_jsonl(Path(run_dir) / FACTS, Fact))
    documents = list(_read_jsonl(Path(run_dir) / DOCUMENTS, WebDocument))
    known = {document.id for document in documents}
    for fact in facts:
        for keypoint in fact.keypoints:
            missing = sorted(set(keypoint.documents) - known)
            if missing:
                raise BadInputError(
                    f"{Path(run_dir) / FACTS}: fact {fact.id!r} cites {missing[0]!r}, "
                    f"which is not in {DOCUMENTS}"
                )
    return facts, documents


def _read_jsonl(path: Path, model: type[BaseModel]) -> Iterator[Any]:
    if not path.is_file():
        raise BadInputError(f"{path}: not found (is this the run directory of a finished part 1?)")
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield model.model_validate_json(line)
            except ValueError as error:
                first = str(error).splitlines()[0]
                raise BadInputError(f"{path}:{number}: not a valid {model.__name__}: {first}") from None


def _part1_prompts() -> list:
    return [MakeKeypoints(backend="llm").prompt().ref, CheckGrounding(backend="llm").prompt().ref]


def _benchmark_config(config: WikipediaBuildConfig) -> dict:
    """The config as recorded in the benchmark: file names rather than local paths, for reproducibility."""
    recorded = json.loads(config.model_dump_json(exclude={"api_key_env"}))
    for name in ("dump", "index", "titles", "from_facts"):
        if recorded.get(name):
            recorded[name] = Path(recorded[name]).name
    recorded["warc"] = [Path(path).name for path in recorded.get("warc", [])]
    return recorded


def _manifest(config, run_dir, results, counts, outcome, llm, seconds) -> dict:
    stages = {name: result.totals.to_dict() for name, result in results.items()}
    rejects: dict[str, int] = {}
    for name, result in results.items():
        for reason, count in sorted(result.totals.rejects.items()):
            rejects[f"{name}:{reason}"] = count
    for reject in _read_rejects(run_dir, ("facts", "plans")):
        key = f"{reject['stage']}:{reject['reason']}"
        rejects[key] = rejects.get(key, 0) + 1
    if "read" in stages:
        counts = {
            "dump_shards": stages["read"]["inputs"],
            "pages": stages["read"]["outputs"],
            "segments": stages["citing_segments"]["outputs"],
            "keypoints": stages["keypoints"]["outputs"],
            "cited_urls": stages["fetch_cited"]["inputs"],
            "documents_fetched": stages["fetch_cited"]["outputs"],
            "groundings": stages["grounding"]["outputs"],
            **counts,
        }
    if outcome is not None:
        counts.update(outcome.counts())
        counts["samples"] = len(outcome.samples)
    counts["rejects"] = sum(rejects.values())
    manifest = {
        "tool": "irbgen",
        "tool_version": __version__,
        "source": "wikipedia",
        "stage": "facts" if outcome is None else "benchmark",
        "config": json.loads(config.model_dump_json()),
        "counts": counts,
        "rejects": dict(sorted(rejects.items())),
        "stages": stages,
        "llm_usage": llm.ledger.summary() if llm is not None else {"backend": "rules"},
        "seconds": round(seconds, 3),
    }
    if outcome is not None:
        manifest["reference_date"] = outcome.reference_date.isoformat()
    return manifest


def _read_rejects(run_dir: Path, stages: tuple[str, ...]) -> Iterator[dict]:
    path = run_dir / "rejects.jsonl"
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line:
                record = json.loads(line)
                if record.get("stage") in stages:
                    yield record


def _write_manifest(path: Path, manifest: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    # a key given inside --base-url (https://user:KEY@host) never reaches the run manifest
    tmp.write_text(redact(json.dumps(manifest, indent=2, ensure_ascii=False)) + "\n", encoding="utf-8")
    os.replace(tmp, path)
