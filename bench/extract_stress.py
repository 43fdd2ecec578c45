"""Build on real web pages N times while busy processes load the CPUs; every run must exit 0, alike.

    python bench/extract_stress.py [--runs 10] [--busy 3] [--processes 1] [--dump DUMP] [--limit N]
                                   [--pages DIR ...]

The WARC it writes serves every URL cited by DUMP (default: the 196-page real Wikipedia export of
../shared/realdata/, 155 cited URLs) with a real HTML page from the folders given by --pages (default:
the Node.js, libxslt and valgrind manuals a Debian system installs under /usr/share/doc, the pages
their projects publish on the web), taken in sorted order and cycled, each with its citing passages
appended to its body. Each run is `irbgen build --source wikipedia-dump --offline --facts-only` on
that WARC (with `--limit N` if given), in a fresh folder, while BUSY processes spin. A run that
exceeds --run-timeout is killed (SIGTERM, then SIGKILL 10 s later) and counted as hung. The script
prints one line per run (exit code, seconds, hash of facts.jsonl, documents.jsonl and rejects.jsonl)
and exits 0 only if every run exited 0 with the same hash.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from citing_warc import cited_passages, write_warc

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DUMP = REPO.parent / "shared" / "realdata" / "enwiki-mixed-196.xml.bz2"
DEFAULT_PAGES = [Path("/usr/share/doc") / name for name in ("nodejs", "libxslt1-dev", "valgrind")]
LARGEST_PAGE = 1_000_000  # bytes; bigger manuals (a whole API in one file) are left out
OUTPUTS = ("facts.jsonl", "documents.jsonl", "rejects.jsonl")


def real_pages(folders: list[Path]) -> list[Path]:
    """The HTML files under FOLDERS, at most LARGEST_PAGE bytes, in sorted order."""
    found = [
        path
        for folder in folders
        for path in folder.rglob("*.html")
        if path.is_file() and path.stat().st_size <= LARGEST_PAGE
    ]
    return sorted(found)


def stress_warc(dump: Path, pages: list[Path], out: Path) -> int:
    """A WARC serving each cited URL of DUMP with a real page plus its citing passages; returns how many."""
    bodies = iter(pages * (1 + 10_000 // max(1, len(pages))))

    def page(url: str, passages: list[str]) -> bytes:
        body = next(bodies).read_bytes()
        cited = "".join(f"<p>{html.escape(passage)}</p>" for passage in passages).encode()
        end = body.rfind(b"</body>")
        return body[:end] + cited + body[end:] if end >= 0 else body + cited

    return write_warc(cited_passages(dump), out, page=page)


def output_hash(run: Path) -> str:
    """sha256 over the run's facts, documents and rejects (first 12 hex digits)."""
    digest = hashlib.sha256()
    for name in OUTPUTS:
        path = run / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"<missing>"))
    return digest.hexdigest()[:12]


def one_run(command: list[str], timeout: float, log: Path) -> tuple[int | str, float]:
    """(exit code or "hung", seconds) of one build."""
    started = time.monotonic()
    with open(log, "wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, cwd=REPO)
        try:
            code: int | str = process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            code = "hung"
    return code, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", type=int, default=3, help="busy-loop processes during the runs")
    parser.add_argument("--processes", type=int, default=1, help="the build's --processes")
    parser.add_argument("--dump", type=Path, default=DEFAULT_DUMP)
    parser.add_argument("--limit", type=int, default=None, help="the build's --limit (articles read)")
    parser.add_argument("--pages", type=Path, nargs="+", default=DEFAULT_PAGES)
    parser.add_argument("--run-timeout", type=float, default=600.0, help="seconds before a run is hung")
    parser.add_argument("--work", type=Path, default=None, help="folder for the WARC and the runs")
    args = parser.parse_args()
    if not args.dump.is_file():
        print(f"{args.dump}: dump not found", file=sys.stderr)
        return 2
    pages = real_pages([folder for folder in args.pages if folder.is_dir()])
    if not pages:
        print("no HTML pages found under --pages", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="extract-stress-"))
    work.mkdir(parents=True, exist_ok=True)
    warc = work / "cited.warc.gz"
    count = stress_warc(args.dump, pages, warc)
    print(f"{count} cited URLs served from {len(pages)} real pages in {warc}; {args.busy} busy processes")
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # the busy loops stop too
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    results: list[tuple[int | str, float, str]] = []
    try:
        for number in range(1, args.runs + 1):
            run = work / f"run-{number}"
            command = [
                sys.executable, "-m", "irbgen", "build", "--source", "wikipedia-dump", "--offline",
                "--facts-only", "--dump", str(args.dump), "--warc", str(warc),
                "--processes", str(args.processes), "--out", str(run),
            ]  # fmt: skip
            if args.limit is not None:
                command += ["--limit", str(args.limit)]
            code, seconds = one_run(command, args.run_timeout, work / f"run-{number}.log")
            digest = output_hash(run) if code == 0 else "-"
            results.append((code, seconds, digest))
            print(f"run {number:2d}: exit {code}  {seconds:6.1f} s  outputs {digest}", flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    failed = [result for result in results if result[0] != 0]
    hashes = {result[2] for result in results if result[0] == 0}
    passed = len(results) - len(failed)
    print(f"{passed} of {len(results)} runs exited 0; {len(hashes)} distinct output hash(es)")
    if failed:
        print(f"logs of the failed runs: {work}/run-N.log", file=sys.stderr)
    return 0 if not failed and len(hashes) == 1 else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONPATH", str(REPO))
    sys.exit(main())
