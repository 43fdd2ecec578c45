#!/usr/bin/env python3
"""Time `evaluate_retrieval` with BM25 end to end: 10,000 queries over 100,000 documents.

The benchmark is made once (not timed) with

    irbgen phantom --n 100000 --seed 1 --questions-per-template 200 --out BENCH --quiet

which gives 50 templates x 200 = 10,000 questions over 100,000 articles. Each run is a fresh Python
process pinned to the first two CPUs that calls

    evaluate_retrieval(BENCH, OUT, retriever="bm25", k=10, force=True)

(read + chunk, index, search while a worker process validates; then read qrels, trec_eval measures,
rows, write). The child reports its stage times (from the `irbgen.eval.retrieval` log), its own wall
time from before the irbgen import to after the write, and its peak RSS plus its validation worker's
(an upper bound on the two together); the parent also times the whole process. The
result passes when the median process wall time is under the limit (60 s).

Examples
--------
    python bench/retrieval_speed.py --runs 3 --results /tmp/retrieval.md   # section 3 of bench/RESULTS.md
    python bench/retrieval_speed.py --bench /tmp/ph100k --runs 1
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SELF, CHILDREN = resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN  # this process; its largest worker
DEFAULT_BENCH = Path(tempfile.gettempdir()) / "irbgen_retrieval_bench" / "ph100k"


def child(bench: Path, out: Path, cpus: int) -> None:
    """One timed evaluation in this process; prints a JSON line with the numbers."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])
    start = time.perf_counter()
    import logging

    from irbgen.eval.retrieval import evaluate_retrieval

    stages: dict[str, float] = {}

    class Stages(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("retrieval stage ") and isinstance(record.args, tuple):
                stages[str(record.args[0])] = float(record.args[1])

    logger = logging.getLogger("irbgen.eval.retrieval")
    logger.setLevel(logging.INFO)
    logger.addHandler(Stages())
    imported = time.perf_counter()
    metrics = evaluate_retrieval(bench, out, retriever="bm25", k=10, force=True)
    end = time.perf_counter()
    result = {
        "import_s": imported - start,
        "evaluate_s": end - imported,
        "child_wall_s": end - start,
        "stages_s": stages,
        "peak_rss_mib": sum(resource.getrusage(who).ru_maxrss for who in (SELF, CHILDREN)) / 1024,
        "queries": metrics["queries"],
        "overall": metrics["overall"],
        "cpus": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }
    print(json.dumps(result))


def make_benchmark(bench: Path, n: int, per_template: int) -> float:
    """Generate the phantom benchmark unless it exists; returns the seconds it took (0 if it existed)."""
    if (bench / "manifest.json").is_file():
        return 0.0
    bench.parent.mkdir(parents=True, exist_ok=True)
    command = ["irbgen", "phantom", "--n", str(n), "--seed", "1"]
    command += ["--questions-per-template", str(per_template), "--out", str(bench), "--force", "--quiet"]
    start = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - start


def machine() -> dict[str, Any]:
    """CPU model, CPU count, memory, OS, Python, load average."""
    info: dict[str, Any] = {"cpus": os.cpu_count(), "python": platform.python_version()}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        names = [
            line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line
        ]
        info["cpu_model"] = names[0] if names else "unknown"
    meminfo = Path("/proc/meminfo")
    if meminfo.is_file():
        total = next(line for line in meminfo.read_text().splitlines() if line.startswith("MemTotal:"))
        info["mem_gib"] = round(int(total.split()[1]) / 1024 / 1024, 1)
    info["os"] = platform.platform()
    info["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
    import bm25s
    import ir_measures
    import numpy

    info["versions"] = {
        "bm25s": bm25s.__version__,
        "ir_measures": ir_measures.__version__,
        "numpy": numpy.__version__,
    }
    info["numba"] = _installed("numba")
    info["PyStemmer"] = _installed("Stemmer")
    return info


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def counts(bench: Path) -> dict[str, int]:
    """Documents, queries and qrels of the benchmark, from its manifest."""
    manifest = json.loads((bench / "manifest.json").read_text())
    return {key: manifest["counts"][key] for key in ("documents", "samples", "qrels")}


def markdown(summary: dict[str, Any]) -> str:
    """The Markdown section for bench/RESULTS.md from the summary."""
    m, runs, med = summary["machine"], summary["runs"], summary["median"]
    verdict = "PASS" if summary["passed"] else "FAIL"
    stage_names = list(runs[0]["stages_s"])
    lines = [
        "# irbgen eval retrieval (BM25): speed and memory",
        "",
        f"Measured {summary['date']} with `bench/retrieval_speed.py`. **{verdict}**: median end-to-end "
        f"{med['process_wall_s']:.1f} s for {summary['counts']['samples']:,} queries over "
        f"{summary['counts']['documents']:,} documents (limit {summary['limit_s']:.0f} s, 2 CPUs).",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        f"| CPU | {m.get('cpu_model', 'unknown')}, {m['cpus']} CPUs visible, "
        f"runs pinned to {summary['cpus']} |",
        f"| RAM | {m.get('mem_gib', '?')} GiB |",
        f"| OS | {m['os']} |",
        f"| Python | {m['python']}; bm25s {m['versions']['bm25s']}, "
        f"ir_measures {m['versions']['ir_measures']}, "
        f"numpy {m['versions']['numpy']}; numba {'installed' if m['numba'] else 'not installed'}, "
        f"PyStemmer {'installed' if m['PyStemmer'] else 'not installed'} |",
        f"| load average before the runs | {', '.join(str(x) for x in m['load_average_before'])} "
        "(other work shared the machine) |",
        "",
        "## Commands",
        "",
        "```",
        summary["make_command"],
        f"python bench/retrieval_speed.py --bench {summary['bench']} --runs {len(runs)} "
        "--results /tmp/retrieval.md",
        "```",
        "",
        "Each run is a fresh process pinned to two CPUs that imports irbgen and calls",
        '`evaluate_retrieval(BENCH, OUT, retriever="bm25", k=10, force=True)`: validate the benchmark,',
        "chunk (512 tokens, overlap 32) and index the corpus, search every query, compute nDCG@10, R@10,",
        "RR@10 and AP with pytrec_eval, write config.json, run.trec, per_query.jsonl and metrics.json.",
        "",
        f"Benchmark: {summary['counts']['documents']:,} documents, {summary['counts']['samples']:,} queries, "
        f"{summary['counts']['qrels']:,} qrels.",
        "",
        "## Results",
        "",
        "| run | process wall | in-process wall | import | " + " | ".join(stage_names) + " | peak RSS |",
        "|---:|---:|---:|---:|" + "---:|" * len(stage_names) + "---:|",
    ]
    for i, run in enumerate(runs, 1):
        stages = " | ".join(f"{run['stages_s'][name]:.2f} s" for name in stage_names)
        lines.append(
            f"| {i} | {run['process_wall_s']:.2f} s | {run['child_wall_s']:.2f} s | {run['import_s']:.2f} s "
            f"| {stages} | {run['peak_rss_mib']:,.0f} MiB |"
        )
    stages = " | ".join(f"**{med['stages_s'][name]:.2f} s**" for name in stage_names)
    lines.append(
        f"| median | **{med['process_wall_s']:.2f} s** | {med['child_wall_s']:.2f} s "
        f"| {med['import_s']:.2f} s | {stages} | {med['peak_rss_mib']:,.0f} MiB |"
    )
    overall = ", ".join(f"{name} {value:.4f}" for name, value in runs[0]["overall"].items())
    same = all(run["overall"] == runs[0]["overall"] for run in runs)
    lines += [
        "",
        f"Scores ({'identical in every run' if same else 'DIFFERENT between runs'}): {overall}.",
        "",
    ]
    total = sum(med["stages_s"].values())
    shares = sorted(med["stages_s"].items(), key=lambda item: -item[1])
    lines += [
        "## What dominates",
        "",
        "Median share of the in-process stage time: "
        + ", ".join(f"{name} {seconds / total:.0%}" for name, seconds in shares)
        + ".",
        "",
        "- validate is `irbgen.validation.validate_benchmark`: it parses every file (samples.jsonl is",
        "  the largest) with pydantic before anything else runs.",
        "- read = read corpus.jsonl (pydantic) + chunk; index = bm25s tokenize + bm25s index (the score",
        "  matrix, built once; the log line `bm25 tokenise ..., score matrix ...` splits the two).",
        "- search scores every chunk for every query with bm25s (`get_scores_from_ids`) and keeps the",
        "  exact top k documents: a lower bound for the k-th best score from every stride-th score, then",
        "  one `np.partition` and the id tie-break over the documents at or above it.",
        "- read qrels = qrels/test.tsv; measure = pytrec_eval; read samples = samples.jsonl again for",
        "  the per-attribute rows.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bench", type=Path, default=DEFAULT_BENCH, help="Benchmark directory (made if missing)."
    )
    parser.add_argument(
        "--n", type=int, default=100_000, help="People (documents) when making the benchmark."
    )
    parser.add_argument("--questions-per-template", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=2, help="CPUs each run is pinned to.")
    parser.add_argument("--limit", type=float, default=60.0, help="Seconds the median run must stay under.")
    parser.add_argument("--results", type=Path, help="Write the markdown report here.")
    parser.add_argument("--child", nargs=2, type=Path, metavar=("BENCH", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], args.cpus)
        return 0

    made = make_benchmark(args.bench, args.n, args.questions_per_template)
    if made:
        print(f"made {args.bench} in {made:.1f} s", file=sys.stderr)
    bench_counts = counts(args.bench)
    if bench_counts["samples"] < 10_000:
        print(f"only {bench_counts['samples']} queries; raise --questions-per-template", file=sys.stderr)
        return 1
    info = machine()
    out_root = Path(tempfile.mkdtemp(prefix="irbgen_retrieval_out_"))
    runs = []
    try:
        for i in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--cpus",
                    str(args.cpus),
                    "--child",
                    str(args.bench),
                    str(out_root / "eval"),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - start
            run = json.loads(done.stdout.strip().splitlines()[-1]) | {"process_wall_s": wall}
            runs.append(run)
            print(
                f"run {i + 1}: {wall:.2f} s, stages {run['stages_s']}, {run['peak_rss_mib']:.0f} MiB",
                file=sys.stderr,
            )
    finally:
        shutil.rmtree(out_root, ignore_errors=True)
    keys = ("process_wall_s", "child_wall_s", "import_s", "evaluate_s", "peak_rss_mib")
    median = {key: statistics.median(run[key] for run in runs) for key in keys}
    median["stages_s"] = {
        name: statistics.median(run["stages_s"][name] for run in runs) for name in runs[0]["stages_s"]
    }
    summary = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "bench": str(args.bench),
        "make_command": f"irbgen phantom --n {args.n} --seed 1 --questions-per-template "
        f"{args.questions_per_template} --out {args.bench} --quiet",
        "counts": bench_counts,
        "machine": info,
        "cpus": args.cpus,
        "limit_s": args.limit,
        "runs": runs,
        "median": median,
        "passed": median["process_wall_s"] < args.limit,
    }
    print(json.dumps(summary, indent=2))
    if args.results:
        args.results.write_text(markdown(summary))
    return 0 if summary["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
