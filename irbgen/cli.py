"""The `irbgen` command: parse flags, call library functions, print one-line summaries."""

from __future__ import annotations

import logging
import signal
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import click

from irbgen import __version__
from irbgen.errors import BadInputError, IrbgenError

log = logging.getLogger("irbgen")


def _fail(error: IrbgenError) -> None:
    click.echo(f"irbgen: error: {error}", err=True)
    sys.exit(error.exit_code)


def _terminate(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise SystemExit(128 + signum)


@contextmanager
def _reporting_errors():
    """Turn irbgen's own errors into one line and an exit code; SIGTERM unwinds like Ctrl-C."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    except IrbgenError as error:
        _fail(error)
    except KeyboardInterrupt:
        click.echo("irbgen: interrupted; nothing was written", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _progress(enabled: bool):
    """A progress callback drawn with rich on a terminal, silent elsewhere."""
    if not enabled or not sys.stderr.isatty():
        yield lambda stage, done, total: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        tasks: dict[str, int] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


def _counting(items, stage: str, total: int, progress: Callable[[str, int, int], None], every: int = 10_000):
    for number, item in enumerate(items, start=1):
        if number % every == 0:
            progress(stage, number, total)
        yield item
    progress(stage, total, total)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="irbgen")
@click.option("--verbose", "-v", is_flag=True, help="Log what each stage does.")
def main(verbose: bool) -> None:
    """Generate fresh QA and retrieval benchmarks, and check or export them."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(message)s"
    )


@main.command()
@click.option("--n", "n", type=int, help="People in the world.  [default: 500]")
@click.option("--seed", type=int, help="Seed for every random choice.  [default: 0]")
@click.option("--depth", type=int, help="Recursion depth of the question grammar (20 gives 50 templates).")
@click.option("--questions-per-template", type=int, help="Questions sampled per template.  [default: 10]")
@click.option("--tree-size", type=int, help="Maximum people per family tree.  [default: 50]")
@click.option("--tree-depth", type=int, help="Maximum generations per family tree, minus one.  [default: 20]")
@click.option("--max-children", type=int, help="Maximum children per couple.  [default: 5]")
@click.option("--friendship-k", type=float, help="Mean number of friends per person.  [default: 3]")
@click.option("--duplicate-names/--unique-names", default=None, help="Allow two people to share a name.")
@click.option("--easy-mode/--hard-mode", default=None, help="Only relations of difficulty 1.")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML file whose [phantom] table sets defaults (see pipelines/phantom.toml).",
)
@click.option(
    "--vocab-dir", type=click.Path(path_type=Path), help="Folder of word lists (default data/phantom)."
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Benchmark directory to write.")
@click.option("--force", is_flag=True, help="Replace --out if it exists.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no summary.")
def phantom(
    config_path: Path | None, vocab_dir: Path | None, out: Path, force: bool, quiet: bool, **flags
) -> None:
    """Generate a PhantomWiki-style synthetic benchmark with exact answers."""
    from irbgen.benchmark import check_output, write_benchmark
    from irbgen.phantom.build import DESCRIPTION, LICENCE, build_phantom
    from irbgen.phantom.config import load_config
    from irbgen.phantom.vocabulary import load_vocabulary

    with _reporting_errors(), _progress(not quiet) as progress:
        started = time.perf_counter()
        config = load_config(config_path, flags)
        check_output(out, force)
        vocabulary = load_vocabulary(vocab_dir)
        build = build_phantom(config, vocabulary, progress)
        writing = time.perf_counter()
        documents = _counting(build.documents, "articles", build.universe.size, progress)
        stats = write_benchmark(
            out,
            documents,
            build.samples,
            build.manifest,
            force=force,
            description=DESCRIPTION,
            licence=LICENCE,
        )
        finished = time.perf_counter()
    if not quiet:
        timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in build.timings.items())
        click.echo(
            f"wrote {stats.samples:,} questions, {stats.documents:,} articles and {stats.qrels:,} qrels to "
            f"{out} in {finished - started:.2f}s ({timings}, write {finished - writing:.2f}s)"
        )


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
def validate(directory: Path) -> None:
    """Check a benchmark directory: files, records, ids, qrels, manifest counts and checksums."""
    from irbgen.benchmark import validate_benchmark

    with _reporting_errors():
        report = validate_benchmark(directory)
    counts = ", ".join(f"{value:,} {name}" for name, value in report.counts.items())
    if report.ok:
        click.echo(f"{directory}: valid ({counts})")
        return
    for problem in report.problems:
        click.echo(problem, err=True)
    hidden = report.total_problems - len(report.problems)
    more = f" ({hidden} more not shown)" if hidden > 0 else ""
    click.echo(f"{directory}: invalid, {report.total_problems} problem(s){more}", err=True)
    sys.exit(2)


@main.command()
@click.argument("directory", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "hf"]),
    required=True,
    help="parquet files, or a Hugging Face DatasetDict saved to disk.",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder to write.")
def export(directory: Path, fmt: str, out: Path) -> None:
    """Export a benchmark directory to parquet or to a Hugging Face DatasetDict."""
    from irbgen.benchmark import validate_benchmark
    from irbgen.export import export_hf, export_parquet

    with _reporting_errors():
        report = validate_benchmark(directory)
        if not report.ok:
            raise BadInputError(
                f"{directory}: not a valid benchmark ({report.problems[0]}); run irbgen validate"
            )
        if fmt == "parquet":
            written = export_parquet(directory, out)
            click.echo(f"wrote {', '.join(path.name for path in written)} to {out}")
        else:
            export_hf(directory, out)
            click.echo(f"wrote a DatasetDict (corpus, queries, qrels, samples) to {out}")


if __name__ == "__main__":
    main()
