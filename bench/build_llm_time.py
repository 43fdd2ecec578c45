"""LLM time of `irbgen build --source wikipedia-dump` against a loopback server with fixed latency.

    python bench/build_llm_time.py --copies 10 --latency 0.2 --concurrency 32 --runs 3

Makes a dump of COPIES renamed copies of the sample articles, runs the build with `--llm openai`
against the loopback OpenAI-compatible server (each reply held LATENCY seconds), cited pages read
offline from the sample WARC, and compares each LLM stage's wall time with the ideal
calls x latency / concurrency. Goal: within 1.2x. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from irbgen.testing.openai_server import OpenAIStubServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml"
WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"


def make_dump(path: Path, copies: int) -> None:
    """COPIES copies of every sample page, with new ids and titles."""
    text = SAMPLE.read_text(encoding="utf-8")
    head, rest = text.split("<page>", 1)
    pages = ["<page>" + page for page in rest.split("<page>")]
    pages[-1] = pages[-1].replace("</mediawiki>", "")
    out = [head]
    for copy in range(copies):
        suffix = "".join(chr(ord("a") + int(digit)) for digit in str(copy))
        for page in pages:
            # Rename the subject everywhere so every copy asks the model something new.
            subject = re.search(r"<title>(?:[^<:]*:)?([A-Z][a-z]+)", page)
            if subject:
                page = re.sub(rf"\b{subject.group(1)}\b", subject.group(1) + suffix, page)
            page = re.sub(r"<title>(.*?)</title>", lambda m, c=copy: f"<title>{m.group(1)} {c}</title>", page)
            page = re.sub(
                r"<id>(\d+)</id>", lambda m, c=copy: f"<id>{int(m.group(1)) + 100000 * (c + 1)}</id>", page
            )
            out.append(page)
    out.append("</mediawiki>\n")
    path.write_text("".join(out), encoding="utf-8")


def reply(request: dict) -> str:
    """Keypoint: the piece, tagged with the article title so every copy's grounding prompt differs."""
    text = request["messages"][-1]["content"]
    if "Piece to rewrite:" in text:
        title = text.split("Article title:", 1)[1].split("\n", 1)[0].strip()
        return json.dumps({"keypoint": f"{text.split('Piece to rewrite:', 1)[1].strip()} ({title})"})
    return json.dumps({"label": "supported", "evidence": ""})


def one_run(dump: Path, latency: float, concurrency: int, work: Path) -> dict:
    with OpenAIStubServer(responder=reply, latency=latency) as server:
        out = work / f"run-{time.monotonic_ns()}"
        command = [
            sys.executable,
            "-m",
            "irbgen",
            "build",
            "--source",
            "wikipedia-dump",
            "--dump",
            str(dump),
            "--warc",
            str(WARC),
            "--offline",
            "--llm",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "stub",
            "--llm-concurrency",
            str(concurrency),
            "--out",
            str(out),
        ]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env={"OPENAI_API_KEY": "unused", "PATH": ""})
        wall = time.perf_counter() - started
        requests = server.requests
    manifest = json.loads((out / "manifest.json").read_text())
    stages = manifest["stages"]
    result = {"wall": wall, "requests": requests}
    usage = manifest["llm_usage"]["stages"]
    for name in ("keypoints", "grounding"):
        calls = usage[name]["calls"]  # HTTP requests made; cache hits cost no latency
        ideal = calls * latency / concurrency
        result[name] = {
            "calls": calls,
            "seconds": stages[name]["wall_seconds"],
            "ideal": ideal,
            "cached": usage[name]["cached"],
            "rounds": -(-calls // concurrency) * latency,
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        dump = work / "dump.xml"
        make_dump(dump, args.copies)
        runs = [one_run(dump, args.latency, args.concurrency, work) for _ in range(args.runs)]
    print(
        f"dump: {args.copies} copies of the sample pages; latency {args.latency} s; "
        f"concurrency {args.concurrency}"
    )
    print("| stage | HTTP calls | cache hits | median seconds | ideal seconds | ratio | goal <= 1.2 |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name in ("keypoints", "grounding"):
        seconds = statistics.median(run[name]["seconds"] for run in runs)
        calls, ideal, cached = runs[0][name]["calls"], runs[0][name]["ideal"], runs[0][name]["cached"]
        ratio = seconds / ideal
        print(
            f"| {name} | {calls} | {cached} | {seconds:.2f} | {ideal:.2f} | {ratio:.2f} | "
            f"{'PASS' if ratio <= 1.2 else 'FAIL'} |"
        )
    print(f"whole build, median wall: {statistics.median(run['wall'] for run in runs):.2f} s")


if __name__ == "__main__":
    main()
