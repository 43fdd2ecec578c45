"""`irbgen build --source wikidata-dump`: Wikidata dumps in, a MINTQA-style benchmark out.

    read dump (old dump, properties dump) -> knowledge base -> [REBEL counts from Wikipedia] -> popularity and
    newness labels -> chains of 1-4 triples -> questions with sub-questions -> corpus and samples

Reading, extraction and question writing go through the stage runner (checkpointed, resumable, rejects
kept); chain sampling is a pure, seeded function of the knowledge base, recomputed each run. The
benchmark goes to RUN/benchmark in the shared format.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import random
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from irbgen import __version__
from irbgen.benchmark import write_benchmark
from irbgen.errors import BadInputError, redact
from irbgen.llm.run_client import LEDGER, LLMOptions, run_client
from irbgen.pipeline.checkpoint import replace_stage_rejects
from irbgen.pipeline.runner import StageResult, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.progress import Progress
from irbgen.records import Reject
from irbgen.schema import Manifest
from irbgen.wikidata.chains import sample_chains
from irbgen.wikidata.corpus import entity_documents, id_order
from irbgen.wikidata.dumps import ReadEntities, wikidata_shards
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import Newness, make_popularity
from irbgen.wikidata.questions import WriteChainQuestions
from irbgen.wikidata.records import ChainQuestion
from irbgen.wikidata.samples import chain_sample, parse_hops
from irbgen.wikidata.selection import write_entity_ids

BENCHMARK = "benchmark"
KEPT_ENTITIES = "kept-entities.txt"
COMMAND = "irbgen build --source wikidata-dump"
DESCRIPTION = (
    "Multi-hop questions over chains of 1-4 Wikidata triples (MINTQA-style), each with its sub-questions "
    "and answers, labelled popular or unpopular and new or old. The corpus holds one passage per entity "
    "(its statements as sentences); qrels are the passages of the entities along each chain."
)
FILE_OPTIONS = ("dump", "old_dump", "properties", "entities", "wikipedia_dump", "rebel_model", "counts_file")
LICENCE = "Derived from Wikidata (CC0 1.0) and, where used, Wikipedia text (CC BY-SA 4.0)."


class WikidataBuildConfig(LLMOptions):
    """Everything that decides a Wikidata build; recorded in the manifests (never an API key)."""

    model_config = ConfigDict(extra="forbid")

    dump: Path
    old_dump: Path | None = None
    properties: Path | None = None  # a properties-only dump: labels and datatypes the dump lacks
    shards: int = Field(1, ge=1)
    processes: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=0)
    min_sitelinks: int = Field(0, ge=0)  # keep items with at least this many sitelinks
    entities: Path | None = None  # keep only the items listed in this file
    wikipedia_dump: Path | None = None
    rebel_model: Path | None = None
    popularity: Literal["sitelinks", "wikipedia-frequency", "counts-file"] | None = None
    counts_file: Path | None = None
    popular_threshold: float | None = None
    hops: str = "1-4"
    per_hop: int = Field(50, ge=1)
    mix: str | None = None
    chunk_tokens: int = Field(512, ge=16)
    seed: int = 0
    offline: bool = False


def _check_inputs(config: WikidataBuildConfig) -> None:
    for name in FILE_OPTIONS:
        path = getattr(config, name)
        if path is not None and not Path(path).exists():
            raise BadInputError(f"{path}: not found (--{name.replace('_', '-')})")
    if config.rebel_model is not None and config.wikipedia_dump is None:
        raise BadInputError("--rebel-model needs --wikipedia-dump: the passages to extract triples from")
    if config.popularity == "wikipedia-frequency" and config.rebel_model is None:
        raise BadInputError("--popularity wikipedia-frequency needs --wikipedia-dump and --rebel-model")
    if config.popularity == "counts-file" and config.counts_file is None:
        raise BadInputError("--popularity counts-file needs --counts-file FILE")
    parse_hops(config.hops)


def _read(
    path: Path,
    name: str,
    config: WikidataBuildConfig,
    run_dir: Path,
    progress,
    *,
    min_sitelinks: int = 0,
    entities: Path | None = None,
    limit: int | None = None,
) -> StageResult:
    options = {"limit": limit, "min_sitelinks": min_sitelinks}
    options["entities"] = str(entities) if entities is not None else None
    shards = wikidata_shards(path, config.shards, **options)
    stage = ReadEntities()
    stage.name = name  # the old dump checkpoints apart from the new one
    context = StageContext(run_dir=run_dir)
    return run_stage(stage, shards, context, processes=config.processes, progress=progress)


def _kept_entities(kb: KnowledgeBase, config: WikidataBuildConfig, run_dir: Path) -> Path | None:
    """With a filter, the old dump is read for the kept items only: RUN/kept-entities.txt lists them.

    The old snapshot is only asked whether the new base's triples were there, so that is all it needs.
    Filtering it by its own sitelink counts instead would call an item new just for having had fewer.
    """
    if not config.min_sitelinks and config.entities is None:
        return None
    path = run_dir / KEPT_ENTITIES
    write_entity_ids(path, sorted(kb.entities, key=id_order))
    return path


def _frequencies(
    config: WikidataBuildConfig, kb: KnowledgeBase, run_dir: Path
) -> tuple[Counter, dict[str, int]]:
    """REBEL-style triple counts over the Wikipedia articles of the base's entities (with a model only)."""
    if config.rebel_model is None:
        return Counter(), {}
    from irbgen.wikidata.linking import EntityLinker, wikipedia_frequencies
    from irbgen.wikidata.rebel import RebelExtractor
    from irbgen.wikipedia.dumps import PageFilter, read_dump

    linker = EntityLinker(kb)
    rejects: list[Reject] = []
    pages = read_dump(config.wikipedia_dump, filters=PageFilter(titles=linker.titles()))
    counts, stats = wikipedia_frequencies(
        pages, RebelExtractor(config.rebel_model), linker, kb, on_reject=rejects.append
    )
    replace_stage_rejects(run_dir, "wikipedia_frequency", rejects)
    return counts, stats.as_dict()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: building the base allocates only objects that live on."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _sample(kb, old_kb, hops, popularity, threshold, config, sampling) -> list:
    return sample_chains(
        kb,
        hops=hops,
        per_hop=config.per_hop,
        mix=config.mix,
        popularity=popularity,
        threshold=threshold,
        newness=Newness(old_kb),
        rng=random.Random(config.seed),
        stats=sampling,
    )


def build_wikidata(config: WikidataBuildConfig, run_dir: Path, progress: Progress | None = None) -> dict:
    """Run (or resume) every stage into RUN_DIR and write RUN/benchmark and RUN/manifest.json."""
    _check_inputs(config)
    hops = parse_hops(config.hops)
    run_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    filters = {"min_sitelinks": config.min_sitelinks, "entities": config.entities}
    results: dict[str, StageResult] = {}
    results["read"] = _read(config.dump, "read", config, run_dir, progress, **filters, limit=config.limit)
    properties = []
    if config.properties is not None:  # never filtered: every statement needs its property's label
        results["read_properties"] = _read(config.properties, "read_properties", config, run_dir, progress)
        properties = [entity for entity in results["read_properties"].outputs() if entity.kind == "property"]
    with _collector_paused():  # millions of long-lived records: full collections only cost time
        kb = KnowledgeBase(results["read"].outputs(), properties=properties)
    old_kb = None
    if config.old_dump is not None:
        kept = _kept_entities(kb, config, run_dir)
        results["read_old"] = _read(
            config.old_dump, "read_old", config, run_dir, progress, entities=kept, limit=config.limit
        )
        with _collector_paused():
            old_kb = KnowledgeBase(results["read_old"].outputs())

    frequencies, rebel_stats = _frequencies(config, kb, run_dir)
    kind = config.popularity or ("wikipedia-frequency" if config.rebel_model else "sitelinks")
    popularity = make_popularity(kind, kb, frequencies=frequencies, counts_file=config.counts_file)
    threshold = config.popular_threshold if config.popular_threshold is not None else popularity.threshold
    sampling: Counter = Counter()
    with _collector_paused():
        chains = _sample(kb, old_kb, hops, popularity, threshold, config, sampling)

    llm = run_client(config, run_dir)
    try:
        stage = WriteChainQuestions(backend="rules" if llm is None else "llm", kb=kb)
        context = StageContext(run_dir=run_dir, llm=llm)
        results["questions"] = run_stage(
            stage, chains, context, concurrency=config.llm_concurrency, progress=progress
        )
    finally:
        if llm is not None:
            asyncio.run(llm.aclose())
            llm.ledger.save(run_dir / LEDGER)
    written: dict[str, ChainQuestion] = {q.chain_id: q for q in results["questions"].outputs()}

    documents = entity_documents(kb, old_kb, chunk_tokens=config.chunk_tokens)
    samples = [
        chain_sample(chain, written[chain.id], kb, documents, seed=config.seed)
        for chain in chains
        if chain.id in written
    ]
    manifest = _manifest(config, results, kind, threshold, chains, samples, rebel_stats, llm)
    manifest["chain_sampling"] = dict(sorted(sampling.items()))
    stats = write_benchmark(
        run_dir / BENCHMARK,
        documents,
        samples,
        Manifest(
            tool_version=__version__,
            source="wikidata",
            name=run_dir.name or "wikidata",
            command=COMMAND,
            config=_recorded_config(config),
            seed=config.seed,
            counts={k: v for k, v in manifest["counts"].items() if k != "rejects"},
            rejects=manifest["rejects"],
            llm_usage=manifest["llm_usage"],
        ),
        force=True,
        description=DESCRIPTION,
        licence=LICENCE,
    )
    manifest["counts"]["benchmark_documents"] = stats.documents
    manifest["counts"]["benchmark_qrels"] = stats.qrels
    manifest["seconds"] = round(time.perf_counter() - started, 3)
    _write_json(run_dir / "manifest.json", manifest)
    return manifest


def _manifest(config, results, kind, threshold, chains, samples, rebel_stats, llm) -> dict:
    stages = {name: result.totals.to_dict() for name, result in results.items()}
    rejects: dict[str, int] = {}
    for name, result in results.items():
        for reason, count in sorted(result.totals.rejects.items()):
            rejects[f"{name}:{reason}"] = count
    hop_counts = Counter(len(chain.hops) for chain in chains)
    sample_hops = Counter(sample.hops for sample in samples)
    counts = {
        "entities": stages["read"]["outputs"],
        "old_entities": stages["read_old"]["outputs"] if "read_old" in stages else 0,
        "chains": len(chains),
        **{f"chains_{hops}_hop": hop_counts[hops] for hops in sorted(hop_counts)},
        "questions": stages["questions"]["outputs"],
        "samples": len(samples),
        **{f"samples_{hops}_hop": sample_hops[hops] for hops in sorted(sample_hops)},
        **{f"rebel_{name}": value for name, value in sorted(rebel_stats.items())},
        "rejects": sum(rejects.values()),
    }
    return {
        "tool": "irbgen",
        "tool_version": __version__,
        "source": "wikidata",
        "config": _recorded_config(config),
        "popularity": {"kind": kind, "threshold": threshold},
        "counts": counts,
        "rejects": dict(sorted(rejects.items())),
        "stages": stages,
        "llm_usage": llm.ledger.summary() if llm is not None else {"backend": "rules"},
    }


def _recorded_config(config: WikidataBuildConfig) -> dict[str, Any]:
    """The config with file names instead of local paths, so the benchmark does not depend on them."""
    recorded = json.loads(config.model_dump_json(exclude={"api_key_env"}))
    for name in FILE_OPTIONS:
        if recorded.get(name):
            recorded[name] = Path(recorded[name]).name
    return recorded


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    # a key given inside --base-url (https://user:KEY@host) never reaches the run manifest
    tmp.write_text(redact(json.dumps(data, indent=2, ensure_ascii=False)) + "\n", encoding="utf-8")
    os.replace(tmp, path)
