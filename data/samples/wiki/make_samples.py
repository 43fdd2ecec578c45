"""Regenerate the sample Wikipedia dumps in this folder from articles/*.wiki (deterministic output).

    python data/samples/wiki/make_samples.py [OUT_DIR]

Writes sample-pages-articles.xml (+ .bz2), a multistream .bz2 with its index, a CirrusSearch
sample-cirrus.json.gz, and the cited URLs (cited-urls.txt, archive-urls.txt, citations.jsonl: for
each cited URL, the segments that cite it, so the cited pages can be written to support them).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

HERE = Path(__file__).resolve().parent
STREAM_PAGES = 2  # pages per multistream stream (real dumps use 100; 2 makes sharding visible here)

HEADER = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" \
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" \
xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ http://www.mediawiki.org/xml/export-0.11.xsd" \
version="0.11" xml:lang="en">
  <siteinfo>
    <sitename>Samplepedia</sitename>
    <dbname>samplewiki</dbname>
    <base>https://wiki.example.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.43.0-wmf.20</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2" case="first-letter">Media</namespace>
      <namespace key="-1" case="first-letter">Special</namespace>
      <namespace key="0" case="first-letter" />
      <namespace key="1" case="first-letter">Talk</namespace>
      <namespace key="2" case="first-letter">User</namespace>
      <namespace key="3" case="first-letter">User talk</namespace>
      <namespace key="4" case="first-letter">Samplepedia</namespace>
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
FOOTER = "</mediawiki>\n"


@dataclass
class Article:
    file: str | None  # articles/<file>.wiki, or None for a redirect
    page_id: int
    title: str
    timestamp: str
    created: str
    ns: int = 0
    redirect: str | None = None
    popularity: float = 0.0
    topics: dict[str, float] = field(default_factory=dict)
    qid: str | None = None

    def text(self) -> str:
        if self.redirect:
            shell = "{{Redirect category shell|{{R from short name}}}}"
            return f"#REDIRECT [[{self.redirect}]]\n\n{shell}\n"
        return (HERE / "articles" / f"{self.file}.wiki").read_text(encoding="utf-8")


EUROPE = "Geography.Regions.Europe.Northern Europe"
ARTICLES = [
    Article(
        "vellmouth",
        1001,
        "Vellmouth",
        "2024-03-10T14:02:11Z",
        "2023-05-14T08:31:00Z",
        popularity=4.1e-7,
        topics={EUROPE: 0.97, "Geography.Geographical": 0.81},
        qid="Q98760001",
    ),
    Article(
        "vellmouth-harbour-bridge",
        1002,
        "Vellmouth Harbour Bridge",
        "2025-01-20T09:15:40Z",
        "2024-03-13T07:45:12Z",
        popularity=2.6e-7,
        topics={"STEM.Engineering": 0.88, EUROPE: 0.74, "STEM.Technology": 0.41},
        qid="Q98760002",
    ),
    Article(
        "lake-orrin",
        1003,
        "Lake Orrin",
        "2024-08-02T16:20:05Z",
        "2024-08-02T10:05:51Z",
        popularity=1.3e-7,
        topics={"Geography.Geographical": 0.95, EUROPE: 0.9, "STEM.Earth and environment": 0.52},
        qid="Q98760003",
    ),
    Article(
        "tarn-valley-railway",
        1004,
        "Tarn Valley Railway",
        "2025-02-01T11:11:11Z",
        "2025-01-20T19:40:03Z",
        popularity=9.5e-8,
        topics={"History and Society.Transportation": 0.93, EUROPE: 0.66},
        qid="Q98760004",
    ),
    Article(
        "ilse-marrow",
        1005,
        "Ilse Marrow",
        "2024-11-06T08:00:27Z",
        "2024-11-05T21:12:45Z",
        popularity=5.2e-8,
        topics={"Culture.Biography.Biography*": 0.99, "STEM.Engineering": 0.71},
        qid="Q98760005",
    ),
    Article(
        "brightwater-robotics",
        1006,
        "Brightwater Robotics",
        "2025-04-10T13:37:00Z",
        "2025-04-09T12:00:00Z",
        popularity=7.7e-8,
        topics={"History and Society.Business and economics": 0.91, "STEM.Technology": 0.84},
        qid="Q98760006",
    ),
    Article(
        "hollin-ridge-observatory",
        1007,
        "Hollin Ridge Observatory",
        "2025-02-15T10:30:00Z",
        "2023-10-30T15:22:10Z",
        popularity=1.1e-7,
        topics={"STEM.Space": 0.96, EUROPE: 0.58},
        qid="Q98760007",
    ),
    Article(
        "vellmouth-orchid-festival",
        1008,
        "Vellmouth Orchid Festival",
        "2025-06-18T18:05:43Z",
        "2025-06-18T09:14:26Z",
        popularity=4.4e-8,
        topics={"Culture.Visual arts.Visual arts*": 0.62, "STEM.Biology": 0.55, EUROPE: 0.5},
        qid="Q98760008",
    ),
    Article(
        None,
        1009,
        "Vellmouth Bridge",
        "2024-03-13T07:50:00Z",
        "2024-03-13T07:50:00Z",
        redirect="Vellmouth Harbour Bridge",
    ),
    Article(
        "orrin-disambiguation",
        1010,
        "Orrin",
        "2024-08-03T09:00:00Z",
        "2024-08-03T09:00:00Z",
        popularity=1.0e-8,
        qid="Q98760010",
    ),
    Article("talk-vellmouth", 1011, "Talk:Vellmouth", "2024-03-11T12:00:00Z", "2023-05-15T12:00:00Z", ns=1),
    Article(
        "fennick-bay",
        1012,
        "Fennick Bay",
        "2024-12-01T10:00:00Z",
        "2024-12-01T09:30:00Z",
        popularity=2.0e-8,
        topics={EUROPE: 0.8},
        qid="Q98760012",
    ),
]


def _sha1_base36(text: str) -> str:
    n = int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest(), "big")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out.rjust(31, "0")


def page_xml(a: Article) -> str:
    """One <page> element as in a pages-articles export."""
    text = a.text()
    sha1 = _sha1_base36(text)
    redirect = f"    <redirect title={quoteattr(a.redirect)} />\n" if a.redirect else ""
    return (
        f"  <page>\n    <title>{escape(a.title)}</title>\n    <ns>{a.ns}</ns>\n    <id>{a.page_id}</id>\n"
        f"{redirect}    <revision>\n      <id>{a.page_id * 1000 + 7}</id>\n"
        f"      <parentid>{a.page_id * 1000 + 3}</parentid>\n      <timestamp>{a.timestamp}</timestamp>\n"
        f"      <contributor>\n        <username>Sample editor</username>\n        <id>4242</id>\n"
        f"      </contributor>\n      <comment>sample revision</comment>\n"
        f"      <origin>{a.page_id * 1000 + 7}</origin>\n      <model>wikitext</model>\n"
        f"      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text.encode("utf-8"))}" sha1="{sha1}" xml:space="preserve">'
        f"{escape(text)}</text>\n"
        f"      <sha1>{sha1}</sha1>\n    </revision>\n  </page>\n"
    )


def write_xml(out: Path, articles: list[Article]) -> bytes:
    """The plain export and its .bz2; returns the XML bytes."""
    xml = (HEADER + "".join(page_xml(a) for a in articles) + FOOTER).encode("utf-8")
    (out / "sample-pages-articles.xml").write_bytes(xml)
    (out / "sample-pages-articles.xml.bz2").write_bytes(bz2.compress(xml, 9))
    return xml


def write_multistream(out: Path, articles: list[Article], per_stream: int = STREAM_PAGES) -> None:
    """A multistream .bz2 (header stream, page streams, footer stream) and its offset:id:title index."""
    data = io.BytesIO()
    index: list[str] = []
    data.write(bz2.compress(HEADER.encode("utf-8"), 9))
    for i in range(0, len(articles), per_stream):
        offset = data.tell()
        chunk = articles[i : i + per_stream]
        index.extend(f"{offset}:{a.page_id}:{a.title}" for a in chunk)
        data.write(bz2.compress("".join(page_xml(a) for a in chunk).encode("utf-8"), 9))
    data.write(bz2.compress(FOOTER.encode("utf-8"), 9))
    (out / "sample-pages-articles-multistream.xml.bz2").write_bytes(data.getvalue())
    (out / "sample-pages-articles-multistream-index.txt").write_text(
        "\n".join(index) + "\n", encoding="utf-8"
    )


def cirrus_doc(a: Article) -> dict[str, object]:
    """A CirrusSearch document for one page, with the fields irbgen reads."""
    redirects = [{"namespace": 0, "title": r.title} for r in ARTICLES if r.redirect == a.title]
    return {
        "namespace": a.ns,
        "namespace_text": "Talk" if a.ns == 1 else "",
        "title": a.title.split(":", 1)[1] if a.ns else a.title,
        "page_id": a.page_id,
        "version": a.page_id * 1000 + 7,
        "timestamp": a.timestamp,
        "create_timestamp": a.created,
        "source_text": a.text(),
        "popularity_score": a.popularity,
        "ores_articletopics": [f"articletopic/{t}|{s:.2f}" for t, s in a.topics.items()],
        "wikibase_item": a.qid,
        "redirect": redirects,
        "template": ["Template:Disambiguation"] if a.file == "orrin-disambiguation" else [],
    }


def write_cirrus(out: Path, articles: list[Article]) -> None:
    """sample-cirrus.json.gz: an index-action line before each document, as in the Cirrus dumps."""
    lines: list[str] = []
    for a in articles:
        if a.redirect:  # Cirrus has no documents for redirects; they are listed on their target
            continue
        lines.append(json.dumps({"index": {"_type": "_doc", "_id": str(a.page_id)}}))
        lines.append(json.dumps(cirrus_doc(a), ensure_ascii=False))
    raw = ("\n".join(lines) + "\n").encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0) as gz:
        gz.write(raw)
    (out / "sample-cirrus.json.gz").write_bytes(buf.getvalue())


def write_citations(out: Path, articles: list[Article]) -> None:
    """The cited URLs, and for each the segments citing it (what its page should support)."""
    from irbgen.wikipedia.wikitext import parse_article, split_segments

    by_url: dict[str, dict[str, object]] = {}
    for a in articles:
        if a.ns != 0 or a.redirect:
            continue
        article = parse_article(a.text())
        for sentence in article.sentences:
            for segment in split_segments(sentence):
                for c in segment.citations:
                    entry = by_url.setdefault(
                        c.url,
                        {
                            "url": c.url,
                            "title": c.title,
                            "date": c.date,
                            "archive_url": c.archive_url,
                            "pages": [],
                            "segments": [],
                        },
                    )
                    if a.title not in entry["pages"]:
                        entry["pages"].append(a.title)  # type: ignore[union-attr]
                    if segment.text not in entry["segments"]:
                        entry["segments"].append(segment.text)  # type: ignore[union-attr]
    urls = sorted(by_url)
    (out / "cited-urls.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
    archives = sorted({str(e["archive_url"]) for e in by_url.values() if e["archive_url"]})
    (out / "archive-urls.txt").write_text("\n".join(archives) + "\n", encoding="utf-8")
    with (out / "citations.jsonl").open("w", encoding="utf-8") as f:
        for url in urls:
            f.write(json.dumps(by_url[url], ensure_ascii=False) + "\n")


def main(out: Path = HERE) -> None:
    """Write every sample file into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    write_xml(out, ARTICLES)
    write_multistream(out, ARTICLES)
    write_cirrus(out, ARTICLES)
    write_citations(out, ARTICLES)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
