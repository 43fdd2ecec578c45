"""Write a WARC that serves each cited URL of a dump as a page holding its citing sentences.

    python bench/citing_warc.py DUMP OUT.warc.gz

How to test question generation on a real dump without the web: every URL cited by a kept segment is
answered (status 200) with a small HTML page made of the sentences that cite it and their neighbours
(two before, two after, as the segment stage keeps them). Evidence is then perfect on purpose, so a
build with `--offline --warc OUT.warc.gz` judges only what comes after fetching: keypoints, graphs,
plans and questions. Dates, record ids and gzip members are fixed: the same dump gives the same bytes.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx

from irbgen.web.fetch import normalize_url
from irbgen.web.fetch_config import USER_AGENT
from irbgen.web.warc import WarcWriter, format_warc_date, new_record_id
from irbgen.wikipedia.dumps import read_dump
from irbgen.wikipedia.records import Page, Segment
from irbgen.wikipedia.stages import CitingSegments

BASE_TIME = datetime(2016, 6, 1, 12, 0, 0, tzinfo=UTC)
STEP = timedelta(seconds=7)


def cited_passages(dump: Path) -> dict[str, list[str]]:
    """Cited URL -> the passages (neighbours, sentence, neighbours) of the segments that cite it."""
    stage = CitingSegments()
    passages: dict[str, list[str]] = {}
    for page in read_dump(dump):
        if not isinstance(page, Page):
            continue
        for record in stage.process(page):
            if not isinstance(record, Segment):
                continue
            passage = " ".join([*record.before, record.sentence, *record.after])
            for citation in record.citations:
                seen = passages.setdefault(normalize_url(citation.url), [])
                if passage not in seen:
                    seen.append(passage)
    return passages


def page_html(url: str, passages: list[str]) -> bytes:
    """A plain article page whose paragraphs are the passages."""
    title = html.escape(httpx.URL(url).host or url)
    body = "\n".join(f"<p>{html.escape(passage)}</p>" for passage in passages)
    return (
        f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>"
        f"<body><article><h1>{title}</h1>\n{body}\n</article></body></html>\n"
    ).encode()


def write_warc(
    passages: dict[str, list[str]], out: Path, page: Callable[[str, list[str]], bytes] = page_html
) -> int:
    """One 200 response per URL, in sorted URL order, its body made by PAGE; returns how many."""
    writer = WarcWriter(out.parent, filename=out.name, warcinfo_date=format_warc_date(BASE_TIME))
    for number, url in enumerate(sorted(passages)):
        moment = BASE_TIME + STEP * (number + 1)
        try:
            parsed = httpx.URL(url)
            path = parsed.raw_path.decode("ascii")
            host = parsed.netloc.decode("ascii")
        except (httpx.InvalidURL, UnicodeError):
            continue
        body = page(url, passages[url])
        writer.write_exchange(
            url,
            request_line=f"GET {path} HTTP/1.1",
            request_headers=[("Host", host), ("User-Agent", USER_AGENT)],
            status=200,
            reason_phrase="OK",
            http_version="HTTP/1.1",
            response_headers=[
                ("Date", format_datetime(moment, usegmt=True)),
                ("Content-Type", "text/html; charset=utf-8"),
                ("Content-Length", str(len(body))),
            ],
            body=body,
            warc_date=format_warc_date(moment),
            record_id=new_record_id(url),
        )
    writer.close()
    return len(passages)


def main(argv: list[str]) -> int:
    """Build the WARC for the dump given."""
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    dump, out = Path(argv[0]), Path(argv[1])
    if not dump.is_file():
        print(f"{dump}: dump not found", file=sys.stderr)
        return 2
    count = write_warc(cited_passages(dump), out)
    print(f"wrote {count} cited pages to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
