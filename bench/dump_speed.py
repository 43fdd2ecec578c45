#!/usr/bin/env python3
"""Speed of the Wikipedia dump readers and of citing-segment extraction, against `bzip2 -dc`.

Builds a synthetic pages-articles dump of about --mb MB of XML by varying the sample articles in
data/samples/wiki (names replaced by generated words, numbers re-drawn, so no two pages are equal),
writes it as .xml.bz2 and as a multistream .bz2 with its index (100 pages per stream), then measures,
each in a fresh child process (one core each):

    bzip2      `bzip2 -dc FILE > /dev/null`                      (best of 3)
    read       read_xml_dump(FILE.xml.bz2), every Page            (pages/s, uncompressed MB/s)
    read-ms    read_xml_dump(multistream, shard 0 of 1)
    shards2    read_xml_dump(multistream, k, 2) for k = 0, 1 in two processes at once (wall time)
    wikitext   read + CitingSegments(check_complete=False)       (no spaCy: parse, refs, sentences)
    extract    read + CitingSegments() (spaCy parse of candidate segments)
    stage-read      the build's path: run_stage(ReadPages) over the .bz2 with its checkpoint
    stage-segments  stage-read, then run_stage(CitingSegments) over its checkpoint (--processes)

    python bench/dump_speed.py --mb 20 --json bench/dump_speed.json
    python bench/dump_speed.py --mb 80 --only stage-read,stage-segments --processes 2
"""

from __future__ import annotations

import argparse
import bz2
import importlib.util
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples" / "wiki"
NAMES = [
    "Vellmouth", "Vellshire", "Vell", "Orrin", "Tarnby", "Tarn", "Skarra", "Marrow", "Ilse", "Halden", "Rusk",
    "Brightwater", "Kelpie", "Selkie", "Hollin", "Northmere", "Copse", "Fennick", "Hale", "Pell", "Brook",
]  # fmt: skip
SYLLABLES = "ka lo mer sin dra vel tor en bru ash fen gal ri mo ut hes par quin do lev".split()


def _samples_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", SAMPLES / "make_samples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _vary(text: str, rng: random.Random) -> str:
    """The same article about other invented things: names swapped, numbers re-drawn."""
    for name in NAMES:
        new = _word(rng)
        text = text.replace(name, new).replace(name.lower(), new.lower())

    def number(m: re.Match[str]) -> str:
        digits = m.group()
        if len(digits) == 4 and digits[:2] in ("19", "20"):
            return str(rng.randint(1800, 2025))
        return str(rng.randint(10 ** (len(digits) - 1) if len(digits) > 1 else 0, 10 ** len(digits) - 1))

    return re.sub(r"\d+", number, text)


def make_dump(workdir: Path, megabytes: float, seed: int = 0) -> dict[str, Any]:
    """Write bench.xml.bz2 and bench-multistream.xml.bz2 (+ index) of about `megabytes` MB of XML."""
    samples = _samples_module()
    rng = random.Random(seed)
    base = samples.ARTICLES
    pages: list[str] = []
    titles: list[tuple[int, str]] = []
    size = len(samples.HEADER)
    page_id = 100_000
    while size < megabytes * 1e6:
        template = base[len(pages) % len(base)]
        page_id += 1
        article = samples.Article(
            template.file, page_id, f"{template.title} {_word(rng)}", template.timestamp, template.created,
            ns=template.ns, redirect=template.redirect,
        )  # fmt: skip
        text = _vary(article.text(), rng)
        article.text = lambda text=text: text  # type: ignore[method-assign]
        xml = samples.page_xml(article)
        pages.append(xml)
        titles.append((page_id, article.title))
        size += len(xml.encode("utf-8"))
    data = (samples.HEADER + "".join(pages) + samples.FOOTER).encode("utf-8")
    (workdir / "bench.xml").write_bytes(data)
    (workdir / "bench.xml.bz2").write_bytes(bz2.compress(data, 9))
    index: list[str] = []
    with (workdir / "bench-multistream.xml.bz2").open("wb") as f:
        f.write(bz2.compress(samples.HEADER.encode("utf-8"), 9))
        for i in range(0, len(pages), 100):
            offset = f.tell()
            index.extend(f"{offset}:{pid}:{title}" for pid, title in titles[i : i + 100])
            f.write(bz2.compress("".join(pages[i : i + 100]).encode("utf-8"), 9))
        f.write(bz2.compress(samples.FOOTER.encode("utf-8"), 9))
    (workdir / "bench-multistream-index.txt").write_text("\n".join(index) + "\n", encoding="utf-8")
    return {
        "pages": len(pages),
        "xml_bytes": len(data),
        "bz2_bytes": (workdir / "bench.xml.bz2").stat().st_size,
        "multistream_bytes": (workdir / "bench-multistream.xml.bz2").stat().st_size,
    }


def measure(kind: str, workdir: Path, shard: int = 0, shards: int = 1) -> dict[str, Any]:
    """One measurement in this process; returns counts, seconds and peak RSS."""
    from irbgen.records import Reject
    from irbgen.wikipedia.dumps import ReadStats, read_xml_dump
    from irbgen.wikipedia.records import Page, Segment
    from irbgen.wikipedia.stages import CitingSegments, load_parser

    path = workdir / ("bench-multistream.xml.bz2" if kind in ("read-ms", "shard") else "bench.xml.bz2")
    stage = None
    if kind in ("wikitext", "extract"):
        stage = CitingSegments(check_complete=kind == "extract", batch_size=256)
        if kind == "extract":
            load_parser(stage.model)  # model loading is not part of the throughput
    stats = ReadStats()
    counts = {"segments": 0, "rejects": 0}
    start = time.perf_counter()
    for page in read_xml_dump(path, shard, shards, stats=stats):
        if stage is None or not isinstance(page, Page):
            continue
        for record in stage.process(page, None):
            if isinstance(record, Segment):
                counts["segments"] += 1
            elif isinstance(record, Reject):
                counts["rejects"] += 1
    seconds = time.perf_counter() - start
    if kind == "extract":  # how much text went through spaCy (counted after the clock stopped)
        counts.update(_parsed_volume(workdir))
    return {
        "kind": kind,
        "seconds": seconds,
        "pages": stats.pages,
        "seen": stats.seen,
        "skipped": dict(stats.skipped),
        **counts,
        "max_rss_mib": peak_rss_mib(),
    }


def measure_stages(workdir: Path, segments: bool, processes: int) -> dict[str, Any]:
    """The build's read (and segment) stages through the runner, in a fresh run directory."""
    from irbgen.pipeline.runner import run_stage
    from irbgen.pipeline.stage import StageContext
    from irbgen.wikipedia.stages import CitingSegments, DumpShard, ReadPages, load_parser

    out: dict[str, Any] = {"kind": "stage-segments" if segments else "stage-read", "processes": processes}
    with tempfile.TemporaryDirectory(prefix="irbgen-dump-stage-") as run_dir:
        context = StageContext(run_dir=Path(run_dir))
        shard = DumpShard(path=str(workdir / "bench.xml.bz2"), shard=0, shards=1)
        start = time.perf_counter()
        read = run_stage(ReadPages(), [shard], context)
        out.update(read_seconds=time.perf_counter() - start, pages=read.totals.outputs)
        out["read_max_rss_mib"] = peak_rss_mib()
        out["read_checkpoint_bytes"] = (Path(run_dir) / "stages" / "read" / "outputs.jsonl").stat().st_size
        if segments:
            stage = CitingSegments()
            load_parser(stage.model)  # model loading is not part of the throughput
            start = time.perf_counter()
            result = run_stage(stage, read.outputs(), context, processes=processes)
            out.update(segments_seconds=time.perf_counter() - start, segments=result.totals.outputs)
            out["segments_rejects"] = sum(result.totals.rejects.values())
    out["max_rss_mib"] = peak_rss_mib()
    out["children_max_rss_mib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return out


def peak_rss_mib() -> float:
    """This process's peak RSS (VmHWM; ru_maxrss would include the parent's, inherited across exec)."""
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _parsed_volume(workdir: Path) -> dict[str, int]:
    from irbgen.wikipedia.dumps import read_xml_dump
    from irbgen.wikipedia.wikitext import parse_article, split_segments

    segments = tokens = 0
    for page in read_xml_dump(workdir / "bench.xml.bz2"):
        for sentence in parse_article(page.wikitext).sentences:  # type: ignore[union-attr]
            for segment in split_segments(sentence):
                if segment.citations:
                    segments += 1
                    tokens += len(segment.text.split())
    return {"parsed_segments": segments, "parsed_words": tokens}


def child(
    kind: str, workdir: Path, shard: int = 0, shards: int = 1, processes: int = 1
) -> subprocess.Popen[str]:
    cmd = [sys.executable, __file__, "--child", kind, "--workdir", str(workdir), "--shard", str(shard)]
    cmd += ["--processes", str(processes)]
    return subprocess.Popen([*cmd, "--shards", str(shards)], stdout=subprocess.PIPE, text=True)


def run_child(kind: str, workdir: Path, processes: int = 1) -> dict[str, Any]:
    proc = child(kind, workdir, processes=processes)
    out, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"child {kind} failed with {proc.returncode}")
    return json.loads(out)


def bzip2_seconds(path: Path, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        with open(os.devnull, "wb") as null:
            subprocess.run(["bzip2", "-dc", str(path)], stdout=null, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        cpu = next(
            line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")
        )
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    import mwparserfromhell
    import mwxml
    import spacy

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": commit.stdout.strip(),
        "mwxml": getattr(mwxml, "__version__", "?"),
        "mwparserfromhell": mwparserfromhell.__version__,
        "spacy": spacy.__version__,
        "bzip2": subprocess.run(["bzip2", "--help"], capture_output=True, text=True).stderr.splitlines()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=float, default=20.0, help="uncompressed XML size to generate")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where to write the dump (default: a temp dir)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--shard", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--shards", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, default=1, help="processes of the stage-segments run")
    parser.add_argument("--only", default=None, help="comma-separated kinds to run (e.g. stage-read)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each --only kind (the median is kept)")
    args = parser.parse_args()
    if args.child in ("stage-read", "stage-segments"):
        result = measure_stages(args.workdir, args.child == "stage-segments", args.processes)
        print(json.dumps(result))
        return
    if args.child:
        print(json.dumps(measure(args.child, args.workdir, args.shard, args.shards)))
        return
    with tempfile.TemporaryDirectory(prefix="irbgen-dump-bench-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        results: dict[str, Any] = {"machine": machine()}
        if (workdir / "bench.xml.bz2").exists() and args.workdir:
            results["dump"] = {"reused": str(workdir)}
        else:
            results["dump"] = make_dump(workdir, args.mb)
        if args.only:
            for kind in args.only.split(","):
                runs = [run_child(kind, workdir, args.processes) for _ in range(args.runs)]
                seconds = "segments_seconds" if kind == "stage-segments" else "read_seconds"
                runs.sort(key=lambda run: run.get(seconds, run.get("seconds", 0)))
                results[kind] = {**runs[len(runs) // 2], "runs": runs}
                print(kind, json.dumps(results[kind]["runs"]), file=sys.stderr)
            if args.json:
                args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
            return
        results["bzip2_seconds"] = bzip2_seconds(workdir / "bench.xml.bz2")
        results["bzip2_multistream_seconds"] = bzip2_seconds(workdir / "bench-multistream.xml.bz2")
        for kind in ("read", "read-ms", "wikitext", "extract"):
            results[kind] = run_child(kind, workdir)
            print(kind, results[kind], file=sys.stderr)
        start = time.perf_counter()
        procs = [child("shard", workdir, k, 2) for k in range(2)]
        shard_results = [json.loads(p.communicate()[0]) for p in procs]
        results["shards2"] = {"wall_seconds": time.perf_counter() - start, "shards": shard_results}
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def report(r: dict[str, Any]) -> None:
    """Print the numbers as a markdown table."""
    mb = r["dump"]["xml_bytes"] / 1e6
    raw = r["bzip2_seconds"]
    print(f"dump: {r['dump']['pages']} pages, {mb:.1f} MB XML, {r['dump']['bz2_bytes'] / 1e6:.2f} MB bz2")
    print(f"bzip2 -dc: {raw:.2f} s ({mb / raw:.1f} MB/s of XML)\n")
    print("| run | seconds | pages/s | XML MB/s | segments/s | speed / bzip2 -dc | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("read", "read-ms", "wikitext", "extract"):
        m = r[kind]
        secs = m["seconds"]
        segs = f"{m['segments'] / secs:.0f}" if kind in ("wikitext", "extract") else ""
        print(
            f"| {kind} | {secs:.2f} | {m['seen'] / secs:.0f} | {mb / secs:.1f} | {segs} "
            f"| {raw / secs:.2f} | {m['max_rss_mib']:.0f} |"
        )
    wall = max(m["seconds"] for m in r["shards2"]["shards"])  # both ran at once; process start-up excluded
    rss = max(m["max_rss_mib"] for m in r["shards2"]["shards"])
    print(
        f"| read-ms, 2 shards in 2 processes | {wall:.2f} | {r['dump']['pages'] / wall:.0f} "
        f"| {mb / wall:.1f} | | {raw / wall:.2f} | {rss:.0f} each |"
    )


if __name__ == "__main__":
    main()
