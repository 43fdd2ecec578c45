"""`irbgen build --source wikipedia-dump`: a dump in, IRB-style samples and their evidence out.

    part 1   read -> citing_segments -> keypoints -> fetch_cited -> grounding -> facts
    part 2   knowledge_graph -> node_types -> plans -> questions -> samples

Both parts are declared lists of steps run by the stage runner, so a rerun resumes where the last run
stopped and every dropped record is in RUN/rejects.jsonl with its stage and reason. Part 1 also leaves
RUN/facts.jsonl and RUN/documents.jsonl, from which `--from-facts RUN` starts part 2 alone. The LLM
client and the fetcher are made here and handed to the stages; with `llm="rules"` no model is called.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from irbgen.builds.empty import fail_empty, main_reasons
from irbgen.builds.output import BuildOutput, Card, RunManifest, run_manifest, usage
from irbgen.commandline import recorded_path, reproducing_command
from irbgen.errors import BadInputError
from irbgen.irb.facts import AssembleFacts, evidence
from irbgen.irb.graph import BuildGraphs
from irbgen.irb.grounding import CheckGrounding
from irbgen.irb.keypoints import MakeKeypoints
from irbgen.irb.pairs import pairs
from irbgen.irb.part1_files import write_part1_files
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import Fact, KnowledgeGraph
from irbgen.irb.samples import corpus_documents
from irbgen.irb.stages import MakeSamples, PlanQuestions, TypeNodes
from irbgen.llm.backends import stage_backend
from irbgen.llm.run_client import LEDGER, LLMOptions, run_client
from irbgen.pipeline.encoded import Encoded, leading_fields, unwrap
from irbgen.pipeline.executors import EXECUTOR_FIELDS, ExecutorOptions, executor_for, worker_files
from irbgen.pipeline.line_index import id_lines
from irbgen.pipeline.runner import StageResult
from irbgen.pipeline.stage import Batch, StageContext
from irbgen.pipeline.steps import Done, Step, run_steps
from irbgen.progress import Progress
from irbgen.schema import PromptRef
from irbgen.seekable import INDEX_FOLDER, build_index, is_seekable_format
from irbgen.web.deferred import DeferredFetcher
from irbgen.web.fetch_config import FetchConfig
from irbgen.web.records import WebDocument
from irbgen.web.stages import FetchCited
from irbgen.wikipedia.dumps import dump_format, find_multistream_index
from irbgen.wikipedia.records import Citation
from irbgen.wikipedia.stages import CitingSegments, DumpShard, ReadPages

FACTS = "facts.jsonl"
DOCUMENTS = "documents.jsonl"
KINDS = ("single_hop", "multi_hop", "false_premise")
COMMAND = "irbgen build --source wikipedia-dump"
DESCRIPTION = (
    "Questions written from Wikipedia sentences that cite web pages (IRB-style): each fact was checked "
    "against the pages it cites, turned into a knowledge graph, masked, paraphrased or perturbed, and "
    "asked step by step. Qrels are the cited pages that support the facts behind each question."
)
REFERENCE_NOTE = (
    ' Relative dates in the questions ("2 years ago") count completed years, under a year completed '
    "months, from the reference date {date}; tell a model that today is {date} (each sample's "
    "`attributes.extra.as_of` gives it)."
)
LICENCE = (
    "Questions derive from Wikipedia text (CC BY-SA 4.0); corpus documents are excerpts of third-party "
    "web pages kept for research evaluation, under their own terms."
)


class WikipediaBuildConfig(LLMOptions, ExecutorOptions):
    """Everything that decides a Wikipedia build; recorded in the run manifest (never an API key)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # inf and nan: refused, naming the option

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


# -- the steps ---------------------------------------------------------------------------------------


def part1_steps(config: WikipediaBuildConfig, backend: str, index_dir: Path | None = None) -> list[Step]:
    """Dump -> grounded facts, with every fetched page kept as a document (INDEX_DIR: see dump_shards)."""
    return [
        Step("read", ReadPages(), lambda done: dump_shards(config, index_dir)),
        Step("citing_segments", CitingSegments(), lambda done: done["read"].records()),
        Step(
            "keypoints",
            MakeKeypoints(backend=backend),
            lambda done: done["citing_segments"].records(),
            concurrency=config.llm_concurrency,
        ),
        Step(
            "fetch_cited",
            FetchCited(),
            lambda done: cited_pages(done["keypoints"].records(), done["citing_segments"].records()),
            concurrency=config.fetch_concurrency,
        ),
        Step(
            "grounding",
            CheckGrounding(backend=backend, threshold=config.grounding_threshold),
            lambda done: pairs(done["keypoints"].records(), done["fetch_cited"].records()),
            concurrency=config.llm_concurrency,
        ),
        Step(
            "facts",
            AssembleFacts(),
            lambda done: evidence(
                done["citing_segments"].records(), done["keypoints"].records(), done["grounding"].records()
            ),
        ),
    ]


def part2_steps(
    config: WikipediaBuildConfig,
    backend: str,
    facts: list[Fact],
    documents: list[WebDocument],
    part1_prompts: Iterable[PromptRef] = (),
) -> list[Step]:
    """Facts -> samples: graphs, their node types, plans, questions, and one sample per question."""
    by_id = {fact.id: fact for fact in facts}

    def graphs(done: Done) -> dict[str, KnowledgeGraph]:
        return {graph.fact_id: graph for graph in done["node_types"].outputs()}

    def planning(done: Done) -> Batch:
        typed = graphs(done)
        planned = [by_id[fact_id] for fact_id in typed if fact_id in by_id]
        texts = None if config.keep_shortcuts else {document.id: document.text for document in documents}
        parts = {
            "facts": planned,
            "graphs": [typed[fact.id] for fact in planned],
            "documents": texts,
            "reference_date": reference_date(config, facts, documents, planned=bool(typed)),
        }
        return Batch(name="plans", parts=parts)

    def sampling(done: Done) -> Batch:
        parts = {
            "plans": list(done["plans"].outputs()),
            "questions": list(done["questions"].outputs()),
            "facts": by_id,
            "documents": {document.id: document for document in documents},
            "graphs": graphs(done),
            "reference_date": reference_date(config, facts, documents, planned=bool(graphs(done))),
        }
        return Batch(name="samples", parts=parts)

    return [
        Step(
            "knowledge_graph",
            BuildGraphs(backend=backend, min_coverage=config.kg_coverage),
            lambda done: facts,
            concurrency=config.llm_concurrency,
        ),
        Step(
            "node_types",
            TypeNodes(),
            lambda done: [
                Batch(
                    name="node_types",
                    parts={"graphs": list(done["knowledge_graph"].outputs()), "facts": facts},
                )
            ],
        ),
        Step(
            "plans",
            PlanQuestions(
                max_hops=config.max_hops,
                false_premise_share=config.false_premise_share,
                seed=config.seed,
                answers_per_fact=config.answers_per_fact,
            ),
            lambda done: [planning(done)],
        ),
        Step(
            "questions",
            lambda done: WriteQuestions(backend=backend, graphs=list(graphs(done).values())),
            lambda done: done["plans"].outputs(),
            concurrency=config.llm_concurrency,
        ),
        Step(
            "samples",
            MakeSamples(seed=config.seed, part1_prompts=part1_prompts),
            lambda done: [sampling(done)],
        ),
    ]


# -- what the steps read -----------------------------------------------------------------------------


def dump_shards(config: WikipediaBuildConfig, index_dir: Path | None = None) -> list[DumpShard]:
    """The dump's shards, each carrying the page filters.

    An XML dump without a multistream index is read in byte ranges when it has several shards; a
    compressed one through a block index that is built once (with every core) and saved in INDEX_DIR, so
    that each shard decompresses only its own part. Without INDEX_DIR a compressed dump's shards are
    round-robin: each reads the whole file."""
    filters = {
        "created_after": config.created_after,
        "created_before": config.created_before,
        "min_citations": config.min_citations,
        "titles": str(config.titles) if config.titles else None,
        "limit": config.limit,
    }
    ranges: dict[str, Any] = {}
    if config.shards > 1 and config.index is None and _by_range(config.dump):
        if not is_seekable_format(config.dump):
            ranges = {"size": config.dump.stat().st_size}
        elif index_dir is not None:
            seek_index, size = build_index(config.dump, index_dir)
            ranges = {"size": size, "seek_index": str(seek_index)}
    return [
        DumpShard(
            path=str(config.dump),
            index=str(config.index) if config.index else None,
            shard=number,
            shards=config.shards,
            filters=filters,
            **ranges,
        )
        for number in range(config.shards)
    ]


def _by_range(dump: Path) -> bool:
    """Whether an XML dump's shards may be byte ranges: not a multistream file with its index beside it."""
    return dump_format(dump) == "xml" and find_multistream_index(dump) is None


def cited_pages(keypoints: Encoded, segments: Encoded) -> list[Citation]:
    """One Citation per distinct cited URL of a kept keypoint, in first-use order, with its first date.

    Reads each keypoint's record line only as far as its citations (see `leading_fields`). Keypoints
    written before they carried their citations (a run directory of an earlier irbgen) are matched with
    their segments instead (`_segment_citations`).
    """
    seen: dict[str, Citation] = {}
    for keypoint in keypoints.lines():
        citations = leading_fields(keypoint, ("citations",))["citations"]
        if citations is None:
            return _segment_citations(keypoints, segments)
        for citation in citations:
            if citation["url"] not in seen:
                seen[citation["url"]] = Citation.model_validate(citation)
    return list(seen.values())


def _segment_citations(keypoints: Encoded, segments: Encoded) -> list[Citation]:
    """`cited_pages` of keypoints that hold only their URLs: the citations read from their segments (the
    checkpoints' record lines read only as far as the ids, URLs and citations; the segments of the
    keypoints found by searching their checkpoint for their ids, the keypoints being in segment order)."""
    urls: dict[str, list[str]] = {}
    for keypoint in keypoints.lines():
        read = leading_fields(keypoint, ("id", "urls"))
        urls[read["id"]] = read["urls"]
    seen: dict[str, Citation] = {}
    for segment in _kept_segments(segments, urls):
        read = leading_fields(segment, ("id", "citations"))
        for citation in read["citations"]:
            url = citation["url"]
            if url in urls[read["id"]] and url not in seen:
                seen[url] = Citation.model_validate(citation)
    return list(seen.values())


def _kept_segments(segments: Encoded, kept: Collection[str]) -> Iterator[bytes]:
    """The record lines of the segments whose ids are KEPT (in the segments' order), in order."""
    path = segments.path
    found = None if path is None else id_lines(path, kept)
    if path is None or found is None:
        yield from (segment for segment in segments.lines() if leading_fields(segment, ("id",))["id"] in kept)
        return
    with open(path, "rb") as lines:
        for start, end in found:
            lines.seek(start)
            record = unwrap(lines.read(end - start))
            assert record is not None, "id_lines finds only lines as the checkpoint writes them"
            yield record


def reference_date(
    config: WikipediaBuildConfig, facts: list[Fact], documents: list[WebDocument], *, planned: bool = True
) -> dt.date:
    """--reference-date; else the newest page revision among the facts, else the newest evidence date."""
    if config.reference_date:
        return parse_reference_date(config.reference_date)
    if not planned:  # nothing to plan: the date is never used
        return dt.date(1970, 1, 1)
    revised = [fact.revised[:10] for fact in facts if fact.revised]
    published = [document.published[:10] for document in documents if document.published]
    newest = max(revised or published or [""])
    if not newest:
        raise BadInputError(
            "no page revision or evidence date to take as the reference date: pass --reference-date"
        )
    return parse_reference_date(newest)


def parse_reference_date(text: str) -> dt.date:
    """A YYYY-MM-DD date, or BadInputError."""
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise BadInputError(f"--reference-date {text!r}: expected YYYY-MM-DD") from None


# -- the build ---------------------------------------------------------------------------------------


def build_wikipedia(
    config: WikipediaBuildConfig, run_dir: Path, progress: Progress | None = None, executor: Any = None
) -> BuildOutput:
    """Run (or resume) the build in RUN_DIR; returns documents, samples and the run manifest to write."""
    _check_inputs(config)
    given = read_facts(config.from_facts) if config.from_facts is not None else None  # before any model
    name, shown = run_dir.name or "irb", run_dir
    run_dir = run_dir.resolve()  # workers in other processes (Ray actors) start in other folders
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    llm = run_client(config, run_dir)
    backend = stage_backend(config.llm)
    fetcher = _make_fetcher(config, run_dir) if given is None else None
    shard_dir = worker_files(run_dir, config.shared_dir)
    context = StageContext(run_dir=run_dir, llm=llm, fetcher=fetcher, shard_dir=shard_dir)
    done: dict[str, StageResult] = {}
    try:
        with executor_for(config, executor) as running:
            options = {"executor": running, "processes": config.processes, "progress": progress}
            if given is None:
                steps = part1_steps(config, backend, shard_dir / INDEX_FOLDER)
                done = run_steps(steps, context, **options)
                made, fetched = done["facts"].records(), done["fetch_cited"].records()
                files = (run_dir / FACTS, run_dir / DOCUMENTS)
                written = write_part1_files(made.lines(), fetched.lines(), *files, made.source)
                sizes = (written.facts - written.lead_facts, written.lead_facts, written.documents)
                facts, documents = ([], []) if config.facts_only else _parsed(*files)  # part 2 reads them
            else:
                facts, documents = given
                leads = sum(fact.source == "lead" for fact in facts)
                sizes = (len(facts) - leads, leads, len(documents))
            if not config.facts_only:
                prompts = _part1_prompts() if backend == "llm" and given is None else []
                steps = part2_steps(config, backend, facts, documents, prompts)
                done |= run_steps(steps, context, **options, done=done)
    finally:
        if fetcher is not None:
            asyncio.run(fetcher.aclose())
        if llm is not None:
            asyncio.run(llm.aclose())
            llm.ledger.save(run_dir / LEDGER)
    samples = [] if config.facts_only else list(done["samples"].outputs())
    recorded = json.loads(config.model_dump_json(exclude=set(EXECUTOR_FIELDS)))
    as_of = None
    if not config.facts_only:  # the rebuild, the card and `eval qa` get the date relative dates count from
        planned = done["node_types"].totals.outputs > 0
        as_of = reference_date(config, facts, documents, planned=planned).isoformat()
    manifest = run_manifest(
        "wikipedia",
        recorded,
        done,
        _counts(done, *sizes, samples),
        llm_usage=usage(llm),
        seconds=time.perf_counter() - started,
        command=reproducing_command("wikipedia", recorded | ({"reference_date": as_of} if as_of else {})),
        stage="facts" if config.facts_only else "benchmark",
        reference_date=as_of,
    )
    _refuse_empty(config, done, manifest, sizes[0] + sizes[1], len(samples), run_dir, shown)
    card = None
    if as_of is not None:
        described = DESCRIPTION + REFERENCE_NOTE.format(date=as_of)
        card = Card(name, COMMAND, _benchmark_config(config) | {"reference_date": as_of}, described, LICENCE)
    return BuildOutput(corpus_documents(documents), samples, manifest, card)


def _counts(done: Done, facts: int, leads: int, documents: int, samples: list) -> dict[str, int]:
    counts: dict[str, int] = {}
    if "read" in done:
        totals = {name: result.totals for name, result in done.items()}
        counts = {
            "dump_shards": totals["read"].inputs,
            "pages": totals["read"].outputs,
            "segments": totals["citing_segments"].outputs,
            "keypoints": totals["keypoints"].outputs,
            "cited_urls": totals["fetch_cited"].inputs,
            "documents_fetched": totals["fetch_cited"].outputs,
            "groundings": totals["grounding"].outputs,
        }
    counts |= {"facts": facts, "lead_facts": leads, "documents": documents}
    if "samples" in done:
        kinds = Counter(sample.attributes.question_type for sample in samples)
        counts |= {
            "knowledge_graphs": done["knowledge_graph"].totals.outputs,
            "plans": done["plans"].totals.outputs,
            "questions": done["questions"].totals.outputs,
            **{f"samples_{kind}": kinds.get(kind, 0) for kind in KINDS},
            "samples": len(samples),
        }
    return counts


def _refuse_empty(
    config: WikipediaBuildConfig,
    done: Done,
    manifest: RunManifest,
    facts: int,
    samples: int,
    run_dir: Path,
    shown: Path,
) -> None:
    """Fail a build that fetched none of the cited pages, or that made no fact (part 1 only) or no sample."""
    fetching = done.get("fetch_cited")
    if fetching is not None and fetching.totals.inputs and not fetching.totals.outputs:
        _forget_fetch_failures(run_dir, fetching)
        reasons = main_reasons(done, ["fetch_cited"], prefix=False)
        fail_empty(
            f"0 of {fetching.totals.inputs:,} cited pages fetched: {reasons}", manifest, run_dir, shown
        )
    if config.facts_only and not facts:
        fail_empty(f"0 grounded facts: {main_reasons(done, done)}", manifest, run_dir, shown)
    if not config.facts_only and not samples:
        problem = f"0 samples from {facts:,} grounded facts: {main_reasons(done, done)}"
        fail_empty(problem, manifest, run_dir, shown)


def _forget_fetch_failures(run_dir: Path, fetching: StageResult) -> None:
    """Every fetch failed (no network, say): forget the failures, so a rerun with --force tries again."""
    from irbgen.web.warc import WarcIndex

    path = run_dir / "warc" / "index.sqlite"
    if not path.is_file():
        return
    index = WarcIndex(path)
    try:
        for reject in fetching.rejects():  # the cited URL, and where its redirects led
            for url in {reject.key, reject.extra.get("final_url") or reject.key}:
                index.forget_failure(url)
    finally:
        index.close()


def _check_inputs(config: WikipediaBuildConfig) -> None:
    if config.from_facts is None and config.dump is None:
        raise BadInputError("give --dump FILE, or --from-facts RUN to start from an earlier run's facts")
    if config.dump is not None and not config.dump.exists():
        raise BadInputError(f"{config.dump}: dump not found")
    for path in config.warc:
        if not path.exists():
            raise BadInputError(f"{path}: WARC file not found")


def _make_fetcher(config: WikipediaBuildConfig, run_dir: Path) -> DeferredFetcher:
    """The build's fetcher, made (with the HTTP stack) only if this process fetches: with `--processes`
    over 1 or Ray's I/O actors, the fetches run elsewhere and it is only a recipe here."""
    return DeferredFetcher(
        FetchConfig(
            run_dir=run_dir,
            concurrency=config.fetch_concurrency,
            per_host=config.per_host,
            timeout=config.fetch_timeout,
            allow_private_hosts=config.allow_private_hosts,
            wayback=config.wayback,
            offline=config.offline,
            warc_files=tuple(config.warc),
        )
    )


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


def _parsed(facts_path: Path, documents_path: Path) -> tuple[list[Fact], list[WebDocument]]:
    """The facts and documents of facts.jsonl and documents.jsonl, parsed."""
    return list(_read_jsonl(facts_path, Fact)), list(_read_jsonl(documents_path, WebDocument))


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


def _part1_prompts() -> list[PromptRef]:
    return [MakeKeypoints(backend="llm").prompt().ref, CheckGrounding(backend="llm").prompt().ref]


def _benchmark_config(config: WikipediaBuildConfig) -> dict:
    """The config as recorded in the benchmark: input files as the card's command gives them."""
    recorded = json.loads(config.model_dump_json(exclude={"api_key_env", *EXECUTOR_FIELDS}))
    for name in ("dump", "index", "titles", "from_facts"):
        if recorded.get(name):
            recorded[name] = recorded_path(recorded[name])
    recorded["warc"] = [recorded_path(path) for path in recorded.get("warc", [])]
    return recorded
