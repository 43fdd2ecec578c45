"""`irbgen build`: flags in, the source's build library called, a one-line summary out.

One command for every real-corpus source. Each source has its config model; a flag that the chosen
source does not use is refused rather than silently ignored.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from irbgen.cli.support import REAL, progress_display, reporting_errors

if TYPE_CHECKING:
    from irbgen.builds.output import RunManifest

SOURCES = ("wikipedia-dump", "wikidata-dump")
_NOT_CONFIG = {"source", "config_path", "out", "force", "quiet"}
# Options that change how fast a build runs or how it stops, never what it writes: a rerun may change them.
NOT_IN_FINGERPRINT = frozenset(
    {
        "processes",
        "llm_concurrency",
        "fetch_concurrency",
        "per_host",
        "max_cost",
        "price_per_1k_input",
        "price_per_1k_output",
        "api_key_env",
        "facts_only",
        "executor",
        "ray_address",
        "ray_io_actors",
        "ray_max_retries",
        "shared_dir",
    }
)
# What a forced start-over keeps: model replies already paid for and the record of what they cost;
# fetched pages too, unless a setting that decides what is fetched changed.
KEPT_ON_FORCE = {
    "llm-cache.sqlite": "model replies",
    "llm-cache.sqlite-wal": "",
    "llm-cache.sqlite-shm": "",
    "ledger.jsonl": "the cost ledger",
}
DECIDE_FETCHES = {"source", "warc", "offline", "wayback", "allow_private_hosts", "irbgen"}


def kept_on_force(changed: set[str], run_dir: Path | None = None) -> dict[str, str]:
    """Entries of a run directory that --force keeps, given the fingerprint names that changed.

    A benchmark holding reviews or an audit is kept too: the new one replaces it and carries them over.
    """
    from irbgen.builds.output import BENCHMARK
    from irbgen.cli.humanwork import holds_human_work

    kept = KEPT_ON_FORCE if changed & DECIDE_FETCHES else {**KEPT_ON_FORCE, "warc": "fetched pages"}
    if run_dir is not None and holds_human_work(run_dir / BENCHMARK):
        kept = {**kept, BENCHMARK: "the benchmark's reviews and audit (carried into the new benchmark)"}
    return kept


def build_inputs(config: Any, config_path: Path | None) -> dict[str, Any]:
    """The files and folders a build reads, by flag: --out may be none of them, nor inside or around one."""
    inputs: dict[str, Any] = {"--config": config_path}
    for name in sorted(type(config).model_fields):
        value = getattr(config, name)
        paths = isinstance(value, Path) or (isinstance(value, list) and value and isinstance(value[0], Path))
        if paths and name != "shared_dir":
            inputs["--" + name.replace("_", "-")] = value
    return inputs


@click.command()
@click.option("--source", type=click.Choice(SOURCES), required=True, help="What to build from.")
@click.option(
    "--dump",
    type=click.Path(path_type=Path),
    help="Wikipedia: XML (.xml, .bz2) or Cirrus (.json.gz). Wikidata: JSON dump (.json, .gz, .bz2).",
)
@click.option(
    "--from-facts",
    type=click.Path(path_type=Path),
    help="Skip part 1: start from the facts.jsonl and documents.jsonl of this earlier run directory.",
)
@click.option(
    "--facts-only/--no-facts-only", default=False, help="Stop after part 1 (facts.jsonl, documents.jsonl)."
)
@click.option(
    "--index", type=click.Path(path_type=Path), help="Multistream index (found next to the dump if omitted)."
)
@click.option("--shards", default=1, show_default=True, type=int, help="Read the dump in this many shards.")
@click.option(
    "--processes",
    default=1,
    show_default=True,
    type=int,
    help="Processes for CPU stages and page extraction.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where stages run: this machine, or a Ray cluster (needs the 'ray' extra).",
)
@click.option(
    "--ray-address",
    help="--executor ray: 'auto' or HOST:PORT joins a running cluster (default: start a local Ray instance).",
)
@click.option(
    "--ray-io-actors",
    default=0,
    show_default=True,
    type=int,
    help="--executor ray: async actors for I/O stages (0: they run in the driver, their CPU work on Ray).",
)
@click.option(
    "--ray-max-retries",
    default=3,
    show_default=True,
    type=int,
    help="--executor ray: reruns of a task whose worker died, before its item becomes a reject.",
)
@click.option(
    "--shared-dir",
    type=click.Path(path_type=Path),
    help="A multi-node cluster: a folder every node can read and write, for the files workers read "
    "(Wikidata: dump block indexes, the old dump's entity list, the saved knowledge bases) and the "
    "checkpoint shards they write. "
    "Default: the run directory.",
)
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
@click.option(
    "--max-cost", type=REAL, help="Never spend more than this many USD: each call reserves its worst case."
)
@click.option(
    "--price-per-1k-input", type=REAL, help="USD per 1,000 prompt tokens, for a model without a known price."
)
@click.option("--price-per-1k-output", type=REAL, help="USD per 1,000 completion tokens (with the above).")
@click.option(
    "--offline/--no-offline", default=False, help="Fetch nothing: read cited pages only from WARC files."
)
@click.option("--warc", multiple=True, type=click.Path(path_type=Path), help="WARC file(s) of cited pages.")
@click.option(
    "--allow-private-hosts/--no-allow-private-hosts",
    default=False,
    help="Let cited URLs reach private or loopback addresses.",
)
@click.option("--wayback/--no-wayback", default=False, help="Try the Wayback Machine for dead links.")
@click.option("--fetch-concurrency", default=16, show_default=True, type=int, help="Fetches in flight.")
@click.option(
    "--per-host", default=2, show_default=True, type=int, help="Wikipedia: fetches in flight to one host."
)
@click.option(
    "--fetch-timeout",
    default=15.0,
    show_default=True,
    type=REAL,
    help="Wikipedia: seconds a connect, read or write may take before the fetch gives up.",
)
@click.option(
    "--grounding-threshold",
    default=0.6,
    show_default=True,
    type=REAL,
    help="Wikipedia, --llm rules: least support score (0-1) for a cited page to ground a keypoint.",
)
@click.option(
    "--kg-coverage", default=0.85, show_default=True, type=REAL, help="Least keypoint coverage of a graph."
)
@click.option("--max-hops", default=2, show_default=True, type=int, help="Longest multi-hop chain (1-4).")
@click.option(
    "--false-premise-share",
    default=0.2,
    show_default=True,
    type=REAL,
    help="Share of false-premise samples.",
)
@click.option(
    "--keep-shortcuts/--no-keep-shortcuts",
    default=False,
    help="Keep multi-hop questions whose answer is already in a first-hop document.",
)
@click.option(
    "--answers-per-fact",
    type=int,
    help="Wikipedia: single-hop questions per fact, each asking for another node (1-4).  [default: 2]",
)
@click.option("--reference-date", help="YYYY-MM-DD for relative dates (default: newest page revision).")
@click.option(
    "--old-dump", type=click.Path(path_type=Path), help="Wikidata: an older dump, for new/old labels."
)
@click.option(
    "--properties",
    type=click.Path(path_type=Path),
    help="Wikidata: a property table (FILE.tsv: id, label, datatype) or a properties-only dump (same JSON "
    "layout) for labels and datatypes the dump lacks; irbgen's own table comes after it.",
)
@click.option(
    "--wikipedia-dump",
    type=click.Path(path_type=Path),
    help="Wikidata: Wikipedia articles for REBEL and the corpus.",
)
@click.option(
    "--rebel-model", type=click.Path(path_type=Path), help="Wikidata: a local REBEL-format seq2seq model."
)
@click.option(
    "--popularity",
    type=click.Choice(["sitelinks", "wikipedia-frequency", "counts-file"]),
    help="Wikidata: how popularity is counted (default: sitelinks; wikipedia-frequency with --rebel-model).",
)
@click.option(
    "--min-sitelinks",
    default=0,
    show_default=True,
    type=int,
    help="Wikidata: keep items with at least this many sitelinks.",
)
@click.option(
    "--entities",
    type=click.Path(path_type=Path),
    help="Wikidata: keep only the items listed in this file (one id a line).",
)
@click.option(
    "--keep-all-statements/--no-keep-all-statements",
    default=False,
    help="Wikidata: also keep the statements no question can use (external ids, URLs, media, coordinates, "
    "denied properties), so passages state them too.",
)
@click.option("--counts-file", type=click.Path(path_type=Path), help="Wikidata: popularity counts (TSV).")
@click.option("--popular-threshold", type=REAL, help="Wikidata: popular at or above this score.")
@click.option(
    "--hops", default="1-4", show_default=True, help="Wikidata: chain lengths, N or N-M within 1-4."
)
@click.option("--per-hop", default=50, show_default=True, type=int, help="Wikidata: chains per hop count.")
@click.option("--mix", help='Wikidata: weights per stratum, e.g. "unpopular-new=2,*=1".')
@click.option(
    "--property-share",
    type=REAL,
    help="Wikidata: the most of the final hops, and of all hops, one property may take (0-1).  "
    "[default: 0.25]",
)
@click.option(
    "--trivial-share",
    type=REAL,
    help="Wikidata: the most of all hops a trivial property (sex or gender, ...) may take "
    "(0-1).  [default: 0]",
)
@click.option(
    "--chunk-tokens", default=512, show_default=True, type=int, help="Wikidata: passage chunk size."
)
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of every random choice.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML file whose [wikipedia-dump] or [wikidata-dump] table (the --source) sets any option here; "
    "flags given win (see pipelines/wikipedia.toml, pipelines/wikidata.toml).",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Run directory (resumable).")
@click.option(
    "--force",
    is_flag=True,
    help="Start --out over (model replies, the cost ledger and fetched pages are kept where still valid).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def build(**options: Any) -> None:
    """Build a benchmark from a real corpus: IRB-style from Wikipedia, MINTQA-style from Wikidata."""
    from irbgen.extras import require

    source, out = options["source"], options["out"]
    context = click.get_current_context()
    with reporting_errors(), progress_display(not options["quiet"]) as progress:
        if options["executor"] == "ray":  # before the source's extras: the one missing extra is named
            require("ray", "--executor ray")
        if source == "wikipedia-dump":
            require("wikipedia", "the Wikipedia build")
            from irbgen.builds.wikipedia import WikipediaBuildConfig as Config
            from irbgen.builds.wikipedia import build_wikipedia as run
        else:
            require("wikidata", "the Wikidata build")
            from irbgen.builds.wikidata import WikidataBuildConfig as Config
            from irbgen.builds.wikidata import build_wikidata as run
        _refuse_foreign_flags(context, Config.model_fields, source)
        given = {name: options[name] for name in context.params if _given(context, name)}
        config = load_build_config(Config, source, options["config_path"], given)
        from irbgen.benchmark import check_output
        from irbgen.builds.output import BENCHMARK, write_output
        from irbgen.cli.humanwork import carry_human_work
        from irbgen.cli.preflight import check_build_inputs
        from irbgen.outputs import check_inputs
        from irbgen.pipeline.rundir import locked, make_directory, prepare_run_dir

        check_build_inputs(config)
        if config.executor == "ray":
            require("ray", "--executor ray")
        fingerprint = build_fingerprint(source, config)
        inputs = build_inputs(config, options["config_path"])
        check_inputs(out, inputs)
        make_directory(out)
        with locked(out):
            keep = partial(kept_on_force, run_dir=out)
            prepare_run_dir(out, fingerprint, force=options["force"], keep=keep, inputs=inputs)
            check_output(out / BENCHMARK, True)  # refused now, not after the build, if it holds others' files
            manifest = write_output(run(config, out, progress), out / BENCHMARK, out, carry_human_work)
    line = summary_line(manifest, out) if source == "wikipedia-dump" else wikidata_summary(manifest, out)
    click.echo(line)


def load_build_config(model: type, source: str, path: Path | None, flags: dict[str, Any]) -> Any:
    """The build config: MODEL's defaults, then the [SOURCE] table of the --config file, then FLAGS (given).

    With no backend named, a base URL or a model (from either) means openai, else rules.
    """
    from irbgen.configfile import load_settings

    flags = {name: value for name, value in flags.items() if name in model.model_fields}
    config = load_settings(model, path, source, flags)
    if "llm" not in config.model_fields_set and (config.base_url or config.model):
        config = config.model_copy(update={"llm": "openai"})
    return config


def _given(context: click.Context, name: str) -> bool:
    """Whether option NAME was given on the command line (not left at its default)."""
    return context.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


def build_fingerprint(source: str, config: Any) -> dict:
    """Options, input files and versions that decide a build's outputs (see NOT_IN_FINGERPRINT)."""
    from irbgen import __version__
    from irbgen.errors import redact
    from irbgen.pipeline.rundir import make_fingerprint

    options: dict[str, Any] = {"source": source}
    inputs: dict[str, Any] = {}
    for name in sorted(type(config).model_fields):
        value = getattr(config, name)
        if name in NOT_IN_FINGERPRINT:
            continue
        if isinstance(value, Path) or (isinstance(value, list) and value and isinstance(value[0], Path)):
            inputs[name] = value
        else:
            options[name] = redact(value) if name == "base_url" and value else value
    versions: dict[str, Any] = {"irbgen": __version__}
    if getattr(config, "llm", "rules") != "rules":
        from irbgen.llm.prompts import list_prompts, load_prompt

        versions["prompts"] = {name: load_prompt(name).version for name in list_prompts()}
    return make_fingerprint(options, inputs, versions)


def _refuse_foreign_flags(context: click.Context, fields: dict, source: str) -> None:
    from irbgen.errors import BadInputError

    for name in context.params:
        if name in _NOT_CONFIG or name in fields:
            continue
        if _given(context, name):
            flag = "--" + name.replace("_", "-")
            raise BadInputError(f"{flag} does not apply to --source {source}")


def wikidata_summary(manifest: RunManifest, out: Path) -> str:
    """One line: entities, chains per hop count, samples, rejects."""
    counts = manifest.counts
    per_hop = ", ".join(
        f"{counts[key]:,} {key.split('_')[1]}-hop" for key in sorted(counts) if key.startswith("samples_")
    )
    return (
        f"{counts['entities']:,} entities ({counts['old_entities']:,} in the old dump) -> "
        f"{counts['chains']:,} chains -> {counts['samples']:,} samples ({per_hop}) in {out / 'benchmark'} "
        f"({counts['rejects']:,} rejects, see {out / 'rejects.jsonl'})"
    )


def summary_line(manifest: RunManifest, out: Path) -> str:
    """One line: what each part made, and where the rejects are."""
    counts = manifest.counts
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
