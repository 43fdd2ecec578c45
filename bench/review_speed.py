"""How fast `irbgen review` opens a big benchmark and renders one sample page.

Writes a synthetic benchmark (default 100,000 samples over 100,000 documents of about 1.5 KB), builds the
byte-offset index once, then requests random sample pages through the Starlette app in-process (routing,
one seek per record, facts, passages and HTML; no socket). Prints the index time and, per run, the
median and 95th percentile of page times, and the median over runs.

    python bench/review_speed.py --samples 100000 --out /tmp/review-100k --runs 5 --pages 200
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import time
from pathlib import Path

from starlette.testclient import TestClient

from irbgen.benchmark import read_manifest, write_benchmark
from irbgen.review.app import Session, create_app
from irbgen.review.index import BenchmarkIndex
from irbgen.review.page import sample_path
from irbgen.schema import Attributes, Document, Hop, Manifest, Provenance, Sample

WORDS = (
    "harbour bridge council river estuary census population survey festival orchid lake basin moraine "
    "valley station railway museum archive mayor district island coast tower market school"
).split()


def documents(count: int, rng: random.Random):
    """COUNT documents of twelve sentences each (about 1.5 KB)."""
    for n in range(count):
        sentences = [
            f"The {rng.choice(WORDS)} of Place{n} had {rng.randint(10, 99_999):,} {rng.choice(WORDS)}s in "
            f"{rng.randint(1900, 2024)} according to the {rng.choice(WORDS)} {rng.choice(WORDS)} report."
            for _ in range(12)
        ]
        yield Document(
            id=f"d{n:06d}",
            title=f"Place{n} {rng.choice(WORDS)}",
            text=" ".join(sentences),
            metadata={"url": f"https://example.org/{n}"},
        )


def samples(count: int, documents_count: int, rng: random.Random):
    """COUNT two-hop samples, each citing two documents and resting on two keypoints."""
    for n in range(count):
        first, second = rng.sample(range(documents_count), 2)
        keypoints = [
            f"Place{first} had {rng.randint(10, 99_999):,} {rng.choice(WORDS)}s in "
            f"{rng.randint(1900, 2024)}.",
            f"Place{second} is the {rng.choice(WORDS)} of Place{first}.",
        ]
        yield Sample(
            id=f"s{n:06d}",
            question=f"How many {rng.choice(WORDS)}s did the {rng.choice(WORDS)} of Place{second} have?",
            answers=[f"{rng.randint(10, 99_999):,}"],
            hops=2,
            source="wikipedia",
            evidence=[f"d{first:06d}", f"d{second:06d}"],
            chain=[
                Hop(index=0, operation="lookup", question=f"Place{second}?", answers=[f"Place{first}"]),
                Hop(index=1, operation="lookup", question="How many?", answers=["1"]),
            ],
            attributes=Attributes(question_type="multi_hop", freshness="2024", topic="Geography"),
            provenance=Provenance(generator="bench", keypoints=keypoints),
        )


def write(out: Path, count: int, seed: int) -> None:
    rng = random.Random(seed)
    manifest = Manifest(tool_version="0", source="wikipedia", name=out.name, command="bench/review_speed.py")
    write_benchmark(out, documents(count, rng), samples(count, count, rng), manifest)


def page_times(http: TestClient, sample_ids: list[str], label: str) -> float:
    """Request each sample page, print the median, 95th percentile and max in ms, return the median."""
    times = []
    for sample_id in sample_ids:
        started = time.perf_counter()
        reply = http.get(sample_path(sample_id))
        times.append((time.perf_counter() - started) * 1000)
        if reply.status_code != 200:
            raise SystemExit(f"{sample_id}: HTTP {reply.status_code}")
    median, p95 = statistics.median(times), statistics.quantiles(times, n=20)[-1]
    print(f"{label}: {len(times)} pages, median {median:.1f} ms, p95 {p95:.1f} ms, max {max(times):.1f} ms")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--out", type=Path, required=True, help="Benchmark to write (reused if it exists).")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=200, help="Random sample pages per run.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    if not (args.out / "samples.jsonl").is_file():
        started = time.perf_counter()
        write(args.out, args.samples, args.seed)
        print(f"wrote {args.samples:,} samples to {args.out} in {time.perf_counter() - started:.1f}s")
    started = time.perf_counter()
    index = BenchmarkIndex.build(args.out)
    indexed = time.perf_counter() - started
    session = Session.open(index, read_manifest(args.out), "bench", None, 0)
    http = TestClient(create_app(session), base_url="http://127.0.0.1")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"indexed {len(index.samples):,} samples and {len(index.documents):,} documents in {indexed:.2f}s")

    rng = random.Random(args.seed)
    medians = [
        page_times(http, rng.sample(session.order, args.pages), f"run {run}")
        for run in range(1, args.runs + 1)
    ]
    # The worst case for "next unjudged": every sample but the last judged, so each page scans them all.
    session.complete = set(session.order[:-1])
    judged = page_times(http, rng.sample(session.order, args.pages), "all but one judged")
    summary = {
        "samples": len(index.samples),
        "documents": len(index.documents),
        "index_seconds": round(indexed, 2),
        "peak_rss_mib": round(rss),
        "page_ms_median_of_run_medians": round(statistics.median(medians), 1),
        "page_ms_all_but_one_judged": round(judged, 1),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
