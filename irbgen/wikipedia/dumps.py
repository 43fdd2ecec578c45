"""Streaming readers for Wikipedia dumps: XML exports (plain, .bz2, multistream .bz2) and CirrusSearch JSON.

Every reader yields `Page` records for namespace-0 articles only and counts what it skipped in a
`ReadStats` (redirects, other namespaces, disambiguation pages, filtered pages). A broken container
(truncated bz2/gzip, broken XML, a multistream index that does not match) raises `BadInputError`
naming the file; a single bad document (an unparsable CirrusSearch line) is yielded as a `Reject`.
Memory stays bounded: pages are parsed one at a time and parsed XML elements are released.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import re
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any
from xml.etree.ElementTree import ParseError

from irbgen.errors import BadInputError
from irbgen.listfile import read_list_file
from irbgen.records import Reject
from irbgen.seekable import is_seekable_format, seekable_opener
from irbgen.wikipedia.records import Page

STAGE = "read_dump"
CHUNK = 1 << 20
MAX_HEADER_BYTES = 16 << 20  # a multistream header (siteinfo) is a few kB
MAX_BAD_LINES_IN_A_ROW = 10  # more consecutive unparsable JSON lines means the file is not a Cirrus dump

_REDIRECT = re.compile(r"^\s*#\s*redirect\b", re.I)
# {{Disambiguation}}, {{disambig|geo}}, {{dab}}, {{hndis}}, {{Place name disambiguation}}, ... but not
# {{Disambiguation needed}} or hatnotes that merely link to a "(disambiguation)" page.
_DISAMBIGUATION = re.compile(
    r"\{\{\s*(?:template\s*:\s*)?(?:disambiguation|disambig|disamb|dab|hndis|geodis|numberdis"
    r"|[^{}|\n]{0,60}?[ _]disambiguation)\s*(?:\||\}\})|__DISAMBIG__",
    re.I,
)
_REF_STR = re.compile(r"<ref[\s>/]", re.I)


@dataclass
class ReadStats:
    """What a reader saw: documents read, pages yielded, skips by reason. Shards merge with `+`."""

    seen: int = 0  # <page> elements or Cirrus documents in this shard
    pages: int = 0  # Page records yielded
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> count
    rejected: Counter[str] = field(default_factory=Counter)  # bad documents, reason -> count

    def __add__(self, other: ReadStats) -> ReadStats:
        return ReadStats(
            self.seen + other.seen,
            self.pages + other.pages,
            self.skipped + other.skipped,
            self.rejected + other.rejected,
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form, keys sorted."""
        return {
            "seen": self.seen,
            "pages": self.pages,
            "skipped": dict(sorted(self.skipped.items())),
            "rejected": dict(sorted(self.rejected.items())),
        }


@dataclass(frozen=True)
class PageFilter:
    """Which pages to keep. Dates are ISO 8601; created_after is inclusive, created_before exclusive."""

    created_after: str | None = None
    created_before: str | None = None
    min_citations: int = 0  # <ref ...> occurrences in the wikitext, counted before any parsing
    titles: frozenset[str] | None = None  # normalised with `normalize_title`
    limit: int | None = None  # stop after this many pages (per call, i.e. per shard)

    def __post_init__(self) -> None:
        for name in ("created_after", "created_before"):
            value = getattr(self, name)
            if value is not None:
                _parse_date(value, f"--{name.replace('_', '-')}")
        if self.limit is not None and self.limit < 0:
            raise BadInputError(f"--limit must be 0 or more, got {self.limit}")
        if self.titles is not None:
            object.__setattr__(self, "titles", frozenset(normalize_title(t) for t in self.titles))

    @property
    def by_creation(self) -> bool:
        """True if the filter needs creation dates."""
        return self.created_after is not None or self.created_before is not None


@dataclass
class _RawPage:
    namespace: int
    page_id: int
    title: str
    text: str
    redirect: bool = False
    timestamp: str | None = None
    created: str | None = None
    popularity: float | None = None
    topics: list[str] = field(default_factory=list)
    wikidata_id: str | None = None
    categories: list[str] | None = None  # None: read them from the wikitext


_CATEGORY = re.compile(r"\[\[\s*category\s*:\s*([^\]|\n]+)", re.IGNORECASE)


def wikitext_categories(text: str) -> list[str]:
    """The category names linked in wikitext ([[Category:Name|sort key]]), in order, each once."""
    names = (" ".join(match.group(1).replace("_", " ").split()) for match in _CATEGORY.finditer(text))
    return list(dict.fromkeys(name for name in names if name))


def normalize_title(title: str) -> str:
    """Title as MediaWiki stores it: spaces for underscores, single spaces, first letter upper case."""
    title = " ".join(title.replace("_", " ").split())
    return title[:1].upper() + title[1:]


def load_titles(path: str | Path) -> frozenset[str]:
    """A set of normalised titles from a file with one title per line (blank lines and # comments skipped)."""
    return frozenset(normalize_title(title) for _, title in read_list_file(path, "titles"))


def count_refs(wikitext: str) -> int:
    """Number of `<ref` tags (definitions and reuses) in wikitext, without parsing it."""
    return len(_REF_STR.findall(wikitext))


def is_disambiguation(wikitext: str) -> bool:
    """True if the wikitext carries a disambiguation template or the __DISAMBIG__ magic word."""
    return _DISAMBIGUATION.search(wikitext) is not None


def dump_format(path: str | Path) -> str:
    """ "cirrus" for CirrusSearch JSON dumps (.json, .json.gz, .json.bz2), else "xml"."""
    name = Path(path).name.lower()
    return "cirrus" if re.search(r"\.json(?:\.gz|\.bz2)?$", name) else "xml"


def read_dump(path: str | Path, shard: int = 0, shards: int = 1, **options: Any) -> Iterator[Page | Reject]:
    """Read any supported dump, choosing the reader from the file name (see `dump_format`)."""
    if dump_format(path) == "cirrus":
        return read_cirrus_dump(path, shard, shards, **options)
    return read_xml_dump(path, shard, shards, **options)


# --- XML ---------------------------------------------------------------------------------------------


def find_multistream_index(path: str | Path) -> Path | None:
    """The `...-multistream-index.txt[.bz2]` next to a `...-multistream.xml.bz2`, if it exists."""
    path = Path(path)
    if not path.name.endswith(".xml.bz2") or "multistream" not in path.name:
        return None
    stem = path.name[: -len(".xml.bz2")]
    for suffix in ("-index.txt.bz2", "-index.txt"):
        candidate = path.with_name(stem + suffix)
        if candidate.exists():
            return candidate
    return None


def read_xml_dump(
    path: str | Path,
    shard: int = 0,
    shards: int = 1,
    *,
    index: str | Path | None = None,
    filters: PageFilter | None = None,
    stats: ReadStats | None = None,
    emit_skipped: bool = False,
    seek_index: str | Path | None = None,
    size: int | None = None,
) -> Iterator[Page | Reject]:
    """Pages of a MediaWiki XML export (plain, .bz2 or .gz), the latest revision of each.

    A multistream .bz2 with its index (given, or found next to it) is sharded by byte ranges of its
    streams and a shard decompresses only its own streams. A plain .xml is sharded by byte ranges, and
    so is a .bz2 or .gz given its uncompressed `size` and `seek_index`, its saved block index
    (irbgen.seekable.build_index): a shard reads the pages that start in its range. Either way the
    shards, taken in order, hold the pages in the file's order. A .bz2 or .gz without an index is sharded
    round-robin by page order, which still reads the whole file in every shard.
    """
    path = Path(path)
    _check_shard(shard, shards)
    filters = filters or PageFilter()
    if filters.by_creation:
        raise BadInputError(
            f"{path}: XML dumps carry no creation dates (only the latest revision), so "
            "--created-after/--created-before cannot be applied; use a CirrusSearch dump"
        )
    index_path = Path(index) if index is not None else find_multistream_index(path)
    if index_path is not None:
        raws = _multistream_pages(path, index_path, shard, shards)
    elif shards > 1 and (size is not None or not is_seekable_format(path)):
        raws = _range_pages(path, shard, shards, seek_index, size)
    else:
        raws = _round_robin(_xml_pages(path, _open_binary(path), path.name), shard, shards)
    return _select(raws, path, filters, stats if stats is not None else ReadStats(), emit_skipped)


def _open_binary(path: Path) -> IO[bytes]:
    try:
        if path.name.endswith(".bz2"):
            return bz2.open(path, "rb")
        if path.name.endswith(".gz"):
            return gzip.open(path, "rb")
        return path.open("rb")
    except OSError as exc:
        raise BadInputError(f"{path}: cannot open: {exc}") from exc


def _xml_pages(path: Path, stream: IO[bytes], where: str) -> Iterator[_RawPage | Reject]:
    """Pages of an XML stream via mwxml, releasing each parsed <page> element once read."""
    import mwxml
    from mwxml.element_iterator import ElementIterator

    try:
        with stream:
            root = ElementIterator.from_file(stream)
            if root.tag != "mediawiki":
                raise BadInputError(f"{path}: not a MediaWiki export (root element <{root.tag}>)")
            dump = mwxml.Dump.from_element(root)
            for item in dump:
                if not isinstance(item, mwxml.Page):
                    continue
                text = timestamp = None
                for revision in item:  # pages-articles has one; otherwise the last is the latest
                    text, timestamp = revision.text, revision.timestamp
                root.element.clear()  # drop finished <page> elements from the tree: bounded memory
                if item.id is None or item.title is None:
                    yield Reject(
                        stage=STAGE, reason="bad_page", key=str(item.id), detail=f"{where}: no id or title"
                    )
                    continue
                yield _RawPage(
                    namespace=item.namespace if item.namespace is not None else 0,
                    page_id=int(item.id),
                    title=item.title,
                    text=text or "",
                    redirect=item.redirect is not None,
                    timestamp=str(timestamp) if timestamp is not None else None,
                )
    except ParseError as exc:
        line, column = getattr(exc, "position", (0, 0))
        raise BadInputError(f"{path}: broken XML in {where} at line {line}, column {column}: {exc}") from exc
    except mwxml.errors.MalformedXML as exc:
        raise BadInputError(f"{path}: malformed MediaWiki XML in {where}: {exc}") from exc
    except EOFError as exc:
        raise BadInputError(
            f"{path}: compressed data ends early (truncated file?) in {where}: {exc}"
        ) from exc
    except (OSError, zlib.error) as exc:
        raise BadInputError(f"{path}: cannot decompress {where}: {exc}") from exc


def read_multistream_index(path: str | Path) -> list[int]:
    """Sorted distinct stream offsets of a multistream index (lines `offset:page_id:title`)."""
    path = Path(path)
    offsets: set[int] = set()
    opener = bz2.open if path.name.endswith(".bz2") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                head, _, rest = line.partition(":")
                if not head.isdigit() or not rest.partition(":")[0].strip().isdigit():
                    raise BadInputError(f"{path}:{lineno}: expected offset:page_id:title, got {line[:80]!r}")
                offsets.add(int(head))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read multistream index: {exc}") from exc
    if not offsets:
        raise BadInputError(f"{path}: empty multistream index")
    return sorted(offsets)


def plan_shards(offsets: list[int], file_size: int, shards: int) -> list[list[int]]:
    """Split streams into `shards` contiguous runs of about equal compressed bytes; each stream once."""
    _check_shard(0, shards)
    ends = offsets[1:] + [max(file_size, offsets[-1] + 1)]
    total = ends[-1] - offsets[0]
    plan: list[list[int]] = [[] for _ in range(shards)]
    for start in offsets:
        k = min(shards - 1, (start - offsets[0]) * shards // max(total, 1))
        plan[k].append(start)
    return plan


def _multistream_pages(path: Path, index: Path, shard: int, shards: int) -> Iterator[_RawPage | Reject]:
    offsets = read_multistream_index(index)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise BadInputError(f"{path}: cannot open: {exc}") from exc
    if offsets[-1] >= size:
        raise BadInputError(f"{index}: offset {offsets[-1]} is beyond the end of {path} ({size} bytes)")
    mine = plan_shards(offsets, size, shards)[shard]
    if not mine:
        return iter(())
    with path.open("rb") as f:
        header = _multistream_header(path, f, offsets[0])
    where = f"streams at byte offsets {mine[0]}..{mine[-1]}"
    return _xml_pages(path, io.BufferedReader(_ChunkReader(_shard_xml(path, header, mine)), CHUNK), where)


def _multistream_header(path: Path, f: IO[bytes], first: int) -> bytes:
    """The <mediawiki ...><siteinfo>...</siteinfo> prefix, from the stream before the first page stream."""
    buf = b""
    for chunk in _stream_chunks(path, f, 0):
        buf += chunk
        for marker, keep in ((b"</siteinfo>", True), (b"<page>", False)):
            at = buf.find(marker)
            if at >= 0:
                return buf[: at + len(marker)] if keep else buf[:at]
        if len(buf) > MAX_HEADER_BYTES:
            break
    raise BadInputError(f"{path}: no <siteinfo> header in its first stream (not a multistream dump?)")


def _stream_chunks(path: Path, f: IO[bytes], offset: int) -> Iterator[bytes]:
    """Decompressed bytes of the one bz2 stream starting at `offset`."""
    f.seek(offset)
    decompressor = bz2.BZ2Decompressor()
    while not decompressor.eof:
        data = f.read(CHUNK)
        if not data:
            raise BadInputError(f"{path}: bz2 stream at byte offset {offset} ends early (truncated file?)")
        try:
            out = decompressor.decompress(data)
        except OSError as exc:
            raise BadInputError(
                f"{path}: bad bz2 data in the stream at byte offset {offset} (does the index match?): {exc}"
            ) from exc
        if out:
            yield out


def _shard_xml(path: Path, header: bytes, offsets: list[int]) -> Iterator[bytes]:
    """Header, the shard's page streams (without any header or footer), and a closing tag."""
    yield header
    with path.open("rb") as f:
        for offset in offsets:
            pending = b""
            first = True
            for chunk in _stream_chunks(path, f, offset):
                pending += chunk
                if first and offset == 0:  # a dump whose first page stream also holds the header
                    at = pending.find(b"<page>")
                    if at < 0:
                        continue
                    pending = pending[at:]
                first = False
                if len(pending) > 64:
                    yield pending[:-64]
                    pending = pending[-64:]
            yield pending.rstrip().removesuffix(b"</mediawiki>")
    yield b"\n</mediawiki>\n"


class _ChunkReader(io.RawIOBase):
    """A read-only binary file over an iterator of byte chunks."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._buf:
            try:
                self._buf = next(self._chunks)
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n


# --- XML in byte ranges -------------------------------------------------------------------------------

_PAGE_TAG = b"<page>"  # text inside a page is escaped, so these two only ever open or close elements
_END_TAG = b"</mediawiki>"


def _range_pages(
    path: Path, shard: int, shards: int, seek_index: str | Path | None, size: int | None
) -> Iterator[_RawPage | Reject]:
    """The pages whose <page> tag starts in this shard's part of the uncompressed XML, read by seeking."""
    if size is None:
        size = path.stat().st_size if path.exists() else 0
    opener = _range_opener(path, seek_index)
    start, end = size * shard // shards, size * (shard + 1) // shards
    where = f"uncompressed bytes {start}..{end} (shard {shard} of {shards})"
    document = io.BufferedReader(_ChunkReader(_range_xml(path, opener, start, end)), CHUNK)
    return _xml_pages(path, document, where)


def _range_opener(path: Path, seek_index: str | Path | None) -> Any:
    if not is_seekable_format(path):
        return lambda: _open_binary(path)
    return seekable_opener(path, Path(seek_index) if seek_index is not None else None)


def _range_xml(path: Path, opener: Any, start: int, end: int) -> Iterator[bytes]:
    """The file's header (everything before its first <page>), the pages starting in [start, end), and
    a closing tag: an XML document of this shard's pages."""
    try:
        with opener() as f:
            header = _xml_header(path, f)
            yield header
            yield from _pages_from(f, max(start, len(header)), end)
    except (OSError, ValueError, RuntimeError, EOFError, zlib.error) as exc:
        raise BadInputError(f"{path}: cannot read uncompressed bytes {start}..{end}: {exc}") from exc
    yield b"\n</mediawiki>\n"


def _xml_header(path: Path, f: IO[bytes]) -> bytes:
    """The bytes before the file's first <page> (the <mediawiki> tag and <siteinfo>)."""
    f.seek(0)
    buf = b""
    while len(buf) <= MAX_HEADER_BYTES and (chunk := f.read(CHUNK)):
        buf += chunk
        at = buf.find(_PAGE_TAG)
        if at >= 0:
            return buf[:at]
    at = buf.find(_END_TAG)
    if at >= 0:  # no page at all
        return buf[:at]
    raise BadInputError(f"{path}: no <page> in its first {len(buf):,} bytes (not a MediaWiki export?)")


def _pages_from(f: IO[bytes], start: int, end: int) -> Iterator[bytes]:
    """The bytes from the first <page> at or after `start` up to the first <page> at or after `end`, or
    to </mediawiki>: every page that starts in [start, end), whole."""
    f.seek(start)
    pending, offset = b"", start  # offset: where pending[0] is in the file
    while True:  # find the first page of the range
        chunk = f.read(CHUNK)
        pending += chunk
        at = pending.find(_PAGE_TAG)
        if at >= 0:
            if offset + at >= end:
                return
            pending, offset = pending[at:], offset + at
            break
        if not chunk:
            return
        cut = max(0, len(pending) - len(_PAGE_TAG) + 1)
        pending, offset = pending[cut:], offset + cut
    keep = max(len(_PAGE_TAG), len(_END_TAG)) - 1
    while True:  # up to the first page past the range, or the end of the file's pages
        stops = [pending.find(_PAGE_TAG, max(1, end - offset)), pending.find(_END_TAG)]
        found = [stop for stop in stops if stop >= 0]
        if found:
            yield pending[: min(found)]
            return
        chunk = f.read(CHUNK)
        if not chunk:
            yield pending  # no closing tag: the XML parser says the document ends early
            return
        if len(pending) > keep:
            yield pending[:-keep]
            pending, offset = pending[-keep:], offset + len(pending) - keep
        pending += chunk


# --- CirrusSearch ------------------------------------------------------------------------------------


def read_cirrus_dump(
    path: str | Path,
    shard: int = 0,
    shards: int = 1,
    *,
    filters: PageFilter | None = None,
    stats: ReadStats | None = None,
    emit_skipped: bool = False,
) -> Iterator[Page | Reject]:
    """Pages of a CirrusSearch dump (.json[.gz|.bz2]: index-action lines alternating with documents).

    Sharded round-robin by document order. An unparsable document line becomes a Reject
    ("bad_document"); a broken compressed container, or a file of non-JSON lines, raises BadInputError.
    """
    path = Path(path)
    _check_shard(shard, shards)
    raws = _round_robin(_cirrus_documents(path), shard, shards)
    return _select(
        raws, path, filters or PageFilter(), stats if stats is not None else ReadStats(), emit_skipped
    )


def _cirrus_documents(path: Path) -> Iterator[_RawPage | Reject]:
    lineno = 0
    bad_in_a_row = 0
    action_id: str | None = None
    try:
        with _open_binary(path) as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                    if not isinstance(obj, dict):
                        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
                except ValueError as exc:
                    bad_in_a_row += 1
                    if bad_in_a_row > MAX_BAD_LINES_IN_A_ROW or lineno == bad_in_a_row:
                        raise BadInputError(f"{path}:{lineno}: not a CirrusSearch dump line: {exc}") from exc
                    key = action_id or f"{path.name}:{lineno}"
                    yield Reject(
                        stage=STAGE, reason="bad_document", key=key, detail=f"{path.name}:{lineno}: {exc}"
                    )
                    action_id = None
                    continue
                bad_in_a_row = 0
                if len(obj) == 1 and next(iter(obj)) in ("index", "create", "update"):
                    action = next(iter(obj.values()))
                    action_id = str(action.get("_id")) if isinstance(action, dict) else None
                    continue
                yield _cirrus_page(obj, path, lineno, action_id)
                action_id = None
    except EOFError as exc:
        raise BadInputError(f"{path}: compressed data ends early after line {lineno} (truncated?)") from exc
    except (OSError, zlib.error) as exc:
        raise BadInputError(f"{path}: cannot decompress after line {lineno}: {exc}") from exc


def _cirrus_page(doc: dict[str, Any], path: Path, lineno: int, action_id: str | None) -> _RawPage | Reject:
    try:
        page_id = int(doc.get("page_id") or action_id or "")
        title = doc["title"]
        text = doc.get("source_text")
        if not isinstance(title, str) or not isinstance(text, str):
            raise ValueError("title and source_text must be strings")
        popularity = doc.get("popularity_score")
        return _RawPage(
            namespace=int(doc.get("namespace", 0)),
            page_id=page_id,
            title=title,
            text=text,
            redirect=False,
            timestamp=doc.get("timestamp"),
            created=doc.get("create_timestamp"),
            popularity=float(popularity) if popularity is not None else None,
            topics=cirrus_topics(doc),
            wikidata_id=doc.get("wikibase_item"),
            categories=[str(name) for name in doc.get("category") or []] or None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        key = str(doc.get("page_id") or action_id or f"{path.name}:{lineno}")
        return Reject(stage=STAGE, reason="bad_document", key=key, detail=f"{path.name}:{lineno}: {exc!r}")


def cirrus_topics(doc: dict[str, Any]) -> list[str]:
    """ORES article-topic names of a Cirrus document, best first, from ores_articletopics or weighted_tags."""
    found: dict[str, float] = {}
    for field_name in ("ores_articletopics", "weighted_tags"):
        for tag in doc.get(field_name) or []:
            if not isinstance(tag, str):
                continue
            name, _, score = tag.partition("|")
            if field_name == "weighted_tags" and "articletopic/" not in name:
                continue
            name = name.rsplit("articletopic/", 1)[-1].strip()
            try:
                value = float(score) if score else 0.0
            except ValueError:
                value = 0.0
            if name and value >= found.get(name, -1.0):
                found[name] = value
    return sorted(found, key=lambda n: (-found[n], n))


# --- shared selection --------------------------------------------------------------------------------


def _round_robin(raws: Iterator[_RawPage | Reject], shard: int, shards: int) -> Iterator[_RawPage | Reject]:
    if shards == 1:
        yield from raws
        return
    for i, raw in enumerate(raws):
        if i % shards == shard:
            yield raw


def _select(
    raws: Iterator[_RawPage | Reject], path: Path, filters: PageFilter, stats: ReadStats, emit_skipped: bool
) -> Iterator[Page | Reject]:
    after = _parse_date(filters.created_after, "--created-after") if filters.created_after else None
    before = _parse_date(filters.created_before, "--created-before") if filters.created_before else None
    if filters.limit == 0:
        return
    for raw in raws:
        stats.seen += 1
        if isinstance(raw, Reject):
            stats.rejected[raw.reason] += 1
            yield raw
            continue
        reason = _skip_reason(raw, filters, after, before)
        if reason:
            stats.skipped[reason] += 1
            if emit_skipped:
                yield Reject(stage=STAGE, reason=reason, key=str(raw.page_id), detail=raw.title)
            continue
        stats.pages += 1
        yield Page(
            page_id=raw.page_id,
            title=raw.title,
            wikitext=raw.text,
            revision_timestamp=raw.timestamp,
            created=raw.created,
            popularity=raw.popularity,
            topics=raw.topics,
            wikidata_id=raw.wikidata_id,
            categories=raw.categories if raw.categories is not None else wikitext_categories(raw.text),
            dump=path.name,
        )
        if filters.limit is not None and stats.pages >= filters.limit:
            return


def _skip_reason(raw: _RawPage, filters: PageFilter, after: datetime | None, before: datetime | None) -> str:
    if raw.namespace != 0:
        return "namespace"
    if raw.redirect or _REDIRECT.match(raw.text):
        return "redirect"
    if is_disambiguation(raw.text):
        return "disambiguation"
    if filters.titles is not None and normalize_title(raw.title) not in filters.titles:
        return "title_filter"
    if after is not None or before is not None:
        if not raw.created:
            return "no_creation_date"
        try:
            created = _parse_date(raw.created, "create_timestamp")
        except BadInputError:
            return "no_creation_date"
        if (after is not None and created < after) or (before is not None and created >= before):
            return "created_filter"
    if filters.min_citations and count_refs(raw.text) < filters.min_citations:
        return "min_citations"
    return ""


def _parse_date(value: str, what: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError) as exc:
        raise BadInputError(f"{what}: not an ISO 8601 date: {value!r}") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _check_shard(shard: int, shards: int) -> None:
    if shards < 1 or not 0 <= shard < shards:
        raise BadInputError(
            f"shard must be in 0..shards-1 and shards >= 1, got shard={shard} shards={shards}"
        )
