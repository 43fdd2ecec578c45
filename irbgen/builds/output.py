"""What every build returns (documents, samples, a typed run manifest) and the one writer of it all.

`run_manifest` assembles the manifest from the stage results; `write_output` writes the benchmark
directory for any generator and, for a run directory, RUN/manifest.json beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from irbgen import __version__
from irbgen.benchmark import Carry, WrittenCorpus, write_benchmark
from irbgen.card import BenchmarkStats
from irbgen.io import write_manifest
from irbgen.pipeline.runner import StageResult
from irbgen.records import Record
from irbgen.schema import Document, Manifest, Sample, Source

BENCHMARK = "benchmark"
RUN_MANIFEST = "manifest.json"


class RunManifest(Record):
    """RUN/manifest.json: what a build did, stage by stage, and what it cost."""

    tool: str = "irbgen"
    tool_version: str = __version__
    source: Source
    command: str | None = None  # the command that rebuilds the run
    stage: Literal["facts", "benchmark"] = "benchmark"  # how far the build went
    config: dict[str, Any]
    counts: dict[str, int]
    rejects: dict[str, int] = Field(default_factory=dict)  # "<stage>:<reason>" -> count
    stages: dict[str, dict[str, Any]] = Field(default_factory=dict)  # each stage's totals
    llm_usage: dict[str, Any] = Field(default_factory=dict)
    seconds: float = 0.0
    reference_date: str | None = None  # Wikipedia: the date the questions' "now" refers to
    popularity: dict[str, Any] | None = None  # Wikidata: how popularity was measured, and its threshold
    chain_sampling: dict[str, int] | None = None  # Wikidata: why candidate chains were passed over
    failed: str | None = None  # why the build wrote no benchmark (no page fetched, no sample made)


@dataclass(frozen=True)
class Card:
    """What the benchmark's card and manifest say about where it came from."""

    name: str
    command: str
    config: dict[str, Any]  # as recorded in the benchmark: file names, never local paths or keys
    description: str
    licence: str


@dataclass
class BuildOutput:
    """A finished build: the corpus, the samples, the run manifest and the card to write them with."""

    documents: Iterable[Document] | WrittenCorpus
    samples: list[Sample]
    manifest: RunManifest
    card: Card | None  # None when the build stopped before questions (Wikipedia --facts-only)


def run_manifest(
    source: Source,
    config: dict[str, Any],
    results: Mapping[str, StageResult],
    counts: dict[str, int],
    *,
    llm_usage: dict[str, Any],
    seconds: float = 0.0,
    **fields: Any,
) -> RunManifest:
    """The manifest of a run: stage totals and rejects per (stage, reason) from the results, and COUNTS."""
    rejects: dict[str, int] = {}
    for name, result in results.items():
        for reason, count in sorted(result.totals.rejects.items()):
            rejects[f"{name}:{reason}"] = count
    return RunManifest(
        source=source,
        config=config,
        counts={**counts, "rejects": sum(rejects.values())},
        rejects=dict(sorted(rejects.items())),
        stages={name: result.totals.to_dict() for name, result in results.items()},
        llm_usage=llm_usage,
        seconds=round(seconds, 3),
        **fields,
    )


def usage(llm: Any) -> dict[str, Any]:
    """What the run's model calls cost (the client's ledger), or the rules backend when there was none."""
    return llm.ledger.summary() if llm is not None else {"backend": "rules"}


def write_output(
    output: BuildOutput, benchmark_dir: Path, run_dir: Path | None = None, carry: Carry | None = None
) -> RunManifest:
    """Write the benchmark (replacing an earlier one) and, with RUN_DIR, RUN/manifest.json; the manifest.

    CARRY is what the replaced benchmark passes on beside its reviews (see irbgen.benchmark.staged_directory).

    The benchmark's own manifest takes the run's counts (less rejects, which it counts itself), its
    rejects per reason and its model usage; the run manifest gains the benchmark's document and qrel
    counts.
    """
    manifest = output.manifest
    if output.card is not None:
        stats = _write_benchmark(output, benchmark_dir, carry)
        written = {"benchmark_documents": stats.documents, "benchmark_qrels": stats.qrels}
        manifest = manifest.model_copy(update={"counts": {**manifest.counts, **written}})
    if run_dir is not None:
        # a key given inside --base-url (https://user:KEY@host) never reaches the run manifest
        write_manifest(run_dir / RUN_MANIFEST, manifest.model_dump(mode="json", exclude_none=True))
    return manifest


def _write_benchmark(output: BuildOutput, out: Path, carry: Carry | None) -> BenchmarkStats:
    card, manifest = output.card, output.manifest
    assert card is not None
    return write_benchmark(
        out,
        output.documents,
        output.samples,
        Manifest(
            tool_version=manifest.tool_version,
            source=manifest.source,
            name=card.name,
            command=card.command,
            config=json.loads(json.dumps(card.config, default=str)),
            seed=card.config.get("seed"),
            counts={key: value for key, value in manifest.counts.items() if key != "rejects"},
            rejects=manifest.rejects,
            llm_usage=manifest.llm_usage,
        ),
        force=True,
        description=card.description,
        licence=card.licence,
        carry=carry,
    )
