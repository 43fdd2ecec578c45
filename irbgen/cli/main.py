"""The `irbgen` command: parse flags, call library functions, print one-line summaries."""

from __future__ import annotations

import errno
import logging
import os
import sys
import time
from pathlib import Path

import click

from irbgen import __version__
from irbgen.cli.audit import audit
from irbgen.cli.build import build
from irbgen.cli.eval import compare, eval_group, report
from irbgen.cli.review import review
from irbgen.cli.support import (
    REAL,
    OnceHandler,
    RedactingFormatter,
    benchmark_input,
    counting,
    progress_display,
    reporting_errors,
)
from irbgen.errors import BadInputError

# Errors of writing the output itself (a full disk, a dead terminal), not of what a command did.
_OUTPUT_ERRORS = {errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG, errno.EPIPE}


class _Irbgen(click.Group):
    """The irbgen group: a stdout that cannot be written (`> /dev/full`) ends in one line and exit 1."""

    def main(self, *args, **kwargs):  # noqa: ANN002, ANN003 - click's signature
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                sys.stdout.flush()  # what is still buffered fails here, not in the interpreter's exit
        except OSError as error:
            if error.errno not in _OUTPUT_ERRORS:
                raise
            _output_failed(error)


def _output_failed(error: OSError) -> None:
    try:  # send what stdout still buffers nowhere, so the interpreter's exit does not fail on it again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # not a real file (a test runner's buffer)
    try:
        click.echo(f"irbgen: error: stdout: {error.strerror or error}", err=True)
    except OSError:
        pass  # stderr is gone too: the exit code says it
    sys.exit(1)


@click.group(cls=_Irbgen, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="irbgen")
@click.option("--verbose", "-v", is_flag=True, help="Log what each stage does.")
def main(verbose: bool) -> None:
    """Generate fresh QA and retrieval benchmarks, and check or export them."""
    handler = OnceHandler()  # 40 failed calls with one cause are one warning and a count, not 40 lines
    handler.setFormatter(RedactingFormatter("%(levelname)s %(message)s"))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler])
    click.get_current_context().call_on_close(handler.summarise)


@main.command()
@click.option("--n", "n", type=int, help="People in the world.  [default: 500]")
@click.option("--seed", type=int, help="Seed for every random choice.  [default: 0]")
@click.option("--depth", type=int, help="Recursion depth of the question grammar (20 gives 50 templates).")
@click.option("--questions-per-template", type=int, help="Questions sampled per template.  [default: 10]")
@click.option("--tree-size", type=int, help="Maximum people per family tree.  [default: 50]")
@click.option("--tree-depth", type=int, help="Maximum generations per family tree, minus one.  [default: 20]")
@click.option("--max-children", type=int, help="Maximum children per couple.  [default: 5]")
@click.option("--friendship-k", type=REAL, help="Mean number of friends per person.  [default: 3]")
@click.option("--duplicate-names/--unique-names", default=None, help="Allow two people to share a name.")
@click.option("--easy-mode/--hard-mode", default=None, help="Only relations of difficulty 1.")
@click.option("--sampling-attempts", type=int, help="Random walks tried per wanted question.  [default: 200]")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="TOML file whose [phantom] table sets defaults (see pipelines/phantom.toml).",
)
@click.option(
    "--vocab-dir",
    type=click.Path(path_type=Path),
    help="Folder of word lists (default: irbgen's own, irbgen/resources/phantom).",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Benchmark directory to write.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no summary.")
def phantom(
    config_path: Path | None, vocab_dir: Path | None, out: Path, force: bool, quiet: bool, **flags
) -> None:
    """Generate a PhantomWiki-style synthetic benchmark with exact answers."""
    from irbgen.benchmark import WrittenCorpus, check_output, parts_directory
    from irbgen.builds.output import write_output
    from irbgen.builds.phantom import build_phantom
    from irbgen.cli.humanwork import carry_human_work
    from irbgen.phantom.config import load_config
    from irbgen.phantom.vocabulary import load_vocabulary
    from irbgen.pipeline.rundir import lock_output

    with reporting_errors(), progress_display(not quiet) as progress:
        started = time.perf_counter()
        config = load_config(config_path, flags)
        check_output(out, force, "benchmark", {"--config": config_path, "--vocab-dir": vocab_dir})
        vocabulary = load_vocabulary(vocab_dir)
        with lock_output(out), parts_directory(out) as parts:
            build = build_phantom(config, vocabulary, progress, parts)
            writing = time.perf_counter()
            if not isinstance(build.documents, WrittenCorpus):
                build.documents = counting(build.documents, "articles", build.universe.size, progress)
            manifest = write_output(build, out, carry=carry_human_work)
            finished = time.perf_counter()
    if not quiet:
        timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in build.timings.items())
        articles, qrels = manifest.counts["benchmark_documents"], manifest.counts["benchmark_qrels"]
        click.echo(
            f"wrote {len(build.samples):,} questions, {articles:,} articles and {qrels:,} qrels to "
            f"{out} in {finished - started:.2f}s ({timings}, write {finished - writing:.2f}s)"
        )


@main.command()
@benchmark_input()
def validate(benchmark: Path) -> None:
    """Check a benchmark directory: files, records, ids, qrels, manifest counts and checksums."""
    from irbgen.validation import invalid_benchmark, validate_benchmark

    with reporting_errors():
        report = validate_benchmark(benchmark)  # a run directory given instead: one line naming its benchmark
        if report.only_empty:
            raise invalid_benchmark(benchmark, report)
    counts = ", ".join(f"{value:,} {name.replace('_', ' ')}" for name, value in report.counts.items())
    if report.ok:
        click.echo(f"{benchmark}: valid ({counts})")
        return
    for problem in report.problems:
        click.echo(problem, err=True)
    hidden = report.total_problems - len(report.problems)
    more = f" ({hidden} more not shown)" if hidden > 0 else ""
    click.echo(f"{benchmark}: invalid, {report.total_problems} problem(s){more}", err=True)
    sys.exit(2)


@main.command()
@benchmark_input()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "hf"]),
    required=True,
    help="parquet files, or a Hugging Face DatasetDict saved to disk.",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Folder to write.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option(
    "--reviewed-only",
    is_flag=True,
    help="Only the samples judged valid with irbgen review or in a scored irbgen audit sheet.",
)
def export(benchmark: Path, fmt: str, out: Path, force: bool, reviewed_only: bool) -> None:
    """Export a benchmark directory to parquet or to a Hugging Face DatasetDict."""
    import json

    from irbgen.benchmark import consistent_read, staged_directory
    from irbgen.export import VERBATIM, export_hf, export_parquet
    from irbgen.validation import invalid_benchmark, validate_benchmark

    with reporting_errors():
        inputs = {"BENCHMARK": benchmark}
        with consistent_read(benchmark), staged_directory(out, force, "export", inputs) as tmp:
            report = validate_benchmark(benchmark)
            if not report.ok:
                raise invalid_benchmark(benchmark, report)
            keep = _reviewed(benchmark) if reviewed_only else None
            if fmt == "parquet":
                written = [path.name for path in export_parquet(benchmark, tmp, keep)]
            else:
                dataset = export_hf(benchmark, tmp / "dataset", keep)
                splits = ", ".join(json.loads((dataset / "dataset_dict.json").read_text())["splits"])
                written = [f"a DatasetDict ({splits})"]
                for part in sorted(dataset.iterdir()):
                    written += [part.name] if part.name in VERBATIM else []
                    part.rename(tmp / part.name)
                dataset.rmdir()
    click.echo(f"wrote {', '.join(written)} to {out}")


def _reviewed(directory: Path) -> set[str]:
    from irbgen.review.scoring import valid_ids

    keep = valid_ids(directory)
    if not keep:
        raise BadInputError(
            f"{directory}/reviews: no sample judged valid; judge some with irbgen review or irbgen audit"
        )
    click.echo(f"exporting the {len(keep)} samples judged valid in {directory}/reviews (reviews and audits)")
    return keep


@main.command(name="filter")
@benchmark_input()
@click.option(
    "--drop-closed-book",
    "eval_dir",
    type=click.Path(path_type=Path),
    help="A closed-book evaluation (eval qa --method closed-book) of BENCHMARK: drop what it got right.",
)
@click.option(
    "--drop-hop-shortcuts",
    "hops_dir",
    type=click.Path(path_type=Path),
    help="A hop-ablation evaluation (eval qa --method hop-ablation) of BENCHMARK: drop the multi-hop "
    "samples it still answered with a hop's evidence left out.",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Benchmark directory to write.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
def filter_benchmark(
    benchmark: Path, eval_dir: Path | None, hops_dir: Path | None, out: Path, force: bool
) -> None:
    """Write BENCHMARK without the samples a model answered closed-book (a contamination probe), or
    without the multi-hop samples that do not need every hop."""
    from irbgen.cli.humanwork import carry_human_work
    from irbgen.eval.filtering import filter_closed_book, filter_hop_shortcuts

    with reporting_errors():
        if (eval_dir is None) == (hops_dir is None):
            raise BadInputError("give one of --drop-closed-book or --drop-hop-shortcuts")
        if hops_dir is not None:
            done = filter_hop_shortcuts(benchmark, hops_dir, out, force=force, carry=carry_human_work)
        else:
            done = filter_closed_book(benchmark, eval_dir, out, force=force, carry=carry_human_work)
    if hops_dir is not None:
        from irbgen.eval.qa.ablation import share_text

        what = (
            f"still answered with a hop's evidence left out ({done['by']} >= {done['threshold']:g}); "
            f"needing every hop: {share_text({'by_hops': done['needs_every_hop']})}"
        )
    else:
        what = f"answered closed-book ({done['by']} >= {done['threshold']:g})"
    click.echo(
        f"dropped {done['dropped']:,} of {done['evaluated']:,} evaluated samples that {done['model']} "
        f"{what}; wrote {done['kept']:,} samples to {out}"
    )


main.add_command(eval_group)
main.add_command(report)
main.add_command(compare)
main.add_command(build)
main.add_command(audit)
main.add_command(review)

if __name__ == "__main__":
    main()
