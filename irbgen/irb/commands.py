"""`irbgen build --source wikipedia-dump`: flags in, the build library called, a one-line summary out."""

from __future__ import annotations

from pathlib import Path

import click

from irbgen.cli_support import progress_display, reporting_errors

SOURCES = ("wikipedia-dump",)


@click.command()
@click.option("--source", type=click.Choice(SOURCES), required=True, help="What to build from.")
@click.option("--dump", type=click.Path(path_type=Path), help="XML (.xml, .bz2) or Cirrus (.json.gz).")
@click.option(
    "--from-facts",
    type=click.Path(path_type=Path),
    help="Skip part 1: start from the facts.jsonl and documents.jsonl of this earlier run directory.",
)
@click.option("--facts-only", is_flag=True, help="Stop after part 1 (facts.jsonl, documents.jsonl).")
@click.option(
    "--index", type=click.Path(path_type=Path), help="Multistream index (found next to the dump if omitted)."
)
@click.option("--shards", default=1, show_default=True, type=int, help="Read the dump in this many shards.")
@click.option("--processes", default=1, show_default=True, type=int, help="Processes for CPU stages.")
@click.option("--created-after", help="Keep pages created on or after this ISO date (Cirrus dumps).")
@click.option("--created-before", help="Keep pages created before this ISO date (Cirrus dumps).")
@click.option("--min-citations", default=0, show_default=True, type=int, help="Skip pages with fewer refs.")
@click.option("--titles", type=click.Path(path_type=Path), help="Only these titles (one per line).")
@click.option("--limit", type=int, help="Stop after this many pages.")
@click.option(
    "--llm",
    type=click.Choice(["rules", "openai"]),
    default=None,
    help="rules: offline, no model (default without --base-url/--model); openai: any compatible endpoint.",
)
@click.option("--base-url", help="OpenAI-compatible endpoint for --llm openai.")
@click.option("--model", help="Model for --llm openai.")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="Variable holding the key.")
@click.option("--llm-concurrency", default=16, show_default=True, type=int, help="Model calls in flight.")
@click.option("--max-cost", type=float, help="Stop cleanly once this many USD are spent.")
@click.option("--offline", is_flag=True, help="Fetch nothing: read cited pages only from WARC files.")
@click.option("--warc", multiple=True, type=click.Path(path_type=Path), help="WARC file(s) of cited pages.")
@click.option(
    "--allow-private-hosts", is_flag=True, help="Let cited URLs reach private or loopback addresses."
)
@click.option("--wayback", is_flag=True, help="Try the Wayback Machine for dead links.")
@click.option("--fetch-concurrency", default=16, show_default=True, type=int, help="Fetches in flight.")
@click.option(
    "--kg-coverage", default=0.85, show_default=True, type=float, help="Least keypoint coverage of a graph."
)
@click.option("--max-hops", default=2, show_default=True, type=int, help="Longest multi-hop chain (1-4).")
@click.option(
    "--false-premise-share",
    default=0.2,
    show_default=True,
    type=float,
    help="Share of false-premise samples.",
)
@click.option("--reference-date", help="YYYY-MM-DD for relative dates (default: newest page revision).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of every random choice.")
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run directory (resumable).")
def build(
    source: str,
    dump: Path | None,
    from_facts: Path | None,
    facts_only: bool,
    index: Path | None,
    shards: int,
    processes: int,
    created_after: str | None,
    created_before: str | None,
    min_citations: int,
    titles: Path | None,
    limit: int | None,
    llm: str | None,
    base_url: str | None,
    model: str | None,
    api_key_env: str,
    llm_concurrency: int,
    max_cost: float | None,
    offline: bool,
    warc: tuple[Path, ...],
    allow_private_hosts: bool,
    wayback: bool,
    fetch_concurrency: int,
    kg_coverage: float,
    max_hops: int,
    false_premise_share: float,
    reference_date: str | None,
    seed: int,
    out: Path,
) -> None:
    """Build an IRB-style benchmark from a Wikipedia dump: grounded facts, then questions (resumable)."""
    from pydantic import ValidationError

    from irbgen.benchmark import describe_error
    from irbgen.errors import BadInputError
    from irbgen.irb.build import WikipediaBuildConfig, build_wikipedia

    with reporting_errors(), progress_display(True) as progress:
        if llm is None:
            llm = "openai" if (base_url or model) else "rules"
        try:
            config = WikipediaBuildConfig(
                dump=dump,
                from_facts=from_facts,
                facts_only=facts_only,
                index=index,
                shards=shards,
                processes=processes,
                created_after=created_after,
                created_before=created_before,
                min_citations=min_citations,
                titles=titles,
                limit=limit,
                llm=llm,
                base_url=base_url,
                model=model,
                api_key_env=api_key_env,
                llm_concurrency=llm_concurrency,
                max_cost=max_cost,
                offline=offline,
                warc=list(warc),
                allow_private_hosts=allow_private_hosts,
                wayback=wayback,
                fetch_concurrency=fetch_concurrency,
                kg_coverage=kg_coverage,
                max_hops=max_hops,
                false_premise_share=false_premise_share,
                reference_date=reference_date,
                seed=seed,
            )
        except ValidationError as error:
            raise BadInputError(f"bad option: {describe_error(error)}") from None
        manifest = build_wikipedia(config, out, progress)
    click.echo(summary_line(manifest, out))


def summary_line(manifest: dict, out: Path) -> str:
    """One line: what each part made, and where the rejects are."""
    counts = manifest["counts"]
    parts = []
    if "pages" in counts:
        parts.append(
            f"{counts['pages']:,} pages -> {counts['segments']:,} citing segments -> "
            f"{counts['keypoints']:,} keypoints; {counts['documents_fetched']:,} of {counts['cited_urls']:,} "
            f"cited pages fetched -> {counts['facts']:,} grounded facts"
        )
    else:
        parts.append(f"{counts['facts']:,} facts and {counts['documents']:,} documents read")
    if "samples" in counts:
        parts.append(
            f"{counts['knowledge_graphs']:,} graphs -> {counts['plans']:,} plans -> {counts['samples']:,} "
            f"samples ({counts['samples_single_hop']:,} single-hop, {counts['samples_multi_hop']:,} "
            f"multi-hop, {counts['samples_false_premise']:,} false premise) in {out / 'benchmark'}"
        )
    return "; ".join(parts) + f" ({counts['rejects']:,} rejects, see {out / 'rejects.jsonl'})"
