"""`irbgen eval retrieval|qa`, `irbgen report` and `irbgen compare`: flags in, library calls out."""

from __future__ import annotations

from pathlib import Path

import click

from irbgen.cli.support import REAL, benchmark_input, progress_display, reporting_errors

# The registries' keys, kept here so that --help does not import numpy and the retrievers; a test checks
# that they match irbgen.eval.retrievers.RETRIEVERS and irbgen.eval.qa.methods.METHODS.
RETRIEVER_NAMES = ("bm25", "dense", "hybrid")
METHOD_NAMES = ("closed-book", "cot", "cot-rag", "hop-ablation", "in-context", "rag", "react")


@click.group(name="eval")
def eval_group() -> None:
    """Evaluate retrievers or LLMs on a benchmark directory."""


@eval_group.command()
@benchmark_input()
@click.option("--retriever", default="bm25", show_default=True, type=click.Choice(RETRIEVER_NAMES))
@click.option("--k", default=10, show_default=True, type=int, help="Cut-off for the measures and the run.")
@click.option(
    "--measures",
    help='ir_measures names, space-separated, e.g. "nDCG@10 R@100 P@5 AP RR@10 Judged@10" '
    "(default: nDCG@k R@k RR@k AP).",
)
@click.option("--chunk-tokens", default=512, show_default=True, type=int, help="Tokens per chunk.")
@click.option("--chunk-overlap", default=32, show_default=True, type=int, help="Tokens shared by chunks.")
@click.option(
    "--model-path", type=click.Path(path_type=Path), help="Local sentence-transformers model (dense)."
)
@click.option(
    "--negatives",
    default=0,
    show_default=True,
    type=int,
    help="Also write this many hard negatives per query to negatives.jsonl.",
)
@click.option(
    "--per-hop",
    is_flag=True,
    help="Also rank each hop's sub-question against its own evidence (per_hop.jsonl, evidence chain recall).",
)
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Evaluation directory to write.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def retrieval(
    benchmark: Path,
    retriever: str,
    k: int,
    measures: str | None,
    chunk_tokens: int,
    chunk_overlap: int,
    model_path: Path | None,
    negatives: int,
    per_hop: bool,
    out: Path,
    force: bool,
    quiet: bool,
) -> None:
    """Rank the corpus for every question; report nDCG@k, R@k, RR@k and AP or --measures (trec_eval's)."""
    from irbgen.eval.retrieval import evaluate_retrieval

    options = {"model_path": model_path} if model_path is not None else {}
    with reporting_errors(), progress_display(not quiet) as progress:
        metrics = evaluate_retrieval(
            benchmark,
            out,
            retriever=retriever,
            k=k,
            measures=None if measures is None else measures.split(),
            chunk_tokens=chunk_tokens,
            chunk_overlap=chunk_overlap,
            force=force,
            negatives=negatives,
            progress=progress,
            per_hop=per_hop,
            **options,
        )
    overall = ", ".join(f"{name} {value:.4f}" for name, value in metrics["overall"].items())
    click.echo(f"{retriever} on {metrics['queries']:,} queries: {overall} (written to {out})")
    if "per_hop" in metrics:
        hops = metrics["per_hop"]
        chain = hops["evidence_chain_recall"]
        by_hop = ", ".join(f"{name} {value:.4f}" for name, value in hops["overall"].items())
        click.echo(
            f"per hop on {hops['queries']:,} sub-questions: {by_hop}; evidence chain recall@{chain['k']} "
            f"{chain['overall']:.4f} over {chain['samples']:,} samples"
        )
    click.echo("trec_eval semantics: linear gain, ideal DCG from all judged documents, no hits count 0")


def _settings(
    model: str,
    base_url: str | None,
    api_key_env: str,
    concurrency: int,
    max_cost: float | None,
    cache_dir: Path | None,
    timeout: float,
    prices: tuple[float | None, float | None] = (None, None),
):
    from pydantic import ValidationError

    from irbgen.errors import BadInputError
    from irbgen.llm.settings import LLMSettings, check_endpoint_url, priced

    check_endpoint_url(base_url)
    if cache_dir is not None and cache_dir.exists() and not cache_dir.is_dir():
        raise BadInputError(f"{cache_dir}: exists and is not a directory (--cache-dir)")
    try:
        settings = LLMSettings(
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            concurrency=concurrency,
            max_cost=max_cost,
            cache_dir=cache_dir,
            timeout=timeout,
        )
    except ValidationError as error:
        problems = []
        for item in error.errors()[:3]:
            field = ".".join(str(part) for part in item["loc"])
            problems.append(f"--{field.replace('_', '-')}: {item['msg']}")
        raise BadInputError("; ".join(problems)) from None
    return priced(settings, *prices)


@eval_group.command()
@benchmark_input()
@click.option(
    "--method",
    required=True,
    type=click.Choice(METHOD_NAMES),
    help="What the model sees (see the README).",
)
@click.option("--model", required=True, help="Model name the endpoint serves.")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: OpenAI's).")
@click.option("--api-key-env", default="OPENAI_API_KEY", show_default=True, help="Variable holding the key.")
@click.option("--k", default=4, show_default=True, type=int, help="Documents retrieved for rag and cot-rag.")
@click.option(
    "--limit",
    type=int,
    help="Evaluate N samples, spread over templates and hop counts (a fixed draw, not the first N).",
)
@click.option(
    "--retriever",
    default="bm25",
    show_default=True,
    type=click.Choice(RETRIEVER_NAMES),
    help="Retriever for rag, cot-rag and react.",
)
@click.option("--max-steps", default=20, show_default=True, type=int, help="ReAct step limit.")
@click.option("--concurrency", default=8, show_default=True, type=int, help="Requests in flight at once.")
@click.option("--timeout", default=60.0, show_default=True, type=REAL, help="Seconds per request.")
@click.option(
    "--max-cost", type=REAL, help="Never spend more than this many USD: each call reserves its worst case."
)
@click.option(
    "--price-per-1k-input", type=REAL, help="USD per 1,000 prompt tokens, for a model without a known price."
)
@click.option("--price-per-1k-output", type=REAL, help="USD per 1,000 completion tokens (with the above).")
@click.option("--judge-model", help="Model that labels answers correct / incorrect / not attempted.")
@click.option("--judge-base-url", help="Endpoint of the judge (default: --base-url).")
@click.option("--second-judge-model", help="A second judge whose verdicts are averaged with the first.")
@click.option(
    "--closed-book-by",
    default="f1",
    show_default=True,
    type=click.Choice(("f1", "judge")),
    help="closed-book: mark a sample closed_book_correct by its answer F1 or by the judge.",
)
@click.option(
    "--closed-book-threshold",
    default=0.5,
    show_default=True,
    type=REAL,
    help="closed-book: the F1 (or judge score) from which a sample counts as answered from memory.",
)
@click.option("--cache-dir", type=click.Path(path_type=Path), help="Response cache folder (default: --out).")
@click.option(
    "--out", required=True, type=click.Path(path_type=Path), help="Evaluation directory (resumable)."
)
@click.option("--force", is_flag=True, help="Start --out over instead of resuming (the cost ledger is kept).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
def qa(
    benchmark: Path,
    method: str,
    model: str,
    base_url: str | None,
    api_key_env: str,
    k: int,
    limit: int | None,
    retriever: str,
    max_steps: int,
    concurrency: int,
    timeout: float,
    max_cost: float | None,
    price_per_1k_input: float | None,
    price_per_1k_output: float | None,
    judge_model: str | None,
    judge_base_url: str | None,
    second_judge_model: str | None,
    closed_book_by: str,
    closed_book_threshold: float,
    cache_dir: Path | None,
    out: Path,
    force: bool,
    quiet: bool,
) -> None:
    """Ask an LLM every question; score answer sets (F1, EM), containment and a judge. Resumable."""
    from irbgen.eval.qa.judge import check_judged
    from irbgen.eval.qa.run import QAOptions, run_qa

    cache = cache_dir if cache_dir is not None else out

    def settings(name: str | None, url: str | None):
        if name is None:
            return None
        prices = (price_per_1k_input, price_per_1k_output)
        return _settings(name, url, api_key_env, concurrency, max_cost, cache, timeout, prices)

    with reporting_errors(), progress_display(not quiet) as progress:
        options = QAOptions(
            method,
            settings(model, base_url),
            k=k,
            limit=limit,
            judge_settings=settings(judge_model, judge_base_url or base_url),
            second_judge=settings(second_judge_model, judge_base_url or base_url),
            retriever=retriever,
            max_steps=max_steps,
            resume=not force,
            closed_book_by=closed_book_by,
            closed_book_threshold=closed_book_threshold,
        )
        summary = run_qa(benchmark, out, options, progress)
    click.echo(_qa_summary(method, model, out, summary))
    with reporting_errors():
        check_judged(summary.get("judge"))


def _qa_summary(method: str, model: str, out: Path, summary: dict) -> str:
    overall = summary.get("overall", {})
    scores = ", ".join(f"{name} {value:.3f}" for name, value in overall.items() if isinstance(value, float))
    usage = summary.get("usage", {})
    spent = ", ".join(f"{name} {value}" for name, value in usage.items())
    failed = summary.get("failures", 0)
    failures = (
        f"; {failed} failed calls recorded in predictions.jsonl (rerun to retry them)" if failed else ""
    )
    queries = summary.get("queries", 0)
    if summary.get("judge"):
        from irbgen.eval.qa.judge import judged_text

        scores += f"; {judged_text(summary['judge'])}"
    closed = summary.get("closed_book")
    if closed and closed.get("share") is not None:
        scores += (
            f"; closed-book correct {closed['correct']:,} of {closed['scored']:,} "
            f"({closed['by']} >= {closed['threshold']:g})"
        )
    hops = summary.get("hop_ablation")
    if hops:
        from irbgen.eval.qa.ablation import share_text

        scores += f"; needs every hop: {share_text(hops)}"
    return f"{method} with {model} on {queries:,} questions: {scores} [{spent}]{failures} -> {out}"


@click.command()
@click.argument("eval_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Report directory to write.")
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Seed of the randomization tests and bootstrap intervals.",
)
@click.option(
    "--resamples",
    type=click.IntRange(1, 1_000_000),
    default=10_000,
    show_default=True,
    help="Resamples of each randomization test and bootstrap interval (fewer: faster, coarser p-values).",
)
def report(eval_dirs: tuple[Path, ...], out: Path, force: bool, seed: int, resamples: int) -> None:
    """Markdown and HTML report with plots and paired significance tests from evaluation directories."""
    from irbgen.eval.report import write_report

    with reporting_errors():
        path = write_report(list(eval_dirs), out, force=force, seed=seed, resamples=resamples)
    click.echo(f"wrote a report of {len(eval_dirs)} evaluation(s) to {path}")


@click.command()
@click.argument("bench_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--out", type=click.Path(path_type=Path), help="Write compare.md, compare.json and a plot here."
)
@click.option("--force", is_flag=True, help="Replace --out if it holds irbgen's output of this kind.")
@click.option("--no-bm25", is_flag=True, help="Skip the BM25 nDCG@10 column.")
@click.option(
    "--closed-book",
    "closed_book",
    multiple=True,
    type=click.Path(path_type=Path),
    help="A closed-book evaluation of one of the benchmarks: show its closed-book share (repeatable).",
)
def compare(
    bench_dirs: tuple[Path, ...], out: Path | None, force: bool, no_bm25: bool, closed_book: tuple[Path, ...]
) -> None:
    """Benchmarks side by side: sizes, hops, difficulty, answers, overlap with evidence, BM25 nDCG@10."""
    from irbgen.eval.compare import compare_benchmarks, render_table

    with reporting_errors():
        result = compare_benchmarks(
            list(bench_dirs), out, force=force, bm25=not no_bm25, closed_book=list(closed_book)
        )
    click.echo(render_table(result))
