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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from irbgen import __version__
from irbgen.errors import BadInputError
from irbgen.irb.facts import assemble_facts
from irbgen.irb.grounding import CheckGrounding, KeypointDocument
from irbgen.irb.keypoints import MakeKeypoints
from irbgen.irb.records import Citation, Keypoint, Page, Reject, Segment, WebDocument
from irbgen.pipeline.runner import StageResult, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.wikipedia.dumps import PageFilter, load_titles, read_dump
from irbgen.wikipedia.stages import CitingSegments

Progress = Callable[[str, int, int | None], None]
LEDGER = "ledger.json"


class WikipediaBuildConfig(BaseModel):
    """Everything that decides a Wikipedia build; recorded in the run manifest (never an API key)."""

    model_config = ConfigDict(extra="forbid")

    dump: Path
    index: Path | None = None
    shards: int = Field(1, ge=1)
    created_after: str | None = None
    created_before: str | None = None
    min_citations: int = Field(0, ge=0)
    titles: Path | None = None
    limit: int | None = Field(None, ge=0)
    llm: Literal["rules", "openai"] = "rules"
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    llm_concurrency: int = Field(16, ge=1)
    max_cost: float | None = None
    offline: bool = False
    warc: list[Path] = Field(default_factory=list)
    allow_private_hosts: bool = False
    wayback: bool = False
    fetch_concurrency: int = Field(16, ge=1)
    per_host: int = Field(2, ge=1)
    fetch_timeout: float = Field(15.0, gt=0)
    processes: int = Field(1, ge=1)
    grounding_threshold: float = Field(0.6, ge=0, le=1)


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


def _citations(keypoints: Iterable[Keypoint], segments: dict[str, Segment]) -> list[Citation]:
    """One Citation per distinct cited URL, in first-use order, with the first date given for it."""
    seen: dict[str, Citation] = {}
    for keypoint in keypoints:
        for citation in segments[keypoint.id].citations:
            if citation.url in keypoint.urls and citation.url not in seen:
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


def _replace_rejects(run_dir: Path, stage: str, rejects: list[Reject]) -> None:
    """Set `stage`'s lines of rejects.jsonl to `rejects` (a stage computed whole each run)."""
    path = run_dir / "rejects.jsonl"
    kept = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line and json.loads(line).get("stage") != stage:
                kept.append(line)
    kept += [json.dumps(reject.model_dump(mode="json"), ensure_ascii=False) for reject in rejects]
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
    os.replace(tmp, path)


def _make_llm(config: WikipediaBuildConfig, run_dir: Path):
    if config.llm == "rules":
        return None
    from irbgen.llm.client import LLMClient, check_reachable
    from irbgen.llm.ledger import Ledger
    from irbgen.llm.settings import LLMSettings

    if not config.model:
        raise BadInputError("--llm openai needs --model")
    settings = LLMSettings(
        base_url=config.base_url,
        model=config.model,
        api_key_env=config.api_key_env,
        concurrency=config.llm_concurrency,
        max_cost=config.max_cost,
        cache_dir=run_dir,
    )
    settings.api_key()
    check_reachable(settings)
    # One client for every LLM stage: it reconnects on each stage's event loop; the ledger resumes.
    return LLMClient(settings, ledger=Ledger.load(run_dir / LEDGER, missing_ok=True))


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
    """Run (or resume) every stage into RUN_DIR; write facts.jsonl, documents.jsonl and manifest.json."""
    if not config.dump.exists():
        raise BadInputError(f"{config.dump}: dump not found")
    for path in config.warc:
        if not path.exists():
            raise BadInputError(f"{path}: WARC file not found")
    run_dir.mkdir(parents=True, exist_ok=True)
    llm = _make_llm(config, run_dir)
    backend = "rules" if llm is None else "llm"
    options = {"concurrency": config.llm_concurrency, "progress": progress}
    results: dict[str, StageResult] = {}
    started = time.perf_counter()

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
    segments = {segment.id: segment for segment in results["citing_segments"].outputs()}

    keypoint_context = StageContext(run_dir=run_dir, llm=llm)
    results["keypoints"] = run_stage(
        MakeKeypoints(backend=backend), segments.values(), keypoint_context, **options
    )
    keypoints = list(results["keypoints"].outputs())

    fetch_context = StageContext(run_dir=run_dir, fetcher=_make_fetcher(config, run_dir))
    from irbgen.web.stages import FetchCited

    results["fetch_cited"] = run_stage(
        FetchCited(),
        _citations(keypoints, segments),
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
    if llm is not None:
        _close(llm)

    facts, fact_rejects = assemble_facts(
        list(segments.values()), keypoints, list(results["grounding"].outputs()), pages
    )
    _replace_rejects(run_dir, "facts", fact_rejects)
    fact_count = _write_jsonl(run_dir / "facts.jsonl", facts)
    used = sorted({doc for fact in facts for keypoint in fact.keypoints for doc in keypoint.documents})
    by_id = {document.id: document for document in documents.values()}
    document_count = _write_jsonl(run_dir / "documents.jsonl", (by_id[doc] for doc in used))

    if llm is not None:
        llm.ledger.save(run_dir / LEDGER)
    manifest = _manifest(
        config, results, fact_rejects, fact_count, document_count, llm, time.perf_counter() - started
    )
    _write_manifest(run_dir / "manifest.json", manifest)
    return manifest


def _manifest(config, results, fact_rejects, fact_count, document_count, llm, seconds) -> dict:
    stages = {name: result.totals.to_dict() for name, result in results.items()}
    rejects: dict[str, int] = {}
    for name, result in results.items():
        for reason, count in sorted(result.totals.rejects.items()):
            rejects[f"{name}:{reason}"] = count
    for reject in fact_rejects:
        rejects[f"facts:{reject.reason}"] = rejects.get(f"facts:{reject.reason}", 0) + 1
    counts = {
        "dump_shards": stages["read"]["inputs"],
        "pages": stages["read"]["outputs"],
        "segments": stages["citing_segments"]["outputs"],
        "keypoints": stages["keypoints"]["outputs"],
        "cited_urls": stages["fetch_cited"]["inputs"],
        "documents_fetched": stages["fetch_cited"]["outputs"],
        "groundings": stages["grounding"]["outputs"],
        "facts": fact_count,
        "fact_documents": document_count,
        "rejects": sum(rejects.values()),
    }
    return {
        "tool": "irbgen",
        "tool_version": __version__,
        "source": "wikipedia",
        "stage": "facts",
        "config": json.loads(config.model_dump_json()),
        "counts": counts,
        "rejects": dict(sorted(rejects.items())),
        "stages": stages,
        "llm_usage": llm.ledger.summary() if llm is not None else {"backend": "rules"},
        "seconds": round(seconds, 3),
    }


def _write_manifest(path: Path, manifest: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
