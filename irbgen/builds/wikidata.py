"""`irbgen build --source wikidata-dump`: Wikidata dumps in, MINTQA-style samples out.

    read (read_properties)                      -> the knowledge base
    read_old                                    -> the old knowledge base (newness)
    passages                                    -> the corpus, per range of items
    (wikipedia_frequency) -> chains -> questions -> samples

Four declared lists of steps, run by the stage runner (checkpointed, resumable, rejects kept); between
them the build makes the knowledge bases the later steps read. The corpus holds one passage per entity;
it is written to the passages checkpoint as it is made and streamed from there into the benchmark.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field

from irbgen.builds.empty import fail_empty, main_reasons
from irbgen.builds.output import BuildOutput, Card, run_manifest, usage
from irbgen.commandline import recorded_path, reproducing_command
from irbgen.errors import BadInputError
from irbgen.llm.backends import stage_backend
from irbgen.llm.run_client import LEDGER, LLMOptions, run_client
from irbgen.pipeline.executors import EXECUTOR_FIELDS, ExecutorOptions, executor_for, worker_files
from irbgen.pipeline.stage import Batch, StageContext
from irbgen.pipeline.steps import Done, Step, run_steps
from irbgen.progress import Progress
from irbgen.seekable import INDEX_FOLDER
from irbgen.wikidata.chains import PropertyCaps
from irbgen.wikidata.corpus import evidence_passages, id_order
from irbgen.wikidata.dumps import ReadEntities, wikidata_shards
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import make_popularity
from irbgen.wikidata.property_table import SHIPPED_TABLE, is_property_table, read_property_table, table_rows
from irbgen.wikidata.questions import WriteChainQuestions
from irbgen.wikidata.records import Chain
from irbgen.wikidata.samples import parse_hops
from irbgen.wikidata.saved_base import file_identity, saved_base
from irbgen.wikidata.selection import write_entity_ids
from irbgen.wikidata.stages import (
    CountTriples,
    MakeChainSamples,
    SampleChains,
    TripleCounts,
    WritePassages,
    item_ranges,
)

KEPT_ENTITIES = "kept-entities.txt"
DUMP_INDEXES = INDEX_FOLDER  # block indexes of compressed dumps read in shards
KB_DIR, OLD_KB_DIR = "kb", "old_kb"  # the saved knowledge bases, memory-mapped on a rerun
COMMAND = "irbgen build --source wikidata-dump"
DESCRIPTION = (
    "Multi-hop questions over chains of 1-4 Wikidata triples (MINTQA-style), each with its sub-questions "
    "and answers, labelled popular or unpopular and new or old. The corpus holds one passage per entity "
    "(its statements as sentences); qrels are the passages of the entities along each chain."
)
FILE_OPTIONS = ("dump", "old_dump", "properties", "entities", "wikipedia_dump", "rebel_model", "counts_file")
LICENCE = "Derived from Wikidata (CC0 1.0) and, where used, Wikipedia text (CC BY-SA 4.0)."


class WikidataBuildConfig(LLMOptions, ExecutorOptions):
    """Everything that decides a Wikidata build; recorded in the manifests (never an API key)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # inf and nan: refused, naming the option

    dump: Path
    old_dump: Path | None = None
    properties: Path | None = None  # a property table (.tsv) or properties-only dump: labels the dump lacks
    shards: int = Field(1, ge=1)
    processes: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=0)
    min_sitelinks: int = Field(0, ge=0)  # keep items with at least this many sitelinks
    entities: Path | None = None  # keep only the items listed in this file
    keep_all_statements: bool = False  # also read the statements no question can use (identifiers, ...)
    wikipedia_dump: Path | None = None
    rebel_model: Path | None = None
    popularity: Literal["sitelinks", "wikipedia-frequency", "counts-file"] | None = None
    counts_file: Path | None = None
    popular_threshold: float | None = None
    hops: str = "1-4"
    per_hop: int = Field(50, ge=1)
    mix: str | None = None
    property_share: float = Field(0.25, ge=0, le=1)  # of final hops and of all hops, per property
    trivial_share: float = Field(0.0, ge=0, le=1)  # of all hops, per trivial property
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
    if config.properties is not None and is_property_table(config.properties):
        read_property_table(config.properties)  # a bad line stops the build before anything is read
    parse_hops(config.hops)


def read_step(
    name: str, path: Path, config: WikidataBuildConfig, run_dir: Path | None = None, **filters: Any
) -> Step:
    """Read one dump into entities; the old and properties dumps checkpoint apart from the new one."""
    options = {"limit": filters.pop("limit", None), "min_sitelinks": filters.pop("min_sitelinks", 0)}
    entities = filters.pop("entities", None)
    options["entities"] = str(entities) if entities is not None else None
    options["keep_all_statements"] = config.keep_all_statements
    stage = ReadEntities()
    stage.name = name
    index_dir = worker_files(run_dir, config.shared_dir) / DUMP_INDEXES if run_dir is not None else None
    return Step(name, stage, lambda done: wikidata_shards(path, config.shards, index_dir, **options))


def passage_step(config: WikidataBuildConfig, kb: KnowledgeBase, old_kb: KnowledgeBase | None) -> Step:
    """The corpus: the passages of every item, a range of items per work item."""
    stage = WritePassages(kb, old_kb, config.chunk_tokens)
    return Step("passages", stage, lambda done: item_ranges(kb))


def question_steps(
    config: WikidataBuildConfig, backend: str, kb: KnowledgeBase, old_kb: KnowledgeBase | None
) -> list[Step]:
    """(REBEL counts ->) chains -> questions -> samples, over the knowledge bases."""
    hops = parse_hops(config.hops)
    kind = popularity_kind(config)

    def chain_batch(done: Done) -> Batch:
        frequencies = Counter(_triple_counts(done).counts)
        popularity = make_popularity(kind, kb, frequencies=frequencies, counts_file=config.counts_file)
        threshold = config.popular_threshold if config.popular_threshold is not None else popularity.threshold
        parts = {"kb": kb, "old_kb": old_kb, "popularity": popularity, "threshold": threshold}
        return Batch(name="chains", parts=parts)

    def sample_batch(done: Done) -> Batch:
        chains = _chains(done)
        parts = {
            "chains": chains,
            "questions": list(done["questions"].outputs()),
            "kb": kb,
            "documents": evidence_passages(chains, kb, old_kb, config.chunk_tokens),
        }
        return Batch(name="samples", parts=parts)

    steps = []
    if config.rebel_model is not None:
        counting = CountTriples(config.wikipedia_dump, config.rebel_model)
        steps.append(Step("wikipedia_frequency", counting, lambda done: [Batch(name="kb", parts={"kb": kb})]))
    caps = PropertyCaps(share=config.property_share, trivial_share=config.trivial_share)
    return [
        *steps,
        Step(
            "chains",
            SampleChains(
                hops=hops, per_hop=config.per_hop, mix=config.mix, seed=config.seed, property_caps=caps
            ),
            lambda done: [chain_batch(done)],
        ),
        Step(
            "questions",
            WriteChainQuestions(backend=backend, kb=kb),
            lambda done: _chains(done),
            concurrency=config.llm_concurrency,
        ),
        Step(
            "samples",
            MakeChainSamples(seed=config.seed, property_caps=caps),
            lambda done: [sample_batch(done)],
        ),
    ]


def popularity_kind(config: WikidataBuildConfig) -> str:
    """--popularity, else Wikipedia frequency with a REBEL model, else sitelinks."""
    return config.popularity or ("wikipedia-frequency" if config.rebel_model else "sitelinks")


def _chains(done: Done) -> list[Chain]:
    (sampling,) = done["chains"].outputs()
    return sampling.chains


def _triple_counts(done: Done) -> TripleCounts:
    if "wikipedia_frequency" not in done:
        return TripleCounts(counts={}, stats={})
    (counted,) = done["wikipedia_frequency"].outputs()
    return counted


def _kept_entities(kb: KnowledgeBase, config: WikidataBuildConfig, run_dir: Path) -> Path | None:
    """With a filter, the old dump is read for the kept items only: kept-entities.txt lists them.

    The old snapshot is only asked whether the new base's triples were there, so that is all it needs.
    Filtering it by its own sitelink counts instead would call an item new just for having had fewer.
    """
    if not config.min_sitelinks and config.entities is None:
        return None
    path = worker_files(run_dir, config.shared_dir) / KEPT_ENTITIES
    path.parent.mkdir(parents=True, exist_ok=True)
    write_entity_ids(path, sorted(kb.entities, key=id_order))
    return path


def _base_source(config: WikidataBuildConfig, done: Done, step: str) -> dict[str, Any]:
    """What a saved base was built from: the dumps, the read filters and the entities read."""
    dump = config.dump if step == "read" else config.old_dump
    return {
        "step": step,
        "dump": file_identity(dump),
        "properties": file_identity(config.properties) if step == "read" else None,
        "property_table": file_identity(str(SHIPPED_TABLE)) if step == "read" else None,
        "filters": [config.limit, config.min_sitelinks, file_identity(config.entities), config.shards],
        "keep_all_statements": config.keep_all_statements,
        "entities": done[step].totals.outputs,
        "property_entities": done["read_properties"].totals.outputs if "read_properties" in done else 0,
    }


def _properties(done: Done):
    """The property entities of a properties-only dump (rows), read anew on each call."""
    if "read_properties" not in done:
        return lambda: ()
    return lambda: (row for row in done["read_properties"].rows() if row.get("kind") == "property")


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


def build_wikidata(
    config: WikidataBuildConfig, run_dir: Path, progress: Progress | None = None, executor: Any = None
) -> BuildOutput:
    """Run (or resume) every step in RUN_DIR; returns documents, samples and the run manifest to write."""
    _check_inputs(config)
    name, shown = run_dir.name or "wikidata", run_dir
    run_dir = run_dir.resolve()  # workers in other processes (Ray actors) start in other folders
    run_dir.mkdir(parents=True, exist_ok=True)
    with executor_for(config, executor) as running:
        return _build(config, run_dir, progress, running, name, shown)


def _build(
    config: WikidataBuildConfig,
    run_dir: Path,
    progress: Progress | None,
    executor: Any,
    name: str,
    shown: Path,
) -> BuildOutput:
    started = time.perf_counter()
    files = worker_files(run_dir, config.shared_dir)  # shards, and the saved bases workers map
    context = StageContext(run_dir=run_dir, shard_dir=files)
    options = {"executor": executor, "processes": config.processes, "progress": progress}
    filters = {"min_sitelinks": config.min_sitelinks, "entities": config.entities, "limit": config.limit}
    reads = [read_step("read", config.dump, config, run_dir, **filters)]
    if config.properties is not None and not is_property_table(config.properties):
        # never filtered: every statement needs its property's label
        reads.append(read_step("read_properties", config.properties, config, run_dir))
    done = run_steps(reads, context, **options)
    source = _base_source(config, done, "read")
    table = lambda: table_rows(config.properties)  # noqa: E731
    kb = saved_base(files / KB_DIR, source, done["read"].rows, _properties(done), table)
    old_kb = None
    if config.old_dump is not None:
        kept = _kept_entities(kb, config, run_dir)
        old = read_step("read_old", config.old_dump, config, run_dir, entities=kept, limit=config.limit)
        done |= run_steps([old], context, **options)
        old_source = _base_source(config, done, "read_old")
        old_kb = saved_base(files / OLD_KB_DIR, old_source, done["read_old"].rows)
    done |= run_steps([passage_step(config, kb, old_kb)], context, **options)

    llm = run_client(config, run_dir)
    try:
        backend = stage_backend(config.llm)
        context = StageContext(run_dir=run_dir, llm=llm, shard_dir=files)
        with _collector_paused():
            steps = question_steps(config, backend, kb, old_kb)
            done |= run_steps(steps, context, **options, done=done)
    finally:
        if llm is not None:
            asyncio.run(llm.aclose())
            llm.ledger.save(run_dir / LEDGER)
    samples = list(done["samples"].outputs())
    (sampling,) = done["chains"].outputs()
    recorded = _recorded_config(config)
    manifest = run_manifest(
        "wikidata",
        recorded,
        done,
        _counts(done, sampling.chains, samples, _triple_counts(done).stats),
        llm_usage=usage(llm),
        seconds=time.perf_counter() - started,
        command=reproducing_command("wikidata", recorded),
        popularity={"kind": popularity_kind(config), "threshold": sampling.threshold},
        chain_sampling=sampling.passed_over,
    )
    if not samples:
        counts = manifest.counts
        passed_over = ", ".join(
            f"{count:,} {why}" for why, count in sorted(sampling.passed_over.items()) if count
        )
        reasons = main_reasons(done, done) + (f"; chains passed over: {passed_over}" if passed_over else "")
        problem = f"0 samples from {counts['entities']:,} entities and {counts['chains']:,} chains: {reasons}"
        fail_empty(problem, manifest, run_dir, shown)
    card = Card(name, COMMAND, recorded, DESCRIPTION, LICENCE)
    return BuildOutput(done["passages"].outputs(), samples, manifest, card)


def _counts(done: Done, chains: list[Chain], samples: list, rebel_stats: dict[str, int]) -> dict[str, int]:
    hop_counts = Counter(len(chain.hops) for chain in chains)
    sample_hops = Counter(sample.hops for sample in samples)
    return {
        "entities": done["read"].totals.outputs,
        "old_entities": done["read_old"].totals.outputs if "read_old" in done else 0,
        "chains": len(chains),
        **{f"chains_{hops}_hop": hop_counts[hops] for hops in sorted(hop_counts)},
        "questions": done["questions"].totals.outputs,
        "samples": len(samples),
        **{f"samples_{hops}_hop": sample_hops[hops] for hops in sorted(sample_hops)},
        **{f"rebel_{name}": value for name, value in sorted(rebel_stats.items())},
    }


def _recorded_config(config: WikidataBuildConfig) -> dict[str, Any]:
    """The config with input files as the card's command gives them (see irbgen.commandline.recorded_path)."""
    recorded = json.loads(config.model_dump_json(exclude={"api_key_env", "shared_dir", *EXECUTOR_FIELDS}))
    for name in FILE_OPTIONS:
        if recorded.get(name):
            recorded[name] = recorded_path(recorded[name])
    return recorded
