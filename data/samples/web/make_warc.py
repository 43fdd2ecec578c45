"""Regenerate cited-pages.warc.gz from manifest.json and pages/ (byte-identical output on every run).

    python data/samples/web/make_warc.py [--check]

manifest.json lists one entry per URL: a 200 with its page file and Content-Type (optionally stored
gzip-encoded), a 404 with an error page, or a 301 with its Location. Date headers are fixed (a base time
plus 13 seconds per entry), record ids are uuid5 of the URL, and gzip members carry no timestamp, so the
WARC only changes when a page or the manifest does. `--check` exits 1 if the committed WARC is stale or
a URL of ../wiki/cited-urls.txt has no entry.
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx

from irbgen.web.fetch import USER_AGENT, normalize_url
from irbgen.web.warc import WarcWriter, format_warc_date, new_record_id

HERE = Path(__file__).resolve().parent
WARC_NAME = "cited-pages.warc.gz"
BASE_TIME = datetime(2025, 7, 7, 9, 0, 0, tzinfo=UTC)
STEP = timedelta(seconds=13)
REASONS = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}


def build(out: Path) -> None:
    """Write the sample WARC to out."""
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    writer = WarcWriter(out.parent, filename=out.name, warcinfo_date=format_warc_date(BASE_TIME))
    for number, entry in enumerate(manifest):
        url = normalize_url(entry["url"])
        moment = BASE_TIME + STEP * (number + 1)
        status = int(entry["status"])
        headers = [("Date", format_datetime(moment, usegmt=True)), ("Server", "nginx")]
        body = b""
        if "file" in entry:
            body = (HERE / entry["file"]).read_bytes()
            headers.append(("Content-Type", entry["content_type"]))
            if entry.get("content_encoding") == "gzip":
                body = gzip.compress(body, mtime=0)
                headers.append(("Content-Encoding", "gzip"))
                headers.append(("Vary", "Accept-Encoding"))
        if "location" in entry:
            headers.append(("Location", entry["location"]))
        headers.append(("Content-Length", str(len(body))))
        parsed = httpx.URL(url)
        writer.write_exchange(
            url,
            request_line=f"GET {parsed.raw_path.decode('ascii')} HTTP/1.1",
            request_headers=[
                ("Host", parsed.netloc.decode("ascii")),
                ("User-Agent", USER_AGENT),
                ("Accept-Encoding", "gzip, deflate"),
            ],
            status=status,
            reason_phrase=REASONS.get(status, ""),
            http_version="HTTP/1.1",
            response_headers=headers,
            body=body,
            warc_date=format_warc_date(moment),
            record_id=new_record_id(url),
        )
    writer.close()


def missing_urls() -> list[str]:
    """Cited URLs (from ../wiki/cited-urls.txt) with no manifest entry."""
    cited = HERE.parent / "wiki" / "cited-urls.txt"
    if not cited.exists():
        return []
    manifest = {normalize_url(e["url"]) for e in json.loads((HERE / "manifest.json").read_text("utf-8"))}
    urls = [line.strip() for line in cited.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [u for u in urls if normalize_url(u) not in manifest]


def main(argv: list[str]) -> int:
    """Build (or with --check, verify) the sample WARC."""
    missing = missing_urls()
    for url in missing:
        print(f"{HERE / 'manifest.json'}: no entry for cited URL {url}", file=sys.stderr)
    target = HERE / WARC_NAME
    if "--check" in argv:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / WARC_NAME
            build(fresh)
            stale = not target.exists() or fresh.read_bytes() != target.read_bytes()
        if stale:
            print(f"{target}: out of date; run python {Path(__file__).name}", file=sys.stderr)
        return 1 if stale or missing else 0
    build(target)
    print(f"wrote {target}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
