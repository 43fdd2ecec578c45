"""Extraction: main text, title, date, language and charset; the FetchCited stage; the sample WARC."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.web.extract import decode_body, detect_language, document_id, extract_document
from irbgen.web.fetch import Fetcher
from irbgen.web.records import WebDocument
from irbgen.web.stages import FetchCited
from irbgen.wikipedia.records import Citation

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "web"

ENGLISH = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Harbour bridge reopens after repairs | Coastal Herald</title>
<meta property="article:published_time" content="2019-06-14T09:30:00+00:00"></head><body>
<header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav></header>
<main><article>
<h1>Harbour bridge reopens after repairs</h1>
<p class="byline">By Maria Lund, 14 June 2019</p>
<p>The harbour bridge reopened to traffic on Friday after eleven months of repairs to its main cables.</p>
<p>The city council said the work cost 42 million euros, slightly less than the budget approved in 2018.</p>
<p>Engineers replaced more than four hundred steel hangers and repainted the span grey.</p>
<table><tr><th>Year</th><th>Vehicles per day</th></tr><tr><td>2017</td><td>31,000</td></tr></table>
</article></main>
<aside><h3>Most read</h3><ul><li>Local team wins cup</li><li>Weather warning issued</li></ul></aside>
<footer><p>Copyright 2019 Coastal Herald. All rights reserved.</p></footer>
</body></html>"""

FRENCH = """<!doctype html><html lang="fr"><head><meta charset="utf-8"><title>Le pont rouvre</title></head>
<body><article><h1>Le pont du port rouvre après des travaux</h1>
<p>Le pont du port a rouvert à la circulation vendredi après onze mois de travaux sur ses câbles.</p>
<p>Selon le conseil municipal, les travaux ont coûté quarante-deux millions d'euros.</p>
<p>Les ingénieurs ont remplacé plus de quatre cents suspentes en acier et repeint tout le tablier.</p>
</article></body></html>"""


def extract(html: str | bytes, content_type: str = "text/html; charset=utf-8", **kwargs: Any) -> Any:
    body = html.encode("utf-8") if isinstance(html, str) else html
    return extract_document(
        "https://news.test/a",
        "https://news.test/a",
        200,
        {"Content-Type": content_type},
        body,
        "2024-03-05T10:00:00Z",
        **kwargs,
    )


def test_english_page() -> None:
    doc = extract(ENGLISH)
    assert isinstance(doc, WebDocument)
    assert doc.id == document_id("https://news.test/a") and doc.id.startswith("d") and len(doc.id) == 17
    assert "eleven months of repairs" in doc.text and "four hundred steel hangers" in doc.text
    assert "31,000" in doc.text  # tables are kept
    assert "All rights reserved" not in doc.text and "Local team wins cup" not in doc.text
    assert "Harbour bridge reopens" in doc.title
    assert doc.published == "2019-06-14"
    assert doc.language == "en" and doc.language_score is not None and doc.language_score > 0.5
    assert doc.fetched == "2024-03-05T10:00:00Z" and doc.content_type == "text/html"


def test_french_page() -> None:
    doc = extract(FRENCH)
    assert isinstance(doc, WebDocument)
    assert doc.language == "fr"
    assert "onze mois de travaux" in doc.text


def test_charset_from_header_meta_bom_and_fallback() -> None:
    text = "Le café crème coûte trois €"
    assert decode_body(text.encode("cp1252"), "text/html; charset=iso-8859-1")[0] == text
    koi8 = '<html><head><meta charset="koi8-r"></head><body>Привет, мир</body></html>'
    assert "Привет, мир" in decode_body(koi8.encode("koi8-r"), "text/html")[0]
    equiv = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><p>Москва</p>'
    assert "Москва" in decode_body(equiv.encode("cp1251"), "text/html")[0]
    assert decode_body(b"\xef\xbb\xbfhello", "text/html; charset=latin1")[0] == "hello"  # BOM wins
    assert decode_body("naïve".encode(), "text/html")[0] == "naïve"  # undeclared UTF-8
    assert decode_body("naïve".encode("cp1252"), "text/html")[0] == "naïve"  # fallback cp1252
    assert decode_body(b"x", "text/html; charset=base64")[1] == "utf-8"  # not a text codec: ignored


def test_latin1_page_extracts_accents() -> None:
    html = (
        "<html><body><article><p>Le café de la gare est très réputé dans la région depuis 1920, selon les "
        "archives municipales.</p><p>Il a été rénové en 2015 et accueille chaque année des milliers de "
        "visiteurs.</p></article></body></html>"
    )
    doc = extract(html.encode("latin-1"), "text/html; charset=ISO-8859-1")
    assert isinstance(doc, WebDocument)
    assert "café de la gare est très réputé" in doc.text
    assert doc.language == "fr"


def test_plain_text_passes_through() -> None:
    doc = extract("Line one of a plain report.\r\n\r\n\r\nLine two of the report.\n", "text/plain")
    assert isinstance(doc, WebDocument)
    assert doc.text == "Line one of a plain report.\n\nLine two of the report."
    assert doc.title == "" and doc.published is None and doc.content_type == "text/plain"


def test_rejects() -> None:
    empty = extract(
        "<html><head><title>Nothing</title><script>var x = 1;</script></head><body> </body></html>"
    )
    assert isinstance(empty, Reject) and empty.reason == "no_text" and empty.key == "https://news.test/a"
    pdf = extract(b"%PDF-1.4", "application/pdf")
    assert isinstance(pdf, Reject) and pdf.reason == "content_type:application/pdf"


def test_hostile_markup_does_not_crash() -> None:
    nasty = (
        "<html>"
        + "<div>" * 5000
        + "<p>deep text that might or might not survive</p>"
        + "\x00\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    )
    result = extract(nasty)
    assert isinstance(result, WebDocument | Reject)
    xhtml = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body><article>'
        "<p>An XHTML page with an XML declaration still yields its paragraph text for the reader.</p>"
        "<p>A second paragraph makes the page long enough to count as an article body.</p>"
        "</article></body></html>"
    )
    doc = extract(xhtml, "application/xhtml+xml")
    assert isinstance(doc, WebDocument) and "XML declaration" in doc.text


def test_detect_language_empty() -> None:
    assert detect_language("   ") == (None, None)


# -- the stage -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    pages = {"/en": ENGLISH.encode(), "/fr": FRENCH.encode()}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = pages.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def test_fetch_cited_stage(site: str, tmp_path: Path) -> None:
    stage = FetchCited()
    citations = [Citation(url=f"{site}/en"), Citation(url=f"{site}/fr"), Citation(url=f"{site}/missing")]

    async def go() -> list[list[Any]]:
        async with Fetcher(run_dir=tmp_path, allow_private_hosts=True, host_delay=0.0) as fetcher:
            context = StageContext(run_dir=tmp_path, fetcher=fetcher)
            return [await stage.aprocess(c, context) for c in citations]

    (en,), (fr,), (missing,) = asyncio.run(go())
    assert isinstance(en, WebDocument) and en.language == "en" and en.warc_record_id
    assert isinstance(fr, WebDocument) and fr.language == "fr"
    assert isinstance(missing, Reject)
    assert (missing.stage, missing.reason, missing.key) == ("fetch_cited", "http_404", f"{site}/missing")
    assert stage.key(citations[0]) == f"{site}/en"
    # the rerun (offline) gives identical documents
    ((again,),) = [asyncio.run(_offline(stage, tmp_path, citations[0]))]
    assert again == en


async def _offline(stage: FetchCited, run_dir: Path, citation: Citation) -> list[Any]:
    async with Fetcher(run_dir=run_dir, allow_private_hosts=True, offline=True) as fetcher:
        return await stage.aprocess(citation, StageContext(run_dir=run_dir, fetcher=fetcher))


def test_sample_warc_offline(tmp_path: Path) -> None:
    warc = SAMPLES / "cited-pages.warc.gz"
    urls_file = SAMPLES.parent / "wiki" / "cited-urls.txt"
    if not warc.exists() or not urls_file.exists():
        pytest.skip("sample WARC not built")
    urls = [line.strip() for line in urls_file.read_text().splitlines() if line.strip()]
    stage = FetchCited()

    async def go() -> list[Any]:
        async with Fetcher(offline=True, warc_files=[warc]) as fetcher:
            context = StageContext(run_dir=tmp_path, fetcher=fetcher)
            return [r for u in urls for r in await stage.aprocess(Citation(url=u), context)]

    results = asyncio.run(go())
    docs = [r for r in results if isinstance(r, WebDocument)]
    rejects = [r for r in results if isinstance(r, Reject)]
    assert len(results) == len(urls)
    assert docs and all(d.text and d.language for d in docs)
    assert any(d.final_url != d.url for d in docs)  # the redirect
    assert [r.reason for r in rejects] == ["http_404"]
    assert "not_in_warc" not in {r.reason for r in rejects}
